//! A port of Box2D v3's `b2DynamicTree` and its broad-phase loop, written from the published
//! algorithm (not from its source text): SAH branch-and-bound sibling search, surface-area
//! rotations on insertion, `EnlargeProxy` plus a partial binned-SAH rebuild of the enlarged
//! nodes each step, and a move buffer whose queries feed a persistent pair set; pairs whose fat
//! boxes stopped overlapping leave the set (Box2D destroys such contacts in its contact update).

use aabb_debugger::workload::{PairTally, Workload, WorkloadBroadphase};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

const NULL: u32 = u32::MAX;
const ENLARGED: u16 = 1;
const BIN_COUNT: usize = 16;

/// A box as Box2D keeps it: lower and upper corners.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Box2 {
    lx: f32,
    ly: f32,
    ux: f32,
    uy: f32,
}

impl Box2 {
    #[inline]
    fn union(&self, o: &Self) -> Self {
        Self {
            lx: self.lx.min(o.lx),
            ly: self.ly.min(o.ly),
            ux: self.ux.max(o.ux),
            uy: self.uy.max(o.uy),
        }
    }
    /// Box2D's `b2Perimeter`.
    #[inline]
    fn perimeter(&self) -> f32 {
        2.0 * (self.ux - self.lx + self.uy - self.ly)
    }
    #[inline]
    fn contains(&self, o: &Self) -> bool {
        self.lx <= o.lx && self.ly <= o.ly && o.ux <= self.ux && o.uy <= self.uy
    }
    #[inline]
    fn overlaps(&self, o: &Self) -> bool {
        self.lx <= o.ux && o.lx <= self.ux && self.ly <= o.uy && o.ly <= self.uy
    }
    #[inline]
    fn center(&self) -> (f32, f32) {
        (0.5 * (self.lx + self.ux), 0.5 * (self.ly + self.uy))
    }
    /// Grows `self` to hold `o`; true when it changed (`b2EnlargeAABB`).
    #[inline]
    fn enlarge(&mut self, o: &Self) -> bool {
        if self.contains(o) {
            return false;
        }
        *self = self.union(o);
        true
    }
}

/// A node: box, parent (or next free), two children (a leaf keeps its proxy's user id in
/// `child1`), height and flags. 32 bytes (Box2D's has category bits and user data too: 40).
#[derive(Clone, Copy, Debug)]
struct Node {
    aabb: Box2,
    parent: u32,
    child1: u32,
    child2: u32,
    height: u16,
    flags: u16,
}

impl Node {
    #[inline]
    fn is_leaf(&self) -> bool {
        self.height == 0
    }
}

/// `b2DynamicTree`.
#[derive(Clone, Debug, Default)]
struct Tree {
    nodes: Vec<Node>,
    root: u32,
    free: u32,
    stack: Vec<u32>,
    rebuild_leaves: Vec<u32>,
    rebuild_centers: Vec<(f32, f32)>,
}

impl Tree {
    fn new() -> Self {
        Self {
            root: NULL,
            free: NULL,
            ..Self::default()
        }
    }

    fn alloc(&mut self) -> u32 {
        if self.free != NULL {
            let i = self.free;
            self.free = self.nodes[i as usize].parent;
            i
        } else {
            self.nodes.push(Node {
                aabb: Box2::default(),
                parent: NULL,
                child1: NULL,
                child2: NULL,
                height: 0,
                flags: 0,
            });
            (self.nodes.len() - 1) as u32
        }
    }

    fn release(&mut self, i: u32) {
        self.nodes[i as usize].parent = self.free;
        self.nodes[i as usize].height = u16::MAX;
        self.free = i;
    }

    fn create_proxy(&mut self, aabb: Box2, user: u32) -> u32 {
        let leaf = self.alloc();
        self.nodes[leaf as usize] = Node {
            aabb,
            parent: NULL,
            child1: user,
            child2: NULL,
            height: 0,
            flags: 0,
        };
        self.insert_leaf(leaf, true);
        leaf
    }

    /// `b2FindBestSibling`: branch and bound over the cost of making a new parent at each node
    /// (the new parent's perimeter plus the growth of every ancestor).
    fn find_best_sibling(&self, box_d: &Box2) -> u32 {
        let center_d = box_d.center();
        let area_d = box_d.perimeter();
        let nodes = &self.nodes;
        let mut index = self.root;
        let root_box = nodes[index as usize].aabb;
        let mut area_base = root_box.perimeter();
        let mut direct_cost = root_box.union(box_d).perimeter();
        let mut inherited_cost = 0.0f32;
        let mut best_sibling = index;
        let mut best_cost = direct_cost;
        while !nodes[index as usize].is_leaf() {
            let node = &nodes[index as usize];
            let (c1, c2) = (node.child1, node.child2);
            // Cost of a new parent here.
            let cost = direct_cost + inherited_cost;
            if cost < best_cost {
                best_sibling = index;
                best_cost = cost;
            }
            inherited_cost += direct_cost - area_base;

            let n1 = &nodes[c1 as usize];
            let n2 = &nodes[c2 as usize];
            let (leaf1, leaf2) = (n1.is_leaf(), n2.is_leaf());

            let mut lower_cost1 = f32::MAX;
            let direct_cost1 = n1.aabb.union(box_d).perimeter();
            let mut area1 = 0.0;
            if leaf1 {
                let cost1 = direct_cost1 + inherited_cost;
                if cost1 < best_cost {
                    best_sibling = c1;
                    best_cost = cost1;
                }
            } else {
                area1 = n1.aabb.perimeter();
                lower_cost1 = inherited_cost + direct_cost1 + (area_d - area1).min(0.0);
            }

            let mut lower_cost2 = f32::MAX;
            let direct_cost2 = n2.aabb.union(box_d).perimeter();
            let mut area2 = 0.0;
            if leaf2 {
                let cost2 = direct_cost2 + inherited_cost;
                if cost2 < best_cost {
                    best_sibling = c2;
                    best_cost = cost2;
                }
            } else {
                area2 = n2.aabb.perimeter();
                lower_cost2 = inherited_cost + direct_cost2 + (area_d - area2).min(0.0);
            }

            if leaf1 && leaf2 {
                break;
            }
            if best_cost <= lower_cost1 && best_cost <= lower_cost2 {
                break;
            }
            if lower_cost1 == lower_cost2 && !leaf1 {
                // Tie: descend towards the nearer centre.
                let (a, b) = n1.aabb.center();
                let (c, d) = n2.aabb.center();
                lower_cost1 = (a - center_d.0).powi(2) + (b - center_d.1).powi(2);
                lower_cost2 = (c - center_d.0).powi(2) + (d - center_d.1).powi(2);
            }
            if lower_cost1 < lower_cost2 && !leaf1 {
                index = c1;
                area_base = area1;
                direct_cost = direct_cost1;
            } else {
                index = c2;
                area_base = area2;
                direct_cost = direct_cost2;
            }
        }
        best_sibling
    }

    #[inline]
    fn fix(&mut self, i: u32) {
        let n = self.nodes[i as usize];
        let (a, b) = (self.nodes[n.child1 as usize], self.nodes[n.child2 as usize]);
        let node = &mut self.nodes[i as usize];
        node.aabb = a.aabb.union(&b.aabb);
        node.height = 1 + a.height.max(b.height);
    }

    /// `b2RotateNodes`: the rotation of A's grandchildren that most reduces the perimeters
    /// below A (B and C are A's children; D, E are B's; F, G are C's).
    fn rotate(&mut self, ia: u32) {
        let a = self.nodes[ia as usize];
        if a.height < 2 {
            return;
        }
        let (ib, ic) = (a.child1, a.child2);
        let (b, c) = (self.nodes[ib as usize], self.nodes[ic as usize]);
        if b.height == 0 {
            // B is a leaf and C is not: swap B with F or G.
            let (i_f, ig) = (c.child1, c.child2);
            let (f, g) = (self.nodes[i_f as usize], self.nodes[ig as usize]);
            let cost_base = c.aabb.perimeter();
            let aabb_bg = b.aabb.union(&g.aabb);
            let cost_bf = aabb_bg.perimeter();
            let aabb_bf = b.aabb.union(&f.aabb);
            let cost_bg = aabb_bf.perimeter();
            if cost_base < cost_bf && cost_base < cost_bg {
                return;
            }
            if cost_bf < cost_bg {
                self.nodes[ia as usize].child1 = i_f;
                self.nodes[ic as usize].child1 = ib;
                self.nodes[ib as usize].parent = ic;
                self.nodes[i_f as usize].parent = ia;
                let nc = &mut self.nodes[ic as usize];
                nc.aabb = aabb_bg;
                nc.height = 1 + b.height.max(g.height);
                nc.flags = (b.flags | g.flags) & ENLARGED;
                let hc = nc.height;
                let fc = nc.flags;
                let na = &mut self.nodes[ia as usize];
                na.height = 1 + hc.max(f.height);
                na.flags = (fc | f.flags) & ENLARGED;
            } else {
                self.nodes[ia as usize].child1 = ig;
                self.nodes[ic as usize].child2 = ib;
                self.nodes[ib as usize].parent = ic;
                self.nodes[ig as usize].parent = ia;
                let nc = &mut self.nodes[ic as usize];
                nc.aabb = aabb_bf;
                nc.height = 1 + b.height.max(f.height);
                nc.flags = (b.flags | f.flags) & ENLARGED;
                let hc = nc.height;
                let fc = nc.flags;
                let na = &mut self.nodes[ia as usize];
                na.height = 1 + hc.max(g.height);
                na.flags = (fc | g.flags) & ENLARGED;
            }
        } else if c.height == 0 {
            // C is a leaf and B is not: swap C with D or E.
            let (id, ie) = (b.child1, b.child2);
            let (d, e) = (self.nodes[id as usize], self.nodes[ie as usize]);
            let cost_base = b.aabb.perimeter();
            let aabb_ce = c.aabb.union(&e.aabb);
            let cost_cd = aabb_ce.perimeter();
            let aabb_cd = c.aabb.union(&d.aabb);
            let cost_ce = aabb_cd.perimeter();
            if cost_base < cost_cd && cost_base < cost_ce {
                return;
            }
            if cost_cd < cost_ce {
                self.nodes[ia as usize].child2 = id;
                self.nodes[ib as usize].child1 = ic;
                self.nodes[ic as usize].parent = ib;
                self.nodes[id as usize].parent = ia;
                let nb = &mut self.nodes[ib as usize];
                nb.aabb = aabb_ce;
                nb.height = 1 + c.height.max(e.height);
                nb.flags = (c.flags | e.flags) & ENLARGED;
                let (hb, fb) = (nb.height, nb.flags);
                let na = &mut self.nodes[ia as usize];
                na.height = 1 + hb.max(d.height);
                na.flags = (fb | d.flags) & ENLARGED;
            } else {
                self.nodes[ia as usize].child2 = ie;
                self.nodes[ib as usize].child2 = ic;
                self.nodes[ic as usize].parent = ib;
                self.nodes[ie as usize].parent = ia;
                let nb = &mut self.nodes[ib as usize];
                nb.aabb = aabb_cd;
                nb.height = 1 + c.height.max(d.height);
                nb.flags = (c.flags | d.flags) & ENLARGED;
                let (hb, fb) = (nb.height, nb.flags);
                let na = &mut self.nodes[ia as usize];
                na.height = 1 + hb.max(e.height);
                na.flags = (fb | e.flags) & ENLARGED;
            }
        } else {
            let (id, ie, i_f, ig) = (b.child1, b.child2, c.child1, c.child2);
            let (d, e) = (self.nodes[id as usize], self.nodes[ie as usize]);
            let (f, g) = (self.nodes[i_f as usize], self.nodes[ig as usize]);
            let area_b = b.aabb.perimeter();
            let area_c = c.aabb.perimeter();
            let mut best_cost = area_b + area_c;
            // 0 none, 1 B-F, 2 B-G, 3 C-D, 4 C-E, 5 D-F, 6 D-G.
            let mut best = 0;
            let candidates = [
                (1, area_b + b.aabb.union(&g.aabb).perimeter()),
                (2, area_b + b.aabb.union(&f.aabb).perimeter()),
                (3, area_c + c.aabb.union(&e.aabb).perimeter()),
                (4, area_c + c.aabb.union(&d.aabb).perimeter()),
                (
                    5,
                    f.aabb.union(&e.aabb).perimeter() + d.aabb.union(&g.aabb).perimeter(),
                ),
                (
                    6,
                    g.aabb.union(&e.aabb).perimeter() + d.aabb.union(&f.aabb).perimeter(),
                ),
            ];
            for (r, cost) in candidates {
                if cost < best_cost {
                    best_cost = cost;
                    best = r;
                }
            }
            match best {
                1 => {
                    self.nodes[ia as usize].child1 = i_f;
                    self.nodes[ic as usize].child1 = ib;
                    self.nodes[ib as usize].parent = ic;
                    self.nodes[i_f as usize].parent = ia;
                    self.fix_flags(ic);
                    self.fix_flags(ia);
                }
                2 => {
                    self.nodes[ia as usize].child1 = ig;
                    self.nodes[ic as usize].child2 = ib;
                    self.nodes[ib as usize].parent = ic;
                    self.nodes[ig as usize].parent = ia;
                    self.fix_flags(ic);
                    self.fix_flags(ia);
                }
                3 => {
                    self.nodes[ia as usize].child2 = id;
                    self.nodes[ib as usize].child1 = ic;
                    self.nodes[ic as usize].parent = ib;
                    self.nodes[id as usize].parent = ia;
                    self.fix_flags(ib);
                    self.fix_flags(ia);
                }
                4 => {
                    self.nodes[ia as usize].child2 = ie;
                    self.nodes[ib as usize].child2 = ic;
                    self.nodes[ic as usize].parent = ib;
                    self.nodes[ie as usize].parent = ia;
                    self.fix_flags(ib);
                    self.fix_flags(ia);
                }
                5 => {
                    self.nodes[ib as usize].child1 = i_f;
                    self.nodes[ic as usize].child1 = id;
                    self.nodes[id as usize].parent = ic;
                    self.nodes[i_f as usize].parent = ib;
                    self.fix_flags(ib);
                    self.fix_flags(ic);
                    self.fix_flags(ia);
                }
                6 => {
                    self.nodes[ib as usize].child1 = ig;
                    self.nodes[ic as usize].child2 = id;
                    self.nodes[id as usize].parent = ic;
                    self.nodes[ig as usize].parent = ib;
                    self.fix_flags(ib);
                    self.fix_flags(ic);
                    self.fix_flags(ia);
                }
                _ => {}
            }
        }
    }

    /// Box, height and enlarged flag of a branch from its children.
    #[inline]
    fn fix_flags(&mut self, i: u32) {
        self.fix(i);
        let n = self.nodes[i as usize];
        let f =
            (self.nodes[n.child1 as usize].flags | self.nodes[n.child2 as usize].flags) & ENLARGED;
        self.nodes[i as usize].flags = f;
    }

    /// `b2InsertLeaf`: stage 1 find the sibling, stage 2 a new parent, stage 3 walk up fixing
    /// boxes and heights (rotating on the way when asked).
    fn insert_leaf(&mut self, leaf: u32, should_rotate: bool) {
        if self.root == NULL {
            self.root = leaf;
            self.nodes[leaf as usize].parent = NULL;
            return;
        }
        // Stage 1.
        let leaf_box = self.nodes[leaf as usize].aabb;
        let sibling = self.find_best_sibling(&leaf_box);
        // Stage 2.
        let old_parent = self.nodes[sibling as usize].parent;
        let new_parent = self.alloc();
        let sib = self.nodes[sibling as usize];
        self.nodes[new_parent as usize] = Node {
            aabb: leaf_box.union(&sib.aabb),
            parent: old_parent,
            child1: sibling,
            child2: leaf,
            height: sib.height + 1,
            flags: 0,
        };
        if old_parent != NULL {
            let op = &mut self.nodes[old_parent as usize];
            if op.child1 == sibling {
                op.child1 = new_parent;
            } else {
                op.child2 = new_parent;
            }
        } else {
            self.root = new_parent;
        }
        self.nodes[sibling as usize].parent = new_parent;
        self.nodes[leaf as usize].parent = new_parent;
        // Stage 3.
        let mut index = self.nodes[leaf as usize].parent;
        while index != NULL {
            self.fix_flags(index);
            if should_rotate {
                self.rotate(index);
            }
            index = self.nodes[index as usize].parent;
        }
    }

    /// `b2DynamicTree_EnlargeProxy`: the leaf takes its new box; ancestors grow until one
    /// already holds it, and every ancestor up to the first already marked is marked enlarged.
    fn enlarge_proxy(&mut self, leaf: u32, aabb: Box2) {
        self.nodes[leaf as usize].aabb = aabb;
        let mut parent = self.nodes[leaf as usize].parent;
        while parent != NULL {
            let node = &mut self.nodes[parent as usize];
            let changed = node.aabb.enlarge(&aabb);
            node.flags |= ENLARGED;
            parent = node.parent;
            if !changed {
                break;
            }
        }
        while parent != NULL {
            let node = &mut self.nodes[parent as usize];
            if node.flags & ENLARGED != 0 {
                break;
            }
            node.flags |= ENLARGED;
            parent = node.parent;
        }
    }

    /// `b2DynamicTree_Rebuild(tree, fullBuild = false)`: every enlarged branch is freed and the
    /// subtrees below it that were not enlarged (and leaves) are built again top-down with
    /// binned SAH.
    fn rebuild_partial(&mut self) {
        if self.root == NULL || self.nodes[self.root as usize].flags & ENLARGED == 0 {
            return;
        }
        let mut leaves = std::mem::take(&mut self.rebuild_leaves);
        let mut centers = std::mem::take(&mut self.rebuild_centers);
        leaves.clear();
        centers.clear();
        self.stack.clear();
        self.stack.push(self.root);
        while let Some(i) = self.stack.pop() {
            let n = self.nodes[i as usize];
            if n.height == 0 || n.flags & ENLARGED == 0 {
                self.nodes[i as usize].flags &= !ENLARGED;
                leaves.push(i);
                centers.push(n.aabb.center());
            } else {
                self.stack.push(n.child2);
                self.stack.push(n.child1);
                self.release(i);
            }
        }
        let count = leaves.len();
        self.root = self.build(&mut leaves[..], &mut centers[..], 0, count);
        self.nodes[self.root as usize].parent = NULL;
        self.rebuild_leaves = leaves;
        self.rebuild_centers = centers;
    }

    /// Top-down binned SAH build over `leaves[begin..end]`; returns the subtree root.
    fn build(
        &mut self,
        leaves: &mut [u32],
        centers: &mut [(f32, f32)],
        begin: usize,
        end: usize,
    ) -> u32 {
        let count = end - begin;
        if count == 1 {
            return leaves[begin];
        }
        let split = if count == 2 {
            begin + 1
        } else {
            self.partition_sah(leaves, centers, begin, end)
        };
        let c1 = self.build(leaves, centers, begin, split);
        let c2 = self.build(leaves, centers, split, end);
        let p = self.alloc();
        self.nodes[p as usize] = Node {
            aabb: Box2::default(),
            parent: NULL,
            child1: c1,
            child2: c2,
            height: 0,
            flags: 0,
        };
        self.nodes[c1 as usize].parent = p;
        self.nodes[c2 as usize].parent = p;
        self.fix(p);
        p
    }

    /// `b2PartitionSAH`: bins the centres along the longer axis of their bounds, takes the
    /// plane of least `area_left * count_left + area_right * count_right`, and partitions.
    fn partition_sah(
        &self,
        leaves: &mut [u32],
        centers: &mut [(f32, f32)],
        begin: usize,
        end: usize,
    ) -> usize {
        let count = end - begin;
        let mut lo = (f32::MAX, f32::MAX);
        let mut hi = (f32::MIN, f32::MIN);
        for c in &centers[begin..end] {
            lo = (lo.0.min(c.0), lo.1.min(c.1));
            hi = (hi.0.max(c.0), hi.1.max(c.1));
        }
        let (dx, dy) = (hi.0 - lo.0, hi.1 - lo.1);
        let axis_x = dx >= dy;
        let (min_c, extent) = if axis_x { (lo.0, dx) } else { (lo.1, dy) };
        if extent <= 0.0 {
            return begin + count / 2;
        }
        let scale = BIN_COUNT as f32 / extent;
        let bin_of = |c: &(f32, f32)| {
            let v = if axis_x { c.0 } else { c.1 };
            (((v - min_c) * scale) as usize).min(BIN_COUNT - 1)
        };
        let empty = Box2 {
            lx: f32::MAX,
            ly: f32::MAX,
            ux: f32::MIN,
            uy: f32::MIN,
        };
        let mut bin_box = [empty; BIN_COUNT];
        let mut bin_count = [0usize; BIN_COUNT];
        for k in begin..end {
            let b = bin_of(&centers[k]);
            bin_count[b] += 1;
            bin_box[b] = bin_box[b].union(&self.nodes[leaves[k] as usize].aabb);
        }
        // Costs of the planes between bins i and i + 1.
        let mut left_area = [0.0f32; BIN_COUNT - 1];
        let mut left_count = [0usize; BIN_COUNT - 1];
        let (mut acc_box, mut acc_count) = (empty, 0);
        for i in 0..BIN_COUNT - 1 {
            acc_box = acc_box.union(&bin_box[i]);
            acc_count += bin_count[i];
            left_count[i] = acc_count;
            left_area[i] = if acc_count > 0 {
                acc_box.perimeter()
            } else {
                0.0
            };
        }
        let (mut acc_box, mut acc_count) = (empty, 0);
        let mut best_cost = f32::MAX;
        let mut best_plane = 0;
        for i in (0..BIN_COUNT - 1).rev() {
            acc_box = acc_box.union(&bin_box[i + 1]);
            acc_count += bin_count[i + 1];
            let right_area = if acc_count > 0 {
                acc_box.perimeter()
            } else {
                0.0
            };
            let cost = left_area[i] * left_count[i] as f32 + right_area * acc_count as f32;
            if cost < best_cost {
                best_cost = cost;
                best_plane = i;
            }
        }
        // Partition: bins <= best_plane go left.
        let (mut i, mut j) = (begin, end);
        while i < j {
            if bin_of(&centers[i]) <= best_plane {
                i += 1;
            } else {
                j -= 1;
                leaves.swap(i, j);
                centers.swap(i, j);
            }
        }
        if i == begin || i == end {
            begin + count / 2
        } else {
            i
        }
    }

    /// `b2DynamicTree_Query`: calls `visit(user)` for each leaf whose box overlaps `aabb`.
    #[inline]
    fn query(&mut self, aabb: &Box2, mut visit: impl FnMut(u32)) {
        if self.root == NULL {
            return;
        }
        self.stack.clear();
        self.stack.push(self.root);
        while let Some(i) = self.stack.pop() {
            let n = &self.nodes[i as usize];
            if n.aabb.overlaps(aabb) {
                if n.is_leaf() {
                    visit(n.child1);
                } else {
                    self.stack.push(n.child1);
                    self.stack.push(n.child2);
                }
            }
        }
    }
}

/// A fast hash for pair keys (Box2D's pair set hashes its 64-bit keys with a few multiplies).
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, k: u64) {
        let h = k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

/// Box2D v3's broad phase over the workload: the tree, its move buffer and its pair set.
pub struct Box2dTree {
    tree: Tree,
    /// Leaf node of each circle.
    leaf_of: Vec<u32>,
    /// The fat box of each circle as the tree holds it.
    fat: Vec<Box2>,
    moved_flag: Vec<bool>,
    pair_set: HashSet<u64, BuildHasherDefault<KeyHasher>>,
    pairs: Vec<(u32, u32)>,
}

impl Box2dTree {
    pub fn new() -> Self {
        Self {
            tree: Tree::new(),
            leaf_of: Vec::new(),
            fat: Vec::new(),
            moved_flag: Vec::new(),
            pair_set: HashSet::default(),
            pairs: Vec::new(),
        }
    }

    /// Panics when a link, height or containment is wrong, or a leaf is missing.
    fn validate(&self) {
        fn walk(t: &Tree, i: u32, parent: u32) -> u32 {
            let n = t.nodes[i as usize];
            assert_eq!(n.parent, parent);
            if n.is_leaf() {
                return 1;
            }
            let (a, b) = (t.nodes[n.child1 as usize], t.nodes[n.child2 as usize]);
            assert_eq!(n.height, 1 + a.height.max(b.height));
            assert!(n.aabb.contains(&a.aabb) && n.aabb.contains(&b.aabb));
            walk(t, n.child1, i) + walk(t, n.child2, i)
        }
        assert_eq!(
            walk(&self.tree, self.tree.root, NULL) as usize,
            self.leaf_of.len()
        );
    }
}

fn box2(b: &aabb_debugger::tree::Aabb<glam::Vec2>) -> Box2 {
    Box2 {
        lx: b.min.x,
        ly: b.min.y,
        ux: b.max.x,
        uy: b.max.y,
    }
}

#[inline]
fn key(a: u32, b: u32) -> u64 {
    let (i, j) = if a < b { (a, b) } else { (b, a) };
    (u64::from(i) << 32) | u64::from(j)
}

impl WorkloadBroadphase for Box2dTree {
    fn bytes(&self) -> Option<usize> {
        Some(
            self.tree.nodes.capacity() * std::mem::size_of::<Node>()
                + self.leaf_of.capacity() * 4
                + self.fat.capacity() * std::mem::size_of::<Box2>(),
        )
    }

    fn name(&self) -> String {
        "Box2D v3 tree (port)".to_owned()
    }

    fn build(&mut self, workload: &Workload) {
        *self = Self::new();
        self.fat = workload.fat_boxes().iter().map(box2).collect();
        self.moved_flag = vec![false; self.fat.len()];
        for (i, b) in self.fat.iter().enumerate() {
            let leaf = self.tree.create_proxy(*b, i as u32);
            self.leaf_of.push(leaf);
        }
        self.validate();
        // Box2D buffers every new proxy as moved: the first pair update finds all pairs.
        for i in 0..self.fat.len() as u32 {
            let fat = self.fat[i as usize];
            let (set, pairs) = (&mut self.pair_set, &mut self.pairs);
            self.tree.query(&fat, |j| {
                if j != i && set.insert(key(i, j)) {
                    pairs.push((i.min(j), i.max(j)));
                }
            });
        }
    }

    fn update(&mut self, workload: &Workload) -> usize {
        let fat = workload.fat_boxes();
        for &i in workload.moved() {
            let b = box2(&fat[i as usize]);
            self.fat[i as usize] = b;
            self.tree.enlarge_proxy(self.leaf_of[i as usize], b);
        }
        // b2BroadPhase_RebuildTrees: partial rebuild of the enlarged nodes.
        self.tree.rebuild_partial();
        if cfg!(debug_assertions) {
            self.validate();
        }
        workload.moved().len()
    }

    fn find_pairs(&mut self, workload: &Workload, tally: &mut PairTally) {
        // Contacts whose fat boxes stopped overlapping are destroyed.
        let (fat, set) = (&self.fat, &mut self.pair_set);
        self.pairs.retain(|&(a, b)| {
            let keep = fat[a as usize].overlaps(&fat[b as usize]);
            if !keep {
                set.remove(&key(a, b));
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
            let (set, pairs, flags) = (&mut self.pair_set, &mut self.pairs, &self.moved_flag);
            self.tree.query(&q, |j| {
                if j == i || (flags[j as usize] && j < i) {
                    return;
                }
                if set.insert(key(i, j)) {
                    pairs.push((i.min(j), i.max(j)));
                }
            });
        }
        for &i in moved {
            self.moved_flag[i as usize] = false;
        }
        for &(a, b) in &self.pairs {
            tally.add(a, b);
        }
    }
}
