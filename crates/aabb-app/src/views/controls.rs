//! The controls panel (left): simulation (play, step, reset, speed, pair limit), the tree's
//! settings, the broad phase, generated spheres, layers, the tree view's depth and the
//! selection.

use eframe::egui;

use super::View;
use crate::broadphase::BroadphaseKind;
use crate::camera::Plane;
use crate::commands::{Command, broadphase_name};
use crate::pick::Pick;
use crate::prefs::{Layer, PrefChange};
use crate::scene::Generate;
use crate::state::State;
use crate::tree::{Balancing, InsertionCost, PairMethod, RebuildMethod, UpdateMode};

/// The controls panel (it keeps nothing of its own; the generator's fields being edited are
/// in egui's memory).
#[derive(Default)]
pub struct Controls;

/// A combo box choosing `value` among `all`, each shown by `name`; its response says
/// `changed()` when a new value was picked.
fn choice_combo<T: Copy + PartialEq>(
    ui: &mut egui::Ui,
    label: &str,
    value: &mut T,
    all: &[T],
    name: fn(T) -> &'static str,
) -> egui::Response {
    let mut changed = false;
    let mut response = egui::ComboBox::from_label(label)
        .selected_text(name(*value))
        .show_ui(ui, |ui| {
            for &v in all {
                changed |= ui.selectable_value(value, v, name(v)).changed();
            }
        })
        .response;
    if changed {
        response.mark_changed();
    }
    response
}

impl View for Controls {
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        // Narrow sliders keep the panel narrow, and the world view wide.
        ui.spacing_mut().slider_width = 96.0;
        if state.shows_live() {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                "An engine is streaming: the views show its session, and these controls act \
                 on it once it ends. Space holds or follows the newest step.",
            );
        }
        ui.heading("Simulation");
        ui.horizontal(|ui| {
            let label = if state.model.playing { "Pause" } else { "Play" };
            if ui.button(label).on_hover_text("Space").clicked() {
                out.push(Command::TogglePlay);
            }
            if ui
                .button("Step")
                .on_hover_text("Right arrow or N")
                .clicked()
            {
                out.push(Command::Step);
            }
            if ui
                .button("Reset")
                .on_hover_text("R: back to step 0")
                .clicked()
            {
                out.push(Command::Reset);
            }
        });
        let mut speed = state.prefs.speed;
        if ui
            .add(
                egui::Slider::new(&mut speed, 0.05..=20.0)
                    .logarithmic(true)
                    .text("Speed"),
            )
            .on_hover_text("Steps per displayed frame (1/60 s).")
            .changed()
        {
            out.push(Command::SetPref(PrefChange::Speed(speed)));
        }
        let mut limit = state.session.sim().pair_limit();
        let response = ui
            .add(
                egui::DragValue::new(&mut limit)
                    .range(1..=crate::broadphase::MAX_PAIR_LIMIT)
                    .speed(10_000.0)
                    .prefix("Pair limit: "),
            )
            .on_hover_text(
                "The most candidate pairs a step may find. Past it the simulation pauses and \
                 keeps the scene, instead of filling memory.",
            );
        if response.changed() && limit != state.session.sim().pair_limit() {
            out.push(Command::SetPairLimit(limit));
        }
        if let Some(message) = &state.model.stopped {
            ui.colored_label(egui::Color32::from_rgb(230, 80, 80), message);
        }

        ui.separator();
        ui.heading("Tree");
        let mut s = state.session.doc().tree;
        let mut changed = tuning_sliders(ui, &mut s);
        changed |= choice_combo(
            ui,
            "Insertion",
            &mut s.insertion,
            &InsertionCost::ALL,
            InsertionCost::label,
        )
        .changed();
        changed |= choice_combo(
            ui,
            "Balancing",
            &mut s.balancing,
            &Balancing::ALL,
            Balancing::label,
        )
        .changed();
        changed |= choice_combo(
            ui,
            "Pairs",
            &mut s.pairs,
            &PairMethod::ALL,
            PairMethod::label,
        )
        .changed();
        changed |= choice_combo(
            ui,
            "Update",
            &mut s.update,
            &UpdateMode::ALL,
            UpdateMode::label,
        )
        .on_hover_text("What a move out of the fat box does.")
        .changed();
        if changed {
            out.push(Command::SetTreeSettings(s));
        }
        ui.horizontal(|ui| {
            if ui
                .button("Rebuild the tree")
                .on_hover_text("Full rebuild by the rebuild method chosen under Options…")
                .clicked()
            {
                out.push(Command::Rebuild);
            }
            if ui
                .button("Advise…")
                .on_hover_text(
                    "Open the Advisor: run this scene at many margins and look-ahead values \
                     and pick the cheapest.",
                )
                .clicked()
            {
                out.push(Command::ShowAdvisor(true));
            }
            // The rebuild method and the optimization share, in a menu so that the panel
            // keeps its height.
            let mut more = s;
            ui.menu_button("Options…", |ui| {
                ui.label("Rebuild method");
                for method in RebuildMethod::ALL {
                    ui.radio_value(&mut more.rebuild, method, method.label());
                }
                ui.add(
                    egui::DragValue::new(&mut more.optimize_share)
                        .range(0.0..=1.0)
                        .speed(0.0001)
                        .fixed_decimals(4)
                        .prefix("Optimize share "),
                )
                .on_hover_text(
                    "Incremental optimization (Bittner et al. 2013): after each step that \
                     changed the tree, this share of the leaves, as branches of the worst \
                     inefficiency, is taken out and reinserted by the exact SAH search. 0 \
                     turns it off; 0.0005 (a twentieth of a percent) is the default. With \
                     volume insertion set 0: the pass places by the SAH, against the volume \
                     descent, and the tree grows costlier.",
                );
            })
            .response
            .on_hover_text(
                "The rebuild method (binned SAH or agglomerative PLOC) and the incremental \
                 optimization's share of the leaves a step.",
            );
            if more != s {
                out.push(Command::SetTreeSettings(more));
            }
        });

        ui.separator();
        ui.heading("Broad phase");
        ui.horizontal_wrapped(|ui| {
            let dimensions = state.session.sim().dimensions();
            for kind in BroadphaseKind::ALL {
                // Box2D's tree is 2D: offered in 3D too, greyed, saying why.
                let radio = egui::RadioButton::new(
                    state.session.sim().broadphase_kind() == kind,
                    broadphase_name(kind),
                );
                let clicked = ui
                    .add_enabled(kind.runs_in(dimensions), radio)
                    .on_disabled_hover_text("Box2D's tree is 2D only: this scene is 3D.")
                    .clicked();
                if clicked && state.session.sim().broadphase_kind() != kind {
                    out.push(Command::SetBroadphase(kind));
                }
            }
        });

        ui.separator();
        ui.heading("Generated spheres");
        // A trace's boxes come from its file: the generator is off, and says why.
        let why = format!("{}.", crate::source::TRACE_HAS_NO_SPHERES);
        ui.add_enabled_ui(!state.session.sim().is_trace(), |ui| {
            generator_ui(ui, state, out);
        })
        .response
        .on_disabled_hover_text(&why);

        ui.separator();
        ui.heading("Layers");
        for layer in Layer::ALL {
            let mut on = state.prefs.layers.get(layer);
            if ui.checkbox(&mut on, layer.label()).changed() {
                out.push(Command::SetPref(PrefChange::Layer(layer, on)));
            }
        }
        let mut pad = state.prefs.pad_parents;
        if ui
            .checkbox(&mut pad, "Space nested boxes apart")
            .on_hover_text(
                "Draws each branch box a few points outside its children, so a box that \
                 shares an edge with its parent stays visible (the boxes themselves are \
                 unchanged: hover one for its exact extent).",
            )
            .changed()
        {
            out.push(Command::SetPref(PrefChange::PadParents(pad)));
        }
        branch_depths_ui(ui, state, out);
        if state.session.doc().dimensions == 3 {
            ui.horizontal(|ui| {
                ui.label("Projection plane");
                let world_3d = state.view.world_3d;
                for plane in Plane::ALL {
                    if ui
                        .selectable_label(!world_3d && state.view.plane == plane, plane.name())
                        .clicked()
                    {
                        out.push(Command::SetPlane(plane));
                        out.push(Command::SetWorld3d(false));
                    }
                }
                if ui
                    .selectable_label(world_3d, "3D")
                    .on_hover_text(
                        "A perspective view: drag to orbit, right-drag to pan, wheel to zoom",
                    )
                    .clicked()
                {
                    out.push(Command::SetWorld3d(true));
                }
            });
        }

        ui.separator();
        ui.heading("Tree view");
        let mut collapse = state.prefs.tree_collapse_depth;
        if ui
            .add(egui::Slider::new(&mut collapse, 1..=64).text("Collapse below depth"))
            .changed()
        {
            out.push(Command::SetPref(PrefChange::TreeCollapseDepth(collapse)));
        }
        if ui.button("Fit views").clicked() {
            out.push(Command::Fit);
        }

        ui.separator();
        ui.heading("Selection");
        match state.view.selection {
            Some(Pick::Sphere(id)) => {
                let trace = state.session.sim().is_trace();
                ui.label(format!("{} {id}", if trace { "Box" } else { "Sphere" }));
                ui.horizontal(|ui| {
                    let why = format!("{}.", crate::source::TRACE_HAS_NO_SPHERES);
                    if ui
                        .add_enabled(!trace, egui::Button::new("Delete"))
                        .on_disabled_hover_text(&why)
                        .clicked()
                    {
                        out.push(Command::DeleteSphere(id));
                    }
                    if ui.button("Deselect").clicked() {
                        out.push(Command::Select(None));
                    }
                });
            }
            Some(Pick::Node(n)) => {
                ui.label(format!("Branch node #{}", n.0));
                if ui.button("Deselect").clicked() {
                    out.push(Command::Select(None));
                }
            }
            None => {
                ui.weak("Click a sphere, a box or a tree node.");
            }
        }

        ui.separator();
        ui.collapsing("Compare", |ui| super::compare::controls_ui(ui, state, out))
            .header_response
            .on_hover_text("Run a second broad phase, or other settings, beside this one.");
    }
}

/// The generator's fields, edited in egui's memory until applied.
/// The two sliders the margin is tuned with, the fattening margin and the velocity
/// look-ahead, changing `settings`; true when one moved. The controls panel and the compact
/// tuning strip (when the panel does not fit the window) both show them.
pub fn tuning_sliders(ui: &mut egui::Ui, settings: &mut crate::tree::TreeConfig) -> bool {
    let mut changed = ui
        .add(
            egui::Slider::new(&mut settings.margin, 0.0..=10.0)
                .logarithmic(true)
                .smallest_positive(0.001)
                .text("Margin"),
        )
        .on_hover_text("Fat-box margin, world units, added on every side of a tight box.")
        .changed();
    changed |= ui
        .add(
            egui::Slider::new(&mut settings.velocity_lookahead, 0.0..=5.0)
                .logarithmic(true)
                .smallest_positive(0.001)
                .text("Look-ahead (s)"),
        )
        .on_hover_text("Seconds of predicted motion added to fat boxes along the velocity.")
        .changed();
    changed
}

fn generator_ui(ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
    let id = ui.make_persistent_id("generator_edit");
    let current = state.session.doc().generate;
    let mut g: Generate = ui
        .data(|d| d.get_temp::<GenerateEdit>(id))
        .filter(|e| e.base == current)
        .map_or_else(
            || state.generator_made_with().unwrap_or(DEFAULT_GENERATE),
            |e| e.edit,
        );
    let mut apply = false;
    ui.add(
        egui::Slider::new(&mut g.count, 1..=crate::scene::MAX_SPHERES as u32)
            .logarithmic(true)
            .clamping(egui::SliderClamping::Edits)
            .text("Count"),
    );
    ui.horizontal(|ui| {
        ui.add(egui::DragValue::new(&mut g.seed).prefix("seed "));
        if ui
            .button("New seed")
            .on_hover_text("Another seed")
            .clicked()
        {
            g.seed = g
                .seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407)
                >> 1;
        }
    });
    ui.horizontal(|ui| {
        let mut grow = g.density.is_some();
        let check = ui.checkbox(&mut grow, "Density").on_hover_text(
            "Grow the world with the count so the spheres fill this share of it (they \
                 stay a scene, not a solid blob). Off: the world stays as it is.",
        );
        let mut density = g.density.unwrap_or(DEFAULT_DENSITY);
        ui.add_enabled(
            grow,
            egui::DragValue::new(&mut density)
                .range(0.001..=1.0)
                .speed(0.002)
                .max_decimals(3),
        )
        .labelled_by(check.id);
        g.density = grow.then_some(density);
    });
    let mut max_speed = g.speed.1;
    if ui
        .add(egui::Slider::new(&mut max_speed, 0.0..=50.0).text("Max speed"))
        .changed()
    {
        g.speed = (g.speed.0.min(max_speed), max_speed);
    }
    ui.horizontal(|ui| {
        let label = if current.is_some() {
            "Apply (restarts)"
        } else {
            "Add generated spheres"
        };
        apply = ui.button(label).clicked();
        if current.is_some() && ui.button("Remove").clicked() {
            out.push(Command::SetGenerator(None));
        }
    });
    if apply {
        out.push(Command::SetGenerator(Some(g)));
    }
    // The fields keep what was typed until the generator changes: applied, they show what
    // it was made with; refused, what the user typed, to be corrected.
    ui.data_mut(|d| {
        d.insert_temp(
            id,
            GenerateEdit {
                base: current,
                edit: g,
            },
        )
    });
}

/// The generator a scene without one starts from.
const DEFAULT_GENERATE: Generate = Generate {
    count: 500,
    radius: (0.3, 1.0),
    speed: (0.0, 3.0),
    seed: 7,
    density: Some(DEFAULT_DENSITY),
};

/// The density the generator starts with: a tenth of the world filled, a scene one can see
/// into at any count.
const DEFAULT_DENSITY: f32 = 0.1;

/// The generator fields being edited, until applied.
#[derive(Clone, Copy, Debug)]
struct GenerateEdit {
    base: Option<Generate>,
    edit: Generate,
}

/// The range of branch depths the world view draws. The sliders span the present tree's
/// depths and show the preference clipped to them; only a move of a slider by the user
/// changes the preference (never the clipping, so a shallow tree, an empty scene or another
/// broad phase leaves it as it was), and "… to depth" at the deepest level means "to the
/// bottom", whatever tree comes next.
fn branch_depths_ui(ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
    let deepest = state.snapshot.max_depth;
    let (pref_min, pref_max) = (state.prefs.branch_depth_min, state.prefs.branch_depth_max);
    ui.add_enabled_ui(deepest > 0, |ui| {
        let mut min = pref_min.min(deepest);
        let mut max = pref_max.min(deepest);
        let moved_min = ui
            .add(egui::Slider::new(&mut min, 0..=deepest.max(1)).text("Branches from depth"))
            .changed();
        let moved_max = ui
            .add(egui::Slider::new(&mut max, 0..=deepest.max(1)).text("… to depth"))
            .changed();
        if moved_min || moved_max {
            let change = branch_depth_change(min, max, deepest, moved_min);
            out.push(Command::SetPref(change));
        }
    })
    .response
    .on_disabled_hover_text("The tree has no branches to choose from.");
}

/// The preference a slider move gives: `max` at the deepest level is "to the bottom"
/// (`u32::MAX`); the slider not moved gives way to the one moved.
fn branch_depth_change(min: u32, max: u32, deepest: u32, moved_min: bool) -> PrefChange {
    let (min, max) = if moved_min {
        (min, max.max(min))
    } else {
        (min.min(max), max)
    };
    let max = if max >= deepest { u32::MAX } else { max };
    PrefChange::BranchDepths { min, max }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deepest_level_means_to_the_bottom_and_the_moved_slider_wins() {
        let change = |min, max, moved_min| branch_depth_change(min, max, 5, moved_min);
        assert_eq!(
            change(0, 5, false),
            PrefChange::BranchDepths {
                min: 0,
                max: u32::MAX
            }
        );
        assert_eq!(
            change(0, 3, false),
            PrefChange::BranchDepths { min: 0, max: 3 }
        );
        assert_eq!(
            change(4, 3, true),
            PrefChange::BranchDepths { min: 4, max: 4 }
        );
        assert_eq!(
            change(4, 2, false),
            PrefChange::BranchDepths { min: 2, max: 2 }
        );
        assert_eq!(
            change(5, 1, true),
            PrefChange::BranchDepths {
                min: 5,
                max: u32::MAX
            }
        );
    }
}
