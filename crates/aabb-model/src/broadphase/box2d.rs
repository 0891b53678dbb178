//! Box2D v3's own tree (`b2DynamicTree`, its C code through the `box2d-tree` crate) as a broad
//! phase, driven the way Box2D's broad phase (`broad_phase.c`) drives it.
//!
//! A body's fat box follows the shared rule ([`super::fat_box`]: the tight box grown by the
//! margin and stretched by the velocity look-ahead, recomputed only when the tight box leaves
//! it), so the pairs are comparable with the other broad phases'. Then, as in Box2D:
//! - a moving body whose fat box changed has its proxy *enlarged* in place
//!   (`b2DynamicTree_EnlargeProxy`: the leaf takes the new box, its ancestors grow and are
//!   flagged), and after every update the tree is rebuilt where it was enlarged
//!   (`b2DynamicTree_Rebuild(tree, false)`, Box2D's `b2BroadPhase_RebuildTrees`). This is
//!   Box2D's policy for dynamic and kinematic bodies; a static body's proxy is *moved*
//!   (`b2DynamicTree_MoveProxy`: removed and reinserted), as Box2D moves static proxies;
//! - every proxy created, enlarged or moved goes to the move buffer;
//! - at the pair search each buffered proxy queries the tree with its fat box; a pair of two
//!   buffered proxies is taken by the query of the larger proxy id only, a pair already in the
//!   pair set is skipped, and new pairs join the pair set (Box2D's `b2UpdateBroadPhasePairs`);
//! - a pair whose fat boxes no longer overlap leaves the set (Box2D destroys such a contact in
//!   its contact update), and a body that goes takes its pairs with it.
//!
//! So the pair set is exactly the pairs whose fat boxes overlap: brute force's pairs.
//!
//! One difference: Box2D keeps static, kinematic and dynamic proxies in three trees, and a
//! static proxy queries only the dynamic tree. Here they share one tree (so one tree is drawn
//! and checked), told apart by category bits: a static proxy queries with a mask that sees
//! only moving proxies, so two static bodies never pair, as in Box2D. Static proxies are
//! buffered when created (Box2D does not buffer them unless asked, and leaves the pair to the
//! moving body's next query), so that the pairs equal brute force's at every step.
//!
//! Box2D's tree is 2D: this broad phase takes 2D scenes and traces only ([`super::make`]
//! refuses it for 3D).

use super::store::Store;
use super::{
    Bodies, Body, Broadphase, BroadphaseCore, BroadphaseError, BroadphaseKind, PairOutcome,
    UpdateOutcome, box_to_vec3, fat_box,
};
use crate::tree::{Aabb, StructureHasher, TreeConfig, TreeError};
use aabb_recorder::wire::EngineTree;
use box2d_tree::{Box2, NodeKind, Tree};
use glam::{Vec2, Vec3};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Category bits of a static body's proxy.
const STATIC_BITS: u64 = 1;
/// Category bits of a moving body's proxy.
const MOVING_BITS: u64 = 2;

/// A fast hash for pair keys (Box2D's pair set hashes its 64-bit keys with a few multiplies).
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, k: u64) {
        let h = k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

/// A set of pair keys hashed by [`KeyHasher`].
pub type PairSet = HashSet<u64, BuildHasherDefault<KeyHasher>>;

/// The pair key of two proxies (`B2_SHAPE_PAIR_KEY`: smaller id high).
#[inline]
#[must_use]
pub fn pair_key(a: u32, b: u32) -> u64 {
    let (i, j) = if a < b { (a, b) } else { (b, a) };
    (u64::from(i) << 32) | u64::from(j)
}

/// Our 2D box as Box2D's.
#[inline]
#[must_use]
pub fn to_box2(b: &Aabb<Vec2>) -> Box2 {
    Box2::new(b.min, b.max)
}

/// Box2D's tree driven as Box2D's broad phase drives it (see the module's documentation).
#[derive(Clone, Debug)]
pub struct Box2dBroadphase {
    /// Bodies by id: tight box, velocity, fat box by the shared rule, and the outcome.
    store: Store<Vec2>,
    tree: Tree,
    /// `ids[k]`'s proxy is `proxies[k]` (the store's ids as of the last update).
    ids: Vec<u32>,
    proxies: Vec<u32>,
    /// Per proxy id: the fat box as the tree holds it (Box2D's `shape->fatAABB`).
    fat: Vec<Box2>,
    /// Per proxy id: the body's id.
    body_of: Vec<u32>,
    /// Per proxy id: true for a static body's proxy.
    static_proxy: Vec<bool>,
    /// Per proxy id: in the move buffer.
    moved: Vec<bool>,
    /// The move buffer: proxies created, enlarged or moved since the last pair search.
    move_buffer: Vec<u32>,
    /// The pair set (keys of proxy pairs) and its pairs, proxy ids `(a, b)`, `a < b`.
    pair_set: PairSet,
    pairs: Vec<(u32, u32)>,
    /// The pairs as body ids, sorted, when `sorted_valid`.
    sorted: Vec<(u32, u32)>,
    sorted_valid: bool,
    /// True when the next search has work (moved proxies, removed bodies, new settings).
    dirty: bool,
    pair_limit: usize,
    /// Ids of the static bodies, sorted.
    static_ids: Vec<u32>,
}

impl Box2dBroadphase {
    /// An empty broad phase; the margin and look-ahead are assumed valid (see [`super::make`]).
    #[must_use]
    pub fn new(config: TreeConfig) -> Self {
        Self {
            store: Store::new(config),
            tree: Tree::new(),
            ids: Vec::new(),
            proxies: Vec::new(),
            fat: Vec::new(),
            body_of: Vec::new(),
            static_proxy: Vec::new(),
            moved: Vec::new(),
            move_buffer: Vec::new(),
            pair_set: PairSet::default(),
            pairs: Vec::new(),
            sorted: Vec::new(),
            sorted_valid: false,
            dirty: true,
            pair_limit: super::DEFAULT_PAIR_LIMIT,
            static_ids: Vec::new(),
        }
    }

    /// Box2D's tree itself.
    #[must_use]
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// The body id of each proxy the tree holds, by proxy id (`u32::MAX` for no proxy).
    #[must_use]
    pub fn body_of_proxy(&self, proxy: u32) -> Option<u32> {
        self.body_of
            .get(proxy as usize)
            .copied()
            .filter(|&id| id != u32::MAX)
    }

    fn is_static_id(&self, id: u32) -> bool {
        !self.static_ids.is_empty() && self.static_ids.binary_search(&id).is_ok()
    }

    /// Makes room in the per-proxy arrays for `proxy`.
    fn slot(&mut self, proxy: u32) {
        let need = proxy as usize + 1;
        if self.fat.len() < need {
            let empty = Box2::new(Vec2::ZERO, Vec2::ZERO);
            self.fat.resize(need, empty);
            self.body_of.resize(need, u32::MAX);
            self.static_proxy.resize(need, false);
            self.moved.resize(need, false);
        }
    }

    /// `b2BufferMove`.
    #[inline]
    fn buffer_move(&mut self, proxy: u32) {
        let flag = &mut self.moved[proxy as usize];
        if !*flag {
            *flag = true;
            self.move_buffer.push(proxy);
        }
    }

    /// Creates the proxy of body `id` with fat box `fat` and buffers it.
    fn create(&mut self, id: u32, fat: &Aabb<Vec2>) -> Result<u32, BroadphaseError> {
        let is_static = self.is_static_id(id);
        let bits = if is_static { STATIC_BITS } else { MOVING_BITS };
        let b = to_box2(fat);
        let proxy = self
            .tree
            .create_proxy(b, bits, u64::from(id))
            .map_err(|e| refused(id, &e))?;
        self.slot(proxy);
        let p = proxy as usize;
        self.fat[p] = b;
        self.body_of[p] = id;
        self.static_proxy[p] = is_static;
        self.buffer_move(proxy);
        Ok(proxy)
    }

    /// Gives `proxy` its new fat box: enlarged in place for a moving body, moved for a static
    /// one (or when the new box lies inside the old, which only new settings can make).
    fn refatten(&mut self, proxy: u32, fat: &Aabb<Vec2>) -> Result<(), BroadphaseError> {
        let p = proxy as usize;
        let b = to_box2(fat);
        let result = if self.static_proxy[p] || self.fat[p].contains(&b) {
            self.tree.move_proxy(proxy, b)
        } else {
            self.tree.enlarge_proxy(proxy, b)
        };
        result.map_err(|e| refused(self.body_of[p], &e))?;
        self.fat[p] = b;
        self.buffer_move(proxy);
        Ok(())
    }

    /// Destroys `proxy` (`b2BroadPhase_DestroyProxy`: out of the move buffer and the tree).
    /// Its move buffer entry stays, unflagged, and the search skips it (removing it would
    /// cost a scan of the buffer per body that goes).
    fn destroy(&mut self, proxy: u32) -> Result<(), BroadphaseError> {
        let p = proxy as usize;
        let id = self.body_of[p];
        self.tree
            .destroy_proxy(proxy)
            .map_err(|e| refused(id, &e))?;
        self.moved[p] = false;
        self.body_of[p] = u32::MAX;
        Ok(())
    }

    /// Refuses a body whose fat box Box2D's tree cannot take (a side of `B2_HUGE` or more);
    /// bodies with numbers that are not finite are left to the store, which words the error.
    fn check_huge(&self, bodies: &(impl Bodies<Vec2> + ?Sized)) -> Result<(), BroadphaseError> {
        let (margin, lookahead) = (
            self.store.config.margin,
            self.store.config.velocity_lookahead,
        );
        for k in 0..bodies.len() {
            let b = bodies.body(k);
            let f = fat_box(&b.tight, b.velocity, margin, lookahead);
            let size = f.max - f.min;
            if size.x >= box2d_tree::HUGE || size.y >= box2d_tree::HUGE {
                return Err(BroadphaseError::Body {
                    noun: "sphere",
                    id: b.id,
                    reason: format!(
                        "its fat box (min {}, max {}) is {} wide and {} tall: Box2D's tree \
                         takes boxes under {} (B2_HUGE)",
                        f.min,
                        f.max,
                        size.x,
                        size.y,
                        box2d_tree::HUGE
                    ),
                });
            }
        }
        Ok(())
    }

    /// Brings the proxies to the store after an update that changed the ids: destroys the
    /// proxies of bodies that went (and their pairs), creates the new ones, refattens the rest.
    fn reconcile(&mut self, out: &UpdateOutcome) -> Result<(), BroadphaseError> {
        let old_ids = std::mem::take(&mut self.ids);
        let old_proxies = std::mem::take(&mut self.proxies);
        let mut dead = false;
        let mut removed = out.removed.iter().peekable();
        let mut kept: Vec<(u32, u32)> = Vec::with_capacity(old_ids.len());
        for (&id, &proxy) in old_ids.iter().zip(&old_proxies) {
            if removed.next_if(|&&r| r == id).is_some() {
                self.destroy(proxy)?;
                dead = true;
            } else {
                kept.push((id, proxy));
            }
        }
        if dead {
            // Box2D destroys a shape's contacts with it: before any proxy id is reused.
            let body_of = &self.body_of;
            let set = &mut self.pair_set;
            self.pairs.retain(|&(a, b)| {
                let live = body_of[a as usize] != u32::MAX && body_of[b as usize] != u32::MAX;
                if !live {
                    set.remove(&pair_key(a, b));
                }
                live
            });
        }
        let n = self.store.ids.len();
        let mut ids = Vec::with_capacity(n);
        let mut proxies = Vec::with_capacity(n);
        let mut old = kept.into_iter().peekable();
        let mut reinserted = out.reinserted.iter().peekable();
        for k in 0..n {
            let id = self.store.ids[k];
            let fat = self.store.fat[k];
            let again = reinserted.next_if(|&&r| r == id).is_some();
            let proxy = match old.next_if(|&(o, _)| o == id) {
                Some((_, proxy)) => {
                    if again {
                        self.refatten(proxy, &fat)?;
                    }
                    proxy
                }
                None => self.create(id, &fat)?,
            };
            ids.push(id);
            proxies.push(proxy);
        }
        self.ids = ids;
        self.proxies = proxies;
        Ok(())
    }

    /// A new tree from the store's bodies (after new settings or static ids, or a build):
    /// every proxy created and buffered, the pair set emptied, then one full rebuild
    /// (`b2DynamicTree_Rebuild(tree, true)`, Box2D's bulk build, as `b2World_RebuildStaticTree`).
    fn rebuild_from_store(&mut self) -> Result<(), BroadphaseError> {
        self.tree = Tree::with_capacity(u32::try_from(self.store.ids.len()).unwrap_or(u32::MAX));
        self.fat.clear();
        self.body_of.clear();
        self.static_proxy.clear();
        self.moved.clear();
        self.move_buffer.clear();
        self.pair_set.clear();
        self.pairs.clear();
        self.ids.clear();
        self.proxies.clear();
        for k in 0..self.store.ids.len() {
            let (id, fat) = (self.store.ids[k], self.store.fat[k]);
            let proxy = self.create(id, &fat)?;
            self.ids.push(id);
            self.proxies.push(proxy);
        }
        self.tree.rebuild(true);
        self.store.take_reshaped();
        self.dirty = true;
        self.sorted_valid = false;
        Ok(())
    }

    /// Box2D's `b2UpdateBroadPhasePairs` and its contact update: pairs whose fat boxes parted
    /// leave the set, then each buffered proxy queries the tree for new ones.
    fn update_pairs(&mut self) -> Result<(), BroadphaseError> {
        let fat = &self.fat;
        let set = &mut self.pair_set;
        self.pairs.retain(|&(a, b)| {
            let keep = fat[a as usize].overlaps(&fat[b as usize]);
            if !keep {
                set.remove(&pair_key(a, b));
            }
            keep
        });
        let limit = self.pair_limit;
        let mut over = self.pairs.len() > limit;
        for i in 0..self.move_buffer.len() {
            if over {
                break;
            }
            let q = self.move_buffer[i];
            let qi = q as usize;
            if !self.moved[qi] {
                // Destroyed since it was buffered (its id may be buffered again, later on).
                continue;
            }
            let mask = if self.static_proxy[qi] {
                MOVING_BITS
            } else {
                box2d_tree::ALL_BITS
            };
            let (set, pairs, moved) = (&mut self.pair_set, &mut self.pairs, &self.moved);
            let result = self.tree.query(self.fat[qi], mask, |p, _| {
                // Both moved: the query of the larger proxy id takes the pair.
                if p == q || (moved[p as usize] && p < q) {
                    return true;
                }
                if set.insert(pair_key(p, q)) {
                    pairs.push((p.min(q), p.max(q)));
                    if pairs.len() > limit {
                        over = true;
                        return false;
                    }
                }
                true
            });
            if let Err(e) = result {
                let id = self.body_of[qi];
                self.reset_pairs();
                return Err(refused(id, &e));
            }
        }
        if over {
            self.reset_pairs();
            return Err(BroadphaseError::PairLimit {
                limit,
                static_boxes: super::holds_static(&self.store.ids, &self.static_ids),
            });
        }
        for &p in &self.move_buffer {
            self.moved[p as usize] = false;
        }
        self.move_buffer.clear();
        Ok(())
    }

    /// After a search that could not finish: no pairs, and every proxy buffered, so that the
    /// next search finds them all.
    fn reset_pairs(&mut self) {
        self.pair_set.clear();
        self.pairs.clear();
        for k in 0..self.proxies.len() {
            self.buffer_move(self.proxies[k]);
        }
        self.dirty = true;
        self.sorted_valid = false;
    }

    /// Runs the pair search when something changed; true when it ran.
    fn search(&mut self) -> Result<bool, BroadphaseError> {
        if !self.dirty {
            return Ok(false);
        }
        self.update_pairs()?;
        self.dirty = false;
        self.sorted_valid = false;
        Ok(true)
    }

    /// The pair set as body ids, `a < b`.
    fn id_pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.pairs.iter().map(|&(p, q)| {
            let (a, b) = (self.body_of[p as usize], self.body_of[q as usize]);
            if a < b { (a, b) } else { (b, a) }
        })
    }
}

/// The error for a body Box2D's tree refused.
#[cold]
#[inline(never)]
fn refused(id: u32, error: &box2d_tree::TreeError) -> BroadphaseError {
    BroadphaseError::Body {
        noun: "sphere",
        id,
        reason: error.to_string(),
    }
}

impl BroadphaseCore<Vec2> for Box2dBroadphase {
    fn kind(&self) -> BroadphaseKind {
        BroadphaseKind::Box2d
    }

    fn update_bodies(
        &mut self,
        bodies: &(impl Bodies<Vec2> + ?Sized),
        out: &mut UpdateOutcome,
    ) -> Result<(), BroadphaseError> {
        self.check_huge(bodies)?;
        self.store.update(bodies, out)?;
        if self.store.take_reshaped() {
            self.reconcile(out)?;
        } else {
            for i in 0..self.store.refattened.len() {
                let k = self.store.refattened[i] as usize;
                let fat = self.store.fat[k];
                self.refatten(self.proxies[k], &fat)?;
            }
        }
        // b2BroadPhase_RebuildTrees: every step, the enlarged part of the tree.
        if !self.ids.is_empty() {
            self.tree.rebuild(false);
        }
        if !(out.removed.is_empty() && out.reinserted.is_empty()) {
            self.dirty = true;
        }
        Ok(())
    }

    fn build(&mut self, bodies: &(impl Bodies<Vec2> + ?Sized)) -> Result<(), BroadphaseError> {
        self.check_huge(bodies)?;
        self.store.build(bodies)?;
        self.rebuild_from_store()
    }

    fn visit_pairs(&mut self, mut visit: impl FnMut(u32, u32)) -> Result<bool, BroadphaseError> {
        let recomputed = self.search()?;
        for (a, b) in self.id_pairs() {
            visit(a, b);
        }
        Ok(recomputed)
    }

    fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.store.bytes()
            + self.tree.byte_count()
            + (self.ids.capacity() + self.proxies.capacity()) * size_of::<u32>()
            + self.fat.capacity() * size_of::<Box2>()
            + self.body_of.capacity() * size_of::<u32>()
            + self.static_proxy.capacity()
            + self.moved.capacity()
            + self.move_buffer.capacity() * size_of::<u32>()
            + self.pair_set.capacity() * size_of::<u64>()
            + (self.pairs.capacity() + self.sorted.capacity()) * size_of::<(u32, u32)>()
            + self.static_ids.capacity() * size_of::<u32>()
    }
}

impl Broadphase for Box2dBroadphase {
    fn kind(&self) -> BroadphaseKind {
        BroadphaseKind::Box2d
    }

    fn update(&mut self, bodies: &[Body]) -> Result<UpdateOutcome, BroadphaseError> {
        self.update_from_scene(bodies)
    }

    fn build_from(&mut self, bodies: &[Body]) -> Result<(), BroadphaseError> {
        self.build_from_scene(bodies)
    }

    fn find_pairs(&mut self) -> Result<PairOutcome, BroadphaseError> {
        let recomputed = self.search()?;
        if !self.sorted_valid {
            let mut sorted = std::mem::take(&mut self.sorted);
            sorted.clear();
            sorted.extend(self.id_pairs());
            sorted.sort_unstable();
            self.sorted = sorted;
            self.sorted_valid = true;
        }
        Ok(PairOutcome {
            pairs: self.sorted.clone(),
            recomputed,
        })
    }

    fn set_pair_limit(&mut self, limit: usize) {
        self.pair_limit = limit;
        self.dirty = true;
    }

    /// The static bodies' proxies take the static category bits: the tree is made again from
    /// the bodies (pairs found afresh at the next search).
    fn set_static_ids(&mut self, ids: &[u32]) {
        self.store.set_static_ids(ids);
        self.static_ids = ids.to_vec();
        self.static_ids.sort_unstable();
        self.static_ids.dedup();
        if let Err(_checked_when_they_came) = self.rebuild_from_store() {
            // The store's boxes were each taken by the tree before; it takes them again.
        }
    }

    fn fat_aabb(&self, id: u32) -> Option<Aabb<Vec3>> {
        self.store.fat_aabb(id).map(|b| box_to_vec3(&b))
    }

    /// Box2D's nodes as read from its array (every link checked by `walk`): node ids are the
    /// array's indices, a leaf holds its body's id.
    fn foreign_tree(&self) -> Option<EngineTree> {
        use aabb_recorder::wire::{NodeKind as Kind, TreeNode};
        let nodes = self.tree.walk().ok()?;
        let nodes = nodes
            .into_iter()
            .map(|(index, n)| TreeNode {
                id: index,
                parent: n.parent,
                kind: match n.kind {
                    NodeKind::Leaf { user_data } => Kind::Leaf(user_data as u32),
                    NodeKind::Internal { child1, child2 } => Kind::Branch([child1, child2]),
                },
                min: [n.aabb.min.x, n.aabb.min.y, 0.0],
                max: [n.aabb.max.x, n.aabb.max.y, 0.0],
                height: u32::from(n.height),
                enlarged: n.enlarged,
            })
            .collect();
        Some(EngineTree {
            root: self.tree.root(),
            partial: false,
            nodes,
        })
    }

    /// New settings; when the margin or look-ahead changed, the tree is made again from the
    /// new fat boxes. Refused, changing nothing, when a fat box would reach `B2_HUGE`.
    fn set_config(&mut self, config: TreeConfig) -> Result<(), TreeError> {
        config.check()?;
        let (margin, lookahead) = (config.margin, config.velocity_lookahead);
        for (tight, &velocity) in self.store.tight.iter().zip(&self.store.velocity) {
            let f = fat_box(tight, velocity, margin, lookahead);
            let size = f.max - f.min;
            if size.x >= box2d_tree::HUGE || size.y >= box2d_tree::HUGE {
                return Err(TreeError::InvalidSetting {
                    name: "margin (with it a fat box reaches Box2D's limit B2_HUGE, 100000, \
                           which its tree refuses; the margin)",
                    value: margin,
                });
            }
        }
        let refatten =
            margin != self.store.config.margin || lookahead != self.store.config.velocity_lookahead;
        self.store.set_config(config);
        if refatten && let Err(_taken_before) = self.rebuild_from_store() {
            // Every fat box was checked against B2_HUGE above; the tree takes them.
        }
        self.dirty = true;
        Ok(())
    }

    /// `b2DynamicTree_Rebuild(tree, true)`: a full binned-SAH build (the pairs are kept).
    fn rebuild(&mut self) {
        self.tree.rebuild(true);
    }

    fn clone_box(&self) -> Box<dyn Broadphase> {
        Box::new(self.clone())
    }

    /// The store's ids and fat boxes, and the tree's nodes (index, box, links, height, flags).
    fn structure_hash(&self) -> u64 {
        let mut h = StructureHasher::new();
        h.word(self.store.structure_hash());
        match self.tree.walk() {
            Ok(nodes) => {
                h.word(nodes.len() as u64);
                for (index, node) in nodes {
                    h.word(u64::from(index));
                    h.aabb_in(0, &Aabb::new(node.aabb.min, node.aabb.max));
                    h.word(u64::from(node.height) | (u64::from(node.enlarged) << 16));
                    match node.kind {
                        NodeKind::Leaf { user_data } => h.word(user_data),
                        NodeKind::Internal { child1, child2 } => {
                            h.word((u64::from(child1) << 32) | u64::from(child2));
                        }
                    }
                }
            }
            Err(_) => h.word(u64::MAX),
        }
        h.finish()
    }

    fn heap_bytes(&self) -> usize {
        self.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::BruteForce;
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64;

    /// Bodies with ids `0..n` at random places in `[0, 20]²`, about `keep`% of them present.
    fn bodies(rng: &mut Pcg64, n: u32, keep: u64) -> Vec<Body<Vec2>> {
        let mut out = Vec::new();
        for id in 0..n {
            if rng.random_range(0..100) >= keep {
                continue;
            }
            let c = Vec2::new(rng.random_range(0.0..20.0), rng.random_range(0.0..20.0));
            let r = rng.random_range(0.1..1.0);
            out.push(Body {
                id,
                tight: Aabb::new(c - Vec2::splat(r), c + Vec2::splat(r)),
                velocity: Vec2::new(rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0)),
            });
        }
        out
    }

    fn visited(b: &mut impl BroadphaseCore<Vec2>) -> (Vec<(u32, u32)>, bool) {
        let mut pairs = Vec::new();
        let recomputed = b
            .visit_pairs(|a, c| {
                assert!(a < c);
                pairs.push((a, c));
            })
            .expect("under the limit");
        pairs.sort_unstable();
        (pairs, recomputed)
    }

    /// The tree as read from its nodes: one leaf per body, holding the body's id and fat box;
    /// the height and area ratio read equal Box2D's own; Box2D's validation passes.
    fn check_tree(b2: &Box2dBroadphase, now: &[Body<Vec2>]) {
        let tree = b2.tree();
        tree.validate();
        assert_eq!(tree.proxy_count() as usize, now.len());
        let mut leaves: Vec<(u32, Box2)> = tree
            .walk()
            .expect("a sound tree")
            .into_iter()
            .filter_map(|(_, n)| match n.kind {
                NodeKind::Leaf { user_data } => Some((user_data as u32, n.aabb)),
                NodeKind::Internal { .. } => None,
            })
            .collect();
        leaves.sort_unstable_by_key(|l| l.0);
        let expected: Vec<(u32, Box2)> = now
            .iter()
            .map(|b| {
                let fat = Broadphase::fat_aabb(b2, b.id).expect("present");
                (b.id, Box2::new(fat.min.truncate(), fat.max.truncate()))
            })
            .collect();
        assert_eq!(leaves, expected);
        let shape = tree.shape().expect("a sound tree");
        assert_eq!(shape.height, tree.height());
        assert_eq!(shape.area_ratio.to_bits(), tree.area_ratio().to_bits());
        // Read in the live link's tree shape (what the window draws and measures): every
        // node, one leaf a body (`stream::engine`'s tests validate and measure it there).
        let foreign = Broadphase::foreign_tree(b2).expect("Box2D's tree, read");
        assert_eq!(foreign.nodes.len() as u32, tree.node_count());
        let mut read: Vec<u32> = foreign
            .nodes
            .iter()
            .filter_map(|n| match n.kind {
                aabb_recorder::wire::NodeKind::Leaf(id) => Some(id),
                aabb_recorder::wire::NodeKind::Branch(_) => None,
            })
            .collect();
        read.sort_unstable();
        assert_eq!(read, leaves.iter().map(|l| l.0).collect::<Vec<u32>>());
    }

    /// Bodies that come, go, creep and jump, with a look-ahead: Box2D's broad phase reports
    /// what brute force reports (outcome, fat boxes, pairs, whether recomputed) at every step,
    /// its tree read from the nodes holds exactly the bodies, and enlarged proxies were
    /// rebuilt.
    #[test]
    fn box2d_agrees_with_brute_force_step_by_step() {
        let config = TreeConfig {
            margin: 0.3,
            velocity_lookahead: 0.1,
            ..TreeConfig::default()
        };
        let mut b2 = Box2dBroadphase::new(config);
        let mut brute = BruteForce::<Vec2>::new(config);
        let mut rng = Pcg64::seed_from_u64(36);
        let mut now = bodies(&mut rng, 150, 90);
        let (mut total, mut reinserted) = (0, 0);
        for step in 0..60usize {
            if step % 10 == 5 {
                now = bodies(&mut rng, 150, 80);
            } else {
                for (k, b) in now.iter_mut().enumerate() {
                    let shift = if (k + step) % 4 == 0 {
                        Vec2::new(rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0))
                    } else {
                        Vec2::splat(0.02)
                    };
                    b.tight = Aabb::new(b.tight.min + shift, b.tight.max + shift);
                }
            }
            let (mut o1, mut o2) = (UpdateOutcome::default(), UpdateOutcome::default());
            b2.update_bodies(&now, &mut o1).expect("usable");
            brute.update_bodies(&now, &mut o2).expect("usable");
            assert_eq!(o1, o2, "step {step}");
            reinserted += o1.reinserted.len();
            check_tree(&b2, &now);
            let expected = visited(&mut brute);
            total += expected.0.len();
            assert_eq!(visited(&mut b2), expected, "step {step}");
            // Nothing changed since: the same pairs, not recomputed.
            assert_eq!(visited(&mut b2), (expected.0.clone(), false));
            assert_eq!(
                Broadphase::find_pairs(&mut b2).expect("found").pairs,
                expected.0
            );
            assert!(
                b2.tree()
                    .walk()
                    .expect("sound")
                    .iter()
                    .all(|(_, n)| !n.enlarged),
                "step {step}: the partial rebuild leaves nothing enlarged"
            );
        }
        assert!(
            total > 1000 && reinserted > 1000,
            "{total} pairs, {reinserted}"
        );
    }

    /// A copy steps exactly as the original (same pairs, same tree); new settings, a lower
    /// pair limit and a bad body are handled as the other broad phases handle them.
    #[test]
    fn clone_settings_limit_and_refusals() {
        let config = TreeConfig {
            margin: 0.2,
            ..TreeConfig::default()
        };
        let mut rng = Pcg64::seed_from_u64(3);
        let mut b2 = Box2dBroadphase::new(config);
        let mut now = bodies(&mut rng, 100, 100);
        let mut out = UpdateOutcome::default();
        b2.update_bodies(&now, &mut out).expect("usable");
        let _ = visited(&mut b2);
        let mut copy = b2.clone();
        for b in &mut now {
            b.tight = Aabb::new(
                b.tight.min + Vec2::splat(0.5),
                b.tight.max + Vec2::splat(0.5),
            );
        }
        b2.update_bodies(&now, &mut out).expect("usable");
        let mut out2 = UpdateOutcome::default();
        copy.update_bodies(&now, &mut out2).expect("usable");
        assert_eq!(out, out2);
        assert_eq!(visited(&mut b2), visited(&mut copy));
        assert_eq!(b2.structure_hash(), copy.structure_hash());

        // A wider margin: every fat box recomputed, pairs by them.
        let wide = TreeConfig {
            margin: 1.0,
            ..config
        };
        Broadphase::set_config(&mut b2, wide).expect("valid");
        let mut brute = BruteForce::<Vec2>::new(wide);
        brute.update_bodies(&now, &mut out2).expect("usable");
        let expected = visited(&mut brute).0;
        assert!(expected.len() > 50, "{} pairs", expected.len());
        assert_eq!(visited(&mut b2).0, expected);
        check_tree(&b2, &now);

        // A limit below the pairs: refused; raised again, all of them.
        Broadphase::set_pair_limit(&mut b2, expected.len() - 1);
        assert_eq!(
            Broadphase::find_pairs(&mut b2),
            Err(BroadphaseError::PairLimit {
                limit: expected.len() - 1,
                static_boxes: false
            })
        );
        Broadphase::set_pair_limit(&mut b2, expected.len());
        assert_eq!(
            Broadphase::find_pairs(&mut b2).map(|p| p.pairs),
            Ok(expected.clone())
        );

        // A body whose fat box passes B2_HUGE, or that is not finite: refused, nothing changed.
        let mut bad = now.clone();
        bad[7].tight.max.x = 3.0e5;
        let e = b2.update_bodies(&bad, &mut out).expect_err("huge");
        assert!(e.to_string().contains("B2_HUGE"), "{e}");
        bad[7].tight.max.x = f32::NAN;
        let e = b2.update_bodies(&bad, &mut out).expect_err("NaN");
        assert!(e.to_string().contains("not finite"), "{e}");
        b2.update_bodies(&now, &mut out).expect("usable");
        assert!(out.reinserted.is_empty() && out.added.is_empty());
        assert_eq!(visited(&mut b2).0, expected);
        check_tree(&b2, &now);
        let huge = TreeConfig {
            margin: 6.0e4,
            ..config
        };
        assert!(Broadphase::set_config(&mut b2, huge).is_err());
        assert_eq!(visited(&mut b2).0, expected);
    }
}
