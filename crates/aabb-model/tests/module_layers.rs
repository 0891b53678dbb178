//! The layers of aabb-model's top-level modules: each refers only to modules of the layers
//! before its own, in the order lib.rs lists under "# Layers", so their imports form no
//! circle. A reference is a path in code, in a `use` or anywhere else: `crate::MODULE`, or
//! `super::` climbing to the crate root then `MODULE`; comments (doc comments too) and string
//! literals are not code. A reference to a module of the same layer or a later one fails
//! [`no_module_refers_to_its_own_layer_or_a_later_one`], naming its file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The crate's source folder.
const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// The layers of lib.rs's doc comment, lowest first: the numbered list under `# Layers`, an
/// item a layer (`1. `text`, `fileio``), its modules in backquotes.
fn documented_layers(lib: &str) -> Result<Vec<Vec<String>>, String> {
    let doc: Vec<&str> = lib
        .lines()
        .map_while(|line| line.trim_start().strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let start = doc
        .iter()
        .position(|line| *line == "# Layers")
        .ok_or("lib.rs's doc comment has no `# Layers` section")?;
    let quoted = |text: &str| -> Vec<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    };
    let mut layers: Vec<Vec<String>> = Vec::new();
    // Whether the line before is part of an item (an item may go on over more lines).
    let mut in_item = false;
    for line in &doc[start + 1..] {
        if line.starts_with('#') {
            break;
        }
        match line.split_once(". ") {
            Some((number, rest)) if number.parse::<usize>() == Ok(layers.len() + 1) => {
                layers.push(quoted(rest));
                in_item = true;
            }
            _ if line.is_empty() => in_item = false,
            _ if in_item => layers.last_mut().expect("an item").extend(quoted(line)),
            _ => {}
        }
    }
    if layers.is_empty() {
        return Err(
            "lib.rs's `# Layers` section lists no layers (a numbered list, lowest \
                    first, an item a layer: `1. `text`, `fileio``)"
                .into(),
        );
    }
    Ok(layers)
}

/// The modules lib.rs declares (`mod NAME;`, `pub mod NAME;`).
fn declared_modules(lib: &str) -> Vec<String> {
    let tokens = tokens(&strip(lib));
    tokens
        .windows(3)
        .filter(|w| w[0].text == "mod" && is_ident(&w[1].text) && w[2].text == ";")
        .map(|w| w[1].text.clone())
        .collect()
}

/// `source` with its comments and the insides of its string and character literals blanked
/// (each character a space, every line break kept), so that what is left is code on the
/// same lines.
fn strip(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let ident_char = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest.
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r'
            && matches!(next, Some('"' | '#'))
            && (i == 0
                || !ident_char(chars[i - 1])
                || (matches!(chars[i - 1], 'b' | 'c') && (i == 1 || !ident_char(chars[i - 2]))))
        {
            // A raw string, `r"…"`, `r#"…"#`, `br"…"`: it ends at a quote and as many `#`.
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('r');
            out.extend(std::iter::repeat_n('#', hashes));
            out.push('"');
            i += 2 + hashes;
            while i < chars.len() {
                if chars[i] == '"'
                    && chars[i + 1..].iter().take_while(|&&h| h == '#').count() >= hashes
                {
                    out.push('"');
                    out.extend(std::iter::repeat_n('#', hashes));
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
            if i < chars.len() {
                out.push('"');
                i += 1;
            }
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal (`'x'`, `'"'`, `'\n'`, `'\u{7f}'`); a lifetime is left.
            out.push('\'');
            i += 1;
            if chars.get(i) == Some(&'\\') {
                blank(&mut out, '\\');
                i += 1;
            }
            if i < chars.len() {
                blank(&mut out, chars[i]);
                i += 1;
            }
            while i < chars.len() && chars[i] != '\'' && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
            if chars.get(i) == Some(&'\'') {
                out.push('\'');
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// A token of stripped code and its line (from 1).
#[derive(Clone, Debug)]
struct Token {
    text: String,
    line: usize,
}

fn is_ident(text: &str) -> bool {
    text.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$')
}

/// The tokens of stripped code: identifiers (`$crate` one), `::`, and every other character
/// that is not white space on its own.
fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let ident_char = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if ident_char(c) || (c == '$' && chars.get(i + 1).is_some_and(|&n| ident_char(n))) {
            let start = i;
            i += 1;
            while i < chars.len() && ident_char(chars[i]) {
                i += 1;
            }
            out.push(Token {
                text: chars[start..i].iter().collect(),
                line,
            });
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push(Token {
                text: "::".into(),
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                text: c.to_string(),
                line,
            });
            i += 1;
        }
    }
    out
}

/// A path in code that names a module of the crate's root.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Reference {
    /// The line, from 1.
    line: usize,
    /// The module named.
    module: String,
    /// The path as written, up to the module (`crate::scene`, `super::super::{… sweep …}`).
    path: String,
}

/// The references to root modules in `source`, a file `depth` modules below the crate root
/// (`scene.rs` and `scene/mod.rs` 1, `scene/format.rs` 2): every `crate::NAME` (and
/// `crate::{NAME, …}`), and every `super::` path that climbs to the root (counting the
/// file's inline modules, `mod tests { … }`). Any name after the root is given; the caller
/// keeps those of modules.
fn references(source: &str, depth: usize) -> Vec<Reference> {
    let tokens = tokens(&strip(source));
    let text = |k: usize| tokens.get(k).map_or("", |t| t.text.as_str());
    let mut found = Vec::new();
    // Inline modules open at these brace depths.
    let mut inline: Vec<usize> = Vec::new();
    let mut braces = 0;
    let mut k = 0;
    while k < tokens.len() {
        match text(k) {
            "{" => {
                braces += 1;
                if k >= 2 && text(k - 2) == "mod" && is_ident(text(k - 1)) {
                    inline.push(braces);
                }
                k += 1;
                continue;
            }
            "}" => {
                if inline.last() == Some(&braces) {
                    inline.pop();
                }
                braces -= 1;
                k += 1;
                continue;
            }
            _ => {}
        }
        // A path starts here: not after `::`.
        let starts = k == 0 || text(k - 1) != "::";
        let (root_at, written) = if starts && matches!(text(k), "crate" | "$crate") {
            (Some(k + 2), format!("{}::", text(k)))
        } else if starts && text(k) == "super" {
            let mut climbs = 0;
            let mut j = k;
            while text(j) == "super" && text(j + 1) == "::" {
                climbs += 1;
                j += 2;
            }
            let here = depth + inline.len();
            (
                (climbs > 0 && climbs == here).then_some(j),
                "super::".repeat(climbs),
            )
        } else {
            (None, String::new())
        };
        let Some(at) = root_at.filter(|&at| text(at - 1) == "::") else {
            k += 1;
            continue;
        };
        if text(at) == "{" {
            // `crate::{a::X, b, c::{Y, Z}}`: the first name of each path of the group.
            let mut level = 0;
            let mut j = at;
            let mut first = true;
            while j < tokens.len() {
                match text(j) {
                    "{" => {
                        level += 1;
                        first = level == 1;
                    }
                    "}" => {
                        level -= 1;
                        if level == 0 {
                            break;
                        }
                    }
                    "," if level == 1 => first = true,
                    name if first && level == 1 && is_ident(name) => {
                        found.push(Reference {
                            line: tokens[j].line,
                            module: name.to_owned(),
                            path: format!("{written}{{… {name} …}}"),
                        });
                        first = false;
                    }
                    _ => first = false,
                }
                j += 1;
            }
            k = j + 1;
        } else if is_ident(text(at)) {
            found.push(Reference {
                line: tokens[at].line,
                module: text(at).to_owned(),
                path: format!("{written}{}", text(at)),
            });
            k = at + 1;
        } else {
            k += 1;
        }
    }
    found
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// lib.rs's layers, checked against the modules it declares: each in exactly one layer.
fn layers_of_lib() -> BTreeMap<String, usize> {
    let lib = std::fs::read_to_string(Path::new(SRC).join("lib.rs")).expect("lib.rs");
    let layers = documented_layers(&lib).unwrap_or_else(|e| panic!("{e}"));
    let mut layer_of = BTreeMap::new();
    let mut problems = Vec::new();
    for (n, names) in layers.iter().enumerate() {
        for name in names {
            if layer_of.insert(name.clone(), n + 1).is_some() {
                problems.push(format!("`{name}` is listed twice"));
            }
        }
    }
    let declared = declared_modules(&lib);
    for name in &declared {
        if !layer_of.contains_key(name) {
            problems.push(format!(
                "`{name}` is declared (`mod {name};`) but in no layer: add it to the list, \
                 in a layer after those of the modules it refers to"
            ));
        }
    }
    for name in layer_of.keys() {
        if !declared.contains(name) {
            problems.push(format!(
                "`{name}` is listed but lib.rs declares no such module"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "lib.rs's `# Layers` list does not match its modules:\n  {}",
        problems.join("\n  ")
    );
    layer_of
}

#[test]
fn every_module_is_in_one_layer() {
    let layer_of = layers_of_lib();
    assert!(layer_of.len() > 1, "{layer_of:?}");
}

#[test]
fn no_module_refers_to_its_own_layer_or_a_later_one() {
    let layer_of = layers_of_lib();
    let src = Path::new(SRC);
    let mut upward = Vec::new();
    for path in rust_files(src) {
        let relative = path.strip_prefix(src).expect("under src");
        let parts: Vec<String> = relative
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if parts == ["lib.rs"] {
            continue;
        }
        let module = parts[0].trim_end_matches(".rs").to_owned();
        // `scene.rs` and `scene/mod.rs` are 1 module below the root, `scene/format.rs` 2.
        let depth = parts.len() - usize::from(parts.last().is_some_and(|p| p == "mod.rs"));
        let Some(&own) = layer_of.get(&module) else {
            upward.push(format!(
                "src/{}: a file of `{module}`, which is in no layer",
                relative.display()
            ));
            continue;
        };
        let source = std::fs::read_to_string(&path).expect("a source file");
        for r in references(&source, depth) {
            let Some(&theirs) = layer_of.get(&r.module) else {
                continue; // `crate::tree`, another crate, or not a module.
            };
            if r.module != module && theirs >= own {
                upward.push(format!(
                    "src/{}:{}: `{module}` (layer {own}) refers to `{}` (layer {theirs}): {}",
                    relative.display(),
                    r.line,
                    r.module,
                    r.path
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "aabb-model's modules refer to modules of their own layer or a later one (lib.rs, \
         `# Layers`, lists the layers lowest first; a module may refer only to those of the \
         layers before its own):\n  {}\nMove what both use down to the lower module (or to a \
         new module in a lower layer); if the layers themselves are to change, change the list \
         in lib.rs.",
        upward.join("\n  ")
    );
}

/// Comments, doc comments and literals are not references; a path on the next line is,
/// with its own line.
#[test]
fn the_scanner_ignores_comments_and_literals() {
    let source = r####"//! [`crate::sweep`]
/// crate::sweep and super::sweep
// crate::sweep
/* crate::sweep /* nested */ crate::sweep
   */ const A: &str = "crate::sweep \" crate::sweep";
const B: &str = r#"crate::sweep " crate::sweep"#; type T = crate::sweep::Sweep;
const C: char = '"'; use crate::scene::Scene;
fn f<'a>(x: &'a str) -> char { let _ = b"crate::sweep"; '\'' }
const D: &[u8] = br##"crate::sweep"# "##;
use crate::trace; // crate::sweep
"####;
    let found: Vec<(usize, String)> = references(source, 1)
        .into_iter()
        .map(|r| (r.line, r.module))
        .collect();
    assert_eq!(
        found,
        [
            (6, "sweep".to_owned()),
            (7, "scene".into()),
            (10, "trace".into())
        ]
    );
}

/// `super::` reaches the root from a module's root file, twice from a file below it or from
/// its inline modules; a group names each path's first module.
#[test]
fn super_paths_climb_from_the_file_and_its_inline_modules() {
    let root_file = "use super::scene::Scene;
use super::{trace::Trace, stream};
fn f() -> crate::replay::History { todo!() }
pub(crate) fn g() {}
mod tests {
    use super::*;
    use super::super::sweep::Sweep;
    mod deeper { use super::super::super::job; }
}
use crate::{broadphase::{Body, BroadphaseKind}, text::{self, excerpt}, motion};";
    let found: Vec<(usize, String)> = references(root_file, 1)
        .into_iter()
        .map(|r| (r.line, r.module))
        .collect();
    assert_eq!(
        found,
        [
            (1, "scene".to_owned()),
            (2, "trace".into()),
            (2, "stream".into()),
            (3, "replay".into()),
            (7, "sweep".into()),
            (8, "job".into()),
            (10, "broadphase".into()),
            (10, "text".into()),
            (10, "motion".into()),
        ]
    );
    let inner_file = "use super::model::Scene;\nuse super::super::sweep::check;";
    let found: Vec<String> = references(inner_file, 2)
        .into_iter()
        .map(|r| r.module)
        .collect();
    assert_eq!(found, ["sweep"]);
}

#[test]
fn the_layers_are_read_from_the_doc_comment() {
    let lib = "//! Modules.
//!
//! # Layers
//!
//! Lowest first (`tests/module_layers.rs`):
//!
//! 1. `text`, `fileio`
//! 2. `scene`,
//!    `trace`
//!
//! Not a layer: `job`.
//!
//! # Other
//!
//! 1. `not_a_layer`

pub mod fileio;
mod scene;
// mod commented;
pub mod text;
";
    assert_eq!(
        documented_layers(lib),
        Ok(vec![
            vec!["text".to_owned(), "fileio".into()],
            vec!["scene".into(), "trace".into()]
        ])
    );
    assert_eq!(declared_modules(lib), ["fileio", "scene", "text"]);
}
