//! The `check` subcommand: validates a scene file; exit 0 when valid, 1 with the message on
//! stderr when not.

use crate::scene::Scene;
use std::path::PathBuf;

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The scene file (RON, or JSON when it ends in `.json`).
    pub scene: PathBuf,
}

/// Runs `check`; returns the exit code.
pub fn main(args: &CheckArgs) -> anyhow::Result<i32> {
    match Scene::load(&args.scene) {
        Ok(scene) => {
            super::run::print_out(&format!(
                "{}: ok: \"{}\", {}D, {} spheres ({} listed, {} generated)\n",
                args.scene.display(),
                scene.name,
                scene.dimensions,
                scene.sphere_count(),
                scene.spheres.len(),
                scene.generate.map_or(0, |g| g.count)
            ))?;
            Ok(0)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(1)
        }
    }
}
