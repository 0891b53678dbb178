//! Tree quality: the height and SAH cost ([`DynamicTree::sah_cost`]) each insertion cost and
//! balancing gives on fixed box sets, inserted one by one in a fixed order (margin 0), and
//! those of the binned, agglomerative (PLOC) and exact greedy batch builds and of each
//! insertion followed by the incremental optimization.
//!
//! The cost is [`DynamicTree::sah_cost`]: the half perimeter (2D) or half surface area (3D)
//! of every branch but the root, summed, over the root's. The tables below give the sum
//! itself (the cost times the root's measure: a multiple of 0.5 for these boxes, exact in
//! `f64`), and the reports give the full perimeter of every branch, root included:
//! `2 * (sum + root)`.

use dynamic_aabb_tree::{
    Aabb, Balancing, CONVERGED, DynamicTree, InsertionCost, RebuildMethod, THOROUGH_CONVERGED,
    TreeConfig, Vector,
};
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

/// The trees the rebuild methods and the optimization make over `boxes` (margin 0), each
/// validated after every operation: `(method, height, branch sum)`. `binned`,
/// `agglomerative` and `greedy` are one batch creation of every box;
/// `INSERTION/BALANCING+optimize` is the tree of `build` followed by
/// [`DynamicTree::optimize_until_converged`] (at most 100 passes).
fn rebuilt_and_optimized<V: Vector>(boxes: &[Aabb<V>]) -> Vec<(String, u32, f64)> {
    let mut got = Vec::new();
    let items: Vec<(Aabb<V>, V, u32)> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| (*b, V::default(), i as u32))
        .collect();
    for (name, rebuild) in [
        ("binned", RebuildMethod::BinnedSah),
        ("agglomerative", RebuildMethod::Agglomerative),
        ("greedy", RebuildMethod::Greedy),
    ] {
        let mut tree = DynamicTree::new(TreeConfig {
            margin: 0.0,
            rebuild,
            ..TreeConfig::default()
        });
        tree.create_proxies(&items).expect("valid boxes");
        tree.validate().expect("valid after the batch");
        // A rebuild over the same leaves makes the same tree.
        let sum = tree.sah_cost() * root_measure(&tree);
        tree.rebuild();
        tree.validate().expect("valid after the rebuild");
        assert_eq!(tree.sah_cost() * root_measure(&tree), sum, "{name} rebuild");
        got.push((name.to_owned(), tree.stats().height, sum));
    }
    for insertion in InsertionCost::ALL {
        for balancing in [Plain, Rotations] {
            let mut tree = build(boxes, insertion, balancing);
            let before = tree.sah_cost();
            let count = boxes.len().div_ceil(8);
            let mut passes = 0;
            // `optimize_until_converged`, one pass at a time to validate after each.
            loop {
                passes += 1;
                let cost = tree.sah_cost();
                assert!(tree.optimize(count) > 0);
                tree.validate().expect("valid after a pass");
                if tree.sah_cost() > cost * (1.0 - CONVERGED) || passes == 100 {
                    break;
                }
            }
            let mut again = build(boxes, insertion, balancing);
            assert_eq!(again.optimize_until_converged(100), passes);
            assert_eq!(again.sah_cost(), tree.sah_cost());
            assert!(tree.sah_cost() <= before, "{insertion:?} {balancing:?}");
            let name = format!("{insertion:?}/{balancing:?}+optimize");
            let sum = tree.sah_cost() * root_measure(&tree);
            got.push((name, tree.stats().height, sum));
        }
    }
    got
}

/// The trees of `rebuilt_and_optimized`, each followed by the thorough optimization
/// ([`DynamicTree::optimize_thorough`], at most 100 rounds), made one pass at a time: each
/// pass validated, the cost never rising; `(method, height, branch sum)` with `+thorough`
/// added to each name.
fn thorough<V: Vector>(boxes: &[Aabb<V>]) -> Vec<(String, u32, f64)> {
    let items: Vec<(Aabb<V>, V, u32)> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| (*b, V::default(), i as u32))
        .collect();
    let mut starts = Vec::new();
    for (name, rebuild) in [
        ("binned", RebuildMethod::BinnedSah),
        ("agglomerative", RebuildMethod::Agglomerative),
        ("greedy", RebuildMethod::Greedy),
    ] {
        let mut tree = DynamicTree::new(TreeConfig {
            margin: 0.0,
            rebuild,
            ..TreeConfig::default()
        });
        tree.create_proxies(&items).expect("valid boxes");
        starts.push((name.to_owned(), tree));
    }
    for insertion in InsertionCost::ALL {
        for balancing in [Plain, Rotations] {
            let mut tree = build(boxes, insertion, balancing);
            tree.optimize_until_converged(100);
            starts.push((format!("{insertion:?}/{balancing:?}+optimize"), tree));
        }
    }
    let mut got = Vec::new();
    for (name, mut tree) in starts {
        let mut again = tree.clone();
        let mut rounds = 0;
        loop {
            rounds += 1;
            let cost = tree.sah_cost();
            let mut moved = tree.reinsert_subtrees();
            tree.validate().expect("valid after reinsertion");
            let between = tree.sah_cost();
            assert!(
                between <= cost,
                "{name}: reinsertion raised {cost} to {between}"
            );
            moved += tree.restructure_treelets();
            tree.validate().expect("valid after restructuring");
            let after = tree.sah_cost();
            assert!(
                after <= between,
                "{name}: treelets raised {between} to {after}"
            );
            if moved == 0 || after > cost * (1.0 - THOROUGH_CONVERGED) || rounds == 100 {
                break;
            }
        }
        assert_eq!(again.optimize_thorough(100), rounds, "{name}");
        assert_eq!(again.sah_cost(), tree.sah_cost(), "{name}");
        let sum = tree.sah_cost() * root_measure(&tree);
        got.push((format!("{name}+thorough"), tree.stats().height, sum));
    }
    got
}

/// Compares `rebuilt_and_optimized(boxes)` with `want`.
fn check_rebuilt_and_optimized<V: Vector>(boxes: &[Aabb<V>], want: &[(&str, u32, f64)]) {
    check_rows(rebuilt_and_optimized(boxes), want);
}

/// Compares `(method, height, branch sum)` rows with `want`.
fn check_rows(got: Vec<(String, u32, f64)>, want: &[(&str, u32, f64)]) {
    let report = got
        .iter()
        .map(|(m, h, s)| format!("(\"{m}\", {h}, {s:?}),"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(got.len(), want.len(), "{report}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            g.0 == w.0 && g.1 == w.1 && (g.2 - w.2).abs() < 1e-9,
            "got {g:?}, want {w:?}; all:\n{report}"
        );
    }
}

#[test]
fn pyramid_rebuilt_and_optimized() {
    // Branch perimeters, root included (2 * (sum + 14)): the agglomerative build 303 (height
    // 6), below Box2D's 317 with rotations; the exact greedy build 304 (the pyramid's many
    // equal unions are ties, which PLOC's radius breaks otherwise); the least, 301, is
    // SurfaceArea with rotations followed by the optimization.
    check_rebuilt_and_optimized(
        &pyramid(),
        &[
            ("binned", 6, 139.5),
            ("agglomerative", 6, 137.5),
            ("greedy", 6, 138.0),
            ("Volume/None+optimize", 6, 140.5),
            ("Volume/Rotations+optimize", 6, 140.0),
            ("Perimeter/None+optimize", 7, 141.5),
            ("Perimeter/Rotations+optimize", 6, 138.0),
            ("SurfaceArea/None+optimize", 6, 139.0),
            ("SurfaceArea/Rotations+optimize", 6, 136.5),
            ("ExactSurfaceArea/None+optimize", 6, 140.5),
            ("ExactSurfaceArea/Rotations+optimize", 6, 138.5),
        ],
    );
}

#[test]
fn flat_boxes_rebuilt_and_optimized() {
    // The list `Volume` inserts (height 63) comes out of the optimization at height 9; the
    // agglomerative builds (PLOC and the exact greedy) are balanced trees (6 = log2(64)) of
    // the least cost seen here.
    check_rebuilt_and_optimized(
        &flat_grid(),
        &[
            ("binned", 6, 531.5),
            ("agglomerative", 6, 501.5),
            ("greedy", 6, 501.5),
            ("Volume/None+optimize", 9, 515.0),
            ("Volume/Rotations+optimize", 8, 536.75),
            ("Perimeter/None+optimize", 9, 581.75),
            ("Perimeter/Rotations+optimize", 8, 618.5),
            ("SurfaceArea/None+optimize", 6, 501.5),
            ("SurfaceArea/Rotations+optimize", 6, 501.5),
            ("ExactSurfaceArea/None+optimize", 6, 501.5),
            ("ExactSurfaceArea/Rotations+optimize", 6, 501.5),
        ],
    );
}

#[test]
fn pyramid_thorough() {
    // Branch perimeters, root included (2 * (sum + 14)): the thorough optimization takes
    // every start to 301 to 305 (height 6); 301 (136.5) is the least seen from any method.
    check_rows(
        thorough(&pyramid()),
        &[
            ("binned+thorough", 6, 137.5),
            ("agglomerative+thorough", 6, 136.5),
            ("greedy+thorough", 6, 136.5),
            ("Volume/None+optimize+thorough", 6, 137.5),
            ("Volume/Rotations+optimize+thorough", 6, 138.0),
            ("Perimeter/None+optimize+thorough", 6, 138.5),
            ("Perimeter/Rotations+optimize+thorough", 6, 137.0),
            ("SurfaceArea/None+optimize+thorough", 6, 137.0),
            ("SurfaceArea/Rotations+optimize+thorough", 6, 136.5),
            ("ExactSurfaceArea/None+optimize+thorough", 6, 136.5),
            ("ExactSurfaceArea/Rotations+optimize+thorough", 6, 136.5),
        ],
    );
}

#[test]
fn flat_boxes_thorough() {
    // The binned build (531.5) is a local minimum of both moves; the optimized `Volume` tree
    // (515.0, height 9) reaches the balanced tree of 501.5, `Perimeter`'s come down from
    // 581.75 and 618.5.
    check_rows(
        thorough(&flat_grid()),
        &[
            ("binned+thorough", 6, 531.5),
            ("agglomerative+thorough", 6, 501.5),
            ("greedy+thorough", 6, 501.5),
            ("Volume/None+optimize+thorough", 6, 501.5),
            ("Volume/Rotations+optimize+thorough", 7, 503.0),
            ("Perimeter/None+optimize+thorough", 8, 541.25),
            ("Perimeter/Rotations+optimize+thorough", 7, 513.5),
            ("SurfaceArea/None+optimize+thorough", 6, 501.5),
            ("SurfaceArea/Rotations+optimize+thorough", 6, 501.5),
            ("ExactSurfaceArea/None+optimize+thorough", 6, 501.5),
            ("ExactSurfaceArea/Rotations+optimize+thorough", 6, 501.5),
        ],
    );
}
