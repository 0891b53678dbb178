//! Creating, destroying and moving proxies, fat boxes (margin and velocity look-ahead), and
//! changing the settings at run time.

use super::node::{ALIVE, GENERATION_MASK, MAX_PROXIES, MOVED, NULL, Node, ProxySlot, RETIRED};
use super::{
    Aabb, Balancing, DynamicTree, InsertionCost, MoveBatch, PairMethod, ProxyId, RebuildMethod,
    TreeConfig, TreeError, TreeEvent, UpdateMode, Vector, check_setting, fresh_live_stamp,
};

/// How many ancestors up `LocalReinsert` looks for one whose box holds a moved leaf's new fat
/// box before it reinserts the leaf instead of refitting in place (2: parent and grandparent,
/// the fastest on the standard workload; more leaves the tree looser and the pair search
/// slower).
const LOCAL_REFIT_LEVELS: usize = 2;

/// How many proxies [`DynamicTree::warm_moves`] reads ahead side by side.
const WARM_CLIMBS: usize = 16;

/// How many nodes of each proxy [`DynamicTree::warm_moves`] reads: the leaf and five
/// ancestors (where a move looks for an ancestor holding its new box, and the path its refit
/// walks). At 1,000,000 circles 6 gained more than 3 and as much as 10 (with 16 proxies side
/// by side, which gained more than 8).
const WARM_LEVELS: u32 = 6;

/// From this many live proxies [`DynamicTree::move_batch_with`] goes in runs of
/// [`WARM_RUN`] moves and reads ahead for the moves of a run that leave their fat boxes
/// before it makes them (the nodes read stay in the cache in between). On the standard
/// workload (paired against parry2d, three alternated runs each, 2026-11-28): at 1,000,000
/// circles the mean step 0.90 of the step with the broad phase's own reading ahead (which
/// checked every handle); at 100,000 0.92 of the mean step without reading ahead, and 1.06
/// of its median step. (Measured before: at 10,000 reading ahead cost 10%.) The crate's unit
/// tests read ahead from 250 proxies, in runs of 16, so that their batches take this path.
const WARM_MIN_LIVE: usize = if cfg!(test) { 250 } else { 1 << 16 };

/// Moves a run of [`DynamicTree::move_batch_with`] takes on a large tree (see
/// [`WARM_MIN_LIVE`]).
const WARM_RUN: usize = if cfg!(test) { 16 } else { 256 };

/// A move of a batch whose tight box left its fat box: its position in the batch, its proxy
/// slot, its leaf and its new fat box.
pub(crate) type BatchMove<V> = (usize, u32, u32, Aabb<V>);

/// The fat box of a proxy: `tight` grown by `margin` on every side, then stretched by
/// `velocity * lookahead_secs` on the side it moves towards (Choi's `update_aabb(delta_t)`).
/// Other broad phases call this too, so their fat boxes equal the tree's to the bit.
#[must_use]
#[inline]
pub fn fat_box<V: Vector>(
    tight: &Aabb<V>,
    velocity: V,
    margin: f32,
    lookahead_secs: f32,
) -> Aabb<V> {
    let grown = tight.grown(margin);
    if lookahead_secs == 0.0 {
        return grown;
    }
    let d = velocity * lookahead_secs;
    let zero = V::splat(0.0);
    Aabb {
        min: grown.min + d.min_by_component(zero),
        max: grown.max + d.max_by_component(zero),
    }
}

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// The fat box for a tight box and velocity under the current settings; an error when it
    /// overflows to infinity.
    fn checked_fat(&self, tight: &Aabb<V>, velocity: V) -> Result<Aabb<V>, TreeError> {
        tight.check()?;
        if !velocity.all_finite() {
            return Err(TreeError::NonFinite);
        }
        let fat = fat_box(
            tight,
            velocity,
            self.config.margin,
            self.config.velocity_lookahead,
        );
        fat.check()?;
        Ok(fat)
    }

    /// Adds a proxy with a tight box and velocity; its leaf gets the fat box.
    pub fn create_proxy(
        &mut self,
        tight: Aabb<V>,
        velocity: V,
        user: T,
    ) -> Result<ProxyId, TreeError> {
        let fat = self.checked_fat(&tight, velocity)?;
        // Each proxy needs a leaf and (but the first) a branch.
        if self.live as usize >= MAX_PROXIES {
            return Err(TreeError::Full(self.live as usize));
        }
        let leaf = self.new_proxy_leaf(tight, velocity, user, fat, true)?;
        self.insert_leaf(leaf)?;
        let id = self.proxy_id(self.nodes[leaf as usize].child1);
        self.record(TreeEvent::Insert(id));
        Ok(id)
    }

    /// Adds many proxies at once (tight box, velocity, user data each), then builds the tree
    /// over every leaf, old and new, by the configured [`RebuildMethod`]
    /// ([`DynamicTree::rebuild`]): faster than
    /// one insertion at a time and a better tree, with the storage reserved exactly. Handles
    /// come in input order. Every item is checked first: an error names the first bad one
    /// and nothing is added.
    pub fn create_proxies(&mut self, items: &[(Aabb<V>, V, T)]) -> Result<Vec<ProxyId>, TreeError> {
        self.create_proxies_with(items.len(), |k| items[k])
    }

    /// [`DynamicTree::create_proxies`] with the items given by `item(k)` for `k` in
    /// `0..count`, each asked for once, in order: a caller whose objects are not already a
    /// slice of tuples need not copy them all into one (at a million items that copy is
    /// 28 MB in 2D). The same checks, errors and result; on an error nothing is added.
    pub fn create_proxies_with(
        &mut self,
        count: usize,
        mut item: impl FnMut(usize) -> (Aabb<V>, V, T),
    ) -> Result<Vec<ProxyId>, TreeError> {
        let total = self.live as usize + count;
        if total > MAX_PROXIES {
            return Err(TreeError::Full(self.live as usize));
        }
        let free_slots = self.proxies.len() - self.live as usize - self.retired as usize;
        // Slot indices stay below `NULL` (retired slots keep theirs).
        if self.proxies.len() + count.saturating_sub(free_slots) > NULL as usize {
            return Err(TreeError::Full(self.live as usize));
        }
        // Stage 1: exact room (the pool's free nodes are used first; the rest is pushed), or
        // an error when the allocator has none.
        let failed = |_| TreeError::AllocationFailed { requested: count };
        self.proxies
            .try_reserve_exact(count.saturating_sub(free_slots))
            .map_err(failed)?;
        let nodes_needed = (2 * total).saturating_sub(1);
        self.nodes
            .try_reserve_exact(nodes_needed.saturating_sub(self.nodes.len()))
            .map_err(failed)?;
        // Stage 2: a checked proxy with a detached leaf for each item; on the first bad one,
        // every proxy made so far is taken back.
        let mark = BatchMark::of(self);
        // Into an empty tree every pair is new: the next pair update finds them all by one
        // walk, with no move buffer (4 bytes a proxy, at the batch's peak of memory).
        let track_moved = self.live > 0;
        // A large batch into a new tree (nothing in the pool or the proxy table) by binned
        // SAH is built straight in walk order: its slots get their leaves from the build.
        let in_walk_order = self.nodes.is_empty()
            && self.proxies.is_empty()
            && count >= super::layout::LAYOUT_MIN_LEAVES
            && self.config.rebuild == super::RebuildMethod::BinnedSah;
        let mut ids = Vec::new();
        ids.try_reserve_exact(count).map_err(failed)?;
        let mut leaves = std::mem::take(&mut self.build_items);
        leaves.clear();
        if !in_walk_order && let Err(e) = leaves.try_reserve_exact(count) {
            self.build_items = leaves;
            return Err(failed(e));
        }
        for index in 0..count {
            let (tight, velocity, user) = item(index);
            let made = self.checked_fat(&tight, velocity).and_then(|fat| {
                if in_walk_order {
                    // No leaf yet (`NULL`): the build makes it.
                    Ok(self.new_slot(tight, velocity, user, fat, NULL))
                } else {
                    let leaf = self.new_proxy_leaf(tight, velocity, user, fat, track_moved)?;
                    leaves.push(leaf);
                    Ok(self.nodes[leaf as usize].child1)
                }
            });
            match made {
                Ok(slot) => ids.push(self.proxy_id(slot)),
                Err(error) => {
                    self.undo_batch(&mark, &leaves);
                    leaves.clear();
                    self.build_items = leaves;
                    return Err(TreeError::InBatch {
                        index,
                        error: Box::new(error),
                    });
                }
            }
        }
        if !track_moved && count > 0 {
            self.pairs_stale = true;
            self.pairs_full = true;
        }
        // Stage 3: one build over the old tree's leaves and the new ones.
        if in_walk_order {
            self.build_items = Vec::new();
            self.build_binned_in_walk_order(count);
        } else {
            self.build_items = leaves;
            self.rebuild_with_detached();
            // A batch is rare: do not keep scratch lists as long as the tree (and let them
            // go before the renumbering, which needs room of its own).
            self.build_items = Vec::new();
            self.ploc = super::rebuild::PlocScratch::default();
            self.compact_layout_from(super::layout::LAYOUT_MIN_LEAVES);
        }
        for &id in &ids {
            self.record(TreeEvent::Insert(id));
        }
        Ok(ids)
    }

    /// Takes back the proxies a batch made (`leaves`, detached, in the order made) since
    /// `mark`: their slots and leaf nodes go back where they came from (the free lists in
    /// their old order, or off the end of the table and pool), and the move buffer, counts
    /// and flags are as they were.
    fn undo_batch(&mut self, mark: &BatchMark, leaves: &[u32]) {
        self.live_stamp = 0;
        for &leaf in leaves.iter().rev() {
            let slot = self.nodes[leaf as usize].child1;
            if (slot as usize) < mark.proxies {
                let s = &mut self.proxies[slot as usize];
                s.state &= !ALIVE;
                s.leaf = self.free_proxy;
                self.free_proxy = slot;
            }
            if (leaf as usize) < mark.nodes {
                self.free_node(leaf);
            }
        }
        self.proxies.truncate(mark.proxies);
        self.nodes.truncate(mark.nodes);
        for &slot in &self.moved[mark.moved..] {
            if let Some(s) = self.proxies.get_mut(slot as usize) {
                s.state &= !MOVED;
            }
        }
        self.moved.truncate(mark.moved);
        self.live = mark.live;
        self.pairs_stale = mark.pairs_stale;
        self.pairs_full = mark.pairs_full;
        self.allocs_since_layout = mark.allocs_since_layout;
    }

    /// A new proxy slot with a detached leaf holding `fat`; returns the leaf. Counts the proxy
    /// live and, with `track_moved`, puts it in the move buffer.
    fn new_proxy_leaf(
        &mut self,
        tight: Aabb<V>,
        velocity: V,
        user: T,
        fat: Aabb<V>,
        track_moved: bool,
    ) -> Result<u32, TreeError> {
        // Slot indices stay below `NULL` (retired slots keep theirs).
        if self.free_proxy == NULL && self.proxies.len() >= NULL as usize {
            return Err(TreeError::Full(self.live as usize));
        }
        let leaf = self.alloc_node()?;
        let index = self.new_slot(tight, velocity, user, fat, leaf);
        self.nodes[leaf as usize] = Node::leaf(fat, index);
        if track_moved {
            self.mark_moved(index);
        }
        Ok(leaf)
    }

    /// A new live proxy slot (from the free list, or pushed) with leaf `leaf`; returns its
    /// index. Counts the proxy live.
    fn new_slot(&mut self, tight: Aabb<V>, velocity: V, user: T, fat: Aabb<V>, leaf: u32) -> u32 {
        self.live_stamp = 0;
        let index = if self.free_proxy != NULL {
            let index = self.free_proxy;
            let slot = &mut self.proxies[index as usize];
            self.free_proxy = slot.leaf;
            slot.fat = fat;
            slot.tight = tight;
            slot.velocity = velocity;
            slot.user = user;
            slot.leaf = leaf;
            slot.state = (slot.state & (GENERATION_MASK | MOVED)) | ALIVE;
            index
        } else {
            let index = self.proxies.len() as u32;
            self.proxies.push(ProxySlot {
                fat,
                tight,
                velocity,
                user,
                leaf,
                state: ALIVE,
            });
            index
        };
        self.live += 1;
        index
    }

    /// Removes a proxy and returns its user data. The handle (and every copy of it) becomes
    /// stale.
    pub fn destroy_proxy(&mut self, id: ProxyId) -> Result<T, TreeError> {
        let slot = *self.slot(id)?;
        let user = slot.user;
        // The pairs name slots; fix their handles before this one's generation changes.
        self.freeze_pair_ids();
        self.remove_leaf(slot.leaf);
        self.free_node(slot.leaf);
        // In the move buffer, so the next pair update drops the pairs that name the slot.
        self.mark_moved(id.index);
        self.live_stamp = 0;
        let free_proxy = self.free_proxy;
        let s = &mut self.proxies[id.index as usize];
        // A new generation, not alive. `MOVED` stays: it says the slot index is already in the
        // move buffer, so a create/destroy cycle between two `update_pairs` does not push it
        // again (the buffer would grow without bound).
        let generation = (s.generation() + 1).min(RETIRED);
        s.state = generation | (s.state & MOVED);
        if generation == RETIRED {
            // The generations are used up: the slot is retired, never reused, so no handle
            // of it can name a later proxy (one slot lost per 2^30 - 1 destroys of it).
            s.leaf = NULL;
            self.retired += 1;
        } else {
            s.leaf = free_proxy;
            self.free_proxy = id.index;
        }
        self.live -= 1;
        self.pairs_stale = true;
        self.record(TreeEvent::Remove(id));
        Ok(user)
    }

    /// Reads ahead what [`DynamicTree::move_proxy`] reads first for each of `moves` (a handle
    /// and its coming tight box) whose tight box has left its fat box: the leaf and the
    /// ancestors above it, sixteen proxies side by side, so that their reads from
    /// memory are in flight together rather than one after another when the moves come.
    /// A hint for a batch of moves about to be made: it changes nothing, and skips stale
    /// handles and the proxies that will stay in place.
    pub fn warm_moves(&self, moves: impl IntoIterator<Item = (ProxyId, Aabb<V>)>) {
        self.warm_leaves(moves.into_iter().filter_map(|(id, tight)| {
            let slot = self.slot(id).ok()?;
            (!slot.fat.contains(&tight)).then_some(slot.leaf)
        }));
    }

    /// [`DynamicTree::warm_moves`] for the leaves themselves: reads each leaf and the
    /// ancestors above it, sixteen side by side.
    fn warm_leaves(&self, mut leaves: impl Iterator<Item = u32>) {
        let nodes = &self.nodes;
        let mut climbs = [(NULL, 0u32); WARM_CLIMBS];
        // Every index read goes into `seen`, which is kept (`black_box`), so the reads are made.
        let mut seen = 0u32;
        loop {
            let mut any = false;
            for climb in &mut climbs {
                if climb.0 == NULL || climb.1 == 0 {
                    *climb = match leaves.next() {
                        Some(leaf) => (leaf, WARM_LEVELS),
                        None => (NULL, 0),
                    };
                }
                let (index, left) = *climb;
                if index == NULL {
                    continue;
                }
                any = true;
                let parent = nodes[index as usize].parent;
                seen ^= parent;
                *climb = (parent, left - 1);
            }
            if !any {
                break;
            }
        }
        std::hint::black_box(seen);
    }

    /// The move of [`DynamicTree::move_proxy`] when it changes nothing in the tree: when the
    /// new tight box is inside the proxy's fat box (containment with `<=`), the proxy takes it
    /// and the velocity, and this returns true. Otherwise it changes nothing and returns
    /// false: the box left (or is not usable), for `move_proxy` to move the leaf (or name what
    /// is wrong). A stale handle is an error.
    pub fn move_within_fat(
        &mut self,
        id: ProxyId,
        tight: Aabb<V>,
        velocity: V,
    ) -> Result<bool, TreeError> {
        let fat = self.slot(id)?.fat;
        // A box inside the (always finite) fat box is finite, so only its orientation and the
        // velocity are left to check; anything else is for `move_proxy`, which reports the
        // errors in its order.
        if fat.contains(&tight) && tight.min.all_le(tight.max) && velocity.all_finite() {
            // One leaf visit: the containment test.
            self.moves_tested += 1;
            let slot = &mut self.proxies[id.index as usize];
            slot.tight = tight;
            slot.velocity = velocity;
            return Ok(true);
        }
        Ok(false)
    }

    /// Gives a proxy a new tight box and velocity. Returns true when the tight box had left the
    /// fat box (containment with `<=`) and the leaf got a new fat box (reinserted, refit in
    /// place or enlarged, as the [`UpdateMode`] says); false when nothing in the tree changed.
    pub fn move_proxy(
        &mut self,
        id: ProxyId,
        tight: Aabb<V>,
        velocity: V,
    ) -> Result<bool, TreeError> {
        if self.move_within_fat(id, tight, velocity)? {
            return Ok(false);
        }
        let leaf = self.slot(id)?.leaf;
        // One leaf visit: the containment test (the rest of the work is counted where it is
        // done).
        self.moves_tested += 1;
        tight.check()?;
        if !velocity.all_finite() {
            return Err(TreeError::NonFinite);
        }
        let fat = self.checked_fat(&tight, velocity)?;
        let slot = &mut self.proxies[id.index as usize];
        slot.tight = tight;
        slot.velocity = velocity;
        self.relocate_leaf(id, leaf, fat)?;
        Ok(true)
    }

    /// Moves many proxies at once: move `k`, for `k` in `0..count`, is `item(k)`, a handle
    /// with its proxy's new tight box and velocity. `reinserted(k)` is called, in increasing
    /// `k`, for each move whose tight box had left its fat box (where
    /// [`DynamicTree::move_proxy`] returns true); the count of those is returned.
    ///
    /// The outcome is exactly that of `move_proxy` on each item in turn: the same tree, fat
    /// and tight boxes, velocities, move buffer, events and work counts. It costs less: the
    /// handles are checked and the boxes tested against their fat boxes in one tight loop,
    /// and the moves that leave their fat boxes are made after it, in order (a move that
    /// stays changes nothing in the tree, so it cannot change what the others do).
    ///
    /// Every item is checked before anything changes: a stale handle, a handle given twice
    /// ([`TreeError::DuplicateInBatch`]), a box or velocity that is not finite, an inverted box
    /// or a fat box that would overflow is refused as [`TreeError::InBatch`] naming the first
    /// bad item and its error (the one `move_proxy` would give), and the tree is left as it
    /// was. `item` is asked twice for each `k` (to check, then to apply) and must give the
    /// same answer both times.
    pub fn move_proxies_with(
        &mut self,
        count: usize,
        item: impl Fn(usize) -> (ProxyId, Aabb<V>, V),
        mut reinserted: impl FnMut(usize),
    ) -> Result<usize, TreeError> {
        // Stage 1: check every item and list those that leave their fat boxes, with their
        // new fat boxes; nothing changes.
        let mut leaving = std::mem::take(&mut self.batch_leaving);
        leaving.clear();
        let checked = self.check_moves(count, &item, &mut leaving);
        if let Err(error) = checked {
            self.batch_leaving = leaving;
            return Err(error);
        }
        // Stage 2: every proxy takes its tight box and velocity (one leaf visit each: the
        // containment test).
        for k in 0..count {
            let (id, tight, velocity) = item(k);
            if let Some(slot) = self.proxies.get_mut(id.index as usize) {
                slot.tight = tight;
                slot.velocity = velocity;
            }
        }
        self.moves_tested += count as u64;
        // Stage 3: the leaves that left their fat boxes move, in order.
        let mut result = Ok(leaving.len());
        for &(k, index, leaf, fat) in &leaving {
            let id = self.proxy_id(index);
            if let Err(error) = self.relocate_leaf(id, leaf, fat) {
                result = Err(error);
                break;
            }
            reinserted(k);
        }
        self.batch_leaving = leaving;
        result
    }

    /// Stage 1 of [`DynamicTree::move_proxies_with`]: checks each item and pushes
    /// `(k, slot index, new fat box)` to `leaving` for each whose tight box leaves its fat
    /// box; the first bad item is an error. Changes nothing but the scratch bit set.
    fn check_moves(
        &mut self,
        count: usize,
        item: &impl Fn(usize) -> (ProxyId, Aabb<V>, V),
        leaving: &mut Vec<BatchMove<V>>,
    ) -> Result<(), TreeError> {
        // One bit a slot: the handles seen so far.
        let mut seen = std::mem::take(&mut self.moved_bits);
        seen.clear();
        seen.resize(self.proxies.len().div_ceil(64), 0);
        let mut result = Ok(());
        for k in 0..count {
            let (id, tight, velocity) = item(k);
            let slot = match self.check_handle(&mut seen, id) {
                Ok(slot) => slot,
                Err(error) => {
                    result = Err((k, error));
                    break;
                }
            };
            // As in `move_within_fat`: a box inside the finite fat box is finite.
            if slot.fat.contains(&tight) && tight.min.all_le(tight.max) && velocity.all_finite() {
                continue;
            }
            match self.checked_fat(&tight, velocity) {
                Ok(fat) => leaving.push((k, id.index, slot.leaf, fat)),
                Err(error) => {
                    result = Err((k, error));
                    break;
                }
            }
        }
        self.moved_bits = seen;
        result.map_err(|(index, error)| TreeError::InBatch {
            index,
            error: Box::new(error),
        })
    }

    /// Moves the proxies of a [`MoveBatch`]: move `k` gives proxy `batch.ids()[k]` the tight
    /// box and velocity `item(k)`. `reinserted(k)` is called, in increasing `k`, for each move
    /// whose tight box had left its fat box; the count of those is returned. The outcome is
    /// exactly that of [`DynamicTree::move_proxy`] on each handle in turn.
    ///
    /// The handles are checked (each live, none twice) the first time and then only after a
    /// proxy was created or destroyed, so the usual step (the same proxies moved again) pays
    /// for none of it: one tight loop tests each box against its fat box and gives the proxies
    /// that stay their boxes, then the leaves that left move, in order. A stale handle or a
    /// handle given twice is refused before anything moves ([`TreeError::InBatch`] naming the
    /// first, with [`TreeError::StaleProxy`] or [`TreeError::DuplicateInBatch`]). A box or
    /// velocity that is not finite, an inverted box or a fat box that would overflow is
    /// refused as [`TreeError::InBatch`] naming the first bad item, with the error
    /// `move_proxy` would give; the moves before it are then made (as `move_proxy` one by one
    /// would have made them) and none after it. `item` is asked once for each `k` up to the
    /// bad one.
    pub fn move_batch_with(
        &mut self,
        batch: &mut MoveBatch,
        item: impl Fn(usize) -> (Aabb<V>, V),
        mut reinserted: impl FnMut(usize),
    ) -> Result<usize, TreeError> {
        // Stage 1: the handles, when the set of live proxies changed since they were checked.
        if self.live_stamp == 0 {
            self.live_stamp = fresh_live_stamp();
        }
        if batch.stamp != self.live_stamp {
            self.check_handles(batch.ids())?;
            batch.stamp = self.live_stamp;
        }
        // A large tree goes in runs, reading ahead for the moves of each run that leave.
        let (run, warm) = if self.live as usize >= WARM_MIN_LIVE {
            (WARM_RUN, true)
        } else {
            (batch.len().max(1), false)
        };
        let mut leaving = std::mem::take(&mut self.batch_leaving);
        let mut count = 0;
        let mut result = Ok(());
        for start in (0..batch.len()).step_by(run) {
            let end = batch.len().min(start + run);
            // Stage 2: every box of the run against its fat box; those that stay take their
            // boxes, those that leave are listed.
            leaving.clear();
            let refused = self.test_moves(&batch.ids()[start..end], start, &item, &mut leaving);
            if warm {
                self.warm_leaves(leaving.iter().map(|&(_, _, leaf, _)| leaf));
            }
            // Stage 3: the leaves that left move, in order. (A relocation only fails when the
            // node pool is full, and the removal before it frees a node.)
            for &(k, index, leaf, fat) in &leaving {
                let id = self.proxy_id(index);
                if let Err(error) = self.relocate_leaf(id, leaf, fat) {
                    result = Err(error);
                    break;
                }
                reinserted(k);
                count += 1;
            }
            if result.is_ok()
                && let Some((index, error)) = refused
            {
                result = Err(TreeError::InBatch {
                    index,
                    error: Box::new(error),
                });
            }
            if result.is_err() {
                break;
            }
        }
        self.batch_leaving = leaving;
        result.map(|()| count)
    }

    /// Stage 2 of [`DynamicTree::move_batch_with`] for the moves `first..first + ids.len()`
    /// (handles already checked): a move that stays in its fat box gives the proxy its
    /// tight box and velocity; one that leaves gives them too and is pushed to `leaving` as
    /// `(k, slot index, leaf, new fat box)`. Stops at the first bad box or velocity and
    /// returns its position and error; the tree's nodes do not change.
    fn test_moves(
        &mut self,
        ids: &[ProxyId],
        first: usize,
        item: &impl Fn(usize) -> (Aabb<V>, V),
        leaving: &mut Vec<BatchMove<V>>,
    ) -> Option<(usize, TreeError)> {
        let mut refused = None;
        for (k, id) in (first..).zip(ids) {
            let (tight, velocity) = item(k);
            // Checked live, and nothing was destroyed since: the slot exists.
            let Some(slot) = self.proxies.get_mut(id.index as usize) else {
                refused = Some((k, TreeError::StaleProxy(*id)));
                break;
            };
            // As in `move_within_fat`: a box inside the finite fat box is finite.
            if slot.fat.contains(&tight) && tight.min.all_le(tight.max) && velocity.all_finite() {
                slot.tight = tight;
                slot.velocity = velocity;
                continue;
            }
            match self.checked_fat(&tight, velocity) {
                Ok(fat) => {
                    let slot = &mut self.proxies[id.index as usize];
                    slot.tight = tight;
                    slot.velocity = velocity;
                    leaving.push((k, id.index, slot.leaf, fat));
                }
                Err(error) => {
                    refused = Some((k, error));
                    break;
                }
            }
        }
        // One leaf visit a move made: the containment test.
        let made = refused.as_ref().map_or(ids.len(), |(k, _)| k - first);
        self.moves_tested += made as u64;
        refused
    }

    /// Stage 1 of [`DynamicTree::move_batch_with`]: every handle live and none twice, else
    /// the first bad one as [`TreeError::InBatch`]. Changes nothing but the scratch bit set.
    fn check_handles(&mut self, ids: &[ProxyId]) -> Result<(), TreeError> {
        let mut seen = std::mem::take(&mut self.moved_bits);
        seen.clear();
        seen.resize(self.proxies.len().div_ceil(64), 0);
        let mut result = Ok(());
        for (k, &id) in ids.iter().enumerate() {
            if let Err(error) = self.check_handle(&mut seen, id) {
                result = Err((k, error));
                break;
            }
        }
        self.moved_bits = seen;
        result.map_err(|(index, error)| TreeError::InBatch {
            index,
            error: Box::new(error),
        })
    }

    /// One handle of a batch: its slot when it is live and not in `seen` (one bit a slot,
    /// then set); else [`TreeError::StaleProxy`] or [`TreeError::DuplicateInBatch`].
    #[inline]
    fn check_handle(&self, seen: &mut [u64], id: ProxyId) -> Result<&ProxySlot<V, T>, TreeError> {
        let slot = self.slot(id)?;
        let index = id.index as usize;
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        if seen[word] & bit != 0 {
            return Err(TreeError::DuplicateInBatch(id));
        }
        seen[word] |= bit;
        Ok(slot)
    }

    /// The tree's part of a move whose tight box left its fat box (the proxy already holds
    /// the new tight box and velocity): the leaf gets the fat box `fat` and its place, as the
    /// [`UpdateMode`] says; the proxy goes in the move buffer and the move is recorded.
    fn relocate_leaf(&mut self, id: ProxyId, leaf: u32, fat: Aabb<V>) -> Result<(), TreeError> {
        match self.config.update {
            UpdateMode::Reinsert | UpdateMode::LocalReinsert => {
                // Stage 1: the lowest ancestor whose box holds the new one (`LocalReinsert`).
                let (holder, levels) = if self.config.update == UpdateMode::LocalReinsert {
                    let (holder, levels, tested) = self.holding_ancestor_counted(leaf, &fat);
                    self.count_update(tested, 0);
                    (holder, levels)
                } else {
                    (NULL, 0)
                };
                if holder != NULL && levels <= LOCAL_REFIT_LEVELS {
                    // Stage 2: a small move: the leaf keeps its place, the boxes up to the
                    // holder are refit.
                    self.set_leaf_box(leaf, id.index, fat);
                    self.fix_upwards(self.nodes[leaf as usize].parent, false);
                } else {
                    // Stage 2: take the leaf out and insert it again, searching under the
                    // holder (above the parent, which the removal frees) or from the root.
                    self.remove_leaf(leaf);
                    self.set_leaf_box(leaf, id.index, fat);
                    self.insert_leaf_under(leaf, holder)?;
                }
            }
            UpdateMode::EnlargeAndRebuild => {
                self.proxies[id.index as usize].fat = fat;
                self.enlarge_leaf(leaf, fat);
            }
        }
        self.mark_moved(id.index);
        self.record(TreeEvent::Reinsert(id));
        Ok(())
    }

    /// Box2D v3's `EnlargeProxy`: the leaf takes its new fat box in place; every ancestor whose
    /// box does not hold it grows and is flagged enlarged, and so is every ancestor above
    /// (up to the first one already flagged), so a partial rebuild finds them from the root.
    fn enlarge_leaf(&mut self, leaf: u32, fat: Aabb<V>) {
        self.nodes[leaf as usize].aabb = fat;
        let mut index = self.nodes[leaf as usize].parent;
        let mut visits = 0u64;
        // Stage 1: grow ancestors until one already holds the new box.
        while index != NULL {
            visits += 1;
            let node = &mut self.nodes[index as usize];
            let grown = !node.aabb.contains(&fat);
            if grown {
                node.aabb = node.aabb.union(&fat);
            }
            node.set_enlarged(true);
            index = node.parent;
            if !grown {
                break;
            }
        }
        // Stage 2: flag the rest of the path up to the first flagged ancestor.
        while index != NULL {
            visits += 1;
            let node = &mut self.nodes[index as usize];
            if node.is_enlarged() {
                break;
            }
            node.set_enlarged(true);
            index = node.parent;
        }
        self.count_update(visits, 0);
        if self.nodes[leaf as usize].parent != NULL {
            self.any_enlarged = true;
        }
    }

    /// Puts a proxy in the move buffer (once) and marks the pair set stale.
    pub(crate) fn mark_moved(&mut self, index: u32) {
        let slot = &mut self.proxies[index as usize];
        if !slot.is_moved() {
            slot.state |= MOVED;
            self.moved.push(index);
        }
        self.pairs_stale = true;
    }

    /// Sets the margin; every proxy's fat box is recomputed at once and the tree refit (its
    /// shape is kept). An error, and no change, when a fat box would not be finite.
    pub fn set_margin(&mut self, margin: f32) -> Result<(), TreeError> {
        check_setting("margin", margin)?;
        self.set_fattening(margin, self.config.velocity_lookahead, "margin", margin)
    }

    /// Sets the look-ahead; every proxy's fat box is recomputed at once and the tree refit (its
    /// shape is kept). An error, and no change, when a fat box would not be finite.
    pub fn set_velocity_lookahead(&mut self, secs: f32) -> Result<(), TreeError> {
        check_setting("velocity_lookahead", secs)?;
        self.set_fattening(self.config.margin, secs, "velocity_lookahead", secs)
    }

    /// Applies a new margin and look-ahead: checks every fat box, then recomputes them all and
    /// refits the branches bottom-up.
    fn set_fattening(
        &mut self,
        margin: f32,
        lookahead: f32,
        name: &'static str,
        value: f32,
    ) -> Result<(), TreeError> {
        if margin == self.config.margin && lookahead == self.config.velocity_lookahead {
            return Ok(());
        }
        // Stage 1: refuse before changing anything if some fat box would overflow.
        for slot in self.proxies.iter().filter(|s| s.is_alive()) {
            if fat_box(&slot.tight, slot.velocity, margin, lookahead)
                .check()
                .is_err()
            {
                return Err(TreeError::InvalidSetting { name, value });
            }
        }
        self.config.margin = margin;
        self.config.velocity_lookahead = lookahead;
        // Stage 2: new leaf boxes.
        for slot in self.proxies.iter_mut().filter(|s| s.is_alive()) {
            slot.fat = fat_box(&slot.tight, slot.velocity, margin, lookahead);
            self.nodes[slot.leaf as usize].aabb = slot.fat;
        }
        // Stage 3: refit the branches; the enlarged flags lose their meaning.
        self.refit_all();
        self.pairs_full = true;
        self.pairs_stale = true;
        Ok(())
    }

    /// Recomputes every branch's box and height bottom-up (post-order) and clears the enlarged
    /// flags.
    pub(crate) fn refit_all(&mut self) {
        if self.root == NULL {
            return;
        }
        // Children are visited before their parent: push (node, expanded) pairs.
        let mut stack = vec![(self.root, false)];
        while let Some((index, expanded)) = stack.pop() {
            let node = self.nodes[index as usize];
            if node.is_leaf() {
                continue;
            }
            if expanded {
                self.refit_node(index);
                self.nodes[index as usize].set_enlarged(false);
            } else {
                stack.push((index, true));
                stack.push((node.child1, false));
                stack.push((node.child2, false));
            }
        }
        self.any_enlarged = false;
    }

    /// Sets the insertion cost used from now on.
    pub fn set_insertion(&mut self, cost: InsertionCost) {
        self.config.insertion = cost;
    }

    /// Sets the balancing used from now on (the current shape is kept).
    pub fn set_balancing(&mut self, balancing: Balancing) {
        self.config.balancing = balancing;
    }

    /// Sets the pair method; the next [`DynamicTree::update_pairs`] recomputes every pair.
    pub fn set_pair_method(&mut self, method: PairMethod) {
        if self.config.pairs != method {
            self.config.pairs = method;
            self.pairs_full = true;
            self.pairs_stale = true;
        }
    }

    /// Sets what a move out of the fat box does. Leaving `EnlargeAndRebuild` rebuilds the
    /// enlarged part at once.
    pub fn set_update_mode(&mut self, mode: UpdateMode) {
        if self.config.update == UpdateMode::EnlargeAndRebuild && mode != self.config.update {
            self.rebuild_partial();
        }
        self.config.update = mode;
    }

    /// Sets how rebuilds and batch creation build the tree from now on (the current shape is
    /// kept).
    pub fn set_rebuild_method(&mut self, method: RebuildMethod) {
        self.config.rebuild = method;
    }

    /// Sets the share of the leaves reinserted by the optimization pass of each pair update
    /// ([`TreeConfig::optimize_share`]); an error, and no change, outside `[0, 1]`.
    pub fn set_optimize_share(&mut self, share: f32) -> Result<(), TreeError> {
        super::check_share(share)?;
        self.config.optimize_share = share;
        Ok(())
    }

    /// Applies every setting of `config` (see the single setters); an error, and no change to
    /// the margin and look-ahead, when one of them is refused.
    pub fn set_config(&mut self, config: TreeConfig) -> Result<(), TreeError> {
        config.check()?;
        self.set_fattening(
            config.margin,
            config.velocity_lookahead,
            "margin",
            config.margin,
        )?;
        self.set_insertion(config.insertion);
        self.set_balancing(config.balancing);
        self.set_pair_method(config.pairs);
        self.set_update_mode(config.update);
        self.set_rebuild_method(config.rebuild);
        self.set_optimize_share(config.optimize_share)
    }
}

/// What a batch creation changes, taken before it so that a refused batch can be undone
/// ([`DynamicTree::create_proxies_with`]).
struct BatchMark {
    proxies: usize,
    nodes: usize,
    moved: usize,
    live: u32,
    pairs_stale: bool,
    pairs_full: bool,
    allocs_since_layout: usize,
}

impl BatchMark {
    fn of<V: Vector, T: Copy>(tree: &DynamicTree<V, T>) -> Self {
        Self {
            proxies: tree.proxies.len(),
            nodes: tree.nodes.len(),
            moved: tree.moved.len(),
            live: tree.live,
            pairs_stale: tree.pairs_stale,
            pairs_full: tree.pairs_full,
            allocs_since_layout: tree.allocs_since_layout,
        }
    }
}
