//! UI tests of the tree view (egui_kittest, headless): folding a branch by its marker and
//! opening it again, folding kept across steps, Expand all and Collapse to depth, the scenes'
//! labels and Randall's branch letters, the icicle layout's cells, and focusing the
//! selection.

use aabb_app::prefs::{TreeLayoutKind, ViewMode};
use aabb_app::{Command, DebuggerApp, Pick};
use aabb_model::scene::Scene;
use aabb_model::tree::NodeId;
use eframe::egui;
use egui::accesskit::Role;
use egui::{Key, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use crate::common::ui;
use crate::common::ui::click_at;

/// `count` still spheres in a row, ids 0.., labelled when `labels`.
fn row_scene(count: u32, labels: bool) -> Scene {
    let spheres: Vec<String> = (0..count)
        .map(|i| {
            let label = if labels {
                format!("label: \"s{i}\", ")
            } else {
                String::new()
            };
            format!(
                "(id: {i}, {label}center: ({}.0, 5.0), radius: 1.0, velocity: (0.0, 0.0))",
                3 * i + 2
            )
        })
        .collect();
    let text = format!(
        r#"(format_version: 1, name: "row", dimensions: 2,
            world: (min: (0.0, 0.0), max: ({}.0, 10.0)), dt: 0.016666668,
            tree: (margin: 0.2, velocity_lookahead: 0.0, insertion: SurfaceArea,
                   balancing: Rotations, pairs: SelfTraversal),
            spheres: [{}], generate: None, view: None)"#,
        3 * count + 2,
        spheres.join(",\n")
    );
    Scene::parse(&text, "row.ron", false).expect("the row scene is valid")
}

fn scene_file(name: &str) -> Scene {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenes")
        .join(name);
    Scene::load(&path).expect("the scene file loads")
}

/// The app on `scene` with the tree view alone in a 1000 x 700 window.
fn harness_with(scene: Scene) -> Harness<'static, DebuggerApp> {
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1000.0, 700.0)),
        scene,
    );
    {
        let prefs = h.state_mut().prefs_mut();
        prefs.view_mode = ViewMode::Tree;
        prefs.show_controls = false;
        prefs.show_stats = false;
        prefs.show_events = false;
    }
    h.run_steps(3);
    h
}

/// The leaves' node ids under snapshot node `index`.
fn leaves_under(h: &Harness<'_, DebuggerApp>, index: usize) -> Vec<NodeId> {
    let snap = h.state().inspect().snapshot();
    let mut out = Vec::new();
    let mut stack = vec![index];
    while let Some(i) = stack.pop() {
        match snap.nodes[i].children {
            Some([a, b]) => stack.extend([a, b]),
            None => out.push(snap.nodes[i].id),
        }
    }
    out.sort();
    out
}

/// The texts drawn for a node last frame.
fn labels_of(h: &Harness<'_, DebuggerApp>, node: NodeId) -> Vec<String> {
    h.state()
        .inspect()
        .tree_view()
        .labels()
        .iter()
        .filter(|l| l.node == node)
        .map(|l| l.text.clone())
        .collect()
}

/// The snapshot index and id of the branch with the most leaves below the root's children.
fn a_child_branch(h: &Harness<'_, DebuggerApp>) -> (usize, NodeId) {
    let snap = h.state().inspect().snapshot();
    let [a, b] = snap.nodes[0].children.expect("the root is a branch");
    let i = [a, b]
        .into_iter()
        .filter(|&i| snap.nodes[i].children.is_some())
        .max_by_key(|&i| (snap.leaves_below(i), std::cmp::Reverse(i)))
        .expect("a child branch");
    (i, snap.nodes[i].id)
}

#[test]
fn a_branch_folds_by_its_marker_and_opens_again() {
    let mut h = harness_with(row_scene(10, false));
    let (index, branch) = a_child_branch(&h);
    let leaves = leaves_under(&h, index);
    assert!(leaves.len() >= 2, "{leaves:?}");
    for &leaf in &leaves {
        assert!(
            h.state().inspect().tree_node_screen_pos(leaf).is_some(),
            "{leaf:?}"
        );
    }
    let toggle = h
        .state()
        .inspect()
        .tree_view()
        .toggle_screen_pos(branch)
        .expect("a fold marker at 10 leaves");
    click_at(&mut h, toggle);
    for &leaf in &leaves {
        assert_eq!(
            h.state().inspect().tree_node_screen_pos(leaf),
            None,
            "{leaf:?}"
        );
    }
    assert!(h.state().inspect().tree_node_screen_pos(branch).is_some());
    assert_eq!(labels_of(&h, branch), vec![format!("+{}", leaves.len())]);
    assert_eq!(
        h.state().inspect().selection(),
        None,
        "the marker does not select"
    );

    // Still folded after steps of the (still) scene: the folding is kept by key.
    h.state_mut().push_command(Command::Step);
    h.state_mut().push_command(Command::Step);
    h.run_steps(2);
    assert_eq!(h.state().inspect().tree_node_screen_pos(leaves[0]), None);

    let toggle = h
        .state()
        .inspect()
        .tree_view()
        .toggle_screen_pos(branch)
        .expect("the folded branch's marker");
    click_at(&mut h, toggle);
    for &leaf in &leaves {
        assert!(
            h.state().inspect().tree_node_screen_pos(leaf).is_some(),
            "{leaf:?}"
        );
    }
    assert_eq!(labels_of(&h, branch), Vec::<String>::new());
}

#[test]
fn opening_a_scene_starts_the_folding_over() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("row.ron");
    let scene = row_scene(10, false);
    scene.save(&path).expect("saved");
    let mut h = harness_with(scene);
    let (index, branch) = a_child_branch(&h);
    let leaves = leaves_under(&h, index);
    let toggle = h
        .state()
        .inspect()
        .tree_view()
        .toggle_screen_pos(branch)
        .expect("a fold marker");
    click_at(&mut h, toggle);
    assert_eq!(h.state().inspect().tree_node_screen_pos(leaves[0]), None);
    // The same tree again, from the file: nothing folded any more.
    h.state_mut().push_command(Command::Open(path));
    h.run_steps(3);
    assert_eq!(
        h.state().inspect().path(),
        Some(dir.path().join("row.ron").as_path())
    );
    assert_eq!(leaves_under(&h, index), leaves, "the same tree");
    for &leaf in &leaves {
        assert!(
            h.state().inspect().tree_node_screen_pos(leaf).is_some(),
            "{leaf:?}"
        );
    }
}

#[test]
fn collapse_to_depth_and_expand_all() {
    let mut h = harness_with(row_scene(10, false));
    let total = h.state().inspect().snapshot().nodes.len();
    assert_eq!(h.state().inspect().tree_view().layout().items.len(), total);
    // "Collapse to depth" at its default, 3 (the row of 10 is deeper than that).
    h.get_by_role_and_label(Role::Button, "Collapse to depth")
        .click();
    h.run_steps(3);
    assert_eq!(h.state().inspect().prefs().tree_collapse_depth, 3);
    let snap = h.state().inspect().snapshot();
    let shown = snap.nodes.iter().filter(|n| {
        let mut at = n.parent;
        while let Some(p) = at {
            if snap.nodes[p].depth >= 3 {
                return false;
            }
            at = snap.nodes[p].parent;
        }
        true
    });
    let shown = shown.count();
    assert!(shown < total, "{shown} of {total}");
    assert_eq!(h.state().inspect().tree_view().layout().items.len(), shown);
    h.get_by_label("Expand all").click();
    h.run_steps(3);
    assert_eq!(h.state().inspect().tree_view().layout().items.len(), total);
}

#[test]
fn the_tree_shows_the_scene_labels() {
    let mut h = harness_with(scene_file("abcd-view-and-hierarchy.ron"));
    h.run_steps(1);
    let snap = h.state().inspect().snapshot().clone();
    let mut texts: Vec<String> = h
        .state()
        .inspect()
        .tree_view()
        .labels()
        .iter()
        .map(|l| l.text.clone())
        .collect();
    texts.sort();
    assert_eq!(texts, ["A", "B", "C", "D"]);
    for label in h.state().inspect().tree_view().labels() {
        let index = snap.node_index(label.node).expect("a node");
        let id = snap.nodes[index].sphere.expect("a leaf");
        assert_eq!(
            snap.sphere(id).and_then(|s| s.label.clone()),
            Some(label.text.clone())
        );
    }
}

#[test]
fn randall_step_3_names_the_root_a_and_the_new_branch_b() {
    let h = harness_with(scene_file("randall-tree-step3.ron"));
    let snap = h.state().inspect().snapshot();
    let root = snap.nodes[0].id;
    let leaf_of = |id: u32| {
        snap.sphere(id)
            .and_then(|s| s.node)
            .expect("a leaf for the sphere")
    };
    let b = snap.nodes[leaf_of(1)].parent.expect("leaf 1 has a parent");
    assert_eq!(snap.nodes[leaf_of(3)].parent, Some(b));
    assert_eq!(snap.nodes[b].parent, Some(0));
    assert_eq!(snap.nodes[leaf_of(2)].parent, Some(0));
    assert_eq!(labels_of(&h, root), ["a"]);
    assert_eq!(labels_of(&h, snap.nodes[b].id), ["b"]);
    for id in [1, 2, 3] {
        assert_eq!(labels_of(&h, snap.nodes[leaf_of(id)].id), [id.to_string()]);
    }
}

#[test]
fn icicle_cells_are_proportional_to_leaves_and_nested() {
    let mut h = harness_with(row_scene(12, true));
    h.state_mut()
        .push_command(Command::SetPref(aabb_app::prefs::PrefChange::TreeLayout(
            TreeLayoutKind::Icicle,
        )));
    h.run_steps(3);
    assert_eq!(
        h.state().inspect().prefs().tree_layout,
        TreeLayoutKind::Icicle
    );
    let view = h.state().inspect().tree_view();
    let layout = view.layout();
    let snap = h.state().inspect().snapshot();
    assert_eq!(layout.kind, TreeLayoutKind::Icicle);
    assert_eq!(layout.items.len(), snap.nodes.len());
    assert_eq!(layout.width, 12.0);
    let total = layout.items[layout.item_of(0).expect("the root")].cell();
    for item in &layout.items {
        let cell = item.cell();
        let node = &snap.nodes[item.node];
        assert_eq!(cell.width(), layout.leaves_below(item.node) as f32);
        assert_eq!(cell.height(), 1.0);
        assert_eq!(cell.center().y, node.depth as f32);
        if node.children.is_none() {
            assert_eq!(cell.width() / total.width(), 1.0 / 12.0);
        }
        if let Some(p) = item.parent {
            let parent = layout.items[p].cell();
            assert!(
                parent.min.x <= cell.min.x && cell.max.x <= parent.max.x,
                "{cell:?} in {parent:?}"
            );
            assert_eq!(parent.max.y, cell.min.y);
        }
        if let Some([a, b]) = node.children {
            let ca = layout.items[layout.item_of(a).expect("drawn")].cell();
            let cb = layout.items[layout.item_of(b).expect("drawn")].cell();
            assert_eq!(
                (ca.min.x, ca.max.x, cb.max.x),
                (cell.min.x, cb.min.x, cell.max.x)
            );
        }
    }
    // Picking a leaf's cell selects its sphere, as in the node-link diagram.
    let leaf = snap.sphere(5).and_then(|s| s.node).expect("a leaf");
    let id = snap.nodes[leaf].id;
    let pos = h.state().inspect().tree_node_screen_pos(id).expect("drawn");
    click_at(&mut h, pos);
    assert_eq!(h.state().inspect().selection(), Some(Pick::Sphere(5)));
    assert_eq!(labels_of(&h, id), ["s5"]);
}

#[test]
fn focus_centres_the_selection_and_opens_its_folded_branches() {
    let mut h = harness_with(row_scene(40, false));
    h.get_by_role_and_label(Role::Button, "Collapse to depth")
        .click();
    h.run_steps(3);
    // The deepest leaf: hidden under a folded branch.
    let (id, node) = {
        let snap = h.state().inspect().snapshot();
        let leaf = snap
            .nodes
            .iter()
            .filter(|n| n.children.is_none())
            .max_by_key(|n| (n.depth, std::cmp::Reverse(n.sphere)))
            .expect("leaves");
        (leaf.sphere.expect("a sphere"), leaf.id)
    };
    assert!(
        h.state()
            .inspect()
            .snapshot()
            .nodes
            .iter()
            .any(|n| n.id == node)
    );
    assert_eq!(
        h.state().inspect().tree_node_screen_pos(node),
        None,
        "folded away"
    );
    h.state_mut()
        .push_command(Command::Select(Some(Pick::Sphere(id))));
    h.run_steps(2);
    h.key_press(Key::C);
    h.run_steps(2);
    let center = h
        .state()
        .inspect()
        .tree_view()
        .diagram_rect()
        .expect("drawn")
        .center();
    let pos = h
        .state()
        .inspect()
        .tree_node_screen_pos(node)
        .expect("opened and drawn");
    assert!((pos - center).length() < 0.01, "{pos:?} vs {center:?}");

    // The Focus button does the same after a pan.
    h.state_mut().push_command(Command::Fit);
    h.run_steps(2);
    let moved = h
        .state()
        .inspect()
        .tree_node_screen_pos(node)
        .expect("drawn");
    assert!((moved - center).length() > 1.0);
    h.get_by_label("Focus").click();
    h.run_steps(2);
    let pos = h
        .state()
        .inspect()
        .tree_node_screen_pos(node)
        .expect("drawn");
    assert!((pos - center).length() < 0.01, "{pos:?} vs {center:?}");
}

/// Snapshot images of the tree view alone (`UPDATE_SNAPSHOTS=1` rewrites them).
#[cfg(feature = "snapshots")]
mod looks {
    use super::*;

    /// `count` generated spheres (seeded), in the tree view alone, with `layout`.
    fn shot(scene: Scene, layout: TreeLayoutKind, name: &str) {
        let mut h = ui::app_harness(
            Harness::builder().with_size(Vec2::new(900.0, 560.0)).wgpu(),
            scene,
        );
        {
            let prefs = h.state_mut().prefs_mut();
            prefs.view_mode = ViewMode::Tree;
            prefs.show_controls = false;
            prefs.show_stats = false;
            prefs.show_events = false;
            prefs.tree_layout = layout;
        }
        h.run_steps(4);
        h.snapshot(name);
    }

    fn generated(count: u32) -> Scene {
        let text = format!(
            r#"(format_version: 1, name: "generated", dimensions: 2,
                world: (min: (0.0, 0.0), max: (200.0, 200.0)), dt: 0.016666668,
                tree: (margin: 0.2, velocity_lookahead: 0.0, insertion: SurfaceArea,
                       balancing: Rotations, pairs: SelfTraversal),
                spheres: [], generate: Some((count: {count}, radius: (0.5, 1.5),
                speed: (0.0, 0.0), seed: 7)), view: None)"#
        );
        Scene::parse(&text, "generated.ron", false).expect("valid scene")
    }

    #[test]
    fn tree_10_node_link() {
        shot(
            row_scene(10, true),
            TreeLayoutKind::NodeLink,
            "tree_10_node_link",
        );
    }

    #[test]
    fn tree_10_icicle() {
        shot(
            row_scene(10, true),
            TreeLayoutKind::Icicle,
            "tree_10_icicle",
        );
    }

    #[test]
    fn tree_1000_node_link() {
        shot(
            generated(1000),
            TreeLayoutKind::NodeLink,
            "tree_1000_node_link",
        );
    }

    #[test]
    fn tree_1000_icicle() {
        shot(generated(1000), TreeLayoutKind::Icicle, "tree_1000_icicle");
    }

    #[test]
    fn tree_randall_step3() {
        shot(
            scene_file("randall-tree-step3.ron"),
            TreeLayoutKind::NodeLink,
            "tree_randall_step3",
        );
    }
}
