//! Snapshot images of the main view (world and tree) rendered with wgpu (llvmpipe works), behind
//! the `snapshots` feature. `UPDATE_SNAPSHOTS=1 cargo test --features snapshots --test
//! ui_snapshots` rewrites them in tests/snapshots/.

#![cfg(all(feature = "app", feature = "snapshots"))]

use aabb_debugger::app::prefs::{ThemeChoice, ViewMode};
use aabb_debugger::app::{Command, DebuggerApp, Pick};
use aabb_debugger::scene::Scene;
use eframe::egui;
use egui::Vec2;
use egui_kittest::Harness;

#[path = "common/ui.rs"]
mod ui;

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

fn harness(view: ViewMode, theme: ThemeChoice) -> Harness<'static, DebuggerApp> {
    let scene = Scene::parse(SCENE, "six.ron", false).expect("valid scene");
    let mut h = ui::app_harness(
        Harness::builder()
            .with_size(Vec2::new(1200.0, 700.0))
            .wgpu(),
        scene,
    );
    {
        let prefs = h.state_mut().prefs_mut();
        prefs.view_mode = view;
        prefs.theme = theme;
        // The statistics panel shows measured times, which differ run to run.
        prefs.show_stats = false;
    }
    h.run_steps(4);
    h
}

#[test]
fn world_and_tree_dark() {
    let mut h = harness(ViewMode::Both, ThemeChoice::Dark);
    h.state_mut()
        .push_command(Command::Select(Some(Pick::Sphere(5))));
    h.run_steps(2);
    h.snapshot("world_and_tree_dark");
}

#[test]
fn world_light() {
    let mut h = harness(ViewMode::World, ThemeChoice::Light);
    h.snapshot("world_light");
}
