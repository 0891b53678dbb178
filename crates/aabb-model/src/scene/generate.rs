//! Seeded sphere generation: PCG32 with the scene's seed and a fixed stream, floats and
//! directions built from its raw output with exact operations only, so a seed gives the same
//! spheres on every platform and with every crate version.

use super::{Scene, Sphere};
use crate::tree::Aabb;
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

/// The id of the first generated sphere: one past the largest listed sphere or static box id
/// (0 when there is none), so that generated spheres take no listed id.
pub(crate) fn first_generated_id(scene: &Scene) -> u64 {
    let spheres = scene.spheres.iter().map(|s| s.id);
    let boxes = scene.boxes.iter().map(|b| b.id);
    spheres
        .chain(boxes)
        .map(|id| u64::from(id) + 1)
        .max()
        .unwrap_or(0)
}

/// The generated spheres of a (valid) scene, ids following the largest listed id (of a
/// sphere or a static box).
pub(crate) fn generate(scene: &Scene) -> Vec<Sphere> {
    let Some(g) = scene.generate else {
        return Vec::new();
    };
    let dims = usize::from(scene.dimensions.clamp(2, 3));
    // Validation keeps `first_id + count - 1` within u32.
    let first_id = first_generated_id(scene);
    let mut rng = Pcg32::new(g.seed, STREAM);
    let world = grown_world(scene);
    let (wmin, wmax) = (world.min, world.max);
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

/// The mean area (2D) or volume (3D) of a sphere whose radius is uniform in `[a, b]`.
fn mean_measure(dims: usize, (a, b): (f32, f32)) -> f64 {
    let (a, b) = (f64::from(a), f64::from(b));
    if dims == 2 {
        std::f64::consts::PI * (a * a + a * b + b * b) / 3.0
    } else {
        4.0 / 3.0 * std::f64::consts::PI * (a * a * a + a * a * b + a * b * b + b * b * b) / 4.0
    }
}

/// The scene's world, grown about its centre (same shape) until the generated spheres fill at
/// most the generator's density of it; the world as it is when there is no density, no
/// sphere to generate, or it is large enough already. Only grows, so applying it twice gives
/// the same world. Not finite when the numbers overflow (validation refuses that).
pub(crate) fn grown_world(scene: &Scene) -> Aabb<Vec3> {
    let world = scene.world;
    let Some(g) = scene.generate else {
        return world;
    };
    let Some(density) = g.density else {
        return world;
    };
    if g.count == 0 || !(density > 0.0 && density <= 1.0) {
        return world;
    }
    let dims = usize::from(scene.dimensions.clamp(2, 3));
    let need = f64::from(g.count) * mean_measure(dims, g.radius) / f64::from(density);
    let extent = |a: usize| f64::from(world.max[a]) - f64::from(world.min[a]);
    let have: f64 = (0..dims).map(extent).product();
    if !need.is_finite() || !have.is_finite() || need <= have || have <= 0.0 {
        return world;
    }
    let scale = (need / have).powf(1.0 / dims as f64);
    let (mut min, mut max) = (world.min, world.max);
    for a in 0..dims {
        let centre = 0.5 * (f64::from(world.min[a]) + f64::from(world.max[a]));
        let half = 0.5 * extent(a) * scale;
        // Rounded outwards, so the grown world holds the exact one.
        min[a] = (centre - half) as f32;
        max[a] = (centre + half) as f32;
        if f64::from(min[a]) > centre - half {
            min[a] = min[a].next_down();
        }
        if f64::from(max[a]) < centre + half {
            max[a] = max[a].next_up();
        }
    }
    Aabb::new(min, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Generate;

    fn scene(dims: u8, count: u32, density: Option<f32>) -> Scene {
        let mut s = Scene::builtin_default();
        s.dimensions = dims;
        s.spheres.clear();
        s.world = if dims == 2 {
            Aabb::new(Vec3::new(0.0, 0.0, 0.0), Vec3::new(40.0, 20.0, 0.0))
        } else {
            Aabb::new(Vec3::ZERO, Vec3::new(40.0, 20.0, 10.0))
        };
        s.generate = Some(Generate {
            count,
            radius: (1.0, 1.0),
            speed: (0.0, 1.0),
            seed: 3,
            density,
        });
        s
    }

    #[test]
    fn the_world_grows_with_the_count_to_the_density_and_keeps_its_shape() {
        // 10,000 unit discs at density 0.1 need 314,159 square units: 40 x 20 grows by
        // sqrt(314159 / 800) = 19.82 about its centre (20, 10).
        let w = grown_world(&scene(2, 10_000, Some(0.1)));
        let size = w.max - w.min;
        let area = f64::from(size.x) * f64::from(size.y);
        let want = 10_000.0 * std::f64::consts::PI / 0.1;
        assert!((area / want - 1.0).abs() < 1e-5, "{area} against {want}");
        assert!((size.x / size.y - 2.0).abs() < 1e-5);
        assert!(((w.min.x + w.max.x) * 0.5 - 20.0).abs() < 1e-3);
        assert_eq!((w.min.z, w.max.z), (0.0, 0.0));
        // Ten times the spheres, ten times the area.
        let w10 = grown_world(&scene(2, 100_000, Some(0.1)));
        let s10 = w10.max - w10.min;
        let ratio = f64::from(s10.x) * f64::from(s10.y) / area;
        assert!((ratio - 10.0).abs() < 1e-3, "{ratio}");
        // 3D: the volume.
        let w3 = grown_world(&scene(3, 10_000, Some(0.05)));
        let s3 = w3.max - w3.min;
        let vol = f64::from(s3.x) * f64::from(s3.y) * f64::from(s3.z);
        let want3 = 10_000.0 * 4.0 / 3.0 * std::f64::consts::PI / 0.05;
        assert!((vol / want3 - 1.0).abs() < 1e-5, "{vol} against {want3}");
    }

    #[test]
    fn a_large_enough_world_or_no_density_stays_and_growing_twice_changes_nothing() {
        let few = scene(2, 10, Some(0.1));
        assert_eq!(grown_world(&few), few.world);
        let plain = scene(2, 10_000, None);
        assert_eq!(grown_world(&plain), plain.world);
        let mut once = scene(2, 10_000, Some(0.1));
        once.world = grown_world(&once);
        assert_eq!(grown_world(&once), once.world);
        // Generated spheres lie in the grown world.
        let mut big = scene(2, 20_000, Some(0.2));
        big.world = grown_world(&big);
        for s in generate(&big) {
            assert!(s.center.x - s.radius >= big.world.min.x);
            assert!(s.center.x + s.radius <= big.world.max.x);
        }
    }
}
