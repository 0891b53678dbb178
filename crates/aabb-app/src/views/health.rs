//! The tree's health in the window (see `app::health`): the readout of the statistics panel
//! (the live cost against a fresh best rebuild of the same leaves, the height against the
//! least height, a warning past the threshold with a Rebuild button, and the health settings)
//! and the timeline's track of the ratio.
//!
//! Both read the samples the model keeps (`Model::health`); the readout pushes
//! [`Command::Rebuild`] (after [`Command::SetTreeSettings`] when the cheapest fresh build is
//! another rebuild method's) and [`Command::SetPref`].

use eframe::egui;
use egui::{Color32, Pos2, Rect, RichText, Shape, Stroke, pos2};

use crate::broadphase::health::RebuildKind;
use crate::commands::Command;
use crate::health_monitor::{Health, HealthSample};
use crate::prefs::PrefChange;
use crate::state::State;
use crate::stream::engine::TreeSample;
use crate::tree::{RebuildMethod, TreeConfig};

/// The colour of the "degraded" warning (and of the threshold on the timeline).
pub const WARNING: Color32 = Color32::from_rgb(240, 120, 40);

/// The name of the timeline's track.
pub const TRACK_NAME: &str = "cost / fresh rebuild";

/// A cost with three significant digits (two decimals below 10).
fn cost_text(cost: f64) -> String {
    if cost >= 100.0 {
        format!("{cost:.0}")
    } else if cost >= 10.0 {
        format!("{cost:.1}")
    } else {
        format!("{cost:.2}")
    }
}

/// The readout's main line: "Cost 14.2 = 1.37 × a fresh rebuild (10.4) · height 19, least 17".
#[must_use]
pub fn readout_text(sample: &HealthSample) -> String {
    format!(
        "Cost {} = {:.2} × a fresh rebuild ({}) · height {}, least {}",
        cost_text(sample.live.cost),
        sample.ratio(),
        cost_text(sample.fresh.shape.cost),
        sample.live.height,
        sample.least_height()
    )
}

/// The warning past the threshold: "The tree has degraded: 1.62× a fresh rebuild".
#[must_use]
pub fn warning_text(sample: &HealthSample) -> String {
    format!(
        "The tree has degraded: {:.2}× a fresh rebuild",
        sample.ratio()
    )
}

/// The warning's button and its hover text. When the cheapest fresh build was made by
/// another rebuild method than the tree's (`configured`), a rebuild by the tree's own would
/// not make that tree (on the real level sets of `docs/quality.md` the binned-SAH build costs
/// up to 1.28 times the exact greedy one), so the button names that method: "Rebuild
/// (agglomerative)".
#[must_use]
pub fn rebuild_button_text(sample: &HealthSample, configured: RebuildMethod) -> (String, String) {
    let own = RebuildKind::of(configured);
    let best = sample.fresh.method;
    if best == own {
        (
            "Rebuild".to_owned(),
            format!("Rebuild the tree from scratch ({}).", own.name()),
        )
    } else {
        (
            format!("Rebuild ({})", best.name()),
            format!(
                "Set the rebuild method to {} (the cheapest of the fresh builds of these \
                 leaves) and rebuild the tree from scratch; the tree's own method is {}. \
                 Ctrl+Z sets the method back.",
                best.name(),
                own.name()
            ),
        )
    }
}

/// What the warning's button does: the tree's settings with the rebuild method of the
/// cheapest fresh build (when it is another), then a rebuild (see [`rebuild_button_text`]).
#[must_use]
pub fn rebuild_commands(sample: &HealthSample, settings: &TreeConfig) -> Vec<Command> {
    let method = sample.fresh.method.method();
    let mut commands = Vec::with_capacity(2);
    if method != settings.rebuild {
        commands.push(Command::SetTreeSettings(TreeConfig {
            rebuild: method,
            ..*settings
        }));
    }
    commands.push(Command::Rebuild);
    commands
}

/// The health readout (under the statistics' grid).
pub fn readout_ui(ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
    let health = &state.model.health;
    let step = state.session.sim().step_index();
    ui.label(RichText::new("Health").strong())
        .on_hover_text(format!(
            "The tree's cost (the SAH cost: its branches' surface areas, perimeters in 2D, summed \
         but the root's, over the root's) against the cost of the best fresh rebuild of the \
         same leaf boxes (binned SAH, agglomerative, and greedy up to {} leaves), built on a \
         worker thread every few steps; and its height against the least height its leaves \
         allow.",
            crate::broadphase::health::GREEDY_MAX_LEAVES
        ));
    if state.session.sim().broadphase().tree_view().is_none() {
        ui.weak("no tree (this broad phase keeps none)");
        return;
    }
    match health.at_or_before(step) {
        Some(sample) => {
            ui.label(readout_text(sample));
            let mut when = format!(
                "measured at step {} (fresh: {})",
                sample.step,
                sample.fresh.method.name()
            );
            if health.is_busy() {
                when.push_str(" · measuring…");
            }
            ui.weak(when).on_hover_text(format!(
                "Copying the {} leaf boxes for the worker took {:.2} ms on the UI thread.",
                sample.live.leaves,
                health.copy_ms()
            ));
            let threshold = state.prefs.health_threshold;
            if sample.ratio() > threshold {
                ui.horizontal_wrapped(|ui| {
                    ui.label(RichText::new(warning_text(sample)).color(WARNING).strong())
                        .on_hover_text(format!(
                            "Its cost is past {threshold:.2} times a fresh rebuild's (the \
                             threshold, in the health settings below). Queries and pair \
                             searches visit branches about in proportion to the cost, so they \
                             are that much slower than they need be: rebuild the tree, or use \
                             settings that keep it tighter (a smaller margin, rotations)."
                        ));
                    let (label, hover) =
                        rebuild_button_text(sample, state.session.doc().tree.rebuild);
                    if ui.button(label).on_hover_text(hover).clicked() {
                        out.extend(rebuild_commands(sample, &state.session.doc().tree));
                    }
                });
            }
        }
        None => {
            ui.weak("measuring…");
        }
    }
    if let Some(e) = health.error() {
        ui.colored_label(WARNING, format!("Health not measured: {e}"));
    }
    settings_ui(ui, state, out);
}

/// How often to measure and when to warn.
fn settings_ui(ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
    egui::CollapsingHeader::new("Health settings")
        .default_open(false)
        .show(ui, |ui| {
            let mut every = state.prefs.health_every;
            ui.horizontal(|ui| {
                let label = ui.label("Measure every");
                if ui
                    .add(egui::DragValue::new(&mut every).range(1..=100_000))
                    .labelled_by(label.id)
                    .on_hover_text(
                        "Steps between two measurements while playing (each builds a fresh \
                         tree on a worker thread); paused, every change is measured at once.",
                    )
                    .changed()
                {
                    out.push(Command::SetPref(PrefChange::HealthEvery(every)));
                }
                ui.label("steps");
            });
            let mut threshold = state.prefs.health_threshold;
            ui.horizontal(|ui| {
                let label = ui.label("Warn past");
                if ui
                    .add(
                        egui::DragValue::new(&mut threshold)
                            .range(1.0..=100.0)
                            .speed(0.01)
                            .max_decimals(2),
                    )
                    .labelled_by(label.id)
                    .on_hover_text(
                        "Warn when the tree's cost passes this many times a fresh rebuild's.",
                    )
                    .changed()
                {
                    out.push(Command::SetPref(PrefChange::HealthThreshold(threshold)));
                }
                ui.label("× a fresh rebuild");
            });
        });
}

/// What the timeline's track is drawn with.
pub struct TrackStyle<'a> {
    /// The line joining the samples.
    pub line: Color32,
    /// The name and value on the left.
    pub text: Color32,
    /// Where the name starts (x).
    pub name_left: f32,
    /// The warning threshold (drawn as a faint line when in range).
    pub threshold: f64,
    /// The engine's own tree's health by step (a received stream's), its ratio drawn over
    /// ours in `engine_line`; empty for none.
    pub engine: &'a [TreeSample],
    /// The engine's line.
    pub engine_line: Color32,
}

/// The engine's tree's cost against a fresh build at each sample that has one: (trace
/// step, ratio), what the timeline's health track draws beside ours.
pub fn engine_ratios(samples: &[TreeSample]) -> impl Iterator<Item = (u64, f64)> + '_ {
    samples
        .iter()
        .filter_map(|t| Some((t.index, t.health.ratio()?)))
}

/// The first step from which the engine's tree stays at or above `threshold` times a fresh
/// build to the end of what was received (its degradation), with the worst ratio after it;
/// `None` when its last sample is below.
#[must_use]
pub fn engine_degraded_since(
    ratios: impl IntoIterator<Item = (u64, f64)>,
    threshold: f64,
) -> Option<(u64, f64)> {
    let mut since: Option<(u64, f64)> = None;
    for (step, r) in ratios {
        since = if r < threshold {
            None
        } else {
            Some(since.map_or((step, r), |(from, worst)| (from, worst.max(r))))
        };
    }
    since
}

/// Draws the ratio track in `band`: one point per sample, at `x_of(step)`, joined; its name
/// and the value of the sample at or before `at` on the left. Returns the points drawn.
pub fn ratio_track(
    painter: &egui::Painter,
    band: Rect,
    x_of: impl Fn(u64) -> f32,
    health: &Health,
    at: u64,
    style: &TrackStyle<'_>,
) -> Vec<Pos2> {
    let track_h = band.height();
    if track_h >= 11.0 {
        let mut value = health
            .at_or_before(at)
            .map_or(String::new(), |s| format!("{:.2}", s.ratio()));
        let k = style.engine.partition_point(|t| t.index <= at);
        if let Some(r) = k
            .checked_sub(1)
            .and_then(|k| style.engine.get(k))
            .and_then(|t| t.health.ratio())
        {
            value.push_str(&format!(" · engine {r:.2}"));
        }
        painter.text(
            pos2(style.name_left + 4.0, band.center().y),
            egui::Align2::LEFT_CENTER,
            format!("{TRACK_NAME}  {value}"),
            egui::FontId::proportional(track_h.min(12.0) - 1.0),
            style.text,
        );
    }
    let samples = health.samples();
    // From 1 (as good as a fresh rebuild) or below, up to the greatest ratio (ours or the
    // engine's).
    let (lo, hi) = samples
        .values()
        .map(HealthSample::ratio)
        .chain(engine_ratios(style.engine).map(|(_, r)| r))
        .filter(|r| r.is_finite())
        .fold((1.0f64, f64::NEG_INFINITY), |(lo, hi), r| {
            (lo.min(r), hi.max(r))
        });
    if !hi.is_finite() {
        return Vec::new();
    }
    let span = hi - lo;
    let y_of = |v: f64| {
        let t = if span > 0.0 { (v - lo) / span } else { 0.5 };
        band.bottom() - 2.0 - t as f32 * (track_h - 4.0)
    };
    if style.threshold > lo && style.threshold < hi {
        let y = y_of(style.threshold);
        painter.line_segment(
            [pos2(band.left(), y), pos2(band.right(), y)],
            Stroke::new(0.5, WARNING.gamma_multiply(0.7)),
        );
    }
    let points: Vec<Pos2> = samples
        .values()
        .map(|s| pos2(x_of(s.step), y_of(s.ratio())))
        .collect();
    painter.add(Shape::line(points.clone(), Stroke::new(1.0, style.line)));
    for &p in &points {
        painter.circle_filled(p, 1.5, style.line);
    }
    let engine: Vec<Pos2> = engine_ratios(style.engine)
        .map(|(s, r)| pos2(x_of(s), y_of(r)))
        .collect();
    painter.add(Shape::line(engine, Stroke::new(1.0, style.engine_line)));
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::health::{FreshBuild, Shape as TreeShape};

    fn sample(cost: f64, fresh: f64) -> HealthSample {
        let shape = |cost, height| TreeShape {
            cost,
            height,
            leaves: 100_000,
        };
        HealthSample {
            step: 40,
            live: shape(cost, 19),
            fresh: FreshBuild {
                method: RebuildKind::BinnedSah,
                shape: shape(fresh, 17),
            },
        }
    }

    #[test]
    fn the_engines_tree_is_degraded_from_the_first_step_it_stays_above_the_threshold() {
        let r = [
            (0, 1.0),
            (10, 1.4),
            (20, 1.1),
            (30, 1.3),
            (40, 1.6),
            (50, 1.35),
        ];
        assert_eq!(engine_degraded_since(r, 1.25), Some((30, 1.6)));
        assert_eq!(engine_degraded_since(r, 1.5), None);
        assert_eq!(
            engine_degraded_since(r[..2].iter().copied(), 1.25),
            Some((10, 1.4))
        );
        assert_eq!(engine_degraded_since([(5, 2.0)], 1.25), Some((5, 2.0)));
        assert_eq!(engine_degraded_since([], 1.25), None);
    }

    #[test]
    fn the_button_rebuilds_by_the_method_of_the_cheapest_fresh_build() {
        let settings = TreeConfig::default();
        assert_eq!(settings.rebuild, RebuildMethod::BinnedSah);
        // The fresh build is the tree's own method's: a plain rebuild.
        let own = sample(14.25, 10.4);
        assert_eq!(
            rebuild_button_text(&own, settings.rebuild),
            (
                "Rebuild".to_owned(),
                "Rebuild the tree from scratch (binned SAH).".to_owned()
            )
        );
        assert_eq!(rebuild_commands(&own, &settings), vec![Command::Rebuild]);
        // Another method's: set it, then rebuild; every other setting kept.
        for (kind, method) in [
            (RebuildKind::Agglomerative, RebuildMethod::Agglomerative),
            (RebuildKind::Greedy, RebuildMethod::Greedy),
        ] {
            let mut other = own;
            other.fresh.method = kind;
            let (label, hover) = rebuild_button_text(&other, settings.rebuild);
            assert_eq!(label, format!("Rebuild ({})", kind.name()));
            assert!(hover.starts_with(&format!("Set the rebuild method to {}", kind.name())));
            assert!(
                hover.contains("the tree's own method is binned SAH."),
                "{hover}"
            );
            let settings = TreeConfig {
                margin: 0.3,
                ..settings
            };
            assert_eq!(
                rebuild_commands(&other, &settings),
                vec![
                    Command::SetTreeSettings(TreeConfig {
                        rebuild: method,
                        ..settings
                    }),
                    Command::Rebuild
                ]
            );
            // Once set, the button is a plain rebuild by it.
            let set = TreeConfig {
                rebuild: method,
                ..settings
            };
            assert_eq!(rebuild_button_text(&other, set.rebuild).0, "Rebuild");
            assert_eq!(rebuild_commands(&other, &set), vec![Command::Rebuild]);
        }
    }

    #[test]
    fn the_readout_and_the_warning_read_as_asked() {
        let s = sample(14.25, 10.4);
        assert_eq!(
            readout_text(&s),
            "Cost 14.2 = 1.37 × a fresh rebuild (10.4) · height 19, least 17"
        );
        assert_eq!(
            warning_text(&sample(16.848, 10.4)),
            "The tree has degraded: 1.62× a fresh rebuild"
        );
        assert_eq!(
            readout_text(&sample(123.4, 3.0)),
            "Cost 123 = 41.13 × a fresh rebuild (3.00) · height 19, least 17"
        );
    }
}
