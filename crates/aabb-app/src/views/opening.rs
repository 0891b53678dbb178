//! The progress window of a recording being opened on a worker thread
//! (`Dialogs::opening`, started by [`Command::Open`] of a `.rec` file): the file, a progress
//! bar (bytes read, then steps rebuilt of the recording's), and Cancel. As the Advisor's
//! sweep, the job is polled each frame and never waited on until it has ended; then the
//! window asks for [`Command::FinishOpenRecording`].

use eframe::egui;

use super::View;
use crate::commands::Command;
use crate::state::State;
use std::time::Duration;

/// How often the window redraws while a recording opens (the progress bar moves).
const REPAINT: Duration = Duration::from_millis(50);

/// The progress window (it keeps nothing of its own).
#[derive(Default)]
pub struct OpeningView;

/// The progress bar's text: what is being done, and how far.
#[must_use]
pub fn progress_text(p: &crate::replay::file::LoadProgress) -> String {
    if p.steps_total == 0 {
        format!(
            "Reading: {:.1} of {:.1} MiB",
            p.bytes_read as f64 / (1024.0 * 1024.0),
            p.bytes_total as f64 / (1024.0 * 1024.0)
        )
    } else {
        format!(
            "Rebuilding and checking: step {} of {}",
            p.steps_done, p.steps_total
        )
    }
}

impl View for OpeningView {
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        let Some(job) = &state.dialogs.opening else {
            return;
        };
        let ctx = ui.ctx().clone();
        ctx.request_repaint_after(REPAINT);
        let finished = job.is_finished();
        let mut cancel = false;
        egui::Window::new("Opening recording")
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
            .show(&ctx, |ui| {
                ui.label(job.path().display().to_string());
                let p = job.progress();
                ui.horizontal(|ui| {
                    ui.add(
                        egui::ProgressBar::new(p.share())
                            .desired_width(320.0)
                            .show_percentage()
                            .text(progress_text(&p)),
                    );
                    cancel = ui
                        .button("Cancel")
                        .on_hover_text("Stop opening it; the open scene stays.")
                        .clicked();
                });
                ui.weak("Runs on a worker thread; the window stays live.");
            });
        if cancel {
            out.push(Command::CancelOpenRecording);
        } else if finished {
            out.push(Command::FinishOpenRecording);
        }
    }
}
