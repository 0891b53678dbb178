//! Tree quality: the height and SAH cost ([`DynamicTree::sah_cost`]) each insertion cost and
//! balancing gives on fixed box sets, inserted one by one in a fixed order (margin 0).
//!
//! The cost is [`DynamicTree::sah_cost`]: the half perimeter (2D) or half surface area (3D)
//! of every branch but the root, summed, over the root's. The tables below give the sum
//! itself (the cost times the root's measure: a multiple of 0.5 for these boxes, exact in
//! `f64`), and the reports give the full perimeter of every branch, root included:
//! `2 * (sum + root)`.

use dynamic_aabb_tree::{Aabb, Balancing, DynamicTree, InsertionCost, TreeConfig, Vector};
use glam::{Vec2, Vec3};

use Balancing::{Avl, None as Plain, Rotations};
use InsertionCost::{ExactSurfaceArea, Perimeter, SurfaceArea, Volume};

/// Box2D's pyramid of 33 unit boxes: rows of 8, 7, 6, 5, 4 and 3 boxes, each row shifted half
/// a box to the right of the one below and resting on it, listed left to right, bottom to
/// top. Its box is `[0, 8] x [0, 6]` (half perimeter 14).
fn pyramid() -> Vec<Aabb<Vec2>> {
    let mut boxes = Vec::new();
    for row in 0..6u8 {
        for i in 0..(8 - row) {
            let x = 0.5 * f32::from(row) + f32::from(i);
            let y = f32::from(row);
            boxes.push(Aabb::new(Vec2::new(x, y), Vec2::new(x + 1.0, y + 1.0)));
        }
    }
    boxes
}

/// 64 unit squares of a 8 x 8 grid (gaps of 0.5) in the plane z = 0, row by row: every box
/// and every union has volume 0.
fn flat_grid() -> Vec<Aabb<Vec3>> {
    let mut boxes = Vec::new();
    for j in 0..8u8 {
        for i in 0..8u8 {
            let min = Vec3::new(1.5 * f32::from(i), 1.5 * f32::from(j), 0.0);
            boxes.push(Aabb::new(min, min + Vec3::new(1.0, 1.0, 0.0)));
        }
    }
    boxes
}

/// The tree made by inserting `boxes` in order (margin 0), checked after every insertion.
fn build<V: Vector>(
    boxes: &[Aabb<V>],
    insertion: InsertionCost,
    balancing: Balancing,
) -> DynamicTree<V, u32> {
    let mut tree = DynamicTree::new(TreeConfig {
        margin: 0.0,
        insertion,
        balancing,
        ..TreeConfig::default()
    });
    for (i, b) in boxes.iter().enumerate() {
        tree.create_proxy(*b, V::default(), i as u32)
            .expect("a valid box");
        if let Err(e) = tree.validate() {
            panic!("{insertion:?} {balancing:?} after {i}: {e:?}");
        }
    }
    tree
}

/// The root's SAH measure.
fn root_measure<V: Vector>(tree: &DynamicTree<V, u32>) -> f64 {
    tree.root()
        .and_then(|r| tree.node(r))
        .expect("a root")
        .aabb
        .half_area_f64()
}

/// Builds every insertion x balancing over `boxes` and compares each height and branch sum
/// with `want`.
fn check_table<V: Vector>(boxes: &[Aabb<V>], want: &[(InsertionCost, Balancing, u32, f64)]) {
    let mut got = Vec::new();
    for insertion in InsertionCost::ALL {
        for balancing in Balancing::ALL {
            let tree = build(boxes, insertion, balancing);
            let sum = tree.sah_cost() * root_measure(&tree);
            got.push((insertion, balancing, tree.stats().height, sum));
        }
    }
    let report = got
        .iter()
        .map(|(i, b, h, s)| format!("({i:?}, {b:?}, {h}, {s:?})"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(got.len(), want.len(), "{report}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            g.0 == w.0 && g.1 == w.1 && g.2 == w.2 && (g.3 - w.3).abs() < 1e-9,
            "got {g:?}, want {w:?}; all:\n{report}"
        );
    }
}

#[test]
fn pyramid_heights_and_costs() {
    let boxes = pyramid();
    assert_eq!(boxes.len(), 33);
    // Branch perimeters, root included (2 * (sum + 14)): Box2D v3's SurfaceArea gives 335
    // (height 8) without rotations and 318 (height 6) with them.
    check_table(
        &boxes,
        &[
            (Volume, Plain, 11, 183.0),
            (Volume, Avl, 6, 151.0),
            (Volume, Rotations, 6, 140.5),
            (Perimeter, Plain, 10, 203.5),
            (Perimeter, Avl, 6, 159.0),
            (Perimeter, Rotations, 6, 140.5),
            (SurfaceArea, Plain, 8, 153.5),
            (SurfaceArea, Avl, 6, 147.5),
            (SurfaceArea, Rotations, 6, 145.0),
            (ExactSurfaceArea, Plain, 8, 158.0),
            (ExactSurfaceArea, Avl, 6, 146.0),
            (ExactSurfaceArea, Rotations, 6, 144.0),
        ],
    );
}

#[test]
fn flat_boxes_make_volume_a_list_but_not_the_exact_search() {
    let boxes = flat_grid();
    // Every volume is 0, so every choice of `Volume` ties and goes to the second child: the
    // newest leaf, each insertion one level deeper (height 63, a list). The SAH measure of a
    // flat box is its area, and the exact search makes a tree of height 9.
    check_table(
        &boxes,
        &[
            (Volume, Plain, 63, 4424.75),
            (Volume, Avl, 6, 501.5),
            (Volume, Rotations, 8, 543.5),
            (Perimeter, Plain, 14, 1268.0),
            (Perimeter, Avl, 6, 501.5),
            (Perimeter, Rotations, 8, 633.5),
            (SurfaceArea, Plain, 9, 663.5),
            (SurfaceArea, Avl, 7, 855.5),
            (SurfaceArea, Rotations, 6, 501.5),
            (ExactSurfaceArea, Plain, 9, 663.5),
            (ExactSurfaceArea, Avl, 6, 800.75),
            (ExactSurfaceArea, Rotations, 6, 501.5),
        ],
    );
}
