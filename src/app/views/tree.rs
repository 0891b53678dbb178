//! The tree view: the current tree as a node-link diagram (root at the top, branches green,
//! leaves blue with the sphere id), collapsed below a chosen depth, with pan and zoom, hover
//! and selection shared with the world view, and the tree's events of the last step.
//!
//! The diagram's camera and layout are the view's own: the state only asks for a fit
//! (`tree_fit_request`).

use eframe::egui;

use super::View;
use crate::app::camera::TreeCamera;
use crate::app::commands::{Command, broadphase_name};
use crate::app::mesh::{MeshPool, TREE_MESH, paint_alone};
use crate::app::palette::Palette;
use crate::app::pick::Pick;
use crate::app::snapshot::Snapshot;
use crate::app::state::State;
use crate::broadphase::BroadphaseKind;
use crate::tree::{NodeId, ProxyId, TreeEvent};
use egui::{Align2, FontId, PointerButton, Pos2, Rect, Sense, vec2};
use std::time::Instant;

/// One drawn node of the diagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayoutItem {
    /// Index in [`Snapshot::nodes`].
    pub node: usize,
    /// Position in layout space: x in leaf slots, y in depth levels.
    pub pos: egui::Vec2,
    /// Layout index of the parent.
    pub parent: Option<usize>,
    /// For a branch collapsed at the depth limit: how many leaves it hides (else 0).
    pub hidden_leaves: u32,
}

/// The diagram's layout for one state of the tree and one collapse depth.
#[derive(Clone, Debug, Default)]
pub struct TreeLayout {
    /// Drawn nodes, children before parents.
    pub items: Vec<LayoutItem>,
    /// Leaf slots used (the layout's width).
    pub width: f32,
    /// Depth levels shown.
    pub levels: u32,
    item_of_node: Vec<u32>,
    leaves_below: Vec<u32>,
    /// Scratch of [`TreeLayout::recompute`]: each node's x, and the depth-first stack.
    x_of: Vec<f32>,
    stack: Vec<(usize, bool)>,
}

impl TreeLayout {
    /// Lays out `snap`'s tree, collapsing branches at depth `collapse`. Leaves (and collapsed
    /// branches) take one slot each, left to right in depth-first order; a branch sits above
    /// the middle of its children.
    pub fn compute(snap: &Snapshot, collapse: u32) -> TreeLayout {
        let mut out = TreeLayout::default();
        out.recompute(snap, collapse);
        out
    }

    /// [`TreeLayout::compute`] into this layout's buffers (a playing scene lays the tree out
    /// every frame).
    pub fn recompute(&mut self, snap: &Snapshot, collapse: u32) {
        let n = snap.nodes.len();
        self.items.clear();
        self.item_of_node.clear();
        self.item_of_node.resize(n, u32::MAX);
        self.leaves_below.clear();
        self.leaves_below.resize(n, 0);
        self.width = 0.0;
        self.levels = 0;
        for i in (0..n).rev() {
            let node = &snap.nodes[i];
            if node.children.is_none() {
                self.leaves_below[i] = 1;
            }
            if let Some(p) = node.parent {
                self.leaves_below[p] += self.leaves_below[i];
            }
        }
        if n == 0 {
            return;
        }
        let x_of = &mut self.x_of;
        x_of.clear();
        x_of.resize(n, 0.0);
        let mut slot = 0.0f32;
        let mut levels = 0;
        let stack = &mut self.stack;
        stack.clear();
        stack.push((0usize, false));
        while let Some((i, visited)) = stack.pop() {
            let node = &snap.nodes[i];
            let collapsed = node.children.is_some() && node.depth >= collapse;
            let hidden_leaves;
            match node.children {
                Some([a, b]) if !collapsed => {
                    if !visited {
                        stack.push((i, true));
                        stack.push((b, false));
                        stack.push((a, false));
                        continue;
                    }
                    x_of[i] = 0.5 * (x_of[a] + x_of[b]);
                    hidden_leaves = 0;
                }
                _ => {
                    x_of[i] = slot;
                    slot += 1.0;
                    hidden_leaves = if collapsed { self.leaves_below[i] } else { 0 };
                }
            }
            levels = levels.max(node.depth + 1);
            self.item_of_node[i] = self.items.len() as u32;
            self.items.push(LayoutItem {
                node: i,
                pos: vec2(x_of[i], node.depth as f32),
                parent: None,
                hidden_leaves,
            });
        }
        for k in 0..self.items.len() {
            let node = self.items[k].node;
            self.items[k].parent = snap.nodes[node]
                .parent
                .map(|p| self.item_of_node[p])
                .filter(|&p| p != u32::MAX)
                .map(|p| p as usize);
        }
        self.width = slot;
        self.levels = levels;
    }

    /// The layout position of a snapshot node, when it is drawn.
    #[must_use]
    pub fn position_of(&self, node: usize) -> Option<egui::Vec2> {
        let k = *self.item_of_node.get(node)?;
        (k != u32::MAX).then(|| self.items[k as usize].pos)
    }

    /// How many leaves lie below a snapshot node.
    #[must_use]
    pub fn leaves_below(&self, node: usize) -> u32 {
        self.leaves_below.get(node).copied().unwrap_or(0)
    }

    /// The drawn item that stands for a node: itself, or the collapsed ancestor hiding it.
    #[must_use]
    pub fn item_for(&self, snap: &Snapshot, mut node: usize) -> Option<usize> {
        loop {
            let k = *self.item_of_node.get(node)?;
            if k != u32::MAX {
                return Some(k as usize);
            }
            node = snap.nodes.get(node)?.parent?;
        }
    }
}

/// One line of the event list.
fn describe_event(snap: &Snapshot, event: &TreeEvent) -> String {
    let sphere = |p: &ProxyId| match snap.proxy_sphere(*p) {
        Some(id) => format!("sphere {id}"),
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

/// At most this many events are listed.
const EVENT_LIST_LIMIT: usize = 100_000;

/// The tree view's own state: its camera, the diagram's layout, where it was drawn and its
/// mesh buffers.
#[derive(Default)]
pub struct TreeView {
    /// The diagram's camera.
    camera: TreeCamera,
    /// The fit request of the state last fitted for.
    fitted: u64,
    /// The diagram's layout (cached per change).
    layout: TreeLayout,
    /// What the layout was computed for: (model revision, collapse depth).
    layout_key: Option<(u64, u32)>,
    /// Where the diagram was drawn last frame (`None` when it was not).
    rect: Option<Rect>,
    /// The mesh buffers, kept from frame to frame.
    meshes: MeshPool,
    /// The view's size and the camera of the last fit (see `diagram_ui`).
    last_fit: Option<(egui::Vec2, TreeCamera)>,
}

impl View for TreeView {
    /// The tree view with its event list, filling `ui`.
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        if state.snapshot.nodes.is_empty() {
            let why = if state.model.kind != BroadphaseKind::Tree {
                format!(
                    "No tree: the broad phase is {}. Pick the tree under Broad phase.",
                    broadphase_name(state.model.kind)
                )
            } else {
                "The tree is empty: the scene has no spheres yet. Add one with A over the \
                 world, or add generated spheres."
                    .to_owned()
            };
            ui.centered_and_justified(|ui| ui.weak(why));
            self.rect = None;
            return;
        }
        if state.prefs.show_events {
            egui::Panel::bottom("tree_events")
                .resizable(true)
                .default_size(110.0)
                .show(ui, |ui| events_ui(ui, state, out));
        }
        egui::CentralPanel::no_frame().show(ui, |ui| self.diagram_ui(ui, state, out));
    }
}

impl TreeView {
    /// Notes that the view is not shown this frame.
    pub fn hide(&mut self) {
        self.rect = None;
    }

    /// Where the diagram was drawn last frame, if it was.
    #[must_use]
    pub fn rect(&self) -> Option<Rect> {
        self.rect
    }

    /// Where a tree node was drawn last frame.
    #[must_use]
    pub fn node_screen_pos(&self, snapshot: &Snapshot, node: NodeId) -> Option<Pos2> {
        let viewport = self.rect?;
        let index = snapshot.node_index(node)?;
        let pos = self.layout.position_of(index)?;
        Some(self.camera.screen_from_layout(viewport, pos))
    }

    /// The node-link diagram, filling `ui`.
    fn diagram_ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        let (response, painter) = ui.allocate_painter(ui.available_size(), Sense::click_and_drag());
        let viewport = response.rect;
        self.rect = Some(viewport);
        let collapse = state.prefs.tree_collapse_depth.max(1);
        let key = (state.model.rev, collapse);
        let started = Instant::now();
        if self.layout_key != Some(key) {
            self.layout.recompute(&state.snapshot, collapse);
            self.layout_key = Some(key);
        }
        let layout = &self.layout;
        // A fit asked for, or a change of size while the camera is still the last fit's
        // (a panel or the splitter moved): fit.
        let resized_since_fit = self
            .last_fit
            .is_some_and(|(size, fit)| fit == self.camera && size != viewport.size());
        if (self.fitted != state.view.tree_fit_request || resized_since_fit)
            && viewport.width() > 10.0
            && viewport.height() > 10.0
        {
            self.camera
                .fit(viewport, layout.width, layout.levels as f32);
            self.fitted = state.view.tree_fit_request;
            self.last_fit = Some((viewport.size(), self.camera));
        }

        if state.view.interactive {
            if let Some(pos) = response.hover_pos() {
                let (scroll, zoom) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
                let factor = zoom * (scroll * 0.0025).exp();
                if (factor - 1.0).abs() > 1e-4 {
                    self.camera.zoom_around(viewport, pos, factor);
                }
            }
            if response.dragged_by(PointerButton::Primary)
                || response.dragged_by(PointerButton::Secondary)
                || response.dragged_by(PointerButton::Middle)
            {
                self.camera.offset += response.drag_delta();
            }
            if response.double_clicked() {
                out.push(Command::Fit);
            }
        }

        let cam = self.camera;
        let layout = &self.layout;
        let snap = &state.snapshot;
        let radius = (cam.scale.x * 0.38)
            .min(cam.scale.y * 0.28)
            .clamp(1.5, 13.0);

        // Picking: the nearest drawn node within reach.
        let pick_at = |p: Pos2| -> Option<Pick> {
            let mut best: Option<(f32, usize)> = None;
            for item in &layout.items {
                let d = (cam.screen_from_layout(viewport, item.pos) - p).length();
                if d <= radius + 4.0 && best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, item.node));
                }
            }
            best.map(|(_, i)| {
                let n = &snap.nodes[i];
                n.sphere.map_or(Pick::Node(n.id), Pick::Sphere)
            })
        };
        if state.view.interactive {
            if let Some(pos) = response.hover_pos() {
                out.push(Command::Hover(pick_at(pos)));
            }
            if response.clicked() {
                let pick = response.interact_pointer_pos().and_then(pick_at);
                out.push(Command::Select(pick));
            }
        }

        // Drawing.
        let pal = Palette::for_dark_mode(ui.visuals().dark_mode);
        painter.rect_filled(viewport, 0.0, pal.background);
        let visible = viewport.expand(radius + 2.0);
        let height = snap.max_depth.max(1);
        // One mesh: the links first, under the nodes.
        //
        // Level of detail: the items of one depth come left to right, so an item less than a
        // point beside the last one drawn at its depth would be drawn over it: it is left out
        // (a link, when both its ends would be). A tree of 10,000 leaves fully expanded in a
        // panel 800 points wide draws about half its nodes this way and looks the same.
        let levels = layout.levels as usize + 1;
        let mut m = self.meshes.builder(TREE_MESH);
        let mut texts: Vec<(Pos2, String, f32)> = Vec::new();
        let mut last_link = vec![(f32::NEG_INFINITY, f32::NEG_INFINITY); levels];
        for item in &layout.items {
            if let Some(parent) = item.parent {
                let p = cam.screen_from_layout(viewport, item.pos);
                let q = cam.screen_from_layout(viewport, layout.items[parent].pos);
                let last = &mut last_link[(item.pos.y as usize).min(levels - 1)];
                if (p.x - last.0).abs() < 1.0 && (q.x - last.1).abs() < 1.0 {
                    continue;
                }
                if visible.intersects(Rect::from_two_pos(p, q)) {
                    m.line(q, p, 1.0, pal.link);
                    *last = (p.x, q.x);
                }
            }
        }
        let mut last_node = vec![f32::NEG_INFINITY; levels];
        for item in &layout.items {
            let p = cam.screen_from_layout(viewport, item.pos);
            if !visible.contains(p) {
                continue;
            }
            let last = &mut last_node[(item.pos.y as usize).min(levels - 1)];
            if (p.x - *last).abs() < 1.0 {
                continue;
            }
            *last = p.x;
            let node = &snap.nodes[item.node];
            if let Some(id) = node.sphere {
                m.circle_filled(p, radius, pal.leaf);
                if radius >= 7.0 {
                    texts.push((p, id.to_string(), (radius * 0.95).clamp(8.0, 13.0)));
                }
            } else if item.hidden_leaves > 0 {
                m.circle_outline(p, radius, 2.0, pal.branch(node.depth, height));
                if cam.scale.x >= 22.0 {
                    texts.push((
                        p + vec2(0.0, radius + 7.0),
                        format!("+{}", item.hidden_leaves),
                        10.0,
                    ));
                }
            } else {
                m.circle_filled(p, radius, pal.branch(node.depth, height));
            }
        }

        // Last step's events, then hover and selection with the path up to the root.
        for event in state.model.sim.report().events.iter().take(20_000) {
            if let Some(k) = event_node(snap, event).and_then(|i| layout.item_for(snap, i)) {
                let p = cam.screen_from_layout(viewport, layout.items[k].pos);
                if visible.contains(p) {
                    m.circle_outline(p, radius + 3.0, 1.75, pal.event);
                }
            }
        }
        for pick in [state.view.selection, state.view.hover] {
            let node = match pick {
                Some(Pick::Sphere(id)) => snap.sphere(id).and_then(|s| s.node),
                Some(Pick::Node(n)) => snap.node_index(n),
                None => None,
            };
            let Some(mut k) = node.and_then(|i| layout.item_for(snap, i)) else {
                continue;
            };
            let p = cam.screen_from_layout(viewport, layout.items[k].pos);
            m.circle_outline(p, radius + 2.5, 2.5, pal.highlight);
            while let Some(parent) = layout.items[k].parent {
                let a = cam.screen_from_layout(viewport, layout.items[k].pos);
                let b = cam.screen_from_layout(viewport, layout.items[parent].pos);
                m.line(a, b, 2.5, pal.highlight);
                k = parent;
            }
        }
        if let Some(shape) = self.meshes.finish(m) {
            paint_alone(&painter, shape);
        }
        let text_color = if ui.visuals().dark_mode {
            egui::Color32::WHITE
        } else {
            egui::Color32::BLACK
        };
        for (p, text, size) in texts {
            painter.text(
                p,
                Align2::CENTER_CENTER,
                text,
                FontId::proportional(size),
                text_color,
            );
        }
        painter.text(
            viewport.left_top() + vec2(6.0, 4.0),
            Align2::LEFT_TOP,
            format!(
                "{} nodes · {} drawn · collapsed below depth {collapse}",
                snap.nodes.len(),
                layout.items.len()
            ),
            FontId::proportional(11.0),
            ui.visuals().weak_text_color(),
        );
        out.push(Command::AddDrawTime(started.elapsed().as_secs_f32() * 1e3));
    }
}

/// The tree's events of the last step, under the diagram.
fn events_ui(ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
    let events = &state.model.sim.report().events;
    ui.horizontal(|ui| {
        ui.strong(format!("Tree events of the last step: {}", events.len()));
        let r = state.model.sim.report();
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
                let node = event_node(&state.snapshot, event);
                let pick = node.map(|i| {
                    let n = &state.snapshot.nodes[i];
                    n.sphere.map_or(Pick::Node(n.id), Pick::Sphere)
                });
                let selected = pick.is_some() && pick == state.view.selection;
                let r = ui.selectable_label(selected, describe_event(&state.snapshot, event));
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
    use crate::app::camera::WorldRect;
    use crate::app::snapshot::NodeItem;
    use glam::Vec2;

    fn node(id: u32, depth: u32, parent: Option<usize>, children: Option<[usize; 2]>) -> NodeItem {
        NodeItem {
            id: NodeId(id),
            rect: WorldRect::new(Vec2::ZERO, Vec2::ONE),
            depth,
            height: 0,
            parent,
            children,
            sphere: children.is_none().then_some(id),
            proxy: None,
        }
    }

    /// root(0) -> [a(1) -> [l2, l3], l4]
    fn small() -> Snapshot {
        Snapshot {
            nodes: vec![
                node(0, 0, None, Some([1, 4])),
                node(1, 1, Some(0), Some([2, 3])),
                node(2, 2, Some(1), None),
                node(3, 2, Some(1), None),
                node(4, 1, Some(0), None),
            ],
            max_depth: 2,
            ..Snapshot::default()
        }
    }

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

    #[test]
    fn leaves_take_slots_and_parents_sit_between_children() {
        let layout = TreeLayout::compute(&small(), 10);
        assert_eq!(layout.width, 3.0);
        assert_eq!(layout.levels, 3);
        assert_eq!(layout.position_of(2), Some(vec2(0.0, 2.0)));
        assert_eq!(layout.position_of(3), Some(vec2(1.0, 2.0)));
        assert_eq!(layout.position_of(1), Some(vec2(0.5, 1.0)));
        assert_eq!(layout.position_of(4), Some(vec2(2.0, 1.0)));
        assert_eq!(layout.position_of(0), Some(vec2(1.25, 0.0)));
        assert_eq!(layout.leaves_below(0), 3);
    }

    #[test]
    fn the_snapshot_counts_the_leaves_the_layout_counts() {
        let snap = small();
        let layout = TreeLayout::compute(&snap, 10);
        for i in 0..snap.nodes.len() {
            assert_eq!(snap.leaves_below(i), layout.leaves_below(i), "node {i}");
        }
        assert_eq!(snap.leaves_below(snap.nodes.len()), 0);
    }

    #[test]
    fn a_recomputed_layout_is_a_fresh_one() {
        let snap = small();
        let mut kept = TreeLayout::compute(&snap, 1);
        kept.recompute(&snap, 10);
        let fresh = TreeLayout::compute(&snap, 10);
        assert_eq!(kept.items, fresh.items);
        assert_eq!((kept.width, kept.levels), (fresh.width, fresh.levels));
        assert_eq!(kept.item_of_node, fresh.item_of_node);
        assert_eq!(kept.leaves_below, fresh.leaves_below);
        kept.recompute(&Snapshot::default(), 10);
        assert!(kept.items.is_empty() && kept.width == 0.0 && kept.levels == 0);
        assert_eq!(kept.position_of(0), None);
    }

    #[test]
    fn collapsing_hides_deeper_nodes_and_counts_them() {
        let snap = small();
        let layout = TreeLayout::compute(&snap, 1);
        assert_eq!(layout.items.len(), 3);
        assert_eq!(layout.position_of(2), None);
        let k = layout.item_for(&snap, 2).expect("collapsed ancestor");
        assert_eq!(layout.items[k].node, 1);
        assert_eq!(layout.items[k].hidden_leaves, 2);
    }
}
