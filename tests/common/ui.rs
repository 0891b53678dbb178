//! The egui_kittest set-up the UI tests share (`ui_app`, `ui_advisor`, `ui_frame_time`,
//! `ui_snapshots`):
//! include it with `#[path = "common/ui.rs"] mod ui;`.

use aabb_debugger::app::{AppOptions, DebuggerApp};
use aabb_debugger::scene::Scene;
use egui_kittest::{Harness, HarnessBuilder};

/// The debugger app on `scene`, in a harness `builder` set up (size, step, renderer): paused,
/// on the default preferences, storing nothing, measuring the tree's health on the UI thread
/// (so pictures do not depend on a worker's timing; `ui_health` turns the worker on). Runs no
/// frame.
pub fn app_harness(
    builder: HarnessBuilder<DebuggerApp>,
    scene: Scene,
) -> Harness<'static, DebuggerApp> {
    builder.build_eframe(move |cc| {
        let mut app = DebuggerApp::new(
            &cc.egui_ctx,
            None,
            scene,
            None,
            AppOptions {
                playing: false,
                ephemeral: true,
                ..AppOptions::default()
            },
        )
        .expect("the app starts");
        app.set_health_on_ui_thread(true);
        app
    })
}
