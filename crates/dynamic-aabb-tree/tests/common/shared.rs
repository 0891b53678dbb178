//! Helpers shared by the crate's unit tests (`src/tests.rs`), its integration tests
//! (`tests/common`) and its benchmark (`benches/tree.rs`): the one splitmix64 generator of the
//! crate's tests, random vectors and boxes from it, and brute-force pairs. Each includes this
//! file as a module of its own (`#[path]`), so there is one copy of the code.

// Each user needs a different part of this module.
#![allow(dead_code)]

use dynamic_aabb_tree::{Aabb, DynamicTree, ProxyId, Vector};
use glam::Vec2;

/// splitmix64, for seeded test data.
#[derive(Clone, Debug)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// An index in `0..n` (n > 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// An integer in `lo..=hi`.
    pub fn int(&mut self, lo: i32, hi: i32) -> i32 {
        lo + self.below((hi - lo + 1) as u64) as i32
    }

    /// A number in `[a, b)`: 53 random bits scaled in `f64`, rounded to `f32` at the end.
    pub fn uniform(&mut self, a: f32, b: f32) -> f32 {
        let u = (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        (f64::from(a) + f64::from(b - a) * u) as f32
    }
}

/// A random vector with components in `[a, b)`.
pub fn rand_vec<V: Vector>(rng: &mut SplitMix, a: f32, b: f32) -> V {
    let mut v = V::splat(0.0);
    for i in 0..V::DIM {
        v.set_axis(i, rng.uniform(a, b));
    }
    v
}

/// A random box in a world of side `side`, extents up to `size`.
pub fn rand_box<V: Vector>(rng: &mut SplitMix, side: f32, size: f32) -> Aabb<V> {
    let min = rand_vec::<V>(rng, 0.0, side);
    let ext = rand_vec::<V>(rng, 0.0, size);
    Aabb::new(min, min + ext)
}

/// A 2D box from its corners, unchecked.
pub fn b2(x0: f32, y0: f32, x1: f32, y1: f32) -> Aabb<Vec2> {
    Aabb::new(Vec2::new(x0, y0), Vec2::new(x1, y1))
}

/// Every pair of live proxies whose fat boxes overlap (the library's `Aabb::overlaps`),
/// sorted: what `DynamicTree::pairs` must say after `update_pairs`.
pub fn brute_pairs<V: Vector, T: Copy>(tree: &DynamicTree<V, T>) -> Vec<(ProxyId, ProxyId)> {
    let ids = tree.proxies();
    let boxes: Vec<_> = ids
        .iter()
        .map(|&id| tree.fat_aabb(id).expect("live"))
        .collect();
    let mut out = Vec::new();
    for i in 0..ids.len() {
        for j in i + 1..ids.len() {
            if boxes[i].overlaps(&boxes[j]) {
                out.push((ids[i], ids[j]));
            }
        }
    }
    out
}
