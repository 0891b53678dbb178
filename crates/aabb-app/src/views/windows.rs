//! The windows over the views: help (F1), about, the load or save error, the file dialog, and
//! the questions (replace a read-only file? discard unsaved changes?). Which are open is the
//! state's (`State::dialogs`); answers are commands.

use eframe::egui;

use super::View;
use super::files::FileDialogView;
use crate::commands::Command;
use crate::state::State;
use egui::Key;

/// The keyboard shortcuts, as listed in the help window.
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Space", "play / pause"),
    (
        "Right arrow or N",
        "one step (at a past step: the next recorded step)",
    ),
    ("Left arrow", "the recorded step before"),
    ("Home / End", "the first / last recorded step"),
    ("R", "reset to step 0 (Ctrl+Z brings the run back)"),
    (
        "Ctrl+Z",
        "undo the last Reset or Apply (until the next step), else the last change of the tree \
         settings",
    ),
    (
        "Ctrl+Shift+Z or Ctrl+Y",
        "redo the change of the tree settings the last undo took back",
    ),
    ("F or double-click", "fit the world and the tree"),
    (
        "C",
        "focus the selection in the tree view (opening its folded branches)",
    ),
    (
        "Click a branch's ± (or double-click it)",
        "fold or open it in the tree view",
    ),
    ("Wheel", "zoom around the cursor"),
    ("Right or middle drag", "pan (left drag on empty space too)"),
    ("Click", "select a sphere, box or tree node"),
    (
        "Drag a sphere",
        "move it (the status line says what the tree did)",
    ),
    ("A", "add a sphere under the cursor"),
    ("Delete / Backspace", "delete the selected sphere"),
    ("Right-click", "add / delete / select menu"),
    ("Esc", "clear the selection"),
    ("Ctrl+O", "open a scene"),
    ("Ctrl+S", "save"),
    ("Ctrl+Shift+S", "save as"),
    ("F1", "this help"),
];

/// The windows; the file dialog's widget is theirs.
#[derive(Default)]
pub struct Windows {
    file: FileDialogView,
}

impl View for Windows {
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        let ctx = ui.ctx();
        if state.dialogs.help {
            let mut open = true;
            egui::Window::new("Help: keyboard and mouse")
                .open(&mut open)
                .resizable(false)
                .show(ctx, |ui| {
                    egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                        for (key, what) in SHORTCUTS {
                            ui.strong(*key);
                            ui.label(*what);
                            ui.end_row();
                        }
                    });
                    ui.separator();
                    ui.label("Colours: branch boxes green (darker deeper), leaf boxes blue, colliding spheres' boxes red, velocity yellow, selection and hover orange, last step's tree events magenta.");
                });
            if !open {
                out.push(Command::ShowHelp(false));
            }
        }
        if state.dialogs.about {
            let mut open = true;
            egui::Window::new("About aabb-debugger")
                .open(&mut open)
                .resizable(false)
                .show(ctx, |ui| {
                    ui.label(format!("aabb-debugger {}", env!("CARGO_PKG_VERSION")));
                    ui.label("A visual debugger for dynamic AABB trees (the broad phase of collision detection).");
                });
            if !open {
                out.push(Command::ShowAbout(false));
            }
        }
        if let Some(message) = &state.model.error {
            egui::Window::new("Could not open or save")
                .collapsible(false)
                .resizable(true)
                .default_width(460.0)
                // In front of the window whose action failed (the Advisor's export).
                .order(egui::Order::Foreground)
                .show(ctx, |ui| {
                    ui.colored_label(egui::Color32::from_rgb(230, 80, 80), message);
                    ui.weak(state.model.error_kept);
                    if ui.button("OK").clicked() || ui.input(|i| i.key_pressed(Key::Enter)) {
                        out.push(Command::DismissError);
                    }
                });
        }
        self.file.ui(ctx, state, out);
        if let Some(path) = state.dialogs.replace_read_only.clone() {
            let mut answer = None;
            let modal =
                egui::Modal::new(egui::Id::unique("confirm_replace_read_only")).show(ctx, |ui| {
                    ui.heading("Read-only file");
                    ui.label(format!("{} is read-only. Replace it?", path.display()));
                    ui.weak("Replace writes the scene and keeps the file read-only.");
                    ui.horizontal(|ui| {
                        if ui.button("Replace").clicked() {
                            answer = Some(Command::ReplaceReadOnly(path.clone()));
                        }
                        if ui.button("Cancel").clicked() {
                            answer = Some(Command::KeepReadOnly(path.clone()));
                        }
                    });
                });
            // Escape or a click outside is a Cancel.
            if answer.is_none() && modal.should_close() {
                answer = Some(Command::KeepReadOnly(path));
            }
            out.extend(answer);
            // One question at a time: an "unsaved changes" question waits for this one.
            return;
        }
        if let Some(pending) = &state.dialogs.confirm {
            if state.model.error.is_some() || state.dialogs.file.is_some() {
                // One question at a time: a save that failed ("Save, then continue") says
                // why first, and the file dialog of "Save as…, then continue" is answered
                // first; the question comes back after, or goes on once the changes are saved.
                return;
            }
            if !state.session.dirty() {
                // The changes were saved meanwhile ("Save, then continue" after a read-only
                // question): nothing is lost, so go on.
                out.push(Command::CloseConfirm);
                out.push(Command::Confirmed(Box::new(pending.clone())));
                return;
            }
            let what = match pending {
                Command::Quit => "quitting".to_owned(),
                Command::Open(p) => format!("opening {}", p.display()),
                _ => "opening another scene".to_owned(),
            };
            let modal = egui::Modal::new(egui::Id::unique("confirm_discard")).show(ctx, |ui| {
                ui.heading("Unsaved changes");
                ui.label(format!(
                    "{} has unsaved changes. Discard them before {what}?",
                    state.document_name()
                ));
                ui.horizontal(|ui| {
                    if state.session.path().is_some() && ui.button("Save, then continue").clicked()
                    {
                        out.push(Command::CloseConfirm);
                        out.push(Command::Save);
                        out.push(pending.clone());
                    }
                    if state.session.path().is_none()
                        && ui.button("Save as…, then continue").clicked()
                    {
                        out.push(Command::CloseConfirm);
                        out.push(Command::SaveAsDialog);
                        out.push(pending.clone());
                    }
                    if ui.button("Discard changes").clicked() {
                        out.push(Command::CloseConfirm);
                        out.push(Command::Confirmed(Box::new(pending.clone())));
                    }
                    if ui.button("Cancel").clicked() {
                        out.push(Command::CloseConfirm);
                    }
                });
            });
            if modal.should_close() {
                out.push(Command::CloseConfirm);
            }
        }
    }
}
