//! Unit tests of the tree: basics, errors, every configuration against brute force, and the
//! articles' hand-checked cases.

use super::query::segment_enters;
use super::*;
use glam::{Vec2, Vec3};

/// The pair searches to test: on one thread, and split over rayon's pool when the `parallel`
/// feature is on.
const SPLIT: &[bool] = if cfg!(feature = "parallel") {
    &[false, true]
} else {
    &[false]
};

/// splitmix64, for deterministic test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self, a: f32, b: f32) -> f32 {
        let u = (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        (a as f64 + (b - a) as f64 * u) as f32
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random vector with components in `[a, b)`.
fn rand_vec<V: Vector>(rng: &mut Rng, a: f32, b: f32) -> V {
    let mut v = V::splat(0.0);
    for i in 0..V::DIM {
        v.set_axis(i, rng.uniform(a, b));
    }
    v
}

/// A random box in a world of side `side`, extents up to `size`.
fn rand_box<V: Vector>(rng: &mut Rng, side: f32, size: f32) -> Aabb<V> {
    let min = rand_vec::<V>(rng, 0.0, side);
    let ext = rand_vec::<V>(rng, 0.0, size);
    Aabb::new(min, min + ext)
}

fn b2(x0: f32, y0: f32, x1: f32, y1: f32) -> Aabb<Vec2> {
    Aabb::new(Vec2::new(x0, y0), Vec2::new(x1, y1))
}

/// Every pair of live proxies whose fat boxes overlap, sorted.
fn brute_pairs<V: Vector, T: Copy>(tree: &DynamicTree<V, T>) -> Vec<(ProxyId, ProxyId)> {
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

fn all_configs() -> Vec<TreeConfig> {
    TreeConfig::default().every_combination()
}

/// Checks pairs and queries of `tree` against brute force.
fn check_against_brute<V: Vector>(tree: &mut DynamicTree<V, u32>, rng: &mut Rng, side: f32) {
    tree.update_pairs().expect("no pair limit");
    tree.validate().expect("valid after update_pairs");
    let expected = brute_pairs(tree);
    assert_eq!(tree.pairs(), expected.as_slice(), "pairs");
    let mut unsorted = tree.pairs_unsorted().collect::<Vec<_>>();
    unsorted.sort_unstable();
    assert_eq!(unsorted, expected, "unsorted pairs");
    let mut indices = tree.pair_indices().to_vec();
    indices.sort_unstable();
    let want: Vec<_> = expected.iter().map(|(a, b)| (a.index, b.index)).collect();
    assert_eq!(indices, want, "pair indices");
    // Box query.
    let q = rand_box::<V>(rng, side, side * 0.3);
    let mut got = Vec::new();
    tree.query_aabb(&q, |id| {
        got.push(id);
        true
    });
    got.sort_unstable();
    let want: Vec<_> = tree
        .proxies()
        .into_iter()
        .filter(|&id| tree.fat_aabb(id).expect("live").overlaps(&q))
        .collect();
    assert_eq!(got, want, "box query");
    // Point query.
    let p = rand_vec::<V>(rng, 0.0, side);
    let mut got = Vec::new();
    tree.query_point(p, |id| {
        got.push(id);
        true
    });
    got.sort_unstable();
    let want: Vec<_> = tree
        .proxies()
        .into_iter()
        .filter(|&id| tree.fat_aabb(id).expect("live").contains_point(p))
        .collect();
    assert_eq!(got, want, "point query");
    // Ray cast without clipping.
    let (o, e) = (rand_vec::<V>(rng, 0.0, side), rand_vec::<V>(rng, 0.0, side));
    let mut got = Vec::new();
    tree.ray_cast(o, e, 1.0, |id, t| {
        got.push((id, t));
        1.0
    });
    got.sort_by_key(|x| x.0);
    let want: Vec<_> = tree
        .proxies()
        .into_iter()
        .filter_map(|id| {
            segment_enters(o, e - o, &tree.fat_aabb(id).expect("live"), 1.0).map(|t| (id, t))
        })
        .collect();
    assert_eq!(got, want, "ray cast");
}

/// Random create / destroy / move / margin / rebuild sequence, validating after every step.
fn random_ops<V: Vector>(config: TreeConfig, seed: u64, steps: usize) {
    let mut rng = Rng(seed);
    let side = 40.0;
    let mut tree = DynamicTree::<V, u32>::try_new(config).expect("config");
    let mut live: Vec<ProxyId> = Vec::new();
    for step in 0..steps {
        let op = rng.below(100);
        if op < 30 || live.len() < 5 {
            let b = rand_box::<V>(&mut rng, side, 4.0);
            let v = rand_vec::<V>(&mut rng, -2.0, 2.0);
            let id = tree.create_proxy(b, v, step as u32).expect("create");
            assert_eq!(tree.user_data(id), Ok(step as u32));
            live.push(id);
        } else if op < 45 {
            let k = rng.below(live.len());
            let id = live.swap_remove(k);
            tree.destroy_proxy(id).expect("destroy");
            assert_eq!(tree.destroy_proxy(id), Err(TreeError::StaleProxy(id)));
        } else if op < 90 {
            let k = rng.below(live.len());
            let id = live[k];
            let old = tree.tight_aabb(id).expect("live");
            let d = rand_vec::<V>(&mut rng, -0.3, 0.3);
            let moved = Aabb::new(old.min + d, old.max + d);
            let fat_before = tree.fat_aabb(id).expect("live");
            let reinserted = tree
                .move_proxy(id, moved, rand_vec::<V>(&mut rng, -2.0, 2.0))
                .expect("move");
            assert_eq!(reinserted, !fat_before.contains(&moved));
            if !reinserted {
                assert_eq!(tree.fat_aabb(id), Ok(fat_before));
            }
            assert!(tree.fat_aabb(id).expect("live").contains(&moved));
        } else if op < 93 {
            tree.set_margin(rng.uniform(0.0, 0.5)).expect("margin");
        } else if op < 95 {
            tree.set_velocity_lookahead(rng.uniform(0.0, 0.3))
                .expect("lookahead");
        } else if op < 97 {
            tree.rebuild();
        } else {
            tree.rebuild_partial();
        }
        if let Err(e) = tree.validate() {
            panic!("{config:?} seed {seed} step {step}: {e}");
        }
        assert_eq!(tree.len(), live.len());
        if step % 7 == 0 {
            check_against_brute(&mut tree, &mut rng, side);
        }
    }
    check_against_brute(&mut tree, &mut rng, side);
    let mut sorted = live.clone();
    sorted.sort_unstable();
    assert_eq!(tree.proxies(), sorted);
}

/// `overlaps` and `contains` on closed boxes, per axis, in 2D and 3D: touching counts, a gap
/// on any one axis does not, and a NaN bound never overlaps or contains.
#[test]
fn box_predicates_are_closed_and_per_axis() {
    let a2 = Aabb::new(Vec2::new(0.0, 0.0), Vec2::new(1.0, 1.0));
    let touching = Aabb::new(Vec2::new(1.0, 1.0), Vec2::new(2.0, 2.0));
    let gap_x = Aabb::new(Vec2::new(1.001, 0.0), Vec2::new(2.0, 1.0));
    let gap_y = Aabb::new(Vec2::new(0.0, -2.0), Vec2::new(1.0, -0.001));
    let nan = Aabb::new(Vec2::new(f32::NAN, 0.0), Vec2::new(0.5, 0.5));
    assert!(a2.overlaps(&touching) && touching.overlaps(&a2));
    assert!(!a2.overlaps(&gap_x) && !gap_x.overlaps(&a2));
    assert!(!a2.overlaps(&gap_y) && !gap_y.overlaps(&a2));
    assert!(!a2.overlaps(&nan) && !nan.overlaps(&a2));
    assert!(a2.contains(&a2) && !a2.contains(&touching) && !a2.contains(&nan));

    let a3 = Aabb::new(Vec3::ZERO, Vec3::ONE);
    let touching3 = Aabb::new(Vec3::ONE, Vec3::splat(2.0));
    let gap_z = Aabb::new(Vec3::new(0.0, 0.0, 1.5), Vec3::new(1.0, 1.0, 2.0));
    let inside_xy_gap_z = Aabb::new(Vec3::new(0.2, 0.2, -1.0), Vec3::new(0.8, 0.8, -0.5));
    assert!(a3.overlaps(&touching3) && touching3.overlaps(&a3));
    assert!(!a3.overlaps(&gap_z) && !gap_z.overlaps(&a3));
    assert!(!a3.overlaps(&inside_xy_gap_z) && !inside_xy_gap_z.overlaps(&a3));
    assert!(a3.contains(&Aabb::new(Vec3::splat(0.5), Vec3::ONE)));
    assert!(!a3.contains(&inside_xy_gap_z));
}

#[test]
fn every_configuration_matches_brute_force_2d() {
    for (k, config) in all_configs().into_iter().enumerate() {
        random_ops::<Vec2>(config, 1000 + k as u64, 400);
    }
}

#[test]
fn every_configuration_matches_brute_force_3d() {
    for (k, config) in all_configs().into_iter().enumerate() {
        random_ops::<Vec3>(config, 2000 + k as u64, 400);
    }
}

#[test]
fn create_move_destroy_basics() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    assert!(tree.is_empty());
    assert_eq!(tree.root(), None);
    tree.validate().expect("empty is valid");
    let a = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 7)
        .expect("create");
    assert_eq!(tree.len(), 1);
    assert_eq!(tree.fat_aabb(a), Ok(b2(-0.1, -0.1, 1.1, 1.1)));
    assert_eq!(tree.root(), Some(tree.leaf_of(a).expect("live")));
    // Inside the fat box, boundary included: nothing changes.
    assert_eq!(
        tree.move_proxy(a, b2(0.1, 0.1, 1.1, 1.1), Vec2::ZERO),
        Ok(false)
    );
    assert_eq!(tree.tight_aabb(a), Ok(b2(0.1, 0.1, 1.1, 1.1)));
    assert_eq!(tree.fat_aabb(a), Ok(b2(-0.1, -0.1, 1.1, 1.1)));
    // Out of it: a new fat box.
    assert_eq!(
        tree.move_proxy(a, b2(0.2, 0.0, 1.2, 1.0), Vec2::ZERO),
        Ok(true)
    );
    let fat = tree.fat_aabb(a).expect("live");
    assert!((fat.min.x - 0.1).abs() < 1e-6 && (fat.max.x - 1.3).abs() < 1e-6);
    let b = tree
        .create_proxy(b2(5.0, 5.0, 6.0, 6.0), Vec2::ZERO, 8)
        .expect("create");
    tree.validate().expect("valid");
    assert_eq!(tree.stats().nodes, 3);
    assert_eq!(tree.destroy_proxy(a), Ok(7));
    assert_eq!(tree.destroy_proxy(a), Err(TreeError::StaleProxy(a)));
    assert_eq!(tree.fat_aabb(a), Err(TreeError::StaleProxy(a)));
    assert!(!tree.contains(a));
    tree.validate().expect("valid");
    // The slot is reused with a new generation; the old handle stays stale.
    let c = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 9)
        .expect("create");
    assert_eq!(c.index, a.index);
    assert_ne!(c.generation, a.generation);
    assert_eq!(tree.user_data(a), Err(TreeError::StaleProxy(a)));
    assert_eq!(tree.user_data(c), Ok(9));
    assert_eq!(tree.user_data(b), Ok(8));
    let never = ProxyId {
        index: 99,
        generation: 0,
    };
    assert_eq!(
        tree.move_proxy(never, b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO),
        Err(TreeError::StaleProxy(never))
    );
    tree.validate().expect("valid");
}

#[test]
fn bad_input_is_refused() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let nan = f32::NAN;
    assert_eq!(
        tree.create_proxy(b2(nan, 0.0, 1.0, 1.0), Vec2::ZERO, 0),
        Err(TreeError::NonFinite)
    );
    assert_eq!(
        tree.create_proxy(b2(0.0, 0.0, f32::INFINITY, 1.0), Vec2::ZERO, 0),
        Err(TreeError::NonFinite)
    );
    assert_eq!(
        tree.create_proxy(b2(2.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0),
        Err(TreeError::Inverted)
    );
    assert_eq!(
        tree.create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::new(nan, 0.0), 0),
        Err(TreeError::NonFinite)
    );
    // A fat box that overflows is refused too.
    let mut wide = DynamicTree::<Vec2, u32>::new(TreeConfig {
        margin: 1e38,
        ..TreeConfig::default()
    });
    assert_eq!(
        wide.create_proxy(b2(0.0, 0.0, 3e38, 1.0), Vec2::ZERO, 0),
        Err(TreeError::NonFinite)
    );
    assert!(wide.is_empty());
    wide.validate().expect("valid");
    let a = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
        .expect("create");
    assert_eq!(
        tree.move_proxy(a, b2(0.0, nan, 1.0, 1.0), Vec2::ZERO),
        Err(TreeError::NonFinite)
    );
    assert_eq!(
        tree.move_proxy(a, b2(0.0, 0.0, 1.0, 1.0), Vec2::new(0.0, nan)),
        Err(TreeError::NonFinite)
    );
    assert_eq!(
        tree.move_proxy(a, b2(0.0, 1.0, 1.0, 0.0), Vec2::ZERO),
        Err(TreeError::Inverted)
    );
    assert_eq!(
        tree.set_margin(-1.0),
        Err(TreeError::InvalidSetting {
            name: "margin",
            value: -1.0
        })
    );
    assert!(tree.set_margin(nan).is_err());
    assert!(tree.set_velocity_lookahead(-0.5).is_err());
    assert!(tree.set_velocity_lookahead(f32::INFINITY).is_err());
    assert!(
        DynamicTree::<Vec2, u32>::try_new(TreeConfig {
            margin: -0.1,
            ..TreeConfig::default()
        })
        .is_err()
    );
    assert_eq!(tree.config().margin, 0.1);
    assert_eq!(tree.len(), 1);
    tree.validate().expect("valid");
    // Queries with NaN find nothing and do not panic.
    assert_eq!(
        tree.ray_cast(Vec2::new(nan, 0.0), Vec2::ONE, 1.0, |_, _| 1.0),
        QueryStats::default()
    );
    let mut hits = 0;
    tree.query_point(Vec2::new(nan, 0.5), |_| {
        hits += 1;
        true
    });
    assert_eq!(hits, 0);
}

#[test]
fn margin_change_recomputes_fat_boxes() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let a = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::new(2.0, -1.0), 0)
        .expect("create");
    let b = tree
        .create_proxy(b2(1.5, 0.0, 2.5, 1.0), Vec2::ZERO, 1)
        .expect("create");
    tree.update_pairs().expect("no pair limit");
    assert!(tree.pairs().is_empty());
    tree.set_margin(0.25).expect("margin");
    assert_eq!(tree.fat_aabb(a), Ok(b2(-0.25, -0.25, 1.25, 1.25)));
    tree.set_velocity_lookahead(0.5).expect("lookahead");
    // Stretched by velocity * 0.5 = (1, -0.5) along the motion.
    assert_eq!(tree.fat_aabb(a), Ok(b2(-0.25, -0.75, 2.25, 1.25)));
    assert_eq!(tree.fat_aabb(b), Ok(b2(1.25, -0.25, 2.75, 1.25)));
    tree.validate().expect("valid");
    assert!(tree.update_pairs().expect("no pair limit").recomputed);
    assert_eq!(tree.pairs(), &[(a, b)]);
    // Nothing changed: not recomputed (Choi's tree_updated).
    assert!(!tree.update_pairs().expect("no pair limit").recomputed);
    assert_eq!(tree.pairs(), &[(a, b)]);
}

#[test]
fn volume_heuristic_picks_least_volume_increase() {
    // Root over A (big) and B (tall, thin). N grows A by 10 and B by 30 in area, although
    // the union with B (50) is smaller than the union with A (110): the increase decides.
    let config = TreeConfig {
        insertion: InsertionCost::Volume,
        balancing: Balancing::None,
        margin: 0.0,
        ..TreeConfig::default()
    };
    let mut tree = DynamicTree::<Vec2, u32>::new(config);
    let a = tree
        .create_proxy(b2(0.0, 0.0, 10.0, 10.0), Vec2::ZERO, 0)
        .expect("a");
    let _b = tree
        .create_proxy(b2(12.0, 0.0, 13.0, 20.0), Vec2::ZERO, 1)
        .expect("b");
    let n = tree
        .create_proxy(b2(10.5, 0.0, 11.0, 1.0), Vec2::ZERO, 2)
        .expect("n");
    let parent = tree
        .node(tree.leaf_of(n).expect("n"))
        .and_then(|v| v.parent)
        .expect("n has a parent");
    let children = tree.node(parent).and_then(|v| v.children).expect("branch");
    let leaf_a = tree.leaf_of(a).expect("a");
    assert!(children.contains(&leaf_a), "N must be placed beside A");
    tree.validate().expect("valid");
}

#[test]
fn seed_003_boxes_give_root_over_ab_and_cd() {
    // Perimeter cost with AVL balancing, as in the article: A, B on the left, C, D on the right.
    let config = TreeConfig {
        insertion: InsertionCost::Perimeter,
        balancing: Balancing::Avl,
        margin: 0.1,
        ..TreeConfig::default()
    };
    let mut tree = DynamicTree::<Vec2, u32>::new(config);
    let boxes = [
        b2(0.0, 4.0, 2.0, 6.0),
        b2(3.0, 3.0, 5.0, 5.0),
        b2(9.0, 1.0, 11.0, 3.0),
        b2(12.0, 0.0, 14.0, 2.0),
    ];
    let ids: Vec<_> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| tree.create_proxy(*b, Vec2::ZERO, i as u32).expect("create"))
        .collect();
    tree.validate().expect("valid");
    let root = tree.node(tree.root().expect("root")).expect("root");
    let [l, r] = root.children.expect("root is a branch");
    let leaves_under = |n: NodeId| -> Vec<ProxyId> {
        let mut v: Vec<_> = tree
            .node(n)
            .and_then(|v| v.children)
            .expect("branch")
            .iter()
            .map(|&c| tree.node(c).and_then(|v| v.proxy).expect("leaf"))
            .collect();
        v.sort_unstable();
        v
    };
    let mut halves = [leaves_under(l), leaves_under(r)];
    halves.sort();
    assert_eq!(halves, [vec![ids[0], ids[1]], vec![ids[2], ids[3]]]);
    assert_eq!(root.height, 2);
}

#[test]
fn self_traversal_reports_each_pair_once() {
    // Many identical boxes: every pair overlaps; n (n - 1) / 2 pairs, no repeats.
    for pairs in [PairMethod::SelfTraversal, PairMethod::MovedQueries] {
        let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
            pairs,
            ..TreeConfig::default()
        });
        for i in 0..40 {
            tree.create_proxy(b2(1.0, 1.0, 2.0, 2.0), Vec2::ZERO, i)
                .expect("create");
        }
        tree.update_pairs().expect("no pair limit");
        assert_eq!(tree.pair_count(), 40 * 39 / 2);
        let mut v = tree.pairs_unsorted().collect::<Vec<_>>();
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), 40 * 39 / 2);
        assert!(v.iter().all(|(a, b)| a < b));
        tree.validate().expect("valid");
    }
}

#[test]
fn moved_queries_keep_the_persistent_set() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        pairs: PairMethod::MovedQueries,
        margin: 0.0,
        ..TreeConfig::default()
    });
    let a = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
        .expect("a");
    let b = tree
        .create_proxy(b2(0.5, 0.0, 1.5, 1.0), Vec2::ZERO, 1)
        .expect("b");
    let c = tree
        .create_proxy(b2(5.0, 0.0, 6.0, 1.0), Vec2::ZERO, 2)
        .expect("c");
    assert!(tree.update_pairs().expect("no pair limit").recomputed);
    assert_eq!(tree.pairs(), &[(a, b)]);
    // c moves onto b: (b, c) appears, (a, b) is kept.
    assert_eq!(
        tree.move_proxy(c, b2(1.2, 0.0, 2.2, 1.0), Vec2::ZERO),
        Ok(true)
    );
    let update = tree.update_pairs().expect("no pair limit");
    assert!(update.recomputed);
    assert_eq!(tree.pairs(), &[(a, b), (b, c)]);
    // a leaves: (a, b) goes.
    tree.destroy_proxy(a).expect("destroy");
    tree.update_pairs().expect("no pair limit");
    assert_eq!(tree.pairs(), &[(b, c)]);
    // A new proxy in a's old slot does not inherit a's pairs.
    let d = tree
        .create_proxy(b2(100.0, 0.0, 101.0, 1.0), Vec2::ZERO, 3)
        .expect("d");
    assert_eq!(d.index, a.index);
    tree.update_pairs().expect("no pair limit");
    assert_eq!(tree.pairs(), &[(b, c)]);
    assert!(!tree.update_pairs().expect("no pair limit").recomputed);
}

#[test]
fn avl_keeps_children_within_one_level() {
    for insertion in [
        InsertionCost::Volume,
        InsertionCost::Perimeter,
        InsertionCost::SurfaceArea,
    ] {
        let mut rng = Rng(77);
        let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
            insertion,
            balancing: Balancing::Avl,
            ..TreeConfig::default()
        });
        let mut live = Vec::new();
        for i in 0..3000 {
            if i % 3 == 2 {
                let k = rng.below(live.len());
                tree.destroy_proxy(live.swap_remove(k)).expect("destroy");
            } else {
                // Sorted along a line: the worst case for an unbalanced tree.
                let x = i as f32;
                let b = b2(x, 0.0, x + 0.5, rng.uniform(0.5, 3.0));
                live.push(tree.create_proxy(b, Vec2::ZERO, i).expect("create"));
            }
        }
        tree.validate().expect("valid");
        let mut worst = 0;
        tree.walk(|_, view, _| {
            if let Some([c1, c2]) = view.children {
                let h1 = tree.node(c1).expect("c1").height as i64;
                let h2 = tree.node(c2).expect("c2").height as i64;
                worst = worst.max((h1 - h2).abs());
            }
        });
        assert!(worst <= 1, "{insertion:?}: children differ by {worst}");
        let s = tree.stats();
        assert!(s.height <= s.min_height * 3 / 2 + 1, "{insertion:?} {s:?}");
    }
}

#[test]
fn rotations_keep_a_grid_shallow() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        insertion: InsertionCost::SurfaceArea,
        balancing: Balancing::Rotations,
        ..TreeConfig::default()
    });
    for y in 0..100 {
        for x in 0..100 {
            let (x, y) = (x as f32, y as f32);
            tree.create_proxy(b2(x, y, x + 0.8, y + 0.8), Vec2::ZERO, 0)
                .expect("create");
        }
    }
    tree.validate().expect("valid");
    let s = tree.stats();
    assert_eq!(s.leaves, 10_000);
    assert_eq!(s.nodes, 19_999);
    assert_eq!(s.min_height, 14);
    assert!(s.height <= 2 * s.min_height, "{s:?}");
}

#[test]
fn rebuild_gives_a_low_sah_tree_with_the_same_pairs() {
    let mut rng = Rng(5);
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        insertion: InsertionCost::Perimeter,
        balancing: Balancing::None,
        ..TreeConfig::default()
    });
    for i in 0..2000 {
        let b = rand_box::<Vec2>(&mut rng, 200.0, 2.0);
        tree.create_proxy(b, Vec2::ZERO, i).expect("create");
    }
    tree.update_pairs().expect("no pair limit");
    let before = tree.pairs().to_vec();
    let ratio_before = tree.stats().area_ratio;
    tree.set_recording(true);
    tree.rebuild();
    assert_eq!(
        tree.take_events(),
        vec![TreeEvent::Rebuild { partial: false }]
    );
    tree.validate().expect("valid");
    let s = tree.stats();
    assert!(
        s.area_ratio < ratio_before,
        "{} vs {ratio_before}",
        s.area_ratio
    );
    assert!(s.height <= 2 * s.min_height, "{s:?}");
    // Leaf boxes are untouched: the pairs are the same and need no recomputation.
    assert!(!tree.update_pairs().expect("no pair limit").recomputed);
    tree.set_pair_method(PairMethod::MovedQueries);
    tree.update_pairs().expect("no pair limit");
    assert_eq!(tree.pairs(), before.as_slice());
}

#[test]
fn enlarge_then_partial_rebuild() {
    let mut rng = Rng(9);
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        update: UpdateMode::EnlargeAndRebuild,
        ..TreeConfig::default()
    });
    let ids: Vec<_> = (0..500)
        .map(|i| {
            let b = rand_box::<Vec2>(&mut rng, 100.0, 2.0);
            tree.create_proxy(b, Vec2::ZERO, i).expect("create")
        })
        .collect();
    tree.set_recording(true);
    // Move a few far: their leaves are enlarged in place.
    for &id in ids.iter().take(20) {
        let t = tree.tight_aabb(id).expect("live");
        let d = Vec2::new(30.0, -20.0);
        let leaf = tree.leaf_of(id).expect("live");
        assert_eq!(
            tree.move_proxy(id, Aabb::new(t.min + d, t.max + d), Vec2::ZERO),
            Ok(true)
        );
        assert_eq!(
            tree.leaf_of(id),
            Ok(leaf),
            "enlarging keeps the leaf in place"
        );
        tree.validate().expect("valid while enlarged");
    }
    let events = tree.take_events();
    assert_eq!(events.len(), 20);
    assert!(events.iter().all(|e| matches!(e, TreeEvent::Reinsert(_))));
    tree.update_pairs().expect("no pair limit");
    assert_eq!(
        tree.take_events(),
        vec![TreeEvent::Rebuild { partial: true }]
    );
    tree.validate().expect("valid after partial rebuild");
    assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
    // Nothing enlarged any more: a no-op.
    tree.rebuild_partial();
    assert!(tree.take_events().is_empty());
}

#[test]
fn events_are_recorded_in_order() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let a = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
        .expect("a");
    assert!(tree.take_events().is_empty(), "off by default");
    tree.set_recording(true);
    let b = tree
        .create_proxy(b2(3.0, 0.0, 4.0, 1.0), Vec2::ZERO, 1)
        .expect("b");
    tree.move_proxy(b, b2(5.0, 0.0, 6.0, 1.0), Vec2::ZERO)
        .expect("move");
    tree.destroy_proxy(a).expect("destroy");
    assert_eq!(
        tree.take_events(),
        vec![
            TreeEvent::Insert(b),
            TreeEvent::Reinsert(b),
            TreeEvent::Remove(a)
        ]
    );
    assert!(tree.take_events().is_empty());
    tree.set_recording(false);
    tree.destroy_proxy(b).expect("destroy");
    assert!(tree.take_events().is_empty());
}

#[test]
fn ray_cast_clips_and_stops() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        margin: 0.0,
        ..TreeConfig::default()
    });
    // Boxes along x at 2, 4, 6, 8.
    let ids: Vec<_> = (1..=4)
        .map(|k| {
            let x = 2.0 * k as f32;
            tree.create_proxy(b2(x, -0.5, x + 0.5, 0.5), Vec2::ZERO, k)
                .expect("create")
        })
        .collect();
    let origin = Vec2::new(0.0, 0.0);
    let end = Vec2::new(10.0, 0.0);
    // Continue: all four, entering at 0.2, 0.4, 0.6, 0.8.
    let mut hits = Vec::new();
    tree.ray_cast(origin, end, 1.0, |id, t| {
        hits.push((id, t));
        1.0
    });
    hits.sort_by(|x, y| x.1.total_cmp(&y.1));
    assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), ids);
    for (k, h) in hits.iter().enumerate() {
        assert!((h.1 - 0.2 * (k + 1) as f32).abs() < 1e-6);
    }
    // Clip at each hit (closest-hit cast): the nearest is found and nothing beyond it is
    // reported after it.
    let mut best = 1.0f32;
    let mut best_id = None;
    tree.ray_cast(origin, end, 1.0, |id, t| {
        assert!(t <= best);
        best = t;
        best_id = Some(id);
        t
    });
    assert_eq!(best_id, Some(ids[0]));
    assert!((best - 0.2).abs() < 1e-6);
    // Stop at the first reported.
    let mut n = 0;
    tree.ray_cast(origin, end, 1.0, |_, _| {
        n += 1;
        0.0
    });
    assert_eq!(n, 1);
    // max_fraction 0.5 reaches only the first two.
    let mut n = 0;
    tree.ray_cast(origin, end, 0.5, |_, _| {
        n += 1;
        1.0
    });
    assert_eq!(n, 2);
    // A vertical segment through x = 4.25 hits only the second box.
    let mut got = Vec::new();
    let stats = tree.ray_cast(Vec2::new(4.25, -5.0), Vec2::new(4.25, 5.0), 1.0, |id, _| {
        got.push(id);
        1.0
    });
    assert_eq!(got, vec![ids[1]]);
    assert!(stats.node_visits >= 1 && stats.leaf_visits >= 1);
}

#[test]
fn query_stats_count_visits() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let mut stats = tree.query_aabb(&b2(0.0, 0.0, 1.0, 1.0), |_| true);
    assert_eq!(stats, QueryStats::default());
    tree.create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
        .expect("a");
    tree.create_proxy(b2(10.0, 0.0, 11.0, 1.0), Vec2::ZERO, 1)
        .expect("b");
    // Root + both leaves tested; one leaf passes.
    let mut hits = 0;
    stats = tree.query_aabb(&b2(0.5, 0.5, 0.6, 0.6), |_| {
        hits += 1;
        true
    });
    assert_eq!(hits, 1);
    assert_eq!(
        stats,
        QueryStats {
            node_visits: 3,
            leaf_visits: 2
        }
    );
    // Outside the root: one visit.
    stats = tree.query_point(Vec2::new(50.0, 50.0), |_| true);
    assert_eq!(
        stats,
        QueryStats {
            node_visits: 1,
            leaf_visits: 0
        }
    );
}

#[test]
fn stats_of_small_trees() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        margin: 0.0,
        ..TreeConfig::default()
    });
    assert_eq!(tree.stats().height, 0);
    assert_eq!(tree.stats().min_height, 0);
    tree.create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
        .expect("a");
    tree.create_proxy(b2(1.0, 0.0, 2.0, 1.0), Vec2::ZERO, 1)
        .expect("b");
    tree.create_proxy(b2(3.0, 0.0, 4.0, 1.0), Vec2::ZERO, 2)
        .expect("c");
    let s = tree.stats();
    assert_eq!((s.leaves, s.nodes, s.height, s.min_height), (3, 5, 2, 2));
    // Half perimeters: leaves 2 each, root [0,4]x[0,1] = 5, the other branch 3 or 4.
    assert!(s.area_ratio > (6.0 + 5.0 + 3.0) / 5.0 - 1e-5);
    assert!(s.area_ratio < (6.0 + 5.0 + 4.0) / 5.0 + 1e-5);
    assert!(s.bytes >= 5 * 32 + 3 * std::mem::size_of::<node::ProxySlot<Vec2, u32>>());
    assert_eq!(std::mem::size_of::<node::Node<Vec2>>(), 32);
    assert_eq!(std::mem::size_of::<node::ProxySlot<Vec2, u32>>(), 36);
}

#[test]
fn create_destroy_cycles_reuse_the_pool() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let keep = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
        .expect("keep");
    for i in 0..100_000u32 {
        let x = (i % 100) as f32;
        let id = tree
            .create_proxy(b2(x, 0.0, x + 1.0, 1.0), Vec2::ZERO, i)
            .expect("create");
        assert_eq!(tree.destroy_proxy(id), Ok(i));
    }
    tree.validate().expect("valid");
    assert_eq!(tree.len(), 1);
    assert!(tree.contains(keep));
    let s = tree.stats();
    assert_eq!(s.nodes, 1);
    assert!(tree.nodes.len() <= 3 && tree.proxies.len() <= 2);
}

#[test]
fn degenerate_boxes() {
    for config in all_configs() {
        let mut tree = DynamicTree::<Vec2, u32>::new(config);
        let mut ids = Vec::new();
        for i in 0..200 {
            let b = match i % 4 {
                0 => b2(5.0, 5.0, 5.0, 5.0),                      // a point, repeated
                1 => b2(i as f32, 0.0, i as f32, 0.0),            // points on a line
                2 => b2(1e7, -1e7, 1e7 + 1.0, -1e7 + 1.0),        // far away
                _ => b2(-1e7, 1e7 - (i as f32), -1e7 + 2.0, 1e7), // far, on a line
            };
            ids.push(tree.create_proxy(b, Vec2::ZERO, i).expect("create"));
            tree.validate().expect("valid");
        }
        tree.rebuild();
        tree.validate().expect("valid");
        tree.update_pairs().expect("no pair limit");
        assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice(), "{config:?}");
        for id in ids.iter().step_by(2) {
            tree.destroy_proxy(*id).expect("destroy");
        }
        tree.validate().expect("valid");
        tree.update_pairs().expect("no pair limit");
        assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice(), "{config:?}");
    }
}

#[test]
fn batch_creation_builds_one_tree_over_old_and_new_leaves() {
    for config in all_configs() {
        let mut rng = Rng(11);
        let mut tree = DynamicTree::<Vec2, u32>::new(config);
        // Some proxies one at a time, then two batches on top.
        let mut ids = Vec::new();
        for i in 0..30u32 {
            let b = rand_box::<Vec2>(&mut rng, 40.0, 3.0);
            ids.push(tree.create_proxy(b, Vec2::ZERO, i).expect("create"));
        }
        for batch in 0..2u32 {
            let items: Vec<_> = (0..200u32)
                .map(|i| {
                    let v = rand_vec::<Vec2>(&mut rng, -1.0, 1.0);
                    (
                        rand_box::<Vec2>(&mut rng, 40.0, 3.0),
                        v,
                        1000 * (batch + 1) + i,
                    )
                })
                .collect();
            let new = tree.create_proxies(&items).expect("batch");
            assert_eq!(new.len(), items.len());
            for (id, item) in new.iter().zip(&items) {
                assert_eq!(tree.user_data(*id), Ok(item.2), "handles in input order");
                assert_eq!(tree.tight_aabb(*id), Ok(item.0));
            }
            ids.extend(new);
            tree.validate().expect("valid after a batch");
            assert_eq!(tree.len(), ids.len());
            check_against_brute(&mut tree, &mut rng, 40.0);
        }
        // The tree carries on as usual: moves and destroys.
        for step in 0..20 {
            for (k, id) in ids.iter().enumerate() {
                if (k + step) % 3 == 0 {
                    let b = rand_box::<Vec2>(&mut rng, 40.0, 3.0);
                    tree.move_proxy(*id, b, Vec2::ZERO).expect("move");
                }
            }
            tree.validate().expect("valid after moves");
            check_against_brute(&mut tree, &mut rng, 40.0);
        }
    }
}

#[test]
fn batch_creation_of_a_bad_item_adds_nothing_and_names_it() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let a = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
        .expect("create");
    let b = tree
        .create_proxy(b2(0.5, 0.5, 1.5, 1.5), Vec2::ZERO, 1)
        .expect("create");
    tree.update_pairs().expect("no pair limit");
    let items = vec![
        (b2(2.0, 2.0, 3.0, 3.0), Vec2::ZERO, 2),
        (b2(2.0, 2.0, 3.0, 3.0), Vec2::ZERO, 3),
        (b2(4.0, 4.0, 3.0, 5.0), Vec2::ZERO, 4),
        (b2(f32::NAN, 0.0, 1.0, 1.0), Vec2::ZERO, 5),
    ];
    let err = tree.create_proxies(&items).expect_err("inverted box");
    assert_eq!(
        err,
        TreeError::InBatch {
            index: 2,
            error: Box::new(TreeError::Inverted)
        }
    );
    assert_eq!(
        err.to_string(),
        "item 2 of the batch: a box has min > max on some axis"
    );
    let err = tree
        .create_proxies(&items[3..])
        .expect_err("non-finite box");
    assert_eq!(
        err,
        TreeError::InBatch {
            index: 0,
            error: Box::new(TreeError::NonFinite)
        }
    );
    assert_eq!(tree.len(), 2);
    tree.validate().expect("valid");
    assert!(
        !tree.update_pairs().expect("no pair limit").recomputed,
        "nothing changed"
    );
    assert_eq!(tree.pairs(), &[(a, b)]);
    // An empty batch is no change either.
    assert_eq!(tree.create_proxies(&[]), Ok(Vec::new()));
    tree.validate().expect("valid");
    assert_eq!(tree.len(), 2);
}

#[test]
fn batch_creation_reserves_exactly() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let items: Vec<_> = (0..1000u32)
        .map(|i| {
            let x = (i % 40) as f32 * 2.0;
            let y = (i / 40) as f32 * 2.0;
            (b2(x, y, x + 1.0, y + 1.0), Vec2::ZERO, i)
        })
        .collect();
    tree.create_proxies(&items).expect("batch");
    tree.validate().expect("valid");
    assert_eq!(tree.nodes.capacity(), 2 * 1000 - 1);
    assert_eq!(tree.proxies.capacity(), 1000);
    let s = tree.stats();
    assert_eq!((s.leaves, s.nodes), (1000, 1999));
    // Binned SAH over a grid: close to the least height.
    assert!(
        s.height <= s.min_height + 3,
        "height {} vs {}",
        s.height,
        s.min_height
    );
}

#[test]
fn pairs_keep_their_handles_until_the_next_update_after_a_destroy() {
    for pairs in [
        PairMethod::SelfTraversal,
        PairMethod::MovedQueries,
        PairMethod::MovedTraversal,
    ] {
        let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
            pairs,
            ..TreeConfig::default()
        });
        let a = tree
            .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
            .expect("create");
        let b = tree
            .create_proxy(b2(0.5, 0.5, 1.5, 1.5), Vec2::ZERO, 1)
            .expect("create");
        tree.update_pairs().expect("no pair limit");
        tree.destroy_proxy(a).expect("destroy");
        // The slot is re-used at once by a proxy that overlaps nothing.
        let c = tree
            .create_proxy(b2(9.0, 9.0, 10.0, 10.0), Vec2::ZERO, 2)
            .expect("create");
        assert_eq!(c.index, a.index);
        assert_ne!(c, a);
        assert_eq!(tree.pairs(), &[(a, b)], "{pairs:?}: as of the last update");
        assert_eq!(tree.pairs_unsorted().collect::<Vec<_>>(), vec![(a, b)]);
        tree.update_pairs().expect("no pair limit");
        assert!(tree.pairs().is_empty(), "{pairs:?}");
        assert_eq!(tree.pair_count(), 0);
        tree.validate().expect("valid");
    }
}

#[test]
fn local_reinsertion_searches_under_the_lowest_ancestor_that_holds_the_box() {
    // Two far clusters of eight; a leaf moving to the other end of its cluster is held by an
    // ancestor three or more levels up, below the root, and stays under it.
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        update: UpdateMode::LocalReinsert,
        ..TreeConfig::default()
    });
    let mut ids = Vec::new();
    for i in 0..8u32 {
        let x = i as f32 * 2.0;
        ids.push(
            tree.create_proxy(b2(x, 0.0, x + 1.0, 1.0), Vec2::ZERO, i)
                .expect("create"),
        );
        ids.push(
            tree.create_proxy(b2(x + 100.0, 0.0, x + 101.0, 1.0), Vec2::ZERO, 100 + i)
                .expect("create"),
        );
    }
    let leaf = tree.proxies[ids[0].index as usize].leaf;
    let tight = b2(13.0, 0.0, 14.0, 1.0);
    let fat = fat_box(&tight, Vec2::ZERO, 0.1, 0.0);
    let (holder, levels) = tree.holding_ancestor(leaf, &fat);
    assert_ne!(holder, NULL);
    assert_ne!(
        holder, tree.root,
        "a move inside the cluster is held below the root"
    );
    assert!(levels > 2, "held {levels} levels up: not a refit in place");
    assert!(tree.nodes[holder as usize].aabb.contains(&fat));
    // It is the lowest: no ancestor below it holds the box.
    let mut index = tree.nodes[leaf as usize].parent;
    for _ in 1..levels {
        assert!(!tree.nodes[index as usize].aabb.contains(&fat));
        index = tree.nodes[index as usize].parent;
    }
    assert_eq!(index, holder);
    assert!(tree.move_proxy(ids[0], tight, Vec2::ZERO).expect("move"));
    tree.validate().expect("valid");
    // The leaf was reinserted under the holder.
    let mut index = tree.nodes[leaf as usize].parent;
    while index != NULL && index != holder {
        index = tree.nodes[index as usize].parent;
    }
    assert_eq!(index, holder, "the leaf stayed under the holder");
    // A move out past both clusters is held by nothing, the root included: the search starts
    // from the root.
    let far = b2(500.0, 0.0, 501.0, 1.0);
    assert_eq!(
        tree.holding_ancestor(leaf, &fat_box(&far, Vec2::ZERO, 0.1, 0.0)),
        (NULL, 0)
    );
    assert!(tree.move_proxy(ids[0], far, Vec2::ZERO).expect("move"));
    tree.validate().expect("valid");
    tree.update_pairs().expect("no pair limit");
    assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
}

#[test]
fn local_reinsertion_keeps_a_leaf_in_place_when_its_grandparent_holds_the_new_box() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        update: UpdateMode::LocalReinsert,
        ..TreeConfig::default()
    });
    let ids: Vec<_> = (0..16u32)
        .map(|i| {
            let x = i as f32 * 2.0;
            tree.create_proxy(b2(x, 0.0, x + 1.0, 1.0), Vec2::ZERO, i)
                .expect("create")
        })
        .collect();
    tree.update_pairs().expect("no pair limit");
    let leaf = tree.proxies[ids[5].index as usize].leaf;
    let parent = tree.nodes[leaf as usize].parent;
    let grandparent = tree.nodes[parent as usize].parent;
    let before = tree.nodes[grandparent as usize].aabb;
    // A move of 0.15 to the right: out of the fat box, still inside the grandparent's box.
    let tight = b2(10.15, 0.0, 11.15, 1.0);
    let fat = fat_box(&tight, Vec2::ZERO, 0.1, 0.0);
    assert!(!tree.nodes[parent as usize].aabb.contains(&fat));
    assert!(before.contains(&fat));
    assert!(tree.move_proxy(ids[5], tight, Vec2::ZERO).expect("move"));
    assert_eq!(tree.fat_aabb(ids[5]), Ok(fat));
    assert_eq!(
        tree.nodes[leaf as usize].parent, parent,
        "the leaf kept its place"
    );
    assert_eq!(tree.nodes[parent as usize].parent, grandparent);
    assert_eq!(
        tree.nodes[grandparent as usize].aabb, before,
        "no growth above"
    );
    tree.validate().expect("valid");
    tree.update_pairs().expect("no pair limit");
    assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
    // A jump far away is a reinsertion: the leaf gets a new sibling (its parent node may be
    // the same one, taken back from the free list).
    let sibling_of = |tree: &DynamicTree<Vec2, u32>| {
        let p = &tree.nodes[tree.nodes[leaf as usize].parent as usize];
        if p.child1 == leaf { p.child2 } else { p.child1 }
    };
    let sibling = sibling_of(&tree);
    assert!(
        tree.move_proxy(ids[5], b2(100.0, 0.0, 101.0, 1.0), Vec2::ZERO)
            .expect("move")
    );
    assert_ne!(sibling_of(&tree), sibling);
    tree.validate().expect("valid");
    tree.update_pairs().expect("no pair limit");
    assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
}

#[test]
fn the_inline_stack_spills_past_its_room_and_pops_in_lifo_order() {
    let mut stack = super::node::InlineStack::<(u32, u32), 4>::new();
    for i in 0..10u32 {
        stack.push((i, i + 1));
    }
    let popped: Vec<_> = std::iter::from_fn(|| stack.pop()).collect();
    let want: Vec<_> = (0..10u32).rev().map(|i| (i, i + 1)).collect();
    assert_eq!(popped, want);
    assert_eq!(stack.pop(), None);
    // Pushing after a spill drained still works from the fixed part.
    stack.push((7, 8));
    assert_eq!(stack.pop(), Some((7, 8)));
}

#[test]
fn a_pile_of_equal_boxes_overflows_the_pair_stack_and_still_gives_every_pair() {
    for pairs in [PairMethod::SelfTraversal, PairMethod::MovedTraversal] {
        let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
            pairs,
            ..TreeConfig::default()
        });
        let items: Vec<_> = (0..600u32)
            .map(|i| (b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, i))
            .collect();
        tree.create_proxies(&items).expect("batch");
        tree.update_pairs().expect("no pair limit");
        assert_eq!(tree.pair_count(), 600 * 599 / 2, "{pairs:?}");
        assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
    }
}

#[test]
fn moved_traversal_visits_only_where_few_moved_and_matches_brute_force() {
    let mut rng = Rng(5);
    let mut trees: Vec<DynamicTree<Vec2, u32>> =
        [PairMethod::SelfTraversal, PairMethod::MovedTraversal]
            .into_iter()
            .map(|pairs| {
                DynamicTree::new(TreeConfig {
                    pairs,
                    ..TreeConfig::default()
                })
            })
            .collect();
    // Above SMALL_TREE_LEAVES, where MovedTraversal prunes.
    let n = 3000;
    let items: Vec<_> = (0..n as u32)
        .map(|i| (rand_box::<Vec2>(&mut rng, 160.0, 2.0), Vec2::ZERO, i))
        .collect();
    let mut ids: Vec<Vec<ProxyId>> = trees
        .iter_mut()
        .map(|t| t.create_proxies(&items).expect("batch"))
        .collect();
    for t in &mut trees {
        t.update_pairs().expect("no pair limit");
    }
    for step in 0..8u32 {
        // Thirty of 3,000 move far, three go and three come (in the slots just freed): well
        // under the share that makes MovedTraversal go over the whole tree.
        let moves: Vec<(usize, Aabb<Vec2>)> = (0..30)
            .map(|_| (rng.below(n), rand_box::<Vec2>(&mut rng, 160.0, 2.0)))
            .collect();
        let gone: Vec<usize> = (0..3)
            .map(|k| (step as usize * 97 + k * 1009) % n)
            .collect();
        let come: Vec<Aabb<Vec2>> = (0..3)
            .map(|_| rand_box::<Vec2>(&mut rng, 160.0, 2.0))
            .collect();
        let mut visits = Vec::new();
        for (t, ids) in trees.iter_mut().zip(ids.iter_mut()) {
            for &(k, b) in &moves {
                t.move_proxy(ids[k], b, Vec2::ZERO).expect("move");
            }
            for (&k, &b) in gone.iter().zip(&come) {
                t.destroy_proxy(ids[k]).expect("destroy");
                ids[k] = t
                    .create_proxy(b, Vec2::ZERO, 10_000 + k as u32)
                    .expect("create");
            }
            let u = t.update_pairs().expect("no pair limit");
            assert!(u.recomputed);
            visits.push(u.stats.node_visits);
            t.validate().expect("valid");
            assert_eq!(t.pairs(), brute_pairs(t).as_slice());
        }
        assert!(
            visits[1] < visits[0] / 2,
            "pruned traversal {} vs full {}",
            visits[1],
            visits[0]
        );
    }
}

#[test]
fn every_combination_lists_each_setting_once_and_keeps_the_margins() {
    let base = TreeConfig {
        margin: 0.3,
        velocity_lookahead: 0.25,
        ..TreeConfig::default()
    };
    let all = base.every_combination();
    assert_eq!(all.len(), 3 * 3 * 3 * 3);
    for (i, a) in all.iter().enumerate() {
        assert_eq!((a.margin, a.velocity_lookahead), (0.3, 0.25));
        assert!(all[i + 1..].iter().all(|b| b != a), "{a:?} twice");
    }
    assert!(all.contains(&base), "the defaults are among them");
}

/// Steps a pair of identical trees, one finding pairs on one thread and one on rayon's pool:
/// after each step both report the same pairs (those of brute force), the same tests counted
/// and the same `recomputed`. Sizes from empty to past the parallel split and past the
/// moved-traversal threshold; steps where a few move (the pruned walk) and where most do.
#[test]
#[cfg(feature = "parallel")]
fn parallel_pairs_equal_the_single_thread_ones() {
    let mut rng = Rng(11);
    for pairs in [
        PairMethod::SelfTraversal,
        PairMethod::MovedTraversal,
        PairMethod::MovedQueries,
    ] {
        for (balancing, n) in [
            (Balancing::Rotations, 0),
            (Balancing::Rotations, 1),
            (Balancing::Rotations, 2),
            (Balancing::Rotations, 3),
            (Balancing::None, 70),
            (Balancing::Rotations, 3000),
        ] {
            let config = TreeConfig {
                pairs,
                balancing,
                ..TreeConfig::default()
            };
            let mut one = DynamicTree::<Vec2, u32>::new(config);
            let items: Vec<_> = (0..n as u32)
                .map(|i| (rand_box::<Vec2>(&mut rng, 160.0, 3.0), Vec2::ZERO, i))
                .collect();
            let mut ids = one.create_proxies(&items).expect("batch");
            let mut par = one.clone();
            let what = format!("{pairs:?} {balancing:?} n = {n}");
            for step in 0..6usize {
                // Steps 0, 2, 4: the first pair update and a few moves; 1, 3, 5: most move.
                let moving = if step % 2 == 0 { n / 50 + 1 } else { n * 3 / 4 };
                for _ in 0..moving.min(n) {
                    let (k, b) = (rng.below(n), rand_box::<Vec2>(&mut rng, 160.0, 3.0));
                    for t in [&mut one, &mut par] {
                        t.move_proxy(ids[k], b, Vec2::ZERO).expect("move");
                    }
                }
                if n > 0 && step == 2 {
                    // One goes and one comes, in the slot just freed.
                    let k = rng.below(n);
                    let b = rand_box::<Vec2>(&mut rng, 160.0, 3.0);
                    let mut new = Vec::new();
                    for t in [&mut one, &mut par] {
                        t.destroy_proxy(ids[k]).expect("destroy");
                        new.push(t.create_proxy(b, Vec2::ZERO, 99_999).expect("create"));
                    }
                    assert_eq!(new[0], new[1], "{what}");
                    ids[k] = new[0];
                }
                // Split whatever the size (`update_pairs_parallel` would not, below
                // PARALLEL_MIN_LEAVES).
                let (u1, u2) = (
                    one.update_pairs().expect("no pair limit"),
                    par.update_pairs_on(true).expect("no pair limit"),
                );
                assert_eq!(u1, u2, "{what}, step {step}: recomputed and tests");
                assert_eq!(one.pairs(), par.pairs(), "{what}, step {step}");
                assert_eq!(par.pairs(), brute_pairs(&par).as_slice(), "{what}");
                par.validate().expect("valid");
            }
        }
    }
}

/// A pile of equal boxes under the split walk: every one of the 600 * 599 / 2 pairs, once.
#[test]
#[cfg(feature = "parallel")]
fn parallel_pairs_of_a_pile_of_equal_boxes() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        pairs: PairMethod::SelfTraversal,
        ..TreeConfig::default()
    });
    let items: Vec<_> = (0..600u32)
        .map(|i| (b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, i))
        .collect();
    tree.create_proxies(&items).expect("batch");
    tree.update_pairs_on(true).expect("no pair limit");
    assert_eq!(tree.pair_count(), 600 * 599 / 2);
    assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
}

/// `with_capacity` past the most proxies the `u32` node indices allow is an error (no
/// capacity-overflow panic, no abort on a 256 GB allocation); a normal capacity reserves the
/// nodes and slots of that many proxies exactly.
#[test]
fn with_capacity_refuses_room_past_the_index_limit() {
    type Tree = DynamicTree<Vec2, u32>;
    let max = Tree::MAX_PROXIES;
    assert_eq!(max, (1 << 31) - 2, "2 * max - 1 nodes fit below NULL - 1");
    for requested in [usize::MAX, 1 << 32, u32::MAX as usize, max + 1] {
        let got = Tree::with_capacity(TreeConfig::default(), requested).map(|_| ());
        assert_eq!(got, Err(TreeError::CapacityTooLarge { requested, max }));
    }
    assert_eq!(
        TreeError::CapacityTooLarge {
            requested: 1 << 32,
            max
        }
        .to_string(),
        "room for 4294967296 proxies asked; a tree holds at most 2147483646"
    );
    // The largest allowed asks for about 210 GB: an allocation failure is an error (a
    // system that overcommits memory may hand out the room untouched).
    match Tree::with_capacity(TreeConfig::default(), max) {
        Ok(tree) => {
            assert!(tree.is_empty());
            tree.validate().expect("valid");
        }
        Err(e) => assert_eq!(e, TreeError::AllocationFailed { requested: max }),
    }
    // A bad setting is still refused.
    assert!(matches!(
        Tree::with_capacity(
            TreeConfig {
                margin: -1.0,
                ..TreeConfig::default()
            },
            10
        ),
        Err(TreeError::InvalidSetting { .. })
    ));
    // A normal capacity: exact room, no growth while it fills.
    let mut tree = Tree::with_capacity(TreeConfig::default(), 100).expect("room for 100");
    assert_eq!((tree.nodes.capacity(), tree.proxies.capacity()), (199, 100));
    for i in 0..100u32 {
        let x = i as f32;
        tree.create_proxy(b2(x, 0.0, x + 0.5, 1.0), Vec2::ZERO, i)
            .expect("create");
        tree.validate().expect("valid");
    }
    assert_eq!((tree.nodes.capacity(), tree.proxies.capacity()), (199, 100));
    assert_eq!(tree.len(), 100);
    assert!(Tree::with_capacity(TreeConfig::default(), 0).is_ok());
}

/// The free-slot list, walked: every slot index on it.
fn free_slots<V: Vector>(tree: &DynamicTree<V, u32>) -> Vec<u32> {
    let mut out = Vec::new();
    let mut index = tree.free_proxy;
    while index != NULL {
        out.push(index);
        index = tree.proxies[index as usize].leaf;
    }
    out
}

/// Checks that `id` is refused by every call that takes a handle.
fn assert_stale<V: Vector>(tree: &mut DynamicTree<V, u32>, id: ProxyId) {
    let stale = Err(TreeError::StaleProxy(id));
    assert!(!tree.contains(id), "{id:?}");
    assert_eq!(tree.user_data(id), stale);
    assert_eq!(tree.fat_aabb(id), stale.clone().map(|_| Aabb::default()));
    assert_eq!(tree.tight_aabb(id), stale.clone().map(|_| Aabb::default()));
    assert_eq!(tree.leaf_of(id), stale.clone().map(|_| NodeId(0)));
    let b = Aabb::new(V::splat(0.0), V::splat(1.0));
    assert_eq!(
        tree.move_proxy(id, b, V::splat(0.0)),
        stale.clone().map(|_| false)
    );
    assert_eq!(tree.destroy_proxy(id), stale);
}

/// A slot whose generations are used up is retired, not wrapped: every old handle of it stays
/// stale, the slot is never reused, and the tree (validate, proxies, stats, pairs, rebuilds,
/// batches) treats it as neither live nor free.
#[test]
fn a_slot_whose_generations_run_out_is_retired_and_never_reused() {
    use super::node::{GENERATION_MASK, RETIRED};
    assert_eq!(RETIRED, (1 << 30) - 1);
    for config in [
        PairMethod::SelfTraversal,
        PairMethod::MovedQueries,
        PairMethod::MovedTraversal,
    ]
    .into_iter()
    .flat_map(|pairs| {
        UpdateMode::ALL.into_iter().map(move |update| TreeConfig {
            pairs,
            update,
            ..TreeConfig::default()
        })
    }) {
        let what = format!("{config:?}");
        let mut tree = DynamicTree::<Vec2, u32>::new(config);
        let first = tree
            .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
            .expect("create");
        let other = tree
            .create_proxy(b2(0.5, 0.5, 1.5, 1.5), Vec2::ZERO, 1)
            .expect("create");
        let slot = first.index;
        // Three proxies from the end of the slot's generations.
        let g0 = RETIRED - 3;
        let s = &mut tree.proxies[slot as usize];
        s.state = (s.state & !GENERATION_MASK) | g0;
        tree.validate().expect("valid");
        let mut id = ProxyId {
            index: slot,
            generation: g0,
        };
        assert_eq!(tree.user_data(id), Ok(0), "{what}");
        let mut old = vec![first];
        // Destroy and create across the end: generations g0, g0 + 1, g0 + 2 = RETIRED - 1
        // (the last a proxy gets), then the slot is retired.
        for k in 1..=3u32 {
            if k == 2 {
                tree.update_pairs().expect("no pair limit");
                assert_eq!(tree.pairs(), &[(id, other)], "{what}");
            }
            assert_eq!(tree.destroy_proxy(id), Ok(k - 1), "{what}");
            tree.validate().expect("valid after destroy");
            old.push(id);
            let new = tree
                .create_proxy(b2(0.2, 0.2, 1.2, 1.2), Vec2::ZERO, k)
                .expect("create");
            tree.validate().expect("valid after create");
            if k < 3 {
                assert_eq!(
                    new,
                    ProxyId {
                        index: slot,
                        generation: g0 + k
                    },
                    "{what}"
                );
            } else {
                // The slot is retired: the new proxy took a fresh slot.
                assert_eq!(new.index, 2, "{what}");
                assert_eq!(new.generation, 0, "{what}");
                assert!(tree.proxies[slot as usize].is_retired(), "{what}");
                assert!(!tree.proxies[slot as usize].is_alive(), "{what}");
                assert_eq!(tree.retired, 1, "{what}");
            }
            id = new;
        }
        assert_eq!(old.last().map(|p| p.generation), Some(RETIRED - 1));
        for &stale in &old {
            assert_stale(&mut tree, stale);
        }
        // A handle naming the retired generation itself, never handed out, is refused too.
        assert_stale(
            &mut tree,
            ProxyId {
                index: slot,
                generation: RETIRED,
            },
        );
        assert!(!free_slots(&tree).contains(&slot), "{what}");
        assert_eq!(tree.proxies(), vec![other, id], "{what}");
        assert_eq!((tree.len(), tree.stats().leaves), (2, 2), "{what}");
        // The retired slot was in the move buffer: the update clears its bit and drops it.
        tree.update_pairs().expect("no pair limit");
        assert!(!tree.proxies[slot as usize].is_moved(), "{what}");
        assert!(tree.moved.is_empty(), "{what}");
        assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice(), "{what}");
        assert_eq!(tree.pairs(), &[(other, id)], "{what}");
        // Churn: destroy and create, one at a time and in a batch; the slot stays retired.
        for round in 0..4u32 {
            let x = round as f32;
            let batch: Vec<_> = (0..3u32)
                .map(|i| {
                    (
                        b2(x, i as f32, x + 1.0, i as f32 + 1.0),
                        Vec2::ZERO,
                        100 + i,
                    )
                })
                .collect();
            let made = tree.create_proxies(&batch).expect("batch");
            tree.validate().expect("valid after batch");
            let single = tree
                .create_proxy(b2(x, 0.5, x + 1.0, 1.5), Vec2::ZERO, 200)
                .expect("create");
            tree.validate().expect("valid after create");
            assert!(
                made.iter().chain([&single]).all(|p| p.index != slot),
                "{what}: the retired slot was reused"
            );
            tree.rebuild();
            tree.validate().expect("valid after rebuild");
            tree.rebuild_partial();
            tree.validate().expect("valid after partial rebuild");
            tree.update_pairs().expect("no pair limit");
            assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice(), "{what}");
            for p in made.into_iter().chain([single]) {
                tree.destroy_proxy(p).expect("destroy");
                tree.validate().expect("valid after destroy");
            }
        }
        assert_eq!(tree.retired, 1, "{what}");
        assert!(tree.proxies[slot as usize].is_retired(), "{what}");
        assert!(!free_slots(&tree).contains(&slot), "{what}");
        assert!(tree.bytes() >= tree.proxies.len() * std::mem::size_of::<ProxySlot<Vec2, u32>>());
        for &stale in &old {
            assert_stale(&mut tree, stale);
        }
        // Put back on the free list by hand, validate finds it.
        let mut broken = tree.clone();
        broken.proxies[slot as usize].leaf = broken.free_proxy;
        broken.free_proxy = slot;
        assert!(broken.validate().is_err(), "{what}");
    }
}

/// `stats()` of trees whose boxes overflow an `f32` half area (a 3D box of side 1e20, boxes
/// near +-3e38): every figure finite, the area ratio as computed by hand in `f64`.
#[test]
fn stats_are_finite_for_boxes_whose_area_overflows_f32() {
    fn half_f64<V: Vector>(b: &Aabb<V>) -> f64 {
        let e: Vec<f64> = (0..V::DIM)
            .map(|i| f64::from(b.max.axis(i)) - f64::from(b.min.axis(i)))
            .collect();
        if V::DIM == 2 {
            e[0] + e[1]
        } else {
            e[0] * e[1] + e[1] * e[2] + e[2] * e[0]
        }
    }
    /// A tree of the two boxes (margin 0): leaves in pool slots 0 and 1, the root in 2.
    fn check<V: Vector>(a: Aabb<V>, b: Aabb<V>, ratio: f32) {
        let root = a.union(&b);
        assert!(
            !root.half_area().is_finite(),
            "the f32 half area overflows: {root:?}"
        );
        let mut tree = DynamicTree::<V, u32>::new(TreeConfig {
            margin: 0.0,
            ..TreeConfig::default()
        });
        tree.create_proxy(a, V::splat(0.0), 0).expect("create");
        tree.create_proxy(b, V::splat(0.0), 1).expect("create");
        tree.validate().expect("valid");
        let s = tree.stats();
        // In pool order, as `stats` sums.
        let want = ((half_f64(&a) + half_f64(&b) + half_f64(&root)) / half_f64(&root)) as f32;
        assert_eq!(s.area_ratio, want, "{a:?} {b:?}");
        assert!(
            (s.area_ratio - ratio).abs() < 1e-6,
            "{} vs {ratio}",
            s.area_ratio
        );
        assert_eq!(
            (s.leaves, s.nodes, s.height, s.min_height),
            (2, 3, 1, 1),
            "{a:?}"
        );
        assert!(s.area_ratio.is_finite() && s.bytes > 0);
    }
    // 2D near +-3e38: root 6e38 + 6e38 (1.2e39 overflows f32), leaves 2e38 each: 16 / 12.
    check(
        b2(-3e38, -3e38, -2e38, -2e38),
        b2(2e38, 2e38, 3e38, 3e38),
        16.0 / 12.0,
    );
    // 3D of side 1e20: leaves 3e40 each, root 27e40: 33 / 27.
    let cube = |lo: f32, hi: f32| Aabb::new(Vec3::splat(lo), Vec3::splat(hi));
    check(cube(0.0, 1e20), cube(2e20, 3e20), 33.0 / 27.0);
    // 3D near +-3e38: leaves 3e76 each, root 108e76: 114 / 108.
    check(cube(-3e38, -2e38), cube(2e38, 3e38), 114.0 / 108.0);

    // Many huge boxes in 2D and 3D: finite, and the f64 sum over the nodes by hand.
    fn many<V: Vector>(seed: u64) {
        let mut rng = Rng(seed);
        let mut tree = DynamicTree::<V, u32>::new(TreeConfig {
            margin: 0.0,
            ..TreeConfig::default()
        });
        for i in 0..200u32 {
            // Half of them near -3e38, half (mirrored) near +3e38.
            let min = rand_vec::<V>(&mut rng, -3.3e38, 0.0);
            let max = min + rand_vec::<V>(&mut rng, 0.0, 1e38);
            let zero = V::splat(0.0);
            let b = if i % 2 == 0 {
                Aabb::new(min, max)
            } else {
                Aabb::new(zero - max, zero - min)
            };
            tree.create_proxy(b, zero, i).expect("create");
        }
        tree.validate().expect("valid");
        let s = tree.stats();
        let mut total = 0.0f64;
        let mut root_area = 0.0f64;
        tree.walk(|id, view, depth| {
            total += half_f64(&view.aabb);
            if depth == 0 {
                assert_eq!(Some(id), tree.root());
                root_area = half_f64(&view.aabb);
            }
        });
        let want = (total / root_area) as f32;
        assert!(s.area_ratio.is_finite(), "{s:?}");
        assert!(
            (s.area_ratio - want).abs() <= want * 1e-6,
            "{s:?} vs {want}"
        );
        assert!(s.area_ratio >= 1.0);
        assert_eq!((s.leaves, s.nodes), (200, 399));
    }
    many::<Vec2>(41);
    many::<Vec3>(42);
}

/// A box that holds the point (1, 1): every two of them overlap.
fn pile_box(rng: &mut Rng) -> Aabb<Vec2> {
    let min = rand_vec::<Vec2>(rng, 0.0, 1.0);
    let max = rand_vec::<Vec2>(rng, 1.0, 2.0);
    Aabb::new(min, max)
}

/// Checks that the pairs of `tree` are every pair of the proxies in slots `0..n` and that
/// brute force says the same, without sorting (a debug-build sort of 45,000 pairs costs more
/// than the rest of a configuration's run).
fn assert_every_pair_of_the_first<V: Vector>(tree: &DynamicTree<V, u32>, n: usize, what: &str) {
    let mut seen = vec![false; n * n];
    for &(a, b) in tree.pair_indices() {
        let (a, b) = (a as usize, b as usize);
        assert!(a < b && b < n, "{what}: pair ({a}, {b})");
        assert!(!seen[a * n + b], "{what}: pair ({a}, {b}) twice");
        seen[a * n + b] = true;
    }
    assert_eq!(tree.pair_count(), n * (n - 1) / 2, "{what}");
    let brute = brute_pairs(tree);
    assert_eq!(brute.len(), n * (n - 1) / 2, "{what}: brute force");
    assert!(
        brute.iter().all(|(_, b)| (b.index as usize) < n),
        "{what}: brute force"
    );
}

/// The state after an update stopped at the pair limit: valid, no pairs, the move buffer and
/// its bits and the dirty flags cleared, a full recompute next, the pair storage small.
fn assert_stopped_at_limit<V: Vector>(tree: &DynamicTree<V, u32>, limit: usize, what: &str) {
    if let Err(e) = tree.validate() {
        panic!("{what}: {e}");
    }
    assert_eq!(tree.pair_count(), 0, "{what}");
    assert!(tree.pairs().is_empty(), "{what}");
    assert_eq!(tree.pairs_unsorted().count(), 0, "{what}");
    assert!(tree.pair_indices().is_empty(), "{what}");
    assert!(tree.moved.is_empty(), "{what}: move buffer");
    assert!(tree.proxies.iter().all(|s| !s.is_moved()), "{what}: MOVED");
    assert!(tree.nodes.iter().all(|n| !n.is_dirty()), "{what}: DIRTY");
    assert!(
        tree.pairs_full,
        "{what}: the next update recomputes every pair"
    );
    assert!(
        tree.pairs.capacity() < 10 * limit.max(100),
        "{what}: pair storage {} for a limit of {limit}",
        tree.pairs.capacity()
    );
}

/// Every configuration, on one thread and split: 290 boxes that overlap one another (41,905
/// pairs) and 10 far away. A limit of 1,000 stops the update with `PairLimit` and leaves a
/// consistent tree; without the limit the next update is brute force. Then the 10 join the
/// pile (44,850 pairs): one below that count (the kept pairs count) fails, exactly that count
/// succeeds.
#[test]
fn the_pair_limit_stops_every_configuration_and_the_next_update_recovers() {
    const PILE: usize = 290;
    const ALL: usize = 300;
    let after = ALL * (ALL - 1) / 2;
    assert_eq!(
        DynamicTree::<Vec2, u32>::new(TreeConfig::default()).pair_limit(),
        usize::MAX
    );
    assert_eq!(
        TreeError::PairLimit { limit: 1000 }.to_string(),
        "more than 1000 candidate pairs"
    );
    for (k, config) in all_configs().into_iter().enumerate() {
        for &parallel in SPLIT {
            let what = format!("{config:?}, parallel {parallel}");
            let mut rng = Rng(7000 + k as u64);
            let mut tree = DynamicTree::<Vec2, u32>::new(config);
            let mut ids = Vec::new();
            for i in 0..ALL {
                let b = if i < PILE {
                    pile_box(&mut rng)
                } else {
                    let x = 100.0 + 3.0 * i as f32;
                    b2(x, 0.0, x + 1.0, 1.0)
                };
                ids.push(tree.create_proxy(b, Vec2::ZERO, i as u32).expect("create"));
                tree.validate().expect("valid after create");
            }
            // No limit.
            tree.update_pairs_on(parallel).expect("no pair limit");
            assert_every_pair_of_the_first(&tree, PILE, &what);
            // A limit below the current count: the next update recomputes (nothing moved)
            // and stops.
            tree.set_pair_limit(1000);
            assert_eq!(tree.pair_limit(), 1000);
            assert_eq!(
                tree.update_pairs_on(parallel),
                Err(TreeError::PairLimit { limit: 1000 }),
                "{what}"
            );
            assert_stopped_at_limit(&tree, 1000, &what);
            // Still over: the full recompute stops again.
            assert_eq!(
                tree.update_pairs_on(parallel),
                Err(TreeError::PairLimit { limit: 1000 }),
                "{what}"
            );
            assert_stopped_at_limit(&tree, 1000, &what);
            // No limit: every pair again.
            tree.set_pair_limit(usize::MAX);
            let u = tree.update_pairs_on(parallel).expect("no pair limit");
            assert!(u.recomputed, "{what}");
            tree.validate().expect("valid");
            assert_every_pair_of_the_first(&tree, PILE, &what);
            // The far ten join the pile.
            for &id in &ids[PILE..] {
                tree.move_proxy(id, pile_box(&mut rng), Vec2::ZERO)
                    .expect("move");
                tree.validate().expect("valid after move");
            }
            let mut exact = tree.clone();
            // The kept 41,905 pairs count: one under the new total fails.
            tree.set_pair_limit(after - 1);
            assert_eq!(
                tree.update_pairs_on(parallel),
                Err(TreeError::PairLimit { limit: after - 1 }),
                "{what}"
            );
            assert_stopped_at_limit(&tree, after - 1, &what);
            // The limit is inclusive: exactly the count succeeds, from the kept pairs...
            exact.set_pair_limit(after);
            assert!(
                exact
                    .update_pairs_on(parallel)
                    .expect("at the limit")
                    .recomputed
            );
            exact.validate().expect("valid");
            assert_every_pair_of_the_first(&exact, ALL, &what);
            // ... and from scratch after the failure.
            tree.set_pair_limit(after);
            assert!(
                tree.update_pairs_on(parallel)
                    .expect("at the limit")
                    .recomputed
            );
            tree.validate().expect("valid");
            assert_every_pair_of_the_first(&tree, ALL, &what);
            // Nothing changed: nothing recomputed, the set kept.
            assert!(
                !tree
                    .update_pairs_on(parallel)
                    .expect("unchanged")
                    .recomputed
            );
            assert_eq!(tree.pair_count(), after, "{what}");
        }
    }
}

/// 3,000 equal boxes (4,498,500 pairs) under a limit of 10,000: every pair method, on one
/// thread and split, stops early: the pair storage stays near the limit.
#[test]
fn a_walk_that_would_find_millions_of_pairs_stops_at_the_limit() {
    const N: u32 = 3000;
    const LIMIT: usize = 10_000;
    let items: Vec<_> = (0..N)
        .map(|i| (b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, i))
        .collect();
    for pairs in PairMethod::ALL {
        for &parallel in SPLIT {
            let what = format!("{pairs:?}, parallel {parallel}");
            let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
                pairs,
                ..TreeConfig::default()
            });
            tree.create_proxies(&items).expect("batch");
            tree.set_pair_limit(LIMIT);
            assert_eq!(
                tree.update_pairs_on(parallel),
                Err(TreeError::PairLimit { limit: LIMIT }),
                "{what}"
            );
            assert_stopped_at_limit(&tree, LIMIT, &what);
            assert!(tree.pairs.capacity() < 2 * LIMIT + 64, "{what}");
            // The full recompute the error asks for stops too.
            assert_eq!(
                tree.update_pairs_on(parallel),
                Err(TreeError::PairLimit { limit: LIMIT }),
                "{what}"
            );
            assert_stopped_at_limit(&tree, LIMIT, &what);
        }
    }
}

/// `MovedTraversal` on a tree large enough for the walk cut down to the moved proxies: the
/// pairs kept count towards the limit, a failure clears the dirty flags and the move buffer,
/// a limit of exactly the count succeeds; on one thread and split.
#[test]
fn the_pair_limit_counts_the_kept_pairs_of_the_moved_traversal() {
    let mut rng = Rng(77);
    // A grid of 3,000 unit boxes at spacing 1 (each touches its neighbours).
    let items: Vec<_> = (0..3000u32)
        .map(|i| {
            let (x, y) = ((i % 60) as f32, (i / 60) as f32);
            (b2(x, y, x + 1.0, y + 1.0), Vec2::ZERO, i)
        })
        .collect();
    for &parallel in SPLIT {
        let what = format!("parallel {parallel}");
        let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
            pairs: PairMethod::MovedTraversal,
            ..TreeConfig::default()
        });
        let ids = tree.create_proxies(&items).expect("batch");
        let full = tree.update_pairs_on(parallel).expect("no pair limit");
        let kept = tree.pair_count();
        assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice(), "{what}");
        // Forty move into a pile far away: few moved, so the cut-down walk runs.
        for k in 0..40 {
            let b = pile_box(&mut rng);
            let far = Aabb::new(b.min + Vec2::splat(500.0), b.max + Vec2::splat(500.0));
            tree.move_proxy(ids[k * 71], far, Vec2::ZERO).expect("move");
        }
        tree.validate().expect("valid");
        let mut free = tree.clone();
        let u = free.update_pairs_on(parallel).expect("no pair limit");
        assert!(
            u.stats.node_visits < full.stats.node_visits / 2,
            "{what}: the walk cut down to the moved proxies ran"
        );
        let count = free.pair_count();
        assert_eq!(free.pairs(), brute_pairs(&free).as_slice(), "{what}");
        // The forty lose their grid pairs and gain the 780 among them.
        assert!(
            count > kept / 2 && count < kept + 780,
            "{what}: most pairs are kept"
        );
        // One under the count: stops, after keeping most of the pairs.
        let mut over = tree.clone();
        over.set_pair_limit(count - 1);
        assert_eq!(
            over.update_pairs_on(parallel),
            Err(TreeError::PairLimit { limit: count - 1 }),
            "{what}"
        );
        assert_stopped_at_limit(&over, count - 1, &what);
        over.set_pair_limit(usize::MAX);
        over.update_pairs_on(parallel).expect("no pair limit");
        over.validate().expect("valid");
        assert_eq!(over.pairs(), free.pairs(), "{what}");
        // Exactly the count: the cut-down walk succeeds.
        tree.set_pair_limit(count);
        let u = tree.update_pairs_on(parallel).expect("at the limit");
        assert!(u.stats.node_visits < full.stats.node_visits / 2, "{what}");
        tree.validate().expect("valid");
        assert!(tree.nodes.iter().all(|n| !n.is_dirty()), "{what}");
        assert_eq!(tree.pairs(), free.pairs(), "{what}");
    }
}

/// A limit of 0: a tree without overlaps updates; one overlap is one too many.
#[test]
fn a_pair_limit_of_zero_allows_only_no_pairs() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    tree.set_pair_limit(0);
    assert!(!tree.update_pairs().expect("empty").recomputed);
    let a = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
        .expect("create");
    tree.create_proxy(b2(5.0, 5.0, 6.0, 6.0), Vec2::ZERO, 1)
        .expect("create");
    assert!(tree.update_pairs().expect("no overlap").recomputed);
    assert_eq!(tree.pair_count(), 0);
    tree.move_proxy(a, b2(4.5, 4.5, 5.5, 5.5), Vec2::ZERO)
        .expect("move");
    assert_eq!(tree.update_pairs(), Err(TreeError::PairLimit { limit: 0 }));
    assert_stopped_at_limit(&tree, 0, "limit 0");
    tree.set_pair_limit(1);
    tree.update_pairs().expect("one pair");
    assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
    assert_eq!(tree.pair_count(), 1);
}
