//! Property tests of the dynamic AABB tree against a brute-force model: random sequences of
//! create, destroy, move, margin and look-ahead changes, rebuilds, queries (box, point, ray),
//! stale handles, refused inputs and pair updates, in 2D and 3D, for every insertion cost x
//! balancing x pair method x update mode. After every operation the whole tree is checked
//! against the model (`validate()`, every fat box, the structure, the stats); every query result
//! and the pair set must equal brute force exactly.
//!
//! All coordinates are small multiples of 1/8 (boxes, margins, velocities, look-aheads) so that
//! every fat box is exact in f32 whatever order the tree adds the terms in, and touching boxes
//! (the closed-interval edge cases) are common. Rays start at odd multiples of 1/32 and their
//! direction components have distinct powers of two, so no ray ever grazes an edge or a corner
//! of any box: each one clearly hits or clearly misses, and f32 rounding cannot change the set.

mod common;

use common::{
    BALANCINGS, INSERTIONS, Model, PAIR_METHODS, UPDATE_MODES, check_tree, contains_point,
    ensure_eq, every_config, expected_stats, overlap, segment_entry, vector,
};
use dynamic_aabb_tree::{Aabb, DynamicTree, ProxyId, RebuildMethod, TreeConfig, TreeError, Vector};
use glam::{Vec2, Vec3};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use std::collections::BTreeSet;

/// Random cases per configuration (36 configurations per dimension).
const CASES_PER_CONFIG: u32 = 10;
/// Random cases of the test that also switches settings mid-sequence.
const SWITCH_CASES: u32 = 96;

/// A box in quarter units: `min` and a size per axis.
#[derive(Clone, Copy, Debug)]
struct BoxSpec {
    min: [i32; 3],
    size: [i32; 3],
}

impl BoxSpec {
    fn aabb<V: Vector>(&self) -> Aabb<V> {
        let min: Vec<f32> = self.min.iter().map(|&q| quarter(q)).collect();
        let max: Vec<f32> = (0..3)
            .map(|i| quarter(self.min[i] + self.size[i]))
            .collect();
        common::aabb(&min, &max)
    }
}

/// A query box in eighth units.
#[derive(Clone, Copy, Debug)]
struct QuerySpec {
    min: [i32; 3],
    size: [i32; 3],
}

impl QuerySpec {
    fn aabb<V: Vector>(&self) -> Aabb<V> {
        let min: Vec<f32> = self.min.iter().map(|&e| eighth(e)).collect();
        let max: Vec<f32> = (0..3).map(|i| eighth(self.min[i] + self.size[i])).collect();
        common::aabb(&min, &max)
    }
}

/// A segment: origin `(2k + 1) / 32` per axis, an integer direction whose nonzero components
/// have distinct powers of two, and `max_fraction = eighths / 8`.
#[derive(Clone, Copy, Debug)]
struct RaySpec {
    origin: [i32; 3],
    dir: [i32; 3],
    eighths: i32,
}

impl RaySpec {
    fn origin<V: Vector>(&self) -> V {
        let c: Vec<f32> = self
            .origin
            .iter()
            .map(|&k| (2 * k + 1) as f32 / 32.0)
            .collect();
        vector(&c)
    }
    fn end<V: Vector>(&self) -> V {
        let c: Vec<f32> = (0..3)
            .map(|i| (2 * self.origin[i] + 1) as f32 / 32.0 + self.dir[i] as f32)
            .collect();
        vector(&c)
    }
    fn max_fraction(&self) -> f32 {
        eighth(self.eighths)
    }
}

/// What the ray-cast callback returns.
#[derive(Clone, Copy, Debug)]
enum RayMode {
    /// The max fraction it was given: every hit is reported.
    All,
    /// The entry fraction: a closest-hit cast.
    Closest,
    /// 0: stop at the first hit.
    Stop,
}

/// How a proxy moves.
#[derive(Clone, Copy, Debug)]
enum MoveTo {
    /// Shift by `shift` quarters and grow `max` by `grow` quarters (often inside the fat box).
    Jitter { shift: [i32; 3], grow: i32 },
    /// Anywhere.
    Jump(BoxSpec),
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Create(BoxSpec, [i32; 3]),
    Destroy(usize),
    Move {
        pick: usize,
        to: MoveTo,
        velocity: Option<[i32; 3]>,
    },
    SetMargin(i32),
    SetLookahead(i32),
    Rebuild,
    RebuildPartial,
    /// An optimization pass of this many branches.
    Optimize(usize),
    /// A pass of subtree reinsertion (`reinsert_subtrees`).
    ReinsertSubtrees,
    /// A pass of treelet restructuring (`restructure_treelets`).
    RestructureTreelets,
    QueryBox(QuerySpec),
    QueryBoxStop(QuerySpec, usize),
    QueryPoint([i32; 3]),
    Ray(RaySpec, RayMode),
    UpdatePairs,
    Stale(usize),
    Refused(u8, usize),
    /// Change one setting: 0 insertion, 1 balancing, 2 pair method, 3 update mode, 4 rebuild
    /// method, 5 optimization share.
    Switch(u8, usize),
}

#[derive(Clone, Debug)]
struct Case {
    /// Index into `every_config` (used by the switching test only).
    start: usize,
    margin_q: i32,
    lookahead_q: i32,
    initial: Vec<(BoxSpec, [i32; 3])>,
    ops: Vec<Op>,
}

fn quarter(q: i32) -> f32 {
    q as f32 * 0.25
}

fn eighth(e: i32) -> f32 {
    e as f32 * 0.125
}

/// Velocity in half units.
fn velocity<V: Vector>(h: [i32; 3]) -> V {
    let c: Vec<f32> = h.iter().map(|&x| x as f32 * 0.5).collect();
    vector(&c)
}

fn box_spec() -> impl Strategy<Value = BoxSpec> {
    (
        prop::array::uniform3(-100i32..=100),
        prop::array::uniform3(prop_oneof![1 => Just(0i32), 4 => 0i32..=32]),
    )
        .prop_map(|(min, size)| BoxSpec { min, size })
}

fn velocity_spec() -> impl Strategy<Value = [i32; 3]> {
    prop::array::uniform3(-4i32..=4)
}

fn query_spec() -> impl Strategy<Value = QuerySpec> {
    (
        prop::array::uniform3(-240i32..=240),
        prop::array::uniform3(prop_oneof![1 => Just(0i32), 4 => 0i32..=160]),
    )
        .prop_map(|(min, size)| QuerySpec { min, size })
}

/// Which power of two each axis's direction component carries.
const VALUATIONS: [[u32; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

fn ray_spec() -> impl Strategy<Value = RaySpec> {
    (
        prop::array::uniform3(-1280i32..1280),
        0usize..6,
        prop::array::uniform3(-20i32..20),
        prop::array::uniform3(prop::bool::weighted(0.2)),
        1i32..=8,
    )
        .prop_map(|(origin, order, odd, zero, eighths)| {
            let v = VALUATIONS[order];
            let mut dir = [0i32; 3];
            for i in 0..3 {
                if !zero[i] {
                    dir[i] = (2 * odd[i] + 1) * (1 << v[i]);
                }
            }
            if dir[0] == 0 && dir[1] == 0 {
                dir[0] = 1 << v[0];
            }
            RaySpec {
                origin,
                dir,
                eighths,
            }
        })
}

fn op_strategy(switches: bool) -> BoxedStrategy<Op> {
    let ray_mode = prop_oneof![
        3 => Just(RayMode::All),
        2 => Just(RayMode::Closest),
        1 => Just(RayMode::Stop)
    ];
    let move_to = prop_oneof![
        3 => (prop::array::uniform3(-3i32..=3), -1i32..=1)
            .prop_map(|(shift, grow)| MoveTo::Jitter { shift, grow }),
        1 => box_spec().prop_map(MoveTo::Jump),
    ];
    let base = prop_oneof![
        6 => (box_spec(), velocity_spec()).prop_map(|(b, v)| Op::Create(b, v)),
        3 => any::<usize>().prop_map(Op::Destroy),
        10 => (any::<usize>(), move_to, prop::option::weighted(0.3, velocity_spec()))
            .prop_map(|(pick, to, velocity)| Op::Move { pick, to, velocity }),
        1 => (0i32..=8).prop_map(Op::SetMargin),
        1 => (0i32..=8).prop_map(Op::SetLookahead),
        1 => Just(Op::Rebuild),
        1 => Just(Op::RebuildPartial),
        1 => (0usize..12).prop_map(Op::Optimize),
        1 => Just(Op::ReinsertSubtrees),
        1 => Just(Op::RestructureTreelets),
        3 => query_spec().prop_map(Op::QueryBox),
        1 => (query_spec(), 1usize..4).prop_map(|(q, n)| Op::QueryBoxStop(q, n)),
        2 => prop::array::uniform3(-240i32..=240).prop_map(Op::QueryPoint),
        3 => (ray_spec(), ray_mode).prop_map(|(r, m)| Op::Ray(r, m)),
        4 => Just(Op::UpdatePairs),
        1 => any::<usize>().prop_map(Op::Stale),
        1 => (0u8..9, any::<usize>()).prop_map(|(k, p)| Op::Refused(k, p)),
    ];
    if switches {
        prop_oneof![
            12 => base,
            1 => (0u8..6, 0usize..3).prop_map(|(k, v)| Op::Switch(k, v)),
        ]
        .boxed()
    } else {
        base.boxed()
    }
}

fn case_strategy(switches: bool) -> impl Strategy<Value = Case> {
    (
        0usize..36,
        0i32..=8,
        prop_oneof![1 => Just(0i32), 1 => 0i32..=8],
        prop::collection::vec((box_spec(), velocity_spec()), 0..40),
        prop::collection::vec(op_strategy(switches), 1..60),
    )
        .prop_map(|(start, margin_q, lookahead_q, initial, ops)| Case {
            start,
            margin_q,
            lookahead_q,
            initial,
            ops,
        })
}

/// What `update_pairs` must say about `recomputed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PairsState {
    /// Nothing changed since the last call: not recomputed.
    Clean,
    /// A proxy was created, destroyed or reinserted, or a fat box changed: recomputed.
    Dirty,
    /// Only a rebuild or a setting changed: either answer is allowed.
    Unknown,
}

struct Harness<V: Vector> {
    tree: DynamicTree<V, u32>,
    model: Model<V>,
    /// Destroyed handles.
    dead: Vec<ProxyId>,
    /// Every handle ever returned.
    issued: BTreeSet<ProxyId>,
    next_user: u32,
    pairs_state: PairsState,
}

impl<V: Vector> Harness<V> {
    fn nth_live(&self, pick: usize) -> Option<ProxyId> {
        let n = self.model.proxies.len();
        if n == 0 {
            None
        } else {
            self.model.proxies.keys().nth(pick % n).copied()
        }
    }

    fn mark_changed(&mut self) {
        self.pairs_state = PairsState::Dirty;
    }

    fn mark_maybe_changed(&mut self) {
        if self.pairs_state == PairsState::Clean {
            self.pairs_state = PairsState::Unknown;
        }
    }

    fn apply(&mut self, op: &Op) -> Result<(), String> {
        match *op {
            Op::Create(spec, vel) => {
                let tight = spec.aabb::<V>();
                let vel = velocity::<V>(vel);
                let user = self.next_user;
                self.next_user += 1;
                let id = self
                    .tree
                    .create_proxy(tight, vel, user)
                    .map_err(|e| format!("create_proxy({tight:?}): {e}"))?;
                if !self.issued.insert(id) {
                    return Err(format!(
                        "create_proxy returned {id:?}, a handle it gave before"
                    ));
                }
                self.model.create(id, tight, vel, user);
                self.mark_changed();
            }
            Op::Destroy(pick) => {
                let Some(id) = self.nth_live(pick) else {
                    return Ok(());
                };
                let user = self.model.proxies[&id].user;
                ensure_eq(self.tree.destroy_proxy(id), Ok(user), "destroy_proxy")?;
                self.model.proxies.remove(&id);
                self.dead.push(id);
                self.mark_changed();
            }
            Op::Move {
                pick,
                to,
                velocity: vel,
            } => {
                let Some(id) = self.nth_live(pick) else {
                    return Ok(());
                };
                let old = self.model.proxies[&id];
                let tight = match to {
                    MoveTo::Jitter { shift, grow } => {
                        let mut min = old.tight.min;
                        let mut max = old.tight.max;
                        for (axis, &step) in shift.iter().enumerate().take(V::DIM) {
                            let lo = min.axis(axis) + quarter(step);
                            let hi = (max.axis(axis) + quarter(step + grow)).max(lo);
                            min.set_axis(axis, lo);
                            max.set_axis(axis, hi);
                        }
                        Aabb::new(min, max)
                    }
                    MoveTo::Jump(spec) => spec.aabb(),
                };
                let vel = vel.map_or(old.velocity, velocity::<V>);
                let reinsert = self.model.apply_move(id, tight, vel);
                ensure_eq(
                    self.tree.move_proxy(id, tight, vel),
                    Ok(reinsert),
                    &format!(
                        "move_proxy({id:?}) from fat {:?} to tight {tight:?}",
                        old.fat
                    ),
                )?;
                if reinsert {
                    self.mark_changed();
                }
            }
            Op::SetMargin(q) => {
                ensure_eq(self.tree.set_margin(quarter(q)), Ok(()), "set_margin")?;
                // Setting the value already in force changes nothing (fat boxes included).
                let changed = quarter(q) != self.model.config.margin;
                self.model.config.margin = quarter(q);
                if changed && self.model.refatten() {
                    self.mark_changed();
                } else {
                    self.mark_maybe_changed();
                }
            }
            Op::SetLookahead(q) => {
                ensure_eq(
                    self.tree.set_velocity_lookahead(quarter(q)),
                    Ok(()),
                    "set_velocity_lookahead",
                )?;
                let changed = quarter(q) != self.model.config.velocity_lookahead;
                self.model.config.velocity_lookahead = quarter(q);
                if changed && self.model.refatten() {
                    self.mark_changed();
                } else {
                    self.mark_maybe_changed();
                }
            }
            Op::Rebuild => {
                self.tree.rebuild();
                self.mark_maybe_changed();
            }
            Op::RebuildPartial => {
                self.tree.rebuild_partial();
                self.mark_maybe_changed();
            }
            Op::Optimize(count) => {
                let done = self.tree.optimize(count);
                // At most `count`, and only branches below the root.
                let branches_below_root = self.model.proxies.len().saturating_sub(2);
                if done > count.min(branches_below_root) {
                    return Err(format!(
                        "optimize({count}) reinserted {done} branches of {branches_below_root}"
                    ));
                }
                self.mark_maybe_changed();
            }
            Op::ReinsertSubtrees => {
                // At most every node but the root.
                let done = self.tree.reinsert_subtrees();
                let nodes = (2 * self.model.proxies.len()).saturating_sub(2);
                if done > nodes {
                    return Err(format!("reinsert_subtrees moved {done} of {nodes} nodes"));
                }
                self.mark_maybe_changed();
            }
            Op::RestructureTreelets => {
                // At most every branch.
                let done = self.tree.restructure_treelets();
                let branches = self.model.proxies.len().saturating_sub(1);
                if done > branches {
                    return Err(format!(
                        "restructure_treelets rebuilt {done} of {branches} branches"
                    ));
                }
                self.mark_maybe_changed();
            }
            Op::QueryBox(spec) => {
                let q = spec.aabb::<V>();
                let mut got = Vec::new();
                let stats = self.tree.query_aabb(&q, |id| {
                    got.push(id);
                    true
                });
                check_unique_set(
                    got,
                    self.model.query_aabb(&q),
                    &format!("query_aabb({q:?})"),
                )?;
                let want = expected_stats(&self.tree, |b| overlap(b, &q));
                ensure_eq(stats, want, &format!("query_aabb({q:?}) stats"))?;
            }
            Op::QueryBoxStop(spec, limit) => {
                let q = spec.aabb::<V>();
                let mut got = Vec::new();
                self.tree.query_aabb(&q, |id| {
                    got.push(id);
                    got.len() < limit
                });
                let all = self.model.query_aabb(&q);
                ensure_eq(
                    got.len(),
                    all.len().min(limit),
                    "callbacks of a query stopped early",
                )?;
                let set: BTreeSet<ProxyId> = got.iter().copied().collect();
                ensure_eq(set.len(), got.len(), "duplicates in a query stopped early")?;
                if let Some(id) = got.iter().find(|id| !all.contains(id)) {
                    return Err(format!(
                        "query stopped early reported {id:?}, which misses {q:?}"
                    ));
                }
            }
            Op::QueryPoint(e) => {
                let c: Vec<f32> = e.iter().map(|&x| eighth(x)).collect();
                let p: V = vector(&c);
                let mut got = Vec::new();
                let stats = self.tree.query_point(p, |id| {
                    got.push(id);
                    true
                });
                check_unique_set(
                    got,
                    self.model.query_point(p),
                    &format!("query_point({p:?})"),
                )?;
                let want = expected_stats(&self.tree, |b| contains_point(b, p));
                ensure_eq(stats, want, &format!("query_point({p:?}) stats"))?;
            }
            Op::Ray(spec, mode) => self.ray(spec, mode)?,
            Op::UpdatePairs => {
                let update = self.tree.update_pairs().expect("no pair limit");
                match self.pairs_state {
                    PairsState::Clean => {
                        ensure_eq(update.recomputed, false, "recomputed with nothing changed")?
                    }
                    PairsState::Dirty => {
                        ensure_eq(update.recomputed, true, "recomputed after a change")?
                    }
                    PairsState::Unknown => {}
                }
                let got = self.tree.pairs().to_vec();
                if let Some(w) = got.windows(2).find(|w| w[0] >= w[1]) {
                    return Err(format!("pairs() not strictly increasing at {w:?}"));
                }
                if let Some(p) = got.iter().find(|p| p.0 >= p.1) {
                    return Err(format!("pair {p:?} is not (a, b) with a < b"));
                }
                ensure_eq(got, self.model.pairs(), "pairs() vs brute force")?;
                self.pairs_state = PairsState::Clean;
            }
            Op::Stale(pick) => {
                let id = if self.dead.is_empty() {
                    ProxyId {
                        index: u32::MAX - 1,
                        generation: 3,
                    }
                } else {
                    self.dead[pick % self.dead.len()]
                };
                check_stale(&mut self.tree, id)?;
                if let Some(live) = self.nth_live(pick) {
                    let forged = ProxyId {
                        index: live.index,
                        generation: live.generation.wrapping_add(1),
                    };
                    check_stale(&mut self.tree, forged)?;
                }
            }
            Op::Refused(kind, pick) => self.refused(kind, pick)?,
            Op::Switch(kind, v) => {
                let cfg = &mut self.model.config;
                match kind {
                    0 => {
                        cfg.insertion = INSERTIONS[v % INSERTIONS.len()];
                        self.tree.set_insertion(cfg.insertion);
                    }
                    1 => {
                        cfg.balancing = BALANCINGS[v % BALANCINGS.len()];
                        self.tree.set_balancing(cfg.balancing);
                    }
                    2 => {
                        cfg.pairs = PAIR_METHODS[v % PAIR_METHODS.len()];
                        self.tree.set_pair_method(cfg.pairs);
                    }
                    3 => {
                        cfg.update = UPDATE_MODES[v % UPDATE_MODES.len()];
                        self.tree.set_update_mode(cfg.update);
                    }
                    4 => {
                        cfg.rebuild = RebuildMethod::ALL[v % RebuildMethod::ALL.len()];
                        self.tree.set_rebuild_method(cfg.rebuild);
                    }
                    _ => {
                        cfg.optimize_share = SHARES[v % SHARES.len()];
                        self.tree
                            .set_optimize_share(cfg.optimize_share)
                            .map_err(|e| format!("set_optimize_share: {e}"))?;
                    }
                }
                self.mark_maybe_changed();
            }
        }
        Ok(())
    }

    fn ray(&mut self, spec: RaySpec, mode: RayMode) -> Result<(), String> {
        let origin: V = spec.origin();
        let end: V = spec.end();
        let max_fraction = spec.max_fraction();
        let what = format!("ray_cast({origin:?} -> {end:?}, max {max_fraction}, {mode:?})");
        let want = self.model.ray(origin, end, max_fraction);
        // (proxy, reported entry, max fraction in force when it was reported)
        let mut got: Vec<(ProxyId, f32, f32)> = Vec::new();
        let mut clip = max_fraction;
        self.tree.ray_cast(origin, end, max_fraction, |id, t| {
            got.push((id, t, clip));
            match mode {
                RayMode::All => max_fraction,
                RayMode::Closest => {
                    clip = clip.min(t);
                    clip
                }
                RayMode::Stop => 0.0,
            }
        });
        for &(id, t, clip_then) in &got {
            if !(0.0..=clip_then).contains(&t) {
                return Err(format!(
                    "{what}: {id:?} reported at t = {t}, outside [0, {clip_then}]"
                ));
            }
            let fat = self
                .model
                .proxies
                .get(&id)
                .ok_or_else(|| format!("{what}: reported {id:?}, not a live proxy"))?
                .fat;
            let exact = segment_entry(&fat, origin, end, clip_then + 1e-5)
                .ok_or_else(|| format!("{what}: reported {id:?} (fat {fat:?}), which the segment up to {clip_then} misses"))?;
            if (f64::from(t) - exact).abs() > 1e-5 {
                return Err(format!("{what}: {id:?} entry reported {t}, exact {exact}"));
            }
        }
        match mode {
            RayMode::All => {
                let ids: Vec<ProxyId> = got.iter().map(|g| g.0).collect();
                let want_ids: Vec<ProxyId> = want.iter().map(|w| w.0).collect();
                check_unique_set(ids, want_ids, &what)?;
            }
            RayMode::Closest => match want.iter().map(|w| w.1).reduce(f64::min) {
                None => ensure_eq(got.len(), 0, &format!("{what}: callbacks"))?,
                Some(nearest) => {
                    let hit_nearest = got
                        .iter()
                        .any(|g| want.iter().any(|w| w.0 == g.0 && w.1 <= nearest + 1e-9));
                    if !hit_nearest {
                        return Err(format!(
                            "{what}: nearest hit at {nearest} of {want:?} not reported; got {got:?}"
                        ));
                    }
                    let ids: BTreeSet<ProxyId> = got.iter().map(|g| g.0).collect();
                    ensure_eq(
                        ids.len(),
                        got.len(),
                        &format!("{what}: duplicate callbacks"),
                    )?;
                }
            },
            RayMode::Stop => {
                ensure_eq(got.len(), want.len().min(1), &format!("{what}: callbacks"))?
            }
        }
        Ok(())
    }

    fn refused(&mut self, kind: u8, pick: usize) -> Result<(), String> {
        let ok_box: Aabb<V> = common::aabb(&[0.0, 0.0, 0.0], &[1.0, 1.0, 1.0]);
        let nan_box: Aabb<V> = common::aabb(&[f32::NAN, 0.0, 0.0], &[1.0, 1.0, 1.0]);
        let inverted: Aabb<V> = common::aabb(&[0.0, 2.0, 0.0], &[1.0, 1.0, 1.0]);
        let infinite: Aabb<V> = common::aabb(&[0.0, 0.0, 0.0], &[1.0, f32::INFINITY, 1.0]);
        let zero: V = vector(&[0.0, 0.0, 0.0]);
        let nan_v: V = vector(&[0.0, f32::NAN, 0.0]);
        let inf_v: V = vector(&[f32::NEG_INFINITY, 0.0, 0.0]);
        let live = self.nth_live(pick);
        match (kind, live) {
            (0, _) => ensure_eq(
                self.tree.create_proxy(nan_box, zero, 9),
                Err(TreeError::NonFinite),
                "create NaN",
            )?,
            (1, _) => ensure_eq(
                self.tree.create_proxy(inverted, zero, 9),
                Err(TreeError::Inverted),
                "create inverted",
            )?,
            (2, _) => ensure_eq(
                self.tree.create_proxy(infinite, zero, 9),
                Err(TreeError::NonFinite),
                "create infinite",
            )?,
            (3, _) => ensure_eq(
                self.tree.create_proxy(ok_box, nan_v, 9),
                Err(TreeError::NonFinite),
                "create NaN velocity",
            )?,
            (4, Some(id)) => ensure_eq(
                self.tree.move_proxy(id, nan_box, zero),
                Err(TreeError::NonFinite),
                "move to NaN",
            )?,
            (5, Some(id)) => ensure_eq(
                self.tree.move_proxy(id, inverted, zero),
                Err(TreeError::Inverted),
                "move inverted",
            )?,
            (6, Some(id)) => ensure_eq(
                self.tree.move_proxy(id, ok_box, inf_v),
                Err(TreeError::NonFinite),
                "move infinite velocity",
            )?,
            (7, _) => {
                let r = self.tree.set_margin(-0.25);
                if !matches!(r, Err(TreeError::InvalidSetting { .. })) {
                    return Err(format!("set_margin(-0.25) gave {r:?}"));
                }
            }
            (8, _) => {
                let r = self.tree.set_velocity_lookahead(f32::NAN);
                if !matches!(r, Err(TreeError::InvalidSetting { .. })) {
                    return Err(format!("set_velocity_lookahead(NaN) gave {r:?}"));
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Fails unless `got` has no duplicates and, sorted, equals `want` (sorted).
fn check_unique_set(mut got: Vec<ProxyId>, want: Vec<ProxyId>, what: &str) -> Result<(), String> {
    got.sort();
    let n = got.len();
    got.dedup();
    ensure_eq(got.len(), n, &format!("{what}: duplicate results"))?;
    ensure_eq(got, want, what)
}

/// Every call that takes a handle must refuse `id` as stale.
fn check_stale<V: Vector>(tree: &mut DynamicTree<V, u32>, id: ProxyId) -> Result<(), String> {
    let stale = TreeError::StaleProxy(id);
    let b: Aabb<V> = common::aabb(&[0.0, 0.0, 0.0], &[1.0, 1.0, 1.0]);
    let zero: V = vector(&[0.0, 0.0, 0.0]);
    ensure_eq(tree.contains(id), false, &format!("contains({id:?})"))?;
    ensure_eq(tree.user_data(id), Err(stale.clone()), "user_data(stale)")?;
    ensure_eq(tree.fat_aabb(id), Err(stale.clone()), "fat_aabb(stale)")?;
    ensure_eq(tree.tight_aabb(id), Err(stale.clone()), "tight_aabb(stale)")?;
    ensure_eq(tree.leaf_of(id), Err(stale.clone()), "leaf_of(stale)")?;
    ensure_eq(
        tree.move_proxy(id, b, zero),
        Err(stale.clone()),
        "move_proxy(stale)",
    )?;
    ensure_eq(tree.destroy_proxy(id), Err(stale), "destroy_proxy(stale)")
}

fn run_case<V: Vector>(base: TreeConfig, case: &Case) -> Result<(), TestCaseError> {
    let config = TreeConfig {
        margin: quarter(case.margin_q),
        velocity_lookahead: quarter(case.lookahead_q),
        ..base
    };
    let tree = DynamicTree::<V, u32>::try_new(config)
        .map_err(|e| TestCaseError::fail(format!("try_new({config:?}): {e}")))?;
    let mut h = Harness {
        tree,
        model: Model::new(config),
        dead: Vec::new(),
        issued: BTreeSet::new(),
        next_user: 0,
        pairs_state: PairsState::Unknown,
    };
    check_tree(&h.tree, &h.model).map_err(|e| TestCaseError::fail(format!("new tree: {e}")))?;
    for (i, &(b, v)) in case.initial.iter().enumerate() {
        let op = Op::Create(b, v);
        h.apply(&op)
            .and_then(|()| check_tree(&h.tree, &h.model))
            .map_err(|e| TestCaseError::fail(format!("initial create {i}: {e}")))?;
    }
    for (i, op) in case.ops.iter().enumerate() {
        h.apply(op)
            .and_then(|()| check_tree(&h.tree, &h.model))
            .map_err(|e| TestCaseError::fail(format!("op {i} {op:?}: {e}")))?;
    }
    // End with a pair update so every case compares the pair set at least once.
    h.apply(&Op::UpdatePairs)
        .map_err(|e| TestCaseError::fail(format!("final update_pairs: {e}")))?;
    Ok(())
}

fn runner(cases: u32, seed: u64) -> TestRunner {
    TestRunner::new(Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..Config::default()
    })
}

/// Optimization shares the tests use (each pair update of these small trees reinserts none,
/// a few or as many branches as leaves).
const SHARES: [f32; 3] = [0.0, 0.2, 1.0];

/// [`every_config`], the rebuild methods and optimization shares taking turns along the list
/// (every method and share meets every insertion cost and balancing).
fn varied_configs() -> Vec<TreeConfig> {
    every_config(0.0, 0.0)
        .into_iter()
        .enumerate()
        .map(|(i, c)| TreeConfig {
            rebuild: RebuildMethod::ALL[i % RebuildMethod::ALL.len()],
            optimize_share: SHARES[(i / RebuildMethod::ALL.len()) % SHARES.len()],
            ..c
        })
        .collect()
}

/// Runs the random sequences for every configuration; reports every failing one.
fn every_configuration<V: Vector>(seed: u64) {
    let strategy = case_strategy(false);
    let mut failures = Vec::new();
    let configs = varied_configs();
    for (i, config) in configs.iter().enumerate() {
        let mut runner = runner(CASES_PER_CONFIG, seed + i as u64);
        if let Err(e) = runner.run(&strategy, |case| run_case::<V>(*config, &case)) {
            failures.push(format!("{config:?}:\n{e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} configurations failed:\n\n{}",
        failures.len(),
        configs.len(),
        failures.join("\n\n")
    );
}

/// Runs random sequences that also switch insertion, balancing, pair method and update mode.
fn switching<V: Vector>(seed: u64) {
    let configs = varied_configs();
    let mut runner = runner(SWITCH_CASES, seed);
    let result = runner.run(&case_strategy(true), |case| {
        run_case::<V>(configs[case.start], &case)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn random_sequences_match_brute_force_2d() {
    every_configuration::<Vec2>(2_000);
}

#[test]
fn random_sequences_match_brute_force_3d() {
    every_configuration::<Vec3>(3_000);
}

#[test]
fn random_sequences_switching_settings_match_brute_force_2d() {
    switching::<Vec2>(20_000);
}

#[test]
fn random_sequences_switching_settings_match_brute_force_3d() {
    switching::<Vec3>(30_000);
}
