//! Criterion benchmark of the tree alone: building a tree of 10,000 and of 100,000 random
//! boxes (one proxy at a time, and as one batch), rebuilding a tree of 100,000 in place by
//! binned SAH and by agglomerative clustering (`rebuild/...`), and one step of moving boxes
//! (`move_proxy` on every proxy, then `update_pairs`) at 10,000 and at 100,000, the latter
//! with the optimization pass off and at its default share (`step/...`).
//!
//! `cargo bench -p dynamic-aabb-tree`; `cargo bench -p dynamic-aabb-tree --bench tree --
//! rebuild` for one group.

#[path = "../tests/common/shared.rs"]
mod shared;

use criterion::{Criterion, criterion_group, criterion_main};
use dynamic_aabb_tree::{
    Aabb, DEFAULT_OPTIMIZE_SHARE, DynamicTree, ProxyId, RebuildMethod, TreeConfig,
};
use glam::Vec2;
use shared::{SplitMix, rand_vec};
use std::hint::black_box;
use std::time::{Duration, Instant};

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

fn rebuild(c: &mut Criterion) {
    const N: usize = 100_000;
    let items: Vec<_> = random_boxes(N, 42)
        .into_iter()
        .enumerate()
        .map(|(i, (tight, velocity))| (tight, velocity, i as u32))
        .collect();
    let mut group = c.benchmark_group("rebuild");
    group.sample_size(10);
    // The same tree rebuilt in place again and again (the pool and the scratch lists are
    // reused); the methods take turns in each run of the group.
    for method in RebuildMethod::ALL {
        let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
            rebuild: method,
            ..TreeConfig::default()
        });
        tree.create_proxies(&items).expect("finite boxes");
        group.bench_function(format!("{method:?} {N}"), |b| {
            b.iter(|| {
                tree.rebuild();
                black_box(tree.root())
            });
        });
    }
    group.finish();
}

fn step(c: &mut Criterion) {
    let mut group = c.benchmark_group("step");
    group.sample_size(10);
    let off = TreeConfig {
        optimize_share: 0.0,
        ..TreeConfig::default()
    };
    step_at(&mut group, 10_000, TreeConfig::default(), false);
    step_at(&mut group, 100_000, off, false);
    step_at(&mut group, 100_000, TreeConfig::default(), false);
    // The optimization pass alone: after each step (the pass off), the pass of the default
    // share is timed by itself, so its share of a step is read against the step above
    // without the two runs' noise apart.
    step_at(&mut group, 100_000, off, true);
    group.finish();
}

/// A simulation of `n` random boxes in a square, moved on from sample to sample; each sample
/// is one step (or, with `pass_alone`, the optimization pass of the default share after an
/// untimed step).
fn step_at(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    n: usize,
    config: TreeConfig,
    pass_alone: bool,
) {
    let side = (n as f32).sqrt() * 2.0;
    let mut boxes = random_boxes(n, 7);
    let mut tree = DynamicTree::<Vec2, u32>::new(config);
    let ids: Vec<_> = boxes
        .iter()
        .enumerate()
        .map(|(i, (tight, velocity))| {
            tree.create_proxy(*tight, *velocity, i as u32)
                .expect("a finite box")
        })
        .collect();
    tree.update_pairs().expect("no pair limit");
    if pass_alone {
        let budget = (f64::from(DEFAULT_OPTIMIZE_SHARE) * n as f64) as usize;
        group.bench_function(format!("optimize({budget}) after a step at {n}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    advance(&mut tree, &ids, &mut boxes, side);
                    let start = Instant::now();
                    black_box(tree.optimize(budget));
                    total += start.elapsed();
                }
                total
            });
        });
    } else {
        let share = tree.config().optimize_share;
        let name = format!("move_proxy x {n} + update_pairs, optimize_share {share}");
        group.bench_function(name, |b| {
            b.iter(|| black_box(advance(&mut tree, &ids, &mut boxes, side)));
        });
    }
}

/// One step: every box moves by its velocity times 1/60 s (bouncing off the walls of the
/// square of side `side`) and is given to `move_proxy`; a box leaves its fat box (margin
/// 0.1) every few steps. Then the pairs are brought up to date.
fn advance(
    tree: &mut DynamicTree<Vec2, u32>,
    ids: &[ProxyId],
    boxes: &mut [(Aabb<Vec2>, Vec2)],
    side: f32,
) -> usize {
    const DT: f32 = 1.0 / 60.0;
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
    tree.update_pairs().expect("no pair limit");
    tree.pair_count()
}

criterion_group!(benches, build, rebuild, step);
criterion_main!(benches);
