//! The egui front end of aabb-debugger, the only crate that imports egui/eframe: the debugger window (world
//! view, tree view, controls, statistics, timeline, files) and the self-closing `screenshot`
//! run.
//!
//! - [`DebuggerApp`]: the app, exported so tests drive it headless with egui_kittest.
//! - [`Command`]: what the UI asks for; applied after the panels are drawn.
//! - [`run_window`], [`run_window_listening`] and [`run_screenshot`]: what the command line
//!   calls.
//!
//! # Shape
//!
//! As egui's demo app gives each demo its own type and file, each view is its own type in
//! `views/`, behind one trait, [`views::View`]:
//!
//! ```text
//! fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>);
//! ```
//!
//! A view reads the state (`&State`: model, preferences, shared view state, snapshot), may
//! keep and change its own UI state (the world view its pan and mesh buffers, the tree view
//! its camera and layout, the windows the file dialog widget), and pushes [`Command`]s for
//! everything else. The shell ([`DebuggerApp`], `shell.rs`) owns the state and the views,
//! lays the views out each frame, and after all of them applies the commands through the one
//! path, `State::apply` (`apply.rs`): first the views' reports of the frame they drew (hover,
//! world camera, drawing time), then their requests. The only other change of the state is
//! the clock (`State::advance_time`), which the shell runs before the views draw.
//!
//! A new view is one new file: `views/<name>.rs` with a type implementing `View`, declared
//! in `views/mod.rs`, a field of the shell's `Views`, and one line where the shell lays it
//! out. What it needs changed is a new `Command` variant (`commands.rs`) and its arm in
//! `apply.rs`.
//!
//! # Layers
//!
//! Each module imports only modules of the layers below it; nothing imports upward, so the
//! modules import each other in no circle.
//!
//! 1. Values: `layout`, `camera`, `camera3d`, `clock`, `density`, `mesh`, `palette`, `pick`, `history`, `files`,
//!    `health_monitor`; `prefs` (uses `layout`), `snapshot` (uses `camera` and the model's `source`,
//!    a scene's or a trace's simulation), `native_dialog` (uses `files`).
//! 2. `commands` (the [`Command`] type: values only).
//! 3. `state` (the [`State`](state::State) the views read; holds a pending `Command`).
//! 4. `compare` (a comparison's side B, a second `State` stepped with the document's) and
//!    `apply` (`State::apply`: commands change the state).
//! 5. `views` (read `state`, push `commands`; never `apply` or the shell; among themselves
//!    only the `View` trait, the windows the file dialog view, and the statistics and the
//!    timeline the health readout's functions, `views::health`).
//! 6. `shell` ([`DebuggerApp`]: owns the state and the views, routes, applies).
//! 7. `screenshot` (wraps a `DebuggerApp` for the `screenshot` command); this file
//!    (`run_window`).

use eframe::egui;

// The model layer under the paths the app's modules use (`crate::scene::Scene`, ...).
pub(crate) use aabb_model::compare as compare_model;
pub(crate) use aabb_model::{
    broadphase, fileio, replay, scene, session, source, stream, sweep, text, trace, tree,
};

mod apply;
pub mod camera;
pub mod camera3d;
pub mod clock;
pub mod commands;
pub mod compare;
pub mod density;
pub mod files;
pub mod frames;
pub mod health_monitor;
pub mod history;
pub mod layout;
pub mod live;
pub mod mesh;
pub mod native_dialog;
pub mod palette;
pub mod pane;
pub mod pick;
pub mod prefs;
pub mod renderer;
mod screenshot;
mod shell;
pub mod snapshot;
pub mod state;
pub mod views;

pub use commands::Command;
pub use eframe::Renderer;
pub use pick::{Pick, SphereDrag};
pub use screenshot::{ScreenshotPlan, run_screenshot};
pub use shell::{AppOptions, DebuggerApp, Inspect};
pub use views::windows::SHORTCUTS;

use crate::scene::Scene;
use std::path::PathBuf;

/// The window's initial size, points.
const WINDOW_SIZE: [f32; 2] = [1440.0, 880.0];

/// The main window's size and title.
fn window_options() -> eframe::NativeOptions {
    eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("aabb-debugger")
            .with_app_id("aabb-debugger")
            .with_inner_size(WINDOW_SIZE)
            .with_min_inner_size([640.0, 400.0])
            .with_drag_and_drop(true),
        ..Default::default()
    }
}

/// Opens the window already listening for an engine on `addr` (as `--listen`), on an empty
/// world that says it waits for one; nothing plays behind it.
pub fn run_window_listening(addr: std::net::SocketAddr) -> anyhow::Result<i32> {
    let renderers = renderer::renderers_to_try()?;
    renderer::run_native_with("aabb-debugger", window_options, &renderers, || {
        Box::new(move |cc| {
            let mut app = DebuggerApp::new(
                &cc.egui_ctx,
                cc.storage,
                Scene::waiting_for_engine(),
                None,
                AppOptions {
                    playing: false,
                    native_dialogs: true,
                    background_steps: Some(crate::state::BACKGROUND_STEP_MS),
                    ..AppOptions::default()
                },
            )?;
            app.push_command(Command::StartListening(addr));
            Ok(Box::new(app))
        })
    })
    .map_err(|e| anyhow::anyhow!("could not open the window: {e}"))?;
    Ok(0)
}

/// Opens the debugger window on a scene file, or on the built-in scene, already playing.
/// Returns the process exit code.
pub fn run_window(scene: Option<PathBuf>) -> anyhow::Result<i32> {
    // A recording opens as the first command of the window (paused at its last step), over
    // the built-in scene; so does a trace (paused at its step 0) and a box list (imported as
    // a new scene of its static boxes).
    let (scene, path, recording) = match scene {
        Some(path)
            if apply::is_recording_file(&path)
                || crate::trace::is_trace_path(&path)
                || crate::scene::boxlist::opens_as_box_list(&path) =>
        {
            (Scene::builtin_default(), None, Some(path))
        }
        Some(path) => (Scene::load(&path)?, Some(path), None),
        None => (Scene::builtin_default(), None, None),
    };
    let renderers = renderer::renderers_to_try()?;
    renderer::run_native_with("aabb-debugger", window_options, &renderers, || {
        let (scene, path, recording) = (scene.clone(), path.clone(), recording.clone());
        Box::new(move |cc| {
            let mut app = DebuggerApp::new(
                &cc.egui_ctx,
                cc.storage,
                scene,
                path,
                AppOptions {
                    playing: recording.is_none(),
                    native_dialogs: true,
                    background_steps: Some(crate::state::BACKGROUND_STEP_MS),
                    ..AppOptions::default()
                },
            )?;
            if let Some(file) = recording {
                app.push_command(Command::Open(file));
            }
            Ok(Box::new(app))
        })
    })
    .map_err(|e| anyhow::anyhow!("could not open the window: {e}"))?;
    Ok(0)
}
