//! The `check` subcommand: validates a scene file, or a stream file (told by its magic): its
//! frames and, when its engine sent them, its own broad phase's parts (missed pairs, pair
//! classes, trees: see [`super::engine_report`]); exit 0 when valid, 1 with the message on
//! stderr when not.

use crate::broadphase::BroadphaseKind;
use crate::scene::Scene;
use crate::text::{MAX_EXCERPT_CHARS, escape_controls, excerpt};
use std::path::PathBuf;

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The scene file (RON, or JSON when it ends in `.json`), or a stream file.
    pub scene: PathBuf,
    /// The candidate-pair limit the warnings measure against (as `run --pair-limit`).
    #[arg(long, default_value_t = crate::broadphase::DEFAULT_PAIR_LIMIT, value_parser = super::pair_limit_arg)]
    pub pair_limit: usize,
}

/// Runs `check`; returns the exit code. Warnings about a valid scene go to stderr, one a
/// line as `FILE: warning: ...`, and do not change the exit code.
pub fn main(args: &CheckArgs) -> anyhow::Result<i32> {
    let file = escape_controls(&args.scene.display().to_string());
    if crate::stream::is_stream_file(&args.scene) {
        return check_stream(&args.scene, &file);
    }
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

/// `check` of a stream file: its steps read whole (exit 1 when the stream is refused), then
/// the engine's parts: exit 1 when they hold a missed pair, a reported pair whose fat boxes
/// are apart, or a refused tree, each printed on stdout with the summary.
fn check_stream(path: &std::path::Path, file: &str) -> anyhow::Result<i32> {
    let (trace, info) = match crate::stream::load(path, crate::trace::TraceLimits::default()) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    if let Some(why) = &info.stopped {
        eprintln!("{file}: warning: the stream stops early ({why})");
    }
    let summary = &info.engine_parts.summary;
    let mut text = format!(
        "{file}: ok: stream from \"{}\", {}D, {}{}\n",
        excerpt(&info.engine, MAX_EXCERPT_CHARS),
        trace.dimensions(),
        crate::text::count(trace.step_count() as u64, "step", "steps"),
        if summary.is_empty() {
            ", no engine broad phase (fat boxes, pairs, tree)"
        } else {
            ""
        }
    );
    for line in super::engine_report::lines(summary) {
        text.push_str(&line);
        text.push('\n');
    }
    super::run::print_out(&text)?;
    if super::engine_report::has_errors(summary) {
        eprintln!(
            "{file}: the engine's broad phase has errors: {}, {} with fat boxes apart, {} \
             refused",
            crate::text::count(summary.missed_total, "missed pair", "missed pairs"),
            crate::text::count(summary.apart_total, "reported pair", "reported pairs"),
            crate::text::count(summary.trees_refused, "tree", "trees"),
        );
        return Ok(1);
    }
    Ok(0)
}
