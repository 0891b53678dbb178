//! Rebuilds: a full top-down binned-SAH build over every leaf, and Box2D v3's partial rebuild
//! that rebuilds only the enlarged branches above untouched subtrees.

use super::node::NULL;
use super::{Aabb, DynamicTree, TreeEvent, Vector};

/// Bins per axis of the binned SAH split.
const BINS: usize = 16;

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Full rebuild with binned SAH: every branch is freed and the leaves are split top-down
    /// at the bin boundary of least `count * area` on either side. Leaf boxes (and so the
    /// pairs) do not change.
    pub fn rebuild(&mut self) {
        if self.root == NULL {
            return;
        }
        // Stage 1: gather the leaves, free the branches.
        let mut items = std::mem::take(&mut self.build_items);
        items.clear();
        self.gather(&mut items, |_| true);
        // Stage 2: build.
        self.build(&mut items);
        self.build_items = items;
        self.any_enlarged = false;
        self.record(TreeEvent::Rebuild { partial: false });
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
        // (start, end, parent, which child of parent: 1 or 2)
        let mut stack: Vec<(usize, usize, u32, u8)> = vec![(0, items.len(), NULL, 0)];
        let mut created: Vec<u32> = Vec::with_capacity(items.len().saturating_sub(1));
        while let Some((start, end, parent, which)) = stack.pop() {
            let index = if end - start == 1 {
                items[start]
            } else {
                // Stage 1: split the range.
                let mid = start + self.split(&mut items[start..end]);
                // Stage 2: a branch for it (the pool holds the branches just freed).
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
    }

    /// Reorders `items` (two or more) and returns where the second half starts (in
    /// `1..items.len()`): the binned SAH split over every axis, or the middle when every
    /// centre is the same.
    fn split(&self, items: &mut [u32]) -> usize {
        let center = |i: u32| self.nodes[i as usize].aabb.center();
        let first = center(items[0]);
        let (mut cmin, mut cmax) = (first, first);
        for &i in items.iter() {
            let c = center(i);
            cmin = cmin.min_by_component(c);
            cmax = cmax.max_by_component(c);
        }
        let bin_of = |c: f32, lo: f32, scale: f32| (((c - lo) * scale) as usize).min(BINS - 1);
        // (cost, axis, last bin of the left side)
        let mut best: Option<(f32, usize, usize)> = None;
        for axis in 0..V::DIM {
            let lo = cmin.axis(axis);
            let extent = cmax.axis(axis) - lo;
            if extent <= 0.0 || !extent.is_finite() {
                continue;
            }
            let scale = BINS as f32 / extent;
            let mut counts = [0u32; BINS];
            let mut boxes: [Option<Aabb<V>>; BINS] = [None; BINS];
            for &i in items.iter() {
                let b = bin_of(center(i).axis(axis), lo, scale);
                counts[b] += 1;
                let aabb = self.nodes[i as usize].aabb;
                boxes[b] = Some(boxes[b].map_or(aabb, |x| x.union(&aabb)));
            }
            // Sweep from the right: area and count of bins b.. for each b.
            let mut right_cost = [0.0f32; BINS];
            let mut acc: Option<Aabb<V>> = None;
            let mut count = 0u32;
            for b in (1..BINS).rev() {
                if let Some(x) = boxes[b] {
                    acc = Some(acc.map_or(x, |a| a.union(&x)));
                }
                count += counts[b];
                right_cost[b] = acc.map_or(0.0, |a| a.half_area()) * count as f32;
            }
            let mut acc: Option<Aabb<V>> = None;
            let mut left_count = 0u32;
            let total = items.len() as u32;
            for b in 0..BINS - 1 {
                if let Some(x) = boxes[b] {
                    acc = Some(acc.map_or(x, |a| a.union(&x)));
                }
                left_count += counts[b];
                if left_count == 0 || left_count == total {
                    continue;
                }
                let cost =
                    acc.map_or(0.0, |a| a.half_area()) * left_count as f32 + right_cost[b + 1];
                if best.is_none_or(|(c, ..)| cost < c) {
                    best = Some((cost, axis, b));
                }
            }
        }
        let Some((_, axis, last)) = best else {
            return items.len() / 2;
        };
        let lo = cmin.axis(axis);
        let scale = BINS as f32 / (cmax.axis(axis) - lo);
        // Partition: bins 0..=last to the front.
        let mut mid = 0;
        for k in 0..items.len() {
            if bin_of(center(items[k]).axis(axis), lo, scale) <= last {
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
}
