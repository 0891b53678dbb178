//! Seeded sphere generation: PCG32 with the scene's seed and a fixed stream, floats and
//! directions built from its raw output with exact operations only, so a seed gives the same
//! spheres on every platform and with every crate version.

use super::{Scene, Sphere};
use glam::Vec3;
use rand::Rng;
use rand_pcg::Pcg32;

/// The PCG stream of scene generation (any fixed constant; changing it changes every scene).
const STREAM: u64 = 0x0aab_bdeb_0660_0001;

/// A number in `[0, 1)` from the top 24 bits of the next output (exact in f32).
fn unit(rng: &mut Pcg32) -> f32 {
    (rng.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// A number in `[lo, hi]`.
fn between(rng: &mut Pcg32, lo: f32, hi: f32) -> f32 {
    let u = unit(rng);
    if lo <= hi {
        (lo + (hi - lo) * u).max(lo).min(hi)
    } else {
        lo
    }
}

/// A unit vector in the first `dims` axes, uniform in direction: rejection sampling in the
/// unit disc or ball (no trigonometry, whose results vary between platforms).
fn direction(rng: &mut Pcg32, dims: usize) -> Vec3 {
    for _ in 0..64 {
        let mut v = Vec3::ZERO;
        for a in 0..dims {
            v[a] = 2.0 * unit(rng) - 1.0;
        }
        let len2 = v.length_squared();
        if len2 > 1e-6 && len2 <= 1.0 {
            return v / len2.sqrt();
        }
    }
    Vec3::X
}

/// The generated spheres of a (valid) scene, ids following the largest listed id.
pub(crate) fn generate(scene: &Scene) -> Vec<Sphere> {
    let Some(g) = scene.generate else {
        return Vec::new();
    };
    let dims = usize::from(scene.dimensions.clamp(2, 3));
    // Validation keeps `first_id + count - 1` within u32.
    let first_id = scene
        .spheres
        .iter()
        .map(|s| u64::from(s.id) + 1)
        .max()
        .unwrap_or(0);
    let mut rng = Pcg32::new(g.seed, STREAM);
    let (wmin, wmax) = (scene.world.min, scene.world.max);
    (0..g.count)
        .map(|k| {
            let radius = between(&mut rng, g.radius.0, g.radius.1);
            let mut center = Vec3::ZERO;
            for a in 0..dims {
                center[a] = between(&mut rng, wmin[a] + radius, wmax[a] - radius);
            }
            let speed = between(&mut rng, g.speed.0, g.speed.1);
            let velocity = direction(&mut rng, dims) * speed;
            Sphere {
                id: (first_id + u64::from(k)) as u32,
                label: None,
                center,
                radius,
                velocity,
                appear_at: 0,
                disappear_at: None,
            }
        })
        .collect()
}
