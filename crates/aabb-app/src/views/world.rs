//! The world view: spheres, their tight and fat boxes, the tree's branch boxes, velocity
//! arrows, candidate pairs and labels, each a switchable layer drawn as one hand-built mesh;
//! pan, zoom, fit, hover tooltips, selection, dragging, adding and deleting spheres.
//!
//! The camera is the state's (it is saved with the scene): the view pans, zooms and fits a
//! copy, draws with it, and reports it ([`Command::SetWorldCamera`]).

use eframe::egui;

use crate::camera::{ScreenFromWorld, WorldCamera, WorldRect};
use crate::commands::Command;
use crate::density::{Density, is_small};
use crate::mesh::{MeshPool, WORLD_MESH, crisp, paint_alone};
use crate::palette::Palette;
use crate::pane::Pane;
use crate::pick::Pick;
use crate::prefs::Layer;
use crate::snapshot::{ItemShape, NodeItem};
use crate::stream::engine::PairClass;
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
    /// Shapes left out because the mesh was full: its vertices
    /// ([`crate::mesh::MAX_WORLD_VERTICES`]) or its ink
    /// ([`crate::mesh::MAX_OVERDRAW`]).
    pub shapes_skipped: usize,
}

/// The overlay's note on shapes left out because a view's mesh was full (empty when none
/// was): where so many shapes overlap on screen that their vertices would pass the view's cap
/// ([`crate::mesh::MAX_WORLD_VERTICES`], [`crate::mesh::MAX_TREE_VERTICES`]), or
/// they would cover the view more than [`crate::mesh::MAX_OVERDRAW`] times, the rest
/// are not drawn, rather than the GPU refusing the frame or a software renderer taking
/// minutes over it.
#[must_use]
pub fn skipped_note(skipped: usize) -> String {
    if skipped == 0 {
        return String::new();
    }
    format!(" · {skipped} shapes not drawn (too many at once: zoom in or hide layers)")
}

/// The world view's own state: where it was drawn, a pan in progress, the context menu's
/// point and its mesh buffers.
#[derive(Default)]
pub struct WorldView {
    /// Where the view was drawn last frame (`None` when it was not).
    rect: Option<Rect>,
    /// A primary drag on empty space is panning the world.
    panning: bool,
    /// The plane point where the context menu was opened.
    context_point: Option<Vec2>,
    /// The mesh buffers, kept from frame to frame.
    meshes: MeshPool,
    /// Shapes too small to draw, counted per pixel (see `density.rs`), and the texture the
    /// counts are shown through.
    density: std::cell::RefCell<Density>,
    density_texture: std::cell::RefCell<Option<egui::TextureHandle>>,
    /// The view's size and the camera of the last fit: while the camera is still that one
    /// (the user has not panned or zoomed since), a change of size (a panel or the splitter
    /// moved, the window resized) fits again.
    last_fit: Option<(egui::Vec2, WorldCamera)>,
}

/// The deepest branch depth drawn: the user's range, cut so at most [`BRANCH_BUDGET`] boxes
/// are drawn.
fn branch_depth_limit(state: Pane<'_>) -> (u32, u32, bool) {
    branch_depth_limit_within(state, BRANCH_BUDGET)
}

/// The depths of branch boxes to draw, `(first, last, cut)`: the user's range, cut so at
/// most `budget` boxes are drawn (`cut` when it was).
#[must_use]
pub fn branch_depth_limit_within(state: Pane<'_>, budget: usize) -> (u32, u32, bool) {
    let snapshot = &state.snapshot;
    let lo = state.prefs.branch_depth_min;
    let hi = state.prefs.branch_depth_max.min(snapshot.max_depth);
    let per_depth = &snapshot.branches_per_depth;
    let mut total = 0;
    let mut limit = hi;
    for d in lo..=hi {
        total += per_depth.get(d as usize).copied().unwrap_or(0);
        if total > budget {
            limit = d.saturating_sub(1).max(lo);
            return (lo, limit, true);
        }
    }
    (lo, limit, false)
}

/// What is under a plane point: a sphere, else a leaf box outline (its sphere), else a branch
/// box outline, among the visible layers.
#[must_use]
pub fn pick_world(state: Pane<'_>, p: Vec2, tolerance_world: f32) -> Option<Pick> {
    let layers = state.prefs.layers;
    let snap = &state.snapshot;
    // Spheres (a trace's boxes): the smallest one containing the point.
    let mut best: Option<(f32, u32)> = None;
    for s in &snap.spheres {
        let (inside, size) = if s.shape.is_box() {
            let pad = Vec2::splat(tolerance_world * 0.5);
            let r = WorldRect::new(s.tight.min - pad, s.tight.max + pad);
            (r.contains(p), 0.5 * s.tight.size().max_element())
        } else {
            let d = (p - s.center).length();
            (d <= s.radius + tolerance_world * 0.5, s.radius)
        };
        if inside && best.is_none_or(|(r, _)| size < r) {
            best = Some((size, s.id));
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
        let (lo, hi, _) = branch_depth_limit(state);
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

impl WorldView {
    /// The world view, filling `ui`.
    pub fn ui(&mut self, ui: &mut egui::Ui, state: Pane<'_>, out: &mut Vec<Command>) {
        let (response, painter) = ui.allocate_painter(ui.available_size(), Sense::click_and_drag());
        let viewport = response.rect;
        self.rect = Some(viewport);
        let mut camera = state.view.camera;
        let mut fitted = false;
        let resized_since_fit = self
            .last_fit
            .is_some_and(|(size, fit)| fit == camera && size != viewport.size());
        if (state.view.fit_pending || resized_since_fit)
            && viewport.width() > 10.0
            && viewport.height() > 10.0
        {
            if let Some(bounds) = state.fit_bounds() {
                camera.fit(viewport, bounds);
            }
            fitted = true;
            self.last_fit = Some((viewport.size(), camera));
        }

        // What the pointer rests on in this view, this frame.
        let mut hover = None;
        if state.view.interactive {
            hover = self.input(ui, state, &response, viewport, &mut camera, out);
        }

        let started = Instant::now();
        let dark = ui.visuals().dark_mode;
        let info = self.draw(
            state,
            &camera,
            &painter,
            viewport,
            Palette::for_dark_mode(dark),
        );
        out.push(Command::AddDrawTime(started.elapsed().as_secs_f32() * 1e3));

        // Overlay: what level of detail cut.
        let text_color = ui.visuals().weak_text_color();
        let mut overlay = state.sim.step_text();
        if info.branches_cut
            && let Some(d) = info.branch_depth_drawn
        {
            overlay.push_str(&format!(
                " · branches drawn to depth {d} of {} (level of detail)",
                state.snapshot.max_depth
            ));
        }
        overlay.push_str(&skipped_note(info.shapes_skipped));
        if let Some(note) = state.huge_world_note() {
            overlay.push_str(&format!(" · {note}"));
        }
        painter.text(
            viewport.left_top() + egui::vec2(6.0, 4.0),
            Align2::LEFT_TOP,
            overlay,
            FontId::proportional(11.0),
            text_color,
        );
        if let Some(caption) = state.caption() {
            caption_ui(ui, state, viewport, caption);
        }
        // Listening, no engine yet: the world says what it waits for.
        if let Some(job) = &state.dialogs.live {
            let status = job.status();
            if status.peer.is_none() && !status.stopping && state.session.received().is_none() {
                painter.text(
                    viewport.center(),
                    Align2::CENTER_CENTER,
                    status.line(),
                    FontId::proportional(16.0),
                    text_color,
                );
            }
        }
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

        if state.view.interactive
            && let Some(Some(pick)) = hover
            && state.view.drag.is_none_or(|d| !d.active)
        {
            response
                .clone()
                .on_hover_ui_at_pointer(|ui| pick_tooltip(state, ui, pick));
        }
        let context_point = self.context_point;
        response.context_menu(|ui| {
            let Some(p) = context_point else {
                ui.close();
                return;
            };
            let under = pick_world(state, p, 0.0);
            if let Some(Pick::Sphere(id)) = under {
                if ui.button(format!("Delete sphere {id}")).clicked() {
                    out.push(Command::DeleteSphere(id));
                    ui.close();
                }
                if ui.button(format!("Select sphere {id}")).clicked() {
                    out.push(Command::Select(Some(Pick::Sphere(id))));
                    ui.close();
                }
            }
            if ui.button("Add a sphere here  (A)").clicked() {
                let base = state.view_center_base();
                out.push(Command::AddSphere {
                    center: state.view.plane.unproject(p, base),
                });
                ui.close();
            }
            if ui.button("Fit the world  (F)").clicked() {
                out.push(Command::Fit);
                ui.close();
            }
        });
        if let Some(pick) = hover {
            out.push(Command::Hover(pick));
        }
        if fitted || camera != state.view.camera {
            out.push(Command::SetWorldCamera { camera, fitted });
        }
    }
}

impl WorldView {
    /// Where the view was drawn last frame, if it was.
    #[must_use]
    pub fn rect(&self) -> Option<Rect> {
        self.rect
    }

    /// Notes that the view is not shown this frame.
    pub fn hide(&mut self) {
        self.rect = None;
    }

    /// The world point under the pointer when it is over the view (as drawn last frame).
    #[must_use]
    pub fn pointer_in_world(&self, ctx: &egui::Context, camera: &WorldCamera) -> Option<Vec2> {
        let viewport = self.rect?;
        let pos = ctx.input(|i| i.pointer.hover_pos())?;
        viewport
            .contains(pos)
            .then(|| camera.transform(viewport).world_from_screen(pos))
    }

    /// Pan, zoom, drag, click, double-click and context-menu input. Changes `camera` and the
    /// view's own state; returns the hover when the pointer is over the view (`Some(None)`
    /// over empty space).
    fn input(
        &mut self,
        ui: &egui::Ui,
        state: Pane<'_>,
        response: &egui::Response,
        viewport: Rect,
        camera: &mut WorldCamera,
        out: &mut Vec<Command>,
    ) -> Option<Option<Pick>> {
        let t = camera.transform(viewport);
        let tolerance = PICK_TOLERANCE / t.scale;

        // Zoom around the cursor (wheel, pinch, ctrl+wheel).
        if let Some(pos) = response.hover_pos() {
            let (scroll, zoom) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
            let factor = zoom * (scroll * 0.0025).exp();
            if (factor - 1.0).abs() > 1e-4 {
                camera.zoom_around(viewport, pos, factor);
            }
        }
        let t = camera.transform(viewport);

        // Pan with the right or middle button.
        if response.dragged_by(PointerButton::Secondary)
            || response.dragged_by(PointerButton::Middle)
        {
            camera.pan(response.drag_delta());
        }

        // Primary: drag a sphere, or pan on empty space.
        if response.drag_started_by(PointerButton::Primary) {
            let press = ui.input(|i| i.pointer.press_origin()).unwrap_or_default();
            let press_world = t.world_from_screen(press);
            match pick_world(state, press_world, 0.0) {
                Some(Pick::Sphere(id)) => {
                    out.push(Command::BeginDrag {
                        id,
                        press: press_world,
                    });
                    drag_to_pointer(ui, state, &t, id, press_world, None, out);
                }
                _ => self.panning = true,
            }
        } else if response.dragged_by(PointerButton::Primary) {
            if let Some(drag) = state.view.drag.filter(|d| d.active) {
                if response.drag_delta() != egui::Vec2::ZERO {
                    drag_to_pointer(
                        ui,
                        state,
                        &t,
                        drag.id,
                        drag.press_in_world,
                        Some(drag.start_center_world),
                        out,
                    );
                }
            } else if self.panning {
                camera.pan(response.drag_delta());
            }
        }
        if response.drag_stopped() {
            out.push(Command::EndDrag);
            self.panning = false;
        }

        if response.clicked() {
            let pick = response
                .interact_pointer_pos()
                .and_then(|p| pick_world(state, t.world_from_screen(p), tolerance));
            out.push(Command::Select(pick));
        }
        if response.double_clicked()
            && response
                .interact_pointer_pos()
                .is_some_and(|p| pick_world(state, t.world_from_screen(p), 0.0).is_none())
        {
            out.push(Command::Fit);
        }
        if response.secondary_clicked() {
            self.context_point = response
                .interact_pointer_pos()
                .map(|p| t.world_from_screen(p));
        }
        // Nothing is hovered while the view is dragged (a pan of a million spheres would
        // search them all every frame for nothing).
        if let Some(pos) = response.hover_pos()
            && !response.context_menu_opened()
            && !response.dragged()
        {
            return Some(pick_world(state, t.world_from_screen(pos), tolerance));
        }
        None
    }
}

/// Queues the move that puts sphere `id` under the pointer, keeping the offset it had at the
/// press.
fn drag_to_pointer(
    ui: &egui::Ui,
    state: Pane<'_>,
    t: &ScreenFromWorld,
    id: u32,
    press_world: Vec2,
    start_center: Option<glam::Vec3>,
    out: &mut Vec<Command>,
) {
    let Some(pointer) = ui.input(|i| i.pointer.latest_pos()) else {
        return;
    };
    let start = match start_center {
        Some(c) => c,
        None => match state.snapshot.sphere(id) {
            Some(s) => s.center_world,
            None => return,
        },
    };
    let delta = t.world_from_screen(pointer) - press_world;
    let plane = state.view.plane;
    let center = plane.unproject(plane.project(start) + delta, start);
    out.push(Command::MoveSphere { id, center });
}

/// The hover tooltip of a sphere or a branch.
pub fn pick_tooltip(state: Pane<'_>, ui: &mut egui::Ui, pick: Pick) {
    let fmt3 = |v: glam::Vec3| {
        if state.session.doc().dimensions == 3 {
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
            let Some(s) = state.snapshot.sphere(id) else {
                return;
            };
            ui.strong(match (&s.label, s.shape) {
                (_, ItemShape::Box) => format!("Box {id}"),
                (_, ItemShape::StaticBox) => format!("Static box {id}"),
                (Some(l), ItemShape::Sphere) => format!("Sphere {id} “{l}”"),
                (None, ItemShape::Sphere) => format!("Sphere {id}"),
            });
            egui::Grid::new("sphere_tip").num_columns(2).show(ui, |ui| {
                ui.label("centre");
                ui.label(fmt3(s.center_world));
                ui.end_row();
                if !s.shape.is_box() {
                    ui.label("radius");
                    ui.label(format!("{:.3}", s.radius));
                    ui.end_row();
                }
                ui.label("velocity");
                ui.label(fmt3(s.velocity_world));
                ui.end_row();
                ui.label("tight box");
                ui.label(fmt_rect(&s.tight));
                ui.end_row();
                ui.label("fat box");
                ui.label(state.fat_box(id).map_or("—".to_owned(), |f| {
                    format!("{} – {}", fmt3(f.min), fmt3(f.max))
                }));
                ui.end_row();
                if let Some(i) = s.node {
                    let n = &state.snapshot.nodes[i];
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
            let Some(i) = state.snapshot.node_index(node) else {
                return;
            };
            let n = &state.snapshot.nodes[i];
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
                ui.label(state.snapshot.leaves_below(i).to_string());
                ui.end_row();
            });
        }
    }
}

/// The end of the arrow from `from` along `v`, stopped at the walls `w`: a sphere's velocity
/// arrow ends where it would meet a wall, not beyond it (a sphere outside the walls keeps its
/// whole arrow).
#[must_use]
pub fn clip_to(w: &WorldRect, from: Vec2, v: Vec2) -> Vec2 {
    if !w.contains(from) {
        return from + v;
    }
    let mut t = 1.0f32;
    for a in 0..2 {
        let (p, d, lo, hi) = (from[a], v[a], w.min[a], w.max[a]);
        if d > 0.0 && p + d > hi {
            t = t.min((hi - p) / d);
        } else if d < 0.0 && p + d < lo {
            t = t.min((lo - p) / d);
        }
    }
    from + v * t.clamp(0.0, 1.0)
}

/// Screen points a branch box is padded outwards per level of its height when nested boxes
/// are spaced apart (the padded parents of the "view" figure of Sri Harsha Chilakapati's "AABB
/// Trees for Collision Detection"), and the most levels padded.
pub const PARENT_PAD: f32 = 2.0;
const PARENT_PAD_LEVELS: u32 = 4;
/// The most a box is padded, as a share of its smaller side on screen: small boxes of a
/// dense scene stay close to their true extent.
const PARENT_PAD_SHARE: f32 = 0.1;

/// The screen rectangle a tree node's box is drawn as: its box, padded outwards by its height
/// when the preference spaces nested boxes apart, with edges on pixel centres so that every
/// edge is a crisp line of one colour and coincident edges cover each other exactly.
fn node_screen_rect(t: &ScreenFromWorld, n: &NodeItem, pad: bool, ppp: f32) -> Rect {
    let r = t.rect(&n.rect);
    let r = if pad {
        let by = PARENT_PAD * n.height.min(PARENT_PAD_LEVELS) as f32;
        r.expand(by.min(PARENT_PAD_SHARE * r.width().min(r.height())))
    } else {
        r
    };
    crisp(r, ppp)
}

/// The most characters of a caption shown.
const CAPTION_CHARS: usize = 400;

/// The broad phase's median time a step over the recent steps and its share of a 60 Hz
/// frame, in words (`None` before the first step).
#[must_use]
pub fn broadphase_share_text(history: &crate::history::RecentSteps) -> Option<String> {
    if history.is_empty() {
        return None;
    }
    let ms = history.median(|s| s.update_ms + s.pairs_ms);
    let share = ms / (1000.0 / 60.0) * 100.0;
    let build = if cfg!(debug_assertions) {
        ", debug build: a release build is several times faster"
    } else {
        ""
    };
    Some(format!(
        "Here: the broad phase takes {ms:.2} ms a step, {share:.1} % of a 60 Hz frame (median \
         of the last {} steps{build}).",
        history.len()
    ))
}

/// The scene's caption at the foot of the world view, with this run's measure beside it: a
/// label (readable by screen readers and tests) that takes no clicks from the view.
fn caption_ui(ui: &mut egui::Ui, state: Pane<'_>, viewport: Rect, caption: &str) {
    let mut text: String = caption.chars().take(CAPTION_CHARS).collect();
    if let Some(share) = state.history.and_then(broadphase_share_text) {
        text.push('\n');
        text.push_str(&share);
    }
    let width = (viewport.width() - 24.0).max(50.0);
    let area = Rect::from_min_max(
        viewport.left_top() + egui::vec2(10.0, 10.0),
        viewport.left_bottom() + egui::vec2(10.0 + width, -10.0),
    );
    let builder = egui::UiBuilder::new()
        .max_rect(area)
        .layout(egui::Layout::bottom_up(egui::Align::Min));
    ui.scope_builder(builder, |ui| {
        egui::Frame::new()
            .fill(ui.visuals().extreme_bg_color.gamma_multiply(0.9))
            .corner_radius(4.0)
            .inner_margin(6.0)
            .show(ui, |ui| {
                ui.add(
                    egui::Label::new(egui::RichText::new(text).size(14.0).strong())
                        .selectable(false)
                        .wrap(),
                );
            });
    });
}

impl WorldView {
    /// Builds and paints every visible layer; returns what level of detail did.
    fn draw(
        &self,
        state: Pane<'_>,
        camera: &WorldCamera,
        painter: &egui::Painter,
        viewport: Rect,
        pal: Palette,
    ) -> WorldDrawInfo {
        let t = camera.transform(viewport);
        let visible = t.world_rect_from_screen(viewport.expand(4.0));
        let layers = state.prefs.layers;
        let snap = &state.snapshot;
        let mut info = WorldDrawInfo::default();
        let mut labels: Vec<(Pos2, String, f32)> = Vec::new();
        let ppp = painter.pixels_per_point();
        let pad = state.prefs.pad_parents;
        painter.rect_filled(viewport, 0.0, pal.background);

        // Every layer goes into one mesh, in drawing order: egui copies each mesh into its
        // output, which grew (and copied again) once per layer when each layer was a mesh.
        let mut m = self.meshes.builder(WORLD_MESH);
        m.limit_ink(viewport);
        let mut d = self.density.borrow_mut();
        d.begin(viewport, ppp);
        let statics_layer = d.layer(pal.static_box);
        // Static boxes (level geometry) under every layer: a faint fill and an outline.
        for b in &snap.statics {
            if !b.rect.overlaps(&visible) {
                continue;
            }
            let r = t.rect(&b.rect);
            if is_small(r.size()) {
                d.splat(statics_layer, r.center());
            } else {
                m.rect_filled(r, pal.static_box.gamma_multiply(0.2));
                m.rect_outline(crisp(r, ppp), 1.0, pal.static_box);
            }
        }
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
                    let (lo, hi, cut) = branch_depth_limit(state);
                    info.branches_cut = cut;
                    info.branch_depth_drawn = Some(hi);
                    let height = snap.max_depth.max(1);
                    // Branches too small to draw are counted, at every depth of the user's
                    // range (past the budget's depth too): the deep tree shows as density.
                    let user_hi = state.prefs.branch_depth_max;
                    let layer = d.layer(pal.branch(height, height));
                    for n in &snap.nodes {
                        if n.children.is_none()
                            || n.depth < lo
                            || n.depth > user_hi
                            || !n.rect.overlaps(&visible)
                        {
                            continue;
                        }
                        let r = t.rect(&n.rect);
                        if is_small(r.size()) {
                            d.splat(layer, r.center());
                            continue;
                        }
                        if n.depth > hi {
                            continue;
                        }
                        let r = node_screen_rect(&t, n, pad, ppp);
                        m.rect_outline(r, 1.0, pal.branch(n.depth, height));
                    }
                }
                Layer::Leaves => {
                    let layer = d.layer(pal.leaf);
                    for s in &snap.spheres {
                        let Some(f) = s.fat else { continue };
                        if !f.overlaps(&visible) {
                            continue;
                        }
                        let r = t.rect(&f);
                        if is_small(r.size()) {
                            d.splat(layer, r.center());
                        } else {
                            m.rect_outline(crisp(r, ppp), 1.0, pal.leaf);
                        }
                    }
                }
                Layer::Tight | Layer::Contacts => {
                    let (want, color, width) = if layer == Layer::Contacts {
                        (true, pal.contact, 1.5)
                    } else {
                        (false, pal.tight, 1.25)
                    };
                    let layer = d.layer(color);
                    for s in &snap.spheres {
                        if s.colliding != want || !s.tight.overlaps(&visible) {
                            continue;
                        }
                        let r = t.rect(&s.tight);
                        if is_small(r.size()) {
                            d.splat(layer, r.center());
                        } else {
                            m.rect_outline(crisp(r, ppp), width, color);
                        }
                    }
                }
                Layer::Pairs => {
                    // A received stream's step that carried the engine's pairs shows those,
                    // each in the colour of why it exists; otherwise ours.
                    // (A false positive's line is drawn wider than a contact candidate's.)
                    let ours = snap.pairs.iter().map(|&(i, j)| (i, j, pal.pair, 0.75));
                    let theirs = snap.engine_pairs.iter().map(|&(i, j, class)| {
                        let width = if class == PairClass::Contact {
                            0.75
                        } else {
                            1.5
                        };
                        (i, j, pal.pair_class(class), width)
                    });
                    let pairs: Box<dyn Iterator<Item = (usize, usize, Color32, f32)>> =
                        if snap.engine_pairs.is_empty() {
                            Box::new(ours)
                        } else {
                            Box::new(theirs)
                        };
                    for (i, j, color, width) in pairs {
                        let (a, b) = (&snap.spheres[i], &snap.spheres[j]);
                        let seg = WorldRect::new(a.center.min(b.center), a.center.max(b.center));
                        if seg.overlaps(&visible) {
                            m.line(t.pos(a.center), t.pos(b.center), width, color);
                        }
                    }
                }
                Layer::Spheres => {
                    let layer = d.layer(pal.sphere);
                    let contact_layer = d.layer(pal.contact);
                    let static_layer = d.layer(pal.static_box);
                    for s in &snap.spheres {
                        if !s.tight.overlaps(&visible) {
                            continue;
                        }
                        if s.shape.is_box() {
                            // A trace's box: filled lightly and outlined, in the colliding
                            // colour when it touches another, static boxes in their own.
                            let color = match s.shape {
                                ItemShape::StaticBox => pal.static_box,
                                _ if s.colliding => pal.contact,
                                _ => pal.sphere,
                            };
                            let r = t.rect(&s.tight);
                            if is_small(r.size()) {
                                let into = match s.shape {
                                    ItemShape::StaticBox => static_layer,
                                    _ if s.colliding => contact_layer,
                                    _ => layer,
                                };
                                d.splat(into, r.center());
                            } else {
                                m.rect_filled(r, color.gamma_multiply(0.18));
                                m.rect_outline(crisp(r, ppp), 1.25, color);
                            }
                            continue;
                        }
                        let r = t.len(s.radius);
                        let c = t.pos(s.center);
                        if r < 0.5 * crate::density::DENSITY_POINTS {
                            d.splat(layer, c);
                        } else {
                            m.circle_outline(c, r, 1.25, pal.sphere);
                        }
                    }
                }
                Layer::Velocity => {
                    if t.len(snap.max_speed_l1) < 2.0 {
                        // Every arrow is shorter than two points.
                        continue;
                    }
                    for s in &snap.spheres {
                        if !s.tight.overlaps(&visible) {
                            continue;
                        }
                        // An arrow shorter than 2 points is not drawn; the sum of the sides
                        // bounds its length without a square root.
                        if t.len(s.velocity.x.abs() + s.velocity.y.abs()) < 2.0 {
                            continue;
                        }
                        let a = t.pos(s.center);
                        let end = match snap.walls {
                            Some(w) => clip_to(&w, s.center, s.velocity),
                            None => s.center + s.velocity,
                        };
                        let b = t.pos(end);
                        if (b - a).length() >= 2.0 {
                            m.arrow(a, b, 1.25, 6.0, pal.velocity);
                        }
                    }
                }
                Layer::Labels => {
                    if t.len(snap.max_radius) < 6.0 {
                        // Every sphere is too small for its label.
                        continue;
                    }
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
        let hover = state.view.hover;
        for (pick, width) in [(state.view.selection, 2.5), (hover, 2.0)] {
            match pick {
                Some(Pick::Sphere(id)) => {
                    if let Some(s) = snap.sphere(id) {
                        let c = t.pos(s.center);
                        if s.shape.is_box() {
                            m.rect_outline(t.rect(&s.tight), width, pal.highlight);
                        } else {
                            m.circle_outline(c, t.len(s.radius).max(3.0), width, pal.highlight);
                        }
                        if let Some(f) = s.fat {
                            m.rect_outline(t.rect(&f), width * 0.6, pal.highlight);
                        }
                    }
                }
                Some(Pick::Node(node)) => {
                    if let Some(i) = snap.node_index(node) {
                        let r = node_screen_rect(&t, &snap.nodes[i], pad, ppp);
                        m.rect_outline(r, width, pal.highlight);
                    }
                }
                None => {}
            }
        }
        // The engine's own tree (a received stream's) over ours in its own colour, and the
        // pairs the engine's broad phase missed at this step. (Box2D's tree, when it is the
        // broad phase, is the snapshot's nodes: drawn as ours is.)
        if state.prefs.show_engine_tree
            && let Some(tree) = state.engine_step().and_then(|e| e.tree.as_ref())
        {
            let (a, c) = state.view.plane.axes();
            let layer = d.layer(pal.engine_tree);
            for n in &tree.nodes {
                if !matches!(n.kind, crate::stream::engine::NodeKind::Branch(_)) {
                    continue;
                }
                let r =
                    WorldRect::new(Vec2::new(n.min[a], n.min[c]), Vec2::new(n.max[a], n.max[c]));
                if !r.overlaps(&visible) {
                    continue;
                }
                let sr = t.rect(&r);
                if is_small(sr.size()) {
                    d.splat(layer, sr.center());
                } else {
                    m.rect_outline(crisp(sr, ppp), 1.0, pal.engine_tree);
                }
            }
        }
        for [x, y] in state.engine_missed_here() {
            if let (Some(p), Some(q)) = (snap.sphere(x), snap.sphere(y)) {
                m.line(t.pos(p.center), t.pos(q.center), 2.5, pal.missed);
                m.rect_outline(t.rect(&p.tight), 2.0, pal.missed);
                m.rect_outline(t.rect(&q.tight), 2.0, pal.missed);
            }
        }
        info.vertices = m.vertex_count();
        info.shapes_skipped = m.skipped();
        // The density image under the shapes.
        if let Some(image) = d.image() {
            let mut texture = self.density_texture.borrow_mut();
            let options = egui::TextureOptions::NEAREST;
            match texture.as_mut() {
                Some(t) => t.set(image, options),
                None => {
                    *texture = Some(painter.ctx().load_texture("world-density", image, options));
                }
            }
            if let Some(t) = texture.as_ref() {
                painter.image(
                    t.id(),
                    viewport,
                    Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
                    Color32::WHITE,
                );
            }
        }
        drop(d);
        if let Some(shape) = self.meshes.finish(m) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn velocity_arrows_stop_at_the_walls() {
        let w = WorldRect::new(Vec2::new(0.0, 0.0), Vec2::new(10.0, 10.0));
        // Through the right wall: stopped on it, the direction kept.
        assert_eq!(
            clip_to(&w, Vec2::new(8.0, 5.0), Vec2::new(4.0, 2.0)),
            Vec2::new(10.0, 6.0)
        );
        // Through the floor, and a corner: the nearer wall stops it.
        assert_eq!(
            clip_to(&w, Vec2::new(5.0, 1.0), Vec2::new(0.0, -4.0)),
            Vec2::new(5.0, 0.0)
        );
        assert_eq!(
            clip_to(&w, Vec2::new(9.0, 9.0), Vec2::new(2.0, 4.0)),
            Vec2::new(9.5, 10.0)
        );
        // Inside: whole; outside the walls: whole.
        assert_eq!(
            clip_to(&w, Vec2::new(5.0, 5.0), Vec2::new(1.0, -1.0)),
            Vec2::new(6.0, 4.0)
        );
        assert_eq!(
            clip_to(&w, Vec2::new(-5.0, 5.0), Vec2::new(1.0, 0.0)),
            Vec2::new(-4.0, 5.0)
        );
    }
}
