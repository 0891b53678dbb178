//! A dynamic AABB tree: a bounding volume hierarchy of axis-aligned boxes that follows its
//! objects as they move, for the broad phase of collision detection in 2D and 3D.
//!
//! # What it is for
//!
//! Testing every two of `n` moving objects for contact costs `n²/2` exact tests a step. The
//! tree holds one box per object (a *proxy*) in a binary tree whose every branch box holds
//! its children's, so that [`DynamicTree::update_pairs`] finds the pairs of overlapping boxes
//! (the candidates for an exact, narrow-phase test) by visiting only branches that overlap,
//! and [`DynamicTree::query_aabb`], [`DynamicTree::query_point`] and
//! [`DynamicTree::ray_cast`] answer spatial queries the same way. Unlike a tree built once,
//! it is updated in place as objects are created, moved and destroyed.
//!
//! One implementation serves 2D ([`glam::Vec2`]) and 3D ([`glam::Vec3`]) boxes through the
//! [`Vector`] trait; each proxy carries user data `T` (an index or a handle of your own).
//!
//! # Fat boxes
//!
//! A leaf does not hold the object's tight box but a *fat* one ([`fat_box`]): the tight box
//! grown by [`TreeConfig::margin`] on every side and stretched by the velocity times
//! [`TreeConfig::velocity_lookahead`] along the motion. [`DynamicTree::move_proxy`] changes
//! the tree only when the new tight box leaves the fat box, so an object that moves a little
//! each step costs nothing most steps. A larger margin means fewer tree updates and more
//! candidate pairs.
//!
//! # Settings
//!
//! A [`TreeConfig`] holds the margin and look-ahead and four strategies, every one
//! changeable at run time (the defaults were the fastest measured):
//!
//! - [`InsertionCost`]: how a new leaf chooses its sibling (least volume growth, least
//!   perimeter, Box2D v3's branch-and-bound SAH descent, or the exact best-first SAH search);
//! - [`Balancing`]: none, AVL height rotations, or surface-area rotations;
//! - [`PairMethod`]: the tree against itself, one query per moved proxy, or a traversal cut
//!   down to the branches above moved proxies;
//! - [`UpdateMode`]: what a move out of the fat box does (reinsert from the root, reinsert
//!   locally, or enlarge in place and rebuild later).
//!
//! [`DynamicTree::create_proxies`] adds a batch with one build and
//! [`DynamicTree::rebuild`] rebuilds the whole tree, by binned SAH, by agglomerative
//! clustering (PLOC) or by exact greedy clustering as [`TreeConfig::rebuild`] says
//! ([`RebuildMethod`]);
//! [`DynamicTree::optimize`] reinserts the branches that cost most (Bittner et al. 2013), a
//! share of them ([`TreeConfig::optimize_share`]) at each pair update after a change, and
//! [`DynamicTree::optimize_thorough`] improves a tree built once (subtree reinsertion and
//! treelet restructuring, each move made only when it lowers the SAH cost);
//! [`DynamicTree::set_pair_limit`] bounds
//! the pairs an update may find, [`DynamicTree::validate`] checks every invariant and
//! [`DynamicTree::stats`] gives the tree's shape and cost, [`DynamicTree::work`] the nodes and
//! leaves its updates and pair searches visited ([`WorkCounts`]: machine-independent).
//!
//! # Example
//!
//! ```
//! use dynamic_aabb_tree::{Aabb, DynamicTree, TreeConfig};
//! use glam::Vec2;
//!
//! let mut tree: DynamicTree<Vec2, u32> = DynamicTree::new(TreeConfig::default());
//! let a = tree.create_proxy(Aabb::new(Vec2::ZERO, Vec2::ONE), Vec2::ZERO, 7)?;
//! let b = tree.create_proxy(Aabb::new(Vec2::splat(0.5), Vec2::splat(2.0)), Vec2::ZERO, 8)?;
//! // A small move stays inside the fat box (margin 0.1): nothing in the tree changes.
//! let moved = Aabb::new(Vec2::new(0.05, 0.0), Vec2::new(1.05, 1.0));
//! assert!(!tree.move_proxy(a, moved, Vec2::X)?);
//! tree.update_pairs()?;
//! assert_eq!(tree.pairs(), &[(a, b)]);
//! tree.destroy_proxy(a)?;
//! assert!(tree.fat_aabb(a).is_err()); // a stale handle is an error, never another proxy
//! # Ok::<(), dynamic_aabb_tree::TreeError>(())
//! ```
//!
//! # Handles
//!
//! A [`ProxyId`] is a slot index and the slot's generation, bumped by each destroy; a slot
//! whose 30-bit generations are used up (after `2^30 - 1` proxies in it) is retired rather
//! than wrapped: never put back on the free list, so a stale handle stays an error
//! ([`TreeError::StaleProxy`]) for the life of the tree and never names a new proxy.
//!
//! # Pairs
//!
//! [`DynamicTree::set_pair_limit`] bounds the candidate pairs an update may leave (no limit
//! by default); past it [`DynamicTree::update_pairs`] stops early with
//! [`TreeError::PairLimit`], so a scene where everything overlaps cannot take all the memory.
//!
//! A change of the margin or the look-ahead recomputes every proxy's fat box at once and
//! refits the tree (its shape is kept, the boxes are recomputed bottom-up), and the next
//! [`DynamicTree::update_pairs`] recomputes every pair.
//!
//! # Features
//!
//! - `serde`: `Serialize` and `Deserialize` for [`Aabb`], [`TreeConfig`] and its enums,
//!   [`ProxyId`] and [`TreeStats`] (and glam's `serde` feature).
//! - `parallel`: `DynamicTree::update_pairs_parallel`, the pair traversal split over rayon's
//!   thread pool, and `PARALLEL_MIN_LEAVES`.
//!
//! With no feature the crate depends on `glam` alone.
//!
//! # Layout of the source
//!
//! The type is split across files by operation, each an `impl` block: `node` (pool, free
//! list, proxy table), `insert`, `remove`, `balance` (AVL and rotations), `rebuild` (binned
//! SAH, full and partial), `optimize` (the incremental optimization), `restructure` (the
//! thorough optimization), `update` (create, destroy, move, margins), `pairs`, `query`,
//! `validate`, `stats` and `events`.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod aabb;
mod balance;
mod events;
mod insert;
mod layout;
mod leaves;
mod node;
mod optimize;
mod pairs;
mod query;
mod rebuild;
mod remove;
mod restructure;
mod stats;
mod update;
mod validate;
mod vector;

#[cfg(test)]
mod tests;

// The test helpers shared with the integration tests name the crate by its name.
#[cfg(test)]
extern crate self as dynamic_aabb_tree;

/// The README's example, compiled and run as a doctest by `cargo test`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use aabb::Aabb;
#[cfg(feature = "parallel")]
pub use pairs::PARALLEL_MIN_LEAVES;
pub use restructure::{THOROUGH_CONVERGED, TREELET_LEAVES};
pub use stats::StructureHasher;
pub use update::fat_box;
pub use vector::Vector;

use node::{MAX_PROXIES, NULL, Node, ProxySlot};
#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};
use std::collections::BinaryHeap;
use std::fmt;
use std::sync::OnceLock;

/// How the insertion descent scores a candidate sibling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub enum InsertionCost {
    /// Least volume (area in 2D) increase, greedy descent (Choi, after Chou).
    Volume,
    /// Least perimeter of the combined box, greedy descent (the blog post "AABB Trees for
    /// Collision Detection").
    Perimeter,
    /// Box2D v3's branch-and-bound search for the sibling of least SAH cost.
    #[default]
    SurfaceArea,
    /// The exact branch-and-bound search for the sibling of least SAH cost (Bittner et al.
    /// 2012, "Fast insertion-based optimization of bounding volume hierarchies"; Catto's
    /// GDC 2019 talk): a priority queue of candidate subtrees, keyed by the growth their
    /// ancestors would take, explored best first and pruned by the lower bound. It finds a
    /// sibling of least cost, where [`InsertionCost::SurfaceArea`] follows one path and may
    /// miss it; it looks at more nodes.
    ExactSurfaceArea,
}

/// How the tree keeps itself balanced after insertions and removals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub enum Balancing {
    /// No rotations.
    None,
    /// AVL-style height rotations (Gaul; the blog post "AABB Trees for Collision Detection").
    Avl,
    /// Surface-area-reducing tree rotations (Box2D v3, Kopta et al.).
    #[default]
    Rotations,
}

/// How candidate pairs (overlapping fat boxes) are found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub enum PairMethod {
    /// The tree against itself (Chou's `childrenCrossed`, Choi's `collision_check`),
    /// recomputed only when the tree changed (Choi's `tree_updated`).
    SelfTraversal,
    /// Query each moved proxy and keep a persistent pair set (Box2D's move buffer; each query
    /// goes up from the proxy's leaf, testing the sibling at each ancestor, where Box2D's
    /// goes down from the root).
    MovedQueries,
    /// Keep a persistent pair set: when few proxies moved (at most one in 8), their pairs come
    /// from one query each, as `MovedQueries`; when more moved, from the whole traversal. On a
    /// tree of 262,144 leaves or more, the few moved proxies' pairs come instead from the tree
    /// against itself followed only down branches with a moved proxy below (one shared walk
    /// of the upper tree instead of one query per moved proxy, which there would read
    /// memory), and the whole traversal is taken past one in 32. The default: the fastest on
    /// the standard workload.
    #[default]
    MovedTraversal,
}

/// What `move_proxy` does with a proxy whose tight box left its fat box.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub enum UpdateMode {
    /// Remove the leaf and insert it again with a new fat box, searching for its sibling from
    /// the root (Box2D).
    Reinsert,
    /// When the parent's or grandparent's box holds the new fat box, keep the leaf in place
    /// and refit the boxes above it; otherwise remove the leaf and insert it again, searching
    /// for its sibling from the lowest ancestor whose box holds the new fat box (Bullet's
    /// `btDbvt::update`). A small move touches a small subtree. The default: the fastest on
    /// the standard workload.
    #[default]
    LocalReinsert,
    /// Enlarge the leaf and its ancestors in place, then rebuild the enlarged part of the
    /// tree (Box2D v3 `EnlargeProxy` + partial `Rebuild`) when pairs are next found or on
    /// [`DynamicTree::rebuild_partial`].
    EnlargeAndRebuild,
}

/// How [`DynamicTree::rebuild`], the partial rebuild and [`DynamicTree::create_proxies`]
/// build a tree over many leaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub enum RebuildMethod {
    /// Top-down: the leaves are split at the bin boundary of least `count * area` on either
    /// side (16 bins on every axis), recursively; a leaf whose box is nearly its range's
    /// whole box, over smaller others (a ground box under a level), is split off alone first.
    #[default]
    BinnedSah,
    /// Bottom-up agglomerative clustering, PLOC (Meister and Bittner 2018, "Parallel
    /// Locally-Ordered Clustering for Bounding Volume Hierarchy Construction"): the leaves
    /// are sorted by the Morton code of their centres; then, until one cluster is left, each
    /// cluster finds its nearest neighbour (the one whose union with it has the least SAH
    /// measure) among the [`PLOC_RADIUS`] clusters on either side in that order, every two
    /// clusters that are each other's nearest merge under a new branch, and the list is
    /// compacted. Slower than the binned build, and usually a cheaper tree.
    Agglomerative,
    /// Exact greedy agglomerative clustering (Walter et al. 2008, "Fast agglomerative
    /// clustering for rendering"): until one cluster is left, the two clusters of all whose
    /// union has the least SAH measure merge under a new branch (what PLOC approximates with
    /// its radius; among equal unions the merge making the lower branch goes first, so boxes
    /// all alike make a balanced tree). Each cluster's nearest neighbour is found by a
    /// branch-and-bound search and kept in a queue, searched again only when it merged; past
    /// [`GREEDY_VISITS`] search steps a leaf, PLOC merges the clusters left. 8 to 30 times as
    /// slow as PLOC on 10,000 to 100,000 random boxes (0.1 s at 10,000 3D boxes, 2 s at
    /// 100,000): for trees of level geometry built once.
    Greedy,
}

impl RebuildMethod {
    /// True for the default method.
    #[must_use]
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

pub use optimize::CONVERGED;
pub use rebuild::{GREEDY_VISITS, PLOC_RADIUS};

/// The default [`TreeConfig::optimize_share`]: a twentieth of a percent of the leaves (50
/// branches a step at 100,000 leaves; none below 2,000 leaves).
///
/// Set for the standard workload (docs/performance.md, "The standard workload"; 100,000
/// circles, default settings), where the pass should add at most a tenth to a step: 0.001 (the
/// earlier default) added 5 to 14% there (10% on average in six runs) once the step had become
/// faster, 0.0005 adds -5 to 11% (4.5% on average in ten; paired runs of the workload
/// benchmark's rows "ours default" and "ours default, pass off"), for two thirds of the gain in
/// SAH cost (after 400 steps 675 against 688 without the pass and 668 with 0.001).
pub const DEFAULT_OPTIMIZE_SHARE: f32 = 0.0005;

/// Settings of a tree; every one can be changed at run time.
///
/// In a scene file this is the `tree` section; a field left out takes its default, and an
/// unknown field is refused. [`TreeConfig::check`] is the one place its numbers are checked.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
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
    /// What a move out of the fat box does (written to files only when not the default).
    #[cfg_attr(
        feature = "serde",
        serde(skip_serializing_if = "UpdateMode::is_default")
    )]
    pub update: UpdateMode,
    /// How full and partial rebuilds and batch creation build the tree (written to files only
    /// when not the default).
    #[cfg_attr(
        feature = "serde",
        serde(skip_serializing_if = "RebuildMethod::is_default")
    )]
    pub rebuild: RebuildMethod,
    /// Incremental optimization (Bittner et al. 2013): at each [`DynamicTree::update_pairs`]
    /// after a change, `floor(optimize_share * leaves)` branches of the highest inefficiency
    /// are taken out and their children reinserted with the exact SAH search
    /// ([`DynamicTree::optimize`]). A share of the leaves in `[0, 1]`; 0 turns it off. Default
    /// [`DEFAULT_OPTIMIZE_SHARE`] (written to files only when not the default).
    ///
    /// The pass places subtrees by the SAH; with [`InsertionCost::Volume`] it works against the
    /// volume descent that inserts every moved leaf, and the tree grows costlier (measured on
    /// the standard workload: SAH cost 1,181 against 894 without the pass after 300 steps):
    /// set 0 there.
    #[cfg_attr(
        feature = "serde",
        serde(skip_serializing_if = "is_default_optimize_share")
    )]
    pub optimize_share: f32,
}

/// True for [`DEFAULT_OPTIMIZE_SHARE`] (serde's `skip_serializing_if`).
#[cfg(feature = "serde")]
fn is_default_optimize_share(share: &f32) -> bool {
    *share == DEFAULT_OPTIMIZE_SHARE
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
            rebuild: RebuildMethod::default(),
            optimize_share: DEFAULT_OPTIMIZE_SHARE,
        }
    }
}

/// The one table of a strategy's names: for each variant its name on the command line and in
/// files (`surface-area`), its label in a window (`Surface area (Box2D v3)`) and its short form
/// in tables (`SA`); `ALL` and `NAMES` list them in order.
macro_rules! strategy_names {
    ($ty:ident, $what:literal, [$($variant:ident => ($name:literal, $label:literal, $short:literal)),+ $(,)?]) => {
        impl $ty {
            #[doc = concat!("Every ", $what, ", in order.")]
            pub const ALL: [Self; [$(Self::$variant),+].len()] = [$(Self::$variant),+];
            #[doc = concat!("The names of every ", $what, " (as [`", stringify!($ty), "::name`]), in order.")]
            pub const NAMES: [&'static str; [$($name),+].len()] = [$($name),+];

            /// The name on the command line and in files (`kebab-case`).
            #[must_use]
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)+
                }
            }

            /// The label a window shows, with whose method it is.
            #[must_use]
            pub fn label(self) -> &'static str {
                match self {
                    $(Self::$variant => $label,)+
                }
            }

            /// The short form in tables and configuration labels.
            #[must_use]
            pub fn short(self) -> &'static str {
                match self {
                    $(Self::$variant => $short,)+
                }
            }

            /// The value a name gives ([`Self::name`]; any case); `None` for another word.
            #[must_use]
            pub fn from_name(name: &str) -> Option<Self> {
                let name = name.trim();
                Self::ALL
                    .into_iter()
                    .find(|v| v.name().eq_ignore_ascii_case(name))
            }
        }
    };
}

strategy_names!(InsertionCost, "insertion cost", [
    Volume => ("volume", "Volume (Choi)", "vol"),
    Perimeter => ("perimeter", "Perimeter (greedy)", "perim"),
    SurfaceArea => ("surface-area", "Surface area (Box2D v3)", "SA"),
    ExactSurfaceArea => ("exact-surface-area", "Exact surface area (Bittner)", "SA*"),
]);

strategy_names!(Balancing, "balancing strategy", [
    None => ("none", "None", "none"),
    Avl => ("avl", "AVL rotations", "avl"),
    Rotations => ("rotations", "SAH rotations (Box2D v3)", "rot"),
]);

strategy_names!(PairMethod, "pair method", [
    SelfTraversal => ("self-traversal", "Self traversal", "self"),
    MovedQueries => ("moved-queries", "Moved queries + pair set (Box2D)", "queries"),
    MovedTraversal => ("moved-traversal", "Moved traversal + pair set", "moved"),
]);

strategy_names!(UpdateMode, "update mode", [
    Reinsert => ("reinsert", "Reinsert from the root (Box2D)", "reinsert"),
    LocalReinsert => ("local-reinsert", "Reinsert nearby (Bullet)", "local"),
    EnlargeAndRebuild => ("enlarge-and-rebuild", "Enlarge + partial rebuild (Box2D v3)", "enlarge"),
]);

strategy_names!(RebuildMethod, "rebuild method", [
    BinnedSah => ("binned-sah", "Binned SAH (top-down)", "binned"),
    Agglomerative => ("agglomerative", "Agglomerative (PLOC, bottom-up)", "ploc"),
    Greedy => ("greedy", "Greedy (exact, bottom-up)", "greedy"),
]);

impl UpdateMode {
    /// True for the default mode.
    #[must_use]
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl TreeConfig {
    /// Ok when the margin and the look-ahead are finite and `>= 0` and the optimization share
    /// is in `[0, 1]`; otherwise [`TreeError::InvalidSetting`] naming the first bad one
    /// (`margin`, `velocity_lookahead` or `optimize_share`).
    pub fn check(&self) -> Result<(), TreeError> {
        check_setting("margin", self.margin)?;
        check_setting("velocity_lookahead", self.velocity_lookahead)?;
        check_share(self.optimize_share)
    }

    /// Every combination of insertion cost, balancing, pair method and update mode (108), with
    /// this configuration's margin and look-ahead: for tests and benchmarks that sweep them.
    #[must_use]
    pub fn every_combination(&self) -> Vec<TreeConfig> {
        let mut out = Vec::with_capacity(108);
        for insertion in InsertionCost::ALL {
            for balancing in Balancing::ALL {
                for pairs in PairMethod::ALL {
                    for update in UpdateMode::ALL {
                        out.push(TreeConfig {
                            insertion,
                            balancing,
                            pairs,
                            update,
                            ..*self
                        });
                    }
                }
            }
        }
        out
    }
}

/// A generational handle to a proxy (one user object in the tree). A handle whose proxy was
/// destroyed is stale: every call that takes it returns [`TreeError::StaleProxy`], for the
/// life of the tree: a stale handle is an error, never a wrong node.
///
/// Each destroy gives the proxy's slot a new generation. Generations are 30 bits and never
/// wrap: after `2^30 - 1` proxies in one slot the slot is retired (it holds no proxy and is
/// never reused), so no old handle can match a new proxy. A retired slot keeps its 52 bytes
/// (2D, `u32` user data): one slot lost per `2^30 - 1` destroys of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct ProxyId {
    /// Slot index.
    pub index: u32,
    /// Generation of the slot when the handle was made (30 bits, below `2^30 - 1`; a slot
    /// whose generations are used up is retired, never reused).
    pub generation: u32,
}

/// Handles for [`DynamicTree::move_batch_with`], checked once and trusted while the tree's
/// set of live proxies stays as it was: a broad phase that moves the same bodies every step
/// keeps one and the tree checks its handles (live, each once) only on the first step and
/// after a proxy was created or destroyed, instead of on every move.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MoveBatch {
    ids: Vec<ProxyId>,
    /// The [`DynamicTree`] live-set stamp the handles were last found good against; 0: never
    /// checked.
    stamp: u64,
}

impl MoveBatch {
    /// A batch of these handles (not checked yet: the first move checks them).
    #[must_use]
    pub fn new(ids: Vec<ProxyId>) -> Self {
        Self { ids, stamp: 0 }
    }

    /// The handles, in the order of the moves.
    #[must_use]
    pub fn ids(&self) -> &[ProxyId] {
        &self.ids
    }

    /// Number of handles.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Bytes held (capacity).
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.ids.capacity() * std::mem::size_of::<ProxyId>()
    }
}

/// A stamp no tree has had: each tree takes one when its set of live proxies has changed
/// since it last took one and a [`MoveBatch`] asks, so two trees share a stamp only when one
/// is a copy of the other and neither has created or destroyed a proxy since.
pub(crate) fn fresh_live_stamp() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Index of a node in the tree's pool; valid until the next mutation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// Errors at the tree's API boundary.
#[derive(Clone, Debug, PartialEq)]
pub enum TreeError {
    /// The handle's proxy was destroyed, or the handle never came from this tree.
    StaleProxy(ProxyId),
    /// A box or vector had a NaN or infinite component.
    NonFinite,
    /// A box had `min > max` on some axis.
    Inverted,
    /// A margin or look-ahead was negative or not finite.
    InvalidSetting {
        /// Which setting.
        name: &'static str,
        /// The value refused.
        value: f32,
    },
    /// The pool cannot hold more nodes (indices are `u32`).
    Full(usize),
    /// [`DynamicTree::with_capacity`] was asked for room past the most proxies a tree can
    /// hold (its nodes are indexed by `u32`).
    CapacityTooLarge {
        /// The capacity asked for.
        requested: usize,
        /// The most proxies a tree can hold ([`DynamicTree::MAX_PROXIES`]).
        max: usize,
    },
    /// The allocator could not give [`DynamicTree::with_capacity`] or a batch
    /// ([`DynamicTree::create_proxies_with`]) the room asked for.
    AllocationFailed {
        /// The capacity asked for.
        requested: usize,
    },
    /// [`DynamicTree::update_pairs`] would have left more candidate pairs than
    /// [`DynamicTree::pair_limit`]: it stopped early and left the pair set empty.
    PairLimit {
        /// The limit in force.
        limit: usize,
    },
    /// A batch of moves ([`DynamicTree::move_proxies_with`]) named this proxy twice.
    DuplicateInBatch(ProxyId),
    /// One item of a batch ([`DynamicTree::create_proxies`],
    /// [`DynamicTree::move_proxies_with`]) was refused; nothing was added or moved.
    InBatch {
        /// Position of the first refused item.
        index: usize,
        /// Why it was refused.
        error: Box<TreeError>,
    },
}

/// A broken invariant found by [`DynamicTree::validate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    /// The node where it was found.
    pub node: u32,
    /// What is wrong.
    pub what: String,
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::StaleProxy(id) => write!(f, "stale proxy handle {id:?}"),
            Self::NonFinite => f.write_str("a box or velocity has a non-finite component"),
            Self::Inverted => f.write_str("a box has min > max on some axis"),
            Self::InvalidSetting { name, value } => {
                write!(f, "{name} must be finite and >= 0, got {value}")
            }
            Self::Full(proxies) => write!(f, "the tree is full ({proxies} proxies)"),
            Self::CapacityTooLarge { requested, max } => write!(
                f,
                "room for {requested} proxies asked; a tree holds at most {max}"
            ),
            Self::AllocationFailed { requested } => {
                write!(f, "could not allocate room for {requested} proxies")
            }
            Self::PairLimit { limit } => write!(f, "more than {limit} candidate pairs"),
            Self::DuplicateInBatch(id) => {
                write!(f, "proxy handle {id:?} given twice in one batch of moves")
            }
            Self::InBatch { index, error } => write!(f, "item {index} of the batch: {error}"),
        }
    }
}

impl std::error::Error for TreeError {}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tree invariant broken at node {}: {}",
            self.node, self.what
        )
    }
}

impl std::error::Error for ValidationError {}

/// How much work a query did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// Nodes whose box was tested.
    pub node_visits: u32,
    /// Leaves whose box was tested.
    pub leaf_visits: u32,
}

/// Machine-independent counts of the work a tree did since it was made (or since
/// [`DynamicTree::take_work`]): node and leaf visits of its updates and of its pair finding.
/// Same operations, same counts, on any machine and whatever the thread count (the parallel
/// pair search counts the same tests as the serial one).
///
/// What counts as a visit (each time a node is reached, so a node reached twice counts twice):
///
/// - updates ([`DynamicTree::create_proxy`], [`DynamicTree::move_proxy`],
///   [`DynamicTree::destroy_proxy`], rebuilds): every `move_proxy` tests its leaf's fat box
///   (one leaf visit); a proxy whose tight box left it adds the ancestors tested for one that
///   holds the new fat box (`LocalReinsert`), the nodes the sibling search looked at (leaves
///   among them counted as leaf visits), the nodes refit and balanced on the walks up after
///   the removal and the insertion, or the ancestors enlarged (`EnlargeAndRebuild`); a
///   rebuild counts each subtree it places and each branch it makes. Changes of settings,
///   which refit the whole tree, are not counted.
/// - pair finding ([`DynamicTree::update_pairs`]): the box tests of the search
///   ([`PairUpdate::stats`]): node visits are tests of two nodes (or of a query box against a
///   node, `MovedQueries`), leaf visits the tests of two leaves (or of a leaf). A search that
///   stops at the pair limit counts the tests it made (the parallel search: those of the
///   walks that finished).
///
/// `node_visits` include the leaf visits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct WorkCounts {
    /// Nodes (leaves included) visited by updates.
    pub update_node_visits: u64,
    /// Leaves visited by updates.
    pub update_leaf_visits: u64,
    /// Node tests of pair finding (leaf tests included).
    pub pair_node_visits: u64,
    /// Tests of two leaves (or of a query box against a leaf) in pair finding.
    pub pair_leaf_visits: u64,
}

impl WorkCounts {
    /// Node visits of updates and of pair finding together.
    #[must_use]
    pub fn node_visits(&self) -> u64 {
        self.update_node_visits + self.pair_node_visits
    }

    /// The counts since `earlier` (an earlier reading of the same tree), field by field
    /// (saturating at 0, should `earlier` not be earlier).
    #[must_use]
    pub fn since(&self, earlier: &WorkCounts) -> WorkCounts {
        WorkCounts {
            update_node_visits: self
                .update_node_visits
                .saturating_sub(earlier.update_node_visits),
            update_leaf_visits: self
                .update_leaf_visits
                .saturating_sub(earlier.update_leaf_visits),
            pair_node_visits: self
                .pair_node_visits
                .saturating_sub(earlier.pair_node_visits),
            pair_leaf_visits: self
                .pair_leaf_visits
                .saturating_sub(earlier.pair_leaf_visits),
        }
    }
}

/// Shape and cost figures of a tree.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
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
    /// The node pool.
    nodes: Vec<Node<V>>,
    /// The root node, `NULL` when empty.
    root: u32,
    /// Head of the free-node list.
    free_node: u32,
    /// Length of the free-node list.
    free_nodes: u32,
    /// The proxy table, indexed by `ProxyId::index`.
    proxies: Vec<ProxySlot<V, T>>,
    /// Head of the free-slot list.
    free_proxy: u32,
    /// Live proxies.
    live: u32,
    /// Retired slots (generations used up; neither live nor on the free list).
    retired: u32,
    /// The current pairs as proxy slot indices, each `(a, b)` with `a < b`, in no particular
    /// order (8 bytes a pair; the generations are the slots' own, since a pair touching a
    /// destroyed or re-created slot is dropped at the next pair update).
    pairs: Vec<(u32, u32)>,
    /// `pairs` as handles, sorted, made on the first [`DynamicTree::pairs`] after a change
    /// (and before a destroy changes a generation the pairs still name).
    sorted_pairs: OnceLock<Vec<(ProxyId, ProxyId)>>,
    /// Slots of proxies whose fat box changed (or that were created or destroyed) since the
    /// last pair update; each once (its `MOVED` bit says it is here).
    moved: Vec<u32>,
    /// Scratch bit set of the slots in `moved` (one bit a slot: it fits in cache where the
    /// proxy table does not), for dropping their pairs; also of the handles a batch of moves
    /// named, for refusing one named twice ([`DynamicTree::move_proxies_with`]).
    moved_bits: Vec<u64>,
    /// Scratch list of a batch of moves ([`DynamicTree::move_proxies_with`],
    /// [`DynamicTree::move_batch_with`]): the position, slot, leaf and new fat box of each
    /// move whose tight box left its fat box.
    batch_leaving: Vec<update::BatchMove<V>>,
    /// A fat box changed or a proxy came or went since the last pair update (Choi's
    /// `tree_updated`).
    pairs_stale: bool,
    /// The pair set must be recomputed from scratch (settings changed, or the last update
    /// stopped at the pair limit).
    pairs_full: bool,
    /// The most pairs an update may leave ([`DynamicTree::set_pair_limit`]).
    pair_limit: usize,
    /// Some branch is enlarged (a partial rebuild is pending).
    any_enlarged: bool,
    /// Scratch list of subtrees for rebuilds.
    build_items: Vec<u32>,
    /// Scratch priority queue of the exact SAH insertion (kept to insert without allocating).
    sibling_queue: BinaryHeap<insert::Candidate>,
    /// Scratch lists of the agglomerative build (kept between rebuilds).
    ploc: rebuild::PlocScratch<V>,
    /// Where in the node pool the next optimization pass starts looking.
    optimize_cursor: u32,
    /// Nodes taken from the free list since the pool was last put in walk order
    /// ([`DynamicTree::compact_layout`]).
    allocs_since_layout: usize,
    /// Scratch list of the branches an optimization pass picked.
    optimize_picks: Vec<(f32, u32)>,
    /// True when events are recorded.
    recording: bool,
    /// Recorded events, oldest first.
    events: Vec<TreeEvent>,
    /// Work counted since the tree was made or the counts were taken (but the leaf tests of
    /// `move_proxy`, in `moves_tested`).
    work: WorkCounts,
    /// `move_proxy` calls on a live proxy since the counts were taken: one leaf visit each
    /// (kept apart so the common call adds to one counter).
    moves_tested: u64,
    /// The stamp of the set of live proxies ([`fresh_live_stamp`]); 0 once a proxy was
    /// created or destroyed since the last stamp was taken. A [`MoveBatch`] checked against
    /// this stamp holds live handles, each once.
    live_stamp: u64,
}

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// An empty tree (margin and look-ahead are assumed valid; see [`DynamicTree::try_new`]).
    /// A negative or non-finite margin or look-ahead, or an optimization share outside
    /// `[0, 1]`, is replaced by 0.
    pub fn new(config: TreeConfig) -> Self {
        let mut config = config;
        if !(config.margin.is_finite() && config.margin >= 0.0) {
            config.margin = 0.0;
        }
        if !(config.velocity_lookahead.is_finite() && config.velocity_lookahead >= 0.0) {
            config.velocity_lookahead = 0.0;
        }
        if check_share(config.optimize_share).is_err() {
            config.optimize_share = 0.0;
        }
        Self {
            config,
            nodes: Vec::new(),
            root: NULL,
            free_node: NULL,
            free_nodes: 0,
            proxies: Vec::new(),
            free_proxy: NULL,
            live: 0,
            retired: 0,
            pairs: Vec::new(),
            sorted_pairs: OnceLock::new(),
            moved: Vec::new(),
            moved_bits: Vec::new(),
            batch_leaving: Vec::new(),
            pairs_stale: false,
            pairs_full: false,
            pair_limit: usize::MAX,
            any_enlarged: false,
            build_items: Vec::new(),
            sibling_queue: BinaryHeap::new(),
            ploc: rebuild::PlocScratch::default(),
            optimize_cursor: 0,
            allocs_since_layout: 0,
            optimize_picks: Vec::new(),
            recording: false,
            events: Vec::new(),
            work: WorkCounts::default(),
            moves_tested: 0,
            live_stamp: 0,
        }
    }

    /// An empty tree; an error when the margin or look-ahead is negative or not finite.
    pub fn try_new(config: TreeConfig) -> Result<Self, TreeError> {
        config.check()?;
        Ok(Self::new(config))
    }

    /// The most live proxies a tree can hold: a tree of `n` proxies needs `2n - 1` nodes, and
    /// nodes are indexed by `u32` (with one value kept as the null link).
    pub const MAX_PROXIES: usize = MAX_PROXIES;

    /// An empty tree with room for `proxies` proxies (and their `2 * proxies - 1` nodes) before
    /// its storage grows. An error, never a panic or an abort, when `proxies` is more than
    /// [`DynamicTree::MAX_PROXIES`] ([`TreeError::CapacityTooLarge`]) or the allocator cannot
    /// give the room ([`TreeError::AllocationFailed`]); and when the margin or look-ahead is
    /// negative or not finite, as [`DynamicTree::try_new`].
    pub fn with_capacity(config: TreeConfig, proxies: usize) -> Result<Self, TreeError> {
        let mut tree = Self::try_new(config)?;
        if proxies > MAX_PROXIES {
            return Err(TreeError::CapacityTooLarge {
                requested: proxies,
                max: MAX_PROXIES,
            });
        }
        let failed = |_| TreeError::AllocationFailed { requested: proxies };
        // At most 2^32 - 5 nodes here: no overflow.
        tree.nodes
            .try_reserve_exact((2 * proxies).saturating_sub(1))
            .map_err(failed)?;
        tree.proxies.try_reserve_exact(proxies).map_err(failed)?;
        Ok(tree)
    }

    /// The current settings.
    pub fn config(&self) -> &TreeConfig {
        &self.config
    }

    /// Number of live proxies.
    pub fn len(&self) -> usize {
        self.live as usize
    }

    /// True when the tree holds no proxy.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// True when `id` names a live proxy of this tree.
    pub fn contains(&self, id: ProxyId) -> bool {
        self.slot(id).is_ok()
    }

    /// The user data of a proxy.
    pub fn user_data(&self, id: ProxyId) -> Result<T, TreeError> {
        Ok(self.slot(id)?.user)
    }

    /// The fat box of a proxy (its leaf's box).
    pub fn fat_aabb(&self, id: ProxyId) -> Result<Aabb<V>, TreeError> {
        Ok(self.slot(id)?.fat)
    }

    /// The tight box last given for a proxy.
    pub fn tight_aabb(&self, id: ProxyId) -> Result<Aabb<V>, TreeError> {
        Ok(self.slot(id)?.tight)
    }

    /// The velocity last given for a proxy.
    pub fn velocity(&self, id: ProxyId) -> Result<V, TreeError> {
        Ok(self.slot(id)?.velocity)
    }

    /// The leaf node of a proxy.
    pub fn leaf_of(&self, id: ProxyId) -> Result<NodeId, TreeError> {
        Ok(NodeId(self.slot(id)?.leaf))
    }

    /// Every live proxy, sorted by id.
    pub fn proxies(&self) -> Vec<ProxyId> {
        self.proxies
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_alive())
            .map(|(i, s)| ProxyId {
                index: i as u32,
                generation: s.generation(),
            })
            .collect()
    }

    /// The root node, `None` when the tree is empty.
    pub fn root(&self) -> Option<NodeId> {
        (self.root != NULL).then_some(NodeId(self.root))
    }

    /// A read-only view of a node in use; `None` for an index out of range or a free node.
    pub fn node(&self, id: NodeId) -> Option<NodeView<V>> {
        let node = self.nodes.get(id.0 as usize)?;
        if node.is_free() {
            return None;
        }
        Some(self.view(node))
    }

    /// Every node in use with its depth (root depth 0), depth-first, parents before children.
    pub fn walk(&self, mut visit: impl FnMut(NodeId, &NodeView<V>, u32)) {
        if self.root == NULL {
            return;
        }
        let mut stack = vec![(self.root, 0u32)];
        while let Some((index, depth)) = stack.pop() {
            let node = &self.nodes[index as usize];
            visit(NodeId(index), &self.view(node), depth);
            if !node.is_leaf() {
                stack.push((node.child2, depth + 1));
                stack.push((node.child1, depth + 1));
            }
        }
    }

    /// The view of a node in use.
    fn view(&self, node: &Node<V>) -> NodeView<V> {
        let link = |i: u32| (i != NULL).then_some(NodeId(i));
        if node.is_leaf() {
            NodeView {
                aabb: node.aabb,
                parent: link(node.parent),
                children: None,
                height: node.height(),
                proxy: Some(self.proxy_id(node.child1)),
            }
        } else {
            NodeView {
                aabb: node.aabb,
                parent: link(node.parent),
                children: Some([NodeId(node.child1), NodeId(node.child2)]),
                height: node.height(),
                proxy: None,
            }
        }
    }

    /// The live slot of a handle, or `StaleProxy`.
    #[inline]
    pub(crate) fn slot(&self, id: ProxyId) -> Result<&ProxySlot<V, T>, TreeError> {
        match self.proxies.get(id.index as usize) {
            Some(s) if s.is_alive() && s.generation() == id.generation => Ok(s),
            _ => Err(TreeError::StaleProxy(id)),
        }
    }

    /// The handle of the proxy in slot `index`.
    #[inline]
    pub(crate) fn proxy_id(&self, index: u32) -> ProxyId {
        ProxyId {
            index,
            generation: self.proxies[index as usize].generation(),
        }
    }
}

/// Ok when an optimization share is in `[0, 1]`.
fn check_share(value: f32) -> Result<(), TreeError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(TreeError::InvalidSetting {
            name: "optimize_share",
            value,
        })
    }
}

/// Ok when a margin or look-ahead is finite and `>= 0`.
fn check_setting(name: &'static str, value: f32) -> Result<(), TreeError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(TreeError::InvalidSetting { name, value })
    }
}

#[cfg(test)]
mod names_tests {
    use super::*;

    #[test]
    fn every_strategy_name_is_unique_and_reads_back() {
        fn check<T: Copy + PartialEq + std::fmt::Debug>(
            all: &[T],
            names: &[&str],
            name: fn(T) -> &'static str,
            from: fn(&str) -> Option<T>,
        ) {
            assert_eq!(all.len(), names.len());
            for (&v, &n) in all.iter().zip(names) {
                assert_eq!(name(v), n);
                assert_eq!(from(n), Some(v));
                assert_eq!(from(&n.to_ascii_uppercase()), Some(v));
            }
            let mut sorted = names.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), names.len(), "{names:?}");
            assert_eq!(from("none of these"), None);
        }
        check(
            &InsertionCost::ALL,
            &InsertionCost::NAMES,
            InsertionCost::name,
            InsertionCost::from_name,
        );
        check(
            &Balancing::ALL,
            &Balancing::NAMES,
            Balancing::name,
            Balancing::from_name,
        );
        check(
            &PairMethod::ALL,
            &PairMethod::NAMES,
            PairMethod::name,
            PairMethod::from_name,
        );
        check(
            &UpdateMode::ALL,
            &UpdateMode::NAMES,
            UpdateMode::name,
            UpdateMode::from_name,
        );
        check(
            &RebuildMethod::ALL,
            &RebuildMethod::NAMES,
            RebuildMethod::name,
            RebuildMethod::from_name,
        );
        assert_eq!(
            InsertionCost::SurfaceArea.label(),
            "Surface area (Box2D v3)"
        );
        assert_eq!(InsertionCost::ExactSurfaceArea.short(), "SA*");
    }
}
