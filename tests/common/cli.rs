//! Running the built binary, for the command-line tests (`cli_*`, `reliability`,
//! `trace_cli`): `use crate::common::cli;`.

// Not every test file uses every helper.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `aabb-debugger ARGS` from the package's folder (so `scenes/...` paths resolve) and
/// waits for it.
pub fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aabb-debugger"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run the binary")
}

/// Output bytes as text (invalid UTF-8 replaced).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Writes `contents` to `name` in `dir`; returns its path.
pub fn write(dir: &Path, name: &str, contents: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write the file");
    path
}

/// A path as text, for an argument (the tests' temporary paths are UTF-8).
pub fn utf8(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}
