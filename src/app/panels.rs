//! The window's layout: menu bar, controls (left), statistics (right), status line (bottom),
//! the world and tree views (centre), and the help, error, file and confirmation windows
//! (unsaved changes, replacing a read-only file).

use eframe::egui;

use super::camera::Plane;
use super::commands::{Command, broadphase_name};
use super::debugger::{DebuggerApp, Pick};
use super::files::{list_scenes, scenes_dir};
use super::prefs::{Layer, ThemeChoice, ViewMode};
use crate::broadphase::BroadphaseKind;
use crate::scene::Generate;
use crate::tree::{Balancing, InsertionCost, PairMethod, UpdateMode};
use egui::{Key, RichText};

/// The keyboard shortcuts, as listed in the help window.
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Space", "play / pause"),
    ("Right arrow or N", "one step"),
    ("R", "reset to step 0"),
    ("F or double-click", "fit the world and the tree"),
    ("Wheel", "zoom around the cursor"),
    ("Right or middle drag", "pan (left drag on empty space too)"),
    ("Click", "select a sphere, box or tree node"),
    (
        "Drag a sphere",
        "move it (the status line says what the tree did)",
    ),
    ("A", "add a sphere under the cursor"),
    (
        "Delete / Backspace",
        "delete the selected (or hovered) sphere",
    ),
    ("Right-click", "add / delete / select menu"),
    ("Esc", "clear the selection"),
    ("Ctrl+O", "open a scene"),
    ("Ctrl+S", "save"),
    ("Ctrl+Shift+S", "save as"),
    ("F1", "this help"),
];

fn insertion_name(c: InsertionCost) -> &'static str {
    match c {
        InsertionCost::Volume => "Volume (Choi)",
        InsertionCost::Perimeter => "Perimeter (greedy)",
        InsertionCost::SurfaceArea => "Surface area (Box2D v3)",
    }
}

fn balancing_name(b: Balancing) -> &'static str {
    match b {
        Balancing::None => "None",
        Balancing::Avl => "AVL rotations",
        Balancing::Rotations => "SAH rotations (Box2D v3)",
    }
}

fn pairs_name(p: PairMethod) -> &'static str {
    match p {
        PairMethod::SelfTraversal => "Self traversal",
        PairMethod::MovedQueries => "Moved queries + pair set (Box2D)",
        PairMethod::MovedTraversal => "Moved traversal + pair set",
    }
}

fn update_name(u: UpdateMode) -> &'static str {
    match u {
        UpdateMode::Reinsert => "Reinsert from the root (Box2D)",
        UpdateMode::LocalReinsert => "Reinsert nearby (Bullet)",
        UpdateMode::EnlargeAndRebuild => "Enlarge + partial rebuild (Box2D v3)",
    }
}

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

impl DebuggerApp {
    /// Every panel and window of one frame.
    pub(super) fn panels_ui(&mut self, ui: &mut egui::Ui) {
        egui::Panel::top("menu_bar").show(ui, |ui| self.menu_bar_ui(ui));
        egui::Panel::bottom("status_bar").show(ui, |ui| self.status_bar_ui(ui));
        if self.prefs.show_controls {
            egui::Panel::left("controls")
                .resizable(true)
                .default_size(240.0)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| self.controls_ui(ui));
                });
        }
        if self.prefs.show_stats {
            egui::Panel::right("statistics")
                .resizable(true)
                .default_size(285.0)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| self.stats_ui(ui));
                });
        }
        egui::CentralPanel::no_frame().show(ui, |ui| match self.prefs.view_mode {
            ViewMode::World => {
                self.view.tree_rect = None;
                self.world_view_ui(ui);
            }
            ViewMode::Tree => {
                self.view.world_rect = None;
                self.tree_view_ui(ui);
            }
            ViewMode::Both => {
                let width = ui.available_width();
                egui::Panel::right("tree_side")
                    .resizable(true)
                    .default_size((width * 0.38).max(200.0))
                    .frame(egui::Frame::NONE)
                    .show(ui, |ui| self.tree_view_ui(ui));
                egui::CentralPanel::no_frame().show(ui, |ui| self.world_view_ui(ui));
            }
        });
        self.windows_ui(ui.ctx());
    }

    fn menu_bar_ui(&mut self, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui
                    .add(egui::Button::new("Open…").shortcut_text("Ctrl+O"))
                    .clicked()
                {
                    self.commands.push(Command::OpenDialog);
                }
                if ui
                    .add(egui::Button::new("Save").shortcut_text("Ctrl+S"))
                    .clicked()
                {
                    self.commands.push(Command::Save);
                }
                if ui
                    .add(egui::Button::new("Save As…").shortcut_text("Ctrl+Shift+S"))
                    .clicked()
                {
                    self.commands.push(Command::SaveAsDialog);
                }
                ui.separator();
                if ui.button("Open the built-in scene").clicked() {
                    self.commands.push(Command::OpenBuiltin);
                }
                ui.separator();
                if ui.button("Quit").clicked() {
                    self.commands.push(Command::Quit);
                }
            });
            ui.menu_button("Scenes", |ui| {
                let files = scenes_dir().map(|d| list_scenes(&d)).unwrap_or_default();
                if files.is_empty() {
                    ui.weak("No scenes/ directory found");
                }
                for f in files {
                    let name = f
                        .file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                    if ui
                        .button(name)
                        .on_hover_text(f.display().to_string())
                        .clicked()
                    {
                        self.commands.push(Command::Open(f.clone()));
                    }
                }
                ui.separator();
                ui.label(RichText::new("Recent").strong());
                if self.prefs.recent_files.is_empty() {
                    ui.weak("none yet");
                }
                for f in self.prefs.recent_files.clone() {
                    if ui.button(f.display().to_string()).clicked() {
                        self.commands.push(Command::Open(f));
                    }
                }
            });
            ui.menu_button("View", |ui| {
                ui.radio_value(&mut self.prefs.view_mode, ViewMode::Both, "World and tree");
                ui.radio_value(&mut self.prefs.view_mode, ViewMode::World, "World only");
                ui.radio_value(&mut self.prefs.view_mode, ViewMode::Tree, "Tree only");
                ui.separator();
                ui.checkbox(&mut self.prefs.show_controls, "Controls panel");
                ui.checkbox(&mut self.prefs.show_stats, "Statistics panel");
                ui.checkbox(&mut self.prefs.show_events, "Tree event list");
                ui.separator();
                ui.radio_value(&mut self.prefs.theme, ThemeChoice::Dark, "Dark theme");
                ui.radio_value(&mut self.prefs.theme, ThemeChoice::Light, "Light theme");
                ui.separator();
                if ui
                    .add(egui::Button::new("Fit").shortcut_text("F"))
                    .clicked()
                {
                    self.commands.push(Command::Fit);
                }
            });
            ui.menu_button("Help", |ui| {
                if ui
                    .add(egui::Button::new("Keyboard and mouse").shortcut_text("F1"))
                    .clicked()
                {
                    self.commands.push(Command::ToggleHelp);
                }
                if ui.button("About").clicked() {
                    self.dialogs.about = true;
                }
            });
        });
    }

    fn status_bar_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let (icon, tip) = if self.model.playing {
                ("Pause", "Pause (Space)")
            } else {
                ("Play", "Play (Space)")
            };
            if ui.button(icon).on_hover_text(tip).clicked() {
                self.commands.push(Command::TogglePlay);
            }
            ui.label(format!("step {}", self.model.sim.step_index()));
            ui.separator();
            ui.label(&self.model.status);
        });
    }

    fn controls_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Simulation");
        ui.horizontal(|ui| {
            let label = if self.model.playing { "Pause" } else { "Play" };
            if ui.button(label).on_hover_text("Space").clicked() {
                self.commands.push(Command::TogglePlay);
            }
            if ui
                .button("Step")
                .on_hover_text("Right arrow or N")
                .clicked()
            {
                self.commands.push(Command::Step);
            }
            if ui
                .button("Reset")
                .on_hover_text("R: back to step 0")
                .clicked()
            {
                self.commands.push(Command::Reset);
            }
        });
        ui.add(
            egui::Slider::new(&mut self.prefs.speed, 0.05..=20.0)
                .logarithmic(true)
                .text("Speed (steps per frame)"),
        );
        let mut limit = self.model.pair_limit;
        let response = ui
            .add(
                egui::DragValue::new(&mut limit)
                    .range(1..=usize::MAX / 2)
                    .speed(10_000.0)
                    .prefix("Pair limit: "),
            )
            .on_hover_text(
                "The most candidate pairs a step may find. Past it the simulation pauses and \
                 keeps the scene, instead of filling memory.",
            );
        if response.changed() && limit != self.model.pair_limit {
            self.commands.push(Command::SetPairLimit(limit));
        }
        if let Some(message) = &self.model.stopped {
            ui.colored_label(egui::Color32::from_rgb(230, 80, 80), message);
        }

        ui.separator();
        ui.heading("Tree");
        let mut s = self.model.doc.tree;
        let mut changed = false;
        changed |= ui
            .add(
                egui::Slider::new(&mut s.margin, 0.0..=10.0)
                    .logarithmic(true)
                    .smallest_positive(0.001)
                    .text("Margin"),
            )
            .on_hover_text("Fat-box margin, world units, added on every side of a tight box.")
            .changed();
        changed |= ui
            .add(
                egui::Slider::new(&mut s.velocity_lookahead, 0.0..=5.0)
                    .logarithmic(true)
                    .smallest_positive(0.001)
                    .text("Look-ahead (s)"),
            )
            .on_hover_text("Seconds of predicted motion added to fat boxes along the velocity.")
            .changed();
        changed |= choice_combo(
            ui,
            "Insertion",
            &mut s.insertion,
            &InsertionCost::ALL,
            insertion_name,
        )
        .changed();
        changed |= choice_combo(
            ui,
            "Balancing",
            &mut s.balancing,
            &Balancing::ALL,
            balancing_name,
        )
        .changed();
        changed |= choice_combo(ui, "Pairs", &mut s.pairs, &PairMethod::ALL, pairs_name).changed();
        changed |= choice_combo(ui, "Update", &mut s.update, &UpdateMode::ALL, update_name)
            .on_hover_text("What a move out of the fat box does.")
            .changed();
        if changed {
            self.commands.push(Command::SetTreeSettings(s));
        }
        if ui
            .button("Rebuild the tree")
            .on_hover_text("Full rebuild with binned SAH.")
            .clicked()
        {
            self.commands.push(Command::Rebuild);
        }

        ui.separator();
        ui.heading("Broad phase");
        ui.horizontal_wrapped(|ui| {
            for kind in [
                BroadphaseKind::Tree,
                BroadphaseKind::Brute,
                BroadphaseKind::Sap,
            ] {
                if ui
                    .radio(self.model.kind == kind, broadphase_name(kind))
                    .clicked()
                    && self.model.kind != kind
                {
                    self.commands.push(Command::SetBroadphase(kind));
                }
            }
        });

        ui.separator();
        ui.heading("Generated spheres");
        self.generator_ui(ui);

        ui.separator();
        ui.heading("Layers");
        for layer in Layer::ALL {
            ui.checkbox(self.prefs.layers.get_mut(layer), layer.label());
        }
        let max_depth = self.snapshot.max_depth;
        ui.add(
            egui::Slider::new(&mut self.prefs.branch_depth_min, 0..=max_depth.max(1))
                .text("Branches from depth"),
        );
        ui.add(
            egui::Slider::new(&mut self.prefs.branch_depth_max, 0..=max_depth.max(1))
                .text("… to depth"),
        );
        if self.prefs.branch_depth_max < self.prefs.branch_depth_min {
            self.prefs.branch_depth_max = self.prefs.branch_depth_min;
        }
        if self.model.doc.dimensions == 3 {
            ui.horizontal(|ui| {
                ui.label("Projection plane");
                for plane in Plane::ALL {
                    if ui
                        .selectable_label(self.view.plane == plane, plane.name())
                        .clicked()
                    {
                        self.commands.push(Command::SetPlane(plane));
                    }
                }
            });
        }

        ui.separator();
        ui.heading("Tree view");
        ui.add(
            egui::Slider::new(&mut self.prefs.tree_collapse_depth, 1..=64)
                .text("Collapse below depth"),
        );
        if ui.button("Fit views").clicked() {
            self.commands.push(Command::Fit);
        }

        ui.separator();
        ui.heading("Selection");
        match self.view.selection {
            Some(Pick::Sphere(id)) => {
                ui.label(format!("Sphere {id}"));
                ui.horizontal(|ui| {
                    if ui.button("Delete").clicked() {
                        self.commands.push(Command::DeleteSphere(id));
                    }
                    if ui.button("Deselect").clicked() {
                        self.commands.push(Command::Select(None));
                    }
                });
            }
            Some(Pick::Node(n)) => {
                ui.label(format!("Branch node #{}", n.0));
                if ui.button("Deselect").clicked() {
                    self.commands.push(Command::Select(None));
                }
            }
            None => {
                ui.weak("Click a sphere, a box or a tree node.");
            }
        }
    }

    fn generator_ui(&mut self, ui: &mut egui::Ui) {
        let id = ui.make_persistent_id("generator_edit");
        let current = self.model.doc.generate;
        let mut g: Generate = ui
            .data(|d| d.get_temp::<GenerateEdit>(id))
            .filter(|e| e.base == current)
            .map_or_else(|| current.unwrap_or(DEFAULT_GENERATE), |e| e.edit);
        let mut apply = false;
        ui.add(
            egui::Slider::new(&mut g.count, 1..=200_000)
                .logarithmic(true)
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
                self.commands.push(Command::SetGenerator(None));
            }
        });
        if apply {
            self.commands.push(Command::SetGenerator(Some(g)));
            ui.data_mut(|d| d.remove::<GenerateEdit>(id));
        } else {
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
    }

    fn windows_ui(&mut self, ctx: &egui::Context) {
        if self.dialogs.help {
            let mut open = true;
            egui::Window::new("Help: keyboard and mouse")
                .open(&mut open)
                .resizable(false)
                .show(ctx, |ui| {
                    egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                        for (key, what) in SHORTCUTS {
                            ui.strong(*key);
                            ui.label(*what);
                            ui.end_row();
                        }
                    });
                    ui.separator();
                    ui.label("Colours: branch boxes green (darker deeper), leaf boxes blue, colliding spheres' boxes red, velocity yellow, selection and hover orange, last step's tree events magenta.");
                });
            if !open {
                self.dialogs.help = false;
            }
        }
        if self.dialogs.about {
            let mut open = true;
            egui::Window::new("About aabb-debugger")
                .open(&mut open)
                .resizable(false)
                .show(ctx, |ui| {
                    ui.label(format!("aabb-debugger {}", env!("CARGO_PKG_VERSION")));
                    ui.label("A visual debugger for dynamic AABB trees (the broad phase of collision detection).");
                });
            if !open {
                self.dialogs.about = false;
            }
        }
        if let Some(message) = self.model.error.clone() {
            egui::Window::new("Could not open or save")
                .collapsible(false)
                .resizable(true)
                .default_width(460.0)
                .show(ctx, |ui| {
                    ui.colored_label(egui::Color32::from_rgb(230, 80, 80), &message);
                    ui.weak("The scene that was open is unchanged.");
                    if ui.button("OK").clicked() || ui.input(|i| i.key_pressed(Key::Enter)) {
                        self.commands.push(Command::DismissError);
                    }
                });
        }
        if let Some(mut dialog) = self.dialogs.file.take() {
            let (cmd, open) = dialog.show(ctx);
            if let Some(cmd) = cmd {
                self.commands.push(cmd);
            }
            if open {
                self.dialogs.file = Some(dialog);
            }
        }
        if let Some(path) = self.dialogs.replace_read_only.clone() {
            let mut answer = None;
            let modal =
                egui::Modal::new(egui::Id::unique("confirm_replace_read_only")).show(ctx, |ui| {
                    ui.heading("Read-only file");
                    ui.label(format!("{} is read-only. Replace it?", path.display()));
                    ui.weak("Replace writes the scene and keeps the file read-only.");
                    ui.horizontal(|ui| {
                        if ui.button("Replace").clicked() {
                            answer = Some(Command::ReplaceReadOnly(path.clone()));
                        }
                        if ui.button("Cancel").clicked() {
                            answer = Some(Command::KeepReadOnly(path.clone()));
                        }
                    });
                });
            // Escape or a click outside is a Cancel.
            if answer.is_none() && modal.should_close() {
                answer = Some(Command::KeepReadOnly(path));
            }
            self.commands.extend(answer);
            // One question at a time: an "unsaved changes" question waits for this one.
            return;
        }
        if let Some(pending) = self.dialogs.confirm.clone() {
            if !self.model.dirty {
                // The changes were saved meanwhile ("Save, then continue" after a read-only
                // question): nothing is lost, so go on.
                self.dialogs.confirm = None;
                self.confirmed.push(pending);
                return;
            }
            let what = match &pending {
                Command::Quit => "quitting".to_owned(),
                Command::Open(p) => format!("opening {}", p.display()),
                _ => "opening another scene".to_owned(),
            };
            let modal = egui::Modal::new(egui::Id::unique("confirm_discard")).show(ctx, |ui| {
                ui.heading("Unsaved changes");
                ui.label(format!(
                    "{} has unsaved changes. Discard them before {what}?",
                    self.document_name()
                ));
                ui.horizontal(|ui| {
                    if self.model.path.is_some() && ui.button("Save, then continue").clicked() {
                        self.commands.push(Command::Save);
                        self.commands.push(pending.clone());
                        self.dialogs.confirm = None;
                    }
                    if ui.button("Discard changes").clicked() {
                        self.dialogs.confirm = None;
                        self.confirmed.push(pending.clone());
                    }
                    if ui.button("Cancel").clicked() {
                        self.dialogs.confirm = None;
                    }
                });
            });
            if modal.should_close() {
                self.dialogs.confirm = None;
            }
        }
    }
}

/// The generator a scene without one starts from.
const DEFAULT_GENERATE: Generate = Generate {
    count: 500,
    radius: (0.3, 1.0),
    speed: (0.0, 3.0),
    seed: 7,
};

/// The generator fields being edited, until applied.
#[derive(Clone, Copy, Debug)]
struct GenerateEdit {
    base: Option<Generate>,
    edit: Generate,
}
