//! Shared helpers of the tree integration tests: vectors from numbers, a brute-force model of
//! the proxies (tight box, velocity, fat box), brute-force pairs and queries, and a check of a
//! tree's whole structure against the model; and, from [`shared`], the crate's seeded random
//! numbers, random boxes and brute-force pairs.

// Each test file uses a different part of this module.
#![allow(dead_code)]

/// The helpers the unit tests and the benchmark share with the integration tests.
pub mod shared;

use dynamic_aabb_tree::{
    Aabb, DynamicTree, NodeId, NodeView, ProxyId, QueryStats, TreeConfig, TreeStats, Vector,
};
use std::collections::{BTreeMap, BTreeSet};

/// A vector from its first `V::DIM` numbers (missing ones are 0).
pub fn vector<V: Vector>(coords: &[f32]) -> V {
    let mut v = V::splat(0.0);
    for (axis, &x) in coords.iter().enumerate().take(V::DIM) {
        v.set_axis(axis, x);
    }
    v
}

/// A box from its corners, unchecked.
pub fn aabb<V: Vector>(min: &[f32], max: &[f32]) -> Aabb<V> {
    Aabb::new(vector(min), vector(max))
}

/// The fat box of the documented rule: the tight box grown by `margin` on every side, then
/// stretched by `velocity * lookahead_secs` on the side the motion points to (Choi's
/// `update_aabb(delta_t)`: a positive stretch moves `max`, any other moves `min`).
pub fn expected_fat<V: Vector>(
    tight: &Aabb<V>,
    velocity: V,
    margin: f32,
    lookahead_secs: f32,
) -> Aabb<V> {
    let mut min = tight.min;
    let mut max = tight.max;
    for axis in 0..V::DIM {
        min.set_axis(axis, min.axis(axis) - margin);
        max.set_axis(axis, max.axis(axis) + margin);
        let stretch = velocity.axis(axis) * lookahead_secs;
        if stretch > 0.0 {
            max.set_axis(axis, max.axis(axis) + stretch);
        } else {
            min.set_axis(axis, min.axis(axis) + stretch);
        }
    }
    Aabb::new(min, max)
}

/// Closed-interval overlap, written out axis by axis (not the library's `Aabb::overlaps`).
pub fn overlap<V: Vector>(a: &Aabb<V>, b: &Aabb<V>) -> bool {
    (0..V::DIM).all(|i| a.min.axis(i) <= b.max.axis(i) && b.min.axis(i) <= a.max.axis(i))
}

/// True when `inner` lies inside `outer`, boundaries included.
pub fn contains<V: Vector>(outer: &Aabb<V>, inner: &Aabb<V>) -> bool {
    (0..V::DIM)
        .all(|i| outer.min.axis(i) <= inner.min.axis(i) && inner.max.axis(i) <= outer.max.axis(i))
}

/// True when the point lies inside the box, boundaries included.
pub fn contains_point<V: Vector>(b: &Aabb<V>, p: V) -> bool {
    (0..V::DIM).all(|i| b.min.axis(i) <= p.axis(i) && p.axis(i) <= b.max.axis(i))
}

/// The fraction at which the segment `origin + t (end - origin)`, `t` in `[0, max_fraction]`,
/// enters the closed box (0 when it starts inside), or `None` when it misses. Computed in f64.
pub fn segment_entry<V: Vector>(b: &Aabb<V>, origin: V, end: V, max_fraction: f32) -> Option<f64> {
    let mut t_enter = 0.0f64;
    let mut t_exit = f64::from(max_fraction);
    for axis in 0..V::DIM {
        let o = f64::from(origin.axis(axis));
        let d = f64::from(end.axis(axis)) - o;
        let lo = f64::from(b.min.axis(axis));
        let hi = f64::from(b.max.axis(axis));
        if d == 0.0 {
            if o < lo || o > hi {
                return None;
            }
        } else {
            let (mut near, mut far) = ((lo - o) / d, (hi - o) / d);
            if near > far {
                std::mem::swap(&mut near, &mut far);
            }
            t_enter = t_enter.max(near);
            t_exit = t_exit.min(far);
            if t_enter > t_exit {
                return None;
            }
        }
    }
    Some(t_enter)
}

/// What the model knows of one proxy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelProxy<V> {
    /// The last tight box given.
    pub tight: Aabb<V>,
    /// The last velocity given.
    pub velocity: V,
    /// The fat box the tree must hold for it.
    pub fat: Aabb<V>,
    /// Its user data.
    pub user: u32,
}

/// A brute-force model of a tree: its settings and every live proxy.
#[derive(Clone, Debug)]
pub struct Model<V> {
    /// The settings the tree must report.
    pub config: TreeConfig,
    /// Live proxies by handle.
    pub proxies: BTreeMap<ProxyId, ModelProxy<V>>,
}

impl<V: Vector> Model<V> {
    /// An empty model with these settings.
    pub fn new(config: TreeConfig) -> Self {
        Self {
            config,
            proxies: BTreeMap::new(),
        }
    }

    /// The fat box of a tight box and velocity under the current settings.
    pub fn fat_of(&self, tight: &Aabb<V>, velocity: V) -> Aabb<V> {
        expected_fat(
            tight,
            velocity,
            self.config.margin,
            self.config.velocity_lookahead,
        )
    }

    /// Records a created proxy.
    pub fn create(&mut self, id: ProxyId, tight: Aabb<V>, velocity: V, user: u32) {
        let fat = self.fat_of(&tight, velocity);
        let old = self.proxies.insert(
            id,
            ModelProxy {
                tight,
                velocity,
                fat,
                user,
            },
        );
        assert!(
            old.is_none(),
            "the tree returned the live handle {id:?} twice"
        );
    }

    /// Records a move; returns true when the documented rule says the leaf is reinserted
    /// (the new tight box is not inside the fat box, comparisons `<=`).
    pub fn apply_move(&mut self, id: ProxyId, tight: Aabb<V>, velocity: V) -> bool {
        let fat = {
            let p = &self.proxies[&id];
            if contains(&p.fat, &tight) {
                None
            } else {
                Some(self.fat_of(&tight, velocity))
            }
        };
        let p = self.proxies.get_mut(&id).expect("model proxy");
        p.tight = tight;
        p.velocity = velocity;
        match fat {
            Some(fat) => {
                p.fat = fat;
                true
            }
            None => false,
        }
    }

    /// Recomputes every fat box from the current settings; returns true when one changed.
    pub fn refatten(&mut self) -> bool {
        let (margin, lookahead) = (self.config.margin, self.config.velocity_lookahead);
        let mut changed = false;
        for p in self.proxies.values_mut() {
            let fat = expected_fat(&p.tight, p.velocity, margin, lookahead);
            changed |= fat != p.fat;
            p.fat = fat;
        }
        changed
    }

    /// Every pair `(a, b)`, `a < b`, whose fat boxes overlap, sorted.
    pub fn pairs(&self) -> Vec<(ProxyId, ProxyId)> {
        let all: Vec<(&ProxyId, &ModelProxy<V>)> = self.proxies.iter().collect();
        let mut out = Vec::new();
        for (i, (a, pa)) in all.iter().enumerate() {
            for (b, pb) in &all[i + 1..] {
                if overlap(&pa.fat, &pb.fat) {
                    out.push((**a, **b));
                }
            }
        }
        out
    }

    /// The proxies whose fat box overlaps `q`, sorted.
    pub fn query_aabb(&self, q: &Aabb<V>) -> Vec<ProxyId> {
        self.proxies
            .iter()
            .filter(|(_, p)| overlap(&p.fat, q))
            .map(|(id, _)| *id)
            .collect()
    }

    /// The proxies whose fat box contains `point`, sorted.
    pub fn query_point(&self, point: V) -> Vec<ProxyId> {
        self.proxies
            .iter()
            .filter(|(_, p)| contains_point(&p.fat, point))
            .map(|(id, _)| *id)
            .collect()
    }

    /// The proxies the segment hits, with their entry fractions, sorted by id.
    pub fn ray(&self, origin: V, end: V, max_fraction: f32) -> Vec<(ProxyId, f64)> {
        self.proxies
            .iter()
            .filter_map(|(id, p)| {
                segment_entry(&p.fat, origin, end, max_fraction).map(|t| (*id, t))
            })
            .collect()
    }
}

/// Every node of a tree as `walk` gives it: id, view and depth, in walk order.
pub fn walk_all<V: Vector>(tree: &DynamicTree<V, u32>) -> Vec<(NodeId, NodeView<V>, u32)> {
    let mut out = Vec::new();
    tree.walk(|id, view, depth| out.push((id, *view, depth)));
    out
}

/// Heights computed from the structure alone (leaves 0), by node.
pub fn computed_heights<V: Vector>(nodes: &[(NodeId, NodeView<V>, u32)]) -> BTreeMap<NodeId, u32> {
    let mut heights = BTreeMap::new();
    // Parents come before children in walk order, so the reverse order sees children first.
    for (id, view, _) in nodes.iter().rev() {
        let h = match view.children {
            None => 0,
            Some([a, b]) => {
                1 + heights
                    .get(&a)
                    .copied()
                    .unwrap_or(0)
                    .max(heights.get(&b).copied().unwrap_or(0))
            }
        };
        heights.insert(*id, h);
    }
    heights
}

/// `ceil(log2(leaves))`, 0 for 0 or 1 leaf.
pub fn least_height(leaves: usize) -> u32 {
    if leaves <= 1 {
        0
    } else {
        usize::BITS - (leaves - 1).leading_zeros()
    }
}

/// The query stats a traversal that tests a node exactly when every ancestor passed must
/// report: `passes(box)` says whether a box passes the query.
pub fn expected_stats<V: Vector>(
    tree: &DynamicTree<V, u32>,
    passes: impl Fn(&Aabb<V>) -> bool,
) -> QueryStats {
    let mut tested_and_passed: BTreeMap<NodeId, bool> = BTreeMap::new();
    let mut stats = QueryStats::default();
    tree.walk(|id, view, _| {
        let tested = view
            .parent
            .is_none_or(|p| tested_and_passed.get(&p).copied().unwrap_or(false));
        if tested {
            stats.node_visits += 1;
            if view.children.is_none() {
                stats.leaf_visits += 1;
            }
        }
        tested_and_passed.insert(id, tested && passes(&view.aabb));
    });
    stats
}

/// Fails with `what` and both values unless they are equal.
pub fn ensure_eq<A: PartialEq + std::fmt::Debug>(
    got: A,
    want: A,
    what: &str,
) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}"))
    }
}

/// Checks everything observable about a tree against the model: `validate()`, counts, the
/// sorted proxy list, every proxy's boxes, user data and leaf, the walk (links, depths,
/// heights, one leaf per proxy, `2n - 1` nodes) and the stats.
pub fn check_tree<V: Vector>(tree: &DynamicTree<V, u32>, model: &Model<V>) -> Result<(), String> {
    tree.validate().map_err(|e| format!("validate(): {e}"))?;
    let ids: Vec<ProxyId> = model.proxies.keys().copied().collect();
    let n = ids.len();
    ensure_eq(tree.len(), n, "len()")?;
    ensure_eq(tree.is_empty(), n == 0, "is_empty()")?;
    ensure_eq(tree.proxies(), ids.clone(), "proxies()")?;
    let cfg = tree.config();
    ensure_eq(cfg.margin, model.config.margin, "config().margin")?;
    ensure_eq(
        cfg.velocity_lookahead,
        model.config.velocity_lookahead,
        "config().velocity_lookahead",
    )?;
    ensure_eq(cfg.insertion, model.config.insertion, "config().insertion")?;
    ensure_eq(cfg.balancing, model.config.balancing, "config().balancing")?;
    ensure_eq(cfg.pairs, model.config.pairs, "config().pairs")?;
    ensure_eq(cfg.update, model.config.update, "config().update")?;

    for (id, p) in &model.proxies {
        ensure_eq(tree.contains(*id), true, &format!("contains({id:?})"))?;
        ensure_eq(
            tree.fat_aabb(*id),
            Ok(p.fat),
            &format!(
                "fat_aabb({id:?}) (tight {:?}, velocity {:?})",
                p.tight, p.velocity
            ),
        )?;
        ensure_eq(
            tree.tight_aabb(*id),
            Ok(p.tight),
            &format!("tight_aabb({id:?})"),
        )?;
        ensure_eq(
            tree.user_data(*id),
            Ok(p.user),
            &format!("user_data({id:?})"),
        )?;
        let leaf = tree
            .leaf_of(*id)
            .map_err(|e| format!("leaf_of({id:?}): {e}"))?;
        let view = tree
            .node(leaf)
            .ok_or_else(|| format!("node(leaf_of({id:?})) is None"))?;
        ensure_eq(view.proxy, Some(*id), &format!("leaf of {id:?}: proxy"))?;
        ensure_eq(view.children, None, &format!("leaf of {id:?}: children"))?;
        ensure_eq(view.height, 0, &format!("leaf of {id:?}: height"))?;
        ensure_eq(view.aabb, p.fat, &format!("leaf of {id:?}: box"))?;
    }

    let nodes = walk_all(tree);
    ensure_eq(
        nodes.len(),
        if n == 0 { 0 } else { 2 * n - 1 },
        "nodes walked",
    )?;
    ensure_eq(
        tree.root(),
        nodes.first().map(|(id, _, _)| *id),
        "root() vs first walked",
    )?;
    let mut depth_of: BTreeMap<NodeId, u32> = BTreeMap::new();
    let mut views: BTreeMap<NodeId, NodeView<V>> = BTreeMap::new();
    let mut leaves = BTreeSet::new();
    for (id, view, depth) in &nodes {
        ensure_eq(
            tree.node(*id).as_ref(),
            Some(view),
            &format!("node({id:?}) vs walk"),
        )?;
        match view.parent {
            None => {
                ensure_eq(Some(*id), tree.root(), "the node without a parent")?;
                ensure_eq(*depth, 0, "root depth")?;
            }
            Some(parent) => {
                let pd = depth_of
                    .get(&parent)
                    .ok_or_else(|| format!("{id:?} walked before its parent {parent:?}"))?;
                ensure_eq(*depth, pd + 1, &format!("depth of {id:?}"))?;
                let pc = views[&parent].children;
                if !pc.is_some_and(|c| c.contains(id)) {
                    return Err(format!(
                        "{parent:?} is the parent of {id:?} but its children are {pc:?}"
                    ));
                }
            }
        }
        if depth_of.insert(*id, *depth).is_some() {
            return Err(format!("{id:?} walked twice"));
        }
        views.insert(*id, *view);
        match (view.children, view.proxy) {
            (None, Some(p)) => {
                if !leaves.insert(p) {
                    return Err(format!("proxy {p:?} in two leaves"));
                }
            }
            (Some(_), None) => {}
            other => return Err(format!("{id:?}: children and proxy {other:?}")),
        }
    }
    ensure_eq(
        leaves.into_iter().collect::<Vec<_>>(),
        ids,
        "proxies of the walked leaves",
    )?;
    let heights = computed_heights(&nodes);
    for (id, view, _) in &nodes {
        ensure_eq(
            view.height,
            heights[id],
            &format!("stored height of {id:?}"),
        )?;
        if let Some([a, b]) = view.children {
            let union = views[&a].aabb.union(&views[&b].aabb);
            if !contains(&view.aabb, &union) {
                return Err(format!(
                    "{id:?} box {:?} does not hold its children {union:?}",
                    view.aabb
                ));
            }
        }
    }
    let stats: TreeStats = tree.stats();
    ensure_eq(stats.leaves, n, "stats().leaves")?;
    ensure_eq(stats.nodes, nodes.len(), "stats().nodes")?;
    let root_height = tree.root().map_or(0, |r| heights[&r]);
    ensure_eq(stats.height, root_height, "stats().height")?;
    ensure_eq(stats.min_height, least_height(n), "stats().min_height")?;
    Ok(())
}

/// Every insertion cost.
pub const INSERTIONS: [dynamic_aabb_tree::InsertionCost; 4] = dynamic_aabb_tree::InsertionCost::ALL;

/// Every balancing strategy.
pub const BALANCINGS: [dynamic_aabb_tree::Balancing; 3] = dynamic_aabb_tree::Balancing::ALL;

/// Every pair method.
pub const PAIR_METHODS: [dynamic_aabb_tree::PairMethod; 3] = dynamic_aabb_tree::PairMethod::ALL;

/// Every update mode.
pub const UPDATE_MODES: [dynamic_aabb_tree::UpdateMode; 3] = dynamic_aabb_tree::UpdateMode::ALL;

/// Every combination of insertion cost, balancing, pair method and update mode, with the
/// given margin and look-ahead.
pub fn every_config(margin: f32, velocity_lookahead: f32) -> Vec<TreeConfig> {
    TreeConfig {
        margin,
        velocity_lookahead,
        ..TreeConfig::default()
    }
    .every_combination()
}
