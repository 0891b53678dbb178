//! The `check` subcommand: validates a scene file; exit 0 when valid, 1 with the message on
//! stderr when not.

use crate::broadphase::BroadphaseKind;
use crate::scene::Scene;
use crate::text::{MAX_EXCERPT_CHARS, escape_controls, excerpt};
use std::path::PathBuf;

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The scene file (RON, or JSON when it ends in `.json`).
    pub scene: PathBuf,
    /// The candidate-pair limit the warnings measure against (as `run --pair-limit`).
    #[arg(long, default_value_t = crate::broadphase::DEFAULT_PAIR_LIMIT, value_parser = super::pair_limit_arg)]
    pub pair_limit: usize,
}

/// Runs `check`; returns the exit code. Warnings about a valid scene go to stderr, one a
/// line as `FILE: warning: ...`, and do not change the exit code.
pub fn main(args: &CheckArgs) -> anyhow::Result<i32> {
    let file = escape_controls(&args.scene.display().to_string());
    match Scene::load(&args.scene) {
        Ok(scene) => {
            for warning in scene.warnings(args.pair_limit) {
                eprintln!("{file}: warning: {warning}");
            }
            // Brute force and sweep-and-prune, which `run --broadphase` and the window offer:
            // said when slow, degenerate or refused.
            let work = scene.work_at_start();
            for kind in [BroadphaseKind::Brute, BroadphaseKind::Sap] {
                let note = work
                    .refusal(kind)
                    .map(|why| format!("{why} (refused)"))
                    .or_else(|| work.warning(kind));
                if let Some(note) = note {
                    eprintln!("{file}: warning: with --broadphase {kind}: {note}");
                }
            }
            super::run::print_out(&format!(
                "{file}: ok: \"{}\", {}D, {} spheres ({} listed, {} generated){}\n",
                excerpt(&scene.name, MAX_EXCERPT_CHARS),
                scene.dimensions,
                scene.sphere_count(),
                scene.spheres.len(),
                scene.generate.map_or(0, |g| g.count),
                match scene.boxes.len() {
                    0 => String::new(),
                    n => format!(", {n} static boxes"),
                }
            ))?;
            Ok(0)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(1)
        }
    }
}
