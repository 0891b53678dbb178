//! The `run` subcommand: steps a scene (or replays a trace, see [`crate::trace`]) headless
//! and prints a summary (or one JSON object).

use crate::broadphase::BroadphaseKind;
use crate::replay::{History, Replay, TraceStart};
use crate::scene::{Scene, SceneError, Simulation, StepReport};
use crate::source::{Origin, Sim, scene_history};
use crate::trace::{Stepper, Trace};
use crate::tree::TreeConfig;
use serde::Serialize;
use std::path::PathBuf;

/// The broad phase named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BroadphaseArg {
    /// The dynamic AABB tree.
    Tree,
    /// Every pair tested.
    Brute,
    /// Sweep-and-prune along x.
    Sap,
    /// Box2D v3's own tree (its C code), driven as Box2D's broad phase drives it (2D only).
    Box2d,
}

impl From<BroadphaseArg> for BroadphaseKind {
    fn from(arg: BroadphaseArg) -> Self {
        match arg {
            BroadphaseArg::Tree => BroadphaseKind::Tree,
            BroadphaseArg::Brute => BroadphaseKind::Brute,
            BroadphaseArg::Sap => BroadphaseKind::Sap,
            BroadphaseArg::Box2d => BroadphaseKind::Box2d,
        }
    }
}

/// Arguments of `run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The scene file (RON, or JSON when it ends in `.json`), or a trace (`.trace`, or a
    /// file that starts with `aabb-trace`).
    pub scene: PathBuf,
    /// How many steps to take (a trace: at most this many, fewer when it ends sooner).
    #[arg(long, default_value_t = 100)]
    pub steps: u64,
    /// Which broad phase to drive.
    #[arg(long, value_enum, default_value_t = BroadphaseArg::Tree)]
    pub broadphase: BroadphaseArg,
    /// Print one JSON object instead of a readable summary.
    #[arg(long)]
    pub json: bool,
    /// The most candidate pairs a step may find; past it the run stops with exit 1 and a
    /// message (memory stays bounded).
    #[arg(long, default_value_t = crate::broadphase::DEFAULT_PAIR_LIMIT, value_parser = super::pair_limit_arg)]
    pub pair_limit: usize,
    /// Runs with this fat-box margin (world units, >= 0) instead of the scene's.
    #[arg(long, allow_hyphen_values = true)]
    pub margin: Option<f32>,
    /// Runs with this velocity look-ahead (seconds, >= 0) instead of the scene's.
    #[arg(long, allow_hyphen_values = true)]
    pub lookahead: Option<f32>,
    /// Also writes a recording of every step to this file (see `replay`); when a step stops
    /// the run, the recording holds the steps up to it.
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Replace the `--record` file even when it holds something other than a recording (a
    /// scene, source code); without it such a file is refused before the run.
    #[arg(long)]
    pub force: bool,
}

/// `scene` with the margin and look-ahead of the command line, when given (the scene's rules
/// are checked when it runs: a bad value is refused naming `tree.margin` or
/// `tree.velocity_lookahead`).
#[must_use]
pub fn with_overrides(mut scene: Scene, margin: Option<f32>, lookahead: Option<f32>) -> Scene {
    scene.tree = crate::source::tree_with(scene.tree, margin, lookahead);
    scene
}

/// Tree stats as `run --json` prints them.
#[derive(Debug, Serialize)]
pub struct TreeSummary {
    /// Height of the root.
    pub height: u32,
    /// The least height a tree of this many leaves can have.
    pub min_height: u32,
    /// Nodes in use.
    pub nodes: usize,
    /// Leaves (proxies).
    pub leaves: usize,
    /// The SAH cost: sum of node areas over the root's.
    pub area_ratio: f32,
}

/// What `run` found: the object `--json` prints.
#[derive(Debug, Serialize)]
pub struct RunSummary {
    /// The scene's name.
    pub scene: String,
    /// The file as given.
    pub file: String,
    /// 2 or 3.
    pub dimensions: u8,
    /// Spheres in the scene, listed and generated (a trace: the most boxes one step holds,
    /// static boxes included).
    pub spheres: usize,
    /// Steps taken.
    pub steps: u64,
    /// `tree`, `brute` or `sap`.
    pub broadphase: String,
    /// Fat boxes recomputed (leaves reinserted) over all steps, not counting first insertions.
    pub reinserts_total: u64,
    /// Steps whose pairs were recomputed (the rest reused the previous set).
    pub pairs_recomputed_steps: u64,
    /// Candidate pairs at the last step, `[a, b]` with `a < b`, sorted.
    pub candidate_pairs: Vec<(u32, u32)>,
    /// Contacts at the last step, sorted.
    pub contacts: Vec<(u32, u32)>,
    /// Tree stats at the last step; `null` for brute force and sweep-and-prune.
    pub tree: Option<TreeSummary>,
    /// Mean milliseconds per step (update plus pairs).
    pub ms_per_step: f64,
    /// Mean milliseconds per step moving bodies and updating the broad phase.
    pub update_ms_per_step: f64,
    /// Mean milliseconds per step finding pairs and contacts.
    pub pairs_ms_per_step: f64,
}

/// Steps `scene` `steps` times on `kind` and sums up; `file` is echoed in the summary. An
/// error when a step passes the default pair limit (see [`summarize_with_limit`]).
pub fn summarize(
    scene: &Scene,
    file: &str,
    steps: u64,
    kind: BroadphaseKind,
) -> Result<RunSummary, SceneError> {
    summarize_with_limit(
        scene,
        file,
        steps,
        kind,
        crate::broadphase::DEFAULT_PAIR_LIMIT,
    )
}

/// [`summarize`] with a candidate-pair limit: the first step past it ends the run with
/// [`SceneError::Step`].
pub fn summarize_with_limit(
    scene: &Scene,
    file: &str,
    steps: u64,
    kind: BroadphaseKind,
    pair_limit: usize,
) -> Result<RunSummary, SceneError> {
    let origin = Origin::Scene(Box::new(scene.clone()));
    summarize_origin(&origin, file, steps, kind, pair_limit, None)
}

/// [`summarize_with_limit`] that also records every step: the history holds the steps made,
/// up to and with the one that stopped the run, if one did (`None` when step 0 could not be
/// started: the scene breaks a rule).
pub fn summarize_recorded(
    scene: &Scene,
    file: &str,
    steps: u64,
    kind: BroadphaseKind,
    pair_limit: usize,
) -> (Result<RunSummary, SceneError>, Option<History>) {
    let origin = Origin::Scene(Box::new(scene.clone()));
    let mut history = None;
    let summary = summarize_origin(&origin, file, steps, kind, pair_limit, Some(&mut history));
    (summary, history.as_ref().and_then(scene_history))
}

/// [`summarize_with_limit`] for a trace replayed with tree settings `config`: at most
/// `steps` steps after its first (fewer when it ends sooner; the summary says how many).
pub fn summarize_trace(
    trace: &std::sync::Arc<Trace>,
    file: &str,
    steps: u64,
    kind: BroadphaseKind,
    config: TreeConfig,
    pair_limit: usize,
) -> Result<RunSummary, SceneError> {
    let origin = Origin::Trace(TraceStart {
        trace: std::sync::Arc::clone(trace),
        config,
    });
    summarize_origin(&origin, file, steps, kind, pair_limit, None)
}

/// Runs `origin` (a scene from its start, a trace from its first step) on `kind` for `steps`
/// steps (a trace: fewer when it ends sooner) and sums up, recording every step into
/// `record` when given (a scene's only: a trace is its own record). An error when step 0 or
/// a later step stops in the broad phase (past `pair_limit`); the history holds the steps
/// made up to and with that one.
pub fn summarize_origin(
    origin: &Origin,
    file: &str,
    steps: u64,
    kind: BroadphaseKind,
    pair_limit: usize,
    mut record: Option<&mut Option<History<Sim>>>,
) -> Result<RunSummary, SceneError> {
    let mut sim = <Sim as Replay>::start(origin, kind, pair_limit)?;
    if let Some(slot) = record.as_deref_mut() {
        let history = History::new(origin, file, &sim);
        let Some(file_history) = scene_history(&history) else {
            return Err(SceneError::Invalid {
                file: file.to_owned(),
                message: "a trace is a recording already; only a scene's run is recorded"
                    .to_owned(),
            });
        };
        // Checked before the run, so no run ends with a recording that cannot be written.
        let most = crate::replay::file::max_steps_after_zero(&file_history)?;
        if steps > most {
            return Err(SceneError::Invalid {
                file: file.to_owned(),
                message: format!(
                    "--steps: a recording of this scene holds at most {most} steps (its file \
                     at most {} bytes, what replay reads), got {steps}",
                    crate::replay::file::MAX_RECORDING_BYTES
                ),
            });
        }
        *slot = Some(history);
    }
    if let Some(source) = sim.last_error() {
        return Err(SceneError::Step {
            step: sim.step_index(),
            source: source.clone(),
        });
    }
    let steps = sim.steps_left().map_or(steps, |left| steps.min(left));
    let mut totals = Totals::default();
    for _ in 0..steps {
        let outcome = Stepper::step(&mut sim).map(|_| ());
        if let Some(Some(history)) = record.as_deref_mut() {
            // The history follows this simulation step by step: never out of order.
            history.push_step(&sim).map_err(|e| SceneError::Invalid {
                file: file.to_owned(),
                message: e.to_string(),
            })?;
        }
        outcome?;
        totals.add(Stepper::report(&sim));
    }
    let head = Head::of(origin, file, kind);
    Ok(summary_from(&head, Stepper::report(&sim), &totals))
}

/// What a summary says of its input besides the steps.
struct Head<'a> {
    name: &'a str,
    file: &'a str,
    dimensions: u8,
    spheres: usize,
    kind: BroadphaseKind,
}

impl<'a> Head<'a> {
    /// The head of a run of `origin` (read from `file`) on `kind`.
    fn of(origin: &'a Origin, file: &'a str, kind: BroadphaseKind) -> Head<'a> {
        Head {
            name: origin.name(),
            file,
            dimensions: origin.dimensions(),
            spheres: origin.moving_count(),
            kind,
        }
    }
}

/// Sums over the steps of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    /// Steps summed.
    pub steps: u64,
    /// Leaves reinserted.
    pub reinserts: u64,
    /// Steps whose pairs were recomputed.
    pub recomputed: u64,
    /// Seconds updating.
    pub update_secs: f64,
    /// Seconds finding pairs.
    pub pairs_secs: f64,
}

impl Totals {
    /// Adds one step's report.
    pub fn add(&mut self, r: &StepReport) {
        self.steps += 1;
        self.reinserts += r.reinserted.len() as u64;
        self.recomputed += u64::from(r.pairs_recomputed);
        self.update_secs += r.update_secs;
        self.pairs_secs += r.pairs_secs;
    }
}

/// What `run` prints after `totals.steps` steps of `scene` (read from `file`) ending in
/// `sim`'s current state.
#[must_use]
pub fn summary_of(scene: &Scene, file: &str, sim: &Simulation, totals: &Totals) -> RunSummary {
    let head = Head {
        name: &scene.name,
        file,
        dimensions: scene.dimensions,
        spheres: scene.sphere_count(),
        kind: sim.broadphase_kind(),
    };
    summary_from(&head, sim.report(), totals)
}

/// The summary of a run of `head`'s input whose last step reported `last`.
fn summary_from(head: &Head<'_>, last: &StepReport, totals: &Totals) -> RunSummary {
    let steps = totals.steps;
    let per_step_ms = |secs: f64| {
        if steps == 0 {
            0.0
        } else {
            secs * 1000.0 / steps as f64
        }
    };
    RunSummary {
        scene: head.name.to_owned(),
        file: head.file.to_owned(),
        dimensions: head.dimensions,
        spheres: head.spheres,
        steps,
        broadphase: head.kind.name().to_owned(),
        reinserts_total: totals.reinserts,
        pairs_recomputed_steps: totals.recomputed,
        candidate_pairs: last.candidate_pairs.clone(),
        contacts: last.contacts.clone(),
        tree: last.tree.map(|t| TreeSummary {
            height: t.height,
            min_height: t.min_height,
            nodes: t.nodes,
            leaves: t.leaves,
            area_ratio: t.area_ratio,
        }),
        ms_per_step: per_step_ms(totals.update_secs + totals.pairs_secs),
        update_ms_per_step: per_step_ms(totals.update_secs),
        pairs_ms_per_step: per_step_ms(totals.pairs_secs),
    }
}

/// Up to `max` pairs as `(a, b) (c, d) ...`, with how many more there are.
fn pair_list(pairs: &[(u32, u32)], max: usize) -> String {
    let mut text: Vec<String> = pairs
        .iter()
        .take(max)
        .map(|(a, b)| format!("({a}, {b})"))
        .collect();
    if pairs.len() > max {
        text.push(format!("... and {} more", pairs.len() - max));
    }
    text.join(" ")
}

/// The readable summary `run` prints without `--json`.
#[must_use]
pub fn readable(s: &RunSummary) -> String {
    let mut out = String::new();
    let mut line = |l: String| {
        out.push_str(&l);
        out.push('\n');
    };
    line(format!(
        "scene: \"{}\" ({}), {}D, {}",
        crate::text::excerpt(&s.scene, crate::text::MAX_EXCERPT_CHARS),
        crate::text::escape_controls(&s.file),
        s.dimensions,
        crate::text::count(s.spheres as u64, "sphere", "spheres")
    ));
    line(format!(
        "broad phase: {}, {}",
        s.broadphase,
        crate::text::count(s.steps, "step", "steps")
    ));
    let per_step = if s.steps == 0 {
        0.0
    } else {
        s.reinserts_total as f64 / s.steps as f64
    };
    line(format!(
        "reinserts: {} ({per_step:.2} per step); pairs recomputed on {} of {}",
        s.reinserts_total,
        s.pairs_recomputed_steps,
        crate::text::count(s.steps, "step", "steps")
    ));
    line(format!(
        "candidate pairs at the last step: {}  {}",
        s.candidate_pairs.len(),
        pair_list(&s.candidate_pairs, 12)
    ));
    line(format!(
        "contacts at the last step: {}  {}",
        s.contacts.len(),
        pair_list(&s.contacts, 12)
    ));
    if let Some(t) = &s.tree {
        line(format!(
            "tree: height {} (least possible {}), {}, {}, area ratio {:.3}",
            t.height,
            t.min_height,
            crate::text::count(t.nodes as u64, "node", "nodes"),
            crate::text::count(t.leaves as u64, "leaf", "leaves"),
            t.area_ratio
        ));
    }
    line(format!(
        "time: {:.4} ms per step (update {:.4}, pairs {:.4})",
        s.ms_per_step, s.update_ms_per_step, s.pairs_ms_per_step
    ));
    out
}

/// Runs `run`; returns the exit code (1 with the message on stderr when the scene is refused).
pub fn main(args: &RunArgs) -> anyhow::Result<i32> {
    let file = args.scene.display().to_string();
    for (name, value) in [("--margin", args.margin), ("--lookahead", args.lookahead)] {
        if let Some(v) = value
            && !(v.is_finite() && v >= 0.0)
        {
            eprintln!("{name}: must be a finite number >= 0, got {v}");
            return Ok(2);
        }
    }
    if let Some(record) = &args.record {
        if crate::trace::is_trace_path(&args.scene) {
            eprintln!(
                "{file}: --record records scenes; a trace is a recording already (open it \
                 with run, sweep or the window)"
            );
            return Ok(2);
        }
        if crate::fileio::same_file(&args.scene, record) {
            eprintln!(
                "{}: is the scene being run ({}); give --record another path (nothing was \
                 written)",
                crate::text::escape_controls(&record.display().to_string()),
                crate::text::escape_controls(&file)
            );
            return Ok(2);
        }
        if let Err(e) = crate::fileio::check_replaceable(
            record,
            crate::fileio::WriteOptions::of_kind(crate::fileio::FileKind::Recording, args.force),
        ) {
            eprintln!("{e}");
            return Ok(1);
        }
    }
    let opened = match crate::source::open(&args.scene) {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    if let Some(info) = &opened.stream {
        for gap in &info.gaps {
            eprintln!("{file}: note: {gap} (after step {})", gap.after);
        }
        if let Some(why) = &info.stopped {
            let steps = opened.origin.steps_after(0).map_or(0, |s| s + 1);
            eprintln!(
                "{file}: warning: the stream stops early ({why}); its {steps} whole steps \
                 before are run"
            );
        }
    }
    let (kind, limit) = (args.broadphase.into(), args.pair_limit);
    let summary = start_checks(opened.origin, args, &file, kind).and_then(|origin| {
        let Some(path) = &args.record else {
            return summarize_origin(&origin, &file, args.steps, kind, limit, None);
        };
        let mut history = None;
        let summary = summarize_origin(&origin, &file, args.steps, kind, limit, Some(&mut history));
        if let Some(history) = history.as_ref().and_then(scene_history) {
            crate::replay::file::save_with(&history, path, args.force)?;
        }
        summary
    });
    report(summary, &file, args.json, args.pair_limit)
}

/// `origin` with the command line's margin and look-ahead, checked before it runs: its rules
/// (so a margin or look-ahead it cannot take is refused naming the file and the options; the
/// simulation would name neither), and the work a step of `kind` would do.
fn start_checks(
    origin: Origin,
    args: &RunArgs,
    file: &str,
    kind: BroadphaseKind,
) -> Result<Origin, SceneError> {
    let origin = origin.with_margin(args.margin, args.lookahead);
    origin.validate(file).map_err(|e| match e {
        SceneError::Invalid { file, message }
            if args.margin.is_some() || args.lookahead.is_some() =>
        {
            SceneError::Invalid {
                file,
                message: format!("{message} (with{} from the command line)", overrides(args)),
            }
        }
        other => other,
    })?;
    work_verdict(origin.work_at_start(), kind, file).map_err(|message| SceneError::Invalid {
        file: file.to_owned(),
        message,
    })?;
    Ok(origin)
}

/// Brute force or sweep-and-prune over `work`: refused past
/// [`crate::broadphase::MAX_PAIR_TESTS`] tests a step (the message), else a warning on stderr
/// when slow or degenerate ([`crate::broadphase::Work::warning`]); the tree is never refused.
fn work_verdict(
    work: crate::broadphase::Work,
    kind: BroadphaseKind,
    file: &str,
) -> Result<(), String> {
    if kind == BroadphaseKind::Tree {
        return Ok(());
    }
    if let Some(why) = work.refusal(kind) {
        return Err(format!("--broadphase {kind}: {why}"));
    }
    if let Some(warning) = work.warning(kind) {
        eprintln!(
            "{}: warning: --broadphase {kind}: {warning}",
            crate::text::escape_controls(file)
        );
    }
    Ok(())
}

/// The command line's `--margin` and `--lookahead`, as given: ` --margin 0.5 --lookahead 2`.
fn overrides(args: &RunArgs) -> String {
    let mut text = String::new();
    if let Some(m) = args.margin {
        text.push_str(&format!(" --margin {m}"));
    }
    if let Some(l) = args.lookahead {
        text.push_str(&format!(" --lookahead {l}"));
    }
    text
}

/// Prints a summary (readable or JSON) or the error a run stopped with; the exit code.
pub(crate) fn report(
    summary: Result<RunSummary, SceneError>,
    file: &str,
    json: bool,
    pair_limit: usize,
) -> anyhow::Result<i32> {
    match summary {
        Ok(s) => {
            let text = if json {
                serde_json::to_string(&s)? + "\n"
            } else {
                readable(&s)
            };
            print_out(&text)?;
            Ok(0)
        }
        Err(
            e @ SceneError::Step {
                source: crate::broadphase::BroadphaseError::PairLimit { .. },
                ..
            },
        ) => {
            eprintln!(
                "{}: {e} (the limit is --pair-limit {})",
                crate::text::escape_controls(file),
                pair_limit
            );
            Ok(1)
        }
        Err(e @ SceneError::Step { .. }) => {
            eprintln!("{}: {e}", crate::text::escape_controls(file));
            Ok(1)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(1)
        }
    }
}

/// Writes to stdout; a closed pipe (`run ... | head`) is not an error, any other failure (a
/// full disk) is one that says it was the standard output.
pub fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(anyhow::anyhow!(
            "could not write the result to the standard output: {e}"
        )),
        _ => Ok(()),
    }
}
