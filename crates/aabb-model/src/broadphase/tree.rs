//! The dynamic AABB tree as a broad phase: one proxy per body, reinserted only when its tight
//! box leaves its fat box; pairs from the tree's own pair finder.

use super::{
    Bodies, Body, Broadphase, BroadphaseCore, BroadphaseError, BroadphaseKind, DEFAULT_PAIR_LIMIT,
    PairOutcome, SceneVector, TreeRef, UpdateOutcome, box_to_vec3, check_bodies,
    check_bodies_against, sorted_bodies,
};
use crate::tree::{
    Aabb, DynamicTree, MoveBatch, ProxyId, TreeConfig, TreeError, TreeEvent, TreeStats, WorkCounts,
};
use glam::Vec3;

/// A [`DynamicTree`] keyed by body id; made by [`super::make`] it records its events for the
/// debugger.
#[derive(Clone, Debug)]
pub struct TreeBroadphase<V: SceneVector> {
    tree: DynamicTree<V, u32>,
    /// Body ids, ascending; `handles.ids()[k]` is the proxy of body `ids[k]` (two arrays, so
    /// the step's id check reads only the ids). The tree checks the handles once, not on
    /// every step ([`MoveBatch`]).
    ids: Vec<u32>,
    /// True when `ids[k] == k` for every `k` (bodies numbered by their places, as a
    /// simulation's array of bodies is): see [`Bodies::ids_are_positions`].
    ids_are_positions: bool,
    handles: MoveBatch,
    /// The body id of each proxy slot (`ProxyId::index`): pairs come from the tree as slots.
    id_of_slot: Vec<u32>,
    /// The pairs of the last search as body ids, sorted, when `sorted_valid`.
    pairs: Vec<(u32, u32)>,
    sorted_valid: bool,
    /// True when proxies came or went since the last search (the tree says the rest).
    changed: bool,
    /// Pairs found on rayon's thread pool ([`DynamicTree::update_pairs_parallel`]).
    parallel: bool,
    /// Ids of the static bodies, sorted ([`Broadphase::set_static_ids`]).
    static_ids: Vec<u32>,
    /// Per proxy slot, true for a static body; empty when there are none.
    static_slot: Vec<bool>,
}

impl<V: SceneVector> TreeBroadphase<V> {
    /// An empty tree broad phase that does not record events; an error when the margin or
    /// look-ahead is bad.
    pub fn new(config: TreeConfig) -> Result<Self, TreeError> {
        let mut tree = DynamicTree::try_new(config)?;
        tree.set_pair_limit(DEFAULT_PAIR_LIMIT);
        Ok(Self {
            tree,
            ids: Vec::new(),
            ids_are_positions: true,
            handles: MoveBatch::default(),
            id_of_slot: Vec::new(),
            pairs: Vec::new(),
            sorted_valid: false,
            changed: true,
            parallel: false,
            static_ids: Vec::new(),
            static_slot: Vec::new(),
        })
    }

    /// Records the tree's events (for [`Broadphase::take_events`]) or stops recording them.
    pub fn set_recording(&mut self, on: bool) {
        self.tree.set_recording(on);
    }

    /// Finds pairs on rayon's thread pool ([`DynamicTree::update_pairs_parallel`]) or on the
    /// calling thread (the default); the pairs are the same.
    pub fn set_parallel(&mut self, on: bool) {
        self.parallel = on;
    }

    /// The tree itself.
    #[must_use]
    pub fn tree(&self) -> &DynamicTree<V, u32> {
        &self.tree
    }

    /// Moves `proxy` to `body`'s box and velocity; true when the tree reinserted it.
    #[inline]
    fn move_to(&mut self, proxy: ProxyId, body: &Body<V>) -> Result<bool, BroadphaseError> {
        match self.tree.move_proxy(proxy, body.tight, body.velocity) {
            Ok(moved) => Ok(moved),
            Err(e) => Err(refused(body.id, &e)),
        }
    }

    /// [`BroadphaseCore::build`] from bodies already checked and in strictly increasing id
    /// order: one batch creation that asks for each body in place (no copy of them all).
    fn build_sorted(&mut self, bodies: &(impl Bodies<V> + ?Sized)) -> Result<(), BroadphaseError> {
        let mut tree = DynamicTree::try_new(*self.tree.config())?;
        tree.set_recording(self.tree.is_recording());
        tree.set_pair_limit(self.tree.pair_limit());
        let created = tree.create_proxies_with(bodies.len(), |k| {
            let b = bodies.body(k);
            (b.tight, b.velocity, b.id)
        })?;
        self.tree = tree;
        self.id_of_slot.clear();
        self.static_slot.clear();
        self.ids.clear();
        self.ids
            .extend((0..bodies.len()).map(|k| bodies.body(k).id));
        self.ids.shrink_to_fit();
        self.ids_are_positions = positions(&self.ids);
        for (k, &proxy) in created.iter().enumerate() {
            self.record_slot(proxy, self.ids[k]);
        }
        self.handles = MoveBatch::new(created);
        Ok(())
    }

    fn record_slot(&mut self, proxy: ProxyId, id: u32) {
        let slot = proxy.index as usize;
        if self.id_of_slot.len() <= slot {
            self.id_of_slot.resize(slot + 1, u32::MAX);
        }
        self.id_of_slot[slot] = id;
        if !self.static_ids.is_empty() {
            self.static_slot.resize(self.id_of_slot.len(), false);
            self.static_slot[slot] = self.static_ids.binary_search(&id).is_ok();
        }
    }

    fn proxy(&self, id: u32) -> Option<ProxyId> {
        self.ids
            .binary_search(&id)
            .ok()
            .map(|k| self.handles.ids()[k])
    }

    /// Brings the tree's pairs up to date; true when they were recomputed.
    fn search(&mut self) -> Result<bool, BroadphaseError> {
        let update = if self.parallel {
            self.tree.update_pairs_parallel()
        } else {
            self.tree.update_pairs()
        };
        let update = match update {
            Ok(update) => update,
            Err(TreeError::PairLimit { limit }) => {
                self.pairs.clear();
                self.sorted_valid = false;
                self.changed = true;
                return Err(BroadphaseError::PairLimit {
                    limit,
                    static_boxes: super::holds_static(&self.ids, &self.static_ids),
                });
            }
            Err(e) => return Err(e.into()),
        };
        let recomputed = update.recomputed || self.changed;
        if recomputed {
            self.sorted_valid = false;
            self.changed = false;
        }
        Ok(recomputed)
    }

    /// The current pairs as body ids, `a < b`, in the tree's order, without the pairs of two
    /// static bodies (which the tree holds and counts towards its pair limit).
    fn id_pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let statics = &self.static_slot;
        let both_static = move |a: u32, b: u32| {
            !statics.is_empty()
                && statics.get(a as usize).copied().unwrap_or(false)
                && statics.get(b as usize).copied().unwrap_or(false)
        };
        self.tree
            .pair_indices()
            .iter()
            .filter(move |&&(a, b)| !both_static(a, b))
            .map(|&(a, b)| {
                let (a, b) = (self.id_of_slot[a as usize], self.id_of_slot[b as usize]);
                if a < b { (a, b) } else { (b, a) }
            })
    }
}

/// True when `ids[k] == k` for every `k`.
fn positions(ids: &[u32]) -> bool {
    ids.iter().enumerate().all(|(k, &id)| id as usize == k)
}

/// The error for a body the tree refused (kept out of line: the step's loop never takes it).
#[cold]
#[inline(never)]
fn refused(id: u32, error: &TreeError) -> BroadphaseError {
    BroadphaseError::Body {
        noun: "sphere",
        id,
        reason: error.to_string(),
    }
}

/// The error for a batch of moves the tree refused: the body of the item it names.
#[cold]
#[inline(never)]
fn batch_refused<V: SceneVector>(
    bodies: &(impl Bodies<V> + ?Sized),
    error: TreeError,
) -> BroadphaseError {
    match error {
        TreeError::InBatch { index, error } => refused(bodies.body(index).id, &error),
        error => error.into(),
    }
}

impl<V: SceneVector> BroadphaseCore<V> for TreeBroadphase<V> {
    fn kind(&self) -> BroadphaseKind {
        BroadphaseKind::Tree
    }

    fn update_bodies(
        &mut self,
        bodies: &(impl Bodies<V> + ?Sized),
        out: &mut UpdateOutcome,
    ) -> Result<(), BroadphaseError> {
        // Every body is checked first, so a refused one changes nothing (the tree would refuse
        // the same ones, but only after moving those before it).
        let ids = &self.ids;
        let config = self.tree.config();
        // Bodies numbered by their places, as these were, need no id compared: the same ones
        // when there are as many.
        let same = if self.ids_are_positions
            && bodies.ids_are_positions()
            && bodies.known_usable(config)
        {
            bodies.len() == ids.len()
        } else {
            check_bodies_against(bodies, config, ids.len(), |k| ids[k])?
        };
        out.reinserted.clear();
        out.added.clear();
        out.removed.clear();
        // The usual step: the same bodies as last time, each only moved: one batch (the tree
        // checks the handles only when proxies came or went, tests every box against its fat
        // box in one loop and moves those that left, in order, reading ahead for them on a
        // large tree; the tree and the outcome are those of moving every body in order).
        if same {
            let reinserted = &mut out.reinserted;
            return self
                .tree
                .move_batch_with(
                    &mut self.handles,
                    |k| {
                        let body = bodies.body(k);
                        (body.tight, body.velocity)
                    },
                    |k| reinserted.push(bodies.body(k).id),
                )
                .map(|_| ())
                .map_err(|e| batch_refused(bodies, e));
        }
        let owned = bodies.to_vec();
        let bodies = sorted_bodies(&owned);
        // Stage 1: remove the proxies of bodies that are gone, so their nodes can be reused.
        let mut kept = Vec::with_capacity(self.ids.len());
        let mut next = bodies.iter().peekable();
        for (&id, &proxy) in self.ids.iter().zip(self.handles.ids()) {
            while next.next_if(|b| b.id < id).is_some() {}
            if next.peek().is_some_and(|b| b.id == id) {
                kept.push((id, proxy));
            } else {
                self.tree.destroy_proxy(proxy)?;
                out.removed.push(id);
            }
        }
        // Stage 2: move the bodies that stay and create the new ones, in id order.
        let mut ids = Vec::with_capacity(bodies.len());
        let mut handles = Vec::with_capacity(bodies.len());
        let mut old = kept.into_iter().peekable();
        for body in bodies.iter() {
            match old.next_if(|&(id, _)| id == body.id) {
                Some((id, proxy)) => {
                    if self.move_to(proxy, body)? {
                        out.reinserted.push(id);
                    }
                    ids.push(id);
                    handles.push(proxy);
                }
                None => {
                    let proxy = self
                        .tree
                        .create_proxy(body.tight, body.velocity, body.id)
                        .map_err(|e| refused(body.id, &e))?;
                    self.record_slot(proxy, body.id);
                    ids.push(body.id);
                    handles.push(proxy);
                    out.added.push(body.id);
                    out.reinserted.push(body.id);
                }
            }
        }
        if !(out.added.is_empty() && out.removed.is_empty()) {
            self.changed = true;
        }
        self.ids_are_positions = positions(&ids);
        self.ids = ids;
        self.handles = MoveBatch::new(handles);
        Ok(())
    }

    fn build(&mut self, bodies: &(impl Bodies<V> + ?Sized)) -> Result<(), BroadphaseError> {
        check_bodies(bodies, self.tree.config())?;
        // Bodies in id order (the usual case) go to the tree as they are; others are copied
        // and sorted first (a million bodies are 28 MB a copy in 2D).
        let in_order = (1..bodies.len()).all(|k| bodies.body(k - 1).id < bodies.body(k).id);
        if in_order {
            self.build_sorted(bodies)?;
        } else {
            self.build_sorted(sorted_bodies(&bodies.to_vec()).as_ref())?;
        }
        self.changed = true;
        self.sorted_valid = false;
        Ok(())
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
        self.tree.bytes()
            + self.ids.capacity() * size_of::<u32>()
            + self.handles.bytes()
            + self.id_of_slot.capacity() * size_of::<u32>()
            + self.pairs.capacity() * size_of::<(u32, u32)>()
            + self.static_ids.capacity() * size_of::<u32>()
            + self.static_slot.capacity()
    }
}

impl<V: SceneVector> Broadphase for TreeBroadphase<V> {
    fn kind(&self) -> BroadphaseKind {
        BroadphaseKind::Tree
    }

    fn update(&mut self, bodies: &[Body]) -> Result<UpdateOutcome, BroadphaseError> {
        self.update_from_scene(bodies)
    }

    fn build_from(&mut self, bodies: &[Body]) -> Result<(), BroadphaseError> {
        self.build_from_scene(bodies)
    }

    fn set_pair_limit(&mut self, limit: usize) {
        self.tree.set_pair_limit(limit);
        self.changed = true;
    }

    fn set_static_ids(&mut self, ids: &[u32]) {
        self.static_ids = ids.to_vec();
        self.static_ids.sort_unstable();
        self.static_ids.dedup();
        self.static_slot.clear();
        if !self.static_ids.is_empty() {
            self.static_slot.resize(self.id_of_slot.len(), false);
            for (&id, proxy) in self.ids.iter().zip(self.handles.ids()) {
                self.static_slot[proxy.index as usize] = self.static_ids.binary_search(&id).is_ok();
            }
        }
        self.changed = true;
    }

    fn find_pairs(&mut self) -> Result<PairOutcome, BroadphaseError> {
        let recomputed = self.search()?;
        if !self.sorted_valid {
            // Refilled in place: a fresh buffer a step cost page faults at 10,000 spheres.
            let mut pairs = std::mem::take(&mut self.pairs);
            pairs.clear();
            pairs.extend(self.id_pairs());
            pairs.sort_unstable();
            self.pairs = pairs;
            self.sorted_valid = true;
        }
        Ok(PairOutcome {
            pairs: self.pairs.clone(),
            recomputed,
        })
    }

    fn fat_aabb(&self, id: u32) -> Option<Aabb<Vec3>> {
        let proxy = self.proxy(id)?;
        self.tree.fat_aabb(proxy).ok().map(|b| box_to_vec3(&b))
    }

    fn set_config(&mut self, config: TreeConfig) -> Result<(), TreeError> {
        self.tree.set_config(config)?;
        self.changed = true;
        Ok(())
    }

    fn tree_stats(&self) -> Option<TreeStats> {
        Some(self.tree.stats())
    }

    fn take_events(&mut self) -> Vec<TreeEvent> {
        self.tree.take_events()
    }

    fn tree_view(&self) -> Option<TreeRef<'_>> {
        Some(V::tree_view(&self.tree))
    }

    fn rebuild(&mut self) {
        self.tree.rebuild();
    }

    fn work_counts(&self) -> Option<WorkCounts> {
        Some(self.tree.work())
    }

    fn clone_box(&self) -> Box<dyn Broadphase> {
        Box::new(self.clone())
    }

    fn structure_hash(&self) -> u64 {
        self.tree.structure_hash()
    }

    fn heap_bytes(&self) -> usize {
        self.bytes()
    }
}

/// A short label of a configuration, e.g. `SA+rot, self, reinsert`.
#[must_use]
pub fn config_label(config: &TreeConfig) -> String {
    let insertion = config.insertion.short();
    let balancing = config.balancing.short();
    let pairs = config.pairs.short();
    let update = config.update.short();
    format!("{insertion}+{balancing}, {pairs}, {update}")
}
