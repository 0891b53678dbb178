//! What drives a broad phase each step: the [`Broadphase`] trait and its three implementations,
//! the dynamic tree, brute force and sweep-and-prune, which must give identical pairs, and
//! refuse the same bodies with the same [`BroadphaseError`].

mod brute;
mod sap;
mod store;
mod tree;

pub use brute::BruteForce;
pub use sap::SweepAndPrune;
pub use tree::TreeBroadphase;

use crate::tree::{
    Aabb, DynamicTree, TreeConfig, TreeError, TreeEvent, TreeStats, Vector, WorkCounts,
};
use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};

/// One body as the broad phase sees it: 2D scenes use z = 0 and ignore it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    /// The sphere's id (unique within a scene).
    pub id: u32,
    /// The tight box.
    pub tight: Aabb<Vec3>,
    /// Velocity, world units per second.
    pub velocity: Vec3,
}

/// Which broad phase to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BroadphaseKind {
    /// The dynamic AABB tree.
    #[default]
    Tree,
    /// Every pair tested.
    Brute,
    /// Sweep-and-prune along x.
    Sap,
}

/// What one `update` did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UpdateOutcome {
    /// Ids whose fat box was recomputed (tight box left it, or the body is new), sorted.
    pub reinserted: Vec<u32>,
    /// Ids added this update, sorted.
    pub added: Vec<u32>,
    /// Ids removed this update, sorted.
    pub removed: Vec<u32>,
}

/// The candidate-pair limit a broad phase starts with: past it, finding pairs stops with
/// [`BroadphaseError::PairLimit`] instead of filling memory (at about 8 bytes a pair in each
/// of the few lists a step keeps, 5 million pairs are a few hundred MB; the standard workload
/// at 1,000,000 circles has about 630,000).
pub const DEFAULT_PAIR_LIMIT: usize = 5_000_000;

/// Why a broad phase could not take a step.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BroadphaseError {
    /// A body's boxes cannot be used: a number is not finite, a box is inverted, or its fat
    /// box overflows f32 under the current margin and look-ahead. Nothing was changed.
    #[error("sphere {id}: {reason}")]
    Body {
        /// The body's id.
        id: u32,
        /// What is wrong, with the numbers.
        reason: String,
    },
    /// More candidate pairs than the limit: the search stopped early (see
    /// [`Broadphase::set_pair_limit`]). The bodies are kept; the next search starts afresh.
    #[error(
        "more than {limit} candidate pairs (fat boxes that overlap): the fat boxes are too big \
         for the spheres' spacing. Lower the margin or look-ahead, use fewer spheres or a \
         larger world, or raise the pair limit"
    )]
    PairLimit {
        /// The limit in force.
        limit: usize,
    },
    /// The tree refused an operation (its message says which).
    #[error("the tree: {0}")]
    Tree(#[from] TreeError),
}

/// Candidate pairs and whether they were recomputed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairOutcome {
    /// `(a, b)` sphere ids with `a < b` whose fat boxes overlap, sorted.
    pub pairs: Vec<(u32, u32)>,
    /// False when nothing changed since the last call and the previous set was reused
    /// (Choi's `tree_updated` flag).
    pub recomputed: bool,
}

/// A broad phase: keeps a fat box per body and reports the pairs whose fat boxes overlap.
///
/// Every implementation uses the same fat-box rule as the tree (tight box grown by the margin
/// and stretched by `velocity * velocity_lookahead`, recomputed only when the tight box
/// leaves it), so all three report the same pairs.
pub trait Broadphase {
    /// Which one this is.
    fn kind(&self) -> BroadphaseKind;
    /// Brings the broad phase to `bodies` (sorted by id): adds new ids, removes missing ones,
    /// moves the others. A body whose boxes cannot be used (see [`check_body`]) is an error,
    /// and then nothing is changed.
    fn update(&mut self, bodies: &[Body]) -> Result<UpdateOutcome, BroadphaseError>;
    /// The candidate pairs as of the last `update`; [`BroadphaseError::PairLimit`] when there
    /// are more than the limit (the search stops as soon as it passes it).
    fn find_pairs(&mut self) -> Result<PairOutcome, BroadphaseError>;
    /// The most candidate pairs `find_pairs` may report ([`DEFAULT_PAIR_LIMIT`] at first).
    fn set_pair_limit(&mut self, limit: usize);
    /// The fat box of a body, if present.
    fn fat_aabb(&self, id: u32) -> Option<Aabb<Vec3>>;
    /// Changes settings (margin, look-ahead, insertion, balancing, pairs); fat boxes are
    /// recomputed at once. An error names the bad setting.
    fn set_config(&mut self, config: TreeConfig) -> Result<(), crate::tree::TreeError>;
    /// Tree stats, for the tree; `None` for the others.
    fn tree_stats(&self) -> Option<TreeStats> {
        None
    }
    /// Events since the last call (the tree's; empty for the others).
    fn take_events(&mut self) -> Vec<TreeEvent> {
        Vec::new()
    }
    /// The tree for drawing, when this is the tree broad phase.
    fn tree_view(&self) -> Option<TreeView<'_>> {
        None
    }
    /// Full rebuild (the tree only; the others have nothing to rebuild).
    fn rebuild(&mut self) {}
    /// The tree's machine-independent work counts since this broad phase was made (see
    /// [`WorkCounts`]); `None` for brute force and sweep-and-prune.
    fn work_counts(&self) -> Option<WorkCounts> {
        None
    }
}

/// Ok when a body's tight box and velocity are finite, the box is not inverted, and its fat
/// box under `config` is finite: the rule all three broad phases apply before they change
/// anything, so they accept and refuse the same bodies.
pub fn check_body(body: &Body, config: &TreeConfig) -> Result<(), BroadphaseError> {
    let refuse = |reason: String| BroadphaseError::Body {
        id: body.id,
        reason,
    };
    let tight = &body.tight;
    if !(tight.min.is_finite() && tight.max.is_finite()) {
        return Err(refuse(format!(
            "its box has a number that is not finite (min {}, max {})",
            tight.min, tight.max
        )));
    }
    if !body.velocity.is_finite() {
        return Err(refuse(format!(
            "its velocity is not finite ({})",
            body.velocity
        )));
    }
    if !tight.min.cmple(tight.max).all() {
        return Err(refuse(format!(
            "its box has min > max (min {}, max {})",
            tight.min, tight.max
        )));
    }
    let fat = fat_box(
        tight,
        body.velocity,
        config.margin,
        config.velocity_lookahead,
    );
    if !(fat.min.is_finite() && fat.max.is_finite()) {
        return Err(refuse(format!(
            "its fat box overflows f32 (box min {}, max {}, velocity {}, margin {}, look-ahead \
             {} s)",
            tight.min, tight.max, body.velocity, config.margin, config.velocity_lookahead
        )));
    }
    Ok(())
}

/// [`check_body`] for every body, before anything changes.
pub(crate) fn check_bodies(bodies: &[Body], config: &TreeConfig) -> Result<(), BroadphaseError> {
    bodies.iter().try_for_each(|b| check_body(b, config))
}

/// The tree behind a tree broad phase, in the dimension of the scene, for drawing.
pub enum TreeView<'a> {
    /// A 2D scene's tree; user data is the sphere id.
    D2(&'a crate::tree::DynamicTree<glam::Vec2, u32>),
    /// A 3D scene's tree; user data is the sphere id.
    D3(&'a crate::tree::DynamicTree<glam::Vec3, u32>),
}

/// Makes a broad phase of the given kind for a scene of `dimensions` (2 or 3). An error when
/// the margin or look-ahead is negative or not finite, or `dimensions` is neither 2 nor 3.
pub fn make(
    kind: BroadphaseKind,
    dimensions: u8,
    config: TreeConfig,
) -> Result<Box<dyn Broadphase>, crate::tree::TreeError> {
    config.check()?;
    match (kind, dimensions) {
        (BroadphaseKind::Tree, 2) => Ok(Box::new(TreeBroadphase::<Vec2>::new(config)?)),
        (BroadphaseKind::Tree, 3) => Ok(Box::new(TreeBroadphase::<Vec3>::new(config)?)),
        (BroadphaseKind::Brute, 2) => Ok(Box::new(BruteForce::<Vec2>::new(config))),
        (BroadphaseKind::Brute, 3) => Ok(Box::new(BruteForce::<Vec3>::new(config))),
        (BroadphaseKind::Sap, 2) => Ok(Box::new(SweepAndPrune::<Vec2>::new(config))),
        (BroadphaseKind::Sap, 3) => Ok(Box::new(SweepAndPrune::<Vec3>::new(config))),
        (_, other) => Err(TreeError::InvalidSetting {
            name: "dimensions (2 or 3)",
            value: f32::from(other),
        }),
    }
}

impl BroadphaseKind {
    /// Every kind, in the order the UI and the CLI list them.
    pub const ALL: [BroadphaseKind; 3] = [
        BroadphaseKind::Tree,
        BroadphaseKind::Brute,
        BroadphaseKind::Sap,
    ];

    /// The name used on the command line and in reports: `tree`, `brute` or `sap`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            BroadphaseKind::Tree => "tree",
            BroadphaseKind::Brute => "brute",
            BroadphaseKind::Sap => "sap",
        }
    }
}

impl std::fmt::Display for BroadphaseKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The fat-box rule every broad phase shares with the tree (the tree's own function, so the
/// boxes agree to the bit).
pub use crate::tree::fat_box;

/// A 2D or 3D vector a broad phase can work in: converts from and to the scene's `Vec3`
/// (2D drops z and gives z = 0 back) and wraps its tree in a [`TreeView`].
pub trait SceneVector: Vector {
    /// The first `DIM` components of `v`.
    fn from_vec3(v: Vec3) -> Self;
    /// As a `Vec3`, z = 0 in 2D.
    fn to_vec3(self) -> Vec3;
    /// The tree, for drawing.
    fn tree_view(tree: &DynamicTree<Self, u32>) -> TreeView<'_>;
}

impl SceneVector for Vec2 {
    fn from_vec3(v: Vec3) -> Self {
        v.truncate()
    }
    fn to_vec3(self) -> Vec3 {
        self.extend(0.0)
    }
    fn tree_view(tree: &DynamicTree<Self, u32>) -> TreeView<'_> {
        TreeView::D2(tree)
    }
}

impl SceneVector for Vec3 {
    fn from_vec3(v: Vec3) -> Self {
        v
    }
    fn to_vec3(self) -> Vec3 {
        self
    }
    fn tree_view(tree: &DynamicTree<Self, u32>) -> TreeView<'_> {
        TreeView::D3(tree)
    }
}

/// A box in the scene's `Vec3` from a box in `V`.
pub(crate) fn box_to_vec3<V: SceneVector>(b: &Aabb<V>) -> Aabb<Vec3> {
    Aabb::new(b.min.to_vec3(), b.max.to_vec3())
}

/// A box in `V` from a box in the scene's `Vec3`.
pub(crate) fn box_from_vec3<V: SceneVector>(b: &Aabb<Vec3>) -> Aabb<V> {
    Aabb::new(V::from_vec3(b.min), V::from_vec3(b.max))
}

/// `bodies` when they are strictly sorted by id, else a sorted copy with the first of each id.
pub(crate) fn sorted_bodies(bodies: &[Body]) -> std::borrow::Cow<'_, [Body]> {
    if bodies.windows(2).all(|w| w[0].id < w[1].id) {
        std::borrow::Cow::Borrowed(bodies)
    } else {
        let mut owned = bodies.to_vec();
        owned.sort_by_key(|b| b.id);
        owned.dedup_by_key(|b| b.id);
        std::borrow::Cow::Owned(owned)
    }
}
