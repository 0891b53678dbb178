//! UI tests of compare mode (egui_kittest): a second run, B, beside the document's, A, on the
//! same motion. Margin 0.05 against 0.2 gives, step by step, exactly the difference the
//! headless comparison gives; the timeline draws B's tracks over A's and reads both at the
//! playhead; a run compared with itself differs at no step, edits of the motion included; the
//! playhead moves both; another document ends the comparison; the controls start one.

use aabb_app::prefs::ViewMode;
use aabb_app::{Command, DebuggerApp};
use aabb_model::broadphase::{BroadphaseKind, DEFAULT_PAIR_LIMIT};
use aabb_model::compare::{self, Side};
use aabb_model::replay::Metric;
use aabb_model::scene::Scene;
use eframe::egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use glam::Vec3;

use crate::common::root_file;
use crate::common::ui;

/// The built-in scene (eighty bouncing spheres) with `margin`, in a 1400 x 900 window showing
/// the world and the tree.
fn harness(margin: f32) -> (Harness<'static, DebuggerApp>, Scene) {
    harness_sized(margin, Vec2::new(1400.0, 900.0))
}

fn harness_sized(margin: f32, size: Vec2) -> (Harness<'static, DebuggerApp>, Scene) {
    let mut scene = Scene::builtin_default();
    scene.tree.margin = margin;
    let mut h = ui::app_harness(Harness::builder().with_size(size), scene.clone());
    h.state_mut().prefs_mut().view_mode = ViewMode::Both;
    h.run_steps(2);
    (h, scene)
}

fn step(h: &mut Harness<'_, DebuggerApp>, steps: u64) {
    for _ in 0..steps {
        h.state_mut().apply(Command::Step, false);
    }
    h.run_steps(2);
}

fn side(margin: f32, scene: &Scene) -> Side {
    let mut config = scene.tree;
    config.margin = margin;
    Side {
        kind: BroadphaseKind::Tree,
        config,
    }
}

#[test]
fn margin_005_against_02_differs_step_by_step_as_the_headless_comparison_does() {
    let (mut h, scene) = harness(0.05);
    let b = side(0.2, &scene);
    h.state_mut().apply(Command::StartCompare(b.clone()), false);
    h.run_steps(2);
    step(&mut h, 40);

    // The same two runs headless, fresh from the scene.
    let origin = aabb_model::source::Origin::Scene(Box::new(scene.clone()));
    let (sa, sb) = compare::start(&origin, &side(0.05, &scene), &b, DEFAULT_PAIR_LIMIT)
        .expect("both sides start");
    let mut want = Vec::new();
    let summary = compare::run(sa, sb, 40, |d| {
        want.push((
            d.step,
            d.only_a.len() as u32,
            d.only_b.len() as u32,
            d.pairs,
        ))
    });
    assert_eq!(summary.steps, 41);
    let run = h.state().inspect().compare().expect("comparing");
    let got: Vec<(u64, u32, u32)> = run
        .rows
        .iter()
        .map(|r| (r.step, r.only_a, r.only_b))
        .collect();
    let want_rows: Vec<(u64, u32, u32)> = want.iter().map(|w| (w.0, w.1, w.2)).collect();
    assert_eq!(got, want_rows);
    // A wider margin finds more pairs (not a superset: a fat box is kept until its tight
    // box leaves it, so A's may reach where B's has not yet).
    let totals = run.totals();
    assert!(totals.only_b > 10 * totals.only_a, "{totals:?}");
    assert_eq!(totals.only_b, summary.only_b);
    assert_eq!(totals.differing, summary.steps_differing);
    assert_eq!(totals.first_difference, summary.first_difference);
    let here = run.here.as_ref().expect("B is at A's step");
    assert_eq!(here.step, 40);
    assert_eq!(here.pairs, want[40].3);
    assert_eq!(run.b.sim().step_index(), 40);
    assert_eq!(run.b.sim().tree_settings().margin, 0.2);
    assert_eq!(h.state().inspect().sim().tree_settings().margin, 0.05);

    // The timeline overlays B's tracks and reads both sides at the playhead.
    let (values, b_points) = h.state().inspect().timeline_values();
    let tracks = aabb_app::views::timeline::TRACKS;
    assert_eq!(b_points.len(), tracks.len());
    assert!(b_points.iter().all(|&n| n == 41), "{b_points:?}");
    let k = tracks
        .iter()
        .position(|m| *m == Metric::CandidatePairs)
        .expect("a pairs track");
    assert_eq!(
        values[k],
        (Some(here.pairs[0] as f64), Some(here.pairs[1] as f64))
    );
    let r = tracks
        .iter()
        .position(|m| *m == Metric::Reinserts)
        .expect("a reinserts track");
    assert_eq!(
        values[r],
        (
            Some(here.reinserts[0] as f64),
            Some(here.reinserts[1] as f64)
        )
    );
    // The header says it in words.
    h.get_by_label_contains("only in B");

    // Two world views and two tree views, side by side, with one camera.
    let a_world = h
        .state()
        .inspect()
        .world_view_rect()
        .expect("A's world is shown");
    let b_world = h
        .state()
        .inspect()
        .compare_world_rect()
        .expect("B's world is shown");
    assert!(b_world.left() > a_world.right(), "{a_world:?} {b_world:?}");
    assert!((a_world.width() - b_world.width()).abs() < 1.0);
    let b_tree = h
        .state()
        .inspect()
        .compare_tree_rect()
        .expect("B's tree is shown");
    assert!(b_tree.left() > a_world.right());
    assert_eq!(
        h.state()
            .inspect()
            .compare()
            .expect("comparing")
            .b_view
            .camera,
        h.state().inspect().camera()
    );
}

#[test]
fn a_run_compared_with_itself_differs_at_no_step_edits_and_the_playhead_included() {
    let (mut h, scene) = harness(scene_margin());
    let a = side(scene.tree.margin, &scene);
    h.state_mut().apply(Command::StartCompare(a), false);
    step(&mut h, 10);
    // An edit of the motion is made on both sides.
    let id = scene.spheres[0].id;
    h.state_mut().apply(
        Command::MoveSphere {
            id,
            center: Vec3::new(3.0, 4.0, 0.0),
        },
        false,
    );
    h.state_mut()
        .apply(Command::DeleteSphere(scene.spheres[1].id), false);
    step(&mut h, 10);
    let run = h.state().inspect().compare().expect("comparing");
    assert_eq!(
        run.rows.len(),
        21,
        "steps 0 to 20, the edits' step taken again"
    );
    assert!(run.rows.iter().all(|r| r.only_a == 0 && r.only_b == 0));
    assert_eq!(
        run.b.sim().structure_hash(),
        h.state().inspect().sim().structure_hash()
    );
    assert_eq!(
        run.b.recording().edits().len(),
        h.state().inspect().recording().edits().len()
    );

    // The playhead moves both; an edit at a past step discards both futures.
    h.state_mut().apply(Command::SeekTo(5), false);
    h.run_steps(2);
    let run = h.state().inspect().compare().expect("comparing");
    assert_eq!(run.b.sim().step_index(), 5);
    assert_eq!(
        run.b.sim().structure_hash(),
        h.state().inspect().sim().structure_hash()
    );
    h.state_mut().apply(Command::Step, false);
    h.run_steps(2);
    let run = h.state().inspect().compare().expect("comparing");
    assert_eq!(run.b.sim().step_index(), 6);
    assert_eq!(run.b.recording().last_step(), 20);
    h.state_mut().apply(
        Command::MoveSphere {
            id,
            center: Vec3::new(-3.0, 4.0, 0.0),
        },
        false,
    );
    assert_eq!(h.state().inspect().recording().last_step(), 6);
    step(&mut h, 1);
    let run = h.state().inspect().compare().expect("comparing");
    assert_eq!(run.b.recording().last_step(), 7);
    assert_eq!(
        run.b.sim().structure_hash(),
        h.state().inspect().sim().structure_hash()
    );
    assert_eq!(run.rows.last().map(|r| r.step), Some(7));
    assert_eq!(run.rows.len(), 8);
    assert!(run.rows.iter().all(|r| r.only_a == 0 && r.only_b == 0));

    // Another document ends the comparison.
    h.state_mut().apply(Command::Reset, true);
    h.run_steps(2);
    assert!(h.state().inspect().compare().is_none());
    assert!(h.state().inspect().compare_world_rect().is_none());
}

fn scene_margin() -> f32 {
    Scene::builtin_default().tree.margin
}

#[test]
fn the_controls_start_and_stop_a_comparison_of_four_times_the_margin() {
    // Tall enough for the whole controls panel: the section is its last.
    let (mut h, scene) = harness_sized(0.1, Vec2::new(1400.0, 1500.0));
    h.get_by_label("Compare").click();
    h.run_steps(2);
    h.get_by_label("Compare with B").click();
    h.run_steps(3);
    let run = h.state().inspect().compare().expect("comparing");
    assert_eq!(run.side.kind, BroadphaseKind::Tree);
    assert!((run.side.config.margin - 0.4).abs() < 1e-6);
    assert_eq!(run.started_at, 0);
    assert_eq!(
        h.state().inspect().sim().tree_settings(),
        side(0.1, &scene).config
    );
    h.get_by_label("Stop comparing").click();
    h.run_steps(2);
    assert!(h.state().inspect().compare().is_none());
}

#[test]
fn the_view_menu_starts_and_stops_a_comparison() {
    let (mut h, _) = harness(0.05);
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Compare with 4x the margin").click();
    h.run_steps(3);
    let run = h.state().inspect().compare().expect("comparing");
    assert!((run.side.config.margin - 0.2).abs() < 1e-6);
    step(&mut h, 3);
    assert_eq!(h.state().inspect().compare().map(|c| c.rows.len()), Some(4));
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("End the comparison").click();
    h.run_steps(2);
    assert!(h.state().inspect().compare().is_none());
}

#[test]
fn the_engines_tree_beside_ours_b_draws_its_tree_and_a_ours() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("engine.aabbstream");
    crate::common::engine::write_stream(&path, None, None);
    let (mut h, _) = harness(0.1);
    h.state_mut().apply(Command::Open(path), false);
    h.run_steps(3);
    let ours = h.state().inspect().snapshot().nodes.len();
    let theirs: Vec<u32> = {
        let tree = h
            .state()
            .inspect()
            .engine_step()
            .and_then(|s| s.tree.as_ref())
            .expect("the engine's tree at step 0");
        let mut ids: Vec<u32> = tree.nodes.iter().map(|n| n.id).collect();
        ids.sort_unstable();
        ids
    };
    let a = h.state().inspect().sim().tree_settings();
    h.state_mut().apply(
        Command::StartCompare(Side {
            kind: BroadphaseKind::Tree,
            config: a,
        }),
        false,
    );
    h.run_steps(2);
    // The readout offers the engine's tree for B.
    h.get_by_label("draw the engine's tree").click();
    h.run_steps(2);
    assert_eq!(
        h.state().inspect().snapshot().nodes.len(),
        ours,
        "A draws ours"
    );
    let run = h.state().inspect().compare().expect("comparing");
    let mut b_ids: Vec<u32> = run.b_snapshot.nodes.iter().map(|n| n.id.0).collect();
    b_ids.sort_unstable();
    assert_eq!(b_ids, theirs, "B draws the engine's, node for node");
    assert!(h.state().inspect().compare_tree_rect().is_some());
    // Stepping on keeps both.
    step(&mut h, 3);
    let run = h.state().inspect().compare().expect("comparing");
    let tree = h
        .state()
        .inspect()
        .engine_step()
        .and_then(|s| s.tree.as_ref())
        .expect("the engine's tree at step 3");
    assert_eq!(run.b_snapshot.nodes.len(), tree.nodes.len());
    assert_eq!(h.state().inspect().snapshot().nodes.len(), ours);
}

/// One step's difference as the tests compare it: the step, the pairs only in A and only in
/// B, each side's pairs, reinserts and tree cost (not the times).
type DiffRow = (u64, usize, usize, [usize; 2], [usize; 2], [Option<f64>; 2]);

fn diff_row(d: &compare::StepDiff) -> DiffRow {
    (
        d.step,
        d.only_a.len(),
        d.only_b.len(),
        d.pairs,
        d.reinserts,
        d.cost,
    )
}

/// The headless twin of a comparison started at the window's step shown: A a copy of the
/// document's simulation there, B the same with `b`'s settings ([`compare::side_at`]), run
/// `steps` steps in lockstep.
fn headless_from_here(h: &Harness<'_, DebuggerApp>, b: &Side, steps: u64) -> Vec<DiffRow> {
    let a = h.state().inspect().sim().clone();
    let sb = compare::side_at(&a, b).expect("B takes its settings");
    let mut rows = Vec::new();
    let summary = compare::run(a, sb, steps, |d| rows.push(diff_row(d)));
    assert_eq!(summary.stopped, None);
    rows
}

/// Starts comparing with `b` at the step shown and steps `steps` times, key by key as the
/// window does (one step a frame): the difference at the start and after each step.
fn window_rows(h: &mut Harness<'_, DebuggerApp>, b: &Side, steps: u64) -> Vec<DiffRow> {
    h.state_mut().apply(Command::StartCompare(b.clone()), false);
    h.run_steps(1);
    let here = |h: &Harness<'_, DebuggerApp>| {
        let run = h.state().inspect().compare().expect("comparing");
        diff_row(run.here.as_ref().expect("B at A's step"))
    };
    let mut rows = vec![here(h)];
    for _ in 0..steps {
        h.state_mut().apply(Command::Step, false);
        h.run_steps(1);
        rows.push(here(h));
    }
    rows
}

/// B's sides that each change one thing of A's: the margin (4x), the look-ahead, the tree's
/// methods, and the other broad phases.
fn b_sides(a: &Side) -> Vec<Side> {
    use aabb_model::tree::{Balancing, InsertionCost, PairMethod, UpdateMode};
    let with = |f: &dyn Fn(&mut Side)| {
        let mut s = a.clone();
        f(&mut s);
        s
    };
    vec![
        aabb_app::views::compare::default_b(a),
        with(&|s| s.config.velocity_lookahead = 0.5),
        with(&|s| s.config.insertion = InsertionCost::Perimeter),
        with(&|s| {
            s.config.pairs = if a.config.pairs == PairMethod::SelfTraversal {
                PairMethod::MovedQueries
            } else {
                PairMethod::SelfTraversal
            }
        }),
        with(&|s| s.config.balancing = Balancing::None),
        with(&|s| s.config.update = UpdateMode::EnlargeAndRebuild),
        with(&|s| s.kind = BroadphaseKind::Brute),
        with(&|s| s.kind = BroadphaseKind::Sap),
        with(&|s| s.kind = BroadphaseKind::Box2d),
    ]
}

#[test]
fn compare_mode_started_at_any_step_gives_the_rows_of_the_headless_comparison_from_there() {
    let (mut h, scene) = harness(0.05);
    let a = side(0.05, &scene);
    for b in b_sides(&a) {
        for start in [0, 30, 75] {
            h.state_mut().apply(Command::StopCompare, false);
            h.state_mut().apply(Command::SeekTo(start), false);
            while h.state().inspect().sim().step_index() < start {
                h.state_mut().apply(Command::Step, false);
            }
            h.run_steps(1);
            assert_eq!(h.state().inspect().sim().step_index(), start);
            let want = headless_from_here(&h, &b, 12);
            let got = window_rows(&mut h, &b, 12);
            assert_eq!(got, want, "B {} from step {start}", b.describe());
            let run = h.state().inspect().compare().expect("comparing");
            assert_eq!(run.started_at, start);
            assert_eq!(
                aabb_app::compare::side_of(&run.b),
                b,
                "B keeps its settings"
            );
            let keys: Vec<(u64, u32, u32)> = run
                .rows
                .iter()
                .map(|r| (r.step, r.only_a, r.only_b))
                .collect();
            let want_keys: Vec<(u64, u32, u32)> =
                want.iter().map(|w| (w.0, w.1 as u32, w.2 as u32)).collect();
            assert_eq!(keys, want_keys, "B {} from step {start}", b.describe());
        }
    }
    // A wider margin from step 30 is not A's run again: B reinserts less and finds more pairs.
    h.state_mut().apply(Command::StopCompare, false);
    h.state_mut().apply(Command::SeekTo(30), false);
    let got = window_rows(&mut h, &aabb_app::views::compare::default_b(&a), 10);
    assert!(got.iter().any(|r| r.2 > 0), "{got:?}");
    assert_ne!(
        got.iter().map(|r| r.4[0]).sum::<usize>(),
        got.iter().map(|r| r.4[1]).sum::<usize>()
    );
}

#[test]
fn four_times_the_margin_from_step_30_on_random_1000_is_b_with_its_margin() {
    let scene = Scene::load(&root_file("scenes/random-1000.ron")).expect("random-1000");
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1280.0, 800.0)),
        scene.clone(),
    );
    h.run_steps(2);
    for _ in 0..30 {
        h.state_mut().apply(Command::Step, false);
    }
    h.run_steps(1);
    // As the View menu starts it.
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Compare with 4x the margin").click();
    h.run_steps(2);
    let b = h
        .state()
        .inspect()
        .compare()
        .expect("comparing")
        .side
        .clone();
    assert_eq!(b.config.margin, 4.0 * scene.tree.margin);
    h.state_mut().apply(Command::StopCompare, false);
    let want = headless_from_here(&h, &b, 5);
    let got = window_rows(&mut h, &b, 5);
    assert_eq!(got, want);
    // B's fat boxes are wider: it reports more pairs and reinserts fewer at every step after.
    for r in &got[1..] {
        assert!(r.3[1] > r.3[0] && r.4[1] < r.4[0], "{r:?}");
    }
}

#[test]
fn back_before_the_start_of_a_comparison_b_steps_on_with_its_own_settings() {
    let (mut h, scene) = harness(0.05);
    let b = side(0.2, &scene);
    step(&mut h, 30);
    h.state_mut().apply(Command::StartCompare(b.clone()), false);
    step(&mut h, 5);
    // Back to step 10, before B started: B has no run of its own there, and says so.
    h.state_mut().apply(Command::SeekTo(10), false);
    h.run_steps(2);
    let run = h.state().inspect().compare().expect("comparing");
    assert_eq!(run.b.sim().step_index(), 10);
    assert!(run.here.is_none());
    h.get_by_label_contains(
        "step 10: before the comparison (it started at step 30): B has no run of its own here",
    );
    // The playhead moves on through the recorded steps: still none of B's.
    h.state_mut().apply(Command::Step, false);
    h.run_steps(1);
    assert!(
        h.state()
            .inspect()
            .compare()
            .is_some_and(|c| c.here.is_none())
    );
    h.state_mut().apply(Command::SeekTo(10), false);
    // An edit there discards both futures: B runs on from it with its own settings, as the
    // headless twin from A's state after the edit.
    h.state_mut().apply(
        Command::MoveSphere {
            id: scene.spheres[0].id,
            center: Vec3::new(3.0, 4.0, 0.0),
        },
        false,
    );
    h.run_steps(1);
    let want = headless_from_here(&h, &b, 6);
    let here = |h: &Harness<'_, DebuggerApp>| {
        let run = h.state().inspect().compare().expect("comparing");
        diff_row(run.here.as_ref().expect("B at A's step"))
    };
    let mut got = vec![here(&h)];
    for _ in 0..6 {
        h.state_mut().apply(Command::Step, false);
        h.run_steps(1);
        got.push(here(&h));
    }
    assert_eq!(got, want);
    let run = h.state().inspect().compare().expect("comparing");
    assert_eq!(aabb_app::compare::side_of(&run.b), b);
    assert_eq!(run.started_at, 10);
    assert_eq!(run.rows.last().map(|r| r.step), Some(16));
}

#[test]
fn compare_mode_on_a_trace_started_at_a_later_step_gives_the_headless_rows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("engine.aabbstream");
    crate::common::engine::write_stream(&path, None, None);
    let (mut h, _) = harness(0.1);
    h.state_mut().apply(Command::Open(path), false);
    h.run_steps(2);
    assert!(h.state().inspect().sim().is_trace());
    let sim = h.state().inspect().sim();
    let a = Side {
        kind: sim.broadphase_kind(),
        config: sim.tree_settings(),
    };
    for start in [0, 3, 6] {
        for b in [
            aabb_app::views::compare::default_b(&a),
            Side {
                kind: BroadphaseKind::Sap,
                ..a.clone()
            },
        ] {
            h.state_mut().apply(Command::StopCompare, false);
            h.state_mut().apply(Command::SeekTo(start), false);
            while h.state().inspect().sim().step_index() < start {
                h.state_mut().apply(Command::Step, false);
            }
            let steps = 9 - start;
            let want = headless_from_here(&h, &b, steps);
            let got = window_rows(&mut h, &b, steps);
            assert_eq!(got, want, "B {} from step {start}", b.describe());
            assert_eq!(got.len() as u64, steps + 1);
        }
    }
}

#[test]
fn playing_slow_steps_b_steps_beside_a_on_the_stepping_thread_with_its_own_settings() {
    // 30,000 spheres: a step takes longer than the stepping thread's threshold in any build.
    let side_len = f64::from(30_000u32).sqrt() * 4.0;
    let text = format!(
        r#"(
    format_version: 1,
    name: "scale",
    dimensions: 2,
    world: (min: (0.0, 0.0), max: ({side_len}, {side_len})),
    dt: 0.016666668,
    tree: (margin: 0.1, velocity_lookahead: 0.05),
    spheres: [],
    generate: Some((count: 30000, radius: (0.3, 1.0), speed: (0.0, 1.4), seed: 7)),
    view: None,
)"#
    );
    let scene = Scene::parse(&text, "scale.ron", false).expect("valid scene");
    let mut h = ui::app_harness_with(
        Harness::builder()
            .with_size(Vec2::new(1280.0, 800.0))
            .with_step_dt(1.0 / 60.0),
        scene.clone(),
        aabb_app::AppOptions {
            playing: false,
            ephemeral: true,
            // Every timed step on the stepping thread, whatever the machine.
            background_steps: Some(0.01),
            ..aabb_app::AppOptions::default()
        },
    );
    h.run_steps(1);
    step(&mut h, 2);
    let b = side(0.4, &scene);
    let start = h.state().inspect().sim().clone();
    h.state_mut().apply(Command::StartCompare(b.clone()), false);
    h.state_mut().apply(Command::SetPlaying(true), false);
    let began = std::time::Instant::now();
    while h.state().inspect().sim().step_index() < 5 {
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(
            began.elapsed() < std::time::Duration::from_secs(120),
            "steps"
        );
    }
    h.state_mut().apply(Command::SetPlaying(false), false);
    while h.state().inspect().stepping_in_background() {
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(
            began.elapsed() < std::time::Duration::from_secs(120),
            "the step ends"
        );
    }
    h.run_steps(2);
    let at = h.state().inspect().sim().step_index();
    let run = h.state().inspect().compare().expect("comparing");
    assert!(run.steps_beside > 0, "B stepped on the stepping thread");
    assert_eq!(run.b.sim().step_index(), at);
    assert_eq!(aabb_app::compare::side_of(&run.b), b);
    // The headless twin from step 2.
    let sb = compare::side_at(&start, &b).expect("B");
    let mut want = Vec::new();
    compare::run(start, sb, at - 2, |d| {
        want.push((d.step, d.only_a.len() as u32, d.only_b.len() as u32))
    });
    let got: Vec<(u64, u32, u32)> = run
        .rows
        .iter()
        .map(|r| (r.step, r.only_a, r.only_b))
        .collect();
    assert_eq!(got, want);
    assert!(got.iter().any(|r| r.2 > 0), "{got:?}");
}
