//! Recording every step of a simulation and rebuilding any recorded step exactly.
//!
//! # What is kept
//!
//! A [`History`] is what a recording file holds: the scene the run started from (at step 0),
//! the broad phase and pair limit it started with, one [`StepRecord`] per step (step 0
//! included: `steps()[s]` is step `s`) with the step's metrics and the structural hash of the
//! broad phase ([`Simulation::structure_hash`]), and every [`Edit`] the user applied, with
//! the step it was applied at and the hash after it. A step is a pure function of the state
//! (everything is seeded), so the scene and the edits determine every step; the hashes and
//! counts are there to check that a rebuilt step is the recorded one. A mismatch is an error
//! ([`ReplayError::Mismatch`]) naming the step and what differs, never a wrong picture.
//!
//! A [`Recording`] is a history in memory with *keyframes*: a full copy of the
//! [`Simulation`] (tree, bodies, report) now and then. [`Recording::state_at`] clones the
//! nearest keyframe at or before the step, applies the edits and steps up to it, and checks
//! the hash and counts of every step it rebuilds.
//!
//! # Order within a step
//!
//! The window steps, then the user may change things while the simulation stays at that step.
//! So at step `s`: [`Simulation::step`] makes step `s` (its record is `steps()[s]`), then the
//! edits recorded at `s` are applied in order. A keyframe at `s` is taken right after the
//! step, before those edits; [`Recording::state_at`]`(s)` gives the state after all of them
//! (what the window showed last at that step).
//!
//! # Keyframes: when, and the budget
//!
//! Jumping to a step costs one clone of a keyframe and then as many steps as lie between the
//! keyframe and the step (each hashed and checked); recording costs one hash a step and, at
//! each keyframe, one clone. Measured at 10,000 spheres (`crates/peers/benches/replay.rs`,
//! docs/performance.md, "Recording"): a step 1.4 to 2.4 ms (the machine is shared), its record
//! with the hash about 0.1 ms, a clone about 0.1 ms, a keyframe 2.4 MiB. A step's work, a
//! clone's time and a keyframe's size all grow with the number of bodies, so the rule counts
//! bodies: [`KeyframePolicy::Work`] (the default) takes a keyframe once the steps since the
//! last one moved [`DEFAULT_KEYFRAME_BODY_STEPS`] bodies in all (every 40 steps at 10,000
//! spheres: a jump then redoes at most 39 steps, about 60 ms) or [`DEFAULT_KEYFRAME_MAX_STEPS`]
//! steps passed (small scenes). The clones then cost about one step's hundredth whatever the
//! scene. The rule counts work, not time, so that keyframes stand at the same steps on every
//! run and machine (a rule by the recorded step times put them 56 to 96 steps apart on this
//! busy machine). Where keyframes stand has no effect on what is rebuilt, only on how fast;
//! [`KeyframePolicy::Every`] gives fixed places (tests).
//!
//! Memory is bounded by a budget ([`DEFAULT_BUDGET_BYTES`], 1 GiB; settable): the
//! keyframes' sizes ([`Simulation::heap_bytes`] of each copy) plus the step records and
//! edits. When a step takes the recording over the budget, keyframes are dropped one at a
//! time, each time the one whose loss leaves the shortest stretch without a keyframe (never
//! keyframe 0), so that the keyframes that fit stay evenly spread over the whole recording:
//! the budget then bounds their number, and the worst jump grows with the recording's length
//! (the recorded time over the number of keyframes that fit). The oldest steps are never
//! dropped: the history must start at the scene to be rebuilt and written to a file, and old
//! steps keep keyframes as dense as new ones. If the recording is over the budget with only
//! keyframe 0 left (the step records alone fill it: about 15 million steps at 72 bytes), it
//! is full: [`Recording::record_step`] refuses more steps with [`ReplayError::Full`] and the
//! caller says so. [`Recording::memory_bytes`] says what is used.
//!
//! The trade at 10,000 spheres (2.4 MiB a keyframe, one every 40 steps: 60 KiB a step): a
//! 10,000-step recording takes about 600 MiB and its worst jump about 60 ms. Within 512 MiB
//! only about 210 keyframes fit, the stretches between them grow as keyframes are dropped,
//! and the worst jump took 243 ms (110 steps) in a run with an earlier rule. So the default
//! budget is 1 GiB: a desktop debugger can afford it, smaller scenes use far less (a
//! keyframe takes about 250 bytes a sphere), and it keeps 10,000 steps of 10,000 spheres
//! within the 100 ms jump. A smaller budget trades jump time for memory
//! ([`Recording::set_budget_bytes`]).
//!
//! # Changing the past
//!
//! [`Recording::truncate_after`] discards the recorded future after a step (steps, edits and
//! keyframes) and says how much went; [`Recording::resume_at`] is that and the state at the
//! step, from which the caller carries on: its next edits and steps are recorded after it.
//!
//! # How the window drives it
//!
//! - Opening a scene: [`Recording::start`] in place of [`Simulation::paused_at_zero`] (it
//!   returns both); opening a recording file: [`file::load`] then
//!   [`Recording::from_history`] and [`Recording::state_at`] of its last step.
//! - Playing: [`Recording::step`] in place of [`Simulation::step`].
//! - Every change the user makes: [`Recording::apply`] with the matching [`Edit`] in place of
//!   the simulation's method (a refused change is not recorded).
//! - The timeline: [`Recording::steps`] (one [`StepRecord`] a step; [`Metric::value`] reads
//!   a track), [`Recording::edits`] (markers; [`StepRecord::rebuilt`] marks the tree's own
//!   rebuilds), [`Recording::worst_step`], [`Recording::memory_bytes`] and
//!   [`Recording::budget_bytes`] for the budget shown.
//! - At a past step: show [`Recording::state_at`]`(s)` (the live simulation stays at the
//!   last step); acting there: [`Recording::resume_at`]`(s)` gives the simulation to carry on
//!   with and what was discarded, for the status line.
//! - Saving: [`file::save`] of [`Recording::history`].
//!
//! # Scenes and traces
//!
//! Everything here is generic over [`Replay`]: what a recording needs of a simulation (a
//! start to make it from, a step, a clone as keyframe, a structural hash, its size, the edits).
//! A scene's [`Simulation`] (the default type, and the only kind a recording file holds) and a
//! trace's [`TraceSimulation`] (started from a [`TraceStart`]: the trace and its tree
//! settings) implement it; a trace refuses the sphere edits. The window records either
//! through one type of its own that is one or the other.
//!
//! # Files
//!
//! [`file`](mod@file) reads and writes a history (no keyframes: they are rebuilt by re-simulating,
//! which also checks every step). See its docs for the format and the size a step takes.

pub mod file;

use crate::broadphase::{BroadphaseError, BroadphaseKind};
use crate::scene::{Scene, SceneError, Simulation, Sphere, StepReport};
use crate::trace::{Stepper, Trace, TraceSimulation};
use crate::tree::{TreeConfig, TreeEvent};
use glam::Vec3;
use serde::{Deserialize, Serialize};

/// The default memory budget of a recording: 1 GiB (see the module docs for why).
pub const DEFAULT_BUDGET_BYTES: usize = 1024 * 1024 * 1024;

/// The default work between keyframes ([`KeyframePolicy::Work`]): 400,000 body-steps, a
/// keyframe every 40 steps at 10,000 spheres.
pub const DEFAULT_KEYFRAME_BODY_STEPS: u64 = 400_000;

/// The default most steps between keyframes ([`KeyframePolicy::Work`]): 1,000 (small scenes,
/// whose steps take microseconds and whose keyframes a few kilobytes).
pub const DEFAULT_KEYFRAME_MAX_STEPS: u64 = 1_000;

/// A change the user applied to the simulation: one of [`Simulation`]'s mutating methods with
/// its arguments. Recorded with the step it was applied at ([`RecordedEdit`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Edit {
    /// [`Simulation::move_sphere`]: a drag.
    MoveSphere {
        /// The sphere.
        id: u32,
        /// Its new centre.
        center: Vec3,
    },
    /// [`Simulation::add_sphere`].
    AddSphere(#[serde(with = "sphere_form")] Sphere),
    /// [`Simulation::remove_sphere`].
    RemoveSphere {
        /// The sphere.
        id: u32,
    },
    /// [`Simulation::set_tree_settings`] (a slider, a setting, an undo).
    SetTreeSettings(TreeConfig),
    /// [`Simulation::set_broadphase`].
    SetBroadphase(BroadphaseKind),
    /// [`Simulation::rebuild`].
    Rebuild,
    /// [`Simulation::set_pair_limit`].
    SetPairLimit(u64),
}

/// [`Sphere`] in a recording file (the scene format's field names; vectors of three).
mod sphere_form {
    use crate::scene::Sphere;
    use glam::Vec3;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Form {
        id: u32,
        label: Option<String>,
        center: Vec3,
        radius: f32,
        velocity: Vec3,
        appear_at: u64,
        disappear_at: Option<u64>,
    }

    pub fn serialize<S: Serializer>(s: &Sphere, out: S) -> Result<S::Ok, S::Error> {
        Form {
            id: s.id,
            label: s.label.clone(),
            center: s.center,
            radius: s.radius,
            velocity: s.velocity,
            appear_at: s.appear_at,
            disappear_at: s.disappear_at,
        }
        .serialize(out)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Sphere, D::Error> {
        let f = Form::deserialize(d)?;
        Ok(Sphere {
            id: f.id,
            label: f.label,
            center: f.center,
            radius: f.radius,
            velocity: f.velocity,
            appear_at: f.appear_at,
            disappear_at: f.disappear_at,
        })
    }
}

/// What an edit the simulation accepted did: applied, or applied and then stopped in the
/// broad phase (the pairs passed the limit, or it refused a body), which the simulation keeps
/// as its last error and a later step or change carries on from. (A refused edit is an
/// `Err` and changed nothing.)
#[derive(Clone, Debug, PartialEq)]
pub enum EditOutcome {
    /// Applied.
    Applied,
    /// Applied, and the broad phase stopped: why.
    Stopped(crate::broadphase::BroadphaseError),
}

impl EditOutcome {
    /// The outcome of one of the simulation's methods: `Ok` applied, [`SceneError::Step`]
    /// applied and stopped, any other error refused.
    pub fn of<T>(result: Result<T, SceneError>) -> Result<EditOutcome, SceneError> {
        match result {
            Ok(_) => Ok(EditOutcome::Applied),
            Err(SceneError::Step { source, .. }) => Ok(EditOutcome::Stopped(source)),
            Err(e) => Err(e),
        }
    }

    /// Why the broad phase stopped, when it did.
    #[must_use]
    pub fn stopped(&self) -> Option<&crate::broadphase::BroadphaseError> {
        match self {
            EditOutcome::Applied => None,
            EditOutcome::Stopped(e) => Some(e),
        }
    }
}

impl Edit {
    /// Applies the edit through the simulation's own method: applied (or applied and
    /// stopped: [`EditOutcome`]), or refused with nothing changed.
    pub fn apply_to(&self, sim: &mut Simulation) -> Result<EditOutcome, SceneError> {
        match self {
            Edit::MoveSphere { id, center } => EditOutcome::of(sim.move_sphere(*id, *center)),
            Edit::AddSphere(sphere) => EditOutcome::of(sim.add_sphere(sphere.clone())),
            Edit::RemoveSphere { id } => EditOutcome::of(sim.remove_sphere(*id)),
            Edit::SetTreeSettings(settings) => EditOutcome::of(sim.set_tree_settings(*settings)),
            Edit::SetBroadphase(kind) => EditOutcome::of(sim.set_broadphase(*kind)),
            Edit::Rebuild => EditOutcome::of(sim.rebuild()),
            Edit::SetPairLimit(limit) => {
                EditOutcome::of(sim.set_pair_limit(usize::try_from(*limit).unwrap_or(usize::MAX)))
            }
        }
    }

    /// Applies the edit to a trace's simulation: the settings, the broad phase, a rebuild
    /// and the pair limit as on a scene; the sphere edits are refused with
    /// [`SceneError::Invalid`] (a trace's boxes come from its file).
    pub fn apply_to_trace(&self, sim: &mut TraceSimulation) -> Result<EditOutcome, SceneError> {
        match self {
            Edit::MoveSphere { .. } | Edit::AddSphere(_) | Edit::RemoveSphere { .. } => {
                Err(SceneError::Invalid {
                    file: "<trace>".to_owned(),
                    message: format!(
                        "cannot {} in a trace: its boxes come from its file",
                        self.describe()
                    ),
                })
            }
            Edit::SetTreeSettings(settings) => EditOutcome::of(sim.set_tree_settings(*settings)),
            Edit::SetBroadphase(kind) => EditOutcome::of(sim.set_broadphase(*kind)),
            Edit::Rebuild => EditOutcome::of(sim.rebuild()),
            Edit::SetPairLimit(limit) => {
                EditOutcome::of(sim.set_pair_limit(usize::try_from(*limit).unwrap_or(usize::MAX)))
            }
        }
    }

    /// A few words for markers and messages: "move sphere 3", "rebuild".
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Edit::MoveSphere { id, .. } => format!("move sphere {id}"),
            Edit::AddSphere(s) => format!("add sphere {}", s.id),
            Edit::RemoveSphere { id } => format!("remove sphere {id}"),
            Edit::SetTreeSettings(_) => "change the tree settings".to_owned(),
            Edit::SetBroadphase(kind) => format!("switch to the {kind} broad phase"),
            Edit::Rebuild => "rebuild the tree".to_owned(),
            Edit::SetPairLimit(limit) => format!("set the pair limit to {limit}"),
        }
    }
}

/// What a [`Recording`] records and rebuilds: a simulation that steps deterministically from
/// a start ([`Replay::Origin`]), can be copied whole (a keyframe) and hashed, and takes the
/// user's [`Edit`]s. Implemented by a scene's [`Simulation`] (the recording files' kind) and
/// a trace's [`TraceSimulation`].
pub trait Replay: Clone {
    /// What a run starts from: a [`Scene`], or a trace with its tree settings
    /// ([`TraceStart`]).
    type Origin: Clone + std::fmt::Debug + PartialEq;
    /// The run of `origin` at its first step on `kind` with `pair_limit`, kept even when that
    /// step passes the limit (as [`Simulation::paused_at_zero`]).
    fn start(
        origin: &Self::Origin,
        kind: BroadphaseKind,
        pair_limit: usize,
    ) -> Result<Self, SceneError>;
    /// Estimated bytes an origin holds (counted in a recording's memory).
    fn origin_bytes(origin: &Self::Origin) -> usize;
    /// The step shown now.
    fn step_index(&self) -> u64;
    /// Takes the next step; an error when the broad phase stopped it
    /// ([`SceneError::Step`]) or there is no next step (the end of a trace: nothing changed).
    fn step(&mut self) -> Result<(), SceneError>;
    /// The report of the current step.
    fn report(&self) -> &StepReport;
    /// The hash of the broad phase's structure (what a recording checks).
    fn structure_hash(&self) -> u64;
    /// Bytes a copy holds (a keyframe's size).
    fn heap_bytes(&self) -> usize;
    /// How many bodies a step moves (the keyframe rule's measure of work).
    fn body_count(&self) -> usize;
    /// Why the last step or change stopped, when it did.
    fn last_error(&self) -> Option<&BroadphaseError>;
    /// The broad phase in use.
    fn broadphase_kind(&self) -> BroadphaseKind;
    /// The candidate-pair limit in use.
    fn pair_limit(&self) -> usize;
    /// Applies `edit`: `Ok` or [`SceneError::Step`] (applied, but the pairs passed the
    /// limit) mean it changed the simulation; any other error means it was refused.
    fn apply_edit(&mut self, edit: &Edit) -> Result<EditOutcome, SceneError>;
}

impl Replay for Simulation {
    type Origin = Scene;
    fn start(scene: &Scene, kind: BroadphaseKind, pair_limit: usize) -> Result<Self, SceneError> {
        Simulation::paused_at_zero(scene, kind, pair_limit)
    }
    fn origin_bytes(scene: &Scene) -> usize {
        scene.spheres.capacity() * std::mem::size_of::<Sphere>()
    }
    fn step_index(&self) -> u64 {
        Simulation::step_index(self)
    }
    fn step(&mut self) -> Result<(), SceneError> {
        Simulation::step(self).map(|_| ())
    }
    fn report(&self) -> &StepReport {
        Simulation::report(self)
    }
    fn structure_hash(&self) -> u64 {
        Simulation::structure_hash(self)
    }
    fn heap_bytes(&self) -> usize {
        Simulation::heap_bytes(self)
    }
    fn body_count(&self) -> usize {
        self.bodies().len()
    }
    fn last_error(&self) -> Option<&BroadphaseError> {
        Simulation::last_error(self)
    }
    fn broadphase_kind(&self) -> BroadphaseKind {
        Simulation::broadphase_kind(self)
    }
    fn pair_limit(&self) -> usize {
        Simulation::pair_limit(self)
    }
    fn apply_edit(&mut self, edit: &Edit) -> Result<EditOutcome, SceneError> {
        edit.apply_to(self)
    }
}

/// Where a trace's run starts: the trace and the tree settings at its first step.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceStart {
    /// The trace.
    pub trace: std::sync::Arc<Trace>,
    /// The tree settings at step 0.
    pub config: TreeConfig,
}

impl Replay for TraceSimulation {
    type Origin = TraceStart;
    fn start(
        origin: &TraceStart,
        kind: BroadphaseKind,
        pair_limit: usize,
    ) -> Result<Self, SceneError> {
        TraceSimulation::paused_at_zero(
            std::sync::Arc::clone(&origin.trace),
            kind,
            origin.config,
            pair_limit,
        )
    }
    fn origin_bytes(_: &TraceStart) -> usize {
        // The trace is shared with the simulation, not copied.
        std::mem::size_of::<TraceStart>()
    }
    fn step_index(&self) -> u64 {
        TraceSimulation::step_index(self)
    }
    fn step(&mut self) -> Result<(), SceneError> {
        Stepper::step(self).map(|_| ())
    }
    fn report(&self) -> &StepReport {
        Stepper::report(self)
    }
    fn structure_hash(&self) -> u64 {
        TraceSimulation::structure_hash(self)
    }
    fn heap_bytes(&self) -> usize {
        TraceSimulation::heap_bytes(self)
    }
    fn body_count(&self) -> usize {
        self.bodies().len()
    }
    fn last_error(&self) -> Option<&BroadphaseError> {
        TraceSimulation::last_error(self)
    }
    fn broadphase_kind(&self) -> BroadphaseKind {
        TraceSimulation::broadphase_kind(self)
    }
    fn pair_limit(&self) -> usize {
        TraceSimulation::pair_limit(self)
    }
    fn apply_edit(&mut self, edit: &Edit) -> Result<EditOutcome, SceneError> {
        edit.apply_to_trace(self)
    }
}

/// An edit with the step it was applied at and what it left.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedEdit {
    /// The step the simulation was at.
    pub step: u64,
    /// What was done.
    pub edit: Edit,
    /// The structural hash after it.
    pub hash: u64,
    /// True when it was applied but the pairs passed the limit.
    pub stopped: bool,
}

/// One step's metrics and structural hash (64 bytes in memory, 60 in a file).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepRecord {
    /// [`Simulation::structure_hash`] after the step.
    pub hash: u64,
    /// Leaves reinserted (fat box recomputed) by the step, new ones not counted.
    pub reinserted: u32,
    /// Spheres that appeared.
    pub appeared: u32,
    /// Spheres that disappeared.
    pub disappeared: u32,
    /// Candidate pairs (fat boxes overlap); 0 when the step stopped.
    pub candidate_pairs: u32,
    /// Contacts (spheres overlap).
    pub contacts: u32,
    /// Height of the tree (0 for the other broad phases).
    pub height: u32,
    /// The least height a tree of this many leaves can have.
    pub min_height: u32,
    /// Leaves of the tree.
    pub leaves: u32,
    /// Nodes of the tree in use.
    pub nodes: u32,
    /// The tree's area ratio (SAH cost).
    pub area_ratio: f32,
    /// Seconds the step spent moving bodies and updating the broad phase (not checked when
    /// rebuilding: times differ).
    pub update_secs: f32,
    /// Seconds the step spent finding pairs and contacts (not checked either).
    pub pairs_secs: f32,
    /// True when the pairs were recomputed.
    pub pairs_recomputed: bool,
    /// True when the step stopped (the broad phase refused a body or passed the pair limit).
    pub stopped: bool,
    /// True when the broad phase is the tree (the tree fields mean something).
    pub has_tree: bool,
    /// True when the tree was rebuilt in the step (wholly or in part).
    pub rebuilt: bool,
}

/// A count as `u32`, saturating (counts of one step stay far below: pairs are bounded by the
/// pair limit, leaves by the scene's sphere limit).
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl StepRecord {
    /// The record of the simulation's current step, from its report.
    #[must_use]
    pub fn of<S: Replay>(sim: &S) -> StepRecord {
        let r: &StepReport = sim.report();
        let tree = r.tree.unwrap_or_default();
        StepRecord {
            hash: sim.structure_hash(),
            reinserted: count(r.reinserted.len()),
            appeared: count(r.appeared.len()),
            disappeared: count(r.disappeared.len()),
            candidate_pairs: count(r.candidate_pairs.len()),
            contacts: count(r.contacts.len()),
            height: tree.height,
            min_height: tree.min_height,
            leaves: count(tree.leaves),
            nodes: count(tree.nodes),
            area_ratio: tree.area_ratio,
            update_secs: r.update_secs as f32,
            pairs_secs: r.pairs_secs as f32,
            pairs_recomputed: r.pairs_recomputed,
            stopped: sim.last_error().is_some(),
            has_tree: r.tree.is_some(),
            rebuilt: r
                .events
                .iter()
                .any(|e| matches!(e, TreeEvent::Rebuild { .. })),
        }
    }

    /// Seconds the step took (update and pairs).
    #[must_use]
    pub fn step_secs(&self) -> f64 {
        f64::from(self.update_secs) + f64::from(self.pairs_secs)
    }

    /// The share of candidate pairs that are not contacts (0 with no pairs).
    #[must_use]
    pub fn false_positive_share(&self) -> f64 {
        if self.candidate_pairs == 0 {
            0.0
        } else {
            1.0 - f64::from(self.contacts) / f64::from(self.candidate_pairs)
        }
    }

    /// The first field (times aside) where `rebuilt` differs from this record, as
    /// "name: recorded X, rebuilt Y"; `None` when they agree.
    #[must_use]
    pub fn difference(&self, rebuilt: &StepRecord) -> Option<String> {
        macro_rules! check {
            ($($field:ident),*) => {$(
                if self.$field != rebuilt.$field {
                    return Some(format!(
                        "{}: recorded {:?}, rebuilt {:?}",
                        stringify!($field).replace('_', " "),
                        self.$field,
                        rebuilt.$field
                    ));
                }
            )*};
        }
        if self.hash != rebuilt.hash {
            return Some(format!(
                "tree hash: recorded {:016x}, rebuilt {:016x}",
                self.hash, rebuilt.hash
            ));
        }
        check!(
            reinserted,
            appeared,
            disappeared,
            candidate_pairs,
            contacts,
            height,
            min_height,
            leaves,
            nodes,
            pairs_recomputed,
            stopped,
            has_tree,
            rebuilt
        );
        if self.area_ratio.to_bits() != rebuilt.area_ratio.to_bits() {
            return Some(format!(
                "area ratio: recorded {}, rebuilt {}",
                self.area_ratio, rebuilt.area_ratio
            ));
        }
        None
    }
}

/// A per-step metric the timeline draws and can jump to the worst of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Leaves reinserted.
    Reinserts,
    /// Candidate pairs.
    CandidatePairs,
    /// Contacts.
    Contacts,
    /// Share of candidate pairs that are not contacts.
    FalsePositiveShare,
    /// Height of the tree.
    Height,
    /// Height above the least possible.
    ExcessHeight,
    /// The tree's area ratio (SAH cost).
    AreaRatio,
    /// Milliseconds the step took.
    StepMs,
}

impl Metric {
    /// Every metric, in the order a timeline lists them.
    pub const ALL: [Metric; 8] = [
        Metric::Reinserts,
        Metric::CandidatePairs,
        Metric::Contacts,
        Metric::FalsePositiveShare,
        Metric::Height,
        Metric::ExcessHeight,
        Metric::AreaRatio,
        Metric::StepMs,
    ];

    /// Its name, for labels.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Metric::Reinserts => "reinserts",
            Metric::CandidatePairs => "candidate pairs",
            Metric::Contacts => "contacts",
            Metric::FalsePositiveShare => "false-positive share",
            Metric::Height => "height",
            Metric::ExcessHeight => "height above least",
            Metric::AreaRatio => "area ratio",
            Metric::StepMs => "step ms",
        }
    }

    /// Its value at a step.
    #[must_use]
    pub fn value(self, r: &StepRecord) -> f64 {
        match self {
            Metric::Reinserts => f64::from(r.reinserted),
            Metric::CandidatePairs => f64::from(r.candidate_pairs),
            Metric::Contacts => f64::from(r.contacts),
            Metric::FalsePositiveShare => r.false_positive_share(),
            Metric::Height => f64::from(r.height),
            Metric::ExcessHeight => f64::from(r.height.saturating_sub(r.min_height)),
            Metric::AreaRatio => f64::from(r.area_ratio),
            Metric::StepMs => r.step_secs() * 1000.0,
        }
    }
}

/// Why a step could not be recorded or rebuilt.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The step is past the last recorded one.
    #[error("step {step} is not in the recording (it holds steps 0 to {last})")]
    NotRecorded {
        /// The step asked for.
        step: u64,
        /// The last recorded step.
        last: u64,
    },
    /// A rebuilt step (or edit) is not the recorded one: the recording does not belong to
    /// this build's simulation, an edit was not recorded, or the file was changed.
    #[error("step {step} rebuilt differs from the recording: {what}")]
    Mismatch {
        /// The step.
        step: u64,
        /// What differs, with both values.
        what: String,
    },
    /// The scene of the recording could not be started.
    #[error("the recording's scene: {0}")]
    Scene(SceneError),
    /// A step was handed to the recording out of order.
    #[error(
        "cannot record step {got}: the recording is at step {last}; steps are recorded one \
         after the other"
    )]
    OutOfOrder {
        /// The step handed over.
        got: u64,
        /// The last recorded step.
        last: u64,
    },
    /// An edit for a simulation that is not at the recording's last step.
    #[error(
        "the simulation is at step {at} but the recording ends at step {last}: an edit is \
         recorded at the end (to act at a past step, resume the recording there first)"
    )]
    NotAtEnd {
        /// The simulation's step.
        at: u64,
        /// The recording's last step.
        last: u64,
    },
    /// An edit meant to replace the last one (the rest of a slider's drag) when no edit was
    /// recorded at that step.
    #[error("no edit was recorded at step {step} for the edit to replace")]
    NoEditToReplace {
        /// The simulation's step.
        step: u64,
    },
    /// Rebuilding was cancelled (opening a recording in the window: its Cancel button).
    #[error("cancelled at step {step}")]
    Cancelled {
        /// The last step rebuilt.
        step: u64,
    },
    /// The step records alone fill the memory budget; nothing more is recorded.
    #[error(
        "the recording is full: {used} bytes used of a budget of {budget} bytes; step {step} \
         was not recorded"
    )]
    Full {
        /// The step that was not recorded.
        step: u64,
        /// Bytes in use.
        used: usize,
        /// The budget.
        budget: usize,
    },
}

/// What a recording holds without keyframes, and what its file holds (for a scene): the start
/// and every step and edit since.
#[derive(Clone)]
pub struct History<S: Replay = Simulation> {
    /// What the run started from: the scene as at step 0 (for a trace, the trace and its
    /// settings at step 0).
    pub scene: S::Origin,
    /// The file the scene was read from, as given (`run` prints it; may be empty).
    pub scene_file: String,
    /// The broad phase the run started with.
    pub broadphase: BroadphaseKind,
    /// The pair limit the run started with.
    pub pair_limit: u64,
    /// One record per step, from step 0: `steps[s]` is step `s`.
    pub steps: Vec<StepRecord>,
    /// The edits, by step (in the order applied).
    pub edits: Vec<RecordedEdit>,
}

impl<S: Replay> std::fmt::Debug for History<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History")
            .field("scene", &self.scene)
            .field("scene_file", &self.scene_file)
            .field("broadphase", &self.broadphase)
            .field("pair_limit", &self.pair_limit)
            .field("steps", &self.steps)
            .field("edits", &self.edits)
            .finish()
    }
}

impl<S: Replay> PartialEq for History<S> {
    fn eq(&self, other: &Self) -> bool {
        self.scene == other.scene
            && self.scene_file == other.scene_file
            && self.broadphase == other.broadphase
            && self.pair_limit == other.pair_limit
            && self.steps == other.steps
            && self.edits == other.edits
    }
}

impl<S: Replay> History<S> {
    /// The history of a run of `scene` (read from `scene_file`) that has just started: `sim`
    /// as [`Replay::start`] made it, step 0 recorded.
    #[must_use]
    pub fn new(scene: &S::Origin, scene_file: &str, sim: &S) -> History<S> {
        History {
            scene: scene.clone(),
            scene_file: scene_file.to_owned(),
            broadphase: sim.broadphase_kind(),
            pair_limit: sim.pair_limit() as u64,
            steps: vec![StepRecord::of(sim)],
            edits: Vec::new(),
        }
    }

    /// Records the step `sim` just made; an error when it is not the next one.
    pub fn push_step(&mut self, sim: &S) -> Result<(), ReplayError> {
        let got = sim.step_index();
        let last = self.last_step();
        if got != last + 1 {
            return Err(ReplayError::OutOfOrder { got, last });
        }
        self.steps.push(StepRecord::of(sim));
        Ok(())
    }

    /// The simulation at step 0, before any edit: exactly as the recorded run started.
    pub fn start(&self) -> Result<S, ReplayError> {
        S::start(
            &self.scene,
            self.broadphase,
            usize::try_from(self.pair_limit).unwrap_or(usize::MAX),
        )
        .map_err(ReplayError::Scene)
    }

    /// The last recorded step (0 for a history of step 0 alone).
    #[must_use]
    pub fn last_step(&self) -> u64 {
        self.steps.len().saturating_sub(1) as u64
    }

    /// Rebuilds `step` from the scene alone (no keyframes): every step and edit up to it is
    /// redone and checked. Its time is that of the recorded steps up to `step`.
    pub fn state_at(&self, step: u64) -> Result<S, ReplayError> {
        let mut sim = self.start()?;
        self.check_step(&sim, 0)?;
        self.replay(&mut sim, step, |_| Ok(()))?;
        Ok(sim)
    }

    /// Checks the simulation's current step against its record.
    fn check_step(&self, sim: &S, step: u64) -> Result<(), ReplayError> {
        let recorded = self.record(step)?;
        match recorded.difference(&StepRecord::of(sim)) {
            None => Ok(()),
            Some(what) => Err(ReplayError::Mismatch { step, what }),
        }
    }

    fn record(&self, step: u64) -> Result<&StepRecord, ReplayError> {
        usize::try_from(step)
            .ok()
            .and_then(|s| self.steps.get(s))
            .ok_or(ReplayError::NotRecorded {
                step,
                last: self.last_step(),
            })
    }

    /// Carries `sim` (at its step, made and checked, its edits not yet applied) to `to`: the
    /// edits of each step, then the next step, each checked; `after_step` sees every step
    /// made (before its edits), and stops the replay with its error. Ends after the edits of
    /// `to`.
    fn replay(
        &self,
        sim: &mut S,
        to: u64,
        mut after_step: impl FnMut(&S) -> Result<(), ReplayError>,
    ) -> Result<(), ReplayError> {
        if to > self.last_step() {
            return Err(ReplayError::NotRecorded {
                step: to,
                last: self.last_step(),
            });
        }
        let mut step = sim.step_index();
        let mut next_edit = self.edits.partition_point(|e| e.step < step);
        loop {
            while let Some(e) = self.edits.get(next_edit).filter(|e| e.step == step) {
                next_edit += 1;
                let outcome = sim.apply_edit(&e.edit);
                let mismatch = |what: String| ReplayError::Mismatch { step, what };
                match outcome {
                    Ok(_) => {}
                    Err(refused) => {
                        // The simulation's own message, without its placeholder file name.
                        return Err(mismatch(format!(
                            "the recorded edit \"{}\" was refused: {}",
                            e.edit.describe(),
                            refused.without_file()
                        )));
                    }
                }
                let (hash, stopped) = (sim.structure_hash(), sim.last_error().is_some());
                if hash != e.hash || stopped != e.stopped {
                    return Err(mismatch(format!(
                        "after the edit \"{}\": recorded tree hash {:016x}{}, rebuilt {:016x}{}",
                        e.edit.describe(),
                        e.hash,
                        if e.stopped { " (stopped)" } else { "" },
                        hash,
                        if stopped { " (stopped)" } else { "" },
                    )));
                }
            }
            if step >= to {
                return Ok(());
            }
            // A stopped step is recorded as such and checked below.
            let _stopped = sim.step().is_err();
            step += 1;
            self.check_step(sim, step)?;
            after_step(sim)?;
        }
    }

    /// Estimated bytes in memory (step records, edits, the start: a scene's listed spheres).
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        self.steps.capacity() * size_of::<StepRecord>()
            + self.edits.capacity() * size_of::<RecordedEdit>()
            + S::origin_bytes(&self.scene)
    }

    /// The same history with its start changed by `f` into another kind of run's (a scene's
    /// history as the window's, which runs a scene or a trace).
    pub fn map_origin<T: Replay>(self, f: impl FnOnce(S::Origin) -> T::Origin) -> History<T> {
        History {
            scene: f(self.scene),
            scene_file: self.scene_file,
            broadphase: self.broadphase,
            pair_limit: self.pair_limit,
            steps: self.steps,
            edits: self.edits,
        }
    }
}

/// When a [`Recording`] takes a keyframe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyframePolicy {
    /// Once the steps since the last keyframe moved this many bodies in all (the sum over
    /// those steps of the simulation's body count: a step's work, and so a jump's, grows with
    /// it), or `max_steps` steps passed. The default, with [`DEFAULT_KEYFRAME_BODY_STEPS`]
    /// and [`DEFAULT_KEYFRAME_MAX_STEPS`].
    Work {
        /// Body-steps between keyframes.
        body_steps: u64,
        /// The most steps between keyframes.
        max_steps: u64,
    },
    /// At every step that is a multiple of this (at least 1).
    Every(u64),
}

impl Default for KeyframePolicy {
    fn default() -> Self {
        KeyframePolicy::Work {
            body_steps: DEFAULT_KEYFRAME_BODY_STEPS,
            max_steps: DEFAULT_KEYFRAME_MAX_STEPS,
        }
    }
}

/// A full copy of the simulation at a step, just after the step (before its edits).
#[derive(Clone)]
struct Keyframe<S> {
    step: u64,
    sim: S,
    bytes: usize,
}

/// The keyframes of a recording and the state of the rule that places them.
#[derive(Clone)]
struct Frames<S> {
    list: Vec<Keyframe<S>>,
    /// The sum of the keyframes' `bytes`.
    bytes: usize,
    policy: KeyframePolicy,
    /// Body-steps from step 0 up to and with each step (`work[s]` for step `s`).
    work: Vec<u64>,
    /// How many keyframes were dropped to stay within the budget.
    dropped: u64,
}

impl<S: Replay> Frames<S> {
    fn new(policy: KeyframePolicy) -> Frames<S> {
        Frames {
            list: Vec::new(),
            bytes: 0,
            policy,
            work: Vec::new(),
            dropped: 0,
        }
    }

    /// Counts step 0 and takes its keyframe (every recording has one).
    fn first(&mut self, sim: &S) {
        self.work.clear();
        self.work.push(sim.body_count() as u64);
        self.add(sim);
    }

    fn add(&mut self, sim: &S) {
        let copy = sim.clone();
        let bytes = copy.heap_bytes();
        self.bytes += bytes;
        self.list.push(Keyframe {
            step: sim.step_index(),
            sim: copy,
            bytes,
        });
    }

    /// Counts the step `sim` just made (step 0 too) and takes a keyframe of it when the
    /// policy says so.
    fn maybe_add(&mut self, sim: &S) {
        let step = sim.step_index();
        let before = self.work.last().copied().unwrap_or(0);
        self.work
            .push(before.saturating_add(sim.body_count() as u64));
        let last = self.list.last().map_or(0, |k| k.step);
        let due = match self.policy {
            KeyframePolicy::Every(k) => step.is_multiple_of(k.max(1)),
            KeyframePolicy::Work {
                body_steps,
                max_steps,
            } => {
                let since = self.at_step(step) - self.at_step(last);
                since >= body_steps || step - last >= max_steps
            }
        };
        if due && self.list.last().is_none_or(|k| k.step < step) {
            self.add(sim);
        }
    }

    /// Body-steps up to and with `step`.
    fn at_step(&self, step: u64) -> u64 {
        let i = usize::try_from(step).unwrap_or(usize::MAX);
        self.work.get(i).or(self.work.last()).copied().unwrap_or(0)
    }

    /// Bytes of the keyframes and the work counts.
    fn memory_bytes(&self) -> usize {
        self.bytes + self.work.capacity() * std::mem::size_of::<u64>()
    }

    /// Drops keyframes (keyframe 0 kept) while they and `fixed` more bytes pass `budget`.
    fn fit(&mut self, fixed: usize, budget: usize) {
        while self.memory_bytes() + fixed > budget && self.list.len() > 1 {
            self.drop_one();
        }
    }

    /// Where keyframe `i` stands in the policy's measure (body-steps, or steps); past the
    /// last keyframe, where the recording ends.
    fn at(&self, i: usize) -> u64 {
        let step = self
            .list
            .get(i)
            .map_or(self.work.len().saturating_sub(1) as u64, |k| k.step);
        match self.policy {
            KeyframePolicy::Work { .. } => self.at_step(step),
            KeyframePolicy::Every(_) => step,
        }
    }

    /// Drops the keyframe (never keyframe 0) whose loss leaves the shortest stretch without
    /// one, in the policy's measure: the keyframes left stay as evenly spread as they can.
    fn drop_one(&mut self) {
        let pick = (1..self.list.len()).min_by(|&a, &b| {
            let gap = |i: usize| self.at(i + 1).saturating_sub(self.at(i - 1));
            gap(a).cmp(&gap(b))
        });
        if let Some(i) = pick {
            let k = self.list.remove(i);
            self.bytes -= k.bytes;
            self.dropped += 1;
        }
    }
}

/// What [`Recording::truncate_after`] discarded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Discarded {
    /// Steps discarded.
    pub steps: u64,
    /// Edits discarded.
    pub edits: usize,
}

/// A recording in memory: a [`History`] and keyframes, within a memory budget. See the
/// module docs for the rules.
#[derive(Clone)]
pub struct Recording<S: Replay = Simulation> {
    history: History<S>,
    frames: Frames<S>,
    budget: usize,
}

impl Recording<Simulation> {
    /// [`Recording::start_from`] a scene: the simulation at step 0 (as
    /// [`Simulation::paused_at_zero`]) and its recording.
    pub fn start(
        scene: &Scene,
        scene_file: &str,
        kind: BroadphaseKind,
        pair_limit: usize,
    ) -> Result<(Recording, Simulation), SceneError> {
        Self::start_from(scene, scene_file, kind, pair_limit)
    }
}

impl<S: Replay> Recording<S> {
    /// Starts `scene` (a scene, a trace: any [`Replay::Origin`]) at step 0 on `kind` with `pair_limit` (as
    /// [`Simulation::paused_at_zero`]) and a recording of it: the simulation to drive, and
    /// the recording to hand its steps and edits to.
    pub fn start_from(
        scene: &S::Origin,
        scene_file: &str,
        kind: BroadphaseKind,
        pair_limit: usize,
    ) -> Result<(Recording<S>, S), SceneError> {
        let sim = S::start(scene, kind, pair_limit)?;
        let history = History::new(scene, scene_file, &sim);
        let mut frames = Frames::new(KeyframePolicy::default());
        frames.first(&sim);
        let rec = Recording {
            history,
            frames,
            budget: DEFAULT_BUDGET_BYTES,
        };
        Ok((rec, sim))
    }

    /// A recording of a history read from a file: every step is rebuilt from the scene and
    /// checked (an error names the first step that differs), taking keyframes on the way.
    pub fn from_history(
        history: History<S>,
        policy: KeyframePolicy,
    ) -> Result<Recording<S>, ReplayError> {
        Self::from_history_with(history, policy, |_| true).map(|(rec, _)| rec)
    }

    /// [`Recording::from_history`] that reports each step rebuilt to `go_on` (called with the
    /// step before it is kept; `false` stops with [`ReplayError::Cancelled`]), and also
    /// returns the simulation at the last step, after its edits (what
    /// [`Recording::state_at`] of the last step gives, without rebuilding it again).
    pub fn from_history_with(
        history: History<S>,
        policy: KeyframePolicy,
        mut go_on: impl FnMut(u64) -> bool,
    ) -> Result<(Recording<S>, S), ReplayError> {
        if !go_on(0) {
            return Err(ReplayError::Cancelled { step: 0 });
        }
        let mut sim = history.start()?;
        history.check_step(&sim, 0)?;
        let mut frames = Frames::new(policy);
        frames.first(&sim);
        // Kept within the budget on the way, so a long file never holds more keyframes than
        // the budget allows.
        let fixed = history.memory_bytes();
        history.replay(&mut sim, history.last_step(), |s| {
            let step = s.step_index();
            if !go_on(step) {
                return Err(ReplayError::Cancelled { step });
            }
            frames.maybe_add(s);
            frames.fit(fixed, DEFAULT_BUDGET_BYTES);
            Ok(())
        })?;
        let rec = Recording {
            history,
            frames,
            budget: DEFAULT_BUDGET_BYTES,
        };
        Ok((rec, sim))
    }

    /// The same recording as another kind of run's, without rebuilding a step: the start is
    /// changed by `origin` and every keyframe by `state` (a scene's recording as the window's,
    /// which runs a scene or a trace).
    pub fn map<T: Replay>(
        self,
        origin: impl FnOnce(S::Origin) -> T::Origin,
        state: impl Fn(S) -> T,
    ) -> Recording<T> {
        let Frames {
            list,
            bytes,
            policy,
            work,
            dropped,
        } = self.frames;
        Recording {
            history: self.history.map_origin(origin),
            frames: Frames {
                list: list
                    .into_iter()
                    .map(|k| Keyframe {
                        step: k.step,
                        sim: state(k.sim),
                        bytes: k.bytes,
                    })
                    .collect(),
                bytes,
                policy,
                work,
                dropped,
            },
            budget: self.budget,
        }
    }

    /// The history (what a file holds).
    #[must_use]
    pub fn history(&self) -> &History<S> {
        &self.history
    }

    /// The per-step records, `steps()[s]` for step `s` (the timeline's tracks).
    #[must_use]
    pub fn steps(&self) -> &[StepRecord] {
        &self.history.steps
    }

    /// The edits in the order applied (the timeline's markers).
    #[must_use]
    pub fn edits(&self) -> &[RecordedEdit] {
        &self.history.edits
    }

    /// The last recorded step.
    #[must_use]
    pub fn last_step(&self) -> u64 {
        self.history.last_step()
    }

    /// The steps at which a keyframe is kept, ascending (0 first).
    #[must_use]
    pub fn keyframe_steps(&self) -> Vec<u64> {
        self.frames.list.iter().map(|k| k.step).collect()
    }

    /// The step where `metric` is greatest (the earliest of equal ones; step 0 when all are
    /// equal).
    #[must_use]
    pub fn worst_step(&self, metric: Metric) -> u64 {
        let mut best = (0u64, f64::NEG_INFINITY);
        for (s, r) in self.history.steps.iter().enumerate() {
            let v = metric.value(r);
            if v > best.1 {
                best = (s as u64, v);
            }
        }
        best.0
    }

    /// Estimated bytes in use: keyframes, step records (and the keyframe rule's count of
    /// each step's work), edits.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.frames.memory_bytes() + self.history.memory_bytes()
    }

    /// The memory budget, bytes.
    #[must_use]
    pub fn budget_bytes(&self) -> usize {
        self.budget
    }

    /// Sets the memory budget (dropping keyframes at once when over it).
    pub fn set_budget_bytes(&mut self, bytes: usize) {
        self.budget = bytes;
        self.enforce_budget();
    }

    /// When keyframes are taken (from now on).
    pub fn set_keyframe_policy(&mut self, policy: KeyframePolicy) {
        self.frames.policy = match policy {
            KeyframePolicy::Every(k) => KeyframePolicy::Every(k.max(1)),
            timed => timed,
        };
    }

    /// The keyframe policy in force.
    #[must_use]
    pub fn keyframe_policy(&self) -> KeyframePolicy {
        self.frames.policy
    }

    /// How many keyframes were dropped to stay within the budget.
    #[must_use]
    pub fn keyframes_dropped(&self) -> u64 {
        self.frames.dropped
    }

    /// Steps `sim` once and records the step; the step's own error (a pair limit) is
    /// returned as [`Simulation::step`] returns it, after recording it.
    /// A step that did not happen (the end of a trace) is not recorded.
    pub fn step(&mut self, sim: &mut S) -> Result<Result<(), SceneError>, ReplayError> {
        let before = sim.step_index();
        let outcome = sim.step();
        if sim.step_index() == before {
            return Ok(outcome);
        }
        self.record_step(sim)?;
        Ok(outcome)
    }

    /// Records the step `sim` just made (call it after every [`Simulation::step`], before any
    /// edit at that step). An error when the step is not the next one, or the recording is
    /// full (then nothing is recorded).
    pub fn record_step(&mut self, sim: &S) -> Result<(), ReplayError> {
        let got = sim.step_index();
        let used = self.memory_bytes();
        if used + std::mem::size_of::<StepRecord>() > self.budget && self.frames.list.len() <= 1 {
            return Err(ReplayError::Full {
                step: got,
                used,
                budget: self.budget,
            });
        }
        self.history.push_step(sim)?;
        self.frames.maybe_add(sim);
        self.enforce_budget();
        Ok(())
    }

    /// Applies `edit` to `sim` and records it when it changed the simulation (any `Ok`
    /// outcome); a refused edit changes nothing and is not recorded. The
    /// simulation must be the one this recording follows, at its last step: one at another
    /// step (a past step shown without [`Recording::resume_at`]) is refused before anything
    /// changes, with [`SceneError::Invalid`].
    pub fn apply(&mut self, sim: &mut S, edit: Edit) -> Result<EditOutcome, SceneError> {
        self.check_at_end(sim).map_err(|e| SceneError::Invalid {
            file: "<recording>".to_owned(),
            message: e.to_string(),
        })?;
        let outcome = sim.apply_edit(&edit)?;
        self.history.edits.push(RecordedEdit {
            step: sim.step_index(),
            edit,
            hash: sim.structure_hash(),
            stopped: sim.last_error().is_some(),
        });
        Ok(outcome)
    }

    /// Records an edit the caller applied to `sim` itself (through [`Edit::apply_to`] or the
    /// method it names), at `sim`'s step; an error, and nothing recorded, when `sim` is not
    /// at the recording's last step.
    pub fn record_edit(&mut self, sim: &S, edit: Edit) -> Result<(), ReplayError> {
        self.check_at_end(sim)?;
        self.history.edits.push(RecordedEdit {
            step: sim.step_index(),
            edit,
            hash: sim.structure_hash(),
            stopped: sim.last_error().is_some(),
        });
        Ok(())
    }

    /// Replaces the last recorded edit by `edit`, which the caller applied to `sim` in its
    /// place (to the simulation as it was before the edit replaced: a slider's drag is one
    /// edit, its newest value). An error, and nothing changed, when `sim` is not at the
    /// recording's last step or the last edit was not made at that step.
    pub fn replace_last_edit(&mut self, sim: &S, edit: Edit) -> Result<(), ReplayError> {
        self.check_at_end(sim)?;
        let at = sim.step_index();
        match self.history.edits.last_mut() {
            Some(last) if last.step == at => {
                *last = RecordedEdit {
                    step: at,
                    edit,
                    hash: sim.structure_hash(),
                    stopped: sim.last_error().is_some(),
                };
                Ok(())
            }
            _ => Err(ReplayError::NoEditToReplace { step: at }),
        }
    }

    /// Ok when `sim` is at the recording's last step.
    fn check_at_end(&self, sim: &S) -> Result<(), ReplayError> {
        let (at, last) = (sim.step_index(), self.last_step());
        if at == last {
            Ok(())
        } else {
            Err(ReplayError::NotAtEnd { at, last })
        }
    }

    /// The simulation exactly as it was at `step`, after the edits made at it: the nearest
    /// keyframe at or before it, then the edits and steps up to it, each step checked.
    pub fn state_at(&self, step: u64) -> Result<S, ReplayError> {
        if step > self.last_step() {
            return Err(ReplayError::NotRecorded {
                step,
                last: self.last_step(),
            });
        }
        let at = self.frames.list.partition_point(|k| k.step <= step);
        let mut sim = match at.checked_sub(1).and_then(|i| self.frames.list.get(i)) {
            Some(k) => k.sim.clone(),
            None => {
                let sim = self.history.start()?;
                self.history.check_step(&sim, 0)?;
                sim
            }
        };
        self.history.replay(&mut sim, step, |_| Ok(()))?;
        Ok(sim)
    }

    /// Discards everything recorded after `step` (the edits made at `step` stay), so the
    /// recording goes on from there; says how much went.
    pub fn truncate_after(&mut self, step: u64) -> Discarded {
        let keep = usize::try_from(step.saturating_add(1)).unwrap_or(usize::MAX);
        let steps = self.history.steps.len().saturating_sub(keep) as u64;
        self.history.steps.truncate(keep.max(1));
        let kept_edits = self.history.edits.partition_point(|e| e.step <= step);
        let edits = self.history.edits.len() - kept_edits;
        self.history.edits.truncate(kept_edits);
        let frames = &mut self.frames;
        let kept_frames = frames.list.partition_point(|k| k.step <= step).max(1);
        for k in frames.list.drain(kept_frames..) {
            frames.bytes -= k.bytes;
        }
        frames.work.truncate(keep.max(1));
        Discarded { steps, edits }
    }

    /// Changing the past: the state at `step` (as [`Recording::state_at`]) with everything
    /// recorded after it discarded. The caller carries on from the returned simulation.
    pub fn resume_at(&mut self, step: u64) -> Result<(S, Discarded), ReplayError> {
        let sim = self.state_at(step)?;
        let discarded = self.truncate_after(step);
        Ok((sim, discarded))
    }

    /// Changes the recording's start and every keyframe in place with `origin` and `state`
    /// (a live trace grown: each takes the longer trace). The caller keeps them what they
    /// were: the same run, from the same start.
    pub fn retarget(&mut self, origin: impl FnOnce(&mut S::Origin), mut state: impl FnMut(&mut S)) {
        origin(&mut self.history.scene);
        for k in &mut self.frames.list {
            state(&mut k.sim);
        }
    }

    /// Drops keyframes (keyframe 0 kept) while over the budget.
    fn enforce_budget(&mut self) {
        self.frames.fit(self.history.memory_bytes(), self.budget);
    }
}
