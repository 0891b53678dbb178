//! The state the views read: the model (simulation and document), the preferences, the view
//! state the views share (plane, world camera, selection, hover, drag), the open windows and
//! the snapshot drawn from the model. It changes only through `State::apply` (`apply.rs`) and
//! the clock (`State::advance_time`), both called by the shell; views get `&State`.

use super::camera::{Plane, WorldCamera, WorldRect};
use super::commands::Command;
use super::files::{ExportFormat, FilePurpose};
use super::history::RecentSteps;
use super::pick::{Pick, SphereDrag};
use super::prefs::{Layers, Prefs};
use super::snapshot::Snapshot;
use crate::broadphase::{BroadphaseError, BroadphaseKind, TreeRef};
use crate::replay::{Edit, Recording, Replay, ReplayError};
use crate::scene::{Scene, SceneError, ViewSettings};
use crate::source::{Origin, Sim};
use crate::tree::Aabb;
use glam::{Vec2, Vec3};
use std::path::PathBuf;

/// The simulation and the document: changed only by `State::apply` and the clock.
pub struct Model {
    /// The scene as last opened or saved, plus settings changed since (what Reset returns to).
    pub doc: Scene,
    /// Its file, if any.
    pub path: Option<PathBuf>,
    /// Unsaved changes.
    pub dirty: bool,
    /// The running simulation: a scene's, or a trace's (then `doc` is a scene made to
    /// describe it: its name, dimensions, bounds as the world, and the tree settings).
    pub sim: Sim,
    /// Bumped on every change of the simulation, so views know when to refresh.
    pub rev: u64,
    /// Playing or paused.
    pub playing: bool,
    /// Fractional steps owed to real time.
    pub step_debt: f32,
    /// The status line.
    pub status: String,
    /// Recent steps, for the charts.
    pub history: RecentSteps,
    /// The result of the last validation, when "validate every step" is on.
    pub validation: Option<Result<(), String>>,
    /// A load or save error to show in a window.
    pub error: Option<String>,
    /// What the failure left as it was, for the error window's last line (one of the
    /// `KEPT_*` sentences: the open document, unsaved changes, the sweep's results).
    pub error_kept: &'static str,
    /// Why the simulation stopped and paused (the pair limit, or a body the broad phase
    /// refused); shown until it runs again.
    pub stopped: Option<String>,
    /// Tree settings to go back to, the latest last ([`Command::Undo`]); cleared when another
    /// document is opened or the scene restarts with new spheres.
    pub undo: Vec<SettingsUndo>,
    /// Frames begun so far (to merge one slider drag into one undo step).
    pub frame: u64,
    /// Bumped when another document is opened or the scene restarts with new spheres (not
    /// by saving, nor by a change of settings): what a result computed on the old one, such
    /// as the Advisor's, checks before it is applied.
    pub document_id: u64,
    /// The engine whose live stream the document is, when it was received through the live
    /// link (File > "Save received stream…" keeps it); `None` for anything else.
    pub received_from: Option<String>,
    /// What the live stream said of itself (its handshake, the engine's step numbers, its
    /// goodbye; the engine's parts are in `engine`), for writing it again as received.
    pub received_info: Option<std::sync::Arc<crate::stream::StreamInfo>>,
    /// The live stream's bytes as they arrived (every accepted frame): what "Save received
    /// stream…" writes, byte for byte what `listen --out` writes of the same session.
    pub received_stream: Option<std::sync::Arc<Vec<u8>>>,
    /// The engine's own broad phase as its stream carried it (its tree, fat boxes and pairs
    /// each step, and their checks), when the document is a stream that carried it.
    pub engine: Option<std::sync::Arc<crate::stream::engine::EngineRecord>>,
    /// Every step and edit since the document was opened or restarted (the timeline's);
    /// `sim` is at its last step, or at a past step the timeline shows.
    pub recording: Recording<Sim>,
    /// What the last command discarded of the recorded future (added to the status line).
    pub discarded: Option<String>,
    /// The last note of a discarded future, with the kind of command that made it and the
    /// frame of the last such command: more commands of that kind, each within a frame of the
    /// one before (the rest of a slider's drag, which discards nothing more), keep it on the
    /// status line, which each of them rewrites.
    pub discard_note: Option<DiscardNote>,
    /// What a restart (Reset, or Apply of the generator) replaced, until the next step or
    /// edit: Undo brings it back, recording and all (a key press must not lose a long run).
    pub before_restart: Option<Box<BeforeRestart>>,
    /// The tree's health sampled by step beside the recording (see `health_monitor.rs`).
    pub health: super::health_monitor::Health,
}

impl Model {
    /// The model of `doc` (from `path`) running `sim` with `recording`, paused, unchanged,
    /// nothing else known yet.
    fn new(doc: Scene, path: Option<PathBuf>, sim: Sim, recording: Recording<Sim>) -> Model {
        Model {
            doc,
            path,
            dirty: false,
            sim,
            rev: 0,
            playing: false,
            step_debt: 0.0,
            status: String::new(),
            history: RecentSteps::default(),
            validation: None,
            error: None,
            error_kept: KEPT_ON_OPEN,
            stopped: None,
            undo: Vec::new(),
            frame: 0,
            document_id: 0,
            received_from: None,
            received_info: None,
            received_stream: None,
            engine: None,
            recording,
            discarded: None,
            discard_note: None,
            before_restart: None,
            health: super::health_monitor::Health::default(),
        }
    }

    /// The broad phase in use (the simulation's).
    #[must_use]
    pub fn kind(&self) -> BroadphaseKind {
        self.sim.broadphase_kind()
    }

    /// The most candidate pairs a step may find (the simulation's; kept across documents).
    #[must_use]
    pub fn pair_limit(&self) -> usize {
        self.sim.pair_limit()
    }
}

/// The most time the clock spends stepping in one frame (see `State::advance_time`).
pub const STEP_BUDGET: std::time::Duration = std::time::Duration::from_millis(40);

/// The error window's last line when opening a file failed.
pub const KEPT_ON_OPEN: &str = "The document that was open is unchanged.";
/// The error window's last line when saving the scene failed.
pub const KEPT_ON_SAVE: &str = "Not saved: your changes are still only in the window (save \
                                them elsewhere with File > Save As…).";
/// The error window's last line when saving the recording failed.
pub const KEPT_ON_SAVE_RECORDING: &str =
    "The recording was not saved: it is still in the window, as is the scene.";
/// The error window's last line when exporting the Advisor's sweep failed.
pub const KEPT_ON_EXPORT: &str = "Nothing was exported: the sweep's results are still in the \
                                  Advisor.";

/// See [`Model::before_restart`]: the document, simulation, recording and the charts'
/// samples a restart replaced (the health readout measures again).
pub struct BeforeRestart {
    /// The document (Apply changed its generator; Reset kept it).
    pub doc: Scene,
    /// Unsaved changes then.
    pub dirty: bool,
    /// The document's id then (results computed on it apply again).
    pub document_id: u64,
    /// The settings' undo steps (Apply cleared them).
    pub undo: Vec<SettingsUndo>,
    /// The simulation, at the step it was shown at.
    pub sim: Sim,
    /// The recording of the run.
    pub recording: Recording<Sim>,
    /// The charts' recent samples.
    pub history: RecentSteps,
    /// What was restarted: "Reset" or "Apply".
    pub what: &'static str,
}

/// See [`Model::discard_note`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscardNote {
    /// The kind of command that discarded the future, or went on with the drag.
    pub kind: std::mem::Discriminant<super::commands::Command>,
    /// The frame of the last such command.
    pub frame: u64,
    /// What was discarded.
    pub text: String,
}

/// One undo step of the tree settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SettingsUndo {
    /// The settings before the change.
    pub settings: crate::tree::TreeConfig,
    /// The one numeric setting the change moved (`"margin"` or `"look-ahead"`), when it moved
    /// only that one: later frames moving the same one (a slider drag) join this step.
    pub field: Option<&'static str>,
    /// The frame of the last change in this step.
    pub frame: u64,
}

/// The name a recording keeps of its scene: the file, or the scene's name.
pub(super) fn recording_name(scene: &Scene, path: Option<&std::path::Path>) -> String {
    path.map_or_else(|| scene.name.clone(), |p| p.display().to_string())
}

/// Why a past step could not be shown (for the status line).
pub(super) fn seek_error(step: u64, e: &ReplayError) -> String {
    format!("Could not show step {step}: {e}.")
}

/// The most undo steps kept.
pub const MAX_UNDO: usize = 100;

/// What the views share about how the model is shown (each view keeps the rest itself).
pub struct ViewState {
    /// Projection plane of 3D scenes.
    pub plane: Plane,
    /// 3D scenes are shown in the orbiting 3D view instead of on `plane` (the "3D" choice
    /// beside the planes; see [`State::shows_world_3d`]).
    pub world_3d: bool,
    /// Bumped whenever the 3D view should fit the world (Fit, a scene opened); the 3D view
    /// fits when it has not fitted for this request yet.
    pub fit_3d_request: u64,
    /// The world camera (saved with the scene).
    pub camera: WorldCamera,
    /// Fit the world at the next frame.
    pub fit_pending: bool,
    /// Bumped whenever the tree should be fitted into its view; the tree view fits when it
    /// has not fitted for this request yet.
    pub tree_fit_request: u64,
    /// The selection.
    pub selection: Option<Pick>,
    /// What the pointer rests on (from the last frame).
    pub hover: Option<Pick>,
    /// The sphere being dragged.
    pub drag: Option<SphereDrag>,
    /// Milliseconds the views spent building meshes so far this frame.
    pub draw_ms: f32,
    /// The same for the whole last frame (what the statistics show).
    pub last_draw_ms: f32,
    /// False in screenshot runs: no hover or input from a stray pointer.
    pub interactive: bool,
    /// A world rectangle a fit frames instead of the world (the `screenshot` command's
    /// `--frame`); `None` for the world.
    pub fit_to: Option<WorldRect>,
}

impl ViewState {
    /// The view of a document just opened: the XY plane, a fit pending, nothing selected.
    fn new(interactive: bool) -> ViewState {
        ViewState {
            plane: Plane::XY,
            world_3d: false,
            fit_3d_request: 1,
            camera: WorldCamera::default(),
            fit_pending: true,
            tree_fit_request: 1,
            selection: None,
            hover: None,
            drag: None,
            draw_ms: 0.0,
            last_draw_ms: 0.0,
            interactive,
            fit_to: None,
        }
    }
}

/// An open file dialog, as asked for by a command.
#[derive(Clone, Debug, PartialEq)]
pub struct FileRequest {
    /// What it is for.
    pub purpose: FilePurpose,
    /// The file it starts beside.
    pub start: Option<PathBuf>,
    /// Counts requests, so a new request replaces an open dialog.
    pub serial: u64,
}

/// Windows and dialogs.
#[derive(Default)]
pub struct Dialogs {
    /// The help window (F1).
    pub help: bool,
    /// A command waiting for "discard unsaved changes?".
    pub confirm: Option<Command>,
    /// A read-only file a save was refused for, waiting for "replace it?".
    pub replace_read_only: Option<PathBuf>,
    /// The file dialog asked for, while it is open.
    pub file: Option<FileRequest>,
    /// The "about" window.
    pub about: bool,
    /// File dialogs asked for so far (the next request's serial).
    pub file_requests: u64,
    /// The Advisor window (the margin sweep).
    pub advisor: bool,
    /// A sweep's result waiting for the file to export it to: its text and format.
    pub export: Option<(String, ExportFormat)>,
    /// The desktop's file dialog may be used (the window; not tests or screenshots).
    pub native: bool,
    /// A recording file being opened on a worker thread (the progress window shows it).
    pub opening: Option<crate::replay::file::LoadJob>,
    /// The "Listen for an engine" window is open.
    pub listen: bool,
    /// The live link, while it listens or receives (the live window shows it).
    pub live: Option<crate::live::LiveJob>,
}

/// Everything the views read; see the module doc.
pub struct State {
    /// The simulation and the document.
    pub model: Model,
    /// The preferences (saved between launches).
    pub prefs: Prefs,
    /// What the views share.
    pub view: ViewState,
    /// Windows and dialogs.
    pub dialogs: Dialogs,
    /// What the views draw, taken from the model once per change.
    pub snapshot: Snapshot,
    snapshot_key: Option<(u64, Plane, bool, bool)>,
    /// The next close request goes through (the user agreed to lose unsaved changes).
    pub allow_close: bool,
    /// A command asked to close the window; the shell does it and clears this.
    pub close_requested: bool,
    /// The window's frame and step rates (what the statistics and the status line say of
    /// the speed).
    pub clock: super::clock::FrameClock,
    /// Slow steps run on the stepping thread (the window); off, every step runs in the frame
    /// (tests and screenshots, whose frames must be alike run after run).
    pub background_steps: bool,
    /// The step running on the stepping thread, if one is.
    stepping: Option<StepJob>,
    /// The comparison running beside the document, if one does (see `compare.rs`).
    pub compare: Option<super::compare::CompareRun>,
    /// Side B one step on, stepped on the stepping thread beside the document's step: taken
    /// when B follows that step.
    pub(super) b_stepped: Option<(Sim, Result<(), SceneError>)>,
}

/// A step running on the stepping thread: a copy of the simulation steps there while the
/// window goes on drawing the one shown and taking input (see `State::advance_time`).
struct StepJob {
    handle: aabb_model::job::Job<(), SteppedPair>,
    /// The model's document and revision when it started: a change since (an edit, a new
    /// setting, another document, the timeline moved) makes its result stale, and it is
    /// dropped; the next step starts from the changed model.
    key: (u64, u64),
}

/// What the stepping thread hands back: the document's simulation one step on, how that
/// step ended and how long it took, and a comparison's side B stepped beside it, if one ran.
type SteppedPair = (
    Sim,
    Result<(), SceneError>,
    std::time::Duration,
    Option<(Sim, Result<(), SceneError>)>,
);

/// A step slower than this (on average) runs on the stepping thread, milliseconds.
pub const BACKGROUND_STEP_MS: f64 = 12.0;

impl State {
    /// The state at step 0 of `scene` (from `path`, if any), with `prefs`. Fails only when the
    /// simulation refuses the scene.
    pub fn new(
        scene: Scene,
        path: Option<PathBuf>,
        prefs: Prefs,
        playing: bool,
        interactive: bool,
    ) -> Result<State, SceneError> {
        let kind = BroadphaseKind::Tree;
        let pair_limit = crate::broadphase::DEFAULT_PAIR_LIMIT;
        let file = recording_name(&scene, path.as_deref());
        let (mut recording, sim) = Recording::start_from(
            &Origin::Scene(Box::new(scene.clone())),
            &file,
            kind,
            pair_limit,
        )?;
        recording.set_budget_bytes(prefs.recording_budget_bytes());
        let model = Model {
            playing,
            ..Model::new(scene, path, sim, recording)
        };
        let mut state = State::around(model, prefs, ViewState::new(interactive));
        state.apply_scene_view();
        state.model.status = state.opened_message();
        state.record_step();
        state.sync_stopped();
        Ok(state)
    }

    /// A copy of this state's document, simulation, recording and charts, its view and
    /// preferences (what a comparison's side B starts as): no dialogs, no running jobs, no
    /// health samples, no comparison of its own.
    pub(super) fn twin(&self) -> State {
        let m = &self.model;
        let model = Model {
            rev: m.rev,
            history: m.history.clone(),
            stopped: m.stopped.clone(),
            frame: m.frame,
            document_id: m.document_id,
            received_from: m.received_from.clone(),
            received_info: m.received_info.clone(),
            received_stream: m.received_stream.clone(),
            engine: m.engine.clone(),
            ..Model::new(
                m.doc.clone(),
                m.path.clone(),
                m.sim.clone(),
                m.recording.clone(),
            )
        };
        let v = &self.view;
        let view = ViewState {
            plane: v.plane,
            world_3d: v.world_3d,
            fit_3d_request: v.fit_3d_request,
            camera: v.camera,
            fit_pending: false,
            tree_fit_request: v.tree_fit_request,
            fit_to: v.fit_to,
            ..ViewState::new(v.interactive)
        };
        State::around(model, self.prefs.clone(), view)
    }

    /// A state of `model`, `prefs` and `view` with nothing else yet: no dialogs, no
    /// snapshot, no running jobs, no comparison.
    fn around(model: Model, prefs: Prefs, view: ViewState) -> State {
        State {
            model,
            prefs,
            view,
            dialogs: Dialogs::default(),
            snapshot: Snapshot::default(),
            snapshot_key: None,
            allow_close: false,
            close_requested: false,
            clock: super::clock::FrameClock::default(),
            background_steps: false,
            stepping: None,
            compare: None,
            b_stepped: None,
        }
    }

    /// The name shown in the title: the file name, or the scene's name.
    #[must_use]
    pub fn document_name(&self) -> String {
        match &self.model.path {
            Some(p) => p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            None => format!("{} (not saved)", self.model.doc.name),
        }
    }

    /// The fat box of a sphere, from the broad phase.
    #[must_use]
    pub fn fat_box(&self, id: u32) -> Option<Aabb<Vec3>> {
        self.model.sim.broadphase().fat_aabb(id)
    }

    /// The world point new spheres get for the coordinate the view plane hides.
    #[must_use]
    pub fn view_center_base(&self) -> Vec3 {
        let w = &self.model.doc.world;
        (w.min + w.max) * 0.5
    }

    /// True when the world is shown in the 3D view: a 3D scene, with "3D" chosen.
    #[must_use]
    pub fn shows_world_3d(&self) -> bool {
        self.view.world_3d && self.model.doc.dimensions == 3
    }

    /// The view settings to save with the scene.
    /// The generator the document's spheres come from: its own, else the one its file says
    /// the listed spheres were made with.
    #[must_use]
    pub fn generator_made_with(&self) -> Option<crate::scene::Generate> {
        self.model.doc.generate.or_else(|| {
            self.model
                .doc
                .view
                .as_ref()
                .and_then(|v| v.generator.as_deref().copied())
        })
    }

    pub(super) fn view_settings(&self) -> ViewSettings {
        ViewSettings {
            center: Some((self.view.camera.center.x, self.view.camera.center.y)),
            zoom: Some(self.view.camera.zoom),
            layers: Some(self.prefs.layers.names()),
            plane: Some(self.view.plane.name().to_owned()),
            branch_letters: self.model.doc.view.as_ref().and_then(|v| v.branch_letters),
            fit_content: self.model.doc.view.as_ref().and_then(|v| v.fit_content),
            caption: self.model.doc.view.as_ref().and_then(|v| v.caption.clone()),
            generator: self.generator_made_with().map(Box::new),
            pair_cost: self.model.doc.view.as_ref().and_then(|v| v.pair_cost),
        }
    }

    /// What fitting the world view frames: the spheres and the tree when the scene asks for
    /// it (`view.fit_content`), else everything with the walls.
    #[must_use]
    pub fn fit_bounds(&self) -> Option<WorldRect> {
        if let Some(r) = self.view.fit_to {
            return Some(r);
        }
        let content = self
            .model
            .doc
            .view
            .as_ref()
            .and_then(|v| v.fit_content)
            .unwrap_or(false);
        if content {
            // A border of a tenth of the content's larger side, so no box touches the edge.
            let framed = self.snapshot.content_bounds().map(|r| {
                // In f64 and kept within f32: the content of a huge world is wider than f32.
                let pad = (0.1 * r.size_f64().max_element()).min(f64::from(f32::MAX)) as f32;
                let lim = Vec2::splat(f32::MAX);
                WorldRect::new(
                    (r.min - Vec2::splat(pad)).max(-lim),
                    (r.max + Vec2::splat(pad)).min(lim),
                )
            });
            framed.or_else(|| self.snapshot.bounds())
        } else {
            self.snapshot.bounds()
        }
    }

    /// The scene's caption, if it has one.
    #[must_use]
    pub fn caption(&self) -> Option<&str> {
        self.model
            .doc
            .view
            .as_ref()
            .and_then(|v| v.caption.as_deref())
    }

    /// Takes camera, layers and plane from the open scene's saved view.
    pub(super) fn apply_scene_view(&mut self) {
        self.view.plane = Plane::XY;
        self.view.fit_pending = true;
        self.view.tree_fit_request += 1;
        self.view.fit_3d_request += 1;
        let Some(view) = self.model.doc.view.clone() else {
            return;
        };
        if self.model.doc.dimensions == 3
            && let Some(plane) = view.plane.as_deref().and_then(Plane::from_name)
        {
            self.view.plane = plane;
        }
        if let Some(names) = &view.layers
            && let Ok(layers) = Layers::from_names(names)
        {
            self.prefs.layers = layers;
        }
        if let (Some((x, y)), Some(zoom)) = (view.center, view.zoom)
            && x.is_finite()
            && y.is_finite()
            && zoom.is_finite()
            && zoom > 0.0
        {
            self.view.camera = WorldCamera {
                center: Vec2::new(x, y),
                zoom,
            };
            self.view.fit_pending = false;
        }
    }

    /// The status line after opening a scene: its name and size, and its warnings (see
    /// [`Scene::warnings`]).
    pub(super) fn opened_message(&self) -> String {
        format!(
            "Opened {} ({} spheres).{}",
            self.document_name(),
            self.model.sim.live_count(),
            self.document_warnings()
        )
    }

    /// The open document's warnings (see [`Scene::warnings`]) for the status line after it
    /// opened: " Warning: ….", one after the other; empty when there are none.
    /// [`WorldRect::huge_note`] of what the world view shows: the snapshot's bounds, or the
    /// document's world when the snapshot is not made yet (just opened or imported).
    #[must_use]
    pub fn huge_world_note(&self) -> Option<String> {
        let world = self.model.doc.world;
        self.snapshot
            .bounds()
            .and_then(|b| b.huge_note())
            .or_else(|| WorldRect::new(world.min.truncate(), world.max.truncate()).huge_note())
    }

    pub(super) fn document_warnings(&self) -> String {
        let kind = self.model.sim.broadphase_kind();
        let work = (kind != crate::broadphase::BroadphaseKind::Tree)
            .then(|| self.model.doc.work_at_start().warning(kind))
            .flatten();
        self.model
            .doc
            .warnings(self.model.pair_limit())
            .iter()
            .chain(work.iter())
            .chain(self.huge_world_note().iter())
            .map(|warning| format!(" Warning: {warning}."))
            .collect()
    }

    /// True when the simulation shown is at a step before the recording's last (the
    /// timeline's playhead was moved back).
    #[must_use]
    pub fn at_past_step(&self) -> bool {
        self.model.sim.step_index() < self.model.recording.last_step()
    }

    /// Before a change at a past step: discards the recorded future after it, so the change
    /// is recorded from there, and notes it for the status line.
    pub(super) fn discard_future(&mut self) {
        if !self.at_past_step() {
            return;
        }
        let step = self.model.sim.step_index();
        let gone = self.model.recording.truncate_after(step);
        self.model.health.truncate_after(step);
        self.model.discarded = Some(format!(
            "Recorded future after step {step} discarded ({} steps, {} edits).",
            gone.steps, gone.edits
        ));
    }

    /// Applies `edit` to the simulation and records it (with [`State::record_edit`]) when
    /// the simulation accepted it: the one path of a change of settings. A refused edit
    /// changes nothing, the recorded future included.
    pub(super) fn apply_edit(
        &mut self,
        edit: Edit,
    ) -> Result<crate::replay::EditOutcome, SceneError> {
        let outcome = Replay::apply_edit(&mut self.model.sim, &edit)?;
        self.record_edit(edit);
        Ok(outcome)
    }

    /// Records an edit the simulation accepted (see [`Recording::record_edit`]), first
    /// discarding the recorded future when it was made at a past step.
    pub(super) fn record_edit(&mut self, edit: Edit) {
        self.model.before_restart = None;
        self.discard_future();
        if let Err(e) = self
            .model
            .recording
            .record_edit(&self.model.sim, edit.clone())
        {
            self.model.discarded = Some(format!("Not recorded: {e}."));
        }
        self.mirror_edit(&edit);
    }

    /// One simulation step, recorded, with its history sample and validation; from a past
    /// step, the recorded future is discarded first.
    /// At a trace's last step it pauses and says so instead.
    pub(super) fn step_once(&mut self) {
        if !self.ready_to_step() {
            return;
        }
        let outcome = match self.model.recording.step(&mut self.model.sim) {
            Ok(outcome) => outcome,
            Err(e) => {
                // The recording is full (or out of step): the step it refused is undone, so
                // the simulation stays the recording's last step, and the clock stops.
                self.model.playing = false;
                self.model.status = format!("Paused: {e}.");
                let last = self.model.recording.last_step();
                if let Ok(sim) = self.model.recording.state_at(last) {
                    self.model.sim = sim;
                }
                self.model.rev += 1;
                return;
            }
        };
        self.after_step(outcome);
    }

    /// What comes before a step: at a trace's end, pause and say so (false: no step);
    /// from a past step, discard the recorded future.
    fn ready_to_step(&mut self) -> bool {
        if !self.at_past_step() && self.model.sim.is_at_end() {
            self.end_of_trace();
            return false;
        }
        self.discard_future();
        // The restarted run went on: what the restart replaced is not brought back.
        self.model.before_restart = None;
        true
    }

    /// What follows a recorded step: the views refresh, the history takes its sample, a
    /// trace's end or a stopped step pauses.
    pub(super) fn after_step(&mut self, outcome: Result<(), SceneError>) {
        self.model.rev += 1;
        self.record_step();
        self.follow_compare(true);
        if self.model.sim.is_at_end() {
            self.end_of_trace();
        }
        if let Err(e) = outcome {
            // Only the broad phase stops a step (`SceneError::Step`); `sync_stopped` pauses
            // and shows why from the simulation's own record of it.
            debug_assert!(matches!(e, SceneError::Step { .. }), "{e}");
            self.sync_stopped();
        }
    }

    /// Starts one step on the stepping thread: a copy of the simulation steps there (a copy
    /// costs a small share of a step this slow) while the window draws the one shown. Steps
    /// here when no thread can be started.
    fn start_step_job(&mut self) {
        if !self.ready_to_step() {
            return;
        }
        let mut sim = self.model.sim.clone();
        let key = (self.model.document_id, self.model.rev);
        // A comparison's B steps there too, when it is where A is (else it follows A here).
        let mut b_sim = self.compare.as_ref().and_then(|c| {
            let b = &c.b;
            (b.model.sim.step_index() == sim.step_index() && !b.at_past_step())
                .then(|| b.model.sim.clone())
        });
        let spawned = aabb_model::job::Job::spawn("stepping", std::sync::Arc::new(()), move |_| {
            let started = std::time::Instant::now();
            let outcome = Replay::step(&mut sim);
            let took = started.elapsed();
            let b = b_sim.take().map(|mut b| {
                let outcome = Replay::step(&mut b);
                (b, outcome)
            });
            (sim, outcome, took, b)
        });
        match spawned {
            Ok(handle) => self.stepping = Some(StepJob { handle, key }),
            Err(_) => self.step_once(),
        }
    }

    /// Takes in the stepping thread's step when it has ended: shown and recorded as a step
    /// made here would be, unless the model changed meanwhile (then it is dropped). Returns
    /// true while a step is still running.
    fn collect_step_job(&mut self) -> bool {
        let Some(job) = self.stepping.take() else {
            return false;
        };
        if !job.handle.is_finished() {
            self.stepping = Some(job);
            return true;
        }
        let key = job.key;
        match job.handle.join() {
            Ok((sim, outcome, took, b_stepped)) => {
                self.clock.stepped(1, took);
                if key != (self.model.document_id, self.model.rev) {
                    return false;
                }
                if sim.step_index() == self.model.sim.step_index() {
                    // A refused step (the pair limit): nothing to record; the simulation's
                    // record of why is shown.
                    self.model.sim = sim;
                    self.model.rev += 1;
                    self.sync_stopped();
                    return false;
                }
                if let Err(e) = self.model.recording.record_step(&sim) {
                    // The recording is full: the step is not taken; the clock stops.
                    self.model.playing = false;
                    self.model.status = format!("Paused: {e}.");
                    return false;
                }
                self.model.sim = sim;
                // B's step beside it is taken as B follows (`follow_compare`), and only then.
                self.b_stepped = b_stepped;
                self.after_step(outcome);
                self.b_stepped = None;
            }
            Err(message) => {
                self.model.playing = false;
                self.model.status = format!(
                    "Paused: a step failed on the stepping thread ({}); the scene is kept at \
                     step {}.",
                    crate::text::excerpt(&message, 200),
                    self.model.sim.step_index()
                );
            }
        }
        false
    }

    /// The engine's own broad phase at the step shown (a received stream's, when its step
    /// carried it).
    #[must_use]
    pub fn engine_step(&self) -> Option<&crate::stream::engine::EngineStep> {
        self.engine_step_at(self.model.sim.step_index())
    }

    /// The engine's own broad phase at trace step `step`, when that step carried it.
    fn engine_step_at(&self, step: u64) -> Option<&crate::stream::engine::EngineStep> {
        self.model.engine.as_deref()?.step_at(step)
    }

    /// The engine's received tree at trace step `step`, when that step carried one.
    #[must_use]
    pub fn engine_tree_at(&self, step: u64) -> Option<&crate::stream::engine::EngineTree> {
        self.engine_step_at(step)?.tree.as_ref()
    }

    /// True when the views show the engine's received tree in place of ours (asked for, and
    /// the document has one; while B shows it beside, A shows ours).
    #[must_use]
    pub fn shows_engine_tree(&self) -> bool {
        self.prefs.views_show_engine_tree
            && self.model.engine.is_some()
            && !(self.compare.is_some() && self.prefs.compare_b_engine_tree)
    }

    /// The pairs the engine missed at the step shown (as far as the record lists them).
    pub fn engine_missed_here(&self) -> impl Iterator<Item = [u32; 2]> + '_ {
        let at = self.model.sim.step_index();
        self.model
            .engine
            .iter()
            .flat_map(|r| r.summary.missed.iter())
            .filter(move |p| p.index == at)
            .map(|p| p.pair)
    }

    /// True while a step runs on the stepping thread.
    #[must_use]
    pub fn stepping_in_background(&self) -> bool {
        self.stepping.is_some()
    }

    /// Pauses at the last step of a trace, saying so.
    fn end_of_trace(&mut self) {
        self.model.playing = false;
        self.model.status = format!("End of the trace at step {}.", self.model.sim.step_index());
    }

    /// Records the current report in the history and validates when asked to.
    pub(super) fn record_step(&mut self) {
        let draw_ms = self.view.last_draw_ms;
        self.model.history.push(self.model.sim.report(), draw_ms);
        if self.prefs.validate_every_step {
            self.model.validation = Some(self.validate_tree());
        }
    }

    /// Checks the tree's invariants (Ok for the other broad phases).
    pub(super) fn validate_tree(&self) -> Result<(), String> {
        match self.model.sim.broadphase().tree_view() {
            Some(TreeRef::D2(tree)) => tree.validate().map_err(|e| e.to_string()),
            Some(TreeRef::D3(tree)) => tree.validate().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    /// Pauses and says why when the simulation's last step or change stopped in the broad
    /// phase (the pair limit, or a body it refused); clears the message once it runs again.
    /// The scene is kept either way.
    pub(super) fn sync_stopped(&mut self) {
        match self.model.sim.last_error() {
            Some(e) => {
                let mut message = format!("Step {}: {e}.", self.model.sim.step_index());
                if matches!(e, BroadphaseError::PairLimit { .. }) {
                    message.push_str(" The scene is kept: change one of these, then play on.");
                }
                if self.model.stopped.as_ref() != Some(&message) {
                    self.model.playing = false;
                    self.model.status = format!("Paused: {message}");
                    self.model.stopped = Some(message);
                }
            }
            None => self.model.stopped = None,
        }
    }

    /// Starts a frame's bookkeeping: the last frame's drawing time becomes what the
    /// statistics show.
    pub(super) fn begin_frame(&mut self) {
        self.model.frame += 1;
        self.view.last_draw_ms = self.view.draw_ms;
        self.view.draw_ms = 0.0;
    }

    /// The clock: runs the steps owed to `dt_secs` of real time while playing (`speed` steps
    /// per 1/60 s), at most 16 a frame and for at most [`STEP_BUDGET`] of stepping, so a slow
    /// step cannot hold the window: what is owed beyond is dropped (the run falls behind real
    /// time, and the status line says so). Returns true while playing (the shell asks for the
    /// next frame).
    pub(super) fn advance_time(&mut self, dt_secs: f32) -> bool {
        let running = self.collect_step_job();
        if !self.model.playing {
            self.model.step_debt = 0.0;
            return running;
        }
        if running {
            // One step at a time: the window draws on while it runs.
            return true;
        }
        self.model.step_debt += dt_secs * 60.0 * self.prefs.speed.max(0.0);
        let steps = (self.model.step_debt.floor() as u32).min(16);
        self.model.step_debt = (self.model.step_debt - steps as f32).min(1.0);
        if steps > 0
            && self.background_steps
            && self
                .clock
                .step_ms()
                .is_some_and(|ms| ms > BACKGROUND_STEP_MS)
        {
            // A slow step runs on the stepping thread; the rest owed is dropped (the run
            // falls behind real time, and the status line says so).
            self.model.step_debt = 0.0;
            self.start_step_job();
            return true;
        }
        let started = std::time::Instant::now();
        let mut ran = 0;
        for _ in 0..steps {
            self.step_once();
            ran += 1;
            if !self.model.playing || started.elapsed() >= STEP_BUDGET {
                // A step stopped (the pair limit), or this frame's stepping took its share:
                // the rest of this frame's steps are not run.
                break;
            }
        }
        self.clock.stepped(ran, started.elapsed());
        if let Some(note) = self.model.discarded.take() {
            // Played on from a past step.
            self.model.status = note;
        }
        if steps > 0 {
            self.model.discard_note = None;
        }
        true
    }

    /// Takes a new snapshot when the model or the plane changed since the last one (a 2D
    /// scene is always seen on the XY plane), and drops a selection it no longer holds.
    pub(super) fn refresh_snapshot(&mut self) {
        if self.model.doc.dimensions != 3 {
            self.view.plane = Plane::XY;
        }
        let engine_tree = self.shows_engine_tree();
        let engine_parts = self.prefs.show_engine_tree;
        let key = (self.model.rev, self.view.plane, engine_tree, engine_parts);
        if self.snapshot_key == Some(key) {
            return;
        }
        self.snapshot.refresh(&self.model.sim, self.view.plane);
        if engine_tree {
            // The record is shared (an `Arc`): the tree is read in place while the snapshot
            // changes.
            let record = self.model.engine.clone();
            let at = self.model.sim.step_index();
            let step = record.as_deref().and_then(|r| r.step_at(at));
            if let Some(tree) = step.and_then(|s| s.tree.as_ref()) {
                self.snapshot.use_tree(tree, self.view.plane);
            }
        }
        self.snapshot
            .set_walls(&self.model.doc.world, self.view.plane);
        self.snapshot.engine_pairs.clear();
        if engine_parts && let Some(step) = self.engine_step() {
            // The engine's pairs, each with why it exists, for the world view's colours.
            let tight: Vec<crate::stream::engine::WireBox> = self
                .model
                .sim
                .boxes()
                .iter()
                .map(|b| crate::stream::engine::WireBox {
                    id: b.id,
                    min: b.tight.min.to_array(),
                    max: b.tight.max.to_array(),
                })
                .collect();
            let margin = self.model.engine.as_deref().and_then(|e| e.summary.margin);
            let dims = self.model.sim.dimensions();
            let classes = crate::stream::engine::classify_step(step, &tight, margin, dims);
            let pairs = classes.into_iter().filter_map(|([a, b], class)| {
                Some((
                    self.snapshot.sphere_index(a)?,
                    self.snapshot.sphere_index(b)?,
                    class,
                ))
            });
            let pairs: Vec<_> = pairs.collect();
            self.snapshot.engine_pairs = pairs;
        }
        self.snapshot_key = Some(key);
        // Branch selections and hovers name nodes, which a change of the tree may reuse.
        if let Some(Pick::Node(n)) = self.view.selection
            && self.snapshot.node_index(n).is_none()
        {
            self.view.selection = None;
        }
        if let Some(Pick::Sphere(id)) = self.view.selection
            && self.snapshot.sphere(id).is_none()
        {
            self.view.selection = None;
        }
    }
}
