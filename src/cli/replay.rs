//! The `replay` subcommand: rebuilds a step of a recording (written by `run --record`, or the
//! window) and prints what `run` prints for that step: `replay FILE --at S --json` gives the
//! object `run SCENE --steps S --json` gives, timings aside (they are the recorded ones).

use super::run::{Totals, readable, report};
use crate::replay::{History, ReplayError, file};
use crate::scene::SceneError;
use std::path::PathBuf;

/// Arguments of `replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The recording file.
    pub file: PathBuf,
    /// The step to rebuild; the last recorded step when absent.
    #[arg(long)]
    pub at: Option<u64>,
    /// Print one JSON object (as `run --json`) instead of a readable summary.
    #[arg(long)]
    pub json: bool,
}

/// The totals `run` would have summed over steps 1 to `at` (the recorded times).
fn totals_to(history: &History, at: u64) -> Totals {
    let mut totals = Totals::default();
    let end = usize::try_from(at)
        .unwrap_or(usize::MAX)
        .min(history.steps.len().saturating_sub(1));
    for r in history.steps.get(1..=end).unwrap_or_default() {
        totals.steps += 1;
        totals.reinserts += u64::from(r.reinserted);
        totals.recomputed += u64::from(r.pairs_recomputed);
        totals.update_secs += f64::from(r.update_secs);
        totals.pairs_secs += f64::from(r.pairs_secs);
    }
    totals
}

/// Runs `replay`; returns the exit code (1 with the message on stderr when the file is
/// refused, the step is not recorded or does not rebuild as recorded, or the step stopped).
pub fn main(args: &ReplayArgs) -> anyhow::Result<i32> {
    let name = args.file.display().to_string();
    let history = match file::load(&args.file) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    let at = args.at.unwrap_or(history.last_step());
    let sim = match history.state_at(at) {
        Ok(sim) => sim,
        Err(ReplayError::Scene(e)) => {
            // The simulation names no file: the recording is what was refused.
            eprintln!(
                "{}: the recording's scene: {}",
                crate::text::escape_controls(&name),
                e.without_file()
            );
            return Ok(1);
        }
        Err(e) => {
            eprintln!(
                "{}: {}",
                crate::text::escape_controls(&name),
                crate::text::clean_message(&e.to_string())
            );
            return Ok(1);
        }
    };
    // The header's `scene_file` is what the recording says, any length: shown cut (a 10 MB
    // name was printed whole).
    let scene_file = crate::text::excerpt(&history.scene_file, crate::text::MAX_EXCERPT_CHARS);
    let file = scene_file.as_str();
    if let Some(source) = sim.last_error() {
        // The step stopped, as it did when recorded: said of the recording (the scene's file
        // may be gone), with the limit the run had (replay takes no --pair-limit).
        let limit = match source {
            crate::broadphase::BroadphaseError::PairLimit { .. } => {
                format!("; the run's pair limit was {}", sim.pair_limit())
            }
            _ => String::new(),
        };
        eprintln!(
            "{}: step {at}: {source} (the recorded run stopped there too{limit})",
            crate::text::escape_controls(&name)
        );
        return Ok(1);
    }
    let mut summary = super::run::summary_of(&history.scene, file, &sim, &totals_to(&history, at));
    // The scene's spheres, as `run` counts them, with those the recorded edits up to the
    // step added and removed.
    let (mut added, mut removed) = (0usize, 0usize);
    for e in history.edits.iter().filter(|e| e.step <= at) {
        match e.edit {
            crate::replay::Edit::AddSphere(_) => added += 1,
            crate::replay::Edit::RemoveSphere { .. } => removed += 1,
            _ => {}
        }
    }
    summary.spheres = (summary.spheres + added).saturating_sub(removed);
    let summary: Result<_, SceneError> = Ok(summary);
    if let Ok(s) = &summary
        && !args.json
    {
        // The readable form says which recording and step it comes from.
        let text = readable(s);
        super::run::print_out(&format!(
            "recording: {} at step {at} of {}\n{text}",
            crate::text::escape_controls(&name),
            history.last_step()
        ))?;
        return Ok(0);
    }
    report(summary, file, args.json, sim.pair_limit())
}
