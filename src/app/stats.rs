//! The statistics panel and its charts: the figures of the last step (plus
//! where a step's time goes) and egui_plot charts over the recent steps.

use eframe::egui;

use super::commands::{Command, broadphase_name};
use super::debugger::DebuggerApp;
use crate::scene::StepReport;
use egui::{Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints};
use std::collections::VecDeque;

/// How many recent steps the charts keep.
pub const HISTORY_LEN: usize = 600;

/// One step's figures, for the charts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// The step.
    pub step: u64,
    /// Milliseconds moving bodies and updating the broad phase.
    pub update_ms: f64,
    /// Milliseconds finding pairs and contacts.
    pub pairs_ms: f64,
    /// Milliseconds building the views' meshes (the frame before).
    pub draw_ms: f64,
    /// Leaves reinserted.
    pub reinserts: usize,
    /// Candidate pairs.
    pub candidates: usize,
    /// Contacts.
    pub contacts: usize,
    /// Tree height.
    pub height: u32,
    /// Tree area ratio (SAH cost).
    pub area_ratio: f32,
}

/// A ring of the recent samples.
#[derive(Clone, Debug, Default)]
pub struct History {
    samples: VecDeque<Sample>,
}

impl History {
    /// Records a report.
    pub fn push(&mut self, report: &StepReport, draw_ms: f32) {
        if self.samples.len() == HISTORY_LEN {
            self.samples.pop_front();
        }
        let tree = report.tree.unwrap_or_default();
        self.samples.push_back(Sample {
            step: report.step,
            update_ms: report.update_secs * 1e3,
            pairs_ms: report.pairs_secs * 1e3,
            draw_ms: f64::from(draw_ms),
            reinserts: report.reinserted.len(),
            candidates: report.candidate_pairs.len(),
            contacts: report.contacts.len(),
            height: tree.height,
            area_ratio: tree.area_ratio,
        });
    }

    /// Forgets everything (after a restart).
    pub fn clear(&mut self) {
        self.samples.clear();
    }

    /// The samples, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter()
    }

    /// Number of samples.
    #[must_use]
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// True when empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    fn series(&self, f: impl Fn(&Sample) -> f64) -> PlotPoints<'static> {
        PlotPoints::new(self.samples.iter().map(|s| [s.step as f64, f(s)]).collect())
    }

    /// Mean of a figure over the samples.
    #[must_use]
    pub fn mean(&self, f: impl Fn(&Sample) -> f64) -> f64 {
        if self.samples.is_empty() {
            0.0
        } else {
            self.samples.iter().map(f).sum::<f64>() / self.samples.len() as f64
        }
    }
}

fn row(ui: &mut egui::Ui, name: &str, value: impl Into<egui::WidgetText>) {
    ui.label(name);
    ui.label(value);
    ui.end_row();
}

impl DebuggerApp {
    /// The statistics panel.
    pub(super) fn stats_ui(&mut self, ui: &mut egui::Ui) {
        let report = self.model.sim.report();
        let alive = self.model.sim.bodies().iter().filter(|b| b.alive).count();
        ui.heading("Statistics");
        egui::Grid::new("stats_grid")
            .num_columns(2)
            .striped(true)
            .spacing([12.0, 3.0])
            .show(ui, |ui| {
                row(ui, "Step", report.step.to_string());
                row(ui, "Broad phase", broadphase_name(self.model.kind));
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
                    format!("{:.3} ms", self.view.last_draw_ms),
                );
                let h = &self.model.history;
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
        let mut validate = self.prefs.validate_every_step;
        if ui
            .checkbox(&mut validate, "Validate every step")
            .on_hover_text("Check every tree invariant after each step and change.")
            .changed()
        {
            self.commands.push(Command::SetValidateEveryStep(validate));
        }
        match &self.model.validation {
            Some(Ok(())) if self.prefs.validate_every_step => {
                ui.colored_label(Color32::from_rgb(80, 190, 80), "tree valid");
            }
            Some(Err(e)) if self.prefs.validate_every_step => {
                ui.colored_label(Color32::from_rgb(230, 70, 70), format!("tree INVALID: {e}"));
            }
            _ => {}
        }
        ui.separator();
        egui::CollapsingHeader::new("Charts (recent steps)")
            .default_open(self.prefs.show_charts)
            .show(ui, |ui| self.charts_ui(ui));
    }

    fn charts_ui(&self, ui: &mut egui::Ui) {
        let h = &self.model.history;
        let palette = super::palette::Palette::for_dark_mode(ui.visuals().dark_mode);
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
                Line::new("update", h.series(|s| s.update_ms)).color(palette.leaf),
                Line::new("pairs", h.series(|s| s.pairs_ms)).color(palette.branch_top),
                Line::new("drawing", h.series(|s| s.draw_ms)).color(palette.velocity),
            ],
        );
        chart(
            ui,
            "chart_reinserts",
            "Reinserts per step",
            vec![Line::new("reinserts", h.series(|s| s.reinserts as f64)).color(palette.highlight)],
        );
        chart(
            ui,
            "chart_pairs",
            "Candidate pairs and contacts",
            vec![
                Line::new("candidates", h.series(|s| s.candidates as f64)).color(palette.leaf),
                Line::new("contacts", h.series(|s| s.contacts as f64)).color(palette.contact),
            ],
        );
        chart(
            ui,
            "chart_height",
            "Tree height",
            vec![Line::new("height", h.series(|s| f64::from(s.height))).color(palette.branch_top)],
        );
        chart(
            ui,
            "chart_area",
            "Area ratio (SAH cost)",
            vec![
                Line::new("area ratio", h.series(|s| f64::from(s.area_ratio)))
                    .color(palette.branch_deep),
            ],
        );
    }
}
