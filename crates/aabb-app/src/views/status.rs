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
            ui.label(format!("step {}", state.model.sim.step_index()));
            ui.separator();
            ui.label(&state.model.status);
        });
    }
}
