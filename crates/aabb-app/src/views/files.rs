//! The Open / Save As / Export dialog: the state asks for one (`Dialogs::file`, set by the
//! `OpenDialog`, `Save`, `SaveAsDialog` and `ExportDialog` commands); this view shows the
//! desktop's dialog when it may (`Dialogs::native` and the "Use the desktop's file dialog"
//! preference) and there is one, else the in-app dialog, and returns the file picked as a
//! command.

use eframe::egui;

use crate::commands::Command;
use crate::files::{DialogAnswer, FileDialogState, FilePurpose};
use crate::native_dialog::{NativeAnswer, NativeDialog};
use crate::state::{FileRequest, State};
use std::time::Duration;

/// How often the window looks for the native dialog's answer while it is open.
const NATIVE_POLL: Duration = Duration::from_millis(100);

/// The dialog shown for a request.
enum Shown {
    InApp(FileDialogState),
    Native(NativeDialog),
}

/// The file dialog, while one is open, with the serial of the request it answers.
#[derive(Default)]
pub struct FileDialogView {
    open: Option<(u64, Shown)>,
    /// The desktop had no dialog once: the in-app one for the rest of the session.
    native_unavailable: bool,
}

impl FileDialogView {
    /// Shows the dialog the state asks for, if any; a picked file becomes
    /// [`Command::Open`], [`Command::SaveAs`] or [`Command::Export`] after
    /// [`Command::CloseFileDialog`], and a dialog closed without one
    /// [`Command::CloseFileDialog`].
    pub fn ui(&mut self, ctx: &egui::Context, state: &State, out: &mut Vec<Command>) {
        let Some(request) = &state.dialogs.file else {
            self.open = None;
            return;
        };
        let native = state.dialogs.native && state.prefs.native_dialogs;
        match &self.open {
            Some((serial, _)) if *serial == request.serial => {}
            // A native dialog cannot be closed from here: it answers before another opens.
            Some((_, Shown::Native(_))) => {}
            _ => self.open = Some((request.serial, self.start(request, native))),
        }
        let Some((_, shown)) = &mut self.open else {
            return;
        };
        let (purpose, answer) = match shown {
            Shown::InApp(dialog) => (dialog.purpose, dialog.show(ctx)),
            Shown::Native(dialog) => {
                let purpose = dialog.purpose;
                match dialog.poll() {
                    NativeAnswer::Pending => {
                        ctx.request_repaint_after(NATIVE_POLL);
                        if waiting_note(ctx) {
                            // The in-app dialog instead; the desktop's answer is dropped.
                            *shown = Shown::InApp(in_app(request));
                        }
                        (purpose, DialogAnswer::Open)
                    }
                    NativeAnswer::Picked(path) => (purpose, DialogAnswer::Picked(path)),
                    NativeAnswer::Cancelled => (purpose, DialogAnswer::Cancelled),
                    NativeAnswer::Unavailable => {
                        self.native_unavailable = true;
                        *shown = Shown::InApp(in_app(request));
                        ctx.request_repaint();
                        (purpose, DialogAnswer::Open)
                    }
                }
            }
        };
        match answer {
            DialogAnswer::Open => {}
            DialogAnswer::Cancelled => out.push(Command::CloseFileDialog),
            DialogAnswer::Picked(path) => {
                out.push(Command::CloseFileDialog);
                out.push(match purpose {
                    FilePurpose::Open => Command::Open(path),
                    FilePurpose::SaveAs => Command::SaveAs(path),
                    FilePurpose::Export(_) => Command::Export(path),
                    FilePurpose::SaveRecording => Command::SaveRecording(path),
                    FilePurpose::SaveStream => Command::SaveStream(path),
                });
            }
        }
    }

    /// The dialog for a new request: the desktop's when `native` allows and it has one.
    fn start(&self, request: &FileRequest, native: bool) -> Shown {
        if native
            && !self.native_unavailable
            && let Some(dialog) = NativeDialog::open(request.purpose, request.start.as_deref())
        {
            return Shown::Native(dialog);
        }
        Shown::InApp(in_app(request))
    }
}

fn in_app(request: &FileRequest) -> FileDialogState {
    FileDialogState::new(request.purpose, request.start.as_deref())
}

/// A small note while the desktop's dialog is open (it may be behind the window); true when
/// its "Use the in-app dialog" button was clicked.
fn waiting_note(ctx: &egui::Context) -> bool {
    let mut switch = false;
    egui::Window::new("File dialog")
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            ui.label("Choose the file in the desktop's file dialog.");
            switch = ui.button("Use the in-app dialog").clicked();
        });
    switch
}
