//! The margin advisor's sweep: one scene run `steps` steps from the same start at every point
//! of a grid of margins x look-ahead values (x tree configurations, optionally), recording
//! for each point what the tree did (reinserts, candidate pairs, contacts, node visits: the
//! same on every machine and whatever the thread count) and how long its steps took (medians
//! with spread); then a recommendation ([`advise`]).
//!
//! No UI here: the window's Advisor view and the `sweep` subcommand both drive it.
//!
//! A trace ([`crate::trace`]) is swept the same way ([`SweepPlan::for_trace`]): every point
//! replays the same steps of it with its own margin and look-ahead.
//!
//! - Blocking: [`SweepPlan::run`] with a [`SweepControl`] (cancel it from another thread,
//!   read its progress).
//! - In the background (a UI thread): [`SweepPlan::start`] returns a [`SweepHandle`]:
//!   [`SweepHandle::progress`], [`SweepHandle::cancel`], [`SweepHandle::is_finished`],
//!   [`SweepHandle::wait`].
//!
//! Points run in parallel on a rayon pool of [`SweepSpec::threads`] threads (0: every core),
//! each point an independent deterministic simulation on one thread; cancellation is checked
//! before every step, so a cancel ends the sweep within one step of each running point.
//!
//! The grid is checked before anything runs: a bad grid ([`grid`]) and a point whose margin
//! or look-ahead makes the scene invalid (a fat box that would overflow f32) are refused up
//! front with [`SweepError`], naming the field or the point. A point that passes the pair
//! limit stops there; it is kept, marked [`PointResult::stopped`], and left out of the
//! recommendation; the other points go on.

mod advice;
pub mod export;
pub mod grid;

pub use advice::{
    Advice, BestByTime, BestByWork, CostModel, EnginePairCost, PAIR_COSTS_SHOWN, R_SQUARED_FIT,
    advise, advise_with, best_by_pair_cost, engine_pair_cost,
};
pub use grid::{MAX_POINTS, MAX_STEPS, MAX_TOTAL_STEPS, MarginRange, parse_lookaheads};

use crate::broadphase::{BroadphaseKind, DEFAULT_PAIR_LIMIT};
use crate::replay::TraceStart;
use crate::scene::{PAIR_COST_RANGE, Scene, SceneError, pair_cost_in_range};
use crate::source::{Origin, Sim};
use crate::trace::{Stepper, Trace};
use crate::tree::{TreeConfig, WorkCounts};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// What to sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSpec {
    /// Margins, world units (each finite, >= 0).
    pub margins: Vec<f32>,
    /// Look-ahead values, seconds (each finite, >= 0).
    pub lookaheads: Vec<f32>,
    /// Tree configurations (insertion, balancing, pairs, update mode; their margin and
    /// look-ahead are replaced by the grid's). Empty: the scene's own.
    pub configs: Vec<TreeConfig>,
    /// Steps each point takes from the scene's start (1 to [`MAX_STEPS`]).
    pub steps: u64,
    /// The most candidate pairs a step may find (past it the point stops, see
    /// [`PointResult::stopped`]).
    pub pair_limit: usize,
    /// Threads that run points at once; 0: one per core.
    pub threads: usize,
    /// The broad phase every point runs (the tree unless asked). The work counts are the
    /// tree's; on the others they are zero and the advice goes by time and pairs.
    pub broadphase: BroadphaseKind,
    /// What one candidate pair's narrow-phase test costs, in node visits (1 counts a pair
    /// test as one node visit; an engine's is often tens): the advice's "work" is node visits
    /// plus this times the candidate pairs.
    pub pair_cost: f64,
}

/// Refuses a pair-test cost that is not a finite number in [`PAIR_COST_RANGE`] (the scene's
/// rule, [`pair_cost_in_range`]).
pub fn check_pair_cost(cost: f64) -> Result<f64, SweepError> {
    if pair_cost_in_range(cost) {
        Ok(cost)
    } else {
        Err(SweepError::Grid {
            field: "pair-cost",
            message: format!(
                "a pair test's cost in node visits must be a number from {} to {}, got {cost}",
                PAIR_COST_RANGE.0, PAIR_COST_RANGE.1
            ),
        })
    }
}

impl SweepSpec {
    /// A sweep of `margins` x `lookaheads` on the scene's own tree configuration, `steps`
    /// steps a point, the default pair limit, every core.
    #[must_use]
    pub fn new(margins: Vec<f32>, lookaheads: Vec<f32>, steps: u64) -> SweepSpec {
        SweepSpec {
            margins,
            lookaheads,
            configs: Vec::new(),
            steps,
            pair_limit: DEFAULT_PAIR_LIMIT,
            threads: 0,
            broadphase: BroadphaseKind::Tree,
            pair_cost: 1.0,
        }
    }
}

/// Why a sweep could not start.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SweepError {
    /// A bad grid or step count: `field` is `margin`, `lookahead`, `steps`, `threads`,
    /// `broadphase` or `points` (the command line's flag without `--`, `points` for the
    /// product of them).
    #[error("{field}: {message}")]
    Grid {
        /// The field (flag) at fault.
        field: &'static str,
        /// What is wrong, with the value.
        message: String,
    },
    /// The scene is invalid at one point of the grid (or at all of them), with the scene's
    /// message naming the sphere and the field.
    #[error("margin {}, look-ahead {} s: {message}", short(*.margin), short(*.lookahead))]
    Scene {
        /// The point's margin.
        margin: f32,
        /// The point's look-ahead.
        lookahead: f32,
        /// What the scene's rules say.
        message: String,
    },
    /// The thread pool could not be made.
    #[error("could not start the sweep's threads: {0}")]
    Threads(String),
    /// A sweep thread panicked (a bug): the message it gave.
    #[error("the sweep stopped on an internal error: {0}")]
    Panicked(String),
}

/// A number as people read it: with an exponent when very large or small.
fn short(x: f32) -> String {
    if x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

/// One point of the grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepPoint {
    /// Fat-box margin.
    pub margin: f32,
    /// Velocity look-ahead, seconds.
    pub lookahead: f32,
    /// The whole tree configuration, `margin` and `lookahead` included.
    pub config: TreeConfig,
}

/// Median and spread of a per-step time, milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spread {
    /// The median.
    pub median: f64,
    /// The first quartile.
    pub q1: f64,
    /// The third quartile.
    pub q3: f64,
    /// The least.
    pub min: f64,
    /// The greatest.
    pub max: f64,
    /// The mean.
    pub mean: f64,
    /// How many values.
    pub count: u64,
}

impl Spread {
    /// The spread of `values` (sorted in place; quartiles by linear interpolation between
    /// order statistics). All zero for no values.
    #[must_use]
    pub fn of(values: &mut [f64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        values.sort_by(f64::total_cmp);
        let at = |q: f64| {
            let pos = q * (values.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            values[lo] + (values[hi] - values[lo]) * (pos - lo as f64)
        };
        Spread {
            median: at(0.5),
            q1: at(0.25),
            q3: at(0.75),
            min: values[0],
            max: values[values.len() - 1],
            mean: values.iter().sum::<f64>() / values.len() as f64,
            count: values.len() as u64,
        }
    }

    /// The interquartile range.
    #[must_use]
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }

    /// Half the width of the median's notch, `1.57 * IQR / sqrt(count)` (McGill, Tukey and
    /// Larsen): two medians whose notches do not overlap differ at about 95% confidence.
    #[must_use]
    pub fn notch(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        1.57 * self.iqr() / (self.count as f64).sqrt()
    }
}

/// What one point did.
#[derive(Clone, Debug, PartialEq)]
pub struct PointResult {
    /// The point.
    pub point: SweepPoint,
    /// Steps taken (the sweep's `steps`, or fewer when the point stopped).
    pub steps: u64,
    /// Fat boxes recomputed (leaves reinserted) over the steps, first insertions not counted
    /// (as `run --json`'s `reinserts_total`).
    pub reinserts_total: u64,
    /// Candidate pairs summed over the steps.
    pub candidate_pairs_total: u64,
    /// Contacts summed over the steps.
    pub contacts_total: u64,
    /// The tree's node and leaf visits over the steps (step 0's building not included).
    pub work: WorkCounts,
    /// Milliseconds a step, update plus pairs.
    pub ms_per_step: Spread,
    /// Milliseconds a step moving the spheres and updating the tree.
    pub ms_update: Spread,
    /// Milliseconds a step finding pairs and contacts.
    pub ms_pairs: Spread,
    /// Why the point stopped before its last step (the pair limit), with the step.
    pub stopped: Option<String>,
}

impl PointResult {
    /// The share of candidate pairs that are not contacts (0 when there were none).
    #[must_use]
    pub fn false_positive_share(&self) -> f64 {
        if self.candidate_pairs_total == 0 {
            0.0
        } else {
            self.candidate_pairs_total
                .saturating_sub(self.contacts_total) as f64
                / self.candidate_pairs_total as f64
        }
    }

    /// Node visits of updates and pair finding together.
    #[must_use]
    pub fn node_visits_total(&self) -> u64 {
        self.work.node_visits()
    }

    /// The work the advisor minimises: the tree's node visits plus one narrow-phase test per
    /// candidate pair per step. The pairs count even on steps where the tree kept last
    /// step's set (nothing left its fat box): an engine still tests every candidate pair each
    /// step, so a margin wide enough that nothing ever moves out is not free.
    #[must_use]
    pub fn work_total(&self) -> u64 {
        self.node_visits_total()
            .saturating_add(self.candidate_pairs_total)
    }

    /// The work with a pair test costing `pair_cost` node visits: node visits plus
    /// `pair_cost` times the candidate pairs ([`PointResult::work_total`] at 1).
    #[must_use]
    pub fn work_at(&self, pair_cost: f64) -> f64 {
        self.node_visits_total() as f64 + pair_cost * self.candidate_pairs_total as f64
    }

    /// `total / steps`, 0 for no steps.
    #[must_use]
    pub fn per_step(&self, total: u64) -> f64 {
        if self.steps == 0 {
            0.0
        } else {
            total as f64 / self.steps as f64
        }
    }
}

/// How far a sweep has got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Steps taken, every point together.
    pub steps_done: u64,
    /// Steps the whole sweep takes.
    pub steps_total: u64,
    /// Points finished (or stopped).
    pub points_done: usize,
    /// Points in the grid.
    pub points_total: usize,
}

/// Shared between a running sweep and whoever watches it: a cancel flag and the progress
/// counters (atomics, updated once a step, read from any thread).
#[derive(Debug, Default)]
pub struct SweepControl {
    cancel: AtomicBool,
    steps_done: AtomicU64,
    points_done: AtomicUsize,
    steps_total: AtomicU64,
    points_total: AtomicUsize,
}

impl SweepControl {
    /// A control not cancelled, with no progress.
    #[must_use]
    pub fn new() -> SweepControl {
        SweepControl::default()
    }

    /// Asks the sweep to stop: each running point stops before its next step, and no new
    /// point starts; the sweep then returns [`SweepOutcome::Cancelled`]. May be called before
    /// the sweep starts (it then ends at once).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// True once [`SweepControl::cancel`] was called.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Sets what the whole sweep will take: `points` points of `steps` steps each.
    fn set_totals(&self, points: usize, steps: u64) {
        self.steps_total
            .store(points as u64 * steps, Ordering::Relaxed);
        self.points_total.store(points, Ordering::Relaxed);
    }

    /// How far the sweep has got.
    #[must_use]
    pub fn progress(&self) -> Progress {
        Progress {
            steps_done: self.steps_done.load(Ordering::Relaxed),
            steps_total: self.steps_total.load(Ordering::Relaxed),
            points_done: self.points_done.load(Ordering::Relaxed),
            points_total: self.points_total.load(Ordering::Relaxed),
        }
    }
}

/// A finished sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepReport {
    /// Every point, in grid order (configurations, then look-ahead values, then margins,
    /// the last varying fastest).
    pub points: Vec<PointResult>,
    /// Steps a point.
    pub steps: u64,
    /// Threads the points ran on.
    pub threads: usize,
    /// Wall-clock seconds of the whole sweep.
    pub elapsed_secs: f64,
    /// The recommendation.
    pub advice: Advice,
}

/// How a sweep ended.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepOutcome {
    /// Every point ran (boxed: a report is much larger than a cancelled sweep's list).
    Finished(Box<SweepReport>),
    /// Cancelled: the points that had finished (in grid order) and how far it got.
    Cancelled {
        /// The points that finished before the cancel.
        finished: Vec<PointResult>,
        /// Progress when it stopped.
        progress: Progress,
    },
}

/// What one point's simulation takes a body, about (the broad phase, the bodies, pair lists
/// and reports: measured 500 bytes at a million spheres), to fit the threads in memory.
pub const BYTES_PER_BODY: u64 = 640;

/// What one point's simulation takes a candidate pair, about (the broad phase's pair list,
/// the report's pairs and the tree's pair set: measured about 230 MB a thread at 3,000
/// spheres that all overlap, 4.5 million pairs).
pub const BYTES_PER_PAIR: u64 = 48;

/// The memory one point's simulation may take: [`BYTES_PER_BODY`] a body, [`BYTES_PER_PAIR`]
/// for every pair it may hold (the most: every pair of its bodies, at most the pair limit),
/// and 1 MiB.
#[must_use]
pub fn point_bytes(bodies: u64, pair_limit: u64) -> u64 {
    let pairs = (bodies.saturating_mul(bodies.saturating_sub(1)) / 2).min(pair_limit);
    bodies
        .saturating_mul(BYTES_PER_BODY)
        .saturating_add(pairs.saturating_mul(BYTES_PER_PAIR))
        .saturating_add(1 << 20)
}

/// How many of `wanted` threads fit: each holds one point's simulation (`per_point` bytes,
/// [`point_bytes`]) and together they take at most half of `available` (unknown: all of
/// them); at least one.
#[must_use]
pub fn threads_within(wanted: usize, per_point: u64, available: Option<u64>) -> usize {
    let fit = available.map_or(u64::MAX, |bytes| bytes / 2 / per_point.max(1));
    wanted
        .min(usize::try_from(fit).unwrap_or(usize::MAX))
        .max(1)
}

/// A checked sweep, ready to run: what it steps (a scene from its start, or a trace from one
/// of its steps) and the points.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    origin: Origin,
    /// The step every point starts at (a trace's; 0 for a scene).
    start: usize,
    spec: SweepSpec,
    points: Vec<SweepPoint>,
}

impl SweepPlan {
    /// Checks the grid (see [`grid`]: margins and look-ahead values finite and >= 0, at most
    /// [`MAX_POINTS`] points, 1 to [`MAX_STEPS`] steps, at most [`MAX_TOTAL_STEPS`] in all)
    /// and the scene at every margin and look-ahead (the scene's rules, among them that every
    /// fat box stays finite); the first problem is the error, and nothing runs.
    pub fn new(scene: &Scene, spec: SweepSpec) -> Result<SweepPlan, SweepError> {
        let points = grid_points(&spec, scene.tree)?;
        refuse_dimensions(&spec, scene.dimensions)?;
        // The scene's rules at every margin and look-ahead (the configuration's strategies
        // do not change them): the first point refused is the error.
        for &lookahead in &spec.lookaheads {
            for &margin in &spec.margins {
                let probe = scene_at(scene, &points[0].config, margin, lookahead);
                probe.validate("").map_err(|e| SweepError::Scene {
                    margin,
                    lookahead,
                    message: e.without_file(),
                })?;
            }
        }
        Ok(SweepPlan {
            origin: Origin::Scene(Box::new(scene.clone())),
            start: 0,
            spec,
            points,
        })
    }

    /// A sweep of a trace: every point replays `spec.steps` steps of it from step `start`,
    /// on `config` (when `spec.configs` is empty) with the point's margin and look-ahead.
    /// The grid is checked as by [`SweepPlan::new`]; `steps` may not pass the trace's end.
    pub fn for_trace(
        trace: Arc<Trace>,
        start: usize,
        config: TreeConfig,
        spec: SweepSpec,
    ) -> Result<SweepPlan, SweepError> {
        let points = grid_points(&spec, config)?;
        refuse_dimensions(&spec, trace.dimensions())?;
        let origin = Origin::Trace(TraceStart { trace, config });
        let left = origin.steps_after(start).unwrap_or(u64::MAX);
        if spec.steps > left {
            return Err(SweepError::Grid {
                field: "steps",
                message: format!(
                    "the trace has {left} steps after step {start}; got {}",
                    spec.steps
                ),
            });
        }
        Ok(SweepPlan {
            origin,
            start,
            spec,
            points,
        })
    }
}

/// Refuses a broad phase that does not run in `dimensions` (Box2D's tree in 3D).
fn refuse_dimensions(spec: &SweepSpec, dimensions: u8) -> Result<(), SweepError> {
    if spec.broadphase.runs_in(dimensions) {
        return Ok(());
    }
    Err(SweepError::Grid {
        field: "broadphase",
        message: format!(
            "{} runs 2D scenes and traces only; this one is {dimensions}D",
            spec.broadphase
        ),
    })
}

/// The points of `spec`'s grid on `base` (when `spec.configs` is empty), after the grid's
/// checks (see [`SweepPlan::new`]).
fn grid_points(spec: &SweepSpec, base: TreeConfig) -> Result<Vec<SweepPoint>, SweepError> {
    let grid = |field, message: String| SweepError::Grid { field, message };
    if spec.margins.is_empty() {
        return Err(grid("margin", "no margin to sweep".to_owned()));
    }
    if spec.lookaheads.is_empty() {
        return Err(grid("lookahead", "no look-ahead value to sweep".to_owned()));
    }
    for (field, values) in [("margin", &spec.margins), ("lookahead", &spec.lookaheads)] {
        if let Some(v) = values.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
            return Err(grid(field, format!("must be finite and >= 0, got {v}")));
        }
    }
    if spec.steps == 0 || spec.steps > MAX_STEPS {
        return Err(grid(
            "steps",
            format!("must be 1 to {MAX_STEPS}, got {}", spec.steps),
        ));
    }
    let configs = if spec.configs.is_empty() {
        vec![base]
    } else {
        spec.configs.clone()
    };
    let count = spec
        .margins
        .len()
        .saturating_mul(spec.lookaheads.len())
        .saturating_mul(configs.len());
    if count > MAX_POINTS {
        return Err(grid(
            "points",
            format!(
                "{} margins x {} look-ahead values x {} configurations = {count} points; at \
                     most {MAX_POINTS}",
                spec.margins.len(),
                spec.lookaheads.len(),
                configs.len()
            ),
        ));
    }
    let total = (count as u64).saturating_mul(spec.steps);
    if total > MAX_TOTAL_STEPS {
        return Err(grid(
            "steps",
            format!(
                "{count} points x {} steps = {total} steps; at most {MAX_TOTAL_STEPS} in \
                     one sweep",
                spec.steps
            ),
        ));
    }
    let mut points = Vec::with_capacity(count);
    for config in &configs {
        for &lookahead in &spec.lookaheads {
            for &margin in &spec.margins {
                points.push(SweepPoint {
                    margin,
                    lookahead,
                    config: TreeConfig {
                        margin,
                        velocity_lookahead: lookahead,
                        ..*config
                    },
                });
            }
        }
    }
    Ok(points)
}

impl SweepPlan {
    /// The plan for what `origin` steps: [`SweepPlan::new`] for a scene (which starts at
    /// step 0; `start` must be 0), [`SweepPlan::for_trace`] from step `start` of a trace on
    /// its tree settings.
    pub fn of(origin: &Origin, start: usize, spec: SweepSpec) -> Result<SweepPlan, SweepError> {
        match origin {
            Origin::Scene(scene) if start == 0 => Self::new(scene, spec),
            Origin::Scene(_) => Err(SweepError::Grid {
                field: "start",
                message: format!("a scene starts at step 0, not at step {start}"),
            }),
            Origin::Trace(t) => Self::for_trace(Arc::clone(&t.trace), start, t.config, spec),
        }
    }

    /// The plan from a running simulation's current state (the window's, see [`Sim::here`]):
    /// a scene's spheres where they are now, a trace from the step shown; on its tree
    /// settings (when `spec.configs` is empty).
    pub fn from_sim(sim: &Sim, spec: SweepSpec) -> Result<SweepPlan, SweepError> {
        let (origin, start) = sim.here();
        Self::of(&origin, start, spec)
    }

    /// The points, in grid order.
    #[must_use]
    pub fn points(&self) -> &[SweepPoint] {
        &self.points
    }

    /// The spec.
    #[must_use]
    pub fn spec(&self) -> &SweepSpec {
        &self.spec
    }

    /// The threads to run on: [`SweepSpec::threads`] (0: one a core), but no more than the
    /// points' simulations fit in half the memory this process may still take (the system's
    /// or its container's, [`crate::fileio::memory_available`]; each thread holds one:
    /// [`point_bytes`], its bodies and the pairs it may hold), and at least one.
    fn threads_that_fit(&self) -> usize {
        let wanted = match self.spec.threads {
            0 => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            n => n,
        };
        let bodies = self.origin.body_count();
        let per_point = point_bytes(bodies as u64, self.spec.pair_limit as u64);
        threads_within(wanted, per_point, crate::fileio::memory_available())
    }

    /// Runs every point on a pool of [`SweepSpec::threads`] threads (fewer when their
    /// simulations would not fit in memory: see `threads_that_fit`) and blocks until they are
    /// done or `control` is cancelled. Counts are the same whatever the thread count; only
    /// the times differ.
    pub fn run(&self, control: &SweepControl) -> Result<SweepOutcome, SweepError> {
        use rayon::prelude::*;
        let started = Instant::now();
        control.set_totals(self.points.len(), self.spec.steps);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.threads_that_fit())
            .thread_name(|i| format!("sweep-{i}"))
            .build()
            .map_err(|e| SweepError::Threads(e.to_string()))?;
        let threads = pool.current_num_threads();
        // One task a point (no batching: a cancel is seen by every point at its next step).
        let results: Vec<Option<PointResult>> = pool.install(|| {
            self.points
                .par_iter()
                .with_max_len(1)
                .map(|point| run_point(&self.origin, self.start, point, &self.spec, control))
                .collect()
        });
        // Cancelled: some point did not finish (a cancel after the last step changes nothing).
        if results.iter().any(Option::is_none) {
            return Ok(SweepOutcome::Cancelled {
                finished: results.into_iter().flatten().collect(),
                progress: control.progress(),
            });
        }
        let points: Vec<PointResult> = results.into_iter().flatten().collect();
        let advice = advise_with(&points, self.spec.pair_cost);
        Ok(SweepOutcome::Finished(Box::new(SweepReport {
            points,
            steps: self.spec.steps,
            threads,
            elapsed_secs: started.elapsed().as_secs_f64(),
            advice,
        })))
    }

    /// Runs the sweep on a thread of its own (which runs the points on the pool) and returns
    /// at once: for a UI thread, which reads [`SweepHandle::progress`], may
    /// [`SweepHandle::cancel`], and takes the outcome with [`SweepHandle::wait`] once
    /// [`SweepHandle::is_finished`].
    pub fn start(self) -> Result<SweepHandle, SweepError> {
        let control = Arc::new(SweepControl::new());
        control.set_totals(self.points.len(), self.spec.steps);
        let job = crate::job::Job::spawn("sweep", control, move |control| self.run(control))
            .map_err(SweepError::Threads)?;
        Ok(SweepHandle { job })
    }
}

/// `scene` with `config`'s strategies and the given margin and look-ahead.
fn scene_at(scene: &Scene, config: &TreeConfig, margin: f32, lookahead: f32) -> Scene {
    Scene {
        tree: TreeConfig {
            margin,
            velocity_lookahead: lookahead,
            ..*config
        },
        ..scene.clone()
    }
}

/// Runs one point from step `start` of `origin`; `None` when cancelled before it finished.
fn run_point(
    origin: &Origin,
    start: usize,
    point: &SweepPoint,
    spec: &SweepSpec,
    control: &SweepControl,
) -> Option<PointResult> {
    if control.is_cancelled() {
        return None;
    }
    let sim = Sim::starting_at(
        origin,
        start,
        point.config,
        spec.broadphase,
        spec.pair_limit,
    );
    run_steps(sim, point, spec, control)
}

/// Runs the steps of one point on `sim` (or records why it could not start).
fn run_steps(
    sim: Result<Sim, SceneError>,
    point: &SweepPoint,
    spec: &SweepSpec,
    control: &SweepControl,
) -> Option<PointResult> {
    let steps = spec.steps;
    let mut result = PointResult {
        point: *point,
        steps: 0,
        reinserts_total: 0,
        candidate_pairs_total: 0,
        contacts_total: 0,
        work: WorkCounts::default(),
        ms_per_step: Spread::default(),
        ms_update: Spread::default(),
        ms_pairs: Spread::default(),
        stopped: None,
    };
    let finish = |result: PointResult| {
        // This point's steps not taken still count as done, so the progress reaches the total.
        control.points_done.fetch_add(1, Ordering::Relaxed);
        Some(result)
    };
    let mut sim = match sim {
        Ok(sim) => sim,
        Err(e) => {
            control.steps_done.fetch_add(steps, Ordering::Relaxed);
            result.stopped = Some(crate::text::clean_message(&e.to_string()));
            return finish(result);
        }
    };
    let start_work = sim.work_counts().unwrap_or_default();
    let (mut update_ms, mut pairs_ms, mut step_ms) = (
        Vec::with_capacity(steps as usize),
        Vec::with_capacity(steps as usize),
        Vec::with_capacity(steps as usize),
    );
    for _ in 0..steps {
        if control.is_cancelled() {
            return None;
        }
        let outcome = sim.step();
        control.steps_done.fetch_add(1, Ordering::Relaxed);
        match outcome {
            Ok(r) => {
                result.steps += 1;
                result.reinserts_total += r.reinserted.len() as u64;
                result.candidate_pairs_total += r.candidate_pairs.len() as u64;
                result.contacts_total += r.contacts.len() as u64;
                update_ms.push(r.update_secs * 1e3);
                pairs_ms.push(r.pairs_secs * 1e3);
                step_ms.push((r.update_secs + r.pairs_secs) * 1e3);
            }
            Err(e) => {
                control
                    .steps_done
                    .fetch_add(steps - result.steps - 1, Ordering::Relaxed);
                result.stopped = Some(crate::text::clean_message(&e.to_string()));
                break;
            }
        }
    }
    result.work = sim.work_counts().unwrap_or_default().since(&start_work);
    result.ms_update = Spread::of(&mut update_ms);
    result.ms_pairs = Spread::of(&mut pairs_ms);
    result.ms_per_step = Spread::of(&mut step_ms);
    finish(result)
}

/// A sweep running on a thread of its own ([`SweepPlan::start`]).
#[derive(Debug)]
pub struct SweepHandle {
    job: crate::job::Job<SweepControl, Result<SweepOutcome, SweepError>>,
}

impl SweepHandle {
    /// How far it has got.
    #[must_use]
    pub fn progress(&self) -> Progress {
        self.job.control().progress()
    }

    /// Asks it to stop (see [`SweepControl::cancel`]); [`SweepHandle::wait`] then returns
    /// [`SweepOutcome::Cancelled`] within about one step of each running point.
    pub fn cancel(&self) {
        self.job.control().cancel();
    }

    /// True once the sweep has ended (finished, cancelled or failed): [`SweepHandle::wait`]
    /// then returns at once.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.job.is_finished()
    }

    /// The control it runs under (shared: cancel and progress from any thread).
    #[must_use]
    pub fn control(&self) -> Arc<SweepControl> {
        Arc::clone(self.job.control())
    }

    /// Waits for the end and returns the outcome.
    pub fn wait(self) -> Result<SweepOutcome, SweepError> {
        self.job
            .join()
            .unwrap_or_else(|message| Err(SweepError::Panicked(message)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 3,000 spheres that all overlap take about 230 MB a thread, and 32 threads would be
    /// killed inside a 6 GiB limit; the estimate counts their pairs and fits 14 threads there.
    #[test]
    fn the_memory_estimate_counts_the_pairs_a_point_may_hold() {
        let per_point = point_bytes(3_000, 5_000_000);
        assert_eq!(per_point, 3_000 * 640 + 4_498_500 * 48 + (1 << 20));
        assert_eq!(per_point, 218_896_576);
        let six_gib = 6 * 1024 * 1024 * 1024;
        assert_eq!(threads_within(32, per_point, Some(six_gib)), 14);
        // The pair limit bounds the pairs: a million sparse spheres hold at most 5,000,000.
        assert_eq!(
            point_bytes(1_000_000, 5_000_000),
            640_000_000 + 240_000_000 + (1 << 20)
        );
        // Unknown memory: every thread asked for; none fit: one.
        assert_eq!(threads_within(32, per_point, None), 32);
        assert_eq!(threads_within(32, per_point, Some(1)), 1);
        // A container's limit is read as its room: 6 GiB less 1 GiB in use.
        let room = crate::fileio::cgroup_room("6442450944", Some("1073741824"));
        assert_eq!(threads_within(32, per_point, room), 12);
    }
}
