//! Rebuilds: a full build over every leaf, top-down by binned SAH or bottom-up by
//! agglomerative clustering (PLOC), and Box2D v3's partial rebuild that rebuilds only the
//! enlarged branches above untouched subtrees.

use super::node::NULL;
use super::{Aabb, DynamicTree, RebuildMethod, TreeEvent, Vector};

/// How many clusters on either side (in Morton order) each cluster of the agglomerative build
/// ([`RebuildMethod::Agglomerative`]) compares itself with when it looks for its nearest
/// neighbour. Meister and Bittner found 10 to 16 a good trade; a larger radius finds
/// nearer neighbours (a cheaper tree) and takes longer, about in proportion.
pub const PLOC_RADIUS: usize = 12;

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
    /// Each cluster's nearest neighbour so far: the SAH measure of the union and its index.
    nearest: Vec<(f32, u32)>,
}

impl<V> Default for PlocScratch<V> {
    fn default() -> Self {
        Self {
            keys: Vec::new(),
            clusters: Vec::new(),
            boxes: Vec::new(),
            nearest: Vec::new(),
        }
    }
}

impl<V> PlocScratch<V> {
    /// Bytes held (capacities).
    pub(crate) fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.keys.capacity() * size_of::<u64>()
            + self.clusters.capacity() * size_of::<u32>()
            + self.boxes.capacity() * size_of::<Aabb<V>>()
            + self.nearest.capacity() * size_of::<(f32, u32)>()
    }
}

/// Bins per axis of the binned SAH split.
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
        }
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
                code |= spread_bits(q, V::DIM) << axis;
            }
            s.keys.push((u64::from(code) << 32) | u64::from(node));
        }
        s.keys.sort_unstable();
        s.clusters.clear();
        s.boxes.clear();
        for &key in &s.keys {
            let node = key as u32;
            s.clusters.push(node);
            s.boxes.push(self.nodes[node as usize].aabb);
        }
        let mut created = 0u64;
        while s.clusters.len() > 1 {
            let n = s.clusters.len();
            // Stage 2: nearest neighbours. Pair (i, j), i < j, is offered to i and then to j;
            // each cluster is offered its pairs in increasing (lower, higher) index order,
            // so keeping the first of the least measure breaks ties towards lower indices.
            s.nearest.clear();
            s.nearest.resize(n, (f32::INFINITY, NULL));
            for i in 0..n {
                let a = s.boxes[i];
                for j in i + 1..(i + 1 + PLOC_RADIUS).min(n) {
                    let cost = a.union(&s.boxes[j]).half_area();
                    let offer = |slot: &mut (f32, u32), other: usize| {
                        if slot.1 == NULL || cost.total_cmp(&slot.0).is_lt() {
                            *slot = (cost, other as u32);
                        }
                    };
                    offer(&mut s.nearest[i], j);
                    offer(&mut s.nearest[j], i);
                }
            }
            // Stage 3: merge mutual nearest neighbours; compact in place (the write index
            // never passes the read index, and a merge reads its partner ahead of both).
            let mut write = 0;
            for i in 0..n {
                let j = s.nearest[i].1 as usize;
                if s.nearest[j].1 as usize != i {
                    s.clusters[write] = s.clusters[i];
                    s.boxes[write] = s.boxes[i];
                    write += 1;
                } else if i < j {
                    let branch = self
                        .alloc_node()
                        .expect("a rebuild reuses the branches it freed");
                    let (a, b) = (s.clusters[i], s.clusters[j]);
                    {
                        let node = &mut self.nodes[branch as usize];
                        node.child1 = a;
                        node.child2 = b;
                    }
                    self.nodes[a as usize].parent = branch;
                    self.nodes[b as usize].parent = branch;
                    self.refit_node(branch);
                    created += 1;
                    s.clusters[write] = branch;
                    s.boxes[write] = self.nodes[branch as usize].aabb;
                    write += 1;
                }
            }
            debug_assert!(write < n, "every round merges the least pair");
            s.clusters.truncate(write);
            s.boxes.truncate(write);
        }
        let root = s.clusters[0];
        self.nodes[root as usize].parent = NULL;
        self.root = root;
        // Each subtree placed and each branch made.
        self.count_update(items.len() as u64 + created, 0);
        self.ploc = s;
    }

    /// The binned-SAH build over the subtrees `items` (at least one), with branches from the
    /// free list; makes it the whole tree.
    fn build_binned(&mut self, items: &mut [u32]) {
        // The splits read each subtree's box and centre many times: copy them side by side.
        let mut work: Vec<BuildItem<V>> = items
            .iter()
            .map(|&node| {
                let aabb = self.nodes[node as usize].aabb;
                BuildItem {
                    aabb,
                    center: aabb.center(),
                    node,
                }
            })
            .collect();
        // (start, end, parent, which child of parent: 1 or 2)
        let mut stack: Vec<(usize, usize, u32, u8)> = vec![(0, work.len(), NULL, 0)];
        let mut created: Vec<u32> = Vec::with_capacity(work.len().saturating_sub(1));
        while let Some((start, end, parent, which)) = stack.pop() {
            let index = if end - start == 1 {
                work[start].node
            } else {
                // Stage 1: split the range.
                let mid = start + split(&mut work[start..end]);
                // Stage 2: a branch for it (the pool holds the branches just freed, or the
                // room a batch creation reserved).
                let branch = self
                    .alloc_node()
                    .expect("a rebuild reuses the branches it freed");
                created.push(branch);
                stack.push((mid, end, branch, 2));
                stack.push((start, mid, branch, 1));
                branch
            };
            self.nodes[index as usize].parent = parent;
            match which {
                0 => self.root = index,
                1 => self.nodes[parent as usize].child1 = index,
                _ => self.nodes[parent as usize].child2 = index,
            }
        }
        // Stage 3: boxes and heights bottom-up (children were made after their parents).
        for &branch in created.iter().rev() {
            self.refit_node(branch);
        }
        // Each subtree placed and each branch made.
        self.count_update((work.len() + created.len()) as u64, 0);
    }
}

/// `q`'s low bits spread apart for a Morton code: bit `k` to bit `2k` (`dims` 2, 16 bits) or
/// `3k` (`dims` 3, 10 bits).
fn spread_bits(q: u32, dims: usize) -> u32 {
    if dims == 2 {
        let mut x = q & 0x0000_ffff;
        x = (x | (x << 8)) & 0x00ff_00ff;
        x = (x | (x << 4)) & 0x0f0f_0f0f;
        x = (x | (x << 2)) & 0x3333_3333;
        (x | (x << 1)) & 0x5555_5555
    } else {
        let mut x = q & 0x0000_03ff;
        x = (x | (x << 16)) & 0x0300_00ff;
        x = (x | (x << 8)) & 0x0300_f00f;
        x = (x | (x << 4)) & 0x030c_30c3;
        (x | (x << 2)) & 0x0924_9249
    }
}

/// One subtree to build over: its box, the box's centre and its node.
#[derive(Clone, Copy)]
struct BuildItem<V> {
    aabb: Aabb<V>,
    center: V,
    node: u32,
}

/// Reorders `items` (two or more) and returns where the second half starts (in
/// `1..items.len()`): the binned SAH split over every axis, or the middle when every centre
/// is the same.
fn split<V: Vector>(items: &mut [BuildItem<V>]) -> usize {
    if items.len() == 2 {
        return 1;
    }
    let first = items[0].center;
    let (mut cmin, mut cmax) = (first, first);
    for item in items.iter() {
        cmin = cmin.min_by_component(item.center);
        cmax = cmax.max_by_component(item.center);
    }
    if items.len() <= BINS {
        return split_small(items, cmin, cmax);
    }
    let bin_of = |c: f32, lo: f32, scale: f32| (((c - lo) * scale) as usize).min(BINS - 1);
    // An empty bin's box: any union with it is the other box.
    let empty = Aabb {
        min: V::splat(f32::MAX),
        max: V::splat(-f32::MAX),
    };
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
    for item in items.iter() {
        for axis in 0..V::DIM {
            let b = bin_of(item.center.axis(axis), lo[axis], scale[axis]);
            counts[axis][b] += 1;
            boxes[axis][b] = boxes[axis][b].union(&item.aabb);
        }
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
        if bin_of(items[k].center.axis(axis), lo, scale) <= last {
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

/// The split of a few items (at most [`BINS`]): sorted by centre along the axis of widest
/// centre spread, cut where `count * area` summed over both sides is least (an exact SAH
/// sweep, cheaper here than binning).
fn split_small<V: Vector>(items: &mut [BuildItem<V>], cmin: V, cmax: V) -> usize {
    let axis = (0..V::DIM)
        .max_by(|&a, &b| {
            let ea = cmax.axis(a) - cmin.axis(a);
            let eb = cmax.axis(b) - cmin.axis(b);
            ea.total_cmp(&eb)
        })
        .unwrap_or(0);
    items.sort_unstable_by(|a, b| a.center.axis(axis).total_cmp(&b.center.axis(axis)));
    let n = items.len();
    // right_area[k]: area of items k.. (k in 1..n).
    let mut right_area = [0.0f32; BINS];
    let mut acc = items[n - 1].aabb;
    for k in (1..n).rev() {
        acc = acc.union(&items[k].aabb);
        right_area[k] = acc.half_area();
    }
    let mut best = (f32::MAX, n / 2);
    let mut acc = items[0].aabb;
    for k in 1..n {
        // Left: items ..k (acc holds them), right: items k..
        let cost = acc.half_area() * k as f32 + right_area[k] * (n - k) as f32;
        if cost < best.0 {
            best = (cost, k);
        }
        acc = acc.union(&items[k].aabb);
    }
    best.1
}
