//! What changed in the tree since the previous step: nodes added, removed and refit.
//!
//! # Which node is "the same node"
//!
//! The tree's node ids name slots of its pool, which are freed and handed out again (a
//! reinserted leaf's old parent is freed, and the next insertion takes the slot), so an id
//! says nothing across steps. A node is known instead by **the set of spheres below it**: a
//! leaf by its sphere, a branch by all the leaves of its subtree. Within one tree this names
//! every node once (the two children of a branch are non-empty and disjoint, so an ancestor
//! always holds more leaves than its descendants). Across two trees:
//!
//! - **added**: a node of the new tree whose set of spheres no node of the old tree had (a new
//!   sphere's leaf, the new parent of a reinserted leaf, and every ancestor on the reinserted
//!   leaf's new path up to where old and new paths meet, since those now cover it too);
//! - **removed**: a node of the old tree whose set no node of the new tree has (a gone
//!   sphere's leaf, a reinserted leaf's old parent and the ancestors on its old path that no
//!   longer cover it);
//! - **refit**: a node in both trees (same set of spheres) whose box changed (a leaf's fat
//!   box recomputed, the branches above it);
//! - a node in both with the same box is unchanged, even when its children were rotated
//!   below it (the rotated children then show up as added and removed).
//!
//! A removed node is drawn as a ghost (a red cross) on the current node where its surviving
//! spheres meet (their lowest common ancestor now), and listed; one whose spheres are all
//! gone is only listed.
//!
//! Sets are compared by a fingerprint: the leaf count and two 64-bit sums of a mix of each
//! sphere id (with different seeds), computed bottom-up in one pass over each tree. Two
//! different sets of spheres share a fingerprint with a probability of about 2^-128; the
//! unit tests check the definition against exact sets.

use crate::broadphase::{Broadphase, TreeRef};
use crate::pane::Pane;
use crate::tree::{Aabb, DynamicTree, NodeId, Vector};
use glam::Vec3;

/// The fingerprint of a set of sphere ids (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct SetKey {
    leaves: u32,
    a: u64,
    b: u64,
}

/// SplitMix64's finaliser: a well-spread 64-bit mix of `x`.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl SetKey {
    fn of_sphere(id: u32) -> SetKey {
        SetKey {
            leaves: 1,
            a: mix(u64::from(id)),
            b: mix(u64::from(id) ^ 0x5851_F42D_4C95_7F2D),
        }
    }

    fn add(&mut self, other: SetKey) {
        self.leaves = self.leaves.saturating_add(other.leaves);
        self.a = self.a.wrapping_add(other.a);
        self.b = self.b.wrapping_add(other.b);
    }
}

/// One node of a tree as the diff sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeNode {
    /// The tree's id of the node (in this tree only).
    pub id: NodeId,
    /// Index of the parent in [`TreeShape::nodes`].
    pub parent: Option<usize>,
    /// The sphere of a leaf.
    pub sphere: Option<u32>,
    /// The node's box (z = 0 in 2D).
    pub aabb: Aabb<Vec3>,
    /// Leaves below it (1 for a leaf).
    pub leaves: u32,
    /// The smallest sphere id below it.
    pub first_sphere: u32,
    /// Depth (root 0).
    pub depth: u32,
    /// Index in [`TreeShape::nodes`] just past its subtree (a depth-first walk lists a
    /// subtree right after its root).
    pub end: usize,
    key: SetKey,
}

/// A tree's nodes with what identifies them across steps, parents before children.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeShape {
    /// The nodes, parents before children.
    pub nodes: Vec<ShapeNode>,
    /// Node id to index in `nodes` for ids below [`SLOT_IDS`] (ours are pool slots, dense).
    slot: Vec<u32>,
    /// The same for ids from [`SLOT_IDS`] up (a received tree's may be any u32).
    far: std::collections::BTreeMap<u32, u32>,
    /// Every node's fingerprint with its index, sorted (unique within a tree; looked up by
    /// binary search, so nothing depends on hash order).
    sorted: Vec<(SetKey, u32)>,
    /// Each sphere's leaf index, sorted by sphere.
    leaf_of: Vec<(u32, u32)>,
    finished: bool,
}

/// Marks an empty entry of [`TreeShape`]'s id table.
const NONE: u32 = u32::MAX;

/// Ids below this are found through a table, the rest through a map (a table of any u32
/// would take gigabytes).
const SLOT_IDS: u32 = 1 << 20;

impl TreeShape {
    /// The shape of the simulation's tree (empty for the other broad phases and an empty
    /// tree).
    #[must_use]
    pub fn of(broadphase: &dyn Broadphase) -> TreeShape {
        let mut shape = TreeShape::default();
        match broadphase.tree_view() {
            Some(TreeRef::D2(tree)) => shape.walk(tree),
            Some(TreeRef::D3(tree)) => shape.walk(tree),
            None => {}
        }
        shape.finish();
        shape
    }

    /// The shape of an engine's received tree (depth first from its root, whatever order its
    /// nodes came in; nodes the root does not reach are left out).
    #[must_use]
    pub fn of_engine(tree: &crate::stream::engine::EngineTree) -> TreeShape {
        use crate::stream::engine::NodeKind;
        let by_id: std::collections::BTreeMap<u32, usize> = tree
            .nodes
            .iter()
            .enumerate()
            .map(|(k, n)| (n.id, k))
            .collect();
        let mut shape = TreeShape::default();
        let mut taken = vec![false; tree.nodes.len()];
        let mut stack: Vec<usize> = tree
            .root
            .and_then(|r| by_id.get(&r).copied())
            .into_iter()
            .collect();
        while let Some(k) = stack.pop() {
            if std::mem::replace(&mut taken[k], true) {
                continue;
            }
            let n = &tree.nodes[k];
            let (sphere, kids) = match n.kind {
                NodeKind::Leaf(id) => (Some(id), None),
                NodeKind::Branch(kids) => (None, Some(kids)),
            };
            shape.push(
                NodeId(n.id),
                n.parent.map(NodeId),
                sphere,
                Aabb::new(Vec3::from(n.min), Vec3::from(n.max)),
            );
            if let Some([a, b]) = kids {
                stack.extend([b, a].into_iter().filter_map(|c| by_id.get(&c).copied()));
            }
        }
        shape.finish();
        shape
    }

    fn walk<V: Vector>(&mut self, tree: &DynamicTree<V, u32>) {
        tree.walk(|id, view, _depth| {
            let lift = |v: V| {
                Vec3::from_array(std::array::from_fn(|k| {
                    if k < V::DIM { v.axis(k) } else { 0.0 }
                }))
            };
            let sphere = view.proxy.and_then(|p| tree.user_data(p).ok());
            let aabb = Aabb::new(lift(view.aabb.min), lift(view.aabb.max));
            self.push(id, view.parent, sphere, aabb);
        });
    }

    /// Adds a node, in the order of a depth-first walk from the root (a node, then its first
    /// subtree, then its second, as [`DynamicTree::walk`] gives them); a node with a sphere is
    /// a leaf. Call [`TreeShape::finish`] after the last.
    pub fn push(
        &mut self,
        id: NodeId,
        parent: Option<NodeId>,
        sphere: Option<u32>,
        aabb: Aabb<Vec3>,
    ) {
        let index = self.nodes.len();
        if id.0 < SLOT_IDS {
            let slot = id.0 as usize;
            if self.slot.len() <= slot {
                self.slot.resize(slot + 1, NONE);
            }
            self.slot[slot] = index as u32;
        } else {
            self.far.insert(id.0, index as u32);
        }
        let parent = parent.and_then(|p| self.index_of(p));
        let depth = parent.map_or(0, |p| self.nodes[p].depth + 1);
        self.nodes.push(ShapeNode {
            id,
            parent,
            sphere,
            aabb,
            leaves: 0,
            first_sphere: u32::MAX,
            depth,
            end: index + 1,
            key: SetKey::default(),
        });
        self.finished = false;
    }

    /// Computes every node's set of spheres (bottom-up, children after parents).
    pub fn finish(&mut self) {
        for node in &mut self.nodes {
            node.key = node.sphere.map_or_else(SetKey::default, SetKey::of_sphere);
            node.leaves = node.key.leaves;
            node.first_sphere = node.sphere.unwrap_or(u32::MAX);
        }
        for (i, node) in self.nodes.iter_mut().enumerate() {
            node.end = i + 1;
        }
        for i in (0..self.nodes.len()).rev() {
            let (key, first, end) = (
                self.nodes[i].key,
                self.nodes[i].first_sphere,
                self.nodes[i].end,
            );
            if let Some(p) = self.nodes[i].parent {
                let parent = &mut self.nodes[p];
                parent.key.add(key);
                parent.leaves = parent.key.leaves;
                parent.first_sphere = parent.first_sphere.min(first);
                parent.end = parent.end.max(end);
            }
        }
        self.leaf_of = self
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| Some((n.sphere?, i as u32)))
            .collect();
        self.leaf_of.sort_unstable();
        self.sorted = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.key, i as u32))
            .collect();
        self.sorted.sort_unstable();
        self.finished = true;
    }

    /// The index in `nodes` of the node with this id.
    #[must_use]
    pub fn index_of(&self, id: NodeId) -> Option<usize> {
        if id.0 >= SLOT_IDS {
            return self.far.get(&id.0).map(|&v| v as usize);
        }
        self.slot
            .get(id.0 as usize)
            .copied()
            .filter(|&v| v != NONE)
            .map(|v| v as usize)
    }

    /// The index of the leaf of sphere `id`, if this tree has one.
    fn leaf(&self, id: u32) -> Option<usize> {
        self.leaf_of
            .binary_search_by(|(s, _)| s.cmp(&id))
            .ok()
            .map(|at| self.leaf_of[at].1 as usize)
    }

    /// The lowest common ancestor of nodes `a` and `b` (indices).
    fn common_ancestor(&self, mut a: usize, mut b: usize) -> Option<usize> {
        while a != b {
            let (da, db) = (self.nodes[a].depth, self.nodes[b].depth);
            if da >= db {
                a = self.nodes[a].parent?;
            }
            if db >= da {
                b = self.nodes[b].parent?;
            }
        }
        Some(a)
    }

    /// Where the spheres below node `i` of `prev` meet in this tree: the lowest common
    /// ancestor of their leaves here (`None` when none of them is here).
    fn meeting_point(&self, prev: &TreeShape, i: usize) -> Option<usize> {
        let node = prev.nodes.get(i)?;
        let mut at: Option<usize> = None;
        for n in prev.nodes.get(i..node.end)? {
            if let Some(leaf) = n.sphere.and_then(|s| self.leaf(s)) {
                at = match at {
                    None => Some(leaf),
                    Some(a) => self.common_ancestor(a, leaf),
                };
            }
        }
        at
    }

    /// The index of the node over the set of spheres `key`, if this tree has one.
    fn find(&self, key: SetKey) -> Option<usize> {
        self.sorted
            .binary_search_by(|(k, _)| k.cmp(&key))
            .ok()
            .map(|at| self.sorted[at].1 as usize)
    }
}

/// A node of the previous tree that the current one no longer has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemovedNode {
    /// Its id in the previous tree (the slot may hold another node now).
    pub id: NodeId,
    /// The sphere of a leaf.
    pub sphere: Option<u32>,
    /// Leaves that were below it.
    pub leaves: u32,
    /// The smallest sphere id that was below it.
    pub first_sphere: u32,
    /// The current node where its surviving spheres meet (where its ghost is drawn);
    /// `None` when they are all gone.
    pub ghost_at: Option<NodeId>,
}

impl RemovedNode {
    /// A few words: "the leaf of sphere 7 (#3)", "a branch over 3 spheres from sphere 2
    /// (#12), its cross on #6".
    #[must_use]
    pub fn describe(&self) -> String {
        let what = match self.sphere {
            Some(s) => format!("the leaf of sphere {s} (#{})", self.id.0),
            None => format!(
                "a branch over {} spheres from sphere {} (#{})",
                self.leaves, self.first_sphere, self.id.0
            ),
        };
        match self.ghost_at {
            Some(at) => format!("{what}, its cross on #{}", at.0),
            None => what,
        }
    }
}

/// How a node of the current tree changed since the previous step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// No node of the previous tree covered its spheres.
    Added,
    /// The same spheres, another box.
    Refit,
}

/// What changed between two trees (see the module docs for what "the same node" is).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeDiff {
    /// Nodes of the current tree that are new, by id, in walk order (parents first).
    pub added: Vec<NodeId>,
    /// Nodes of the previous tree that are gone, in its walk order.
    pub removed: Vec<RemovedNode>,
    /// Nodes in both whose box changed, by their current id, in walk order.
    pub refit: Vec<NodeId>,
}

impl TreeDiff {
    /// The header's counts: "+12 added · 9 removed · 31 refit".
    #[must_use]
    pub fn counts(&self) -> String {
        format!(
            "+{} added · {} removed · {} refit",
            self.added.len(),
            self.removed.len(),
            self.refit.len()
        )
    }

    /// True when nothing changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.refit.is_empty()
    }
}

/// What changed from `prev` to `cur`; both finished ([`TreeShape::finish`]).
#[must_use]
pub fn diff(prev: &TreeShape, cur: &TreeShape) -> TreeDiff {
    debug_assert!(prev.finished || prev.nodes.is_empty());
    debug_assert!(cur.finished || cur.nodes.is_empty());
    let mut out = TreeDiff::default();
    for n in &cur.nodes {
        match prev.find(n.key) {
            None => out.added.push(n.id),
            Some(p) if prev.nodes[p].aabb != n.aabb => out.refit.push(n.id),
            Some(_) => {}
        }
    }
    for (i, n) in prev.nodes.iter().enumerate() {
        if cur.find(n.key).is_none() {
            out.removed.push(RemovedNode {
                id: n.id,
                sphere: n.sphere,
                leaves: n.leaves,
                first_sphere: n.first_sphere,
                ghost_at: cur.meeting_point(prev, i).map(|k| cur.nodes[k].id),
            });
        }
    }
    out
}

/// The change of each current node, indexed by node id (for drawing).
#[must_use]
pub fn changes_by_id(d: &TreeDiff) -> Vec<Option<Change>> {
    let mut table: Vec<Option<Change>> = Vec::new();
    let mut set = |id: NodeId, c: Change| {
        let i = id.0 as usize;
        if table.len() <= i {
            table.resize(i + 1, None);
        }
        table[i] = Some(c);
    };
    for &id in &d.refit {
        set(id, Change::Refit);
    }
    for &id in &d.added {
        set(id, Change::Added);
    }
    table
}

/// Shapes of past steps kept for scrubbing (a shape of 10,000 spheres takes about 1.5 MB).
const CACHED_SHAPES: usize = 16;

/// What names the state of a recorded step: the document, the step, its recorded hash, and
/// the edits recorded up to it (the count and the hash after the last), so that a step whose
/// edits changed (the past changed, or the scene restarted) is not taken for the old one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct StepKey {
    document: u64,
    step: u64,
    hash: u64,
    edits: usize,
    last_edit: u64,
}

fn step_key(state: Pane<'_>, step: u64) -> Option<StepKey> {
    let rec = &state.session.recording();
    let record = rec.steps().get(usize::try_from(step).ok()?)?;
    let edits = rec.edits().partition_point(|e| e.step <= step);
    let last_edit = edits
        .checked_sub(1)
        .and_then(|i| rec.edits().get(i))
        .map_or(0, |e| e.hash);
    Some(StepKey {
        document: state.session.id(),
        step,
        hash: record.hash,
        edits,
        last_edit,
    })
}

/// The changes shown: of which step, against which, and what they are (or why they could not
/// be found).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changes {
    /// The step shown.
    pub step: u64,
    /// What changed since the previous step, or why the previous step could not be rebuilt.
    pub diff: Result<TreeDiff, String>,
}

impl Changes {
    /// The header: "Step 5 vs 4: +2 added · 2 removed · 3 refit".
    #[must_use]
    pub fn header(&self) -> String {
        match (&self.diff, self.step) {
            (Ok(d), 0) => format!("Step 0 vs an empty tree: {}", d.counts()),
            (Ok(d), s) => format!("Step {s} vs {}: {}", s - 1, d.counts()),
            (Err(e), _) => e.clone(),
        }
    }
}

/// The tree view's changes, computed once per change of the simulation; the previous step's
/// tree is rebuilt from the recording ([`crate::replay::Recording::state_at`]) unless a
/// shape of it is kept: each step shown is kept (so playing and stepping on rebuild nothing)
/// and so is each step rebuilt (so scrubbing back and forth rebuilds each step once).
#[derive(Default)]
pub struct DiffCache {
    shapes: std::collections::VecDeque<(StepKey, TreeShape)>,
    computed_for: Option<(u64, u64, bool)>,
    changes: Option<Changes>,
    /// Steps rebuilt from the recording so far (tests check the cache with it).
    rebuilt: u64,
}

impl DiffCache {
    /// The changes last computed.
    #[must_use]
    pub fn changes(&self) -> Option<&Changes> {
        self.changes.as_ref()
    }

    /// How many previous steps were rebuilt from the recording so far.
    #[must_use]
    pub fn rebuilt(&self) -> u64 {
        self.rebuilt
    }

    /// Computes the changes of the state's simulation when it changed since the last call.
    pub fn update(&mut self, state: Pane<'_>) {
        let engine = state.shows_engine_tree();
        let key = (state.snapshot.serial, state.session.id(), engine);
        if self.computed_for == Some(key) {
            return;
        }
        self.computed_for = Some(key);
        let sim = &state.sim;
        let step = sim.step_index();
        if engine {
            // The engine's received trees: each step's is in the record, nothing to rebuild.
            let shape_of = |s: u64| state.engine_tree_at(s).map(TreeShape::of_engine);
            let diff = match (shape_of(step), step.checked_sub(1)) {
                (None, _) => Err(format!("The engine sent no tree at step {step}.")),
                (Some(cur), None) => Ok(diff(&TreeShape::default(), &cur)),
                (Some(cur), Some(prev)) => match shape_of(prev) {
                    Some(prev) => Ok(diff(&prev, &cur)),
                    None => Err(format!(
                        "The engine sent no tree at step {prev}: no changes shown."
                    )),
                },
            };
            self.changes = Some(Changes { step, diff });
            return;
        }
        let cur = TreeShape::of(sim.broadphase());
        let diff = match step.checked_sub(1) {
            None => Ok(diff(&TreeShape::default(), &cur)),
            Some(prev) => self
                .shape_at(state, prev)
                .map(|i| diff(&self.shapes[i].1, &cur)),
        };
        self.changes = Some(Changes { step, diff });
        if let Some(k) = step_key(state, step) {
            self.keep(k, cur);
        }
    }

    /// The index in `shapes` of the shape at recorded step `step`, rebuilt when not kept.
    fn shape_at(&mut self, state: Pane<'_>, step: u64) -> Result<usize, String> {
        let key = step_key(state, step)
            .ok_or_else(|| format!("Step {step} is not in the recording: no changes shown."))?;
        if let Some(i) = self.shapes.iter().position(|(k, _)| *k == key) {
            return Ok(i);
        }
        let sim = state
            .session
            .recording()
            .state_at(step)
            .map_err(|e| format!("Could not rebuild step {step} to compare with: {e}."))?;
        self.rebuilt += 1;
        self.keep(key, TreeShape::of(sim.broadphase()));
        Ok(self.shapes.len() - 1)
    }

    fn keep(&mut self, key: StepKey, shape: TreeShape) {
        self.shapes.retain(|(k, _)| *k != key);
        while self.shapes.len() >= CACHED_SHAPES {
            self.shapes.pop_front();
        }
        self.shapes.push_back((key, shape));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn b(x0: f32, x1: f32) -> Aabb<Vec3> {
        Aabb::new(Vec3::new(x0, 0.0, 0.0), Vec3::new(x1, 1.0, 0.0))
    }

    /// One row of a constructed tree: id, parent id, sphere, box.
    type Row = (u32, Option<u32>, Option<u32>, Aabb<Vec3>);

    /// A tree from rows, parents first.
    fn shape(rows: &[Row]) -> TreeShape {
        let mut s = TreeShape::default();
        for &(id, parent, sphere, aabb) in rows {
            s.push(NodeId(id), parent.map(NodeId), sphere, aabb);
        }
        s.finish();
        s
    }

    /// The exact diff by sets of sphere ids (the definition, without fingerprints).
    fn exact(prev: &TreeShape, cur: &TreeShape) -> TreeDiff {
        let sets = |t: &TreeShape| -> Vec<BTreeSet<u32>> {
            let mut sets = vec![BTreeSet::new(); t.nodes.len()];
            for i in (0..t.nodes.len()).rev() {
                if let Some(s) = t.nodes[i].sphere {
                    sets[i].insert(s);
                }
                if let Some(p) = t.nodes[i].parent {
                    let mine = sets[i].clone();
                    sets[p].extend(mine);
                }
            }
            sets
        };
        let (a, c) = (sets(prev), sets(cur));
        let mut out = TreeDiff::default();
        for (i, n) in cur.nodes.iter().enumerate() {
            match a.iter().position(|s| *s == c[i]) {
                None => out.added.push(n.id),
                Some(p) if prev.nodes[p].aabb != n.aabb => out.refit.push(n.id),
                Some(_) => {}
            }
        }
        let alive: BTreeSet<u32> = cur.nodes.iter().filter_map(|n| n.sphere).collect();
        for (i, n) in prev.nodes.iter().enumerate() {
            if !c.contains(&a[i]) {
                // The smallest current set holding the survivors.
                let survivors: BTreeSet<u32> = a[i].intersection(&alive).copied().collect();
                let ghost_at = (!survivors.is_empty())
                    .then(|| {
                        (0..cur.nodes.len())
                            .filter(|&k| c[k].is_superset(&survivors))
                            .min_by_key(|&k| c[k].len())
                            .map(|k| cur.nodes[k].id)
                    })
                    .flatten();
                out.removed.push(RemovedNode {
                    id: n.id,
                    sphere: n.sphere,
                    leaves: n.leaves,
                    first_sphere: n.first_sphere,
                    ghost_at,
                });
            }
        }
        out
    }

    /// ((0 1) (2 3)) with node ids as a pool hands them out.
    fn four() -> TreeShape {
        shape(&[
            (6, None, None, b(0.0, 8.0)),
            (4, Some(6), None, b(0.0, 4.0)),
            (0, Some(4), Some(0), b(0.0, 2.0)),
            (1, Some(4), Some(1), b(2.0, 4.0)),
            (5, Some(6), None, b(4.0, 8.0)),
            (2, Some(5), Some(2), b(4.0, 6.0)),
            (3, Some(5), Some(3), b(6.0, 8.0)),
        ])
    }

    #[test]
    fn a_received_tree_has_the_shape_of_its_walk_whatever_its_order_and_ids() {
        use crate::stream::engine::{EngineTree, NodeKind, TreeNode};
        // four() as an engine would send it: ids far up, children before parents.
        let far = |id: u32| id.wrapping_mul(0x9E37_79B9) | 0x8000_0000;
        let rows = [
            (3, Some(5), Some(3), b(6.0, 8.0)),
            (0, Some(4), Some(0), b(0.0, 2.0)),
            (2, Some(5), Some(2), b(4.0, 6.0)),
            (1, Some(4), Some(1), b(2.0, 4.0)),
            (5, Some(6), None, b(4.0, 8.0)),
            (4, Some(6), None, b(0.0, 4.0)),
            (6, None, None, b(0.0, 8.0)),
        ];
        let children = |id: u32| -> [u32; 2] {
            match id {
                6 => [far(4), far(5)],
                4 => [far(0), far(1)],
                _ => [far(2), far(3)],
            }
        };
        let tree = EngineTree {
            root: Some(far(6)),
            partial: false,
            nodes: rows
                .iter()
                .map(|&(id, parent, sphere, aabb)| TreeNode {
                    id: far(id),
                    parent: parent.map(far),
                    kind: sphere.map_or_else(|| NodeKind::Branch(children(id)), NodeKind::Leaf),
                    min: aabb.min.to_array(),
                    max: aabb.max.to_array(),
                    height: u32::from(sphere.is_none()) + u32::from(id == 6),
                    enlarged: false,
                })
                .collect(),
        };
        let got = TreeShape::of_engine(&tree);
        let want = four();
        assert_eq!(got.nodes.len(), want.nodes.len());
        for (g, w) in got.nodes.iter().zip(&want.nodes) {
            assert_eq!(g.id, NodeId(far(w.id.0)));
            assert_eq!(
                (g.parent, g.sphere, g.aabb, g.leaves, g.depth, g.end),
                (w.parent, w.sphere, w.aabb, w.leaves, w.depth, w.end)
            );
            assert_eq!(got.index_of(g.id), want.index_of(w.id));
        }
        assert!(got.slot.is_empty(), "no table of far ids");
        // The same sets of spheres: nothing changed against ours.
        assert!(diff(&want, &got).is_empty());
    }

    #[test]
    fn the_same_tree_has_no_change() {
        let d = diff(&four(), &four());
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(d.counts(), "+0 added · 0 removed · 0 refit");
    }

    #[test]
    fn a_leaf_moved_across_the_tree_with_its_slots_reused() {
        // Sphere 1 leaves its fat box and is reinserted beside sphere 3: its old parent (#4,
        // over {0, 1}) is freed, sphere 0 moves up under the root, and the pool hands slot 4
        // to the new parent over {1, 3}. Same id, another node.
        let cur = shape(&[
            (6, None, None, b(0.0, 9.0)),
            (0, Some(6), Some(0), b(0.0, 2.0)),
            (5, Some(6), None, b(4.0, 9.0)),
            (2, Some(5), Some(2), b(4.0, 6.0)),
            (4, Some(5), None, b(6.0, 9.0)),
            (3, Some(4), Some(3), b(6.0, 8.0)),
            (1, Some(4), Some(1), b(8.0, 9.0)),
        ]);
        let d = diff(&four(), &cur);
        // Added: {1, 2, 3} (#5 now) and {1, 3} (#4 now). Refit: the root (all four, a wider
        // box) and sphere 1's leaf. Removed: {0, 1} (#4 then) and {2, 3} (#5 then).
        assert_eq!(d.added, vec![NodeId(5), NodeId(4)]);
        assert_eq!(d.refit, vec![NodeId(6), NodeId(1)]);
        assert_eq!(
            d.removed,
            vec![
                // Spheres 0 and 1 meet at the root now.
                RemovedNode {
                    id: NodeId(4),
                    sphere: None,
                    leaves: 2,
                    first_sphere: 0,
                    ghost_at: Some(NodeId(6)),
                },
                // Spheres 2 and 3 meet at #5 (over 1, 2, 3) now.
                RemovedNode {
                    id: NodeId(5),
                    sphere: None,
                    leaves: 2,
                    first_sphere: 2,
                    ghost_at: Some(NodeId(5)),
                },
            ]
        );
        assert_eq!(d, exact(&four(), &cur));
        assert_eq!(d.counts(), "+2 added · 2 removed · 2 refit");
        assert_eq!(
            d.removed[0].describe(),
            "a branch over 2 spheres from sphere 0 (#4), its cross on #6"
        );
        let table = changes_by_id(&d);
        assert_eq!(table[4], Some(Change::Added));
        assert_eq!(table[1], Some(Change::Refit));
        assert_eq!(table[0], None);
        assert_eq!(table.get(3).copied().flatten(), None);
    }

    #[test]
    fn spheres_appearing_and_disappearing() {
        // Sphere 3 gone, sphere 9 new under a new parent beside sphere 0; boxes unchanged
        // elsewhere.
        let cur = shape(&[
            (6, None, None, b(0.0, 8.0)),
            (4, Some(6), None, b(0.0, 4.0)),
            (7, Some(4), None, b(0.0, 2.0)),
            (0, Some(7), Some(0), b(0.0, 2.0)),
            (3, Some(7), Some(9), b(1.0, 2.0)),
            (1, Some(4), Some(1), b(2.0, 4.0)),
            (2, Some(6), Some(2), b(4.0, 6.0)),
        ]);
        let d = diff(&four(), &cur);
        assert_eq!(
            d.added,
            vec![NodeId(6), NodeId(4), NodeId(7), NodeId(3)],
            "every set that holds sphere 9 is new"
        );
        assert!(d.refit.is_empty());
        let removed: Vec<NodeId> = d.removed.iter().map(|r| r.id).collect();
        assert_eq!(
            removed,
            vec![NodeId(6), NodeId(4), NodeId(5), NodeId(3)],
            "every set that held sphere 3, or only sphere 0 and 1"
        );
        assert_eq!(d.removed[3].sphere, Some(3));
        assert_eq!(d.removed[3].describe(), "the leaf of sphere 3 (#3)");
        // Sphere 3's leaf has no ghost (sphere 3 is gone); the old root's spheres 0, 1, 2
        // meet at the root again, {0, 1} at #4 (over 0, 9, 1), {2, 3} at sphere 2's leaf.
        let ghosts: Vec<Option<NodeId>> = d.removed.iter().map(|r| r.ghost_at).collect();
        assert_eq!(
            ghosts,
            vec![Some(NodeId(6)), Some(NodeId(4)), Some(NodeId(2)), None]
        );
        assert_eq!(d, exact(&four(), &cur));
    }

    #[test]
    fn from_nothing_everything_is_added() {
        let d = diff(&TreeShape::default(), &four());
        assert_eq!(d.added.len(), 7);
        assert!(d.removed.is_empty() && d.refit.is_empty());
        let d = diff(&four(), &TreeShape::default());
        assert_eq!(d.removed.len(), 7);
        assert!(d.added.is_empty() && d.refit.is_empty());
    }

    #[test]
    fn a_rotation_keeps_the_nodes_over_the_same_spheres() {
        // ((0 1) 2) rotated to (0 (1 2)): the root keeps its spheres and box.
        let prev = shape(&[
            (4, None, None, b(0.0, 6.0)),
            (3, Some(4), None, b(0.0, 4.0)),
            (0, Some(3), Some(0), b(0.0, 2.0)),
            (1, Some(3), Some(1), b(2.0, 4.0)),
            (2, Some(4), Some(2), b(4.0, 6.0)),
        ]);
        let cur = shape(&[
            (4, None, None, b(0.0, 6.0)),
            (0, Some(4), Some(0), b(0.0, 2.0)),
            (3, Some(4), None, b(2.0, 6.0)),
            (1, Some(3), Some(1), b(2.0, 4.0)),
            (2, Some(3), Some(2), b(4.0, 6.0)),
        ]);
        let d = diff(&prev, &cur);
        assert_eq!(d.added, vec![NodeId(3)]);
        assert_eq!(d.removed.len(), 1);
        assert_eq!(d.removed[0].id, NodeId(3));
        assert_eq!(d.removed[0].first_sphere, 0);
        assert_eq!(d.removed[0].ghost_at, Some(NodeId(4)));
        assert!(d.refit.is_empty());
        assert_eq!(d, exact(&prev, &cur));
    }
}
