//! Shape and cost figures of the tree: height, least possible height, SAH area ratio, node
//! and leaf counts, and the bytes its storage holds; and the work counts of its updates and
//! pair searches.

use super::node::{NULL, Node, ProxySlot};
use super::{DynamicTree, ProxyId, QueryStats, TreeStats, Vector, WorkCounts};
use std::mem::size_of;

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Height, least possible height `ceil(log2(leaves))`, area ratio (the SAH measure summed
    /// over every node in use, leaves included, over the root's, computed in `f64`: finite for
    /// any finite boxes; 0 when the root's is 0),
    /// node and leaf counts, and bytes held (capacities, scratch included).
    pub fn stats(&self) -> TreeStats {
        let leaves = self.live as usize;
        let nodes = self.nodes.len() - self.free_nodes as usize;
        let (height, area_ratio) = if self.root == NULL {
            (0, 0.0)
        } else {
            // In f64 from the f32 corners: an f32 half area overflows for finite boxes (a 3D
            // box of side 1e20, coordinates near 3.4e38), and infinity over infinity is NaN.
            // In f64 each term is below 3 * (6.9e38)^2 and the sum below 2^32 times that.
            let root = &self.nodes[self.root as usize];
            let root_area = root.aabb.half_area_f64();
            let total: f64 = self
                .nodes
                .iter()
                .filter(|n| !n.is_free())
                .map(|n| n.aabb.half_area_f64())
                .sum();
            // Every node lies in the root's box, so the ratio is at most the node count.
            let ratio = if root_area > 0.0 {
                (total / root_area) as f32
            } else {
                0.0
            };
            (root.height(), ratio)
        };
        let min_height = if leaves <= 1 {
            0
        } else {
            usize::BITS - (leaves - 1).leading_zeros()
        };
        TreeStats {
            leaves,
            nodes,
            height,
            min_height,
            area_ratio,
            bytes: self.bytes(),
        }
    }

    /// The SAH cost of the tree's shape: the SAH measure ([`crate::Aabb::half_area`]: half
    /// the perimeter in 2D, half the surface area in 3D) summed over the branches other than
    /// the root, over the root's. Leaves are not counted (every tree over the same boxes has
    /// the same leaves), nor the root (its box is the same for every such tree). Summed in
    /// `f64` from the `f32` corners (finite for any finite boxes); 0 for an empty tree, a tree
    /// of one or two leaves, or a root of measure 0. Unlike [`TreeStats::area_ratio`] this
    /// counts branches only.
    ///
    /// [`TreeStats::area_ratio`]: crate::TreeStats::area_ratio
    #[must_use]
    pub fn sah_cost(&self) -> f64 {
        if self.root == NULL {
            return 0.0;
        }
        let root_area = self.nodes[self.root as usize].aabb.half_area_f64();
        if root_area <= 0.0 {
            return 0.0;
        }
        let root = self.root as usize;
        let total: f64 = self
            .nodes
            .iter()
            .enumerate()
            .filter(|&(i, n)| i != root && !n.is_free() && !n.is_leaf())
            .map(|(_, n)| n.aabb.half_area_f64())
            // From +0: `sum` of no terms is -0, shown as "-0.00" for a tree of one branch.
            .fold(0.0, |sum, area| sum + area);
        total / root_area
    }

    /// Bytes held by the tree's storage (capacities, not lengths).
    pub fn bytes(&self) -> usize {
        size_of::<Self>()
            + self.nodes.capacity() * size_of::<Node<V>>()
            + self.proxies.capacity() * size_of::<ProxySlot<V, T>>()
            + self.pairs.capacity() * size_of::<(u32, u32)>()
            + self
                .sorted_pairs
                .get()
                .map_or(0, |v| v.capacity() * size_of::<(ProxyId, ProxyId)>())
            + self.moved.capacity() * size_of::<u32>()
            + self.moved_bits.capacity() * size_of::<u64>()
            + self.batch_leaving.capacity() * size_of::<super::update::BatchMove<V>>()
            + self.build_items.capacity() * size_of::<u32>()
            + self.sibling_queue.capacity() * size_of::<super::insert::Candidate>()
            + self.ploc.bytes()
            + self.optimize_picks.capacity() * size_of::<(f32, u32)>()
            + self.events.capacity() * size_of::<super::TreeEvent>()
    }

    /// The work counted since the tree was made or the last [`DynamicTree::take_work`] (see
    /// [`WorkCounts`] for what counts). Counting costs a few additions per update and per
    /// pair search, never one per node.
    pub fn work(&self) -> WorkCounts {
        let mut work = self.work;
        work.update_node_visits += self.moves_tested;
        work.update_leaf_visits += self.moves_tested;
        work
    }

    /// [`DynamicTree::work`], and the counts start again from 0.
    pub fn take_work(&mut self) -> WorkCounts {
        let work = self.work();
        self.work = WorkCounts::default();
        self.moves_tested = 0;
        work
    }

    /// Adds the visits of one update (its counts kept in locals until now).
    #[inline]
    pub(crate) fn count_update(&mut self, nodes: u64, leaves: u64) {
        self.work.update_node_visits += nodes;
        self.work.update_leaf_visits += leaves;
    }

    /// Adds the tests of one pair search.
    #[inline]
    pub(crate) fn count_pairs(&mut self, stats: QueryStats) {
        self.work.pair_node_visits += u64::from(stats.node_visits);
        self.work.pair_leaf_visits += u64::from(stats.leaf_visits);
    }
}

/// A 64-bit hash of a stream of words, the same on every machine and every build (unlike
/// `std`'s hashers, whose algorithm may change): four independent multiply-rotate lanes (so a
/// long stream is hashed at several words a cycle) folded with a final mix. Every step is a
/// bijection of the lane's state, so changing any one word always changes the hash.
#[derive(Clone, Copy, Debug)]
pub struct StructureHasher {
    lanes: [u64; 4],
    words: u64,
}

impl Default for StructureHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl StructureHasher {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;

    /// A hasher with no words yet.
    #[must_use]
    pub fn new() -> Self {
        Self {
            lanes: [
                0x243F_6A88_85A3_08D3,
                0x1319_8A2E_0370_7344,
                0xA409_3822_299F_31D0,
                0x082E_FA98_EC4E_6C89,
            ],
            words: 0,
        }
    }

    #[inline]
    fn mix(lane: u64, word: u64) -> u64 {
        (lane.rotate_left(5) ^ word).wrapping_mul(Self::K)
    }

    /// Adds one word to lane `lane & 3`.
    #[inline]
    pub fn word_in(&mut self, lane: usize, word: u64) {
        let l = &mut self.lanes[lane & 3];
        *l = Self::mix(*l, word);
        self.words += 1;
    }

    /// Adds one word to lane 0.
    #[inline]
    pub fn word(&mut self, word: u64) {
        self.word_in(0, word);
    }

    /// The hash of the words so far.
    #[must_use]
    pub fn finish(&self) -> u64 {
        let mut h = self.words;
        for &l in &self.lanes {
            h = Self::mix(h, l);
        }
        // MurmurHash3's finaliser.
        h ^= h >> 33;
        h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        h ^= h >> 33;
        h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
        h ^ (h >> 33)
    }

    /// Adds a box's corners as their bit patterns (`V::DIM` numbers each), to lane `lane`.
    #[inline]
    pub fn aabb_in<V: crate::Vector>(&mut self, lane: usize, b: &crate::Aabb<V>) {
        for axis in 0..V::DIM {
            let lo = u64::from(b.min.axis(axis).to_bits());
            let hi = u64::from(b.max.axis(axis).to_bits());
            self.word_in(lane, lo | (hi << 32));
        }
    }
}

/// One node's words folded into one: each word times its own odd constant (a bijection, so
/// changing one word changes the digest), rotated, and xored; the products are independent,
/// so several nodes' digests are computed at once.
#[inline]
fn node_digest<V: Vector>(index: usize, node: &Node<V>) -> u64 {
    const K: [u64; 8] = [
        0x9E37_79B9_7F4A_7C15,
        0xC2B2_AE3D_27D4_EB4F,
        0x1656_67B1_9E37_79F9,
        0xD6E8_FEB8_6659_FD93,
        0xFF51_AFD7_ED55_8CCD,
        0xC4CE_B9FE_1A85_EC53,
        0x8CB9_2BA7_2F3D_8DD7,
        0xA076_1D64_78BD_642F,
    ];
    // Height below 2^29: bits 32..61; the enlarged flag bit 63.
    let flags = (u64::from(node.height()) << 32) | (u64::from(node.is_enlarged()) << 63);
    let mut d = (index as u64).wrapping_mul(K[0])
        ^ (u64::from(node.parent) | (u64::from(node.child1) << 32))
            .wrapping_mul(K[1])
            .rotate_left(11)
        ^ (u64::from(node.child2) | flags)
            .wrapping_mul(K[2])
            .rotate_left(22);
    for axis in 0..V::DIM {
        let lo = u64::from(node.aabb.min.axis(axis).to_bits());
        let hi = u64::from(node.aabb.max.axis(axis).to_bits());
        d ^= (lo | (hi << 32))
            .wrapping_mul(K[3 + axis])
            .rotate_left(33 + 7 * axis as u32);
    }
    d
}

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// A hash of the tree's structure: the root, and every node in use in pool order with its
    /// index, box (bit patterns), parent, children (a leaf's proxy slot) and height, and the
    /// flag of a box enlarged in place. Two trees with the same hash have (but for a hash
    /// collision) the same shape, the same boxes in the same nodes, and so the same future:
    /// a replay checks with it that a rebuilt step is the recorded one. User data, the
    /// proxies' tight boxes and the pair list are not hashed. The same on every machine and
    /// build; a few tens of microseconds for 10,000 leaves.
    #[must_use]
    pub fn structure_hash(&self) -> u64 {
        let mut h = StructureHasher::new();
        h.word(u64::from(self.root));
        h.word(self.nodes.len() as u64);
        for (i, node) in self.nodes.iter().enumerate() {
            if !node.is_free() {
                h.word_in(i, node_digest(i, node));
            }
        }
        h.finish()
    }
}
