//! Hand-built triangle meshes: one `egui::Shape::Mesh` per layer instead of one painter call
//! per shape (at 10,000 spheres painter calls cost 16-40 ms a frame, one mesh about 3 ms).
//! Strokes get a one-point feathered edge, as egui's own tessellator does, so they stay smooth.

use eframe::egui;

use egui::epaint::{Vertex, WHITE_UV};
use egui::{Color32, Mesh, Pos2, Rect, Shape, Vec2, vec2};
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

/// The width of the soft edge on each side of a stroke, in screen points.
const FEATHER: f32 = 0.5;

/// Outlines smaller than this across, in screen points, are drawn without a soft edge.
const SMALL_SHAPE: f32 = 12.0;

/// The most vertices the world view's mesh takes, 2D or 3D (a frame shows one of the two):
/// 10,000,000 (200 MB at 20 bytes a vertex). egui hands the GPU every vertex of a frame in one
/// buffer, and wgpu refuses a buffer over 256 MiB (its default limit, 13.4 million vertices)
/// by ending the program: 100,000 spheres at one point, each drawn large, made 14 million.
/// Past the cap a shape is left out whole and counted ([`MeshBuilder::skipped`]), and the
/// view says so. A million random spheres with every layer on want about 10.5 million (no
/// level of detail thins the dots of spheres under a pixel): some 115,000 shapes of the
/// layers drawn last are left out.
pub const MAX_WORLD_VERTICES: usize = 10_000_000;

/// The most vertices the tree diagram's mesh takes: with the world's, 12.5 million, under
/// the 13.4 million a frame may hold, with room for the panels and the text.
pub const MAX_TREE_VERTICES: usize = 2_500_000;

/// The most ink a view's mesh may lay down, in multiples of the view's area: the screen area
/// its shapes cover, counted once per shape (a pixel under 64 shapes counts 64 times). A GPU
/// fills that many layers of a full-HD view in well under a millisecond; a software renderer
/// (llvmpipe, as under Xvfb or in a virtual machine) shades each covered pixel on the CPU, and
/// 50,000 spheres drawn large at one point covered the view some 80,000 times over: no frame
/// within five minutes. Past the cap, as past the vertex cap, whole shapes are left out and
/// counted. Views of real scenes lay down a few layers (a 5,000-sphere scene about 3).
pub const MAX_OVERDRAW: f32 = 64.0;

/// The world view's entry in the [`MeshPool`].
pub const WORLD_MESH: usize = 0;
/// The tree diagram's entry in the [`MeshPool`].
pub const TREE_MESH: usize = 1;
/// The 3D view's entry in the [`MeshPool`].
pub const WORLD_3D_MESH: usize = 2;

/// Accumulates triangles, at most its cap of vertices; [`MeshPool::finish`] (or
/// [`MeshBuilder::into_shape`]) hands them to egui.
pub struct MeshBuilder {
    mesh: Mesh,
    /// The pool entry the buffers came from, to return them to.
    home: Option<(usize, usize)>,
    /// The most vertices it takes ([`MAX_WORLD_VERTICES`], or [`MAX_TREE_VERTICES`] for the
    /// tree diagram's pool entry).
    cap: usize,
    /// Shapes left out because they would have passed a cap.
    skipped: usize,
    /// The view's rectangle: only the part of a shape inside it counts as ink
    /// ([`MeshBuilder::limit_ink`]; everything until then).
    clip: Rect,
    /// The screen area the shapes so far cover, in square points, counted once per shape.
    ink: f64,
    /// The most ink the mesh takes (unlimited until [`MeshBuilder::limit_ink`]).
    ink_cap: f64,
}

impl Default for MeshBuilder {
    fn default() -> Self {
        MeshBuilder {
            mesh: Mesh::default(),
            home: None,
            cap: MAX_WORLD_VERTICES,
            skipped: 0,
            clip: Rect::EVERYTHING,
            ink: 0.0,
            ink_cap: f64::INFINITY,
        }
    }
}

/// The vertex cap of a view's pool entry.
fn cap_of(slot: usize) -> usize {
    if slot == TREE_MESH {
        MAX_TREE_VERTICES
    } else {
        MAX_WORLD_VERTICES
    }
}

/// Mesh buffers kept from frame to frame, a few per view.
///
/// egui takes a mesh as an `Arc<Mesh>` and drops its reference once the frame is painted. The
/// pool keeps a reference too, so the next frame finds the buffers unshared and refills them:
/// at 10,000 spheres a view's mesh is ten megabytes, and fresh buffers every frame cost page
/// faults and copies as they grew. An entry still shared (a test harness keeps the last
/// frame's output) is skipped; each view has up to [`MeshPool::DEPTH`] entries.
#[derive(Debug, Default)]
pub struct MeshPool(RefCell<Vec<Vec<Arc<Mesh>>>>);

impl MeshPool {
    /// Buffers kept per view.
    pub const DEPTH: usize = 3;

    /// An empty builder for view `slot`, on a pooled buffer when one is free.
    #[must_use]
    pub fn builder(&self, slot: usize) -> MeshBuilder {
        let mut pool = self.0.borrow_mut();
        if pool.len() <= slot {
            pool.resize_with(slot + 1, Vec::new);
        }
        let entries = &mut pool[slot];
        for (k, entry) in entries.iter_mut().enumerate() {
            if let Some(mesh) = Arc::get_mut(entry) {
                let mut mesh = std::mem::take(mesh);
                // Not `Mesh::clear`: in epaint 0.37 it drops the vertex buffer.
                mesh.vertices.clear();
                mesh.indices.clear();
                mesh.texture_id = egui::TextureId::default();
                return MeshBuilder {
                    mesh,
                    home: Some((slot, k)),
                    cap: cap_of(slot),
                    ..MeshBuilder::new()
                };
            }
        }
        if entries.len() < Self::DEPTH {
            entries.push(Arc::new(Mesh::default()));
            return MeshBuilder {
                home: Some((slot, entries.len() - 1)),
                cap: cap_of(slot),
                ..MeshBuilder::new()
            };
        }
        MeshBuilder {
            cap: cap_of(slot),
            ..MeshBuilder::new()
        }
    }

    /// The finished shape (`None` when nothing was added); the buffers stay in the pool.
    #[must_use]
    pub fn finish(&self, builder: MeshBuilder) -> Option<Shape> {
        let MeshBuilder { mesh, home, .. } = builder;
        let empty = mesh.is_empty();
        let mut pool = self.0.borrow_mut();
        // Nobody else can hold the entry while its buffers are out; a builder from outside
        // the pool (or one it cannot take back) hands its mesh over on its own.
        let entry = home.and_then(|(slot, k)| pool.get_mut(slot)?.get_mut(k));
        if let Some(entry) = entry
            && let Some(pooled) = Arc::get_mut(entry)
        {
            *pooled = mesh;
            return (!empty).then(|| Shape::Mesh(Arc::clone(entry)));
        }
        (!empty).then(|| Shape::mesh(mesh))
    }
}

/// Paints a big mesh so egui's tessellator gives it an output mesh of its own.
///
/// The tessellator appends every shape into one output mesh per run of shapes with the same
/// clip rectangle. A text painted after a mesh of ten megabytes then grew that output by
/// doubling and copied the whole mesh again (a tenth of a frame at 10,000 spheres). A clip
/// rectangle a hundredth of a point smaller (nothing anyone can see) starts a run of its own,
/// which holds the mesh alone, copied once.
pub fn paint_alone(painter: &egui::Painter, shape: Shape) {
    painter
        .with_clip_rect(painter.clip_rect().shrink(0.01))
        .add(shape);
}

impl MeshBuilder {
    /// An empty mesh.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of vertices so far.
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.mesh.vertices.len()
    }

    /// Shapes left out so far because the mesh was full (its cap of vertices).
    #[must_use]
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// Limits the ink to [`MAX_OVERDRAW`] times the area of `view`, the rectangle the mesh is
    /// painted in (shapes outside it cost the renderer no pixels and count no ink).
    pub fn limit_ink(&mut self, view: Rect) {
        self.clip = view;
        self.ink_cap = f64::from(MAX_OVERDRAW) * f64::from(view.area().max(0.0));
    }

    /// The ink so far: the screen area the shapes cover inside the view, in square points,
    /// counted once per shape.
    #[must_use]
    pub fn ink(&self) -> f64 {
        self.ink
    }

    /// True when `count` more vertices and `ink` more square points fit under the caps; else
    /// the shape that needs them is counted as left out.
    #[inline]
    fn room(&mut self, count: usize, ink: f32) -> bool {
        let ink = f64::from(ink.max(0.0));
        let fits = self.mesh.vertices.len() + count <= self.cap && self.ink + ink <= self.ink_cap;
        if fits {
            self.ink += ink;
        } else {
            self.skipped += 1;
        }
        fits
    }

    /// The area of `rect` inside the view (0 when outside it, or not a number).
    fn visible_area(&self, rect: Rect) -> f32 {
        let r = rect.intersect(self.clip);
        let area = r.width().max(0.0) * r.height().max(0.0);
        if area.is_nan() { 0.0 } else { area }
    }

    /// The length of the segment from `a` to `b` inside the view (Liang-Barsky clipping).
    fn visible_length(&self, a: Pos2, b: Pos2) -> f32 {
        let d = b - a;
        let (mut t0, mut t1) = (0.0_f32, 1.0_f32);
        for (p, q) in [
            (-d.x, a.x - self.clip.min.x),
            (d.x, self.clip.max.x - a.x),
            (-d.y, a.y - self.clip.min.y),
            (d.y, self.clip.max.y - a.y),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    return 0.0;
                }
            } else {
                let t = q / p;
                if p < 0.0 {
                    t0 = t0.max(t);
                } else {
                    t1 = t1.min(t);
                }
            }
        }
        let length = (t1 - t0).max(0.0) * d.length();
        if length.is_nan() { 0.0 } else { length }
    }

    /// The ink of a stroke of `width` along `length` points: the stroke's pixels, soft edges
    /// and all (a stroke under a point wide still covers one).
    fn stroke_ink(width: f32, length: f32) -> f32 {
        (width.max(1.0) + 2.0 * FEATHER) * length
    }

    /// The finished shape (`None` when nothing was added), outside any pool.
    #[must_use]
    pub fn into_shape(self) -> Option<Shape> {
        (!self.mesh.is_empty()).then(|| Shape::mesh(self.mesh))
    }

    #[inline]
    fn vertex(&mut self, pos: Pos2, color: Color32) -> u32 {
        let i = self.mesh.vertices.len() as u32;
        self.mesh.vertices.push(Vertex {
            pos,
            uv: WHITE_UV,
            color,
        });
        i
    }

    #[inline]
    fn quad(&mut self, a: u32, b: u32, c: u32, d: u32) {
        self.mesh.indices.extend_from_slice(&[a, b, c, a, c, d]);
    }

    /// The profile of a stroke of `width`: offsets from the centre line and their colours, from
    /// the inside out, and how many of the four are used. Strokes thinner than a point fade
    /// instead of thinning; strokes with a solid core under half a point wide (the usual
    /// 1-1.5 point box outlines) use one centre vertex for the core, which looks the same and
    /// saves a quarter of the vertices and a third of the triangles.
    fn profile(width: f32, color: Color32) -> ([f32; 4], [Color32; 4], usize) {
        let (half, color) = if width >= 2.0 * FEATHER {
            (0.5 * width - FEATHER, color)
        } else {
            (
                0.0,
                color.gamma_multiply((width / (2.0 * FEATHER)).max(0.0)),
            )
        };
        if half < 0.25 {
            let edge = half + FEATHER;
            return (
                [-edge, 0.0, edge, 0.0],
                [Color32::TRANSPARENT, color, Color32::TRANSPARENT, color],
                3,
            );
        }
        (
            [-half - FEATHER, -half, half, half + FEATHER],
            [Color32::TRANSPARENT, color, color, Color32::TRANSPARENT],
            4,
        )
    }

    /// Adds a closed ring stroke: `point(k, offset)` gives the k-th corner pushed `offset`
    /// points outwards.
    ///
    /// A `small` ring (a few points across) gets no soft edge: at that size nobody sees the
    /// difference, and a view of 10,000 spheres draws half the vertices.
    fn ring(
        &mut self,
        n: usize,
        width: f32,
        color: Color32,
        small: bool,
        ink: f32,
        point: impl Fn(usize, f32) -> Pos2,
    ) {
        if n < 2 {
            return;
        }
        let (offsets, colors, count) = if small {
            let half = 0.5 * width.max(1.0);
            let color = color.gamma_multiply(width.clamp(0.0, 1.0));
            ([-half, half, 0.0, 0.0], [color; 4], 2)
        } else {
            Self::profile(width, color)
        };
        if !self.room(count * n, ink) {
            return;
        }
        let base = self.mesh.vertices.len() as u32;
        self.mesh.vertices.reserve(count * n);
        self.mesh.indices.reserve(6 * (count - 1) * n);
        for k in 0..n {
            for (offset, color) in offsets.iter().zip(colors).take(count) {
                self.vertex(point(k, *offset), color);
            }
        }
        let stride = count as u32;
        for k in 0..n {
            let a = base + stride * k as u32;
            let b = base + stride * ((k + 1) % n) as u32;
            for j in 0..stride - 1 {
                self.quad(a + j, b + j, b + j + 1, a + j + 1);
            }
        }
    }

    /// The outline of an axis-aligned rectangle, stroke centred on the edge.
    pub fn rect_outline(&mut self, rect: Rect, width: f32, color: Color32) {
        if rect.width().max(rect.height()) < SMALL_SHAPE {
            self.small_rect_outline(rect, width, color);
            return;
        }
        let ink = self.outline_ink(rect, width);
        let corners = rect_corners(rect);
        self.ring(4, width, color, false, ink, |k, d| {
            corners[k].0 + corners[k].1 * d
        });
    }

    /// The ink of a rectangle's outline: its four edges' lengths inside the view (each edge is
    /// axis-aligned: its overlap with the view's span, when its line crosses the view).
    fn outline_ink(&self, rect: Rect, width: f32) -> f32 {
        let c = self.clip;
        // `max` drops a NaN, so a rectangle that is not a number counts no ink.
        let overlap = |lo: f32, hi: f32, view_lo: f32, view_hi: f32| {
            (hi.min(view_hi) - lo.max(view_lo)).max(0.0)
        };
        let within = |v: f32, lo: f32, hi: f32| f32::from(u8::from(v >= lo && v <= hi));
        let across = overlap(rect.min.x, rect.max.x, c.min.x, c.max.x);
        let down = overlap(rect.min.y, rect.max.y, c.min.y, c.max.y);
        let length = across
            * (within(rect.min.y, c.min.y, c.max.y) + within(rect.max.y, c.min.y, c.max.y))
            + down * (within(rect.min.x, c.min.x, c.max.x) + within(rect.max.x, c.min.x, c.max.x));
        Self::stroke_ink(width, length)
    }

    /// A small rectangle's outline: the [`MeshBuilder::ring`] of four corners without a soft
    /// edge, written out (a view of 10,000 spheres draws 40,000 of them a frame).
    fn small_rect_outline(&mut self, rect: Rect, width: f32, color: Color32) {
        let ink = self.outline_ink(rect, width);
        if !self.room(8, ink) {
            return;
        }
        let h = 0.5 * width.max(1.0);
        let color = color.gamma_multiply(width.clamp(0.0, 1.0));
        let (x0, y0, x1, y1) = (rect.min.x, rect.min.y, rect.max.x, rect.max.y);
        let v = |x: f32, y: f32| Vertex {
            pos: Pos2::new(x, y),
            uv: WHITE_UV,
            color,
        };
        let b = self.mesh.vertices.len() as u32;
        // Per corner, inner then outer, clockwise from the top left (as `ring` orders them).
        self.mesh.vertices.extend_from_slice(&[
            v(x0 + h, y0 + h),
            v(x0 - h, y0 - h),
            v(x1 - h, y0 + h),
            v(x1 + h, y0 - h),
            v(x1 - h, y1 - h),
            v(x1 + h, y1 + h),
            v(x0 + h, y1 - h),
            v(x0 - h, y1 + h),
        ]);
        let quad = |a: u32, c: u32| [b + a, b + c, b + c + 1, b + a, b + c + 1, b + a + 1];
        let [q0, q1, q2, q3] = [quad(0, 2), quad(2, 4), quad(4, 6), quad(6, 0)];
        self.mesh.indices.extend_from_slice(&q0);
        self.mesh.indices.extend_from_slice(&q1);
        self.mesh.indices.extend_from_slice(&q2);
        self.mesh.indices.extend_from_slice(&q3);
    }

    /// A filled axis-aligned rectangle (no feathering: meant for fills and points).
    pub fn rect_filled(&mut self, rect: Rect, color: Color32) {
        if !self.room(4, self.visible_area(rect)) {
            return;
        }
        let a = self.vertex(rect.left_top(), color);
        let b = self.vertex(rect.right_top(), color);
        let c = self.vertex(rect.right_bottom(), color);
        let d = self.vertex(rect.left_bottom(), color);
        self.quad(a, b, c, d);
    }

    /// A square dot of side `size` centred on `center` (for things smaller than a pixel).
    pub fn dot(&mut self, center: Pos2, size: f32, color: Color32) {
        self.rect_filled(Rect::from_center_size(center, vec2(size, size)), color);
    }

    /// How many segments a circle of this screen radius needs to look round.
    #[must_use]
    pub fn circle_segments(radius: f32) -> usize {
        // A hexagon strays a third of a point from a circle of 2.5 points: nobody sees it.
        if radius.is_nan() || radius < 2.5 {
            return 6;
        }
        (radius.sqrt() * 4.0).clamp(8.0, MAX_SEGMENTS as f32) as usize
    }

    /// The outline of a circle.
    pub fn circle_outline(&mut self, center: Pos2, radius: f32, width: f32, color: Color32) {
        let n = Self::circle_segments(radius);
        let dirs = unit_circle(n);
        let bounds = Rect::from_center_size(center, Vec2::splat(2.0 * radius));
        let visible = bounds.intersect(self.clip);
        let length = (std::f32::consts::TAU * radius)
            .min(2.0 * (visible.width().max(0.0) + visible.height().max(0.0)));
        let ink = Self::stroke_ink(width, length);
        self.ring(n, width, color, 2.0 * radius < SMALL_SHAPE, ink, |k, d| {
            center + dirs[k] * (radius + d)
        });
    }

    /// A filled circle with a soft edge.
    pub fn circle_filled(&mut self, center: Pos2, radius: f32, color: Color32) {
        let n = Self::circle_segments(radius);
        let outer = radius + FEATHER;
        let bounds = Rect::from_center_size(center, Vec2::splat(2.0 * outer));
        let ink = (std::f32::consts::PI * outer * outer).min(self.visible_area(bounds));
        if !self.room(1 + 2 * n, ink) {
            return;
        }
        let dirs = unit_circle(n);
        let c0 = self.vertex(center, color);
        let base = self.mesh.vertices.len() as u32;
        let inner = (radius - FEATHER).max(0.0);
        for dir in &dirs[..n] {
            self.vertex(center + *dir * inner, color);
            self.vertex(center + *dir * outer, Color32::TRANSPARENT);
        }
        for k in 0..n as u32 {
            let a = base + 2 * k;
            let b = base + 2 * ((k + 1) % n as u32);
            self.mesh.indices.extend_from_slice(&[c0, a, b]);
            self.quad(a, b, b + 1, a + 1);
        }
    }

    /// A straight stroke from `a` to `b`.
    pub fn line(&mut self, a: Pos2, b: Pos2, width: f32, color: Color32) {
        let dir = b - a;
        let len = dir.length();
        if len.is_nan() || len <= 1e-6 {
            return;
        }
        let (_, _, count) = Self::profile(width, color);
        let ink = Self::stroke_ink(width, self.visible_length(a, b));
        if self.room(2 * count, ink) {
            self.push_line(a, b, width, color);
        }
    }

    /// The vertices of [`MeshBuilder::line`], once it has room (`a` and `b` apart).
    fn push_line(&mut self, a: Pos2, b: Pos2, width: f32, color: Color32) {
        let dir = b - a;
        let n = vec2(-dir.y, dir.x) / dir.length();
        let (offsets, colors, count) = Self::profile(width, color);
        let base = self.mesh.vertices.len() as u32;
        for (offset, color) in offsets.iter().zip(colors).take(count) {
            self.vertex(a + n * *offset, color);
            self.vertex(b + n * *offset, color);
        }
        for j in 0..count as u32 - 1 {
            let (a0, b0, a1, b1) = (
                base + 2 * j,
                base + 2 * j + 1,
                base + 2 * j + 2,
                base + 2 * j + 3,
            );
            self.quad(a0, b0, b1, a1);
        }
    }

    /// A straight stroke from `a` to `b` as one quad without a soft edge: for wireframes of
    /// tens of thousands of edges, where [`MeshBuilder::line`]'s feathering would cost half
    /// the vertices again. Strokes thinner than a point fade instead of thinning.
    pub fn thin_line(&mut self, a: Pos2, b: Pos2, width: f32, color: Color32) {
        let dir = b - a;
        let len = dir.length();
        if len.is_nan() || len <= 1e-6 {
            return;
        }
        if !self.room(4, Self::stroke_ink(width, self.visible_length(a, b))) {
            return;
        }
        let color = color.gamma_multiply(width.clamp(0.0, 1.0));
        let n = vec2(-dir.y, dir.x) * (0.5 * width.max(1.0) / len);
        let v0 = self.vertex(a + n, color);
        self.vertex(b + n, color);
        self.vertex(b - n, color);
        self.vertex(a - n, color);
        self.quad(v0, v0 + 1, v0 + 2, v0 + 3);
    }

    /// An arrow from `a` to `b` with a head of `head` points.
    pub fn arrow(&mut self, a: Pos2, b: Pos2, width: f32, head: f32, color: Color32) {
        let dir = b - a;
        let len = dir.length();
        if len.is_nan() || len <= 1e-6 {
            return;
        }
        let u = dir / len;
        let n = vec2(-u.y, u.x);
        let head = head.min(len * 0.6);
        let (left, right) = (b - u * head + n * head * 0.5, b - u * head - n * head * 0.5);
        // The three strokes together, or none (8 vertices a stroke at most).
        let length = self.visible_length(a, b)
            + self.visible_length(b, left)
            + self.visible_length(b, right);
        if !self.room(3 * 8, Self::stroke_ink(width, length)) {
            return;
        }
        self.push_line(a, b, width, color);
        for tip in [left, right] {
            if (tip - b).length() > 1e-6 {
                self.push_line(b, tip, width, color);
            }
        }
    }
}

/// A rectangle's corners, clockwise from the top left, each with the direction that pushes
/// it outwards (the ring of [`MeshBuilder::rect_outline`]).
fn rect_corners(rect: Rect) -> [(Pos2, egui::Vec2); 4] {
    [
        (rect.left_top(), vec2(-1.0, -1.0)),
        (rect.right_top(), vec2(1.0, -1.0)),
        (rect.right_bottom(), vec2(1.0, 1.0)),
        (rect.left_bottom(), vec2(-1.0, 1.0)),
    ]
}

/// The `n` directions of a circle of `n` segments (`n` in 6..=64, as
/// [`MeshBuilder::circle_segments`] gives), computed once: a sine and cosine a vertex were a
/// few percent of a frame at 10,000 spheres.
fn unit_circle(n: usize) -> &'static [egui::Vec2] {
    static TABLES: OnceLock<Vec<Vec<egui::Vec2>>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        (0..=MAX_SEGMENTS)
            .map(|n| {
                let step = std::f32::consts::TAU / n.max(1) as f32;
                (0..n)
                    .map(|k| {
                        let (s, c) = (k as f32 * step).sin_cos();
                        vec2(c, s)
                    })
                    .collect()
            })
            .collect()
    });
    &tables[n.min(MAX_SEGMENTS)]
}

/// The most segments a circle gets.
const MAX_SEGMENTS: usize = 64;

/// `rect` with its edges moved to the nearest pixel centres (`ppp` pixels per point), so a
/// one-pixel outline lands on one row of pixels in one colour rather than half on each of
/// two, and edges at the same place cover each other exactly.
#[must_use]
pub fn crisp(rect: Rect, ppp: f32) -> Rect {
    let ppp = if ppp.is_finite() && ppp > 0.0 {
        ppp
    } else {
        1.0
    };
    let snap = |v: f32| ((v * ppp).floor() + 0.5) / ppp;
    Rect::from_min_max(
        Pos2::new(snap(rect.min.x), snap(rect.min.y)),
        Pos2::new(snap(rect.max.x), snap(rect.max.y)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::pos2;

    #[test]
    fn shapes_have_valid_indices() {
        let mut m = MeshBuilder::new();
        m.rect_outline(
            Rect::from_min_size(pos2(1.0, 1.0), vec2(10.0, 5.0)),
            1.5,
            Color32::RED,
        );
        m.circle_outline(pos2(20.0, 20.0), 7.0, 1.0, Color32::WHITE);
        m.circle_filled(pos2(20.0, 20.0), 3.0, Color32::WHITE);
        m.line(pos2(0.0, 0.0), pos2(5.0, 5.0), 0.5, Color32::YELLOW);
        m.arrow(pos2(0.0, 0.0), pos2(9.0, 0.0), 1.0, 4.0, Color32::YELLOW);
        m.dot(pos2(3.0, 3.0), 1.0, Color32::BLUE);
        let before = m.vertex_count();
        m.thin_line(pos2(0.0, 0.0), pos2(0.0, 8.0), 1.0, Color32::GREEN);
        assert_eq!(m.vertex_count(), before + 4, "a thin line is one quad");
        assert_eq!(m.mesh.vertices[before].pos, pos2(-0.5, 0.0));
        // A degenerate line adds nothing.
        let before = m.vertex_count();
        m.line(pos2(1.0, 1.0), pos2(1.0, 1.0), 1.0, Color32::RED);
        m.thin_line(pos2(1.0, 1.0), pos2(1.0, 1.0), 1.0, Color32::RED);
        assert_eq!(m.vertex_count(), before);
        let Some(Shape::Mesh(mesh)) = m.into_shape() else {
            panic!("expected a mesh");
        };
        assert!(mesh.is_valid());
        assert_eq!(mesh.indices.len() % 3, 0);
    }

    #[test]
    fn crisp_edges_sit_on_pixel_centres_and_equal_edges_stay_equal() {
        let r = crisp(
            Rect::from_min_max(Pos2::new(10.2, 3.7), Pos2::new(20.9, 8.0)),
            1.0,
        );
        assert_eq!(
            r,
            Rect::from_min_max(Pos2::new(10.5, 3.5), Pos2::new(20.5, 8.5))
        );
        let hi = crisp(
            Rect::from_min_max(Pos2::new(10.2, 3.7), Pos2::new(20.9, 8.0)),
            2.0,
        );
        assert_eq!(
            hi,
            Rect::from_min_max(Pos2::new(10.25, 3.75), Pos2::new(20.75, 8.25))
        );
        // A child's edge on its parent's edge stays on it.
        let parent = crisp(
            Rect::from_min_max(Pos2::new(0.3, 0.3), Pos2::new(50.6, 40.1)),
            1.0,
        );
        let child = crisp(
            Rect::from_min_max(Pos2::new(0.3, 9.9), Pos2::new(12.0, 40.1)),
            1.0,
        );
        assert_eq!((parent.min.x, parent.max.y), (child.min.x, child.max.y));
        assert_eq!(
            crisp(
                Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
                f32::NAN
            )
            .min
            .x,
            0.5
        );
    }

    #[test]
    fn rect_outline_is_sixteen_vertices() {
        let mut m = MeshBuilder::new();
        m.rect_outline(
            Rect::from_min_size(Pos2::ZERO, vec2(40.0, 40.0)),
            2.0,
            Color32::RED,
        );
        assert_eq!(m.vertex_count(), 16);
    }

    #[test]
    fn a_thin_outline_uses_three_vertices_a_corner() {
        let mut m = MeshBuilder::new();
        m.rect_outline(
            Rect::from_min_size(Pos2::ZERO, vec2(40.0, 40.0)),
            1.25,
            Color32::RED,
        );
        assert_eq!(m.vertex_count(), 12);
        let Some(Shape::Mesh(mesh)) = m.into_shape() else {
            panic!("expected a mesh");
        };
        assert!(mesh.is_valid());
        assert_eq!(mesh.indices.len(), 4 * 2 * 6);
    }

    #[test]
    fn a_small_outline_has_no_soft_edge() {
        let mut m = MeshBuilder::new();
        m.rect_outline(
            Rect::from_min_size(Pos2::ZERO, vec2(4.0, 4.0)),
            1.0,
            Color32::RED,
        );
        assert_eq!(m.vertex_count(), 8);
        let mut c = MeshBuilder::new();
        c.circle_outline(pos2(5.0, 5.0), 3.0, 1.0, Color32::RED);
        assert_eq!(c.vertex_count(), 2 * MeshBuilder::circle_segments(3.0));
        for m in [m, c] {
            let Some(Shape::Mesh(mesh)) = m.into_shape() else {
                panic!("expected a mesh");
            };
            assert!(mesh.is_valid());
        }
    }

    #[test]
    fn a_small_rect_outline_is_the_ring_written_out() {
        for (rect, width) in [
            (Rect::from_min_max(pos2(1.0, 2.0), pos2(5.0, 9.5)), 1.0),
            (Rect::from_min_max(pos2(-3.0, 0.0), pos2(-2.5, 0.25)), 1.5),
            (Rect::from_min_max(pos2(0.0, 0.0), pos2(3.0, 3.0)), 0.4),
        ] {
            let mut written = MeshBuilder::new();
            written.mesh.vertices.push(Vertex::default());
            written.small_rect_outline(rect, width, Color32::RED);
            let mut ring = MeshBuilder::new();
            ring.mesh.vertices.push(Vertex::default());
            let corners = rect_corners(rect);
            ring.ring(4, width, Color32::RED, true, 0.0, |k, d| {
                corners[k].0 + corners[k].1 * d
            });
            assert_eq!(written.mesh.vertices, ring.mesh.vertices);
            assert_eq!(written.mesh.indices, ring.mesh.indices);
        }
    }

    #[test]
    fn circles_get_more_segments_as_they_grow() {
        assert_eq!(MeshBuilder::circle_segments(1.0), 6);
        assert_eq!(MeshBuilder::circle_segments(2.5), 8);
        assert_eq!(MeshBuilder::circle_segments(16.0), 16);
        assert_eq!(MeshBuilder::circle_segments(1e9), MAX_SEGMENTS);
        assert_eq!(MeshBuilder::circle_segments(f32::NAN), 6);
        for n in [6, 8, 64] {
            let dirs = unit_circle(n);
            assert_eq!(dirs.len(), n);
            assert!(dirs.iter().all(|d| (d.length() - 1.0).abs() < 1e-6));
        }
    }

    #[test]
    fn a_mesh_painted_alone_is_an_output_mesh_of_its_own() {
        let ctx = egui::Context::default();
        let mut built = 0;
        let mut output = ctx.run_ui(egui::RawInput::default(), |ui| {
            let painter = ui.painter().clone();
            painter.rect_filled(
                Rect::from_min_size(pos2(0.0, 0.0), vec2(50.0, 50.0)),
                0.0,
                Color32::GRAY,
            );
            let mut m = MeshBuilder::new();
            for k in 0..200 {
                m.circle_outline(pos2(k as f32, 10.0), 4.0, 1.0, Color32::WHITE);
            }
            built = m.vertex_count();
            paint_alone(&painter, m.into_shape().expect("a mesh"));
            painter.text(
                pos2(5.0, 5.0),
                egui::Align2::LEFT_TOP,
                "on top",
                egui::FontId::proportional(11.0),
                Color32::WHITE,
            );
        });
        output.textures_delta.clear();
        let primitives = ctx.tessellate(output.shapes, 1.0);
        let sizes: Vec<usize> = primitives
            .iter()
            .filter_map(|p| match &p.primitive {
                egui::epaint::Primitive::Mesh(mesh) => Some(mesh.vertices.len()),
                egui::epaint::Primitive::Callback(_) => None,
            })
            .collect();
        assert!(
            sizes.contains(&built),
            "the mesh alone in an output mesh: {sizes:?}, built {built}"
        );
        assert!(
            sizes.len() >= 3,
            "background, the mesh, the text: {sizes:?}"
        );
    }

    /// Past its cap whole shapes are left out and counted: the mesh never passes the cap,
    /// every index points at a vertex, and the shapes drawn are the first that fit.
    #[test]
    fn a_full_mesh_leaves_whole_shapes_out_and_counts_them() {
        let cap = 100_000;
        let mut m = MeshBuilder {
            cap,
            ..MeshBuilder::new()
        };
        // 64 segments: a filled circle is 129 vertices, its outline ring 64 x 4.
        let (filled, ring) = (129, 256);
        let shapes = cap / (filled + ring) + 200;
        for k in 0..shapes {
            let c = pos2((k % 100) as f32, (k / 100) as f32);
            m.circle_filled(c, 1_000.0, Color32::WHITE);
            m.circle_outline(c, 1_000.0, 2.0, Color32::BLACK);
        }
        // The rule, shape by shape: drawn when it fits whole, else counted.
        let (mut vertices, mut skipped) = (0, 0);
        for need in [filled, ring].repeat(shapes) {
            if vertices + need <= cap {
                vertices += need;
            } else {
                skipped += 1;
            }
        }
        assert_eq!((m.vertex_count(), m.skipped()), (vertices, skipped));
        assert!(skipped >= 300 && cap - vertices < filled);
        let count = m.vertex_count() as u32;
        assert!(m.mesh.indices.iter().all(|&i| i < count));
        // Small shapes still fit in what is left when large ones do not; then nothing does.
        let before = m.vertex_count();
        m.rect_filled(
            Rect::from_min_size(pos2(0.0, 0.0), vec2(1.0, 1.0)),
            Color32::RED,
        );
        assert_eq!(m.vertex_count(), before + 4);
        for _ in 0..cap {
            m.dot(pos2(1.0, 1.0), 1.0, Color32::RED);
            m.line(pos2(0.0, 0.0), pos2(5.0, 5.0), 2.0, Color32::RED);
            m.arrow(pos2(0.0, 0.0), pos2(5.0, 5.0), 1.0, 3.0, Color32::RED);
        }
        assert!(m.vertex_count() <= cap && cap - m.vertex_count() < 4);
    }

    /// Past its ink (the screen area its shapes cover inside the view, counted once per
    /// shape) whole shapes are left out and counted; what lies outside the view counts none.
    #[test]
    fn a_mesh_leaves_shapes_out_past_its_ink_and_counts_only_what_is_in_view() {
        let view = Rect::from_min_size(pos2(0.0, 0.0), vec2(100.0, 100.0));
        let mut m = MeshBuilder::new();
        m.limit_ink(view);
        assert_eq!(m.ink_cap, f64::from(MAX_OVERDRAW) * 10_000.0);
        // Off the view: no ink, however many and however large (only the vertex cap holds).
        for k in 0..1_000 {
            m.circle_filled(pos2(-500.0 - k as f32, 50.0), 200.0, Color32::WHITE);
            m.rect_filled(
                Rect::from_min_size(pos2(200.0, 0.0), vec2(1e6, 1e6)),
                Color32::WHITE,
            );
            m.line(pos2(-10.0, -10.0), pos2(-10.0, 1e6), 3.0, Color32::WHITE);
        }
        assert_eq!((m.ink(), m.skipped()), (0.0, 0));
        // A line across the view counts the part inside: 100 points long, 3 + 1 wide.
        let near = |a: f64, b: f64| (a - b).abs() < 1e-2;
        m.line(pos2(-1e4, 50.0), pos2(1e4, 50.0), 3.0, Color32::WHITE);
        assert!(near(m.ink(), 400.0), "{}", m.ink());
        // A rectangle's outline as large as the view: its four edges, each 100 long; a thin
        // stroke counts a point wide, with its soft edges 2.
        m.rect_outline(view, 0.5, Color32::WHITE);
        assert!(near(m.ink(), 400.0 + 800.0), "{}", m.ink());
        // A disc covering the view counts the view's area; the disc inside it, its own.
        m.circle_filled(pos2(50.0, 50.0), 1e4, Color32::WHITE);
        assert!(near(m.ink(), 1_200.0 + 10_000.0), "{}", m.ink());
        let small = std::f32::consts::PI * 10.5 * 10.5;
        m.circle_filled(pos2(50.0, 50.0), 10.0, Color32::WHITE);
        assert!(near(m.ink(), 11_200.0 + f64::from(small)), "{}", m.ink());
        // Discs covering the view fill it until the next would pass the cap; then every
        // shape in view is left out, and one out of view still fits.
        let before = m.ink();
        let fit = ((m.ink_cap - before) / 10_000.0).floor() as usize;
        for _ in 0..fit + 50 {
            m.circle_filled(pos2(50.0, 50.0), 1e4, Color32::WHITE);
        }
        assert_eq!(m.skipped(), 50);
        assert_eq!(m.ink(), before + 10_000.0 * fit as f64);
        // What is left (under a disc's 10,000) takes no shape that needs more, and a small
        // one still.
        let left = m.ink_cap - m.ink();
        assert!(left > 100.0 && left < 10_000.0, "{left}");
        let vertices = m.vertex_count();
        m.rect_filled(view, Color32::WHITE);
        m.thin_line(pos2(0.0, 0.0), pos2(100.0, 100.0), 100.0, Color32::WHITE);
        m.arrow(
            pos2(0.0, 50.0),
            pos2(100.0, 50.0),
            100.0,
            5.0,
            Color32::WHITE,
        );
        m.circle_outline(pos2(50.0, 50.0), 45.0, 50.0, Color32::WHITE);
        assert_eq!((m.vertex_count(), m.skipped()), (vertices, 54));
        m.dot(pos2(50.0, 50.0), 2.0, Color32::WHITE);
        assert_eq!(m.vertex_count(), vertices + 4);
        assert!(near(m.ink_cap - m.ink(), left - 4.0));
        // Not a number counts no ink and draws nothing wrong.
        m.line(pos2(f32::NAN, 0.0), pos2(1.0, 1.0), 1.0, Color32::WHITE);
        assert_eq!(m.skipped(), 54);
        // An outline half out of the view: the two edges inside, half of each.
        let mut part = MeshBuilder::new();
        part.limit_ink(view);
        part.rect_outline(
            Rect::from_min_max(pos2(50.0, 50.0), pos2(150.0, 150.0)),
            0.5,
            Color32::WHITE,
        );
        assert!(near(part.ink(), 2.0 * (50.0 + 50.0)), "{}", part.ink());
        part.rect_outline(
            Rect::from_min_max(pos2(f32::NAN, 0.0), pos2(10.0, 10.0)),
            1.0,
            Color32::WHITE,
        );
        // An edge at a coordinate that is not a number counts none; the other three (10, 10
        // and 10 long, their ends at it read from the view's edge) their part.
        assert!(near(part.ink(), 200.0 + 2.0 * 30.0), "{}", part.ink());
        // Without a view (a builder of its own) the ink is counted but not limited.
        let mut free = MeshBuilder::new();
        for _ in 0..1_000 {
            free.rect_filled(
                Rect::from_min_size(Pos2::ZERO, vec2(1e4, 1e4)),
                Color32::RED,
            );
        }
        assert_eq!((free.skipped(), free.ink()), (0, 1e11));
    }

    /// The views' caps: a new builder and the world's pool entries take the world's, the tree
    /// diagram's its own; one world mesh and the tree's together stay under what wgpu takes
    /// in one buffer (256 MiB of vertices), with a million to spare for the panels and text.
    #[test]
    fn the_caps_of_a_frame_stay_under_the_gpu_buffer() {
        let pool = MeshPool::default();
        for (slot, cap) in [
            (WORLD_MESH, MAX_WORLD_VERTICES),
            (WORLD_3D_MESH, MAX_WORLD_VERTICES),
            (TREE_MESH, MAX_TREE_VERTICES),
        ] {
            assert_eq!(pool.builder(slot).cap, cap);
        }
        assert_eq!(MeshBuilder::new().cap, MAX_WORLD_VERTICES);
        let gpu = (256 << 20) / std::mem::size_of::<Vertex>();
        assert!(MAX_WORLD_VERTICES + MAX_TREE_VERTICES + 900_000 < gpu);
    }

    #[test]
    fn the_pool_refills_buffers_egui_has_let_go_of() {
        let pool = MeshPool::default();
        let mut m = pool.builder(1);
        for k in 0..100 {
            m.circle_outline(pos2(k as f32, 0.0), 5.0, 1.0, Color32::WHITE);
        }
        let count = m.vertex_count();
        let Some(Shape::Mesh(first)) = pool.finish(m) else {
            panic!("expected a mesh");
        };
        assert_eq!(first.vertices.len(), count);
        let buffer = first.vertices.as_ptr();
        // While egui holds the mesh, the next builder gets other buffers.
        let held = pool.builder(1);
        assert_eq!(held.vertex_count(), 0);
        assert_eq!(held.home, Some((1, 1)));
        drop(pool.finish(held));
        // Once it is dropped, its buffers come back, emptied, with their capacity.
        drop(first);
        let mut again = pool.builder(1);
        assert_eq!(again.home, Some((1, 0)));
        assert_eq!(again.vertex_count(), 0);
        assert!(again.mesh.vertices.capacity() >= count);
        again.dot(pos2(1.0, 1.0), 1.0, Color32::RED);
        let Some(Shape::Mesh(second)) = pool.finish(again) else {
            panic!("expected a mesh");
        };
        assert_eq!(
            second.vertices.as_ptr(),
            buffer,
            "the same buffer, refilled"
        );
        assert_eq!(second.vertices.len(), 4);
        assert!(second.is_valid());
        // With every entry held, a builder still works, outside the pool.
        let held: Vec<_> = (0..MeshPool::DEPTH)
            .map(|_| {
                let mut b = pool.builder(2);
                b.dot(pos2(0.0, 0.0), 1.0, Color32::RED);
                pool.finish(b).expect("a shape")
            })
            .collect();
        let extra = pool.builder(2);
        assert_eq!(extra.home, None);
        assert!(
            pool.finish(extra).is_none(),
            "an empty builder gives no shape"
        );
        assert_eq!(held.len(), MeshPool::DEPTH);
    }
}
