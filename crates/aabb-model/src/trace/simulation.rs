//! [`TraceSimulation`]: the broad phases driven by a trace's boxes, reporting each step as the
//! scene's [`Simulation`] does; and [`Stepper`], what `run` and the sweep need of either.

use super::{Trace, TraceBox};
use crate::broadphase::{self, Broadphase, BroadphaseError, BroadphaseKind};
use crate::scene::{SceneError, Simulation, StepReport};
use crate::tree::{TreeConfig, WorkCounts};
use glam::{DVec3, Vec3};
use std::sync::Arc;
use std::time::Instant;

/// Something that steps and reports like a scene's [`Simulation`]: a scene, or a trace
/// ([`TraceSimulation`]). `run` and the margin sweep drive either through this.
pub trait Stepper {
    /// Takes the next step and reports it (see [`Simulation::step`]).
    fn step(&mut self) -> Result<&StepReport, SceneError>;
    /// The report of the current step.
    fn report(&self) -> &StepReport;
    /// The tree's work counts since the broad phase was made (`None` for the others).
    fn work_counts(&self) -> Option<WorkCounts>;
    /// How many more steps there are: `None` for a scene (no end), the steps left for a
    /// trace.
    fn steps_left(&self) -> Option<u64>;
}

impl Stepper for Simulation {
    fn step(&mut self) -> Result<&StepReport, SceneError> {
        Simulation::step(self)
    }
    fn report(&self) -> &StepReport {
        Simulation::report(self)
    }
    fn work_counts(&self) -> Option<WorkCounts> {
        Simulation::work_counts(self)
    }
    fn steps_left(&self) -> Option<u64> {
        None
    }
}

/// The name errors of a trace simulation give in place of a file.
const TRACE_SIM: &str = "<trace>";

fn invalid(message: String) -> SceneError {
    SceneError::Invalid {
        file: TRACE_SIM.to_owned(),
        message,
    }
}

/// A broad phase of `kind` for `trace`: the pair limit set and the trace's static boxes
/// marked, so that no pair of two of them is reported (as a scene's static boxes).
fn make_broadphase(
    trace: &Trace,
    kind: BroadphaseKind,
    config: TreeConfig,
    pair_limit: usize,
) -> Result<Box<dyn Broadphase>, SceneError> {
    let mut b =
        broadphase::make(kind, trace.dimensions(), config).map_err(|e| invalid(e.to_string()))?;
    b.set_pair_limit(pair_limit);
    let ids: Vec<u32> = trace.statics().iter().map(|s| s.id).collect();
    b.set_static_ids(&ids);
    let statics: Vec<broadphase::Body> = trace
        .statics()
        .iter()
        .map(|s| broadphase::Body::fixed(s.id, s.aabb))
        .collect();
    broadphase::build_statics(b.as_mut(), &statics);
    Ok(b)
}

/// Replays a [`Trace`] through a broad phase: at each step the broad phase is brought to that
/// step's boxes (and the static ones), so the tree is driven by the trace exactly as by a
/// scene's spheres, and every step gets a [`StepReport`] like a scene's:
///
/// - a box's **velocity** (for the look-ahead) is its centre's motion since the previous
///   step divided by `dt`: `(centre now - centre at the last step) / dt`; zero for a box new
///   this step (or at the first step replayed) and for static boxes;
/// - boxes present now and not at the last step **appear**, boxes gone **disappear**;
/// - **candidate pairs** are pairs whose fat boxes overlap, as for spheres, except pairs of
///   two static boxes (level geometry never collides with itself);
/// - **contacts** are the candidate pairs whose tight boxes overlap (touching counts): a
///   trace has boxes, not shapes.
///
/// A clone steps exactly as the original would (a recording's keyframe).
#[derive(Clone)]
pub struct TraceSimulation {
    trace: Arc<Trace>,
    config: TreeConfig,
    broadphase: Box<dyn Broadphase>,
    /// The trace step shown now.
    step: usize,
    /// The first step replayed.
    start: usize,
    report: StepReport,
    /// The live bodies of the current step (static boxes and the step's), sorted by id.
    live: Vec<broadphase::Body>,
    /// Those of the previous step, for velocities.
    previous: Vec<broadphase::Body>,
    pair_limit: usize,
    last_error: Option<BroadphaseError>,
    /// True from the making of a broad phase (its static boxes built in one batch, not added
    /// by an update) to the next report, which lists them among the bodies that appeared, as
    /// it lists every other body a fresh broad phase takes.
    statics_unreported: bool,
}

impl TraceSimulation {
    /// Starts replaying `trace` at its first step on broad phase `kind` with tree settings
    /// `config` (its margin and look-ahead) and a candidate-pair limit. An error when the
    /// settings are bad or step 0 passes the pair limit.
    pub fn new(
        trace: Arc<Trace>,
        kind: BroadphaseKind,
        config: TreeConfig,
        pair_limit: usize,
    ) -> Result<TraceSimulation, SceneError> {
        Self::starting_at(trace, 0, kind, config, pair_limit)
    }

    /// [`TraceSimulation::new`] from step `start` of the trace (the broad phase is built
    /// from that step's boxes, with velocities from the step before it, if any). An error
    /// also when the trace has no such step.
    pub fn starting_at(
        trace: Arc<Trace>,
        start: usize,
        kind: BroadphaseKind,
        config: TreeConfig,
        pair_limit: usize,
    ) -> Result<TraceSimulation, SceneError> {
        let (sim, first) = Self::built_at(trace, start, kind, config, pair_limit)?;
        first.map(|()| sim)
    }

    /// [`TraceSimulation::new`], kept even when step 0 passes the pair limit (as
    /// [`Simulation::paused_at_zero`]: [`TraceSimulation::last_error`] says so); an error
    /// only for bad settings.
    pub fn paused_at_zero(
        trace: Arc<Trace>,
        kind: BroadphaseKind,
        config: TreeConfig,
        pair_limit: usize,
    ) -> Result<TraceSimulation, SceneError> {
        let (sim, first) = Self::built_at(trace, 0, kind, config, pair_limit)?;
        match first {
            Ok(()) | Err(SceneError::Step { .. }) => Ok(sim),
            Err(e) => Err(e),
        }
    }

    /// The simulation at step `start` and the outcome of that step (an error when its pairs
    /// pass the limit); an error when it cannot be built at all.
    fn built_at(
        trace: Arc<Trace>,
        start: usize,
        kind: BroadphaseKind,
        config: TreeConfig,
        pair_limit: usize,
    ) -> Result<(TraceSimulation, Result<(), SceneError>), SceneError> {
        broadphase::check_pair_limit(pair_limit).map_err(invalid)?;
        if start >= trace.step_count() {
            return Err(invalid(format!(
                "the trace has no step {start}: its steps are 0 to {}",
                trace.step_count() - 1
            )));
        }
        if kind != BroadphaseKind::Tree
            && let Some(why) = trace.work_at(start).refusal(kind)
        {
            return Err(invalid(why));
        }
        let broadphase = make_broadphase(&trace, kind, config, pair_limit)?;
        let mut sim = TraceSimulation {
            trace,
            config,
            broadphase,
            step: start,
            start,
            report: StepReport::default(),
            live: Vec::new(),
            previous: Vec::new(),
            pair_limit,
            last_error: None,
            statics_unreported: true,
        };
        if start > 0 {
            sim.live = sim.bodies_at(start - 1, &[]);
        }
        sim.advance_to(start);
        let first = sim.refresh(Instant::now()).map(|_| ());
        Ok((sim, first))
    }

    /// The bodies of trace step `k` (static boxes included), sorted by id, with velocities
    /// from `previous` (sorted by id).
    fn bodies_at(&self, k: usize, previous: &[broadphase::Body]) -> Vec<broadphase::Body> {
        let dt = f64::from(self.trace.dt());
        let centre = |b: &TraceBox| (b.aabb.min.as_dvec3() + b.aabb.max.as_dvec3()) * 0.5;
        let statics: Vec<broadphase::Body> = self
            .trace
            .statics()
            .iter()
            .map(|b| broadphase::Body::fixed(b.id, b.aabb))
            .collect();
        let mut p = 0;
        let moving = self.trace.step(k).iter().map(|b| {
            while p < previous.len() && previous[p].id < b.id {
                p += 1;
            }
            let velocity = match previous.get(p) {
                Some(before) if before.id == b.id => {
                    let was: DVec3 =
                        (before.tight.min.as_dvec3() + before.tight.max.as_dvec3()) * 0.5;
                    ((centre(b) - was) / dt).as_vec3()
                }
                _ => Vec3::ZERO,
            };
            broadphase::Body {
                id: b.id,
                tight: b.aabb,
                velocity,
            }
        });
        // Both parts are sorted; static ids never repeat in a step (the reader's rule).
        let mut all = Vec::new();
        broadphase::merge_by_id(&statics, moving, &mut all);
        all
    }

    /// Makes trace step `k` the live one (the current live bodies become the previous).
    fn advance_to(&mut self, k: usize) {
        let next = self.bodies_at(k, &self.live);
        self.previous = std::mem::replace(&mut self.live, next);
        self.step = k;
    }

    /// Brings the broad phase to the live bodies and stores the step's report.
    fn refresh(&mut self, started: Instant) -> Result<&StepReport, SceneError> {
        let outcome = self.broadphase.update(&self.live);
        let update_secs = started.elapsed().as_secs_f64();
        let pairs_started = Instant::now();
        let found = outcome.and_then(|outcome| Ok((outcome, self.broadphase.find_pairs()?)));
        let (outcome, found) = match found {
            Ok(found) => found,
            Err(source) => {
                let source = source.of_boxes();
                self.report = StepReport {
                    step: self.step as u64,
                    pairs_recomputed: true,
                    tree: self.broadphase.tree_stats(),
                    update_secs,
                    pairs_secs: pairs_started.elapsed().as_secs_f64(),
                    events: self.broadphase.take_events(),
                    ..StepReport::default()
                };
                self.last_error = Some(source.clone());
                return Err(SceneError::Step {
                    step: self.step as u64,
                    source,
                });
            }
        };
        let contacts = self.contacts_of(&found.pairs);
        self.last_error = None;
        let reinserted = outcome
            .reinserted
            .iter()
            .copied()
            .filter(|id| outcome.added.binary_search(id).is_err())
            .collect();
        let mut appeared = outcome.added;
        if std::mem::take(&mut self.statics_unreported) && !self.trace.statics().is_empty() {
            appeared.extend(self.trace.statics().iter().map(|s| s.id));
            appeared.sort_unstable();
            // Those a failed build left to the update are listed once.
            appeared.dedup();
        }
        self.report = StepReport {
            step: self.step as u64,
            reinserted,
            appeared,
            disappeared: outcome.removed,
            candidate_pairs: found.pairs,
            contacts,
            pairs_recomputed: found.recomputed,
            tree: self.broadphase.tree_stats(),
            update_secs,
            pairs_secs: pairs_started.elapsed().as_secs_f64(),
            events: self.broadphase.take_events(),
        };
        Ok(&self.report)
    }

    /// The candidate pairs whose tight boxes overlap.
    fn contacts_of(&self, pairs: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let tight = |id: u32| {
            self.live
                .binary_search_by_key(&id, |b| b.id)
                .ok()
                .map(|i| self.live[i].tight)
        };
        pairs
            .iter()
            .copied()
            .filter(|&(a, b)| match (tight(a), tight(b)) {
                (Some(a), Some(b)) => a.overlaps(&b),
                _ => false,
            })
            .collect()
    }

    /// The hash of the broad phase's structure (see [`Simulation::structure_hash`]).
    #[must_use]
    pub fn structure_hash(&self) -> u64 {
        self.broadphase.structure_hash()
    }

    /// Bytes a copy ([`Clone`]) holds beyond the shared trace: the live and previous bodies,
    /// the broad phase's storage and the last report's lists (an estimate).
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let r = &self.report;
        let ids = r.reinserted.len() + r.appeared.len() + r.disappeared.len();
        size_of::<Self>()
            + (self.live.capacity() + self.previous.capacity()) * size_of::<broadphase::Body>()
            + self.broadphase.heap_bytes()
            + ids * size_of::<u32>()
            + (r.candidate_pairs.len() + r.contacts.len()) * size_of::<(u32, u32)>()
            + r.events.len() * size_of::<crate::tree::TreeEvent>()
    }

    /// The trace step shown now (the trace's own step number).
    #[must_use]
    pub fn step_index(&self) -> u64 {
        self.step as u64
    }

    /// The first step replayed.
    #[must_use]
    pub fn start(&self) -> usize {
        self.start
    }

    /// The trace.
    #[must_use]
    pub fn trace(&self) -> &Arc<Trace> {
        &self.trace
    }

    /// Takes `longer`, the same trace with more steps (a live engine's, grown since), in place
    /// of the one it replays: the steps run so far are the same in both, so nothing else
    /// changes, and the steps after the old last become steps to come. The caller checks that
    /// it is ([`Trace::is_prefix_of`]).
    pub fn grow_trace(&mut self, longer: Arc<Trace>) {
        self.trace = longer;
    }

    /// The current step's bodies, static boxes included, sorted by id: each tight box as
    /// the trace gives it and the velocity the look-ahead uses (for drawing them).
    #[must_use]
    pub fn bodies(&self) -> &[broadphase::Body] {
        &self.live
    }

    /// The broad phase (fat boxes, the tree for drawing: [`Broadphase::tree_view`]).
    #[must_use]
    pub fn broadphase(&self) -> &dyn Broadphase {
        self.broadphase.as_ref()
    }

    /// Which broad phase runs.
    #[must_use]
    pub fn broadphase_kind(&self) -> BroadphaseKind {
        self.broadphase.kind()
    }

    /// The tree settings in use.
    #[must_use]
    pub fn tree_settings(&self) -> TreeConfig {
        self.config
    }

    /// 2 or 3.
    #[must_use]
    pub fn dimensions(&self) -> u8 {
        self.trace.dimensions()
    }

    /// Seconds per step.
    #[must_use]
    pub fn dt_secs(&self) -> f32 {
        self.trace.dt()
    }

    /// The trace's name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.trace.name()
    }

    /// Why the last step (or change) stopped, when it did.
    #[must_use]
    pub fn last_error(&self) -> Option<&BroadphaseError> {
        self.last_error.as_ref()
    }

    /// The most candidate pairs a step may find.
    #[must_use]
    pub fn pair_limit(&self) -> usize {
        self.pair_limit
    }

    /// True at the trace's last step.
    #[must_use]
    pub fn is_at_end(&self) -> bool {
        self.step + 1 >= self.trace.step_count()
    }

    /// Sets the candidate-pair limit and finds the pairs again under it.
    pub fn set_pair_limit(&mut self, limit: usize) -> Result<&StepReport, SceneError> {
        broadphase::check_pair_limit(limit).map_err(invalid)?;
        self.pair_limit = limit;
        self.broadphase.set_pair_limit(limit);
        self.refresh(Instant::now())
    }

    /// Applies new tree settings at once (fat boxes and pairs recomputed).
    pub fn set_tree_settings(&mut self, config: TreeConfig) -> Result<&StepReport, SceneError> {
        self.broadphase
            .set_config(config)
            .map_err(|e| invalid(e.to_string()))?;
        self.config = config;
        self.refresh(Instant::now())
    }

    /// Switches broad phase (every fat box made afresh, pairs recomputed).
    pub fn set_broadphase(&mut self, kind: BroadphaseKind) -> Result<&StepReport, SceneError> {
        // Refused past its size, the broad phase in use is kept (as a scene's).
        if kind != BroadphaseKind::Tree
            && let Some(why) = self.trace.work_at(self.step).refusal(kind)
        {
            return Err(invalid(why));
        }
        self.broadphase = make_broadphase(&self.trace, kind, self.config, self.pair_limit)?;
        self.statics_unreported = true;
        self.refresh(Instant::now())
    }

    /// Full rebuild of the tree; the report is refreshed.
    pub fn rebuild(&mut self) -> Result<&StepReport, SceneError> {
        self.broadphase.rebuild();
        self.refresh(Instant::now())
    }
}

impl Stepper for TraceSimulation {
    /// The next step of the trace; an error ([`SceneError::Invalid`]) past its last step,
    /// or [`SceneError::Step`] when the broad phase refuses a box or passes the pair limit.
    fn step(&mut self) -> Result<&StepReport, SceneError> {
        if self.is_at_end() {
            return Err(invalid(format!(
                "the trace ends at step {}; there is no next step",
                self.step
            )));
        }
        let started = Instant::now();
        self.advance_to(self.step + 1);
        self.refresh(started)
    }
    fn report(&self) -> &StepReport {
        &self.report
    }
    fn work_counts(&self) -> Option<WorkCounts> {
        self.broadphase.work_counts()
    }
    fn steps_left(&self) -> Option<u64> {
        Some((self.trace.step_count() - 1 - self.step) as u64)
    }
}
