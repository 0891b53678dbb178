//! Removing a leaf: its sibling takes the parent's place ("promote the sibling", as in the blog
//! post "AABB Trees for Collision Detection"), the parent returns to the free list, and the ancestors are refit.

use super::node::NULL;
use super::{Balancing, DynamicTree, Vector};

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Unlinks the leaf `leaf` from the tree (the leaf node itself stays allocated).
    ///
    /// Cases: the leaf is the root (the tree becomes empty); its parent is the root (the
    /// sibling becomes the root); otherwise the sibling hangs from the grandparent and the
    /// grandparent and everything above it are refit (and AVL-balanced under `Avl`).
    pub(crate) fn remove_leaf(&mut self, leaf: u32) {
        if leaf == self.root {
            self.root = NULL;
            return;
        }
        // Stage 1: the sibling replaces the parent.
        let parent = self.nodes[leaf as usize].parent;
        let p = self.nodes[parent as usize];
        let sibling = if p.child1 == leaf { p.child2 } else { p.child1 };
        let grandparent = p.parent;
        self.replace_child(grandparent, parent, sibling);
        self.free_node(parent);
        self.nodes[leaf as usize].parent = NULL;
        // The parent and the sibling (the walk up counts itself).
        self.count_update(2, 0);
        // Stage 2: refit upwards (box shrink, height change); only AVL rotates on removal.
        if grandparent != NULL {
            self.fix_upwards(grandparent, self.config.balancing == Balancing::Avl);
        }
    }
}
