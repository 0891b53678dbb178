//! [`Sim`]: what is stepped, a scene's [`Simulation`] or a trace's [`TraceSimulation`],
//! behind one type, so the window's model, its recording
//! ([`Recording<Sim>`](crate::replay::Recording)), its views and `compare` read one thing. What both do (stepping, the tree settings, the broad phase,
//! rebuild, the pair limit, the report, the broad phase to draw) is a method here; what only
//! a scene does (its spheres: add, move, delete, generate, save) goes through
//! [`Sim::spheres_mut`], which refuses for a trace with a message saying why.

use crate::broadphase::{Body, Broadphase, BroadphaseError, BroadphaseKind};
use crate::replay::{Edit, EditOutcome, History, Replay, TraceStart};
use crate::scene::{Scene, SceneError, Simulation, StepReport};
use crate::stream::StreamInfo;
use crate::trace::{Stepper, TraceSimulation};
use crate::tree::TreeConfig;

/// Why a trace refuses an edit of spheres (the status line's words).
pub const TRACE_HAS_NO_SPHERES: &str =
    "A trace's boxes come from its file: they cannot be added, moved, deleted or generated";

/// Why a trace is not saved (the tooltip and the status line).
pub const TRACE_IS_INPUT: &str =
    "A trace is input, not a document: it is not saved (open a scene to save one)";

/// Why a trace's run is not saved as a recording (the tooltip and the status line).
pub const TRACE_HAS_NO_RECORDING_FILE: &str = "A trace is its own record: its run is not saved as a recording (open the trace again to replay it)";

/// The window's simulation: a scene's or a trace's.
#[derive(Clone)]
pub enum Sim {
    /// A scene's spheres.
    Scene(Simulation),
    /// A trace's boxes.
    Trace(TraceSimulation),
}

/// What a [`Sim`] starts from (its recording's [`Replay::Origin`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// A scene (boxed: a scene is ten times the size of a trace's start).
    Scene(Box<Scene>),
    /// A trace and its tree settings at step 0.
    Trace(TraceStart),
}

/// `config` with the fattening margin and the velocity look-ahead replaced where given.
#[must_use]
pub fn tree_with(
    mut config: TreeConfig,
    margin: Option<f32>,
    lookahead: Option<f32>,
) -> TreeConfig {
    if let Some(m) = margin {
        config.margin = m;
    }
    if let Some(l) = lookahead {
        config.velocity_lookahead = l;
    }
    config
}

/// A file opened as what is stepped (see [`open`]).
#[derive(Debug)]
pub struct Opened {
    /// A scene from its start, or a trace on the default tree settings.
    pub origin: Origin,
    /// A stream file's own account (its engine, steps it dropped, an early stop); `None` for
    /// a scene or a text trace.
    pub stream: Option<StreamInfo>,
}

/// Why a file could not be opened as a scene or a trace (the message names the file).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// A scene file that does not read or breaks a rule.
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// A text trace or a stream file that does not read.
    #[error(transparent)]
    Trace(#[from] crate::stream::StreamError),
}

/// Opens the file at `path` as what `run`, `sweep` and the window step: a trace (a text
/// trace or a stream file, told by its first bytes as [`crate::fileio::open_as`] tells) on
/// the default tree settings, else a scene.
pub fn open(path: &std::path::Path) -> Result<Opened, OpenError> {
    if crate::trace::is_trace_path(path) {
        let (trace, stream) = crate::stream::open_trace(path)?;
        let origin = Origin::Trace(TraceStart {
            trace: std::sync::Arc::new(trace),
            config: TreeConfig::default(),
        });
        return Ok(Opened { origin, stream });
    }
    let scene = Scene::load(path)?;
    Ok(Opened {
        origin: Origin::Scene(Box::new(scene)),
        stream: None,
    })
}

impl Origin {
    /// The scene's or the trace's name.
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Origin::Scene(scene) => &scene.name,
            Origin::Trace(t) => t.trace.name(),
        }
    }

    /// 2 or 3.
    #[must_use]
    pub fn dimensions(&self) -> u8 {
        match self {
            Origin::Scene(scene) => scene.dimensions,
            Origin::Trace(t) => t.trace.dimensions(),
        }
    }

    /// The moving bodies a summary counts: a scene's spheres (listed and generated), the
    /// most boxes a step of the trace holds.
    #[must_use]
    pub fn moving_count(&self) -> usize {
        match self {
            Origin::Scene(scene) => scene.sphere_count(),
            Origin::Trace(t) => t.trace.max_boxes(),
        }
    }

    /// The most bodies a broad phase of it holds at once: a scene's spheres and static
    /// boxes, the most boxes a step of the trace holds.
    #[must_use]
    pub fn body_count(&self) -> usize {
        match self {
            Origin::Scene(scene) => scene.body_count(),
            Origin::Trace(t) => t.trace.max_boxes(),
        }
    }

    /// The tree settings it starts with (a scene's own; a trace's as chosen).
    #[must_use]
    pub fn tree_settings(&self) -> TreeConfig {
        match self {
            Origin::Scene(scene) => scene.tree,
            Origin::Trace(t) => t.config,
        }
    }

    /// What a pair test costs the engine, in node visits: a scene's own (see
    /// [`Scene::pair_cost`]), 1 for a trace (a stream's timings give the engine's own: see
    /// [`crate::stream::engine::CostFit`]).
    #[must_use]
    pub fn pair_cost(&self) -> f64 {
        match self {
            Origin::Scene(scene) => scene.pair_cost(),
            Origin::Trace(_) => 1.0,
        }
    }

    /// The work a broad phase other than the tree does at its first step (see
    /// [`crate::broadphase::Work`]).
    #[must_use]
    pub fn work_at_start(&self) -> crate::broadphase::Work {
        match self {
            Origin::Scene(scene) => scene.work_at_start(),
            Origin::Trace(t) => t.trace.work_at(0),
        }
    }

    /// `self` with the fattening margin and the velocity look-ahead replaced where given
    /// (nothing is checked here: see [`Origin::validate`]).
    #[must_use]
    pub fn with_margin(self, margin: Option<f32>, lookahead: Option<f32>) -> Origin {
        let config = tree_with(self.tree_settings(), margin, lookahead);
        self.with_tree_settings(config)
    }

    /// `self` on tree settings `config`.
    #[must_use]
    pub fn with_tree_settings(self, config: TreeConfig) -> Origin {
        match self {
            Origin::Scene(mut scene) => {
                scene.tree = config;
                Origin::Scene(scene)
            }
            Origin::Trace(t) => Origin::Trace(TraceStart { config, ..t }),
        }
    }

    /// Checks it can start: a scene's rules (see [`Scene::validate`]; `file` names it in the
    /// message), a trace's tree settings.
    pub fn validate(&self, file: &str) -> Result<(), SceneError> {
        match self {
            Origin::Scene(scene) => scene.validate(file),
            Origin::Trace(t) => t.config.check().map_err(|e| SceneError::Invalid {
                file: file.to_owned(),
                message: format!("tree settings: {e}"),
            }),
        }
    }

    /// The steps a run of it may take after its first: none for a scene (it has no end),
    /// the trace's steps after step `start`.
    #[must_use]
    pub fn steps_after(&self, start: usize) -> Option<u64> {
        match self {
            Origin::Scene(_) => None,
            Origin::Trace(t) => Some(t.trace.step_count().saturating_sub(start + 1) as u64),
        }
    }
}

impl Sim {
    /// A simulation of `origin` on tree settings `config`, from step `start`: a trace's step
    /// (its broad phase built from that step's boxes), a scene's step 0 (a scene has no
    /// other start: any other is an error). Errors when the start cannot be built or passes
    /// the pair limit.
    pub fn starting_at(
        origin: &Origin,
        start: usize,
        config: TreeConfig,
        kind: BroadphaseKind,
        pair_limit: usize,
    ) -> Result<Sim, SceneError> {
        match origin {
            Origin::Scene(scene) => {
                if start != 0 {
                    return Err(SceneError::Invalid {
                        file: scene.name.clone(),
                        message: format!("a scene starts at step 0, not at step {start}"),
                    });
                }
                let scene = Scene {
                    tree: config,
                    ..Scene::clone(scene)
                };
                Simulation::with_pair_limit(&scene, kind, pair_limit).map(Sim::Scene)
            }
            Origin::Trace(t) => TraceSimulation::starting_at(
                std::sync::Arc::clone(&t.trace),
                start,
                kind,
                config,
                pair_limit,
            )
            .map(Sim::Trace),
        }
    }

    /// What a run from the step shown starts from, and the step: a scene as it is now
    /// (spheres where they are, its tree settings) from its step 0, or the trace on the tree
    /// settings in use from the step shown.
    #[must_use]
    pub fn here(&self) -> (Origin, usize) {
        match self {
            Sim::Scene(s) => (Origin::Scene(Box::new(s.scene())), 0),
            Sim::Trace(t) => (
                Origin::Trace(TraceStart {
                    trace: std::sync::Arc::clone(t.trace()),
                    config: t.tree_settings(),
                }),
                usize::try_from(t.step_index()).unwrap_or(usize::MAX),
            ),
        }
    }

    /// A scene's static boxes (level geometry), sorted by id; none for a trace (its static
    /// boxes are among [`Sim::boxes`]).
    #[must_use]
    pub fn static_boxes(&self) -> &[crate::scene::StaticBox] {
        self.as_scene().map_or(&[], Simulation::static_boxes)
    }

    /// The scene's simulation; `None` for a trace.
    #[must_use]
    pub fn as_scene(&self) -> Option<&Simulation> {
        match self {
            Sim::Scene(s) => Some(s),
            Sim::Trace(_) => None,
        }
    }

    /// The trace's simulation; `None` for a scene.
    #[must_use]
    pub fn as_trace(&self) -> Option<&TraceSimulation> {
        match self {
            Sim::Scene(_) => None,
            Sim::Trace(t) => Some(t),
        }
    }

    /// True for a trace.
    #[must_use]
    pub fn is_trace(&self) -> bool {
        matches!(self, Sim::Trace(_))
    }

    /// The scene's simulation, to edit its spheres; for a trace an error saying it has none
    /// to edit ([`TRACE_HAS_NO_SPHERES`]).
    pub fn spheres_mut(&mut self) -> Result<&mut Simulation, SceneError> {
        match self {
            Sim::Scene(s) => Ok(s),
            Sim::Trace(_) => Err(SceneError::Invalid {
                file: "<trace>".to_owned(),
                message: TRACE_HAS_NO_SPHERES.to_owned(),
            }),
        }
    }

    /// The scene's bodies (spheres, alive or not); none for a trace (its boxes:
    /// [`TraceSimulation::bodies`]).
    #[must_use]
    pub fn spheres(&self) -> &[crate::scene::SphereBody] {
        self.as_scene().map_or(&[], Simulation::bodies)
    }

    /// The scene as it is now (spheres where they are; see [`Simulation::scene`]); `None`
    /// for a trace.
    #[must_use]
    pub fn scene(&self) -> Option<Scene> {
        self.as_scene().map(Simulation::scene)
    }

    /// The hash of the broad phase's structure (what a recording checks).
    #[must_use]
    pub fn structure_hash(&self) -> u64 {
        Replay::structure_hash(self)
    }

    /// Live bodies: spheres alive, or the boxes of the trace's step (static ones included).
    #[must_use]
    pub fn live_count(&self) -> usize {
        match self {
            Sim::Scene(s) => s.bodies().iter().filter(|b| b.alive).count(),
            Sim::Trace(t) => t.bodies().len(),
        }
    }

    /// A trace's current step's boxes (static ones included), sorted by id; none for a
    /// scene.
    #[must_use]
    pub fn boxes(&self) -> &[Body] {
        self.as_trace().map_or(&[], TraceSimulation::bodies)
    }

    /// True at a trace's last step (a scene has no end).
    #[must_use]
    pub fn is_at_end(&self) -> bool {
        self.as_trace().is_some_and(TraceSimulation::is_at_end)
    }

    /// "step N" for a scene, "step N of LAST" for a trace (the views' overlays).
    #[must_use]
    pub fn step_text(&self) -> String {
        match self {
            Sim::Scene(s) => format!("step {}", s.step_index()),
            Sim::Trace(t) => format!("step {} of {}", t.step_index(), t.trace().step_count() - 1),
        }
    }

    /// The step shown now.
    #[must_use]
    pub fn step_index(&self) -> u64 {
        Replay::step_index(self)
    }

    /// The report of the current step.
    #[must_use]
    pub fn report(&self) -> &StepReport {
        Replay::report(self)
    }

    /// The broad phase (fat boxes, the tree to draw).
    #[must_use]
    pub fn broadphase(&self) -> &dyn Broadphase {
        match self {
            Sim::Scene(s) => s.broadphase(),
            Sim::Trace(t) => t.broadphase(),
        }
    }

    /// Why the last step or change stopped, when it did.
    #[must_use]
    pub fn last_error(&self) -> Option<&BroadphaseError> {
        Replay::last_error(self)
    }

    /// The broad phase in use.
    #[must_use]
    pub fn broadphase_kind(&self) -> BroadphaseKind {
        Replay::broadphase_kind(self)
    }

    /// The candidate-pair limit.
    #[must_use]
    pub fn pair_limit(&self) -> usize {
        Replay::pair_limit(self)
    }

    /// The tree settings in use.
    #[must_use]
    pub fn tree_settings(&self) -> TreeConfig {
        match self {
            Sim::Scene(s) => s.tree_settings(),
            Sim::Trace(t) => t.tree_settings(),
        }
    }

    /// 2 or 3.
    #[must_use]
    pub fn dimensions(&self) -> u8 {
        match self {
            Sim::Scene(s) => s.dimensions(),
            Sim::Trace(t) => t.dimensions(),
        }
    }

    /// Takes `longer`, this trace with more steps, in place of the one a trace's run replays
    /// (see [`TraceSimulation::grow_trace`]); a scene's run is unchanged.
    pub fn grow_trace(&mut self, longer: &std::sync::Arc<crate::trace::Trace>) {
        if let Sim::Trace(t) = self {
            t.grow_trace(std::sync::Arc::clone(longer));
        }
    }

    /// New tree settings at once (see [`Simulation::set_tree_settings`]).
    pub fn set_tree_settings(&mut self, settings: TreeConfig) -> Result<EditOutcome, SceneError> {
        self.apply_edit(&Edit::SetTreeSettings(settings))
    }

    /// Another broad phase (see [`Simulation::set_broadphase`]).
    pub fn set_broadphase(&mut self, kind: BroadphaseKind) -> Result<EditOutcome, SceneError> {
        self.apply_edit(&Edit::SetBroadphase(kind))
    }

    /// A new candidate-pair limit (see [`Simulation::set_pair_limit`]).
    pub fn set_pair_limit(&mut self, limit: usize) -> Result<EditOutcome, SceneError> {
        self.apply_edit(&Edit::SetPairLimit(limit as u64))
    }

    /// A full rebuild of the tree (see [`Simulation::rebuild`]).
    pub fn rebuild(&mut self) -> Result<EditOutcome, SceneError> {
        self.apply_edit(&Edit::Rebuild)
    }
}

impl Replay for Sim {
    type Origin = Origin;
    fn start(origin: &Origin, kind: BroadphaseKind, pair_limit: usize) -> Result<Sim, SceneError> {
        Ok(match origin {
            Origin::Scene(scene) => {
                Sim::Scene(<Simulation as Replay>::start(scene, kind, pair_limit)?)
            }
            Origin::Trace(t) => {
                Sim::Trace(<TraceSimulation as Replay>::start(t, kind, pair_limit)?)
            }
        })
    }
    fn origin_bytes(origin: &Origin) -> usize {
        match origin {
            Origin::Scene(scene) => Simulation::origin_bytes(scene),
            Origin::Trace(t) => TraceSimulation::origin_bytes(t),
        }
    }
    fn step_index(&self) -> u64 {
        match self {
            Sim::Scene(s) => s.step_index(),
            Sim::Trace(t) => t.step_index(),
        }
    }
    fn step(&mut self) -> Result<(), SceneError> {
        match self {
            Sim::Scene(s) => s.step().map(|_| ()),
            Sim::Trace(t) => Stepper::step(t).map(|_| ()),
        }
    }
    fn report(&self) -> &StepReport {
        match self {
            Sim::Scene(s) => s.report(),
            Sim::Trace(t) => Stepper::report(t),
        }
    }
    fn structure_hash(&self) -> u64 {
        match self {
            Sim::Scene(s) => s.structure_hash(),
            Sim::Trace(t) => t.structure_hash(),
        }
    }
    fn heap_bytes(&self) -> usize {
        match self {
            Sim::Scene(s) => s.heap_bytes(),
            Sim::Trace(t) => t.heap_bytes(),
        }
    }
    fn body_count(&self) -> usize {
        match self {
            Sim::Scene(s) => Replay::body_count(s),
            Sim::Trace(t) => Replay::body_count(t),
        }
    }
    fn last_error(&self) -> Option<&BroadphaseError> {
        match self {
            Sim::Scene(s) => s.last_error(),
            Sim::Trace(t) => t.last_error(),
        }
    }
    fn broadphase_kind(&self) -> BroadphaseKind {
        match self {
            Sim::Scene(s) => s.broadphase_kind(),
            Sim::Trace(t) => t.broadphase_kind(),
        }
    }
    fn pair_limit(&self) -> usize {
        match self {
            Sim::Scene(s) => s.pair_limit(),
            Sim::Trace(t) => t.pair_limit(),
        }
    }
    fn apply_edit(&mut self, edit: &Edit) -> Result<EditOutcome, SceneError> {
        match self {
            Sim::Scene(s) => edit.apply_to(s),
            Sim::Trace(t) => edit.apply_to_trace(t),
        }
    }
}

impl Stepper for Sim {
    fn step(&mut self) -> Result<&StepReport, SceneError> {
        match self {
            Sim::Scene(s) => s.step(),
            Sim::Trace(t) => Stepper::step(t),
        }
    }
    fn report(&self) -> &StepReport {
        Replay::report(self)
    }
    fn work_counts(&self) -> Option<crate::tree::WorkCounts> {
        match self {
            Sim::Scene(s) => s.work_counts(),
            Sim::Trace(t) => Stepper::work_counts(t),
        }
    }
    fn steps_left(&self) -> Option<u64> {
        match self {
            Sim::Scene(_) => None,
            Sim::Trace(t) => Stepper::steps_left(t),
        }
    }
}

/// The history of a window's recording as a recording file holds it (see
/// [`crate::replay::file::save`]): a scene's; `None` for a trace's (a trace is its own
/// record and has no recording file).
#[must_use]
pub fn scene_history(history: &History<Sim>) -> Option<History<Simulation>> {
    let Origin::Scene(scene) = &history.scene else {
        return None;
    };
    let scene = Scene::clone(scene);
    Some(history.clone().map_origin(|_| scene))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::DEFAULT_PAIR_LIMIT;
    use crate::replay::Recording;

    #[test]
    fn a_scenes_window_history_is_the_scenes_file_history() {
        let scene = Scene::builtin_default();
        let origin = Origin::Scene(Box::new(scene.clone()));
        let (mut rec, mut sim) =
            Recording::<Sim>::start_from(&origin, "b", BroadphaseKind::Tree, DEFAULT_PAIR_LIMIT)
                .expect("starts");
        let (mut plain, mut plain_sim) =
            Recording::start(&scene, "b", BroadphaseKind::Tree, DEFAULT_PAIR_LIMIT)
                .expect("starts");
        for _ in 0..5 {
            rec.step(&mut sim).expect("recorded").expect("stepped");
            plain
                .step(&mut plain_sim)
                .expect("recorded")
                .expect("stepped");
        }
        rec.apply(&mut sim, Edit::Rebuild).expect("applied");
        plain.apply(&mut plain_sim, Edit::Rebuild).expect("applied");
        let mut got = scene_history(rec.history()).expect("a scene's");
        let mut want = plain.history().clone();
        // Times differ run to run; everything else is the same.
        for s in got.steps.iter_mut().chain(want.steps.iter_mut()) {
            s.update_secs = 0.0;
            s.pairs_secs = 0.0;
        }
        assert_eq!(got, want);
    }
}
