//! Pair finding: the tree against itself (Chou's `childrenCrossed`, Choi's `collision_check`)
//! recomputed only when the tree changed (Choi's `tree_updated`), or a persistent pair set
//! updated from the moved proxies, by one query each (Box2D's move buffer) or by the tree
//! against itself cut down to the branches above a moved proxy.

use super::node::{InlineStack, MOVED, NULL, Node, NodeStack};
use super::{
    DynamicTree, PairMethod, PairUpdate, ProxyId, QueryStats, TreeError, UpdateMode, Vector,
};
use std::sync::OnceLock;
#[cfg(feature = "parallel")]
use std::sync::atomic::{AtomicUsize, Ordering};

/// How `MovedTraversal` finds the pairs of the proxies that moved since the last pair update,
/// on a tree of fewer than [`LARGE_TREE_LEAVES`] leaves: when at most one proxy in this many
/// moved, by one query each ([`leaf_neighbours`], into the persistent pair set); past that
/// share, by the whole walk of the tree against itself. On the standard workload (paired runs
/// against the same code with other shares, 2026-11-28) one in 4, 8 and 16 gave the same mean
/// step at 1,000 circles, one in 4 and 8 the best at 10,000, one in 8 and 32 at 100,000; one in
/// 4 lost 15% at 100,000. The walk cut down to the branches above a moved proxy, which stood
/// between the two before, gave nothing more: at 100,000, taking it from one in 32 to one in
/// 8 was within the runs' noise of the queries alone, and below 2,048 leaves it had lost to
/// the whole walk.
const FEW_MOVED_DENOMINATOR: usize = 8;

/// How `MovedTraversal` finds the pairs on a tree of [`LARGE_TREE_LEAVES`] leaves or more:
/// when more than one proxy in this many moved, by the whole walk; otherwise by the walk cut
/// down to the branches above a moved proxy. The pool is then much bigger than the cache:
/// every branch flagged is a read from memory, and the two walks cost the same at about 3%
/// moved (1,000,000 circles); one query per moved proxy (one in 8) took 1.14 times the step
/// there.
const MOST_MOVED_DENOMINATOR_LARGE: usize = 32;

/// See [`MOST_MOVED_DENOMINATOR_LARGE`] (a pool of 16 MiB in 2D). 2,048 in the crate's unit
/// tests, so that their trees take the cut-down walk too.
#[cfg(not(test))]
const LARGE_TREE_LEAVES: usize = 1 << 18;
#[cfg(test)]
const LARGE_TREE_LEAVES: usize = 2048;

/// The node pairs [`self_pairs`] sets aside (see [`PairWalk`]).
type PairStack = InlineStack<(u32, u32), 256>;

/// When a pair walk must stop: asked with the number of pairs the walk has emitted so far
/// each time it enters a branch, or a pair of them, which emits at most four pairs before the
/// next ask (one compare).
trait PairBudget {
    /// True when more pairs than the limit are known to exist: the walk stops.
    fn exceeded(&mut self, emitted: usize) -> bool;

    /// Asked once when the walk ends, whether it ran out of work or stopped: true when more
    /// pairs than the limit are known to exist.
    fn exceeded_at_end(&mut self, emitted: usize) -> bool {
        self.exceeded(emitted)
    }
}

/// No limit (the default `usize::MAX`): the walk compiles without the count and the check.
struct Unlimited;

impl PairBudget for Unlimited {
    #[inline(always)]
    fn exceeded(&mut self, _emitted: usize) -> bool {
        false
    }
}

/// At most this many pairs from one walk.
struct Budget(usize);

impl PairBudget for Budget {
    #[inline(always)]
    fn exceeded(&mut self, emitted: usize) -> bool {
        emitted > self.0
    }
}

/// Pairs a task of [`par_self_pairs`] finds between two reports of its count to the shared
/// total: the memory held past the limit when the walks stop is at most about this many
/// pairs per thread.
#[cfg(feature = "parallel")]
const SYNC_PAIRS: usize = 1024;

/// The bound the tasks of [`par_self_pairs`] share: each task adds its count to `total`
/// every [`SYNC_PAIRS`] pairs and at its end, and stops once the total is past `limit`. The
/// total only grows and every count reaches it, so "past the limit" is never wrong; `Relaxed`
/// is enough, as nothing else is read through it.
#[cfg(feature = "parallel")]
struct SharedBudget<'a> {
    total: &'a AtomicUsize,
    limit: usize,
    /// Pairs of this walk already added to `total`.
    reported: usize,
    /// The count at which this walk next reports.
    next_sync: usize,
}

#[cfg(feature = "parallel")]
impl<'a> SharedBudget<'a> {
    fn new(total: &'a AtomicUsize, limit: usize) -> Self {
        Self {
            total,
            limit,
            reported: 0,
            next_sync: SYNC_PAIRS,
        }
    }

    /// Adds the pairs found since the last report to the total; true when it is past the
    /// limit.
    #[cold]
    #[inline(never)]
    fn sync(&mut self, emitted: usize) -> bool {
        let new = emitted - self.reported;
        self.reported = emitted;
        self.next_sync = emitted.saturating_add(SYNC_PAIRS);
        let total = self
            .total
            .fetch_add(new, Ordering::Relaxed)
            .saturating_add(new);
        total > self.limit
    }
}

#[cfg(feature = "parallel")]
impl PairBudget for SharedBudget<'_> {
    #[inline(always)]
    fn exceeded(&mut self, emitted: usize) -> bool {
        emitted >= self.next_sync && self.sync(emitted)
    }

    fn exceeded_at_end(&mut self, emitted: usize) -> bool {
        self.sync(emitted)
    }
}

/// Calls `emit(slot_a, slot_b)` once for each pair of leaves under `root` whose boxes overlap.
///
/// The walk ([`PairWalk`]) starts with the root against itself. Cases:
/// - a branch against itself: each child against itself (when it is a branch) and the two
///   children against each other;
/// - a leaf and a branch: the leaf against each child of the branch, down the subtree;
/// - two branches: each child of the one against each child of the other;
///
/// where "against" tests the two boxes and, when they overlap, emits a leaf pair or goes on
/// with the pair. Each unordered pair of leaves is reached along exactly one path, so it is
/// reported once.
///
/// With `DIRTY_ONLY`, only pairs with a dirty node on at least one side are followed: the
/// pairs of leaves with at least one moved leaf among them (every ancestor of a moved leaf is
/// dirty, so no such pair is cut off).
///
/// The walk stops as soon as it has emitted more than `limit` pairs; the `bool` returned is
/// true when there are more than `limit` (then only some were emitted).
pub(crate) fn self_pairs<V: Vector, const DIRTY_ONLY: bool>(
    nodes: &[Node<V>],
    root: u32,
    limit: usize,
    emit: impl FnMut(u32, u32),
) -> (QueryStats, bool) {
    if root == NULL
        || nodes[root as usize].is_leaf()
        || (DIRTY_ONLY && !nodes[root as usize].is_dirty())
    {
        return (QueryStats::default(), false);
    }
    if limit == usize::MAX {
        // No limit (the default): the walk without the count (the optimiser drops it).
        walk_pairs::<V, DIRTY_ONLY>(nodes, (root, root), &mut Unlimited, emit)
    } else {
        walk_pairs::<V, DIRTY_ONLY>(nodes, (root, root), &mut Budget(limit), emit)
    }
}

/// The walk of [`self_pairs`] from one start: a branch against itself `(b, b)`, or two nodes
/// whose boxes overlap, at least one a branch (and, with `DIRTY_ONLY`, one dirty). Stops
/// when `budget` says so (see [`PairBudget`]); the `bool` is what the budget says at the end.
fn walk_pairs<V: Vector, const DIRTY_ONLY: bool>(
    nodes: &[Node<V>],
    start: (u32, u32),
    budget: &mut impl PairBudget,
    emit: impl FnMut(u32, u32),
) -> (QueryStats, bool) {
    let mut walk = PairWalk::<V, _, _, DIRTY_ONLY> {
        nodes,
        deferred: PairStack::new(),
        leaf_stack: NodeStack::new(),
        stats: QueryStats::default(),
        emitted: 0,
        budget,
        emit,
    };
    walk.deferred.push(start);
    while let Some((a, b)) = walk.deferred.pop() {
        if walk.budget.exceeded(walk.emitted) || walk.start(a, b) {
            break;
        }
    }
    let PairWalk {
        stats,
        emitted,
        budget,
        ..
    } = walk;
    (stats, budget.exceeded_at_end(emitted))
}

/// How deep the calls of one [`PairWalk`] nest before it sets a pair aside on its own stack
/// (`deferred`) for later: the depth is at most twice the tree's height, and a tree may be
/// a list thousands of levels deep. 48 levels take a few kilobytes of the call stack.
const MAX_WALK_DEPTH: u32 = 48;

/// One walk of [`self_pairs`]: by nested calls, a pair of nodes handed down as references
/// (already read: the box that was tested and the children's indices come with them), a leaf
/// against a subtree with the leaf's box kept in registers. At 100,000 circles (a fresh tree
/// of the standard workload, the whole walk) this took 0.6 of the time of the walk it
/// replaced, which pushed every overlapping pair of nodes to a stack and read both nodes
/// again when it popped them.
///
/// Every method returns true when the budget says stop (asked on entering a branch against
/// itself, a pair of branches, and each branch of a leaf's walk, each of which emits at most
/// four pairs before the next ask).
struct PairWalk<'a, V, B, E, const DIRTY_ONLY: bool> {
    nodes: &'a [Node<V>],
    /// Pairs set aside past [`MAX_WALK_DEPTH`] (and the start): `(b, b)` for a branch
    /// against itself, else two nodes whose boxes overlap, at least one a branch.
    deferred: PairStack,
    /// The pending branches of [`Self::leaf_against_subtree`] (empty between its calls).
    leaf_stack: NodeStack,
    stats: QueryStats,
    emitted: usize,
    budget: &'a mut B,
    emit: E,
}

impl<V: Vector, B: PairBudget, E: FnMut(u32, u32), const DIRTY_ONLY: bool>
    PairWalk<'_, V, B, E, DIRTY_ONLY>
{
    /// The walk from a start or a pair set aside (see `deferred`).
    fn start(&mut self, a: u32, b: u32) -> bool {
        let nodes = self.nodes;
        if a == b {
            return self.branch_itself(a, 0);
        }
        let (na, nb) = (&nodes[a as usize], &nodes[b as usize]);
        match (na.is_leaf(), nb.is_leaf()) {
            (false, false) => self.two_branches(na, nb, 0),
            (true, false) => self.leaf_against_subtree(na, b),
            (false, true) => self.leaf_against_subtree(nb, a),
            // Never set aside (two leaves are emitted at once), nor a start.
            (true, true) => self.test(a, na, b, nb, 0),
        }
    }

    /// The pairs under the branch `a`: each child against itself (when it is a branch; with
    /// `DIRTY_ONLY`, a dirty one), then the two children against each other.
    fn branch_itself(&mut self, a: u32, depth: u32) -> bool {
        if self.budget.exceeded(self.emitted) {
            return true;
        }
        if depth >= MAX_WALK_DEPTH {
            self.deferred.push((a, a));
            return false;
        }
        let nodes = self.nodes;
        let node = &nodes[a as usize];
        let (c1, c2) = (node.child1, node.child2);
        let (n1, n2) = (&nodes[c1 as usize], &nodes[c2 as usize]);
        if !n1.is_leaf() && (!DIRTY_ONLY || n1.is_dirty()) && self.branch_itself(c1, depth + 1) {
            return true;
        }
        if !n2.is_leaf() && (!DIRTY_ONLY || n2.is_dirty()) && self.branch_itself(c2, depth + 1) {
            return true;
        }
        self.test(c1, n1, c2, n2, depth)
    }

    /// Two branches whose boxes overlap: each child of one against each child of the other
    /// (four tests, as a wide node's 2x2 test). Opening only the larger of the two, with a
    /// test of each of its children against the whole other node first, mispredicted 8% more
    /// branches (callgrind's branch simulation, the standard workload's first 60 steps at
    /// 100,000 circles; the same pairs).
    fn two_branches(&mut self, na: &Node<V>, nb: &Node<V>, depth: u32) -> bool {
        if self.budget.exceeded(self.emitted) {
            return true;
        }
        let nodes = self.nodes;
        let (c1, c2) = (na.child1, na.child2);
        let (d1, d2) = (nb.child1, nb.child2);
        let (n1, n2) = (&nodes[c1 as usize], &nodes[c2 as usize]);
        let (m1, m2) = (&nodes[d1 as usize], &nodes[d2 as usize]);
        self.test(c1, n1, d1, m1, depth)
            || self.test(c1, n1, d2, m2, depth)
            || self.test(c2, n2, d1, m1, depth)
            || self.test(c2, n2, d2, m2, depth)
    }

    /// One test: `x` against `y` (nodes `nx`, `ny`; with `DIRTY_ONLY`, skipped when both are
    /// clean). When their boxes overlap: two leaves are emitted, a leaf and a branch walked
    /// ([`Self::leaf_against_subtree`]), two branches opened ([`Self::two_branches`], or set
    /// aside past [`MAX_WALK_DEPTH`]).
    #[inline(always)]
    fn test(&mut self, x: u32, nx: &Node<V>, y: u32, ny: &Node<V>, depth: u32) -> bool {
        // The flags and the boxes are tested together, one branch: a branch on the flags
        // alone, which follow no pattern a predictor learns, cost more than the box tests it
        // saved.
        let followed = !DIRTY_ONLY || (nx.is_dirty() | ny.is_dirty());
        self.stats.node_visits += u32::from(followed);
        let (x_leaf, y_leaf) = (nx.is_leaf(), ny.is_leaf());
        self.stats.leaf_visits += u32::from(followed & x_leaf & y_leaf);
        if !(followed & nx.aabb.overlaps(&ny.aabb)) {
            return false;
        }
        match (x_leaf, y_leaf) {
            (true, true) => {
                self.emitted += 1;
                (self.emit)(nx.child1, ny.child1);
                false
            }
            (true, false) => self.leaf_against_subtree(nx, y),
            (false, true) => self.leaf_against_subtree(ny, x),
            (false, false) if depth >= MAX_WALK_DEPTH => {
                self.deferred.push((x, y));
                false
            }
            (false, false) => self.two_branches(nx, ny, depth + 1),
        }
    }

    /// A leaf (`n_leaf`) against the subtree under `branch`, whose box it overlaps: the
    /// leaf's box stays in registers while the subtree is walked with a stack of branches.
    /// Each child of a visited branch is one test, as in [`Self::test`] (so the counts are
    /// the same as testing pair by pair); with `DIRTY_ONLY`, a clean leaf only follows dirty
    /// nodes.
    #[inline(never)]
    fn leaf_against_subtree(&mut self, n_leaf: &Node<V>, branch: u32) -> bool {
        let nodes = self.nodes;
        let aabb = n_leaf.aabb;
        let slot = n_leaf.child1;
        let leaf_dirty = DIRTY_ONLY && n_leaf.is_dirty();
        let mut current = branch;
        loop {
            if self.budget.exceeded(self.emitted) {
                return true;
            }
            let node = &nodes[current as usize];
            let (c1, c2) = (node.child1, node.child2);
            let (n1, n2) = (&nodes[c1 as usize], &nodes[c2 as usize]);
            let mut next = NULL;
            for (c, n) in [(c1, n1), (c2, n2)] {
                // As in `test`: the flags and the box in one branch.
                let followed = !DIRTY_ONLY || (leaf_dirty | n.is_dirty());
                self.stats.node_visits += u32::from(followed);
                let leaf = n.is_leaf();
                self.stats.leaf_visits += u32::from(followed & leaf);
                if followed & n.aabb.overlaps(&aabb) {
                    if leaf {
                        self.emitted += 1;
                        (self.emit)(n.child1, slot);
                    } else if next == NULL {
                        next = c;
                    } else {
                        self.leaf_stack.push(c);
                    }
                }
            }
            current = match next {
                NULL => match self.leaf_stack.pop() {
                    Some(n) => n,
                    None => return false,
                },
                n => n,
            };
        }
    }
}

/// [`DynamicTree::update_pairs_parallel`] stays on one thread below this many leaves: on the
/// standard workload with 2 threads the split walk took 2.2x the time at 1,000 circles and
/// 1.2x at 10,000 (waking the pool and joining the lists cost more than half a walk saves),
/// and 0.9x at 100,000.
#[cfg(feature = "parallel")]
pub const PARALLEL_MIN_LEAVES: usize = 50_000;

/// How many levels of the tree [`par_self_pairs`] splits into separate tasks: up to 2^6 = 64
/// subtrees and the crossings of the branches above them, enough for rayon to balance a few
/// threads.
#[cfg(feature = "parallel")]
const PARALLEL_SPLIT_LEVELS: u32 = 6;

/// What one task of [`par_self_pairs`] found: its pairs, its tests, and true when it stopped
/// at the limit.
#[cfg(feature = "parallel")]
type TaskPairs = (Vec<(u32, u32)>, QueryStats, bool);

/// [`self_pairs`] split over rayon's thread pool, pushing each pair `(a, b)`, `a < b`, to
/// `pairs` (in no set order; the same set). The top [`PARALLEL_SPLIT_LEVELS`] levels are walked
/// here: each branch there whose children overlap is one task (the two children crossed),
/// and each branch at the bottom level is one (its subtree against itself). The tasks share
/// no pair, for the reason [`self_pairs`] reports each pair once.
///
/// The `bool` returned is true when `pairs` would hold more than `limit` pairs (the ones it
/// held before included): the tasks share one count ([`SharedBudget`]) and stop once it is
/// past the limit, so the pairs held at once stay near the limit (not tasks times it), and
/// none is added to `pairs`.
#[cfg(feature = "parallel")]
pub(crate) fn par_self_pairs<V: Vector, const DIRTY_ONLY: bool>(
    nodes: &[Node<V>],
    root: u32,
    limit: usize,
    pairs: &mut Vec<(u32, u32)>,
) -> (QueryStats, bool) {
    use rayon::prelude::*;
    let mut stats = QueryStats::default();
    if root == NULL
        || nodes[root as usize].is_leaf()
        || (DIRTY_ONLY && !nodes[root as usize].is_dirty())
    {
        return (stats, pairs.len() > limit);
    }
    // Stage 1: the tasks (and the pairs of two leaves found on the way).
    let mut tasks = Vec::new();
    let mut branches = vec![(root, 0)];
    while let Some((index, depth)) = branches.pop() {
        if depth == PARALLEL_SPLIT_LEVELS {
            tasks.push((index, index));
            continue;
        }
        let node = &nodes[index as usize];
        let (c1, c2) = (node.child1, node.child2);
        let (n1, n2) = (&nodes[c1 as usize], &nodes[c2 as usize]);
        for (c, n) in [(c1, n1), (c2, n2)] {
            if !n.is_leaf() && (!DIRTY_ONLY || n.is_dirty()) {
                branches.push((c, depth + 1));
            }
        }
        if DIRTY_ONLY && !n1.is_dirty() && !n2.is_dirty() {
            continue;
        }
        let both_leaves = n1.is_leaf() && n2.is_leaf();
        stats.node_visits += 1;
        stats.leaf_visits += u32::from(both_leaves);
        if n1.aabb.overlaps(&n2.aabb) {
            if both_leaves {
                pairs.push(ordered(n1.child1, n2.child1));
            } else {
                tasks.push((c1, c2));
            }
        }
    }
    if pairs.len() > limit {
        return (stats, true);
    }
    // Stage 2: the tasks, each into a list of its own, under one shared count; then one list.
    let total = AtomicUsize::new(pairs.len());
    let found: Vec<TaskPairs> = tasks
        .par_iter()
        .map(|&start| {
            let mut local = Vec::new();
            let emit = |a, b| local.push(ordered(a, b));
            if limit == usize::MAX {
                let (s, _) = walk_pairs::<V, DIRTY_ONLY>(nodes, start, &mut Unlimited, emit);
                return (local, s, false);
            }
            // A task that starts once the limit is passed does nothing.
            if total.load(Ordering::Relaxed) > limit {
                return (local, QueryStats::default(), true);
            }
            let mut budget = SharedBudget::new(&total, limit);
            let (s, over) = walk_pairs::<V, DIRTY_ONLY>(nodes, start, &mut budget, emit);
            (local, s, over)
        })
        .collect();
    let count = pairs.len() + found.iter().map(|(p, ..)| p.len()).sum::<usize>();
    if count > limit || found.iter().any(|&(_, _, over)| over) {
        return (stats, true);
    }
    pairs.reserve(count - pairs.len());
    for (local, s, _) in found {
        pairs.extend_from_slice(&local);
        stats.node_visits += s.node_visits;
        stats.leaf_visits += s.leaf_visits;
    }
    (stats, false)
}

/// Calls `hit(proxy slot)` for each leaf other than `leaf` whose box overlaps `leaf`'s;
/// `hit` returns false to stop. The walk goes up from the leaf: at each ancestor the
/// sibling of the way up is tested, and when it overlaps, its subtree is walked (each node
/// tested as it is reached, a branch's second child set aside while the first is walked).
/// Every ancestor holds the leaf's box, so a query from the root would find the whole path
/// overlapping; going up skips those tests.
fn leaf_neighbours<V: Vector>(
    nodes: &[Node<V>],
    leaf: u32,
    mut hit: impl FnMut(u32) -> bool,
) -> QueryStats {
    let mut stats = QueryStats::default();
    let aabb = nodes[leaf as usize].aabb;
    let mut stack = NodeStack::new();
    let mut below = leaf;
    let mut above = nodes[leaf as usize].parent;
    while above != NULL {
        let parent = &nodes[above as usize];
        let sibling = if parent.child1 == below {
            parent.child2
        } else {
            parent.child1
        };
        (below, above) = (above, parent.parent);
        let mut next = sibling;
        loop {
            let node = &nodes[next as usize];
            stats.node_visits += 1;
            let is_leaf = node.is_leaf();
            stats.leaf_visits += u32::from(is_leaf);
            if node.aabb.overlaps(&aabb) {
                if is_leaf {
                    if !hit(node.child1) {
                        return stats;
                    }
                } else {
                    stack.push(node.child2);
                    next = node.child1;
                    continue;
                }
            }
            match stack.pop() {
                Some(n) => next = n,
                None => break,
            }
        }
    }
    stats
}

/// How many climbs [`mark_dirty_above`] advances side by side.
pub(crate) const CLIMBS: usize = 8;

/// Sets the dirty flag of each of `leaves` and of every node above it, and pushes each node it
/// flags to `marked` (so that [`clear_dirty`] need not climb again). A climb stops at the first
/// node already dirty: everything above it is, or will be once the climb that flagged it
/// goes on.
///
/// A climb's next node is known only once its current one is read, so one climb at a time
/// waits on every read of a pool far bigger than the cache; [`CLIMBS`] climbs advance a level
/// each in turn, and their reads are in flight together. At 1,000,000 circles (the standard
/// workload, 40 steps) flagging and clearing one at a time each took as long as the walk.
pub(crate) fn mark_dirty_above<V: Vector>(
    nodes: &mut [Node<V>],
    mut leaves: impl Iterator<Item = u32>,
    marked: &mut Vec<u32>,
) {
    let mut climbs = [NULL; CLIMBS];
    loop {
        let mut any = false;
        for climb in &mut climbs {
            let mut index = *climb;
            // A climb that ended takes the next leaf (none is flagged twice: the move buffer
            // holds no repeats, and a flagged leaf ends its climb at once).
            while index == NULL || nodes[index as usize].is_dirty() {
                match leaves.next() {
                    Some(leaf) => index = leaf,
                    None => {
                        index = NULL;
                        break;
                    }
                }
            }
            *climb = NULL;
            if index != NULL {
                any = true;
                let node = &mut nodes[index as usize];
                node.set_dirty(true);
                marked.push(index);
                *climb = node.parent;
            }
        }
        if !any {
            return;
        }
    }
}

/// Clears the dirty flag of every node in `marked` (what [`mark_dirty_above`] flagged).
pub(crate) fn clear_dirty<V: Vector>(nodes: &mut [Node<V>], marked: &[u32]) {
    for &index in marked {
        nodes[index as usize].set_dirty(false);
    }
}

/// The pair of two proxy slots, the smaller first.
#[inline]
fn ordered(a: u32, b: u32) -> (u32, u32) {
    if a < b { (a, b) } else { (b, a) }
}

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Sets the most candidate pairs an update may find (default `usize::MAX`: no limit). A
    /// [`DynamicTree::update_pairs`] that would leave more than `limit` pairs in the pair set
    /// (under `MovedQueries` and `MovedTraversal` the pairs kept from the last update count
    /// too) stops early and returns [`TreeError::PairLimit`]: a scene where everything
    /// overlaps everything cannot take all the memory. A limit below the current pair count
    /// makes the next update recompute every pair.
    pub fn set_pair_limit(&mut self, limit: usize) {
        self.pair_limit = limit;
        if self.pairs.len() > limit {
            self.pairs_full = true;
            self.pairs_stale = true;
        }
    }

    /// The most candidate pairs an update may find ([`DynamicTree::set_pair_limit`];
    /// `usize::MAX`, no limit, unless set).
    pub fn pair_limit(&self) -> usize {
        self.pair_limit
    }

    /// Brings the pair set up to date with the configured [`PairMethod`] (after a pending
    /// partial rebuild under [`UpdateMode::EnlargeAndRebuild`], and, when something changed,
    /// an optimization pass of [`DynamicTree::optimize_budget`] branches). Nothing is
    /// recomputed when no fat box changed and no proxy came or went since the last call.
    ///
    /// [`TreeError::PairLimit`] when the pair set would hold more than
    /// [`DynamicTree::pair_limit`] pairs: the search stops as soon as it finds one pair too
    /// many, the pair set is left empty (never part of one), the move buffer is cleared as
    /// after any update, and the next update recomputes every pair.
    pub fn update_pairs(&mut self) -> Result<PairUpdate, TreeError> {
        self.update_pairs_on(false)
    }

    /// [`DynamicTree::update_pairs`] with the traversal of the tree against itself split over
    /// rayon's thread pool (the `SelfTraversal` and `MovedTraversal` walks; `MovedQueries`
    /// stays on one thread), from [`PARALLEL_MIN_LEAVES`] leaves up. The same pairs, in
    /// another order; the same tests counted; the same [`TreeError::PairLimit`] (the threads
    /// share one count, so they stop near the limit together).
    #[cfg(feature = "parallel")]
    pub fn update_pairs_parallel(&mut self) -> Result<PairUpdate, TreeError> {
        self.update_pairs_on(self.live as usize >= PARALLEL_MIN_LEAVES)
    }

    /// [`DynamicTree::update_pairs`], on one thread or (with the `parallel` feature) split over
    /// rayon's pool.
    pub(crate) fn update_pairs_on(&mut self, parallel: bool) -> Result<PairUpdate, TreeError> {
        if self.config.update == UpdateMode::EnlargeAndRebuild && self.any_enlarged {
            self.rebuild_partial();
        }
        if !self.pairs_stale && !self.pairs_full {
            return Ok(PairUpdate::default());
        }
        // The step changed the tree: reinsert its worst branches (a share of the leaves).
        let budget = self.optimize_budget();
        if budget > 0 {
            self.optimize(budget);
        }
        // Once reinsertions have taken as many nodes from the free list as there are leaves,
        // the pool is scattered: put it back in walk order (a pool that fits in the cache
        // whole is left as it is).
        if self.allocs_since_layout > self.live as usize {
            self.compact_layout_from(super::layout::LAYOUT_MIN_LEAVES);
        }
        // The pairs of the proxies that moved: by a query each when few moved, else by the
        // whole walk; on a large tree by the walk cut down to the branches above them when
        // few moved (see FEW_MOVED_DENOMINATOR; the same pairs every way).
        let (live, moved) = (self.live as usize, self.moved.len());
        let (stats, over) = match self.config.pairs {
            _ if self.pairs_full => self.pairs_by_self_traversal(parallel),
            PairMethod::SelfTraversal => self.pairs_by_self_traversal(parallel),
            PairMethod::MovedQueries => self.pairs_by_move_buffer(parallel, true),
            PairMethod::MovedTraversal => {
                let large = live >= LARGE_TREE_LEAVES;
                let denominator = if large {
                    MOST_MOVED_DENOMINATOR_LARGE
                } else {
                    FEW_MOVED_DENOMINATOR
                };
                if moved.saturating_mul(denominator) > live {
                    self.pairs_by_self_traversal(parallel)
                } else {
                    self.pairs_by_move_buffer(parallel, !large)
                }
            }
        };
        self.count_pairs(stats);
        for &i in &self.moved {
            self.proxies[i as usize].state &= !MOVED;
        }
        // After a bulk creation the buffer held every proxy; do not keep that much room.
        let used = self.moved.len();
        self.moved.clear();
        if self.moved.capacity() > 4096 && self.moved.capacity() > 8 * used {
            self.moved.shrink_to(2 * used);
        }
        self.sorted_pairs = OnceLock::new();
        if over {
            // Past the limit: no pair set rather than part of one (and no more room than the
            // limit, should an earlier set have been larger), and the next update starts from
            // scratch (the move buffer no longer says what changed).
            self.pairs.clear();
            self.pairs.shrink_to(self.pair_limit.saturating_add(1));
            self.pairs_stale = true;
            self.pairs_full = true;
            return Err(TreeError::PairLimit {
                limit: self.pair_limit,
            });
        }
        self.pairs_stale = false;
        self.pairs_full = false;
        Ok(PairUpdate {
            recomputed: true,
            stats,
        })
    }

    /// Recomputes every pair by the self traversal; true when there are more than the limit.
    fn pairs_by_self_traversal(&mut self, parallel: bool) -> (QueryStats, bool) {
        let Self {
            nodes,
            root,
            pairs,
            pair_limit,
            ..
        } = self;
        pairs.clear();
        #[cfg(feature = "parallel")]
        if parallel {
            return par_self_pairs::<V, false>(nodes, *root, *pair_limit, pairs);
        }
        #[cfg(not(feature = "parallel"))]
        debug_assert!(!parallel, "the split walk needs the `parallel` feature");
        self_pairs::<V, false>(nodes, *root, *pair_limit, |a, b| {
            pairs.push(ordered(a, b));
        })
    }

    /// Updates the persistent pair set from the move buffer: with `by_queries`, by one query
    /// per moved proxy ([`leaf_neighbours`]; on one thread whatever `parallel` says), else by
    /// the tree against itself cut down to the branches above a moved proxy.
    ///
    /// Stage 1: the move buffer without destroyed proxies. Stage 2: drop every pair that
    /// touches a moved or destroyed proxy. Stage 3: the new pairs of the moved proxies, until
    /// the pairs kept and found are more than the limit (then true).
    fn pairs_by_move_buffer(&mut self, parallel: bool, by_queries: bool) -> (QueryStats, bool) {
        let Self {
            nodes,
            root,
            proxies,
            pairs,
            moved,
            moved_bits,
            pair_limit,
            ..
        } = self;
        let limit = *pair_limit;
        // Stage 1: a bit for every slot in the buffer (destroyed and re-created ones included),
        // then the buffer without destroyed proxies (`mark_moved` pushes a slot only when it
        // sets its `MOVED` bit, so the buffer holds no repeats).
        moved_bits.clear();
        moved_bits.resize(proxies.len().div_ceil(64), 0);
        for &i in moved.iter() {
            moved_bits[i as usize / 64] |= 1 << (i % 64);
        }
        moved.retain(|&i| {
            let s = &mut proxies[i as usize];
            if !s.is_alive() {
                // A destroyed slot keeps `MOVED` while its index is in the buffer; clear it
                // here, as the loop after the search clears it for the kept ones.
                s.state &= !MOVED;
                return false;
            }
            s.is_moved()
        });
        // Stage 2.
        let bits: &[u64] = moved_bits;
        let in_buffer = |i: u32| bits[i as usize / 64] & (1 << (i % 64)) != 0;
        pairs.retain(|&(a, b)| !in_buffer(a) && !in_buffer(b));
        // The kept pairs count towards the limit (they are more only after a lowered limit,
        // which forces a full recompute; checked all the same).
        let Some(room) = limit.checked_sub(pairs.len()) else {
            return (QueryStats::default(), true);
        };
        // Stage 3.
        if by_queries {
            // Box2D's move buffer: query each moved proxy's fat box (here from its leaf up, not
            // from the root); a pair of two moved proxies is added by the query of the one
            // with the smaller index. The queries stop at the limit.
            let mut stats = QueryStats::default();
            let mut over = false;
            for &i in moved.iter() {
                let s = leaf_neighbours(nodes, proxies[i as usize].leaf, |j| {
                    if !in_buffer(j) || i < j {
                        pairs.push(ordered(i, j));
                        if pairs.len() > limit {
                            over = true;
                            return false;
                        }
                    }
                    true
                });
                stats.node_visits += s.node_visits;
                stats.leaf_visits += s.leaf_visits;
                if over {
                    break;
                }
            }
            return (stats, over);
        }
        // Flag each moved leaf and every node above it, traverse where something is flagged,
        // clear the flags (also when the walk stopped at the limit).
        let leaves = moved.iter().map(|&i| proxies[i as usize].leaf);
        let mut marked = Vec::with_capacity(moved.len().saturating_mul(2));
        mark_dirty_above(nodes, leaves, &mut marked);
        #[cfg(feature = "parallel")]
        let found = if parallel {
            par_self_pairs::<V, true>(nodes, *root, limit, pairs)
        } else {
            self_pairs::<V, true>(nodes, *root, room, |a, b| {
                pairs.push(ordered(a, b));
            })
        };
        #[cfg(not(feature = "parallel"))]
        let found = {
            debug_assert!(!parallel, "the split walk needs the `parallel` feature");
            self_pairs::<V, true>(nodes, *root, room, |a, b| {
                pairs.push(ordered(a, b));
            })
        };
        clear_dirty(nodes, &marked);
        found
    }

    /// Every pair of proxies whose fat boxes overlap, each as `(a, b)` with `a < b`, sorted,
    /// as of the last [`DynamicTree::update_pairs`] (sorted on the first call after it).
    pub fn pairs(&self) -> &[(ProxyId, ProxyId)] {
        self.sorted_pairs.get_or_init(|| {
            let mut sorted = self.pairs.clone();
            sorted.sort_unstable();
            sorted
                .into_iter()
                .map(|(a, b)| (self.proxy_id(a), self.proxy_id(b)))
                .collect()
        })
    }

    /// Makes the handles of [`DynamicTree::pairs`] now, while every slot the pairs name still
    /// has the generation it had at the last [`DynamicTree::update_pairs`].
    pub(crate) fn freeze_pair_ids(&mut self) {
        if !self.pairs.is_empty() {
            let _ = self.pairs();
        }
    }

    /// The same pairs as [`DynamicTree::pairs`] in no particular order (no sorting, no copy
    /// when [`DynamicTree::pairs`] was not called since the last update).
    pub fn pairs_unsorted(&self) -> impl Iterator<Item = (ProxyId, ProxyId)> + '_ {
        // Once made, the sorted handles are the truth (they outlive a destroy).
        let (made, slots) = match self.sorted_pairs.get() {
            Some(made) => (made.as_slice(), &[][..]),
            None => (&[][..], self.pairs.as_slice()),
        };
        made.iter().copied().chain(
            slots
                .iter()
                .map(|&(a, b)| (self.proxy_id(a), self.proxy_id(b))),
        )
    }

    /// The same pairs as slot indices ([`ProxyId::index`]), `(a, b)` with `a < b`, in no
    /// particular order: the cheapest way to read them (valid until the next destroy).
    pub fn pair_indices(&self) -> &[(u32, u32)] {
        &self.pairs
    }

    /// Calls `visit(a, b)` for each current pair (`a < b`), in no particular order.
    pub fn for_each_pair(&self, mut visit: impl FnMut(ProxyId, ProxyId)) {
        for (a, b) in self.pairs_unsorted() {
            visit(a, b);
        }
    }

    /// Number of current pairs.
    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }
}
