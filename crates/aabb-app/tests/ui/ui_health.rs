//! UI tests of the tree's health: the statistics' readout of the live cost
//! against a fresh best rebuild (measured on a worker thread), the warning past the threshold
//! and its Rebuild button, the timeline's track, and "no tree" for the other broad phases.
//!
//! A test waits for the worker with a bounded loop of frames, each first waiting for the
//! running build to end (no sleeps).

use aabb_app::health_monitor::HealthSample;
use aabb_app::prefs::{PrefChange, ViewMode};
use aabb_app::views::health::{readout_text, warning_text};
use aabb_app::views::timeline::TRACKS;
use aabb_app::{Command, DebuggerApp};
use aabb_model::broadphase::health::RebuildKind;
use aabb_model::broadphase::health::{LeafBoxes, Shape, least_height};
use aabb_model::broadphase::{BroadphaseKind, TreeRef};
use aabb_model::scene::Scene;
use aabb_model::scene::boxlist::parse_box_list;
use aabb_model::scene::boxlist::scene_of;
use aabb_model::tree::{RebuildMethod, TreeConfig};
use eframe::egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use crate::common::ui;

/// Frames a test runs at most for one sample to be filed.
const MAX_FRAMES: usize = 50;

/// 48 moving circles in a 48 x 48 box, margin 0.05, inserted without balancing: a tree that
/// loosens as they move.
fn scene() -> Scene {
    let mut spheres = String::new();
    for i in 0..48u32 {
        let (x, y) = (4.0 + 8.0 * (i % 6) as f32, 3.0 + 6.0 * (i / 6) as f32);
        let (vx, vy) = (((i * 7) % 11) as f32 - 5.0, ((i * 5) % 9) as f32 - 4.0);
        spheres.push_str(&format!(
            "(id: {i}, center: ({x}, {y}), radius: 0.8, velocity: ({}, {})),\n",
            vx * 3.0,
            vy * 3.0
        ));
    }
    let text = format!(
        r#"(
    format_version: 1,
    name: "Health UI test",
    dimensions: 2,
    world: (min: (0.0, 0.0), max: (48.0, 48.0)),
    dt: 0.016666668,
    tree: (margin: 0.05, velocity_lookahead: 0.0, insertion: SurfaceArea, balancing: None),
    spheres: [{spheres}],
    generate: None,
    view: None,
)"#
    );
    Scene::parse(&text, "health-ui-test.ron", false).expect("the test scene is valid")
}

fn harness() -> Harness<'static, DebuggerApp> {
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        scene(),
    );
    h.state_mut().prefs_mut().view_mode = ViewMode::World;
    // The window's way: fresh builds on a worker thread.
    h.state_mut().set_health_on_ui_thread(false);
    h.run_steps(3);
    h
}

/// Runs frames until a sample newer than the `before`-th is filed and no build runs (each
/// frame first waits for the running build) and one more to show it; returns the sample of
/// the step shown.
fn measured_after(h: &mut Harness<'_, DebuggerApp>, before: u64) -> HealthSample {
    for _ in 0..MAX_FRAMES {
        h.state_mut().wait_for_health();
        h.run_steps(2);
        let app = h.state();
        let health = app.inspect().health();
        if health.taken() > before && !health.is_busy() {
            let step = app.inspect().sim().step_index();
            let sample = *health
                .samples()
                .get(&step)
                .expect("the step shown is measured");
            // Filed at the end of a frame: the next one shows it.
            h.run_steps(1);
            return sample;
        }
    }
    panic!("no health sample within {MAX_FRAMES} frames");
}

/// Steps `n` times (paused), then waits for the sample of the step reached.
fn step_and_measure(h: &mut Harness<'_, DebuggerApp>, n: usize) -> HealthSample {
    let before = h.state().inspect().health().taken();
    for _ in 0..n {
        h.state_mut().push_command(Command::Step);
    }
    measured_after(h, before)
}

/// The live tree's shape and the fresh build of its leaves, computed here on this thread.
fn synchronous(app: &DebuggerApp) -> (Shape, aabb_model::broadphase::health::FreshBuild) {
    let tree = app
        .inspect()
        .sim()
        .broadphase()
        .tree_view()
        .expect("the tree broad phase");
    let fresh = LeafBoxes::of(&tree).best_rebuild().expect("builds");
    (Shape::of(&tree), fresh)
}

#[test]
fn the_readout_shows_the_ratio_measured_on_the_worker_after_n_steps() {
    let mut h = harness();
    measured_after(&mut h, 0);
    let sample = step_and_measure(&mut h, 40);
    assert_eq!(sample.step, 40);
    assert_eq!(h.state().inspect().sim().step_index(), 40);
    // The worker's result is the synchronous computation on the same boxes, exactly.
    let (live, fresh) = synchronous(h.state());
    assert_eq!(sample.live, live);
    assert_eq!(sample.fresh, fresh);
    assert_eq!(sample.live.leaves, 48);
    assert_eq!(sample.least_height(), least_height(48));
    assert_eq!(sample.least_height(), 6);
    assert_eq!(sample.ratio(), live.cost / fresh.shape.cost);
    let Some(TreeRef::D2(tree)) = h.state().inspect().sim().broadphase().tree_view() else {
        panic!("a 2D tree");
    };
    assert_eq!(sample.live.cost, tree.sah_cost());
    // The readout says it, with the step it was measured at.
    h.run_steps(2);
    h.get_by_label(&readout_text(&sample));
    h.get_by_label(&format!(
        "measured at step 40 (fresh: {})",
        fresh.method.name()
    ));
}

#[test]
fn past_the_threshold_a_warning_and_its_rebuild_button_restore_a_fresh_tree() {
    let mut h = harness();
    let sample = step_and_measure(&mut h, 60);
    let ratio = sample.ratio();
    assert!(
        ratio > 1.0,
        "the tree loosened as the circles moved: {ratio}"
    );
    // Just below the ratio: no warning.
    h.state_mut()
        .push_command(Command::SetPref(PrefChange::HealthThreshold(ratio + 0.01)));
    h.run_steps(2);
    assert!(h.query_by_label(&warning_text(&sample)).is_none());
    assert!(h.query_by_label("Rebuild").is_none());
    // A threshold the ratio passes: the warning and the button.
    h.state_mut()
        .push_command(Command::SetPref(PrefChange::HealthThreshold(ratio - 0.01)));
    h.run_steps(2);
    h.get_by_label(&warning_text(&sample));
    let before = h.state().inspect().health().taken();
    let edits = h.state().inspect().recording().edits().len();
    h.get_by_label("Rebuild").click();
    let after = measured_after(&mut h, before);
    assert_eq!(
        h.state().inspect().recording().edits().len(),
        edits + 1,
        "rebuilt"
    );
    assert_eq!(after.step, 60, "measured again at once, at the same step");
    // The tree is now exactly the fresh rebuild of its leaves.
    assert!(after.ratio() <= 1.0 + 1e-6, "{after:?}");
    assert_eq!(after.live.height, after.fresh.shape.height);
    assert!(after.live.cost < sample.live.cost);
    assert!(h.query_by_label(&warning_text(&after)).is_none());
    h.get_by_label(&readout_text(&after));
}

/// A level as `import-boxes` makes one: a ground box under the whole map, two walls across
/// it and three groups of ten small boxes far apart. The binned-SAH build splits by centres
/// (it splits a box nearly as large as the map off alone only when the others' box is
/// smaller, and here the walls span the map), so the large boxes go down with the small ones
/// and the branches above them are as large as the map; the agglomerative build merges them
/// last. `quality` (margin 0): `rebuild` 4.30, `rebuild-agglomerative` and `rebuild-greedy`
/// 3.535; in the window (margin 0.1) the live tree, the binned-SAH batch build the scene opens
/// with, costs 4.35 and the cheapest fresh build 3.59.
fn level_harness() -> Harness<'static, DebuggerApp> {
    let mut list = String::from("0 0 100 100\n0 48 100 52\n48 0 52 100\n");
    for (x, y) in [(15.0f32, 80.0f32), (80.0, 75.0), (50.0, 15.0)] {
        for k in 0..10u8 {
            let (x, y) = (x + f32::from(k % 5) * 2.0, y + f32::from(k / 5) * 2.5);
            list.push_str(&format!("{x} {y} {} {}\n", x + 1.5, y + 1.0));
        }
    }
    let set = parse_box_list(&list, "level.txt").expect("a list");
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        scene_of(&set, "level".to_owned(), 0),
    );
    h.state_mut().prefs_mut().view_mode = ViewMode::World;
    h.state_mut().set_health_on_ui_thread(false);
    h.run_steps(3);
    h
}

#[test]
fn on_a_level_the_button_rebuilds_by_the_method_of_the_cheapest_fresh_build() {
    let mut h = level_harness();
    assert_eq!(h.state().inspect().sim().step_index(), 0);
    let settings = h.state().inspect().document().tree;
    assert_eq!(settings.rebuild, RebuildMethod::BinnedSah, "the default");
    let sample = measured_after(&mut h, 0);
    assert_eq!(sample.step, 0, "loaded and measured, no step taken");
    assert_eq!(sample.live.leaves, 33);
    // The live tree costs more than the cheapest fresh build, which is agglomerative (greedy
    // ties it here, and ties go to the first of `RebuildKind::ALL`); a rebuild by binned SAH,
    // the tree's own method, would cost more too.
    assert_eq!(sample.fresh.method, RebuildKind::Agglomerative);
    let ratio = sample.ratio();
    assert!(ratio > 1.1, "{sample:?}");
    h.state_mut()
        .push_command(Command::SetPref(PrefChange::HealthThreshold(ratio - 0.01)));
    h.run_steps(2);
    h.get_by_label(&warning_text(&sample));
    // A plain rebuild by binned SAH would not reach the fresh build: the button names its method.
    assert!(h.query_by_label("Rebuild").is_none());
    let before = h.state().inspect().health().taken();
    let edits = h.state().inspect().recording().edits().len();
    h.get_by_label("Rebuild (agglomerative)").click();
    let after = measured_after(&mut h, before);
    assert_eq!(
        h.state().inspect().document().tree,
        TreeConfig {
            rebuild: RebuildMethod::Agglomerative,
            ..settings
        },
        "the method set, every other setting kept"
    );
    assert_eq!(
        h.state().inspect().recording().edits().len(),
        edits + 2,
        "the setting, then the rebuild"
    );
    assert_eq!(after.step, 0);
    assert_eq!(after.fresh, sample.fresh, "the same leaves");
    assert!(after.ratio() <= 1.0 + 1e-6, "{after:?}");
    assert_eq!(after.live.height, after.fresh.shape.height);
    assert!(h.query_by_label(&warning_text(&after)).is_none());
    h.get_by_label(&readout_text(&after));
    assert_eq!(
        h.state().inspect().status(),
        "Tree rebuilt from scratch (agglomerative)."
    );
    // Ctrl+Z sets the method back; the tree keeps its shape until the next rebuild.
    h.state_mut().push_command(Command::Undo);
    h.run_steps(2);
    assert_eq!(h.state().inspect().document().tree, settings);
}

#[test]
fn the_timeline_track_has_a_point_per_sample_and_a_changed_past_drops_its_samples() {
    let mut h = harness();
    for _ in 0..4 {
        step_and_measure(&mut h, 5);
    }
    h.run_steps(2);
    let app = h.state();
    let steps: Vec<u64> = app.inspect().health().samples().keys().copied().collect();
    assert_eq!(steps, vec![0, 5, 10, 15, 20]);
    let points = app.inspect().timeline_health_points();
    assert_eq!(points.len(), steps.len());
    for (p, &s) in points.iter().zip(&steps) {
        let on_axis = app
            .inspect()
            .timeline_step_pos(s, TRACKS.len())
            .expect("the timeline is shown");
        assert_eq!(p.x, on_axis.x, "step {s}");
        let half = (app.inspect().timeline_step_pos(s, 0).expect("shown").y - on_axis.y).abs()
            / (2.0 * TRACKS.len() as f32);
        assert!(
            (p.y - on_axis.y).abs() <= half,
            "{p:?} in the track of {on_axis:?}"
        );
    }
    // Back to step 12 and rebuild there: the recorded future after 12 is discarded, and with
    // it the samples after 12; step 12 is measured.
    let before = h.state().inspect().health().taken();
    h.state_mut().push_command(Command::SeekTo(12));
    h.state_mut().push_command(Command::Rebuild);
    measured_after(&mut h, before);
    h.run_steps(2);
    let app = h.state();
    let steps: Vec<u64> = app.inspect().health().samples().keys().copied().collect();
    assert_eq!(steps, vec![0, 5, 10, 12]);
    assert_eq!(app.inspect().recording().last_step(), 12);
    assert_eq!(app.inspect().timeline_health_points().len(), 4);
}

#[test]
fn brute_force_shows_no_tree() {
    let mut h = harness();
    measured_after(&mut h, 0);
    h.state_mut()
        .push_command(Command::SetBroadphase(BroadphaseKind::Brute));
    h.run_steps(2);
    h.get_by_label("no tree (this broad phase keeps none)");
    assert!(!h.state().inspect().health().is_busy());
    // Steps without a tree take no sample.
    let taken = h.state().inspect().health().taken();
    h.state_mut().push_command(Command::Step);
    h.state_mut().wait_for_health();
    h.run_steps(2);
    assert_eq!(h.state().inspect().health().taken(), taken);
    assert!(!h.state().inspect().health().samples().contains_key(&1));
}
