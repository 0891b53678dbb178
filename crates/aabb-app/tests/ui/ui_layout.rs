//! The window's layout: the world view keeps the largest share at every size, the splitter
//! between the world and the tree moves the share, "Reset layout" restores it, and the views
//! fit again when their size changes.

use aabb_app::layout::{MIN_VIEWS_WIDTH, TREE_SHARE_DEFAULT};
use aabb_app::prefs::PrefChange;
use aabb_app::{Command, DebuggerApp};
use aabb_model::scene::Scene;
use eframe::egui;
use egui::{Event, Modifiers, PointerButton, Pos2, Rect, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};

use crate::common::root_file;
use crate::common::ui;

fn harness(size: Vec2) -> Harness<'static, DebuggerApp> {
    let scene = Scene::load(&root_file("scenes/random-1000.ron")).expect("scene");
    let mut h = ui::app_harness(Harness::builder().with_size(size), scene);
    h.run_steps(3);
    h
}

fn rects(h: &Harness<'_, DebuggerApp>) -> (Rect, Rect) {
    let app = h.state();
    (
        app.inspect().world_view_rect().expect("the world is drawn"),
        app.inspect().tree_view_rect().expect("the tree is drawn"),
    )
}

#[test]
fn the_world_view_takes_the_largest_share_at_every_size() {
    for (w, h_, world_at_least) in [
        (1440.0, 880.0, 560.0),
        (1280.0, 800.0, 470.0),
        (1024.0, 700.0, 500.0),
        (640.0, 400.0, 420.0),
    ] {
        let h = harness(Vec2::new(w, h_));
        let (world, tree) = rects(&h);
        assert!(
            world.width() >= world_at_least,
            "{w} x {h_}: world {} wide",
            world.width()
        );
        assert!(
            world.width() > tree.width(),
            "{w} x {h_}: {world:?} {tree:?}"
        );
        // The menu and status bars (80), the timeline under the views (about 130), and
        // where a side panel does not fit, the tuning strip standing in for it (up to two
        // rows).
        let strip = if w < 1130.0 { 60.0 } else { 0.0 };
        assert!(
            world.height() >= h_ - 210.0 - strip,
            "{w} x {h_}: world {world:?}"
        );
        // Both views stay usable, the tree too.
        assert!(tree.width() >= 150.0, "{w} x {h_}: tree {tree:?}");
        assert!(world.width() + tree.width() >= MIN_VIEWS_WIDTH.min(w) - 20.0);
        // Nothing overlaps: the tree is right of the world.
        assert!(tree.left() > world.right(), "{w} x {h_}");
    }
}

#[test]
fn the_splitter_moves_the_share_the_views_refit_and_reset_layout_restores_it() {
    let mut h = harness(Vec2::new(1280.0, 800.0));
    let (world, tree) = rects(&h);
    let zoom_before = h.state().inspect().camera().zoom;
    let area_width = tree.right() - world.left();
    let split_x = (world.right() + tree.left()) * 0.5;
    assert_eq!(h.state().inspect().prefs().tree_share, TREE_SHARE_DEFAULT);
    // Drag the splitter 150 points to the left: the tree grows by that much.
    ui::drag(
        &mut h,
        PointerButton::Primary,
        Pos2::new(split_x, world.center().y),
        Pos2::new(split_x - 150.0, world.center().y),
        4,
    );
    let share = h.state().inspect().prefs().tree_share;
    let expected = TREE_SHARE_DEFAULT + 150.0 / area_width;
    assert!(
        (share - expected).abs() < 0.002,
        "{share} against {expected}"
    );
    let (world2, tree2) = rects(&h);
    assert!(
        (tree2.width() - tree.width() - 150.0).abs() <= 2.0,
        "{tree:?} {tree2:?}"
    );
    assert!(world2.width() < world.width());
    // The world was fitted and not moved since: it fits the narrower view again.
    let zoom_after = h.state().inspect().camera().zoom;
    assert!(zoom_after < zoom_before, "{zoom_before} -> {zoom_after}");
    // A share past the limits is clamped: the world keeps a quarter.
    h.state_mut()
        .push_command(Command::SetPref(PrefChange::TreeShare(0.99)));
    h.run_steps(2);
    let (world3, _) = rects(&h);
    assert!(world3.width() >= 0.24 * area_width, "{world3:?}");
    // View > Reset layout: the default share, and both side panels.
    h.state_mut().prefs_mut().show_controls = false;
    h.run_steps(2);
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Reset layout").click();
    h.run_steps(3);
    let prefs = h.state().inspect().prefs();
    assert_eq!(prefs.tree_share, TREE_SHARE_DEFAULT);
    assert!(prefs.show_controls && prefs.show_stats);
    let (world4, tree4) = rects(&h);
    assert!(
        (world4.width() - world.width()).abs() <= 2.0,
        "{world:?} {world4:?}"
    );
    assert!(
        (tree4.width() - tree.width()).abs() <= 2.0,
        "{tree:?} {tree4:?}"
    );
}

#[test]
fn a_view_the_user_zoomed_is_not_refit_when_its_size_changes() {
    let mut h = harness(Vec2::new(1280.0, 800.0));
    let (world, _) = rects(&h);
    h.event(Event::PointerMoved(world.center()));
    h.event(Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: Vec2::new(0.0, 120.0),
        modifiers: Modifiers::NONE,
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Wheel,
    });
    // Wheel zoom is smoothed over a few frames.
    h.run_steps(30);
    let zoomed = h.state().inspect().camera();
    h.set_size(Vec2::new(1100.0, 800.0));
    h.run_steps(3);
    assert_eq!(
        h.state().inspect().camera(),
        zoomed,
        "the user's zoom is kept"
    );
    // F fits again, and from then on a resize refits.
    h.state_mut().push_command(Command::Fit);
    h.run_steps(3);
    let fitted = h.state().inspect().camera();
    assert_ne!(fitted, zoomed);
    h.set_size(Vec2::new(900.0, 800.0));
    h.run_steps(3);
    assert!(
        h.state().inspect().camera().zoom < fitted.zoom,
        "the narrower view fits again"
    );
}

#[test]
fn a_figure_scene_frames_its_content_and_shows_its_caption() {
    let mut scene = Scene::load(&root_file("scenes/randall-bounding-aabbs.ron")).expect("scene");
    assert_eq!(scene.view.as_ref().and_then(|v| v.fit_content), Some(true));
    scene.view.get_or_insert_with(Default::default).caption = Some("The claim.".to_owned());
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1280.0, 800.0)),
        scene,
    );
    h.run_steps(3);
    let world = h.state().inspect().world_view_rect().expect("drawn");
    let app = h.state();
    let (a, b) = (
        app.inspect().fat_box(1).expect("box 1"),
        app.inspect().fat_box(2).expect("box 2"),
    );
    let corner = |x: f32, y: f32| {
        app.inspect()
            .screen_pos_of_world(glam::Vec2::new(x, y))
            .expect("drawn")
    };
    let (lo, hi) = (corner(a.min.x, b.min.y), corner(b.max.x, a.max.y));
    // Inside the view, with a border, and filling most of it on the tighter axis.
    assert!(
        world.shrink(10.0).contains(lo) && world.shrink(10.0).contains(hi),
        "{lo:?} {hi:?} {world:?}"
    );
    let fill = ((hi.x - lo.x) / world.width()).max((lo.y - hi.y) / world.height());
    assert!(fill > 0.7, "the content fills {fill:.2} of the view");
    // The caption, and this run's measure beside it.
    h.state_mut().push_command(Command::TogglePlay);
    h.run_steps(5);
    h.get_by_label_contains("The claim.");
    h.get_by_label_contains("of a 60 Hz frame (median of the last");
}

/// True when `rect` lies inside the window of `size`.
fn on_screen(rect: Rect, size: Vec2) -> bool {
    Rect::from_min_size(Pos2::ZERO, size).contains_rect(rect)
}

/// Every node whose label contains one of `labels` is shown, and on screen once scrolled to
/// (the side panels scroll); and no label of the window reaches past its right edge (a panel
/// as wide as its longest line pushes the others off).
fn all_on_screen(h: &mut Harness<'_, DebuggerApp>, size: Vec2, labels: &[&str]) {
    for node in h.get_all_by_role(egui::accesskit::Role::Label) {
        assert!(
            node.rect().right() <= size.x && node.rect().left() >= 0.0,
            "{:?} at {:?} reaches past the {size:?} window",
            node.accesskit_node().value(),
            node.rect()
        );
    }
    for label in labels {
        let count = h.get_all_by_label_contains(label).count();
        assert!(count > 0, "\"{label}\" is shown");
        for k in 0..count {
            let node = h.get_all_by_label_contains(label).nth(k).expect("shown");
            node.scroll_to_me();
            h.run_steps(2);
            let rect = h
                .get_all_by_label_contains(label)
                .nth(k)
                .expect("shown")
                .rect();
            assert!(
                on_screen(rect, size),
                "\"{label}\" at {rect:?} is off the {size:?} window"
            );
        }
    }
}

#[test]
fn at_1280_by_800_a_stream_with_the_engines_tree_keeps_statistics_and_the_compare_readout_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("engine.aabbstream");
    crate::common::engine::write_stream(&path, None, None);
    let size = Vec2::new(1280.0, 800.0);
    let mut h = ui::app_harness(Harness::builder().with_size(size), Scene::builtin_default());
    // Any tree warns (a fresh build costs 1x): the engine's health warning is shown.
    h.state_mut().prefs_mut().health_threshold = 0.5;
    h.run_steps(2);
    h.state_mut().apply(Command::Open(path), false);
    h.state_mut().apply(Command::SeekTo(u64::MAX), false);
    for _ in 0..9 {
        h.state_mut().apply(Command::Step, false);
    }
    h.run_steps(4);
    assert!(h.state().inspect().sim().is_trace());
    all_on_screen(
        &mut h,
        size,
        &[
            "Engine's broad phase (received)",
            "The engine's tree has cost 0.50x a fresh build or more since step 0",
            "Run: missed pairs",
            "Run: false positives",
        ],
    );
    // The world keeps its share beside the panels.
    let world = h.state().inspect().world_view_rect().expect("the world");
    assert!(world.width() >= 460.0, "{world:?}");

    // Compare mode: the readout wraps to the window, the engine's tree offered whole.
    let a = h.state().inspect().sim().tree_settings();
    h.state_mut().apply(
        Command::StartCompare(aabb_model::compare::Side {
            kind: aabb_model::broadphase::BroadphaseKind::Tree,
            // Every method other than A's: B's label is at its longest.
            config: aabb_model::tree::TreeConfig {
                margin: 4.0 * a.margin.max(0.05),
                velocity_lookahead: 0.25,
                insertion: aabb_model::tree::InsertionCost::ExactSurfaceArea,
                balancing: aabb_model::tree::Balancing::Avl,
                pairs: aabb_model::tree::PairMethod::MovedQueries,
                update: aabb_model::tree::UpdateMode::EnlargeAndRebuild,
                ..a
            },
        }),
        false,
    );
    h.run_steps(3);
    all_on_screen(
        &mut h,
        size,
        &[
            "Stop comparing",
            "draw the engine's tree",
            "only in B",
            " steps from 9",
            "Run: false positives",
        ],
    );
    // The views start below the readout.
    let readout = h
        .get_all_by_label_contains("only in B")
        .next()
        .expect("the readout")
        .rect();
    let b_world = h.state().inspect().compare_world_rect().expect("B's world");
    assert!(b_world.top() >= readout.bottom(), "{readout:?} {b_world:?}");
}
