//! The peers of the benchmark, each driving the standard workload through
//! [`WorkloadBroadphase`]: parry2d's `Bvh`, the `bvh` crate and `rstar`, used the way their
//! documentation recommends for moving objects, obvhs's `Bvh2` as avian drives it (`obvhs_bvh`),
//! and Box2D v3's tree twice: the real one (its C code, `box2d_real`) and a Rust port
//! (`box2d`), both driven as Box2D's broad phase drives it.

pub mod box2d;
pub mod box2d_real;
pub mod obvhs_bvh;

pub use box2d::Box2dTree;
pub use box2d_real::Box2dReal;
pub use obvhs_bvh::ObvhsBvh;

use aabb_debugger::workload::{MARGIN, PairTally, Workload, WorkloadBroadphase};
use parry2d::bounding_volume::Aabb as ParryAabb;
use parry2d::math::Vector as ParryVector;
use parry2d::partitioning::{Bvh, BvhBuildStrategy, BvhLeafUpdateStatus, BvhWorkspace};

// ---------------------------------------------------------------------------------------------
// parry2d 0.31 `Bvh`

fn parry_aabb(b: &aabb_debugger::tree::Aabb<glam::Vec2>) -> ParryAabb {
    ParryAabb::new(
        ParryVector::new(b.min.x, b.min.y),
        ParryVector::new(b.max.x, b.max.y),
    )
}

/// parry2d's `Bvh` as rapier drives it: every circle's tight box goes to
/// `insert_or_update_partially` with the workload's margin as the change-detection margin (its
/// leaves hold exactly the workload's fat boxes), then `optimize_incremental`, `refit`, and the
/// self traversal `traverse_bvtt_single_tree`.
pub struct ParryBvh {
    bvh: Bvh,
    workspace: BvhWorkspace,
}

impl ParryBvh {
    pub fn new() -> Self {
        Self {
            bvh: Bvh::new(),
            workspace: BvhWorkspace::default(),
        }
    }
}

impl WorkloadBroadphase for ParryBvh {
    fn bytes(&self) -> Option<usize> {
        Some(self.bvh.total_memory_size())
    }

    fn name(&self) -> String {
        "parry2d Bvh".to_owned()
    }

    fn build(&mut self, workload: &Workload) {
        let leaves: Vec<ParryAabb> = workload.fat_boxes().iter().map(parry_aabb).collect();
        self.bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves);
    }

    fn update(&mut self, workload: &Workload) -> usize {
        let mut changed = 0;
        for (i, c) in workload.circles().iter().enumerate() {
            let status =
                self.bvh
                    .insert_or_update_partially(parry_aabb(&c.tight()), i as u32, MARGIN);
            changed += usize::from(status != BvhLeafUpdateStatus::Unchanged);
        }
        self.bvh.optimize_incremental(&mut self.workspace);
        self.bvh.refit(&mut self.workspace);
        changed
    }

    fn find_pairs(&mut self, _workload: &Workload, tally: &mut PairTally) {
        self.bvh
            .traverse_bvtt_single_tree::<false>(&mut self.workspace, &mut |a, b| tally.add(a, b));
    }
}

// ---------------------------------------------------------------------------------------------
// bvh 0.13

type BvhAabb = bvh::aabb::Aabb<f32, 2>;

/// One shape of the `bvh` crate: a fat box and the node that holds it.
#[derive(Clone, Copy, Debug)]
struct BvhShape {
    aabb: BvhAabb,
    id: u32,
    node_index: usize,
}

impl bvh::aabb::Bounded<f32, 2> for BvhShape {
    fn aabb(&self) -> BvhAabb {
        self.aabb
    }
}

impl bvh::bounding_hierarchy::BHShape<f32, 2> for BvhShape {
    fn set_bh_node_index(&mut self, index: usize) {
        self.node_index = index;
    }
    fn bh_node_index(&self) -> usize {
        self.node_index
    }
}

fn bvh_aabb(b: &aabb_debugger::tree::Aabb<glam::Vec2>) -> BvhAabb {
    BvhAabb::with_bounds(
        nalgebra::Point2::new(b.min.x, b.min.y),
        nalgebra::Point2::new(b.max.x, b.max.y),
    )
}

/// The `bvh` crate: moved shapes get their new fat box; then either a full rebuild
/// (`rebuild`) or `update_shapes` (remove and add the moved shapes); pairs by one
/// `traverse_iterator` query per shape.
pub struct BvhCrate {
    rebuild: bool,
    shapes: Vec<BvhShape>,
    bvh: bvh::bvh::Bvh<f32, 2>,
    moved: Vec<usize>,
}

impl BvhCrate {
    pub fn new(rebuild: bool) -> Self {
        Self {
            rebuild,
            shapes: Vec::new(),
            bvh: bvh::bvh::Bvh { nodes: Vec::new() },
            moved: Vec::new(),
        }
    }
}

impl WorkloadBroadphase for BvhCrate {
    fn bytes(&self) -> Option<usize> {
        Some(
            self.bvh.nodes.capacity() * std::mem::size_of::<bvh::bvh::BvhNode<f32, 2>>()
                + self.shapes.capacity() * std::mem::size_of::<BvhShape>(),
        )
    }

    fn name(&self) -> String {
        if self.rebuild {
            "bvh (rebuild)".to_owned()
        } else {
            "bvh (update_shapes)".to_owned()
        }
    }

    fn build(&mut self, workload: &Workload) {
        self.shapes = workload
            .fat_boxes()
            .iter()
            .enumerate()
            .map(|(i, b)| BvhShape {
                aabb: bvh_aabb(b),
                id: i as u32,
                node_index: 0,
            })
            .collect();
        self.bvh = bvh::bvh::Bvh::build(&mut self.shapes);
    }

    fn update(&mut self, workload: &Workload) -> usize {
        let fat = workload.fat_boxes();
        self.moved.clear();
        for &i in workload.moved() {
            self.shapes[i as usize].aabb = bvh_aabb(&fat[i as usize]);
            self.moved.push(i as usize);
        }
        if self.rebuild {
            self.bvh = bvh::bvh::Bvh::build(&mut self.shapes);
        } else {
            self.bvh.update_shapes(&self.moved, &mut self.shapes);
        }
        workload.moved().len()
    }

    fn find_pairs(&mut self, _workload: &Workload, tally: &mut PairTally) {
        for a in &self.shapes {
            for b in self.bvh.traverse_iterator(&a.aabb, &self.shapes) {
                if a.id < b.id {
                    tally.add(a.id, b.id);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// rstar 0.14

type RstarItem = rstar::primitives::GeomWithData<rstar::primitives::Rectangle<[f32; 2]>, u32>;

fn rstar_item(b: &aabb_debugger::tree::Aabb<glam::Vec2>, id: u32) -> RstarItem {
    RstarItem::new(
        rstar::primitives::Rectangle::from_corners([b.min.x, b.min.y], [b.max.x, b.max.y]),
        id,
    )
}

/// `rstar`'s R*-tree: either bulk loaded again each step (`bulk`) or kept with moved items
/// removed and inserted again; pairs by the tree's join with itself
/// (`intersection_candidates_with_other_tree`).
pub struct RstarTree {
    bulk: bool,
    items: Vec<RstarItem>,
    tree: rstar::RTree<RstarItem>,
}

impl RstarTree {
    pub fn new(bulk: bool) -> Self {
        Self {
            bulk,
            items: Vec::new(),
            tree: rstar::RTree::new(),
        }
    }
}

impl WorkloadBroadphase for RstarTree {
    fn name(&self) -> String {
        if self.bulk {
            "rstar (bulk load)".to_owned()
        } else {
            "rstar (remove+insert)".to_owned()
        }
    }

    fn build(&mut self, workload: &Workload) {
        self.items = workload
            .fat_boxes()
            .iter()
            .enumerate()
            .map(|(i, b)| rstar_item(b, i as u32))
            .collect();
        self.tree = rstar::RTree::bulk_load(self.items.clone());
    }

    fn update(&mut self, workload: &Workload) -> usize {
        let fat = workload.fat_boxes();
        for &i in workload.moved() {
            let new = rstar_item(&fat[i as usize], i);
            if !self.bulk {
                self.tree.remove(&self.items[i as usize]);
                self.tree.insert(new);
            }
            self.items[i as usize] = new;
        }
        if self.bulk {
            self.tree = rstar::RTree::bulk_load(self.items.clone());
        }
        workload.moved().len()
    }

    fn find_pairs(&mut self, _workload: &Workload, tally: &mut PairTally) {
        for (a, b) in self
            .tree
            .intersection_candidates_with_other_tree(&self.tree)
        {
            if a.data < b.data {
                tally.add(a.data, b.data);
            }
        }
    }
}
