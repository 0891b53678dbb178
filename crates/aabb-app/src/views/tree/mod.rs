//! The tree view: the current tree as a node-link diagram (root at the top, branches green,
//! leaves blue with their labels) or as an icicle (one row per depth, each node as wide as its
//! leaves), with folding of subtrees, pan and zoom, fit and focus, hover and selection shared
//! with the world view, and the tree's events of the last step.
//!
//! The diagram's camera, layout and folding are the view's own: the state only asks for a fit
//! (`tree_fit_request`), and holds the layout choice and the folding depth as preferences.
//!
//! Folding: a branch at the preferred depth or deeper is folded into one node standing for its
//! leaves, unless opened; any branch folds or opens by a click on its ± marker (or a
//! double-click on it). Branches are known across steps by their [`FoldKey`] (the tree reuses
//! node ids), and the folding starts over when another scene is opened or the depth changes.
//!
//! Changes since the previous step (the toolbar's toggle): nodes added and refit are ringed
//! in their colours, the removed ones crossed out where their spheres meet now and listed,
//! with the counts in a header; see [`diff`] for
//! what "the same node" is across steps. It follows the step shown: playing, stepping, or a
//! past step of the timeline (the previous step rebuilt from the recording and kept).

pub mod diagram;
pub mod diff;

pub use diff::{Change, Changes, DiffCache, TreeDiff};

pub use diagram::{FoldKey, Folding, LayoutItem, TreeLayout, letters};

use eframe::egui;

use crate::broadphase::BroadphaseKind;
use crate::camera::TreeCamera;
use crate::commands::{Command, broadphase_name};
use crate::mesh::{MeshBuilder, MeshPool, TREE_MESH, paint_alone};
use crate::palette::Palette;
use crate::pane::Pane;
use crate::pick::Pick;
use crate::prefs::{PrefChange, TREE_DEPTH_ALL, TreeLayoutKind};
use crate::snapshot::Snapshot;
use crate::tree::{NodeId, ProxyId, TreeEvent};
use egui::{Align2, Color32, FontId, Key, Modifiers, PointerButton, Pos2, Rect, Sense, vec2};
use std::time::Instant;

/// A text drawn in the diagram last frame: a node's label, a branch's name or a folded
/// branch's leaf count (`+N`).
#[derive(Clone, Debug, PartialEq)]
pub struct DrawnLabel {
    /// The node it belongs to.
    pub node: NodeId,
    /// The text.
    pub text: String,
    /// Its centre on screen.
    pub pos: Pos2,
}

/// A fold/open marker drawn last frame.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Toggle {
    /// Where it reacts to clicks.
    rect: Rect,
    /// The branch.
    node: NodeId,
    key: FoldKey,
    depth: u32,
    folded: bool,
}

/// The side of a fold marker, points.
const TOGGLE_SIZE: f32 = 10.0;

/// What a layout was computed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LayoutKey {
    rev: u64,
    folding: u64,
    kind: TreeLayoutKind,
    names: bool,
}

/// The tree view's own state: its camera, folding, the diagram's layout, where it was drawn,
/// what it drew, and its buffers.
#[derive(Default)]
pub struct TreeView {
    /// The diagram's camera.
    camera: TreeCamera,
    /// The fit request of the state last fitted for, the layout fitted, and the diagram's
    /// size and extent (width, levels) then.
    fitted: Option<(u64, TreeLayoutKind, egui::Vec2, (f32, u32))>,
    /// The camera was moved (pan, zoom, focus) since the last fit; until then a change of the
    /// diagram's size fits again.
    moved: bool,
    /// The diagram's layout (cached per change).
    layout: TreeLayout,
    /// What the layout was computed for.
    layout_key: Option<LayoutKey>,
    /// Which branches are folded.
    folding: Folding,
    /// Bumped on every change of `folding`.
    folding_rev: u64,
    /// The document and depth preference the folding was started for.
    folding_for: Option<(u64, u32)>,
    /// The depth of "Collapse to depth".
    collapse_to: u32,
    /// Centre and zoom on the selection at the next frame.
    focus_pending: bool,
    /// Where the diagram was drawn last frame (`None` when it was not).
    rect: Option<Rect>,
    /// Texts drawn last frame.
    labels: Vec<DrawnLabel>,
    /// Fold markers drawn last frame.
    toggles: Vec<Toggle>,
    /// Per depth level, the screen x of the last thing drawn (level of detail).
    last_at_level: Vec<(f32, f32)>,
    /// Per drawn item: an event of the last step names it.
    marked: Vec<bool>,
    /// The layout `marked` was worked out for (a step of a big scene has a million events:
    /// they are mapped once, not every frame).
    marked_for: Option<LayoutKey>,
    /// The mesh buffers, kept from frame to frame.
    meshes: MeshPool,
    /// Show what changed since the previous step.
    show_changes: bool,
    /// The changes, computed once per change of the simulation.
    diff: DiffCache,
    /// Per drawn item: how it (or a node its folded branch hides) changed (scratch).
    changed: Vec<Option<Change>>,
    /// Per drawn item: a removed node's ghost stands on it (scratch).
    ghosts: Vec<bool>,
}

/// The least height (points) of the tree view below its toolbar that also shows the event list.
const EVENTS_MIN_VIEW_HEIGHT: f32 = 420.0;

impl TreeView {
    /// The tree view with its toolbar and event list, filling `ui`.
    pub fn ui(&mut self, ui: &mut egui::Ui, state: Pane<'_>, out: &mut Vec<Command>) {
        if state.snapshot.nodes.is_empty() {
            let why = if state.sim.broadphase_kind() != BroadphaseKind::Tree
                && state.sim.broadphase_kind() != BroadphaseKind::Box2d
            {
                format!(
                    "No tree: the broad phase is {}. Pick the tree under Broad phase.",
                    broadphase_name(state.sim.broadphase_kind())
                )
            } else {
                "The tree is empty: the scene has no spheres yet. Add one with A over the \
                 world, or add generated spheres."
                    .to_owned()
            };
            ui.centered_and_justified(|ui| ui.weak(why));
            self.hide();
            return;
        }
        egui::Panel::top("tree_toolbar").show(ui, |ui| self.toolbar_ui(ui, state, out));
        if self.show_changes {
            self.diff.update(state);
            egui::Panel::top("tree_changes").show(ui, |ui| self.changes_ui(ui));
        }
        // In a short view the diagram keeps the room: the event list steps aside.
        if state.prefs.show_events && ui.available_height() >= EVENTS_MIN_VIEW_HEIGHT {
            egui::Panel::bottom("tree_events")
                .resizable(true)
                .default_size(110.0)
                .show(ui, |ui| events_ui(ui, state, out));
        }
        egui::CentralPanel::no_frame().show(ui, |ui| self.diagram_ui(ui, state, out));
    }
}

impl TreeView {
    /// What changed since the previous step, when the view shows it (the toolbar's toggle).
    #[must_use]
    pub fn changes(&self) -> Option<&Changes> {
        self.show_changes.then(|| self.diff.changes()).flatten()
    }

    /// How many previous steps the changes rebuilt from the recording so far (the rest came
    /// from its cache).
    #[must_use]
    pub fn changes_rebuilt(&self) -> u64 {
        self.diff.rebuilt()
    }

    /// The legend, the counts and the removed nodes.
    fn changes_ui(&self, ui: &mut egui::Ui) {
        let pal = Palette::for_dark_mode(ui.visuals().dark_mode);
        let Some(changes) = self.diff.changes() else {
            return;
        };
        ui.horizontal_wrapped(|ui| {
            ui.spacing_mut().item_spacing.x = 6.0;
            for (color, name, tip) in [
                (
                    pal.diff_added,
                    "added",
                    "Ringed: a node over spheres no node covered at the previous step",
                ),
                (
                    pal.diff_removed,
                    "removed",
                    "A node of the previous step whose spheres no node covers now: a cross on \
                     the node where its spheres meet now, and listed below",
                ),
                (
                    pal.diff_refit,
                    "refit",
                    "Ringed: a node over the same spheres as at the previous step, with \
                     another box",
                ),
            ] {
                // A painted swatch: the default fonts have no square glyph.
                let (swatch, _) = ui.allocate_exact_size(vec2(10.0, 10.0), Sense::hover());
                ui.painter().rect_filled(swatch, 2.0, color);
                ui.label(egui::RichText::new(name).color(color))
                    .on_hover_text(tip);
            }
            ui.separator();
            match &changes.diff {
                Ok(_) => ui.strong(changes.header()),
                Err(e) => ui.colored_label(ui.visuals().warn_fg_color, e),
            };
        });
        if let Ok(d) = &changes.diff
            && !d.removed.is_empty()
        {
            egui::CollapsingHeader::new(
                egui::RichText::new(format!("{} removed nodes", d.removed.len()))
                    .color(pal.diff_removed),
            )
            .id_salt("tree_removed")
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .max_height(90.0)
                    .show(ui, |ui| {
                        for r in d.removed.iter().take(REMOVED_LIST_LIMIT) {
                            ui.label(r.describe());
                        }
                        if d.removed.len() > REMOVED_LIST_LIMIT {
                            ui.weak(format!(
                                "… and {} more",
                                d.removed.len() - REMOVED_LIST_LIMIT
                            ));
                        }
                    });
            });
        }
    }

    /// Where the diagram was drawn last frame, if it was.
    #[must_use]
    pub fn rect(&self) -> Option<Rect> {
        self.rect
    }

    /// Notes that the view is not shown this frame.
    pub fn hide(&mut self) {
        self.rect = None;
        self.labels.clear();
        self.toggles.clear();
    }

    /// Where the diagram was drawn last frame.
    #[must_use]
    pub fn diagram_rect(&self) -> Option<Rect> {
        self.rect
    }

    /// The layout drawn last frame.
    #[must_use]
    pub fn layout(&self) -> &TreeLayout {
        &self.layout
    }

    /// The texts drawn last frame (labels that fit, branch names, folded leaf counts).
    #[must_use]
    pub fn labels(&self) -> &[DrawnLabel] {
        &self.labels
    }

    /// Where a tree node was drawn last frame (`None` when it was not: folded away, or the
    /// view is hidden).
    #[must_use]
    pub fn node_screen_pos(&self, snapshot: &Snapshot, node: NodeId) -> Option<Pos2> {
        let viewport = self.rect?;
        let index = snapshot.node_index(node)?;
        let pos = self.layout.position_of(index)?;
        Some(self.camera.screen_from_layout(viewport, pos))
    }

    /// The centre of a branch's fold marker drawn last frame.
    #[must_use]
    pub fn toggle_screen_pos(&self, node: NodeId) -> Option<Pos2> {
        self.toggles
            .iter()
            .find(|t| t.node == node)
            .map(|t| t.rect.center())
    }

    /// Starts the folding over at the depth preference `pref`.
    fn restart_folding(&mut self, document: u64, pref: u32) {
        self.folding = Folding::to_depth(Folding::depth_of_pref(pref));
        self.folding_for = Some((document, pref));
        self.folding_rev += 1;
    }

    /// The toolbar: fit, focus, expand and collapse, and the layout.
    fn toolbar_ui(&mut self, ui: &mut egui::Ui, state: Pane<'_>, out: &mut Vec<Command>) {
        if self.collapse_to == 0 {
            self.collapse_to = 3;
        }
        ui.horizontal_wrapped(|ui| {
            // Compact: a narrow tree view keeps its rows for the diagram.
            ui.spacing_mut().button_padding = egui::vec2(4.0, 1.0);
            ui.spacing_mut().item_spacing.x = 4.0;
            if ui
                .button("Fit")
                .on_hover_text("F or double-click")
                .clicked()
            {
                out.push(Command::Fit);
            }
            if ui
                .add_enabled(state.view.selection.is_some(), egui::Button::new("Focus"))
                .on_hover_text("C: centre and zoom on the selection, opening its folded branches")
                .clicked()
            {
                self.focus_pending = true;
            }
            ui.separator();
            let document = state.session.id();
            if ui.button("Expand all").clicked() {
                self.restart_folding(document, TREE_DEPTH_ALL);
                out.push(Command::SetPref(PrefChange::TreeCollapseDepth(
                    TREE_DEPTH_ALL,
                )));
            }
            let collapse = ui.button("Collapse to depth");
            if collapse.clicked() {
                self.restart_folding(document, self.collapse_to);
                out.push(Command::SetPref(PrefChange::TreeCollapseDepth(
                    self.collapse_to,
                )));
            }
            ui.add(egui::DragValue::new(&mut self.collapse_to).range(1..=TREE_DEPTH_ALL - 1))
                .labelled_by(collapse.id);
            ui.separator();
            // Short: a narrow tree view keeps its toolbar on one or two rows.
            ui.toggle_value(&mut self.show_changes, CHANGES_TOGGLE)
                .on_hover_text(
                    "Changes since the previous step: ring the nodes added and refit and list \
                     the removed ones (a node is known by the spheres below it)",
                );
            ui.separator();
            for (kind, name, tip) in [
                (
                    TreeLayoutKind::NodeLink,
                    "Node-link",
                    "Dots linked to their parents",
                ),
                (
                    TreeLayoutKind::Icicle,
                    "Icicle",
                    "One row per depth, each node as wide as its leaves: for thousands of leaves",
                ),
            ] {
                if ui
                    .selectable_label(state.prefs.tree_layout == kind, name)
                    .on_hover_text(tip)
                    .clicked()
                {
                    out.push(Command::SetPref(PrefChange::TreeLayout(kind)));
                }
            }
        });
    }

    /// Lays the tree out again when the tree, the folding or the layout choice changed.
    fn update_layout(&mut self, state: Pane<'_>) {
        let key = LayoutKey {
            rev: state.snapshot.serial,
            folding: self.folding_rev,
            kind: state.prefs.tree_layout,
            names: branch_letters(state),
        };
        if self.layout_key != Some(key) {
            self.layout
                .recompute(state.snapshot, &self.folding, key.kind, key.names);
            self.layout_key = Some(key);
        }
    }

    /// Opens every folded ancestor of snapshot node `node` (and the node itself, when
    /// `itself`). Returns true when something opened.
    fn open_path(&mut self, snap: &Snapshot, node: usize, itself: bool) -> bool {
        let mut changed = false;
        let mut at = if itself {
            Some(node)
        } else {
            snap.nodes.get(node).and_then(|n| n.parent)
        };
        while let Some(i) = at {
            let n = &snap.nodes[i];
            if let Some(key) = self.layout.key_of(i)
                && n.children.is_some()
                && self.folding.is_folded(key, n.depth)
            {
                self.folding.set(key, n.depth, false);
                changed = true;
            }
            at = n.parent;
        }
        if changed {
            self.folding_rev += 1;
        }
        changed
    }

    /// Folds or opens the branch at snapshot index `node`.
    fn toggle_node(&mut self, snap: &Snapshot, node: usize) {
        let Some(n) = snap.nodes.get(node) else {
            return;
        };
        if n.children.is_none() {
            return;
        }
        if let Some(key) = self.layout.key_of(node) {
            let folded = self.folding.is_folded(key, n.depth);
            self.folding.set(key, n.depth, !folded);
            self.folding_rev += 1;
        }
    }

    /// The drawn item under a screen point: the nearest node within reach in the node-link
    /// diagram, the cell under it in the icicle.
    fn item_at(&self, viewport: Rect, radius: f32, p: Pos2) -> Option<usize> {
        let cam = &self.camera;
        if self.layout.kind == TreeLayoutKind::Icicle {
            let q = cam.layout_from_screen(viewport, p).to_pos2();
            return self
                .layout
                .items
                .iter()
                .position(|it| it.cell().contains(q));
        }
        let mut best: Option<(f32, usize)> = None;
        for (k, item) in self.layout.items.iter().enumerate() {
            let d = (cam.screen_from_layout(viewport, item.pos) - p).length();
            if d <= radius + 4.0 && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, k));
            }
        }
        best.map(|(_, k)| k)
    }

    /// The pick of a drawn item.
    fn pick_of(&self, snap: &Snapshot, k: usize) -> Option<Pick> {
        let n = snap.nodes.get(self.layout.items.get(k)?.node)?;
        Some(n.sphere.map_or(Pick::Node(n.id), Pick::Sphere))
    }

    /// The diagram, filling `ui`.
    fn diagram_ui(&mut self, ui: &mut egui::Ui, state: Pane<'_>, out: &mut Vec<Command>) {
        let (response, painter) = ui.allocate_painter(ui.available_size(), Sense::click_and_drag());
        let viewport = response.rect;
        self.rect = Some(viewport);
        let started = Instant::now();
        let snap = &state.snapshot;
        let pref = state.prefs.tree_collapse_depth;
        let document = state.session.id();
        if self.folding_for != Some((document, pref)) {
            self.restart_folding(document, pref);
        }
        self.update_layout(state);
        let radius = node_radius(&self.camera);

        // Input: fold markers and double-clicks fold, other clicks select; C focuses.
        let mut clicked_toggle = false;
        if state.view.interactive {
            if let Some(pos) = response.hover_pos() {
                let (scroll, zoom) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
                let factor = zoom * (scroll * 0.0025).exp();
                if (factor - 1.0).abs() > 1e-4 {
                    self.camera.zoom_around(viewport, pos, factor);
                    self.moved = true;
                }
            }
            if response.dragged_by(PointerButton::Primary)
                || response.dragged_by(PointerButton::Secondary)
                || response.dragged_by(PointerButton::Middle)
            {
                self.camera.offset += response.drag_delta();
                self.moved = true;
            }
            let press = response.interact_pointer_pos();
            if response.clicked()
                && let Some(t) =
                    press.and_then(|p| self.toggles.iter().find(|t| t.rect.contains(p)))
            {
                let t = *t;
                self.folding.set(t.key, t.depth, !t.folded);
                self.folding_rev += 1;
                clicked_toggle = true;
            } else if response.double_clicked() {
                let branch = press
                    .and_then(|p| self.item_at(viewport, radius, p))
                    .map(|k| self.layout.items[k].node)
                    .filter(|&i| snap.nodes[i].children.is_some());
                match branch {
                    Some(i) => self.toggle_node(snap, i),
                    None => out.push(Command::Fit),
                }
            }
            let dialogs = &state.dialogs;
            if !ui.ctx().egui_wants_keyboard_input()
                && dialogs.file.is_none()
                && dialogs.confirm.is_none()
                && ui.input_mut(|i| i.consume_key(Modifiers::NONE, Key::C))
            {
                self.focus_pending = true;
            }
        }
        let selected = selected_node(snap, state.view.selection);
        if self.focus_pending {
            self.focus_pending = false;
            if let Some(i) = selected {
                self.open_path(snap, i, false);
                self.update_layout(state);
                if let Some(k) = self.layout.item_of(i) {
                    let extent = self.layout.subtree_extent(k);
                    self.camera.fit_span(viewport, extent.min, extent.max);
                    self.camera
                        .center_on(viewport, self.layout.items[k].pos.to_pos2());
                    self.moved = true;
                }
            }
        }
        self.update_layout(state);
        self.mark_changes(snap);
        let kind = self.layout.kind;
        let size = viewport.size();
        // The diagram's extent: a tree that grows (a trace or a live engine adding bodies)
        // or shrinks is fitted again, as a resized view is, while the user has not moved the
        // camera since the last fit.
        let extent = (self.layout.width, self.layout.levels);
        let stale = match self.fitted {
            Some((request, fitted_kind, fitted_size, fitted_extent)) => {
                (request, fitted_kind) != (state.view.tree_fit_request, kind)
                    || (!self.moved
                        && ((fitted_size - size).length() > 0.5 || fitted_extent != extent))
            }
            None => true,
        };
        if stale && viewport.width() > 10.0 && viewport.height() > 10.0 {
            let (w, levels) = (self.layout.width, self.layout.levels as f32);
            let (min, max) = match kind {
                TreeLayoutKind::NodeLink => (Pos2::ZERO, egui::pos2(w - 1.0, levels - 1.0)),
                TreeLayoutKind::Icicle => {
                    (egui::pos2(-0.5, -0.5), egui::pos2(w - 0.5, levels - 0.5))
                }
            };
            self.camera.fit_span(viewport, min, max);
            self.fitted = Some((state.view.tree_fit_request, kind, size, extent));
            self.moved = false;
        }
        let radius = node_radius(&self.camera);

        if state.view.interactive {
            let hovered = response.hover_pos().and_then(|p| {
                let on_toggle = self.toggles.iter().any(|t| t.rect.contains(p));
                (!on_toggle)
                    .then(|| self.item_at(viewport, radius, p))
                    .flatten()
            });
            if response.hover_pos().is_some() {
                out.push(Command::Hover(hovered.and_then(|k| self.pick_of(snap, k))));
            }
            if response.clicked() && !clicked_toggle {
                let pick = response
                    .interact_pointer_pos()
                    .and_then(|p| self.item_at(viewport, radius, p))
                    .and_then(|k| self.pick_of(snap, k));
                out.push(Command::Select(pick));
            }
            if let Some(k) = hovered {
                let text = self.describe_item(state, k);
                response.clone().on_hover_ui_at_pointer(|ui| {
                    ui.label(text);
                });
            }
        }

        // Drawing.
        let dark = ui.visuals().dark_mode;
        let pal = Palette::for_dark_mode(dark);
        painter.rect_filled(viewport, 0.0, pal.background);
        let mut m = self.meshes.builder(TREE_MESH);
        m.limit_ink(viewport);
        self.labels.clear();
        self.toggles.clear();
        match kind {
            TreeLayoutKind::NodeLink => {
                self.draw_node_link(&mut m, &painter, viewport, state, &pal)
            }
            TreeLayoutKind::Icicle => self.draw_icicle(&mut m, &painter, viewport, state, &pal),
        }
        self.draw_marks(&mut m, viewport, state, &pal);
        let text_color = if dark { Color32::WHITE } else { Color32::BLACK };
        let toggle_fill = ui.visuals().widgets.inactive.bg_fill;
        for t in &self.toggles {
            let r = Rect::from_center_size(t.rect.center(), vec2(TOGGLE_SIZE, TOGGLE_SIZE));
            m.rect_filled(r, toggle_fill);
            m.rect_outline(r, 1.0, pal.link);
            let c = r.center();
            m.line(c - vec2(3.0, 0.0), c + vec2(3.0, 0.0), 1.5, text_color);
            if t.folded {
                m.line(c - vec2(0.0, 3.0), c + vec2(0.0, 3.0), 1.5, text_color);
            }
        }
        let skipped = m.skipped();
        if let Some(shape) = self.meshes.finish(m) {
            paint_alone(&painter, shape);
        }
        for label in &self.labels {
            painter.text(
                label.pos,
                Align2::CENTER_CENTER,
                &label.text,
                label_font(label.text.starts_with('+')),
                text_color,
            );
        }
        let folded_from = match Folding::depth_of_pref(state.prefs.tree_collapse_depth) {
            u32::MAX => "nothing folded by depth".to_owned(),
            d => format!("folded from depth {d}"),
        };
        painter.text(
            viewport.left_top() + vec2(6.0, 4.0),
            Align2::LEFT_TOP,
            format!(
                "{} nodes · {} drawn · {folded_from}{}",
                snap.nodes.len(),
                self.layout.items.len(),
                crate::views::world::skipped_note(skipped)
            ),
            FontId::proportional(11.0),
            ui.visuals().weak_text_color(),
        );
        out.push(Command::AddDrawTime(started.elapsed().as_secs_f32() * 1e3));
    }

    /// The label of item `k`'s node when the scene names it: a leaf's sphere label (else its
    /// id), a branch's letter when the scene asks for letters.
    fn name_of(&self, snap: &Snapshot, k: usize) -> Option<String> {
        let i = self.layout.items.get(k)?.node;
        match snap.nodes.get(i)?.sphere {
            Some(id) => Some(
                snap.sphere(id)
                    .and_then(|s| s.label.clone())
                    .unwrap_or_else(|| id.to_string()),
            ),
            None => self.layout.branch_name(i),
        }
    }

    /// The hover tooltip of item `k`.
    fn describe_item(&self, state: Pane<'_>, k: usize) -> String {
        let text = self.describe_node(state, k);
        match self.changed.get(k).copied().flatten() {
            Some(Change::Added) => format!("{text}\nadded since the previous step"),
            Some(Change::Refit) => format!("{text}\nrefit since the previous step"),
            None => text,
        }
    }

    /// How each drawn item changed since the previous step (a folded branch: the nodes it
    /// hides, added before refit); nothing when the changes are not shown.
    fn mark_changes(&mut self, snap: &Snapshot) {
        let changed = &mut self.changed;
        changed.clear();
        self.ghosts.clear();
        if !self.show_changes {
            return;
        }
        let Some(Ok(d)) = self.diff.changes().map(|c| &c.diff) else {
            return;
        };
        changed.resize(self.layout.items.len(), None);
        self.ghosts.resize(self.layout.items.len(), false);
        for id in d.removed.iter().filter_map(|r| r.ghost_at) {
            if let Some(k) = snap.node_index(id).and_then(|i| self.layout.item_for(i)) {
                self.ghosts[k] = true;
            }
        }
        for (c, ids) in [(Change::Refit, &d.refit), (Change::Added, &d.added)] {
            for &id in ids {
                if let Some(k) = snap.node_index(id).and_then(|i| self.layout.item_for(i)) {
                    changed[k] = Some(c);
                }
            }
        }
    }

    /// The tooltip of item `k` without its change.
    fn describe_node(&self, state: Pane<'_>, k: usize) -> String {
        let snap = &state.snapshot;
        let item = self.layout.items[k];
        let n = &snap.nodes[item.node];
        let r = &n.rect;
        let boxed = format!(
            "box ({:.2}, {:.2}) to ({:.2}, {:.2})",
            r.min.x, r.min.y, r.max.x, r.max.y
        );
        match n.sphere {
            Some(id) => {
                let label = self
                    .name_of(snap, k)
                    .filter(|l| *l != id.to_string())
                    .map(|l| format!(" “{l}”"))
                    .unwrap_or_default();
                format!(
                    "Leaf: {}{label}\nnode #{}, depth {}\n{boxed}",
                    snap.body_name(id),
                    n.id.0,
                    n.depth
                )
            }
            None => {
                let name = self
                    .layout
                    .branch_name(item.node)
                    .map(|b| format!(" {b}"))
                    .unwrap_or_default();
                let state_line = if item.hidden_leaves > 0 {
                    "folded: click + or double-click to open"
                } else {
                    "click − or double-click to fold"
                };
                format!(
                    "Branch{name}: node #{}, depth {}, height {}\n{} leaves below\n{boxed}\n{state_line}",
                    n.id.0,
                    n.depth,
                    n.height,
                    self.layout.leaves_below(item.node)
                )
            }
        }
    }

    /// Adds a label for item `k` at `pos` when it is at most `room` points wide.
    fn push_label(
        &mut self,
        painter: &egui::Painter,
        snap: &Snapshot,
        k: usize,
        text: String,
        pos: Pos2,
        room: f32,
    ) {
        let summary = text.starts_with('+');
        let width = painter
            .layout_no_wrap(text.clone(), label_font(summary), Color32::WHITE)
            .size()
            .x;
        if width + 2.0 <= room {
            let node = snap.nodes[self.layout.items[k].node].id;
            self.labels.push(DrawnLabel { node, text, pos });
        }
    }

    /// Adds the fold marker of branch item `k`, centred at `center`.
    fn push_toggle(&mut self, snap: &Snapshot, k: usize, center: Pos2) {
        let item = self.layout.items[k];
        let n = &snap.nodes[item.node];
        if let Some(key) = self.layout.key_of(item.node) {
            self.toggles.push(Toggle {
                rect: Rect::from_center_size(center, vec2(TOGGLE_SIZE + 2.0, TOGGLE_SIZE + 2.0)),
                node: n.id,
                key,
                depth: n.depth,
                folded: item.hidden_leaves > 0,
            });
        }
    }

    /// The node-link diagram: links, then nodes, labels and fold markers where they fit.
    ///
    /// Level of detail: the items of one depth come left to right, so an item less than a
    /// dot's radius beside the last one drawn at its depth would be mostly drawn over: it is
    /// left out (a link, when both its ends are within a point of the last link's). A tree
    /// of 10,000 leaves fully expanded in a panel 800 points wide draws a few thousand dots
    /// this way and looks the same.
    fn draw_node_link(
        &mut self,
        m: &mut MeshBuilder,
        painter: &egui::Painter,
        viewport: Rect,
        state: Pane<'_>,
        pal: &Palette,
    ) {
        let snap = &state.snapshot;
        let cam = self.camera;
        let radius = node_radius(&cam);
        let visible = viewport.expand(radius + 2.0);
        let height = snap.max_depth.max(1);
        let levels = self.layout.levels as usize + 1;
        self.last_at_level.clear();
        self.last_at_level
            .resize(levels, (f32::NEG_INFINITY, f32::NEG_INFINITY));
        for item in &self.layout.items {
            if let Some(parent) = item.parent {
                let p = cam.screen_from_layout(viewport, item.pos);
                let q = cam.screen_from_layout(viewport, self.layout.items[parent].pos);
                let last = &mut self.last_at_level[(item.pos.y as usize).min(levels - 1)];
                if (p.x - last.0).abs() < 1.0 && (q.x - last.1).abs() < 1.0 {
                    continue;
                }
                if visible.intersects(Rect::from_two_pos(p, q)) {
                    m.line(q, p, 1.0, pal.link);
                    *last = (p.x, q.x);
                }
            }
        }
        self.last_at_level.fill((f32::NEG_INFINITY, 0.0));
        // Labels are looked at only when a slot can hold one.
        let labels = cam.scale.x >= 8.0 && radius >= 5.0;
        let toggles = radius >= 5.0 && cam.scale.y >= 2.0 * radius + TOGGLE_SIZE + 6.0;
        for k in 0..self.layout.items.len() {
            let item = self.layout.items[k];
            let p = cam.screen_from_layout(viewport, item.pos);
            if !visible.contains(p) {
                continue;
            }
            let last = &mut self.last_at_level[(item.pos.y as usize).min(levels - 1)].0;
            if (p.x - *last).abs() < radius.max(1.0) {
                continue;
            }
            *last = p.x;
            let node = &snap.nodes[item.node];
            let branch_color = pal.branch(node.depth, height);
            if node.sphere.is_some() {
                m.circle_filled(p, radius, pal.leaf);
            } else if item.hidden_leaves > 0 {
                m.circle_outline(p, radius, 2.0, branch_color);
            } else {
                m.circle_filled(p, radius, branch_color);
            }
            if node.children.is_some() && toggles {
                self.push_toggle(snap, k, p + vec2(0.0, radius + 3.0 + 0.5 * TOGGLE_SIZE));
            }
            if !labels {
                continue;
            }
            if let Some(name) = self.name_of(snap, k) {
                self.push_label(painter, snap, k, name, p, cam.scale.x);
            }
            if item.hidden_leaves > 0 {
                let below = if toggles {
                    radius + TOGGLE_SIZE + 12.0
                } else {
                    radius + 7.0
                };
                let text = format!("+{}", item.hidden_leaves);
                self.push_label(painter, snap, k, text, p + vec2(0.0, below), cam.scale.x);
            }
        }
    }

    /// The icicle: one row per depth, each node a cell as wide as its leaves, coloured as the
    /// world's boxes (branches green by depth, leaves blue); labels and fold markers where
    /// the cell holds them.
    ///
    /// Level of detail: the cells of one row come left to right; a cell ending within the
    /// last point drawn in its row is left out, and thinner cells are drawn one point wide.
    fn draw_icicle(
        &mut self,
        m: &mut MeshBuilder,
        painter: &egui::Painter,
        viewport: Rect,
        state: Pane<'_>,
        pal: &Palette,
    ) {
        let snap = &state.snapshot;
        let cam = self.camera;
        let height = snap.max_depth.max(1);
        let levels = self.layout.levels as usize + 1;
        self.last_at_level.clear();
        self.last_at_level.resize(levels, (f32::NEG_INFINITY, 0.0));
        let gap = if cam.scale.y >= 8.0 { 1.0 } else { 0.0 };
        for k in 0..self.layout.items.len() {
            let item = self.layout.items[k];
            let r = cam.screen_rect_from_layout(viewport, item.cell());
            if !viewport.intersects(r) {
                continue;
            }
            let last = &mut self.last_at_level[(item.pos.y as usize).min(levels - 1)].0;
            if r.right() < *last + 1.0 {
                continue;
            }
            let left = r.left().max(*last);
            let cell = Rect::from_min_max(
                egui::pos2(left, r.top()),
                egui::pos2(r.right().max(left + 1.0), r.bottom() - gap),
            );
            *last = cell.right();
            let node = &snap.nodes[item.node];
            let color = if node.sphere.is_some() {
                pal.leaf
            } else {
                pal.branch(node.depth, height)
            };
            // A point between cells wide enough to spare it.
            let side = if cell.width() >= 4.0 { 0.5 * gap } else { 0.0 };
            m.rect_filled(cell.shrink2(vec2(side, 0.0)), color);
            if item.hidden_leaves > 0 && cell.height() >= 6.0 {
                // A folded branch: a bar under it in the leaves' colour.
                let bar = Rect::from_min_max(
                    egui::pos2(cell.left(), cell.bottom() - 3.0),
                    cell.right_bottom(),
                );
                m.rect_filled(bar, pal.leaf);
            }
            let room = cell.width() - 4.0;
            let tall = cell.height() >= 14.0;
            if !tall || room < 6.0 {
                continue;
            }
            let mut x = cell.left() + 2.0;
            if node.children.is_some() && room >= TOGGLE_SIZE + 4.0 {
                let c = egui::pos2(x + 0.5 * TOGGLE_SIZE + 1.0, cell.center().y);
                self.push_toggle(snap, k, c);
                x += TOGGLE_SIZE + 4.0;
            }
            let room = cell.right() - 2.0 - x;
            let text = match (self.name_of(snap, k), item.hidden_leaves) {
                (Some(name), 0) => name,
                (Some(name), n) => format!("{name} +{n}"),
                (None, 0) => continue,
                (None, n) => format!("+{n}"),
            };
            let center = egui::pos2(x + 0.5 * room, cell.center().y);
            self.push_label(painter, snap, k, text, center, room);
        }
    }

    /// The last step's events, then hover and selection with the path up to the root.
    ///
    /// Level of detail for the events: each drawn item is marked once, left to right per
    /// depth, and not within a dot's radius of the last mark at its depth (the first step of
    /// a big scene inserts every leaf); in the icicle only cells wide enough to show a mark.
    fn draw_marks(&mut self, m: &mut MeshBuilder, viewport: Rect, state: Pane<'_>, pal: &Palette) {
        let snap = &state.snapshot;
        if self.marked_for != self.layout_key || self.marked.len() != self.layout.items.len() {
            let marked = &mut self.marked;
            marked.clear();
            marked.resize(self.layout.items.len(), false);
            for event in &state.sim.report().events {
                if let Some(k) = event_node(snap, event).and_then(|i| self.layout.item_for(i)) {
                    marked[k] = true;
                }
            }
            self.marked_for = self.layout_key;
        }
        let marked = &self.marked;
        let layout = &self.layout;
        let cam = self.camera;
        let radius = node_radius(&cam);
        let icicle = layout.kind == TreeLayoutKind::Icicle;
        let visible = viewport.expand(radius + 2.0);
        let mark = |m: &mut MeshBuilder, k: usize, grow: f32, width: f32, color: Color32| {
            let item = &layout.items[k];
            if icicle {
                let r = cam.screen_rect_from_layout(viewport, item.cell());
                if viewport.intersects(r) {
                    m.rect_outline(r.expand(grow - 2.0), width, color);
                }
            } else {
                let p = cam.screen_from_layout(viewport, item.pos);
                if visible.contains(p) {
                    m.circle_outline(p, radius + grow, width, color);
                }
            }
        };
        let levels = layout.levels as usize + 1;
        let changed = &self.changed;
        self.last_at_level.clear();
        self.last_at_level
            .resize(levels, (f32::NEG_INFINITY, f32::NEG_INFINITY));
        for (k, item) in layout.items.iter().enumerate() {
            let Some(c) = changed.get(k).copied().flatten() else {
                continue;
            };
            let r = cam.screen_rect_from_layout(viewport, item.cell());
            let last = &mut self.last_at_level[(item.pos.y as usize).min(levels - 1)].0;
            let apart = if icicle { 4.0 } else { radius.max(1.0) };
            if (icicle && r.width() < apart) || (r.center().x - *last).abs() < apart {
                continue;
            }
            *last = r.center().x;
            let color = match c {
                Change::Added => pal.diff_added,
                Change::Refit => pal.diff_refit,
            };
            mark(m, k, 5.5, 2.0, color);
        }
        // Removed nodes: a cross at the upper left of the node where their spheres meet now.
        for (k, item) in layout.items.iter().enumerate() {
            if !self.ghosts.get(k).copied().unwrap_or(false) {
                continue;
            }
            let at = if icicle {
                let r = cam.screen_rect_from_layout(viewport, item.cell());
                if !viewport.intersects(r) || r.width() < 12.0 {
                    continue;
                }
                r.left_top() + vec2(6.0, 6.0)
            } else {
                let p = cam.screen_from_layout(viewport, item.pos);
                if !visible.contains(p) {
                    continue;
                }
                p - vec2(radius + 5.0, radius + 5.0)
            };
            let arm = 4.5;
            m.line(
                at - vec2(arm, arm),
                at + vec2(arm, arm),
                2.5,
                pal.diff_removed,
            );
            m.line(
                at + vec2(-arm, arm),
                at + vec2(arm, -arm),
                2.5,
                pal.diff_removed,
            );
        }
        self.last_at_level.clear();
        self.last_at_level
            .resize(levels, (f32::NEG_INFINITY, f32::NEG_INFINITY));
        for (k, item) in layout.items.iter().enumerate() {
            if !marked[k] {
                continue;
            }
            let r = cam.screen_rect_from_layout(viewport, item.cell());
            let last = &mut self.last_at_level[(item.pos.y as usize).min(levels - 1)].0;
            let apart = if icicle { 6.0 } else { radius.max(1.0) };
            if (icicle && r.width() < apart) || (r.center().x - *last).abs() < apart {
                continue;
            }
            *last = r.center().x;
            mark(m, k, 3.0, 1.75, pal.event);
        }
        for pick in [state.view.selection, state.view.hover] {
            let Some(mut k) = selected_node(snap, pick).and_then(|i| layout.item_for(i)) else {
                continue;
            };
            mark(m, k, 2.5, 2.5, pal.highlight);
            while let Some(parent) = layout.items[k].parent {
                if icicle {
                    mark(m, parent, 1.5, 1.0, pal.highlight);
                } else {
                    let a = cam.screen_from_layout(viewport, layout.items[k].pos);
                    let b = cam.screen_from_layout(viewport, layout.items[parent].pos);
                    m.line(a, b, 2.5, pal.highlight);
                }
                k = parent;
            }
        }
    }
}

/// The radius of a node-link dot at this zoom.
fn node_radius(cam: &TreeCamera) -> f32 {
    (cam.scale.x * 0.38)
        .min(cam.scale.y * 0.28)
        .clamp(1.5, 13.0)
}

/// The font of labels (`summary`: a folded branch's `+N`).
fn label_font(summary: bool) -> FontId {
    FontId::proportional(if summary { 10.0 } else { 12.0 })
}

/// The snapshot index of the node a pick names.
fn selected_node(snap: &Snapshot, pick: Option<Pick>) -> Option<usize> {
    match pick? {
        Pick::Sphere(id) => snap.sphere(id).and_then(|s| s.node),
        Pick::Node(n) => snap.node_index(n),
    }
}

/// True when the open scene asks for branch letters.
fn branch_letters(state: Pane<'_>) -> bool {
    state
        .session
        .doc()
        .view
        .as_ref()
        .and_then(|v| v.branch_letters)
        .unwrap_or(false)
}

/// One line of the event list.
fn describe_event(snap: &Snapshot, event: &TreeEvent) -> String {
    let sphere = |p: &ProxyId| match snap.proxy_sphere(*p) {
        Some(id) => snap.body_name(id),
        None => format!("proxy {}", p.index),
    };
    match event {
        TreeEvent::Insert(p) => format!("inserted {}", sphere(p)),
        TreeEvent::Remove(p) => format!("removed {}", sphere(p)),
        TreeEvent::Reinsert(p) => format!("reinserted {}", sphere(p)),
        TreeEvent::Rotate { node } => format!("rotated below node #{}", node.0),
        TreeEvent::Rebuild { partial: true } => "rebuilt the enlarged part".to_owned(),
        TreeEvent::Rebuild { partial: false } => "rebuilt the whole tree".to_owned(),
    }
}

/// Sphere ids for a one-line label: all of a few, the count of many (the first step of a
/// scene of 100,000 spheres made a label of half a megabyte).
fn id_list(ids: &[u32]) -> String {
    const SHOWN: usize = 12;
    let head: Vec<String> = ids.iter().take(SHOWN).map(u32::to_string).collect();
    let more = ids.len().saturating_sub(SHOWN);
    if more == 0 {
        head.join(", ")
    } else {
        format!("{} … (+{more})", head.join(", "))
    }
}

/// What appeared and disappeared in a step, in words: "2 appeared (4, 7); 1 disappeared (3)".
fn appeared_text(appeared: &[u32], disappeared: &[u32]) -> String {
    let part = |ids: &[u32], what: &str| {
        (!ids.is_empty()).then(|| format!("{} {what} ({})", ids.len(), id_list(ids)))
    };
    [part(appeared, "appeared"), part(disappeared, "disappeared")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("; ")
}

/// The snapshot node an event points at, if it is still in the tree.
fn event_node(snap: &Snapshot, event: &TreeEvent) -> Option<usize> {
    match event {
        TreeEvent::Insert(p) | TreeEvent::Reinsert(p) => snap.proxy_node(*p),
        TreeEvent::Rotate { node } => snap.node_index(*node),
        TreeEvent::Remove(_) | TreeEvent::Rebuild { .. } => None,
    }
}

/// The toolbar's toggle of the changes since the previous step.
pub const CHANGES_TOGGLE: &str = "Changes";

/// At most this many removed nodes are listed.
const REMOVED_LIST_LIMIT: usize = 1000;

/// At most this many events are listed.
const EVENT_LIST_LIMIT: usize = 100_000;

/// The tree's events of the last step, under the diagram.
fn events_ui(ui: &mut egui::Ui, state: Pane<'_>, out: &mut Vec<Command>) {
    let events = &state.sim.report().events;
    ui.horizontal(|ui| {
        ui.strong(format!("Tree events of the last step: {}", events.len()));
        let r = state.sim.report();
        if !r.appeared.is_empty() || !r.disappeared.is_empty() {
            ui.weak(format!(
                "· spheres {}",
                appeared_text(&r.appeared, &r.disappeared)
            ));
        }
    });
    let mut select = None;
    let mut hover = None;
    // Only the rows in sight are laid out: a step of a big scene has thousands of events.
    let row_height = ui.text_style_height(&egui::TextStyle::Button)
        + 2.0 * ui.spacing().button_padding.y
        + ui.spacing().item_spacing.y;
    let shown = events.len().min(EVENT_LIST_LIMIT);
    let more = usize::from(events.len() > EVENT_LIST_LIMIT);
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show_rows(ui, row_height, shown + more, |ui, rows| {
            for event in events
                .iter()
                .take(shown)
                .skip(rows.start)
                .take(rows.end - rows.start)
            {
                let node = event_node(state.snapshot, event);
                let pick = node.map(|i| {
                    let n = &state.snapshot.nodes[i];
                    n.sphere.map_or(Pick::Node(n.id), Pick::Sphere)
                });
                let selected = pick.is_some() && pick == state.view.selection;
                let r = ui.selectable_label(selected, describe_event(state.snapshot, event));
                if r.clicked() {
                    select = Some(pick);
                }
                if r.hovered() && pick.is_some() {
                    hover = pick;
                }
            }
            if rows.end > shown {
                ui.weak(format!("… and {} more", events.len() - EVENT_LIST_LIMIT));
            }
        });
    if let Some(pick) = select {
        out.push(Command::Select(pick));
    }
    if hover.is_some() {
        out.push(Command::Hover(hover));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_lists_stay_short() {
        assert_eq!(id_list(&[]), "");
        assert_eq!(id_list(&[3, 5]), "3, 5");
        let many: Vec<u32> = (0..10_000).collect();
        assert_eq!(
            id_list(&many),
            "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 … (+9988)"
        );
        assert_eq!(
            appeared_text(&[4, 7], &[3]),
            "2 appeared (4, 7); 1 disappeared (3)"
        );
        assert_eq!(appeared_text(&[], &[3]), "1 disappeared (3)");
    }
}
