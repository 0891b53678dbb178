//! Compare mode's parts of the views (see `compare.rs`): the difference readout above the two
//! sides' views, and the controls that start and stop a comparison.

use eframe::egui;

use super::controls::tuning_sliders;
use crate::broadphase::BroadphaseKind;
use crate::commands::{Command, broadphase_name};
use crate::compare::CompareRun;
use crate::compare_model::Side;
use crate::state::State;

/// B's colour: its label here and its line on the timeline's tracks.
pub const B_COLOR: egui::Color32 = egui::Color32::from_rgb(235, 140, 40);

/// "a / b" with `digits` decimals.
fn both(a: f64, b: f64, digits: usize) -> String {
    format!("{a:.digits$} / {b:.digits$}")
}

/// The readout above the compared views: what A and B are, their difference at the step
/// shown and over the compared steps, and "Stop comparing".
pub fn header_ui(ui: &mut egui::Ui, state: &State, run: &CompareRun, out: &mut Vec<Command>) {
    let a = state.side_now();
    // Wrapped, not cut: at 1280 px with the engine's tree the line is longer than the window,
    // and what is cut ("draw the engine's tree", the totals) could not be reached.
    ui.horizontal_wrapped(|ui| {
        if ui
            .button("Stop comparing")
            .on_hover_text("Back to the document's run alone.")
            .clicked()
        {
            out.push(Command::StopCompare);
        }
        ui.strong("A (left):");
        ui.label(short(&a, &run.side)).on_hover_text(a.describe());
        ui.separator();
        ui.label(egui::RichText::new("B (right):").strong().color(B_COLOR));
        let has_tree = state
            .session
            .engine()
            .map(|e| &**e)
            .is_some_and(|e| e.summary.trees_valid > 0);
        if has_tree {
            let mut on = state.prefs.compare_b_engine_tree;
            if ui
                .checkbox(&mut on, "draw the engine's tree")
                .on_hover_text(
                    "B's views draw the engine's own tree (received with the stream) and A's \
                     ours, on the same steps.",
                )
                .changed()
            {
                out.push(Command::SetPref(
                    crate::prefs::PrefChange::CompareBEngineTree(on),
                ));
            }
        }
        let b_text = if has_tree && state.prefs.compare_b_engine_tree {
            "drawn: the engine's own tree; pairs: ".to_owned() + &short(&run.side, &a)
        } else {
            short(&run.side, &a)
        };
        ui.add(egui::Label::new(b_text).wrap())
            .on_hover_text(run.side.describe());
    });
    let at = state.session.sim().step_index();
    let text = match &run.here {
        Some(d) => {
            let cost = match d.cost {
                [Some(x), Some(y)] => format!(" · cost {}", both(x, y, 2)),
                _ => String::new(),
            };
            format!(
                "step {at}: pairs {} · only in A {} · only in B {} · reinserts {}{cost} · {} ms",
                both(d.pairs[0] as f64, d.pairs[1] as f64, 0),
                d.only_a.len(),
                d.only_b.len(),
                both(d.reinserts[0] as f64, d.reinserts[1] as f64, 0),
                both(d.ms[0], d.ms[1], 3),
            )
        }
        None if run.b.sim().step_index() == at => format!(
            "step {at}: before the comparison (it started at step {}): B has no run of its \
             own here",
            run.started_at
        ),
        None => format!(
            "step {at}: B is at step {} ({})",
            run.b.sim().step_index(),
            run.b_note
                .as_deref()
                .unwrap_or("it has not reached this step")
        ),
    };
    let t = run.totals();
    let since = match t.first_difference {
        Some(first) => format!(
            " · over {} steps from {}: {} differ (first at {first}), {} pairs only in A, {} only in B",
            t.steps, run.started_at, t.differing, t.only_a, t.only_b
        ),
        None if t.steps > 0 => format!(
            " · over {} steps from {}: the same pairs at every step",
            t.steps, run.started_at
        ),
        None => String::new(),
    };
    ui.add(egui::Label::new(format!("{text}{since}")).wrap())
        .on_hover_text(
            "Candidate pairs, A's / B's; pairs only one side reported; reinserts, the tree's \
             cost (area against the leaves') and the broad phase's time (update and pairs), \
             A's / B's. The timeline draws B's tracks over A's, in orange, and marks the steps \
             whose pairs differ at its foot.",
        );
}

/// A side in few words: its broad phase, margin and look-ahead, and the tree's methods only
/// where they differ from `other`'s.
#[must_use]
pub fn short(side: &Side, other: &Side) -> String {
    let c = &side.config;
    let mut text = format!(
        "{}, margin {}, look-ahead {} s",
        broadphase_name(side.kind),
        c.margin,
        c.velocity_lookahead
    );
    let o = &other.config;
    let methods = [
        (c.insertion.name(), o.insertion.name()),
        (c.balancing.name(), o.balancing.name()),
        (c.pairs.name(), o.pairs.name()),
        (c.update.name(), o.update.name()),
    ];
    for (mine, theirs) in methods {
        if side.kind == BroadphaseKind::Tree && mine != theirs {
            text.push_str(&format!(", {mine}"));
        }
    }
    text
}

/// The draft of B's settings, kept in egui's memory while the controls edit it.
fn draft_id(ui: &egui::Ui) -> egui::Id {
    ui.make_persistent_id("compare_draft")
}

/// The controls' "Compare" section: B's broad phase and margin, then "Compare with B" (from
/// the step shown) or "Stop comparing".
pub fn controls_ui(ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
    let id = draft_id(ui);
    let a = state.side_now();
    let mut draft: Side = ui
        .data(|d| d.get_temp::<Side>(id))
        .unwrap_or_else(|| default_b(&a));
    let dimensions = state.session.sim().dimensions();
    ui.label("B beside the document's run, on the same motion:");
    ui.horizontal_wrapped(|ui| {
        for kind in BroadphaseKind::ALL {
            let radio = egui::RadioButton::new(draft.kind == kind, broadphase_name(kind));
            if ui
                .add_enabled(kind.runs_in(dimensions), radio)
                .on_disabled_hover_text("Box2D's tree is 2D only: this scene is 3D.")
                .clicked()
            {
                draft.kind = kind;
            }
        }
    });
    tuning_sliders(ui, &mut draft.config);
    ui.horizontal(|ui| {
        let label = if state.compare.is_some() {
            "Compare again with B"
        } else {
            "Compare with B"
        };
        if ui
            .button(label)
            .on_hover_text(
                "B starts as the document's run at the step shown, with these settings; then \
                 both run in lockstep, side by side (A left, B right).",
            )
            .clicked()
        {
            out.push(Command::StartCompare(draft.clone()));
        }
        if state.compare.is_some() && ui.button("Stop").clicked() {
            out.push(Command::StopCompare);
        }
    });
    ui.data_mut(|d| d.insert_temp(id, draft));
}

/// B's first draft: A's settings with four times the margin (0.2 where A has none).
#[must_use]
pub fn default_b(a: &Side) -> Side {
    let mut b = a.clone();
    b.config.margin = if a.config.margin > 0.0 {
        a.config.margin * 4.0
    } else {
        0.2
    };
    b
}
