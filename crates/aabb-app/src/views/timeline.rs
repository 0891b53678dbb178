//! The timeline under the views: the recording's per-step metrics as tracks on one step axis
//! (and, last, the tree's health sampled every few steps: `views::health`),
//! markers where the user changed something (orange), where the tree was rebuilt (blue) and,
//! for a stream that carried the engine's broad phase, where it missed pairs (red),
//! and a playhead at the step shown. A press or drag on the tracks moves the playhead; a click
//! lands on the highest value of the clicked track within a few points (a spike). The header
//! shows the recording's memory against its budget and a "worst step" menu per metric.
//!
//! It reads the recording (`Model::recording`) and the step shown (`Model::sim`) and asks
//! for [`Command::SeekTo`]; the shell lays it out in a bottom panel of the central area.

use eframe::egui;
use egui::{Color32, Pos2, Rect, Sense, Shape, Stroke, pos2, vec2};

use super::View;
use crate::commands::Command;
use crate::prefs::PrefChange;
use crate::replay::{Edit, Metric, StepRecord};
use crate::state::State;

/// The tracks drawn, top to bottom.
pub const TRACKS: [Metric; 5] = [
    Metric::Reinserts,
    Metric::CandidatePairs,
    Metric::FalsePositiveShare,
    Metric::Height,
    Metric::StepMs,
];

/// The tracks drawn: [`TRACKS`], then the tree's health (the cost against a fresh rebuild,
/// sampled every few steps; see `views::health`).
pub const TRACK_COUNT: usize = TRACKS.len() + 1;

/// The recording budgets offered, MiB.
const BUDGET_CHOICES_MIB: [u64; 6] = [128, 256, 512, 1024, 2048, 4096];

/// A track's value at the playhead: A's, and B's while a comparison runs.
pub type TrackValue = (Option<f64>, Option<f64>);

/// Width of the track names on the left, points.
const LABEL_WIDTH: f32 = 150.0;

/// How far a click looks either side for a spike, points.
const SNAP_POINTS: f32 = 4.0;

/// The timeline view; keeps where it drew its tracks (for tests and the pointer).
#[derive(Default)]
pub struct TimelineView {
    /// The tracks' area (right of the names) and the last step of the axis, last frame.
    axis: Option<(Rect, u64)>,
    /// The health track's points (one per sample), last frame.
    health_points: Vec<Pos2>,
    /// Each track's value at the playhead, A's and (comparing) B's, last frame.
    values: Vec<TrackValue>,
    /// Points of B's line on each track, last frame (none unless comparing).
    b_points: Vec<usize>,
}

impl TimelineView {
    /// The screen point of `step` on track `track` (its middle), as last drawn.
    #[must_use]
    pub fn step_pos(&self, step: u64, track: usize) -> Option<Pos2> {
        let (rect, last) = self.axis?;
        let h = rect.height() / TRACK_COUNT as f32;
        Some(pos2(
            x_of(rect, last, step),
            rect.top() + h * (track as f32 + 0.5),
        ))
    }

    /// Forgets the drawn area (the timeline is hidden).
    pub fn hide(&mut self) {
        self.axis = None;
        self.health_points.clear();
        self.values.clear();
        self.b_points.clear();
    }

    /// Each of [`TRACKS`]' value at the playhead as drawn last frame: A's, and B's while a
    /// comparison runs.
    #[must_use]
    pub fn values(&self) -> &[TrackValue] {
        &self.values
    }

    /// How many points B's line had on each of [`TRACKS`] last frame (empty unless
    /// comparing).
    #[must_use]
    pub fn b_points(&self) -> &[usize] {
        &self.b_points
    }

    /// Where the health track's points (one per sample) were drawn last frame.
    #[must_use]
    pub fn health_points(&self) -> &[Pos2] {
        &self.health_points
    }
}

/// The x of `step` on an axis from 0 to `last` across `rect`.
fn x_of(rect: Rect, last: u64, step: u64) -> f32 {
    let t = if last == 0 {
        0.0
    } else {
        step.min(last) as f32 / last as f32
    };
    rect.left() + t * rect.width()
}

/// The step nearest to `x` on an axis from 0 to `last` across `rect`.
fn step_of(rect: Rect, last: u64, x: f32) -> u64 {
    if rect.width() <= 0.0 {
        return 0;
    }
    let t = ((x - rect.left()) / rect.width()).clamp(0.0, 1.0);
    (f64::from(t) * last as f64).round() as u64
}

/// The step in `from..=to` where `metric` is greatest (the earliest of equal ones).
fn peak(steps: &[StepRecord], metric: Metric, from: u64, to: u64) -> u64 {
    let mut best = (from, f64::NEG_INFINITY);
    for s in from..=to {
        if let Some(r) = usize::try_from(s).ok().and_then(|i| steps.get(i)) {
            let v = metric.value(r);
            if v > best.1 {
                best = (s, v);
            }
        }
    }
    best.0
}

/// The steps (trace indices, in order) where the engine's broad phase missed pairs, with how
/// many.
#[must_use]
pub fn missed_steps(engine: &crate::stream::engine::EngineRecord) -> Vec<(u64, u64)> {
    engine
        .summary
        .step_counts
        .iter()
        .filter(|c| c.missed > 0)
        .map(|c| (c.index, c.missed))
        .collect()
}

/// A track's line: one point a step, or, with more steps than pixel columns, one a column at
/// the greatest value of the steps it covers (so a spike stays visible).
fn track_line(
    steps: &[StepRecord],
    metric: Metric,
    plot: Rect,
    last: u64,
    columns: usize,
    y_of: impl Fn(f64) -> f32,
) -> Vec<Pos2> {
    if steps.len() <= columns {
        steps
            .iter()
            .enumerate()
            .map(|(s, r)| pos2(x_of(plot, last, s as u64), y_of(metric.value(r))))
            .collect()
    } else {
        let last_here = steps.len() as u64 - 1;
        (0..columns)
            .map_while(|c| {
                let from = step_of(plot, last, plot.left() + c as f32);
                if from > last_here {
                    return None;
                }
                let to = step_of(plot, last, plot.left() + c as f32 + 1.0)
                    .max(from)
                    .min(last_here);
                let s = peak(steps, metric, from, to);
                let v = usize::try_from(s)
                    .ok()
                    .and_then(|i| steps.get(i))
                    .map_or(0.0, |r| metric.value(r));
                Some(pos2(plot.left() + c as f32, y_of(v)))
            })
            .collect()
    }
}

/// A metric's value for the header and labels.
fn format_value(metric: Metric, v: f64) -> String {
    match metric {
        Metric::FalsePositiveShare => format!("{:.0}%", v * 100.0),
        Metric::StepMs | Metric::AreaRatio => format!("{v:.2}"),
        _ => format!("{v:.0}"),
    }
}

/// `bytes` in KiB below a MiB, else in MiB, with one decimal.
fn size(bytes: usize) -> String {
    let kib = bytes as f64 / 1024.0;
    if kib < 1024.0 {
        format!("{kib:.1} KiB")
    } else {
        format!("{:.1} MiB", kib / 1024.0)
    }
}

impl View for TimelineView {
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        // An engine streaming now: its session's timeline, growing; a step picked there is
        // held in the live view (the engine and the recording go on).
        if let Some(job) = state.dialogs.live.as_ref()
            && state.shows_live()
        {
            let live = job.session();
            if let Some(session) = live.as_ref() {
                let at = state
                    .live_held
                    .as_ref()
                    .map_or(session.sim().step_index(), |h| h.sim.step_index());
                let mut asked = Vec::new();
                let no_health = crate::health_monitor::Health::default();
                self.timeline_ui(ui, state, session, at, &no_health, &mut asked);
                out.extend(asked.into_iter().map(|c| match c {
                    Command::SeekTo(step) => Command::LiveShow(Some(step)),
                    other => other,
                }));
                return;
            }
        }
        let at = state.session.sim().step_index();
        self.timeline_ui(ui, state, &state.session, at, &state.model.health, out);
    }
}

impl TimelineView {
    /// The timeline of `session` with step `at` shown and `health` sampled beside it.
    fn timeline_ui(
        &mut self,
        ui: &mut egui::Ui,
        state: &State,
        session: &crate::session::Session,
        at: u64,
        health: &crate::health_monitor::Health,
        out: &mut Vec<Command>,
    ) {
        let rec = session.recording();
        let steps = rec.steps();
        let last = rec.last_step();
        ui.horizontal(|ui| {
            ui.menu_button("Worst step", |ui| {
                for metric in Metric::ALL {
                    let s = rec.worst_step(metric);
                    let v = usize::try_from(s)
                        .ok()
                        .and_then(|i| steps.get(i))
                        .map_or(0.0, |r| metric.value(r));
                    let label = format!(
                        "most {}: step {s} ({})",
                        metric.name(),
                        format_value(metric, v)
                    );
                    if ui.button(label).clicked() {
                        out.push(Command::SeekTo(s));
                        ui.close();
                    }
                }
                // The engine's own broad phase (a received stream's): its missed pairs.
                if let Some(engine) = session.engine().map(|e| &**e) {
                    let missed = missed_steps(engine);
                    let label = match (missed.first(), missed.iter().max_by_key(|m| m.1)) {
                        (Some(first), Some(most)) => {
                            if ui
                                .button(format!("first pair the engine missed: step {}", first.0))
                                .clicked()
                            {
                                out.push(Command::SeekTo(first.0));
                                ui.close();
                            }
                            format!("most pairs the engine missed: step {} ({})", most.0, most.1)
                        }
                        _ => "no pair the engine missed".to_owned(),
                    };
                    let most = missed.iter().max_by_key(|m| m.1).map(|m| m.0);
                    if ui
                        .add_enabled(most.is_some(), egui::Button::new(label))
                        .clicked()
                        && let Some(s) = most
                    {
                        out.push(Command::SeekTo(s));
                        ui.close();
                    }
                }
            })
            .response
            .on_hover_text("Jump to the step where a metric is greatest.");
            if at < last {
                ui.strong(format!("step {at} of {last} (recorded)"));
            } else {
                ui.label(format!("step {at} of {last}"));
            }
            ui.separator();
            ui.menu_button("Budget", |ui| {
                for mib in BUDGET_CHOICES_MIB {
                    let bytes = mib * 1024 * 1024;
                    let chosen = state.prefs.recording_budget == bytes;
                    if ui.radio(chosen, size(bytes as usize)).clicked() {
                        out.push(Command::SetPref(PrefChange::RecordingBudget(bytes)));
                        ui.close();
                    }
                }
            })
            .response
            .on_hover_text("The most memory the recording may take.");
            // Short, and cut with "…" where the panel is narrow (the tooltip says it all).
            let (count, keyframes) = (steps.len(), rec.keyframe_steps().len());
            ui.add(
                egui::Label::new(format!(
                    "{count} {} recorded, {} of {}, {keyframes} {}",
                    if count == 1 { "step" } else { "steps" },
                    size(rec.memory_bytes()),
                    size(rec.budget_bytes()),
                    if keyframes == 1 {
                        "keyframe"
                    } else {
                        "keyframes"
                    }
                ))
                .truncate(),
            )
            .on_hover_text(format!(
                "{count} steps recorded in {} of the {} budget, with {keyframes} keyframes. \
                 Every step is kept (its metrics and tree hash) with the edits; whole copies \
                 of the simulation (keyframes) are dropped, evenly, to stay within the budget.",
                size(rec.memory_bytes()),
                size(rec.budget_bytes()),
            ));
        });
        // The tracks take the rest of the panel (allocated, so the panel keeps its size).
        let (area, _) = ui.allocate_exact_size(ui.available_size(), Sense::hover());
        if area.width() <= LABEL_WIDTH + 10.0 || area.height() < 10.0 {
            self.hide();
            return;
        }
        let plot = Rect::from_min_max(pos2(area.left() + LABEL_WIDTH, area.top()), area.max);
        self.axis = Some((plot, last));
        let response = ui.interact(
            plot,
            ui.scope_id().with("timeline_tracks"),
            Sense::click_and_drag(),
        );
        let painter = ui.painter_at(area);
        let visuals = ui.visuals();
        let text_color = visuals.text_color();
        let weak = visuals.weak_text_color();
        let line_color = visuals.selection.bg_fill;
        let track_h = plot.height() / TRACK_COUNT as f32;
        let shown = usize::try_from(at).ok().and_then(|i| steps.get(i));
        // A comparison's side B: its recorded steps, drawn over A's in its colour.
        let b_steps: &[StepRecord] = state
            .compare
            .as_ref()
            .map_or(&[], |c| c.b.recording().steps());
        let b_shown = state.compare.as_ref().and_then(|c| {
            let b_at = c.b.sim().step_index();
            (b_at == at).then(|| usize::try_from(at).ok().and_then(|i| b_steps.get(i)))?
        });
        self.values.clear();
        self.b_points.clear();
        // Columns: each pixel column draws the greatest value of the steps it covers, so a
        // spike stays visible however many steps there are.
        let columns = (plot.width().floor() as usize).max(1);
        for (k, metric) in TRACKS.into_iter().enumerate() {
            let top = plot.top() + track_h * k as f32;
            let band = Rect::from_min_size(pos2(plot.left(), top), vec2(plot.width(), track_h));
            painter.line_segment(
                [pos2(area.left(), band.bottom()), band.right_bottom()],
                Stroke::new(0.5, weak),
            );
            // Measured times differ run to run: their track is drawn but its value not
            // printed, so a picture of the window is the same every run.
            let mut value = shown
                .filter(|_| metric != Metric::StepMs)
                .map_or(String::new(), |r| format_value(metric, metric.value(r)));
            if let Some(r) = b_shown.filter(|_| metric != Metric::StepMs) {
                value.push_str(&format!(" / {}", format_value(metric, metric.value(r))));
            }
            self.values.push((
                shown.map(|r| metric.value(r)),
                b_shown.map(|r| metric.value(r)),
            ));
            // Names only where they fit (a panel dragged small keeps its lines).
            if track_h >= 11.0 {
                painter.text(
                    pos2(area.left() + 4.0, band.center().y),
                    egui::Align2::LEFT_CENTER,
                    format!("{}  {value}", metric.name()),
                    egui::FontId::proportional(track_h.min(12.0) - 1.0),
                    text_color,
                );
            }
            // Each track spans its own least to greatest value (both sides' while a
            // comparison runs), so a slow drift shows too.
            let (min, max) = steps
                .iter()
                .chain(b_steps)
                .map(|r| metric.value(r))
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
            if steps.len() < 2 || !(max.is_finite() && min.is_finite()) {
                continue;
            }
            let span = max - min;
            let y_of = |v: f64| {
                let t = if span > 0.0 { (v - min) / span } else { 0.5 };
                band.bottom() - 2.0 - t as f32 * (track_h - 4.0)
            };
            let line =
                |series: &[StepRecord]| track_line(series, metric, plot, last, columns, y_of);
            painter.add(Shape::line(line(steps), Stroke::new(1.0, line_color)));
            if state.compare.is_some() {
                let b_line = line(b_steps);
                self.b_points.push(b_line.len());
                painter.add(Shape::line(
                    b_line,
                    Stroke::new(1.0, super::compare::B_COLOR),
                ));
            }
        }
        let band = Rect::from_min_max(
            pos2(plot.left(), plot.top() + track_h * TRACKS.len() as f32),
            plot.max,
        );
        self.health_points = super::health::ratio_track(
            &painter,
            band,
            |s| x_of(plot, last, s),
            health,
            at,
            &super::health::TrackStyle {
                line: line_color,
                text: text_color,
                name_left: area.left(),
                threshold: state.prefs.health_threshold,
                engine: state
                    .session
                    .engine()
                    .map(|e| &**e)
                    .map_or(&[], |e| e.summary.health.as_slice()),
                engine_line: crate::palette::Palette::for_dark_mode(ui.visuals().dark_mode)
                    .engine_tree,
            },
        );
        // Markers: the tree's rebuilds (blue, top) and the user's edits (orange, full height).
        let rebuilt = Color32::from_rgb(80, 150, 255);
        let mut last_x = f32::NEG_INFINITY;
        for (s, r) in steps.iter().enumerate() {
            if r.rebuilt && s > 0 {
                let x = x_of(plot, last, s as u64);
                if x - last_x >= 1.0 {
                    painter.line_segment(
                        [pos2(x, plot.top()), pos2(x, plot.top() + 6.0)],
                        Stroke::new(1.5, rebuilt),
                    );
                    last_x = x;
                }
            }
        }
        let edited = Color32::from_rgb(255, 160, 40);
        let mut last_x = f32::NEG_INFINITY;
        for e in rec.edits() {
            let x = x_of(plot, last, e.step);
            if x - last_x >= 1.0 {
                // A rebuild the user asked for is a rebuild too: blue.
                let color = if e.edit == Edit::Rebuild {
                    rebuilt
                } else {
                    edited
                };
                painter.line_segment(
                    [pos2(x, plot.top()), pos2(x, plot.bottom())],
                    Stroke::new(1.0, color.gamma_multiply(0.6)),
                );
                last_x = x;
            }
        }
        // The engine's missed pairs (a received stream's): red, full height, a broad-phase bug.
        if let Some(engine) = session.engine().map(|e| &**e) {
            let missed_colour =
                crate::palette::Palette::for_dark_mode(ui.visuals().dark_mode).missed;
            let mut last_x = f32::NEG_INFINITY;
            for (step, _) in missed_steps(engine) {
                let x = x_of(plot, last, step);
                if x - last_x >= 1.0 {
                    painter.line_segment(
                        [pos2(x, plot.top()), pos2(x, plot.bottom())],
                        Stroke::new(2.0, missed_colour),
                    );
                    last_x = x;
                }
            }
        }
        // A comparison's steps whose pairs differ: B's colour, a tick at the bottom.
        if let Some(run) = state.compare.as_ref() {
            let mut last_x = f32::NEG_INFINITY;
            for r in run.rows.iter().filter(|r| r.only_a > 0 || r.only_b > 0) {
                let x = x_of(plot, last, r.step);
                if x - last_x >= 1.0 {
                    painter.line_segment(
                        [pos2(x, plot.bottom() - 6.0), pos2(x, plot.bottom())],
                        Stroke::new(1.5, super::compare::B_COLOR),
                    );
                    last_x = x;
                }
            }
        }
        // The playhead.
        let x = x_of(plot, last, at);
        painter.line_segment(
            [pos2(x, plot.top()), pos2(x, plot.bottom())],
            Stroke::new(2.0, text_color),
        );
        painter.add(Shape::convex_polygon(
            vec![
                pos2(x - 5.0, plot.top()),
                pos2(x + 5.0, plot.top()),
                pos2(x, plot.top() + 6.0),
            ],
            text_color,
            Stroke::NONE,
        ));
        // What the pointer rests on: the step's values and what happened at it.
        if let Some(hover) = response.hover_pos()
            && !response.dragged()
        {
            let s = step_of(plot, last, hover.x);
            if let Some(r) = usize::try_from(s).ok().and_then(|i| steps.get(i)) {
                response.clone().on_hover_ui_at_pointer(|ui| {
                    ui.strong(format!("step {s}"));
                    for metric in Metric::ALL {
                        ui.label(format!(
                            "{}: {}",
                            metric.name(),
                            format_value(metric, metric.value(r))
                        ));
                    }
                    if let Some(h) = health.samples().get(&s) {
                        ui.label(format!("{}: {:.3}", super::health::TRACK_NAME, h.ratio()));
                    }
                    if r.rebuilt {
                        ui.label("the tree was rebuilt (wholly or in part)");
                    }
                    for e in rec.edits().iter().filter(|e| e.step == s) {
                        ui.label(format!("you: {}", e.edit.describe()));
                    }
                });
            }
        }
        // The pointer: a click lands on the clicked track's spike near it, a drag follows it.
        let Some(pos) = response.interact_pointer_pos() else {
            return;
        };
        let target = if response.clicked() {
            let track = ((pos.y - plot.top()) / track_h).floor().max(0.0) as usize;
            let from = step_of(plot, last, pos.x - SNAP_POINTS);
            let to = step_of(plot, last, pos.x + SNAP_POINTS);
            // The health track has no value at every step: its click lands where it is.
            Some(TRACKS.get(track).map_or_else(
                || step_of(plot, last, pos.x),
                |&metric| peak(steps, metric, from, to),
            ))
        } else if response.dragged() || response.drag_started() {
            Some(step_of(plot, last, pos.x))
        } else {
            None
        };
        if let Some(step) = target
            && step != at
        {
            out.push(Command::SeekTo(step));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_x_map_both_ways() {
        let rect = Rect::from_min_size(pos2(100.0, 0.0), vec2(200.0, 50.0));
        assert_eq!(x_of(rect, 100, 50), 200.0);
        assert_eq!(step_of(rect, 100, 200.0), 50);
        assert_eq!(step_of(rect, 100, 0.0), 0);
        assert_eq!(step_of(rect, 100, 1000.0), 100);
        assert_eq!(x_of(rect, 0, 0), 100.0);
    }

    #[test]
    fn a_peak_is_the_earliest_greatest_value_in_the_range() {
        let steps: Vec<StepRecord> = [3, 9, 1, 9, 4]
            .into_iter()
            .map(|n| StepRecord {
                reinserted: n,
                ..StepRecord::default()
            })
            .collect();
        assert_eq!(peak(&steps, Metric::Reinserts, 0, 4), 1);
        assert_eq!(peak(&steps, Metric::Reinserts, 2, 4), 3);
        assert_eq!(peak(&steps, Metric::Reinserts, 4, 4), 4);
        // Past the end: only the steps there are count.
        assert_eq!(peak(&steps, Metric::Reinserts, 4, 9), 4);
    }
}
