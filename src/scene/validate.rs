//! The rules a scene must meet, each refused with a message naming the sphere (index and id)
//! or section and field, the rule and the value found.

use super::model::{fmt_numbers, newer_message};
use super::{FORMAT_VERSION, MAX_SPHERES, Scene, SceneError, Sphere};
use glam::Vec3;
use std::collections::BTreeMap;

/// The first broken rule, as a message without the file name.
pub(crate) fn check(scene: &Scene) -> Result<(), String> {
    if scene.format_version > FORMAT_VERSION {
        return Err(newer_message(scene.format_version));
    }
    if scene.format_version == 0 {
        return Err(format!("format_version must be {FORMAT_VERSION}, got 0"));
    }
    let dims = scene.dimensions;
    if dims != 2 && dims != 3 {
        return Err(format!("dimensions must be 2 or 3, got {dims}"));
    }
    let d = usize::from(dims);
    let shown = |v: Vec3| fmt_numbers(&v.to_array()[..d]);
    let (wmin, wmax) = (scene.world.min, scene.world.max);
    if !wmin.is_finite() || !wmax.is_finite() {
        return Err(format!(
            "world: every number must be finite, got min {} and max {}",
            shown(wmin),
            shown(wmax)
        ));
    }
    if (0..d).any(|a| wmin[a] >= wmax[a]) {
        return Err(format!(
            "world: min must be < max on every axis, got min {} and max {}",
            shown(wmin),
            shown(wmax)
        ));
    }
    if d == 2 && (wmin.z != 0.0 || wmax.z != 0.0) {
        return Err("world: z must be 0 in a 2D scene".to_owned());
    }
    if !(scene.dt > 0.0 && scene.dt <= 1.0) {
        return Err(format!("dt must be in (0, 1] seconds, got {}", scene.dt));
    }
    check_setting("tree.margin", scene.tree.margin)?;
    check_setting("tree.velocity_lookahead", scene.tree.velocity_lookahead)?;
    if scene.spheres.len() > MAX_SPHERES {
        return Err(format!(
            "spheres: the scene lists {} spheres; at most {MAX_SPHERES} are allowed",
            scene.spheres.len()
        ));
    }
    if let Some(g) = &scene.generate {
        let total = scene.spheres.len() as u64 + u64::from(g.count);
        if total > MAX_SPHERES as u64 {
            return Err(format!(
                "generate.count: {} generated + {} listed = {total} spheres; at most \
                 {MAX_SPHERES} are allowed",
                g.count,
                scene.spheres.len()
            ));
        }
        let (rmin, rmax) = g.radius;
        if !(rmin.is_finite() && rmax.is_finite() && rmin > 0.0 && rmin <= rmax) {
            return Err(format!(
                "generate.radius must be (min, max) with 0 < min <= max, got ({rmin}, {rmax})"
            ));
        }
        let (smin, smax) = g.speed;
        if !(smin.is_finite() && smax.is_finite() && smin >= 0.0 && smin <= smax) {
            return Err(format!(
                "generate.speed must be (min, max) with 0 <= min <= max, got ({smin}, {smax})"
            ));
        }
        if g.count > 0 && (0..d).any(|a| wmin[a] + rmax > wmax[a] - rmax) {
            return Err(format!(
                "generate.radius: a sphere of radius {rmax} does not fit in the world (min {}, \
                 max {})",
                shown(wmin),
                shown(wmax)
            ));
        }
        let first = scene.spheres.iter().map(|s| u64::from(s.id) + 1).max();
        if first.unwrap_or(0) + u64::from(g.count) > u64::from(u32::MAX) + 1 {
            return Err(format!(
                "generate.count: {} generated spheres would need ids above {}",
                g.count,
                u32::MAX
            ));
        }
    }
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, s) in scene.spheres.iter().enumerate() {
        check_sphere(scene, s).map_err(|e| format!("spheres[{i}] (id {}): {e}", s.id))?;
        if let Some(first) = seen.insert(s.id, i) {
            return Err(format!(
                "spheres[{i}] (id {}): duplicate id, also used by spheres[{first}]",
                s.id
            ));
        }
    }
    Ok(())
}

/// A margin or look-ahead: finite and >= 0.
pub(crate) fn check_setting(name: &str, value: f32) -> Result<(), String> {
    if !value.is_finite() {
        return Err(format!("{name} must be a finite number >= 0, got {value}"));
    }
    if value < 0.0 {
        return Err(format!("{name} must be >= 0, got {value}"));
    }
    Ok(())
}

/// One sphere's own rules (everything but id uniqueness), without the `spheres[i]` prefix.
pub(crate) fn check_sphere(scene: &Scene, s: &Sphere) -> Result<(), String> {
    let d = usize::from(scene.dimensions);
    let shown = |v: Vec3| fmt_numbers(&v.to_array()[..d]);
    if !s.center.is_finite() {
        return Err(format!(
            "center must have finite numbers, got {}",
            shown(s.center)
        ));
    }
    if !s.velocity.is_finite() {
        return Err(format!(
            "velocity must have finite numbers, got {}",
            shown(s.velocity)
        ));
    }
    if !s.radius.is_finite() {
        return Err(format!(
            "radius must be a finite number > 0, got {}",
            s.radius
        ));
    }
    if s.radius <= 0.0 {
        return Err(format!("radius must be > 0, got {}", s.radius));
    }
    if d == 2 && (s.center.z != 0.0 || s.velocity.z != 0.0) {
        return Err("center and velocity must have z = 0 in a 2D scene".to_owned());
    }
    // The same bounds the simulation clamps to when a sphere bounces.
    let (wmin, wmax) = (scene.world.min, scene.world.max);
    if (0..d).any(|a| s.center[a] < wmin[a] + s.radius || s.center[a] > wmax[a] - s.radius) {
        return Err(format!(
            "the sphere (center {}, radius {}) reaches outside the world (min {}, max {})",
            shown(s.center),
            s.radius,
            shown(wmin),
            shown(wmax)
        ));
    }
    if let Some(gone) = s.disappear_at
        && gone <= s.appear_at
    {
        return Err(format!(
            "disappear_at ({gone}) must be > appear_at ({})",
            s.appear_at
        ));
    }
    Ok(())
}

/// [`check`] as a [`SceneError`] naming `file`.
pub(crate) fn validate(scene: &Scene, file: &str) -> Result<(), SceneError> {
    check(scene).map_err(|message| SceneError::Invalid {
        file: file.to_owned(),
        message,
    })
}
