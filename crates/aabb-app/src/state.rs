//! The state the views read: the model (simulation and document), the preferences, the view
//! state the views share (plane, world camera, selection, hover, drag), the open windows and
//! the snapshot drawn from the model. It changes only through `State::apply` (`apply.rs`) and
//! the clock (`State::advance_time`), both called by the shell; views get `&State`.

use super::camera::{Plane, WorldCamera, WorldRect};
use super::commands::Command;
use super::files::{ExportFormat, FilePurpose};
use super::history::RecentSteps;
use super::pane::Pane;
use super::pick::{Pick, SphereDrag};
use super::prefs::{Layers, Prefs};
use super::snapshot::Snapshot;
use crate::broadphase::TreeRef;
use crate::replay::{Discarded, Replay, ReplayError};
use crate::scene::{Scene, SceneError, ViewSettings};
use crate::session::{NotStepped, Session, Start};
use crate::source::Sim;
use glam::Vec2;
use std::path::PathBuf;

/// What the window keeps of the run beside the session (the thing debugged, in the model):
/// the clock, the status line, the charts' samples and the error window.
pub struct Model {
    /// Playing or paused.
    pub playing: bool,
    /// Fractional steps owed to real time.
    pub step_debt: f32,
    /// The status line.
    pub status: String,
    /// Recent steps, for the charts.
    pub history: RecentSteps,
    /// The charts' samples of the run a restart replaced, brought back with it by Undo.
    pub(super) history_before_restart: Option<RecentSteps>,
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
    /// Frames begun so far (a slider's drag is the edits of consecutive frames).
    pub frame: u64,
    /// What the last command discarded of the recorded future (added to the status line).
    pub discarded: Option<String>,
    /// The last note of a discarded future, with the kind of command that made it and the
    /// frame of the last such command: more commands of that kind, each within a frame of the
    /// one before (the rest of a slider's drag, which discards nothing more), keep it on the
    /// status line, which each of them rewrites.
    pub discard_note: Option<DiscardNote>,
    /// The tree's health sampled by step beside the recording (see `health_monitor.rs`).
    pub health: super::health_monitor::Health,
    /// Bumped when what the views draw changes for a reason of the window's own (side B
    /// taking A's preferences): the snapshot is taken again.
    pub view_rev: u64,
}

impl Model {
    /// The window's part of a run just opened: paused (or `playing`), nothing said yet.
    fn new(playing: bool) -> Model {
        Model {
            playing,
            step_debt: 0.0,
            status: String::new(),
            history: RecentSteps::default(),
            history_before_restart: None,
            validation: None,
            error: None,
            error_kept: KEPT_ON_OPEN,
            stopped: None,
            frame: 0,
            discarded: None,
            discard_note: None,
            health: super::health_monitor::Health::default(),
            view_rev: 0,
        }
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

/// Why a past step could not be shown (for the status line).
pub(super) fn seek_error(step: u64, e: &ReplayError) -> String {
    format!("Could not show step {step}: {e}.")
}

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
    pub(crate) fn new(interactive: bool) -> ViewState {
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
    /// The thing being debugged: document, simulation, recording, undo (the model's).
    pub session: Session,
    /// The window's part of the run: clock, status line, charts, errors.
    pub model: Model,
    /// The preferences (saved between launches).
    pub prefs: Prefs,
    /// What the views share.
    pub view: ViewState,
    /// Windows and dialogs.
    pub dialogs: Dialogs,
    /// What the views draw, taken from the session once per change.
    pub snapshot: Snapshot,
    snapshot_key: Option<super::pane::SnapshotKey>,
    /// What the world and tree views draw while an engine streams: the session our side steps
    /// of the received steps (see `live.rs`), taken once per change.
    pub live_snapshot: Snapshot,
    live_key: Option<super::pane::SnapshotKey>,
    /// The sessions received from engines in this run other than the one shown, oldest
    /// first, within the recording budget (File > Sessions).
    pub sessions: Vec<Session>,
    /// Live sessions that have ended and been taken in (shown, or said why not).
    pub live_sessions_ended: u64,
    /// The received step the live view holds while the engine streams on (paused or moved
    /// back by the user); `None`: the view follows the newest step our side has stepped.
    pub live_held: Option<LiveHeld>,
    /// The next close request goes through (the user agreed to lose unsaved changes).
    pub allow_close: bool,
    /// A command asked to close the window; the shell does it and clears this.
    pub close_requested: bool,
    /// The window's frame and step rates (what the statistics and the status line say of
    /// the speed).
    pub clock: super::clock::FrameClock,
    /// A step slower than this many milliseconds (on average) runs on the stepping thread
    /// (the window: [`BACKGROUND_STEP_MS`]); `None`: every step runs in the frame (tests and
    /// screenshots, whose frames must be alike run after run).
    pub background_steps: Option<f64>,
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
    /// The session and its revision when it started: a change since (an edit, a new
    /// setting, another document, the timeline moved) makes its result stale, and it is
    /// dropped; the next step starts from the changed session.
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

/// A received step the live view holds (see [`State::live_held`]).
pub struct LiveHeld {
    /// The step, rebuilt from the live session's recording.
    pub sim: Sim,
    /// Counts the steps held, so the snapshot is taken again for each.
    pub rev: u64,
}

/// A step slower than this (on average) runs on the stepping thread in the window,
/// milliseconds.
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
        let start = Start {
            budget_bytes: prefs.recording_budget_bytes(),
            ..Start::default()
        };
        let session = Session::of_scene(scene, path, start)?;
        let mut state = State::around(
            session,
            Model::new(playing),
            prefs,
            ViewState::new(interactive),
        );
        state.apply_scene_view();
        state.model.status = state.opened_message();
        state.record_step();
        state.sync_stopped();
        Ok(state)
    }

    /// A state of `session` with nothing else yet: no dialogs, no snapshot, no running jobs,
    /// no comparison.
    pub(super) fn around(session: Session, model: Model, prefs: Prefs, view: ViewState) -> State {
        State {
            session,
            model,
            prefs,
            view,
            dialogs: Dialogs::default(),
            snapshot: Snapshot::default(),
            snapshot_key: None,
            live_snapshot: Snapshot::default(),
            live_key: None,
            live_held: None,
            sessions: Vec::new(),
            live_sessions_ended: 0,
            allow_close: false,
            close_requested: false,
            clock: super::clock::FrameClock::default(),
            background_steps: None,
            stepping: None,
            compare: None,
            b_stepped: None,
        }
    }

    /// The name shown in the title: the file name, or the scene's name.
    #[must_use]
    pub fn document_name(&self) -> String {
        match self.session.path() {
            Some(p) => p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            None => format!("{} (not saved)", self.session.doc().name),
        }
    }

    /// What the document's world and tree views draw (see [`Pane`]).
    #[must_use]
    pub fn pane(&self) -> Pane<'_> {
        Pane {
            session: &self.session,
            sim: self.session.sim(),
            snapshot: &self.snapshot,
            prefs: &self.prefs,
            view: &self.view,
            dialogs: &self.dialogs,
            engine_tree: self.shows_engine_tree(),
            history: Some(&self.model.history),
        }
    }

    /// What the world and tree views draw of `live`, the session of an engine streaming now
    /// (see [`crate::live::LiveJob::session`]).
    #[must_use]
    pub fn live_pane<'a>(&'a self, live: &'a Session) -> Pane<'a> {
        Pane {
            session: live,
            sim: self.live_held.as_ref().map_or(live.sim(), |h| &h.sim),
            snapshot: &self.live_snapshot,
            prefs: &self.prefs,
            view: &self.view,
            dialogs: &self.dialogs,
            engine_tree: false,
            history: None,
        }
    }

    /// True while the views draw an engine streaming now (its session has a step).
    #[must_use]
    pub fn shows_live(&self) -> bool {
        self.dialogs.live.is_some() && self.live_key.is_some()
    }

    /// The live view starts again: the next engine's session fits the views and follows its
    /// newest step.
    pub(super) fn reset_live_view(&mut self) {
        self.live_key = None;
        self.live_held = None;
    }

    /// Takes a new snapshot of the live session (an engine streaming now) when it changed;
    /// the first fits the views to it. Nothing while no engine streams.
    pub(super) fn refresh_live_snapshot(&mut self) {
        let Some(job) = &self.dialogs.live else {
            self.live_key = None;
            return;
        };
        let live = job.session();
        let Some(session) = live.as_ref() else {
            return;
        };
        let first = self.live_key.is_none();
        let plane = if session.doc().dimensions == 3 {
            self.view.plane
        } else {
            Plane::XY
        };
        let shown = match &self.live_held {
            Some(held) => super::pane::Shown {
                session,
                sim: &held.sim,
                shown_rev: held.rev,
            },
            None => super::pane::Shown::session(session),
        };
        super::pane::refresh_snapshot(
            &mut self.live_snapshot,
            &mut self.live_key,
            shown,
            0,
            plane,
            false,
            false,
        );
        drop(live);
        if first {
            self.view.fit_pending = true;
            self.view.tree_fit_request += 1;
            self.view.fit_3d_request += 1;
            self.view.selection = None;
        }
    }

    /// True when the world is shown in the 3D view: a 3D scene, with "3D" chosen.
    #[must_use]
    pub fn shows_world_3d(&self) -> bool {
        self.pane().shows_world_3d()
    }

    /// The generator the document's spheres come from: its own, else the one its file says
    /// the listed spheres were made with.
    #[must_use]
    pub fn generator_made_with(&self) -> Option<crate::scene::Generate> {
        let doc = self.session.doc();
        doc.generate.or_else(|| {
            doc.view
                .as_ref()
                .and_then(|v| v.generator.as_deref().copied())
        })
    }

    /// The view settings to save with the scene.
    pub(super) fn view_settings(&self) -> ViewSettings {
        let view = self.session.doc().view.as_ref();
        ViewSettings {
            center: Some((self.view.camera.center.x, self.view.camera.center.y)),
            zoom: Some(self.view.camera.zoom),
            layers: Some(self.prefs.layers.names()),
            plane: Some(self.view.plane.name().to_owned()),
            branch_letters: view.and_then(|v| v.branch_letters),
            fit_content: view.and_then(|v| v.fit_content),
            caption: view.and_then(|v| v.caption.clone()),
            generator: self.generator_made_with().map(Box::new),
            pair_cost: view.and_then(|v| v.pair_cost),
        }
    }

    /// Takes camera, layers and plane from the open scene's saved view.
    pub(super) fn apply_scene_view(&mut self) {
        self.view.plane = Plane::XY;
        self.view.fit_pending = true;
        self.view.tree_fit_request += 1;
        self.view.fit_3d_request += 1;
        let doc = self.session.doc();
        let Some(view) = doc.view.clone() else {
            return;
        };
        if doc.dimensions == 3
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
            self.session.sim().live_count(),
            self.document_warnings()
        )
    }

    /// The open document's warnings (see [`Scene::warnings`]) for the status line after it
    /// opened: " Warning: ….", one after the other; empty when there are none.
    pub(super) fn document_warnings(&self) -> String {
        let sim = self.session.sim();
        let kind = sim.broadphase_kind();
        let doc = self.session.doc();
        let work = (kind != crate::broadphase::BroadphaseKind::Tree)
            .then(|| doc.work_at_start().warning(kind))
            .flatten();
        doc.warnings(sim.pair_limit())
            .iter()
            .chain(work.iter())
            .chain(self.pane().huge_world_note().iter())
            .map(|warning| format!(" Warning: {warning}."))
            .collect()
    }

    /// True when the simulation shown is at a step before the recording's last (the
    /// timeline's playhead was moved back).
    #[must_use]
    pub fn at_past_step(&self) -> bool {
        self.session.at_past_step()
    }

    /// Notes what a change discarded of the recorded future (for the status line) and drops
    /// the health samples of the steps gone.
    pub(super) fn note_discarded(&mut self, discarded: Option<(u64, Discarded)>) {
        if let Some((step, gone)) = discarded {
            self.model.health.truncate_after(step);
            self.model.discarded = Some(format!(
                "Recorded future after step {step} discarded ({} steps, {} edits).",
                gone.steps, gone.edits
            ));
        }
    }

    /// Applies `edit` through the session's one edit path ([`Session::edit`]); once it was
    /// accepted, the window follows: the discarded future noted, a comparison's B given the
    /// same edit of the motion, the charts' sample taken. A refused edit changes nothing.
    pub(super) fn apply_edit(
        &mut self,
        edit: crate::replay::Edit,
    ) -> Result<crate::replay::EditOutcome, SceneError> {
        let edited = self.session.edit(edit.clone(), self.model.frame)?;
        self.note_discarded(edited.discarded);
        if let Some(note) = edited.not_recorded {
            self.model.discarded = Some(note);
        }
        self.model.history_before_restart = None;
        self.mirror_edit(&edit);
        self.record_step();
        Ok(edited.outcome)
    }

    /// One simulation step, recorded, with its history sample and validation; from a past
    /// step, the recorded future is discarded first.
    /// At a trace's last step it pauses and says so instead.
    pub(super) fn step_once(&mut self) {
        match self.session.step() {
            Ok(stepped) => {
                self.note_discarded(stepped.discarded);
                self.after_step(stepped.outcome);
            }
            Err(NotStepped::AtEnd(_)) => self.end_of_trace(),
            Err(NotStepped::Recording(e)) => {
                // The recording is full (or out of step): the step it refused is undone, so
                // the simulation stays the recording's last step, and the clock stops.
                self.model.playing = false;
                self.model.status = format!("Paused: {e}.");
            }
        }
    }

    /// What follows a recorded step: the views refresh, the history takes its sample, a
    /// trace's end or a stopped step pauses.
    pub(super) fn after_step(&mut self, outcome: Result<(), SceneError>) {
        self.model.history_before_restart = None;
        self.record_step();
        self.follow_compare(true);
        if self.session.sim().is_at_end() {
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
        match self.session.before_step() {
            Ok(discarded) => self.note_discarded(discarded),
            Err(_) => return self.end_of_trace(),
        }
        let mut sim = self.session.sim().clone();
        let key = (self.session.id(), self.session.rev());
        // A comparison's B steps there too, when it is where A is (else it follows A here).
        let mut b_sim = self.compare.as_ref().and_then(|c| {
            let b = &c.b;
            (b.sim().step_index() == sim.step_index() && !b.at_past_step()).then(|| b.sim().clone())
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
    /// made here would be, unless the session changed meanwhile (then it is dropped). Returns
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
                if key != (self.session.id(), self.session.rev()) {
                    return false;
                }
                match self.session.take_step(sim) {
                    // A refused step (the pair limit): nothing recorded; the simulation's
                    // record of why is shown.
                    Ok(false) => self.sync_stopped(),
                    Ok(true) => {
                        // B's step beside it is taken as B follows (`follow_compare`), and
                        // only then.
                        self.b_stepped = b_stepped;
                        self.after_step(outcome);
                        self.b_stepped = None;
                    }
                    Err(e) => {
                        // The recording is full: the step is not taken; the clock stops.
                        self.model.playing = false;
                        self.model.status = format!("Paused: {e}.");
                    }
                }
            }
            Err(message) => {
                self.model.playing = false;
                self.model.status = format!(
                    "Paused: a step failed on the stepping thread ({}); the scene is kept at \
                     step {}.",
                    crate::text::excerpt(&message, 200),
                    self.session.sim().step_index()
                );
            }
        }
        false
    }

    /// The engine's own broad phase at the step shown (a received stream's, when its step
    /// carried it).
    #[must_use]
    pub fn engine_step(&self) -> Option<&crate::stream::engine::EngineStep> {
        self.session.engine_step()
    }

    /// True when the views show the engine's received tree in place of ours (asked for, and
    /// the document has one; while B shows it beside, A shows ours).
    #[must_use]
    pub fn shows_engine_tree(&self) -> bool {
        self.prefs.views_show_engine_tree
            && self.session.engine().is_some()
            && !(self.compare.is_some() && self.prefs.compare_b_engine_tree)
    }

    /// True while a step runs on the stepping thread.
    #[must_use]
    pub fn stepping_in_background(&self) -> bool {
        self.stepping.is_some()
    }

    /// Pauses at the last step of a trace, saying so.
    fn end_of_trace(&mut self) {
        self.model.playing = false;
        self.model.status = format!(
            "End of the trace at step {}.",
            self.session.sim().step_index()
        );
    }

    /// Records the current report in the history and validates when asked to.
    pub(super) fn record_step(&mut self) {
        let draw_ms = self.view.last_draw_ms;
        self.model
            .history
            .push(self.session.sim().report(), draw_ms);
        if self.prefs.validate_every_step {
            self.model.validation = Some(self.validate_tree());
        }
    }

    /// Checks the tree's invariants (Ok for the other broad phases).
    pub(super) fn validate_tree(&self) -> Result<(), String> {
        match self.session.sim().broadphase().tree_view() {
            Some(TreeRef::D2(tree)) => tree.validate().map_err(|e| e.to_string()),
            Some(TreeRef::D3(tree)) => tree.validate().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    /// Pauses and says why when the simulation's last step or change stopped in the broad
    /// phase (the pair limit, or a body it refused); clears the message once it runs again.
    /// The scene is kept either way.
    pub(super) fn sync_stopped(&mut self) {
        match self.session.stopped() {
            Some(message) => {
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
            && let Some(threshold) = self.background_steps
            && self.clock.step_ms().is_some_and(|ms| ms > threshold)
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

    /// Takes a new snapshot when the session or the plane changed since the last one (a 2D
    /// scene is always seen on the XY plane), and drops a selection it no longer holds.
    pub(super) fn refresh_snapshot(&mut self) {
        if self.session.doc().dimensions != 3 {
            self.view.plane = Plane::XY;
        }
        let engine_tree = self.shows_engine_tree();
        let taken = super::pane::refresh_snapshot(
            &mut self.snapshot,
            &mut self.snapshot_key,
            super::pane::Shown::session(&self.session),
            self.model.view_rev,
            self.view.plane,
            engine_tree,
            self.prefs.show_engine_tree,
        );
        if !taken {
            return;
        }
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
