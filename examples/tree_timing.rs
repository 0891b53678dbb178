//! A quick release-mode timing harness of the standard workload (DESIGN.md) on the tree, for
//! tuning: `cargo run --release --no-default-features --example tree_timing -- N STEPS
//! [insertion] [balancing] [pairs] [update]`.

use aabb_debugger::tree::{
    Aabb, Balancing, DynamicTree, InsertionCost, PairMethod, TreeConfig, UpdateMode,
};
use aabb_debugger::workload::mix64;
use glam::Vec2;
use std::time::Instant;

struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }
    fn uniform(&mut self, a: f64, b: f64) -> f32 {
        let u = (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        (a + (b - a) * u) as f32
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let steps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(600);
    let insertion = match args.get(3).map(String::as_str) {
        Some("volume") => InsertionCost::Volume,
        Some("perimeter") => InsertionCost::Perimeter,
        _ => InsertionCost::SurfaceArea,
    };
    let balancing = match args.get(4).map(String::as_str) {
        Some("none") => Balancing::None,
        Some("avl") => Balancing::Avl,
        _ => Balancing::Rotations,
    };
    let pairs = match args.get(5).map(String::as_str) {
        Some("moved") => PairMethod::MovedQueries,
        _ => PairMethod::SelfTraversal,
    };
    let update = match args.get(6).map(String::as_str) {
        Some("enlarge") => UpdateMode::EnlargeAndRebuild,
        _ => UpdateMode::Reinsert,
    };
    let config = TreeConfig {
        margin: 0.1,
        velocity_lookahead: 0.0,
        insertion,
        balancing,
        pairs,
        update,
    };

    let mut rng = SplitMix(42);
    let side = ((n as f64).sqrt() * 4.0) as f32;
    let mut pos = Vec::with_capacity(n);
    let mut vel = Vec::with_capacity(n);
    let mut rad = Vec::with_capacity(n);
    for _ in 0..n {
        let r = rng.uniform(0.5, 1.5);
        let x = rng.uniform(r as f64, (side - r) as f64);
        let y = rng.uniform(r as f64, (side - r) as f64);
        let vx = rng.uniform(-1.0, 1.0);
        let vy = rng.uniform(-1.0, 1.0);
        pos.push(Vec2::new(x, y));
        vel.push(Vec2::new(vx, vy));
        rad.push(r);
    }
    let tight = |p: Vec2, r: f32| Aabb::new(p - Vec2::splat(r), p + Vec2::splat(r));

    let t0 = Instant::now();
    let mut tree = DynamicTree::<Vec2, u32>::with_capacity(config, n).expect("config");
    let ids: Vec<_> = (0..n)
        .map(|i| {
            tree.create_proxy(tight(pos[i], rad[i]), Vec2::ZERO, i as u32)
                .expect("create")
        })
        .collect();
    tree.update_pairs();
    let build_ms = t0.elapsed().as_secs_f64() * 1e3;

    let dt = 1.0f32 / 60.0;
    let mut hash = 0u64;
    let mut total_pairs = 0usize;
    let mut reinserts = 0usize;
    let mut times = Vec::with_capacity(steps);
    let (mut t_move, mut t_pairs) = (0.0, 0.0);
    for _ in 0..steps {
        let start = Instant::now();
        for i in 0..n {
            let r = rad[i];
            let mut p = pos[i];
            let mut v = vel[i];
            p.x += v.x * dt;
            if p.x < r {
                p.x = r;
                v.x = -v.x;
            } else if p.x > side - r {
                p.x = side - r;
                v.x = -v.x;
            }
            p.y += v.y * dt;
            if p.y < r {
                p.y = r;
                v.y = -v.y;
            } else if p.y > side - r {
                p.y = side - r;
                v.y = -v.y;
            }
            pos[i] = p;
            vel[i] = v;
            if tree
                .move_proxy(ids[i], tight(p, r), Vec2::ZERO)
                .expect("move")
            {
                reinserts += 1;
            }
        }
        let mid = Instant::now();
        tree.update_pairs();
        let end = Instant::now();
        t_move += (mid - start).as_secs_f64();
        t_pairs += (end - mid).as_secs_f64();
        times.push((end - start).as_secs_f64() * 1e3);
        total_pairs += tree.pair_count();
        tree.for_each_pair(|a, b| {
            hash = hash.wrapping_add(mix64(((a.index as u64) << 32) | b.index as u64));
        });
    }
    let mean = times.iter().sum::<f64>() / steps as f64;
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[steps / 2];
    let stats = tree.stats();
    println!(
        "n {n} steps {steps} {insertion:?} {balancing:?} {pairs:?} {update:?}: build {build_ms:.2} ms, \
         step mean {mean:.3} ms median {median:.3} ms (move {:.3} pairs {:.3}), avg pairs {:.1}, \
         reinserts/step {:.1}, hash {hash:016x}, height {} (min {}), area ratio {:.1}, bytes/proxy {:.1}",
        t_move * 1e3 / steps as f64,
        t_pairs * 1e3 / steps as f64,
        total_pairs as f64 / steps as f64,
        reinserts as f64 / steps as f64,
        stats.height,
        stats.min_height,
        stats.area_ratio,
        stats.bytes as f64 / n as f64,
    );
}
