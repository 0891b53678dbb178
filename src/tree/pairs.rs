//! Pair finding: the tree against itself (Chou's `childrenCrossed`, Choi's `collision_check`)
//! recomputed only when the tree changed (Choi's `tree_updated`), or queries of the moved
//! proxies against a persistent pair set (Box2D's move buffer).

use super::node::{MOVED, NULL, Node, ProxySlot};
use super::query::walk_tree;
use super::{DynamicTree, PairMethod, PairUpdate, ProxyId, QueryStats, UpdateMode, Vector};
use std::sync::OnceLock;

/// Calls `emit(slot_a, slot_b)` once for each pair of leaves under `root` whose boxes overlap.
///
/// The stack holds pairs of nodes already known to overlap (or a node paired with itself).
/// Cases for a popped pair (a, b):
/// - a == b (a subtree against itself): a branch gives each child against itself (when it
///   is a branch) and the two children against each other (when they overlap);
/// - two leaves: a pair;
/// - a leaf and a branch: the leaf against each child of the branch it overlaps;
/// - two branches: the larger (by SAH measure) is opened, each of its children against the
///   other node when they overlap.
///
/// Each unordered pair of leaves is reached along exactly one path, so it is reported once.
/// Overlaps are tested before a pair is pushed, so the stack only carries live work.
pub(crate) fn self_pairs<V: Vector>(
    nodes: &[Node<V>],
    root: u32,
    stack: &mut Vec<(u32, u32)>,
    mut emit: impl FnMut(u32, u32),
) -> QueryStats {
    let mut stats = QueryStats::default();
    if root == NULL || nodes[root as usize].is_leaf() {
        return stats;
    }
    stack.clear();
    stack.push((root, root));
    // Tests `x` against `y` and pushes (or emits) the pair when they overlap.
    let mut visit = |x: u32, y: u32, stack: &mut Vec<(u32, u32)>, stats: &mut QueryStats| {
        let nx = &nodes[x as usize];
        let ny = &nodes[y as usize];
        stats.node_visits += 1;
        let both_leaves = nx.is_leaf() && ny.is_leaf();
        if both_leaves {
            stats.leaf_visits += 1;
        }
        if nx.aabb.overlaps(&ny.aabb) {
            if both_leaves {
                emit(nx.child1, ny.child1);
            } else {
                stack.push((x, y));
            }
        }
    };
    while let Some((a, b)) = stack.pop() {
        let na = &nodes[a as usize];
        if a == b {
            // A branch against itself.
            let (c1, c2) = (na.child1, na.child2);
            if !nodes[c1 as usize].is_leaf() {
                stack.push((c1, c1));
            }
            if !nodes[c2 as usize].is_leaf() {
                stack.push((c2, c2));
            }
            visit(c1, c2, stack, &mut stats);
            continue;
        }
        let nb = &nodes[b as usize];
        // At least one is a branch (leaf pairs are emitted, never pushed).
        let open_a = !na.is_leaf() && (nb.is_leaf() || na.aabb.half_area() >= nb.aabb.half_area());
        if open_a {
            visit(na.child1, b, stack, &mut stats);
            visit(na.child2, b, stack, &mut stats);
        } else {
            visit(a, nb.child1, stack, &mut stats);
            visit(a, nb.child2, stack, &mut stats);
        }
    }
    stats
}

/// The pair `(a, b)` with `a < b` of two proxy slots.
#[inline]
fn ordered<V, T>(proxies: &[ProxySlot<V, T>], a: u32, b: u32) -> (ProxyId, ProxyId) {
    let id = |i: u32| ProxyId {
        index: i,
        generation: proxies[i as usize].generation(),
    };
    if a < b {
        (id(a), id(b))
    } else {
        (id(b), id(a))
    }
}

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Brings the pair set up to date with the configured [`PairMethod`] (after a pending
    /// partial rebuild under [`UpdateMode::EnlargeAndRebuild`]). Nothing is recomputed when no
    /// fat box changed and no proxy came or went since the last call.
    pub fn update_pairs(&mut self) -> PairUpdate {
        if self.config.update == UpdateMode::EnlargeAndRebuild && self.any_enlarged {
            self.rebuild_partial();
        }
        if !self.pairs_stale && !self.pairs_full {
            return PairUpdate::default();
        }
        let stats = if self.pairs_full || self.config.pairs == PairMethod::SelfTraversal {
            self.pairs_by_self_traversal()
        } else {
            self.pairs_by_moved_queries()
        };
        for &i in &self.moved {
            self.proxies[i as usize].state &= !MOVED;
        }
        // After a bulk creation the buffer held every proxy; do not keep that much room.
        let used = self.moved.len();
        self.moved.clear();
        if self.moved.capacity() > 4096 && self.moved.capacity() > 8 * used {
            self.moved.shrink_to(2 * used);
        }
        self.pairs_stale = false;
        self.pairs_full = false;
        self.sorted_pairs = OnceLock::new();
        PairUpdate {
            recomputed: true,
            stats,
        }
    }

    /// Recomputes every pair by the self traversal.
    fn pairs_by_self_traversal(&mut self) -> QueryStats {
        let Self {
            nodes,
            root,
            proxies,
            pairs,
            pair_stack,
            ..
        } = self;
        pairs.clear();
        self_pairs(nodes, *root, pair_stack, |a, b| {
            pairs.push(ordered(proxies, a, b));
        })
    }

    /// Updates the persistent pair set from the move buffer.
    ///
    /// Stage 1: the move buffer without repeats or destroyed proxies. Stage 2: drop every pair
    /// that touches a moved or destroyed proxy. Stage 3: query each moved proxy's fat box; a
    /// pair of two moved proxies is added by the query of the one with the smaller index.
    fn pairs_by_moved_queries(&mut self) -> QueryStats {
        let Self {
            nodes,
            root,
            proxies,
            pairs,
            moved,
            ..
        } = self;
        // Stage 1.
        moved.sort_unstable();
        moved.dedup();
        moved.retain(|&i| {
            let s = &mut proxies[i as usize];
            if !s.is_alive() {
                // A destroyed slot keeps `MOVED` while its index is in the buffer; clear it
                // here, as the loop after the search clears it for the kept ones.
                s.state &= !MOVED;
                return false;
            }
            s.is_moved()
        });
        // Stage 2.
        let keep = |id: ProxyId| {
            let s = &proxies[id.index as usize];
            s.is_alive() && s.generation() == id.generation && !s.is_moved()
        };
        pairs.retain(|&(a, b)| keep(a) && keep(b));
        // Stage 3.
        let mut stats = QueryStats::default();
        for &i in moved.iter() {
            let fat = nodes[proxies[i as usize].leaf as usize].aabb;
            let s = walk_tree(
                nodes,
                *root,
                |b| b.overlaps(&fat),
                |j| {
                    if j != i && (!proxies[j as usize].is_moved() || i < j) {
                        pairs.push(ordered(proxies, i, j));
                    }
                    true
                },
            );
            stats.node_visits += s.node_visits;
            stats.leaf_visits += s.leaf_visits;
        }
        stats
    }

    /// Every pair of proxies whose fat boxes overlap, each as `(a, b)` with `a < b`, sorted,
    /// as of the last [`DynamicTree::update_pairs`] (sorted on the first call after it).
    pub fn pairs(&self) -> &[(ProxyId, ProxyId)] {
        self.sorted_pairs.get_or_init(|| {
            let mut sorted = self.pairs.clone();
            sorted.sort_unstable();
            sorted
        })
    }

    /// The same pairs as [`DynamicTree::pairs`] in no particular order (no sorting, no copy).
    pub fn pairs_unsorted(&self) -> &[(ProxyId, ProxyId)] {
        &self.pairs
    }

    /// Calls `visit(a, b)` for each current pair (`a < b`), in no particular order.
    pub fn for_each_pair(&self, mut visit: impl FnMut(ProxyId, ProxyId)) {
        for &(a, b) in &self.pairs {
            visit(a, b);
        }
    }

    /// Number of current pairs.
    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }
}
