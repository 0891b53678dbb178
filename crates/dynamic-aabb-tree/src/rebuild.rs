//! Rebuilds: a full build over every leaf, top-down by binned SAH or bottom-up by
//! agglomerative clustering (PLOC), and Box2D v3's partial rebuild that rebuilds only the
//! enlarged branches above untouched subtrees.

use super::node::{NULL, Node, parent_fit_bits};
use super::{Aabb, DynamicTree, RebuildMethod, TreeEvent, Vector};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How many clusters on either side (in Morton order) each cluster of the agglomerative build
/// ([`RebuildMethod::Agglomerative`]) compares itself with when it looks for its nearest
/// neighbour. Meister and Bittner found 10 to 16 a good trade; a larger radius finds
/// nearer neighbours (a cheaper tree) and takes longer, about in proportion.
pub const PLOC_RADIUS: usize = 12;

// The agglomerative build marks the least of a cluster's 2 * PLOC_RADIUS offers in a `u32`.
const _: () = assert!(2 * PLOC_RADIUS <= 32);

/// A round of the agglomerative build that merges fewer than one cluster in this many has
/// stalled: boxes alike, nested or evenly spaced in a row tie or chain, so that only one
/// pair is mutual a round and the build would take a round per box (20,000 equal boxes:
/// 10 s, and a list). A stalled round also merges the clusters left two by two. On the level
/// sets of `docs/quality.md` (real and generated) the fewest a round merged was about 1 in
/// 16 (175 of 2,871 clusters), so no tree there changes. Boxes alike end in a chain of at most
/// about this many clusters over balanced subtrees.
const PLOC_STALL_DENOMINATOR: usize = 32;

/// Segment-tree nodes the searches of the greedy build ([`RebuildMethod::Greedy`]) may visit
/// per subtree built over, in all, before PLOC merges the clusters left. Measured: 57 to
/// 1,061 a subtree on the eight level sets of `docs/quality.md` (the most on the two
/// largest, whose big flat boxes overlap many others), 160 to 460 on 10,000 and 100,000
/// random boxes and on our generated levels; every one of them was built greedily to the
/// end.
pub const GREEDY_VISITS: u64 = 8192;

/// Scratch lists of the agglomerative build, kept between rebuilds so that a rebuild
/// allocates nothing once they have grown.
#[derive(Clone, Debug)]
pub(crate) struct PlocScratch<V> {
    /// Morton code (high 32 bits) and node (low 32 bits) of each subtree to build over.
    keys: Vec<u64>,
    /// The current clusters' root nodes, in Morton order.
    clusters: Vec<u32>,
    /// The current clusters' boxes.
    boxes: Vec<Aabb<V>>,
    /// The current clusters' root nodes' [`super::node::Node::fit_bits`] (height and
    /// enlarged flag), so that a merge need not read its two children.
    bits: Vec<u32>,
    /// Each cluster's nearest neighbour (its index).
    nearest: Vec<u32>,
    /// The greedy build's scratch lists, once it has run (boxed: a tree that never builds
    /// greedily keeps one pointer for them).
    greedy: Option<Box<GreedyScratch<V>>>,
}

/// Scratch lists of the greedy build ([`RebuildMethod::Greedy`]).
#[derive(Clone, Debug)]
struct GreedyScratch<V> {
    /// The subtrees to build over, reordered into their slots (node indices).
    order: Vec<u32>,
    /// Each slot's cluster (root node), `NULL` when empty.
    clusters: Vec<u32>,
    /// Each slot's cluster's height.
    heights: Vec<u32>,
    /// The segment tree over the slots: node 1 the root, node `k`'s children `2k` and
    /// `2k + 1`, slot `i` at node `size + i`; each node the box of the clusters in its slots
    /// (empty: `min > max`) and their least extent per axis (`f32::MAX` when none).
    seg: Vec<(Aabb<V>, V)>,
    /// The candidate merges, least first.
    heap: BinaryHeap<Reverse<Merge>>,
    /// The search stack: segment-tree nodes and their bounds.
    stack: Vec<(f32, u32)>,
}

impl<V> Default for GreedyScratch<V> {
    fn default() -> Self {
        Self {
            order: Vec::new(),
            clusters: Vec::new(),
            heights: Vec::new(),
            seg: Vec::new(),
            heap: BinaryHeap::new(),
            stack: Vec::new(),
        }
    }
}

/// A candidate merge of the greedy build: the SAH measure of the union (as
/// [`ordered_key`]), the height of the branch it would make (so that among equal measures
/// the lower merge first), the two slots (the searching cluster's first) and the clusters
/// (nodes) they held when it was found. It still holds when both slots hold those clusters.
type Merge = (u32, u32, u32, u32, u32, u32);

impl<V> Default for PlocScratch<V> {
    fn default() -> Self {
        Self {
            keys: Vec::new(),
            clusters: Vec::new(),
            boxes: Vec::new(),
            bits: Vec::new(),
            nearest: Vec::new(),
            greedy: None,
        }
    }
}

impl<V: Copy> PlocScratch<V> {
    /// Moves cluster `from` to slot `to` (at most `from`): its root, box and fit bits.
    fn keep(&mut self, from: usize, to: usize) {
        self.clusters[to] = self.clusters[from];
        self.boxes[to] = self.boxes[from];
        self.bits[to] = self.bits[from];
    }
}

impl<V> PlocScratch<V> {
    /// Bytes held (capacities).
    pub(crate) fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.keys.capacity() * size_of::<u64>()
            + self.clusters.capacity() * size_of::<u32>()
            + self.boxes.capacity() * size_of::<Aabb<V>>()
            + self.bits.capacity() * size_of::<u32>()
            + self.nearest.capacity() * size_of::<u32>()
            + self.greedy.as_ref().map_or(0, |g| {
                size_of::<GreedyScratch<V>>()
                    + g.order.capacity() * size_of::<u32>()
                    + g.clusters.capacity() * size_of::<u32>()
                    + g.heights.capacity() * size_of::<u32>()
                    + g.seg.capacity() * size_of::<(Aabb<V>, V)>()
                    + g.heap.capacity() * size_of::<Reverse<Merge>>()
                    + g.stack.capacity() * size_of::<(f32, u32)>()
            })
    }
}

/// PLOC's stage 2 over `boxes` (the clusters in Morton order, at least two): `nearest[j]`
/// becomes the index of cluster j's nearest neighbour among the [`PLOC_RADIUS`] clusters on
/// either side, the one whose union with it has the least SAH measure (the first of them in
/// index order among equal measures, so the least pair of all is always mutual).
fn ploc_nearest<V: Vector>(boxes: &[Aabb<V>], nearest: &mut Vec<u32>) {
    let n = boxes.len();
    // Cluster j looks at the clusters i < j, then k > j, of its window in increasing index
    // order, and keeps the first of the least measure (so ties break towards lower indices).
    // Each pair's measure is made once, when its lower cluster comes:
    // `offers[j % (PLOC_RADIUS + 1)]` holds what j has been offered by the clusters before it
    // (slot `k`: cluster `j - PLOC_RADIUS + k`), and is cleared once j has read it, for
    // cluster `j + PLOC_RADIUS + 1`. (Offering straight into the list `nearest`, which the
    // next cluster reads back at once, stalled on the stores just made.) A measure is never
    // NaN (the boxes are finite); one that rounds to infinity counts as `f32::MAX`, below the
    // infinity of a missing neighbour, so one of the (at least one) neighbours is taken.
    nearest.clear();
    let mut offers = [[f32::INFINITY; 2 * PLOC_RADIUS]; PLOC_RADIUS + 1];
    for j in 0..n {
        let a = boxes[j];
        let end = (j + 1 + PLOC_RADIUS).min(n);
        let mut row = [f32::INFINITY; PLOC_RADIUS];
        for (cost, b) in row.iter_mut().zip(&boxes[j + 1..end]) {
            *cost = a.union(b).half_area().min(f32::MAX);
        }
        // j's own: slots PLOC_RADIUS.. are the clusters after it.
        let own = &mut offers[j % (PLOC_RADIUS + 1)];
        own[PLOC_RADIUS..].copy_from_slice(&row);
        let mine = *own;
        *own = [f32::INFINITY; 2 * PLOC_RADIUS];
        // The pairs (j, j + 1 + m) offered to the clusters after j.
        for (m, &cost) in row.iter().enumerate() {
            offers[(j + 1 + m) % (PLOC_RADIUS + 1)][PLOC_RADIUS - 1 - m] = cost;
        }
        // The least (the lane-wise minimums of the two halves first, so that the chain of
        // dependent compares is half as long), then the first slot that holds it.
        let mut half = [0.0f32; PLOC_RADIUS];
        for (k, h) in half.iter_mut().enumerate() {
            let (x, y) = (mine[k], mine[k + PLOC_RADIUS]);
            *h = if x < y { x } else { y };
        }
        let least = half
            .iter()
            .fold(f32::INFINITY, |m, &c| if c < m { c } else { m });
        let mut at = 0u32;
        for (k, &c) in mine.iter().enumerate() {
            at |= u32::from(c == least) << k;
        }
        // Slot k is cluster `j - PLOC_RADIUS + k` below PLOC_RADIUS, `j + 1 + k -
        // PLOC_RADIUS` from there (a slot below j's first cluster holds infinity, never least).
        let k = at.trailing_zeros() as usize;
        nearest.push((j + k + usize::from(k >= PLOC_RADIUS) - PLOC_RADIUS) as u32);
    }
}

/// A box holding nothing (`min` above `max` on every axis): its union with any box is that
/// box.
fn empty_box<V: Vector>() -> Aabb<V> {
    Aabb {
        min: V::splat(f32::MAX),
        max: V::splat(-f32::MAX),
    }
}

/// A key whose order as `u32` is `x`'s [`f32::total_cmp`] order.
fn ordered_key(x: f32) -> u32 {
    let bits = x.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    }
}

impl<V: Vector> GreedyScratch<V> {
    /// Puts the cluster `cluster` (its node, box and height; `None`: none) in slot `slot` of
    /// the segment tree (of `size` slots) and refits the nodes above it.
    fn set_slot(&mut self, slot: u32, cluster: Option<(u32, Aabb<V>, u32)>, size: usize) {
        let mut k = size + slot as usize;
        let (node, height, entry) = match cluster {
            Some((node, aabb, height)) => (node, height, (aabb, aabb.max - aabb.min)),
            None => (NULL, 0, (empty_box(), V::splat(f32::MAX))),
        };
        self.clusters[slot as usize] = node;
        self.heights[slot as usize] = height;
        self.seg[k] = entry;
        while k > 1 {
            k /= 2;
            self.refit_segment(k);
        }
    }

    /// Segment-tree node `k`'s box and least extents from its children's.
    fn refit_segment(&mut self, k: usize) {
        let ((a, ea), (b, eb)) = (self.seg[2 * k], self.seg[2 * k + 1]);
        self.seg[k] = (a.union(&b), ea.min_by_component(eb));
    }

    /// Finds the nearest neighbour of the cluster in slot `slot` (another cluster is left)
    /// and queues the pair: a depth-first search of the segment tree (of `size` slots), the
    /// child of smaller bound first, skipping every node whose bound is not below the least
    /// union found (among equal unions found, the lower cluster's is kept, then the first
    /// found's). A node's bound is the measure of the cluster's box grown to the nearest
    /// point of the node's box, each extent raised to the least of the clusters under the
    /// node: no union with one of them is smaller on any axis (in `f32` too: rounding is
    /// monotonic). Returns the segment-tree nodes visited.
    fn queue_nearest(&mut self, slot: u32, size: usize) -> u64 {
        let a = self.seg[size + slot as usize].0;
        let bound = |b: &Aabb<V>, least: V| {
            (a.max.max_by_component(b.min) - a.min.min_by_component(b.max))
                .max_by_component(least)
                .half_area()
        };
        let is_empty = |b: &Aabb<V>| b.min.axis(0) > b.max.axis(0);
        let mut best = (f32::INFINITY, NULL);
        let mut visits = 0;
        self.stack.clear();
        self.stack.push((0.0, 1));
        while let Some((lb, k)) = self.stack.pop() {
            if best.1 != NULL && lb >= best.0 {
                continue;
            }
            let k = k as usize;
            if 2 * k >= size {
                // The children are slots: measured at once.
                for other in [2 * k - size, 2 * k + 1 - size] {
                    if other != slot as usize && self.clusters[other] != NULL {
                        visits += 1;
                        let cost = a.union(&self.seg[size + other].0).half_area();
                        if best.1 == NULL
                            || cost < best.0
                            || (cost == best.0
                                && self.heights[other] < self.heights[best.1 as usize])
                        {
                            best = (cost, other as u32);
                        }
                    }
                }
                continue;
            }
            visits += 1;
            let mut children = [(0.0f32, 2 * k), (0.0, 2 * k + 1)];
            let mut count = 0;
            for child in [2 * k, 2 * k + 1] {
                let (b, least) = &self.seg[child];
                if is_empty(b) {
                    continue;
                }
                let lb = bound(b, *least);
                if best.1 == NULL || lb < best.0 {
                    children[count] = (lb, child);
                    count += 1;
                }
            }
            // The nearer child is searched first: pushed last.
            if count == 2 && children[1].0 > children[0].0 {
                children.swap(0, 1);
            }
            for &(lb, child) in &children[..count] {
                self.stack.push((lb, child as u32));
            }
        }
        debug_assert!(best.1 != NULL, "another cluster is left");
        if best.1 != NULL {
            let other = best.1;
            let height = 1 + self.heights[slot as usize].max(self.heights[other as usize]);
            self.heap.push(Reverse((
                ordered_key(best.0),
                height,
                slot,
                other,
                self.clusters[slot as usize],
                self.clusters[other as usize],
            )));
        }
        visits
    }
}

/// Bins per axis of the binned SAH split; ranges of at most this many items are split by an
/// exact SAH sweep over sorted centres instead.
const BINS: usize = 16;

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Full rebuild by the configured [`RebuildMethod`]: every branch is freed and the tree
    /// is built again over the leaves, reusing the freed nodes (binned SAH: split top-down at
    /// the bin boundary of least `count * area` on either side; agglomerative: PLOC, merged
    /// bottom-up). Leaf boxes (and so the pairs) do not change.
    pub fn rebuild(&mut self) {
        if self.root == NULL {
            return;
        }
        self.build_items.clear();
        self.rebuild_with_detached();
        self.compact_layout_from(super::layout::LAYOUT_MIN_LEAVES);
        self.record(TreeEvent::Rebuild { partial: false });
    }

    /// Builds the tree over the leaves in `build_items` (detached, not in the tree) and every
    /// leaf of the current tree: stage 1 gathers the leaves and frees the branches, stage 2
    /// builds.
    pub(crate) fn rebuild_with_detached(&mut self) {
        let mut items = std::mem::take(&mut self.build_items);
        if self.root != NULL {
            self.gather(&mut items, |_| true);
        }
        if !items.is_empty() {
            self.build(&mut items);
        }
        self.build_items = items;
        self.any_enlarged = false;
    }

    /// Rebuilds only the enlarged part of the tree: from the root, every enlarged branch is
    /// freed and the subtrees below it that are not enlarged (and leaves) are rebuilt over by
    /// the configured [`RebuildMethod`]. A no-op when nothing is enlarged.
    pub fn rebuild_partial(&mut self) {
        if !self.any_enlarged || self.root == NULL {
            self.any_enlarged = false;
            return;
        }
        self.any_enlarged = false;
        if !self.nodes[self.root as usize].is_enlarged() || self.nodes[self.root as usize].is_leaf()
        {
            return;
        }
        let mut items = std::mem::take(&mut self.build_items);
        items.clear();
        self.gather(&mut items, |n| n.is_enlarged());
        self.build(&mut items);
        self.build_items = items;
        self.record(TreeEvent::Rebuild { partial: true });
    }

    /// From the root, frees every branch for which `open` is true and collects the nodes
    /// below them that are leaves or not open.
    fn gather(&mut self, items: &mut Vec<u32>, open: impl Fn(&super::node::Node<V>) -> bool) {
        let mut stack = vec![self.root];
        while let Some(index) = stack.pop() {
            let node = self.nodes[index as usize];
            if node.is_leaf() || !open(&node) {
                items.push(index);
            } else {
                stack.push(node.child2);
                stack.push(node.child1);
                self.free_node(index);
            }
        }
        self.root = NULL;
    }

    /// Builds a tree over the subtrees `items` (at least one) with branches from the free list
    /// and makes it the whole tree, by the configured [`RebuildMethod`].
    fn build(&mut self, items: &mut [u32]) {
        match self.config.rebuild {
            RebuildMethod::BinnedSah => self.build_binned(items),
            RebuildMethod::Agglomerative => self.build_agglomerative(items),
            RebuildMethod::Greedy => {
                let budget = GREEDY_VISITS.saturating_mul(items.len() as u64);
                self.build_greedy(items, budget);
            }
        }
    }

    /// A new branch (from the free list, which a rebuild has filled) over the subtrees `first`
    /// and `second`, their parent; its box and height not yet set.
    fn link_branch(&mut self, first: u32, second: u32) -> u32 {
        let branch = self
            .alloc_node()
            .expect("a rebuild reuses the branches it freed");
        let node = &mut self.nodes[branch as usize];
        node.child1 = first;
        node.child2 = second;
        self.nodes[first as usize].parent = branch;
        self.nodes[second as usize].parent = branch;
        branch
    }

    /// A new branch over the subtrees `first` and `second`, its box and height fitted from
    /// theirs; the greedy build's merge.
    fn join(&mut self, first: u32, second: u32) -> u32 {
        let branch = self.link_branch(first, second);
        self.refit_node(branch);
        branch
    }

    /// The agglomerative build's merge of clusters `i` and `j` of `s` into slot `to` (at most
    /// `i`): a new branch over their roots, its box and fit bits made from the clusters' (what
    /// [`DynamicTree::refit_node`] would read of the two roots, without reading them).
    fn merge_clusters(&mut self, s: &mut PlocScratch<V>, i: usize, j: usize, to: usize) {
        let aabb = s.boxes[i].union(&s.boxes[j]);
        let bits = parent_fit_bits(s.bits[i], s.bits[j]);
        let branch = self.link_branch(s.clusters[i], s.clusters[j]);
        let node = &mut self.nodes[branch as usize];
        node.aabb = aabb;
        node.set_fit_bits(bits);
        s.clusters[to] = branch;
        s.boxes[to] = aabb;
        s.bits[to] = bits;
    }

    /// The agglomerative build (PLOC, Meister and Bittner 2018) over the subtrees `items` (at
    /// least one), with branches from the free list; makes it the whole tree.
    ///
    /// Stage 1 sorts the subtrees by the Morton code of their box's centre (quantized in the
    /// box of the centres; ties by node index). Then, while more than one cluster is left:
    /// stage 2 gives each cluster its nearest neighbour among the [`PLOC_RADIUS`] clusters on
    /// either side, the one whose union with it has the least SAH measure (ties to the pair
    /// of lower indices, so the least pair of all is always mutual and every round merges);
    /// stage 3 merges every two clusters that are each other's nearest under a new branch, in
    /// the place of the first, and closes the gaps.
    fn build_agglomerative(&mut self, items: &[u32]) {
        let mut s = std::mem::take(&mut self.ploc);
        // Stage 1: Morton order.
        let first = self.nodes[items[0] as usize].aabb.center();
        let (mut lo, mut hi) = (first, first);
        for &node in items {
            let c = self.nodes[node as usize].aabb.center();
            lo = lo.min_by_component(c);
            hi = hi.max_by_component(c);
        }
        let bits = if V::DIM == 2 { 16 } else { 10 };
        let top = ((1u32 << bits) - 1) as f32;
        let mut scale = [0.0f32; 3];
        for (axis, scale) in scale.iter_mut().enumerate().take(V::DIM) {
            let extent = hi.axis(axis) - lo.axis(axis);
            if extent > 0.0 && extent.is_finite() {
                *scale = top / extent;
            }
        }
        s.keys.clear();
        for &node in items {
            let c = self.nodes[node as usize].aabb.center();
            let mut code = 0u32;
            for (axis, &scale) in scale.iter().enumerate().take(V::DIM) {
                // `as` saturates: a NaN or negative product is 0.
                let q = (((c.axis(axis) - lo.axis(axis)) * scale) as u32).min(top as u32);
                code |= spread_bits(q, V::DIM as u32) << axis;
            }
            s.keys.push((u64::from(code) << 32) | u64::from(node));
        }
        s.keys.sort_unstable();
        s.clusters.clear();
        s.boxes.clear();
        s.bits.clear();
        for &key in &s.keys {
            let node = key as u32;
            s.clusters.push(node);
            s.boxes.push(self.nodes[node as usize].aabb);
            s.bits.push(self.nodes[node as usize].fit_bits());
        }
        let mut created = 0u64;
        while s.clusters.len() > 1 {
            let n = s.clusters.len();
            // Stage 2: nearest neighbours.
            ploc_nearest(&s.boxes, &mut s.nearest);
            // Stage 3: merge mutual nearest neighbours; compact in place (the write index
            // never passes the read index, and a merge reads its partner ahead of both).
            let mut write = 0;
            for i in 0..n {
                let j = s.nearest[i] as usize;
                if s.nearest[j] as usize != i {
                    s.keep(i, write);
                    write += 1;
                } else if i < j {
                    self.merge_clusters(&mut s, i, j, write);
                    created += 1;
                    write += 1;
                }
            }
            debug_assert!(write < n, "every round merges the least pair");
            // A stalled round (boxes alike, nested or in a row make each cluster's nearest
            // the next one's, so that few pairs are mutual): merge the clusters left two by
            // two in Morton order, so that the rounds stay logarithmic in number.
            if (n - write) * PLOC_STALL_DENOMINATOR < n {
                let mut paired = 0;
                let mut k = 0;
                while k < write {
                    if k + 1 < write {
                        self.merge_clusters(&mut s, k, k + 1, paired);
                        created += 1;
                        k += 2;
                    } else {
                        s.keep(k, paired);
                        k += 1;
                    }
                    paired += 1;
                }
                write = paired;
            }
            s.clusters.truncate(write);
            s.boxes.truncate(write);
            s.bits.truncate(write);
        }
        let root = s.clusters[0];
        self.nodes[root as usize].parent = NULL;
        self.root = root;
        // Each subtree placed and each branch made.
        self.count_update(items.len() as u64 + created, 0);
        self.ploc = s;
    }

    /// The exact greedy agglomerative build ([`RebuildMethod::Greedy`]) over the subtrees
    /// `items` (at least one), with branches from the free list; makes it the whole tree.
    ///
    /// Stage 1 puts the subtrees in the slots of a segment tree of their boxes, laid out as
    /// a k-d tree of their centres ([`DynamicTree::place_in_slots`]). Stage 2 finds each
    /// cluster's nearest neighbour (the cluster whose union with it has the least SAH
    /// measure; among equal ones the lower cluster, then the first found) by a
    /// branch-and-bound search of the segment tree ([`GreedyScratch::queue_nearest`]) and
    /// queues the pair. Stage 3 takes the least pair off the queue (among equal measures, the
    /// one making the lower branch first): when both clusters are still there it merges them
    /// under a new branch (in the lower slot; the other slot is emptied) and queues the new
    /// cluster's nearest; when only the first is, it searches again for the first's nearest. A merge never brings a cluster nearer (the union of
    /// `a ∪ b` with `c` holds that of `a` or `b` with `c`), so a queued measure is never above
    /// the true one and the pair taken is always the least of all: Walter et al. 2008's
    /// exact greedy clustering. 10,000 random boxes took about 3.5 searches a subtree.
    ///
    /// The searches may visit at most `budget` segment-tree nodes in all (a search is
    /// finished once begun); the clusters left then are merged by PLOC
    /// ([`DynamicTree::build_agglomerative`]), so a build never takes more than `O(n log n +
    /// budget)` steps however the boxes lie ([`GREEDY_VISITS`] a subtree).
    fn build_greedy(&mut self, items: &[u32], budget: u64) {
        let n = items.len();
        if n == 1 {
            self.nodes[items[0] as usize].parent = NULL;
            self.root = items[0];
            self.count_update(1, 0);
            return;
        }
        let mut s = self.ploc.greedy.take().unwrap_or_default();
        // Stage 1: the slots and their segment tree.
        let size = n.next_power_of_two();
        s.clusters.clear();
        s.clusters.resize(size, NULL);
        s.heights.clear();
        s.heights.resize(size, 0);
        s.order.clear();
        s.order.extend_from_slice(items);
        self.place_in_slots(&mut s.order, &mut s.clusters, size);
        s.seg.clear();
        s.seg.resize(2 * size, (empty_box(), V::splat(f32::MAX)));
        for slot in 0..size {
            let node = s.clusters[slot];
            if node != NULL {
                let aabb = self.nodes[node as usize].aabb;
                s.seg[size + slot] = (aabb, aabb.max - aabb.min);
                s.heights[slot] = self.nodes[node as usize].height();
            }
        }
        for k in (1..size).rev() {
            s.refit_segment(k);
        }
        // Stage 2: every cluster's nearest.
        s.heap.clear();
        let mut visits = 0u64;
        for slot in 0..size as u32 {
            if s.clusters[slot as usize] != NULL {
                visits += s.queue_nearest(slot, size);
            }
        }
        // Stage 3: merge the least pair until one cluster is left (or the budget is spent).
        let mut created = 0u64;
        let mut left = n;
        while left > 1 && visits <= budget {
            let Some(Reverse((_, _, a, b, node_a, node_b))) = s.heap.pop() else {
                break;
            };
            if s.clusters[a as usize] != node_a {
                continue;
            }
            if s.clusters[b as usize] != node_b {
                visits += s.queue_nearest(a, size);
                continue;
            }
            let (low, high) = (a.min(b), a.max(b));
            let branch = self.join(s.clusters[low as usize], s.clusters[high as usize]);
            created += 1;
            left -= 1;
            s.set_slot(high, None, size);
            let made = &self.nodes[branch as usize];
            s.set_slot(low, Some((branch, made.aabb, made.height())), size);
            if left > 1 {
                visits += s.queue_nearest(low, size);
            }
        }
        // Each subtree placed and each branch made.
        self.count_update(n as u64 + created, 0);
        s.heap.clear();
        let rest: Vec<u32> = s.clusters.iter().copied().filter(|&c| c != NULL).collect();
        self.ploc.greedy = Some(s);
        if let [root] = rest[..] {
            self.nodes[root as usize].parent = NULL;
            self.root = root;
        } else {
            // The budget is spent: PLOC merges the clusters left.
            self.build_agglomerative(&rest);
        }
    }

    /// Puts the nodes `work` (reordered) in the `size` slots (a power of two, at least
    /// `work.len()`) of `slots` as a k-d tree of their boxes' centres: every segment-tree
    /// node's slots hold one cell, split at the median of the cell's widest centre spread
    /// (the first half rounded up, on the left), so each segment-tree node's box is
    /// compact.
    fn place_in_slots(&self, work: &mut [u32], slots: &mut [u32], size: usize) {
        let center = |node: u32| self.nodes[node as usize].aabb.center();
        // (segment-tree node, range of `work`)
        let mut stack = vec![(1usize, 0usize, work.len())];
        while let Some((k, start, end)) = stack.pop() {
            if end == start {
                continue;
            }
            if k >= size {
                slots[k - size] = work[start];
                continue;
            }
            let range = &mut work[start..end];
            let first = center(range[0]);
            let (lo, hi) = range.iter().fold((first, first), |(lo, hi), &node| {
                let c = center(node);
                (lo.min_by_component(c), hi.max_by_component(c))
            });
            let axis = (0..V::DIM)
                .max_by(|&a, &b| (hi.axis(a) - lo.axis(a)).total_cmp(&(hi.axis(b) - lo.axis(b))))
                .unwrap_or(0);
            let half = range.len().div_ceil(2);
            if half < range.len() {
                range.select_nth_unstable_by(half, |&x, &y| {
                    center(x)
                        .axis(axis)
                        .total_cmp(&center(y).axis(axis))
                        .then(x.cmp(&y))
                });
            }
            stack.push((2 * k + 1, start + half, end));
            stack.push((2 * k, start, start + half));
        }
    }

    /// The binned-SAH build over the subtrees `items` (at least one), with branches from the
    /// free list; makes it the whole tree.
    fn build_binned(&mut self, items: &mut [u32]) {
        let (work, codes) = build_work(items.len(), |k| BuildItem {
            aabb: self.nodes[items[k] as usize].aabb,
            node: items[k],
        });
        self.build_binned_items::<false>(work, codes);
    }

    /// The binned-SAH build of a new tree over every proxy slot (`0..count`, live, with their
    /// fat boxes, no leaves yet) into an empty pool, laid out in walk order as it is built
    /// ([`DynamicTree::compact_layout`]'s order): the same tree and the same node numbers as
    /// [`DynamicTree::build_binned`] over leaves made first and renumbered after, without the
    /// renumbering's pass of random moves over the whole pool (at a million leaves most of
    /// the batch's time). The pool is grown to `2 * count - 1` nodes.
    pub(crate) fn build_binned_in_walk_order(&mut self, count: usize) {
        debug_assert!(self.nodes.is_empty() && count > 0 && self.proxies.len() == count);
        self.nodes
            .resize(2 * count - 1, Node::leaf(Aabb::default(), NULL));
        let (work, codes) = build_work(count, |slot| BuildItem {
            aabb: self.proxies[slot].fat,
            node: slot as u32,
        });
        self.build_binned_items::<true>(work, codes);
        self.allocs_since_layout = 0;
    }

    /// The binned-SAH build over `work` (at least one item; with `codes`, their Morton codes,
    /// when [`build_work`] sorted them), made the whole tree.
    ///
    /// `WALK == false`: each item is a subtree's root node, the branches come from the free
    /// list. `WALK == true`: each item is a proxy slot; its leaf and every branch are written
    /// at their places in walk order (root 0; a branch's two children at the next two
    /// indices when it is split, depth first, first child first), into a pool already of the
    /// right length.
    fn build_binned_items<const WALK: bool>(
        &mut self,
        mut work: Vec<BuildItem<V>>,
        codes: Vec<u32>,
    ) {
        let morton = !codes.is_empty();
        let bounds = if morton {
            (V::splat(0.0), V::splat(0.0))
        } else {
            centre_bounds(&work)
        };
        // (start, end, parent, which child of parent: 1 or 2, its index (`WALK`; else
        // unused), the range's centre bounds, true while the range is split by Morton code
        // and its bounds are not yet known)
        type Range<V> = (usize, usize, u32, u8, u32, CentreBounds<V>, bool);
        let mut stack: Vec<Range<V>> = vec![(0, work.len(), NULL, 0, 0, bounds, morton)];
        let mut created: Vec<u32> = Vec::new();
        if !WALK {
            created.reserve_exact(work.len().saturating_sub(1));
        }
        let mut next = 1u32;
        while let Some((start, end, parent, which, at, bounds, morton)) = stack.pop() {
            let index = if end - start == 1 {
                let item = work[start];
                if WALK {
                    self.nodes[at as usize] = Node::leaf(item.aabb, item.node);
                    self.proxies[item.node as usize].leaf = at;
                    at
                } else {
                    item.node
                }
            } else {
                // Stage 1: split the range.
                let (mid, left, right, morton) = if morton && end - start > MORTON_LEAF_RANGE {
                    let mid = morton_split(&codes[start..end]);
                    (mid, bounds, bounds, true)
                } else {
                    let range = &mut work[start..end];
                    let bounds = if morton { centre_bounds(range) } else { bounds };
                    let (mid, left, right) = split(range, bounds);
                    (mid, left, right, false)
                };
                let mid = start + mid;
                // Stage 2: a branch for it: at its place in walk order, or from the pool
                // (which holds the branches just freed, or the room a batch reserved).
                let branch = if WALK {
                    let node = &mut self.nodes[at as usize];
                    node.child1 = next;
                    node.child2 = next + 1;
                    at
                } else {
                    let branch = self
                        .alloc_node()
                        .expect("a rebuild reuses the branches it freed");
                    created.push(branch);
                    branch
                };
                stack.push((mid, end, branch, 2, next + 1, right, morton));
                stack.push((start, mid, branch, 1, next, left, morton));
                if WALK {
                    next += 2;
                }
                branch
            };
            self.nodes[index as usize].parent = parent;
            match which {
                0 => self.root = index,
                1 => self.nodes[parent as usize].child1 = index,
                _ => self.nodes[parent as usize].child2 = index,
            }
        }
        // Stage 3: boxes and heights bottom-up (children were made after their parents; in
        // walk order every child has a greater index than its parent).
        if WALK {
            for index in (0..self.nodes.len() as u32).rev() {
                if !self.nodes[index as usize].is_leaf() {
                    self.refit_node(index);
                }
            }
        } else {
            for &branch in created.iter().rev() {
                self.refit_node(branch);
            }
        }
        // Each subtree placed and each branch made (a binary tree over n subtrees has n - 1).
        self.count_update((2 * work.len() - 1) as u64, 0);
    }
}

/// The items of a binned build, `item(k)` for `k` in `0..len`, copied side by side (the
/// splits read each box and centre many times), and their Morton codes: a large build (from
/// [`MORTON_MIN_ITEMS`]) takes them sorted by the Morton code of their centres (ties by `k`),
/// whose top levels it splits by code; a smaller one in order, with no codes.
fn build_work<V: Vector>(
    len: usize,
    item: impl Fn(usize) -> BuildItem<V>,
) -> (Vec<BuildItem<V>>, Vec<u32>) {
    if len < MORTON_MIN_ITEMS {
        return ((0..len).map(item).collect(), Vec::new());
    }
    let keys = morton_keys((0..len).map(|k| item(k).center()));
    let codes = keys.iter().map(|&key| (key >> 32) as u32).collect();
    let work = keys.iter().map(|&key| item(key as u32 as usize)).collect();
    (work, codes)
}

/// Builds over at least this many subtrees sort them by the Morton code of their centre and
/// split the ranges above [`MORTON_LEAF_RANGE`] items at the highest differing bit of the
/// code (a linear BVH's top levels: no pass over the items per level); below, binned SAH.
const MORTON_MIN_ITEMS: usize = 1 << 16;

/// Ranges of at most this many items of a Morton-ordered build are split by binned SAH.
/// With 64, `create_proxies` of 1,000,000 random circles took 1.42 billion instructions
/// (2.42 billion with binned SAH all the way down), for a SAH cost 0.7% higher (0.2% with
/// 256, which costs more).
const MORTON_LEAF_RANGE: usize = 64;

/// The keys `code << 32 | index` of the centres `centres` (index = their place), sorted:
/// the Morton code interleaves the centres' coordinates, quantised on one grid (square
/// cells) over their bounds, 16 bits an axis in 2D, 10 in 3D.
fn morton_keys<V: Vector>(centres: impl Iterator<Item = V> + Clone) -> Vec<u64> {
    let bits = 32 / V::DIM as u32;
    let mut lo = V::splat(f32::MAX);
    let mut hi = V::splat(-f32::MAX);
    for c in centres.clone() {
        lo = lo.min_by_component(c);
        hi = hi.max_by_component(c);
    }
    let extent = (0..V::DIM).fold(0.0f32, |e, axis| e.max(hi.axis(axis) - lo.axis(axis)));
    let cells = ((1u32 << bits) - 1) as f32;
    let scale = if extent > 0.0 && extent.is_finite() {
        cells / extent
    } else {
        0.0
    };
    let mut keys: Vec<u64> = centres
        .enumerate()
        .map(|(index, c)| {
            let mut code = 0u32;
            for axis in 0..V::DIM {
                let q = ((c.axis(axis) - lo.axis(axis)) * scale).clamp(0.0, cells) as u32;
                code |= spread_bits(q, V::DIM as u32) << axis;
            }
            (u64::from(code) << 32) | index as u64
        })
        .collect();
    keys.sort_unstable();
    keys
}

/// The low `32 / stride` bits of `q` moved to every `stride`-th bit (bit `k` to bit
/// `k * stride`), for a stride of 2 or 3 (2D, 3D); bit by bit for any other.
fn spread_bits(q: u32, stride: u32) -> u32 {
    match stride {
        2 => {
            let mut x = q & 0x0000_ffff;
            x = (x | (x << 8)) & 0x00ff_00ff;
            x = (x | (x << 4)) & 0x0f0f_0f0f;
            x = (x | (x << 2)) & 0x3333_3333;
            (x | (x << 1)) & 0x5555_5555
        }
        3 => {
            let mut x = q & 0x0000_03ff;
            x = (x | (x << 16)) & 0x0300_00ff;
            x = (x | (x << 8)) & 0x0300_f00f;
            x = (x | (x << 4)) & 0x030c_30c3;
            (x | (x << 2)) & 0x0924_9249
        }
        _ => (0..32 / stride).fold(0, |out, k| out | (((q >> k) & 1) << (k * stride))),
    }
}

/// Where the sorted Morton codes `codes` (two or more) split: the first code with the
/// highest bit in which the first and the last differ set; the middle when all are equal.
fn morton_split(codes: &[u32]) -> usize {
    let differ = codes[0] ^ codes[codes.len() - 1];
    if differ == 0 {
        return codes.len() / 2;
    }
    let bit = 1u32 << (31 - differ.leading_zeros());
    // Every code shares the bits above `bit`, so those without it come first.
    codes.partition_point(|&c| c & bit == 0)
}

/// One subtree to build over: its box and its node (20 bytes in 2D; the centre is worked
/// out when asked for rather than stored, a third less room at the build's peak).
#[derive(Clone, Copy)]
struct BuildItem<V> {
    aabb: Aabb<V>,
    node: u32,
}

impl<V: Vector> BuildItem<V> {
    /// The centre of the box.
    #[inline]
    fn center(&self) -> V {
        self.aabb.center()
    }
}

/// The least and greatest centre of a range of build items, per axis.
type CentreBounds<V> = (V, V);

/// The centre bounds of `items` (at least one).
fn centre_bounds<V: Vector>(items: &[BuildItem<V>]) -> CentreBounds<V> {
    let first = items[0].center();
    items.iter().fold((first, first), |(lo, hi), item| {
        (
            lo.min_by_component(item.center()),
            hi.max_by_component(item.center()),
        )
    })
}

/// Reorders `items` (two or more) and returns where the second half starts (in
/// `1..items.len()`) and the centre bounds of either half: [`split_all_axes`] (`bounds` hold
/// every centre), which first sets a box nearly as large as the whole range apart
/// ([`large_box_of`]). The Morton-split top levels of a large build ([`MORTON_MIN_ITEMS`]) do
/// not look for large boxes; the ranges they leave do.
///
/// Binning only the axis of widest centre spread, with the halves' bounds gathered while
/// partitioning, took 15% fewer instructions in the splits of 1,000,000 random circles, but
/// built costlier trees on level-like sets (Box2D's pyramid 141 against 139.5, a flat grid
/// 537.5 against 531.5): the builds keep binning every axis; large builds save their time
/// in the Morton-split top levels instead.
fn split<V: Vector>(
    items: &mut [BuildItem<V>],
    bounds: CentreBounds<V>,
) -> (usize, CentreBounds<V>, CentreBounds<V>) {
    let mid = split_all_axes(items, bounds);
    (
        mid,
        centre_bounds(&items[..mid]),
        centre_bounds(&items[mid..]),
    )
}

/// A box of at least this share of the SAH measure of its range's box, where the others'
/// box has at most this share of it, is split off alone (see [`large_box_of`]).
const LARGE_BOX_SHARE: f32 = 0.9;

/// The box to split off alone from `items` (three or more), if any: `largest`, the first
/// item of greatest SAH measure and that measure, when the measure is at least
/// [`LARGE_BOX_SHARE`] of `whole`, the measure of the union of all (finite and above 0), and
/// the union of the others is at most that share of it. The splits work out `whole` and
/// `largest` in the passes they make anyway; the others' union takes a pass of its own, made
/// only for such a box.
///
/// A split by centres cannot set such a box apart: its centre lies among the others', so it
/// goes down with some of them, and every branch on its way is nearly as large as the range
/// (level geometry: a ground or terrain box under the whole map). The SAH of a split counts
/// such a group as cheap (few boxes, times the large box's area), so it keeps choosing it
/// level after level. Split off, the box costs one branch over the others. On the real level
/// sets of `docs/quality.md` this took Gibraltar's binned build from 3.78 to 2.21 (the
/// agglomerative build: 2.03); random circles of equal size get the same trees, and the second
/// condition keeps boxes alike (and nested boxes of near sizes) to the split by centres.
fn large_box_of<V: Vector>(
    items: &[BuildItem<V>],
    whole: f32,
    (index, measure): (usize, f32),
) -> Option<usize> {
    let bound = LARGE_BOX_SHARE * whole;
    // Written so that a NaN measure never qualifies.
    let qualifies = items.len() >= 3 && whole > 0.0 && whole.is_finite() && measure >= bound;
    if !qualifies {
        return None;
    }
    let mut others = empty_box::<V>();
    for (k, item) in items.iter().enumerate() {
        if k != index {
            others = others.union(&item.aabb);
        }
    }
    (others.half_area() <= bound).then_some(index)
}

/// [`large_box_of`] with `whole` and `largest` worked out from `items`.
#[cfg(test)]
fn large_box<V: Vector>(items: &[BuildItem<V>]) -> Option<usize> {
    let union = items
        .iter()
        .fold(empty_box::<V>(), |u, item| u.union(&item.aabb));
    let mut largest = (0, f32::NEG_INFINITY);
    for (k, item) in items.iter().enumerate() {
        let measure = item.aabb.half_area();
        if measure > largest.1 {
            largest = (k, measure);
        }
    }
    large_box_of(items, union.half_area(), largest)
}

/// Moves `items[k]` last and returns where it starts: a split of it alone.
fn split_off<V: Vector>(items: &mut [BuildItem<V>], k: usize) -> usize {
    let last = items.len() - 1;
    items.swap(k, last);
    last
}

/// Reorders `items` (two or more) and returns where the second half starts (in
/// `1..items.len()`): a box nearly as large as the whole range alone at the end
/// ([`large_box_of`]), else the binned SAH split over every axis (`(cmin, cmax)` bound every
/// centre), or the middle when every centre is the same. At most [`BINS`] items go to
/// [`split_small`], which looks for such a box too.
fn split_all_axes<V: Vector>(items: &mut [BuildItem<V>], (cmin, cmax): CentreBounds<V>) -> usize {
    if items.len() == 2 {
        return 1;
    }
    if items.len() <= BINS {
        return split_small(items, cmin, cmax);
    }
    let bin_of = |c: f32, lo: f32, scale: f32| (((c - lo) * scale) as usize).min(BINS - 1);
    // An empty bin's box: any union with it is the other box.
    let empty = empty_box::<V>();
    // Stage 1: every axis binned in one pass (an axis with no extent is skipped later).
    let mut lo = [0.0f32; 3];
    let mut scale = [0.0f32; 3];
    for axis in 0..V::DIM {
        lo[axis] = cmin.axis(axis);
        let extent = cmax.axis(axis) - lo[axis];
        scale[axis] = if extent > 0.0 && extent.is_finite() {
            BINS as f32 / extent
        } else {
            0.0
        };
    }
    let mut counts = [[0u32; BINS]; 3];
    let mut boxes = [[empty; BINS]; 3];
    // The first item of greatest measure (see `large_box_of`).
    let mut largest = (0, f32::NEG_INFINITY);
    for (k, item) in items.iter().enumerate() {
        for axis in 0..V::DIM {
            let b = bin_of(item.center().axis(axis), lo[axis], scale[axis]);
            counts[axis][b] += 1;
            boxes[axis][b] = boxes[axis][b].union(&item.aabb);
        }
        let measure = item.aabb.half_area();
        if measure > largest.1 {
            largest = (k, measure);
        }
    }
    // Every item is in one bin of axis 0.
    let whole = boxes[0].iter().fold(empty, |u, b| u.union(b)).half_area();
    if let Some(k) = large_box_of(items, whole, largest) {
        return split_off(items, k);
    }
    // Stage 2: the split of least `count * area` on either side.
    // (cost, axis, last bin of the left side)
    let mut best: Option<(f32, usize, usize)> = None;
    let total = items.len() as u32;
    for axis in 0..V::DIM {
        if scale[axis] == 0.0 {
            continue;
        }
        let (counts, boxes) = (&counts[axis], &boxes[axis]);
        // Sweep from the right: area and count of bins b.. for each b.
        let mut right_cost = [0.0f32; BINS];
        let mut acc = empty;
        let mut count = 0u32;
        for b in (1..BINS).rev() {
            acc = acc.union(&boxes[b]);
            count += counts[b];
            if count > 0 {
                right_cost[b] = acc.half_area() * count as f32;
            }
        }
        let mut acc = empty;
        let mut left_count = 0u32;
        for b in 0..BINS - 1 {
            acc = acc.union(&boxes[b]);
            left_count += counts[b];
            if left_count == 0 || left_count == total {
                continue;
            }
            let cost = acc.half_area() * left_count as f32 + right_cost[b + 1];
            if best.is_none_or(|(c, ..)| cost < c) {
                best = Some((cost, axis, b));
            }
        }
    }
    let Some((_, axis, last)) = best else {
        return items.len() / 2;
    };
    let (lo, scale) = (lo[axis], scale[axis]);
    // Stage 3: partition, bins 0..=last to the front.
    let mut mid = 0;
    for k in 0..items.len() {
        if bin_of(items[k].center().axis(axis), lo, scale) <= last {
            items.swap(k, mid);
            mid += 1;
        }
    }
    if mid == 0 || mid == items.len() {
        items.len() / 2
    } else {
        mid
    }
}

/// The split of a few items (three to [`BINS`]): a box nearly as large as the whole range
/// alone at the end ([`large_box_of`]), else sorted by centre along the axis of widest centre
/// spread, cut where `count * area` summed over both sides is least (an exact SAH sweep,
/// cheaper here than binning; among equal costs, the cut nearest the middle).
fn split_small<V: Vector>(items: &mut [BuildItem<V>], cmin: V, cmax: V) -> usize {
    let axis = (0..V::DIM)
        .max_by(|&a, &b| {
            let ea = cmax.axis(a) - cmin.axis(a);
            let eb = cmax.axis(b) - cmin.axis(b);
            ea.total_cmp(&eb)
        })
        .unwrap_or(0);
    items.sort_unstable_by(|a, b| a.center().axis(axis).total_cmp(&b.center().axis(axis)));
    let n = items.len();
    // right_area[k]: area of items k.. (k in 1..n).
    let mut right_area = [0.0f32; BINS];
    let mut acc = items[n - 1].aabb;
    // The first item of greatest measure (see `large_box_of`): from the right, the last of
    // equals found wins.
    let mut largest = (0, f32::NEG_INFINITY);
    for k in (1..n).rev() {
        acc = acc.union(&items[k].aabb);
        right_area[k] = acc.half_area();
        let measure = items[k].aabb.half_area();
        if measure >= largest.1 {
            largest = (k, measure);
        }
    }
    let first = items[0].aabb.half_area();
    if first >= largest.1 {
        largest = (0, first);
    }
    if let Some(k) = large_box_of(items, acc.union(&items[0].aabb).half_area(), largest) {
        return split_off(items, k);
    }
    let mut best = (f32::MAX, n / 2);
    let mut acc = items[0].aabb;
    for k in 1..n {
        // Left: items ..k (acc holds them), right: items k..
        let cost = acc.half_area() * k as f32 + right_area[k] * (n - k) as f32;
        // Among equal costs, the cut nearest the middle.
        if cost < best.0 || (cost == best.0 && (2 * k).abs_diff(n) < (2 * best.1).abs_diff(n)) {
            best = (cost, k);
        }
        acc = acc.union(&items[k].aabb);
    }
    best.1
}

#[cfg(test)]
mod morton_tests {
    use super::{MORTON_MIN_ITEMS, morton_split, spread_bits};
    use crate::{Aabb, DynamicTree, TreeConfig};
    use glam::Vec2;

    #[test]
    fn spread_bits_moves_bit_k_to_bit_k_times_the_stride() {
        assert_eq!(spread_bits(0b1011, 2), 0b100_0101);
        assert_eq!(spread_bits(0xffff, 2), 0x5555_5555);
        assert_eq!(spread_bits(0b101, 3), 0b1_000_001);
        assert_eq!(spread_bits(0x3ff, 3), 0x0924_9249);
        assert_eq!(spread_bits(0b11, 4), 0b1_0001);
    }

    #[test]
    fn a_morton_range_splits_at_the_highest_differing_bit() {
        assert_eq!(morton_split(&[0b000, 0b001, 0b100, 0b111]), 2);
        assert_eq!(morton_split(&[0b010, 0b011, 0b011]), 1);
        assert_eq!(morton_split(&[5, 5, 5, 5, 5]), 2);
    }

    /// A batch past `MORTON_MIN_ITEMS` (Morton-ordered top levels) gives a sound tree with
    /// the same pairs as one built by inserting the same boxes one at a time.
    #[test]
    fn a_large_batch_finds_the_pairs_of_one_built_by_insertion() {
        let n = MORTON_MIN_ITEMS + 1000;
        // A jittered grid of unit boxes (side 256 cells), each overlapping a few neighbours.
        let items: Vec<(Aabb<Vec2>, Vec2, u32)> = (0..n as u32)
            .map(|k| {
                let jitter = (k.wrapping_mul(2_654_435_761) >> 24) as f32 / 512.0;
                let min = Vec2::new((k % 256) as f32 * 0.9 + jitter, (k / 256) as f32 * 0.9);
                (Aabb::new(min, min + Vec2::ONE), Vec2::ZERO, k)
            })
            .collect();
        let config = TreeConfig::default();
        let mut batch: DynamicTree<Vec2, u32> = DynamicTree::new(config);
        batch.create_proxies(&items).expect("batch");
        assert_eq!(batch.validate(), Ok(()));
        let mut single: DynamicTree<Vec2, u32> = DynamicTree::new(config);
        for &(tight, velocity, user) in &items {
            single.create_proxy(tight, velocity, user).expect("insert");
        }
        batch.update_pairs().expect("pairs");
        single.update_pairs().expect("pairs");
        assert!(!batch.pairs().is_empty());
        assert_eq!(batch.pairs(), single.pairs());
    }
}

#[cfg(test)]
mod large_box_tests {
    use super::{BuildItem, large_box};
    use crate::{Aabb, DynamicTree, TreeConfig};
    use glam::{Vec2, Vec3};

    fn items<V: crate::Vector>(boxes: &[Aabb<V>]) -> Vec<BuildItem<V>> {
        boxes
            .iter()
            .enumerate()
            .map(|(k, &aabb)| BuildItem {
                aabb,
                node: k as u32,
            })
            .collect()
    }

    fn square(x: f32, y: f32, side: f32) -> Aabb<Vec2> {
        Aabb::new(Vec2::new(x, y), Vec2::new(x + side, y + side))
    }

    #[test]
    fn only_a_box_nearly_as_large_as_the_range_over_smaller_others_is_split_off() {
        let ground = square(0.0, 0.0, 100.0);
        let small = [square(10.0, 10.0, 1.0), square(80.0, 70.0, 2.0)];
        // The ground over two small boxes, wherever it comes: split off.
        assert_eq!(large_box(&items(&[small[0], ground, small[1]])), Some(1));
        assert_eq!(large_box(&items(&[small[0], small[1], ground])), Some(2));
        // Two items: left to the split, which has one way.
        assert_eq!(large_box(&items(&[ground, small[0]])), None);
        // Boxes alike: each is the whole range, and so are the others.
        assert_eq!(large_box(&items(&[ground; 5])), None);
        // Nested boxes of near sizes: the others' box is nearly the range too (half
        // perimeters 200, 196 and 192 against 0.9 x 200).
        let nested = [ground, square(1.0, 1.0, 98.0), square(2.0, 2.0, 96.0)];
        assert_eq!(large_box(&items(&nested)), None);
        // Just past the share: the largest at 0.9 of the range, the others at 0.9.
        let edge = [
            square(0.0, 0.0, 90.0),
            square(10.0, 10.0, 90.0),
            square(10.0, 10.0, 1.0),
        ];
        // The range 100 x 100 (200), the largest 180 (the first of two equal), the others'
        // box 180: both at the bound.
        assert_eq!(large_box(&items(&edge)), Some(0));
        // Points (measure 0) and boxes whose measure overflows `f32`: never.
        let point = square(5.0, 5.0, 0.0);
        assert_eq!(large_box(&items(&[point, point, point])), None);
        let huge = Aabb::new(Vec3::splat(-1e20), Vec3::splat(1e20));
        let tiny = Aabb::new(Vec3::ZERO, Vec3::ONE);
        assert_eq!(large_box(&items(&[tiny, huge, tiny])), None);
    }

    /// A level: a ground box under the whole map and three groups of `per_group` small boxes
    /// far apart.
    fn level(per_group: u8) -> Vec<Aabb<Vec2>> {
        let mut boxes = vec![square(0.0, 0.0, 100.0)];
        for (x, y) in [(15.0, 80.0), (80.0, 75.0), (50.0, 15.0)] {
            for k in 0..per_group {
                let (dx, dy) = (f32::from(k % 5) * 2.0, f32::from(k / 5) * 2.5);
                boxes.push(square(x + dx, y + dy, 1.5));
            }
        }
        boxes
    }

    /// The tree of `boxes` built in one batch by binned SAH (margin 0), and whether the first
    /// box's leaf is a child of the root.
    fn batch_with_first_under_root(boxes: &[Aabb<Vec2>]) -> (DynamicTree<Vec2, u32>, bool) {
        let config = TreeConfig {
            margin: 0.0,
            velocity_lookahead: 0.0,
            ..TreeConfig::default()
        };
        let batch: Vec<(Aabb<Vec2>, Vec2, u32)> = boxes
            .iter()
            .enumerate()
            .map(|(k, &b)| (b, Vec2::ZERO, k as u32))
            .collect();
        let mut tree: DynamicTree<Vec2, u32> = DynamicTree::new(config);
        let handles = tree.create_proxies(&batch).expect("a batch");
        assert_eq!(tree.validate(), Ok(()));
        let leaf = tree.leaf_of(handles[0]).expect("a leaf");
        let under_root = tree.node(leaf).expect("in use").parent == tree.root();
        (tree, under_root)
    }

    /// The level with groups of twenty (61 boxes: the binned split). Split by centres alone,
    /// the ground went down with a group and the branches above it were as large as the map.
    #[test]
    fn a_ground_box_goes_right_under_the_root_of_a_binned_build() {
        let (tree, under_root) = batch_with_first_under_root(&level(20));
        assert!(under_root, "the ground's leaf is a child of the root");
        // Exact. Split by centres alone it cost 3.625; the exact greedy build's tree costs
        // the same as this one, PLOC's 3.382.
        assert_eq!(tree.sah_cost(), 3.3675);
        assert_eq!(tree.stats().height, 8);
    }

    /// With groups of three (10 boxes: the exact sweep of at most `BINS`), the same.
    #[test]
    fn a_ground_box_over_a_few_goes_right_under_the_root() {
        let (tree, under_root) = batch_with_first_under_root(&level(3));
        assert_eq!(tree.len(), 10);
        assert!(under_root, "the ground's leaf is a child of the root");
    }

    /// Many boxes alike (nothing to split off, every centre the same) make a balanced tree:
    /// every cut costs the same, and the exact sweep of the last few items takes the one
    /// nearest the middle (it took the first: 15 boxes in a row under 6 halvings, height 20).
    #[test]
    fn boxes_alike_make_a_tree_of_least_height() {
        let config = TreeConfig::default();
        let batch: Vec<(Aabb<Vec3>, Vec3, u32)> = (0..1000)
            .map(|k| (Aabb::new(Vec3::ZERO, Vec3::ONE), Vec3::ZERO, k))
            .collect();
        let mut tree: DynamicTree<Vec3, u32> = DynamicTree::new(config);
        tree.create_proxies(&batch).expect("a batch");
        assert_eq!(tree.validate(), Ok(()));
        let stats = tree.stats();
        assert_eq!((stats.height, stats.min_height), (10, 10));
    }
}

#[cfg(test)]
mod greedy_tests {
    use super::{PLOC_RADIUS, ploc_nearest};
    use crate::node::NULL;
    use crate::{Aabb, DynamicTree, RebuildMethod, TreeConfig, Vector};
    use glam::{Vec2, Vec3};

    /// `n` boxes of random corners (a fixed xorshift sequence) in a square of side 40, each
    /// side 0.1 to 3: no two unions of equal measure.
    fn random_boxes<V: Vector>(n: usize, seed: u64) -> Vec<Aabb<V>> {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32
        };
        (0..n)
            .map(|_| {
                let mut min = V::splat(0.0);
                let mut max = V::splat(0.0);
                for axis in 0..V::DIM {
                    let lo = next() * 40.0;
                    min.set_axis(axis, lo);
                    max.set_axis(axis, lo + 0.1 + next() * 2.9);
                }
                Aabb::new(min, max)
            })
            .collect()
    }

    /// The greedy build of `boxes` (one batch, margin 0).
    fn greedy_tree<V: Vector>(boxes: &[Aabb<V>]) -> DynamicTree<V, u32> {
        let items: Vec<(Aabb<V>, V, u32)> = boxes
            .iter()
            .enumerate()
            .map(|(i, b)| (*b, V::default(), i as u32))
            .collect();
        let mut tree = DynamicTree::new(TreeConfig {
            margin: 0.0,
            rebuild: RebuildMethod::Greedy,
            ..TreeConfig::default()
        });
        tree.create_proxies(&items).expect("valid boxes");
        tree
    }

    /// The height and branch sum (root excluded, `f64`) of the exhaustive greedy clustering
    /// of `boxes`: every pair compared at every merge, the least union (`f32` measure, as
    /// the build measures it) merged.
    fn exhaustive_greedy<V: Vector>(boxes: &[Aabb<V>]) -> (u32, f64) {
        let mut clusters: Vec<(Aabb<V>, u32)> = boxes.iter().map(|b| (*b, 0)).collect();
        let mut sum = 0.0;
        while clusters.len() > 1 {
            let mut best = (f32::INFINITY, 0, 0);
            for i in 0..clusters.len() {
                for j in i + 1..clusters.len() {
                    let cost = clusters[i].0.union(&clusters[j].0).half_area();
                    if cost < best.0 {
                        best = (cost, i, j);
                    }
                }
            }
            let (_, i, j) = best;
            let (b, hb) = clusters.swap_remove(j);
            let (a, ha) = clusters[i];
            let merged = a.union(&b);
            sum += merged.half_area_f64();
            clusters[i] = (merged, 1 + ha.max(hb));
        }
        (clusters[0].1, sum - clusters[0].0.half_area_f64())
    }

    /// The root's SAH measure times the cost: the branch sum, root excluded.
    fn branch_sum<V: Vector>(tree: &DynamicTree<V, u32>) -> f64 {
        let root = tree.root().and_then(|r| tree.node(r)).expect("a root");
        tree.sah_cost() * root.aabb.half_area_f64()
    }

    fn check_exhaustive<V: Vector>(n: usize, seed: u64) {
        let boxes = random_boxes::<V>(n, seed);
        let tree = greedy_tree(&boxes);
        assert_eq!(tree.validate(), Ok(()));
        let (height, sum) = exhaustive_greedy(&boxes);
        assert_eq!(tree.stats().height, height, "{}D, {n} boxes", V::DIM);
        let got = branch_sum(&tree);
        assert!(
            (got - sum).abs() <= 1e-9 * sum,
            "{}D, {n} boxes: {got} against {sum}",
            V::DIM
        );
    }

    /// The greedy build makes the tree of the exhaustive greedy clustering (the same height
    /// and branches) in 2D and 3D, for sets of 2 to 150 boxes.
    #[test]
    fn the_greedy_build_merges_as_the_exhaustive_greedy_does() {
        for (n, seed) in [(2, 1), (3, 2), (17, 3), (64, 4), (150, 5)] {
            check_exhaustive::<Vec2>(n, seed);
            check_exhaustive::<Vec3>(n, seed);
        }
    }

    /// Out of budget, the greedy build merges the clusters left by PLOC: with no budget it
    /// makes the agglomerative build's tree, with an unbounded one the greedy tree, and with
    /// one too small to finish a sound tree with the same pairs.
    #[test]
    fn a_greedy_build_out_of_budget_finishes_by_ploc() {
        let boxes = random_boxes::<Vec2>(300, 9);
        let mut ploc = greedy_tree(&boxes);
        ploc.set_rebuild_method(RebuildMethod::Agglomerative);
        ploc.rebuild();
        let mut greedy = greedy_tree(&boxes);
        greedy.update_pairs().expect("no pair limit");
        assert!(greedy.pairs().len() > 10);
        for (budget, like) in [(0, Some(&ploc)), (25_000, None), (u64::MAX, Some(&greedy))] {
            let mut tree = greedy_tree(&boxes);
            let mut items = Vec::new();
            tree.gather(&mut items, |_| true);
            tree.build_greedy(&items, budget);
            assert_eq!(tree.validate(), Ok(()), "budget {budget}");
            assert_eq!(tree.stats().leaves, 300);
            if let Some(like) = like {
                assert_eq!(tree.sah_cost(), like.sah_cost(), "budget {budget}");
                assert_eq!(tree.stats().height, like.stats().height, "budget {budget}");
            } else {
                assert_ne!(tree.sah_cost(), ploc.sah_cost());
                assert_ne!(tree.sah_cost(), greedy.sah_cost());
            }
            tree.update_pairs().expect("no pair limit");
            assert_eq!(tree.pairs(), greedy.pairs(), "budget {budget}");
        }
    }

    /// Among equal unions the lower merge goes first: boxes all alike (every tree of them
    /// costs the same, each branch's measure the root's) make a balanced tree, not a list.
    #[test]
    fn equal_boxes_make_a_balanced_tree() {
        for (n, height) in [(64, 6), (100, 7), (1000, 10)] {
            let boxes = vec![Aabb::new(Vec2::ZERO, Vec2::ONE); n];
            let tree = greedy_tree(&boxes);
            assert_eq!(tree.validate(), Ok(()));
            assert_eq!(tree.stats().height, height, "{n} boxes");
            assert_eq!(tree.sah_cost(), (n - 2) as f64, "{n} boxes");
        }
    }

    /// PLOC's stage 2 as first written: each pair offered to its lower cluster, then to its
    /// higher, straight into the list, keeping the first of the least measure.
    fn ploc_nearest_reference<V: Vector>(boxes: &[Aabb<V>]) -> Vec<u32> {
        let n = boxes.len();
        let mut nearest = vec![(f32::INFINITY, NULL); n];
        for i in 0..n {
            for j in i + 1..(i + 1 + PLOC_RADIUS).min(n) {
                let cost = boxes[i].union(&boxes[j]).half_area();
                for (slot, other) in [(i, j), (j, i)] {
                    let slot = &mut nearest[slot];
                    if slot.1 == NULL || cost.total_cmp(&slot.0).is_lt() {
                        *slot = (cost, other as u32);
                    }
                }
            }
        }
        nearest.into_iter().map(|(_, j)| j).collect()
    }

    /// PLOC's stage 2 (each pair offered through a ring, the least taken by lane-wise
    /// minimums and a bit mask) gives every cluster the neighbour the plain loop gives, ties
    /// included, at every count around the window's edges.
    #[test]
    fn ploc_nearest_neighbours_are_those_of_the_plain_loop() {
        let mut nearest = Vec::new();
        let mut check = |name: &str, boxes: &[Aabb<Vec2>]| {
            ploc_nearest(boxes, &mut nearest);
            assert_eq!(nearest, ploc_nearest_reference(boxes), "{name}");
        };
        // Every count around the window's edges, random boxes.
        for n in (2..=60).chain([100, 257, 1_000]) {
            check(
                &format!("random {n}"),
                &random_boxes::<Vec2>(n, n as u64 + 7),
            );
        }
        // Ties everywhere: boxes alike, unit squares on a small grid (many equal unions), a
        // row of points, and boxes so large that every union's measure rounds to infinity.
        for n in [2, 3, 12, 13, 14, 25, 26, 27, 100] {
            check("alike", &vec![Aabb::new(Vec2::ZERO, Vec2::ONE); n]);
            let grid: Vec<Aabb<Vec2>> = (0..n)
                .map(|i| {
                    let p = Vec2::new((i % 4) as f32, (i / 4 % 3) as f32);
                    Aabb::new(p, p + Vec2::ONE)
                })
                .collect();
            check("grid", &grid);
            let points: Vec<Aabb<Vec2>> = (0..n)
                .map(|i| Aabb::new(Vec2::new(i as f32, 0.0), Vec2::new(i as f32, 0.0)))
                .collect();
            check("points", &points);
            let huge: Vec<Aabb<Vec2>> = (0..n)
                .map(|i| {
                    let side = if i % 2 == 0 { -1.0 } else { 1.0 };
                    Aabb::new(Vec2::splat(side * 3e38), Vec2::splat(side * 3e38 + 1e32))
                })
                .collect();
            check("huge", &huge);
        }
        // And in 3D.
        let mut nearest3 = Vec::new();
        for n in [2, 13, 40, 300] {
            let boxes = random_boxes::<Vec3>(n, 99 + n as u64);
            ploc_nearest(&boxes, &mut nearest3);
            assert_eq!(nearest3, ploc_nearest_reference(&boxes), "3D {n}");
        }
    }

    /// Boxes that make PLOC's rounds stall (each merges one pair: alike, nested, evenly in
    /// a row, points on a line, at growing gaps along a line) are merged two by two once a
    /// round merges fewer than one cluster in 32: the tree is valid, holds every box, and is
    /// no list (one merge a round made a list of 20,000 in 10 s). Heights and costs exact;
    /// the row's pairs equal brute force.
    #[test]
    fn stalled_agglomerative_rounds_merge_two_by_two() {
        let n = 20_000;
        let alike = vec![Aabb::new(Vec2::ZERO, Vec2::ONE); n];
        let nested: Vec<Aabb<Vec2>> = (0..n)
            .map(|i| {
                let r = 1.0 + i as f32 * 0.01;
                Aabb::new(Vec2::splat(-r), Vec2::splat(r))
            })
            .collect();
        let row: Vec<Aabb<Vec2>> = (0..n)
            .map(|i| Aabb::new(Vec2::new(i as f32, 0.0), Vec2::new(i as f32 + 1.0, 1.0)))
            .collect();
        let points: Vec<Aabb<Vec2>> = (0..n)
            .map(|i| Aabb::new(Vec2::new(i as f32, 0.0), Vec2::new(i as f32, 0.0)))
            .collect();
        let gaps: Vec<Aabb<Vec2>> = (0..n)
            .map(|i| {
                let x = 1.001f32.powi(i as i32);
                Aabb::new(Vec2::new(x, 0.0), Vec2::new(x + 0.5, 1.0))
            })
            .collect();
        // Alike and nested end in a chain of up to 32 clusters (a round merging one of them
        // is not stalled) over balanced subtrees.
        for (name, boxes, height, cost) in [
            ("alike", &alike, 38, 19_998.0),
            ("nested", &nested, 30, 10_053.656_766_095_764),
            ("row", &row, 15, 14.360_831_958_402_08),
            ("points", &points, 15, 12.362_368_118_405_92),
            ("gaps", &gaps, 30, 9.552_736_574_057_922),
        ] {
            let mut tree = greedy_tree(boxes);
            tree.set_rebuild_method(RebuildMethod::Agglomerative);
            tree.rebuild();
            assert_eq!(tree.validate(), Ok(()), "{name}");
            assert_eq!(tree.stats().leaves, n, "{name}");
            assert_eq!(tree.stats().height, height, "{name}");
            assert_eq!(tree.sah_cost(), cost, "{name}");
            if name == "row" {
                tree.update_pairs().expect("pairs");
                // Brute force over the boxes that can meet (two apart or more: a gap).
                let expected: Vec<(u32, u32)> = (0..n)
                    .flat_map(|i| (i + 1..(i + 3).min(n)).map(move |j| (i, j)))
                    .filter(|&(i, j)| row[i].overlaps(&row[j]))
                    .map(|(i, j)| (i as u32, j as u32))
                    .collect();
                assert_eq!(expected.len(), n - 1);
                let found: Vec<(u32, u32)> = tree
                    .pairs()
                    .iter()
                    .map(|&(a, b)| (a.index, b.index))
                    .collect();
                assert_eq!(found, expected);
            }
        }
    }
}
