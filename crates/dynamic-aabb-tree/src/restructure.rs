//! Thorough optimization for trees built once and kept (level geometry): moves that never
//! raise the SAH cost, repeated until they stop paying.
//!
//! - Subtree reinsertion (after Bittner, Hapala and Havran 2013, and Meister and Bittner
//!   2017): every subtree in turn (leaves and branches) is taken out and put back where the
//!   exact SAH search says it costs least, only when that is cheaper than where it was.
//! - Treelet restructuring (Karras and Aila 2013): the treelet of up to [`TREELET_LEAVES`]
//!   subtrees under each branch (grown by opening its largest subtree) is rebuilt in its
//!   cheapest shape, found exactly by dynamic programming over the subsets of its subtrees.
//!
//! The cost is [`DynamicTree::sah_cost`]'s: the SAH measure of every branch but the root.
//! Leaf boxes do not change (so neither do the pairs); no node is allocated or freed.

#[cfg(doc)]
use super::InsertionCost;
use super::node::NULL;
use super::{Aabb, DynamicTree, Vector};

/// The most subtrees a treelet has: the dynamic program looks at `3^n` splits (2,187).
pub const TREELET_LEAVES: usize = 7;

/// The least relative drop of the SAH cost for which [`DynamicTree::optimize_thorough`] makes
/// another round: 0.01%.
pub const THOROUGH_CONVERGED: f64 = 1e-4;

/// A move is made only when it lowers its part of the cost by more than this share of it, so
/// that rounding never makes two equal shapes trade places for ever.
const GAIN: f32 = 1e-6;

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Rounds of [`DynamicTree::reinsert_subtrees`] then [`DynamicTree::restructure_treelets`]
    /// until a round lowers the SAH cost by less than [`THOROUGH_CONVERGED`] of itself, or
    /// `max_rounds` were made; returns the rounds made. Every move is made only when it lowers
    /// the cost (as the search measures it, in `f32`, by more than a millionth); a pending
    /// partial rebuild ([`crate::UpdateMode::EnlargeAndRebuild`]) is done first.
    pub fn optimize_thorough(&mut self, max_rounds: usize) -> usize {
        let mut cost = self.sah_cost();
        for round in 1..=max_rounds {
            let moved = self.reinsert_subtrees() + self.restructure_treelets();
            let after = self.sah_cost();
            let converged = moved == 0 || after > cost * (1.0 - THOROUGH_CONVERGED);
            cost = after;
            if converged {
                return round;
            }
        }
        max_rounds
    }

    /// One pass of subtree reinsertion over the pool in index order: each node but the root
    /// (a leaf or a branch, with everything under it) is taken out with its parent (its
    /// sibling takes the parent's place) and the exact SAH search
    /// ([`InsertionCost::ExactSurfaceArea`]) finds it the cheapest sibling in the rest of the
    /// tree; it moves there when that costs less than putting it back, and goes back
    /// otherwise. The parent node is reused for the new place. No balancing on the way up.
    /// Returns the subtrees moved.
    pub fn reinsert_subtrees(&mut self) -> usize {
        if self.live < 3 || self.root == NULL {
            return 0;
        }
        if self.any_enlarged {
            self.rebuild_partial();
        }
        let mut moved = 0;
        for index in 0..self.nodes.len() as u32 {
            let node = &self.nodes[index as usize];
            if node.is_free() || index == self.root {
                continue;
            }
            if self.reinsert_subtree(index) {
                moved += 1;
            }
        }
        moved
    }

    /// Takes out the subtree `index` (not the root) and puts it where it costs least; true
    /// when that is not where it was.
    fn reinsert_subtree(&mut self, index: u32) -> bool {
        let parent = self.nodes[index as usize].parent;
        let p = self.nodes[parent as usize];
        let sibling = if p.child1 == index {
            p.child2
        } else {
            p.child1
        };
        // Detach: the sibling takes the parent's place; the parent waits to be reused.
        self.replace_child(p.parent, parent, sibling);
        if p.parent != NULL {
            self.fix_upwards(p.parent, false);
        }
        let d = self.nodes[index as usize].aabb;
        let back = self.placement_cost(&d, sibling);
        let (best, visits) = self.find_best_sibling_exact(&d, self.root);
        self.count_update(visits.nodes, visits.leaves);
        let target = if best != sibling && self.placement_cost(&d, best) < back * (1.0 - GAIN) {
            best
        } else {
            sibling
        };
        self.link_under(index, target, parent);
        target != sibling
    }

    /// The SAH cost of making `sibling` the sibling of a subtree of box `d`: the new parent's
    /// measure and the growth of every box above it (the exact search's cost).
    fn placement_cost(&self, d: &Aabb<V>, sibling: u32) -> f32 {
        let node = &self.nodes[sibling as usize];
        let mut cost = node.aabb.union(d).half_area();
        let mut index = node.parent;
        while index != NULL {
            let a = &self.nodes[index as usize].aabb;
            cost += a.union(d).half_area() - a.half_area();
            index = self.nodes[index as usize].parent;
        }
        cost
    }

    /// Links the detached subtree `index` under the detached branch `parent`, beside
    /// `sibling`, in `sibling`'s place, and refits upwards.
    fn link_under(&mut self, index: u32, sibling: u32, parent: u32) {
        let old_parent = self.nodes[sibling as usize].parent;
        {
            let p = &mut self.nodes[parent as usize];
            p.child1 = sibling;
            p.child2 = index;
        }
        self.replace_child(old_parent, sibling, parent);
        self.nodes[sibling as usize].parent = parent;
        self.nodes[index as usize].parent = parent;
        self.fix_upwards(parent, false);
    }

    /// One pass of treelet restructuring: for every branch, children before parents (the
    /// order of a walk from the root taken before the pass), the treelet under it is rebuilt
    /// in its cheapest shape when that is cheaper than the one it has. The treelet starts as
    /// the branch's two children and grows by opening the subtree of largest SAH measure
    /// (ties to the first found) that is a branch, up to [`TREELET_LEAVES`] subtrees. Returns
    /// the treelets rebuilt.
    pub fn restructure_treelets(&mut self) -> usize {
        if self.live < 3 || self.root == NULL {
            return 0;
        }
        if self.any_enlarged {
            self.rebuild_partial();
        }
        let order = self.branches_children_first();
        let mut rebuilt = 0;
        for branch in order {
            if self.restructure_treelet(branch) {
                rebuilt += 1;
            }
        }
        rebuilt
    }

    /// Every branch, each after the branches below it.
    fn branches_children_first(&self) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.live as usize);
        let mut stack = vec![self.root];
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            if node.is_leaf() {
                continue;
            }
            order.push(index);
            stack.push(node.child1);
            stack.push(node.child2);
        }
        order.reverse();
        order
    }

    /// Rebuilds the treelet under `root` in its cheapest shape; true when it changed.
    fn restructure_treelet(&mut self, root: u32) -> bool {
        // Stage 1: the treelet's subtrees and its inner branches (root first).
        let mut leaves = [NULL; TREELET_LEAVES];
        let mut inner = [NULL; TREELET_LEAVES - 1];
        let r = self.nodes[root as usize];
        leaves[0] = r.child1;
        leaves[1] = r.child2;
        inner[0] = root;
        let mut n = 2;
        while n < TREELET_LEAVES {
            let mut open = None;
            let mut largest = f32::NEG_INFINITY;
            for (i, &leaf) in leaves[..n].iter().enumerate() {
                let node = &self.nodes[leaf as usize];
                let area = node.aabb.half_area();
                if !node.is_leaf() && area > largest {
                    largest = area;
                    open = Some(i);
                }
            }
            let Some(i) = open else { break };
            let node = self.nodes[leaves[i] as usize];
            inner[n - 1] = leaves[i];
            leaves[i] = node.child1;
            leaves[n] = node.child2;
            n += 1;
        }
        if n < 3 {
            return false;
        }
        // The cost the treelet has now: its inner branches but the root.
        let current: f64 = inner[1..n - 1]
            .iter()
            .map(|&b| self.nodes[b as usize].aabb.half_area_f64())
            .sum();
        // Stage 2: the cheapest shape of every subset (bit i: subtree i), exactly.
        let boxes: Vec<Aabb<V>> = leaves[..n]
            .iter()
            .map(|&l| self.nodes[l as usize].aabb)
            .collect();
        let plan = cheapest_shapes(&boxes);
        let full = (1usize << n) - 1;
        // The root's measure is in every shape; the treelet's cost leaves it out.
        let best = plan.cost[full] - plan.area[full];
        if best >= current * (1.0 - f64::from(GAIN)) {
            return false;
        }
        // Stage 3: lay the shape out on the same nodes (root kept, the rest reused).
        let mut spare = inner[1..n - 1].iter().copied();
        self.lay_out(root, full, &plan.split, &leaves[..n], &mut spare);
        let parent = self.nodes[root as usize].parent;
        if parent != NULL {
            self.fix_upwards(parent, false);
        }
        true
    }

    /// Makes `node` the branch over the subtrees of `mask` in the shape `split` gives, taking
    /// the branches under it from `spare`, and refits them.
    fn lay_out(
        &mut self,
        node: u32,
        mask: usize,
        split: &[usize],
        leaves: &[u32],
        spare: &mut impl Iterator<Item = u32>,
    ) {
        let left = split[mask];
        let mut children = [NULL; 2];
        for (slot, part) in [left, mask ^ left].into_iter().enumerate() {
            children[slot] = if part.count_ones() == 1 {
                leaves[part.trailing_zeros() as usize]
            } else {
                let branch = spare
                    .next()
                    .expect("a treelet of n subtrees has n - 2 branches under its root");
                self.lay_out(branch, part, split, leaves, spare);
                branch
            };
            self.nodes[children[slot] as usize].parent = node;
        }
        let n = &mut self.nodes[node as usize];
        n.child1 = children[0];
        n.child2 = children[1];
        self.refit_node(node);
    }
}

/// The dynamic program of treelet restructuring over `n` boxes (`n <= TREELET_LEAVES`),
/// indexed by subset (bit i: box i).
struct Shapes {
    /// The SAH measure of the union of the subset's boxes.
    area: Vec<f64>,
    /// The least sum of branch measures of a tree over the subset, its own branch included
    /// (0 for one box).
    cost: Vec<f64>,
    /// The subset under the first child in that tree (the one holding the lowest box; ties
    /// to the least subset).
    split: Vec<usize>,
}

/// The cheapest shape of every subset of `boxes` (Karras and Aila 2013's exact treelet
/// optimization, sequential).
fn cheapest_shapes<V: Vector>(boxes: &[Aabb<V>]) -> Shapes {
    let n = boxes.len();
    let size = 1usize << n;
    let mut unions: Vec<Option<Aabb<V>>> = vec![None; size];
    let mut area = vec![0.0f64; size];
    let mut cost = vec![0.0f64; size];
    let mut split = vec![0usize; size];
    for mask in 1..size {
        let low = mask & mask.wrapping_neg();
        let rest = mask ^ low;
        let own = boxes[low.trailing_zeros() as usize];
        let u = match unions[rest] {
            Some(b) => b.union(&own),
            None => own,
        };
        unions[mask] = Some(u);
        area[mask] = u.half_area_f64();
        if rest == 0 {
            continue;
        }
        // Splits with the lowest box on the left: each unordered split once.
        let mut best = f64::INFINITY;
        let mut best_left = low;
        let mut sub = rest;
        loop {
            let left = sub | low;
            if left != mask {
                let c = cost[left] + cost[mask ^ left];
                if c < best {
                    best = c;
                    best_left = left;
                }
            }
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & rest;
        }
        cost[mask] = area[mask] + best;
        split[mask] = best_left;
    }
    Shapes { area, cost, split }
}

#[cfg(test)]
mod tests {
    use super::{Shapes, cheapest_shapes};
    use crate::Aabb;
    use glam::Vec2;

    /// A binary tree over box indices.
    #[derive(Clone)]
    enum Shape {
        Leaf(usize),
        Branch(Box<Shape>, Box<Shape>),
    }

    /// Every tree over boxes `0..n` (`(2n - 3)!!` of them): box `k` put above every node of
    /// every tree over `0..k`.
    fn every_shape(n: usize) -> Vec<Shape> {
        fn above_each(shape: &Shape, k: usize, out: &mut Vec<Shape>) {
            out.push(Shape::Branch(
                Box::new(shape.clone()),
                Box::new(Shape::Leaf(k)),
            ));
            if let Shape::Branch(a, b) = shape {
                let mut below = Vec::new();
                above_each(a, k, &mut below);
                out.extend(
                    below
                        .drain(..)
                        .map(|x| Shape::Branch(Box::new(x), b.clone())),
                );
                above_each(b, k, &mut below);
                out.extend(
                    below
                        .into_iter()
                        .map(|x| Shape::Branch(a.clone(), Box::new(x))),
                );
            }
        }
        let mut shapes = vec![Shape::Leaf(0)];
        for k in 1..n {
            let mut next = Vec::new();
            for s in &shapes {
                above_each(s, k, &mut next);
            }
            shapes = next;
        }
        shapes
    }

    /// The box of a tree and the sum of its branch measures, its own included.
    fn cost(shape: &Shape, boxes: &[Aabb<Vec2>]) -> (Aabb<Vec2>, f64) {
        match shape {
            Shape::Leaf(i) => (boxes[*i], 0.0),
            Shape::Branch(a, b) => {
                let (ba, ca) = cost(a, boxes);
                let (bb, cb) = cost(b, boxes);
                let u = ba.union(&bb);
                (u, u.half_area_f64() + ca + cb)
            }
        }
    }

    /// The cost of the tree `split` gives for `mask`, rebuilt from the splits alone.
    fn laid_out(plan: &Shapes, mask: usize) -> f64 {
        if mask.count_ones() == 1 {
            return 0.0;
        }
        let left = plan.split[mask];
        assert!(left & mask == left && left != 0 && left != mask);
        plan.area[mask] + laid_out(plan, left) + laid_out(plan, mask ^ left)
    }

    #[test]
    fn the_dynamic_program_finds_the_cheapest_of_every_tree() {
        // Integer boxes: every measure and sum is exact in f64.
        let all: Vec<Aabb<Vec2>> = [
            (0.0, 0.0, 1.0, 1.0),
            (5.0, 0.0, 6.0, 2.0),
            (1.0, 1.0, 2.0, 2.0),
            (0.0, 7.0, 3.0, 8.0),
            (6.0, 6.0, 7.0, 7.0),
            (2.0, 0.0, 3.0, 4.0),
            (4.0, 4.0, 9.0, 5.0),
        ]
        .iter()
        .map(|&(a, b, c, d)| Aabb::new(Vec2::new(a, b), Vec2::new(c, d)))
        .collect();
        let counts = [1, 1, 3, 15, 105, 945, 10395];
        for n in 2..=all.len() {
            let boxes = &all[..n];
            let shapes = every_shape(n);
            assert_eq!(shapes.len(), counts[n - 1]);
            let least = shapes
                .iter()
                .map(|s| cost(s, boxes).1)
                .fold(f64::INFINITY, f64::min);
            let plan = cheapest_shapes(boxes);
            let full = (1 << n) - 1;
            assert_eq!(plan.cost[full], least, "{n} boxes");
            assert_eq!(laid_out(&plan, full), least, "{n} boxes");
        }
    }
}
