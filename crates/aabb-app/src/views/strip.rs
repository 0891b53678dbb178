//! The tuning strip: when the window is too narrow for a side panel (a laptop at 1024 x 700,
//! or smaller), the panel's essentials stay on screen in one compact strip above the views:
//! for the controls, Play and the margin and look-ahead sliders; for the statistics, the
//! numbers the margin is tuned by (step total, reinserts, candidate pairs, those not in
//! contact) and the frame time. So the tuning loop (move the margin, watch the numbers) works
//! at every window size.

use eframe::egui;

use super::View;
use super::controls::tuning_sliders;
use crate::commands::Command;
use crate::layout::Panels;
use crate::state::State;

/// The strip (it keeps only which panels it stands in for, set by the shell each frame).
#[derive(Default)]
pub struct TuningStrip {
    panels: Option<Panels>,
}

impl TuningStrip {
    /// Notes which side panels are set aside this frame.
    pub fn set_panels(&mut self, panels: Panels) {
        self.panels = Some(panels);
    }

    /// True when the strip stands in for a panel this frame.
    #[must_use]
    pub fn wanted(panels: &Panels) -> bool {
        panels.controls_set_aside || panels.stats_set_aside
    }
}

impl View for TuningStrip {
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        let Some(panels) = self.panels else { return };
        ui.spacing_mut().slider_width = 90.0;
        if panels.controls_set_aside {
            ui.horizontal_wrapped(|ui| {
                let label = if state.model.playing { "Pause" } else { "Play" };
                if ui.button(label).on_hover_text("Space").clicked() {
                    out.push(Command::TogglePlay);
                }
                let mut s = state.session.doc().tree;
                if tuning_sliders(ui, &mut s) {
                    out.push(Command::SetTreeSettings(s));
                }
            });
        }
        if panels.stats_set_aside {
            ui.horizontal_wrapped(|ui| numbers_ui(ui, state));
        }
    }
}

/// The numbers the margin is tuned by, each a name and a value.
fn numbers_ui(ui: &mut egui::Ui, state: &State) {
    let report = state.session.sim().report();
    let pair = |ui: &mut egui::Ui, name: &str, value: String| {
        ui.label(egui::RichText::new(name).weak());
        ui.label(egui::RichText::new(value).strong());
    };
    let total = (report.update_secs + report.pairs_secs) * 1e3;
    pair(ui, "Step total", format!("{total:.3} ms"));
    pair(ui, "Reinserts", report.reinserted.len().to_string());
    let c = report.candidate_pairs.len();
    pair(ui, "Candidate pairs", c.to_string());
    let not = c.saturating_sub(report.contacts.len());
    pair(
        ui,
        "Not in contact",
        if c == 0 {
            "—".to_owned()
        } else {
            format!("{:.1} % ({not})", 100.0 * not as f64 / c as f64)
        },
    );
    if let Some(ms) = state.clock.rates().frame_ms {
        pair(ui, "Frame", format!("{ms:.0} ms"));
    }
}
