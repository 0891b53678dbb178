//! UI tests of the tree view's "Changes since the previous step" (egui_kittest, headless):
//! a sphere that leaves its fat box at a known step marks exactly the nodes an independent
//! diff of the two trees (sets of spheres compared exactly) finds; a step where nothing
//! leaves marks nothing; past steps of the timeline compare with their previous step,
//! rebuilt from the recording once and then kept.

use aabb_app::prefs::ViewMode;
use aabb_app::views::tree::TreeDiff;
use aabb_app::{Command, DebuggerApp};
use aabb_model::broadphase::TreeRef;
use aabb_model::scene::Scene;
use aabb_model::source::Sim;
use aabb_model::tree::NodeId;
use eframe::egui;
use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::collections::BTreeSet;

use crate::common::ui;

use aabb_app::views::tree::CHANGES_TOGGLE as TOGGLE;

/// Six still spheres in a row (ids 0 to 5, x = 2, 8, ..., 32, y = 5) and sphere 6 at (2, 8)
/// moving right at `speed` units a second (dt 1/60, margin 0.2, no look-ahead).
fn scene(speed: f32) -> Scene {
    let mut spheres: Vec<String> = (0..6)
        .map(|i| {
            format!(
                "(id: {i}, center: ({}.0, 5.0), radius: 1.0, velocity: (0.0, 0.0))",
                6 * i + 2
            )
        })
        .collect();
    spheres.push(format!(
        "(id: 6, center: (2.0, 8.0), radius: 1.0, velocity: ({speed:?}, 0.0))"
    ));
    let text = format!(
        r#"(format_version: 1, name: "mover", dimensions: 2,
            world: (min: (0.0, 0.0), max: (40.0, 10.0)), dt: 0.016666668,
            tree: (margin: 0.2, velocity_lookahead: 0.0, insertion: SurfaceArea,
                   balancing: Rotations, pairs: SelfTraversal),
            spheres: [{}], generate: None, view: None)"#,
        spheres.join(",\n")
    );
    Scene::parse(&text, "mover.ron", false).expect("the scene is valid")
}

/// The app on `scene` with the tree view alone, its changes shown.
fn harness(scene: Scene) -> Harness<'static, DebuggerApp> {
    harness_in(
        Harness::builder().with_size(Vec2::new(1000.0, 700.0)),
        scene,
    )
}

fn harness_in(
    builder: egui_kittest::HarnessBuilder<DebuggerApp>,
    scene: Scene,
) -> Harness<'static, DebuggerApp> {
    let mut h = ui::app_harness(builder, scene);
    {
        let prefs = h.state_mut().prefs_mut();
        prefs.view_mode = ViewMode::Tree;
        prefs.show_controls = false;
        prefs.show_stats = false;
        prefs.show_events = false;
        prefs.show_timeline = false;
    }
    h.run_steps(2);
    h.get_by_label(TOGGLE).click();
    h.run_steps(2);
    h
}

fn step(h: &mut Harness<'_, DebuggerApp>, command: Command) {
    h.state_mut().push_command(command);
    h.run_steps(2);
}

/// The changes shown, for step `at`.
fn shown(h: &Harness<'_, DebuggerApp>, at: u64) -> TreeDiff {
    let changes = h
        .state()
        .inspect()
        .tree_view()
        .changes()
        .expect("the changes are shown");
    assert_eq!(changes.step, at);
    changes.diff.clone().expect("the previous step was rebuilt")
}

/// One tree node: id, parent index, sphere, box.
type Node = (NodeId, Option<usize>, Option<u32>, [f32; 4]);

fn walk(sim: &Sim) -> Vec<Node> {
    let Some(TreeRef::D2(tree)) = sim.broadphase().tree_view() else {
        panic!("a 2D tree");
    };
    let mut nodes: Vec<Node> = Vec::new();
    tree.walk(|id, view, _| {
        let parent = view
            .parent
            .map(|p| nodes.iter().position(|n| n.0 == p).expect("parents first"));
        let sphere = view.proxy.map(|p| tree.user_data(p).expect("a live proxy"));
        let b = view.aabb;
        nodes.push((id, parent, sphere, [b.min.x, b.min.y, b.max.x, b.max.y]));
    });
    nodes
}

fn sets(nodes: &[Node]) -> Vec<BTreeSet<u32>> {
    let mut sets = vec![BTreeSet::new(); nodes.len()];
    for i in (0..nodes.len()).rev() {
        sets[i].extend(nodes[i].2);
        if let Some(p) = nodes[i].1 {
            let mine = sets[i].clone();
            sets[p].extend(mine);
        }
    }
    sets
}

/// Where each removed node's surviving spheres meet in `cur`: the smallest node over them
/// all (exact sets).
fn ghosts(prev: &Sim, cur: &Sim) -> Vec<Option<NodeId>> {
    let (a, c) = (walk(prev), walk(cur));
    let (sa, sc) = (sets(&a), sets(&c));
    let alive: BTreeSet<u32> = c.iter().filter_map(|n| n.2).collect();
    (0..a.len())
        .filter(|&i| !sc.contains(&sa[i]))
        .map(|i| {
            let survivors: BTreeSet<u32> = sa[i].intersection(&alive).copied().collect();
            if survivors.is_empty() {
                return None;
            }
            (0..c.len())
                .filter(|&k| sc[k].is_superset(&survivors))
                .min_by_key(|&k| sc[k].len())
                .map(|k| c[k].0)
        })
        .collect()
}

/// The diff of two trees by exact sets of spheres: (added, removed, refit) ids.
fn expected(prev: &Sim, cur: &Sim) -> (Vec<NodeId>, Vec<NodeId>, Vec<NodeId>) {
    let (a, c) = (walk(prev), walk(cur));
    let (sa, sc) = (sets(&a), sets(&c));
    let mut added = Vec::new();
    let mut refit = Vec::new();
    for (i, n) in c.iter().enumerate() {
        match sa.iter().position(|s| *s == sc[i]) {
            None => added.push(n.0),
            Some(p) if a[p].3 != n.3 => refit.push(n.0),
            Some(_) => {}
        }
    }
    let removed = a
        .iter()
        .enumerate()
        .filter(|(i, _)| !sc.contains(&sa[*i]))
        .map(|(_, n)| n.0)
        .collect();
    (added, removed, refit)
}

fn ids(d: &TreeDiff) -> (Vec<NodeId>, Vec<NodeId>, Vec<NodeId>) {
    (
        d.added.clone(),
        d.removed.iter().map(|r| r.id).collect(),
        d.refit.clone(),
    )
}

#[test]
fn a_sphere_leaving_its_fat_box_marks_exactly_the_changed_nodes() {
    // 12 units a step: sphere 6 leaves its fat box (0.2 around it) at step 1, from beside
    // sphere 0 to beside sphere 2, and again at step 2.
    let mut h = harness(scene(720.0));
    // Step 0 against an empty tree: every node is new (7 leaves, 6 branches).
    let d = shown(&h, 0);
    assert_eq!((d.added.len(), d.removed.len(), d.refit.len()), (13, 0, 0));
    step(&mut h, Command::Step);
    let report = h.state().inspect().sim().report();
    assert_eq!(report.reinserted, vec![6], "only sphere 6 left its fat box");
    let d = shown(&h, 1);
    let rec = h.state().inspect().recording();
    let (before, after) = (
        rec.state_at(0).expect("step 0"),
        rec.state_at(1).expect("step 1"),
    );
    let want = expected(&before, &after);
    assert_eq!(ids(&d), want);
    let ghosts_at: Vec<Option<NodeId>> = d.removed.iter().map(|r| r.ghost_at).collect();
    assert_eq!(ghosts_at, ghosts(&before, &after));
    // By hand: sphere 6 keeps its leaf (refit: another box); it left the branch it shared
    // with sphere 0 and joined sphere 2, so nodes were both removed and added.
    let leaf = walk(&after)
        .iter()
        .find(|n| n.2 == Some(6))
        .map(|n| n.0)
        .expect("sphere 6's leaf");
    assert!(d.refit.contains(&leaf), "{d:?}");
    assert!(!d.added.is_empty() && !d.removed.is_empty(), "{d:?}");
    // The header shows the counts.
    let header = format!(
        "Step 1 vs 0: +{} added · {} removed · {} refit",
        want.0.len(),
        want.1.len(),
        want.2.len()
    );
    assert!(h.query_by_label(&header).is_some(), "{header}");
    let removed_list = format!("{} removed nodes", want.1.len());
    assert!(h.query_by_label(&removed_list).is_some(), "{removed_list}");
    // The leaf's tooltip says how it changed.
    let pos = h
        .state()
        .inspect()
        .tree_node_screen_pos(leaf)
        .expect("sphere 6's leaf is drawn");
    h.event(egui::Event::PointerMoved(pos));
    h.run_steps(60);
    assert!(h.query_by_label_contains("Leaf: sphere 6").is_some());
    assert!(
        h.query_by_label_contains("\nrefit since the previous step")
            .is_some()
    );
    h.event(egui::Event::PointerGone);
    h.run_steps(2);
    // Playing on and stepping rebuilt nothing: each previous step was the one shown before.
    step(&mut h, Command::Step);
    let d = shown(&h, 2);
    let rec = h.state().inspect().recording();
    let want2 = expected(
        &rec.state_at(1).expect("step 1"),
        &rec.state_at(2).expect("step 2"),
    );
    assert_eq!(ids(&d), want2);
    assert_eq!(h.state().inspect().tree_view().changes_rebuilt(), 0);
    // Back on the timeline: step 1 against step 0 again, from the kept shapes.
    step(&mut h, Command::SeekTo(1));
    assert_eq!(ids(&shown(&h, 1)), want);
    step(&mut h, Command::SeekTo(2));
    assert_eq!(ids(&shown(&h, 2)), want2);
    assert_eq!(h.state().inspect().tree_view().changes_rebuilt(), 0);
}

#[test]
fn a_step_where_nothing_leaves_marks_nothing() {
    // 3 units a second: 0.05 a step, within the margin of 0.2 for three steps.
    let mut h = harness(scene(3.0));
    step(&mut h, Command::Step);
    assert!(h.state().inspect().sim().report().reinserted.is_empty());
    let d = shown(&h, 1);
    assert_eq!(ids(&d), (vec![], vec![], vec![]));
    assert!(
        h.query_by_label("Step 1 vs 0: +0 added · 0 removed · 0 refit")
            .is_some()
    );
}

#[test]
fn a_past_step_compares_with_its_previous_step_rebuilt_once() {
    let mut h = harness(scene(720.0));
    // Hidden while playing: nothing computed or kept.
    h.get_by_label(TOGGLE).click();
    h.run_steps(2);
    assert!(h.state().inspect().tree_view().changes().is_none());
    for _ in 0..3 {
        h.state_mut().apply(Command::Step, false);
    }
    step(&mut h, Command::SeekTo(2));
    h.get_by_label(TOGGLE).click();
    h.run_steps(2);
    let rec = h.state().inspect().recording();
    let want = expected(
        &rec.state_at(1).expect("step 1"),
        &rec.state_at(2).expect("step 2"),
    );
    assert_eq!(ids(&shown(&h, 2)), want);
    assert_eq!(
        h.state().inspect().tree_view().changes_rebuilt(),
        1,
        "step 1 rebuilt"
    );
    step(&mut h, Command::SeekTo(3));
    assert_eq!(
        h.state().inspect().tree_view().changes_rebuilt(),
        1,
        "step 2 was shown: kept"
    );
    step(&mut h, Command::SeekTo(2));
    assert_eq!(ids(&shown(&h, 2)), want);
    assert_eq!(
        h.state().inspect().tree_view().changes_rebuilt(),
        1,
        "step 1 kept"
    );
}

/// How the changes look: sphere 6 moved from beside sphere 0 to beside sphere 2 at step 1
/// (rings: added cyan / teal, refit amber; the removed nodes listed).
#[cfg(feature = "snapshots")]
fn snapshot_changes(theme: aabb_app::prefs::ThemeChoice, name: &str) {
    let builder = Harness::builder().with_size(Vec2::new(640.0, 420.0)).wgpu();
    let mut h = harness_in(builder, scene(720.0));
    h.state_mut().prefs_mut().theme = theme;
    step(&mut h, Command::Step);
    h.get_by_label_contains("removed nodes").click();
    h.run_steps(4);
    h.snapshot(name);
}

#[cfg(feature = "snapshots")]
#[test]
fn the_changes_dark() {
    snapshot_changes(aabb_app::prefs::ThemeChoice::Dark, "tree_changes_dark");
}

#[cfg(feature = "snapshots")]
#[test]
fn the_changes_light() {
    snapshot_changes(aabb_app::prefs::ThemeChoice::Light, "tree_changes_light");
}
