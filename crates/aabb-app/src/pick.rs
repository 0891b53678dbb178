//! What the pointer can rest on or the user can select, and a sphere being dragged: plain
//! values that the state, the commands and the views all name.

use crate::tree::NodeId;
use glam::{Vec2, Vec3};

/// Something the pointer can rest on or the user can select, in either view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// A sphere (and its leaf).
    Sphere(u32),
    /// A branch node of the tree (valid until the tree next changes).
    Node(NodeId),
}

/// A sphere being dragged with the mouse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphereDrag {
    /// The sphere.
    pub id: u32,
    /// Its centre when the drag began, world.
    pub start_center_world: Vec3,
    /// The plane point under the pointer when the button went down.
    pub press_in_world: Vec2,
    /// Moves applied so far.
    pub moves: u32,
    /// How many of them reinserted the sphere's leaf.
    pub reinserts: u32,
    /// How many of them recomputed the pairs.
    pub recomputations: u32,
    /// True while the button is held.
    pub active: bool,
}
