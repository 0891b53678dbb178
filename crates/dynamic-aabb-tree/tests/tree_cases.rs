//! Hand-checked and degenerate cases of the dynamic AABB tree, through its public API: each
//! article's method on a small case worked out by hand (Choi's volume descent, the ABCD blog post's
//! four boxes, the self traversal, moves inside and outside the fat box), ray-cast clipping,
//! exact query stats, events, stats, tree quality (a 100 x 100 grid, AVL balance), degenerate
//! inputs (identical, zero-size and collinear boxes, coordinates near +-1e7, 100,000
//! create/destroy cycles, stale handles, NaN, inverted boxes, negative settings), and on larger
//! trees the persistent pair set, batches, rebuilds and the figures of huge boxes. The tree's
//! internals are tested by the unit tests in `src/tests.rs`.
//!
//! Tree shapes are written as nested lists of proxy names, e.g. `((A B) (C D))`; the two
//! children of a branch are listed by the least name they hold, so the order of the tree's
//! child slots does not matter.

mod common;

use common::shared::{SplitMix, b2, brute_pairs, rand_box, rand_vec};
use common::{
    BALANCINGS, INSERTIONS, Model, aabb, check_tree, computed_heights, every_config, expected_fat,
    vector, walk_all,
};
use dynamic_aabb_tree::{
    Aabb, Balancing, DynamicTree, InsertionCost, NodeId, PairMethod, ProxyId, QueryStats,
    TreeConfig, TreeError, TreeEvent, UpdateMode, Vector,
};
use glam::{Vec2, Vec3};
use std::collections::{BTreeMap, HashSet};

/// A tree and its brute-force model, driven together; every helper panics with a message on a
/// mismatch.
struct Fixture<V: Vector> {
    tree: DynamicTree<V, u32>,
    model: Model<V>,
    names: BTreeMap<ProxyId, String>,
}

impl<V: Vector> Fixture<V> {
    fn new(config: TreeConfig) -> Self {
        let tree = DynamicTree::try_new(config).expect("a valid config");
        Self {
            tree,
            model: Model::new(config),
            names: BTreeMap::new(),
        }
    }

    /// Creates a proxy named `name` with user data = number of proxies created before it.
    fn add(&mut self, name: &str, tight: Aabb<V>, velocity: V) -> ProxyId {
        let user = self.names.len() as u32;
        let id = self
            .tree
            .create_proxy(tight, velocity, user)
            .unwrap_or_else(|e| panic!("create_proxy({name}, {tight:?}): {e}"));
        self.model.create(id, tight, velocity, user);
        self.names.insert(id, name.to_string());
        id
    }

    fn add_box(&mut self, name: &str, min: &[f32], max: &[f32]) -> ProxyId {
        self.add(name, aabb(min, max), V::splat(0.0))
    }

    /// [`Fixture::add_box`], then `validate()` (cheaper than a whole [`Fixture::check`]).
    fn add_valid(&mut self, name: &str, min: &[f32], max: &[f32]) -> ProxyId {
        let id = self.add_box(name, min, max);
        if let Err(e) = self.tree.validate() {
            panic!("{:?}: after adding {name}: {e}", self.tree.config());
        }
        id
    }

    fn remove(&mut self, id: ProxyId) {
        let user = self.model.proxies[&id].user;
        assert_eq!(
            self.tree.destroy_proxy(id),
            Ok(user),
            "destroy_proxy({id:?})"
        );
        self.model.proxies.remove(&id);
    }

    /// Moves a proxy; checks the returned flag against the documented rule and returns it.
    fn mv(&mut self, id: ProxyId, tight: Aabb<V>, velocity: V) -> bool {
        let want = self.model.apply_move(id, tight, velocity);
        assert_eq!(
            self.tree.move_proxy(id, tight, velocity),
            Ok(want),
            "move_proxy({id:?}, {tight:?})"
        );
        want
    }

    fn check(&self) {
        if let Err(e) = check_tree(&self.tree, &self.model) {
            panic!("{:?}: {e}", self.tree.config());
        }
    }

    /// Runs `update_pairs`, checks the pair set against brute force (and `pair_count`,
    /// `pairs_unsorted` and `pair_indices` against `pairs`) and returns the update.
    fn update_pairs(&mut self) -> dynamic_aabb_tree::PairUpdate {
        let update = self.tree.update_pairs().expect("no pair limit");
        let got = self.tree.pairs().to_vec();
        let cfg = self.tree.config();
        assert_eq!(self.tree.pair_count(), got.len(), "{cfg:?}: pair_count()");
        let mut unsorted: Vec<_> = self.tree.pairs_unsorted().collect();
        unsorted.sort();
        assert_eq!(unsorted, got, "{cfg:?}: pairs_unsorted()");
        let mut indices = self.tree.pair_indices().to_vec();
        indices.sort();
        let want: Vec<_> = got.iter().map(|(a, b)| (a.index, b.index)).collect();
        assert_eq!(indices, want, "{cfg:?}: pair_indices()");
        assert!(
            got.windows(2).all(|w| w[0] < w[1]) && got.iter().all(|p| p.0 < p.1),
            "{:?}: pairs() not sorted (a < b, no duplicates)",
            self.tree.config()
        );
        assert_eq!(
            got,
            self.model.pairs(),
            "{:?}: pairs() vs brute force",
            self.tree.config()
        );
        update
    }

    fn query_aabb(&self, q: &Aabb<V>) -> (Vec<ProxyId>, QueryStats) {
        let mut got = Vec::new();
        let stats = self.tree.query_aabb(q, |id| {
            got.push(id);
            true
        });
        let n = got.len();
        got.sort();
        got.dedup();
        assert_eq!(got.len(), n, "query_aabb({q:?}) reported a proxy twice");
        assert_eq!(
            got,
            self.model.query_aabb(q),
            "query_aabb({q:?}) vs brute force"
        );
        (got, stats)
    }

    fn query_point(&self, p: V) -> (Vec<ProxyId>, QueryStats) {
        let mut got = Vec::new();
        let stats = self.tree.query_point(p, |id| {
            got.push(id);
            true
        });
        let n = got.len();
        got.sort();
        got.dedup();
        assert_eq!(got.len(), n, "query_point({p:?}) reported a proxy twice");
        assert_eq!(
            got,
            self.model.query_point(p),
            "query_point({p:?}) vs brute force"
        );
        (got, stats)
    }

    /// Every callback of a ray cast whose callback returns `reply(proxy, t_enter)`.
    fn ray(
        &self,
        origin: V,
        end: V,
        max_fraction: f32,
        mut reply: impl FnMut(ProxyId, f32) -> f32,
    ) -> (Vec<(ProxyId, f32)>, QueryStats) {
        let mut got = Vec::new();
        let stats = self.tree.ray_cast(origin, end, max_fraction, |id, t| {
            got.push((id, t));
            reply(id, t)
        });
        (got, stats)
    }

    /// The names of the proxies, for messages.
    fn named(&self, ids: &[ProxyId]) -> Vec<String> {
        ids.iter().map(|id| self.names[id].clone()).collect()
    }

    /// The tree's shape with proxy names, children listed by the least name they hold.
    fn shape(&self) -> String {
        match self.tree.root() {
            None => "()".to_string(),
            Some(root) => self.subtree(root).1,
        }
    }

    /// (least name, shape) of a subtree.
    fn subtree(&self, node: NodeId) -> (String, String) {
        let view = self.tree.node(node).expect("a node the tree reported");
        match (view.children, view.proxy) {
            (None, Some(p)) => {
                let name = self.names[&p].clone();
                (name.clone(), name)
            }
            (Some([a, b]), _) => {
                let mut kids = [self.subtree(a), self.subtree(b)];
                kids.sort();
                (kids[0].0.clone(), format!("({} {})", kids[0].1, kids[1].1))
            }
            other => panic!("node {node:?} has children and proxy {other:?}"),
        }
    }
}

fn config(insertion: InsertionCost, balancing: Balancing, margin: f32) -> TreeConfig {
    TreeConfig {
        margin,
        velocity_lookahead: 0.0,
        insertion,
        balancing,
        pairs: PairMethod::SelfTraversal,
        update: UpdateMode::Reinsert,
        ..TreeConfig::default()
    }
}

/// Every insertion x balancing x pair method, with `margin` and no look-ahead.
fn configs_with_pairs(margin: f32) -> Vec<TreeConfig> {
    every_config(margin, 0.0)
        .into_iter()
        .filter(|c| c.update == UpdateMode::Reinsert)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Each article's method on a small hand-checked case
// ---------------------------------------------------------------------------------------------

/// Choi, "Collision Detection - Dynamic AABB Tree" (after Chou): at a branch, the new leaf goes
/// down the child whose volume grows least. C lies inside A's box (no growth) but beside
/// the small B: volume picks A, while the perimeter of the combined box (Chilakapati's blog
/// post) picks B. Margin 0.2 as in Choi's code.
fn volume_descent_case<V: Vector>() {
    for (insertion, after_c, after_d) in [
        // Volume: C joins A (growth 0 < 2.8); D, inside A, goes down (A C) then joins A.
        (InsertionCost::Volume, "((A C) B)", "(((A D) C) B)"),
        // Perimeter: C joins B (combined perimeter 9.6 < 41.6); D goes down (B C), whose
        // combined perimeter with D is 33.6 < 41.6, then joins C (29.6 < 33.6).
        (InsertionCost::Perimeter, "(A (B C))", "(A (B (C D)))"),
    ] {
        let mut f = Fixture::<V>::new(config(insertion, Balancing::None, 0.2));
        f.add_box("A", &[0.0, 0.0, 0.0], &[10.0, 10.0, 10.0]);
        f.add_box("B", &[11.0, 4.0, 4.0], &[12.0, 5.0, 5.0]);
        assert_eq!(f.shape(), "(A B)");
        f.add_box("C", &[9.0, 4.0, 4.0], &[10.0, 5.0, 5.0]);
        assert_eq!(f.shape(), after_c, "{insertion:?} in {}D, after C", V::DIM);
        f.add_box("D", &[0.5, 0.5, 0.5], &[1.0, 1.0, 1.0]);
        assert_eq!(f.shape(), after_d, "{insertion:?} in {}D, after D", V::DIM);
        f.check();
    }
}

#[test]
fn volume_cost_picks_the_child_of_least_volume_increase_as_in_choi() {
    volume_descent_case::<Vec2>();
    volume_descent_case::<Vec3>();
    // The increase decides, not the union: N grows A by 10 and B by 30 in area, although its
    // union with B (50) is smaller than its union with A (110).
    let mut f = Fixture::<Vec2>::new(config(InsertionCost::Volume, Balancing::None, 0.0));
    f.add_box("A", &[0.0, 0.0], &[10.0, 10.0]);
    f.add_box("B", &[12.0, 0.0], &[13.0, 20.0]);
    f.add_box("N", &[10.5, 0.0], &[11.0, 1.0]);
    assert_eq!(f.shape(), "((A N) B)", "N must be placed beside A");
    f.check();
}

/// The scene of Sri Harsha Chilakapati's "AABB Trees for Collision Detection": A and B side by
/// side, C and D side by side far to the right, inserted in that order. Greedy descent without
/// balancing chains them as (A (B (C D))); AVL rotates that to ((A B) (C D)); surface-area
/// rotations swap A and C when C arrives; the SAH search makes C the sibling of the root and D
/// the sibling of C. Worked out by hand with margin 0.1.
fn abcd_case<V: Vector>() {
    for insertion in INSERTIONS {
        for balancing in BALANCINGS {
            let mut f = Fixture::<V>::new(config(insertion, balancing, 0.1));
            f.add_box("A", &[0.0, 0.0, 0.0], &[1.0, 1.0, 1.0]);
            f.add_box("B", &[2.0, 0.0, 0.0], &[3.0, 1.0, 1.0]);
            f.add_box("C", &[10.0, 0.0, 0.0], &[11.0, 1.0, 1.0]);
            f.add_box("D", &[12.0, 0.0, 0.0], &[13.0, 1.0, 1.0]);
            f.check();
            let want = match (insertion, balancing) {
                (InsertionCost::Volume | InsertionCost::Perimeter, Balancing::None) => {
                    "(A (B (C D)))"
                }
                _ => "((A B) (C D))",
            };
            assert_eq!(
                f.shape(),
                want,
                "{insertion:?} + {balancing:?} in {}D",
                V::DIM
            );
        }
    }
}

#[test]
fn abcd_boxes_give_a_root_over_ab_and_cd() {
    abcd_case::<Vec2>();
    abcd_case::<Vec3>();
    // The article's own boxes (A and B up left, C and D down right), perimeter cost with AVL.
    let mut f = Fixture::<Vec2>::new(config(InsertionCost::Perimeter, Balancing::Avl, 0.1));
    f.add_box("A", &[0.0, 4.0], &[2.0, 6.0]);
    f.add_box("B", &[3.0, 3.0], &[5.0, 5.0]);
    f.add_box("C", &[9.0, 1.0], &[11.0, 3.0]);
    f.add_box("D", &[12.0, 0.0], &[14.0, 2.0]);
    assert_eq!(f.shape(), "((A B) (C D))");
    let root = f.tree.root().and_then(|r| f.tree.node(r)).expect("a root");
    assert_eq!(root.height, 2);
    f.check();
}

/// Six boxes (as in Choi's figure) with overlaps worked out by hand, then eight identical
/// boxes: every pair is reported exactly once by both pair methods.
#[test]
fn self_traversal_reports_each_pair_once() {
    for cfg in configs_with_pairs(0.25) {
        let mut f = Fixture::<Vec2>::new(cfg);
        let ids = [
            f.add_box("0", &[0.0, 0.0], &[2.0, 2.0]),
            f.add_box("1", &[1.0, 1.0], &[3.0, 3.0]),
            // Fat box starts at 2.25, where box 0's ends: closed boxes touch.
            f.add_box("2", &[2.5, 0.0], &[4.0, 1.0]),
            f.add_box("3", &[10.0, 10.0], &[11.0, 11.0]),
            f.add_box("4", &[6.0, 0.0], &[7.0, 1.0]),
            // Touches box 4's fat box at x = 7.25.
            f.add_box("5", &[7.5, 0.0], &[9.0, 1.0]),
        ];
        f.update_pairs();
        let want = pair_list(&[
            (ids[0], ids[1]),
            (ids[0], ids[2]),
            (ids[1], ids[2]),
            (ids[4], ids[5]),
        ]);
        assert_eq!(f.tree.pairs(), &want[..], "{cfg:?}: the six boxes");
        f.check();

        let same: Vec<ProxyId> = (0..8)
            .map(|i| f.add_box(&format!("s{i}"), &[20.0, 20.0], &[21.0, 21.0]))
            .collect();
        f.update_pairs();
        assert_eq!(
            f.tree.pairs().len(),
            4 + 28,
            "{cfg:?}: six boxes and eight identical ones"
        );
        for (i, a) in same.iter().enumerate() {
            for b in &same[i + 1..] {
                let pair = pair_list(&[(*a, *b)])[0];
                assert!(
                    f.tree.pairs().contains(&pair),
                    "{cfg:?}: pair {a:?} {b:?} missing"
                );
            }
        }
        f.check();
    }
}

/// Choi's object 5: a move inside the fat box changes nothing in the tree and the pairs are
/// not recomputed; a move out of it reinserts the leaf and the pairs are recomputed.
#[test]
fn move_inside_fat_box_is_not_reinserted_and_out_of_it_is() {
    for cfg in every_config(0.5, 0.0) {
        let mut f = Fixture::<Vec2>::new(cfg);
        let a = f.add_box("A", &[0.0, 0.0], &[1.0, 1.0]);
        let b = f.add_box("B", &[2.0, 0.0], &[3.0, 1.0]);
        let big = f.add_box("5", &[5.0, 5.0], &[9.0, 9.0]);
        f.update_pairs();
        assert!(
            !f.update_pairs().recomputed,
            "{cfg:?}: second update with no change"
        );
        let fat_before = f.tree.fat_aabb(big).expect("live");
        let shape_before = f.shape();

        // Inside the fat box [4.5, 9.5]^2, exactly to its edge.
        assert!(!f.mv(big, aabb(&[5.5, 4.5], &[9.5, 8.5]), Vec2::new(1.0, -1.0)));
        assert_eq!(
            f.tree.fat_aabb(big),
            Ok(fat_before),
            "{cfg:?}: fat box after a move inside it"
        );
        assert_eq!(f.tree.tight_aabb(big), Ok(aabb(&[5.5, 4.5], &[9.5, 8.5])));
        assert_eq!(
            f.shape(),
            shape_before,
            "{cfg:?}: shape after a move inside the fat box"
        );
        let update = f.update_pairs();
        assert!(
            !update.recomputed,
            "{cfg:?}: pairs recomputed after a move inside the fat box"
        );
        f.check();

        // Out of it by a quarter: reinserted with a new fat box, and it now meets B.
        assert!(f.mv(big, aabb(&[2.5, 0.5], &[6.75, 4.5]), Vec2::ZERO));
        assert_eq!(f.tree.fat_aabb(big), Ok(aabb(&[2.0, 0.0], &[7.25, 5.0])));
        let update = f.update_pairs();
        assert!(
            update.recomputed,
            "{cfg:?}: pairs not recomputed after a reinsert"
        );
        assert_eq!(
            f.tree.pairs(),
            &pair_list(&[(a, b), (b, big)])[..],
            "{cfg:?}"
        );
        f.check();
    }
}

/// The fat box follows the documented rule exactly: grown by the margin, stretched by velocity
/// times look-ahead on the side of the motion, and recomputed at once when either changes.
#[test]
fn fat_box_follows_margin_and_lookahead() {
    for cfg in every_config(0.25, 0.5) {
        let mut f = Fixture::<Vec2>::new(cfg);
        let p = f.add("P", aabb(&[1.0, 2.0], &[3.0, 4.0]), Vec2::new(2.0, -1.0));
        // x: max += 2 * 0.5; y: min += -1 * 0.5.
        assert_eq!(f.tree.fat_aabb(p), Ok(aabb(&[0.75, 1.25], &[4.25, 4.25])));
        assert_eq!(f.tree.set_margin(0.5), Ok(()));
        assert_eq!(f.tree.fat_aabb(p), Ok(aabb(&[0.5, 1.0], &[4.5, 4.5])));
        assert_eq!(f.tree.set_velocity_lookahead(0.0), Ok(()));
        assert_eq!(f.tree.fat_aabb(p), Ok(aabb(&[0.5, 1.5], &[3.5, 4.5])));
        assert_eq!(f.tree.set_velocity_lookahead(1.0), Ok(()));
        assert_eq!(f.tree.fat_aabb(p), Ok(aabb(&[0.5, 0.5], &[5.5, 4.5])));
        assert_eq!(f.tree.config().margin, 0.5);
        assert_eq!(f.tree.config().velocity_lookahead, 1.0);
        f.model.config.margin = 0.5;
        f.model.config.velocity_lookahead = 1.0;
        f.model.refatten();
        f.check();
        // Two proxies 0.5 apart: apart under a margin of 0.1,
        // overlapping once the margin and look-ahead grow; the update after each change
        // recomputes, the one after it does not.
        let mut h = Fixture::<Vec2>::new(TreeConfig {
            margin: 0.1,
            velocity_lookahead: 0.0,
            ..cfg
        });
        let a = h.add("a", aabb(&[0.0, 0.0], &[1.0, 1.0]), Vec2::new(2.0, -1.0));
        let b = h.add_box("b", &[1.5, 0.0], &[2.5, 1.0]);
        h.update_pairs();
        assert!(h.tree.pairs().is_empty(), "{cfg:?}");
        assert_eq!(h.tree.set_margin(0.25), Ok(()));
        assert_eq!(h.tree.fat_aabb(a), Ok(aabb(&[-0.25, -0.25], &[1.25, 1.25])));
        assert_eq!(h.tree.set_velocity_lookahead(0.5), Ok(()));
        // Stretched by velocity * 0.5 = (1, -0.5) along the motion.
        assert_eq!(h.tree.fat_aabb(a), Ok(aabb(&[-0.25, -0.75], &[2.25, 1.25])));
        assert_eq!(h.tree.fat_aabb(b), Ok(aabb(&[1.25, -0.25], &[2.75, 1.25])));
        h.model.config.margin = 0.25;
        h.model.config.velocity_lookahead = 0.5;
        h.model.refatten();
        h.check();
        assert!(
            h.update_pairs().recomputed,
            "{cfg:?}: after a setting changed"
        );
        assert_eq!(h.tree.pairs(), &[(a, b)], "{cfg:?}");
        assert!(
            !h.update_pairs().recomputed,
            "{cfg:?}: nothing changed since"
        );
        assert_eq!(h.tree.pairs(), &[(a, b)], "{cfg:?}");
        // 3D, negative z velocity.
        let mut g = Fixture::<Vec3>::new(cfg);
        let q = g.add(
            "Q",
            aabb(&[0.0, 0.0, 0.0], &[1.0, 1.0, 1.0]),
            Vec3::new(0.0, 4.0, -2.0),
        );
        assert_eq!(
            g.tree.fat_aabb(q),
            Ok(aabb(&[-0.25, -0.25, -1.25], &[1.25, 3.25, 1.25]))
        );
        assert_eq!(
            g.tree.fat_aabb(q),
            Ok(expected_fat(
                &aabb(&[0.0, 0.0, 0.0], &[1.0, 1.0, 1.0]),
                Vec3::new(0.0, 4.0, -2.0),
                0.25,
                0.5
            ))
        );
        g.check();
    }
}

// ---------------------------------------------------------------------------------------------
// Ray casts, query stats, events, stats
// ---------------------------------------------------------------------------------------------

/// Three boxes on the x axis at entry fractions 0.2, 0.5 and 0.8 of the ray (0,0) -> (10,0),
/// and one above it.
fn ray_fixture() -> (Fixture<Vec2>, [ProxyId; 4]) {
    let mut f = Fixture::<Vec2>::new(TreeConfig {
        margin: 0.0,
        ..TreeConfig::default()
    });
    let ids = [
        f.add_box("A", &[2.0, -1.0], &[3.0, 1.0]),
        f.add_box("B", &[5.0, -1.0], &[6.0, 1.0]),
        f.add_box("C", &[8.0, -1.0], &[9.0, 1.0]),
        f.add_box("D", &[5.0, 3.0], &[6.0, 4.0]),
    ];
    f.check();
    (f, ids)
}

/// Pairs as the tree reports them: each `(a, b)` with `a < b`, sorted.
fn pair_list(pairs: &[(ProxyId, ProxyId)]) -> Vec<(ProxyId, ProxyId)> {
    let mut out: Vec<(ProxyId, ProxyId)> =
        pairs.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
    out.sort();
    out
}

fn sorted(ids: &[ProxyId]) -> Vec<ProxyId> {
    let mut out = ids.to_vec();
    out.sort();
    out
}

fn sorted_ids(hits: &[(ProxyId, f32)]) -> Vec<ProxyId> {
    let mut ids: Vec<ProxyId> = hits.iter().map(|h| h.0).collect();
    ids.sort();
    ids
}

#[test]
fn ray_cast_reports_entry_fractions_and_clips() {
    let (f, [a, b, c, _d]) = ray_fixture();
    let o = Vec2::new(0.0, 0.0);
    let e = Vec2::new(10.0, 0.0);

    // Going on with the same fraction: every box on the ray, at its entry fraction.
    let (hits, _) = f.ray(o, e, 1.0, |_, _| 1.0);
    assert_eq!(sorted_ids(&hits), vec![a, b, c]);
    for (id, t) in &hits {
        let want = [(a, 0.2f32), (b, 0.5), (c, 0.8)]
            .iter()
            .find(|w| w.0 == *id)
            .expect("hit")
            .1;
        assert!(
            (t - want).abs() <= 1e-6,
            "entry of {:?}: {t}, want {want}",
            f.named(&[*id])
        );
    }

    // max_fraction clips the segment; an end exactly on B's face still touches it.
    assert_eq!(sorted_ids(&f.ray(o, e, 0.45, |_, _| 0.45).0), vec![a]);
    assert_eq!(sorted_ids(&f.ray(o, e, 0.5, |_, _| 0.5).0), vec![a, b]);
    assert_eq!(
        sorted_ids(&f.ray(o, e, 0.19, |_, _| 0.19).0),
        Vec::<ProxyId>::new()
    );

    // 0 stops at once.
    assert_eq!(f.ray(o, e, 1.0, |_, _| 0.0).0.len(), 1);
    // A fraction below every entry stops it too: nothing is left on the segment.
    assert_eq!(f.ray(o, e, 1.0, |_, _| 0.1).0.len(), 1);

    // Clipping to 0.6 after the first hit: A and B (entries <= 0.6) are always reported, C
    // only if it came first.
    let (hits, _) = f.ray(o, e, 1.0, |_, _| 0.6);
    let ids = sorted_ids(&hits);
    assert!(
        ids.contains(&a) && ids.contains(&b),
        "clipped cast lost A or B: {hits:?}"
    );
    for (i, (id, t)) in hits.iter().enumerate() {
        assert!(
            i == 0 || *t <= 0.6,
            "{:?} reported at {t} after the segment was clipped to 0.6",
            f.named(&[*id])
        );
    }

    // Closest hit: returning the entry fraction clips to it; the nearest box is A.
    let mut clip = 1.0f32;
    let (hits, _) = f.ray(o, e, 1.0, |_, t| {
        assert!(t <= clip, "reported at {t} beyond the clip {clip}");
        clip = clip.min(t);
        clip
    });
    assert!(
        hits.iter().any(|h| h.0 == a),
        "closest-hit cast missed A: {hits:?}"
    );
    assert!((clip - 0.2).abs() <= 1e-6);

    // The other way: C first at 0.1.
    let (hits, _) = f.ray(e, o, 1.0, |_, _| 1.0);
    assert_eq!(sorted_ids(&hits), vec![a, b, c]);
    let tc = hits.iter().find(|h| h.0 == c).expect("C").1;
    assert!((tc - 0.1).abs() <= 1e-6, "entry of C going left: {tc}");

    // Starting inside A: entry 0.
    let (hits, _) = f.ray(Vec2::new(2.5, 0.0), e, 1.0, |_, _| 1.0);
    assert_eq!(sorted_ids(&hits), vec![a, b, c]);
    assert_eq!(hits.iter().find(|h| h.0 == a).expect("A").1, 0.0);

    // Vertical between the boxes: nothing. Vertical through B and D: both.
    assert!(
        f.ray(Vec2::new(4.0, -5.0), Vec2::new(4.0, 5.0), 1.0, |_, _| 1.0)
            .0
            .is_empty()
    );
    let (hits, _) = f.ray(Vec2::new(5.5, -5.0), Vec2::new(5.5, 5.0), 1.0, |_, _| 1.0);
    let mut names = f.named(&sorted_ids(&hits));
    names.sort();
    assert_eq!(names, vec!["B", "D"]);

    // A zero-length segment inside A must not panic; it can only report A.
    let (hits, _) = f.ray(Vec2::new(2.5, 0.0), Vec2::new(2.5, 0.0), 1.0, |_, _| 1.0);
    assert!(
        hits.iter().all(|h| h.0 == a),
        "zero-length segment in A reported {hits:?}"
    );
    // Non-finite input must not panic and must not disturb the tree.
    f.ray(Vec2::new(f32::NAN, 0.0), e, 1.0, |_, _| 1.0);
    f.ray(o, Vec2::new(f32::INFINITY, 0.0), 1.0, |_, _| 1.0);
    f.check();
}

/// The ABCD blog post's tree ((A B) (C D)), built with SAH + rotations and no margin: each
/// query tests the nodes whose ancestors all passed, and counts the leaves among them.
#[test]
fn query_stats_are_exact_on_a_tiny_tree() {
    for balancing in BALANCINGS {
        let mut f = Fixture::<Vec2>::new(config(InsertionCost::SurfaceArea, balancing, 0.0));
        let empty_stats = f
            .tree
            .query_aabb(&aabb(&[-100.0, -100.0], &[100.0, 100.0]), |_| true);
        assert_eq!(
            empty_stats,
            QueryStats {
                node_visits: 0,
                leaf_visits: 0
            },
            "empty tree"
        );
        let a = f.add_box("A", &[0.0, 0.0], &[1.0, 1.0]);
        // One leaf: the root is the leaf and is tested even when missed.
        let (_, s) = f.query_aabb(&aabb(&[5.0, 5.0], &[6.0, 6.0]));
        assert_eq!(
            s,
            QueryStats {
                node_visits: 1,
                leaf_visits: 1
            },
            "one leaf, missed"
        );
        let b = f.add_box("B", &[2.0, 0.0], &[3.0, 1.0]);
        let c = f.add_box("C", &[10.0, 0.0], &[11.0, 1.0]);
        let d = f.add_box("D", &[12.0, 0.0], &[13.0, 1.0]);
        assert_eq!(f.shape(), "((A B) (C D))");
        let stats = |node_visits, leaf_visits| QueryStats {
            node_visits,
            leaf_visits,
        };

        let (ids, s) = f.query_aabb(&aabb(&[0.25, 0.25], &[0.5, 0.5]));
        assert_eq!(
            (ids, s),
            (vec![a], stats(5, 2)),
            "box in A: root, AB, CD, A, B"
        );
        let (ids, s) = f.query_aabb(&aabb(&[20.0, 20.0], &[21.0, 21.0]));
        assert_eq!((ids, s), (vec![], stats(1, 0)), "box outside the root");
        let (ids, s) = f.query_aabb(&aabb(&[-1.0, -1.0], &[14.0, 2.0]));
        assert_eq!(
            (ids, s),
            (vec![a, b, c, d], stats(7, 4)),
            "box over everything"
        );
        let (ids, s) = f.query_aabb(&aabb(&[3.0, 0.0], &[5.0, 1.0]));
        assert_eq!(
            (ids, s),
            (vec![b], stats(5, 2)),
            "box touching B's right face"
        );
        let (ids, s) = f.query_point(Vec2::new(12.5, 0.5));
        assert_eq!((ids, s), (vec![d], stats(5, 2)), "point in D");
        let (ids, s) = f.query_point(Vec2::new(6.0, 0.5));
        assert_eq!((ids, s), (vec![], stats(3, 0)), "point in the root only");
        let (hits, s) = f.ray(Vec2::new(-1.0, 0.5), Vec2::new(1.5, 0.5), 1.0, |_, _| 1.0);
        assert_eq!(
            (sorted_ids(&hits), s),
            (vec![a], stats(5, 2)),
            "ray into A only"
        );
        let (hits, s) = f.ray(Vec2::new(-1.0, 0.5), Vec2::new(14.0, 0.5), 1.0, |_, _| 1.0);
        assert_eq!(
            (sorted_ids(&hits), s),
            (vec![a, b, c, d], stats(7, 4)),
            "ray through all"
        );
        let (hits, s) = f.ray(Vec2::new(-1.0, 5.0), Vec2::new(14.0, 5.0), 1.0, |_, _| 1.0);
        assert_eq!(
            (sorted_ids(&hits), s),
            (vec![], stats(1, 0)),
            "ray above the root"
        );
    }
}

fn without_rotations(events: &[TreeEvent]) -> Vec<TreeEvent> {
    events
        .iter()
        .copied()
        .filter(|e| !matches!(e, TreeEvent::Rotate { .. }))
        .collect()
}

fn rotations(events: &[TreeEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, TreeEvent::Rotate { .. }))
        .count()
}

#[test]
fn events_are_recorded() {
    // Chilakapati's A, B, C, D boxes with perimeter descent and surface-area rotations: C's
    // arrival rotates A and C (one rotation), D's does not.
    let mut f = Fixture::<Vec2>::new(config(InsertionCost::Perimeter, Balancing::Rotations, 0.1));
    let a = f.add_box("A", &[0.0, 0.0], &[1.0, 1.0]);
    assert_eq!(f.tree.take_events(), vec![], "recording is off by default");
    f.tree.set_recording(true);
    let b = f.add_box("B", &[2.0, 0.0], &[3.0, 1.0]);
    assert_eq!(f.tree.take_events(), vec![TreeEvent::Insert(b)]);
    assert_eq!(f.tree.take_events(), vec![], "take_events drains");
    let c = f.add_box("C", &[10.0, 0.0], &[11.0, 1.0]);
    let events = f.tree.take_events();
    assert_eq!(without_rotations(&events), vec![TreeEvent::Insert(c)]);
    assert_eq!(rotations(&events), 1, "inserting C: {events:?}");
    for e in &events {
        if let TreeEvent::Rotate { node } = e {
            let view = f.tree.node(*node).expect("a rotated node is in the tree");
            assert!(view.children.is_some(), "rotation below a leaf");
        }
    }
    let d = f.add_box("D", &[12.0, 0.0], &[13.0, 1.0]);
    assert_eq!(f.tree.take_events(), vec![TreeEvent::Insert(d)]);
    assert_eq!(f.shape(), "((A B) (C D))");

    // A move inside the fat box records nothing; out of it, a reinsert (no insert or remove).
    assert!(!f.mv(a, aabb(&[0.05, 0.05], &[1.05, 1.05]), Vec2::ZERO));
    assert_eq!(f.tree.take_events(), vec![]);
    assert!(f.mv(a, aabb(&[20.0, 0.0], &[21.0, 1.0]), Vec2::ZERO));
    assert_eq!(
        without_rotations(&f.tree.take_events()),
        vec![TreeEvent::Reinsert(a)]
    );
    f.remove(b);
    assert_eq!(
        without_rotations(&f.tree.take_events()),
        vec![TreeEvent::Remove(b)]
    );
    f.tree.rebuild();
    assert_eq!(
        f.tree.take_events(),
        vec![TreeEvent::Rebuild { partial: false }]
    );
    f.tree.rebuild_partial();
    assert_eq!(
        f.tree.take_events(),
        vec![],
        "partial rebuild with nothing enlarged"
    );
    f.check();

    // Enlarge-and-rebuild: the move records a reinsert (enlarged in place); the partial rebuild
    // comes on rebuild_partial or at the next pair update.
    f.tree.set_update_mode(UpdateMode::EnlargeAndRebuild);
    f.model.config.update = UpdateMode::EnlargeAndRebuild;
    assert!(f.mv(c, aabb(&[30.0, 0.0], &[31.0, 1.0]), Vec2::ZERO));
    assert_eq!(f.tree.take_events(), vec![TreeEvent::Reinsert(c)]);
    f.tree.rebuild_partial();
    assert_eq!(
        without_rotations(&f.tree.take_events()),
        vec![TreeEvent::Rebuild { partial: true }]
    );
    f.check();
    assert!(f.mv(d, aabb(&[40.0, 0.0], &[41.0, 1.0]), Vec2::ZERO));
    assert_eq!(f.tree.take_events(), vec![TreeEvent::Reinsert(d)]);
    f.update_pairs();
    assert_eq!(
        without_rotations(&f.tree.take_events()),
        vec![TreeEvent::Rebuild { partial: true }]
    );
    f.update_pairs();
    assert_eq!(
        f.tree.take_events(),
        vec![],
        "second pair update: nothing enlarged"
    );
    f.check();

    // Turning recording off clears it and records nothing more.
    let e = f.add_box("E", &[50.0, 0.0], &[51.0, 1.0]);
    f.tree.set_recording(false);
    assert_eq!(f.tree.take_events(), vec![]);
    f.remove(e);
    assert_eq!(f.tree.take_events(), vec![]);
    f.check();
}

#[test]
fn avl_records_its_rotation_on_the_abcd_boxes() {
    for insertion in [InsertionCost::Volume, InsertionCost::Perimeter] {
        let mut f = Fixture::<Vec2>::new(config(insertion, Balancing::Avl, 0.1));
        f.tree.set_recording(true);
        f.add_box("A", &[0.0, 0.0], &[1.0, 1.0]);
        f.add_box("B", &[2.0, 0.0], &[3.0, 1.0]);
        f.add_box("C", &[10.0, 0.0], &[11.0, 1.0]);
        let events = f.tree.take_events();
        assert_eq!(
            rotations(&events),
            0,
            "{insertion:?}: A, B, C need no rotation: {events:?}"
        );
        let d = f.add_box("D", &[12.0, 0.0], &[13.0, 1.0]);
        let events = f.tree.take_events();
        assert_eq!(without_rotations(&events), vec![TreeEvent::Insert(d)]);
        assert!(
            rotations(&events) >= 1,
            "{insertion:?}: D's insertion must rotate: {events:?}"
        );
        assert_eq!(f.shape(), "((A B) (C D))");
        f.check();
    }
}

#[test]
fn stats_are_exact_on_small_trees() {
    for cfg in configs_with_pairs(0.0) {
        let mut f = Fixture::<Vec2>::new(cfg);
        let s = f.tree.stats();
        assert_eq!(
            (s.leaves, s.nodes, s.height, s.min_height),
            (0, 0, 0, 0),
            "{cfg:?}: empty"
        );
        f.add_box("A", &[0.0, 0.0], &[1.0, 1.0]);
        let s = f.tree.stats();
        assert_eq!(
            (s.leaves, s.nodes, s.height, s.min_height),
            (1, 1, 0, 0),
            "{cfg:?}: one"
        );
        assert_eq!(s.area_ratio, 1.0, "{cfg:?}: one leaf: the root over itself");
        f.add_box("B", &[2.0, 0.0], &[3.0, 1.0]);
        let s = f.tree.stats();
        assert_eq!(
            (s.leaves, s.nodes, s.height, s.min_height),
            (2, 3, 1, 1),
            "{cfg:?}: two"
        );
        f.add_box("C", &[10.0, 0.0], &[11.0, 1.0]);
        let s = f.tree.stats();
        assert_eq!(
            (s.leaves, s.nodes, s.height, s.min_height),
            (3, 5, 2, 2),
            "{cfg:?}: three"
        );
        f.add_box("D", &[12.0, 0.0], &[13.0, 1.0]);
        let s = f.tree.stats();
        let chained = f.shape() == "(A (B (C D)))";
        let height = if chained { 3 } else { 2 };
        assert_eq!(
            (s.leaves, s.nodes, s.height, s.min_height),
            (4, 7, height, 2),
            "{cfg:?}: four"
        );
        if !chained {
            // ((A B) (C D)): half-perimeters root 14, AB 4, CD 4, leaves 2 each.
            assert!(
                (s.area_ratio - 30.0 / 14.0).abs() <= 1e-5,
                "{cfg:?}: area ratio {}",
                s.area_ratio
            );
        }
        assert!(
            s.bytes >= s.nodes * std::mem::size_of::<Aabb<Vec2>>(),
            "{cfg:?}: {} bytes cannot hold {} node boxes",
            s.bytes,
            s.nodes
        );
        f.add_box("E", &[20.0, 0.0], &[21.0, 1.0]);
        let s = f.tree.stats();
        assert_eq!(
            (s.leaves, s.nodes, s.min_height),
            (5, 9, 3),
            "{cfg:?}: five"
        );
        f.check();

        // Three unit boxes at x = 0, 1 and 3: half perimeters 2 for each leaf, 5 for the
        // root [0, 4] x [0, 1], and 3 or 4 for the other branch, whichever two it holds.
        let mut g = Fixture::<Vec2>::new(cfg);
        for (name, x) in [("A", 0.0), ("B", 1.0), ("C", 3.0)] {
            g.add_box(name, &[x, 0.0], &[x + 1.0, 1.0]);
        }
        let s = g.tree.stats();
        assert_eq!((s.leaves, s.nodes, s.height, s.min_height), (3, 5, 2, 2));
        assert!(
            s.area_ratio > (6.0 + 5.0 + 3.0) / 5.0 - 1e-5,
            "{cfg:?}: {s:?}"
        );
        assert!(
            s.area_ratio < (6.0 + 5.0 + 4.0) / 5.0 + 1e-5,
            "{cfg:?}: {s:?}"
        );
        g.check();
    }
}

// ---------------------------------------------------------------------------------------------
// Quality
// ---------------------------------------------------------------------------------------------

#[test]
fn grid_100_by_100_with_sah_and_rotations_is_within_twice_the_least_height() {
    let mut f = Fixture::<Vec2>::new(config(
        InsertionCost::SurfaceArea,
        Balancing::Rotations,
        0.1,
    ));
    for i in 0..100 {
        for j in 0..100 {
            let (x, y) = (i as f32, j as f32);
            f.add_box(&format!("{i},{j}"), &[x, y], &[x + 1.0, y + 1.0]);
        }
    }
    let check_quality = |f: &Fixture<Vec2>, when: &str| {
        let s = f.tree.stats();
        assert_eq!(
            (s.leaves, s.nodes, s.min_height),
            (10_000, 19_999, 14),
            "{when}"
        );
        assert!(
            s.height <= 2 * s.min_height,
            "{when}: height {} > 2 x {}",
            s.height,
            s.min_height
        );
        f.check();
    };
    check_quality(&f, "after inserting row by row");
    // Unit boxes touch their 8 neighbours (closed boxes): 2 x 9,900 sides + 2 x 9,801 corners.
    let update = f.tree.update_pairs().expect("no pair limit");
    assert!(update.recomputed);
    let pairs = f.tree.pairs().to_vec();
    assert_eq!(pairs.len(), 39_402);
    assert!(pairs.windows(2).all(|w| w[0] < w[1]));
    for (p, q) in &pairs {
        let (u, v) = (
            f.tree.user_data(*p).expect("live"),
            f.tree.user_data(*q).expect("live"),
        );
        let (di, dj) = ((u / 100).abs_diff(v / 100), (u % 100).abs_diff(v % 100));
        assert!(
            di <= 1 && dj <= 1 && (di, dj) != (0, 0),
            "pair of cells {u} and {v}"
        );
    }
    f.tree.rebuild();
    check_quality(&f, "after a full rebuild");
    f.tree.update_pairs().expect("no pair limit");
    assert_eq!(f.tree.pairs(), &pairs[..], "pairs after a rebuild");
}

/// Every branch's children differ in height by at most one, checked from the structure itself
/// after every create, destroy and move.
fn avl_case<V: Vector>(insertion: InsertionCost, seed: u64) {
    let mut f = Fixture::<V>::new(config(insertion, Balancing::Avl, 0.1));
    let mut rng = SplitMix(seed);
    let mut live: Vec<ProxyId> = Vec::new();
    let random_box = |rng: &mut SplitMix| {
        // Half the boxes in a small cluster, half spread out, some flat.
        let spread = if rng.below(2) == 0 { 4 } else { 400 };
        let min: Vec<f32> = (0..3).map(|_| rng.int(0, spread) as f32 * 0.5).collect();
        let max: Vec<f32> = min.iter().map(|m| m + rng.int(0, 6) as f32 * 0.5).collect();
        aabb::<V>(&min, &max)
    };
    for step in 0..1200 {
        let roll = rng.below(10);
        if live.is_empty() || roll < 5 {
            let b = random_box(&mut rng);
            live.push(f.add(&format!("p{step}"), b, V::splat(0.0)));
        } else if roll < 7 {
            let id = live.swap_remove(rng.below(live.len() as u64) as usize);
            f.remove(id);
        } else {
            let id = live[rng.below(live.len() as u64) as usize];
            let b = random_box(&mut rng);
            f.mv(id, b, V::splat(0.0));
        }
        let nodes = walk_all(&f.tree);
        let heights = computed_heights(&nodes);
        for (id, view, _) in &nodes {
            if let Some([a, b]) = view.children {
                let (ha, hb) = (heights[&a], heights[&b]);
                assert!(
                    ha.abs_diff(hb) <= 1,
                    "{insertion:?} {}D step {step}: node {id:?} has children of heights {ha} and {hb}",
                    V::DIM
                );
            }
        }
        if step % 50 == 0 {
            f.check();
        }
    }
    f.check();
}

#[test]
fn avl_keeps_every_nodes_children_within_one_level() {
    for (k, insertion) in INSERTIONS.into_iter().enumerate() {
        avl_case::<Vec2>(insertion, 100 + k as u64);
        avl_case::<Vec3>(insertion, 200 + k as u64);
    }
}

/// Boxes sorted along a line, the worst case for an unbalanced tree, with every third step a
/// random destroy: under AVL every branch's children stay within one level and the height
/// within half again the least height, plus one.
#[test]
fn avl_keeps_a_tree_of_boxes_sorted_along_a_line_shallow() {
    for insertion in INSERTIONS {
        let mut rng = SplitMix(77);
        let mut tree = DynamicTree::<Vec2, u32>::new(config(insertion, Balancing::Avl, 0.1));
        let mut live = Vec::new();
        for i in 0..3000 {
            if i % 3 == 2 {
                let k = rng.index(live.len());
                tree.destroy_proxy(live.swap_remove(k)).expect("destroy");
            } else {
                let x = i as f32;
                let b = b2(x, 0.0, x + 0.5, rng.uniform(0.5, 3.0));
                live.push(tree.create_proxy(b, Vec2::ZERO, i).expect("create"));
            }
        }
        tree.validate().expect("valid");
        let nodes = walk_all(&tree);
        let heights = computed_heights(&nodes);
        let worst = nodes
            .iter()
            .filter_map(|(_, view, _)| view.children)
            .map(|[a, b]| heights[&a].abs_diff(heights[&b]))
            .max()
            .unwrap_or(0);
        assert!(worst <= 1, "{insertion:?}: children differ by {worst}");
        let s = tree.stats();
        assert!(s.height <= s.min_height * 3 / 2 + 1, "{insertion:?} {s:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Degenerate inputs
// ---------------------------------------------------------------------------------------------

#[test]
fn many_identical_boxes() {
    for cfg in every_config(0.1, 0.0) {
        let mut f = Fixture::<Vec2>::new(cfg);
        let ids: Vec<ProxyId> = (0..256)
            .map(|i| f.add_valid(&i.to_string(), &[3.0, 4.0], &[5.0, 6.0]))
            .collect();
        f.check();
        f.update_pairs();
        assert_eq!(f.tree.pairs().len(), 256 * 255 / 2, "{cfg:?}");
        assert_eq!(f.query_point(Vec2::new(4.0, 5.0)).0.len(), 256);
        assert!(f.query_aabb(&aabb(&[5.2, 6.2], &[9.0, 9.0])).0.is_empty());
        for id in ids.iter().step_by(2) {
            f.remove(*id);
        }
        f.check();
        f.update_pairs();
        // Half of them jump to another identical box.
        for id in ids.iter().skip(1).step_by(4) {
            assert!(f.mv(*id, aabb(&[10.0, 10.0], &[12.0, 12.0]), Vec2::ZERO));
        }
        f.check();
        f.update_pairs();
        assert_eq!(f.tree.pairs().len(), 2 * (64 * 63 / 2), "{cfg:?}");
        f.tree.rebuild();
        f.check();
        f.update_pairs();
    }
    // 3D, the default configuration.
    let mut g = Fixture::<Vec3>::new(TreeConfig::default());
    for i in 0..200 {
        g.add_valid(&i.to_string(), &[1.0, 1.0, 1.0], &[2.0, 2.0, 2.0]);
    }
    g.check();
    g.update_pairs();
    assert_eq!(g.tree.pairs().len(), 200 * 199 / 2);
}

fn zero_size_case<V: Vector>(cfg: TreeConfig) {
    let mut f = Fixture::<V>::new(cfg);
    // Points on a 4 x 4 (x 4) grid; (0, 0, 0) three times, (1, 2, 3) twice.
    let mut n = 0;
    for i in 0..4 {
        for j in 0..4 {
            let p = [i as f32, j as f32, (i + j) as f32 % 4.0];
            f.add_valid(&format!("p{n}"), &p, &p);
            n += 1;
        }
    }
    let origin = [0.0, 0.0, 0.0];
    f.add_valid("o1", &origin, &origin);
    f.add_valid("o2", &origin, &origin);
    let q = [1.0, 2.0, 3.0];
    f.add_valid("q1", &q, &q);
    f.check();
    f.update_pairs();
    assert_eq!(f.tree.pairs().len(), 3 + 1, "{cfg:?} {}D", V::DIM);
    let (hits, _) = f.query_point(vector(&origin));
    assert_eq!(hits.len(), 3);
    f.query_aabb(&aabb(&[1.0, 1.0, 2.0], &[1.0, 1.0, 2.0]));
    f.query_aabb(&aabb(&[0.5, 0.5, 0.5], &[2.0, 3.0, 3.0]));
    // A point moving with a velocity gets a segment for a fat box.
    let id = f.add(
        "v",
        aabb(&[2.5, 2.5, 2.5], &[2.5, 2.5, 2.5]),
        vector(&[1.0, 0.0, -1.0]),
    );
    assert!(!f.mv(
        id,
        aabb(&[2.5, 2.5, 2.5], &[2.5, 2.5, 2.5]),
        vector(&[1.0, 0.0, -1.0])
    ));
    f.check();
    f.update_pairs();
    f.tree.rebuild();
    f.check();
    f.update_pairs();
}

#[test]
fn zero_size_boxes() {
    for cfg in every_config(0.0, 0.0) {
        zero_size_case::<Vec2>(cfg);
        zero_size_case::<Vec3>(TreeConfig {
            velocity_lookahead: 0.5,
            ..cfg
        });
    }
}

#[test]
fn boxes_on_one_line() {
    for cfg in every_config(0.0, 0.0) {
        // Flat boxes end to end on the x axis: neighbours touch.
        let mut f = Fixture::<Vec2>::new(cfg);
        let ids: Vec<ProxyId> = (0..64)
            .map(|i| f.add_valid(&i.to_string(), &[i as f32, 0.0], &[i as f32 + 1.0, 0.0]))
            .collect();
        f.check();
        f.update_pairs();
        assert_eq!(f.tree.pairs().len(), 63, "{cfg:?}");
        assert_eq!(f.query_point(Vec2::new(10.0, 0.0)).0, sorted(&ids[9..11]));
        assert!(f.query_point(Vec2::new(10.0, 0.5)).0.is_empty());
        assert_eq!(
            f.query_aabb(&aabb(&[2.5, -1.0], &[4.5, 0.0])).0,
            sorted(&ids[2..5])
        );
        // A ray along the line meets every box.
        let (hits, _) = f.ray(Vec2::new(0.5, 0.0), Vec2::new(70.5, 0.0), 1.0, |_, _| 1.0);
        assert_eq!(
            sorted_ids(&hits),
            sorted(&ids),
            "{cfg:?}: ray along the line"
        );
        // Move half of them onto one point of the line.
        for id in ids.iter().step_by(2) {
            f.mv(*id, aabb(&[30.0, 0.0], &[30.0, 0.0]), Vec2::ZERO);
        }
        f.check();
        f.update_pairs();
        f.tree.rebuild();
        f.check();

        // 3D: thin boxes along x, and points on the diagonal.
        let mut g = Fixture::<Vec3>::new(cfg);
        for i in 0..32 {
            let x = i as f32;
            g.add_valid(&format!("x{i}"), &[x, 0.0, 0.0], &[x + 1.0, 0.0, 0.0]);
            g.add_valid(&format!("d{i}"), &[x, x, x], &[x, x, x]);
        }
        g.check();
        g.update_pairs();
        // 31 neighbours along x touch; of the diagonal points only (0, 0, 0) lies on the x axis.
        assert_eq!(g.tree.pairs().len(), 31 + 1, "{cfg:?} 3D");
    }
}

fn far_coordinates_case<V: Vector>(cfg: TreeConfig) {
    let mut f = Fixture::<V>::new(cfg);
    let mut small = Vec::new();
    for k in 0..16 {
        for sign in [1.0f32, -1.0] {
            let x = sign * 1.0e7 + 2.0 * k as f32;
            small.push(f.add_valid(&format!("{sign}{k}"), &[x, 5.0, 5.0], &[x + 1.0, 6.0, 6.0]));
        }
    }
    let huge = f.add_valid("huge", &[-1.0e7, -1.0e7, -1.0e7], &[1.0e7, 1.0e7, 1.0e7]);
    f.check();
    f.update_pairs();
    // At 1e7 an f32 step is 1.0, so the 0.1 margin rounds away and neighbours 1.0 apart do not
    // touch; the huge box meets the boxes that start at -1e7 .. -1e7 + 30 and at exactly 1e7.
    let meets_huge = f
        .model
        .pairs()
        .iter()
        .filter(|p| p.0 == huge || p.1 == huge)
        .count();
    assert_eq!(
        f.tree.pairs().len(),
        meets_huge,
        "{cfg:?}: only pairs with the huge box"
    );
    let (hits, _) = f.ray(
        vector(&[-1.0e7 - 64.0, 5.5, 5.5]),
        vector(&[1.0e7 + 64.0, 5.5, 5.5]),
        1.0,
        |_, _| 1.0,
    );
    let mut want = small.clone();
    want.push(huge);
    want.sort();
    assert_eq!(sorted_ids(&hits), want, "{cfg:?}: ray across everything");
    f.query_aabb(&aabb(&[1.0e7, 0.0, 0.0], &[1.0e7 + 8.0, 10.0, 10.0]));
    f.query_point(vector(&[-1.0e7 + 4.0, 5.0, 5.0]));
    for (i, id) in small.iter().enumerate().step_by(3) {
        let x = if i % 2 == 0 { 1.0e7 } else { -1.0e7 } + 2.0 * i as f32 + 64.0;
        f.mv(
            *id,
            aabb(&[x, 5.0, 5.0], &[x + 3.0, 6.0, 6.0]),
            V::splat(0.0),
        );
    }
    f.check();
    f.update_pairs();
    f.tree.rebuild();
    f.check();
    f.update_pairs();
}

#[test]
fn coordinates_near_plus_minus_1e7() {
    for cfg in every_config(0.1, 0.0) {
        far_coordinates_case::<Vec2>(cfg);
        far_coordinates_case::<Vec3>(cfg);
    }
}

/// 10 long-lived proxies, then 100,000 cycles of creating and destroying one more: every
/// handle is new, each is stale once destroyed, and the tree stays whole. Returns the tree's
/// bytes after the first cycle and after the last.
fn create_destroy_cycles() -> (usize, usize) {
    let mut f = Fixture::<Vec2>::new(TreeConfig::default());
    for i in 0..10 {
        let x = 3.0 * i as f32;
        f.add_box(&format!("long{i}"), &[x, 0.0], &[x + 1.0, 1.0]);
    }
    let mut seen: HashSet<ProxyId> = HashSet::new();
    let mut bytes_after_first = 0;
    let mut bytes_after_last = 0;
    for cycle in 0..100_000u32 {
        let x = (cycle % 40) as f32;
        let tight = aabb(&[x, 0.5], &[x + 1.0, 1.5]);
        let id = f
            .tree
            .create_proxy(tight, Vec2::ZERO, cycle)
            .expect("create");
        assert!(seen.insert(id), "cycle {cycle}: handle {id:?} given twice");
        // The freed slot and nodes are taken back: 11 slots and 21 nodes at most, ever.
        assert_eq!(id.index, 10, "cycle {cycle}: the free slot is reused");
        let leaf = f.tree.leaf_of(id).expect("live");
        let parent = f.tree.node(leaf).and_then(|v| v.parent).expect("a parent");
        assert!(
            leaf.0 < 21 && parent.0 < 21,
            "cycle {cycle}: leaf {leaf:?} or its parent {parent:?} past a pool of 21 nodes"
        );
        assert_eq!(f.tree.user_data(id), Ok(cycle));
        assert_eq!(f.tree.destroy_proxy(id), Ok(cycle));
        assert!(!f.tree.contains(id));
        assert_eq!(
            f.tree.destroy_proxy(id),
            Err(TreeError::StaleProxy(id)),
            "cycle {cycle}"
        );
        if cycle % 10_000 == 0 {
            f.check();
        }
        // After the first 10,000 cycles (and checks) every buffer has reached its working
        // size; 90,000 more cycles must not add a byte.
        if cycle == 10_000 {
            bytes_after_first = f.tree.stats().bytes;
        }
        if cycle == 90_000 {
            bytes_after_last = f.tree.stats().bytes;
        }
    }
    f.check();
    assert_eq!(f.tree.len(), 10);
    f.update_pairs();
    (bytes_after_first, bytes_after_last)
}

#[test]
fn create_destroy_cycles_reuse_the_free_list() {
    create_destroy_cycles();
}

#[test]
fn create_destroy_cycles_do_not_grow_the_storage() {
    let (first, last) = create_destroy_cycles();
    assert_eq!(last, first, "bytes after 10,000 cycles and after 90,000");
}

#[test]
fn stale_and_double_destroyed_handles() {
    let mut f = Fixture::<Vec2>::new(TreeConfig::default());
    f.check();
    let never = ProxyId {
        index: 0,
        generation: 0,
    };
    assert!(!f.tree.contains(never));
    assert_eq!(
        f.tree.destroy_proxy(never),
        Err(TreeError::StaleProxy(never)),
        "empty tree"
    );
    let a = f.add_box("A", &[0.0, 0.0], &[1.0, 1.0]);
    let b = f.add_box("B", &[0.5, 0.0], &[1.5, 1.0]);
    f.remove(a);
    let stale = TreeError::StaleProxy(a);
    assert_eq!(
        f.tree.destroy_proxy(a),
        Err(stale.clone()),
        "double destroy"
    );
    assert_eq!(
        f.tree
            .move_proxy(a, aabb(&[0.0, 0.0], &[1.0, 1.0]), Vec2::ZERO),
        Err(stale.clone())
    );
    assert_eq!(f.tree.user_data(a), Err(stale.clone()));
    assert_eq!(f.tree.fat_aabb(a), Err(stale.clone()));
    assert_eq!(f.tree.tight_aabb(a), Err(stale.clone()));
    assert_eq!(f.tree.leaf_of(a), Err(stale.clone()));
    f.check();
    // The slot is reused: the old handle must not reach the new proxy.
    let c = f.add_box("C", &[5.0, 5.0], &[6.0, 6.0]);
    assert_eq!(c.index, a.index, "the slot is reused");
    assert_ne!(c.generation, a.generation);
    assert_ne!(c, a);
    assert_eq!(
        f.tree
            .move_proxy(a, aabb(&[50.0, 50.0], &[51.0, 51.0]), Vec2::ZERO),
        Err(stale.clone())
    );
    assert_eq!(f.tree.destroy_proxy(a), Err(stale));
    assert_eq!(f.tree.tight_aabb(c), Ok(aabb(&[5.0, 5.0], &[6.0, 6.0])));
    f.check();
    // Forged handles.
    for forged in [
        ProxyId {
            index: b.index,
            generation: b.generation.wrapping_add(1),
        },
        ProxyId {
            index: b.index,
            generation: b.generation.wrapping_sub(1),
        },
        ProxyId {
            index: 1_000_000,
            generation: b.generation,
        },
        ProxyId {
            index: u32::MAX,
            generation: u32::MAX,
        },
    ] {
        assert!(!f.tree.contains(forged), "{forged:?}");
        assert_eq!(f.tree.fat_aabb(forged), Err(TreeError::StaleProxy(forged)));
        assert_eq!(
            f.tree
                .move_proxy(forged, aabb(&[0.0, 0.0], &[1.0, 1.0]), Vec2::ZERO),
            Err(TreeError::StaleProxy(forged))
        );
        assert_eq!(
            f.tree.destroy_proxy(forged),
            Err(TreeError::StaleProxy(forged))
        );
    }
    f.update_pairs();
    assert_eq!(f.tree.pairs().len(), 0);
    f.check();
}

fn refused_case<V: Vector>() {
    let mut f = Fixture::<V>::new(TreeConfig::default());
    let good: Aabb<V> = aabb(&[0.0, 0.0, 0.0], &[1.0, 1.0, 1.0]);
    let zero = V::splat(0.0);
    let cases: [(Aabb<V>, V, TreeError); 7] = [
        (
            aabb(&[f32::NAN, 0.0, 0.0], &[1.0, 1.0, 1.0]),
            zero,
            TreeError::NonFinite,
        ),
        (
            aabb(&[0.0, 0.0, 0.0], &[1.0, f32::NAN, 1.0]),
            zero,
            TreeError::NonFinite,
        ),
        (
            aabb(&[f32::NEG_INFINITY, 0.0, 0.0], &[1.0, 1.0, 1.0]),
            zero,
            TreeError::NonFinite,
        ),
        (
            aabb(&[0.0, 0.0, 0.0], &[f32::INFINITY, 1.0, 1.0]),
            zero,
            TreeError::NonFinite,
        ),
        (
            aabb(&[0.0, 2.0, 0.0], &[1.0, 1.0, 1.0]),
            zero,
            TreeError::Inverted,
        ),
        (good, vector(&[f32::NAN, 0.0, 0.0]), TreeError::NonFinite),
        (
            good,
            vector(&[0.0, f32::INFINITY, 0.0]),
            TreeError::NonFinite,
        ),
    ];
    for (b, v, err) in &cases {
        assert_eq!(
            f.tree.create_proxy(*b, *v, 7),
            Err(err.clone()),
            "create {b:?} {v:?}"
        );
        f.check();
    }
    let id = f.add("A", good, zero);
    f.add("B", aabb(&[0.5, 0.5, 0.5], &[2.0, 2.0, 2.0]), zero);
    for (b, v, err) in &cases {
        assert_eq!(
            f.tree.move_proxy(id, *b, *v),
            Err(err.clone()),
            "move to {b:?} {v:?}"
        );
        f.check();
    }
    assert_eq!(
        Aabb::try_new(vector::<V>(&[1.0, 0.0, 0.0]), vector(&[0.0, 1.0, 1.0])),
        Err(TreeError::Inverted)
    );
    // Queries with non-finite input must not panic or disturb the tree; a point or a ray
    // with a NaN finds nothing (a ray with a non-finite input tests no node).
    let nan_box: Aabb<V> = aabb(&[f32::NAN, 0.0, 0.0], &[1.0, 1.0, 1.0]);
    f.tree.query_aabb(&nan_box, |_| true);
    f.tree
        .query_aabb(&aabb(&[2.0, 2.0, 2.0], &[0.0, 0.0, 0.0]), |_| true);
    let mut hits = 0;
    f.tree.query_point(vector(&[f32::NAN, 0.5, 0.5]), |_| {
        hits += 1;
        true
    });
    f.tree
        .query_point(vector(&[f32::NAN, f32::NAN, f32::NAN]), |_| {
            hits += 1;
            true
        });
    assert_eq!(hits, 0, "a point with a NaN lies in no box");
    for (origin, end, max_fraction) in [
        (vector(&[f32::NAN, 0.0, 0.0]), vector(&[1.0, 1.0, 1.0]), 1.0),
        (zero, vector(&[1.0, 1.0, 1.0]), f32::NAN),
    ] {
        let stats = f.tree.ray_cast(origin, end, max_fraction, |_, _| {
            hits += 1;
            1.0
        });
        assert_eq!(stats, QueryStats::default(), "ray {origin:?} -> {end:?}");
    }
    assert_eq!(hits, 0, "a ray with a non-finite input hits nothing");
    f.check();
    f.update_pairs();

    // A finite box whose fat box overflows to infinity is refused too, and nothing is added.
    let mut wide = Fixture::<V>::new(TreeConfig {
        margin: 1e38,
        ..TreeConfig::default()
    });
    assert_eq!(
        wide.tree
            .create_proxy(aabb(&[0.0, 0.0, 0.0], &[3e38, 1.0, 1.0]), zero, 0),
        Err(TreeError::NonFinite)
    );
    wide.check();
}

#[test]
fn nan_and_inverted_boxes_are_refused() {
    refused_case::<Vec2>();
    refused_case::<Vec3>();
}

#[test]
fn negative_margin_and_lookahead_are_refused() {
    let invalid = |r: Result<(), TreeError>, what: &str, want_name: &str, value: f32| match r {
        Err(TreeError::InvalidSetting { name, value: v }) => {
            assert_eq!(name, want_name, "{what}: setting named {name:?}");
            assert!(v.to_bits() == value.to_bits(), "{what}: value {v}");
        }
        other => panic!("{what}: {other:?}"),
    };
    for (margin, lookahead, name, value) in [
        (-1.0f32, 0.0f32, "margin", -1.0f32),
        (f32::NAN, 0.0, "margin", f32::NAN),
        (f32::INFINITY, 0.0, "margin", f32::INFINITY),
        (0.1, -0.5, "velocity_lookahead", -0.5),
        (
            0.1,
            f32::NEG_INFINITY,
            "velocity_lookahead",
            f32::NEG_INFINITY,
        ),
    ] {
        let cfg = TreeConfig {
            margin,
            velocity_lookahead: lookahead,
            ..TreeConfig::default()
        };
        invalid(
            DynamicTree::<Vec2, u32>::try_new(cfg).map(|_| ()),
            &format!("try_new(margin {margin}, look-ahead {lookahead})"),
            name,
            value,
        );
    }
    let mut f = Fixture::<Vec2>::new(TreeConfig {
        margin: 0.25,
        velocity_lookahead: 0.5,
        ..TreeConfig::default()
    });
    f.add("A", aabb(&[0.0, 0.0], &[1.0, 1.0]), Vec2::new(1.0, 1.0));
    f.add_box("B", &[1.25, 0.0], &[2.0, 1.0]);
    invalid(f.tree.set_margin(-0.1), "set_margin(-0.1)", "margin", -0.1);
    invalid(
        f.tree.set_margin(f32::NAN),
        "set_margin(NaN)",
        "margin",
        f32::NAN,
    );
    invalid(
        f.tree.set_velocity_lookahead(-2.0),
        "set_velocity_lookahead(-2)",
        "velocity_lookahead",
        -2.0,
    );
    invalid(
        f.tree.set_velocity_lookahead(f32::INFINITY),
        "set_velocity_lookahead(inf)",
        "velocity_lookahead",
        f32::INFINITY,
    );
    // Nothing changed.
    f.check();
    f.update_pairs();
    // Zero is allowed.
    assert_eq!(f.tree.set_margin(0.0), Ok(()));
    assert_eq!(f.tree.set_velocity_lookahead(0.0), Ok(()));
    f.model.config.margin = 0.0;
    f.model.config.velocity_lookahead = 0.0;
    f.model.refatten();
    f.check();
    f.update_pairs();
}

// ---------------------------------------------------------------------------------------------
// Persistent pairs, batches, rebuilds and figures on larger trees
// ---------------------------------------------------------------------------------------------

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
fn every_combination_lists_each_setting_once_and_keeps_the_margins() {
    let base = TreeConfig {
        margin: 0.3,
        velocity_lookahead: 0.25,
        ..TreeConfig::default()
    };
    let all = base.every_combination();
    assert_eq!(all.len(), 4 * 3 * 3 * 3);
    for (i, a) in all.iter().enumerate() {
        assert_eq!((a.margin, a.velocity_lookahead), (0.3, 0.25));
        assert!(all[i + 1..].iter().all(|b| b != a), "{a:?} twice");
    }
    assert!(all.contains(&base), "the defaults are among them");
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

/// One default tree per pair method over the same `n` random boxes (size up to 2 in a square
/// of `side`), their pairs found once; with each tree's handles, in item order.
fn trees_by_pair_method(
    methods: &[PairMethod],
    rng: &mut SplitMix,
    n: usize,
    side: f32,
) -> (Vec<DynamicTree<Vec2, u32>>, Vec<Vec<ProxyId>>) {
    let items: Vec<_> = (0..n as u32)
        .map(|i| (rand_box::<Vec2>(rng, side, 2.0), Vec2::ZERO, i))
        .collect();
    let mut trees = Vec::new();
    let mut ids = Vec::new();
    for &pairs in methods {
        let mut tree = DynamicTree::new(TreeConfig {
            pairs,
            ..TreeConfig::default()
        });
        ids.push(tree.create_proxies(&items).expect("batch"));
        tree.update_pairs().expect("no pair limit");
        trees.push(tree);
    }
    (trees, ids)
}

#[test]
fn moved_traversal_visits_only_where_few_moved_and_matches_brute_force() {
    let mut rng = SplitMix(5);
    // A few moved of 3,000: MovedTraversal finds their pairs by a query each.
    let n = 3000;
    let (mut trees, mut ids) = trees_by_pair_method(
        &[PairMethod::SelfTraversal, PairMethod::MovedTraversal],
        &mut rng,
        n,
        160.0,
    );
    for step in 0..8u32 {
        // Thirty of 3,000 move far, three go and three come (in the slots just freed): well
        // under the share that makes MovedTraversal go over the whole tree.
        let moves: Vec<(usize, Aabb<Vec2>)> = (0..30)
            .map(|_| (rng.index(n), rand_box::<Vec2>(&mut rng, 160.0, 2.0)))
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
            "queries {} vs full walk {}",
            visits[1],
            visits[0]
        );
    }
}

/// `MovedTraversal` below 262,144 leaves: a step where at most one proxy in 8 moved finds
/// their pairs by a query each (the same tests counted as `MovedQueries`), one where more
/// moved by the whole walk (the same tests as `SelfTraversal`); both the pairs of brute force.
#[test]
fn moved_traversal_queries_a_few_moved_and_walks_the_whole_tree_for_more() {
    let mut rng = SplitMix(17);
    let n = 1000;
    let (mut trees, ids) = trees_by_pair_method(
        &[
            PairMethod::SelfTraversal,
            PairMethod::MovedQueries,
            PairMethod::MovedTraversal,
        ],
        &mut rng,
        n,
        120.0,
    );
    // 125 is one in 8 of 1,000: the last count that takes the queries.
    for (step, moving) in [1usize, 125, 126, 40, 700, 0, 125].into_iter().enumerate() {
        // Distinct proxies (7 is prime to 1,000), each far from its fat box.
        let moves: Vec<(usize, Aabb<Vec2>)> = (0..moving)
            .map(|j| (j * 7 % n, rand_box::<Vec2>(&mut rng, 120.0, 2.0)))
            .collect();
        let mut stats = Vec::new();
        for (t, ids) in trees.iter_mut().zip(&ids) {
            let reinserted = moves
                .iter()
                .filter(|&&(k, b)| t.move_proxy(ids[k], b, Vec2::ZERO).expect("move"))
                .count();
            assert_eq!(
                reinserted, moving,
                "step {step}: every move leaves its fat box"
            );
            stats.push(t.update_pairs().expect("no pair limit").stats);
            t.validate().expect("valid");
            assert_eq!(t.pairs(), brute_pairs(t).as_slice(), "step {step}");
        }
        let like = if moving * 8 <= n { stats[1] } else { stats[0] };
        assert_eq!(
            stats[2], like,
            "step {step}, {moving} moved: the tests counted"
        );
        if moving > 0 && moving * 8 <= n {
            assert!(
                stats[1].node_visits < stats[0].node_visits,
                "step {step}: {stats:?}"
            );
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
fn rebuild_gives_a_low_sah_tree_with_the_same_pairs() {
    let mut rng = SplitMix(5);
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
    let mut rng = SplitMix(9);
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
        let mut rng = SplitMix(seed);
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
