//! The session: the thing being debugged, whatever its origin (a scene, a trace, a stream
//! file, an engine streaming live), with its one edit path.
//!
//! A [`Session`] holds the document (the scene as last opened or saved, its file, unsaved
//! changes), the running simulation ([`Sim`]), its [`Recording`] (every step and edit, with
//! keyframes), the tree settings' undo and redo, what a restart replaced, and, for a stream,
//! what the engine said of itself and its own broad phase by step. The settings are held once,
//! by the simulation ([`Session::settings`]); the document's copy is only what a save writes.
//!
//! Every change goes through a method of the session, and every change of the motion through
//! one of them, [`Session::edit`]: the edit is applied to the simulation, and only when the
//! simulation accepted it is the recorded future (after a past step shown) discarded, the edit
//! recorded, the undo step taken, the revision bumped. A refused edit changes nothing. A run of
//! edits moving one number of the settings in consecutive frames (a slider's drag) is one
//! edit in the log and one undo step: each frame applies the newest value to the simulation as
//! it was before the drag, so what the log replays is what the window showed.
//!
//! The window (`aabb-app`) keeps what is the window's: the views, the clock, the status line
//! and the charts; the command line's `run`, `replay` and `sweep` drive simulations directly.

use crate::broadphase::{BroadphaseError, BroadphaseKind};
use crate::replay::{Discarded, Edit, EditOutcome, Recording, Replay, ReplayError, TraceStart};
use crate::scene::{Scene, SceneError};
use crate::source::{Origin, Sim};
use crate::stream::StreamInfo;
use crate::stream::engine::{EngineRecord, EngineStep, EngineTree};
use crate::trace::Trace;
use crate::tree::TreeConfig;
use glam::Vec3;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub mod received;
mod text;
pub use text::{describe_settings_change, stream_notes};

/// The most undo (and redo) steps kept.
pub const MAX_UNDO: usize = 100;

/// One undo (or redo) step of the tree settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SettingsUndo {
    /// The settings to go back to.
    pub settings: TreeConfig,
    /// The one numeric setting the change moved (`"margin"` or `"look-ahead"`), when it moved
    /// only that one.
    pub field: Option<&'static str>,
}

/// A drag being made into one edit (see the module doc): the simulation before its first
/// edit, and what the next edit must match to join it.
#[derive(Clone)]
struct Gesture {
    field: &'static str,
    frame: u64,
    /// The revision the session had after the drag's last edit: anything else since (a step,
    /// another edit, a seek) ends the drag.
    rev: u64,
    before: Box<Sim>,
}

/// What a restart (Reset, or Apply of the generator) replaced, until the next step or edit:
/// [`Session::undo`] brings it back, recording and all.
#[derive(Clone)]
pub struct BeforeRestart {
    doc: Scene,
    dirty: bool,
    id: u64,
    undo: Vec<SettingsUndo>,
    sim: Sim,
    recording: Recording<Sim>,
    what: &'static str,
}

/// What a stream said of itself, when the session is one received or read from a stream
/// file.
#[derive(Clone, Debug)]
pub struct Received {
    /// The engine (its HELLO's name, or "an engine").
    pub from: String,
    /// The stream's own account (handshake, step numbers, gaps, goodbye; its engine parts are
    /// in [`Session::engine`]).
    pub info: Arc<StreamInfo>,
    /// The stream's bytes as they arrived (every accepted frame), when it was received live:
    /// what "Save received stream…" writes.
    pub stream: Option<Arc<Vec<u8>>>,
}

/// What an accepted edit changed (for the status line and the views).
#[derive(Clone, Debug, PartialEq)]
pub struct Edited {
    /// The simulation's outcome: applied, or applied with the pairs past the limit.
    pub outcome: EditOutcome,
    /// The recorded future the edit discarded, with the step it was made at.
    pub discarded: Option<(u64, Discarded)>,
    /// The edit joined the drag before it (one log entry, one undo step).
    pub joined: bool,
    /// The edit was applied but could not be recorded (the recording is out of step); the
    /// message says why.
    pub not_recorded: Option<String>,
}

/// What [`Session::write_received`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedStream {
    /// The engine it came from.
    pub from: String,
    /// Steps written.
    pub steps: usize,
    /// Bytes written.
    pub bytes: usize,
    /// Steps written with some of the engine's own broad phase.
    pub steps_with_parts: u64,
    /// What of the engine's parts could not be written (a sentence, or empty).
    pub missing: String,
}

/// Why [`Session::write_received`] wrote nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveStreamError {
    /// The session was not received live (a trace file is kept already).
    NotReceived,
    /// The stream could not be encoded or written: why.
    Write(String),
}

/// Why a step was not made.
#[derive(Debug)]
pub enum NotStepped {
    /// A trace at its last step: nothing to step.
    AtEnd(u64),
    /// The recording refused the step (full): the simulation stays at its last step.
    Recording(ReplayError),
}

/// What a step made.
#[derive(Debug)]
pub struct Stepped {
    /// The step's own error (the broad phase stopped it: the pair limit), after recording it.
    pub outcome: Result<(), SceneError>,
    /// The recorded future discarded before it (it was made from a past step).
    pub discarded: Option<(u64, Discarded)>,
}

/// What [`Session::undo`] or [`Session::redo`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Undone {
    /// Nothing to undo (or redo).
    Nothing,
    /// The tree settings went back from `from` to `to`.
    Settings {
        /// The settings before.
        from: TreeConfig,
        /// The settings now.
        to: TreeConfig,
        /// The recorded future discarded to make the change.
        discarded: Option<(u64, Discarded)>,
    },
    /// The run a restart replaced is back.
    Restart {
        /// What was restarted: "Reset" or "Apply".
        what: &'static str,
    },
}

/// A fresh id for each session (and each restart of one), so a result computed on one is
/// never applied to another.
fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// See the module doc.
#[derive(Clone)]
pub struct Session {
    doc: Scene,
    path: Option<PathBuf>,
    dirty: bool,
    sim: Sim,
    recording: Recording<Sim>,
    rev: u64,
    id: u64,
    undo: Vec<SettingsUndo>,
    redo: Vec<SettingsUndo>,
    gesture: Option<Gesture>,
    before_restart: Option<Box<BeforeRestart>>,
    received: Option<Received>,
    engine: Option<Arc<EngineRecord>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("name", &self.doc.name)
            .field("path", &self.path)
            .field("step", &self.sim.step_index())
            .field("last_step", &self.recording.last_step())
            .field("rev", &self.rev)
            .finish_non_exhaustive()
    }
}

/// The name a recording keeps of its scene: the file, or the scene's name.
#[must_use]
pub fn recording_name(scene: &Scene, path: Option<&Path>) -> String {
    path.map_or_else(|| scene.name.clone(), |p| p.display().to_string())
}

/// How a session starts its simulation: the broad phase, the pair limit and the recording's
/// memory budget (the window keeps them across documents).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Start {
    /// The broad phase.
    pub kind: BroadphaseKind,
    /// The most candidate pairs a step may find.
    pub pair_limit: usize,
    /// The recording's memory budget, bytes.
    pub budget_bytes: usize,
}

impl Default for Start {
    fn default() -> Start {
        Start {
            kind: BroadphaseKind::Tree,
            pair_limit: crate::broadphase::DEFAULT_PAIR_LIMIT,
            budget_bytes: crate::replay::DEFAULT_BUDGET_BYTES,
        }
    }
}

impl Start {
    /// A simulation of `origin` at step 0 and its recording, under the name `file`.
    fn run(self, origin: &Origin, file: &str) -> Result<(Recording<Sim>, Sim), SceneError> {
        let (mut recording, sim) = Recording::start_from(origin, file, self.kind, self.pair_limit)?;
        recording.set_budget_bytes(self.budget_bytes);
        Ok((recording, sim))
    }
}

impl Session {
    /// A session of `scene` (from `path`) at step 0, even when step 0 passes the pair limit
    /// (the simulation's [`Sim::last_error`] says so).
    pub fn of_scene(
        scene: Scene,
        path: Option<PathBuf>,
        start: Start,
    ) -> Result<Session, SceneError> {
        let file = recording_name(&scene, path.as_deref());
        let (recording, sim) = start.run(&Origin::Scene(Box::new(scene.clone())), &file)?;
        Ok(Session::around(scene, path, sim, recording))
    }

    /// A session of `trace` (from `path`, or received live when `None`) at step 0, with the
    /// default tree settings; the document is a scene made to describe it
    /// ([`trace_document`]).
    pub fn of_trace(
        trace: Arc<Trace>,
        path: Option<PathBuf>,
        start: Start,
    ) -> Result<Session, SceneError> {
        let shown = path
            .as_deref()
            .map_or_else(|| trace.name().to_owned(), |p| p.display().to_string());
        let doc = trace_document(&trace, TreeConfig::default());
        let origin = Origin::Trace(TraceStart {
            trace,
            config: doc.tree,
        });
        let (recording, sim) = start.run(&origin, &shown)?;
        Ok(Session::around(doc, path, sim, recording))
    }

    /// A session of a recording read from a file (already rebuilt and checked), at its last
    /// step; the document is the recording's scene, not saved.
    #[must_use]
    pub fn of_recording(
        recording: Recording<crate::scene::Simulation>,
        sim: crate::scene::Simulation,
        budget_bytes: usize,
    ) -> Session {
        let scene = recording.history().scene.clone();
        let mut recording =
            recording.map::<Sim>(|scene| Origin::Scene(Box::new(scene)), Sim::Scene);
        recording.set_budget_bytes(budget_bytes);
        let mut session = Session::around(scene, None, Sim::Scene(sim), recording);
        session.doc.tree = session.sim.tree_settings();
        session
    }

    fn around(doc: Scene, path: Option<PathBuf>, sim: Sim, recording: Recording<Sim>) -> Session {
        Session {
            doc,
            path,
            dirty: false,
            sim,
            recording,
            rev: 0,
            id: next_id(),
            undo: Vec::new(),
            redo: Vec::new(),
            gesture: None,
            before_restart: None,
            received: None,
            engine: None,
        }
    }

    /// Marks this session as a stream's: what it said of itself, its bytes as received (when
    /// live), and the engine's own broad phase by step (kept when the stream carried any).
    pub fn set_received(&mut self, mut info: StreamInfo, stream: Option<Arc<Vec<u8>>>, live: bool) {
        let parts = std::mem::take(&mut info.engine_parts);
        self.engine = (!parts.steps.is_empty()).then(|| Arc::new(parts));
        if live {
            let from = if info.engine.is_empty() {
                "an engine".to_owned()
            } else {
                info.engine.clone()
            };
            self.received = Some(Received {
                from,
                info: Arc::new(info),
                stream: stream.filter(|s| !s.is_empty()),
            });
        }
        self.rev += 1;
    }

    /// Grows a session of a trace still arriving (a live engine's): `longer` is its trace
    /// with the steps received since. The simulation, the recording's start and its keyframes
    /// take it in place of the shorter one (the steps they ran are the same in both), and the
    /// document's world grows to hold the new steps' boxes; the new steps are then the
    /// session's to step ([`Session::catch_up`]). An error, and nothing changed, when
    /// `longer` is not this session's trace grown.
    pub fn grow(&mut self, longer: &Arc<Trace>) -> Result<(), String> {
        let Some(now) = self.sim.as_trace().map(|t| Arc::clone(t.trace())) else {
            return Err("only a trace's session grows".to_owned());
        };
        if !now.is_prefix_of(longer) {
            return Err(format!(
                "the trace {} is not the session's trace {} grown",
                crate::text::excerpt(longer.name(), 80),
                crate::text::excerpt(now.name(), 80)
            ));
        }
        if now.step_count() == longer.step_count() {
            return Ok(());
        }
        self.sim.grow_trace(longer);
        self.recording.retarget(
            |origin| {
                if let Origin::Trace(start) = origin {
                    start.trace = Arc::clone(longer);
                }
            },
            |sim| sim.grow_trace(longer),
        );
        if let Some(before) = &mut self.before_restart {
            before.sim.grow_trace(longer);
        }
        let world = &mut self.doc.world;
        for k in now.step_count()..longer.step_count() {
            for b in longer.step(k) {
                *world = world.union(&b.aabb);
            }
        }
        self.rev += 1;
        Ok(())
    }

    /// Steps a session that is behind its trace (a live one, grown) towards the trace's last
    /// step, for at most `budget` of time (at least one step); the number of steps made.
    /// Stops at a step the recording refuses (full) or the broad phase stops (the pair limit;
    /// the next call goes on from there).
    pub fn catch_up(&mut self, budget: std::time::Duration) -> Result<u64, NotStepped> {
        let started = std::time::Instant::now();
        let mut made = 0;
        while !self.at_past_step() && !self.sim.is_at_end() {
            self.step()?;
            made += 1;
            if started.elapsed() >= budget {
                break;
            }
        }
        Ok(made)
    }

    // ----- reading -----

    /// The document: the scene as last opened or saved, with the settings changed since
    /// (a trace's is a scene made to describe it).
    #[must_use]
    pub fn doc(&self) -> &Scene {
        &self.doc
    }

    /// The document's file, if any.
    #[must_use]
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Unsaved changes.
    #[must_use]
    pub fn dirty(&self) -> bool {
        self.dirty
    }

    /// The simulation at the step shown.
    #[must_use]
    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    /// Every step and edit since the session started or restarted.
    #[must_use]
    pub fn recording(&self) -> &Recording<Sim> {
        &self.recording
    }

    /// Bumped on every change the views show.
    #[must_use]
    pub fn rev(&self) -> u64 {
        self.rev
    }

    /// This session's id: new for each session and each restart (a result computed on one
    /// checks it before it is applied).
    #[must_use]
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The tree settings in force (the simulation's: held once).
    #[must_use]
    pub fn settings(&self) -> TreeConfig {
        self.sim.tree_settings()
    }

    /// How the next session of the window starts: this one's broad phase and pair limit,
    /// with `budget_bytes`.
    #[must_use]
    pub fn start(&self, budget_bytes: usize) -> Start {
        Start {
            kind: self.sim.broadphase_kind(),
            pair_limit: self.sim.pair_limit(),
            budget_bytes,
        }
    }

    /// True when the step shown is before the recording's last (the timeline moved back).
    #[must_use]
    pub fn at_past_step(&self) -> bool {
        self.sim.step_index() < self.recording.last_step()
    }

    /// Settings steps Undo can take back.
    #[must_use]
    pub fn undo_len(&self) -> usize {
        self.undo.len()
    }

    /// Settings steps Redo can make again.
    #[must_use]
    pub fn redo_len(&self) -> usize {
        self.redo.len()
    }

    /// Recorded steps of the run a restart replaced, while Undo can bring it back.
    #[must_use]
    pub fn restart_undo_steps(&self) -> Option<u64> {
        self.before_restart
            .as_ref()
            .map(|b| b.recording.last_step())
    }

    /// What Undo would do, for a menu ("Undo Reset", "Undo margin change"); `None` when
    /// nothing.
    #[must_use]
    pub fn undo_label(&self) -> Option<String> {
        if let Some(before) = &self.before_restart {
            return Some(format!("Undo {}", before.what));
        }
        self.undo.last().map(|step| label("Undo", step))
    }

    /// What Redo would do ("Redo margin change"); `None` when nothing.
    #[must_use]
    pub fn redo_label(&self) -> Option<String> {
        self.redo.last().map(|step| label("Redo", step))
    }

    /// What the stream said of itself, when this session is one received live.
    #[must_use]
    pub fn received(&self) -> Option<&Received> {
        self.received.as_ref()
    }

    /// The engine's own broad phase by step, when the session's stream carried it.
    #[must_use]
    pub fn engine(&self) -> Option<&Arc<EngineRecord>> {
        self.engine.as_ref()
    }

    /// The engine's own broad phase at the step shown, when that step carried it.
    #[must_use]
    pub fn engine_step(&self) -> Option<&EngineStep> {
        self.engine_step_at(self.sim.step_index())
    }

    /// The engine's own broad phase at step `step`, when that step carried it.
    #[must_use]
    pub fn engine_step_at(&self, step: u64) -> Option<&EngineStep> {
        self.engine.as_deref()?.step_at(step)
    }

    /// The engine's tree at step `step`, when that step carried one.
    #[must_use]
    pub fn engine_tree_at(&self, step: u64) -> Option<&EngineTree> {
        self.engine_step_at(step)?.tree.as_ref()
    }

    /// Why the simulation's last step or change stopped in the broad phase (the pair limit,
    /// or a body it refused), as the status line says it; `None` while it runs.
    #[must_use]
    pub fn stopped(&self) -> Option<String> {
        let e = self.sim.last_error()?;
        let mut message = format!("Step {}: {e}.", self.sim.step_index());
        if matches!(e, BroadphaseError::PairLimit { .. }) {
            message.push_str(" The scene is kept: change one of these, then play on.");
        }
        Some(message)
    }

    // ----- the edit path -----

    /// Applies `edit` and, once the simulation accepted it, discards the recorded future (at
    /// a past step), records it, takes its undo step (for the tree settings) and bumps the
    /// revision: the one path of a change of the motion. A refused edit changes nothing.
    /// `frame` is the window's frame counter: a settings edit moving the same single number as
    /// the one before, in the next frame or the same, with nothing else between, joins it
    /// (one log entry, one undo step).
    pub fn edit(&mut self, edit: Edit, frame: u64) -> Result<Edited, SceneError> {
        let before = self.sim.tree_settings();
        let field = match &edit {
            Edit::SetTreeSettings(new) => single_numeric_change(&before, new),
            _ => None,
        };
        if let Some(field) = field
            && let Some(g) = &self.gesture
            && g.field == field
            && g.rev == self.rev
            && frame <= g.frame + 1
            && self
                .recording
                .edits()
                .last()
                .is_some_and(|e| e.step == self.sim.step_index())
        {
            // The drag goes on: its one edit takes the newest value, applied to the
            // simulation as it was before the drag.
            let mut sim = (*g.before).clone();
            let outcome = sim.apply_edit(&edit)?;
            self.sim = sim;
            let not_recorded = self
                .recording
                .replace_last_edit(&self.sim, edit)
                .err()
                .map(|e| format!("Not recorded: {e}."));
            self.changed(true);
            if let Some(g) = &mut self.gesture {
                g.frame = frame;
                g.rev = self.rev;
            }
            return Ok(Edited {
                outcome,
                discarded: None,
                joined: true,
                not_recorded,
            });
        }
        let kept = field.map(|_| Box::new(self.sim.clone()));
        let edited = self.apply_and_record(edit.clone())?;
        if let Edit::SetTreeSettings(new) = edit
            && new != before
        {
            push_capped(
                &mut self.undo,
                SettingsUndo {
                    settings: before,
                    field,
                },
            );
            self.redo.clear();
        }
        self.gesture = field.zip(kept).map(|(field, before)| Gesture {
            field,
            frame,
            rev: self.rev,
            before,
        });
        Ok(edited)
    }

    /// Applies and records `edit` (see [`Session::edit`]), with no undo step.
    fn apply_and_record(&mut self, edit: Edit) -> Result<Edited, SceneError> {
        let outcome = self.sim.apply_edit(&edit)?;
        let discarded = self.discard_future();
        let not_recorded = self
            .recording
            .record_edit(&self.sim, edit.clone())
            .err()
            .map(|e| format!("Not recorded: {e}."));
        // The broad phase and the pair limit are not the scene's: saved scenes keep neither.
        self.changed(matches!(
            edit,
            Edit::SetTreeSettings(_)
                | Edit::MoveSphere { .. }
                | Edit::AddSphere(_)
                | Edit::RemoveSphere { .. }
        ));
        Ok(Edited {
            outcome,
            discarded,
            joined: false,
            not_recorded,
        })
    }

    /// After an accepted change: the document's settings follow the simulation's, a restart
    /// can no longer be undone, the revision moves.
    fn changed(&mut self, dirty: bool) {
        self.doc.tree = self.sim.tree_settings();
        self.before_restart = None;
        if dirty && !self.sim.is_trace() {
            self.dirty = true;
        }
        self.rev += 1;
    }

    /// At a past step: discards the recorded future after it (the step and the edits made at
    /// it stay), so the session goes on from the step shown.
    pub fn discard_future(&mut self) -> Option<(u64, Discarded)> {
        if !self.at_past_step() {
            return None;
        }
        let step = self.sim.step_index();
        let gone = self.recording.truncate_after(step);
        self.rev += 1;
        Some((step, gone))
    }

    /// A copy of this session's document, simulation, recording and stream, at the step
    /// shown, with the same id (what a comparison's side B starts as): no undo, redo or
    /// restart of its own.
    #[must_use]
    pub fn twin(&self) -> Session {
        Session {
            doc: self.doc.clone(),
            path: self.path.clone(),
            dirty: self.dirty,
            sim: self.sim.clone(),
            recording: self.recording.clone(),
            rev: self.rev,
            id: self.id,
            undo: Vec::new(),
            redo: Vec::new(),
            gesture: None,
            before_restart: None,
            received: self.received.clone(),
            engine: self.engine.clone(),
        }
    }

    /// Takes back the last change of the tree settings, or brings back the run the last
    /// restart replaced (until the run restarted goes on). The settings go back through the
    /// edit path (recorded as an edit at the step shown).
    pub fn undo(&mut self) -> Result<Undone, SceneError> {
        if let Some(before) = self.before_restart.take() {
            let BeforeRestart {
                doc,
                dirty,
                id,
                undo,
                sim,
                recording,
                what,
            } = *before;
            self.doc = doc;
            self.dirty = dirty;
            self.id = id;
            self.undo = undo;
            self.redo.clear();
            self.sim = sim;
            self.recording = recording;
            self.gesture = None;
            self.rev += 1;
            return Ok(Undone::Restart { what });
        }
        self.settings_back(true)
    }

    /// Makes again the last settings change Undo took back.
    pub fn redo(&mut self) -> Result<Undone, SceneError> {
        self.settings_back(false)
    }

    /// Undo (`undo`) or redo: the settings of the step on top go back through the edit path,
    /// and the settings they replace go on the other stack.
    fn settings_back(&mut self, undo: bool) -> Result<Undone, SceneError> {
        let popped = if undo {
            self.undo.pop()
        } else {
            self.redo.pop()
        };
        let Some(step) = popped else {
            return Ok(Undone::Nothing);
        };
        let from = self.sim.tree_settings();
        match self.apply_and_record(Edit::SetTreeSettings(step.settings)) {
            Ok(edited) => {
                self.gesture = None;
                let back = SettingsUndo {
                    settings: from,
                    field: step.field,
                };
                push_capped(if undo { &mut self.redo } else { &mut self.undo }, back);
                Ok(Undone::Settings {
                    from,
                    to: step.settings,
                    discarded: edited.discarded,
                })
            }
            Err(e) => {
                // Refused: nothing changed, and the step stays where it was.
                if undo {
                    self.undo.push(step)
                } else {
                    self.redo.push(step)
                }
                Err(e)
            }
        }
    }

    // ----- steps and time -----

    /// Makes one step and records it; from a past step the recorded future is discarded
    /// first. A trace at its end is not stepped; a step the recording refuses (full) is
    /// taken back, so the simulation stays at the recording's last step.
    pub fn step(&mut self) -> Result<Stepped, NotStepped> {
        let discarded = self.before_step()?;
        match self.recording.step(&mut self.sim) {
            Ok(outcome) => {
                self.rev += 1;
                Ok(Stepped { outcome, discarded })
            }
            Err(e) => {
                if let Ok(sim) = self.recording.state_at(self.recording.last_step()) {
                    self.sim = sim;
                }
                self.rev += 1;
                Err(NotStepped::Recording(e))
            }
        }
    }

    /// What comes before a step: a trace at its end refuses it; a past step's recorded
    /// future is discarded; a restart can no longer be undone; a drag ends.
    pub fn before_step(&mut self) -> Result<Option<(u64, Discarded)>, NotStepped> {
        if !self.at_past_step() && self.sim.is_at_end() {
            return Err(NotStepped::AtEnd(self.sim.step_index()));
        }
        let discarded = self.discard_future();
        self.before_restart = None;
        self.gesture = None;
        if discarded.is_some() {
            self.rev += 1;
        }
        Ok(discarded)
    }

    /// Takes a step made on another thread from a copy of this session's simulation (see
    /// [`Session::before_step`]): recorded as a step made here. A step the simulation refused
    /// (same step index: the pair limit) only shows why; a step that does not follow the one
    /// shown, or that the recording refuses, is not taken.
    pub fn take_step(&mut self, sim: Sim) -> Result<bool, ReplayError> {
        let at = self.sim.step_index();
        if sim.step_index() == at {
            self.sim = sim;
            self.rev += 1;
            return Ok(false);
        }
        self.recording.record_step(&sim)?;
        self.sim = sim;
        self.rev += 1;
        Ok(true)
    }

    /// Shows recorded step `step` (clamped to the last): the simulation becomes the state at
    /// that step, rebuilt from the recording, which is kept whole. False when it was shown
    /// already.
    pub fn seek(&mut self, step: u64) -> Result<bool, ReplayError> {
        let step = step.min(self.recording.last_step());
        if step == self.sim.step_index() {
            return Ok(false);
        }
        self.sim = self.recording.state_at(step)?;
        self.doc.tree = self.sim.tree_settings();
        self.gesture = None;
        self.rev += 1;
        Ok(true)
    }

    /// Sets the recording's memory budget.
    pub fn set_budget_bytes(&mut self, bytes: usize) {
        self.recording.set_budget_bytes(bytes);
    }

    /// The pair test's cost the Advisor weighs (saved with the scene's view); false when it
    /// was that already. A trace's document is never saved: no unsaved change.
    pub fn set_pair_cost(&mut self, cost: f64) -> bool {
        let view = self.doc.view.get_or_insert_with(Default::default);
        if view.pair_cost == Some(cost) {
            return false;
        }
        view.pair_cost = Some(cost);
        if !self.sim.is_trace() {
            self.dirty = true;
        }
        true
    }

    /// Writes the stream this session received live to `path` (atomically): its frames as
    /// they arrived when it kept them, byte for byte what `listen --out` writes of the same
    /// session; else written again from what it kept ([`received::encode`]).
    pub fn write_received(&self, path: &Path) -> Result<SavedStream, SaveStreamError> {
        let (Some(received), Some(trace)) = (
            self.received.as_ref(),
            self.sim.as_trace().map(|t| Arc::clone(t.trace())),
        ) else {
            return Err(SaveStreamError::NotReceived);
        };
        let record = self.engine.as_deref();
        let encoded;
        let (bytes, steps_with_parts, missing) = match &received.stream {
            Some(bytes) => (
                bytes.as_slice(),
                record.map_or(0, |e| e.summary.steps_with_parts),
                String::new(),
            ),
            None => {
                encoded = received::encode(&trace, &received.info, record)
                    .map_err(SaveStreamError::Write)?;
                (
                    encoded.bytes.as_slice(),
                    encoded.steps_with_parts,
                    encoded.missing.clone(),
                )
            }
        };
        let options = crate::fileio::WriteOptions::of_kind(crate::fileio::FileKind::Stream, false);
        crate::fileio::write_atomic(path, bytes, options)
            .map_err(|e| SaveStreamError::Write(e.to_string()))?;
        Ok(SavedStream {
            from: received.from.clone(),
            steps: trace.step_count(),
            bytes: bytes.len(),
            steps_with_parts,
            missing,
        })
    }

    // ----- restarts -----

    /// Starts the session again from step 0 of the document as last opened or saved, with
    /// the settings in force (a trace from its first step); the run replaced is kept for
    /// [`Session::undo`]. Returns the recorded steps Undo brings back (0: nothing worth it).
    pub fn reset(&mut self, budget_bytes: usize) -> Result<u64, SceneError> {
        let start = self.start(budget_bytes);
        let file = recording_name(&self.doc, self.path.as_deref());
        let origin = match &self.sim {
            Sim::Scene(_) => {
                let mut scene = self.doc.clone();
                scene.tree = self.sim.tree_settings();
                Origin::Scene(Box::new(scene))
            }
            Sim::Trace(t) => Origin::Trace(TraceStart {
                trace: Arc::clone(t.trace()),
                config: self.sim.tree_settings(),
            }),
        };
        let (recording, sim) = start.run(&origin, &file)?;
        let mut doc = self.doc.clone();
        doc.tree = sim.tree_settings();
        Ok(self.restart("Reset", doc, recording, sim, false))
    }

    /// Gives the document `generate` (its spheres made anew) and starts it again from step
    /// 0: the world grows to the generator's density when it must. Returns whether the world
    /// grew and the recorded steps Undo brings back.
    pub fn apply_generator(
        &mut self,
        generate: Option<crate::scene::Generate>,
        shown_name: &str,
        budget_bytes: usize,
    ) -> Result<(bool, u64), SceneError> {
        let mut doc = self.doc.clone();
        doc.generate = generate;
        doc.tree = self.sim.tree_settings();
        doc.validate(shown_name)?;
        let start = self.start(budget_bytes);
        let file = recording_name(&doc, self.path.as_deref());
        let (recording, sim) = start.run(&Origin::Scene(Box::new(doc.clone())), &file)?;
        let grown = doc.grown_world();
        let grew = grown != doc.world;
        // The world the simulation runs in is the document's world.
        doc.world = grown;
        let steps = self.restart("Apply", doc, recording, sim, true);
        self.dirty = true;
        Ok((grew, steps))
    }

    /// Makes `doc`, `sim` and `recording` the run, keeping what they replace for Undo. A
    /// restart of a run that a restart began and that has not moved since (R pressed twice)
    /// keeps the run before the first. `new_spheres`: the spheres changed (the settings'
    /// undo steps no longer apply, and results computed on the old run are stale).
    fn restart(
        &mut self,
        what: &'static str,
        doc: Scene,
        recording: Recording<Sim>,
        sim: Sim,
        new_spheres: bool,
    ) -> u64 {
        let keep_older = self.before_restart.is_some() && self.recording.last_step() == 0;
        let before = BeforeRestart {
            doc: std::mem::replace(&mut self.doc, doc),
            dirty: self.dirty,
            id: self.id,
            undo: self.undo.clone(),
            sim: std::mem::replace(&mut self.sim, sim),
            recording: std::mem::replace(&mut self.recording, recording),
            what,
        };
        match &mut self.before_restart {
            Some(older) if keep_older => older.what = what,
            slot => *slot = Some(Box::new(before)),
        }
        if new_spheres {
            self.undo.clear();
            self.id = next_id();
        }
        self.redo.clear();
        self.gesture = None;
        self.rev += 1;
        self.restart_undo_steps().unwrap_or(0)
    }

    // ----- files -----

    /// Saves the running scene (with `view`) to `path`; the document becomes what was saved.
    /// A trace is input, never saved (refused with [`crate::source::TRACE_IS_INPUT`]).
    pub fn save(
        &mut self,
        path: &Path,
        view: crate::scene::ViewSettings,
        options: crate::fileio::WriteOptions,
    ) -> Result<(), SceneError> {
        let Some(sim) = self.sim.as_scene() else {
            return Err(SceneError::Invalid {
                file: path.display().to_string(),
                message: crate::source::TRACE_IS_INPUT.to_owned(),
            });
        };
        let mut scene = sim.scene();
        scene.view = Some(view);
        scene.save_with(path, options)?;
        self.doc = scene;
        self.path = Some(path.to_path_buf());
        self.dirty = false;
        Ok(())
    }
}

/// "Undo margin change", "Redo settings change".
fn label(verb: &str, step: &SettingsUndo) -> String {
    match step.field {
        Some(field) => format!("{verb} {field} change"),
        None => format!("{verb} settings change"),
    }
}

/// Pushes `step`, dropping the oldest past [`MAX_UNDO`].
fn push_capped(stack: &mut Vec<SettingsUndo>, step: SettingsUndo) {
    if stack.len() >= MAX_UNDO {
        stack.remove(0);
    }
    stack.push(step);
}

/// `"margin"` or `"look-ahead"` when that is the only setting that differs, else `None`.
#[must_use]
pub fn single_numeric_change(old: &TreeConfig, new: &TreeConfig) -> Option<&'static str> {
    let rest = |c: &TreeConfig| TreeConfig {
        margin: 0.0,
        velocity_lookahead: 0.0,
        ..*c
    };
    if rest(old) != rest(new) {
        return None;
    }
    match (
        old.margin != new.margin,
        old.velocity_lookahead != new.velocity_lookahead,
    ) {
        (true, false) => Some("margin"),
        (false, true) => Some("look-ahead"),
        _ => None,
    }
}

/// The document standing for a trace: its name, dimensions and time step, no spheres,
/// `tree` as its settings, and as its world the box holding every box of every step (what
/// Fit frames).
#[must_use]
pub fn trace_document(trace: &Trace, tree: TreeConfig) -> Scene {
    let mut world: Option<crate::tree::Aabb<Vec3>> = None;
    let boxes = (0..trace.step_count())
        .flat_map(|k| trace.step(k))
        .chain(trace.statics());
    for b in boxes {
        world = Some(world.map_or(b.aabb, |w| w.union(&b.aabb)));
    }
    let mut doc = Scene::builtin_default();
    doc.name = trace.name().to_owned();
    doc.dimensions = trace.dimensions();
    doc.dt = trace.dt();
    doc.tree = tree;
    doc.spheres.clear();
    doc.generate = None;
    doc.view = None;
    doc.world = world.unwrap_or(doc.world);
    doc
}

#[cfg(test)]
mod tests;
