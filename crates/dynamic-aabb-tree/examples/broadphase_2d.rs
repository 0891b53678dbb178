//! A 2D broad phase: a few hundred moving circles, each a proxy of the tree holding its
//! bounding box. Every step moves the circles, gives each new box to `move_proxy` and asks
//! `update_pairs` for the candidate pairs (circles whose fat boxes overlap). Each step is
//! checked against brute force: the candidate pairs must be exactly the pairs of overlapping
//! fat boxes, and every two circles that really touch must be among them.
//!
//! `cargo run -p dynamic-aabb-tree --example broadphase_2d` (exits 1 on a mismatch).

use dynamic_aabb_tree::{Aabb, DynamicTree, ProxyId, TreeConfig};
use glam::Vec2;
use std::collections::BTreeSet;
use std::process::ExitCode;

/// Circles in the world.
const CIRCLES: usize = 400;
/// Side of the square world.
const SIDE: f32 = 60.0;
/// Seconds per step.
const DT: f32 = 1.0 / 30.0;
/// Steps to run.
const STEPS: usize = 8;

/// One moving circle.
struct Circle {
    center: Vec2,
    velocity: Vec2,
    radius: f32,
}

impl Circle {
    /// The circle's tight bounding box.
    fn tight(&self) -> Aabb<Vec2> {
        Aabb::from_center_half_extent(self.center, Vec2::splat(self.radius))
    }
}

/// The fractional part of `x` (for a deterministic, evenly spread layout).
fn fract(x: f64) -> f32 {
    (x - x.floor()) as f32
}

fn main() -> ExitCode {
    // Circles spread by low-discrepancy sequences: no random numbers, the same run each time.
    let mut circles: Vec<Circle> = (0..CIRCLES)
        .map(|i| {
            let i = i as f64;
            let radius = 0.4 + 0.6 * fract(i * 0.414_213_562);
            let x = radius + (SIDE - 2.0 * radius) * fract(i * 0.618_033_988);
            let y = radius + (SIDE - 2.0 * radius) * fract(i * 0.754_877_666);
            let angle = (i * 2.399_963_229) as f32;
            let speed = 2.0 + 6.0 * fract(i * 0.569_840_291);
            Circle {
                center: Vec2::new(x, y),
                velocity: Vec2::from_angle(angle) * speed,
                radius,
            }
        })
        .collect();

    // Fat boxes: the tight box grown by 0.2 and stretched by a tenth of a second of motion, so
    // most steps move a circle inside its fat box and the tree does not change.
    let config = TreeConfig {
        margin: 0.2,
        velocity_lookahead: 0.1,
        ..TreeConfig::default()
    };
    let mut tree = DynamicTree::<Vec2, usize>::new(config);
    let ids: Vec<ProxyId> = circles
        .iter()
        .enumerate()
        .map(|(i, c)| {
            tree.create_proxy(c.tight(), c.velocity, i)
                .expect("a finite box")
        })
        .collect();

    let mut ok = true;
    for step in 0..=STEPS {
        let mut reinserted = 0;
        if step > 0 {
            for (c, &id) in circles.iter_mut().zip(&ids) {
                c.center += c.velocity * DT;
                // Bounce off the walls.
                for axis in 0..2 {
                    let (lo, hi) = (c.radius, SIDE - c.radius);
                    if (c.center[axis] < lo && c.velocity[axis] < 0.0)
                        || (c.center[axis] > hi && c.velocity[axis] > 0.0)
                    {
                        c.velocity[axis] = -c.velocity[axis];
                    }
                }
                if tree
                    .move_proxy(id, c.tight(), c.velocity)
                    .expect("a live proxy")
                {
                    reinserted += 1;
                }
            }
        }
        let update = tree.update_pairs().expect("no pair limit is set");
        let pairs: BTreeSet<(usize, usize)> = tree
            .pairs()
            .iter()
            .map(|&(a, b)| {
                let (a, b) = (
                    tree.user_data(a).expect("live"),
                    tree.user_data(b).expect("live"),
                );
                (a.min(b), a.max(b))
            })
            .collect();

        // Brute force over every two circles.
        let fat: Vec<Aabb<Vec2>> = ids
            .iter()
            .map(|&id| tree.fat_aabb(id).expect("live"))
            .collect();
        let mut want = BTreeSet::new();
        let mut contacts = 0;
        let mut missed = 0;
        for i in 0..CIRCLES {
            for j in i + 1..CIRCLES {
                if fat[i].overlaps(&fat[j]) {
                    want.insert((i, j));
                }
                let (a, b) = (&circles[i], &circles[j]);
                if a.center.distance(b.center) <= a.radius + b.radius {
                    contacts += 1;
                    if !pairs.contains(&(i, j)) {
                        missed += 1;
                    }
                }
            }
        }
        let matches = pairs == want && missed == 0;
        println!(
            "step {step}: {reinserted:3} reinserted, {:3} candidate pairs ({}), {contacts:3} \
             contacts, brute force {}",
            pairs.len(),
            if update.recomputed {
                "recomputed"
            } else {
                "unchanged"
            },
            if matches { "agrees" } else { "DISAGREES" }
        );
        if !matches {
            eprintln!(
                "  {} pairs only in the tree, {} only in brute force, {missed} contacts missed",
                pairs.difference(&want).count(),
                want.difference(&pairs).count()
            );
            ok = false;
        }
    }
    if let Err(e) = tree.validate() {
        eprintln!("{e}");
        ok = false;
    }
    let stats = tree.stats();
    println!(
        "tree: {} leaves, height {} (least {}), area ratio {:.2}",
        stats.leaves, stats.height, stats.min_height, stats.area_ratio
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
