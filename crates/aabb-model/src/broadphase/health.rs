//! Tree health: how far the live tree has drifted from a fresh build of the same leaves.
//!
//! The live tree is built one insertion and reinsertion at a time; as its leaves move, its
//! branches loosen. Its health is its cost (the SAH cost of [`DynamicTree::sah_cost`]: the
//! branches' measure but the root's, over the root's) against the cost of the best fresh
//! build over the same leaf (fat) boxes, and its height against the least height a tree of
//! that many leaves can have.
//!
//! - [`LeafBoxes::of`] copies the leaves' boxes out of a tree (one `Vec`, cheap: the window
//!   takes it on the UI thread and hands it to a worker).
//! - [`LeafBoxes::best_rebuild`] builds a fresh tree with every full rebuild the tree offers
//!   ([`RebuildKind::ALL`]) and keeps the cheapest.
//! - [`Shape::of`] is the live tree's cost and height; [`cost_ratio`] the two costs compared.

use super::TreeRef;
use crate::tree::{Aabb, DynamicTree, RebuildMethod, TreeConfig, TreeError, Vector};
use glam::{Vec2, Vec3};

/// One full rebuild the tree offers, as a fresh build over a set of leaf boxes. "The best
/// fresh build" is the cheapest of [`RebuildKind::ALL`]: a new rebuild method is a new variant
/// here, listed in `ALL`, with its arm in `RebuildKind::build`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RebuildKind {
    /// The top-down binned-SAH build of [`DynamicTree::rebuild`] (and of a batch creation,
    /// [`DynamicTree::create_proxies`]).
    BinnedSah,
    /// The bottom-up agglomerative (PLOC) build of [`RebuildMethod::Agglomerative`].
    Agglomerative,
    /// The exact greedy bottom-up build of [`RebuildMethod::Greedy`]: often the cheapest tree,
    /// and 8 to 30 times the time of PLOC, so it is tried only up to
    /// [`GREEDY_MAX_LEAVES`] leaves.
    Greedy,
}

/// The most leaves the best fresh build tries [`RebuildKind::Greedy`] for: 10,000 random
/// boxes take it 37 to 95 ms (release build), a time a worker may spend every few steps;
/// 100,000 take 0.6 to 2.2 s.
pub const GREEDY_MAX_LEAVES: usize = 20_000;

impl RebuildKind {
    /// Every fresh build tried, in the order ties are broken (the first wins).
    pub const ALL: [RebuildKind; 3] = [
        RebuildKind::BinnedSah,
        RebuildKind::Agglomerative,
        RebuildKind::Greedy,
    ];

    /// True when the best fresh build of `leaves` leaves tries this build.
    #[must_use]
    pub fn tried_for(self, leaves: usize) -> bool {
        self != RebuildKind::Greedy || leaves <= GREEDY_MAX_LEAVES
    }

    /// Its name in the window.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            RebuildKind::BinnedSah => "binned SAH",
            RebuildKind::Agglomerative => "agglomerative",
            RebuildKind::Greedy => "greedy",
        }
    }

    /// The tree's rebuild method that builds this way: set it in the tree's settings and
    /// [`DynamicTree::rebuild`] builds the live tree as this fresh build was built.
    #[must_use]
    pub fn method(self) -> RebuildMethod {
        match self {
            RebuildKind::BinnedSah => RebuildMethod::BinnedSah,
            RebuildKind::Agglomerative => RebuildMethod::Agglomerative,
            RebuildKind::Greedy => RebuildMethod::Greedy,
        }
    }

    /// The fresh build a rebuild method makes (the inverse of [`RebuildKind::method`]).
    #[must_use]
    pub fn of(method: RebuildMethod) -> RebuildKind {
        match method {
            RebuildMethod::BinnedSah => RebuildKind::BinnedSah,
            RebuildMethod::Agglomerative => RebuildKind::Agglomerative,
            RebuildMethod::Greedy => RebuildKind::Greedy,
        }
    }

    /// A tree of these boxes as leaves (taken as they are: margin 0, no look-ahead), built
    /// this way. The leaves are given in the order a rebuild of the live tree gathers them
    /// (see [`LeafBoxes::of`]), so the fresh build of a tree just rebuilt is that same tree.
    fn build<V: Vector>(self, boxes: &[Aabb<V>]) -> Result<DynamicTree<V, u32>, TreeError> {
        let config = TreeConfig {
            margin: 0.0,
            velocity_lookahead: 0.0,
            rebuild: self.method(),
            ..TreeConfig::default()
        };
        let mut tree = DynamicTree::with_capacity(config, boxes.len())?;
        let items: Vec<(Aabb<V>, V, u32)> = boxes.iter().map(|b| (*b, V::default(), 0)).collect();
        tree.create_proxies(&items)?;
        Ok(tree)
    }
}

/// A tree's cost and height.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// [`DynamicTree::sah_cost`].
    pub cost: f64,
    /// The root's height (a leaf is 0; 0 for an empty tree).
    pub height: u32,
    /// Its leaves.
    pub leaves: usize,
}

impl Shape {
    /// The shape of a tree.
    #[must_use]
    pub fn of_tree<V: Vector, T: Copy>(tree: &DynamicTree<V, T>) -> Shape {
        Shape {
            cost: tree.sah_cost(),
            height: tree
                .root()
                .and_then(|r| tree.node(r))
                .map_or(0, |n| n.height),
            leaves: tree.len(),
        }
    }

    /// The shape of a broad phase's tree.
    #[must_use]
    pub fn of(tree: &TreeRef<'_>) -> Shape {
        match tree {
            TreeRef::D2(t) => Shape::of_tree(*t),
            TreeRef::D3(t) => Shape::of_tree(*t),
        }
    }
}

/// The best fresh build over a set of leaves: how it was built, its cost and height.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FreshBuild {
    /// The rebuild of least cost (the first of [`RebuildKind::ALL`] among equals).
    pub method: RebuildKind,
    /// Its cost and height.
    pub shape: Shape,
}

/// The leaves' (fat) boxes of a tree, in the dimension of its scene.
#[derive(Clone, Debug, PartialEq)]
pub enum LeafBoxes {
    /// A 2D tree's.
    D2(Vec<Aabb<Vec2>>),
    /// A 3D tree's.
    D3(Vec<Aabb<Vec3>>),
}

/// The best of [`RebuildKind::ALL`] over `boxes` (those [`RebuildKind::tried_for`] them).
fn best_of<V: Vector>(boxes: &[Aabb<V>]) -> Result<FreshBuild, TreeError> {
    let mut best: Option<FreshBuild> = None;
    for method in RebuildKind::ALL {
        if !method.tried_for(boxes.len()) {
            continue;
        }
        let shape = Shape::of_tree(&method.build(boxes)?);
        if best.is_none_or(|b| shape.cost < b.shape.cost) {
            best = Some(FreshBuild { method, shape });
        }
    }
    // `ALL` is not empty; an empty list would measure nothing and cost nothing.
    Ok(best.unwrap_or(FreshBuild {
        method: RebuildKind::BinnedSah,
        shape: Shape {
            cost: 0.0,
            height: 0,
            leaves: boxes.len(),
        },
    }))
}

impl LeafBoxes {
    /// The leaves' boxes of a broad phase's tree, in the order a rebuild gathers them
    /// ([`DynamicTree::leaf_boxes`]).
    #[must_use]
    pub fn of(tree: &TreeRef<'_>) -> LeafBoxes {
        match tree {
            TreeRef::D2(t) => LeafBoxes::D2(t.leaf_boxes()),
            TreeRef::D3(t) => LeafBoxes::D3(t.leaf_boxes()),
        }
    }

    /// The number of leaves.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            LeafBoxes::D2(b) => b.len(),
            LeafBoxes::D3(b) => b.len(),
        }
    }

    /// True when there is no leaf.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Builds a fresh tree over the boxes with every rebuild of [`RebuildKind::ALL`] and
    /// returns the cheapest's cost and height. An error only when the tree refuses the boxes
    /// (not finite, or too many).
    pub fn best_rebuild(&self) -> Result<FreshBuild, TreeError> {
        match self {
            LeafBoxes::D2(b) => best_of(b),
            LeafBoxes::D3(b) => best_of(b),
        }
    }
}

/// The least height a tree of `leaves` leaves can have: `ceil(log2(leaves))` (0 for at most
/// one leaf).
#[must_use]
pub fn least_height(leaves: usize) -> u32 {
    if leaves <= 1 {
        0
    } else {
        usize::BITS - (leaves - 1).leading_zeros()
    }
}

/// A cost against a fresh build's: `cost / fresh`; 1 when the fresh build costs nothing (at
/// most two leaves, or a root of measure 0, where every tree costs nothing).
#[must_use]
pub fn cost_ratio(cost: f64, fresh: f64) -> f64 {
    if fresh > 0.0 { cost / fresh } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::InsertionCost;

    /// `n` unit squares on a row, inserted left to right without balancing: a degenerate
    /// tree (a list).
    fn row_tree(n: u32) -> DynamicTree<Vec2, u32> {
        let mut tree = DynamicTree::new(TreeConfig {
            margin: 0.0,
            velocity_lookahead: 0.0,
            insertion: InsertionCost::SurfaceArea,
            balancing: crate::tree::Balancing::None,
            ..TreeConfig::default()
        });
        for i in 0..n {
            let x = i as f32 * 2.0;
            let b = Aabb::new(Vec2::new(x, 0.0), Vec2::new(x + 1.0, 1.0));
            tree.create_proxy(b, Vec2::ZERO, i).expect("a valid box");
        }
        tree
    }

    #[test]
    fn each_fresh_build_is_one_rebuild_method_of_the_tree() {
        let methods: Vec<RebuildMethod> = RebuildKind::ALL.iter().map(|k| k.method()).collect();
        assert_eq!(methods, RebuildMethod::ALL.to_vec());
        for kind in RebuildKind::ALL {
            assert_eq!(RebuildKind::of(kind.method()), kind);
        }
    }

    #[test]
    fn least_heights_are_ceil_log2() {
        let got: Vec<u32> = [0, 1, 2, 3, 4, 5, 8, 9, 1024, 1025]
            .into_iter()
            .map(least_height)
            .collect();
        assert_eq!(got, vec![0, 0, 1, 2, 2, 3, 3, 4, 10, 11]);
    }

    #[test]
    fn the_fresh_build_of_a_rebuilt_tree_is_that_tree() {
        let mut tree = row_tree(37);
        let before = Shape::of_tree(&tree);
        let boxes = LeafBoxes::of(&TreeRef::D2(&tree));
        assert_eq!(boxes.len(), 37);
        let fresh = boxes.best_rebuild().expect("builds");
        assert_eq!(fresh.method, RebuildKind::BinnedSah);
        assert_eq!(fresh.shape.leaves, 37);
        // The list inserted left to right is worse than a fresh build.
        assert!(before.cost > fresh.shape.cost, "{before:?} {fresh:?}");
        assert!(before.height > fresh.shape.height);
        tree.rebuild();
        let after = Shape::of_tree(&tree);
        assert_eq!(after, fresh.shape);
        assert_eq!(cost_ratio(after.cost, fresh.shape.cost), 1.0);
        // And again: the fresh build of the rebuilt tree is the same.
        let again = LeafBoxes::of(&TreeRef::D2(&tree))
            .best_rebuild()
            .expect("builds");
        assert_eq!(again.shape, after);
    }

    /// The best fresh build is the cheapest of the builds tried, each built as the tree
    /// builds it; the greedy build is tried up to its size limit only.
    #[test]
    fn the_best_fresh_build_is_the_cheapest_tried() {
        assert!(RebuildKind::Greedy.tried_for(GREEDY_MAX_LEAVES));
        assert!(!RebuildKind::Greedy.tried_for(GREEDY_MAX_LEAVES + 1));
        assert!(RebuildKind::Agglomerative.tried_for(usize::MAX));
        assert!(RebuildKind::BinnedSah.tried_for(usize::MAX));
        // Boxes of a fixed xorshift sequence: a set where the builds differ.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32
        };
        let boxes: Vec<Aabb<Vec2>> = (0..500)
            .map(|_| {
                let min = Vec2::new(next() * 60.0, next() * 60.0);
                Aabb::new(min, min + Vec2::new(0.2 + next() * 3.0, 0.2 + next() * 3.0))
            })
            .collect();
        let costs: Vec<(RebuildKind, f64)> = RebuildKind::ALL
            .iter()
            .map(|&k| (k, Shape::of_tree(&k.build(&boxes).expect("builds")).cost))
            .collect();
        let least = costs.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
        let first_least = costs.iter().find(|c| c.1 == least).expect("three builds").0;
        let best = best_of(&boxes).expect("builds");
        assert_eq!(best.shape.cost, least);
        assert_eq!(best.method, first_least);
        // On this set the three differ and the greedy build is the cheapest.
        assert_eq!(best.method, RebuildKind::Greedy, "{costs:?}");
        assert!(
            costs[0].1 != costs[1].1 && costs[1].1 != costs[2].1,
            "{costs:?}"
        );
    }

    #[test]
    fn the_leaves_are_copied_as_they_are() {
        let tree = row_tree(5);
        let LeafBoxes::D2(boxes) = LeafBoxes::of(&TreeRef::D2(&tree)) else {
            panic!("a 2D tree gives 2D boxes");
        };
        let mut xs: Vec<f32> = boxes.iter().map(|b| b.min.x).collect();
        xs.sort_by(f32::total_cmp);
        assert_eq!(xs, vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        assert!(boxes.iter().all(|b| b.max - b.min == Vec2::ONE));
    }

    #[test]
    fn tiny_and_empty_trees_cost_nothing_and_compare_as_one() {
        for n in 0..=2 {
            let tree = row_tree(n);
            let fresh = LeafBoxes::of(&TreeRef::D2(&tree))
                .best_rebuild()
                .expect("builds");
            assert_eq!(fresh.shape.cost, 0.0);
            assert_eq!(fresh.shape.height, least_height(n as usize));
            assert_eq!(
                cost_ratio(Shape::of_tree(&tree).cost, fresh.shape.cost),
                1.0
            );
        }
        assert_eq!(cost_ratio(3.0, 2.0), 1.5);
    }
}
