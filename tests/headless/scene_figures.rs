//! The facts each figure's scene shows, checked headless so the figures stay
//! true when the code changes: contacts against candidates, reinserts, recomputation, the
//! shape of the tree, and velocity-stretched boxes.

use aabb_debugger::broadphase::{BroadphaseKind, TreeRef};
use aabb_debugger::scene::{Scene, Simulation};
use aabb_debugger::tree::{DynamicTree, NodeId, Vector};
use std::path::Path;

fn sim(name: &str) -> Simulation {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes")
        .join(name);
    let scene = Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(&scene, BroadphaseKind::Tree).expect("sim")
}

/// The tree as nested text: a leaf is its sphere's label (or id), a branch `(x y)` with its
/// children in text order, so the shape can be compared whatever the child order.
fn shape_of<V: Vector>(tree: &DynamicTree<V, u32>, sim: &Simulation, node: NodeId) -> String {
    let view = tree.node(node).expect("node");
    match (view.children, view.proxy) {
        (Some([a, b]), _) => {
            let mut parts = [shape_of(tree, sim, a), shape_of(tree, sim, b)];
            parts.sort();
            format!("({} {})", parts[0], parts[1])
        }
        (None, Some(proxy)) => {
            let id = tree.user_data(proxy).expect("live");
            let body = sim.body(id).expect("body");
            body.sphere.label.clone().unwrap_or_else(|| id.to_string())
        }
        (None, None) => panic!("a leaf without a proxy"),
    }
}

fn shape(sim: &Simulation) -> String {
    match sim.broadphase().tree_view().expect("tree") {
        TreeRef::D2(t) => {
            t.validate().expect("valid");
            t.root().map_or(String::new(), |r| shape_of(t, sim, r))
        }
        TreeRef::D3(t) => {
            t.validate().expect("valid");
            t.root().map_or(String::new(), |r| shape_of(t, sim, r))
        }
    }
}

#[test]
fn choi_results_three_candidates_two_contacts() {
    let mut s = sim("choi-results.ron");
    for _ in 0..50 {
        s.step().expect("step");
    }
    let r = s.report();
    assert_eq!(r.candidate_pairs, [(0, 1), (2, 3), (4, 5)]);
    assert_eq!(r.contacts, [(0, 1), (4, 5)]);
    let five = s.body(5).expect("5").sphere.radius;
    assert!(
        s.bodies()
            .iter()
            .all(|b| b.sphere.id == 5 || b.sphere.radius < five)
    );
    assert_eq!(r.tree.expect("stats").leaves, 6);
}

#[test]
fn choi_move_within_margin_at_step_20() {
    let mut s = sim("choi-move-within-margin.ron");
    for _ in 0..20 {
        let r = s.step().expect("step");
        assert!(r.reinserted.is_empty() && !r.pairs_recomputed && r.events.is_empty());
    }
}

#[test]
fn choi_move_out_of_margin_at_step_4() {
    let mut s = sim("choi-move-out-of-margin.ron");
    for _ in 0..4 {
        let r = s.step().expect("step");
        assert_eq!(r.reinserted, [5]);
        assert!(r.pairs_recomputed);
        assert!(!r.events.is_empty());
    }
}

#[test]
fn choi_appear_disappear_at_step_20() {
    let mut s = sim("choi-appear-disappear.ron");
    for _ in 0..20 {
        s.step().expect("step");
    }
    let r = s.report();
    assert_eq!(
        (r.appeared.as_slice(), r.disappeared.as_slice()),
        (&[6][..], &[2][..])
    );
    assert!(r.pairs_recomputed);
    assert_eq!(r.tree.expect("stats").leaves, 6);
}

#[test]
fn choi_velocity_fattening_stretches_leaf_boxes_along_the_velocity() {
    let s = sim("choi-velocity-fattening.ron");
    let settings = s.tree_settings();
    assert_eq!((settings.margin, settings.velocity_lookahead), (0.05, 0.5));
    for body in s.bodies() {
        let sphere = &body.sphere;
        let fat = s.broadphase().fat_aabb(sphere.id).expect("fat");
        for axis in 0..2 {
            let v = sphere.velocity[axis] * 0.5;
            let lo = sphere.center[axis] - sphere.radius - 0.05 + v.min(0.0);
            let hi = sphere.center[axis] + sphere.radius + 0.05 + v.max(0.0);
            assert!(
                (fat.min[axis] - lo).abs() < 1e-5,
                "{} axis {axis}",
                sphere.id
            );
            assert!(
                (fat.max[axis] - hi).abs() < 1e-5,
                "{} axis {axis}",
                sphere.id
            );
        }
    }
    // At least four spheres move, each along another direction.
    assert!(
        s.bodies()
            .iter()
            .filter(|b| b.sphere.velocity.length() > 0.0)
            .count()
            >= 4
    );
}

#[test]
fn randall_simple_intersecting_and_bounding_aabbs() {
    let simple = sim("randall-simple-aabbs.ron");
    assert!(simple.report().candidate_pairs.is_empty());
    let intersecting = sim("randall-intersecting-aabbs.ron");
    assert_eq!(intersecting.report().candidate_pairs, [(1, 2)]);
    assert_eq!(intersecting.report().contacts, [(1, 2)]);
    // Boxes that do not touch around shapes that do not touch: no candidate, no contact,
    // and a visible gap between the boxes on both axes' projections of the figure.
    let bounding = sim("randall-bounding-aabbs.ron");
    assert!(bounding.report().candidate_pairs.is_empty());
    assert!(bounding.report().contacts.is_empty());
    let (a, b) = (
        bounding.broadphase().fat_aabb(1).expect("box 1"),
        bounding.broadphase().fat_aabb(2).expect("box 2"),
    );
    assert!(b.min.x - a.max.x >= 1.0, "{a:?} {b:?}");
}

#[test]
fn randall_tree_built_step_by_step() {
    assert_eq!(shape(&sim("randall-tree-step1.ron")), "1");
    assert_eq!(shape(&sim("randall-tree-step2.ron")), "(1 2)");
    // Branch b pairs 1 and 3 under the root a, beside leaf 2.
    let step3 = sim("randall-tree-step3.ron");
    assert_eq!(shape(&step3), "((1 3) 2)");
    assert_eq!(step3.report().contacts, [(1, 3)]);
}

#[test]
fn randall_velocity_aabb_is_stretched_one_second_along_x() {
    let s = sim("randall-velocity-aabb.ron");
    let one = &s.body(1).expect("1").sphere;
    assert_eq!(one.velocity.to_array(), [1.0, 0.0, 0.0]);
    let fat = s.broadphase().fat_aabb(1).expect("fat");
    let got = [fat.min.x, fat.max.x, fat.min.y, fat.max.y];
    let want = [3.4, 7.6, 3.4, 6.6];
    assert!(
        got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-5),
        "{got:?}"
    );
    // Object 2 is still: only the margin.
    let two = s.broadphase().fat_aabb(2).expect("fat");
    assert!((two.max.x - two.min.x - 3.2).abs() < 1e-5);
}

#[test]
fn abcd_root_over_ab_and_cd() {
    let s = sim("abcd-view-and-hierarchy.ron");
    assert_eq!(shape(&s), "((A B) (C D))");
    assert!(s.report().contacts.is_empty());
}

#[test]
fn gaul_5000_bodies_move() {
    let mut s = sim("gaul-5000-bodies.ron");
    assert_eq!(s.bodies().len(), 5000);
    let mut reinserts = 0;
    for _ in 0..10 {
        reinserts += s.step().expect("step").reinserted.len();
    }
    assert!(reinserts > 0);
    assert_eq!(s.report().tree.expect("stats").leaves, 5000);
}
