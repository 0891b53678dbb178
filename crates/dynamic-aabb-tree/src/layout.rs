//! The order of the node pool in memory: renumbering the nodes so that the walks of the tree
//! read it front to back, siblings side by side.
//!
//! A build takes its leaves in proxy order (which, for the user's objects, is no spatial
//! order at all) and its branches from the free list, and reinsertions take branches from
//! wherever the free list points. The tree's shape does not care; its walks do: testing two
//! branches' children reads four nodes, and with the pool scattered each is a cache miss
//! once the tree outgrows the cache. [`DynamicTree::compact_layout`] puts the nodes back in
//! the order the walks read them. A large batch into a new tree needs no renumbering: its
//! binned build writes every node at its place in walk order as it goes
//! (`DynamicTree::build_binned_in_walk_order`), the same numbers the renumbering gives.

use super::node::NULL;
use super::{DynamicTree, TreeEvent, Vector};

/// Trees of fewer leaves are not renumbered by the builds and the pair updates (their pool,
/// 64 bytes a leaf in 2D, fits in a core's second-level cache, where its order makes no
/// difference): at 1,000 circles the renumbering after every 1,000 reinsertions cost the
/// standard workload's step more than it gave.
pub(crate) const LAYOUT_MIN_LEAVES: usize = 16_384;

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Renumbers the node pool in walk order: the root first, then each branch's two children
    /// side by side, depth first (a branch's children, then its first child's children, ...),
    /// then the free nodes. The tree's shape, boxes, pairs and handles do not change; node
    /// ids ([`NodeId`](super::NodeId)) do (recorded events are renumbered with them). Done,
    /// from 16,384 leaves up (a smaller pool fits in the cache, where its order makes no
    /// difference), by every build ([`DynamicTree::create_proxies`],
    /// [`DynamicTree::rebuild`]; a batch into a new tree by binned SAH is built in this
    /// order to begin with) and, once the pool has scattered, by
    /// [`DynamicTree::update_pairs`]; `O(nodes)` time, in place but for one `u32` per node.
    pub fn compact_layout(&mut self) {
        self.compact_layout_from(0);
    }

    /// [`DynamicTree::compact_layout`] when the tree has at least `min_leaves` leaves (the
    /// builds and pair updates pass [`LAYOUT_MIN_LEAVES`]).
    pub(crate) fn compact_layout_from(&mut self, min_leaves: usize) {
        if (self.live as usize) < min_leaves {
            return;
        }
        self.allocs_since_layout = 0;
        if self.root == NULL {
            return;
        }
        let len = self.nodes.len();
        // Stage 1: the new index of every node: the live ones in walk order, then the free
        // ones in free-list order.
        let mut to_new = vec![NULL; len];
        to_new[self.root as usize] = 0;
        let mut next = 1u32;
        let mut stack = vec![self.root];
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            if node.is_leaf() {
                continue;
            }
            let (c1, c2) = (node.child1, node.child2);
            to_new[c1 as usize] = next;
            to_new[c2 as usize] = next + 1;
            next += 2;
            stack.push(c2);
            stack.push(c1);
        }
        let live = next;
        let mut free = self.free_node;
        while free != NULL {
            to_new[free as usize] = next;
            next += 1;
            free = self.nodes[free as usize].parent;
        }
        debug_assert_eq!(next as usize, len, "every node is live or free");
        // Stage 2: the links renumbered in place (a leaf's `child1` is its proxy slot).
        for node in &mut self.nodes {
            if node.is_free() {
                continue;
            }
            if node.parent != NULL {
                node.parent = to_new[node.parent as usize];
            }
            if !node.is_leaf() {
                node.child1 = to_new[node.child1 as usize];
                node.child2 = to_new[node.child2 as usize];
            }
        }
        for slot in &mut self.proxies {
            if slot.is_alive() {
                slot.leaf = to_new[slot.leaf as usize];
            }
        }
        for event in &mut self.events {
            if let TreeEvent::Rotate { node } = event {
                node.0 = to_new[node.0 as usize];
            }
        }
        self.root = 0;
        // Stage 3: every node to its new index, in place, cycle by cycle (a node moved gets
        // `NULL`). In place rather than into a fresh pool: the two pools at once would be
        // the process's peak memory (64 MB more at a million leaves in 2D), for a pass twice
        // as fast.
        for start in 0..len {
            if to_new[start] == NULL {
                continue;
            }
            let mut carried = self.nodes[start];
            let mut at = start;
            loop {
                let dest = to_new[at] as usize;
                to_new[at] = NULL;
                if dest == start {
                    self.nodes[start] = carried;
                    break;
                }
                carried = std::mem::replace(&mut self.nodes[dest], carried);
                at = dest;
            }
        }
        // Stage 4: the free list, front to back behind the live nodes.
        self.free_node = NULL;
        for index in (live..len as u32).rev() {
            let node = &mut self.nodes[index as usize];
            node.mark_free();
            node.parent = self.free_node;
            self.free_node = index;
        }
    }
}
