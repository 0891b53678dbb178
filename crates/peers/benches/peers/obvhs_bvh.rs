//! obvhs 0.3's `Bvh2`, the BVH under avian's broad phase (its collider tree), driven over the
//! workload the way avian drives it for moving colliders: built once with PLOC (avian's full
//! rebuild), then every moved proxy gets its new fat box with `resize_node` (the box set, the
//! ancestors refitted) and `reinsert_node` (moved to a better sibling when that lowers the
//! surface area); the moved proxies' boxes query the tree (`aabb_traverse`) and feed a
//! persistent pair set, from which pairs whose fat boxes stopped overlapping leave, as in the
//! Box2D peers. obvhs is 3D: every box is flat, z from 0 to 0.
//!
//! obvhs keeps no fat boxes of its own: avian tests every moving collider's box against its
//! enlarged box each step and hands the tree those that left. The default row does that test
//! inside the timed step, for every circle, as parry2d's `insert_or_update_partially` and our
//! tree do; the row "given moved" takes the workload's list of moved circles instead, as the
//! Box2D peers do (Box2D's solver makes that list). Both find the same circles (the same
//! rule and the same fat box, to the bit).

use aabb_debugger::broadphase::box2d::{PairSet, pair_key};
use aabb_debugger::workload::{PairTally, Workload, WorkloadBroadphase, fat_box};
use obvhs::aabb::Aabb;
use obvhs::bvh2::Bvh2;
use obvhs::ploc::{PlocBuilder, PlocSearchDistance, SortPrecision};

fn flat(b: &aabb_debugger::tree::Aabb<glam::Vec2>) -> Aabb {
    Aabb::new(
        [b.min.x, b.min.y, 0.0].into(),
        [b.max.x, b.max.y, 0.0].into(),
    )
}

/// obvhs's `Bvh2` as avian drives it: the tree, its builder, the fat boxes as the tree holds
/// them, the move flags and the persistent pair set.
pub struct ObvhsBvh {
    /// Test every circle's tight box against its fat box in the step (else take the
    /// workload's list of moved circles).
    check_bodies: bool,
    bvh: Bvh2,
    builder: PlocBuilder,
    /// The fat box of each circle, as the tree holds it.
    fat: Vec<Aabb>,
    /// The fat box of each circle in 2D, for the step's test (with `check_bodies`).
    fat_2d: Vec<aabb_debugger::tree::Aabb<glam::Vec2>>,
    /// The circles whose fat box changed this step, ascending.
    moved: Vec<u32>,
    /// Per circle: moved this step.
    moved_flag: Vec<bool>,
    pair_set: PairSet,
    /// The pair set's pairs as circle ids, `(a, b)`, `a < b`.
    pairs: Vec<(u32, u32)>,
}

impl ObvhsBvh {
    pub fn new(check_bodies: bool) -> Self {
        Self {
            check_bodies,
            bvh: Bvh2::default(),
            builder: PlocBuilder::default(),
            fat: Vec::new(),
            fat_2d: Vec::new(),
            moved: Vec::new(),
            moved_flag: Vec::new(),
            pair_set: PairSet::default(),
            pairs: Vec::new(),
        }
    }

    /// The circles whose fat boxes overlap `q` (leaf nodes hold one primitive each), `i` aside.
    fn query(&mut self, i: u32, only_unmoved_or_larger: bool) {
        let q = self.fat[i as usize];
        let (set, pairs, flags) = (&mut self.pair_set, &mut self.pairs, &self.moved_flag);
        self.bvh.aabb_traverse(q, |bvh, node| {
            let n = &bvh.nodes[node as usize];
            for k in n.first_index..n.first_index + n.prim_count {
                let j = bvh.primitive_indices[k as usize];
                if j == i || (only_unmoved_or_larger && flags[j as usize] && j < i) {
                    continue;
                }
                if set.insert(pair_key(i, j)) {
                    pairs.push((i.min(j), i.max(j)));
                }
            }
            true
        });
    }
}

impl WorkloadBroadphase for ObvhsBvh {
    fn bytes(&self) -> Option<usize> {
        Some(
            self.bvh.nodes.capacity() * std::mem::size_of::<obvhs::bvh2::node::Bvh2Node>()
                + (self.bvh.primitive_indices.capacity()
                    + self.bvh.primitives_to_nodes.capacity()
                    + self.bvh.parents.capacity())
                    * 4
                + self.fat.capacity() * std::mem::size_of::<Aabb>(),
        )
    }

    fn name(&self) -> String {
        if self.check_bodies {
            "obvhs Bvh2 (reinsert)".to_owned()
        } else {
            "obvhs Bvh2 (reinsert, given moved)".to_owned()
        }
    }

    fn build(&mut self, workload: &Workload) {
        *self = Self::new(self.check_bodies);
        self.fat = workload.fat_boxes().iter().map(flat).collect();
        if self.check_bodies {
            self.fat_2d = workload.fat_boxes().to_vec();
        }
        self.moved_flag = vec![false; self.fat.len()];
        let indices = (0..self.fat.len() as u32).collect();
        self.builder.build_with_bvh(
            &mut self.bvh,
            PlocSearchDistance::Minimum,
            &self.fat,
            indices,
            SortPrecision::U64,
            0,
        );
        self.bvh.init_primitives_to_nodes_if_uninit();
        self.bvh.init_parents_if_uninit();
        // Every new proxy counts as moved: the first pair update finds all pairs.
        for i in 0..self.fat.len() as u32 {
            self.query(i, false);
        }
    }

    fn update(&mut self, workload: &Workload) -> usize {
        self.moved.clear();
        if self.check_bodies {
            for (i, (c, fat)) in workload.circles().iter().zip(&mut self.fat_2d).enumerate() {
                let tight = c.tight();
                if !fat.contains(&tight) {
                    *fat = fat_box(&tight);
                    self.moved.push(i as u32);
                }
            }
        } else {
            self.moved.extend_from_slice(workload.moved());
        }
        let fat = workload.fat_boxes();
        for &i in &self.moved {
            let b = flat(&fat[i as usize]);
            self.fat[i as usize] = b;
            let node = self.bvh.primitives_to_nodes[i as usize] as usize;
            self.bvh.resize_node(node, b);
            self.bvh.reinsert_node(node);
        }
        self.moved.len()
    }

    fn find_pairs(&mut self, _workload: &Workload, tally: &mut PairTally) {
        // Pairs whose fat boxes stopped overlapping leave the set.
        let (fat, set) = (&self.fat, &mut self.pair_set);
        self.pairs.retain(|&(a, b)| {
            let keep = fat[a as usize].intersect_aabb(&fat[b as usize]);
            if !keep {
                set.remove(&pair_key(a, b));
            }
            keep
        });
        // Each moved proxy queries the tree; a pair of two moved proxies is added by the query
        // of the larger id only.
        let moved = std::mem::take(&mut self.moved);
        for &i in &moved {
            self.moved_flag[i as usize] = true;
        }
        for &i in &moved {
            self.query(i, true);
        }
        for &i in &moved {
            self.moved_flag[i as usize] = false;
        }
        self.moved = moved;
        for &(a, b) in &self.pairs {
            tally.add(a, b);
        }
    }
}
