//! Box lists: the plain text of level geometry that `quality` measures and `import-boxes`
//! turns into a scene's static boxes.
//!
//! One box a line: `minx miny maxx maxy` (2D) or `minx miny minz maxx maxy maxz` (3D), the
//! numbers separated by spaces or tabs, decimal (`1`, `-0.5`, `2.5e-3`), finite, read as the
//! nearest `f32`, with min <= max on every axis; every line of one list of the same dimension.
//! `#` starts a comment (to the end of the line); blank lines are skipped; a line may end in
//! `\r`. Anything else is refused with `FILE:LINE: what`.

use crate::fileio::{MAX_SCENE_BYTES, read_bounded};
use crate::text::{MAX_EXCERPT_CHARS, escape_controls, excerpt};
use crate::tree::Aabb;
use glam::Vec3;
use std::path::Path;

/// The largest box list read: 256 MiB (as a scene file).
pub const MAX_BOX_LIST_BYTES: u64 = MAX_SCENE_BYTES;

/// The boxes of a list.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxSet {
    /// 2 or 3.
    pub dimensions: u8,
    /// The boxes in file order (z = 0..0 in 2D).
    pub boxes: Vec<Aabb<Vec3>>,
}

/// Reads a box list from a file (a regular file of at most [`MAX_BOX_LIST_BYTES`], UTF-8
/// text) and parses it with at most `max_boxes` boxes ([`parse_box_list_limited`]). The
/// error is the message to print, starting with the file's name (control characters
/// escaped).
pub fn read_box_list(path: &Path, max_boxes: usize) -> Result<BoxSet, String> {
    let file = escape_controls(&path.display().to_string());
    let bytes = read_bounded(path, MAX_BOX_LIST_BYTES).map_err(|e| e.to_string())?;
    if let Some(kind) = super::format::other_kind(&bytes) {
        return Err(format!("{file}: not a box list: this is {kind}"));
    }
    match String::from_utf8(bytes) {
        Ok(text) => parse_box_list_limited(&text, &file, max_boxes),
        Err(e) => {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
            Err(format!("{file}:{line}: not UTF-8 text"))
        }
    }
}

/// Parses a box list; `file` names it in messages, each `FILE:LINE: what` (lines from 1).
///
/// Refused: a word that is not a number, a number that is not finite (or overflows `f32`), a
/// line of other than 4 or 6 numbers, `min > max` on an axis, a line of the other dimension
/// than the first box's, and a list without a box.
pub fn parse_box_list(text: &str, file: &str) -> Result<BoxSet, String> {
    parse_box_list_limited(text, file, usize::MAX)
}

/// [`parse_box_list`], refusing a list of more than `max_boxes` boxes at the line of the
/// first one too many.
pub fn parse_box_list_limited(text: &str, file: &str, max_boxes: usize) -> Result<BoxSet, String> {
    let mut dims: Option<(u8, usize)> = None;
    let mut boxes = Vec::new();
    // A byte-order mark some editors put before the first line is not part of it.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // A scene given for a box list is said to be one, not refused for its first line's words.
    let first = text
        .lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    if let Some(line) = first
        && (line.starts_with('(') || line.starts_with('{') || line.starts_with("//"))
    {
        return Err(format!(
            "{file}: not a box list: this looks like a scene (RON or JSON); a box list is \
             lines of 4 numbers (2D: minx miny maxx maxy) or 6 (3D)"
        ));
    }
    for (index, raw) in text.split('\n').enumerate() {
        let line = index + 1;
        let content = raw.split('#').next().unwrap_or("");
        // At most 7 words are kept (one past a 3D box), so a line of millions of words costs
        // no memory; the rest are only counted for the message.
        let mut all = content.split_whitespace();
        let words: Vec<&str> = all.by_ref().take(7).collect();
        if words.is_empty() {
            continue;
        }
        let here = match words.len() {
            4 => 2u8,
            6 => 3u8,
            n => {
                let n = n + all.count();
                return Err(format!(
                    "{file}:{line}: expected 4 numbers (2D: minx miny maxx maxy) or 6 (3D: minx \
                     miny minz maxx maxy maxz), found {n}"
                ));
            }
        };
        match dims {
            None => dims = Some((here, line)),
            Some((d, first)) if d != here => {
                return Err(format!(
                    "{file}:{line}: a {here}D box ({} numbers) in a list of {d}D boxes (from \
                     line {first})",
                    words.len()
                ));
            }
            Some(_) => {}
        }
        if boxes.len() >= max_boxes {
            return Err(format!(
                "{file}:{line}: more than {max_boxes} boxes; at most {max_boxes} are allowed"
            ));
        }
        let mut numbers = [0.0f32; 6];
        for (slot, word) in numbers.iter_mut().zip(&words) {
            let value: f32 = word.parse().map_err(|_| {
                format!(
                    "{file}:{line}: `{}` is not a number",
                    excerpt(word, MAX_EXCERPT_CHARS)
                )
            })?;
            if !value.is_finite() {
                return Err(format!(
                    "{file}:{line}: `{}` is not a finite number (or is too large for f32)",
                    excerpt(word, MAX_EXCERPT_CHARS)
                ));
            }
            *slot = value;
        }
        let n = usize::from(here);
        let mut min = [0.0f32; 3];
        let mut max = [0.0f32; 3];
        for axis in 0..n {
            min[axis] = numbers[axis];
            max[axis] = numbers[n + axis];
            if min[axis] > max[axis] {
                return Err(format!(
                    "{file}:{line}: min > max on {} ({} > {})",
                    ["x", "y", "z"][axis],
                    min[axis],
                    max[axis]
                ));
            }
        }
        boxes.push(Aabb::new(Vec3::from_array(min), Vec3::from_array(max)));
    }
    match dims {
        Some((dimensions, _)) => Ok(BoxSet { dimensions, boxes }),
        None => Err(format!("{file}: no boxes (no line holds a box)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_box_list(text, "f.txt").err().unwrap_or_default()
    }

    #[test]
    fn box_lists_parse_and_refuse_with_the_line() {
        let set = parse_box_list("# a\n\n0 0 1 1\n 2 2 3 3 # b\r\n", "f").expect("valid");
        assert_eq!(set.dimensions, 2);
        assert_eq!(set.boxes.len(), 2);
        assert_eq!(set.boxes[1].max, Vec3::new(3.0, 3.0, 0.0));
        assert_eq!(err("0 0 1 x\n"), "f.txt:1: `x` is not a number");
        assert_eq!(
            err("0 0 1 1\n0 0 1\n"),
            "f.txt:2: expected 4 numbers (2D: minx miny maxx maxy) or 6 (3D: minx miny minz \
             maxx maxy maxz), found 3"
        );
        assert_eq!(err("2 0 1 1"), "f.txt:1: min > max on x (2 > 1)");
        assert_eq!(
            err("0 0 1 inf"),
            "f.txt:1: `inf` is not a finite number (or is too large for f32)"
        );
        assert_eq!(
            err("0 0 1 1\n\n0 0 0 1 1 1"),
            "f.txt:3: a 3D box (6 numbers) in a list of 2D boxes (from line 1)"
        );
        assert_eq!(err("# only\n\n"), "f.txt: no boxes (no line holds a box)");
    }

    #[test]
    fn a_line_of_many_words_is_counted_and_a_list_past_the_limit_is_refused() {
        let long = "1 ".repeat(100_000);
        assert_eq!(
            err(&format!("0 0 1 1\n{long}\n")),
            "f.txt:2: expected 4 numbers (2D: minx miny maxx maxy) or 6 (3D: minx miny minz \
             maxx maxy maxz), found 100000"
        );
        let three = "0 0 1 1\n# c\n0 0 2 2\n0 0 3 3\n";
        assert_eq!(
            parse_box_list_limited(three, "f.txt", 2).err().as_deref(),
            Some("f.txt:4: more than 2 boxes; at most 2 are allowed")
        );
        assert_eq!(
            parse_box_list_limited(three, "f.txt", 3).map(|s| s.boxes.len()),
            Ok(3)
        );
    }
}
