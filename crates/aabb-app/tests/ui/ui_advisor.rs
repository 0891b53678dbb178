//! UI tests of the Advisor window, driving the real app headless with egui_kittest: open it,
//! sweep a small scene, click a point (the live tree takes its margin and look-ahead), apply
//! the best points, export the result, refuse a bad grid inline, and cancel a sweep (the live
//! scene is untouched).

use aabb_app::prefs::ViewMode;
use aabb_app::{Command, DebuggerApp};
use aabb_model::broadphase::TreeRef;
use aabb_model::scene::Scene;
use aabb_model::sweep::SweepReport;
use aabb_model::tree::TreeConfig;
use eframe::egui;
use egui::{Key, Modifiers, Pos2, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use crate::common::ui;
use crate::common::ui::click_at;

/// Frames a test waits at most for a sweep to end (with a short sleep between them).
const MAX_FRAMES: usize = 6_000;

/// 36 moving circles on a 6 x 6 grid in a 60 x 60 box, margin 0.5, look-ahead 0.
fn scene() -> Scene {
    let mut spheres = String::new();
    for i in 0..36u32 {
        let (x, y) = (5.0 + 10.0 * (i % 6) as f32, 5.0 + 10.0 * (i / 6) as f32);
        let (vx, vy) = (((i * 7) % 11) as f32 - 5.0, ((i * 5) % 9) as f32 - 4.0);
        spheres.push_str(&format!(
            "(id: {i}, center: ({x}, {y}), radius: 1.5, velocity: ({vx}, {vy})),\n"
        ));
    }
    let text = format!(
        r#"(
    format_version: 1,
    name: "Advisor UI test",
    dimensions: 2,
    world: (min: (0.0, 0.0), max: (60.0, 60.0)),
    dt: 0.016666668,
    tree: (margin: 0.5, velocity_lookahead: 0.0),
    spheres: [{spheres}],
    generate: None,
    view: None,
)"#
    );
    Scene::parse(&text, "advisor-ui-test.ron", false).expect("the test scene is valid")
}

fn harness() -> Harness<'static, DebuggerApp> {
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        scene(),
    );
    h.state_mut().prefs_mut().view_mode = ViewMode::World;
    h.run_steps(3);
    h
}

/// The live tree's settings (the broad phase's own, not the document's).
fn live_tree(app: &DebuggerApp) -> TreeConfig {
    match app.inspect().sim().broadphase().tree_view() {
        Some(TreeRef::D2(t)) => *t.config(),
        Some(TreeRef::D3(t)) => *t.config(),
        None => panic!("tree broad phase expected"),
    }
}

/// Opens the Advisor with the tree panel's "Advise…" button and types the grid.
fn open_with_grid(h: &mut Harness<'_, DebuggerApp>, margins: &str, lookaheads: &str, steps: &str) {
    h.get_by_label("Advise…").click();
    // A new window shows from its third frame (egui sizes it first).
    h.run_steps(4);
    assert!(h.query_by_label("Start").is_some(), "the Advisor is open");
    ui::set_field(h, "Margins (from:to:step)", margins);
    ui::set_field(h, "Look-ahead values (s)", lookaheads);
    ui::set_field(h, "Steps a point", steps);
    // Leave the fields, so keys go to the app again.
    h.key_press(Key::Escape);
    h.run_steps(1);
}

/// Runs frames until the sweep has ended (bounded).
fn run_until_idle(h: &mut Harness<'_, DebuggerApp>) {
    for _ in 0..MAX_FRAMES {
        if !h.state().inspect().advisor_running() {
            h.run_steps(3);
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        h.step();
    }
    panic!("the sweep did not end within {MAX_FRAMES} frames");
}

/// Opens the Advisor, sweeps 3 margins x 2 look-ahead values x 20 steps and waits for it.
fn swept() -> (Harness<'static, DebuggerApp>, SweepReport) {
    let mut h = harness();
    open_with_grid(&mut h, "0.05:2.05:1", "0, 0.5", "20");
    h.get_by_label("Start").click();
    h.run_steps(2);
    run_until_idle(&mut h);
    let report = h
        .state()
        .inspect()
        .advisor_report()
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no report; message: {:?}",
                h.state().inspect().advisor_message()
            )
        });
    assert_eq!(report.points.len(), 6);
    assert_eq!(report.steps, 20);
    (h, report)
}

/// Asserts the live tree and the document (the sliders) hold `margin` and `lookahead`, and
/// nothing else of the tree settings changed from `before`.
fn assert_applied(app: &DebuggerApp, before: &TreeConfig, margin: f32, lookahead: f32) {
    let want = TreeConfig {
        margin,
        velocity_lookahead: lookahead,
        ..*before
    };
    assert_eq!(app.inspect().document().tree, want);
    let live = live_tree(app);
    assert_eq!(live.margin, margin);
    assert_eq!(live.velocity_lookahead, lookahead);
}

#[test]
fn clicking_a_point_applies_its_margin_and_lookahead_to_the_live_tree() {
    let (mut h, report) = swept();
    let before = h.state().inspect().document().tree;
    let step = h.state().inspect().sim().step_index();
    // A point drawn apart from the others (a click picks the nearest), not the current one.
    let drawn: Vec<(usize, Pos2)> = (0..report.points.len())
        .filter_map(|i| {
            h.state()
                .inspect()
                .advisor_point_screen_pos(i)
                .map(|p| (i, p))
        })
        .collect();
    assert_eq!(drawn.len(), 6, "every point is drawn in the reinserts plot");
    let (index, pos) = drawn
        .iter()
        .copied()
        .find(|&(i, p)| {
            let pt = report.points[i].point;
            (pt.margin, pt.lookahead) != (before.margin, before.velocity_lookahead)
                && drawn.iter().all(|&(j, q)| j == i || q.distance(p) > 30.0)
        })
        .expect("a point drawn apart from the others");
    click_at(&mut h, pos);
    let point = report.points[index].point;
    let app = h.state();
    assert_applied(app, &before, point.margin, point.lookahead);
    assert!(app.inspect().is_dirty());
    assert_eq!(
        app.inspect().sim().step_index(),
        step,
        "applying does not step"
    );
    assert!(
        app.inspect().status().starts_with("Margin")
            || app.inspect().status().starts_with("Look-ahead")
    );
    // The click is one undo step: Ctrl+Z gives back the settings before it, live too.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert_applied(h.state(), &before, before.margin, before.velocity_lookahead);
    assert!(
        h.state().inspect().status().starts_with("Undone: "),
        "{}",
        h.state().inspect().status()
    );
}

/// A slider drag (the margin changed in consecutive frames) is one undo step; a change in a
/// later frame is another; undo walks them back in order and then has nothing left.
#[test]
fn a_drag_of_the_margin_is_one_undo_step() {
    let mut h = harness();
    let before = h.state().inspect().document().tree;
    for k in 1..=5 {
        let settings = TreeConfig {
            margin: before.margin + 0.1 * k as f32,
            ..before
        };
        h.state_mut()
            .push_command(Command::SetTreeSettings(settings));
        h.run_steps(1);
    }
    let dragged = h.state().inspect().document().tree;
    h.run_steps(3);
    let later = TreeConfig {
        velocity_lookahead: 0.25,
        ..dragged
    };
    h.state_mut().push_command(Command::SetTreeSettings(later));
    h.run_steps(1);
    assert_eq!(h.state().inspect().document().tree, later);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(1);
    assert_eq!(h.state().inspect().document().tree, dragged);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(1);
    assert_eq!(h.state().inspect().document().tree, before);
    assert_eq!(live_tree(h.state()).margin, before.margin);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(1);
    assert_eq!(h.state().inspect().document().tree, before);
    assert_eq!(h.state().inspect().status(), "Nothing to undo.");
}

#[test]
fn apply_best_by_work_and_by_time_apply_those_points() {
    let (mut h, report) = swept();
    let before = h.state().inspect().document().tree;
    let by_work = report.advice.best_by_work.as_ref().expect("a best by work");
    h.get_by_label("Apply best by work").click();
    h.run_steps(2);
    let p = report.points[by_work.index].point;
    assert_applied(h.state(), &before, p.margin, p.lookahead);
    let by_time = report.advice.best_by_time.as_ref().expect("a best by time");
    h.get_by_label("Apply best by time").click();
    h.run_steps(2);
    let p = report.points[by_time.index].point;
    assert_applied(h.state(), &before, p.margin, p.lookahead);
    // The report is the one swept: applying points starts no new sweep.
    assert_eq!(h.state().inspect().advisor_report(), Some(&report));
}

#[test]
fn export_csv_writes_the_sweep_commands_csv() {
    let (mut h, report) = swept();
    h.get_by_label("Export CSV…").click();
    // The frame of the click asks for the file dialog; answer before it draws (its icons
    // need fonts the headless harness lacks), as a pick in it would.
    h.run_steps(1);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("advice");
    h.state_mut().push_command(Command::CloseFileDialog);
    h.state_mut().push_command(Command::Export(path.clone()));
    h.run_steps(2);
    let written = std::fs::read_to_string(dir.path().join("advice.csv")).expect("exported");
    assert_eq!(written, aabb_model::sweep::export::csv(&report));
    assert_eq!(written.lines().count(), 1 + report.points.len());
}

#[test]
fn a_bad_grid_is_refused_inline_and_nothing_starts() {
    let mut h = harness();
    open_with_grid(&mut h, "1:0:0.1", "0", "20");
    h.get_by_label("Start").click();
    h.run_steps(2);
    assert!(!h.state().inspect().advisor_running());
    assert!(h.state().inspect().advisor_report().is_none());
    assert!(
        h.query_by_label("margin: FROM (1) is greater than TO (0)")
            .is_some()
    );
}

#[test]
fn cancel_leaves_the_live_scene_untouched() {
    let mut h = harness();
    // A few steps in, so "from now" differs from the start.
    for _ in 0..5 {
        h.key_press(Key::N);
        h.run_steps(1);
    }
    let snapshot = |app: &DebuggerApp| {
        (
            app.inspect().sim().step_index(),
            app.inspect().document().clone(),
            live_tree(app),
            app.inspect()
                .sim()
                .spheres()
                .iter()
                .map(|b| (b.sphere.id, b.sphere.center.to_array(), b.alive))
                .collect::<Vec<_>>(),
            app.inspect().sim().report().candidate_pairs.clone(),
            app.inspect().is_dirty(),
        )
    };
    let before = snapshot(h.state());
    open_with_grid(&mut h, "0.01:4:0.01", "0, 0.1, 0.2", "5000");
    h.get_by_label("Start").click();
    h.run_steps(2);
    assert!(h.state().inspect().advisor_running(), "the sweep runs");
    h.get_by_label("Cancel").click();
    h.run_steps(1);
    run_until_idle(&mut h);
    let message = h
        .state()
        .inspect()
        .advisor_message()
        .unwrap_or_default()
        .to_owned();
    assert!(message.starts_with("Cancelled after"), "{message}");
    assert!(h.state().inspect().advisor_report().is_none());
    assert_eq!(snapshot(h.state()), before);
}

/// A report belongs to the scene it swept: after another scene is opened it is dropped (its
/// points cannot be applied to the new scene), and the window says why.
#[test]
fn opening_another_scene_drops_the_report() {
    let (mut h, _report) = swept();
    h.state_mut().push_command(Command::OpenBuiltin);
    h.run_steps(3);
    assert_eq!(h.state().inspect().advisor_report(), None);
    assert_eq!(
        h.state().inspect().advisor_message(),
        Some(
            "The scene changed since the last sweep (another file, or other spheres): sweep it \
             again."
        )
    );
    assert!(h.query_by_label("Apply best by work").is_none());
}

#[test]
fn another_scene_starts_from_the_default_grid_around_its_own_margin() {
    let mut h = harness();
    open_with_grid(&mut h, "0.2:0.4:0.1", "0", "20");
    assert_eq!(
        h.get_by_label("Margins (from:to:step)").value().as_deref(),
        Some("0.2:0.4:0.1")
    );
    // The built-in scene (margin 0.3): its own default grid, not the grid typed before.
    h.state_mut().push_command(Command::OpenBuiltin);
    h.run_steps(3);
    assert_eq!(h.state().inspect().document().tree.margin, 0.3);
    assert_eq!(
        h.get_by_label("Margins (from:to:step)").value().as_deref(),
        Some("0:0.75:0.019")
    );
}

#[test]
fn the_pair_cost_swept_with_is_kept_with_the_scene() {
    let mut h = harness();
    open_with_grid(&mut h, "0.1:0.3:0.1", "0", "10");
    assert_eq!(
        h.get_by_label("A pair test costs (node visits)")
            .value()
            .as_deref(),
        Some("1")
    );
    ui::set_field(&mut h, "A pair test costs (node visits)", "25");
    h.key_press(Key::Escape);
    h.run_steps(1);
    h.get_by_label("Start").click();
    h.run_steps(2);
    run_until_idle(&mut h);
    let report = h.state().inspect().advisor_report().expect("a report");
    assert_eq!(
        report.advice.best_by_work.as_ref().map(|b| b.pair_cost),
        Some(25.0)
    );
    assert_eq!(
        h.state()
            .inspect()
            .document()
            .view
            .as_ref()
            .and_then(|v| v.pair_cost),
        Some(25.0)
    );
    assert!(h.state().inspect().is_dirty(), "a change to save");
}
