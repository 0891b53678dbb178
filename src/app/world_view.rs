//! The world view: spheres, their tight and fat boxes, the tree's branch boxes, velocity
//! arrows, candidate pairs and labels, each a switchable layer drawn as one hand-built mesh;
//! pan, zoom, fit, hover tooltips, selection, dragging, adding and deleting spheres.

use eframe::egui;

use super::camera::{ScreenFromWorld, WorldRect};
use super::commands::Command;
use super::debugger::{DebuggerApp, Pick};
use super::mesh::{WORLD_MESH, paint_alone};
use super::palette::Palette;
use super::prefs::Layer;
use egui::{Align2, Color32, FontId, PointerButton, Pos2, Rect, Sense};
use glam::Vec2;
use std::time::Instant;

/// At most this many branch boxes are drawn; deeper levels are left out to stay fluid.
pub const BRANCH_BUDGET: usize = 40_000;
/// At most this many id labels are drawn.
pub const LABEL_BUDGET: usize = 400;
/// Screen points within which the pointer picks a box outline.
const PICK_TOLERANCE: f32 = 4.0;

/// How the world view was drawn, for the overlay and the stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorldDrawInfo {
    /// Deepest branch depth drawn (after the level-of-detail budget).
    pub branch_depth_drawn: Option<u32>,
    /// True when the budget cut branches.
    pub branches_cut: bool,
    /// Triangles' vertices sent.
    pub vertices: usize,
}

impl DebuggerApp {
    /// The deepest branch depth drawn: the user's range, cut so at most [`BRANCH_BUDGET`] boxes
    /// are drawn.
    fn branch_depth_limit(&self) -> (u32, u32, bool) {
        let lo = self.prefs.branch_depth_min;
        let hi = self.prefs.branch_depth_max.min(self.snapshot.max_depth);
        let mut per_depth = vec![0usize; self.snapshot.max_depth as usize + 1];
        for n in &self.snapshot.nodes {
            if n.children.is_some() {
                per_depth[n.depth as usize] += 1;
            }
        }
        let mut total = 0;
        let mut limit = hi;
        for d in lo..=hi {
            total += per_depth.get(d as usize).copied().unwrap_or(0);
            if total > BRANCH_BUDGET {
                limit = d.saturating_sub(1).max(lo);
                return (lo, limit, true);
            }
        }
        (lo, limit, false)
    }

    /// What is under a plane point: a sphere, else a leaf box outline (its sphere), else a
    /// branch box outline, among the visible layers.
    pub(super) fn pick_world(&self, p: Vec2, tolerance_world: f32) -> Option<Pick> {
        let layers = self.prefs.layers;
        let snap = &self.snapshot;
        // Spheres: the smallest one containing the point.
        let mut best: Option<(f32, u32)> = None;
        for s in &snap.spheres {
            let d = (p - s.center).length();
            if d <= s.radius + tolerance_world * 0.5 && best.is_none_or(|(r, _)| s.radius < r) {
                best = Some((s.radius, s.id));
            }
        }
        if let Some((_, id)) = best {
            return Some(Pick::Sphere(id));
        }
        if layers.leaves {
            let mut best: Option<(f32, u32)> = None;
            for s in &snap.spheres {
                if let Some(f) = s.fat
                    && f.distance_to_outline(p) <= tolerance_world
                {
                    let area = f.size().x * f.size().y;
                    if best.is_none_or(|(a, _)| area < a) {
                        best = Some((area, s.id));
                    }
                }
            }
            if let Some((_, id)) = best {
                return Some(Pick::Sphere(id));
            }
        }
        if layers.branches {
            let (lo, hi, _) = self.branch_depth_limit();
            let mut best: Option<(u32, usize)> = None;
            for (i, n) in snap.nodes.iter().enumerate() {
                if n.children.is_some()
                    && (lo..=hi).contains(&n.depth)
                    && n.rect.distance_to_outline(p) <= tolerance_world
                    && best.is_none_or(|(d, _)| n.depth > d)
                {
                    best = Some((n.depth, i));
                }
            }
            if let Some((_, i)) = best {
                return Some(Pick::Node(snap.nodes[i].id));
            }
        }
        None
    }

    /// The world view, filling `ui`.
    pub(super) fn world_view_ui(&mut self, ui: &mut egui::Ui) {
        let (response, painter) = ui.allocate_painter(ui.available_size(), Sense::click_and_drag());
        let viewport = response.rect;
        self.view.world_rect = Some(viewport);
        if self.view.fit_pending && viewport.width() > 10.0 && viewport.height() > 10.0 {
            if let Some(bounds) = self.snapshot.bounds() {
                self.view.camera.fit(viewport, bounds);
            }
            self.view.fit_pending = false;
        }

        if self.view.interactive {
            self.world_input(ui, &response, viewport);
        }

        let started = Instant::now();
        let dark = ui.visuals().dark_mode;
        let info = self.draw_world(&painter, viewport, Palette::for_dark_mode(dark));
        self.view.draw_ms += started.elapsed().as_secs_f32() * 1e3;

        // Overlay: what level of detail cut.
        let text_color = ui.visuals().weak_text_color();
        let mut overlay = format!("step {}", self.model.sim.step_index());
        if info.branches_cut
            && let Some(d) = info.branch_depth_drawn
        {
            overlay.push_str(&format!(
                " · branches drawn to depth {d} of {} (level of detail)",
                self.snapshot.max_depth
            ));
        }
        painter.text(
            viewport.left_top() + egui::vec2(6.0, 4.0),
            Align2::LEFT_TOP,
            overlay,
            FontId::proportional(11.0),
            text_color,
        );
        let hovering_files = ui.ctx().input(|i| !i.raw.hovered_files.is_empty());
        if hovering_files {
            painter.rect_filled(viewport, 0.0, Color32::from_black_alpha(140));
            painter.text(
                viewport.center(),
                Align2::CENTER_CENTER,
                "Drop a scene file (.ron or .json) to open it",
                FontId::proportional(18.0),
                Color32::WHITE,
            );
        }

        if self.view.interactive
            && let Some(pick) = self.view.hover_next
            && self.view.drag.is_none_or(|d| !d.active)
        {
            response
                .clone()
                .on_hover_ui_at_pointer(|ui| self.pick_tooltip(ui, pick));
        }
        let context_point = self.view.context_point;
        response.context_menu(|ui| {
            let Some(p) = context_point else {
                ui.close();
                return;
            };
            let under = self.pick_world(p, 0.0);
            if let Some(Pick::Sphere(id)) = under {
                if ui.button(format!("Delete sphere {id}")).clicked() {
                    self.commands.push(Command::DeleteSphere(id));
                    ui.close();
                }
                if ui.button(format!("Select sphere {id}")).clicked() {
                    self.commands.push(Command::Select(Some(Pick::Sphere(id))));
                    ui.close();
                }
            }
            if ui.button("Add a sphere here  (A)").clicked() {
                let base = self.view_center_base();
                self.commands.push(Command::AddSphere {
                    center: self.view.plane.unproject(p, base),
                });
                ui.close();
            }
            if ui.button("Fit the world  (F)").clicked() {
                self.commands.push(Command::Fit);
                ui.close();
            }
        });
    }

    fn world_input(&mut self, ui: &egui::Ui, response: &egui::Response, viewport: Rect) {
        let t = self.view.camera.transform(viewport);
        let tolerance = PICK_TOLERANCE / t.scale;

        // Zoom around the cursor (wheel, pinch, ctrl+wheel).
        if let Some(pos) = response.hover_pos() {
            let (scroll, zoom) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
            let factor = zoom * (scroll * 0.0025).exp();
            if (factor - 1.0).abs() > 1e-4 {
                self.view.camera.zoom_around(viewport, pos, factor);
            }
        }
        let t = self.view.camera.transform(viewport);

        // Pan with the right or middle button.
        if response.dragged_by(PointerButton::Secondary)
            || response.dragged_by(PointerButton::Middle)
        {
            self.view.camera.pan(response.drag_delta());
        }

        // Primary: drag a sphere, or pan on empty space.
        if response.drag_started_by(PointerButton::Primary) {
            let press = ui.input(|i| i.pointer.press_origin()).unwrap_or_default();
            let press_world = t.world_from_screen(press);
            match self.pick_world(press_world, 0.0) {
                Some(Pick::Sphere(id)) => {
                    self.commands.push(Command::BeginDrag {
                        id,
                        press: press_world,
                    });
                    self.drag_to_pointer(ui, &t, id, press_world, None);
                }
                _ => self.view.panning = true,
            }
        } else if response.dragged_by(PointerButton::Primary) {
            if let Some(drag) = self.view.drag.filter(|d| d.active) {
                if response.drag_delta() != egui::Vec2::ZERO {
                    self.drag_to_pointer(
                        ui,
                        &t,
                        drag.id,
                        drag.press_in_world,
                        Some(drag.start_center_world),
                    );
                }
            } else if self.view.panning {
                self.view.camera.pan(response.drag_delta());
            }
        }
        if response.drag_stopped() {
            self.commands.push(Command::EndDrag);
            self.view.panning = false;
        }

        if response.clicked() {
            let pick = response
                .interact_pointer_pos()
                .and_then(|p| self.pick_world(t.world_from_screen(p), tolerance));
            self.commands.push(Command::Select(pick));
        }
        if response.double_clicked()
            && response
                .interact_pointer_pos()
                .is_some_and(|p| self.pick_world(t.world_from_screen(p), 0.0).is_none())
        {
            self.commands.push(Command::Fit);
        }
        if response.secondary_clicked() {
            self.view.context_point = response
                .interact_pointer_pos()
                .map(|p| t.world_from_screen(p));
        }
        if let Some(pos) = response.hover_pos()
            && !response.context_menu_opened()
        {
            self.view.hover_next = self.pick_world(t.world_from_screen(pos), tolerance);
        }
    }

    /// Queues the move that puts sphere `id` under the pointer, keeping the offset it had at
    /// the press.
    fn drag_to_pointer(
        &mut self,
        ui: &egui::Ui,
        t: &ScreenFromWorld,
        id: u32,
        press_world: Vec2,
        start_center: Option<glam::Vec3>,
    ) {
        let Some(pointer) = ui.input(|i| i.pointer.latest_pos()) else {
            return;
        };
        let start = match start_center {
            Some(c) => c,
            None => match self.snapshot.sphere(id) {
                Some(s) => s.center_world,
                None => return,
            },
        };
        let delta = t.world_from_screen(pointer) - press_world;
        let plane = self.view.plane;
        let center = plane.unproject(plane.project(start) + delta, start);
        self.commands.push(Command::MoveSphere { id, center });
    }

    fn pick_tooltip(&self, ui: &mut egui::Ui, pick: Pick) {
        let fmt3 = |v: glam::Vec3| {
            if self.model.doc.dimensions == 3 {
                format!("({:.3}, {:.3}, {:.3})", v.x, v.y, v.z)
            } else {
                format!("({:.3}, {:.3})", v.x, v.y)
            }
        };
        let fmt_rect = |r: &WorldRect| {
            format!(
                "({:.3}, {:.3}) – ({:.3}, {:.3})",
                r.min.x, r.min.y, r.max.x, r.max.y
            )
        };
        match pick {
            Pick::Sphere(id) => {
                let Some(s) = self.snapshot.sphere(id) else {
                    return;
                };
                ui.strong(match &s.label {
                    Some(l) => format!("Sphere {id} “{l}”"),
                    None => format!("Sphere {id}"),
                });
                egui::Grid::new("sphere_tip").num_columns(2).show(ui, |ui| {
                    ui.label("centre");
                    ui.label(fmt3(s.center_world));
                    ui.end_row();
                    ui.label("radius");
                    ui.label(format!("{:.3}", s.radius));
                    ui.end_row();
                    ui.label("velocity");
                    ui.label(fmt3(s.velocity_world));
                    ui.end_row();
                    ui.label("tight box");
                    ui.label(fmt_rect(&s.tight));
                    ui.end_row();
                    ui.label("fat box");
                    ui.label(self.fat_box(id).map_or("—".to_owned(), |f| {
                        format!("{} – {}", fmt3(f.min), fmt3(f.max))
                    }));
                    ui.end_row();
                    if let Some(i) = s.node {
                        let n = &self.snapshot.nodes[i];
                        ui.label("tree node");
                        ui.label(format!(
                            "leaf #{} (proxy {:?})",
                            n.id.0,
                            n.proxy.map(|p| p.index)
                        ));
                        ui.end_row();
                        ui.label("depth");
                        ui.label(n.depth.to_string());
                        ui.end_row();
                    }
                    ui.label("colliding");
                    ui.label(if s.colliding { "yes" } else { "no" });
                    ui.end_row();
                });
            }
            Pick::Node(node) => {
                let Some(i) = self.snapshot.node_index(node) else {
                    return;
                };
                let n = &self.snapshot.nodes[i];
                ui.strong(format!("Branch #{}", node.0));
                egui::Grid::new("node_tip").num_columns(2).show(ui, |ui| {
                    ui.label("depth");
                    ui.label(n.depth.to_string());
                    ui.end_row();
                    ui.label("height");
                    ui.label(n.height.to_string());
                    ui.end_row();
                    ui.label("box");
                    ui.label(fmt_rect(&n.rect));
                    ui.end_row();
                    ui.label("leaves below");
                    ui.label(self.view.tree_layout.leaves_below(i).to_string());
                    ui.end_row();
                });
            }
        }
    }

    /// Builds and paints every visible layer; returns what level of detail did.
    fn draw_world(&self, painter: &egui::Painter, viewport: Rect, pal: Palette) -> WorldDrawInfo {
        let t = self.view.camera.transform(viewport);
        let visible = t.world_rect_from_screen(viewport.expand(4.0));
        let layers = self.prefs.layers;
        let snap = &self.snapshot;
        let mut info = WorldDrawInfo::default();
        let mut labels: Vec<(Pos2, String, f32)> = Vec::new();
        painter.rect_filled(viewport, 0.0, pal.background);

        // Every layer goes into one mesh, in drawing order: egui copies each mesh into its
        // output, which grew (and copied again) once per layer when each layer was a mesh.
        let mut m = self.view.meshes.builder(WORLD_MESH);
        for layer in Layer::ALL {
            if !layers.get(layer) {
                continue;
            }
            match layer {
                Layer::Walls => {
                    if let Some(w) = snap.walls {
                        m.rect_outline(t.rect(&w), 1.5, pal.walls);
                    }
                }
                Layer::Branches => {
                    let (lo, hi, cut) = self.branch_depth_limit();
                    info.branches_cut = cut;
                    info.branch_depth_drawn = Some(hi);
                    let height = snap.max_depth.max(1);
                    for n in &snap.nodes {
                        if n.children.is_none()
                            || n.depth < lo
                            || n.depth > hi
                            || !n.rect.overlaps(&visible)
                        {
                            continue;
                        }
                        let r = t.rect(&n.rect);
                        if r.width() < 1.0 && r.height() < 1.0 {
                            continue;
                        }
                        m.rect_outline(r, 1.0, pal.branch(n.depth, height));
                    }
                }
                Layer::Leaves => {
                    for s in &snap.spheres {
                        let Some(f) = s.fat else { continue };
                        if !f.overlaps(&visible) {
                            continue;
                        }
                        let r = t.rect(&f);
                        if r.width() < 1.5 && r.height() < 1.5 {
                            m.dot(r.center(), 1.0, pal.leaf);
                        } else {
                            m.rect_outline(r, 1.0, pal.leaf);
                        }
                    }
                }
                Layer::Tight | Layer::Contacts => {
                    let (want, color, width) = if layer == Layer::Contacts {
                        (true, pal.contact, 1.5)
                    } else {
                        (false, pal.tight, 1.0)
                    };
                    for s in &snap.spheres {
                        if s.colliding != want || !s.tight.overlaps(&visible) {
                            continue;
                        }
                        let r = t.rect(&s.tight);
                        if r.width() < 1.5 {
                            m.dot(r.center(), 1.0, color);
                        } else {
                            m.rect_outline(r, width, color);
                        }
                    }
                }
                Layer::Pairs => {
                    for &(i, j) in &snap.pairs {
                        let (a, b) = (&snap.spheres[i], &snap.spheres[j]);
                        let seg = WorldRect::new(a.center.min(b.center), a.center.max(b.center));
                        if seg.overlaps(&visible) {
                            m.line(t.pos(a.center), t.pos(b.center), 0.75, pal.pair);
                        }
                    }
                }
                Layer::Spheres => {
                    for s in &snap.spheres {
                        if !s.tight.overlaps(&visible) {
                            continue;
                        }
                        let r = t.len(s.radius);
                        let c = t.pos(s.center);
                        if r < 1.0 {
                            m.dot(c, 1.5, pal.sphere);
                        } else {
                            m.circle_outline(c, r, 1.25, pal.sphere);
                        }
                    }
                }
                Layer::Velocity => {
                    for s in &snap.spheres {
                        if !s.tight.overlaps(&visible) {
                            continue;
                        }
                        let a = t.pos(s.center);
                        let b = t.pos(s.center + s.velocity);
                        if (b - a).length() >= 2.0 {
                            m.arrow(a, b, 1.25, 6.0, pal.velocity);
                        }
                    }
                }
                Layer::Labels => {
                    for s in &snap.spheres {
                        if labels.len() >= LABEL_BUDGET {
                            break;
                        }
                        let r = t.len(s.radius);
                        if r < 6.0 || !s.tight.overlaps(&visible) {
                            continue;
                        }
                        let text = s.label.clone().unwrap_or_else(|| s.id.to_string());
                        labels.push((t.pos(s.center), text, (r * 0.8).clamp(9.0, 16.0)));
                    }
                }
            }
        }

        // Hover and selection, orange, on top.
        let hover = self.view.hover;
        for (pick, width) in [(self.view.selection, 2.5), (hover, 2.0)] {
            match pick {
                Some(Pick::Sphere(id)) => {
                    if let Some(s) = snap.sphere(id) {
                        let c = t.pos(s.center);
                        m.circle_outline(c, t.len(s.radius).max(3.0), width, pal.highlight);
                        if let Some(f) = s.fat {
                            m.rect_outline(t.rect(&f), width * 0.6, pal.highlight);
                        }
                    }
                }
                Some(Pick::Node(node)) => {
                    if let Some(i) = snap.node_index(node) {
                        m.rect_outline(t.rect(&snap.nodes[i].rect), width, pal.highlight);
                    }
                }
                None => {}
            }
        }
        info.vertices = m.vertex_count();
        if let Some(shape) = self.view.meshes.finish(m) {
            paint_alone(painter, shape);
        }
        for (pos, text, size) in labels {
            painter.text(
                pos,
                Align2::CENTER_CENTER,
                text,
                FontId::proportional(size),
                pal.sphere,
            );
        }
        info
    }
}
