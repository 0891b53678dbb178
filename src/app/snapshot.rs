//! What the views draw, taken from the simulation once per change (not once per frame): the
//! spheres and every tree node projected onto the view plane, with the links between them.

use super::camera::{Plane, WorldRect};
use crate::broadphase::TreeView;
use crate::scene::Simulation;
use crate::tree::{Aabb, DynamicTree, NodeId, ProxyId, Vector};
use glam::{Vec2, Vec3};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for the small integer keys of the snapshot's maps (ids, slots, node indices):
/// one multiply a word, where the standard SipHash costs a few percent of a big frame. Keys
/// come from the program, not from outside, so flooding is no concern; nothing depends on
/// the maps' order.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A map keyed by small integers, hashed with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// One live sphere, projected.
#[derive(Clone, Debug, PartialEq)]
pub struct SphereItem {
    /// The sphere's id.
    pub id: u32,
    /// Its label, when the scene gives one.
    pub label: Option<String>,
    /// Centre in the world (3D; z = 0 in 2D).
    pub center_world: Vec3,
    /// Centre on the view plane.
    pub center: Vec2,
    /// Radius, world units.
    pub radius: f32,
    /// Velocity in the world.
    pub velocity_world: Vec3,
    /// Velocity on the view plane.
    pub velocity: Vec2,
    /// The tight box on the view plane.
    pub tight: WorldRect,
    /// The fat box on the view plane (`None` when the broad phase holds none).
    pub fat: Option<WorldRect>,
    /// The fat box in the world.
    pub fat_world: Option<Aabb<Vec3>>,
    /// True when it touches another sphere (its tight box is drawn red).
    pub colliding: bool,
    /// Index of its leaf in [`Snapshot::nodes`], for the tree broad phase.
    pub node: Option<usize>,
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
    /// Live spheres sorted by id.
    pub spheres: Vec<SphereItem>,
    /// Tree nodes, parents before children (empty for brute force and sweep-and-prune).
    pub nodes: Vec<NodeItem>,
    /// Candidate pairs as indices into `spheres`.
    pub pairs: Vec<(usize, usize)>,
    /// The walls on the view plane.
    pub walls: Option<WorldRect>,
    /// Deepest node depth.
    pub max_depth: u32,
    /// Sphere id to index in `spheres`.
    pub sphere_index: IdMap<u32, usize>,
    /// Proxy to sphere id, for naming the tree's events.
    pub proxy_sphere: IdMap<ProxyId, u32>,
    /// Node id to index in `nodes`.
    pub node_slot: IdMap<NodeId, usize>,
    /// Proxy to the index of its leaf in `nodes`.
    pub proxy_node: IdMap<ProxyId, usize>,
}

fn project_box<V: Vector>(b: &Aabb<V>, (a, c): (usize, usize)) -> WorldRect {
    let get = |v: V, axis: usize| if axis < V::DIM { v.axis(axis) } else { 0.0 };
    WorldRect::new(
        Vec2::new(get(b.min, a), get(b.min, c)),
        Vec2::new(get(b.max, a), get(b.max, c)),
    )
}

fn extract_tree<V: Vector>(tree: &DynamicTree<V, u32>, axes: (usize, usize), out: &mut Snapshot) {
    // NodeId -> position in `out.nodes`; node ids are small pool indices.
    let mut slot: Vec<u32> = Vec::new();
    let mut max_depth = 0;
    tree.walk(|id, view, depth| {
        let i = out.nodes.len();
        let k = id.0 as usize;
        if slot.len() <= k {
            slot.resize(k + 1, u32::MAX);
        }
        slot[k] = i as u32;
        let parent = view
            .parent
            .and_then(|p| slot.get(p.0 as usize).copied())
            .filter(|&p| p != u32::MAX)
            .map(|p| p as usize);
        let sphere = view.proxy.and_then(|p| tree.user_data(p).ok());
        max_depth = max_depth.max(depth);
        out.nodes.push(NodeItem {
            id,
            rect: project_box(&view.aabb, axes),
            depth,
            height: view.height,
            parent,
            children: None,
            sphere,
            proxy: view.proxy,
        });
        if let (Some(proxy), Some(sphere)) = (view.proxy, sphere) {
            out.proxy_sphere.insert(proxy, sphere);
        }
    });
    // Children follow their parents in the walk, so link them in a second pass.
    let mut kids: Vec<[usize; 2]> = vec![[usize::MAX; 2]; out.nodes.len()];
    for i in 0..out.nodes.len() {
        if let Some(p) = out.nodes[i].parent {
            let k = &mut kids[p];
            if k[0] == usize::MAX {
                k[0] = i;
            } else {
                k[1] = i;
            }
        }
    }
    for (node, k) in out.nodes.iter_mut().zip(kids) {
        if k[1] != usize::MAX {
            node.children = Some(k);
        }
    }
    out.max_depth = max_depth;
}

impl Snapshot {
    /// Takes what the views need from the simulation, projected onto `plane`.
    #[must_use]
    pub fn take(sim: &Simulation, plane: Plane) -> Snapshot {
        let mut out = Snapshot::default();
        let bp = sim.broadphase();
        let axes = plane.axes();
        match bp.tree_view() {
            Some(TreeView::D2(tree)) => extract_tree(tree, axes, &mut out),
            Some(TreeView::D3(tree)) => extract_tree(tree, axes, &mut out),
            None => {}
        }
        let mut leaf_of: IdMap<u32, usize> =
            IdMap::with_capacity_and_hasher(out.nodes.len(), Default::default());
        out.node_slot.reserve(out.nodes.len());
        for (i, n) in out.nodes.iter().enumerate() {
            out.node_slot.insert(n.id, i);
            if let Some(s) = n.sphere {
                leaf_of.insert(s, i);
            }
            if let Some(p) = n.proxy {
                out.proxy_node.insert(p, i);
            }
        }
        let report = sim.report();
        let mut colliding: IdMap<u32, ()> =
            IdMap::with_capacity_and_hasher(report.contacts.len() * 2, Default::default());
        for &(a, b) in &report.contacts {
            colliding.insert(a, ());
            colliding.insert(b, ());
        }
        for body in sim.bodies().iter().filter(|b| b.alive) {
            let s = &body.sphere;
            let r = s.radius;
            let tight3 = Aabb::new(s.center - Vec3::splat(r), s.center + Vec3::splat(r));
            let fat_world = bp.fat_aabb(s.id);
            out.sphere_index.insert(s.id, out.spheres.len());
            out.spheres.push(SphereItem {
                id: s.id,
                label: s.label.clone(),
                center_world: s.center,
                center: plane.project(s.center),
                radius: r,
                velocity_world: s.velocity,
                velocity: plane.project(s.velocity),
                tight: project_box(&tight3, axes),
                fat: fat_world.as_ref().map(|f| project_box(f, axes)),
                fat_world,
                colliding: colliding.contains_key(&s.id),
                node: leaf_of.get(&s.id).copied(),
            });
        }
        for &(a, b) in &report.candidate_pairs {
            if let (Some(&i), Some(&j)) = (out.sphere_index.get(&a), out.sphere_index.get(&b)) {
                out.pairs.push((i, j));
            }
        }
        out
    }

    /// Sets the walls (from the scene) on the view plane.
    pub fn set_walls(&mut self, world: &Aabb<Vec3>, plane: Plane) {
        self.walls = Some(project_box(world, plane.axes()));
    }

    /// The rectangle holding the walls and every sphere and box (for "fit").
    #[must_use]
    pub fn bounds(&self) -> Option<WorldRect> {
        let mut r: Option<WorldRect> = self.walls;
        let mut add = |x: WorldRect| r = Some(r.map_or(x, |r| r.union(&x)));
        for s in &self.spheres {
            add(s.fat.unwrap_or(s.tight));
        }
        if let Some(root) = self.nodes.first() {
            add(root.rect);
        }
        r
    }

    /// The sphere with this id.
    #[must_use]
    pub fn sphere(&self, id: u32) -> Option<&SphereItem> {
        self.sphere_index.get(&id).map(|&i| &self.spheres[i])
    }

    /// Index in `nodes` of the node with this id.
    #[must_use]
    pub fn node_index(&self, id: NodeId) -> Option<usize> {
        self.node_slot.get(&id).copied()
    }
}
