//! The 3D view of 3D scenes: an orbiting perspective view of the spheres and the boxes the
//! world view draws (branch boxes by depth, leaf boxes, tight and colliding boxes, pairs,
//! velocities, walls), honouring the same layer switches and colours, over a floor grid with
//! an axis gizmo. Drag to orbit, right- or middle-drag to pan, wheel to zoom, double-click or
//! F to fit; hovering a sphere names it and a click selects it, as in the world view.
//!
//! Everything is one hand-built mesh a frame: box edges as thin quads cut at the near plane,
//! spheres as translucent discs sorted back to front, farther things faded towards the
//! background. The orbit camera is this view's own; it fits the scene when asked
//! ([`ViewState::fit_3d_request`](crate::state::ViewState::fit_3d_request)) and turns
//! back to its opening angles when another scene is opened.

use eframe::egui;

use super::world::{branch_depth_limit_within, pick_tooltip};
use crate::camera3d::{CameraPoint, OrbitCamera, Projector, ZOOM_PER_SCROLL_POINT};
use crate::commands::Command;
use crate::mesh::{MeshBuilder, MeshPool, WORLD_3D_MESH, paint_alone};
use crate::palette::{Palette, lerp_color};
use crate::pane::Pane;
use crate::pick::Pick;
use crate::prefs::Layer;
use crate::snapshot::{ItemShape, Snapshot};
use crate::tree::Aabb;
use egui::{Align2, Color32, FontId, PointerButton, Pos2, Rect, Sense, vec2};
use glam::Vec3;
use std::time::Instant;

/// At most this many branch boxes (twelve edges each) are drawn; deeper levels are left out.
pub const BRANCH_BUDGET_3D: usize = 5_000;
/// At most this many id labels are drawn, nearest first.
const LABEL_BUDGET: usize = 200;
/// Screen points around a sphere's disc within which the pointer still picks it.
const PICK_TOLERANCE: f32 = 3.0;
/// Boxes fewer screen points across than this are drawn as the rectangle around them.
const SMALL_BOX: f32 = 8.0;
/// Lines of the floor grid each way.
const GRID_LINES: usize = 10;
/// How far towards the background the farthest things fade.
const FOG: f32 = 0.6;

/// A sphere as drawn this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Disc {
    /// Index in the snapshot's spheres.
    index: usize,
    /// The sphere's id.
    id: u32,
    /// The centre on the screen.
    center: Pos2,
    /// Radius, screen points.
    radius: f32,
    /// Depth of the centre in front of the camera.
    depth: f32,
}

/// A drag in progress: the button, the camera when it began and where it began. The camera
/// follows the pointer's whole way from the press, so none of it is lost to egui's drag
/// threshold.
#[derive(Clone, Copy, Debug)]
struct Drag {
    button: PointerButton,
    start: OrbitCamera,
    press: Pos2,
}

/// The 3D view's own state: its orbit camera, the requests it has served, where it drew and
/// this frame's discs.
#[derive(Default)]
pub struct World3dView {
    camera: OrbitCamera,
    /// The fit request last served.
    fitted_for: Option<u64>,
    /// The document the camera's angles were set for.
    document: Option<u64>,
    drag: Option<Drag>,
    /// Where the view was drawn last frame (`None` when it was not).
    rect: Option<Rect>,
    /// The spheres in front of the camera and on the screen, back to front.
    discs: Vec<Disc>,
    meshes: MeshPool,
}

/// The box holding the walls and every sphere (or box): what fitting shows.
fn scene_box(state: Pane<'_>) -> Aabb<Vec3> {
    let mut b = state.session.doc().world;
    for s in &state.snapshot.spheres {
        b.min = b.min.min(s.tight_world.min);
        b.max = b.max.max(s.tight_world.max);
    }
    b
}

/// The twelve edges of a box, as pairs of corner indices (bit k of a corner's index picks
/// the box's max on axis k, else its min).
const EDGES: [(usize, usize); 12] = [
    (0, 1),
    (2, 3),
    (4, 5),
    (6, 7),
    (0, 2),
    (1, 3),
    (4, 6),
    (5, 7),
    (0, 4),
    (1, 5),
    (2, 6),
    (3, 7),
];

/// One frame's drawing: the mesh, the projection and how far things fade.
struct Painter3d<'a> {
    m: MeshBuilder,
    p: &'a Projector,
    viewport: Rect,
    background: Color32,
    /// Depths from which (`.0`) over which (`.1`) colours fade towards the background.
    fog: (f32, f32),
}

impl Painter3d<'_> {
    /// `color` faded towards the background as far as `depth` is.
    fn faded(&self, color: Color32, depth: f32) -> Color32 {
        let t = ((depth - self.fog.0) / self.fog.1).clamp(0.0, 1.0);
        lerp_color(color, self.background, FOG * t)
    }

    /// A segment between two camera-frame points, cut at the near plane, faded by its
    /// middle's depth.
    fn segment(&mut self, a: CameraPoint, b: CameraPoint, width: f32, color: Color32) {
        if let Some((a, b, depth)) = self.p.segment(a, b) {
            let color = self.faded(color, depth);
            self.screen_segment(a, b, width, color);
        }
    }

    /// A screen segment, left out when it lies wholly to one side of the viewport.
    fn screen_segment(&mut self, a: Pos2, b: Pos2, width: f32, color: Color32) {
        let v = self.viewport;
        if (a.x < v.min.x && b.x < v.min.x)
            || (a.x > v.max.x && b.x > v.max.x)
            || (a.y < v.min.y && b.y < v.min.y)
            || (a.y > v.max.y && b.y > v.max.y)
        {
            return;
        }
        self.m.thin_line(a, b, width, color);
    }

    /// A world segment.
    fn world_segment(&mut self, a: Vec3, b: Vec3, width: f32, color: Color32) {
        let (a, b) = (self.p.to_camera(a), self.p.to_camera(b));
        self.segment(a, b, width, color);
    }

    /// The twelve edges of a box, faded by its centre's depth; a box off the screen is left
    /// out, and one under two points across is a dot.
    fn wire_box(&mut self, b: &Aabb<Vec3>, width: f32, color: Color32) {
        let p = self.p;
        let center = p.to_camera((b.min + b.max) * 0.5);
        let reach = ((b.max - b.min) * 0.5).length();
        if center.depth + reach < p.near {
            return;
        }
        let color = self.faded(color, center.depth);
        let mut small = false;
        if center.depth - reach > p.near {
            // Wholly in front: its bounding sphere's disc bounds it on the screen.
            let at = p.screen_of(center);
            let radius = reach * p.scale_at(center.depth - reach);
            if !self.viewport.expand(radius).contains(at) {
                return;
            }
            let across = (b.max - b.min).max_element() * p.scale_at(center.depth);
            if across < 2.0 {
                self.m.dot(at, 1.0, color);
                return;
            }
            small = across < SMALL_BOX;
        }
        // The corners from the least one and the three edge vectors, in the camera's frame.
        let c0 = p.to_camera(b.min);
        let size = b.max - b.min;
        let along = |axis: Vec3, length: f32| {
            (
                axis.dot(p.right) * length,
                axis.dot(p.up) * length,
                axis.dot(p.forward) * length,
            )
        };
        let steps = [
            along(Vec3::X, size.x),
            along(Vec3::Y, size.y),
            along(Vec3::Z, size.z),
        ];
        let c: [CameraPoint; 8] = std::array::from_fn(|k| {
            let mut q = c0;
            for (bit, (x, y, z)) in steps.iter().enumerate() {
                if k & (1 << bit) != 0 {
                    q.x += x;
                    q.y += y;
                    q.depth += z;
                }
            }
            q
        });
        if small {
            // Wholly in front and a few points across: the rectangle around its corners
            // looks the same as its twelve edges, at a sixth of the vertices.
            let mut r = Rect::NOTHING;
            for q in c {
                r.extend_with(p.screen_of(q));
            }
            self.m.rect_outline(r, width, color);
            return;
        }
        for (i, j) in EDGES {
            if let Some((a, b)) = p.clip(c[i], c[j]) {
                self.screen_segment(p.screen_of(a), p.screen_of(b), width, color);
            }
        }
    }
}

impl World3dView {
    /// The 3D view, filling `ui`.
    pub fn ui(&mut self, ui: &mut egui::Ui, state: Pane<'_>, out: &mut Vec<Command>) {
        let (response, painter) = ui.allocate_painter(ui.available_size(), Sense::click_and_drag());
        let viewport = response.rect;
        self.rect = Some(viewport);
        if self.document != Some(state.session.id()) {
            self.document = Some(state.session.id());
            self.camera.reset_angles();
        }
        if self.fitted_for != Some(state.view.fit_3d_request)
            && viewport.width() > 10.0
            && viewport.height() > 10.0
        {
            let b = scene_box(state);
            self.camera.fit(viewport, b.min, b.max);
            self.fitted_for = Some(state.view.fit_3d_request);
        }
        if state.view.interactive {
            self.input(ui, &response, viewport, out);
        }
        let p = self.camera.projector(viewport);
        self.project_spheres(state.snapshot, &p, viewport);

        let mut hover = None;
        if state.view.interactive {
            if response.clicked() {
                let pick = response.interact_pointer_pos().and_then(|at| self.pick(at));
                out.push(Command::Select(pick.map(Pick::Sphere)));
            }
            if let Some(at) = response.hover_pos() {
                hover = self.pick(at).map(Pick::Sphere);
                out.push(Command::Hover(hover));
            }
        }

        let started = Instant::now();
        let pal = Palette::for_dark_mode(ui.visuals().dark_mode);
        let (cut, skipped) = self.draw(state, &p, &painter, viewport, pal);
        out.push(Command::AddDrawTime(started.elapsed().as_secs_f32() * 1e3));

        let mut overlay = format!(
            "3D · {} · drag: orbit · right-drag: pan · wheel: zoom · F: fit",
            state.sim.step_text()
        );
        if let Some(depth) = cut {
            overlay.push_str(&format!(
                " · branches drawn to depth {depth} of {} (level of detail)",
                state.snapshot.max_depth
            ));
        }
        overlay.push_str(&super::world::skipped_note(skipped));
        painter.text(
            viewport.left_top() + vec2(6.0, 4.0),
            Align2::LEFT_TOP,
            overlay,
            FontId::proportional(11.0),
            ui.visuals().weak_text_color(),
        );
        if let Some(pick) = hover
            && self.drag.is_none()
        {
            response.on_hover_ui_at_pointer(|ui| pick_tooltip(state, ui, pick));
        }
    }
}

impl World3dView {
    /// Where the view was drawn last frame, if it was.
    #[must_use]
    pub fn rect(&self) -> Option<Rect> {
        self.rect
    }

    /// Notes that the view is not shown this frame.
    pub fn hide(&mut self) {
        self.rect = None;
    }

    /// The orbit camera.
    #[must_use]
    pub fn camera(&self) -> OrbitCamera {
        self.camera
    }

    /// Where sphere `id`'s centre was drawn last frame (`None` when the view was not drawn or
    /// the sphere is behind the camera).
    #[must_use]
    pub fn sphere_screen_pos(&self, snapshot: &Snapshot, id: u32) -> Option<Pos2> {
        let viewport = self.rect?;
        let sphere = snapshot.sphere(id)?;
        self.camera.projector(viewport).project(sphere.center_world)
    }

    /// Orbit (primary drag), pan (secondary or middle drag), zoom (wheel, pinch) and fit
    /// (double-click).
    fn input(
        &mut self,
        ui: &egui::Ui,
        response: &egui::Response,
        viewport: Rect,
        out: &mut Vec<Command>,
    ) {
        if response.hover_pos().is_some() {
            let (scroll, zoom) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
            let factor = zoom * (scroll * ZOOM_PER_SCROLL_POINT).exp();
            if (factor - 1.0).abs() > 1e-4 {
                self.camera.zoom(factor);
            }
        }
        if response.drag_started() {
            let button = [
                PointerButton::Primary,
                PointerButton::Secondary,
                PointerButton::Middle,
            ]
            .into_iter()
            .find(|&b| response.dragged_by(b));
            let press = ui.input(|i| i.pointer.press_origin());
            self.drag = button.zip(press).map(|(button, press)| Drag {
                button,
                start: self.camera,
                press,
            });
        }
        if let Some(drag) = self.drag
            && response.dragged()
            && let Some(pointer) = ui.input(|i| i.pointer.latest_pos())
        {
            let delta = pointer - drag.press;
            let distance = self.camera.distance;
            self.camera = OrbitCamera {
                distance,
                ..drag.start
            };
            match drag.button {
                PointerButton::Primary => self.camera.orbit(delta),
                _ => self.camera.pan(viewport, delta),
            }
        }
        if response.drag_stopped() || !response.dragged() {
            self.drag = None;
        }
        if response.double_clicked() {
            out.push(Command::Fit);
        }
    }

    /// Fills `self.discs` with the spheres in front of the camera and on the screen, back to
    /// front.
    fn project_spheres(&mut self, snapshot: &Snapshot, p: &Projector, viewport: Rect) {
        self.discs.clear();
        for (index, s) in snapshot.spheres.iter().enumerate() {
            let c = p.to_camera(s.center_world);
            if c.depth < p.near {
                continue;
            }
            let radius = s.radius * p.scale_at(c.depth);
            let center = p.screen_of(c);
            if !viewport.expand(radius).contains(center) {
                continue;
            }
            self.discs.push(Disc {
                index,
                id: s.id,
                center,
                radius,
                depth: c.depth,
            });
        }
        // Back to front; equal depths in id order, so the picture is deterministic.
        self.discs
            .sort_unstable_by(|a, b| b.depth.total_cmp(&a.depth).then(a.index.cmp(&b.index)));
    }

    /// The nearest sphere whose disc holds screen point `at`.
    fn pick(&self, at: Pos2) -> Option<u32> {
        self.discs
            .iter()
            .rev()
            .find(|d| (at - d.center).length() <= d.radius.max(2.0) + PICK_TOLERANCE)
            .map(|d| d.id)
    }
}

impl World3dView {
    /// Builds and paints the floor grid, every visible layer, the selection and hover, the
    /// labels and the axis gizmo. Returns the deepest branch depth drawn when the budget cut
    /// deeper ones, and the shapes left out because the mesh was full.
    fn draw(
        &self,
        state: Pane<'_>,
        p: &Projector,
        painter: &egui::Painter,
        viewport: Rect,
        pal: Palette,
    ) -> (Option<u32>, usize) {
        let snap = &state.snapshot;
        let layers = state.prefs.layers;
        painter.rect_filled(viewport, 0.0, pal.background);
        let world = state.session.doc().world;
        let scene = scene_box(state);
        let radius = ((scene.max - scene.min) * 0.5).length();
        let middle = p.to_camera((scene.min + scene.max) * 0.5).depth;
        let mut d = Painter3d {
            m: self.meshes.builder(WORLD_3D_MESH),
            p,
            viewport,
            background: pal.background,
            fog: (middle - radius, (2.0 * radius).max(1e-6)),
        };
        d.m.limit_ink(viewport);
        let mut cut = None;
        let mut labels: Vec<(Pos2, String, f32, Color32)> = Vec::new();

        // The floor: a grid under the world, on its least y.
        let grid = lerp_color(pal.walls, pal.background, 0.55);
        for k in 0..=GRID_LINES {
            let t = k as f32 / GRID_LINES as f32;
            let x = world.min.x + (world.max.x - world.min.x) * t;
            let z = world.min.z + (world.max.z - world.min.z) * t;
            let y = world.min.y;
            d.world_segment(
                Vec3::new(x, y, world.min.z),
                Vec3::new(x, y, world.max.z),
                1.0,
                grid,
            );
            d.world_segment(
                Vec3::new(world.min.x, y, z),
                Vec3::new(world.max.x, y, z),
                1.0,
                grid,
            );
        }

        // Static boxes (level geometry) under every layer.
        for b in &snap.statics {
            d.wire_box(&b.world, 1.25, pal.static_box);
        }
        for layer in Layer::ALL {
            if !layers.get(layer) {
                continue;
            }
            match layer {
                Layer::Walls => d.wire_box(&world, 1.5, pal.walls),
                Layer::Branches => {
                    let (lo, hi, was_cut) = branch_depth_limit_within(state, BRANCH_BUDGET_3D);
                    cut = was_cut.then_some(hi);
                    let height = snap.max_depth.max(1);
                    for (n, b) in snap.nodes.iter().zip(&snap.node_boxes_3d) {
                        if n.children.is_some() && (lo..=hi).contains(&n.depth) {
                            d.wire_box(b, 1.0, pal.branch(n.depth, height));
                        }
                    }
                }
                Layer::Leaves => {
                    for b in snap.fat_boxes_3d.iter().flatten() {
                        d.wire_box(b, 1.0, pal.leaf);
                    }
                }
                Layer::Tight | Layer::Contacts => {
                    let (want, color, width) = if layer == Layer::Contacts {
                        (true, pal.contact, 1.5)
                    } else {
                        (false, pal.tight, 1.0)
                    };
                    for s in snap.spheres.iter().filter(|s| s.colliding == want) {
                        d.wire_box(&s.tight_world, width, color);
                    }
                }
                Layer::Pairs => {
                    for &(i, j) in &snap.pairs {
                        let (a, b) = (&snap.spheres[i], &snap.spheres[j]);
                        d.world_segment(a.center_world, b.center_world, 0.75, pal.pair);
                    }
                }
                Layer::Spheres => {
                    // A trace's boxes: outlined, colliding ones and static ones in their
                    // colours (as in the plane view).
                    for s in snap.spheres.iter().filter(|s| s.shape.is_box()) {
                        let color = match s.shape {
                            ItemShape::StaticBox => pal.static_box,
                            _ if s.colliding => pal.contact,
                            _ => pal.sphere,
                        };
                        d.wire_box(&s.tight_world, 1.25, color);
                    }
                    for disc in &self.discs {
                        if snap.spheres[disc.index].shape.is_box() {
                            continue;
                        }
                        let color = d.faded(pal.sphere, disc.depth);
                        if disc.radius < 1.0 {
                            d.m.dot(disc.center, 1.5, color);
                        } else {
                            if disc.radius >= 3.0 {
                                d.m.circle_filled(
                                    disc.center,
                                    disc.radius,
                                    color.gamma_multiply(0.16),
                                );
                            }
                            // A soft highlight up and to the left, so a disc reads as a ball.
                            if disc.radius >= 8.0 {
                                let r = disc.radius;
                                let spot = disc.center + vec2(-0.3 * r, -0.3 * r);
                                d.m.circle_filled(spot, 0.45 * r, color.gamma_multiply(0.14));
                            }
                            d.m.circle_outline(disc.center, disc.radius, 1.25, color);
                        }
                    }
                }
                Layer::Velocity => {
                    for disc in &self.discs {
                        let s = &snap.spheres[disc.index];
                        let Some(tip) = p.project(s.center_world + s.velocity_world) else {
                            continue;
                        };
                        if (tip - disc.center).length() >= 2.0 {
                            let color = d.faded(pal.velocity, disc.depth);
                            d.m.arrow(disc.center, tip, 1.25, 6.0, color);
                        }
                    }
                }
                Layer::Labels => {
                    for disc in self.discs.iter().rev() {
                        if labels.len() >= LABEL_BUDGET {
                            break;
                        }
                        if disc.radius < 6.0 {
                            continue;
                        }
                        let s = &snap.spheres[disc.index];
                        let text = s.label.clone().unwrap_or_else(|| s.id.to_string());
                        let color = d.faded(pal.sphere, disc.depth);
                        labels.push((
                            disc.center,
                            text,
                            (disc.radius * 0.8).clamp(9.0, 16.0),
                            color,
                        ));
                    }
                }
            }
        }

        // Hover and selection, orange, on top.
        for (pick, width) in [(state.view.selection, 2.5), (state.view.hover, 2.0)] {
            match pick {
                Some(Pick::Sphere(id)) => {
                    let Some(i) = snap.sphere_index(id) else {
                        continue;
                    };
                    if let Some(Some(b)) = snap.fat_boxes_3d.get(i) {
                        d.wire_box(b, width * 0.6, pal.highlight);
                    }
                    if let Some(disc) = self.discs.iter().find(|disc| disc.index == i) {
                        d.m.circle_outline(disc.center, disc.radius.max(3.0), width, pal.highlight);
                    }
                }
                Some(Pick::Node(node)) => {
                    if let Some(b) = snap
                        .node_index(node)
                        .and_then(|i| snap.node_boxes_3d.get(i))
                    {
                        d.wire_box(b, width, pal.highlight);
                    }
                }
                None => {}
            }
        }
        gizmo(&mut d.m, p, viewport, &mut labels);
        let skipped = d.m.skipped();
        if let Some(shape) = self.meshes.finish(d.m) {
            paint_alone(painter, shape);
        }
        for (pos, text, size, color) in labels {
            painter.text(
                pos,
                Align2::CENTER_CENTER,
                text,
                FontId::proportional(size),
                color,
            );
        }
        (cut, skipped)
    }
}

/// The axis gizmo in the bottom-left corner: x red, y green, z blue, turning with the camera.
fn gizmo(
    m: &mut MeshBuilder,
    p: &Projector,
    viewport: Rect,
    labels: &mut Vec<(Pos2, String, f32, Color32)>,
) {
    const LENGTH: f32 = 26.0;
    let origin = viewport.left_bottom() + vec2(LENGTH + 16.0, -(LENGTH + 16.0));
    let axes = [
        (Vec3::X, "x", Color32::from_rgb(230, 70, 70)),
        (Vec3::Y, "y", Color32::from_rgb(70, 200, 70)),
        (Vec3::Z, "z", Color32::from_rgb(80, 130, 255)),
    ];
    for (axis, name, color) in axes {
        let dir = vec2(axis.dot(p.right), -axis.dot(p.up));
        let tip = origin + dir * LENGTH;
        m.line(origin, tip, 2.0, color);
        labels.push((origin + dir * (LENGTH + 9.0), name.to_owned(), 11.0, color));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::WorldRect;
    use crate::snapshot::SphereItem;
    use egui::pos2;
    use glam::Vec2;

    fn sphere(id: u32, center: Vec3, radius: f32) -> SphereItem {
        let r = WorldRect::new(Vec2::ZERO, Vec2::ZERO);
        SphereItem {
            shape: ItemShape::Sphere,
            id,
            label: None,
            center_world: center,
            center: Vec2::ZERO,
            radius,
            velocity_world: Vec3::ZERO,
            velocity: Vec2::ZERO,
            tight: r,
            tight_world: Aabb::new(center - Vec3::splat(radius), center + Vec3::splat(radius)),
            fat: None,
            colliding: false,
            node: None,
        }
    }

    #[test]
    fn spheres_are_drawn_back_to_front_and_the_nearest_is_picked() {
        let mut view = World3dView {
            camera: OrbitCamera {
                target: Vec3::ZERO,
                yaw: 0.0,
                pitch: 0.0,
                distance: 20.0,
            },
            ..World3dView::default()
        };
        let viewport = Rect::from_min_size(pos2(0.0, 0.0), vec2(400.0, 300.0));
        // Looking down -z from z = 20: sphere 3 is nearest, 1 farthest, 4 behind the camera
        // and 5 far off to the side.
        let spheres = vec![
            sphere(1, Vec3::new(0.0, 0.0, -10.0), 6.0),
            sphere(2, Vec3::new(0.5, 0.0, 0.0), 2.0),
            sphere(3, Vec3::new(0.0, 0.0, 10.0), 1.0),
            sphere(4, Vec3::new(0.0, 0.0, 25.0), 1.0),
            sphere(5, Vec3::new(500.0, 0.0, 0.0), 1.0),
        ];
        let snapshot = Snapshot {
            spheres,
            ..Snapshot::default()
        };
        let p = view.camera.projector(viewport);
        view.project_spheres(&snapshot, &p, viewport);
        let ids: Vec<u32> = view.discs.iter().map(|d| d.id).collect();
        assert_eq!(ids, vec![1, 2, 3]);
        assert_eq!(view.discs[2].depth, 10.0);
        // Sphere 3 covers the centre in front of the others.
        assert_eq!(view.pick(viewport.center()), Some(3));
        // Sphere 1's disc reaches farther than the nearer ones.
        let r1 = view.discs[0].radius;
        assert!((r1 - 6.0 * p.focal / 30.0).abs() < 1e-3);
        let edge = viewport.center() + vec2(0.0, r1 - 1.0);
        assert_eq!(view.pick(edge), Some(1));
        assert_eq!(view.pick(edge + vec2(0.0, PICK_TOLERANCE + 2.0)), None);
    }
}
