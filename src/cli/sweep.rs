//! The `sweep` subcommand: runs a scene at every margin x look-ahead value of a grid (see
//! [`crate::sweep`]) and prints a table and the recommendation, one JSON object (`--json`)
//! or CSV rows (`--csv`). A progress bar goes to stderr when stderr is a terminal; stdout
//! holds the result alone.

use crate::broadphase::DEFAULT_PAIR_LIMIT;
use crate::sweep::{MarginRange, SweepError, SweepOutcome, SweepPlan, SweepSpec, parse_lookaheads};

pub use crate::sweep::export::{
    BestByTimeJson, BestByWorkJson, CSV_FIELDS, CostModelJson, PointRef, PointRow, SweepJson, csv,
    readable, readable_named,
};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Arguments of `sweep`.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// The scene file (RON, or JSON when it ends in `.json`), or a trace (`.trace`, or a
    /// file that starts with `aabb-trace`; see [`crate::trace`]).
    pub scene: PathBuf,
    /// Margins to try, `FROM:TO:STEP` (world units): FROM, FROM + STEP, ... up to TO.
    #[arg(long, value_name = "FROM:TO:STEP", allow_hyphen_values = true)]
    pub margin: String,
    /// Look-ahead values to try, seconds, separated by commas: `0,0.05,0.1`.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub lookahead: String,
    /// Steps each point takes from the scene's start (a trace: at most its steps after
    /// step 0) [default: 300, or all of a shorter trace's]
    #[arg(long)]
    pub steps: Option<u64>,
    /// Print one JSON object instead of a table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: a header row and one row per point.
    #[arg(long)]
    pub csv: bool,
    /// Threads that run points at once (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// The most candidate pairs a step may find; a point past it stops (and is reported so)
    /// while the others go on.
    #[arg(long, default_value_t = DEFAULT_PAIR_LIMIT, value_parser = super::pair_limit_arg)]
    pub pair_limit: usize,
    /// The broad phase every point runs; the work counts (node visits) are the tree's only,
    /// so on the others the advice goes by time and candidate pairs.
    #[arg(long, value_enum, default_value_t = super::run::BroadphaseArg::Tree)]
    pub broadphase: super::run::BroadphaseArg,
    /// What one candidate pair's narrow-phase test costs your engine, in node visits (1:
    /// alike; an engine's is often tens): the best by work weighs the pairs by it.
    /// Left out: the scene's `view.pair_cost`, else 1.
    #[arg(long, allow_hyphen_values = true)]
    pub pair_cost: Option<f64>,
}

/// The steps each point takes when `--steps` is left out.
pub const DEFAULT_STEPS: u64 = 300;

/// The most threads `--threads` may ask for.
pub const MAX_THREADS: usize = 1024;

/// The one-line message for a refused sweep: the flag for a bad grid, the file for a scene.
fn refusal(file: &str, e: &SweepError) -> String {
    match e {
        SweepError::Grid { field, message } if *field == "points" => {
            format!("--margin x --lookahead: {message}")
        }
        SweepError::Grid { field, message } => format!("--{field}: {message}"),
        other => format!("{}: {other}", crate::text::escape_controls(file)),
    }
}

/// Runs `sweep`; returns the exit code (1 with a one-line message on stderr when the grid
/// or the scene is refused).
pub fn main(args: &SweepArgs) -> anyhow::Result<i32> {
    let file = args.scene.display().to_string();
    let grid = MarginRange::parse(&args.margin)
        .and_then(|r| r.values())
        .and_then(|margins| Ok((margins, parse_lookaheads(&args.lookahead)?)))
        .and_then(|grid| {
            if let Some(cost) = args.pair_cost {
                crate::sweep::check_pair_cost(cost)?;
            }
            if args.threads > MAX_THREADS {
                return Err(SweepError::Grid {
                    field: "threads",
                    message: format!("at most {MAX_THREADS}, got {}", args.threads),
                });
            }
            Ok(grid)
        });
    let (margins, lookaheads) = match grid {
        Ok(grid) => grid,
        Err(e) => {
            eprintln!("error: {}", refusal(&file, &e));
            return Ok(1);
        }
    };
    let spec = SweepSpec {
        threads: args.threads,
        pair_limit: args.pair_limit,
        broadphase: args.broadphase.into(),
        pair_cost: args.pair_cost.unwrap_or(1.0),
        ..SweepSpec::new(margins, lookaheads, args.steps.unwrap_or(DEFAULT_STEPS))
    };
    let opened = match crate::source::open(&args.scene) {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    // The engine's own costs, when a stream sent its timings.
    let engine_costs = opened
        .stream
        .as_ref()
        .and_then(|i| i.engine_parts.summary.cost_fit.costs());
    if let Some(why) = opened.stream.as_ref().and_then(|i| i.stopped.as_ref()) {
        eprintln!(
            "{file}: warning: the stream stops early ({why}); its whole steps before are swept"
        );
    }
    let origin = opened.origin;
    // A trace ends: left out, the steps are the default's or, when the trace has fewer after
    // its first, all of them (as `run` takes).
    let left = origin.steps_after(0);
    if left == Some(0) && args.steps.is_none() {
        eprintln!(
            "{}: the trace holds step 0 only; a sweep steps each point from it, so it needs at \
             least one step after step 0",
            crate::text::escape_controls(&file)
        );
        return Ok(1);
    }
    let spec = SweepSpec {
        steps: args
            .steps
            .unwrap_or_else(|| left.map_or(DEFAULT_STEPS, |l| DEFAULT_STEPS.min(l.max(1)))),
        pair_cost: args.pair_cost.unwrap_or_else(|| origin.pair_cost()),
        ..spec
    };
    let (name, count) = (origin.name().to_owned(), origin.moving_count());
    let plan = SweepPlan::of(&origin, 0, spec);
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("error: {}", refusal(&file, &e));
            return Ok(1);
        }
    };
    let outcome = if std::io::stderr().is_terminal() {
        run_with_bar(plan)?
    } else {
        plan.run(&crate::sweep::SweepControl::new())?
    };
    let report = match outcome {
        SweepOutcome::Finished(report) => *report,
        SweepOutcome::Cancelled { progress, .. } => {
            eprintln!(
                "{}: the sweep was cancelled after {} of {} steps",
                crate::text::escape_controls(&file),
                progress.steps_done,
                progress.steps_total
            );
            return Ok(1);
        }
    };
    let json =
        SweepJson::named(&name, count, &file, &report).with_engine(engine_costs.as_ref(), &report);
    let text = if args.json {
        serde_json::to_string(&json)? + "\n"
    } else if args.csv {
        csv(&report)
    } else {
        let mut text = readable_named(&name, count, &file, &report);
        if let Some(line) = json.engine_line() {
            text.push_str(&line);
            text.push('\n');
        }
        text
    };
    super::run::print_out(&text)?;
    Ok(0)
}

/// Runs the plan in the background with a progress bar on stderr (a terminal).
fn run_with_bar(plan: SweepPlan) -> anyhow::Result<SweepOutcome> {
    let handle = plan.start()?;
    let bar = indicatif::ProgressBar::new(handle.progress().steps_total);
    bar.set_style(indicatif::ProgressStyle::with_template(
        "sweep {bar:40} {percent:>3}% {msg} eta {eta}",
    )?);
    while !handle.is_finished() {
        let p = handle.progress();
        bar.set_position(p.steps_done);
        bar.set_message(format!("{}/{} points", p.points_done, p.points_total));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    bar.finish_and_clear();
    Ok(handle.wait()?)
}
