//! What the views draw, taken from the simulation once per change (not once per frame): the
//! spheres and every tree node projected onto the view plane, with the links between them.
//!
//! A playing scene changes every frame, so taking the snapshot is on the frame's critical
//! path: [`Snapshot::refresh`] refills the previous snapshot's buffers (fresh buffers of a few
//! megabytes cost page faults every frame) and looks ids up in dense tables indexed by id,
//! node and proxy slot (hash maps of 10,000 entries cost more than the rest together).

use super::camera::{Plane, WorldRect};
use crate::broadphase::TreeRef;
use crate::scene::ids_fit_a_table;
use crate::source::Sim;
use crate::tree::{Aabb, DynamicTree, NodeId, ProxyId, Vector};
use glam::{Vec2, Vec3};

/// Marks an empty entry of the snapshot's dense index tables.
const NONE: u32 = u32::MAX;

/// What a [`SphereItem`] stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ItemShape {
    /// A scene's sphere.
    #[default]
    Sphere,
    /// A trace's box that moves (its tight box is the box; the radius is 0).
    Box,
    /// A trace's static box (the ground, walls).
    StaticBox,
}

impl ItemShape {
    /// True for a trace's boxes.
    #[must_use]
    pub fn is_box(self) -> bool {
        self != ItemShape::Sphere
    }
}

/// One live sphere (or a trace's box), projected.
#[derive(Clone, Debug, PartialEq)]
pub struct SphereItem {
    /// A sphere, or a trace's box.
    pub shape: ItemShape,
    /// The sphere's id.
    pub id: u32,
    /// Its label, when the scene gives one.
    pub label: Option<String>,
    /// Centre in the world (3D; z = 0 in 2D).
    pub center_world: Vec3,
    /// Centre on the view plane.
    pub center: Vec2,
    /// Radius, world units (0 for a box).
    pub radius: f32,
    /// Velocity in the world.
    pub velocity_world: Vec3,
    /// Velocity on the view plane.
    pub velocity: Vec2,
    /// The tight box on the view plane.
    pub tight: WorldRect,
    /// The tight box in the world (z from 0 to 0 in 2D).
    pub tight_world: Aabb<Vec3>,
    /// The fat box on the view plane (`None` when the broad phase holds none).
    pub fat: Option<WorldRect>,
    /// True when it touches another sphere (its tight box is drawn red).
    pub colliding: bool,
    /// Index of its leaf in [`Snapshot::nodes`], for the tree broad phase.
    pub node: Option<usize>,
}

/// One static box (level geometry), projected.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticItem {
    /// The box's id.
    pub id: u32,
    /// The box on the view plane.
    pub rect: WorldRect,
    /// The box in the world (3D; z = 0..0 in 2D).
    pub world: Aabb<Vec3>,
}

/// One tree node, projected.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeItem {
    /// The tree's id of the node (valid until the tree next changes).
    pub id: NodeId,
    /// The node's box on the view plane.
    pub rect: WorldRect,
    /// Depth (root 0).
    pub depth: u32,
    /// Height (leaves 0).
    pub height: u32,
    /// Index of the parent in [`Snapshot::nodes`].
    pub parent: Option<usize>,
    /// Indices of the children in [`Snapshot::nodes`] (branches only).
    pub children: Option<[usize; 2]>,
    /// The sphere id of a leaf.
    pub sphere: Option<u32>,
    /// The proxy of a leaf.
    pub proxy: Option<ProxyId>,
}

/// Everything the views draw for one state of the simulation.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Counts the snapshots taken into this one: what is laid out or computed from a
    /// snapshot is keyed by it.
    pub serial: u64,
    /// Live spheres sorted by id.
    pub spheres: Vec<SphereItem>,
    /// Tree nodes, parents before children (empty for brute force and sweep-and-prune).
    pub nodes: Vec<NodeItem>,
    /// Candidate pairs as indices into `spheres`.
    pub pairs: Vec<(usize, usize)>,
    /// The static boxes, sorted by id.
    pub statics: Vec<StaticItem>,
    /// The walls on the view plane.
    pub walls: Option<WorldRect>,
    /// Deepest node depth.
    pub max_depth: u32,
    /// For 3D scenes, each node's box in the world, indexed as `nodes` (empty in 2D).
    pub node_boxes_3d: Vec<Aabb<Vec3>>,
    /// For 3D scenes, each sphere's fat box in the world, indexed as `spheres` (empty in 2D).
    pub fat_boxes_3d: Vec<Option<Aabb<Vec3>>>,
    /// Sphere id to index in `spheres`, when the ids are dense enough for a table (else empty,
    /// and lookups search `spheres`, which is sorted by id).
    pub(super) sphere_slot: Vec<u32>,
    /// The engine's reported pairs at this step (a received stream's, when its step carried
    /// pairs and fat boxes and the engine's parts are drawn), as indices in `spheres`, each
    /// with why it exists; empty otherwise.
    pub engine_pairs: Vec<(usize, usize, crate::stream::engine::PairClass)>,
    /// Node id to index in `nodes`, when the ids are dense enough for a table (ours always
    /// are).
    pub(super) node_slot: Vec<u32>,
    /// Node id and index in `nodes`, sorted by id, when they are not (another library's or a
    /// received tree may use any u32); empty otherwise.
    pub(super) node_sparse: Vec<(u32, u32)>,
    /// Proxy slot to the index of its leaf in `nodes` (the generation is checked against the
    /// leaf's proxy).
    pub(super) proxy_slot: Vec<u32>,
    /// The spheres', static boxes' and root's boxes joined, worked out once per refresh (the
    /// views ask every frame; a million spheres take milliseconds to join).
    pub(crate) content: Option<WorldRect>,
    /// Branches at each depth (the world view's level of detail asks every frame).
    pub branches_per_depth: Vec<usize>,
    /// The largest sphere radius and the largest |vx| + |vy| on the view plane: a layer whose
    /// largest shape is too small to draw (labels, velocity arrows) is passed over whole.
    pub max_radius: f32,
    /// See [`Snapshot::max_radius`].
    pub max_speed_l1: f32,
    /// Another library's tree the broad phase holds (Box2D's), read node by node, with its
    /// health.
    pub foreign_tree: Option<ForeignTree>,
}

/// A tree of another library the broad phase holds (Box2D's), as the window draws and
/// measures an engine's received tree.
#[derive(Clone, Debug)]
pub struct ForeignTree {
    /// Its nodes.
    pub tree: crate::stream::engine::EngineTree,
    /// Checked against the step's boxes and measured against a fresh build (left out, `None`,
    /// past [`FOREIGN_HEALTH_LEAVES`] leaves: a fresh build a step would slow the window).
    pub health: Option<Result<crate::stream::engine::TreeHealth, crate::stream::engine::TreeFault>>,
}

/// The most leaves a foreign tree is checked and measured at, each step.
pub const FOREIGN_HEALTH_LEAVES: usize = 50_000;

fn project_box<V: Vector>(b: &Aabb<V>, (a, c): (usize, usize)) -> WorldRect {
    let get = |v: V, axis: usize| if axis < V::DIM { v.axis(axis) } else { 0.0 };
    WorldRect::new(
        Vec2::new(get(b.min, a), get(b.min, c)),
        Vec2::new(get(b.max, a), get(b.max, c)),
    )
}

/// A box of either dimension in 3D (z = 0 in 2D).
fn box_3d<V: Vector>(b: &Aabb<V>) -> Aabb<Vec3> {
    let lift = |v: V| {
        Vec3::from_array(std::array::from_fn(|k| {
            if k < V::DIM { v.axis(k) } else { 0.0 }
        }))
    };
    Aabb::new(lift(b.min), lift(b.max))
}

fn extract_tree<V: Vector>(tree: &DynamicTree<V, u32>, axes: (usize, usize), out: &mut Snapshot) {
    let mut max_depth = 0;
    tree.walk(|id, view, depth| {
        if V::DIM == 3 {
            out.node_boxes_3d.push(box_3d(&view.aabb));
        }
        let i = out.nodes.len();
        set_slot(&mut out.node_slot, id.0 as usize, i);
        // Parents come before their children in the walk, so the parent is known already.
        let parent = view
            .parent
            .and_then(|p| slot_of(&out.node_slot, p.0 as usize));
        if let Some(p) = parent {
            attach_child(out, p, i);
        }
        if let Some(proxy) = view.proxy {
            set_slot(&mut out.proxy_slot, proxy.index as usize, i);
        }
        max_depth = max_depth.max(depth);
        out.nodes.push(NodeItem {
            id,
            rect: project_box(&view.aabb, axes),
            depth,
            height: view.height,
            parent,
            children: None,
            sphere: view.proxy.and_then(|p| tree.user_data(p).ok()),
            proxy: view.proxy,
        });
    });
    out.max_depth = max_depth;
}

/// The nodes of another library's tree (Box2D's, or an engine's received one) as the views'
/// nodes, parents first (depth first from the root, whatever order the nodes came in): node
/// ids are its own, leaves name their sphere, no proxy of ours. Nodes the root does not reach
/// (a tree that was refused) are left out; each node is taken once.
fn extract_foreign(
    tree: &crate::stream::engine::EngineTree,
    axes: (usize, usize),
    out: &mut Snapshot,
) {
    use crate::stream::engine::NodeKind;
    // Node id -> its index in `tree.nodes`: a table when the ids are dense, else a sorted
    // list searched (a received tree's ids may be any u32; a table would be gigabytes).
    let max_id = tree.nodes.iter().map(|n| n.id).max().unwrap_or(0) as usize;
    let dense = max_id <= 4 * tree.nodes.len() + 1024;
    let mut by_id: Vec<u32> = Vec::new();
    let mut sparse: Vec<(u32, u32)> = Vec::new();
    for (k, n) in tree.nodes.iter().enumerate() {
        if dense {
            set_slot(&mut by_id, n.id as usize, k);
        } else {
            sparse.push((n.id, k as u32));
        }
    }
    sparse.sort_unstable();
    let index_of = |id: u32| {
        if dense {
            slot_of(&by_id, id as usize)
        } else {
            let k = sparse.binary_search_by_key(&id, |e| e.0).ok()?;
            Some(sparse[k].1 as usize)
        }
    };
    let mut taken = vec![false; tree.nodes.len()];
    let mut max_depth = 0;
    // (index in tree.nodes, parent's index in out.nodes, depth)
    let mut stack: Vec<(usize, Option<usize>, u32)> = Vec::new();
    if let Some(root) = tree.root.and_then(index_of) {
        stack.push((root, None, 0));
    }
    while let Some((k, parent, depth)) = stack.pop() {
        if std::mem::replace(&mut taken[k], true) {
            continue;
        }
        let n = &tree.nodes[k];
        // Box2D's tree is 2D: no world boxes are kept for a 3D view.
        let world = Aabb::new(Vec3::from(n.min), Vec3::from(n.max));
        let i = out.nodes.len();
        if dense {
            set_slot(&mut out.node_slot, n.id as usize, i);
        } else {
            out.node_sparse.push((n.id, i as u32));
        }
        if let Some(p) = parent {
            attach_child(out, p, i);
        }
        max_depth = max_depth.max(depth);
        out.nodes.push(NodeItem {
            id: NodeId(n.id),
            rect: project_box(&world, axes),
            depth,
            height: n.height,
            parent,
            children: None,
            sphere: match n.kind {
                NodeKind::Leaf(id) => Some(id),
                NodeKind::Branch(_) => None,
            },
            proxy: None,
        });
        if let NodeKind::Branch([a, b]) = n.kind {
            // The second child is pushed first, so the first is laid out first.
            for child in [b, a].into_iter().filter_map(index_of) {
                stack.push((child, Some(i), depth + 1));
            }
        }
    }
    out.node_sparse.sort_unstable();
    out.max_depth = max_depth;
}

/// Makes node `child` the next child of node `parent` (nodes come parents first).
fn attach_child(out: &mut Snapshot, parent: usize, child: usize) {
    let kids = out.nodes[parent].children.get_or_insert([usize::MAX; 2]);
    if kids[0] == usize::MAX {
        kids[0] = child;
    } else {
        kids[1] = child;
    }
}

/// Sets `table[key] = value`, growing the table with empty entries.
fn set_slot(table: &mut Vec<u32>, key: usize, value: usize) {
    if table.len() <= key {
        table.resize(key + 1, NONE);
    }
    table[key] = value as u32;
}

/// `table[key]`, if set.
fn slot_of(table: &[u32], key: usize) -> Option<usize> {
    table
        .get(key)
        .copied()
        .filter(|&v| v != NONE)
        .map(|v| v as usize)
}

impl Snapshot {
    /// Takes what the views need from the simulation, projected onto `plane`.
    #[must_use]
    pub fn take(sim: &Sim, plane: Plane) -> Snapshot {
        let mut out = Snapshot::default();
        out.refresh(sim, plane);
        out
    }

    /// Retakes the snapshot from the simulation, reusing this one's buffers.
    pub fn refresh(&mut self, sim: &Sim, plane: Plane) {
        self.serial = self.serial.wrapping_add(1);
        self.spheres.clear();
        self.nodes.clear();
        self.pairs.clear();
        self.statics.clear();
        self.statics
            .extend(sim.static_boxes().iter().map(|b| StaticItem {
                id: b.id,
                rect: project_box(&b.aabb(), plane.axes()),
                world: b.aabb(),
            }));
        self.node_boxes_3d.clear();
        self.fat_boxes_3d.clear();
        self.max_depth = 0;
        for table in [
            &mut self.sphere_slot,
            &mut self.node_slot,
            &mut self.proxy_slot,
        ] {
            table.fill(NONE);
        }
        self.node_sparse.clear();
        let bp = sim.broadphase();
        let axes = plane.axes();
        let tree = bp.tree_view();
        // Another library's tree (Box2D's) is read once a refresh: its nodes are the views'
        // nodes, as ours are, and it is checked and measured below.
        let foreign = if tree.is_none() {
            bp.foreign_tree()
        } else {
            None
        };
        let has_tree = tree.is_some() || foreign.is_some();
        match tree {
            Some(TreeRef::D2(tree)) => extract_tree(tree, axes, self),
            Some(TreeRef::D3(tree)) => extract_tree(tree, axes, self),
            None => {
                if let Some(f) = &foreign {
                    extract_foreign(f, axes, self);
                }
            }
        }
        let live = sim.spheres().iter().filter(|b| b.alive);
        let (count, max_id) = live
            .clone()
            .map(|b| b.sphere.id)
            .chain(sim.boxes().iter().map(|b| b.id))
            .fold((0, 0), |(n, m), id| (n + 1, m.max(id)));
        let dense = ids_fit_a_table(max_id, count);
        if !dense {
            self.sphere_slot = Vec::new();
        }
        let three_d = sim.dimensions() == 3;
        let spheres = live.map(|body| {
            let s = &body.sphere;
            let r = s.radius;
            let tight = Aabb::new(s.center - Vec3::splat(r), s.center + Vec3::splat(r));
            (
                ItemShape::Sphere,
                s.id,
                s.label.clone(),
                s.center,
                r,
                s.velocity,
                tight,
            )
        });
        let statics = sim.as_trace().map_or(&[][..], |t| t.trace().statics());
        let boxes = sim.boxes().iter().map(|b| {
            let fixed = statics.binary_search_by_key(&b.id, |s| s.id).is_ok();
            let shape = if fixed {
                ItemShape::StaticBox
            } else {
                ItemShape::Box
            };
            let center = (b.tight.min + b.tight.max) * 0.5;
            (shape, b.id, None, center, 0.0, b.velocity, b.tight)
        });
        // Both are sorted by id (and only one is not empty).
        for (shape, id, label, center, radius, velocity, tight3) in spheres.chain(boxes) {
            // A tree's fat boxes are its leaves' boxes, filled in below from the nodes.
            let fat_3d = if has_tree { None } else { bp.fat_aabb(id) };
            let fat = fat_3d.map(|f| project_box(&f, axes));
            if three_d {
                self.fat_boxes_3d.push(fat_3d);
            }
            if dense {
                set_slot(&mut self.sphere_slot, id as usize, self.spheres.len());
            }
            self.spheres.push(SphereItem {
                shape,
                id,
                label,
                center_world: center,
                center: plane.project(center),
                radius,
                velocity_world: velocity,
                velocity: plane.project(velocity),
                tight: project_box(&tight3, axes),
                tight_world: tight3,
                fat,
                colliding: false,
                node: None,
            });
        }
        self.link_leaves();
        let report = sim.report();
        for &(a, b) in &report.contacts {
            for id in [a, b] {
                if let Some(i) = self.sphere_index(id) {
                    self.spheres[i].colliding = true;
                }
            }
        }
        for &(a, b) in &report.candidate_pairs {
            if let (Some(i), Some(j)) = (self.sphere_index(a), self.sphere_index(b)) {
                self.pairs.push((i, j));
            }
        }
        self.content = self.union_with(None);
        self.foreign_tree = foreign.map(|tree| {
            let dims = sim.dimensions();
            let health =
                (self.spheres.len() + self.statics.len() <= FOREIGN_HEALTH_LEAVES).then(|| {
                    let wire = |id: u32, b: &Aabb<Vec3>| crate::stream::engine::WireBox {
                        id,
                        min: b.min.to_array(),
                        max: b.max.to_array(),
                    };
                    let proxies: Vec<_> = self
                        .spheres
                        .iter()
                        .map(|s| wire(s.id, &s.tight_world))
                        .chain(self.statics.iter().map(|b| wire(b.id, &b.world)))
                        .collect();
                    crate::stream::engine::validate_tree(&tree, &proxies, dims)
                        .map(|shape| crate::stream::engine::tree_health(&tree, &shape, dims))
                });
            ForeignTree { tree, health }
        });
        self.count_branches();
        self.max_radius = self.spheres.iter().map(|s| s.radius).fold(0.0, f32::max);
        self.max_speed_l1 = self
            .spheres
            .iter()
            .map(|s| s.velocity.x.abs() + s.velocity.y.abs())
            .fold(0.0, f32::max);
    }

    /// Makes `tree` (an engine's received tree, 2D or 3D projected onto `plane`) the views'
    /// tree in place of ours: its nodes become the snapshot's nodes, each sphere's leaf and fat
    /// box its leaf's. The spheres, pairs and contacts stay the step's.
    pub fn use_tree(&mut self, tree: &crate::stream::engine::EngineTree, plane: Plane) {
        self.nodes.clear();
        self.node_boxes_3d.clear();
        self.node_slot.fill(NONE);
        self.node_sparse.clear();
        self.proxy_slot.fill(NONE);
        extract_foreign(tree, plane.axes(), self);
        for s in &mut self.spheres {
            s.node = None;
            s.fat = None;
        }
        for f in &mut self.fat_boxes_3d {
            *f = None;
        }
        self.link_leaves();
        self.content = self.union_with(None);
        self.count_branches();
    }

    /// Gives each sphere its leaf among the nodes, and the leaf's box as its fat box.
    fn link_leaves(&mut self) {
        for (k, n) in self.nodes.iter().enumerate() {
            if let Some(i) = n.sphere.and_then(|id| self.sphere_index(id)) {
                self.spheres[i].node = Some(k);
                self.spheres[i].fat = Some(n.rect);
                if let (Some(f), Some(b)) =
                    (self.fat_boxes_3d.get_mut(i), self.node_boxes_3d.get(k))
                {
                    *f = Some(*b);
                }
            }
        }
    }

    /// Counts the branches at each depth ([`Snapshot::branches_per_depth`]).
    fn count_branches(&mut self) {
        self.branches_per_depth.clear();
        self.branches_per_depth
            .resize(self.max_depth as usize + 1, 0);
        for n in &self.nodes {
            if n.children.is_some()
                && let Some(c) = self.branches_per_depth.get_mut(n.depth as usize)
            {
                *c += 1;
            }
        }
    }

    /// Sets the walls (from the scene) on the view plane.
    pub fn set_walls(&mut self, world: &Aabb<Vec3>, plane: Plane) {
        self.walls = Some(project_box(world, plane.axes()));
    }

    /// The rectangle holding the walls and every sphere and box (for "fit").
    #[must_use]
    pub fn bounds(&self) -> Option<WorldRect> {
        match (self.content, self.walls) {
            (Some(c), Some(w)) => Some(c.union(&w)),
            (c, w) => c.or(w),
        }
    }

    /// What the view shows without the walls: the spheres' boxes and the tree's root box.
    #[must_use]
    pub fn content_bounds(&self) -> Option<WorldRect> {
        self.content
    }

    /// `start` joined with every sphere's box, every static box and the root's box.
    fn union_with(&self, start: Option<WorldRect>) -> Option<WorldRect> {
        let mut r = start;
        let mut add = |x: WorldRect| r = Some(r.map_or(x, |r| r.union(&x)));
        for s in &self.spheres {
            add(s.fat.unwrap_or(s.tight));
        }
        for b in &self.statics {
            add(b.rect);
        }
        if let Some(root) = self.nodes.first() {
            add(root.rect);
        }
        r
    }

    /// Index in `spheres` of the live sphere with this id.
    #[must_use]
    pub fn sphere_index(&self, id: u32) -> Option<usize> {
        if self.sphere_slot.is_empty() {
            self.spheres.binary_search_by_key(&id, |s| s.id).ok()
        } else {
            slot_of(&self.sphere_slot, id as usize)
        }
    }

    /// The sphere with this id.
    #[must_use]
    pub fn sphere(&self, id: u32) -> Option<&SphereItem> {
        self.sphere_index(id).map(|i| &self.spheres[i])
    }

    /// How the views name the body with this id: `sphere 3`, `box 3` (a trace's moving box)
    /// or `static box 3` (a trace's or a scene's), `body 3` when it is not in the snapshot.
    #[must_use]
    pub fn body_name(&self, id: u32) -> String {
        match self.sphere(id).map(|s| s.shape) {
            Some(ItemShape::Sphere) => format!("sphere {id}"),
            Some(ItemShape::Box) => format!("box {id}"),
            Some(ItemShape::StaticBox) => format!("static box {id}"),
            None if self.statics.iter().any(|b| b.id == id) => format!("static box {id}"),
            None => format!("body {id}"),
        }
    }

    /// Index in `nodes` of the node with this id.
    #[must_use]
    pub fn node_index(&self, id: NodeId) -> Option<usize> {
        if self.node_sparse.is_empty() {
            slot_of(&self.node_slot, id.0 as usize)
        } else {
            let k = self.node_sparse.binary_search_by_key(&id.0, |e| e.0).ok()?;
            Some(self.node_sparse[k].1 as usize)
        }
    }

    /// Index in `nodes` of the leaf holding this proxy (`None` for a stale handle).
    #[must_use]
    pub fn proxy_node(&self, proxy: ProxyId) -> Option<usize> {
        slot_of(&self.proxy_slot, proxy.index as usize)
            .filter(|&i| self.nodes[i].proxy == Some(proxy))
    }

    /// The sphere whose leaf holds this proxy.
    #[must_use]
    pub fn proxy_sphere(&self, proxy: ProxyId) -> Option<u32> {
        self.proxy_node(proxy).and_then(|i| self.nodes[i].sphere)
    }

    /// How many leaves lie below node `index` (1 for a leaf, 0 for no such node). Walks the
    /// subtree: for one node at a time (a tooltip), not for every node.
    #[must_use]
    pub fn leaves_below(&self, index: usize) -> u32 {
        if index >= self.nodes.len() {
            return 0;
        }
        let mut leaves = 0;
        let mut stack = vec![index];
        while let Some(i) = stack.pop() {
            match self.nodes[i].children {
                Some([a, b]) => stack.extend([a, b]),
                None => leaves += 1,
            }
        }
        leaves
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::BroadphaseKind;
    use crate::scene::{Scene, Simulation};

    fn sim(text: &str, kind: BroadphaseKind) -> Simulation {
        let scene = Scene::parse(text, "snapshot-test.ron", false).expect("valid scene");
        Simulation::new(&scene, kind).expect("the scene runs")
    }

    fn generated(dimensions: u8, count: u32) -> String {
        let (world, speed) = if dimensions == 2 {
            ("(min: (0.0, 0.0), max: (40.0, 40.0))", "(0.0, 3.0)")
        } else {
            (
                "(min: (0.0, 0.0, 0.0), max: (30.0, 30.0, 30.0))",
                "(0.0, 3.0)",
            )
        };
        format!(
            r#"(format_version: 1, name: "g", dimensions: {dimensions}, world: {world},
                dt: 0.016666668, tree: (margin: 0.2, velocity_lookahead: 0.0), spheres: [],
                generate: Some((count: {count}, radius: (0.5, 1.5), speed: {speed}, seed: 7)),
                view: None)"#
        )
    }

    /// What a snapshot must say of `sim`, checked item by item against the simulation.
    fn assert_matches(snap: &Snapshot, sim: &Simulation, plane: Plane) {
        let live: Vec<_> = sim.bodies().iter().filter(|b| b.alive).collect();
        assert_eq!(snap.spheres.len(), live.len());
        let report = sim.report();
        let axes = plane.axes();
        for (item, body) in snap.spheres.iter().zip(&live) {
            let s = &body.sphere;
            assert_eq!(item.id, s.id);
            assert_eq!(
                snap.sphere_index(s.id).map(|i| snap.spheres[i].id),
                Some(s.id)
            );
            assert_eq!(item.center, plane.project(s.center));
            let fat = sim
                .broadphase()
                .fat_aabb(s.id)
                .map(|f| project_box(&f, axes));
            assert_eq!(item.fat, fat, "sphere {}: fat box", s.id);
            if sim.dimensions() == 3 {
                let i = snap.sphere_index(s.id).expect("listed");
                assert_eq!(snap.fat_boxes_3d[i], sim.broadphase().fat_aabb(s.id));
            }
            let touching = report.contacts.iter().any(|&(a, b)| a == s.id || b == s.id);
            assert_eq!(item.colliding, touching, "sphere {}", s.id);
            if let Some(k) = item.node {
                let leaf = &snap.nodes[k];
                assert_eq!(leaf.sphere, Some(s.id));
                assert_eq!(leaf.children, None);
                let proxy = leaf.proxy.expect("a leaf has a proxy");
                assert_eq!(snap.proxy_node(proxy), Some(k));
                assert_eq!(snap.proxy_sphere(proxy), Some(s.id));
                let stale = ProxyId {
                    generation: proxy.generation.wrapping_add(1),
                    ..proxy
                };
                assert_eq!(snap.proxy_node(stale), None, "a stale handle names nothing");
            } else {
                assert!(snap.nodes.is_empty(), "a tree has a leaf for every sphere");
            }
        }
        let pairs: Vec<(u32, u32)> = snap
            .pairs
            .iter()
            .map(|&(i, j)| (snap.spheres[i].id, snap.spheres[j].id))
            .collect();
        assert_eq!(pairs, report.candidate_pairs);
        // Nodes: parents first, links both ways, depths, one root.
        for (i, n) in snap.nodes.iter().enumerate() {
            assert_eq!(snap.node_index(n.id), Some(i));
            match n.parent {
                None => assert_eq!((i, n.depth), (0, 0), "only the first node is the root"),
                Some(p) => {
                    assert!(p < i);
                    assert_eq!(n.depth, snap.nodes[p].depth + 1);
                    assert!(snap.nodes[p].children.expect("a parent").contains(&i));
                }
            }
            if let Some([a, b]) = n.children {
                assert!(a != b && snap.nodes[a].parent == Some(i));
                assert_eq!(snap.nodes[b].parent, Some(i));
                assert_eq!(n.rect.union(&snap.nodes[a].rect), n.rect);
                assert_eq!(n.rect.union(&snap.nodes[b].rect), n.rect);
            }
        }
        // 3D boxes: one a node and a sphere in 3D, projecting to the plane's boxes; none in 2D.
        if sim.dimensions() == 3 {
            assert_eq!(snap.node_boxes_3d.len(), snap.nodes.len());
            assert_eq!(snap.fat_boxes_3d.len(), snap.spheres.len());
            for (n, b) in snap.nodes.iter().zip(&snap.node_boxes_3d) {
                assert_eq!(project_box(b, axes), n.rect);
            }
        } else {
            assert_eq!((snap.node_boxes_3d.len(), snap.fat_boxes_3d.len()), (0, 0));
        }
        let deepest = snap.nodes.iter().map(|n| n.depth).max().unwrap_or(0);
        assert_eq!(snap.max_depth, deepest);
    }

    #[test]
    fn a_refreshed_snapshot_is_a_fresh_one_of_every_broad_phase() {
        for (text, plane) in [
            (generated(2, 300), Plane::XY),
            (generated(3, 200), Plane::XZ),
        ] {
            for kind in [
                BroadphaseKind::Tree,
                BroadphaseKind::Brute,
                BroadphaseKind::Sap,
            ] {
                let mut sim = sim(&text, kind);
                let mut kept = Snapshot::take(&Sim::Scene(sim.clone()), plane);
                assert_matches(&kept, &sim, plane);
                for _ in 0..40 {
                    sim.step().expect("step");
                    kept.refresh(&Sim::Scene(sim.clone()), plane);
                    assert_matches(&kept, &sim, plane);
                    let fresh = Snapshot::take(&Sim::Scene(sim.clone()), plane);
                    assert_eq!(kept.spheres, fresh.spheres);
                    assert_eq!(kept.nodes, fresh.nodes);
                    assert_eq!(kept.pairs, fresh.pairs);
                }
                assert!(
                    kept.spheres.iter().any(|s| s.colliding),
                    "the scene has contacts"
                );
            }
        }
    }

    /// Static boxes are listed apart from the spheres, sorted by id and projected, on every
    /// broad phase, and fitting frames them.
    #[test]
    fn static_boxes_are_a_list_of_their_own() {
        let text = crate::scene::Scene::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenes/static-level.ron"
        )))
        .expect("the shipped level")
        .to_text(false)
        .expect("text");
        for kind in [BroadphaseKind::Tree, BroadphaseKind::Sap] {
            let sim = Sim::Scene(sim(&text, kind));
            let snap = Snapshot::take(&sim, Plane::XY);
            let ids: Vec<u32> = snap.statics.iter().map(|b| b.id).collect();
            assert_eq!(ids, [100, 101, 102, 103, 104, 105, 106]);
            assert_eq!(
                snap.statics[1].rect,
                WorldRect::new(Vec2::new(4.0, 7.0), Vec2::new(12.0, 8.0))
            );
            assert_eq!(snap.statics[1].world, sim.static_boxes()[1].aabb());
            // No static box is a sphere; fitting frames every one. Without a tree (whose root
            // holds the floor's fat box) the floor, which reaches the walls, bounds the content
            // from (0, 0) to x = 40.
            assert!(snap.statics.iter().all(|b| snap.sphere(b.id).is_none()));
            // The views name each kind of body by what it is.
            assert_eq!(snap.body_name(101), "static box 101");
            let first = snap.spheres[0].id;
            assert_eq!(snap.body_name(first), format!("sphere {first}"));
            assert_eq!(snap.body_name(99_999), "body 99999");
            let bounds = snap.content_bounds().expect("content");
            assert!(snap.statics.iter().all(|b| bounds.union(&b.rect) == bounds));
            if kind == BroadphaseKind::Sap {
                assert_eq!((bounds.min.x, bounds.min.y), (0.0, 0.0));
                assert_eq!(bounds.max.x, 40.0);
            }
        }
    }

    #[test]
    fn a_received_tree_is_laid_parents_first_whatever_order_its_nodes_came_in() {
        use crate::stream::engine::{EngineTree, NodeKind, TreeNode};
        let node = |id, parent, kind, x0: f32, x1: f32, height| TreeNode {
            id,
            parent,
            kind,
            min: [x0, 0.0, 0.0],
            max: [x1, 1.0, 0.0],
            height,
            enlarged: false,
        };
        // Root 7 over (5 over leaves 1, 2) and leaf 3; sent children first.
        let tree = EngineTree {
            root: Some(7),
            partial: false,
            nodes: vec![
                node(1, Some(5), NodeKind::Leaf(10), 0.0, 1.0, 0),
                node(2, Some(5), NodeKind::Leaf(11), 1.0, 2.0, 0),
                node(3, Some(7), NodeKind::Leaf(12), 2.0, 3.0, 0),
                node(5, Some(7), NodeKind::Branch([1, 2]), 0.0, 2.0, 1),
                node(7, None, NodeKind::Branch([5, 3]), 0.0, 3.0, 2),
                // Not reached from the root: left out.
                node(9, None, NodeKind::Leaf(13), 5.0, 6.0, 0),
            ],
        };
        let mut snap = Snapshot::default();
        snap.use_tree(&tree, Plane::XY);
        let laid: Vec<(u32, Option<usize>, u32)> = snap
            .nodes
            .iter()
            .map(|n| (n.id.0, n.parent, n.depth))
            .collect();
        assert_eq!(
            laid,
            [
                (7, None, 0),
                (5, Some(0), 1),
                (1, Some(1), 2),
                (2, Some(1), 2),
                (3, Some(0), 1)
            ]
        );
        assert_eq!(snap.nodes[0].children, Some([1, 4]));
        assert_eq!(snap.nodes[1].children, Some([2, 3]));
        assert_eq!(snap.max_depth, 2);
        assert_eq!(snap.node_index(NodeId(3)), Some(4));
        assert_eq!(snap.node_index(NodeId(9)), None);

        // Ids anywhere in u32 (a table of them would take gigabytes): searched instead.
        let far = |id: u32| id.wrapping_mul(0x9E37_79B9) | 0x8000_0000;
        let mut sparse = tree.clone();
        for n in &mut sparse.nodes {
            n.id = far(n.id);
            n.parent = n.parent.map(far);
            if let NodeKind::Branch([a, b]) = n.kind {
                n.kind = NodeKind::Branch([far(a), far(b)]);
            }
        }
        sparse.root = sparse.root.map(far);
        snap.use_tree(&sparse, Plane::XY);
        let ids: Vec<u32> = snap.nodes.iter().map(|n| n.id.0).collect();
        assert_eq!(ids, [far(7), far(5), far(1), far(2), far(3)]);
        assert!(snap.node_slot.len() < 2048, "no table of far ids");
        for (i, n) in snap.nodes.iter().enumerate() {
            assert_eq!(snap.node_index(n.id), Some(i));
        }
        assert_eq!(snap.node_index(NodeId(far(9))), None);
        assert_eq!(snap.nodes[0].children, Some([1, 4]));
    }

    #[test]
    fn sparse_ids_are_found_by_search() {
        let text = r#"(format_version: 1, name: "sparse", dimensions: 2,
            world: (min: (0.0, 0.0), max: (20.0, 20.0)), dt: 0.016666668,
            tree: (margin: 0.1, velocity_lookahead: 0.0),
            spheres: [
                (id: 3, center: (5.0, 5.0), radius: 1.0, velocity: (0.0, 0.0)),
                (id: 4000000000, center: (6.0, 5.0), radius: 1.0, velocity: (0.0, 0.0)),
                (id: 70000, center: (15.0, 15.0), radius: 1.0, velocity: (0.0, 0.0)),
            ],
            generate: None, view: None)"#;
        let sim = sim(text, BroadphaseKind::Tree);
        let snap = Snapshot::take(&Sim::Scene(sim.clone()), Plane::XY);
        assert!(snap.sphere_slot.is_empty(), "no table for ids this sparse");
        assert_matches(&snap, &sim, Plane::XY);
        assert_eq!(snap.sphere(4_000_000_000).map(|s| s.center.x), Some(6.0));
        assert_eq!(snap.sphere(5), None);
        assert_eq!(snap.pairs.len(), 1);
        assert!(snap.spheres[0].colliding && snap.spheres[2].colliding);
        assert!(!snap.spheres[1].colliding);
    }
}
