//! Rebuilds: a full top-down binned-SAH build over every leaf, and Box2D v3's partial rebuild
//! that rebuilds only the enlarged branches above untouched subtrees.

use super::node::NULL;
use super::{Aabb, DynamicTree, TreeEvent, Vector};

/// Ranges of at most this many items are split by an exact SAH sweep over sorted centres.
const BINS: usize = 16;

/// Bins along the widest axis of the binned SAH split.
const SAH_BINS: usize = 16;

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Full rebuild with binned SAH: every branch is freed and the leaves are split top-down
    /// at the bin boundary of least `count * area` on either side. Leaf boxes (and so the
    /// pairs) do not change.
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
    /// freed and the subtrees below it that are not enlarged (and leaves) are rebuilt over with
    /// binned SAH. A no-op when nothing is enlarged.
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
    /// and makes it the whole tree.
    fn build(&mut self, items: &mut [u32]) {
        // The splits read each subtree's box and centre many times: copy them side by side
        // (in Morton order for a large build, whose top levels are split by Morton code).
        let item = |node: u32| {
            let aabb = self.nodes[node as usize].aabb;
            BuildItem {
                aabb,
                center: aabb.center(),
                node,
            }
        };
        let mut codes: Vec<u32> = Vec::new();
        let mut work: Vec<BuildItem<V>> = if items.len() >= MORTON_MIN_ITEMS {
            let keys = morton_keys(items.iter().map(|&node| item(node).center));
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

/// One subtree to build over: its box, the box's centre and its node.
#[derive(Clone, Copy)]
struct BuildItem<V> {
    aabb: Aabb<V>,
    center: V,
    node: u32,
}

/// The least and greatest centre of a range of build items, per axis.
type CentreBounds<V> = (V, V);

/// The centre bounds of `items` (at least one).
fn centre_bounds<V: Vector>(items: &[BuildItem<V>]) -> CentreBounds<V> {
    let first = items[0].center;
    items.iter().fold((first, first), |(lo, hi), item| {
        (
            lo.min_by_component(item.center),
            hi.max_by_component(item.center),
        )
    })
}

/// Reorders `items` (two or more) and returns where the second half starts (in
/// `1..items.len()`) and the centre bounds of either half: the binned SAH split along the
/// axis of widest centre spread (`bounds` hold every centre), or the middle when every
/// centre is the same along it.
///
/// Binning one axis, with the centre bounds of the halves gathered while partitioning,
/// touches each item twice per level (it was four times: bounds, every axis binned, the
/// partition): 1,000,000 random circles took 2.25 billion instructions in the splits with
/// every axis binned, 1.92 billion with the widest one, for a SAH cost 0.2% higher.
fn split<V: Vector>(
    items: &mut [BuildItem<V>],
    bounds: CentreBounds<V>,
) -> (usize, CentreBounds<V>, CentreBounds<V>) {
    let n = items.len();
    let (cmin, cmax) = bounds;
    if n <= BINS {
        let mid = if n == 2 {
            1
        } else {
            split_small(items, cmin, cmax)
        };
        return (
            mid,
            centre_bounds(&items[..mid]),
            centre_bounds(&items[mid..]),
        );
    }
    let axis = widest_axis(cmin, cmax);
    let lo = cmin.axis(axis);
    let extent = cmax.axis(axis) - lo;
    if !(extent > 0.0 && extent.is_finite()) {
        // Every centre the same along the widest axis, so along every axis.
        return (n / 2, bounds, bounds);
    }
    let scale = SAH_BINS as f32 / extent;
    let bin_of = |c: f32| (((c - lo) * scale) as usize).min(SAH_BINS - 1);
    // An empty bin's box: any union with it is the other box.
    let empty = Aabb {
        min: V::splat(f32::MAX),
        max: V::splat(-f32::MAX),
    };
    // Stage 1: bin the items along the axis.
    let mut counts = [0u32; SAH_BINS];
    let mut boxes = [empty; SAH_BINS];
    for item in items.iter() {
        let b = bin_of(item.center.axis(axis));
        counts[b] += 1;
        boxes[b] = boxes[b].union(&item.aabb);
    }
    // Stage 2: the split of least `count * area` on either side.
    // Sweep from the right: area and count of bins b.. for each b.
    let mut right_cost = [0.0f32; SAH_BINS];
    let mut acc = empty;
    let mut count = 0u32;
    for b in (1..SAH_BINS).rev() {
        acc = acc.union(&boxes[b]);
        count += counts[b];
        if count > 0 {
            right_cost[b] = acc.half_area() * count as f32;
        }
    }
    // (cost, last bin of the left side)
    let mut best: Option<(f32, usize)> = None;
    let total = n as u32;
    let mut acc = empty;
    let mut left_count = 0u32;
    for b in 0..SAH_BINS - 1 {
        acc = acc.union(&boxes[b]);
        left_count += counts[b];
        if left_count == 0 || left_count == total {
            continue;
        }
        let cost = acc.half_area() * left_count as f32 + right_cost[b + 1];
        if best.is_none_or(|(c, _)| cost < c) {
            best = Some((cost, b));
        }
    }
    let Some((_, last)) = best else {
        return (n / 2, bounds, bounds);
    };
    // Stage 3: partition, bins 0..=last to the front, with each side's centre bounds.
    let inverted = (V::splat(f32::MAX), V::splat(-f32::MAX));
    let (mut left, mut right) = (inverted, inverted);
    let mut mid = 0;
    for k in 0..n {
        let c = items[k].center;
        if bin_of(c.axis(axis)) <= last {
            left = (left.0.min_by_component(c), left.1.max_by_component(c));
            items.swap(k, mid);
            mid += 1;
        } else {
            right = (right.0.min_by_component(c), right.1.max_by_component(c));
        }
    }
    // The best split has items on both sides (binning and partition put each item in the
    // same bin); the middle should rounding ever disagree.
    if mid == 0 || mid == n {
        return (n / 2, bounds, bounds);
    }
    (mid, left, right)
}

/// The axis along which `max - min` is largest (the first of equals).
fn widest_axis<V: Vector>(min: V, max: V) -> usize {
    let mut best = 0;
    for axis in 1..V::DIM {
        if max.axis(axis) - min.axis(axis) > max.axis(best) - min.axis(best) {
            best = axis;
        }
    }
    best
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
