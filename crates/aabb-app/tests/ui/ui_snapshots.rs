//! Snapshot images of the main view (world and tree) rendered with wgpu (llvmpipe works), behind
//! the `snapshots` feature. `UPDATE_SNAPSHOTS=1 cargo test -p aabb-app --features snapshots
//! --test ui ui_snapshots` rewrites them in crates/aabb-app/tests/snapshots/.

#![cfg(feature = "snapshots")]

use aabb_app::prefs::{ThemeChoice, ViewMode};
use aabb_app::{Command, DebuggerApp, Pick};
use aabb_model::scene::Scene;
use eframe::egui;
use egui::Vec2;
use egui_kittest::Harness;

use crate::common::ui;

const SCENE: &str = r#"(
    format_version: 1,
    name: "Six spheres",
    dimensions: 2,
    world: (min: (0.0, 0.0), max: (20.0, 12.0)),
    dt: 0.016666668,
    tree: (margin: 0.5, velocity_lookahead: 0.0, insertion: SurfaceArea, balancing: Rotations, pairs: SelfTraversal),
    spheres: [
        (id: 0, center: (3.0, 4.0), radius: 1.0, velocity: (1.0, 0.0)),
        (id: 1, center: (6.5, 3.0), radius: 1.2, velocity: (0.0, 1.0)),
        (id: 2, center: (9.0, 8.5), radius: 1.0, velocity: (-1.0, 0.0)),
        (id: 3, center: (15.0, 9.0), radius: 1.5, velocity: (0.0, -1.0)),
        (id: 4, center: (16.0, 3.5), radius: 1.0, velocity: (1.0, 1.0)),
        (id: 5, label: "5", center: (12.0, 6.0), radius: 2.0, velocity: (0.0, 0.0)),
    ],
    generate: None,
    view: None,
)"#;

fn harness(size: Vec2, view: ViewMode, theme: ThemeChoice) -> Harness<'static, DebuggerApp> {
    let scene = Scene::parse(SCENE, "six.ron", false).expect("valid scene");
    let mut h = ui::app_harness(Harness::builder().with_size(size).wgpu(), scene);
    {
        let prefs = h.state_mut().prefs_mut();
        prefs.view_mode = view;
        prefs.theme = theme;
        // The statistics panel shows measured times, which differ run to run; SHOW_STATS=1
        // shows it for a look (the snapshot then differs).
        prefs.show_stats = std::env::var_os("SHOW_STATS").is_some();
    }
    h.run_steps(4);
    h
}

/// The main window at the sizes the layout is built for: 1280 x 800, 1024 x 700 and
/// 640 x 400 (the side panels step aside, the world keeps the largest share).
#[test]
fn layout_1280x800_dark() {
    let mut h = harness(Vec2::new(1280.0, 800.0), ViewMode::Both, ThemeChoice::Dark);
    h.state_mut()
        .push_command(Command::Select(Some(Pick::Sphere(5))));
    h.run_steps(2);
    h.snapshot("layout_1280x800_dark");
}

#[test]
fn layout_1024x700_light() {
    let mut h = harness(Vec2::new(1024.0, 700.0), ViewMode::Both, ThemeChoice::Light);
    h.snapshot("layout_1024x700_light");
}

#[test]
fn layout_640x400_dark() {
    let mut h = harness(Vec2::new(640.0, 400.0), ViewMode::Both, ThemeChoice::Dark);
    h.snapshot("layout_640x400_dark");
}

#[test]
fn world_light() {
    let mut h = harness(
        Vec2::new(1200.0, 700.0),
        ViewMode::World,
        ThemeChoice::Light,
    );
    h.snapshot("world_light");
}

/// Two spheres side by side, margin 0: each leaf shares three edges with its parent (the
/// root), the case where a parent painted over a child made leaf boxes look open.
const SHARED_EDGES: &str = r#"(
    format_version: 1,
    name: "Shared edges",
    dimensions: 2,
    world: (min: (0.0, 0.0), max: (20.0, 12.0)),
    dt: 0.016666668,
    tree: (margin: 0.0, velocity_lookahead: 0.0),
    spheres: [
        (id: 0, center: (6.0, 6.0), radius: 2.0),
        (id: 1, center: (13.0, 6.0), radius: 2.0),
    ],
)"#;

/// The rendered colour at a screen point (points = pixels here).
fn pixel(img: &image::RgbaImage, p: egui::Pos2) -> [u8; 3] {
    let px = img.get_pixel(p.x.floor() as u32, p.y.floor() as u32);
    [px[0], px[1], px[2]]
}

#[test]
fn every_edge_of_a_leaf_box_is_drawn_in_the_leaf_colour() {
    use aabb_app::palette::Palette;
    use aabb_app::prefs::Layers;
    for pad in [false, true] {
        let scene = Scene::parse(SHARED_EDGES, "edges.ron", false).expect("valid scene");
        let mut h = ui::app_harness(
            Harness::builder().with_size(Vec2::new(900.0, 600.0)).wgpu(),
            scene,
        );
        {
            let prefs = h.state_mut().prefs_mut();
            prefs.view_mode = ViewMode::World;
            prefs.show_stats = false;
            prefs.pad_parents = pad;
            prefs.layers = Layers::from_names(&["branches", "leaves"]).expect("layers");
        }
        h.run_steps(4);
        let img = h.render().expect("rendered");
        let leaf = Palette::DARK.leaf;
        let want = [leaf.r(), leaf.g(), leaf.b()];
        for id in [0, 1] {
            let f = h.state().inspect().fat_box(id).expect("fat box");
            let app = h.state();
            let at = |x: f32, y: f32| {
                app.inspect()
                    .screen_pos_of_world(glam::Vec2::new(x, y))
                    .expect("drawn")
            };
            let (min, max) = (f.min, f.max);
            let mid = (min + max) * 0.5;
            for (name, p) in [
                ("left", at(min.x, mid.y)),
                ("right", at(max.x, mid.y)),
                ("top", at(mid.x, max.y)),
                ("bottom", at(mid.x, min.y)),
            ] {
                assert_eq!(
                    pixel(&img, p),
                    want,
                    "sphere {id}, {name} edge at {p:?}, padded parents {pad}"
                );
            }
        }
    }
}

/// A 2D trace: a static floor and two walls (their own colour), boxes resting on the floor
/// and on each other (colliding: red), one falling alone; fat boxes and the tree as for
/// spheres.
const TRACE: &str = "aabb-trace 1 dims=2 dt=0.05
static
100 0 0 20 1
101 0 1 1 12
102 19 1 20 12
step 0
0 2 1 4 3
1 3.5 3 5.5 5
2 8 1 9.5 2.5
3 13 6 14 7
4 15.5 1 18 2
step 1
0 2 1 4 3
1 3.5 3 5.5 5
2 8 1 9.5 2.5
3 13 5.5 14 6.5
4 15.5 1 18 2
";

#[test]
fn trace_world_dark() {
    let mut h = harness(Vec2::new(1000.0, 640.0), ViewMode::World, ThemeChoice::Dark);
    // No timeline: its step-time track joins the two steps' measured times, and which was
    // slower differs from run to run (the static boxes go in before step 0 is timed).
    h.state_mut().prefs_mut().show_timeline = false;
    // Removed when the test ends, passed or not.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("boxes.txt");
    std::fs::write(&path, TRACE).expect("write the trace");
    h.state_mut().apply(Command::Open(path), false);
    h.state_mut().apply(Command::Step, false);
    h.state_mut()
        .push_command(Command::Select(Some(Pick::Sphere(3))));
    h.run_steps(4);
    assert_eq!(h.state().inspect().sim().step_index(), 1);
    assert_eq!(h.state().inspect().status(), "End of the trace at step 1.");
    h.snapshot("trace_world_dark");
}

/// Static boxes are drawn under every layer in their own colour: each edge of a platform of
/// the shipped level is the palette's static colour, in both themes; and the level as a
/// picture (dark).
#[test]
fn static_boxes_are_drawn_in_their_own_colour() {
    use aabb_app::palette::Palette;
    use aabb_app::prefs::Layers;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenes/static-level.ron");
    for (theme, pal) in [
        (ThemeChoice::Dark, Palette::DARK),
        (ThemeChoice::Light, Palette::LIGHT),
    ] {
        let scene = Scene::load(std::path::Path::new(path)).expect("valid scene");
        let mut h = ui::app_harness(
            Harness::builder().with_size(Vec2::new(900.0, 600.0)).wgpu(),
            scene,
        );
        {
            let prefs = h.state_mut().prefs_mut();
            prefs.view_mode = ViewMode::World;
            prefs.theme = theme;
            prefs.show_stats = false;
            prefs.layers = Layers::from_names(&["walls"]).expect("layers");
        }
        h.run_steps(4);
        let img = h.render().expect("rendered");
        let want = [pal.static_box.r(), pal.static_box.g(), pal.static_box.b()];
        let app = h.state();
        let at = |x: f32, y: f32| {
            app.inspect()
                .screen_pos_of_world(glam::Vec2::new(x, y))
                .expect("drawn")
        };
        // Platform 101: (4, 7) to (12, 8).
        for (name, p) in [
            ("left", at(4.0, 7.5)),
            ("right", at(12.0, 7.5)),
            ("top", at(8.0, 8.0)),
            ("bottom", at(8.0, 7.0)),
        ] {
            assert_eq!(pixel(&img, p), want, "{theme:?}: {name} edge at {p:?}");
        }
        // Inside: the faint fill, neither the background nor the outline.
        let inside = pixel(&img, at(8.0, 7.5));
        let bg = [pal.background.r(), pal.background.g(), pal.background.b()];
        assert!(
            inside != bg && inside != want,
            "{theme:?}: inside is {inside:?}"
        );
    }
    let scene = Scene::load(std::path::Path::new(path)).expect("valid scene");
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(900.0, 600.0)).wgpu(),
        scene,
    );
    {
        let prefs = h.state_mut().prefs_mut();
        prefs.view_mode = ViewMode::World;
        prefs.theme = ThemeChoice::Dark;
        prefs.show_stats = false;
    }
    h.run_steps(4);
    h.snapshot("world_static_level_dark");
}
