//! Box lists: the plain text of level geometry that `quality` measures and `import-boxes`
//! turns into a scene's static boxes.
//!
//! One box a line: `minx miny maxx maxy` (2D) or `minx miny minz maxx maxy maxz` (3D), the
//! numbers separated by spaces or tabs, decimal (`1`, `-0.5`, `2.5e-3`), finite, read as the
//! nearest `f32`, with min <= max on every axis; every line of one list of the same dimension.
//!
//! Or a box in two corner lines, as the level sets of Catto's dynamic-tree samples are
//! written: `v minx miny minz` then `v maxx maxy maxz` (3D; `v x y` in 2D), each pair one
//! box. A list is one form or the other, as its first box is.
//!
//! `#` starts a comment (to the end of the line); blank lines are skipped; a line may end in
//! `\r`. Anything else is refused with `FILE:LINE: what`.

use super::{FORMAT_VERSION, Generate, Scene, StaticBox};
use crate::fileio::{MAX_SCENE_BYTES, looks_like_box_list, read_bounded};
use crate::text::{MAX_EXCERPT_CHARS, escape_controls, excerpt};
use crate::tree::{Aabb, TreeConfig};
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

/// True when the window (and `screenshot`) opens `path` as a box list: its start looks like
/// one, or its name ends in one of [`crate::fileio::BOX_LIST_EXTENSIONS`] (so an empty or
/// malformed list is refused by the box list's reader, with its line, not by the scene
/// reader); see [`crate::fileio::open_as`].
#[must_use]
pub fn opens_as_box_list(path: &Path) -> bool {
    crate::fileio::open_as(path) == crate::fileio::OpenAs::BoxList
}

/// How much of a file [`is_box_list_file`] looks at.
const SNIFF_BYTES: u64 = 64 * 1024;

/// True when the file at `path` is a regular file whose start looks like a box list
/// ([`looks_like_box_list`]); false when it cannot be read (a FIFO is not opened: nothing
/// waits for a writer).
#[must_use]
pub fn is_box_list_file(path: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = crate::fileio::open_regular(path, u64::MAX) else {
        return false;
    };
    let mut start = Vec::new();
    file.take(SNIFF_BYTES).read_to_end(&mut start).is_ok() && looks_like_box_list(&start)
}

/// Parses a box list; `file` names it in messages, each `FILE:LINE: what` (lines from 1).
///
/// Refused: a word that is not a number, a number that is not finite (or overflows `f32`), a
/// line of other than 4 or 6 numbers (a corner line: other than 2 or 3 after its `v`),
/// `min > max` on an axis, a line of the other dimension or form than the first box's, a
/// lower corner without its upper one at the end, and a list without a box.
pub fn parse_box_list(text: &str, file: &str) -> Result<BoxSet, String> {
    parse_box_list_limited(text, file, usize::MAX)
}

/// The two forms a box list may take.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// One box a line: `minx miny maxx maxy` or `minx miny minz maxx maxy maxz`.
    Lines,
    /// A box in two corner lines, `v minx miny minz` then `v maxx maxy maxz`.
    Corners,
}

impl Form {
    /// What a line of this form looks like, for messages.
    fn describe(self) -> &'static str {
        match self {
            Form::Lines => "one box a line",
            Form::Corners => "corner lines `v x y z`",
        }
    }
}

/// What the first box of a list fixed: its form, dimension, and the line it was on.
struct Layout {
    form: Form,
    dimensions: u8,
    line: usize,
}

/// [`parse_box_list`], refusing a list of more than `max_boxes` boxes at the line of the
/// first one too many.
pub fn parse_box_list_limited(text: &str, file: &str, max_boxes: usize) -> Result<BoxSet, String> {
    let mut layout: Option<Layout> = None;
    // A corner form's lower corner, waiting for its upper one, and the line it was on.
    let mut lower: Option<([f32; 3], usize)> = None;
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
        // A CR ends a CRLF line; one inside a line is a CR-only line break, which would make
        // the file one line of many numbers.
        if raw.strip_suffix('\r').unwrap_or(raw).contains('\r') {
            return Err(format!(
                "{file}:{line}: a carriage return (CR) inside the line: lines must end in LF or \
                 CRLF, not CR alone"
            ));
        }
        let content = raw.split('#').next().unwrap_or("");
        // At most 8 words are kept (one past a 3D box, or past a corner's `v` and three
        // numbers), so a line of millions of words costs no memory; the rest are only
        // counted for the message.
        let mut all = content.split_whitespace();
        let mut words: Vec<&str> = all.by_ref().take(8).collect();
        if words.is_empty() {
            continue;
        }
        let form = if words[0] == "v" {
            words.remove(0);
            Form::Corners
        } else {
            Form::Lines
        };
        let here = dimension_of(form, words.len(), || words.len() + all.count())
            .map_err(|what| format!("{file}:{line}: {what}"))?;
        match &layout {
            None => {
                layout = Some(Layout {
                    form,
                    dimensions: here,
                    line,
                });
            }
            Some(first) if first.form != form => {
                return Err(format!(
                    "{file}:{line}: {} in a list of {} (from line {})",
                    match form {
                        Form::Lines => "a box on one line",
                        Form::Corners => "a corner line (`v ...`)",
                    },
                    first.form.describe(),
                    first.line
                ));
            }
            Some(first) if first.dimensions != here => {
                return Err(format!(
                    "{file}:{line}: a {here}D {} ({} numbers) in a list of {}D boxes (from \
                     line {})",
                    match form {
                        Form::Lines => "box",
                        Form::Corners => "corner",
                    },
                    words.len(),
                    first.dimensions,
                    first.line
                ));
            }
            Some(_) => {}
        }
        // A box starts on this line (its only line, or its lower corner's).
        if (form == Form::Lines || lower.is_none()) && boxes.len() >= max_boxes {
            return Err(format!(
                "{file}:{line}: more than {max_boxes} boxes; at most {max_boxes} are allowed"
            ));
        }
        let numbers = parse_numbers(&words, file, line)?;
        let (min, max) = match (form, lower.take()) {
            (Form::Lines, _) => {
                let n = usize::from(here);
                let mut min = [0.0f32; 3];
                let mut max = [0.0f32; 3];
                min[..n].copy_from_slice(&numbers[..n]);
                max[..n].copy_from_slice(&numbers[n..2 * n]);
                (min, max)
            }
            (Form::Corners, None) => {
                let mut corner = [0.0f32; 3];
                corner[..usize::from(here)].copy_from_slice(&numbers[..usize::from(here)]);
                lower = Some((corner, line));
                continue;
            }
            (Form::Corners, Some((min, _))) => {
                let mut max = [0.0f32; 3];
                max[..usize::from(here)].copy_from_slice(&numbers[..usize::from(here)]);
                (min, max)
            }
        };
        for axis in 0..usize::from(here) {
            if min[axis] > max[axis] {
                return Err(format!(
                    "{file}:{line}: min > max on {} ({} > {}){}",
                    ["x", "y", "z"][axis],
                    min[axis],
                    max[axis],
                    if form == Form::Corners {
                        ", the upper corner below the lower one"
                    } else {
                        ""
                    }
                ));
            }
        }
        boxes.push(Aabb::new(Vec3::from_array(min), Vec3::from_array(max)));
    }
    if let Some((_, line)) = lower {
        return Err(format!(
            "{file}:{line}: a lower corner without its upper one (a box is two corner \
             lines: `v minx miny minz`, then `v maxx maxy maxz`)"
        ));
    }
    match layout {
        Some(first) => Ok(BoxSet {
            dimensions: first.dimensions,
            boxes,
        }),
        None => Err(format!("{file}: no boxes (no line holds a box)")),
    }
}

/// The dimension of a line of `form` with `kept` numbers (at most one past the longest line
/// of the form); `count` counts them all, for the message when they are wrong.
fn dimension_of(form: Form, kept: usize, count: impl FnOnce() -> usize) -> Result<u8, String> {
    match (form, kept) {
        (Form::Lines, 4) | (Form::Corners, 2) => Ok(2),
        (Form::Lines, 6) | (Form::Corners, 3) => Ok(3),
        (Form::Lines, _) => Err(format!(
            "expected 4 numbers (2D: minx miny maxx maxy) or 6 (3D: minx miny minz maxx maxy \
             maxz), found {}",
            count()
        )),
        (Form::Corners, _) => Err(format!(
            "expected 3 numbers after `v` (3D: x y z) or 2 (2D: x y), found {}",
            count()
        )),
    }
}

/// The numbers of a line's words (at most 6), each finite as an `f32`.
fn parse_numbers(words: &[&str], file: &str, line: usize) -> Result<[f32; 6], String> {
    let mut numbers = [0.0f32; 6];
    for (slot, word) in numbers.iter_mut().zip(words) {
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
    Ok(numbers)
}

/// The scene of a box list: its boxes as static boxes (ids in file order), a world around
/// them, and `spheres` generated spheres. Not validated here (saving validates).
#[must_use]
pub fn scene_of(set: &BoxSet, name: String, spheres: u32) -> Scene {
    let boxes: Vec<StaticBox> = set
        .boxes
        .iter()
        .enumerate()
        .map(|(i, b)| StaticBox {
            // A list has at most MAX_SPHERES boxes, far below u32::MAX.
            id: i as u32,
            min: b.min,
            max: b.max,
        })
        .collect();
    let world = enclosing_world(&set.boxes, set.dimensions);
    let generate = (spheres > 0).then(|| {
        // Radii up to a 50th of the world's narrowest side, speeds up to 20 radii a second.
        let narrowest = (0..usize::from(set.dimensions))
            .map(|a| f64::from(world.max[a]) - f64::from(world.min[a]))
            .fold(f64::INFINITY, f64::min);
        let r = (narrowest / 50.0) as f32;
        Generate {
            count: spheres,
            radius: (0.5 * r, r),
            speed: (0.0, 20.0 * r),
            seed: 1,
            density: None,
        }
    });
    Scene {
        format_version: FORMAT_VERSION,
        name,
        dimensions: set.dimensions,
        world,
        dt: 1.0 / 60.0,
        tree: TreeConfig::default(),
        spheres: Vec::new(),
        boxes,
        generate,
        view: None,
    }
}

/// The boxes' bounds grown on every side by 5% of their largest extent (1 unit when that is
/// 0), rounded outwards so the world is wider than the boxes on every axis in use (z = 0..0
/// in 2D), but never past f32's largest numbers (a box reaching them touches the world).
fn enclosing_world(boxes: &[Aabb<Vec3>], dims: u8) -> Aabb<Vec3> {
    let d = usize::from(dims);
    let mut min = Vec3::splat(f32::INFINITY);
    let mut max = Vec3::splat(f32::NEG_INFINITY);
    for b in boxes {
        min = min.min(b.min);
        max = max.max(b.max);
    }
    let extent = (0..d)
        .map(|a| f64::from(max[a]) - f64::from(min[a]))
        .fold(0.0, f64::max);
    let margin = if extent > 0.0 { 0.05 * extent } else { 1.0 };
    let (mut lo, mut hi) = (Vec3::ZERO, Vec3::ZERO);
    // Within f32's range: boxes at its ends get a world that touches them there.
    let finite = |v: f32| v.clamp(f32::MIN, f32::MAX);
    for a in 0..d {
        lo[a] = (f64::from(min[a]) - margin) as f32;
        if lo[a] >= min[a] {
            lo[a] = min[a].next_down();
        }
        lo[a] = finite(lo[a]);
        hi[a] = (f64::from(max[a]) + margin) as f32;
        if hi[a] <= max[a] {
            hi[a] = max[a].next_up();
        }
        hi[a] = finite(hi[a]);
    }
    Aabb::new(lo, hi)
}

/// Why the scene made of a list ([`scene_of`]) is not valid, in the list's terms (the
/// generator's rules with spheres: a world at most 10^9 units wide, and so on).
pub fn scene_problem(scene: &Scene) -> Result<(), String> {
    scene.validate("").map_err(|e| {
        format!(
            "the scene made of these boxes would not be valid: {}",
            e.without_file()
        )
    })
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

    #[test]
    fn corner_pairs_are_boxes_as_catto_writes_them() {
        let text =
            "v 32.0852 3.88999 -121.437\nv 33.1 4.15999 -120.423\n\n# c\nv 0 0 0\n v 1 2 3 \r\n";
        let set = parse_box_list(text, "f").expect("valid");
        assert_eq!(set.dimensions, 3);
        assert_eq!(
            set.boxes,
            vec![
                Aabb::new(
                    Vec3::new(32.0852, 3.88999, -121.437),
                    Vec3::new(33.1, 4.15999, -120.423)
                ),
                Aabb::new(Vec3::ZERO, Vec3::new(1.0, 2.0, 3.0)),
            ]
        );
        // The same boxes as one box a line.
        let lines = "32.0852 3.88999 -121.437 33.1 4.15999 -120.423\n0 0 0 1 2 3\n";
        assert_eq!(parse_box_list(lines, "f"), Ok(set));
        let flat = parse_box_list("v 0 0\nv 1 2\n", "f").expect("2D corners");
        assert_eq!(flat.dimensions, 2);
        assert_eq!(
            flat.boxes,
            vec![Aabb::new(Vec3::ZERO, Vec3::new(1.0, 2.0, 0.0))]
        );
    }

    #[test]
    fn malformed_corner_pairs_are_refused_at_their_line() {
        assert_eq!(
            err("v 0 0 0\nv 1 1 1\nv 2 2 2\n"),
            "f.txt:3: a lower corner without its upper one (a box is two corner lines: `v minx \
             miny minz`, then `v maxx maxy maxz`)"
        );
        assert_eq!(
            err("v 0 0 0\nv 1 -1 1\n"),
            "f.txt:2: min > max on y (0 > -1), the upper corner below the lower one"
        );
        assert_eq!(
            err("v 0 0 0 0\n"),
            "f.txt:1: expected 3 numbers after `v` (3D: x y z) or 2 (2D: x y), found 4"
        );
        assert_eq!(
            err("v\n"),
            "f.txt:1: expected 3 numbers after `v` (3D: x y z) or 2 (2D: x y), found 0"
        );
        assert_eq!(err("v 0 0 z\n"), "f.txt:1: `z` is not a number");
        assert_eq!(
            err("v 0 0 0\nv 1 1\n"),
            "f.txt:2: a 2D corner (2 numbers) in a list of 3D boxes (from line 1)"
        );
        assert_eq!(
            err("v 0 0 0\nv 1 1 1\n0 0 0 1 1 1\n"),
            "f.txt:3: a box on one line in a list of corner lines `v x y z` (from line 1)"
        );
        assert_eq!(
            err("0 0 1 1\nv 0 0\n"),
            "f.txt:2: a corner line (`v ...`) in a list of one box a line (from line 1)"
        );
        assert_eq!(
            err(&format!("v 0 0 0\nv {}\n", "1 ".repeat(50_000))),
            "f.txt:2: expected 3 numbers after `v` (3D: x y z) or 2 (2D: x y), found 50000"
        );
        let three = "v 0 0\nv 1 1\nv 0 0\nv 2 2\nv 0 0\nv 3 3\n";
        assert_eq!(
            parse_box_list_limited(three, "f.txt", 2).err().as_deref(),
            Some("f.txt:5: more than 2 boxes; at most 2 are allowed")
        );
        assert_eq!(
            parse_box_list_limited(three, "f.txt", 3).map(|s| s.boxes.len()),
            Ok(3)
        );
    }

    #[test]
    fn the_world_encloses_the_boxes_with_a_margin_and_the_ids_follow_the_file() {
        let set = parse_box_list("0 0 10 1\n2 3 4 5\n", "f").expect("valid");
        let scene = scene_of(&set, "level".to_owned(), 0);
        assert_eq!(
            scene.world,
            Aabb::new(Vec3::new(-0.5, -0.5, 0.0), Vec3::new(10.5, 5.5, 0.0))
        );
        let ids: Vec<u32> = scene.boxes.iter().map(|b| b.id).collect();
        assert_eq!(ids, [0, 1]);
        assert_eq!(scene.boxes[1].min, Vec3::new(2.0, 3.0, 0.0));
        assert_eq!(scene.generate, None);
        scene.validate("t").expect("a valid scene");
        // One point: a unit margin.
        let point = parse_box_list("1 2 3 1 2 3\n", "f").expect("valid");
        let world = scene_of(&point, String::new(), 0).world;
        assert_eq!(
            world,
            Aabb::new(Vec3::new(0.0, 1.0, 2.0), Vec3::new(2.0, 3.0, 4.0))
        );
        // Far from the origin, where the margin is below f32's spacing: still wider.
        let far = parse_box_list("3e38 0 3e38 0\n", "f").expect("valid");
        let w = scene_of(&far, String::new(), 0).world;
        assert!(w.min.x < 3e38 && w.max.x > 3e38 && w.min.y < 0.0 && w.max.y > 0.0);
        // Spheres: a generator scaled to the world, ids after the boxes'.
        let with = scene_of(&set, String::new(), 40);
        let g = with.generate.expect("a generator");
        assert_eq!((g.count, g.radius, g.seed), (40, (0.06, 0.12), 1));
        with.validate("t").expect("a valid scene");
        let first = with.all_spheres().first().map(|s| s.id);
        assert_eq!(first, Some(2));
    }

    /// The window opens as a box list what starts as one, and whatever is named as one (an
    /// empty list, a missing one), never a scene or a FIFO named otherwise.
    #[test]
    fn the_window_opens_as_a_box_list_what_starts_or_is_named_as_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("write");
            path
        };
        assert!(opens_as_box_list(&file("level.ron", "0 0 1 1\n")));
        assert!(opens_as_box_list(&file("empty.txt", "")));
        assert!(opens_as_box_list(&file("notes.BOXES", "# nothing yet\n")));
        assert!(opens_as_box_list(&dir.path().join("missing.txt")));
        assert!(!opens_as_box_list(&file(
            "scene.ron",
            "(format_version: 1)\n"
        )));
        assert!(!opens_as_box_list(&file("level", "")));
        assert!(!opens_as_box_list(&dir.path().join("missing.ron")));
    }
}
