//! How commands change the state: [`State::apply`], the one path by which the UI changes the
//! model, the preferences and the shared view state. Imports no view.

use super::commands::{Command, broadphase_name};
use super::files::FilePurpose;
use super::pick::{Pick, SphereDrag};
use super::prefs::PrefChange;
use super::state::{
    DiscardNote, FileRequest, KEPT_ON_EXPORT, KEPT_ON_OPEN, KEPT_ON_SAVE, KEPT_ON_SAVE_RECORDING,
    State, seek_error,
};
use crate::broadphase::health::RebuildKind;
use crate::fileio::WriteOptions;
use crate::replay::file::{LoadJob, LoadOutcome, Loaded};
use crate::replay::{Edit, EditOutcome, KeyframePolicy};
use crate::scene::{Scene, SceneError, Simulation, Sphere};
use crate::session::{
    SaveStreamError, Session, Start, Undone, describe_settings_change, stream_notes,
};
use crate::source::{TRACE_HAS_NO_RECORDING_FILE, TRACE_HAS_NO_SPHERES, TRACE_IS_INPUT};
use glam::Vec3;
use std::path::{Path, PathBuf};

fn with_extension(path: PathBuf) -> PathBuf {
    FilePurpose::SaveAs.with_extension(path)
}

impl State {
    /// Applies one command. `confirmed` is true once the user agreed to lose unsaved changes.
    pub fn apply(&mut self, command: Command, confirmed: bool) {
        if command.discards_changes() && self.session.dirty() && !confirmed {
            self.dialogs.confirm = Some(command);
            return;
        }
        let kind = std::mem::discriminant(&command);
        let status_before = self.model.status.clone();
        self.apply_now(command);
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

    /// How a new session starts: the current broad phase and pair limit, the preferred
    /// recording budget; at step 0 even when step 0 passes the limit ([`Self::sync_stopped`]
    /// then pauses and says so).
    fn start(&self) -> Start {
        self.session.start(self.prefs.recording_budget_bytes())
    }

    /// What a command cannot do on a trace, and why (`None` when it can, or on a scene).
    fn refused_on_trace(&self, command: &Command) -> Option<&'static str> {
        if !self.session.sim().is_trace() {
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

    /// Shows recorded step `step` (clamped to the last): the simulation becomes the state at
    /// that step, rebuilt from the recording; the recording is kept whole.
    pub(super) fn seek_to(&mut self, step: u64) {
        let last = self.session.recording().last_step();
        let step = step.min(last);
        self.model.playing = false;
        match self.session.seek(step) {
            Ok(false) => {}
            Ok(true) => {
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
        if self.shows_live() {
            match command {
                // The timeline's steps and Space act on the live view: hold, follow.
                Command::SeekTo(step) => return self.live_show(Some(step)),
                Command::TogglePlay => {
                    let hold =
                        match &self.live_held {
                            Some(_) => None,
                            None => self.dialogs.live.as_ref().and_then(|job| {
                                job.session().as_ref().map(|s| s.sim().step_index())
                            }),
                        };
                    return self.live_show(hold);
                }
                ref c if acts_on_the_run(c) => {
                    self.model.status = LIVE_WAITS.to_owned();
                    return;
                }
                _ => {}
            }
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
                        self.session.sim().step_index(),
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
                let at = self.session.sim().step_index();
                if at == 0 {
                    self.model.playing = false;
                    self.model.status = "Step 0 is the first recorded step.".into();
                } else {
                    self.seek_to(at - 1);
                }
            }
            Command::Step if self.at_past_step() => {
                self.seek_to(self.session.sim().step_index() + 1);
            }
            Command::Step => {
                self.model.playing = false;
                let before = self.session.sim().step_index();
                self.step_once();
                let sim = self.session.sim();
                if sim.step_index() == before || sim.is_at_end() {
                    // Not stepped (the recording is full, or the trace ended), or at the
                    // trace's end: the status says so.
                    return Ok(());
                }
                let r = sim.report();
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
            Command::Undo => self.undo_or_redo(true),
            Command::Redo => self.undo_or_redo(false),
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
                let old = self.session.settings();
                match self.apply_edit(Edit::SetTreeSettings(settings)) {
                    Ok(_) => self.model.status = describe_settings_change(&old, &settings),
                    Err(e) => self.model.status = format!("Setting refused: {e}"),
                }
            }
            Command::SetBroadphase(kind) => match self.apply_edit(Edit::SetBroadphase(kind)) {
                Ok(_) => self.model.status = format!("Broad phase: {}.", broadphase_name(kind)),
                Err(e) => self.model.status = format!("Broad phase refused: {e}"),
            },
            Command::SetPairLimit(limit) => {
                match self.apply_edit(Edit::SetPairLimit(limit as u64)) {
                    Ok(outcome) => {
                        self.model.status = match outcome.stopped() {
                            None => format!("Pair limit: {limit} candidate pairs."),
                            Some(e) => format!(
                                "Pair limit {limit}: step {}: {e}",
                                self.session.sim().step_index()
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
                    self.model.status = match outcome.stopped() {
                        None => format!(
                            "Tree rebuilt from scratch ({}).",
                            RebuildKind::of(self.session.settings().rebuild).name()
                        ),
                        Some(e) => {
                            format!(
                                "Tree rebuilt; step {}: {e}",
                                self.session.sim().step_index()
                            )
                        }
                    };
                }
                Err(e) => self.model.status = format!("Rebuild refused: {e}"),
            },
            Command::SetGenerator(generate) => {
                let name = self.document_name();
                let budget = self.prefs.recording_budget_bytes();
                let history = std::mem::take(&mut self.model.history);
                match self.session.apply_generator(generate, &name, budget) {
                    Ok((grew, steps)) => {
                        self.after_restart(history);
                        self.model.status = if grew {
                            let w = self.session.doc().world;
                            let size = w.max - w.min;
                            format!(
                                "Generator applied; the world grew to {:.0} x {:.0} for the \
                                 density; the scene restarted.",
                                size.x, size.y
                            )
                        } else {
                            "Generator applied; the scene restarted.".into()
                        };
                        self.model.status.push_str(&restart_undo_note(steps));
                        self.view.fit_pending = true;
                    }
                    // The generator's fields are named, not the file (an unsaved scene has
                    // none).
                    Err(e) => {
                        self.model.history = history;
                        self.model.status = format!("Generator refused: {}", e.without_file());
                    }
                }
            }
            Command::BeginDrag { id, press } => {
                let Some(body) = self
                    .session
                    .sim()
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
                    let recomputed = self.session.sim().report().pairs_recomputed;
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
                if let Ok(cost) = crate::sweep::check_pair_cost(cost) {
                    self.session.set_pair_cost(cost);
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
                self.request_file(FilePurpose::Open, self.doc_path());
            }
            Command::Save => match self.doc_path() {
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
                self.request_file(FilePurpose::SaveAs, self.doc_path());
            }
            Command::ExportDialog { text, format } => {
                self.dialogs.export = Some((text, format));
                self.request_file(FilePurpose::Export(format), self.doc_path());
            }
            Command::Export(path) => self.export_to(path),
            Command::SaveRecordingDialog => {
                if self.session.sim().is_trace() {
                    self.model.status = TRACE_HAS_NO_RECORDING_FILE.to_owned();
                } else {
                    self.request_file(FilePurpose::SaveRecording, self.doc_path());
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
            Command::ShowSession(index) => self.show_session(index),
            Command::SaveStreamDialog => {
                if self.session.received().is_some() {
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
                if self.session.doc().dimensions == 3 {
                    self.view.world_3d = on;
                }
            }
            Command::SetPlane(plane) => {
                if self.session.doc().dimensions == 3 && self.view.plane != plane {
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
                    self.session.set_budget_bytes(budget);
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
            Command::LiveShow(step) => self.live_show(step),
            other => return Err(other),
        }
        Ok(())
    }

    /// Holds the live view at received step `step` (clamped to the last our side has
    /// stepped), rebuilt from the live session's recording, or follows the newest (`None`).
    fn live_show(&mut self, step: Option<u64>) {
        let Some(job) = &self.dialogs.live else {
            return;
        };
        let Some(step) = step else {
            self.live_held = None;
            self.model.status = "The live view follows the engine's newest step.".to_owned();
            return;
        };
        let live = job.session();
        let Some(session) = live.as_ref() else {
            return;
        };
        let last = session.recording().last_step();
        let step = step.min(last);
        match session.recording().state_at(step) {
            Ok(sim) => {
                let rev = self.live_held.as_ref().map_or(1, |h| h.rev + 1);
                self.live_held = Some(super::state::LiveHeld { sim, rev });
                self.model.status = format!(
                    "The live view holds received step {step} of {last}; the engine, the \
                     recording and our tree go on (Follow returns to the newest)."
                );
            }
            Err(e) => self.model.status = seek_error(step, &e),
        }
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
        self.model.status = format!("step {}: {why}", self.session.sim().step_index());
    }

    /// The document's file, if any.
    fn doc_path(&self) -> Option<PathBuf> {
        self.session.path().map(Path::to_path_buf)
    }

    /// Reset: the session starts again from step 0 (its run kept for Undo).
    fn reset(&mut self) {
        let budget = self.prefs.recording_budget_bytes();
        let history = std::mem::take(&mut self.model.history);
        match self.session.reset(budget) {
            Ok(steps) => {
                self.after_restart(history);
                self.model.status = if self.session.sim().is_trace() {
                    "Reset to step 0 of the trace.".into()
                } else {
                    "Reset to step 0 of the scene as last opened or saved.".into()
                };
                self.model.status.push_str(&restart_undo_note(steps));
            }
            Err(e) => {
                self.model.history = history;
                self.model.status = format!("Reset failed: {e}");
            }
        }
    }

    /// Undo (`undo`) or Redo: the session takes back (or makes again) a settings change, or
    /// brings back the run a restart replaced, with its charts.
    fn undo_or_redo(&mut self, undo: bool) {
        let done = if undo {
            self.session.undo()
        } else {
            self.session.redo()
        };
        match done {
            Ok(Undone::Nothing) => {
                self.model.status = if undo {
                    "Nothing to undo."
                } else {
                    "Nothing to redo."
                }
                .into();
            }
            Ok(Undone::Settings {
                from,
                to,
                discarded,
            }) => {
                self.note_discarded(discarded);
                self.model.history_before_restart = None;
                self.record_step();
                let verb = if undo { "Undone" } else { "Redone" };
                self.model.status = format!("{verb}: {}", describe_settings_change(&from, &to));
            }
            Ok(Undone::Restart { what }) => {
                self.model.history = self.model.history_before_restart.take().unwrap_or_default();
                self.model.playing = false;
                // Its samples were dropped by the restart; they are measured again as it goes on.
                self.model.health.clear();
                self.view.drag = None;
                self.view.hover = None;
                self.view.tree_fit_request += 1;
                self.model.status = format!(
                    "Undone: {what}. Back at step {} of the run ({} recorded steps).",
                    self.session.sim().step_index(),
                    self.session.recording().last_step()
                );
            }
            Err(e) => {
                let verb = if undo { "Undo" } else { "Redo" };
                self.model.status = format!("{verb} refused: {e}");
            }
        }
    }

    /// What follows a restart or a new document: a comparison ends (it follows one run), the
    /// charts and health start again (`history` is the replaced run's charts, kept for Undo).
    fn after_restart(&mut self, history: super::history::RecentSteps) {
        self.stop_compare();
        self.model.history_before_restart = self
            .session
            .restart_undo_steps()
            .is_some()
            .then_some(history);
        self.model.health.clear();
        self.model.history.clear();
        self.view.drag = None;
        self.view.hover = None;
        self.view.tree_fit_request += 1;
        self.record_step();
    }

    fn move_sphere(&mut self, id: u32, center: Vec3) {
        let radius = self
            .session
            .sim()
            .spheres()
            .iter()
            .find(|b| b.sphere.id == id)
            .map_or(0.0, |b| b.sphere.radius);
        let center = self.clamp_center(radius, center);
        match self.apply_edit(Edit::MoveSphere { id, center }) {
            Ok(EditOutcome::Stopped(e)) => self.changed_but_stopped(&e),
            Ok(EditOutcome::Applied) => {
                let report = self.session.sim().report();
                let reinserted = report.reinserted.contains(&id);
                let recomputed = report.pairs_recomputed;
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
        self.session
            .sim()
            .as_scene()
            .map_or(center, |s| s.clamp_center(radius, center))
    }

    fn add_sphere(&mut self, center: Vec3) {
        let sim = self.session.sim();
        let bodies = sim.spheres();
        let id = sim.as_scene().map_or(0, Simulation::unused_id);
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
            appear_at: sim.step_index(),
            disappear_at: None,
        };
        match self.apply_edit(Edit::AddSphere(sphere)) {
            Ok(EditOutcome::Stopped(e)) => self.changed_but_stopped(&e),
            Ok(EditOutcome::Applied) => {
                let recomputed = self.session.sim().report().pairs_recomputed;
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
                let budget = self.prefs.recording_budget_bytes();
                let session = Session::of_recording(recording, sim, budget);
                let last = session.recording().last_step();
                self.model.playing = false;
                self.install_session(session);
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
        let steps = self.session.recording().last_step() + 1;
        let Some(history) = crate::source::scene_history(self.session.recording().history()) else {
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
    /// document becomes a scene made to describe it ([`crate::session::trace_document`]); a trace is never
    /// saved.
    fn open_trace(&mut self, path: &Path) {
        let (trace, info) = match crate::stream::open_trace(path) {
            Ok(opened) => opened,
            Err(e) => {
                self.model.status = format!(
                    "Could not open the trace {}; the open document is unchanged.",
                    path.display()
                );
                self.show_error(e.to_string(), KEPT_ON_OPEN);
                return;
            }
        };
        let notes = info.as_ref().map(stream_notes).unwrap_or_default();
        let Some(mut session) = self.trace_session(trace, Some(path)) else {
            return;
        };
        if let Some(info) = info {
            session.set_received(info, None, false);
        }
        self.show_trace(session, Some(path), &notes);
    }

    /// Starts the live link on `addr` (see [`crate::live`]); a session live already is
    /// stopped first (what it received opens as a trace).
    fn start_listening(&mut self, addr: std::net::SocketAddr) {
        if let Some(job) = &self.dialogs.live {
            job.stop();
        }
        match crate::live::LiveJob::start(addr, self.start()) {
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
        let Some(job) = self.dialogs.live.as_mut() else {
            return;
        };
        let Some(result) = job.take_finished() else {
            if job.ended() {
                // Stopped between engines: nothing more comes.
                let addr = job.addr();
                self.dialogs.live = None;
                self.reset_live_view();
                self.model.status = format!("Stopped listening on {addr}.");
            }
            return;
        };
        self.live_sessions_ended += 1;
        // Still listening: the next engine is a session of its own.
        let listening = if job.ended() {
            self.dialogs.live = None;
            String::new()
        } else {
            format!(" Still listening on {} for the next engine.", job.addr())
        };
        self.reset_live_view();
        let ended = result.end.describe();
        match result.session {
            Ok(mut session) => {
                let mut notes = stream_notes(&result.info);
                // A refusal the stream's notes say already ("stops early: …") is not said twice.
                if result.end.is_error() && result.info.stopped.as_deref() != Some(&ended) {
                    notes.push_str(&format!(
                        " The stream was refused: {}",
                        crate::text::excerpt(&ended, 240)
                    ));
                }
                // Every received step is on the timeline already: our side stepped them as
                // they came.
                let steps = session.recording().last_step() + 1;
                session.set_received(result.info, Some(std::sync::Arc::new(result.stream)), true);
                // The session shown, when it was received too, stays in the list.
                let before = self.session.received().is_some();
                let kept = self.show_trace(session, None, &notes).filter(|_| before);
                self.sessions.extend(kept);
                self.sessions.sort_by_key(Session::id);
                let dropped = self.fit_sessions();
                self.model.status = format!(
                    "Live session ended ({ended}): {steps} steps received, showing the \
                     last.{notes}{listening}{dropped}"
                );
            }
            Err(why) if why.starts_with(crate::live::OURS_FAILED) => {
                self.model.status = format!(
                    "Live session ended ({}): our tree could not take the received steps; \
                     the open document is unchanged.{listening}",
                    crate::text::excerpt(&ended, 200)
                );
                self.show_error(why, KEPT_ON_OPEN);
            }
            Err(why) => {
                self.model.status = format!(
                    "Live session ended ({}): no step arrived; the open document is \
                     unchanged.{listening}",
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
        match self.session.write_received(&path) {
            Ok(saved) => {
                let parts = if saved.steps_with_parts > 0 {
                    format!(
                        " (the engine's broad phase at {} of them)",
                        saved.steps_with_parts
                    )
                } else {
                    String::new()
                };
                self.model.status = format!(
                    "Saved the {} steps received from {}{parts} to {} ({:.1} MiB).{}",
                    saved.steps,
                    crate::text::excerpt(&saved.from, 80),
                    path.display(),
                    saved.bytes as f64 / (1024.0 * 1024.0),
                    saved.missing
                );
            }
            Err(SaveStreamError::NotReceived) => self.model.status = NOT_RECEIVED.to_owned(),
            Err(SaveStreamError::Write(e)) => {
                self.model.status = format!(
                    "Could not save the received stream to {}; nothing was changed.",
                    path.display()
                );
                self.show_error(e, KEPT_ON_SAVE_RECORDING);
            }
        }
    }

    /// A session of `trace` (from `path`, or received live when `None`) on the current broad
    /// phase and pair limit with the default tree settings; `None` when it cannot start (the
    /// error is shown and the open document kept).
    fn trace_session(
        &mut self,
        trace: crate::trace::Trace,
        path: Option<&Path>,
    ) -> Option<Session> {
        let shown = path.map_or_else(|| trace.name().to_owned(), |p| p.display().to_string());
        match Session::of_trace(
            std::sync::Arc::new(trace),
            path.map(Path::to_path_buf),
            self.start(),
        ) {
            Ok(session) => Some(session),
            Err(e) => {
                self.model.status =
                    format!("Could not start the trace {shown}; the open document is unchanged.");
                self.show_error(e.to_string(), KEPT_ON_OPEN);
                None
            }
        }
    }

    /// Makes a trace's `session` (from `path`) the document, paused; `notes` end the status
    /// line. Returns the session it replaced.
    fn show_trace(
        &mut self,
        session: Session,
        path: Option<&Path>,
        notes: &str,
    ) -> Option<Session> {
        self.model.playing = false;
        let replaced = self.install_session(session);
        if let Some(path) = path {
            self.prefs.push_recent(path.to_path_buf());
        }
        let trace = self
            .session
            .sim()
            .as_trace()
            .map(|t| std::sync::Arc::clone(t.trace()));
        if let Some(trace) = trace {
            self.model.status = format!(
                "Opened the trace {} ({} steps, {} dimensions, up to {} boxes a step); \
                 press Play to step through it.{notes}",
                self.document_name(),
                trace.step_count(),
                trace.dimensions(),
                trace.max_boxes()
            );
        }
        Some(replaced)
    }

    /// Shows received session `index` of the list (the one shown, when received too, takes
    /// its place in the list).
    fn show_session(&mut self, index: usize) {
        if index >= self.sessions.len() {
            return;
        }
        let chosen = self.sessions.remove(index);
        let name = received_name(&chosen);
        let steps = chosen.recording().last_step() + 1;
        self.model.playing = false;
        let replaced = self.install_session(chosen);
        if replaced.received().is_some() {
            self.sessions.push(replaced);
            self.sessions.sort_by_key(Session::id);
        }
        self.model.status = format!("Showing the session received from {name} ({steps} steps).");
    }

    /// Keeps the received sessions within the recording budget (with the one shown): the
    /// oldest go first. What the status line adds about those dropped (empty for none).
    fn fit_sessions(&mut self) -> String {
        let budget = self.prefs.recording_budget_bytes();
        let mut used: usize = self.session.recording().memory_bytes()
            + self
                .sessions
                .iter()
                .map(|s| s.recording().memory_bytes())
                .sum::<usize>();
        let mut dropped = Vec::new();
        while used > budget && !self.sessions.is_empty() {
            let oldest = self.sessions.remove(0);
            used = used.saturating_sub(oldest.recording().memory_bytes());
            dropped.push(received_name(&oldest));
        }
        if dropped.is_empty() {
            String::new()
        } else {
            format!(
                " Dropped the {} oldest received {} ({}) to stay within the recording budget: \
                 save a session you want to keep (File > Save received stream…).",
                dropped.len(),
                if dropped.len() == 1 {
                    "session"
                } else {
                    "sessions"
                },
                dropped.join(", ")
            )
        }
    }

    /// Makes `session` the document; returns the one it replaced (what Undo could bring back
    /// of it goes with it).
    fn install_session(&mut self, session: Session) -> Session {
        // A recording still being opened would replace this document when done.
        if let Some(job) = self.dialogs.opening.take() {
            job.cancel();
        }
        let replaced = std::mem::replace(&mut self.session, session);
        self.model.error = None;
        self.view.selection = None;
        self.after_restart(Default::default());
        self.apply_scene_view();
        replaced
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
        match Session::of_scene(scene, path.clone(), self.start()) {
            Ok(session) => {
                self.install_session(session);
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
        if self.session.sim().is_trace() {
            self.model.status = format!("{TRACE_IS_INPUT}.");
            return;
        }
        let view = self.view_settings();
        match self.session.save(path, view, options) {
            Ok(()) => {
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

/// True when `path` is a recording (whatever its extension; see
/// [`crate::fileio::open_as`]); false when it cannot be read (opening it as a scene then says
/// why).
pub(super) fn is_recording_file(path: &Path) -> bool {
    crate::fileio::open_as(path) == crate::fileio::OpenAs::Recording
}

/// What the status line adds after a restart: how to bring back the run it replaced
/// (nothing when that run had not stepped).
fn restart_undo_note(steps: u64) -> String {
    if steps == 0 {
        String::new()
    } else {
        format!(" Ctrl+Z brings back the run before it ({steps} recorded steps).")
    }
}

/// A received session's name for a list or a message: its engine and its number.
pub(super) fn received_name(session: &Session) -> String {
    let from = session.received().map_or("a stream", |r| r.from.as_str());
    format!("{} #{}", crate::text::excerpt(from, 60), session.id())
}

/// Why the controls wait while an engine streams.
const LIVE_WAITS: &str = "While an engine streams, the views show its session: the controls, \
                          the Advisor and compare mode act on it once it ends (the engine \
                          finishes, or Stop and show); Space, the timeline and the live \
                          window's slider hold any received step meanwhile.";

/// True for a command that acts on the document's run (plays, steps, edits, restarts, undoes,
/// compares, advises): while an engine streams, the views show its session instead, and such
/// a command waits for it to end.
fn acts_on_the_run(command: &Command) -> bool {
    matches!(
        command,
        Command::SetPlaying(true)
            | Command::Step
            | Command::StepBack
            | Command::Reset
            | Command::Undo
            | Command::Redo
            | Command::SetTreeSettings(_)
            | Command::SetBroadphase(_)
            | Command::SetPairLimit(_)
            | Command::Rebuild
            | Command::SetGenerator(_)
            | Command::BeginDrag { .. }
            | Command::MoveSphere { .. }
            | Command::AddSphere { .. }
            | Command::DeleteSphere(_)
            | Command::StartCompare(_)
            | Command::ShowAdvisor(true)
    )
}

/// Why File > "Save received stream…" does nothing for this document.
const NOT_RECEIVED: &str = "Only a stream received live is saved this way (File > Listen for an engine…); a trace file is kept already.";
