//! What drives a broad phase each step: the [`Broadphase`] trait and its three implementations,
//! the dynamic tree, brute force and sweep-and-prune, which must give identical pairs.
//!
//! API CONTRACT (skeleton): `scene` and `app` build against these items; implementations may
//! add items and files (`tree.rs`, `brute.rs`, `sap.rs`) but not rename or remove these.

use crate::tree::{Aabb, TreeConfig, TreeEvent, TreeStats};
use glam::Vec3;
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
    /// moves the others.
    fn update(&mut self, bodies: &[Body]) -> UpdateOutcome;
    /// The candidate pairs as of the last `update`.
    fn find_pairs(&mut self) -> PairOutcome;
    /// The fat box of a body, if present.
    fn fat_aabb(&self, id: u32) -> Option<Aabb<Vec3>>;
    /// Changes settings (margin, look-ahead, insertion, balancing, pairs); fat boxes are
    /// recomputed at once. An error names the bad setting.
    fn set_config(&mut self, config: TreeConfig) -> Result<(), crate::tree::TreeError>;
    /// Tree stats, for the tree; `None` for the others.
    fn tree_stats(&self) -> Option<TreeStats>;
    /// Events since the last call (the tree's; empty for the others).
    fn take_events(&mut self) -> Vec<TreeEvent>;
    /// The tree for drawing, when this is the tree broad phase.
    fn tree_view(&self) -> Option<TreeView<'_>>;
    /// Full rebuild (the tree only; others do nothing).
    fn rebuild(&mut self);
}

/// The tree behind a tree broad phase, in the dimension of the scene, for drawing.
pub enum TreeView<'a> {
    /// A 2D scene's tree; user data is the sphere id.
    D2(&'a crate::tree::DynamicTree<glam::Vec2, u32>),
    /// A 3D scene's tree; user data is the sphere id.
    D3(&'a crate::tree::DynamicTree<glam::Vec3, u32>),
}

/// Makes a broad phase of the given kind for a scene of `dimensions` (2 or 3).
pub fn make(
    kind: BroadphaseKind,
    dimensions: u8,
    config: TreeConfig,
) -> Result<Box<dyn Broadphase>, crate::tree::TreeError> {
    let _ = (kind, dimensions, config);
    #[allow(clippy::todo)]
    {
        todo!()
    }
}
