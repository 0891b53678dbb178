//! The `import-boxes` subcommand: turns a box list (see [`crate::scene::boxlist`]) into a
//! scene whose static boxes are the list's, in file order with ids 0, 1, 2, ...; its world
//! encloses them with a margin of 5% of their largest extent on every side (1 unit when they
//! are all one point); its dimensions are the list's; it has no spheres, or with `--spheres N`
//! a generator of N moving spheres spread over the world (seed 1, radii and speeds scaled to
//! the world). The scene is saved as the window saves one (atomically; RON, or JSON when the
//! name ends in `.json`).
//!
//! A malformed list is refused with `FILE:LINE: what` on stderr and exit code 1, and `--out`
//! is not touched.

use crate::fileio::WriteOptions;
use crate::scene::boxlist::{BoxSet, read_box_list};
use crate::scene::{FORMAT_VERSION, Generate, MAX_SPHERES, Scene, StaticBox};
use crate::text::escape_controls;
use crate::tree::{Aabb, TreeConfig};
use glam::Vec3;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Arguments of `import-boxes`.
#[derive(Debug, clap::Args)]
pub struct ImportBoxesArgs {
    /// The box list: one box a line, `minx miny maxx maxy` (2D) or `minx miny minz maxx maxy
    /// maxz` (3D); `#` comments and blank lines are ignored.
    pub file: PathBuf,
    /// The scene file to write (RON, or JSON when it ends in `.json`).
    #[arg(long)]
    pub out: PathBuf,
    /// The scene's name (the list's file name without its extension when left out).
    #[arg(long)]
    pub name: Option<String>,
    /// Also generate this many moving spheres spread over the world.
    #[arg(long, default_value_t = 0)]
    pub spheres: u32,
    /// Print what was written as one JSON object instead of a sentence.
    #[arg(long)]
    pub json: bool,
}

/// What `import-boxes --json` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImportReport {
    /// The scene file written.
    pub out: String,
    /// The static boxes in it.
    pub boxes: usize,
    /// The generated spheres in it.
    pub spheres: u32,
    /// 2 or 3.
    pub dimensions: u8,
    /// The world's least corner (2 or 3 numbers).
    pub world_min: Vec<f32>,
    /// The world's greatest corner.
    pub world_max: Vec<f32>,
}

/// Runs `import-boxes`; returns the exit code: 0, or 1 with the message on stderr when the
/// list is refused or the scene cannot be saved.
pub fn main(args: &ImportBoxesArgs) -> anyhow::Result<i32> {
    let file = escape_controls(&args.file.display().to_string());
    let spheres = args.spheres as usize;
    if spheres > MAX_SPHERES {
        eprintln!(
            "--spheres: a scene holds at most {MAX_SPHERES} bodies (spheres and boxes), got \
             {spheres} spheres"
        );
        return Ok(2);
    }
    if crate::fileio::same_file(&args.file, &args.out) {
        eprintln!(
            "{}: is the box list being read ({file}); give --out another path (nothing was \
             written)",
            escape_controls(&args.out.display().to_string())
        );
        return Ok(2);
    }
    let set = match read_box_list(&args.file, MAX_SPHERES) {
        Ok(set) => set,
        Err(message) => {
            eprintln!("{message}");
            return Ok(1);
        }
    };
    if set.boxes.len() + spheres > MAX_SPHERES {
        eprintln!(
            "{file}: {} boxes and --spheres {spheres} make {} bodies; a scene holds at most \
             {MAX_SPHERES}",
            set.boxes.len(),
            set.boxes.len() + spheres
        );
        return Ok(1);
    }
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| default_name(&args.file));
    let scene = scene_of(&set, name, args.spheres);
    // Checked here, so a list whose boxes make no valid scene (they span more than f32 holds,
    // or spheres cannot be spread over them) is refused naming the list, not the output.
    if let Err(message) = scene_problem(&scene) {
        eprintln!("{file}: {message}");
        return Ok(1);
    }
    if let Err(e) = scene.save_with(&args.out, WriteOptions::default()) {
        eprintln!("{e}");
        return Ok(1);
    }
    let d = usize::from(scene.dimensions);
    let report = ImportReport {
        // As it is: JSON escapes what it must, and the sentence below escapes controls.
        out: args.out.display().to_string(),
        boxes: scene.boxes.len(),
        spheres: args.spheres,
        dimensions: scene.dimensions,
        world_min: scene.world.min.to_array()[..d].to_vec(),
        world_max: scene.world.max.to_array()[..d].to_vec(),
    };
    let text = if args.json {
        format!("{}\n", serde_json::to_string(&report)?)
    } else {
        format!(
            "{}: {} static boxes, {} spheres, {}D, world min {:?} max {:?}\n",
            escape_controls(&report.out),
            report.boxes,
            report.spheres,
            report.dimensions,
            report.world_min,
            report.world_max
        )
    };
    super::run::print_out(&text)?;
    Ok(0)
}

/// Why the scene made of a list is not valid, in the list's terms (the generator's rules with
/// `--spheres`: a world at most 10^9 units wide, and so on).
fn scene_problem(scene: &Scene) -> Result<(), String> {
    scene.validate("").map_err(|e| {
        format!(
            "the scene made of these boxes would not be valid: {}",
            e.without_file()
        )
    })
}

/// The list's file name without its extension.
fn default_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::boxlist::parse_box_list;

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
}
