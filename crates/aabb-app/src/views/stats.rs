//! The statistics panel and its charts: the figures of the last step (plus
//! where a step's time goes) and egui_plot charts over the recent steps.

use eframe::egui;

use super::View;
use crate::commands::{Command, broadphase_name};
use crate::history::{RecentSteps, Sample, chart_top, compact_number};
use crate::palette::Palette;
use crate::state::State;
use egui::{Color32, RichText};
use egui_plot::{Corner, Legend, Line, Plot, PlotPoints};

/// The statistics panel (it keeps nothing of its own: the charts' state is egui_plot's).
#[derive(Default)]
pub struct StatsPanel;

/// One figure over the recent steps, for a chart.
fn series(history: &RecentSteps, f: impl Fn(&Sample) -> f64) -> PlotPoints<'static> {
    PlotPoints::new(history.iter().map(|s| [s.step as f64, f(s)]).collect())
}

fn row(ui: &mut egui::Ui, name: &str, value: impl Into<egui::WidgetText>) {
    ui.label(name);
    ui.label(value);
    ui.end_row();
}

/// Steps a second while playing, against real time at the set speed.
fn steps_a_second(ui: &egui::Ui, state: &State, rates: &crate::clock::FrameRates) -> RichText {
    if !state.model.playing {
        return RichText::new("— (paused)");
    }
    let Some(sps) = rates.steps_per_sec else {
        return RichText::new("…");
    };
    let speed = state.prefs.speed;
    let want = crate::clock::STEPS_PER_SEC * f64::from(speed);
    let text = format!("{sps:.1} of {want:.0}");
    match rates.real_time_share(speed) {
        Some(share) if share < crate::clock::BEHIND => {
            RichText::new(text).color(ui.visuals().warn_fg_color)
        }
        _ => RichText::new(text),
    }
}

impl View for StatsPanel {
    /// The statistics panel.
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        // An engine streaming now: the step the live view shows, as our tree sees it.
        let live = state
            .dialogs
            .live
            .as_ref()
            .filter(|_| state.shows_live())
            .map(crate::live::LiveJob::session);
        let live_sim = live.as_ref().and_then(|guard| {
            let session = guard.as_ref()?;
            Some(state.live_held.as_ref().map_or(session.sim(), |h| &h.sim))
        });
        let sim = live_sim.unwrap_or(state.session.sim());
        let report = sim.report();
        let alive = sim.live_count();
        ui.heading("Statistics");
        if live_sim.is_some() {
            ui.weak("The engine streaming now, at the step the views show (our tree).");
        }
        egui::Grid::new("stats_grid")
            .num_columns(2)
            .striped(true)
            .spacing([12.0, 3.0])
            .show(ui, |ui| {
                row(ui, "Step", report.step.to_string());
                row(ui, "Broad phase", broadphase_name(sim.broadphase_kind()));
                let bodies = if sim.is_trace() { "Boxes" } else { "Spheres" };
                row(ui, bodies, alive.to_string());
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
        if live_sim.is_some() {
            // The health, the engine's parts and the charts follow the session once it ends.
            return;
        }
        ui.add_space(6.0);
        super::health::readout_ui(ui, state, out);
        if let Some(record) = state.session.engine().map(|e| &**e) {
            ui.add_space(6.0);
            engine_ui(ui, state, record, out);
        } else if let Some(foreign) = &state.snapshot.foreign_tree {
            ui.add_space(6.0);
            foreign_ui(ui, foreign);
        }
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
                let rates = state.clock.rates();
                row(
                    ui,
                    "Frame (whole, painted)",
                    match (rates.frame_ms, rates.fps) {
                        (Some(ms), Some(fps)) => format!("{ms:.1} ms · {fps:.0} fps"),
                        _ => "—".to_owned(),
                    },
                );
                let sps = steps_a_second(ui, state, &rates);
                row(ui, "Steps a second", sps);
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
                    let frame_ms = 1000.0 / 60.0;
                    row(
                        ui,
                        "60 Hz frame share (median)",
                        format!(
                            "{:.1} %",
                            h.median(|s| s.update_ms + s.pairs_ms) / frame_ms * 100.0
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

/// One line of a chart: its name, the figure it draws, its colour.
type ChartLine = (&'static str, fn(&Sample) -> f64, Color32);

/// One chart: a title, its lines, and whether a rare spike may be cut at the top.
struct Chart {
    id: &'static str,
    title: &'static str,
    lines: Vec<ChartLine>,
    cut_spikes: bool,
}

/// The charts over the recent steps: the step's own time (moving and updating, finding
/// pairs), the drawing time apart (it varies with the view, not the tree, and would swamp
/// the step), and the tree's figures. Axes carry ticks; lines are thick enough in both themes.
fn charts_ui(ui: &mut egui::Ui, h: &RecentSteps) {
    let pal = Palette::for_dark_mode(ui.visuals().dark_mode);
    let charts = [
        Chart {
            id: "chart_time",
            title: "Step time (ms)",
            lines: vec![
                ("update", |s| s.update_ms, pal.leaf),
                ("pairs", |s| s.pairs_ms, pal.contact),
            ],
            cut_spikes: true,
        },
        Chart {
            id: "chart_draw",
            title: "Drawing time (ms, the frame before)",
            lines: vec![("drawing", |s| s.draw_ms, pal.velocity)],
            cut_spikes: true,
        },
        Chart {
            id: "chart_reinserts",
            title: "Reinserts per step",
            lines: vec![("reinserts", |s| s.reinserts as f64, pal.highlight)],
            cut_spikes: false,
        },
        Chart {
            id: "chart_pairs",
            title: "Candidate pairs and contacts",
            lines: vec![
                ("candidates", |s| s.candidates as f64, pal.leaf),
                ("contacts", |s| s.contacts as f64, pal.contact),
            ],
            cut_spikes: false,
        },
        Chart {
            id: "chart_height",
            title: "Tree height",
            lines: vec![("height", |s| f64::from(s.height), pal.branch_top)],
            cut_spikes: false,
        },
        Chart {
            id: "chart_area",
            title: "Area ratio (SAH cost)",
            lines: vec![("area ratio", |s| f64::from(s.area_ratio), pal.branch_deep)],
            cut_spikes: false,
        },
    ];
    let last = charts.len() - 1;
    for (k, chart) in charts.into_iter().enumerate() {
        chart_ui(ui, h, chart, k == last);
    }
}

fn chart_ui(ui: &mut egui::Ui, h: &RecentSteps, chart: Chart, x_label: bool) {
    let values = || chart.lines.iter().flat_map(|&(_, f, _)| h.iter().map(f));
    let (top, above) = if chart.cut_spikes {
        chart_top(values())
    } else {
        let max = values().filter(|v| v.is_finite()).fold(0.0, f64::max);
        (if max > 0.0 { max * 1.1 } else { 1.0 }, 0)
    };
    ui.horizontal(|ui| {
        ui.label(chart.title);
        if above > 0 {
            ui.weak(format!("· {above} above the top"))
                .on_hover_text("Spikes past the chart's top (a quarter above the 95th percentile) are cut, so the usual steps stay readable.");
        }
    });
    let mut plot = Plot::new(chart.id)
        .height(if x_label { 110.0 } else { 95.0 })
        .legend(Legend::default().position(Corner::LeftTop))
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_boxed_zoom(false)
        .show_axes([true, true])
        .y_axis_min_width(30.0)
        .x_axis_formatter(|mark, _| format!("{:.0}", mark.value))
        .y_axis_formatter(|mark, _| compact_number(mark.value));
    if x_label {
        plot = plot.x_axis_label("step");
    }
    plot.show(ui, |plot| {
        if let (Some(first), Some(last)) = (h.iter().next(), h.iter().last()) {
            plot.set_plot_bounds_x(
                first.step as f64..=(last.step as f64).max(first.step as f64 + 1.0),
            );
        }
        plot.set_plot_bounds_y(0.0..=top);
        for (name, f, color) in chart.lines {
            plot.line(Line::new(name, series(h, f)).color(color).width(1.75));
        }
    });
}

/// The engine's own broad phase (a received stream's): its pairs at the step shown, by why
/// each exists, those it missed, its tree against a fresh build, and the run's totals.
fn engine_ui(
    ui: &mut egui::Ui,
    state: &State,
    record: &crate::stream::engine::EngineRecord,
    out: &mut Vec<Command>,
) {
    let summary = &record.summary;
    let at = state.session.sim().step_index();
    ui.label(RichText::new("Engine's broad phase (received)").strong());
    let mut show = state.prefs.show_engine_tree;
    if ui
        .checkbox(
            &mut show,
            "Draw its tree (magenta), its pairs by why, its missed pairs (red)",
        )
        .changed()
    {
        out.push(Command::SetPref(crate::prefs::PrefChange::ShowEngineTree(
            show,
        )));
    }
    let mut theirs = state.prefs.views_show_engine_tree;
    ui.horizontal(|ui| {
        ui.label("Both views show");
        let a = ui.radio_value(&mut theirs, false, "our tree");
        let b = ui.radio_value(&mut theirs, true, "the engine's tree");
        if a.changed() || b.changed() {
            out.push(Command::SetPref(
                crate::prefs::PrefChange::ViewsShowEngineTree(theirs),
            ));
        }
    });
    let missed_colour = crate::palette::Palette::for_dark_mode(ui.visuals().dark_mode).missed;
    egui::Grid::new("engine_grid")
        .num_columns(2)
        .striped(true)
        .spacing([12.0, 3.0])
        .show(ui, |ui| {
            let here = summary
                .step_counts
                .binary_search_by_key(&at, |c| c.index)
                .ok()
                .and_then(|k| summary.step_counts.get(k));
            match here {
                Some(c) => {
                    let n = &c.counts;
                    row(ui, "Its pairs here", n.total().to_string());
                    // Each class in the colour the world view draws its pairs in.
                    let pal = crate::palette::Palette::for_dark_mode(ui.visuals().dark_mode);
                    ui.label("  by why");
                    ui.horizontal_wrapped(|ui| {
                        use crate::stream::engine::PairClass;
                        for (class, name, count) in [
                            (PairClass::Contact, "contact", n.contact),
                            (PairClass::Margin, "margin", n.margin),
                            (PairClass::LookAhead, "look-ahead", n.look_ahead),
                            (PairClass::FatOnly, "fat only", n.fat_only),
                        ] {
                            ui.label(
                                RichText::new(format!("{name} {count}"))
                                    .color(pal.pair_class(class)),
                            );
                        }
                    });
                    ui.end_row();
                    let missed = RichText::new(c.missed.to_string());
                    row(
                        ui,
                        "Missed here",
                        if c.missed > 0 || n.fat_apart > 0 {
                            missed.color(missed_colour).strong()
                        } else {
                            missed
                        },
                    );
                }
                None => row(ui, "Its pairs here", "— (not checked at this step)"),
            }
            let tree = summary
                .health
                .binary_search_by_key(&at, |h| h.index)
                .ok()
                .and_then(|k| summary.health.get(k));
            let refused = summary.refused_trees.iter().find(|r| r.index == at);
            match (tree, refused) {
                (Some(t), _) => health_rows(ui, &t.health, "Its tree here", "  height"),
                (None, Some(r)) => {
                    row(
                        ui,
                        "Its tree here",
                        RichText::new(format!("refused: {}", r.fault)).color(missed_colour),
                    );
                }
                (None, None) => row(ui, "Its tree here", "— (none at this step)"),
            }
            let c = &summary.counts;
            row(
                ui,
                "Run: missed pairs",
                RichText::new(summary.missed_total.to_string()).color(
                    if summary.missed_total > 0 {
                        missed_colour
                    } else {
                        ui.visuals().text_color()
                    },
                ),
            );
            row(
                ui,
                "Run: false positives",
                format!("{:.1} %", 100.0 * c.share(c.false_positives())),
            );
            // Word by word, wrapped to the panel: one line of the three widened the panel.
            ui.label("  by why");
            ui.horizontal_wrapped(|ui| {
                for (name, count) in [
                    ("margin", c.margin),
                    ("look-ahead", c.look_ahead),
                    ("fat only", c.fat_only),
                ] {
                    ui.label(format!("{name} {:.1} %", 100.0 * c.share(count)));
                }
            });
            ui.end_row();
        });
    // Degradation: the engine's tree stayed above the threshold to the end received. Below
    // the grid and wrapped to the panel: a grid cell does not wrap, and one long line widened
    // the panel past the window.
    let ratios = super::health::engine_ratios(&summary.health);
    let threshold = state.prefs.health_threshold;
    if let Some((from, worst)) = super::health::engine_degraded_since(ratios, threshold) {
        ui.add(
            egui::Label::new(
                RichText::new(format!(
                    "The engine's tree has cost {threshold:.2}x a fresh build or more since \
                     step {from} (at worst {worst:.2}x): it is not rebuilt as it degrades. A \
                     rebuild (or a larger incremental optimization) would make its queries \
                     cheaper."
                ))
                .color(super::health::WARNING)
                .strong(),
            )
            .wrap(),
        );
    }
}

/// The broad phase's own tree when it is another library's (Box2D's): both views draw its
/// nodes as they draw ours; here it is checked against the step's boxes and measured against
/// a fresh build.
fn foreign_ui(ui: &mut egui::Ui, foreign: &crate::snapshot::ForeignTree) {
    ui.label(RichText::new("Box2D's tree (its own nodes)").strong())
        .on_hover_text(
            "Read node by node from Box2D's array; both views draw it as they draw ours.",
        );
    let bad = crate::palette::Palette::for_dark_mode(ui.visuals().dark_mode).missed;
    egui::Grid::new("foreign_grid")
        .num_columns(2)
        .striped(true)
        .spacing([12.0, 3.0])
        .show(ui, |ui| match &foreign.health {
            Some(Ok(h)) => health_rows(ui, h, "Its cost", "Its height"),
            Some(Err(fault)) => row(
                ui,
                "Its nodes",
                RichText::new(format!("do not hold the step's boxes: {fault}")).color(bad),
            ),
            None => row(
                ui,
                "Its nodes",
                format!(
                    "{} (checked and measured up to {} leaves)",
                    foreign.tree.nodes.len(),
                    crate::snapshot::FOREIGN_HEALTH_LEAVES
                ),
            ),
        });
}

/// A received or foreign tree's health in two grid rows: its cost (against a fresh build, when
/// there is one) and its height against the least.
fn health_rows(
    ui: &mut egui::Ui,
    h: &crate::stream::engine::TreeHealth,
    cost_name: &str,
    height_name: &str,
) {
    let fresh = h
        .ratio()
        .map_or_else(String::new, |r| format!(" = {r:.2} x a fresh build"));
    row(ui, cost_name, format!("cost {:.1}{fresh}", h.cost));
    row(
        ui,
        height_name,
        format!(
            "{} (least possible {}), {} leaves",
            h.height, h.min_height, h.leaves
        ),
    );
}
