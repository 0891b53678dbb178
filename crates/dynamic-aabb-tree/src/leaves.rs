//! The leaves' boxes copied out in the order a rebuild gathers them.

use super::node::NULL;
use super::{Aabb, DynamicTree, Vector};

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// The leaves' (fat) boxes, depth-first with first children first: the order in which
    /// [`DynamicTree::rebuild`] gathers them, so a new tree built over these boxes with
    /// [`DynamicTree::create_proxies`] (margin 0, no look-ahead) is the tree a rebuild of this
    /// one makes. One pass over the branches, no allocation but the result and a short stack.
    #[must_use]
    pub fn leaf_boxes(&self) -> Vec<Aabb<V>> {
        let mut boxes = Vec::with_capacity(self.live as usize);
        if self.root == NULL {
            return boxes;
        }
        let mut stack = Vec::with_capacity(64);
        stack.push(self.root);
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            if node.is_leaf() {
                boxes.push(node.aabb);
            } else {
                stack.push(node.child2);
                stack.push(node.child1);
            }
        }
        boxes
    }
}

#[cfg(test)]
mod tests {
    use crate::{Aabb, DynamicTree, TreeConfig};
    use glam::Vec2;

    #[test]
    fn leaf_boxes_come_in_the_walks_order() {
        let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
        assert!(tree.leaf_boxes().is_empty());
        for i in 0..50u32 {
            let p = Vec2::new((i % 7) as f32 * 2.0, (i / 7) as f32 * 3.0);
            tree.create_proxy(Aabb::new(p, p + Vec2::ONE), Vec2::ZERO, i)
                .expect("a valid box");
        }
        let mut walked = Vec::new();
        tree.walk(|_, node, _| {
            if node.children.is_none() {
                walked.push(node.aabb);
            }
        });
        assert_eq!(walked.len(), 50);
        assert_eq!(tree.leaf_boxes(), walked);
    }
}
