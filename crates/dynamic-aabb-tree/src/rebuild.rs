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
        self.compact_layout();
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
                code |= spread_bits(q, V::DIM as u32) << axis;
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
        // The splits read each subtree's box and centre many times: copy them side by side
        // (in Morton order for a large build, whose top levels are split by Morton code).
        let item = |node: u32| {
            let aabb = self.nodes[node as usize].aabb;
            BuildItem { aabb, node }
        };
        let mut codes: Vec<u32> = Vec::new();
        let mut work: Vec<BuildItem<V>> = if items.len() >= MORTON_MIN_ITEMS {
            let keys = morton_keys(items.iter().map(|&node| item(node).center()));
            codes = keys.iter().map(|&key| (key >> 32) as u32).collect();
            keys.iter()
                .map(|&key| item(items[key as u32 as usize]))
                .collect()
        } else {
            items.iter().map(|&node| item(node)).collect()
        };
        let morton = !codes.is_empty();
        let bounds = if morton {
            (V::splat(0.0), V::splat(0.0))
        } else {
            centre_bounds(&work)
        };
        // (start, end, parent, which child of parent: 1 or 2, the range's centre bounds, true
        // while the range is split by Morton code and its bounds are not yet known)
        let mut stack: Vec<(usize, usize, u32, u8, CentreBounds<V>, bool)> =
            vec![(0, work.len(), NULL, 0, bounds, morton)];
        let mut created: Vec<u32> = Vec::with_capacity(work.len().saturating_sub(1));
        while let Some((start, end, parent, which, bounds, morton)) = stack.pop() {
            let index = if end - start == 1 {
                work[start].node
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
                // Stage 2: a branch for it (the pool holds the branches just freed, or the
                // room a batch creation reserved).
                let branch = self
                    .alloc_node()
                    .expect("a rebuild reuses the branches it freed");
                created.push(branch);
                stack.push((mid, end, branch, 2, right, morton));
                stack.push((start, mid, branch, 1, left, morton));
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
/// `1..items.len()`) and the centre bounds of either half: [`split_all_axes`] (`bounds`
/// hold every centre).
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

/// Reorders `items` (two or more) and returns where the second half starts (in
/// `1..items.len()`): the binned SAH split over every axis (`(cmin, cmax)` bound every
/// centre), or the middle when every centre is the same.
fn split_all_axes<V: Vector>(items: &mut [BuildItem<V>], (cmin, cmax): CentreBounds<V>) -> usize {
    if items.len() == 2 {
        return 1;
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
            let b = bin_of(item.center().axis(axis), lo[axis], scale[axis]);
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
    items.sort_unstable_by(|a, b| a.center().axis(axis).total_cmp(&b.center().axis(axis)));
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
