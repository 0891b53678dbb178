//! Inserting a leaf: choosing its sibling by the configured [`InsertionCost`], making the new
//! parent, and walking up to fix boxes and heights (with balancing on the way).

use super::node::NULL;
use super::{Aabb, DynamicTree, InsertionCost, TreeError, Vector};

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Links the detached leaf `leaf` (its box already set) into the tree.
    pub(crate) fn insert_leaf(&mut self, leaf: u32) -> Result<(), TreeError> {
        self.insert_leaf_under(leaf, self.root)
    }

    /// The lowest ancestor of `leaf` whose box holds `fat`, and how many levels up it is (1:
    /// the parent); `(NULL, 0)` when none does. Under it the leaf can take box `fat` without
    /// any box above growing.
    #[cfg(test)]
    pub(crate) fn holding_ancestor(&self, leaf: u32, fat: &Aabb<V>) -> (u32, usize) {
        let (holder, levels, _) = self.holding_ancestor_counted(leaf, fat);
        (holder, levels)
    }

    /// The lowest ancestor of `leaf` whose box holds `fat` and how many levels up it is, as
    /// `holding_ancestor` (tests) gives them, and how many ancestors it tested.
    pub(crate) fn holding_ancestor_counted(&self, leaf: u32, fat: &Aabb<V>) -> (u32, usize, u64) {
        let mut index = self.nodes[leaf as usize].parent;
        let mut levels = 1;
        while index != NULL {
            let node = &self.nodes[index as usize];
            if node.aabb.contains(fat) {
                return (index, levels, levels as u64);
            }
            index = node.parent;
            levels += 1;
        }
        (NULL, 0, levels as u64 - 1)
    }

    /// Links the detached leaf `leaf` into the tree, searching for its sibling under `start`
    /// (the root when `start` is `NULL`).
    pub(crate) fn insert_leaf_under(&mut self, leaf: u32, start: u32) -> Result<(), TreeError> {
        self.insert_node_under(leaf, start, self.config.insertion)
    }

    /// Links the detached subtree (or leaf) `leaf` into the tree, searching for its sibling
    /// under `start` (the root when `start` is `NULL`) by `cost`.
    pub(crate) fn insert_node_under(
        &mut self,
        leaf: u32,
        start: u32,
        cost: InsertionCost,
    ) -> Result<(), TreeError> {
        if self.root == NULL {
            self.root = leaf;
            self.nodes[leaf as usize].parent = NULL;
            return Ok(());
        }
        let leaf_box = self.nodes[leaf as usize].aabb;
        let leaf_height = self.nodes[leaf as usize].height();

        // Stage 1: find the best sibling.
        let (sibling, visits) = match cost {
            InsertionCost::Volume => self.find_sibling_greedy(&leaf_box, true, |b| b.volume()),
            InsertionCost::Perimeter => {
                self.find_sibling_greedy(&leaf_box, false, |b| b.perimeter())
            }
            InsertionCost::SurfaceArea => {
                self.find_best_sibling(&leaf_box, if start == NULL { self.root } else { start })
            }
            InsertionCost::ExactSurfaceArea => self
                .find_best_sibling_exact(&leaf_box, if start == NULL { self.root } else { start }),
        };
        self.count_update(visits.nodes, visits.leaves);

        // Stage 2: a new parent over the sibling and the leaf, in the sibling's place.
        let new_parent = self.alloc_node()?;
        let old_parent = self.nodes[sibling as usize].parent;
        let sibling_node = self.nodes[sibling as usize];
        {
            let p = &mut self.nodes[new_parent as usize];
            p.aabb = sibling_node.aabb.union(&leaf_box);
            p.child1 = sibling;
            p.child2 = leaf;
            p.set_height(sibling_node.height().max(leaf_height) + 1);
        }
        self.replace_child(old_parent, sibling, new_parent);
        self.nodes[sibling as usize].parent = new_parent;
        self.nodes[leaf as usize].parent = new_parent;

        // Stage 3: walk up fixing boxes and heights, balancing each ancestor.
        self.fix_upwards(new_parent, true);
        Ok(())
    }

    /// Greedy descent (Choi and Chou with volume; the blog post "AABB Trees for Collision
    /// Detection" with perimeter): at each branch go
    /// to the child whose `measure` grows least (`by_increase`, `Volume`: `measure(child +
    /// new) - measure(child)`) or whose union with the new box is least (`Perimeter`), ties to
    /// the second child; the leaf reached is the sibling. A new leaf is its parent's second
    /// child, so where every measure ties (flat boxes by volume, identical boxes) each leaf
    /// goes under the last one and the tree becomes a chain (the degeneration on flat boxes
    /// that `docs/quality.md` measures and a test holds).
    /// Also returns the nodes it looked at: each branch on the way and its two children.
    fn find_sibling_greedy(
        &self,
        leaf_box: &Aabb<V>,
        by_increase: bool,
        measure: impl Fn(&Aabb<V>) -> f32,
    ) -> (u32, Visits) {
        let mut index = self.root;
        let mut branches = 0u64;
        loop {
            let node = &self.nodes[index as usize];
            if node.is_leaf() {
                // The leaf reached was counted as a child of the last branch (or is the root).
                let visits = Visits {
                    nodes: 1 + 2 * branches,
                    leaves: u64::from(branches == 0),
                };
                return (index, visits);
            }
            branches += 1;
            let a = &self.nodes[node.child1 as usize].aabb;
            let b = &self.nodes[node.child2 as usize].aabb;
            let (cost_a, cost_b) = if by_increase {
                (
                    measure(&a.union(leaf_box)) - measure(a),
                    measure(&b.union(leaf_box)) - measure(b),
                )
            } else {
                (measure(&a.union(leaf_box)), measure(&b.union(leaf_box)))
            };
            index = if cost_a < cost_b {
                node.child1
            } else {
                node.child2
            };
        }
    }

    /// Box2D v3's `b2FindBestSibling`: a branch-and-bound descent for the sibling of least SAH
    /// cost. The cost of sibling S is `area(S + D)` (the new parent) plus, for each ancestor A
    /// of S, `area(A + D) - area(A)` (its growth), where D is the new box and area the SAH
    /// measure. Candidates while descending from a branch to child C:
    /// - C itself (a leaf or a branch): `area(C + D)` + the growth inherited from above;
    /// - anything below a branch C costs at least `area(D)` + the inherited growth +
    ///   C's own growth, so the descent stops when neither child's lower bound beats the best;
    /// - otherwise it goes to the child of the lower bound (ties: the nearer centre).
    ///
    /// Also returns the nodes it looked at: the start and the two children of each branch
    /// it went through (as node visits; a leaf start is also a leaf visit).
    pub(crate) fn find_best_sibling(&self, d: &Aabb<V>, start: u32) -> (u32, Visits) {
        let area_d = d.half_area();
        let center_d = d.center();
        let root = &self.nodes[start as usize];
        let mut area_base = root.aabb.half_area();
        let mut direct_cost = root.aabb.union(d).half_area();
        let mut inherited_cost = 0.0f32;
        let mut best_sibling = start;
        let mut best_cost = direct_cost;
        let mut index = start;
        // Branches passed through (one add a level; the visits are made from it at the end).
        let mut branches = 0u64;
        let mut leaf_start = false;
        loop {
            let node = &self.nodes[index as usize];
            if node.is_leaf() {
                // Only a leaf start gets here (a leaf child is never descended into).
                leaf_start = true;
                break;
            }
            // Stage 1: the cost of making `index` itself the sibling.
            let cost = direct_cost + inherited_cost;
            if cost < best_cost {
                best_sibling = index;
                best_cost = cost;
            }
            // Stage 2: the growth of `index` is inherited by everything below it.
            inherited_cost += direct_cost - area_base;

            // Stage 3: each child as a sibling, or a lower bound on its descendants.
            let (c1, c2) = (node.child1, node.child2);
            let n1 = &self.nodes[c1 as usize];
            let n2 = &self.nodes[c2 as usize];
            let leaf1 = n1.is_leaf();
            let leaf2 = n2.is_leaf();
            branches += 1;
            let direct1 = n1.aabb.union(d).half_area();
            let direct2 = n2.aabb.union(d).half_area();
            let mut lower1 = f32::MAX;
            let mut lower2 = f32::MAX;
            let (mut area1, mut area2) = (0.0, 0.0);
            if leaf1 {
                let cost1 = direct1 + inherited_cost;
                if cost1 < best_cost {
                    best_sibling = c1;
                    best_cost = cost1;
                }
            } else {
                area1 = n1.aabb.half_area();
                lower1 = inherited_cost + direct1 + (area_d - area1).min(0.0);
            }
            if leaf2 {
                let cost2 = direct2 + inherited_cost;
                if cost2 < best_cost {
                    best_sibling = c2;
                    best_cost = cost2;
                }
            } else {
                area2 = n2.aabb.half_area();
                lower2 = inherited_cost + direct2 + (area_d - area2).min(0.0);
            }

            // Stage 4: stop, or go down the more promising branch.
            if leaf1 && leaf2 {
                break;
            }
            if best_cost <= lower1 && best_cost <= lower2 {
                break;
            }
            if lower1 == lower2 && !leaf1 && !leaf2 {
                let d1 = n1.aabb.center() - center_d;
                let d2 = n2.aabb.center() - center_d;
                lower1 = length_squared(d1);
                lower2 = length_squared(d2);
            }
            if lower1 < lower2 && !leaf1 {
                index = c1;
                area_base = area1;
                direct_cost = direct1;
            } else {
                index = c2;
                area_base = area2;
                direct_cost = direct2;
            }
        }
        let visits = Visits {
            nodes: 1 + 2 * branches,
            leaves: u64::from(leaf_start),
        };
        (best_sibling, visits)
    }
}

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// The exact search for the sibling of least SAH cost (Bittner et al. 2012; Catto, GDC
    /// 2019, and Box2D v3's exact variant), best first with a binary heap.
    ///
    /// With D the new box and `area` the SAH measure ([`Aabb::half_area`]: half the
    /// perimeter in 2D, half the surface area in 3D), the cost of sibling S is
    /// `area(S + D) + inherited(S)`, where `inherited(S)` is the sum of `area(A + D) -
    /// area(A)` over the ancestors A of S below `start` (the new parent's area and the growth
    /// of every box above it; the boxes above `start` hold D when `start` is not the root).
    /// Every node under S costs at least `area(D) + inherited(S) + area(S + D) - area(S)`, so
    /// S's children are queued only when that bound beats the best cost so far, and the queue
    /// (keyed by the inherited cost, least first; ties to the lower node index) stops once its
    /// least key plus `area(D)` does not beat it. Ties between equal costs go to the node
    /// found first. The queue is the tree's scratch heap: no allocation once it has grown.
    ///
    /// Also returns the nodes it looked at: every node taken from the queue (leaves among
    /// them as leaf visits).
    pub(crate) fn find_best_sibling_exact(&mut self, d: &Aabb<V>, start: u32) -> (u32, Visits) {
        let area_d = d.half_area();
        let mut queue = std::mem::take(&mut self.sibling_queue);
        queue.clear();
        let mut best_sibling = start;
        let mut best_cost = self.nodes[start as usize].aabb.union(d).half_area();
        let mut visits = Visits::default();
        queue.push(Candidate {
            inherited: 0.0,
            node: start,
        });
        while let Some(Candidate { inherited, node }) = queue.pop() {
            if inherited + area_d >= best_cost {
                break;
            }
            let n = &self.nodes[node as usize];
            visits.nodes += 1;
            let direct = n.aabb.union(d).half_area();
            let cost = direct + inherited;
            if cost < best_cost {
                best_sibling = node;
                best_cost = cost;
            }
            if n.is_leaf() {
                visits.leaves += 1;
                continue;
            }
            let below = inherited + (direct - n.aabb.half_area());
            if below + area_d < best_cost {
                queue.push(Candidate {
                    inherited: below,
                    node: n.child1,
                });
                queue.push(Candidate {
                    inherited: below,
                    node: n.child2,
                });
            }
        }
        queue.clear();
        self.sibling_queue = queue;
        (best_sibling, visits)
    }
}

/// A subtree waiting in the exact search's queue: its root and the growth its ancestors
/// would take were the new leaf placed below it. Ordered so that the max-heap gives the least
/// `inherited` first (ties: the lower node index).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate {
    /// Sum of the area growth of the node's ancestors (below the search's start).
    inherited: f32,
    /// The node.
    node: u32,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other
            .inherited
            .total_cmp(&self.inherited)
            .then(other.node.cmp(&self.node))
    }
}

/// Nodes and leaves a descent looked at (leaves included in `nodes`), counted in locals and
/// added to the tree's [`super::WorkCounts`] once.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Visits {
    /// Nodes, leaves included.
    pub(crate) nodes: u64,
    /// Leaves.
    pub(crate) leaves: u64,
}

/// The squared length of a vector.
#[inline]
fn length_squared<V: Vector>(v: V) -> f32 {
    (0..V::DIM).map(|i| v.axis(i) * v.axis(i)).sum()
}
