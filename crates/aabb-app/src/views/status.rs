//! The status line: play / pause, the step and what the last command did.

use eframe::egui;

use super::View;
use crate::commands::Command;
use crate::state::State;

/// The status line (it keeps nothing of its own).
#[derive(Default)]
pub struct StatusBar;

impl View for StatusBar {
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        ui.horizontal(|ui| {
            let (icon, tip) = if state.model.playing {
                ("Pause", "Pause (Space)")
            } else {
                ("Play", "Play (Space)")
            };
            if ui.button(icon).on_hover_text(tip).clicked() {
                out.push(Command::TogglePlay);
            }
            let live_step = state
                .dialogs
                .live
                .as_ref()
                .filter(|_| state.shows_live())
                .and_then(|job| {
                    let at = state.live_held.as_ref().map(|h| h.sim.step_index());
                    at.or_else(|| job.session().as_ref().map(|s| s.sim().step_index()))
                });
            match live_step {
                Some(at) => ui.label(format!("live step {at}")),
                None => ui.label(format!("step {}", state.session.sim().step_index())),
            };
            ui.separator();
            if state.model.playing
                && let Some(note) = state
                    .clock
                    .rates()
                    .behind_note(state.prefs.speed, state.clock.step_ms().unwrap_or(0.0))
            {
                ui.label(egui::RichText::new(note).color(ui.visuals().warn_fg_color));
                ui.separator();
            }
            // One line: a long message ends in "…" at the window's edge and shows whole on
            // hover.
            // While live, the link's own line: true at every moment of the session.
            match &state.dialogs.live {
                Some(job) => ui.add(egui::Label::new(job.status().line()).truncate()),
                None => ui.add(egui::Label::new(&state.model.status).truncate()),
            };
        });
    }
}
