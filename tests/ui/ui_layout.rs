//! The window's layout: the world view keeps the largest share at every size, the splitter
//! between the world and the tree moves the share, "Reset layout" restores it, and the views
//! fit again when their size changes.

use aabb_app::layout::{MIN_VIEWS_WIDTH, TREE_SHARE_DEFAULT};
use aabb_app::prefs::PrefChange;
use aabb_app::{Command, DebuggerApp};
use aabb_debugger::scene::Scene;
use eframe::egui;
use egui::{Event, Modifiers, PointerButton, Pos2, Rect, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::Path;

use crate::common::ui;

fn harness(size: Vec2) -> Harness<'static, DebuggerApp> {
    let scene = Scene::load(Path::new("scenes/random-1000.ron")).expect("scene");
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
    let mut scene = Scene::load(Path::new("scenes/randall-bounding-aabbs.ron")).expect("scene");
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
