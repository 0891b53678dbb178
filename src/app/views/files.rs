//! The Open / Save As dialog: the state asks for one (`Dialogs::file`, set by the
//! `OpenDialog`, `Save` and `SaveAsDialog` commands); this view keeps the dialog widget while
//! it is open and returns the file picked as a command.

use eframe::egui;

use crate::app::commands::Command;
use crate::app::files::{FileDialogState, FilePurpose};
use crate::app::state::State;

/// The file dialog widget, while one is open, with the serial of the request it answers.
#[derive(Default)]
pub struct FileDialogView {
    open: Option<(u64, FileDialogState)>,
}

impl FileDialogView {
    /// Shows the dialog the state asks for, if any; a picked file becomes
    /// [`Command::Open`] or [`Command::SaveAs`], and a closed dialog
    /// [`Command::CloseFileDialog`].
    pub fn ui(&mut self, ctx: &egui::Context, state: &State, out: &mut Vec<Command>) {
        let Some(request) = &state.dialogs.file else {
            self.open = None;
            return;
        };
        let dialog = match &mut self.open {
            Some((serial, dialog)) if *serial == request.serial => dialog,
            slot => {
                let dialog = FileDialogState::new(request.purpose, request.start.as_deref());
                &mut slot.insert((request.serial, dialog)).1
            }
        };
        let (picked, open) = dialog.show(ctx);
        if let Some(path) = picked {
            out.push(Command::CloseFileDialog);
            out.push(match dialog.purpose {
                FilePurpose::Open => Command::Open(path),
                FilePurpose::SaveAs => Command::SaveAs(path),
                FilePurpose::Export(_) => Command::Export(path),
            });
        } else if !open {
            out.push(Command::CloseFileDialog);
        }
    }
}
