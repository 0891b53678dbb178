//! Box, point and ray queries: iterative walks with a stack that lives on the call stack (no
//! allocation per query), each reporting how many nodes and leaves it tested.

use super::node::{NULL, Node, NodeStack};
use super::{Aabb, DynamicTree, ProxyId, QueryStats, Vector};

/// Calls `hit(proxy slot)` for each leaf under `root` whose box passes `test`; `hit` returns
/// false to stop. A node's children are tested before they are pushed, so the stack only
/// holds nodes that passed.
#[inline]
pub(crate) fn walk_tree<V: Vector>(
    nodes: &[Node<V>],
    root: u32,
    test: impl Fn(&Aabb<V>) -> bool,
    mut hit: impl FnMut(u32) -> bool,
) -> QueryStats {
    let mut stats = QueryStats::default();
    if root == NULL {
        return stats;
    }
    let passes = |index: u32, stats: &mut QueryStats| {
        let node = &nodes[index as usize];
        stats.node_visits += 1;
        if node.is_leaf() {
            stats.leaf_visits += 1;
        }
        test(&node.aabb)
    };
    if !passes(root, &mut stats) {
        return stats;
    }
    let mut stack = NodeStack::new();
    stack.push(root);
    while let Some(index) = stack.pop() {
        let node = &nodes[index as usize];
        if node.is_leaf() {
            if !hit(node.child1) {
                break;
            }
            continue;
        }
        let (c1, c2) = (node.child1, node.child2);
        if passes(c2, &mut stats) {
            stack.push(c2);
        }
        if passes(c1, &mut stats) {
            stack.push(c1);
        }
    }
    stats
}

/// The parameter `t` in `[0, max_t]` where the segment `origin + t * delta` enters `aabb`,
/// or `None` when it misses (slab test; an axis the segment does not move along must already
/// hold the origin).
#[inline]
pub(crate) fn segment_enters<V: Vector>(
    origin: V,
    delta: V,
    aabb: &Aabb<V>,
    max_t: f32,
) -> Option<f32> {
    let mut t0 = 0.0f32;
    let mut t1 = max_t;
    for axis in 0..V::DIM {
        let o = origin.axis(axis);
        let d = delta.axis(axis);
        let lo = aabb.min.axis(axis);
        let hi = aabb.max.axis(axis);
        if d == 0.0 {
            if o < lo || o > hi {
                return None;
            }
        } else {
            let inv = 1.0 / d;
            let mut ta = (lo - o) * inv;
            let mut tb = (hi - o) * inv;
            if ta > tb {
                std::mem::swap(&mut ta, &mut tb);
            }
            t0 = t0.max(ta);
            t1 = t1.min(tb);
            if t0 > t1 {
                return None;
            }
        }
    }
    Some(t0)
}

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Calls `visit(proxy)` for each proxy whose fat box overlaps `aabb` (closed boxes); return
    /// false to stop. `node_visits` counts every node whose box was tested, leaves included.
    pub fn query_aabb(&self, aabb: &Aabb<V>, mut visit: impl FnMut(ProxyId) -> bool) -> QueryStats {
        walk_tree(
            &self.nodes,
            self.root,
            |b| b.overlaps(aabb),
            |slot| visit(self.proxy_id(slot)),
        )
    }

    /// Calls `visit(proxy)` for each proxy whose fat box contains `point`; return false to stop.
    pub fn query_point(&self, point: V, mut visit: impl FnMut(ProxyId) -> bool) -> QueryStats {
        walk_tree(
            &self.nodes,
            self.root,
            |b| b.contains_point(point),
            |slot| visit(self.proxy_id(slot)),
        )
    }

    /// Casts the segment `origin + t * (end - origin)`, `t` in `[0, max_fraction]`, against the
    /// fat boxes. `visit(proxy, t_enter)` returns the new max fraction (0 stops, the same value
    /// goes on, a smaller one clips the segment; a negative or larger one changes nothing).
    /// Nothing is visited when an input is not finite.
    pub fn ray_cast(
        &self,
        origin: V,
        end: V,
        max_fraction: f32,
        mut visit: impl FnMut(ProxyId, f32) -> f32,
    ) -> QueryStats {
        let mut stats = QueryStats::default();
        if self.root == NULL
            || !origin.all_finite()
            || !end.all_finite()
            || !max_fraction.is_finite()
            || max_fraction < 0.0
        {
            return stats;
        }
        let delta = end - origin;
        let mut max_t = max_fraction;
        let mut stack = NodeStack::new();
        stack.push(self.root);
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            stats.node_visits += 1;
            let leaf = node.is_leaf();
            if leaf {
                stats.leaf_visits += 1;
            }
            let Some(t_enter) = segment_enters(origin, delta, &node.aabb, max_t) else {
                continue;
            };
            if leaf {
                let value = visit(self.proxy_id(node.child1), t_enter);
                if value == 0.0 {
                    break;
                }
                if value > 0.0 && value < max_t {
                    // Stage: clip the segment; boxes entered beyond it are skipped.
                    max_t = value;
                }
            } else {
                stack.push(node.child2);
                stack.push(node.child1);
            }
        }
        stats
    }
}
