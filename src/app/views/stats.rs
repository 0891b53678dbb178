//! The statistics panel and its charts: the figures of the last step (plus
//! where a step's time goes) and egui_plot charts over the recent steps.

use eframe::egui;

use super::View;
use crate::app::commands::{Command, broadphase_name};
use crate::app::history::{History, Sample};
use crate::app::palette::Palette;
use crate::app::state::State;
use egui::{Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints};

/// The statistics panel (it keeps nothing of its own: the charts' state is egui_plot's).
#[derive(Default)]
pub struct StatsPanel;

/// One figure over the recent steps, for a chart.
fn series(history: &History, f: impl Fn(&Sample) -> f64) -> PlotPoints<'static> {
    PlotPoints::new(history.iter().map(|s| [s.step as f64, f(s)]).collect())
}

fn row(ui: &mut egui::Ui, name: &str, value: impl Into<egui::WidgetText>) {
    ui.label(name);
    ui.label(value);
    ui.end_row();
}

impl View for StatsPanel {
    /// The statistics panel.
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        let report = state.model.sim.report();
        let alive = state.model.sim.bodies().iter().filter(|b| b.alive).count();
        ui.heading("Statistics");
        egui::Grid::new("stats_grid")
            .num_columns(2)
            .striped(true)
            .spacing([12.0, 3.0])
            .show(ui, |ui| {
                row(ui, "Step", report.step.to_string());
                row(ui, "Broad phase", broadphase_name(state.model.kind));
                row(ui, "Spheres", alive.to_string());
                match report.tree {
                    Some(t) => {
                        row(
                            ui,
                            "Tree height",
                            format!("{} (least possible {})", t.height, t.min_height),
                        );
                        row(ui, "Area ratio (SAH)", format!("{:.3}", t.area_ratio));
                        row(ui, "Nodes", format!("{} ({} leaves)", t.nodes, t.leaves));
                        row(
                            ui,
                            "Tree memory",
                            format!("{:.1} KiB", t.bytes as f64 / 1024.0),
                        );
                    }
                    None => row(ui, "Tree", "— (not the tree broad phase)"),
                }
                row(
                    ui,
                    "Reinserts this step",
                    report.reinserted.len().to_string(),
                );
                row(
                    ui,
                    "Candidate pairs",
                    report.candidate_pairs.len().to_string(),
                );
                row(ui, "Contacts", report.contacts.len().to_string());
                let c = report.candidate_pairs.len();
                let wasted = if c == 0 {
                    "—".to_owned()
                } else {
                    let not = c.saturating_sub(report.contacts.len());
                    format!("{:.1} % ({not})", 100.0 * not as f64 / c as f64)
                };
                row(ui, "Candidates not in contact", wasted);
                row(
                    ui,
                    "Pairs recomputed",
                    if report.pairs_recomputed {
                        RichText::new("yes")
                    } else {
                        RichText::new("no (reused)")
                    },
                );
            });
        ui.add_space(6.0);
        ui.label(RichText::new("Where the time goes").strong());
        egui::Grid::new("time_grid")
            .num_columns(2)
            .striped(true)
            .spacing([12.0, 3.0])
            .show(ui, |ui| {
                let update = report.update_secs * 1e3;
                let pairs = report.pairs_secs * 1e3;
                row(
                    ui,
                    "Update (move, refit, reinsert)",
                    format!("{update:.3} ms"),
                );
                row(ui, "Pairs (find, contacts)", format!("{pairs:.3} ms"));
                row(ui, "Step total", format!("{:.3} ms", update + pairs));
                row(
                    ui,
                    "Drawing (build meshes)",
                    format!("{:.3} ms", state.view.last_draw_ms),
                );
                let h = &state.model.history;
                if !h.is_empty() {
                    row(
                        ui,
                        format!("Mean of last {}", h.len()).as_str(),
                        format!(
                            "{:.3} + {:.3} ms",
                            h.mean(|s| s.update_ms),
                            h.mean(|s| s.pairs_ms)
                        ),
                    );
                }
            });
        ui.add_space(6.0);
        let mut validate = state.prefs.validate_every_step;
        if ui
            .checkbox(&mut validate, "Validate every step")
            .on_hover_text("Check every tree invariant after each step and change.")
            .changed()
        {
            out.push(Command::SetValidateEveryStep(validate));
        }
        match &state.model.validation {
            Some(Ok(())) if state.prefs.validate_every_step => {
                ui.colored_label(Color32::from_rgb(80, 190, 80), "tree valid");
            }
            Some(Err(e)) if state.prefs.validate_every_step => {
                ui.colored_label(Color32::from_rgb(230, 70, 70), format!("tree INVALID: {e}"));
            }
            _ => {}
        }
        ui.separator();
        egui::CollapsingHeader::new("Charts (recent steps)")
            .default_open(state.prefs.show_charts)
            .show(ui, |ui| charts_ui(ui, &state.model.history));
    }
}

/// The charts over the recent steps.
fn charts_ui(ui: &mut egui::Ui, h: &History) {
    let palette = Palette::for_dark_mode(ui.visuals().dark_mode);
    let chart = |ui: &mut egui::Ui, id: &str, title: &str, lines: Vec<Line<'static>>| {
        ui.label(title);
        Plot::new(id)
            .height(90.0)
            .legend(Legend::default())
            .allow_scroll(false)
            .allow_drag(false)
            .allow_zoom(false)
            .include_y(0.0)
            .show(ui, |plot| {
                for line in lines {
                    plot.line(line);
                }
            });
    };
    chart(
        ui,
        "chart_time",
        "Step time (ms)",
        vec![
            Line::new("update", series(h, |s| s.update_ms)).color(palette.leaf),
            Line::new("pairs", series(h, |s| s.pairs_ms)).color(palette.branch_top),
            Line::new("drawing", series(h, |s| s.draw_ms)).color(palette.velocity),
        ],
    );
    chart(
        ui,
        "chart_reinserts",
        "Reinserts per step",
        vec![Line::new("reinserts", series(h, |s| s.reinserts as f64)).color(palette.highlight)],
    );
    chart(
        ui,
        "chart_pairs",
        "Candidate pairs and contacts",
        vec![
            Line::new("candidates", series(h, |s| s.candidates as f64)).color(palette.leaf),
            Line::new("contacts", series(h, |s| s.contacts as f64)).color(palette.contact),
        ],
    );
    chart(
        ui,
        "chart_height",
        "Tree height",
        vec![Line::new("height", series(h, |s| f64::from(s.height))).color(palette.branch_top)],
    );
    chart(
        ui,
        "chart_area",
        "Area ratio (SAH cost)",
        vec![
            Line::new("area ratio", series(h, |s| f64::from(s.area_ratio)))
                .color(palette.branch_deep),
        ],
    );
}
