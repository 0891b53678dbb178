//! Incremental optimization (Bittner, Hapala and Havran 2013, "Fast insertion-based
//! optimization of bounding volume hierarchies"): the branches of highest inefficiency are
//! taken out and their two subtrees inserted again by the exact SAH search.

use super::node::NULL;
use super::{DynamicTree, InsertionCost, Vector};
use std::cmp::Ordering;

/// Nodes of the pool an optimization pass looks at for each branch it may reinsert: a pass of
/// budget `k` picks the `k` worst branches among the next `16 k` nodes of the pool (round
/// robin from where the last pass stopped), so it costs `O(k)` whatever the tree's size and
/// visits the whole pool every `pool / 16 k` passes.
pub(crate) const SAMPLE_PER_PICK: usize = 16;

/// The least relative drop of the SAH cost for which
/// [`DynamicTree::optimize_until_converged`] makes another pass: 0.1%.
pub const CONVERGED: f64 = 1e-3;

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// The branches the optimization pass of the next pair update reinserts:
    /// `floor(optimize_share * leaves)` ([`crate::TreeConfig::optimize_share`]).
    #[must_use]
    pub fn optimize_budget(&self) -> usize {
        (f64::from(self.config.optimize_share) * f64::from(self.live)) as usize
    }

    /// One optimization pass: reinserts up to `count` branches and returns how many it
    /// reinserted.
    ///
    /// Stage 1 looks at the next `16 * count` nodes of the pool (all of it when it is
    /// smaller; round robin from where the last pass stopped) and picks the `count` branches
    /// (never the root) of highest inefficiency, Bittner et al.'s combined measure
    /// `area(N)³ / (mean(area(children)) * min(area(children)))` (`area` the SAH measure;
    /// ties to the lower node index). Stage 2 takes each out, worst first: the branch and its
    /// parent are freed (the sibling takes the parent's place) and its two subtrees are
    /// inserted again, the larger first, each where the exact SAH search
    /// ([`InsertionCost::ExactSurfaceArea`]) places it, with the configured balancing on the
    /// way up. Leaf boxes (and so the pairs) do not change; the freed nodes are reused, so a
    /// pass allocates nothing once its scratch list has grown. A pending partial rebuild
    /// ([`crate::UpdateMode::EnlargeAndRebuild`]) is done first.
    pub fn optimize(&mut self, count: usize) -> usize {
        if count == 0 || self.live < 3 || self.root == NULL {
            return 0;
        }
        if self.any_enlarged {
            self.rebuild_partial();
        }
        // Stage 1: the worst branches of the next window of the pool.
        let len = self.nodes.len();
        let window = count.saturating_mul(SAMPLE_PER_PICK).min(len);
        let mut picks = std::mem::take(&mut self.optimize_picks);
        picks.clear();
        let mut index = self.optimize_cursor as usize % len;
        for _ in 0..window {
            let node = &self.nodes[index];
            if !node.is_free() && !node.is_leaf() && index != self.root as usize {
                let a = self.nodes[node.child1 as usize].aabb.half_area();
                let b = self.nodes[node.child2 as usize].aabb.half_area();
                let area = node.aabb.half_area();
                picks.push((
                    area * area * area / (0.5 * (a + b) * a.min(b)),
                    index as u32,
                ));
            }
            index += 1;
            if index == len {
                index = 0;
            }
        }
        self.optimize_cursor = index as u32;
        // Worst first (NaN, from a measure of 0 / 0, counts as worst); ties to the lower index.
        let worst_first = |x: &(f32, u32), y: &(f32, u32)| -> Ordering {
            let key = |m: f32| if m.is_nan() { f32::INFINITY } else { m };
            key(y.0).total_cmp(&key(x.0)).then(x.1.cmp(&y.1))
        };
        if picks.len() > count {
            picks.select_nth_unstable_by(count - 1, worst_first);
            picks.truncate(count);
        }
        picks.sort_unstable_by(worst_first);
        // Stage 2: reinsert. A picked index reused by an earlier reinsertion is still a
        // branch (only branches are freed and made here); it is optimized as well.
        let mut done = 0;
        for &(_, branch) in &picks {
            let node = self.nodes[branch as usize];
            if node.is_free() || node.is_leaf() || branch == self.root {
                continue;
            }
            self.reinsert_children(branch);
            done += 1;
        }
        picks.clear();
        self.optimize_picks = picks;
        done
    }

    /// Optimization passes over the whole tree until one lowers the SAH cost
    /// ([`DynamicTree::sah_cost`]) by less than [`CONVERGED`] of itself, or `max_passes` were
    /// made; returns the passes made. Each pass is [`DynamicTree::optimize`] of an eighth of
    /// the leaves (rounded up), which looks at the whole pool (`16 / 8` nodes a leaf) and
    /// reinserts the worst eighth of the branches. A pass may raise the cost (each subtree
    /// goes where it is cheapest alone); the passes stop after the first that does not lower
    /// it enough, so the tree kept is at most that pass worse than the best seen.
    pub fn optimize_until_converged(&mut self, max_passes: usize) -> usize {
        let count = (self.live as usize).div_ceil(8);
        let mut cost = self.sah_cost();
        for pass in 1..=max_passes {
            if self.optimize(count) == 0 {
                return pass;
            }
            let after = self.sah_cost();
            let converged = after > cost * (1.0 - CONVERGED);
            cost = after;
            if converged {
                return pass;
            }
        }
        max_passes
    }

    /// Takes the branch `branch` (not the root) out with its parent and inserts its two
    /// subtrees again by the exact SAH search, the larger first.
    fn reinsert_children(&mut self, branch: u32) {
        let node = self.nodes[branch as usize];
        let (c1, c2) = (node.child1, node.child2);
        self.remove_leaf(branch);
        self.free_node(branch);
        self.nodes[c1 as usize].parent = NULL;
        self.nodes[c2 as usize].parent = NULL;
        let a1 = self.nodes[c1 as usize].aabb.half_area();
        let a2 = self.nodes[c2 as usize].aabb.half_area();
        let (first, second) = if a1 >= a2 { (c1, c2) } else { (c2, c1) };
        for subtree in [first, second] {
            // The branch and its parent were just freed: each insertion takes one of them.
            self.insert_node_under(subtree, NULL, InsertionCost::ExactSurfaceArea)
                .expect("the insertion reuses a node just freed");
        }
    }
}
