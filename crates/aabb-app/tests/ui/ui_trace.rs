//! UI tests of a trace in the window (egui_kittest): File > Open detects a trace by its
//! first word; playing steps through it and pauses at its end, saying so; the tree shown
//! equals a headless `TraceSimulation`'s at every step, also after seeking back with the
//! timeline; sphere edits and saving are refused with a message; the Advisor sweeps the
//! trace from its current step and applying its verdict sets the trace's margin.

use aabb_app::views::advisor::AdvisorGrid;
use aabb_app::{Command, DebuggerApp};
use aabb_model::broadphase::{BroadphaseKind, DEFAULT_PAIR_LIMIT};
use aabb_model::scene::Scene;
use aabb_model::trace::{Stepper, Trace, TraceSimulation};
use aabb_model::tree::TreeConfig;
use eframe::egui;
use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use glam::Vec3;
use std::path::PathBuf;
use std::sync::Arc;

use crate::common::ui;

/// Steps in the test trace.
const STEPS: u64 = 30;

/// A 2D trace: a static floor (id 100) and four boxes falling onto it at different speeds,
/// so they reach the floor and each other (contacts) at different steps.
fn trace_text() -> String {
    let mut t = String::from("aabb-trace 1 dims=2 dt=0.05\nstatic\n100 0 0 20 1\n");
    for s in 0..STEPS {
        t.push_str(&format!("step {s}\n"));
        for id in 0..4u32 {
            let x = 2.0 + 4.0 * id as f32;
            let y = (12.0 - 0.4 * (id + 1) as f32 * s as f32).max(1.0);
            t.push_str(&format!("{id} {x} {y} {} {}\n", x + 1.5, y + 1.5));
        }
    }
    t
}

/// Writes the trace to a fresh file named `name` (any extension: a trace is found by its
/// first word) in a folder of its own, removed when the returned guard is dropped.
fn trace_file(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, trace_text()).expect("write the trace");
    (dir, path)
}

/// The window with the trace opened through File > Open's command, paused at step 0; and the
/// trace file's folder, kept while the test runs.
fn opened(name: &str) -> (Harness<'static, DebuggerApp>, tempfile::TempDir) {
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    let (dir, path) = trace_file(name);
    h.state_mut().apply(Command::Open(path), false);
    h.run_steps(2);
    assert!(
        h.state().inspect().sim().is_trace(),
        "{}",
        h.state().inspect().status()
    );
    assert!(
        h.state().inspect().error().is_none(),
        "{:?}",
        h.state().inspect().error()
    );
    (h, dir)
}

/// The structural hash of the trace replayed headless to `step` (no window, no recording).
fn headless_hash_at(step: u64, config: TreeConfig) -> u64 {
    let trace = Arc::new(Trace::parse(trace_text().as_bytes(), "t").expect("the trace parses"));
    let mut sim = TraceSimulation::new(trace, BroadphaseKind::Tree, config, DEFAULT_PAIR_LIMIT)
        .expect("the trace starts");
    for _ in 0..step {
        Stepper::step(&mut sim).expect("the trace steps");
    }
    sim.structure_hash()
}

#[test]
fn playing_a_trace_pauses_at_its_end_and_says_so() {
    let (mut h, _dir) = opened("falling.txt");
    assert_eq!(h.state().inspect().sim().step_index(), 0);
    assert!(
        h.state()
            .inspect()
            .status()
            .contains("Opened the trace falling.txt (30 steps"),
        "{}",
        h.state().inspect().status()
    );
    h.state_mut().apply(Command::SetPlaying(true), false);
    let mut frames = 0;
    while h.state().inspect().is_playing() {
        h.step();
        frames += 1;
        assert!(frames < 2000, "still playing after {frames} frames");
    }
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.inspect().sim().step_index(), STEPS - 1);
    assert_eq!(app.inspect().recording().last_step(), STEPS - 1);
    assert_eq!(app.inspect().status(), "End of the trace at step 29.");
    assert_eq!(
        app.inspect().sim().structure_hash(),
        headless_hash_at(STEPS - 1, TreeConfig::default())
    );
    // Another step at the end does nothing but say so again.
    h.state_mut().apply(Command::Step, false);
    assert_eq!(h.state().inspect().sim().step_index(), STEPS - 1);
    assert_eq!(h.state().inspect().status(), "End of the trace at step 29.");
    assert!(!h.state().inspect().is_playing());
}

#[test]
fn seeking_back_shows_the_headless_tree_at_that_step() {
    let (mut h, _dir) = opened("seek.trace");
    for _ in 0..20 {
        h.state_mut().apply(Command::Step, false);
    }
    h.run_steps(2);
    assert_eq!(h.state().inspect().sim().step_index(), 20);
    // The timeline's keys: Left shows step 19, a seek shows step 7.
    h.key_press(egui::Key::ArrowLeft);
    h.run_steps(2);
    assert_eq!(h.state().inspect().sim().step_index(), 19);
    assert_eq!(
        h.state().inspect().sim().structure_hash(),
        headless_hash_at(19, TreeConfig::default())
    );
    h.state_mut().apply(Command::SeekTo(7), false);
    h.run_steps(2);
    assert_eq!(h.state().inspect().sim().step_index(), 7);
    assert_eq!(
        h.state().inspect().sim().structure_hash(),
        headless_hash_at(7, TreeConfig::default())
    );
    assert_eq!(
        h.state().inspect().status(),
        "Showing step 7 of 20 (recorded)."
    );
    for s in 0..=20 {
        assert_eq!(
            h.state().inspect().recording().steps()[s as usize].hash,
            headless_hash_at(s, TreeConfig::default()),
            "step {s}"
        );
    }
}

#[test]
fn sphere_edits_and_saving_are_refused_on_a_trace() {
    let (mut h, _dir) = opened("refuse.trace");
    let hash = h.state().inspect().sim().structure_hash();
    let refused = "A trace's boxes come from its file: they cannot be added, moved, deleted or \
                   generated.";
    for command in [
        Command::AddSphere {
            center: Vec3::new(5.0, 5.0, 0.0),
        },
        Command::DeleteSphere(0),
        Command::MoveSphere {
            id: 0,
            center: Vec3::new(5.0, 5.0, 0.0),
        },
        Command::SetGenerator(None),
    ] {
        h.state_mut().apply(command, false);
        assert_eq!(h.state().inspect().status(), refused);
    }
    h.state_mut().apply(Command::Save, false);
    assert_eq!(
        h.state().inspect().status(),
        "A trace is input, not a document: it is not saved (open a scene to save one)."
    );
    assert_eq!(
        h.state().inspect().sim().structure_hash(),
        hash,
        "nothing changed"
    );
    assert!(
        h.state().inspect().recording().edits().is_empty(),
        "nothing recorded"
    );
    // Settings work on a trace and are recorded, but leave nothing unsaved: another file
    // opens without asking.
    let settings = TreeConfig {
        margin: 0.3,
        ..TreeConfig::default()
    };
    h.state_mut()
        .apply(Command::SetTreeSettings(settings), false);
    assert_eq!(h.state().inspect().sim().tree_settings(), settings);
    assert_eq!(h.state().inspect().recording().edits().len(), 1);
    assert!(!h.state().inspect().is_dirty());
    h.state_mut().apply(Command::OpenBuiltin, false);
    assert!(
        !h.state().inspect().sim().is_trace(),
        "opened without a question"
    );
}

#[test]
fn the_advisor_sweeps_the_rest_of_the_trace_and_apply_sets_its_margin() {
    let (mut h, _dir) = opened("advise.trace");
    for _ in 0..10 {
        h.state_mut().apply(Command::Step, false);
    }
    h.run_steps(2);
    h.state_mut().start_advisor_sweep(AdvisorGrid {
        margins: Some("0.05:0.45:0.2".to_owned()),
        lookaheads: Some("0".to_owned()),
        steps: Some(300),
    });
    h.run_steps(2);
    let mut frames = 0;
    while h.state().inspect().advisor_running() || h.state().inspect().advisor_report().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(10));
        h.step();
        frames += 1;
        assert!(
            frames < 3000,
            "no report; message: {:?}",
            h.state().inspect().advisor_message()
        );
    }
    h.run_steps(4);
    let report = h
        .state()
        .inspect()
        .advisor_report()
        .cloned()
        .expect("a report");
    // From step 10 of 0..=29: 19 steps are left, fewer than the 300 asked for.
    assert_eq!(report.steps, 19);
    assert_eq!(report.points.len(), 3);
    let best = report.advice.best_by_work.as_ref().expect("a best by work");
    let best = report.points[best.index].point;
    h.get_by_label("Apply best by work").click();
    h.run_steps(2);
    assert_eq!(
        h.state().inspect().sim().tree_settings().margin,
        best.margin
    );
    assert_eq!(h.state().inspect().document().tree.margin, best.margin);
    assert_eq!(
        h.state().inspect().sim().step_index(),
        10,
        "applying does not step"
    );
}

#[test]
fn save_and_save_as_are_off_in_the_file_menu_of_a_trace() {
    let (mut h, _dir) = opened("menu.trace");
    h.get_by_label("File").click();
    h.run_steps(2);
    // A menu button's label holds its shortcut.
    for label in ["Save Ctrl+S", "Save As… Ctrl+Shift+S"] {
        let button = h.get_by_role_and_label(egui::accesskit::Role::Button, label);
        assert!(button.accesskit_node().is_disabled(), "{label} is off");
    }
    // On a scene they are on.
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(2);
    let save = h.get_by_role_and_label(egui::accesskit::Role::Button, "Save Ctrl+S");
    assert!(!save.accesskit_node().is_disabled());
}

#[test]
fn the_snapshot_holds_the_traces_boxes_static_ones_marked() {
    use aabb_app::snapshot::ItemShape;
    let (mut h, _dir) = opened("boxes.trace");
    let ids = |h: &Harness<'_, DebuggerApp>| {
        h.state()
            .inspect()
            .snapshot()
            .spheres
            .iter()
            .map(|s| (s.id, s.shape, s.colliding))
            .collect::<Vec<_>>()
    };
    // Step 0: the boxes up in the air, none touching.
    assert_eq!(
        ids(&h),
        vec![
            (0, ItemShape::Box, false),
            (1, ItemShape::Box, false),
            (2, ItemShape::Box, false),
            (3, ItemShape::Box, false),
            (100, ItemShape::StaticBox, false),
        ]
    );
    // Named by what they are (the event list, the tree view's tooltips).
    assert_eq!(h.state().inspect().snapshot().body_name(1), "box 1");
    assert_eq!(
        h.state().inspect().snapshot().body_name(100),
        "static box 100"
    );
    let box1 = h
        .state()
        .inspect()
        .snapshot()
        .sphere(1)
        .expect("box 1")
        .clone();
    assert_eq!(box1.tight_world.min, Vec3::new(6.0, 12.0, 0.0));
    assert_eq!(box1.tight_world.max, Vec3::new(7.5, 13.5, 0.0));
    assert_eq!(box1.radius, 0.0);
    assert!(box1.fat.is_some_and(|f| f.min.x < 6.0 && f.max.y > 13.5));
    // The last step: every box rests on the floor (touching counts), so all collide.
    for _ in 0..STEPS {
        h.state_mut().apply(Command::Step, false);
    }
    h.run_steps(2);
    assert!(
        ids(&h).iter().all(|&(_, _, colliding)| colliding),
        "{:?}",
        ids(&h)
    );
    // Fit frames every box of every step (the floor included): the world is their bounds.
    let world = h.state().inspect().document().world;
    assert_eq!(world.min, Vec3::new(0.0, 0.0, 0.0));
    assert_eq!(world.max, Vec3::new(20.0, 13.5, 0.0));
}
