//! Balancing: the walk up after an insertion or removal, AVL height rotations (Gaul; the blog
//! post "AABB Trees for Collision Detection"; Box2D v2's `b2Balance`) and surface-area
//! rotations (Box2D v3's `b2RotateNodes`, Kopta et al.).

use super::node::{NULL, Node, parent_fit_bits};
use super::{Balancing, DynamicTree, NodeId, TreeEvent, Vector};

/// How deep the AVL repair may recurse into a demoted subtree. Far more than a tree that was
/// balanced before an insertion needs; it only bounds the work (and the call stack) after a
/// switch from `None` on a degenerate tree.
const AVL_MAX_DEPTH: u32 = 64;

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Walks from `start` to the root recomputing boxes and heights; with `balance`, applies
    /// the configured balancing at each node on the way.
    /// Without balancing the walk stops at the first node above `start` whose box and height
    /// did not change, since nothing above it can change either.
    pub(crate) fn fix_upwards(&mut self, start: u32, balance: bool) {
        let balancing = if balance {
            self.config.balancing
        } else {
            Balancing::None
        };
        let mut index = start;
        // Consecutive nodes on the way up that neither changed nor rotated (`Rotations`).
        let mut quiet = 0u32;
        let mut visits = 0u64;
        while index != NULL {
            visits += 1;
            if balancing == Balancing::Rotations {
                let (kept, rotated) = self.refit_and_rotate(index);
                if index != start && kept && !rotated {
                    // A node that kept its box and children leaves its parent's rotation
                    // inputs unchanged but for its children's boxes; once the parent is
                    // unchanged too, nothing above sees a difference: stop there.
                    quiet += 1;
                    if quiet == 2 {
                        break;
                    }
                } else {
                    quiet = 0;
                }
                index = self.nodes[index as usize].parent;
                continue;
            }
            let before = self.nodes[index as usize];
            self.refit_node(index);
            match balancing {
                Balancing::None => {
                    let after = &self.nodes[index as usize];
                    // `start` itself may be new (an insertion's new parent): never stop there.
                    if index != start
                        && after.aabb == before.aabb
                        && after.height() == before.height()
                    {
                        break;
                    }
                }
                Balancing::Avl => index = self.avl_fix(index, 0),
                // Taken above.
                Balancing::Rotations => {}
            }
            index = self.nodes[index as usize].parent;
        }
        self.count_update(visits, 0);
    }

    /// Restores `|height(child1) - height(child2)| <= 1` at `a` (whose children are already
    /// balanced) and returns the root of the subtree that now stands in `a`'s place.
    ///
    /// Cases, with B the shorter and C the taller child of A, F and G C's children:
    /// - balanced (heights differ by at most one): nothing;
    /// - otherwise C rises into A's place with children A and the taller of F, G; A keeps B
    ///   and takes the shorter of F, G. A single insertion or removal leaves A balanced after
    ///   that; an insertion next to a tall subtree (SAH picks a branch as sibling) can leave A
    ///   itself unbalanced, so A is repaired recursively and C checked again.
    pub(crate) fn avl_fix(&mut self, a: u32, depth: u32) -> u32 {
        let mut a = a;
        for _ in 0..AVL_MAX_DEPTH {
            let node = self.nodes[a as usize];
            if node.is_leaf() {
                return a;
            }
            let h1 = self.nodes[node.child1 as usize].height();
            let h2 = self.nodes[node.child2 as usize].height();
            let tall = if h2 > h1 + 1 {
                node.child2
            } else if h1 > h2 + 1 {
                node.child1
            } else {
                return a;
            };
            // Stage 1: rotate the taller child up.
            let top = self.rotate_up(a, tall);
            // Stage 2: the demoted node may still be unbalanced; repair it, then the top.
            if depth < AVL_MAX_DEPTH {
                self.avl_fix(a, depth + 1);
            }
            self.refit_node(top);
            a = top;
        }
        a
    }

    /// One AVL rotation at `a`: its child `c` takes its place; of `c`'s children the taller
    /// stays under `c` and the shorter moves under `a` (in `c`'s old slot). Returns `c`.
    fn rotate_up(&mut self, a: u32, c: u32) -> u32 {
        let na = self.nodes[a as usize];
        let nc = self.nodes[c as usize];
        let (f, g) = (nc.child1, nc.child2);
        let (tall, short) = if self.nodes[f as usize].height() > self.nodes[g as usize].height() {
            (f, g)
        } else {
            (g, f)
        };
        // c takes a's place.
        self.replace_child(na.parent, a, c);
        // c's children: a and the taller grandchild.
        {
            let n = &mut self.nodes[c as usize];
            n.child1 = a;
            n.child2 = tall;
        }
        self.nodes[a as usize].parent = c;
        self.nodes[tall as usize].parent = c;
        // a's children: the shorter grandchild in c's old slot.
        {
            let n = &mut self.nodes[a as usize];
            if n.child1 == c {
                n.child1 = short;
            } else {
                n.child2 = short;
            }
        }
        self.nodes[short as usize].parent = a;
        self.refit_node(a);
        self.refit_node(c);
        self.record(TreeEvent::Rotate { node: NodeId(c) });
        c
    }

    /// The walk up's step at the branch `a` under `Rotations`: [`DynamicTree::refit_node`]
    /// then [`DynamicTree::rotate_children`], with the branch and its children read once.
    /// Returns whether the refit kept the branch's box and height, and whether it rotated.
    fn refit_and_rotate(&mut self, a: u32) -> (bool, bool) {
        let before = self.nodes[a as usize];
        if before.is_leaf() {
            return (true, false);
        }
        let (b, c) = (before.child1, before.child2);
        let nb = self.nodes[b as usize];
        let nc = self.nodes[c as usize];
        let aabb = nb.aabb.union(&nc.aabb);
        let node = &mut self.nodes[a as usize];
        node.aabb = aabb;
        node.set_fit_bits(parent_fit_bits(nb.fit_bits(), nc.fit_bits()));
        let height = node.height();
        let kept = aabb == before.aabb && height == before.height();
        let rotated = height >= 2 && self.rotate_children(a, b, &nb, c, &nc);
        (kept, rotated)
    }

    /// Box2D v3's `b2RotateNodes` at the branch `a` (of height 2 or more; its children `b`
    /// and `c` are `nb` and `nc`): swaps a child of `a` with a grandchild under the other
    /// child when that shrinks the SAH measure of the child that changes.
    ///
    /// Cases, with B and C the children of A, D and E B's, F and G C's:
    /// - both leaves (or A is a leaf): nothing;
    /// - B a leaf: swap B with F (C becomes B+G) or with G (C becomes F+B);
    /// - C a leaf: swap C with D (B becomes C+E) or with E (B becomes D+C);
    /// - both branches: the best of those four;
    ///
    /// the swap taken is the one of least resulting area, and only if it is smaller than the
    /// area of the child it changes.
    /// Returns true when it rotated.
    fn rotate_children(&mut self, a: u32, b: u32, nb: &Node<V>, c: u32, nc: &Node<V>) -> bool {
        // (gain, child of A moved down, grandchild moved up, its parent)
        let mut best: Option<(f32, u32, u32, u32)> = None;
        let mut consider = |gain: f32, down: u32, up: u32, under: u32| {
            if gain > 0.0 && best.is_none_or(|(g, ..)| gain > g) {
                best = Some((gain, down, up, under));
            }
        };
        if !nc.is_leaf() {
            let area_c = nc.aabb.half_area();
            let f = &self.nodes[nc.child1 as usize].aabb;
            let g = &self.nodes[nc.child2 as usize].aabb;
            consider(area_c - nb.aabb.union(g).half_area(), b, nc.child1, c);
            consider(area_c - nb.aabb.union(f).half_area(), b, nc.child2, c);
        }
        if !nb.is_leaf() {
            let area_b = nb.aabb.half_area();
            let d = &self.nodes[nb.child1 as usize].aabb;
            let e = &self.nodes[nb.child2 as usize].aabb;
            consider(area_b - nc.aabb.union(e).half_area(), c, nb.child1, b);
            consider(area_b - nc.aabb.union(d).half_area(), c, nb.child2, b);
        }
        let Some((_, down, up, under)) = best else {
            return false;
        };
        // Swap `down` (a child of a) with `up` (a child of `under`, a's other child).
        {
            let n = &mut self.nodes[a as usize];
            if n.child1 == down {
                n.child1 = up;
            } else {
                n.child2 = up;
            }
        }
        {
            let n = &mut self.nodes[under as usize];
            if n.child1 == up {
                n.child1 = down;
            } else {
                n.child2 = down;
            }
        }
        self.nodes[up as usize].parent = a;
        self.nodes[down as usize].parent = under;
        self.refit_node(under);
        self.refit_node(a);
        self.record(TreeEvent::Rotate { node: NodeId(a) });
        true
    }
}
