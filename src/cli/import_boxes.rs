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

use crate::fileio::{FileKind, WriteOptions};
use crate::scene::MAX_SPHERES;
use crate::scene::boxlist::{read_box_list, scene_of, scene_problem};
use crate::text::escape_controls;
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
    /// Replace `--out` even when it holds something other than a scene (a box list, source
    /// code); without it such a file is refused and left unchanged.
    #[arg(long)]
    pub force: bool,
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
            "--spheres: import-boxes makes at most {MAX_SPHERES} bodies (spheres and boxes), got \
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
            "{file}: {} boxes and --spheres {spheres} make {} bodies; import-boxes makes at \
             most {MAX_SPHERES}",
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
    if let Err(e) = scene.save_with(
        &args.out,
        WriteOptions::of_kind(FileKind::Scene, args.force),
    ) {
        eprintln!("{e}");
        return Ok(1);
    }
    // What `check` says of the scene written (its static boxes overlapping in more than half
    // the pair limit, ...), as check says it.
    for warning in scene.warnings(crate::broadphase::DEFAULT_PAIR_LIMIT) {
        eprintln!(
            "{}: warning: {warning}",
            escape_controls(&args.out.display().to_string())
        );
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

/// The list's file name without its extension.
fn default_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
