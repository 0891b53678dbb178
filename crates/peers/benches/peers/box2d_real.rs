//! The real Box2D v3 tree: its own C code (`b2DynamicTree`, commit 56edae79 through boxdd-sys
//! 0.6 and the `box2d-tree` crate), driven over the workload as Box2D's broad phase drives it,
//! beside the Rust port in `box2d.rs`: proxies created one at a time (`CreateProxy`, with
//! rotations), each moved proxy enlarged in place (`EnlargeProxy`) and the enlarged part
//! rebuilt every step (`Rebuild(tree, false)`, Box2D's `b2BroadPhase_RebuildTrees`), then the
//! move buffer's queries feed a persistent pair set; pairs whose fat boxes stopped overlapping
//! leave it (Box2D destroys such contacts in its contact update).

use aabb_debugger::broadphase::box2d::{PairSet, pair_key, to_box2};
use aabb_debugger::workload::{PairTally, Workload, WorkloadBroadphase};
use box2d_tree::{ALL_BITS, Box2, DEFAULT_CATEGORY_BITS, Tree};

/// Box2D's broad phase over the workload: its tree, the fat boxes, the move buffer and the pair
/// set.
pub struct Box2dReal {
    tree: Tree,
    /// The proxy of each circle.
    proxy_of: Vec<u32>,
    /// The circle of each proxy (proxy ids are node indices).
    circle_of: Vec<u32>,
    /// The fat box of each circle as the tree holds it (Box2D's `shape->fatAABB`).
    fat: Vec<Box2>,
    /// Per circle: in the move buffer this step.
    moved_flag: Vec<bool>,
    pair_set: PairSet,
    /// The pair set's pairs as circle ids, `(a, b)`, `a < b`.
    pairs: Vec<(u32, u32)>,
}

impl Box2dReal {
    pub fn new() -> Self {
        Self {
            tree: Tree::new(),
            proxy_of: Vec::new(),
            circle_of: Vec::new(),
            fat: Vec::new(),
            moved_flag: Vec::new(),
            pair_set: PairSet::default(),
            pairs: Vec::new(),
        }
    }
}

impl WorkloadBroadphase for Box2dReal {
    fn bytes(&self) -> Option<usize> {
        Some(
            self.tree.byte_count()
                + (self.proxy_of.capacity() + self.circle_of.capacity()) * 4
                + self.fat.capacity() * std::mem::size_of::<Box2>(),
        )
    }

    fn name(&self) -> String {
        "Box2D v3 tree (real, C)".to_owned()
    }

    fn build(&mut self, workload: &Workload) {
        *self = Self::new();
        self.fat = workload.fat_boxes().iter().map(to_box2).collect();
        self.moved_flag = vec![false; self.fat.len()];
        for (i, b) in self.fat.iter().enumerate() {
            let proxy = self
                .tree
                .create_proxy(*b, DEFAULT_CATEGORY_BITS, i as u64)
                .expect("the workload's boxes are valid");
            self.proxy_of.push(proxy);
            if self.circle_of.len() <= proxy as usize {
                self.circle_of.resize(proxy as usize + 1, u32::MAX);
            }
            self.circle_of[proxy as usize] = i as u32;
        }
        // Box2D buffers every new proxy as moved: the first pair update finds all pairs.
        for i in 0..self.fat.len() as u32 {
            let (set, pairs, circle_of) = (&mut self.pair_set, &mut self.pairs, &self.circle_of);
            self.tree
                .query(self.fat[i as usize], ALL_BITS, |p, _| {
                    let j = circle_of[p as usize];
                    if j != i && set.insert(pair_key(i, j)) {
                        pairs.push((i.min(j), i.max(j)));
                    }
                    true
                })
                .expect("a tree of sane height");
        }
    }

    fn update(&mut self, workload: &Workload) -> usize {
        let fat = workload.fat_boxes();
        for &i in workload.moved() {
            let b = to_box2(&fat[i as usize]);
            self.fat[i as usize] = b;
            self.tree
                .enlarge_proxy(self.proxy_of[i as usize], b)
                .expect("a live proxy, a box not inside the old one");
        }
        // b2BroadPhase_RebuildTrees: partial rebuild of the enlarged nodes.
        self.tree.rebuild(false);
        workload.moved().len()
    }

    fn find_pairs(&mut self, workload: &Workload, tally: &mut PairTally) {
        // Contacts whose fat boxes stopped overlapping are destroyed.
        let (fat, set) = (&self.fat, &mut self.pair_set);
        self.pairs.retain(|&(a, b)| {
            let keep = fat[a as usize].overlaps(&fat[b as usize]);
            if !keep {
                set.remove(&pair_key(a, b));
            }
            keep
        });
        // The move buffer: each moved proxy queries the tree; a pair of two moved proxies is
        // added by the query of the larger id only.
        let moved = workload.moved();
        for &i in moved {
            self.moved_flag[i as usize] = true;
        }
        for &i in moved {
            let q = self.fat[i as usize];
            let (set, pairs, flags, circle_of) = (
                &mut self.pair_set,
                &mut self.pairs,
                &self.moved_flag,
                &self.circle_of,
            );
            self.tree
                .query(q, ALL_BITS, |p, _| {
                    let j = circle_of[p as usize];
                    if j == i || (flags[j as usize] && j < i) {
                        return true;
                    }
                    if set.insert(pair_key(i, j)) {
                        pairs.push((i.min(j), i.max(j)));
                    }
                    true
                })
                .expect("a tree of sane height");
        }
        for &i in moved {
            self.moved_flag[i as usize] = false;
        }
        for &(a, b) in &self.pairs {
            tally.add(a, b);
        }
    }
}
