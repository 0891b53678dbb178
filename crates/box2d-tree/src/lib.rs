//! Box2D v3's own dynamic AABB tree (`b2DynamicTree`, its C code compiled by `boxdd-sys` 0.6)
//! behind a safe, bounds-checked API, with read-only access to its nodes.
//!
//! The Box2D code is upstream commit `56edae79f2949d86142b03450d5d60f63bcf5a6f`
//! (2026-06-16, "More doubles clean up and testing (#1070)"), as boxdd-sys 0.6.0's
//! `upstream.toml` and `effective-source.toml` record it: before Box2D's September 2026
//! broad-phase optimization. See [`BOX2D_COMMIT`].
//!
//! # Why `unsafe`
//!
//! The workspace forbids `unsafe`; this crate only denies it, and allows it in one module
//! (`ffi`), for two reasons. boxdd's safe `DynamicTree` has no access to the tree's nodes,
//! which the debugger draws and checks. And it checks every call and keeps a hash map of its
//! proxies, so a benchmark through it would time the wrapper, not Box2D: a fair comparison
//! must drive `b2DynamicTree` directly, as Box2D's broad phase does. The `ffi` module checks
//! every argument Box2D would only assert on, and every node index it reads from the C array
//! against the array's length.
//!
//! No Box2D initialisation is needed: `b2DynamicTree_Create` uses no world and no global
//! state but the allocator hook, which falls back to `aligned_alloc` (boxdd's
//! `Foundation::initialize_default` sets the length unit, assert and log hooks for worlds).
//! Box2D's asserts are compiled in (boxdd-sys does not define `NDEBUG`); the checks here keep
//! them from firing.

#[allow(unsafe_code)]
mod ffi;

use ffi::RawTree;
use glam::Vec2;

/// The Box2D commit whose C code this crate runs (boxdd-sys 0.6.0's `upstream_sha`).
pub const BOX2D_COMMIT: &str = "56edae79f2949d86142b03450d5d60f63bcf5a6f";

/// Box2D's `B2_HUGE` at one length unit per meter: boxes as wide or tall as this are refused.
pub const HUGE: f32 = ffi::HUGE;

/// Box2D's `B2_DEFAULT_CATEGORY_BITS` (1) and `B2_DEFAULT_MASK_BITS` (all bits).
pub const DEFAULT_CATEGORY_BITS: u64 = 1;
/// Every category: a query with this mask sees every proxy.
pub const ALL_BITS: u64 = u64::MAX;

/// True when the linked Box2D was built with `BOX2D_VALIDATE` (boxdd-sys's `validate`
/// feature), so that [`Tree::validate`] checks the tree; false means it does nothing.
#[must_use]
pub fn validation_enabled() -> bool {
    boxdd_sys::ffi::B2_ENABLE_VALIDATION == 1
}

/// An axis-aligned box as Box2D keeps it (`b2AABB`: lower and upper corners).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Box2 {
    /// Lower corner.
    pub min: Vec2,
    /// Upper corner.
    pub max: Vec2,
}

impl Box2 {
    /// A box from its corners.
    #[must_use]
    pub fn new(min: Vec2, max: Vec2) -> Self {
        Self { min, max }
    }

    /// True when `other` lies inside this box (`b2AABB_Contains`, closed).
    #[must_use]
    pub fn contains(&self, other: &Box2) -> bool {
        self.min.x <= other.min.x
            && self.min.y <= other.min.y
            && other.max.x <= self.max.x
            && other.max.y <= self.max.y
    }

    /// True when the two closed boxes share a point (`b2AABB_Overlaps`).
    #[must_use]
    pub fn overlaps(&self, other: &Box2) -> bool {
        !(other.min.x > self.max.x
            || other.min.y > self.max.y
            || self.min.x > other.max.x
            || self.min.y > other.max.y)
    }

    /// Box2D's `b2Perimeter`: `2 * (width + height)`.
    #[must_use]
    pub fn perimeter(&self) -> f32 {
        let wx = self.max.x - self.min.x;
        let wy = self.max.y - self.min.y;
        2.0 * (wx + wy)
    }
}

/// Why the tree refused a call, or a node could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum TreeError {
    /// A box Box2D cannot take: not finite, inverted, or a side of [`HUGE`] or more.
    BadBox {
        /// Lower corner given.
        min: Vec2,
        /// Upper corner given.
        max: Vec2,
        /// What is wrong.
        reason: &'static str,
    },
    /// No proxy has this id (it was never made, or was destroyed).
    NoSuchProxy(u32),
    /// `enlarge_proxy` with a box inside the proxy's box: Box2D requires a larger one.
    NotEnlarged(u32),
    /// The tree is too deep (this height) for Box2D's query stack of 1024 nodes.
    TooDeep(u32),
    /// The node pool cannot grow further (Box2D counts nodes in an `int`).
    Full,
    /// A node read from the C array is not what it must be (a link outside the array, a node
    /// not allocated, a cycle): a broken tree.
    BadNode {
        /// The node.
        index: u32,
        /// What is wrong.
        what: &'static str,
    },
}

impl std::fmt::Display for TreeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TreeError::BadBox { min, max, reason } => {
                write!(
                    f,
                    "Box2D's tree cannot take the box min {min}, max {max}: {reason}"
                )
            }
            TreeError::NoSuchProxy(p) => write!(f, "Box2D's tree has no proxy {p}"),
            TreeError::NotEnlarged(p) => write!(
                f,
                "proxy {p}: an enlarged box must not lie inside the old one (move it instead)"
            ),
            TreeError::TooDeep(h) => write!(
                f,
                "Box2D's tree is {h} levels deep, too deep for its query stack (1024)"
            ),
            TreeError::Full => f.write_str("Box2D's tree cannot hold more nodes"),
            TreeError::BadNode { index, what } => write!(f, "Box2D's tree, node {index}: {what}"),
        }
    }
}

impl std::error::Error for TreeError {}

/// What a node is: a leaf (a proxy, with its user data) or an internal node (two children).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A proxy; its id is the node's index.
    Leaf {
        /// The user data given to [`Tree::create_proxy`].
        user_data: u64,
    },
    /// An internal node.
    Internal {
        /// First child's index.
        child1: u32,
        /// Second child's index.
        child2: u32,
    },
}

/// One node as read from Box2D's node array (`b2TreeNode`); every index in it is checked to
/// lie inside the array.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Node {
    /// The node's box (a leaf's is its proxy's fat box).
    pub aabb: Box2,
    /// Category bits (a leaf's own; an internal node's, the union of its children's).
    pub category_bits: u64,
    /// The parent's index; `None` for the root.
    pub parent: Option<u32>,
    /// Leaf or internal node.
    pub kind: NodeKind,
    /// 0 for a leaf, else 1 + the taller child's height.
    pub height: u16,
    /// Box2D's `b2_enlargedNode`: grown by `enlarge_proxy` and not rebuilt since.
    pub enlarged: bool,
}

/// Box2D's `b2DynamicTree`, owned (created by `new`, destroyed on drop).
pub struct Tree {
    raw: RawTree,
}

impl Default for Tree {
    fn default() -> Self {
        Self::new()
    }
}

impl Clone for Tree {
    /// A deep copy: the same nodes at the same indices and the same free list, so the copy
    /// steps exactly as the original would.
    fn clone(&self) -> Self {
        Self {
            raw: self.raw.deep_clone(),
        }
    }
}

impl std::fmt::Debug for Tree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("box2d_tree::Tree")
            .field("proxies", &self.proxy_count())
            .field("height", &self.height())
            .finish()
    }
}

impl Tree {
    /// An empty tree (room for 16 proxies before its pool grows, as `b2DynamicTree_Create(0)`).
    #[must_use]
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty tree with room for `proxies` proxies before its node pool grows.
    #[must_use]
    pub fn with_capacity(proxies: u32) -> Self {
        Self {
            raw: RawTree::new(proxies),
        }
    }

    /// Adds a proxy with box `aabb`, category bits and user data; returns its id
    /// (`b2DynamicTree_CreateProxy`, which inserts with rotations).
    pub fn create_proxy(
        &mut self,
        aabb: Box2,
        category_bits: u64,
        user_data: u64,
    ) -> Result<u32, TreeError> {
        self.raw.create_proxy(&aabb, category_bits, user_data)
    }

    /// Removes a proxy (`b2DynamicTree_DestroyProxy`).
    pub fn destroy_proxy(&mut self, proxy: u32) -> Result<(), TreeError> {
        self.raw.destroy_proxy(proxy)
    }

    /// Gives a proxy a new box by removing and reinserting it (`b2DynamicTree_MoveProxy`; no
    /// rotations), as Box2D moves static proxies.
    pub fn move_proxy(&mut self, proxy: u32, aabb: Box2) -> Result<(), TreeError> {
        self.raw.move_proxy(proxy, &aabb)
    }

    /// Gives a proxy a new box in place, growing and flagging its ancestors
    /// (`b2DynamicTree_EnlargeProxy`), as Box2D updates moving proxies; [`Tree::rebuild`]
    /// then rebuilds the flagged part. The old box must not contain the new one.
    pub fn enlarge_proxy(&mut self, proxy: u32, aabb: Box2) -> Result<(), TreeError> {
        self.raw.enlarge_proxy(proxy, &aabb)
    }

    /// `b2DynamicTree_Rebuild`: rebuilds the enlarged nodes (binned SAH), or the whole tree when
    /// `full_build`; returns the number of boxes sorted.
    pub fn rebuild(&mut self, full_build: bool) -> u32 {
        self.raw.rebuild(full_build)
    }

    /// Calls `visit(proxy, user_data)` for each proxy whose box overlaps `aabb` and whose
    /// category bits share a bit with `mask_bits` (`b2DynamicTree_Query`); `visit` returns
    /// false to stop. An error only for a tree too deep for Box2D's query stack.
    pub fn query(
        &self,
        aabb: Box2,
        mask_bits: u64,
        visit: impl FnMut(u32, u64) -> bool,
    ) -> Result<(), TreeError> {
        self.raw.query(&aabb, mask_bits, visit)
    }

    /// `b2DynamicTree_Validate`: Box2D checks links, heights, boxes and the free list and
    /// aborts the process on a broken tree. A no-op unless Box2D was built with
    /// `BOX2D_VALIDATE` (boxdd-sys's `validate` feature, which this crate's tests turn on).
    pub fn validate(&self) {
        self.raw.validate();
    }

    /// The root's height, 0 when empty (`b2DynamicTree_GetHeight`).
    #[must_use]
    pub fn height(&self) -> u32 {
        self.raw.height()
    }

    /// The sum of the internal nodes' perimeters (the root left out) over the root's
    /// (`b2DynamicTree_GetAreaRatio`), 0 when empty.
    #[must_use]
    pub fn area_ratio(&self) -> f32 {
        self.raw.area_ratio()
    }

    /// Proxies in the tree (`b2DynamicTree_GetProxyCount`).
    #[must_use]
    pub fn proxy_count(&self) -> u32 {
        self.raw.proxy_count()
    }

    /// Bytes the tree holds (`b2DynamicTree_GetByteCount`: the struct, the node pool and the
    /// rebuild scratch).
    #[must_use]
    pub fn byte_count(&self) -> usize {
        self.raw.byte_count()
    }

    /// Length of the node array (allocated and free nodes).
    #[must_use]
    pub fn node_capacity(&self) -> usize {
        self.raw.capacity()
    }

    /// Allocated nodes.
    #[must_use]
    pub fn node_count(&self) -> u32 {
        self.raw.node_count()
    }

    /// The root node's index; `None` when the tree is empty.
    #[must_use]
    pub fn root(&self) -> Option<u32> {
        self.raw.root()
    }

    /// Node `index` read from the C array; an error when it is outside the array, not
    /// allocated, or holds a link outside the array.
    pub fn node(&self, index: u32) -> Result<Node, TreeError> {
        self.raw.node(index)
    }

    /// Every node reachable from the root, parents before children (depth first, first child
    /// first), as `(index, node)`; each link checked (inside the array, allocated, the child's
    /// parent is the node, no node twice). An error names the first broken node.
    pub fn walk(&self) -> Result<Vec<(u32, Node)>, TreeError> {
        let mut out = Vec::with_capacity(self.node_count() as usize);
        let Some(root) = self.root() else {
            return Ok(out);
        };
        let mut seen = vec![false; self.node_capacity()];
        let mut stack = vec![(root, None)];
        while let Some((index, parent)) = stack.pop() {
            let node = self.node(index)?;
            let bad = |what| TreeError::BadNode { index, what };
            if std::mem::replace(&mut seen[index as usize], true) {
                return Err(bad("reached twice (a cycle or a shared child)"));
            }
            if node.parent != parent {
                return Err(bad("its parent link does not point to its parent"));
            }
            if let NodeKind::Internal { child1, child2 } = node.kind {
                stack.push((child2, Some(index)));
                stack.push((child1, Some(index)));
            }
            out.push((index, node));
        }
        Ok(out)
    }

    /// The tree's shape from its nodes as read ([`Tree::walk`]): the height (computed from the
    /// links, not the stored heights) and Box2D's area ratio, summed in node-index order as
    /// `b2DynamicTree_GetAreaRatio` sums it.
    pub fn shape(&self) -> Result<Shape, TreeError> {
        let walked = self.walk()?;
        let mut depth = vec![0u32; self.node_capacity()];
        let mut height = 0;
        let mut leaves = 0;
        for &(index, node) in &walked {
            let d = node.parent.map_or(0, |p| depth[p as usize] + 1);
            depth[index as usize] = d;
            if matches!(node.kind, NodeKind::Leaf { .. }) {
                height = height.max(d);
                leaves += 1;
            }
        }
        let mut internal: Vec<&(u32, Node)> = walked
            .iter()
            .filter(|(_, n)| matches!(n.kind, NodeKind::Internal { .. }))
            .collect();
        internal.sort_unstable_by_key(|(i, _)| *i);
        let area_ratio = match walked.first() {
            None => 0.0,
            Some((root, root_node)) => {
                let total: f32 = internal
                    .iter()
                    .filter(|(i, _)| i != root)
                    .fold(0.0, |sum, (_, n)| sum + n.aabb.perimeter());
                total / root_node.aabb.perimeter()
            }
        };
        Ok(Shape {
            height,
            area_ratio,
            leaves,
            nodes: walked.len(),
        })
    }
}

/// What [`Tree::shape`] reads from the nodes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// Edges from the root to the deepest leaf (0 for a lone leaf or an empty tree).
    pub height: u32,
    /// Sum of the internal nodes' perimeters, the root's left out, over the root's.
    pub area_ratio: f32,
    /// Leaves reached.
    pub leaves: usize,
    /// Nodes reached.
    pub nodes: usize,
}
