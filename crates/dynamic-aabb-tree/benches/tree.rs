//! Criterion benchmark of the tree alone: building a tree of 10,000 and of 100,000 random
//! boxes (one proxy at a time, and as one batch), and one step of moving boxes (`move_proxy`
//! on every proxy, then `update_pairs`) at 10,000.
//!
//! `cargo bench -p dynamic-aabb-tree`.

#[path = "../tests/common/shared.rs"]
mod shared;

use criterion::{Criterion, criterion_group, criterion_main};
use dynamic_aabb_tree::{Aabb, DynamicTree, TreeConfig};
use glam::Vec2;
use shared::{SplitMix, rand_vec};
use std::hint::black_box;

/// `n` boxes of side 0.5 to 1.5 inside a square of 4 units² per box, with velocities in
/// `[-1, 1)²`.
fn random_boxes(n: usize, seed: u64) -> Vec<(Aabb<Vec2>, Vec2)> {
    let mut rng = SplitMix(seed);
    let side = (n as f32).sqrt() * 2.0;
    (0..n)
        .map(|_| {
            let half = Vec2::splat(rng.uniform(0.25, 0.75));
            let center = rand_vec::<Vec2>(&mut rng, 0.75, side - 0.75);
            let velocity = rand_vec::<Vec2>(&mut rng, -1.0, 1.0);
            (Aabb::from_center_half_extent(center, half), velocity)
        })
        .collect()
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    for n in [10_000, 100_000] {
        let boxes = random_boxes(n, 42);
        group.bench_function(format!("create_proxy x {n}"), |b| {
            b.iter(|| {
                let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
                for (i, (tight, velocity)) in boxes.iter().enumerate() {
                    tree.create_proxy(*tight, *velocity, i as u32)
                        .expect("a finite box");
                }
                black_box(tree.len())
            });
        });
        let items: Vec<_> = boxes
            .iter()
            .enumerate()
            .map(|(i, (tight, velocity))| (*tight, *velocity, i as u32))
            .collect();
        group.bench_function(format!("create_proxies {n}"), |b| {
            b.iter(|| {
                let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
                tree.create_proxies(&items).expect("finite boxes");
                black_box(tree.len())
            });
        });
    }
    group.finish();
}

fn step(c: &mut Criterion) {
    const N: usize = 10_000;
    const DT: f32 = 1.0 / 60.0;
    let side = (N as f32).sqrt() * 2.0;
    let mut boxes = random_boxes(N, 7);
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let ids: Vec<_> = boxes
        .iter()
        .enumerate()
        .map(|(i, (tight, velocity))| {
            tree.create_proxy(*tight, *velocity, i as u32)
                .expect("a finite box")
        })
        .collect();
    tree.update_pairs().expect("no pair limit");
    let mut group = c.benchmark_group("step");
    // One step of a simulation that goes on from sample to sample: every box moves by its
    // velocity times 1/60 s (bouncing off the walls of the square) and is given to
    // `move_proxy`; a box leaves its fat box (margin 0.1) every few steps. Then the pairs are
    // brought up to date.
    group.bench_function(format!("move_proxy x {N} + update_pairs"), |b| {
        b.iter(|| {
            for (id, (tight, velocity)) in ids.iter().zip(boxes.iter_mut()) {
                let mut d = *velocity * DT;
                for axis in 0..2 {
                    let (lo, hi) = (tight.min[axis] + d[axis], tight.max[axis] + d[axis]);
                    if (lo < 0.0 && d[axis] < 0.0) || (hi > side && d[axis] > 0.0) {
                        velocity[axis] = -velocity[axis];
                        d[axis] = -d[axis];
                    }
                }
                *tight = Aabb::new(tight.min + d, tight.max + d);
                tree.move_proxy(*id, *tight, *velocity)
                    .expect("a live proxy");
            }
            black_box(tree.update_pairs().expect("no pair limit"))
        });
    });
    group.finish();
}

criterion_group!(benches, build, step);
criterion_main!(benches);
