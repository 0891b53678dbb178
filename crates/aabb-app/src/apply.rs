//! How commands change the state: [`State::apply`], the one path by which the UI changes the
//! model, the preferences and the shared view state. Imports no view.

use super::commands::{Command, broadphase_name};
use super::files::FilePurpose;
use super::pick::{Pick, SphereDrag};
use super::prefs::PrefChange;
use super::state::{
    BeforeRestart, DiscardNote, FileRequest, KEPT_ON_EXPORT, KEPT_ON_OPEN, KEPT_ON_SAVE,
    KEPT_ON_SAVE_RECORDING, MAX_UNDO, SettingsUndo, State, recording_name, seek_error,
};
use crate::broadphase::health::RebuildKind;
use crate::fileio::WriteOptions;
use crate::replay::file::{LoadJob, LoadOutcome, Loaded};
use crate::replay::{Edit, EditOutcome, KeyframePolicy, Recording, TraceStart};
use crate::scene::{Scene, SceneError, Simulation, Sphere};
use crate::source::{
    Origin, Sim, TRACE_HAS_NO_RECORDING_FILE, TRACE_HAS_NO_SPHERES, TRACE_IS_INPUT,
};
use crate::tree::TreeConfig;
use glam::Vec3;
use std::path::{Path, PathBuf};

fn with_extension(path: PathBuf) -> PathBuf {
    FilePurpose::SaveAs.with_extension(path)
}

impl State {
    /// Applies one command. `confirmed` is true once the user agreed to lose unsaved changes.
    pub fn apply(&mut self, command: Command, confirmed: bool) {
        if command.discards_changes() && self.model.dirty && !confirmed {
            self.dialogs.confirm = Some(command);
            return;
        }
        let kind = std::mem::discriminant(&command);
        let status_before = self.model.status.clone();
        self.apply_now(command);
        if self.model.sim.is_trace() {
            // A trace is input, never saved: nothing is unsaved, so opening another file
            // asks nothing.
            self.model.dirty = false;
        }
        self.sync_stopped();
        let frame = self.model.frame;
        if let Some(text) = self.model.discarded.take() {
            self.model.status = format!("{} {text}", self.model.status).trim().to_owned();
            self.model.discard_note = Some(DiscardNote { kind, frame, text });
        } else if self.model.status != status_before {
            // The rest of a drag that discarded the future keeps saying so; anything else
            // that speaks ends it.
            let note = self
                .model
                .discard_note
                .take()
                .filter(|n| n.kind == kind && frame <= n.frame + 1);
            if let Some(n) = note {
                self.model.status = format!("{} {}", self.model.status, n.text)
                    .trim()
                    .to_owned();
                self.model.discard_note = Some(DiscardNote { frame, ..n });
            }
        }
    }

    /// Shows `message` in the error window, with `kept` (a `KEPT_*` sentence) under it.
    fn show_error(&mut self, message: String, kept: &'static str) {
        self.model.error = Some(message);
        self.model.error_kept = kept;
    }

    /// A simulation of `scene` (from `path`) on the current broad phase and pair limit, at
    /// step 0 even when step 0 passes the limit ([`Self::sync_stopped`] then pauses and says
    /// so), and a new recording of it.
    fn start(
        &self,
        scene: &Scene,
        path: Option<&Path>,
    ) -> Result<(Recording<Sim>, Sim), SceneError> {
        let file = recording_name(scene, path);
        self.start_origin(&Origin::Scene(Box::new(scene.clone())), &file)
    }

    /// [`Self::start`] of any origin (a scene, or a trace), recorded under the name `file`.
    fn start_origin(
        &self,
        origin: &Origin,
        file: &str,
    ) -> Result<(Recording<Sim>, Sim), SceneError> {
        let (mut recording, sim) =
            Recording::start_from(origin, file, self.model.kind(), self.model.pair_limit())?;
        recording.set_budget_bytes(self.prefs.recording_budget_bytes());
        Ok((recording, sim))
    }

    /// What a command cannot do on a trace, and why (`None` when it can, or on a scene).
    fn refused_on_trace(&self, command: &Command) -> Option<&'static str> {
        if !self.model.sim.is_trace() {
            return None;
        }
        match command {
            Command::BeginDrag { .. }
            | Command::MoveSphere { .. }
            | Command::AddSphere { .. }
            | Command::DeleteSphere(_)
            | Command::SetGenerator(_) => Some(TRACE_HAS_NO_SPHERES),
            Command::Save
            | Command::SaveAs(_)
            | Command::SaveAsDialog
            | Command::ReplaceReadOnly(_) => Some(TRACE_IS_INPUT),
            _ => None,
        }
    }

    /// The document's tree settings become the simulation's: at a recorded step they are
    /// those in force then (the broad phase and the pair limit are read from the simulation
    /// itself).
    fn follow_sim_settings(&mut self) {
        self.model.doc.tree = self.model.sim.tree_settings();
    }

    /// Shows recorded step `step` (clamped to the last): the simulation becomes the state at
    /// that step, rebuilt from the recording; the recording is kept whole.
    pub(super) fn seek_to(&mut self, step: u64) {
        let last = self.model.recording.last_step();
        let step = step.min(last);
        self.model.playing = false;
        if step == self.model.sim.step_index() {
            return;
        }
        match self.model.recording.state_at(step) {
            Ok(sim) => {
                self.model.sim = sim;
                self.follow_sim_settings();
                self.model.rev += 1;
                self.view.drag = None;
                self.follow_compare(false);
                self.model.status = if step == last {
                    format!("Showing step {step}, the last recorded.")
                } else {
                    format!("Showing step {step} of {last} (recorded).")
                };
            }
            Err(e) => self.model.status = seek_error(step, &e),
        }
    }

    /// Applies `command` at once: the part of the state it changes takes it (the run, the
    /// motion, the files, or the views), each in a function of its own.
    fn apply_now(&mut self, command: Command) {
        if let Some(why) = self.refused_on_trace(&command) {
            self.model.status = format!("{why}.");
            return;
        }
        let unapplied = self
            .apply_run(command)
            .or_else(|c| self.apply_motion(c))
            .or_else(|c| self.apply_files(c))
            .or_else(|c| self.apply_view(c));
        if let Err(command) = unapplied {
            debug_assert!(false, "no part of the state applies {command:?}");
        }
    }

    /// Playing, stepping, seeking, undo, reset and compare mode: the run through time. `Err`
    /// gives back a command of another kind.
    fn apply_run(&mut self, command: Command) -> Result<(), Command> {
        match command {
            Command::StartCompare(side) => match self.start_compare(side) {
                Ok(()) => {
                    self.model.status = format!(
                        "Comparing from step {}: A is the document's run, B {}.",
                        self.model.sim.step_index(),
                        self.compare
                            .as_ref()
                            .map_or(String::new(), |c| c.side.describe())
                    );
                }
                Err(message) => self.model.status = message,
            },
            Command::StopCompare => {
                if self.compare.is_some() {
                    self.stop_compare();
                    self.model.status = "The comparison ended.".to_owned();
                }
            }
            Command::SetPlaying(on) => self.model.playing = on,
            Command::TogglePlay => {
                self.model.playing = !self.model.playing;
                self.model.status = if self.model.playing {
                    "Playing."
                } else {
                    "Paused."
                }
                .into();
            }
            Command::SeekTo(step) => self.seek_to(step),
            Command::StepBack => {
                let at = self.model.sim.step_index();
                if at == 0 {
                    self.model.playing = false;
                    self.model.status = "Step 0 is the first recorded step.".into();
                } else {
                    self.seek_to(at - 1);
                }
            }
            Command::Step if self.at_past_step() => {
                self.seek_to(self.model.sim.step_index() + 1);
            }
            Command::Step => {
                self.model.playing = false;
                let before = self.model.sim.step_index();
                self.step_once();
                if self.model.sim.step_index() == before || self.model.sim.is_at_end() {
                    // Not stepped (the recording is full, or the trace ended), or at the
                    // trace's end: the status says so.
                    return Ok(());
                }
                let r = self.model.sim.report();
                self.model.status = format!(
                    "Step {}: {} reinserted, pairs {}.",
                    r.step,
                    r.reinserted.len(),
                    if r.pairs_recomputed {
                        "recomputed"
                    } else {
                        "not recomputed"
                    }
                );
            }
            Command::Reset => self.reset(),
            Command::Undo => {
                if let Some(before) = self.model.before_restart.take() {
                    self.undo_restart(*before);
                    return Ok(());
                }
                let Some(step) = self.model.undo.pop() else {
                    self.model.status = "Nothing to undo.".into();
                    return Ok(());
                };
                let settings = step.settings;
                match self.apply_edit(Edit::SetTreeSettings(settings)) {
                    Ok(_) => {
                        let old = self.model.doc.tree;
                        self.model.doc.tree = settings;
                        self.model.dirty = true;
                        self.model.rev += 1;
                        self.record_step();
                        self.model.status =
                            format!("Undone: {}", describe_settings_change(&old, &settings));
                    }
                    Err(e) => {
                        self.model.undo.push(step);
                        self.model.status = format!("Undo refused: {e}");
                    }
                }
            }
            other => return Err(other),
        }
        Ok(())
    }

    /// The tree settings, the broad phase, the pair limit, rebuilds, the generator and the
    /// spheres: what changes the motion (applied and recorded through `apply_edit`). `Err`
    /// gives back a command of another kind.
    fn apply_motion(&mut self, command: Command) -> Result<(), Command> {
        match command {
            // Each setting goes through `apply_edit` (applied and recorded in one call); one
            // applied that stopped the broad phase is shown by `sync_stopped`.
            Command::SetTreeSettings(settings) => {
                match self.apply_edit(Edit::SetTreeSettings(settings)) {
                    Ok(_) => {
                        let old = self.model.doc.tree;
                        self.record_undo(old, settings);
                        self.model.doc.tree = settings;
                        self.model.dirty = true;
                        self.model.rev += 1;
                        self.record_step();
                        self.model.status = describe_settings_change(&old, &settings);
                    }
                    Err(e) => self.model.status = format!("Setting refused: {e}"),
                }
            }
            Command::SetBroadphase(kind) => match self.apply_edit(Edit::SetBroadphase(kind)) {
                Ok(_) => {
                    self.model.rev += 1;
                    self.record_step();
                    self.model.status = format!("Broad phase: {}.", broadphase_name(kind));
                }
                Err(e) => self.model.status = format!("Broad phase refused: {e}"),
            },
            Command::SetPairLimit(limit) => {
                match self.apply_edit(Edit::SetPairLimit(limit as u64)) {
                    Ok(outcome) => {
                        self.model.rev += 1;
                        self.record_step();
                        self.model.status = match outcome.stopped() {
                            None => format!("Pair limit: {limit} candidate pairs."),
                            Some(e) => format!(
                                "Pair limit {limit}: step {}: {e}",
                                self.model.sim.step_index()
                            ),
                        };
                    }
                    Err(e) => self.model.status = format!("Pair limit {limit} refused: {e}"),
                }
            }
            Command::SetValidateEveryStep(on) => {
                self.prefs.validate_every_step = on;
                self.model.validation = on.then(|| self.validate_tree());
            }
            Command::Rebuild => match self.apply_edit(Edit::Rebuild) {
                Ok(outcome) => {
                    self.model.rev += 1;
                    self.record_step();
                    self.model.status = match outcome.stopped() {
                        None => format!(
                            "Tree rebuilt from scratch ({}).",
                            RebuildKind::of(self.model.doc.tree.rebuild).name()
                        ),
                        Some(e) => {
                            format!("Tree rebuilt; step {}: {e}", self.model.sim.step_index())
                        }
                    };
                }
                Err(e) => self.model.status = format!("Rebuild refused: {e}"),
            },
            Command::SetGenerator(generate) => {
                let mut doc = self.model.doc.clone();
                doc.generate = generate;
                match doc
                    .validate(&self.document_name())
                    .and_then(|()| self.start(&doc, self.model.path.clone().as_deref()))
                {
                    Ok((recording, sim)) => {
                        let grown = doc.grown_world();
                        let grew = grown != doc.world;
                        // The world the simulation runs in is the document's world.
                        doc.world = grown;
                        let before = self.keep_before_restart("Apply", doc, recording, sim);
                        self.model.undo.clear();
                        self.model.document_id += 1;
                        self.model.dirty = true;
                        self.after_restart();
                        self.model.status = if grew {
                            let size = grown.max - grown.min;
                            format!(
                                "Generator applied; the world grew to {:.0} x {:.0} for the \
                                 density; the scene restarted.",
                                size.x, size.y
                            )
                        } else {
                            "Generator applied; the scene restarted.".into()
                        };
                        self.model.status.push_str(&before);
                        self.view.fit_pending = true;
                    }
                    // The generator's fields are named, not the file (an unsaved scene has
                    // none).
                    Err(e) => {
                        self.model.status = format!("Generator refused: {}", e.without_file());
                    }
                }
            }
            Command::BeginDrag { id, press } => {
                let Some(body) = self
                    .model
                    .sim
                    .spheres()
                    .iter()
                    .find(|b| b.sphere.id == id && b.alive)
                else {
                    return Ok(());
                };
                self.view.selection = Some(Pick::Sphere(id));
                self.view.drag = Some(SphereDrag {
                    id,
                    start_center_world: body.sphere.center,
                    press_in_world: press,
                    moves: 0,
                    reinserts: 0,
                    recomputations: 0,
                    active: true,
                });
            }
            Command::MoveSphere { id, center } => self.move_sphere(id, center),
            Command::EndDrag => {
                if let Some(drag) = &mut self.view.drag {
                    drag.active = false;
                }
            }
            Command::AddSphere { center } => self.add_sphere(center),
            Command::DeleteSphere(id) => match self.apply_edit(Edit::RemoveSphere { id }) {
                Ok(EditOutcome::Stopped(e)) => self.changed_but_stopped(&e),
                Ok(EditOutcome::Applied) => {
                    let recomputed = self.model.sim.report().pairs_recomputed;
                    self.model.dirty = true;
                    self.model.rev += 1;
                    self.record_step();
                    if self.view.selection == Some(Pick::Sphere(id)) {
                        self.view.selection = None;
                    }
                    self.model.status = format!(
                        "Sphere {id} removed from the tree; pairs {}.",
                        if recomputed {
                            "recomputed"
                        } else {
                            "not recomputed"
                        }
                    );
                }
                Err(e) => self.model.status = format!("Could not remove sphere {id}: {e}"),
            },
            Command::SetPairCost(cost) => {
                let cost = crate::sweep::check_pair_cost(cost).ok();
                let view = self.model.doc.view.get_or_insert_with(Default::default);
                if cost.is_some() && view.pair_cost != cost {
                    view.pair_cost = cost;
                    // A trace's document is never saved: no unsaved change to warn about.
                    if !self.model.sim.is_trace() {
                        self.model.dirty = true;
                    }
                }
            }
            other => return Err(other),
        }
        Ok(())
    }

    /// Opening, saving and exporting files, recordings and streams, and the live link. `Err`
    /// gives back a command of another kind.
    fn apply_files(&mut self, command: Command) -> Result<(), Command> {
        match command {
            Command::Open(path) => self.open(&path),
            Command::OpenBuiltin => {
                let scene = Scene::builtin_default();
                // A scene that cannot start has said why.
                self.replace_document(scene, None);
            }
            Command::OpenDialog => {
                self.request_file(FilePurpose::Open, self.model.path.clone());
            }
            Command::Save => match self.model.path.clone() {
                Some(path) => self.save_to(&path),
                None => self.request_file(FilePurpose::SaveAs, None),
            },
            Command::SaveAs(path) => self.save_to(&with_extension(path)),
            Command::ReplaceReadOnly(path) => {
                self.dialogs.replace_read_only = None;
                self.save_with(
                    &path,
                    WriteOptions {
                        replace_read_only: true,
                        ..WriteOptions::of_kind(crate::fileio::FileKind::Scene, false)
                    },
                );
            }
            Command::KeepReadOnly(path) => {
                self.dialogs.replace_read_only = None;
                self.model.status = format!(
                    "Not saved: {} is read-only and was left unchanged.",
                    path.display()
                );
            }
            Command::SaveAsDialog => {
                self.request_file(FilePurpose::SaveAs, self.model.path.clone());
            }
            Command::ExportDialog { text, format } => {
                self.dialogs.export = Some((text, format));
                self.request_file(FilePurpose::Export(format), self.model.path.clone());
            }
            Command::Export(path) => self.export_to(path),
            Command::SaveRecordingDialog => {
                if self.model.sim.is_trace() {
                    self.model.status = TRACE_HAS_NO_RECORDING_FILE.to_owned();
                } else {
                    self.request_file(FilePurpose::SaveRecording, self.model.path.clone());
                }
            }
            Command::SaveRecording(path) => self.save_recording(path),
            Command::FinishOpenRecording => self.finish_open_recording(),
            Command::CancelOpenRecording => {
                if let Some(job) = self.dialogs.opening.take() {
                    // The worker stops within a chunk or a step; its result is not waited for.
                    job.cancel();
                    self.model.status = format!(
                        "Opening the recording {} cancelled; the open scene is unchanged.",
                        job.path().display()
                    );
                }
            }
            Command::ListenDialog => self.dialogs.listen = true,
            Command::CloseListenDialog => self.dialogs.listen = false,
            Command::StartListening(addr) => self.start_listening(addr),
            Command::StopListening => {
                if let Some(job) = &self.dialogs.live {
                    job.stop();
                    self.model.status =
                        "Stopping: what the engine sent opens as a trace in a moment.".to_owned();
                }
            }
            Command::FinishLive => self.finish_live(),
            Command::SaveStreamDialog => {
                if self.model.received_from.is_some() {
                    self.request_file(FilePurpose::SaveStream, None);
                } else {
                    self.model.status = NOT_RECEIVED.to_owned();
                }
            }
            Command::SaveStream(path) => self.save_stream(path),
            other => return Err(other),
        }
        Ok(())
    }

    /// The views, the dialogs and the preferences: what changes only what is shown. `Err`
    /// gives back a command of another kind.
    fn apply_view(&mut self, command: Command) -> Result<(), Command> {
        match command {
            Command::Select(pick) => self.view.selection = pick,
            Command::Fit => {
                self.view.fit_pending = true;
                self.view.tree_fit_request += 1;
                self.view.fit_3d_request += 1;
            }
            Command::SetWorld3d(on) => {
                if self.model.doc.dimensions == 3 {
                    self.view.world_3d = on;
                }
            }
            Command::SetPlane(plane) => {
                if self.model.doc.dimensions == 3 && self.view.plane != plane {
                    self.view.plane = plane;
                    self.view.fit_pending = true;
                }
            }
            Command::ToggleHelp => self.dialogs.help = !self.dialogs.help,
            Command::Quit => {
                self.allow_close = true;
                self.close_requested = true;
            }
            Command::DismissError => self.model.error = None,
            Command::ShowHelp(on) => self.dialogs.help = on,
            Command::ShowAbout(on) => self.dialogs.about = on,
            Command::CloseFileDialog => self.dialogs.file = None,
            Command::CloseConfirm => self.dialogs.confirm = None,
            Command::Confirmed(command) => self.apply(*command, true),
            Command::ShowAdvisor(on) => self.dialogs.advisor = on,
            Command::SetPref(change) => {
                self.prefs.change(change);
                if let PrefChange::RecordingBudget(_) = change {
                    let budget = self.prefs.recording_budget_bytes();
                    self.model.recording.set_budget_bytes(budget);
                }
            }
            Command::Hover(pick) => self.view.hover = pick,
            Command::SetWorldCamera { camera, fitted } => {
                self.view.camera = camera;
                if fitted {
                    self.view.fit_pending = false;
                }
            }
            Command::AddDrawTime(ms) => self.view.draw_ms += ms,
            other => return Err(other),
        }
        Ok(())
    }

    /// Opens the file dialog for `purpose`, starting beside `start`.
    fn request_file(&mut self, purpose: FilePurpose, start: Option<PathBuf>) {
        self.dialogs.file_requests += 1;
        self.dialogs.file = Some(FileRequest {
            purpose,
            start,
            serial: self.dialogs.file_requests,
        });
    }

    /// Writes the export waiting for a file (a sweep's CSV or JSON) to `path`, with the
    /// format's extension when it has none, atomically.
    fn export_to(&mut self, path: PathBuf) {
        let Some((text, format)) = self.dialogs.export.take() else {
            self.model.status = "Nothing to export: run a sweep first.".into();
            return;
        };
        let path = FilePurpose::Export(format).with_extension(path);
        match crate::fileio::write_atomic(&path, text.as_bytes(), WriteOptions::default()) {
            Ok(()) => self.model.status = format!("Exported the sweep to {}.", path.display()),
            Err(e) => {
                self.model.status = format!("Could not export the sweep to {}.", path.display());
                self.show_error(e.to_string(), KEPT_ON_EXPORT);
            }
        }
    }

    /// An edit that was applied, after which the pairs passed the limit.
    /// After an edit that was made but stopped the broad phase (`why`).
    fn changed_but_stopped(&mut self, why: &crate::broadphase::BroadphaseError) {
        self.model.dirty = true;
        self.model.rev += 1;
        self.record_step();
        self.model.status = format!("step {}: {why}", self.model.sim.step_index());
    }

    fn reset(&mut self) {
        let started = match &self.model.sim {
            Sim::Scene(_) => self.start(&self.model.doc, self.model.path.as_deref()),
            Sim::Trace(t) => self.start_origin(
                &Origin::Trace(TraceStart {
                    trace: std::sync::Arc::clone(t.trace()),
                    config: self.model.doc.tree,
                }),
                &recording_name(&self.model.doc, self.model.path.as_deref()),
            ),
        };
        match started {
            Ok((recording, sim)) => {
                let doc = self.model.doc.clone();
                let before = self.keep_before_restart("Reset", doc, recording, sim);
                self.after_restart();
                self.model.status = if self.model.sim.is_trace() {
                    "Reset to step 0 of the trace.".into()
                } else {
                    "Reset to step 0 of the scene as last opened or saved.".into()
                };
                self.model.status.push_str(&before);
            }
            Err(e) => self.model.status = format!("Reset failed: {e}"),
        }
    }

    /// Makes `doc`, `sim` and `recording` the run, keeping what they replace for Undo
    /// ([`Model::before_restart`](super::state::Model::before_restart)); what the status line
    /// adds about it (nothing when the run kept had not stepped). A restart of a run that a
    /// restart began and that has not moved since (R pressed twice) keeps the run before the
    /// first, not the empty one.
    fn keep_before_restart(
        &mut self,
        what: &'static str,
        doc: Scene,
        recording: Recording<Sim>,
        sim: Sim,
    ) -> String {
        let keep_older =
            self.model.before_restart.is_some() && self.model.recording.last_step() == 0;
        let before = BeforeRestart {
            doc: std::mem::replace(&mut self.model.doc, doc),
            dirty: self.model.dirty,
            document_id: self.model.document_id,
            undo: self.model.undo.clone(),
            sim: std::mem::replace(&mut self.model.sim, sim),
            recording: std::mem::replace(&mut self.model.recording, recording),
            history: std::mem::take(&mut self.model.history),
            what,
        };
        match &mut self.model.before_restart {
            Some(older) if keep_older => older.what = what,
            slot => *slot = Some(Box::new(before)),
        }
        let steps = self
            .model
            .before_restart
            .as_ref()
            .map_or(0, |b| b.recording.last_step());
        if steps == 0 {
            String::new()
        } else {
            format!(" Ctrl+Z brings back the run before it ({steps} recorded steps).")
        }
    }

    /// Puts back the run a Reset or an Apply replaced.
    fn undo_restart(&mut self, before: BeforeRestart) {
        let BeforeRestart {
            doc,
            dirty,
            document_id,
            undo,
            sim,
            recording,
            history,
            what,
        } = before;
        self.model.doc = doc;
        self.model.dirty = dirty;
        self.model.document_id = document_id;
        self.model.undo = undo;
        self.model.sim = sim;
        self.model.recording = recording;
        self.model.history = history;
        self.model.playing = false;
        self.model.rev += 1;
        // Its samples were dropped by the restart; they are measured again as it goes on.
        self.model.health.clear();
        self.view.drag = None;
        self.view.hover = None;
        self.view.tree_fit_request += 1;
        self.model.status = format!(
            "Undone: {what}. Back at step {} of the run ({} recorded steps).",
            self.model.sim.step_index(),
            self.model.recording.last_step()
        );
    }

    fn after_restart(&mut self) {
        // A comparison follows one run: a restarted one ends it.
        self.stop_compare();
        self.model.rev += 1;
        self.model.health.clear();
        self.model.history.clear();
        self.view.drag = None;
        self.view.hover = None;
        self.view.tree_fit_request += 1;
        self.record_step();
    }

    fn move_sphere(&mut self, id: u32, center: Vec3) {
        let radius = self
            .model
            .sim
            .spheres()
            .iter()
            .find(|b| b.sphere.id == id)
            .map_or(0.0, |b| b.sphere.radius);
        let center = self.clamp_center(radius, center);
        match self.apply_edit(Edit::MoveSphere { id, center }) {
            Ok(EditOutcome::Stopped(e)) => self.changed_but_stopped(&e),
            Ok(EditOutcome::Applied) => {
                let report = self.model.sim.report();
                let reinserted = report.reinserted.contains(&id);
                let recomputed = report.pairs_recomputed;
                self.model.dirty = true;
                self.model.rev += 1;
                self.record_step();
                let mut total = (u32::from(reinserted), u32::from(recomputed));
                if let Some(drag) = &mut self.view.drag
                    && drag.id == id
                {
                    drag.moves += 1;
                    drag.reinserts += u32::from(reinserted);
                    drag.recomputations += u32::from(recomputed);
                    total = (drag.reinserts, drag.recomputations);
                }
                self.model.status = if reinserted {
                    format!(
                        "Sphere {id} left its fat box: reinserted into the tree, pairs recomputed ({} reinserts this drag).",
                        total.0
                    )
                } else {
                    format!(
                        "Sphere {id} moved within its fat box: not reinserted, pairs {} ({} reinserts this drag).",
                        if recomputed {
                            "recomputed"
                        } else {
                            "not recomputed"
                        },
                        total.0
                    )
                };
            }
            Err(e) => self.model.status = format!("Could not move sphere {id}: {e}"),
        }
    }

    /// `center` kept inside the scene's walls for a sphere of `radius`.
    fn clamp_center(&self, radius: f32, center: Vec3) -> Vec3 {
        self.model
            .sim
            .as_scene()
            .map_or(center, |s| s.clamp_center(radius, center))
    }

    fn add_sphere(&mut self, center: Vec3) {
        let bodies = self.model.sim.spheres();
        let id = self.model.sim.as_scene().map_or(0, Simulation::unused_id);
        let mut radii: Vec<f32> = bodies
            .iter()
            .filter(|b| b.alive)
            .map(|b| b.sphere.radius)
            .collect();
        radii.sort_by(f32::total_cmp);
        let radius = radii.get(radii.len() / 2).copied().unwrap_or(1.0);
        let center = self.clamp_center(radius, center);
        let sphere = Sphere {
            id,
            label: None,
            center,
            radius,
            velocity: Vec3::ZERO,
            appear_at: self.model.sim.step_index(),
            disappear_at: None,
        };
        match self.apply_edit(Edit::AddSphere(sphere)) {
            Ok(EditOutcome::Stopped(e)) => self.changed_but_stopped(&e),
            Ok(EditOutcome::Applied) => {
                let recomputed = self.model.sim.report().pairs_recomputed;
                self.model.dirty = true;
                self.model.rev += 1;
                self.record_step();
                self.view.selection = Some(Pick::Sphere(id));
                self.model.status = format!(
                    "Sphere {id} added and inserted into the tree; pairs {}.",
                    if recomputed {
                        "recomputed"
                    } else {
                        "not recomputed"
                    }
                );
            }
            Err(e) => self.model.status = format!("Could not add a sphere: {e}"),
        }
    }

    fn open(&mut self, path: &Path) {
        if is_recording_file(path) {
            self.open_recording(path);
            return;
        }
        if crate::trace::is_trace_path(path) {
            self.open_trace(path);
            return;
        }
        if crate::scene::boxlist::opens_as_box_list(path) {
            self.import_box_list(path);
            return;
        }
        match Scene::load(path) {
            Ok(scene) => {
                // A scene that cannot start has said why.
                self.replace_document(scene, Some(path.to_path_buf()));
            }
            Err(e) => {
                let message = e.to_string();
                self.model.status = format!(
                    "Could not open {}; the open scene is unchanged.",
                    path.display()
                );
                self.show_error(message, KEPT_ON_OPEN);
            }
        }
    }

    /// Records the settings before a change as an undo step; the frames of one slider drag
    /// (the same single number moved in consecutive frames) make one step.
    fn record_undo(&mut self, old: TreeConfig, new: TreeConfig) {
        if old == new {
            return;
        }
        let field = single_numeric_change(&old, &new);
        let frame = self.model.frame;
        if let Some(last) = self.model.undo.last_mut()
            && field.is_some()
            && last.field == field
            && frame <= last.frame + 1
        {
            last.frame = frame;
            return;
        }
        if self.model.undo.len() >= MAX_UNDO {
            self.model.undo.remove(0);
        }
        self.model.undo.push(SettingsUndo {
            settings: old,
            field,
            frame,
        });
    }

    /// Starts opening a recording file (see [`crate::replay::file`]) on a worker thread:
    /// every step is rebuilt from its scene and checked while the window stays live and shows
    /// the progress (`Dialogs::opening`); [`Command::FinishOpenRecording`] then shows it.
    /// A recording being opened already is cancelled first.
    fn open_recording(&mut self, path: &Path) {
        if let Some(job) = self.dialogs.opening.take() {
            job.cancel();
        }
        match LoadJob::start(path, KeyframePolicy::default()) {
            Ok(job) => {
                self.dialogs.opening = Some(job);
                self.model.status = format!("Opening the recording {}…", path.display());
            }
            Err(e) => self.open_recording_failed(path, e.to_string()),
        }
    }

    fn open_recording_failed(&mut self, path: &Path, message: String) {
        self.model.status = format!(
            "Could not open the recording {}; the open scene is unchanged.",
            path.display()
        );
        self.show_error(message, KEPT_ON_OPEN);
    }

    /// Shows the recording opened on the worker thread once it has ended (waits for it
    /// otherwise: the progress window asks only once it has): the window shows its last step
    /// with the timeline filled. The document becomes the recording's scene, not saved
    /// (saving writes a scene, never over the recording).
    fn finish_open_recording(&mut self) {
        let Some(job) = self.dialogs.opening.take() else {
            return;
        };
        let path = job.path().to_path_buf();
        match job.wait() {
            Ok(LoadOutcome::Loaded(loaded)) => {
                let Loaded { recording, sim } = *loaded;
                let scene = recording.history().scene.clone();
                let mut recording =
                    recording.map::<Sim>(|scene| Origin::Scene(Box::new(scene)), Sim::Scene);
                let sim = Sim::Scene(sim);
                recording.set_budget_bytes(self.prefs.recording_budget_bytes());
                let last = recording.last_step();
                self.model.playing = false;
                self.install_document(scene, None, recording, sim);
                self.follow_sim_settings();
                self.prefs.push_recent(path.clone());
                self.model.status = format!(
                    "Opened the recording {} ({} steps); showing its last step, {last}.",
                    path.display(),
                    last + 1
                );
            }
            Ok(LoadOutcome::Cancelled) => {
                self.model.status = format!(
                    "Opening the recording {} cancelled; the open scene is unchanged.",
                    path.display()
                );
            }
            Err(e) => self.open_recording_failed(&path, e.to_string()),
        }
    }

    /// Writes the recording to `path` (with `.rec` when it has another extension) through
    /// [`crate::replay::file::save`] (a temporary file renamed over it): the document and the
    /// recording stay as they are either way.
    fn save_recording(&mut self, path: PathBuf) {
        let path = FilePurpose::SaveRecording.with_extension(path);
        let steps = self.model.recording.last_step() + 1;
        let Some(history) = crate::source::scene_history(self.model.recording.history()) else {
            self.model.status = TRACE_HAS_NO_RECORDING_FILE.to_owned();
            return;
        };
        match crate::replay::file::save(&history, &path) {
            Ok(()) => {
                self.model.status =
                    format!("Saved the recording ({steps} steps) to {}.", path.display());
            }
            Err(e) => {
                self.model.status = format!(
                    "Could not save the recording to {}; nothing was changed.",
                    path.display()
                );
                self.show_error(e.to_string(), KEPT_ON_SAVE_RECORDING);
            }
        }
    }

    /// Opens a trace file (see [`crate::trace`]): the window replays it from step 0 on the
    /// current broad phase and pair limit with the default tree settings, paused. The
    /// document becomes a scene made to describe it ([`trace_document`]); a trace is never
    /// saved.
    fn open_trace(&mut self, path: &Path) {
        let mut notes = String::new();
        let mut engine = None;
        let trace = match crate::stream::open_trace(path) {
            Ok((trace, info)) => {
                if let Some(info) = info {
                    notes = stream_notes(&info);
                    engine = engine_record(info.engine_parts);
                }
                std::sync::Arc::new(trace)
            }
            Err(e) => {
                self.model.status = format!(
                    "Could not open the trace {}; the open document is unchanged.",
                    path.display()
                );
                self.show_error(e.to_string(), KEPT_ON_OPEN);
                return;
            }
        };
        if self.show_trace(trace, Some(path), &notes) {
            self.model.engine = engine;
        }
    }

    /// Starts the live link on `addr` (see [`crate::live`]); a session live already is
    /// stopped first (what it received opens as a trace).
    fn start_listening(&mut self, addr: std::net::SocketAddr) {
        if let Some(job) = &self.dialogs.live {
            job.stop();
        }
        match crate::live::LiveJob::start(addr) {
            Ok(job) => {
                self.dialogs.listen = false;
                let local = job.addr();
                self.model.status = if crate::stream::listen::is_loopback(&local) {
                    format!("Waiting for an engine on {local}: start it with its recorder.")
                } else {
                    crate::stream::listen::open_warning(&local)
                };
                self.dialogs.live = Some(job);
            }
            Err(e) => {
                self.model.status = "Could not listen; the open document is unchanged.".to_owned();
                self.show_error(e, KEPT_ON_OPEN);
            }
        }
    }

    /// Opens what the live session received as a trace once it has ended.
    fn finish_live(&mut self) {
        let Some(mut job) = self.dialogs.live.take() else {
            return;
        };
        let Some(result) = job.take_result() else {
            // Not ended yet: keep it.
            self.dialogs.live = Some(job);
            return;
        };
        let ended = result.end.describe();
        match result.trace {
            Ok(trace) => {
                let mut notes = stream_notes(&result.info);
                // A refusal the stream's notes say already ("stops early: …") is not said twice.
                if result.end.is_error() && result.info.stopped.as_deref() != Some(&ended) {
                    notes.push_str(&format!(
                        " The stream was refused: {}",
                        crate::text::excerpt(&ended, 240)
                    ));
                }
                let steps = trace.step_count();
                if !self.show_trace(std::sync::Arc::new(trace), None, &notes) {
                    return;
                }
                let mut info = result.info;
                // The parts go to `engine` (the views'), the rest is kept for the save.
                self.model.engine = engine_record(std::mem::take(&mut info.engine_parts));
                self.model.received_from = Some(if info.engine.is_empty() {
                    "an engine".to_owned()
                } else {
                    info.engine.clone()
                });
                self.model.received_info = Some(std::sync::Arc::new(info));
                self.model.received_stream =
                    (!result.stream.is_empty()).then(|| std::sync::Arc::new(result.stream));
                // Every received step goes on the timeline, as if it had been played.
                while !self.model.sim.is_at_end() {
                    let before = self.model.sim.step_index();
                    self.step_once();
                    if self.model.sim.step_index() == before {
                        break;
                    }
                }
                self.model.playing = false;
                self.model.status = format!(
                    "Live session ended ({ended}): {steps} steps received, showing the last.{notes}"
                );
            }
            Err(why) => {
                self.model.status = format!(
                    "Live session ended ({}): no step arrived; the open document is unchanged.",
                    crate::text::excerpt(&ended, 200)
                );
                if result.end.is_error() {
                    // `why` ends with the refusal when the stream said it (the trace's "no
                    // step: …"): the dialog says it once.
                    let message = if why.contains(ended.as_str()) {
                        why
                    } else {
                        format!("{ended} ({why})")
                    };
                    self.show_error(message, KEPT_ON_OPEN);
                }
            }
        }
    }

    /// Writes the stream received live (the document's trace) to `path` (with
    /// `.aabbstream` when it has another extension), atomically; the document stays as it is.
    fn save_stream(&mut self, path: PathBuf) {
        let path = FilePurpose::SaveStream.with_extension(path);
        let (Some(engine), Some(trace)) = (
            self.model.received_from.clone(),
            self.model
                .sim
                .as_trace()
                .map(|t| std::sync::Arc::clone(t.trace())),
        ) else {
            self.model.status = NOT_RECEIVED.to_owned();
            return;
        };
        // The frames as they arrived when the window has them; written again from what it kept
        // otherwise.
        let encoded;
        let source = match &self.model.received_stream {
            Some(bytes) => Ok((
                bytes.as_slice(),
                self.model
                    .engine
                    .as_ref()
                    .map_or(0, |e| e.summary.steps_with_parts),
                "",
            )),
            None => {
                let info = self.model.received_info.clone().unwrap_or_default();
                encoded = crate::received::encode(&trace, &info, self.model.engine.as_deref());
                encoded
                    .as_ref()
                    .map(|w| (w.bytes.as_slice(), w.steps_with_parts, w.missing.as_str()))
                    .map_err(Clone::clone)
            }
        };
        let written = source.and_then(|(bytes, steps_with_parts, missing)| {
            crate::fileio::write_atomic(
                &path,
                bytes,
                crate::fileio::WriteOptions::of_kind(crate::fileio::FileKind::Stream, false),
            )
            .map_err(|e| e.to_string())
            .map(|()| (bytes.len(), steps_with_parts, missing.to_owned()))
        });
        match written {
            Ok((len, steps_with_parts, missing)) => {
                let parts = if steps_with_parts > 0 {
                    format!(" (the engine's broad phase at {steps_with_parts} of them)")
                } else {
                    String::new()
                };
                self.model.status = format!(
                    "Saved the {} steps received from {}{parts} to {} ({:.1} MiB).{missing}",
                    trace.step_count(),
                    crate::text::excerpt(&engine, 80),
                    path.display(),
                    len as f64 / (1024.0 * 1024.0),
                );
            }
            Err(e) => {
                self.model.status = format!(
                    "Could not save the received stream to {}; nothing was changed.",
                    path.display()
                );
                self.show_error(e, KEPT_ON_SAVE_RECORDING);
            }
        }
    }

    /// Makes `trace` (from `path`, or received live when `None`) the document: replayed from
    /// step 0 on the current broad phase and pair limit with the default tree settings,
    /// paused; `notes` end the status line.
    fn show_trace(
        &mut self,
        trace: std::sync::Arc<crate::trace::Trace>,
        path: Option<&Path>,
        notes: &str,
    ) -> bool {
        let shown = path.map_or_else(|| trace.name().to_owned(), |p| p.display().to_string());
        let doc = trace_document(&trace, TreeConfig::default());
        let origin = Origin::Trace(TraceStart {
            trace: std::sync::Arc::clone(&trace),
            config: doc.tree,
        });
        match self.start_origin(&origin, &shown) {
            Ok((recording, sim)) => {
                self.model.playing = false;
                self.install_document(doc, path.map(Path::to_path_buf), recording, sim);
                if let Some(path) = path {
                    self.prefs.push_recent(path.to_path_buf());
                }
                self.model.status = format!(
                    "Opened the trace {} ({} steps, {} dimensions, up to {} boxes a step); \
                     press Play to step through it.{notes}",
                    self.document_name(),
                    trace.step_count(),
                    trace.dimensions(),
                    trace.max_boxes()
                );
                true
            }
            Err(e) => {
                self.model.status =
                    format!("Could not start the trace {shown}; the open document is unchanged.");
                self.show_error(e.to_string(), KEPT_ON_OPEN);
                false
            }
        }
    }

    /// Makes `scene` (from `path`) the document, run by `sim` and recorded by `recording`.
    fn install_document(
        &mut self,
        scene: Scene,
        path: Option<PathBuf>,
        recording: Recording<Sim>,
        sim: Sim,
    ) {
        self.model.sim = sim;
        self.model.recording = recording;
        self.model.doc = scene;
        self.model.undo.clear();
        self.model.before_restart = None;
        self.model.document_id += 1;
        self.model.received_from = None;
        self.model.received_info = None;
        self.model.received_stream = None;
        self.model.engine = None;
        self.model.path = path;
        self.model.dirty = false;
        self.model.error = None;
        self.view.selection = None;
        self.after_restart();
        self.apply_scene_view();
    }

    /// Imports a box list (level geometry: see [`crate::scene::boxlist`]) as a new scene of
    /// its static boxes, as `import-boxes` makes one (no spheres, named after the file), not
    /// yet saved: Save asks where. The list's file goes on the recent list, so opening it
    /// again imports it again.
    fn import_box_list(&mut self, path: &Path) {
        use crate::scene::boxlist::{read_box_list, scene_of, scene_problem};
        let refused = |app: &mut Self, message: String| {
            app.model.status = format!(
                "Could not import the box list {}; the open scene is unchanged.",
                path.display()
            );
            app.show_error(message, KEPT_ON_OPEN);
        };
        let set = match read_box_list(path, crate::scene::MAX_SPHERES) {
            Ok(set) => set,
            Err(message) => return refused(self, message),
        };
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let scene = scene_of(&set, name, 0);
        if let Err(message) = scene_problem(&scene) {
            let file = crate::text::escape_controls(&path.display().to_string());
            return refused(self, format!("{file}: {message}"));
        }
        if self.replace_document(scene, None) {
            self.prefs.push_recent(path.to_path_buf());
            self.model.status = format!(
                "Imported {} static boxes ({}D) from {} as a new scene, not yet saved: Save \
                 asks where to keep it.{}",
                set.boxes.len(),
                set.dimensions,
                path.display(),
                self.document_warnings()
            );
        }
    }

    /// Makes `scene` the document (from `path`, or new when `None`); true when it started,
    /// false when it could not (the error is shown and the open document kept).
    fn replace_document(&mut self, scene: Scene, path: Option<PathBuf>) -> bool {
        match self.start(&scene, path.as_deref()) {
            Ok((recording, sim)) => {
                // A recording still being opened would replace this document when done.
                if let Some(job) = self.dialogs.opening.take() {
                    job.cancel();
                }
                self.install_document(scene, path.clone(), recording, sim);
                if let Some(p) = path {
                    self.prefs.push_recent(p);
                }
                self.model.status = self.opened_message();
                true
            }
            Err(e) => {
                self.model.status =
                    "Could not start the scene; the open scene is unchanged.".into();
                self.show_error(e.to_string(), KEPT_ON_OPEN);
                false
            }
        }
    }

    fn save_to(&mut self, path: &Path) {
        // A file of another kind (source code, a box list, a recording) is not replaced: the
        // save is refused with a message naming it (save under another name).
        self.save_with(
            path,
            WriteOptions::of_kind(crate::fileio::FileKind::Scene, false),
        );
    }

    /// Saves the running scene (with the view) to `path`. A read-only file is not replaced
    /// unless `options` say so: the user is asked first (Replace / Cancel).
    fn save_with(&mut self, path: &Path, options: WriteOptions) {
        let Some(sim) = self.model.sim.as_scene() else {
            self.model.status = format!("{TRACE_IS_INPUT}.");
            return;
        };
        let mut scene = sim.scene();
        scene.view = Some(self.view_settings());
        match scene.save_with(path, options) {
            Ok(()) => {
                self.model.doc = scene;
                self.model.path = Some(path.to_path_buf());
                self.model.dirty = false;
                self.prefs.push_recent(path.to_path_buf());
                self.model.status = format!("Saved {}.", path.display());
            }
            Err(SceneError::ReadOnly { .. }) => {
                self.dialogs.replace_read_only = Some(path.to_path_buf());
                self.model.status = format!(
                    "{} is read-only: replace it, or cancel the save?",
                    path.display()
                );
            }
            Err(e) => {
                self.model.status = format!("Could not save {}.", path.display());
                self.show_error(e.to_string(), KEPT_ON_SAVE);
            }
        }
    }
}

/// The document standing for an open trace: its name, dimensions and time step, no spheres,
/// `tree` as its settings, and as its world the box holding every box of every step (what
/// Fit frames).
#[must_use]
pub(super) fn trace_document(trace: &crate::trace::Trace, tree: TreeConfig) -> Scene {
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

/// True when `path` is a recording (whatever its extension; see
/// [`crate::fileio::open_as`]); false when it cannot be read (opening it as a scene then says
/// why).
pub(super) fn is_recording_file(path: &Path) -> bool {
    crate::fileio::open_as(path) == crate::fileio::OpenAs::Recording
}

fn describe_settings_change(old: &TreeConfig, new: &TreeConfig) -> String {
    if old.margin != new.margin {
        format!(
            "Margin {:.3}: every fat box recomputed, pairs recomputed.",
            new.margin
        )
    } else if old.velocity_lookahead != new.velocity_lookahead {
        format!(
            "Look-ahead {:.3} s: every fat box recomputed, pairs recomputed.",
            new.velocity_lookahead
        )
    } else if old.insertion != new.insertion {
        format!(
            "Insertion cost {:?}: used from the next insertion on.",
            new.insertion
        )
    } else if old.balancing != new.balancing {
        format!(
            "Balancing {:?}: used from the next insertion on.",
            new.balancing
        )
    } else if old.pairs != new.pairs {
        format!("Pair method {:?}.", new.pairs)
    } else if old.update != new.update {
        format!(
            "Update mode {:?}: used from the next move out of a fat box on.",
            new.update
        )
    } else {
        "Tree settings unchanged.".into()
    }
}

/// `"margin"` or `"look-ahead"` when that is the only setting that differs, else `None`.
fn single_numeric_change(old: &TreeConfig, new: &TreeConfig) -> Option<&'static str> {
    let same_rest = |a: &TreeConfig, b: &TreeConfig| {
        a.insertion == b.insertion
            && a.balancing == b.balancing
            && a.pairs == b.pairs
            && a.update == b.update
    };
    if !same_rest(old, new) {
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

/// What a stream file says of itself, for the status line: its engine, the steps the engine
/// dropped and an early stop (empty for none).
/// The engine's broad phase of a stream, kept for the views when the stream carried any.
fn engine_record(
    record: crate::stream::engine::EngineRecord,
) -> Option<std::sync::Arc<crate::stream::engine::EngineRecord>> {
    (!record.steps.is_empty()).then(|| std::sync::Arc::new(record))
}

fn stream_notes(info: &crate::stream::StreamInfo) -> String {
    let mut notes = String::new();
    if !info.engine.is_empty() {
        notes.push_str(&format!(
            " Recorded from {}.",
            crate::text::excerpt(&info.engine, 80)
        ));
    }
    match info.gaps.as_slice() {
        [] => {}
        [gap] => notes.push_str(&format!(" {gap} (after step {}).", gap.after)),
        gaps => notes.push_str(&format!(
            " {} steps dropped by the engine in {} gaps (the first: {}).",
            info.dropped_steps(),
            gaps.len(),
            gaps[0]
        )),
    }
    if let Some(why) = &info.stopped {
        notes.push_str(&format!(
            " The stream stops early: {}",
            crate::text::excerpt(why, 160)
        ));
    }
    notes
}

/// Why File > "Save received stream…" does nothing for this document.
const NOT_RECEIVED: &str = "Only a stream received live is saved this way (File > Listen for an engine…); a trace file is kept already.";
