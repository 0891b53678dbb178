//! The three recorders carry one version, this crate's: the C header's `AABB_REC_VERSION`
//! (which recorders/c/CMakeLists.txt gives the CMake package) and the Python module's
//! `__version__` (which recorders/python/pyproject.toml gives the Python package).

use std::path::Path;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The text between the quotes of the one line that starts with `prefix`.
fn quoted_after(text: &str, prefix: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(lines.len(), 1, "one line starting with {prefix:?}");
    let rest = lines[0][prefix.len()..].trim();
    rest.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or_else(|| panic!("{:?} is not a quoted version", lines[0]))
        .to_owned()
}

#[test]
fn the_c_header_has_the_crates_version() {
    let header = read("recorders/c/aabb_recorder.h");
    assert_eq!(
        quoted_after(&header, "#define AABB_REC_VERSION "),
        env!("CARGO_PKG_VERSION")
    );
}

#[test]
fn the_python_module_has_the_crates_version() {
    let module = read("recorders/python/aabb_recorder.py");
    assert_eq!(
        quoted_after(&module, "__version__ = "),
        env!("CARGO_PKG_VERSION")
    );
    // The package takes its version from the module.
    let pyproject = read("recorders/python/pyproject.toml");
    assert!(pyproject.contains("dynamic = [\"version\"]"), "{pyproject}");
    assert!(
        pyproject.contains("[tool.hatch.version]\npath = \"aabb_recorder.py\""),
        "{pyproject}"
    );
}
