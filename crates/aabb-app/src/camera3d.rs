//! The 3D view's orbit camera: a perspective camera circling a target point, and the
//! projection of world points and segments onto the screen.
//!
//! The world is y-up, as in the XY plane the 2D views show: at yaw 0 and pitch 0 the camera
//! looks down the -z axis with x to the right and y up, so the 3D view starts out as a
//! perspective version of the XY projection. Yaw turns the camera about the y axis, pitch
//! raises it above the x-z plane.

use eframe::egui;

use egui::{Pos2, Rect, pos2};
use glam::Vec3;

/// Vertical field of view, radians (50°).
pub const FOV_Y: f32 = 50.0 * std::f32::consts::PI / 180.0;
/// Radians the camera turns for each screen point the pointer is dragged.
pub const ORBIT_RADIANS_PER_POINT: f32 = 0.01;
/// The most the camera is raised above or lowered below the x-z plane, radians (85°).
pub const MAX_PITCH: f32 = 85.0 * std::f32::consts::PI / 180.0;
/// The closest the camera comes to its target.
pub const MIN_DISTANCE: f32 = 1e-2;
/// The farthest the camera goes from its target.
pub const MAX_DISTANCE: f32 = 1e6;
/// The near plane's distance, as a fraction of the camera's distance to its target.
const NEAR_FRACTION: f32 = 1e-3;
/// The distance factor of one point of wheel scroll (as the world view's zoom).
pub const ZOOM_PER_SCROLL_POINT: f32 = 0.0025;
/// Yaw and pitch of a freshly opened scene: a three-quarter view from above.
const DEFAULT_YAW: f32 = -0.6;
const DEFAULT_PITCH: f32 = 0.45;

/// A perspective camera orbiting `target`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    /// The point the camera looks at and turns about.
    pub target: Vec3,
    /// Turn about the world's y axis, radians (0: looking down -z).
    pub yaw: f32,
    /// Elevation above the x-z plane, radians, within ±[`MAX_PITCH`].
    pub pitch: f32,
    /// Distance from the target, within [[`MIN_DISTANCE`], [`MAX_DISTANCE`]].
    pub distance: f32,
}

impl Default for OrbitCamera {
    fn default() -> Self {
        Self {
            target: Vec3::ZERO,
            yaw: DEFAULT_YAW,
            pitch: DEFAULT_PITCH,
            distance: 10.0,
        }
    }
}

impl OrbitCamera {
    /// The unit vector from the target towards the camera.
    #[must_use]
    pub fn back(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        Vec3::new(cp * sy, sp, cp * cy)
    }

    /// The camera's position.
    #[must_use]
    pub fn eye(&self) -> Vec3 {
        self.target + self.back() * self.distance
    }

    /// Turns the camera by a drag of `delta` screen points: right turns the scene right
    /// (yaw decreases), down raises the camera (pitch increases, clamped).
    pub fn orbit(&mut self, delta: egui::Vec2) {
        self.yaw -= delta.x * ORBIT_RADIANS_PER_POINT;
        self.pitch = (self.pitch + delta.y * ORBIT_RADIANS_PER_POINT).clamp(-MAX_PITCH, MAX_PITCH);
    }

    /// Moves the target so the scene follows a drag of `delta` screen points at the target's
    /// depth.
    pub fn pan(&mut self, viewport: Rect, delta: egui::Vec2) {
        let p = self.projector(viewport);
        let world_per_point = self.distance / p.focal;
        self.target -= (p.right * delta.x - p.up * delta.y) * world_per_point;
    }

    /// Moves closer by `factor` (> 1 zooms in), clamped.
    pub fn zoom(&mut self, factor: f32) {
        if factor.is_finite() && factor > 0.0 {
            self.distance = (self.distance / factor).clamp(MIN_DISTANCE, MAX_DISTANCE);
        }
    }

    /// Looks at the box `min..max` from the current direction, from just far enough for the
    /// whole box to be in a view of `viewport`'s shape.
    pub fn fit(&mut self, viewport: Rect, min: Vec3, max: Vec3) {
        if !(min.is_finite() && max.is_finite()) {
            return;
        }
        self.target = (min + max) * 0.5;
        // The box's bounding sphere seen within the narrower of the two fields of view.
        let radius = ((max - min) * 0.5).length().max(MIN_DISTANCE);
        let aspect = (viewport.width() / viewport.height().max(1.0)).max(1e-3);
        let half_x = ((FOV_Y * 0.5).tan() * aspect).atan();
        let half = (FOV_Y * 0.5).min(half_x);
        self.distance = (radius / half.sin() * 1.02).clamp(MIN_DISTANCE, MAX_DISTANCE);
    }

    /// Puts yaw and pitch back to the three-quarter view a scene opens with.
    pub fn reset_angles(&mut self) {
        self.yaw = DEFAULT_YAW;
        self.pitch = DEFAULT_PITCH;
    }

    /// The projection onto `viewport` from this camera.
    #[must_use]
    pub fn projector(&self, viewport: Rect) -> Projector {
        let back = self.back();
        let (sy, cy) = self.yaw.sin_cos();
        let right = Vec3::new(cy, 0.0, -sy);
        let up = back.cross(right);
        Projector {
            eye: self.eye(),
            right,
            up,
            forward: -back,
            center: viewport.center(),
            focal: 0.5 * viewport.height().max(1.0) / (FOV_Y * 0.5).tan(),
            near: self.distance * NEAR_FRACTION,
        }
    }
}

/// A point in the camera's frame: `x` right, `y` up, `depth` along the view direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraPoint {
    /// Right of the view axis, world units.
    pub x: f32,
    /// Above the view axis, world units.
    pub y: f32,
    /// Distance in front of the camera along its view direction.
    pub depth: f32,
}

/// One frame's projection: world to camera frame to screen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Projector {
    /// The camera's position.
    pub eye: Vec3,
    /// The screen's right in the world.
    pub right: Vec3,
    /// The screen's up in the world.
    pub up: Vec3,
    /// The view direction.
    pub forward: Vec3,
    /// The screen point on the view axis (the viewport's centre).
    pub center: Pos2,
    /// Screen points per world unit at depth 1.
    pub focal: f32,
    /// Points nearer than this depth are not drawn; segments are cut there.
    pub near: f32,
}

impl Projector {
    /// A world point in the camera's frame.
    #[must_use]
    pub fn to_camera(&self, pos_in_world: Vec3) -> CameraPoint {
        let v = pos_in_world - self.eye;
        CameraPoint {
            x: v.dot(self.right),
            y: v.dot(self.up),
            depth: v.dot(self.forward),
        }
    }

    /// The screen point of a camera-frame point at or beyond the near plane.
    #[must_use]
    pub fn screen_of(&self, p: CameraPoint) -> Pos2 {
        let s = self.focal / p.depth.max(self.near);
        pos2(self.center.x + p.x * s, self.center.y - p.y * s)
    }

    /// The screen point of a world point, `None` when it is nearer than the near plane
    /// (behind the camera).
    #[must_use]
    pub fn project(&self, pos_in_world: Vec3) -> Option<Pos2> {
        let p = self.to_camera(pos_in_world);
        (p.depth >= self.near).then(|| self.screen_of(p))
    }

    /// Screen points per world unit at `depth`.
    #[must_use]
    pub fn scale_at(&self, depth: f32) -> f32 {
        self.focal / depth.max(self.near)
    }

    /// The part of segment `a`-`b` (camera frame) in front of the near plane, `None` when
    /// none is.
    #[must_use]
    pub fn clip(&self, a: CameraPoint, b: CameraPoint) -> Option<(CameraPoint, CameraPoint)> {
        let near = self.near;
        match (a.depth >= near, b.depth >= near) {
            (true, true) => Some((a, b)),
            (false, false) => None,
            (a_in, _) => {
                let (inside, outside) = if a_in { (a, b) } else { (b, a) };
                let t = (inside.depth - near) / (inside.depth - outside.depth);
                let cut = CameraPoint {
                    x: inside.x + (outside.x - inside.x) * t,
                    y: inside.y + (outside.y - inside.y) * t,
                    depth: near,
                };
                Some(if a_in { (inside, cut) } else { (cut, inside) })
            }
        }
    }

    /// The screen segment of world segment `a`-`b` cut at the near plane, with the depth of
    /// its middle; `None` when it lies wholly behind the near plane.
    #[must_use]
    pub fn segment(&self, a: CameraPoint, b: CameraPoint) -> Option<(Pos2, Pos2, f32)> {
        let (a, b) = self.clip(a, b)?;
        Some((
            self.screen_of(a),
            self.screen_of(b),
            0.5 * (a.depth + b.depth),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::vec2;

    fn viewport() -> Rect {
        Rect::from_min_size(pos2(100.0, 50.0), vec2(800.0, 600.0))
    }

    #[test]
    fn the_target_projects_to_the_view_centre() {
        for (yaw, pitch) in [(0.0, 0.0), (-0.6, 0.45), (2.5, -1.2), (-3.0, MAX_PITCH)] {
            let camera = OrbitCamera {
                target: Vec3::new(3.0, -2.0, 7.5),
                yaw,
                pitch,
                distance: 12.0,
            };
            let p = camera.projector(viewport());
            let s = p.project(camera.target).expect("in front");
            assert!(
                (s - pos2(500.0, 350.0)).length() < 1e-3,
                "{yaw} {pitch}: {s:?}"
            );
            assert!((p.to_camera(camera.target).depth - 12.0).abs() < 1e-4);
            // A right-handed frame of unit vectors.
            assert!((p.right.cross(p.up) - (-p.forward)).length() < 1e-5);
        }
    }

    #[test]
    fn at_yaw_and_pitch_zero_the_view_is_the_xy_plane() {
        let camera = OrbitCamera {
            target: Vec3::ZERO,
            yaw: 0.0,
            pitch: 0.0,
            distance: 10.0,
        };
        let p = camera.projector(viewport());
        let focal = 300.0 / (FOV_Y * 0.5).tan();
        // One unit right and up at the target's depth: focal / 10 points right and up.
        let s = p.project(Vec3::new(1.0, 1.0, 0.0)).expect("in front");
        assert!((s.x - (500.0 + focal / 10.0)).abs() < 1e-3);
        assert!((s.y - (350.0 - focal / 10.0)).abs() < 1e-3);
        // Behind the camera: nothing.
        assert_eq!(p.project(Vec3::new(0.0, 0.0, 11.0)), None);
    }

    #[test]
    fn a_segment_crossing_the_near_plane_is_cut_there() {
        let camera = OrbitCamera {
            target: Vec3::ZERO,
            yaw: 0.0,
            pitch: 0.0,
            distance: 10.0,
        };
        let p = camera.projector(viewport());
        assert!((p.near - 0.01).abs() < 1e-7);
        // From 5 in front of the camera to 5 behind it, rising from y 0 to y 2.
        let a = p.to_camera(Vec3::new(0.0, 0.0, 5.0));
        let b = p.to_camera(Vec3::new(0.0, 2.0, 15.0));
        assert_eq!((a.depth, b.depth), (5.0, -5.0));
        let (front, cut) = p.clip(a, b).expect("half in front");
        assert_eq!(front, a);
        assert_eq!(cut.depth, p.near);
        // The cut is where the depth reaches the near plane: t = (5 - 0.01) / 10.
        assert!((cut.y - 2.0 * (5.0 - 0.01) / 10.0).abs() < 1e-5);
        // The same segment the other way round is cut at the same point.
        assert_eq!(p.clip(b, a), Some((cut, a)));
        // Wholly behind: nothing; wholly in front: unchanged.
        let c = p.to_camera(Vec3::new(1.0, 0.0, 12.0));
        assert_eq!(p.clip(b, c), None);
        let d = p.to_camera(Vec3::new(1.0, 0.0, 0.0));
        assert_eq!(p.clip(a, d), Some((a, d)));
    }

    #[test]
    fn orbit_zoom_and_fit_stay_within_their_bounds() {
        let mut camera = OrbitCamera::default();
        camera.orbit(vec2(100.0, 0.0));
        assert!((camera.yaw - (DEFAULT_YAW - 1.0)).abs() < 1e-6);
        camera.orbit(vec2(0.0, 1e4));
        assert_eq!(camera.pitch, MAX_PITCH);
        camera.orbit(vec2(0.0, -1e5));
        assert_eq!(camera.pitch, -MAX_PITCH);
        camera.zoom(1e12);
        assert_eq!(camera.distance, MIN_DISTANCE);
        camera.zoom(1e-12);
        assert_eq!(camera.distance, MAX_DISTANCE);
        camera.zoom(f32::NAN);
        assert_eq!(camera.distance, MAX_DISTANCE);
        // Fit: every corner of the box lands inside the viewport.
        let (min, max) = (Vec3::new(0.0, 0.0, 0.0), Vec3::new(30.0, 20.0, 20.0));
        for (yaw, pitch) in [(0.0, 0.0), (-0.6, 0.45), (2.0, -1.0)] {
            let mut camera = OrbitCamera {
                yaw,
                pitch,
                ..OrbitCamera::default()
            };
            for view in [
                viewport(),
                Rect::from_min_size(Pos2::ZERO, vec2(200.0, 700.0)),
            ] {
                camera.fit(view, min, max);
                assert_eq!(camera.target, Vec3::new(15.0, 10.0, 10.0));
                let p = camera.projector(view);
                for k in 0..8 {
                    let corner = Vec3::new(
                        if k & 1 == 0 { min.x } else { max.x },
                        if k & 2 == 0 { min.y } else { max.y },
                        if k & 4 == 0 { min.z } else { max.z },
                    );
                    let s = p.project(corner).expect("in front");
                    assert!(view.contains(s), "{corner} at {s:?} outside {view:?}");
                }
            }
        }
        // Panning by a drag moves the target across the screen by that drag.
        let mut camera = OrbitCamera::default();
        let view = viewport();
        let before = camera
            .projector(view)
            .project(Vec3::ZERO)
            .expect("in front");
        camera.pan(view, vec2(30.0, -12.0));
        let after = camera
            .projector(view)
            .project(Vec3::ZERO)
            .expect("in front");
        assert!(((after - before) - vec2(30.0, -12.0)).length() < 1e-3);
    }
}
