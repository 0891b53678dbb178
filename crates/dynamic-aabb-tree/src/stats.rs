//! Shape and cost figures of the tree: height, least possible height, SAH area ratio, node
//! and leaf counts, and the bytes its storage holds; and the work counts of its updates and
//! pair searches.

use super::node::{NULL, Node, ProxySlot};
use super::{DynamicTree, ProxyId, QueryStats, TreeStats, Vector, WorkCounts};
use std::mem::size_of;

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Height, least possible height `ceil(log2(leaves))`, area ratio (the SAH measure summed
    /// over every node in use, leaves included, over the root's, computed in `f64`: finite for
    /// any finite boxes; 0 when the root's is 0),
    /// node and leaf counts, and bytes held (capacities, scratch included).
    pub fn stats(&self) -> TreeStats {
        let leaves = self.live as usize;
        let nodes = self.nodes.len() - self.free_nodes as usize;
        let (height, area_ratio) = if self.root == NULL {
            (0, 0.0)
        } else {
            // In f64 from the f32 corners: an f32 half area overflows for finite boxes (a 3D
            // box of side 1e20, coordinates near 3.4e38), and infinity over infinity is NaN.
            // In f64 each term is below 3 * (6.9e38)^2 and the sum below 2^32 times that.
            let root = &self.nodes[self.root as usize];
            let root_area = root.aabb.half_area_f64();
            let total: f64 = self
                .nodes
                .iter()
                .filter(|n| !n.is_free())
                .map(|n| n.aabb.half_area_f64())
                .sum();
            // Every node lies in the root's box, so the ratio is at most the node count.
            let ratio = if root_area > 0.0 {
                (total / root_area) as f32
            } else {
                0.0
            };
            (root.height(), ratio)
        };
        let min_height = if leaves <= 1 {
            0
        } else {
            usize::BITS - (leaves - 1).leading_zeros()
        };
        TreeStats {
            leaves,
            nodes,
            height,
            min_height,
            area_ratio,
            bytes: self.bytes(),
        }
    }

    /// The SAH cost of the tree's shape: the SAH measure ([`crate::Aabb::half_area`]: half
    /// the perimeter in 2D, half the surface area in 3D) summed over the branches other than
    /// the root, over the root's. Leaves are not counted (every tree over the same boxes has
    /// the same leaves), nor the root (its box is the same for every such tree). Summed in
    /// `f64` from the `f32` corners (finite for any finite boxes); 0 for an empty tree, a tree
    /// of one or two leaves, or a root of measure 0. Unlike [`TreeStats::area_ratio`] this
    /// counts branches only.
    ///
    /// [`TreeStats::area_ratio`]: crate::TreeStats::area_ratio
    #[must_use]
    pub fn sah_cost(&self) -> f64 {
        if self.root == NULL {
            return 0.0;
        }
        let root_area = self.nodes[self.root as usize].aabb.half_area_f64();
        if root_area <= 0.0 {
            return 0.0;
        }
        let root = self.root as usize;
        let total: f64 = self
            .nodes
            .iter()
            .enumerate()
            .filter(|&(i, n)| i != root && !n.is_free() && !n.is_leaf())
            .map(|(_, n)| n.aabb.half_area_f64())
            .sum();
        total / root_area
    }

    /// Bytes held by the tree's storage (capacities, not lengths).
    pub fn bytes(&self) -> usize {
        size_of::<Self>()
            + self.nodes.capacity() * size_of::<Node<V>>()
            + self.proxies.capacity() * size_of::<ProxySlot<V, T>>()
            + self.pairs.capacity() * size_of::<(u32, u32)>()
            + self
                .sorted_pairs
                .get()
                .map_or(0, |v| v.capacity() * size_of::<(ProxyId, ProxyId)>())
            + self.moved.capacity() * size_of::<u32>()
            + self.moved_bits.capacity() * size_of::<u64>()
            + self.build_items.capacity() * size_of::<u32>()
            + self.sibling_queue.capacity() * size_of::<super::insert::Candidate>()
            + self.events.capacity() * size_of::<super::TreeEvent>()
    }

    /// The work counted since the tree was made or the last [`DynamicTree::take_work`] (see
    /// [`WorkCounts`] for what counts). Counting costs a few additions per update and per
    /// pair search, never one per node.
    pub fn work(&self) -> WorkCounts {
        let mut work = self.work;
        work.update_node_visits += self.moves_tested;
        work.update_leaf_visits += self.moves_tested;
        work
    }

    /// [`DynamicTree::work`], and the counts start again from 0.
    pub fn take_work(&mut self) -> WorkCounts {
        let work = self.work();
        self.work = WorkCounts::default();
        self.moves_tested = 0;
        work
    }

    /// Adds the visits of one update (its counts kept in locals until now).
    #[inline]
    pub(crate) fn count_update(&mut self, nodes: u64, leaves: u64) {
        self.work.update_node_visits += nodes;
        self.work.update_leaf_visits += leaves;
    }

    /// Adds the tests of one pair search.
    #[inline]
    pub(crate) fn count_pairs(&mut self, stats: QueryStats) {
        self.work.pair_node_visits += u64::from(stats.node_visits);
        self.work.pair_leaf_visits += u64::from(stats.leaf_visits);
    }
}
