//! The Advisor window: sweeps the open scene (or trace: from its current step, at most the
//! steps left) over a grid of margins x look-ahead values on
//! background threads ([`crate::sweep`]), shows the result as curves against the margin (one
//! line per look-ahead value) and a heat map of the cost, and applies a point (click it, or
//! "Apply best") to the live scene as one [`Command::SetTreeSettings`], the margin slider's
//! path. The result exports as the `sweep` command's CSV or JSON.
//!
//! The view owns its UI state: the grid being edited, the running sweep's handle (polled each
//! frame, never waited on until it has ended), the finished report. The live scene is only
//! read (a sweep runs on a copy); a cancel leaves it as it was.

use eframe::egui;

use super::View;
use crate::commands::Command;
use crate::files::ExportFormat;
use crate::source::{Origin, Sim};
use crate::state::State;
use crate::sweep::export::{SweepJson, csv};
use crate::sweep::{
    MarginRange, PointResult, SweepError, SweepHandle, SweepOutcome, SweepPlan, SweepReport,
    SweepSpec, parse_lookaheads,
};
use crate::tree::TreeConfig;
use egui::{Color32, Pos2, RichText, Stroke};
use egui_plot::{
    AxisHints, Corner, Legend, Line, MarkerShape, Plot, PlotPoint, PlotPoints, Points, VLine,
};
use std::time::Duration;

/// How often the window redraws while a sweep runs (the progress bar moves).
const REPAINT: Duration = Duration::from_millis(50);

/// The height of each plot, points.
const PLOT_HEIGHT: f32 = 120.0;

/// How near (points) the pointer must be to a plotted point to hover or click it.
const PICK_RADIUS: f32 = 14.0;

/// Colours of the look-ahead lines, in order (then again).
const LINE_COLOURS: [Color32; 6] = [
    Color32::from_rgb(90, 160, 255),
    Color32::from_rgb(255, 150, 60),
    Color32::from_rgb(110, 200, 110),
    Color32::from_rgb(220, 90, 200),
    Color32::from_rgb(230, 210, 80),
    Color32::from_rgb(90, 210, 210),
];

/// The marker colour of the best point by time.
const BEST_TIME: Color32 = Color32::from_rgb(255, 80, 80);
/// The marker colour of the best point by work.
const BEST_WORK: Color32 = Color32::from_rgb(250, 250, 250);

/// The grid as typed (the `sweep` command's notation).
#[derive(Clone, Debug, PartialEq)]
struct Form {
    /// `FROM:TO:STEP`.
    margins: String,
    /// `0, 0.05, 0.2`.
    lookaheads: String,
    /// Steps a point.
    steps: String,
    /// What a pair test costs the engine, in node visits.
    pair_cost: String,
    /// Sweep from the live scene's current step (else from the scene's start).
    from_now: bool,
}

/// A number rounded to two significant digits (for the default grid).
fn round2(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(1 - x.log10().floor() as i32);
    (x * scale).round() / scale
}

impl Form {
    /// The default grid around the document's settings and pair cost.
    fn for_doc(doc: &crate::scene::Scene) -> Form {
        Form::around(&doc.tree, doc.pair_cost())
    }

    /// The default grid around the scene's settings: 40 margins from 0 (no fattening at all)
    /// to max(2.5 x margin, 0.5), so that the current margin lies inside with about 16 points
    /// below it (the best margin is most often smaller than the one set); look-ahead 0,
    /// 0.05, 0.2 and the current one; 300 steps; from now.
    fn around(tree: &TreeConfig, pair_cost: f64) -> Form {
        let from = 0.0;
        let to = round2((2.5 * f64::from(tree.margin)).max(0.5));
        let step = round2((to - from) / 39.0);
        let mut lookaheads = vec![0.0f32, 0.05, 0.2];
        if !lookaheads.contains(&tree.velocity_lookahead) {
            lookaheads.push(tree.velocity_lookahead);
        }
        lookaheads.sort_by(f32::total_cmp);
        let lookaheads: Vec<String> = lookaheads.iter().map(ToString::to_string).collect();
        Form {
            margins: format!("{from}:{to}:{step}"),
            lookaheads: lookaheads.join(", "),
            steps: "300".to_owned(),
            pair_cost: pair_cost.to_string(),
            from_now: true,
        }
    }

    /// The spec the form describes, or the first problem (naming the field).
    fn spec(&self, pair_limit: usize) -> Result<SweepSpec, SweepError> {
        let margins = MarginRange::parse(&self.margins)?.values()?;
        let lookaheads = parse_lookaheads(&self.lookaheads)?;
        let steps: u64 = self.steps.trim().parse().map_err(|_| SweepError::Grid {
            field: "steps",
            message: format!("must be a whole number, got \"{}\"", self.steps.trim()),
        })?;
        let pair_cost: f64 = self
            .pair_cost
            .trim()
            .parse()
            .map_err(|_| SweepError::Grid {
                field: "pair cost",
                message: format!(
                    "must be a number of node visits, got \"{}\"",
                    self.pair_cost.trim()
                ),
            })?;
        let pair_cost = crate::sweep::check_pair_cost(pair_cost).map_err(|_| SweepError::Grid {
            field: "pair cost",
            message: format!(
                "must be from {} to {} node visits, got {pair_cost}",
                crate::scene::PAIR_COST_RANGE.0,
                crate::scene::PAIR_COST_RANGE.1
            ),
        })?;
        Ok(SweepSpec {
            pair_limit,
            pair_cost,
            ..SweepSpec::new(margins, lookaheads, steps)
        })
    }
}

/// A grid to sweep without typing it (the `screenshot` command's `--advisor`): each field
/// given replaces the default grid's (the `sweep` command's notation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdvisorGrid {
    /// Margins, `FROM:TO:STEP`.
    pub margins: Option<String>,
    /// Look-ahead values, `0,0.05,0.2`.
    pub lookaheads: Option<String>,
    /// Steps a point.
    pub steps: Option<u64>,
}

/// A sweep running in the background.
struct Running {
    handle: SweepHandle,
    /// The document's id when it started (to notice a different scene opened since).
    document_id: u64,
    /// The name of the scene or trace swept and its spheres (a trace: the most boxes a
    /// step holds), for the JSON export.
    subject: (String, usize),
    /// What it started from, for the result's heading.
    from: String,
}

/// A finished sweep.
struct Finished {
    report: SweepReport,
    /// The document's id when the sweep started.
    document_id: u64,
    subject: (String, usize),
    from: String,
    /// The distinct look-ahead values, in grid order (one line each).
    lookaheads: Vec<f32>,
}

/// Which figure colours the heat map.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum HeatBy {
    /// Median milliseconds a step.
    #[default]
    Time,
    /// Node visits a step (the same on every machine).
    Work,
}

/// The Advisor window's own state.
#[derive(Default)]
pub struct AdvisorView {
    /// The grid as typed, and the document it was made for: another document (a new scene,
    /// a restart with new spheres) starts from the default grid around its own settings.
    form: Option<(Form, u64)>,
    running: Option<Running>,
    finished: Option<Finished>,
    /// A refused grid, or how the last sweep ended when it did not finish.
    message: Option<String>,
    /// Start at the next frame with this grid (the `screenshot` command's `--advisor`).
    start_requested: Option<AdvisorGrid>,
    /// The look-ahead (index into the finished sweep's) the ms plot shows.
    ms_lookahead: usize,
    heat_by: HeatBy,
    /// Where each point of the report was drawn in last frame's reinserts plot.
    positions: Vec<Option<Pos2>>,
}

impl AdvisorView {
    /// The grid being typed: the one made for the open document, else (none yet, or another
    /// document opened since) the default around its settings; a running sweep keeps its own.
    fn form_of(&mut self, state: &State) -> &mut Form {
        let document = state.session.id();
        let stale = self
            .form
            .as_ref()
            .is_none_or(|(_, made_for)| *made_for != document && self.running.is_none());
        if stale {
            self.form = Some((Form::for_doc(state.session.doc()), document));
        }
        let (form, _) = self
            .form
            .get_or_insert_with(|| (Form::for_doc(state.session.doc()), document));
        form
    }

    /// The last finished sweep's report.
    #[must_use]
    pub fn report(&self) -> Option<&SweepReport> {
        self.finished.as_ref().map(|f| &f.report)
    }

    /// True while a sweep runs.
    #[must_use]
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// The message shown under the grid (a refused grid, a cancel, a failure).
    #[must_use]
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// Where point `index` was drawn in last frame's reinserts plot.
    #[must_use]
    pub fn point_screen_pos(&self, index: usize) -> Option<Pos2> {
        self.positions.get(index).copied().flatten()
    }

    /// Starts a sweep at the next frame, on the form's grid with `grid`'s fields put in.
    pub fn request_start(&mut self, grid: AdvisorGrid) {
        self.start_requested = Some(grid);
    }

    /// Takes the outcome of a sweep that has ended (never blocks on a running one).
    fn poll(&mut self) {
        if !self
            .running
            .as_ref()
            .is_some_and(|r| r.handle.is_finished())
        {
            return;
        }
        let Some(run) = self.running.take() else {
            return;
        };
        match run.handle.wait() {
            Ok(SweepOutcome::Finished(report)) => {
                let mut lookaheads: Vec<f32> = Vec::new();
                for p in &report.points {
                    if !lookaheads.contains(&p.point.lookahead) {
                        lookaheads.push(p.point.lookahead);
                    }
                }
                self.ms_lookahead = report
                    .advice
                    .best_by_time
                    .as_ref()
                    .and_then(|b| {
                        let la = report.points[b.index].point.lookahead;
                        lookaheads.iter().position(|&l| l == la)
                    })
                    .unwrap_or(0);
                self.finished = Some(Finished {
                    report: *report,
                    document_id: run.document_id,
                    subject: run.subject,
                    from: run.from,
                    lookaheads,
                });
                self.message = None;
                self.positions.clear();
            }
            Ok(SweepOutcome::Cancelled { finished, progress }) => {
                self.message = Some(format!(
                    "Cancelled after {} of {} steps ({} of {} points finished); the live scene \
                     is untouched.",
                    progress.steps_done,
                    progress.steps_total,
                    finished.len(),
                    progress.points_total
                ));
            }
            Err(e) => self.message = Some(format!("The sweep failed: {e}")),
        }
    }

    /// Starts a sweep of the grid on the live scene (from now) or its start.
    fn start(&mut self, state: &State) {
        let Some((form, _)) = &self.form else {
            return;
        };
        let started = form
            .spec(state.session.sim().pair_limit())
            .and_then(|spec| {
                let from_step = |step: u64| {
                    if form.from_now {
                        format!("from step {step}")
                    } else {
                        "from the start".to_owned()
                    }
                };
                let from = from_step(state.session.sim().step_index());
                // From the start: a scene's document, a trace's first step.
                let (origin, start) = match (&state.session.sim(), form.from_now) {
                    (Sim::Scene(_), false) => {
                        (Origin::Scene(Box::new(state.session.doc().clone())), 0)
                    }
                    (sim, from_now) => {
                        let (origin, here) = sim.here();
                        (origin, if from_now { here } else { 0 })
                    }
                };
                let mut spec = spec;
                if let Some(left) = origin.steps_after(start)
                    && left > 0
                {
                    // A trace ends: the points replay at most the steps left.
                    spec.steps = spec.steps.min(left);
                }
                let plan = SweepPlan::of(&origin, start, spec)?;
                let subject = (origin.name().to_owned(), origin.moving_count());
                Ok(Running {
                    handle: plan.start()?,
                    document_id: state.session.id(),
                    subject,
                    from,
                })
            });
        match started {
            Ok(run) => {
                self.running = Some(run);
                self.message = None;
            }
            Err(e) => self.message = Some(e.to_string()),
        }
    }

    /// The grid's fields, Start, and the progress bar with Cancel.
    fn grid_ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        let running = self.running.is_some();
        let form = self.form_of(state);
        egui::Grid::new("advisor_grid")
            .num_columns(2)
            .show(ui, |ui| {
                let label = ui.label("Margins (from:to:step)");
                let field = ui.add_enabled(
                    !running,
                    egui::TextEdit::singleline(&mut form.margins).desired_width(200.0),
                );
                super::mark_free_text(&field);
                field
                    .labelled_by(label.id)
                    .on_hover_text("World units: FROM, FROM + STEP, ... up to TO.");
                ui.end_row();
                let label = ui.label("Look-ahead values (s)");
                let field = ui.add_enabled(
                    !running,
                    egui::TextEdit::singleline(&mut form.lookaheads).desired_width(200.0),
                );
                super::mark_free_text(&field);
                field
                    .labelled_by(label.id)
                    .on_hover_text("Seconds, separated by commas: one line each.");
                ui.end_row();
                let label = ui.label("Steps a point");
                ui.add_enabled(
                    !running,
                    egui::TextEdit::singleline(&mut form.steps).desired_width(80.0),
                )
                .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("A pair test costs (node visits)").on_hover_text(
                    "What your engine's narrow-phase test of one candidate pair costs, in node \
                     visits of the tree (1: alike). The best by work weighs the pairs by it.",
                );
                ui.add_enabled(
                    !running,
                    egui::TextEdit::singleline(&mut form.pair_cost).desired_width(80.0),
                )
                .labelled_by(label.id);
                ui.end_row();
            });
        ui.horizontal(|ui| {
            ui.add_enabled_ui(!running, |ui| {
                ui.radio_value(&mut form.from_now, true, "From now");
                ui.radio_value(&mut form.from_now, false, "From the start");
            });
            if ui
                .add_enabled(!running, egui::Button::new("Reset grid"))
                .on_hover_text("The default grid around the current margin and look-ahead.")
                .clicked()
            {
                *form = Form::for_doc(state.session.doc());
            }
        });
        let spec = form.spec(state.session.sim().pair_limit());
        match &spec {
            Ok(s) => {
                ui.weak(format!(
                    "{} margins x {} look-ahead values = {} points x {} steps",
                    s.margins.len(),
                    s.lookaheads.len(),
                    s.margins.len() * s.lookaheads.len(),
                    s.steps
                ));
            }
            Err(e) => {
                ui.colored_label(Color32::from_rgb(230, 80, 80), e.to_string());
            }
        }
        if let Some(run) = &self.running {
            let p = run.handle.progress();
            ui.horizontal(|ui| {
                let share = if p.steps_total == 0 {
                    0.0
                } else {
                    p.steps_done as f32 / p.steps_total as f32
                };
                ui.add(
                    egui::ProgressBar::new(share)
                        .desired_width(320.0)
                        .show_percentage()
                        .text(format!(
                            "{}/{} points, {}/{} steps",
                            p.points_done, p.points_total, p.steps_done, p.steps_total
                        )),
                );
                if ui.button("Cancel").clicked() {
                    run.handle.cancel();
                }
            });
        } else if ui
            .add_enabled(spec.is_ok(), egui::Button::new("Start"))
            .on_hover_text("Runs on background threads; the window stays live.")
            .clicked()
        {
            // The pair cost the sweep weighs by is kept with the scene.
            if let Ok(spec) = &spec
                && spec.pair_cost != state.session.doc().pair_cost()
            {
                out.push(Command::SetPairCost(spec.pair_cost));
            }
            self.start(state);
        }
        if let Some(message) = &self.message {
            ui.colored_label(Color32::from_rgb(230, 80, 80), message);
        }
    }
}

/// The live scene's settings with a point's margin and look-ahead: what applying it sends.
fn apply_point(state: &State, p: &PointResult) -> Command {
    Command::SetTreeSettings(TreeConfig {
        margin: p.point.margin,
        velocity_lookahead: p.point.lookahead,
        ..state.session.doc().tree
    })
}

/// A point's numbers, for its hover.
fn point_text(p: &PointResult) -> String {
    let mut text = format!(
        "margin {}, look-ahead {} s\nreinserts/step {:.2}\ncandidate pairs/step {:.1}\nfalse \
         positives {:.1}%\nnode visits/step {:.0}\nms/step {:.4} (update {:.4}, pairs {:.4}), \
         medians",
        p.point.margin,
        p.point.lookahead,
        p.per_step(p.reinserts_total),
        p.per_step(p.candidate_pairs_total),
        100.0 * p.false_positive_share(),
        p.per_step(p.node_visits_total()),
        p.ms_per_step.median,
        p.ms_update.median,
        p.ms_pairs.median
    );
    if let Some(why) = &p.stopped {
        text.push_str(&format!("\nstopped: {why}"));
    }
    text.push_str("\nClick to apply it to the live scene.");
    text
}

/// One series of a plot: its name, colour and points (x margin), each with its point index.
struct Series {
    name: String,
    colour: Color32,
    points: Vec<(usize, [f64; 2])>,
}

/// A value axis's number: thousands compact (`12k`), small numbers to three significant
/// digits (`0.0042`), whole numbers whole.
#[must_use]
fn axis_number(x: f64) -> String {
    let a = x.abs();
    if a >= 1e3 || x.fract() == 0.0 {
        return crate::history::compact_number(x);
    }
    let decimals = (2 - a.log10().floor() as i32).clamp(0, 9) as usize;
    let text = format!("{x:.decimals$}");
    // No trailing zeros after the point (grid marks are round numbers).
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_owned()
}

/// What happened in a plot this frame.
#[derive(Default)]
struct PlotOutcome {
    /// The point clicked.
    clicked: Option<usize>,
    /// Where each plotted point was drawn, by point index.
    drawn: Vec<(usize, Pos2)>,
}

/// A small plot of `series` against the margin with the best points marked and the current
/// margin as a vertical line; hover shows the nearest point's numbers; a click picks it.
fn metric_plot(
    ui: &mut egui::Ui,
    id: &str,
    title: &str,
    series: &[Series],
    report: &SweepReport,
    current_margin: f32,
    legend: bool,
) -> PlotOutcome {
    ui.label(RichText::new(title).strong());
    let best_time = report.advice.best_by_time.as_ref().map(|b| b.index);
    let best_work = report.advice.best_by_work.as_ref().map(|b| b.index);
    let at = |index: usize| {
        series
            .iter()
            .flat_map(|s| s.points.iter())
            .find(|(i, _)| *i == index)
            .map(|(_, xy)| *xy)
    };
    // The value axis is numbered at every grid line at least 12 points apart (egui_plot's
    // own spacing leaves a plot this low with one number, or none).
    let mut plot = Plot::new(id).height(PLOT_HEIGHT).custom_y_axes(vec![
        AxisHints::new_y()
            .label_spacing(12.0..=16.0)
            .formatter(|mark, _| axis_number(mark.value)),
    ]);
    if legend {
        plot = plot.legend(
            Legend::default()
                .position(Corner::RightTop)
                .background_alpha(0.6),
        );
    }
    // Only the lines are named (the legend lists them); the dots and marks are explained
    // once above the plots.
    let response = plot
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
        .show_x(false)
        .show_y(false)
        .x_axis_label("margin")
        .show(ui, |plot| {
            for s in series {
                let xy: Vec<[f64; 2]> = s.points.iter().map(|(_, xy)| *xy).collect();
                plot.line(Line::new(s.name.clone(), PlotPoints::from(xy.clone())).color(s.colour));
                plot.points(
                    Points::new("", PlotPoints::from(xy))
                        .color(s.colour)
                        .radius(2.0),
                );
            }
            plot.vline(
                VLine::new("", f64::from(current_margin))
                    .color(Color32::GRAY)
                    .width(1.0),
            );
            if let Some(xy) = best_time.and_then(at) {
                plot.points(
                    Points::new("", vec![xy])
                        .shape(MarkerShape::Diamond)
                        .color(BEST_TIME)
                        .filled(true)
                        .radius(6.0),
                );
            }
            if let Some(xy) = best_work.and_then(at) {
                plot.points(
                    Points::new("", vec![xy])
                        .shape(MarkerShape::Square)
                        .color(BEST_WORK)
                        .filled(false)
                        .radius(6.0),
                );
            }
        });
    let transform = response.transform;
    let drawn: Vec<(usize, Pos2)> = series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|(i, [x, y])| (*i, transform.position_from_point(&PlotPoint::new(*x, *y))))
        .collect();
    let nearest = response.response.hover_pos().and_then(|pos| {
        drawn
            .iter()
            .map(|(i, p)| (*i, p.distance(pos)))
            .filter(|(_, d)| *d <= PICK_RADIUS)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    });
    let mut outcome = PlotOutcome {
        clicked: None,
        drawn,
    };
    if let Some(i) = nearest {
        let clicked = response.response.clicked();
        response.response.on_hover_ui_at_pointer(|ui| {
            ui.label(point_text(&report.points[i]));
        });
        if clicked {
            outcome.clicked = Some(i);
        }
    }
    outcome
}

/// A colour from blue (0) through yellow to red (1).
fn ramp(t: f64) -> Color32 {
    let t = t.clamp(0.0, 1.0) as f32;
    let (a, b, u) = if t < 0.5 {
        ([60.0, 90.0, 200.0], [240.0, 220.0, 80.0], t * 2.0)
    } else {
        ([240.0, 220.0, 80.0], [220.0, 50.0, 40.0], t * 2.0 - 1.0)
    };
    let c = |k: usize| (a[k] + (b[k] - a[k]) * u) as u8;
    Color32::from_rgb(c(0), c(1), c(2))
}

impl AdvisorView {
    /// The advice, the buttons (apply best, export), the four plots and the heat map.
    fn result_ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        // Taken out while drawn (the view's other fields change meanwhile), then put back.
        let Some(f) = self.finished.take() else {
            return;
        };
        if let Some(i) = self.result_body_ui(ui, state, out, &f) {
            out.push(apply_point(state, &f.report.points[i]));
        }
        self.finished = Some(f);
    }

    /// [`Self::result_ui`] for `f`; returns the point to apply (clicked, or a best button).
    fn result_body_ui(
        &mut self,
        ui: &mut egui::Ui,
        state: &State,
        out: &mut Vec<Command>,
        f: &Finished,
    ) -> Option<usize> {
        let report = &f.report;
        let advice = &report.advice;
        let current = state.session.doc().tree;
        let name = |i: usize| {
            let p = &report.points[i].point;
            format!("margin {}, look-ahead {} s", p.margin, p.lookahead)
        };
        ui.separator();
        ui.label(format!(
            "{} points x {} steps {}, on {} threads in {:.1} s.",
            report.points.len(),
            report.steps,
            f.from,
            report.threads,
            report.elapsed_secs
        ));
        let mut apply = None;
        ui.horizontal_wrapped(|ui| {
            if let Some(b) = &advice.best_by_time {
                if ui
                    .button("Apply best by time")
                    .on_hover_text("Least median ms a step (red diamond).")
                    .clicked()
                {
                    apply = Some(b.index);
                }
                ui.label(format!(
                    "{} ({:.4} ms/step, noise ±{:.4})",
                    name(b.index),
                    b.ms_per_step.median,
                    b.noise_ms
                ));
            }
        });
        ui.horizontal_wrapped(|ui| {
            if let Some(b) = &advice.best_by_work {
                if ui
                    .button("Apply best by work")
                    .on_hover_text(
                        "Least work (white square): the tree's node visits plus one \
                         narrow-phase test per candidate pair a step; the same on every machine.",
                    )
                    .clicked()
                {
                    apply = Some(b.index);
                }
                ui.label(format!(
                    "{} ({:.0} node visits + pair tests a step, a pair test as {} node visits)",
                    name(b.index),
                    report.points[b.index].per_step(b.work_total),
                    b.pair_cost
                ));
            }
        });
        // How the best by work moves with what a pair test costs the engine.
        let moves: Vec<String> =
            crate::sweep::best_by_pair_cost(&report.points, &crate::sweep::PAIR_COSTS_SHOWN)
                .into_iter()
                .filter_map(|(cost, best)| {
                    best.map(|i| format!("{cost}: margin {}", report.points[i].point.margin))
                })
                .collect();
        if !moves.is_empty() {
            ui.label(format!(
                "Best by work as a pair test costs more node visits: {}",
                moves.join(" · ")
            ))
            .on_hover_text(
                "An engine's narrow-phase test of a candidate pair often costs tens of node \
                 visits: the dearer it is, the smaller the margin that does least work. Set \
                 it under \"A pair test costs\" and sweep again.",
            );
        }
        // The engine's own timings (a received stream's), when they tell what a pair test
        // costs it: the pairs weighed by that.
        let engine_cost = state
            .session
            .engine()
            .map(|e| &**e)
            .and_then(|e| e.summary.cost_fit.costs())
            .and_then(|c| {
                crate::sweep::engine_pair_cost(
                    c.ns_per_pair_test,
                    &report.points,
                    advice.model.as_ref(),
                )
                .map(|p| (c, p))
            });
        if let Some((c, p)) = engine_cost {
            ui.horizontal_wrapped(|ui| {
                let best = p.best.map_or("no point ran to the end".to_owned(), &name);
                ui.label(format!(
                    "By the engine's own timings ({} steps): a pair test costs it {:.0} ns, a \
                     node visit {:.1} ns here, so a pair test as {:.1} node visits; best by \
                     work at that cost: {best}.",
                    c.pair_steps, p.ns_per_pair_test, p.ns_per_node_visit, p.pair_cost
                ))
                .on_hover_text(
                    "Fitted from the narrow phase's time and pairs tested the engine sent each \
                     step (a least-squares line through 0), and this sweep's own time per node \
                     visit. The engine's machine may differ from this one: a stream made here \
                     compares like with like.",
                );
                if let Some(r) = c.ns_per_reinsert {
                    ui.weak(format!(
                        "(a reinsert costs its broad phase {r:.0} ns, over {} steps)",
                        c.reinsert_steps
                    ));
                }
                let rounded = (p.pair_cost * 10.0).round() / 10.0;
                if ui
                    .button("Use it")
                    .on_hover_text("Count a pair test as that many node visits (kept with the scene); sweep again to see its best.")
                    .clicked()
                {
                    out.push(Command::SetPairCost(rounded));
                    if let Some((form, _)) = self.form.as_mut() {
                        form.pair_cost = rounded.to_string();
                    }
                }
            });
        }
        ui.label(format!("Why: {}", advice.why));
        ui.weak(format!("Cost model: {}", advice.model_note));
        ui.horizontal(|ui| {
            for (label, format) in [
                ("Export CSV…", ExportFormat::Csv),
                ("Export JSON…", ExportFormat::Json),
            ] {
                if ui.button(label).clicked() {
                    let text = match format {
                        ExportFormat::Csv => Ok(csv(report)),
                        ExportFormat::Json => {
                            let file = state
                                .session
                                .path()
                                .as_ref()
                                .map_or_else(String::new, |p| p.display().to_string());
                            serde_json::to_string(&SweepJson::named(
                                &f.subject.0,
                                f.subject.1,
                                &file,
                                report,
                            ))
                            .map(|s| s + "\n")
                        }
                    };
                    match text {
                        Ok(text) => out.push(Command::ExportDialog { text, format }),
                        Err(e) => self.message = Some(format!("Could not export: {e}")),
                    }
                }
            }
        });
        ui.separator();

        // One line per look-ahead value, over the points that ran every step.
        let series = |metric: &dyn Fn(&PointResult) -> f64| -> Vec<Series> {
            f.lookaheads
                .iter()
                .enumerate()
                .map(|(k, &la)| Series {
                    name: format!("look-ahead {la} s"),
                    colour: LINE_COLOURS[k % LINE_COLOURS.len()],
                    points: report
                        .points
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| p.point.lookahead == la && p.stopped.is_none())
                        .map(|(i, p)| (i, [f64::from(p.point.margin), metric(p)]))
                        .collect(),
                })
                .collect()
        };
        let mut clicked = None;
        let mut positions = vec![None; report.points.len()];
        ui.horizontal_wrapped(|ui| {
            for (k, la) in f.lookaheads.iter().enumerate() {
                ui.colored_label(
                    LINE_COLOURS[k % LINE_COLOURS.len()],
                    format!("look-ahead {la} s"),
                );
            }
            ui.colored_label(BEST_TIME, "diamond: best by time");
            ui.colored_label(BEST_WORK, "square: best by work");
            ui.weak("grey line: current margin");
        });
        ui.columns(3, |cols| {
            let o = metric_plot(
                &mut cols[0],
                "advisor_reinserts",
                "Reinserts a step",
                &series(&|p| p.per_step(p.reinserts_total)),
                report,
                current.margin,
                false,
            );
            for (i, pos) in &o.drawn {
                positions[*i] = Some(*pos);
            }
            clicked = clicked.or(o.clicked);
            let o = metric_plot(
                &mut cols[1],
                "advisor_pairs",
                "Candidate pairs a step",
                &series(&|p| p.per_step(p.candidate_pairs_total)),
                report,
                current.margin,
                false,
            );
            clicked = clicked.or(o.clicked);
            let o = metric_plot(
                &mut cols[2],
                "advisor_false_positives",
                "False-positive share",
                &series(&PointResult::false_positive_share),
                report,
                current.margin,
                false,
            );
            clicked = clicked.or(o.clicked);
        });
        ui.columns(2, |cols| {
            let ms_la = f.lookaheads.get(self.ms_lookahead).copied().unwrap_or(0.0);
            let mut choice = self.ms_lookahead;
            egui::ComboBox::from_id_salt("advisor_ms_lookahead")
                .selected_text(format!("Milliseconds a step at look-ahead {ms_la} s"))
                .show_ui(&mut cols[0], |ui| {
                    for (k, la) in f.lookaheads.iter().enumerate() {
                        ui.selectable_value(&mut choice, k, format!("look-ahead {la} s"));
                    }
                });
            self.ms_lookahead = choice;
            let ms_series: Vec<Series> = [
                // Not the look-ahead colours: these lines are parts of one look-ahead.
                ("update", LINE_COLOURS[5]),
                ("pairs", LINE_COLOURS[3]),
                ("total", LINE_COLOURS[4]),
            ]
            .iter()
            .map(|&(what, colour)| Series {
                name: what.to_owned(),
                colour,
                points: report
                    .points
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.point.lookahead == ms_la && p.stopped.is_none())
                    .map(|(i, p)| {
                        let ms = match what {
                            "update" => p.ms_update.median,
                            "pairs" => p.ms_pairs.median,
                            _ => p.ms_per_step.median,
                        };
                        (i, [f64::from(p.point.margin), ms])
                    })
                    .collect(),
            })
            .collect();
            let o = metric_plot(
                &mut cols[0],
                "advisor_ms",
                "Medians: update, pairs and total",
                &ms_series,
                report,
                current.margin,
                true,
            );
            clicked = clicked.or(o.clicked);
            clicked = clicked.or(self.heat_map_ui(&mut cols[1], state, f));
        });
        self.positions = positions;
        apply.or(clicked)
    }

    /// The heat map: margins across, look-ahead values down, each cell coloured by its cost
    /// (median ms a step, or node visits a step); the best cells outlined. Returns the point
    /// clicked.
    fn heat_map_ui(&mut self, ui: &mut egui::Ui, state: &State, f: &Finished) -> Option<usize> {
        let report = &f.report;
        ui.horizontal(|ui| {
            ui.label(RichText::new("Cost").strong());
            ui.radio_value(&mut self.heat_by, HeatBy::Time, "ms a step");
            ui.radio_value(&mut self.heat_by, HeatBy::Work, "node visits a step");
        });
        let cost = |p: &PointResult| match self.heat_by {
            HeatBy::Time => p.ms_per_step.median,
            HeatBy::Work => p.per_step(p.node_visits_total()),
        };
        let mut margins: Vec<f32> = Vec::new();
        for p in &report.points {
            if !margins.contains(&p.point.margin) {
                margins.push(p.point.margin);
            }
        }
        if margins.is_empty() {
            return None;
        }
        let usable = report.points.iter().filter(|p| p.stopped.is_none());
        let (lo, hi) = usable.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(cost(p)), hi.max(cost(p)))
        });
        let log_scale = hi > lo && lo > 0.0;
        let label_w = 60.0;
        let row_h = (PLOT_HEIGHT / f.lookaheads.len().max(1) as f32).clamp(12.0, 30.0);
        let width = ui.available_width().max(label_w + 100.0);
        let height = row_h * f.lookaheads.len() as f32 + 18.0;
        let (rect, response) =
            ui.allocate_exact_size(egui::vec2(width, height), egui::Sense::click());
        let painter = ui.painter_at(rect);
        let cell_w = (width - label_w) / margins.len().max(1) as f32;
        let text_colour = ui.visuals().text_color();
        let font = egui::FontId::proportional(11.0);
        let best_time = report.advice.best_by_time.as_ref().map(|b| b.index);
        let best_work = report.advice.best_by_work.as_ref().map(|b| b.index);
        let mut hovered = None;
        let pointer = response.hover_pos();
        for (row, la) in f.lookaheads.iter().enumerate() {
            let y = rect.top() + row as f32 * row_h;
            painter.text(
                Pos2::new(rect.left() + label_w - 6.0, y + row_h / 2.0),
                egui::Align2::RIGHT_CENTER,
                format!("{la} s"),
                font.clone(),
                text_colour,
            );
            for (i, p) in report.points.iter().enumerate() {
                if p.point.lookahead != *la {
                    continue;
                }
                let Some(col) = margins.iter().position(|&m| m == p.point.margin) else {
                    continue;
                };
                let cell = egui::Rect::from_min_size(
                    Pos2::new(rect.left() + label_w + col as f32 * cell_w, y),
                    egui::vec2(cell_w, row_h),
                );
                let fill = if p.stopped.is_some() {
                    Color32::DARK_GRAY
                } else if log_scale {
                    // A log scale: a few very slow points do not wash the rest out.
                    ramp((cost(p) / lo).ln() / (hi / lo).ln())
                } else if hi > lo {
                    ramp((cost(p) - lo) / (hi - lo))
                } else {
                    ramp(0.0)
                };
                painter.rect_filled(cell.shrink(0.5), 0.0, fill);
                if Some(i) == best_time {
                    painter.rect_stroke(
                        cell.shrink(1.0),
                        0.0,
                        Stroke::new(2.0, BEST_TIME),
                        egui::StrokeKind::Inside,
                    );
                }
                if Some(i) == best_work {
                    painter.rect_stroke(
                        cell.shrink(3.0),
                        0.0,
                        Stroke::new(2.0, BEST_WORK),
                        egui::StrokeKind::Inside,
                    );
                }
                if pointer.is_some_and(|pos| cell.contains(pos)) {
                    hovered = Some(i);
                }
            }
        }
        // The current margin and look-ahead's column, if the grid has it.
        let current = state.session.doc().tree;
        if let Some(col) = margins.iter().position(|&m| m == current.margin) {
            let x = rect.left() + label_w + (col as f32 + 0.5) * cell_w;
            painter.line_segment(
                [Pos2::new(x, rect.top()), Pos2::new(x, rect.bottom() - 18.0)],
                Stroke::new(1.0, Color32::GRAY),
            );
        }
        let axis_y = rect.bottom() - 9.0;
        let ticks = margins.len().clamp(1, 6);
        for t in 0..ticks {
            let col = if ticks == 1 {
                0
            } else {
                t * (margins.len() - 1) / (ticks - 1)
            };
            // Centred under its column, but kept inside the map (the last one ran past the
            // right edge where the columns are narrow).
            let galley =
                painter.layout_no_wrap(format!("{}", margins[col]), font.clone(), text_colour);
            let half = 0.5 * galley.size().x;
            let x = (rect.left() + label_w + (col as f32 + 0.5) * cell_w)
                .min(rect.right() - half)
                .max(rect.left() + label_w + half);
            painter.galley(
                Pos2::new(x - half, axis_y - 0.5 * galley.size().y),
                galley,
                text_colour,
            );
        }
        painter.text(
            Pos2::new(rect.left(), axis_y),
            egui::Align2::LEFT_CENTER,
            "margin:",
            font,
            text_colour,
        );
        let clicked = response.clicked();
        if let Some(i) = hovered {
            response.on_hover_ui_at_pointer(|ui| {
                ui.label(point_text(&report.points[i]));
            });
        }
        let scale = if log_scale { "; log scale" } else { "" };
        if lo.is_finite() {
            ui.weak(match self.heat_by {
                HeatBy::Time => {
                    format!("blue {lo:.4} … red {hi:.4} ms a step (medians{scale})")
                }
                HeatBy::Work => {
                    format!("blue {lo:.0} … red {hi:.0} node visits a step{scale}")
                }
            });
        }
        hovered.filter(|_| clicked)
    }
}

impl View for AdvisorView {
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        self.poll();
        if self.running.is_some() {
            ui.ctx().request_repaint_after(REPAINT);
        }
        if !state.dialogs.advisor {
            // Closed (the window's cross or the View menu): a running sweep is no longer
            // wanted.
            if let Some(run) = &self.running {
                run.handle.cancel();
            }
            self.positions.clear();
            return;
        }
        // A report of another scene (one opened since, or new spheres) must not be applied
        // to this one.
        if self
            .finished
            .as_ref()
            .is_some_and(|f| f.document_id != state.session.id())
        {
            self.finished = None;
            self.positions.clear();
            self.message = Some(
                "The scene changed since the last sweep (another file, or other spheres): \
                 sweep it again."
                    .to_owned(),
            );
        }
        if let Some(grid) = self.start_requested.take() {
            let form = self.form_of(state);
            if let Some(margins) = grid.margins {
                form.margins = margins;
            }
            if let Some(lookaheads) = grid.lookaheads {
                form.lookaheads = lookaheads;
            }
            if let Some(steps) = grid.steps {
                form.steps = steps.to_string();
            }
            self.start(state);
        }
        let mut open = true;
        let ctx = ui.ctx().clone();
        egui::Window::new("Advisor")
            .open(&mut open)
            .default_pos([170.0, 30.0])
            .default_size([980.0, 720.0])
            .resizable(true)
            .vscroll(true)
            .show(&ctx, |ui| {
                ui.label(
                    "Runs the scene at every margin x look-ahead value of a grid and shows what \
                     each costs. Click a point (or a cell) to apply it to the live scene.",
                );
                self.grid_ui(ui, state, out);
                self.result_ui(ui, state, out);
            });
        if !open {
            out.push(Command::ShowAdvisor(false));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_grid_holds_about_forty_margins_and_the_current_lookahead() {
        for (margin, lookahead) in [
            (0.2f32, 0.0f32),
            (0.3, 0.05),
            (1.0, 0.1),
            (3.0, 0.05),
            (0.0, 0.0),
        ] {
            let tree = TreeConfig {
                margin,
                velocity_lookahead: lookahead,
                ..TreeConfig::default()
            };
            let form = Form::around(&tree, 1.0);
            let spec = form.spec(1000).expect("the default grid is valid");
            assert!(
                (38..=42).contains(&spec.margins.len()),
                "{}: {} margins",
                form.margins,
                spec.margins.len()
            );
            assert_eq!(spec.margins[0], 0.0);
            let below = spec.margins.iter().filter(|&&m| m < margin).count();
            if margin > 0.0 {
                assert!(below >= 14, "{}: {below} below {margin}", form.margins);
                assert!(spec.margins.last().is_some_and(|&m| m > 2.0 * margin));
            }
            assert!(spec.lookaheads.contains(&lookahead));
            assert_eq!(spec.steps, 300);
            assert_eq!(spec.pair_limit, 1000);
        }
    }

    #[test]
    fn a_bad_field_is_named() {
        let form = Form {
            steps: "many".to_owned(),
            ..Form::around(&TreeConfig::default(), 1.0)
        };
        match form.spec(10) {
            Err(SweepError::Grid { field, .. }) => assert_eq!(field, "steps"),
            other => panic!("expected a steps error, got {other:?}"),
        }
    }

    #[test]
    fn value_axis_numbers_keep_their_digits() {
        assert_eq!(axis_number(0.0), "0");
        assert_eq!(axis_number(0.004), "0.004");
        assert_eq!(axis_number(0.0125), "0.0125");
        assert_eq!(axis_number(0.5), "0.5");
        assert_eq!(axis_number(2.5), "2.5");
        assert_eq!(axis_number(40.0), "40");
        assert_eq!(axis_number(25_000.0), "25k");
    }

    #[test]
    fn round2_keeps_two_significant_digits() {
        assert_eq!(round2(0.025384), 0.025);
        assert_eq!(round2(3.99), 4.0);
        assert_eq!(round2(0.0), 0.0);
    }
}
