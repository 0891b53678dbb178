//! The dynamic AABB tree: an index-linked node pool, generational proxy handles, fat leaves,
//! three insertion costs, three balancing strategies, rebuilds, queries and pair finding.
//!
//! The tree knows nothing of spheres, scenes or the UI. One implementation serves 2D
//! ([`glam::Vec2`]) and 3D ([`glam::Vec3`]) boxes through the [`Vector`] trait.
//!
//! API CONTRACT (skeleton): the public items below are what `scene`, `broadphase`, `cli` and
//! `app` build against. Implementations may add items and split this module into files
//! (`insert.rs`, `remove.rs`, `balance.rs`, `rebuild.rs`, `pairs.rs`, `query.rs`,
//! `validate.rs`, `stats.rs`, ...), but should not rename or remove these.

mod aabb;
mod vector;

pub use aabb::Aabb;
pub use vector::Vector;

use serde::{Deserialize, Serialize};

/// How the insertion descent scores a candidate sibling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum InsertionCost {
    /// Least volume (area in 2D) increase, greedy descent (Choi / Chou, seed 000).
    Volume,
    /// Least perimeter of the combined box, greedy descent (seed 003).
    Perimeter,
    /// Box2D v3's branch-and-bound search for the sibling of least SAH cost.
    #[default]
    SurfaceArea,
}

/// How the tree keeps itself balanced after insertions and removals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Balancing {
    /// No rotations.
    None,
    /// AVL-style height rotations (Gaul, seed 003).
    Avl,
    /// Surface-area-reducing tree rotations (Box2D v3, Kopta et al.).
    #[default]
    Rotations,
}

/// How candidate pairs (overlapping fat boxes) are found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PairMethod {
    /// The tree against itself (Chou's `childrenCrossed`, Choi's `collision_check`),
    /// recomputed only when the tree changed (Choi's `tree_updated`).
    #[default]
    SelfTraversal,
    /// Query each moved proxy and keep a persistent pair set (Box2D).
    MovedQueries,
}

/// What `move_proxy` does with a proxy whose tight box left its fat box.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UpdateMode {
    /// Remove the leaf and insert it again with a new fat box.
    #[default]
    Reinsert,
    /// Enlarge the leaf and its ancestors in place, then rebuild the enlarged part of the
    /// tree (Box2D v3 `EnlargeProxy` + partial `Rebuild`) when pairs are next found or on
    /// [`DynamicTree::rebuild_partial`].
    EnlargeAndRebuild,
}

/// Settings of a tree; every one can be changed at run time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeConfig {
    /// Fat-box margin added on every side of a tight box, world units (>= 0).
    pub margin: f32,
    /// Seconds of predicted motion added to fat boxes along the velocity (>= 0).
    pub velocity_lookahead: f32,
    /// Insertion cost.
    pub insertion: InsertionCost,
    /// Balancing strategy.
    pub balancing: Balancing,
    /// Pair-finding method.
    pub pairs: PairMethod,
    /// What a move out of the fat box does.
    pub update: UpdateMode,
}

impl Default for TreeConfig {
    fn default() -> Self {
        Self {
            margin: 0.1,
            velocity_lookahead: 0.0,
            insertion: InsertionCost::default(),
            balancing: Balancing::default(),
            pairs: PairMethod::default(),
            update: UpdateMode::default(),
        }
    }
}

/// A generational handle to a proxy (one user object in the tree). A handle whose proxy was
/// destroyed is stale: every call that takes it returns [`TreeError::StaleProxy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ProxyId {
    /// Slot index.
    pub index: u32,
    /// Generation of the slot when the handle was made.
    pub generation: u32,
}

/// Index of a node in the tree's pool; valid until the next mutation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// Errors at the tree's API boundary.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TreeError {
    /// The handle's proxy was destroyed, or the handle never came from this tree.
    #[error("stale proxy handle {0:?}")]
    StaleProxy(ProxyId),
    /// A box or vector had a NaN or infinite component.
    #[error("a box or velocity has a non-finite component")]
    NonFinite,
    /// A box had `min > max` on some axis.
    #[error("a box has min > max on some axis")]
    Inverted,
    /// A margin or look-ahead was negative or not finite.
    #[error("{name} must be finite and >= 0, got {value}")]
    InvalidSetting {
        /// Which setting.
        name: &'static str,
        /// The value refused.
        value: f32,
    },
    /// The pool cannot hold more nodes (indices are `u32`).
    #[error("the tree is full ({0} proxies)")]
    Full(usize),
}

/// A broken invariant found by [`DynamicTree::validate`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tree invariant broken at node {node}: {what}")]
pub struct ValidationError {
    /// The node where it was found.
    pub node: u32,
    /// What is wrong.
    pub what: String,
}

/// How much work a query did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// Nodes whose box was tested.
    pub node_visits: u32,
    /// Leaves whose box was tested.
    pub leaf_visits: u32,
}

/// Shape and cost figures of a tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TreeStats {
    /// Proxies (leaves) in the tree.
    pub leaves: usize,
    /// Nodes in use (branches + leaves).
    pub nodes: usize,
    /// Height of the root (a lone leaf has height 0; empty tree 0).
    pub height: u32,
    /// The least height a binary tree of this many leaves can have: `ceil(log2(leaves))`.
    pub min_height: u32,
    /// Sum of the SAH measure of every node over the root's (the SAH cost; lower is better).
    pub area_ratio: f32,
    /// Bytes held by the tree's storage (capacity, not length).
    pub bytes: usize,
}

/// One thing the tree did, recorded when [`DynamicTree::set_recording`] is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeEvent {
    /// A proxy was created and its leaf inserted.
    Insert(ProxyId),
    /// A proxy was destroyed.
    Remove(ProxyId),
    /// A proxy's tight box left its fat box and its leaf was reinserted (or enlarged).
    Reinsert(ProxyId),
    /// A rotation swapped two subtrees below `node`.
    Rotate {
        /// The node whose grandchildren were swapped.
        node: NodeId,
    },
    /// The whole tree (or, when `partial`, its enlarged part) was rebuilt.
    Rebuild {
        /// True for a partial rebuild of enlarged nodes.
        partial: bool,
    },
}

/// What [`DynamicTree::update_pairs`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairUpdate {
    /// True when the pair set was recomputed (the tree changed since the last call).
    pub recomputed: bool,
    /// Node and leaf visits of the search.
    pub stats: QueryStats,
}

/// A read-only view of one node, for drawing and inspection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeView<V> {
    /// The node's box: the fat box for a leaf, the union of its children for a branch.
    pub aabb: Aabb<V>,
    /// Parent, `None` for the root.
    pub parent: Option<NodeId>,
    /// The two children of a branch; `None` for a leaf.
    pub children: Option<[NodeId; 2]>,
    /// Height (leaves 0).
    pub height: u32,
    /// The proxy of a leaf; `None` for a branch.
    pub proxy: Option<ProxyId>,
}

/// A dynamic AABB tree of proxies, each carrying user data `T`.
#[derive(Clone, Debug)]
pub struct DynamicTree<V: Vector, T: Copy = u32> {
    config: TreeConfig,
    _todo: std::marker::PhantomData<(V, T)>,
}

#[allow(unused_variables, clippy::todo, missing_docs)]
impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// An empty tree (margin and look-ahead are assumed valid; see [`DynamicTree::try_new`]).
    pub fn new(config: TreeConfig) -> Self {
        todo!()
    }
    /// An empty tree; an error when the margin or look-ahead is negative or not finite.
    pub fn try_new(config: TreeConfig) -> Result<Self, TreeError> {
        todo!()
    }
    /// The current settings.
    pub fn config(&self) -> &TreeConfig {
        &self.config
    }
    /// Adds a proxy with a tight box and velocity; its leaf gets the fat box.
    pub fn create_proxy(
        &mut self,
        tight: Aabb<V>,
        velocity: V,
        user: T,
    ) -> Result<ProxyId, TreeError> {
        todo!()
    }
    /// Removes a proxy and returns its user data.
    pub fn destroy_proxy(&mut self, id: ProxyId) -> Result<T, TreeError> {
        todo!()
    }
    /// Gives a proxy a new tight box and velocity. Returns true when the tight box had left the
    /// fat box and the leaf was reinserted (or enlarged); false when nothing in the tree changed.
    pub fn move_proxy(
        &mut self,
        id: ProxyId,
        tight: Aabb<V>,
        velocity: V,
    ) -> Result<bool, TreeError> {
        todo!()
    }
    /// Sets the margin; every proxy's fat box is recomputed at once and the tree refit.
    pub fn set_margin(&mut self, margin: f32) -> Result<(), TreeError> {
        todo!()
    }
    /// Sets the look-ahead; every proxy's fat box is recomputed at once and the tree refit.
    pub fn set_velocity_lookahead(&mut self, secs: f32) -> Result<(), TreeError> {
        todo!()
    }
    pub fn set_insertion(&mut self, cost: InsertionCost) {
        todo!()
    }
    pub fn set_balancing(&mut self, balancing: Balancing) {
        todo!()
    }
    pub fn set_pair_method(&mut self, method: PairMethod) {
        todo!()
    }
    pub fn set_update_mode(&mut self, mode: UpdateMode) {
        todo!()
    }
    /// Full rebuild with binned SAH.
    pub fn rebuild(&mut self) {
        todo!()
    }
    /// Rebuilds only the enlarged part of the tree (a no-op when nothing is enlarged).
    pub fn rebuild_partial(&mut self) {
        todo!()
    }
    pub fn len(&self) -> usize {
        todo!()
    }
    pub fn is_empty(&self) -> bool {
        todo!()
    }
    pub fn contains(&self, id: ProxyId) -> bool {
        todo!()
    }
    pub fn user_data(&self, id: ProxyId) -> Result<T, TreeError> {
        todo!()
    }
    pub fn fat_aabb(&self, id: ProxyId) -> Result<Aabb<V>, TreeError> {
        todo!()
    }
    pub fn tight_aabb(&self, id: ProxyId) -> Result<Aabb<V>, TreeError> {
        todo!()
    }
    /// The leaf node of a proxy.
    pub fn leaf_of(&self, id: ProxyId) -> Result<NodeId, TreeError> {
        todo!()
    }
    /// Every live proxy, sorted by id.
    pub fn proxies(&self) -> Vec<ProxyId> {
        todo!()
    }
    /// Calls `visit(proxy)` for each proxy whose fat box overlaps `aabb`; return false to stop.
    pub fn query_aabb(&self, aabb: &Aabb<V>, visit: impl FnMut(ProxyId) -> bool) -> QueryStats {
        todo!()
    }
    /// Calls `visit(proxy)` for each proxy whose fat box contains `point`; return false to stop.
    pub fn query_point(&self, point: V, visit: impl FnMut(ProxyId) -> bool) -> QueryStats {
        todo!()
    }
    /// Casts the segment `origin + t * (end - origin)`, `t` in `[0, max_fraction]`, against the
    /// fat boxes. `visit(proxy, t_enter)` returns the new max fraction (0 stops, the same value
    /// goes on, a smaller one clips the segment).
    pub fn ray_cast(
        &self,
        origin: V,
        end: V,
        max_fraction: f32,
        visit: impl FnMut(ProxyId, f32) -> f32,
    ) -> QueryStats {
        todo!()
    }
    /// Brings the pair set up to date with the configured [`PairMethod`].
    pub fn update_pairs(&mut self) -> PairUpdate {
        todo!()
    }
    /// Every pair of proxies whose fat boxes overlap, each as `(a, b)` with `a < b`, sorted,
    /// as of the last [`DynamicTree::update_pairs`].
    pub fn pairs(&self) -> &[(ProxyId, ProxyId)] {
        todo!()
    }
    /// Checks every invariant; see the module docs.
    pub fn validate(&self) -> Result<(), ValidationError> {
        todo!()
    }
    pub fn stats(&self) -> TreeStats {
        todo!()
    }
    pub fn root(&self) -> Option<NodeId> {
        todo!()
    }
    pub fn node(&self, id: NodeId) -> Option<NodeView<V>> {
        todo!()
    }
    /// Every node in use with its depth (root depth 0), depth-first, parents before children.
    pub fn walk(&self, visit: impl FnMut(NodeId, &NodeView<V>, u32)) {
        todo!()
    }
    /// Turns the event recorder on or off (off by default); turning it off clears it.
    pub fn set_recording(&mut self, on: bool) {
        todo!()
    }
    /// Events recorded since the last call, oldest first.
    pub fn take_events(&mut self) -> Vec<TreeEvent> {
        todo!()
    }
}
