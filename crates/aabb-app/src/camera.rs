//! Coordinate spaces and cameras. The world is y-up (physics), the screen y-down (egui): every
//! mapping is named `screen_from_world` / `world_from_screen`. 3D scenes are projected onto a
//! plane the user picks.

use eframe::egui;

use egui::{Pos2, Rect, pos2};
use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};

/// The plane a 3D scene is projected onto (2D scenes always use `XY`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Plane {
    /// Horizontal x, vertical y.
    #[default]
    XY,
    /// Horizontal x, vertical z.
    XZ,
    /// Horizontal y, vertical z.
    YZ,
}

impl Plane {
    /// Every plane.
    pub const ALL: [Plane; 3] = [Plane::XY, Plane::XZ, Plane::YZ];

    /// The two world axes shown horizontally and vertically.
    #[must_use]
    pub fn axes(self) -> (usize, usize) {
        match self {
            Plane::XY => (0, 1),
            Plane::XZ => (0, 2),
            Plane::YZ => (1, 2),
        }
    }

    /// `"XY"`, `"XZ"` or `"YZ"` (as in scene files).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Plane::XY => "XY",
            Plane::XZ => "XZ",
            Plane::YZ => "YZ",
        }
    }

    /// Parses a plane name, any case.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Plane> {
        Plane::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name.trim()))
    }

    /// A world point projected onto the plane.
    #[must_use]
    pub fn project(self, pos_in_world: Vec3) -> Vec2 {
        let (a, b) = self.axes();
        Vec2::new(pos_in_world[a], pos_in_world[b])
    }

    /// A point of the plane lifted back into the world, keeping the other coordinate of `base`.
    #[must_use]
    pub fn unproject(self, pos_in_plane: Vec2, base: Vec3) -> Vec3 {
        let (a, b) = self.axes();
        let mut out = base;
        out[a] = pos_in_plane.x;
        out[b] = pos_in_plane.y;
        out
    }
}

/// An axis-aligned rectangle in plane (world) coordinates, y-up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldRect {
    /// Least corner.
    pub min: Vec2,
    /// Greatest corner.
    pub max: Vec2,
}

impl WorldRect {
    /// A rectangle from its corners.
    #[must_use]
    pub fn new(min: Vec2, max: Vec2) -> Self {
        Self { min, max }
    }

    /// True when the point is inside (boundaries included).
    #[must_use]
    pub fn contains(&self, p: Vec2) -> bool {
        p.cmpge(self.min).all() && p.cmple(self.max).all()
    }

    /// True when the rectangles share a point.
    #[must_use]
    pub fn overlaps(&self, other: &WorldRect) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }

    /// Width and height.
    #[must_use]
    pub fn size(&self) -> Vec2 {
        self.max - self.min
    }

    /// Width and height in f64 (finite whenever the corners are, unlike [`WorldRect::size`]).
    #[must_use]
    pub fn size_f64(&self) -> glam::DVec2 {
        self.max.as_dvec2() - self.min.as_dvec2()
    }

    /// A note for the world view and the status when the rectangle is wider or taller than
    /// f32 holds: it is drawn fitted, but the f32 numbers of the view (sizes, distances for
    /// picking, labels) lose their meaning there; `None` for every other world.
    #[must_use]
    pub fn huge_note(&self) -> Option<String> {
        let size = self.size_f64();
        (!self.size().is_finite()).then(|| {
            format!(
                "the world spans {} x {} units, more than f32 holds ({}): it is drawn fitted, \
                 but sizes, picking and labels there are approximate",
                crate::text::short_number(size.x),
                crate::text::short_number(size.y),
                crate::text::short_number(f64::from(f32::MAX))
            )
        })
    }

    /// The smallest rectangle holding both.
    #[must_use]
    pub fn union(&self, other: &WorldRect) -> WorldRect {
        WorldRect::new(self.min.min(other.min), self.max.max(other.max))
    }

    /// Distance from `p` to the nearest edge (0 on the outline).
    #[must_use]
    pub fn distance_to_outline(&self, p: Vec2) -> f32 {
        if self.contains(p) {
            let d = (p - self.min).min(self.max - p);
            d.x.min(d.y)
        } else {
            let q = p.clamp(self.min, self.max);
            (p - q).length()
        }
    }
}

/// The world view's camera: which world point is at the centre and how many screen points a
/// world unit spans.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldCamera {
    /// The world point at the centre of the view.
    pub center: Vec2,
    /// Screen points per world unit.
    pub zoom: f32,
}

impl Default for WorldCamera {
    fn default() -> Self {
        Self {
            center: Vec2::ZERO,
            zoom: 20.0,
        }
    }
}

/// The least and greatest zoom, screen points per world unit: wide enough to fit any world
/// f32 holds, even one from -3.4e38 to 3.4e38 whose width f32 does not (at 1e-4, a world
/// wider than about 10^7 units could not be fitted, and its view showed a corner of it, or
/// nothing), and far from where f32 runs out.
pub const ZOOM_RANGE: (f32, f32) = (1e-37, 1e30);

impl WorldCamera {
    /// The mapping for a view occupying `viewport` on screen.
    #[must_use]
    pub fn transform(&self, viewport: Rect) -> ScreenFromWorld {
        let c = viewport.center();
        ScreenFromWorld {
            origin: pos2(
                c.x - self.center.x * self.zoom,
                c.y + self.center.y * self.zoom,
            ),
            scale: self.zoom,
        }
    }

    /// Frames `world` in `viewport` with a small border.
    ///
    /// Sizes and the centre are taken in f64: a world whose width passes f32's range (from
    /// -3e38 to 3e38) has an infinite f32 width and centre, and was drawn as nothing.
    pub fn fit(&mut self, viewport: Rect, world: WorldRect) {
        let (min, max) = (world.min.as_dvec2(), world.max.as_dvec2());
        let size = (max - min).max(glam::DVec2::splat(1e-3));
        let zx = f64::from(viewport.width()) / size.x;
        let zy = f64::from(viewport.height()) / size.y;
        let zoom = (0.94 * zx.min(zy)) as f32;
        self.zoom = if zoom.is_finite() && zoom > 0.0 {
            zoom.clamp(ZOOM_RANGE.0, ZOOM_RANGE.1)
        } else {
            1.0
        };
        let center = ((min + max) * 0.5).as_vec2();
        self.center = if center.is_finite() {
            center
        } else {
            Vec2::ZERO
        };
    }

    /// Zooms by `factor` keeping the world point under `pos_on_screen` where it is.
    pub fn zoom_around(&mut self, viewport: Rect, pos_on_screen: Pos2, factor: f32) {
        let before = self.transform(viewport).world_from_screen(pos_on_screen);
        self.zoom = (self.zoom * factor).clamp(ZOOM_RANGE.0, ZOOM_RANGE.1);
        let after = self.transform(viewport).world_from_screen(pos_on_screen);
        self.center += before - after;
    }

    /// Moves the view by a screen-space drag.
    pub fn pan(&mut self, drag_on_screen: egui::Vec2) {
        self.center.x -= drag_on_screen.x / self.zoom;
        self.center.y += drag_on_screen.y / self.zoom;
    }
}

/// The affine map from world (plane, y-up) to screen (points, y-down), and its inverse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScreenFromWorld {
    /// Where the world origin lands on screen.
    pub origin: Pos2,
    /// Screen points per world unit.
    pub scale: f32,
}

impl ScreenFromWorld {
    /// A world point on screen.
    #[inline]
    #[must_use]
    pub fn pos(&self, pos_in_world: Vec2) -> Pos2 {
        pos2(
            self.origin.x + pos_in_world.x * self.scale,
            self.origin.y - pos_in_world.y * self.scale,
        )
    }

    /// A world rectangle on screen.
    #[inline]
    #[must_use]
    pub fn rect(&self, rect_in_world: &WorldRect) -> Rect {
        Rect::from_min_max(
            pos2(
                self.origin.x + rect_in_world.min.x * self.scale,
                self.origin.y - rect_in_world.max.y * self.scale,
            ),
            pos2(
                self.origin.x + rect_in_world.max.x * self.scale,
                self.origin.y - rect_in_world.min.y * self.scale,
            ),
        )
    }

    /// A world length on screen.
    #[inline]
    #[must_use]
    pub fn len(&self, len_in_world: f32) -> f32 {
        len_in_world * self.scale
    }

    /// The world point under a screen point.
    #[must_use]
    pub fn world_from_screen(&self, pos_on_screen: Pos2) -> Vec2 {
        Vec2::new(
            (pos_on_screen.x - self.origin.x) / self.scale,
            (self.origin.y - pos_on_screen.y) / self.scale,
        )
    }

    /// The world rectangle a screen rectangle covers.
    #[must_use]
    pub fn world_rect_from_screen(&self, rect_on_screen: Rect) -> WorldRect {
        let a = self.world_from_screen(rect_on_screen.left_bottom());
        let b = self.world_from_screen(rect_on_screen.right_top());
        WorldRect::new(a.min(b), a.max(b))
    }
}

/// The tree view's camera over the diagram's layout space (x: leaf slots, y: depth levels,
/// y-down like the screen): a separate scale per axis so wide trees fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeCamera {
    /// Screen offset of the layout origin from the viewport's top-left corner.
    pub offset: egui::Vec2,
    /// Screen points per layout unit, per axis.
    pub scale: egui::Vec2,
}

impl Default for TreeCamera {
    fn default() -> Self {
        Self {
            offset: egui::vec2(20.0, 20.0),
            scale: egui::vec2(30.0, 50.0),
        }
    }
}

impl TreeCamera {
    /// A layout point on screen.
    #[inline]
    #[must_use]
    pub fn screen_from_layout(&self, viewport: Rect, pos_in_layout: egui::Vec2) -> Pos2 {
        viewport.min + self.offset + pos_in_layout * self.scale
    }

    /// The layout point under a screen point.
    #[must_use]
    pub fn layout_from_screen(&self, viewport: Rect, pos_on_screen: Pos2) -> egui::Vec2 {
        (pos_on_screen - viewport.min - self.offset) / self.scale
    }

    /// A layout rectangle on screen.
    #[must_use]
    pub fn screen_rect_from_layout(&self, viewport: Rect, rect_in_layout: Rect) -> Rect {
        Rect::from_min_max(
            self.screen_from_layout(viewport, rect_in_layout.min.to_vec2()),
            self.screen_from_layout(viewport, rect_in_layout.max.to_vec2()),
        )
    }

    /// Frames a layout of `width` slots and `levels` depth levels (node centres).
    pub fn fit(&mut self, viewport: Rect, width: f32, levels: f32) {
        self.fit_span(viewport, Pos2::ZERO, pos2(width - 1.0, levels - 1.0));
    }

    /// Frames the layout points from `min` to `max`: half a slot spare on each side, at most
    /// 80 points a slot and 70 a level, centred across, from the top below the caption line.
    pub fn fit_span(&mut self, viewport: Rect, min: Pos2, max: Pos2) {
        let (side, top, bottom) = (24.0, 40.0, 24.0);
        let w = (viewport.width() - 2.0 * side).max(10.0);
        let h = (viewport.height() - top - bottom).max(10.0);
        let size = (max - min).max(egui::Vec2::ZERO);
        let sx = w / (size.x + 1.0);
        let sy = (h / size.y.max(1.0)).min(70.0);
        if !(sx.is_finite() && sy.is_finite()) {
            return;
        }
        self.scale = egui::vec2(sx.clamp(0.01, 80.0), sy.max(4.0));
        self.offset = egui::vec2(
            0.5 * viewport.width() - 0.5 * (min.x + max.x) * self.scale.x,
            top - min.y * self.scale.y,
        );
    }

    /// Moves the view so the layout point `pos` is at the viewport's centre.
    pub fn center_on(&mut self, viewport: Rect, pos: Pos2) {
        self.offset = 0.5 * viewport.size() - pos.to_vec2() * self.scale;
    }

    /// Zooms by `factor` around a screen point.
    pub fn zoom_around(&mut self, viewport: Rect, pos_on_screen: Pos2, factor: f32) {
        let before = self.layout_from_screen(viewport, pos_on_screen);
        self.scale = (self.scale * factor).clamp(egui::vec2(1e-3, 1e-3), egui::vec2(500.0, 500.0));
        let after = self.screen_from_layout(viewport, before);
        self.offset += pos_on_screen - after;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screen_and_world_round_trip_with_y_flipped() {
        let cam = WorldCamera {
            center: Vec2::new(10.0, 5.0),
            zoom: 4.0,
        };
        let viewport = Rect::from_min_size(pos2(100.0, 50.0), egui::vec2(400.0, 200.0));
        let t = cam.transform(viewport);
        assert_eq!(t.pos(Vec2::new(10.0, 5.0)), viewport.center());
        // One unit up in the world is four points up (smaller y) on screen.
        assert_eq!(
            t.pos(Vec2::new(10.0, 6.0)),
            viewport.center() - egui::vec2(0.0, 4.0)
        );
        let p = pos2(123.0, 77.0);
        let back = t.pos(t.world_from_screen(p));
        assert!((back - p).length() < 1e-4);
    }

    #[test]
    fn zoom_keeps_the_point_under_the_cursor() {
        let mut cam = WorldCamera::default();
        let viewport = Rect::from_min_size(Pos2::ZERO, egui::vec2(300.0, 300.0));
        let cursor = pos2(40.0, 250.0);
        let before = cam.transform(viewport).world_from_screen(cursor);
        cam.zoom_around(viewport, cursor, 2.5);
        let after = cam.transform(viewport).world_from_screen(cursor);
        assert!((before - after).length() < 1e-4);
        assert_eq!(cam.zoom, 50.0);
    }

    #[test]
    fn planes_project_and_lift() {
        let p = Vec3::new(1.0, 2.0, 3.0);
        assert_eq!(Plane::XZ.project(p), Vec2::new(1.0, 3.0));
        assert_eq!(
            Plane::YZ.unproject(Vec2::new(7.0, 8.0), p),
            Vec3::new(1.0, 7.0, 8.0)
        );
        assert_eq!(Plane::from_name("xz"), Some(Plane::XZ));
    }

    #[test]
    fn the_tree_camera_fits_spans_and_centres_points() {
        let viewport = Rect::from_min_size(pos2(100.0, 50.0), egui::vec2(448.0, 264.0));
        let mut cam = TreeCamera::default();
        // Slots 0..=9 and levels 0..=4: 400 points for 10 slots, 200 for 4 levels (max 70).
        cam.fit(viewport, 10.0, 5.0);
        assert_eq!(cam.scale, egui::vec2(40.0, 50.0));
        assert_eq!(
            cam.screen_from_layout(viewport, egui::vec2(0.0, 0.0)),
            pos2(144.0, 90.0)
        );
        assert_eq!(
            cam.screen_from_layout(viewport, egui::vec2(9.0, 4.0)),
            pos2(504.0, 290.0)
        );
        cam.center_on(viewport, pos2(3.0, 2.0));
        assert_eq!(
            cam.screen_from_layout(viewport, egui::vec2(3.0, 2.0)),
            viewport.center()
        );
        let cell = Rect::from_min_max(pos2(1.0, 1.0), pos2(2.0, 3.0));
        let on_screen = cam.screen_rect_from_layout(viewport, cell);
        assert_eq!(on_screen.size(), egui::vec2(40.0, 100.0));
    }

    /// A world from -3e38 to 3e38 (its width is infinite in f32) is fitted: a
    /// finite zoom and centre, its corners inside the viewport; and the note says so.
    #[test]
    fn a_world_wider_than_f32_holds_is_fitted_and_noted() {
        let viewport = Rect::from_min_size(pos2(0.0, 0.0), egui::vec2(800.0, 600.0));
        let world = WorldRect::new(Vec2::splat(-3e38), Vec2::splat(3e38));
        let mut camera = WorldCamera::default();
        camera.fit(viewport, world);
        assert!(
            camera.zoom.is_finite() && camera.zoom > 0.0,
            "{}",
            camera.zoom
        );
        assert_eq!(camera.center, Vec2::ZERO);
        let t = camera.transform(viewport);
        for corner in [world.min, world.max] {
            let p = t.pos(corner);
            assert!(viewport.contains(p), "{p:?}");
        }
        // 0.94 of the height: 564 points for 6e38 units.
        let on_screen = t.rect(&world);
        assert!((on_screen.height() - 564.0).abs() < 0.5, "{on_screen:?}");
        assert_eq!(
            world.huge_note().as_deref(),
            Some(
                "the world spans 6e38 x 6e38 units, more than f32 holds (3.4e38): it is drawn \
                 fitted, but sizes, picking and labels there are approximate"
            )
        );
        assert_eq!(
            WorldRect::new(Vec2::ZERO, Vec2::splat(1e30)).huge_note(),
            None
        );
    }

    #[test]
    fn outline_distance() {
        let r = WorldRect::new(Vec2::ZERO, Vec2::new(4.0, 2.0));
        assert_eq!(r.distance_to_outline(Vec2::new(1.0, 1.0)), 1.0);
        assert_eq!(r.distance_to_outline(Vec2::new(7.0, 2.0)), 3.0);
    }
}
