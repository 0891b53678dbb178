//! Reading and writing scene files: RON (or JSON by extension), syntax errors as
//! `FILE:LINE:COL: message`, and atomic saves.
//!
//! The format (version 1) is described in docs/formats.md ("Scene files"): `format_version`,
//! `name`, `dimensions`, `world`, `dt`, `tree`, `spheres`, the optional `boxes`, `generate` and
//! `view`.
//!
//! `boxes: [(id: 100, min: (0.0, 0.0), max: (20.0, 1.0)), ...]` lists static boxes (level
//! geometry, [`super::StaticBox`]): ids unique and no sphere's; `min` and `max` with
//! `dimensions` numbers, finite, min <= max on every axis; inside the world (touching the walls
//! is allowed); spheres (listed and generated) and boxes together at most
//! [`super::MAX_SPHERES`]. The list is left out of a saved file when empty, so files without
//! it read and save byte for byte as before. They never move; they pair with spheres, never
//! with each other (see [`super::Simulation`]); spheres pass through them.
//! The `tree` section is the tree crate's `TreeConfig`: a field left out takes its default,
//! and the optional ones are written only when not the default: `update`, `rebuild`
//! (`BinnedSah`, the default, `Agglomerative` or `Greedy`) and `optimize_share` (the share of
//! the leaves reinserted by the optimization pass of each step, in `[0, 1]`; default 0.001, 0
//! off). Files written before those fields existed read the same.

use super::model::{SceneFile, VersionProbe, newer_message};
use super::{FORMAT_VERSION, Scene, SceneError};
use crate::fileio;
use std::path::Path;

/// True when `path` names a JSON file (extension `.json`, any case).
#[must_use]
pub fn is_json_path(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

/// Reads a file (a regular file of at most [`fileio::MAX_SCENE_BYTES`]), checks it is UTF-8
/// text, then parses and validates it.
pub(crate) fn load(path: &Path) -> Result<Scene, SceneError> {
    let file = path.display().to_string();
    let bytes = fileio::read_bounded(path, fileio::MAX_SCENE_BYTES)?;
    if let Some(kind) = other_kind(&bytes) {
        return Err(SceneError::Invalid {
            file,
            message: format!("not a scene: this is {kind}"),
        });
    }
    if fileio::looks_like_box_list(&bytes) {
        return Err(SceneError::Invalid {
            file,
            message: NOT_A_SCENE_BUT_BOXES.to_owned(),
        });
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let (line, col) = line_col(&String::from_utf8_lossy(good));
        SceneError::Syntax {
            file: file.clone(),
            line,
            col,
            message: format!(
                "the file is not UTF-8 text (byte 0x{:02X} at offset {})",
                bytes[e.valid_up_to()],
                e.valid_up_to()
            ),
        }
    })?;
    parse(text, &file, is_json_path(path))
}

/// Why a box list given as a scene is refused, and what takes it.
pub const NOT_A_SCENE_BUT_BOXES: &str = "not a scene: this is a box list (level geometry, one \
     box a line or in `v` corner pairs); `aabb-debugger import-boxes FILE --out SCENE` makes a \
     scene of it, `quality` measures its trees, and the window's Open imports it";

/// What a file given as a scene (or a box list) is instead, when it is one of the project's
/// other files (told by how it starts): a recording, a trace or a stream file, with where it
/// goes.
#[must_use]
pub fn other_kind(bytes: &[u8]) -> Option<&'static str> {
    let kind = crate::fileio::content_kind(bytes);
    if kind == crate::fileio::FileKind::Recording {
        Some(
            "a recording (`run --record`, or Save recording in the window); rebuild its steps \
             with `aabb-debugger replay FILE`, or open it in the window",
        )
    } else if kind == crate::fileio::FileKind::Trace {
        Some(
            "a trace of boxes (`aabb-trace`); `run`, `sweep`, `screenshot` and the window \
             take it",
        )
    } else if kind == crate::fileio::FileKind::Stream {
        Some(
            "a stream file of the live link (an engine's recorder wrote it); `run`, `sweep`, \
             `convert`, `screenshot` and the window take it",
        )
    } else {
        None
    }
}

/// The 1-based line and column just after `prefix`.
fn line_col(prefix: &str) -> (usize, usize) {
    let line = 1 + prefix.matches('\n').count();
    let col = 1 + prefix.chars().rev().take_while(|&c| c != '\n').count();
    (line, col)
}

/// Parses and validates text; `file` names it in messages.
pub(crate) fn parse(text: &str, file: &str, json: bool) -> Result<Scene, SceneError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(SceneError::Syntax {
            file: file.to_owned(),
            line: 1,
            col: 1,
            message: format!(
                "the file is empty; expected a scene ({})",
                if json { "a JSON object" } else { "RON" }
            ),
        });
    }
    // A newer file may have fields this build does not know: read its version leniently
    // first so it gets the right message instead of "unknown field".
    let probe = if json {
        serde_json::from_str::<VersionProbe>(text).ok()
    } else {
        ron::Options::default().from_str::<VersionProbe>(text).ok()
    };
    if let Some(p) = probe
        && p.format_version > FORMAT_VERSION
    {
        return Err(SceneError::Invalid {
            file: file.to_owned(),
            message: newer_message(p.format_version),
        });
    }
    let parsed: SceneFile = if json {
        serde_json::from_str(text).map_err(|e| {
            let mut err = json_error(&e, file, text);
            if let SceneError::Syntax { message, .. } = &mut err
                && text.trim_start().starts_with('(')
            {
                message.push_str(" (this looks like RON; a .json file must hold JSON)");
            }
            err
        })?
    } else {
        ron::Options::default()
            .from_str(text)
            .map_err(|e| SceneError::Syntax {
                file: file.to_owned(),
                line: e.span.start.line.max(1),
                col: e.span.start.col.max(1),
                message: e.code.to_string(),
            })?
    };
    let mut scene = parsed.into_scene(file)?;
    scene.validate(file)?;
    // A generator's density grows the world (validated above to stay finite).
    scene.world = scene.grown_world();
    Ok(scene)
}

/// A serde_json error as `FILE:LINE:COL: message` (without serde_json's own position suffix).
/// serde_json counts columns in bytes; the column here counts characters, as RON's does.
fn json_error(e: &serde_json::Error, file: &str, text: &str) -> SceneError {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
    SceneError::Syntax {
        file: file.to_owned(),
        line: e.line().max(1),
        col: char_column(text, e.line(), e.column()),
        message,
    }
}

/// The 1-based character column of the 1-based byte column `byte_col` on line `line` of
/// `text` (a column past the line's end counts the characters up to it, then bytes).
fn char_column(text: &str, line: usize, byte_col: usize) -> usize {
    let Some(row) = text.split('\n').nth(line.saturating_sub(1)) else {
        return byte_col.max(1);
    };
    let bytes = byte_col.saturating_sub(1);
    if bytes > row.len() {
        return row.chars().count() + (bytes - row.len()) + 1;
    }
    let mut end = bytes;
    while !row.is_char_boundary(end) {
        end -= 1;
    }
    row[..end].chars().count() + 1
}

/// The text a save writes: RON with one sphere per line, or JSON likewise.
pub(crate) fn to_text(scene: &Scene, json: bool) -> Result<String, SceneError> {
    let f = SceneFile::from_scene(scene);
    let fail = |message: String| SceneError::Invalid {
        file: "<text>".to_owned(),
        message,
    };
    if json {
        json_text(&f).map_err(|e| fail(e.to_string()))
    } else {
        let config = ron::ser::PrettyConfig::new()
            .depth_limit(2)
            .struct_names(false)
            .separate_tuple_members(false);
        let text = ron::ser::to_string_pretty(&f, config).map_err(|e| fail(e.to_string()))?;
        let mut text = plain_variant_names(&text);
        text.push('\n');
        Ok(text)
    }
}

/// `text` with ron's raw identifiers outside string literals written plainly: ron writes the
/// variant `Balancing::None` as `r#None` (so as not to confuse it with `Option::None`), but the
/// format, its documentation and every scene say `balancing: None`, which reads back the
/// same. String literals (a scene's name, a label) are copied unchanged.
fn plain_variant_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let raw_identifier = rest
            .strip_prefix("r#")
            .and_then(|r| r.chars().next())
            .is_some_and(|c| c.is_ascii_alphabetic());
        if !in_string && raw_identifier {
            rest = &rest[2..];
            continue;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// JSON with the top level and the sphere and box lists one item per line, the rest compact
/// (`boxes` left out when there are none, as in RON).
fn json_text(f: &SceneFile) -> Result<String, serde_json::Error> {
    use serde_json::to_string as js;
    let mut fields = vec![
        format!("\"format_version\": {}", js(&f.format_version)?),
        format!("\"name\": {}", js(&f.name)?),
        format!("\"dimensions\": {}", js(&f.dimensions)?),
        format!("\"world\": {}", js(&f.world)?),
        format!("\"dt\": {}", js(&f.dt)?),
        format!("\"tree\": {}", js(&f.tree)?),
    ];
    let spheres: Vec<String> = f
        .spheres
        .iter()
        .map(|s| js(s).map(|t| format!("    {t}")))
        .collect::<Result<_, _>>()?;
    fields.push(if spheres.is_empty() {
        "\"spheres\": []".to_owned()
    } else {
        format!("\"spheres\": [\n{}\n  ]", spheres.join(",\n"))
    });
    if !f.boxes.is_empty() {
        let boxes: Vec<String> = f
            .boxes
            .iter()
            .map(|b| js(b).map(|t| format!("    {t}")))
            .collect::<Result<_, _>>()?;
        fields.push(format!("\"boxes\": [\n{}\n  ]", boxes.join(",\n")));
    }
    fields.push(format!("\"generate\": {}", js(&f.generate)?));
    fields.push(format!("\"view\": {}", js(&f.view)?));
    Ok(format!("{{\n  {}\n}}\n", fields.join(",\n  ")))
}

/// Writes `text` to `path` with [`fileio::write_atomic`]: a new temporary file beside the
/// real target, synced, then renamed over it; on failure the target is untouched.
pub(crate) fn write_atomic(
    path: &Path,
    text: &str,
    options: fileio::WriteOptions,
) -> Result<(), SceneError> {
    Ok(fileio::write_atomic(path, text.as_bytes(), options)?)
}
