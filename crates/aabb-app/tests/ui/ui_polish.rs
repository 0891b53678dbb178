//! Small things a user notices: the generator panel remembers what a saved scene was made
//! with, and the tree view keeps the whole tree in sight as a trace's tree grows.

use aabb_app::Command;
use aabb_model::scene::Scene;
use eframe::egui;
use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};

use crate::common::ui;

/// A trace whose tree grows: step `s` has `2 (s + 1)` boxes in a row.
fn growing_trace() -> String {
    let mut t = String::from("aabb-trace 1 dims=2 dt=0.05\n");
    for s in 0..32u32 {
        t.push_str(&format!("step {s}\n"));
        for id in 0..2 * (s + 1) {
            let x = 3.0 * id as f32;
            t.push_str(&format!("{id} {x} 0 {} 1\n", x + 1.0));
        }
    }
    t
}

#[test]
fn the_tree_view_fits_again_as_a_traces_tree_grows() {
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("growing.trace");
    std::fs::write(&path, growing_trace()).expect("write the trace");
    h.state_mut().apply(Command::Open(path), false);
    h.run_steps(3);
    assert!(
        h.state().inspect().sim().is_trace(),
        "{}",
        h.state().inspect().status()
    );
    for _ in 0..31 {
        h.state_mut().apply(Command::Step, false);
        h.run_steps(1);
    }
    h.run_steps(2);
    assert_eq!(h.state().inspect().sim().live_count(), 64);
    let view = h
        .state()
        .inspect()
        .tree_view_rect()
        .expect("the tree view is drawn");
    let ids: Vec<_> = h
        .state()
        .inspect()
        .snapshot()
        .nodes
        .iter()
        .map(|n| n.id)
        .collect();
    let mut drawn = 0;
    for id in ids {
        if let Some(p) = h.state().inspect().tree_node_screen_pos(id) {
            drawn += 1;
            assert!(
                view.contains(p),
                "node {id:?} at {p:?} is outside the tree view {view:?}"
            );
        }
    }
    assert!(drawn >= 8, "only {drawn} nodes drawn");
}

#[test]
fn a_saved_generated_scene_reopens_with_its_generator_in_the_panel() {
    let text = r#"(
    format_version: 1,
    name: "generated",
    dimensions: 2,
    world: (min: (0.0, 0.0), max: (200.0, 200.0)),
    dt: 0.016666668,
    tree: (margin: 0.1),
    spheres: [],
    generate: Some((count: 345, radius: (0.5, 1.0), speed: (0.0, 1.0), seed: 4242)),
    view: None,
)"#;
    let scene = Scene::parse(text, "generated.ron", false).expect("valid");
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1440.0, 900.0)),
        scene,
    );
    h.run_steps(2);
    // Saved after some steps: the spheres are listed, the generator kept beside them.
    for _ in 0..5 {
        h.state_mut().apply(Command::Step, false);
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("saved.ron");
    h.state_mut().apply(Command::SaveAs(path.clone()), false);
    h.run_steps(2);
    assert!(
        h.state().inspect().error().is_none(),
        "{:?}",
        h.state().inspect().error()
    );
    let saved = Scene::load(&path).expect("the saved scene loads");
    assert_eq!(saved.generate, None);
    assert_eq!(saved.spheres.len(), 345);
    assert_eq!(
        saved
            .view
            .as_ref()
            .and_then(|v| v.generator.as_deref())
            .map(|g| (g.count, g.seed)),
        Some((345, 4242))
    );
    // Reopened: the panel shows count 345 and seed 4242, not the defaults.
    h.state_mut().apply(Command::Open(path), true);
    h.run_steps(3);
    let number_of = |label: &str| {
        h.get_all_by_label(label)
            .next()
            .unwrap_or_else(|| panic!("a {label} field"))
            .accesskit_node()
            .numeric_value()
    };
    assert_eq!(number_of("Count"), Some(345.0));
    assert_eq!(number_of("seed"), Some(4242.0));
}

#[test]
fn a_stream_with_the_engines_broad_phase_shows_its_tree_and_its_missed_pair() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("engine.aabbstream");
    let expected = crate::common::engine::write_stream(&path, Some(7), None);
    let dropped = expected[7].dropped.expect("a pair dropped at step 7");
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1440.0, 900.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    h.state_mut().apply(Command::Open(path), false);
    h.run_steps(3);
    assert!(
        h.state().inspect().sim().is_trace(),
        "{}",
        h.state().inspect().status()
    );
    assert!(
        h.query_by_label("Engine's broad phase (received)")
            .is_some()
    );
    // Step 0: its tree (valid) and no missed pair.
    let tree_here = |h: &Harness<'_, aabb_app::DebuggerApp>| {
        h.get_all_by_label_contains("x a fresh build")
            .next()
            .and_then(|n| n.value())
    };
    assert!(tree_here(&h).is_some_and(|t| t.starts_with("cost ")));
    assert!(h.query_by_label("Missed here").is_some());
    let missed_here =
        |h: &Harness<'_, aabb_app::DebuggerApp>| h.state().inspect().engine_missed_here();
    assert_eq!(missed_here(&h), Vec::<[u32; 2]>::new());
    for _ in 0..7 {
        h.state_mut().apply(Command::Step, false);
    }
    h.run_steps(2);
    assert_eq!(h.state().inspect().sim().step_index(), 7);
    assert_eq!(missed_here(&h), vec![dropped]);
    // The timeline counts it, and "Worst step" finds it from anywhere.
    h.state_mut().apply(Command::SeekTo(2), false);
    h.run_steps(2);
    assert_eq!(h.state().inspect().sim().step_index(), 2);
    h.state_mut().prefs_mut().show_timeline = true;
    h.run_steps(2);
    h.get_by_label("Worst step").click();
    h.run_steps(2);
    h.get_by_label("first pair the engine missed: step 7")
        .click();
    h.run_steps(2);
    assert_eq!(h.state().inspect().sim().step_index(), 7);
    assert!(
        h.state()
            .inspect()
            .engine_step()
            .is_some_and(|s| s.tree.is_some())
    );
    // Another document forgets the engine.
    h.state_mut().apply(Command::OpenBuiltin, true);
    h.run_steps(2);
    assert!(
        h.query_by_label("Engine's broad phase (received)")
            .is_none()
    );
}

#[test]
fn both_views_show_the_engines_tree_in_place_of_ours_when_asked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("engine.aabbstream");
    crate::common::engine::write_stream(&path, None, None);
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1440.0, 900.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    h.state_mut().apply(Command::Open(path), false);
    h.run_steps(3);
    let ours = h.state().inspect().snapshot().nodes.len();
    let theirs = h
        .state()
        .inspect()
        .engine_step()
        .and_then(|s| s.tree.as_ref())
        .map(|t| t.nodes.len())
        .expect("the engine's tree at step 0");
    h.get_by_label("the engine's tree").click();
    h.run_steps(2);
    let snap = h.state().inspect().snapshot();
    assert_eq!(snap.nodes.len(), theirs);
    // Its leaves hold the step's boxes, each box's fat box its leaf's.
    let leaves = snap.nodes.iter().filter(|n| n.sphere.is_some()).count();
    assert_eq!(leaves, snap.spheres.len() + snap.statics.len());
    assert!(snap.spheres.iter().all(|s| s.node.is_some()));
    let root = snap.nodes.first().expect("a root").id;
    assert!(
        h.state().inspect().tree_node_screen_pos(root).is_some(),
        "the diagram draws it"
    );
    // Changes follow the engine's tree: step 1 against step 0, both as the engine sent them.
    h.get_by_label(aabb_app::views::tree::CHANGES_TOGGLE)
        .click();
    h.state_mut().apply(Command::Step, false);
    h.run_steps(2);
    let changes = h.state().inspect().tree_view().changes().expect("changes");
    assert_eq!(changes.step, 1);
    let d = changes.diff.as_ref().expect("both steps carried a tree");
    let tree_at = |s: u64| {
        h.state()
            .inspect()
            .engine_tree_at(s)
            .map(aabb_app::views::tree::diff::TreeShape::of_engine)
            .expect("a tree")
    };
    assert_eq!(
        *d,
        aabb_app::views::tree::diff::diff(&tree_at(0), &tree_at(1))
    );
    assert!(!d.is_empty(), "the boxes moved: the engine's tree changed");
    // And back.
    h.get_by_label("our tree").click();
    h.run_steps(2);
    assert_eq!(h.state().inspect().snapshot().nodes.len(), ours);
}

#[test]
fn the_engines_pairs_are_drawn_by_why_they_exist_as_many_as_the_statistics_count() {
    use aabb_model::stream::engine::PairClass;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("engine.aabbstream");
    let expected = crate::common::engine::write_stream(&path, None, None);
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1440.0, 900.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    h.state_mut().apply(Command::Open(path), false);
    for _ in 0..3 {
        h.state_mut().apply(Command::Step, false);
    }
    h.run_steps(3);
    let at = h.state().inspect().sim().step_index();
    assert_eq!(at, 3);
    let snap = h.state().inspect().snapshot();
    // Every pair the engine reported at this step, by class, none left out.
    assert_eq!(snap.engine_pairs.len(), expected[3].pairs.len());
    let count = |class| snap.engine_pairs.iter().filter(|p| p.2 == class).count() as u64;
    assert_eq!(count(PairClass::Contact), expected[3].contacts);
    assert_eq!(
        count(PairClass::Margin) + count(PairClass::LookAhead) + count(PairClass::FatOnly),
        expected[3].pairs.len() as u64 - expected[3].contacts
    );
    assert_eq!(count(PairClass::FatApart), 0);
    // As many as the statistics count for the step, class by class.
    let record = h
        .state()
        .inspect()
        .engine_step()
        .map(|s| s.index)
        .expect("the engine's step");
    assert_eq!(record, 3);
    for (label, class) in [
        ("contact", PairClass::Contact),
        ("margin", PairClass::Margin),
        ("look-ahead", PairClass::LookAhead),
        ("fat only", PairClass::FatOnly),
    ] {
        h.get_by_label(&format!("{label} {}", count(class)));
    }
    // With the engine's parts not drawn, the pairs are ours again.
    h.get_by_label("Draw its tree (magenta), its pairs by why, its missed pairs (red)")
        .click();
    h.run_steps(2);
    assert!(h.state().inspect().snapshot().engine_pairs.is_empty());
}
