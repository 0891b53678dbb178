//! Hand-built triangle meshes: one `egui::Shape::Mesh` per layer instead of one painter call
//! per shape (at 10,000 spheres painter calls cost 16-40 ms a frame, one mesh about 3 ms).
//! Strokes get a one-point feathered edge, as egui's own tessellator does, so they stay smooth.

use eframe::egui;

use egui::epaint::{Vertex, WHITE_UV};
use egui::{Color32, Mesh, Pos2, Rect, Shape, pos2, vec2};
use std::cell::RefCell;

/// The width of the soft edge on each side of a stroke, in screen points.
const FEATHER: f32 = 0.5;

/// Outlines smaller than this across, in screen points, are drawn without a soft edge.
const SMALL_SHAPE: f32 = 12.0;

/// Accumulates triangles of one layer; [`MeshBuilder::into_shape`] hands them to egui.
#[derive(Default)]
pub struct MeshBuilder {
    mesh: Mesh,
}

/// The sizes of each layer's mesh in the last frame, so the next frame allocates its buffers
/// once at the right size: growing them by doubling copied tens of megabytes a frame at
/// 10,000 spheres and touched fresh pages each time.
#[derive(Debug, Default)]
pub struct MeshHints(RefCell<Vec<(usize, usize)>>);

impl MeshHints {
    /// A builder for layer `slot`, with room for what that layer held last time (and a tenth
    /// more).
    #[must_use]
    pub fn builder(&self, slot: usize) -> MeshBuilder {
        let (vertices, indices) = self.0.borrow().get(slot).copied().unwrap_or_default();
        let mut mesh = Mesh::default();
        mesh.vertices.reserve_exact(vertices + vertices / 10);
        mesh.indices.reserve_exact(indices + indices / 10);
        MeshBuilder { mesh }
    }

    /// Notes what layer `slot` held this time.
    pub fn note(&self, slot: usize, builder: &MeshBuilder) {
        let mut sizes = self.0.borrow_mut();
        if sizes.len() <= slot {
            sizes.resize(slot + 1, (0, 0));
        }
        sizes[slot] = (builder.mesh.vertices.len(), builder.mesh.indices.len());
    }
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

    /// The finished shape (`None` when nothing was added).
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
        let corners = [
            (rect.left_top(), vec2(-1.0, -1.0)),
            (rect.right_top(), vec2(1.0, -1.0)),
            (rect.right_bottom(), vec2(1.0, 1.0)),
            (rect.left_bottom(), vec2(-1.0, 1.0)),
        ];
        let small = rect.width().max(rect.height()) < SMALL_SHAPE;
        self.ring(4, width, color, small, |k, d| {
            corners[k].0 + corners[k].1 * d
        });
    }

    /// A filled axis-aligned rectangle (no feathering: meant for fills and points).
    pub fn rect_filled(&mut self, rect: Rect, color: Color32) {
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
        (radius.max(0.0).sqrt() * 4.0).clamp(8.0, 64.0) as usize
    }

    /// The outline of a circle.
    pub fn circle_outline(&mut self, center: Pos2, radius: f32, width: f32, color: Color32) {
        let n = Self::circle_segments(radius);
        let step = std::f32::consts::TAU / n as f32;
        self.ring(n, width, color, 2.0 * radius < SMALL_SHAPE, |k, d| {
            let (s, c) = (k as f32 * step).sin_cos();
            pos2(center.x + c * (radius + d), center.y + s * (radius + d))
        });
    }

    /// A filled circle with a soft edge.
    pub fn circle_filled(&mut self, center: Pos2, radius: f32, color: Color32) {
        let n = Self::circle_segments(radius);
        let step = std::f32::consts::TAU / n as f32;
        let c0 = self.vertex(center, color);
        let base = self.mesh.vertices.len() as u32;
        for k in 0..n {
            let (s, c) = (k as f32 * step).sin_cos();
            let inner = (radius - FEATHER).max(0.0);
            let outer = radius + FEATHER;
            self.vertex(pos2(center.x + c * inner, center.y + s * inner), color);
            self.vertex(
                pos2(center.x + c * outer, center.y + s * outer),
                Color32::TRANSPARENT,
            );
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
        let n = vec2(-dir.y, dir.x) / len;
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
        self.line(a, b, width, color);
        self.line(b, b - u * head + n * head * 0.5, width, color);
        self.line(b, b - u * head - n * head * 0.5, width, color);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // A degenerate line adds nothing.
        let before = m.vertex_count();
        m.line(pos2(1.0, 1.0), pos2(1.0, 1.0), 1.0, Color32::RED);
        assert_eq!(m.vertex_count(), before);
        let Some(Shape::Mesh(mesh)) = m.into_shape() else {
            panic!("expected a mesh");
        };
        assert!(mesh.is_valid());
        assert_eq!(mesh.indices.len() % 3, 0);
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
    fn hints_reserve_what_the_layer_held_last_time() {
        let hints = MeshHints::default();
        assert_eq!(hints.builder(3).mesh.vertices.capacity(), 0);
        let mut m = hints.builder(3);
        for k in 0..100 {
            m.circle_outline(pos2(k as f32, 0.0), 5.0, 1.0, Color32::WHITE);
        }
        hints.note(3, &m);
        let (v, i) = (m.mesh.vertices.len(), m.mesh.indices.len());
        let next = hints.builder(3);
        assert!(next.mesh.vertices.capacity() >= v && next.mesh.indices.capacity() >= i);
        assert_eq!(
            hints.builder(0).mesh.vertices.capacity(),
            0,
            "other slots untouched"
        );
    }
}
