//! The `compare` subcommand: two broad phases, or two settings of one, on the same scene or
//! trace, step by step (see [`crate::compare`]): the pairs only one reports, each one's
//! reinserts, tree cost and time; a summary, or one JSON line a step and a summary line.

use crate::broadphase::BroadphaseKind;
use crate::compare::{self, CompareSummary, Side, StepDiff};
use std::io::Write as _;
use std::path::PathBuf;

/// Arguments of `compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Side A: `KIND[:KEY=VALUE,...]`, KIND tree, brute, sap or box2d; keys margin,
    /// lookahead, insertion, balancing, pairs, update (`tree:margin=0.05`).
    pub a: String,
    /// Side B, as side A (`tree:margin=0.2`, `box2d`).
    pub b: String,
    /// The scene, trace or stream file both run.
    pub scene: PathBuf,
    /// Steps after step 0 (a trace: at most to its end).
    #[arg(long, default_value_t = 100)]
    pub steps: u64,
    /// The most candidate pairs a step may find on either side.
    #[arg(long, default_value_t = crate::broadphase::DEFAULT_PAIR_LIMIT, value_parser = super::pair_limit_arg)]
    pub pair_limit: usize,
    /// One JSON object a step, then the summary as the last line.
    #[arg(long)]
    pub json: bool,
}

/// Runs `compare`; returns the exit code (0 when it ran; 1 for an input refused; 2 for a
/// side that cannot be read).
pub fn main(args: &CompareArgs) -> anyhow::Result<i32> {
    let file = crate::text::escape_controls(&args.scene.display().to_string());
    let origin = match crate::source::open(&args.scene) {
        Ok(opened) => opened.origin,
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    // The base settings a side changes: the scene's own, the default tree's for a trace.
    let base = origin.tree_settings();
    let side =
        |name: &str, text: &str| Side::parse(text, base).map_err(|e| format!("side {name}: {e}"));
    let (a, b) = match (side("A", &args.a), side("B", &args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return Ok(2);
        }
    };
    let dims = origin.dimensions();
    for (name, s) in [("A", &a), ("B", &b)] {
        if s.kind == BroadphaseKind::Box2d && dims != 2 {
            eprintln!("{file}: side {name}: Box2D's tree is 2D only; this is {dims}D");
            return Ok(2);
        }
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut write_error = None;
    let mut on_step = |d: &StepDiff| {
        if args.json
            && write_error.is_none()
            && let Err(e) = serde_json::to_writer(&mut out, d)
                .and_then(|()| writeln!(out).map_err(serde_json::Error::io))
        {
            write_error = Some(e);
        }
    };
    let summary = match compare::start(&origin, &a, &b, args.pair_limit) {
        Ok((sa, sb)) => compare::run(sa, sb, args.steps, &mut on_step),
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    if let Some(e) = write_error {
        anyhow::bail!("writing the steps: {e}");
    }
    if args.json {
        let line = serde_json::json!({
            "summary": &summary,
            "a": a.describe(),
            "b": b.describe(),
        });
        writeln!(out, "{line}")?;
    } else {
        write!(out, "{}", summary_text(&file, &a, &b, &summary))?;
    }
    Ok(0)
}

/// The summary for a person.
#[must_use]
pub fn summary_text(file: &str, a: &Side, b: &Side, s: &CompareSummary) -> String {
    let mean = |total: f64| {
        if s.steps == 0 {
            0.0
        } else {
            total / s.steps as f64
        }
    };
    let mut text = format!(
        "{file}: {}\n  A = {}\n  B = {}\n",
        crate::text::count(s.steps, "step", "steps"),
        a.describe(),
        b.describe()
    );
    text.push_str(&format!(
        "  pairs a step: A {:.1}, B {:.1}; only in A {} in all, only in B {}; {} differ{}\n",
        mean(s.pairs[0] as f64),
        mean(s.pairs[1] as f64),
        s.only_a,
        s.only_b,
        crate::text::count(s.steps_differing, "step", "steps"),
        s.first_difference
            .map_or_else(String::new, |k| format!(" (the first: step {k})"))
    ));
    text.push_str(&format!(
        "  reinserts a step: A {:.1}, B {:.1}\n  broad phase ms a step: A {:.3}, B {:.3}\n",
        mean(s.reinserts[0] as f64),
        mean(s.reinserts[1] as f64),
        mean(s.ms[0]),
        mean(s.ms[1])
    ));
    if let Some(why) = &s.stopped {
        text.push_str(&format!("  stopped: {why}\n"));
    }
    text
}
