//! The egui front end, the only module that imports egui/eframe: the debugger window (world
//! view, tree view, controls, statistics, files) and the self-closing `screenshot` run.
//!
//! - [`DebuggerApp`]: the app, exported so tests drive it headless with egui_kittest.
//! - [`Command`]: what the UI asks for; applied after the panels are drawn.
//! - [`run_window`] and [`run_screenshot`]: what the command line calls.

use eframe::egui;

pub mod camera;
mod commands;
mod debugger;
pub mod files;
pub mod mesh;
pub mod palette;
mod panels;
pub mod prefs;
pub mod snapshot;
pub mod stats;
pub mod tree_view;
mod world_view;

pub use commands::Command;
use debugger::ResultSlot;
pub use debugger::{AppOptions, DebuggerApp, Pick, ScreenshotPlan, SphereDrag};
pub use panels::SHORTCUTS;

use crate::scene::Scene;
use anyhow::Context as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The window's initial size, points.
const WINDOW_SIZE: [f32; 2] = [1440.0, 880.0];

/// Opens the debugger window on a scene file, or on the built-in scene, already playing.
/// Returns the process exit code.
pub fn run_window(scene: Option<PathBuf>) -> anyhow::Result<i32> {
    let (scene, path) = match scene {
        Some(path) => (Scene::load(&path)?, Some(path)),
        None => (Scene::builtin_default(), None),
    };
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("aabb-debugger")
            .with_app_id("aabb-debugger")
            .with_inner_size(WINDOW_SIZE)
            .with_min_inner_size([640.0, 420.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "aabb-debugger",
        options,
        Box::new(move |cc| {
            let app = DebuggerApp::new(
                &cc.egui_ctx,
                cc.storage,
                scene,
                path,
                AppOptions {
                    playing: true,
                    ..AppOptions::default()
                },
            )?;
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("could not open the window: {e}"))?;
    Ok(0)
}

/// Opens the real window on `scene_path`, renders it as `plan` says, writes the PNG and closes.
/// Returns 0 on success; an error (exit 1) for a bad scene or a failed render; exits the
/// process with status 3 when nothing was saved within `timeout`.
pub fn run_screenshot(
    scene_path: &Path,
    plan: ScreenshotPlan,
    timeout: Duration,
) -> anyhow::Result<i32> {
    let scene = Scene::load(scene_path)?;
    let out = plan.out.clone();
    let size = plan.size;
    // A private storage folder: no remembered panel sizes or prefs change the picture.
    let storage_dir =
        std::env::temp_dir().join(format!("aabb-debugger-screenshot-{}", std::process::id()));
    let done = Arc::new(AtomicBool::new(false));
    {
        let done = Arc::clone(&done);
        let out = out.clone();
        std::thread::spawn(move || {
            std::thread::sleep(timeout);
            if !done.load(Ordering::SeqCst) {
                eprintln!(
                    "error: screenshot: nothing was saved to {} within {} s (no display, or the window never rendered)",
                    out.display(),
                    timeout.as_secs()
                );
                std::process::exit(3);
            }
        });
    }
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("aabb-debugger screenshot")
            .with_app_id("aabb-debugger-screenshot")
            .with_inner_size([size[0] as f32, size[1] as f32])
            .with_resizable(false),
        persist_window: false,
        persistence_path: Some(storage_dir.clone()),
        system_font_fallback: false,
        ..Default::default()
    };
    let result_slot: Arc<std::sync::Mutex<Option<ResultSlot>>> = Arc::default();
    let slot = Arc::clone(&result_slot);
    let path = scene_path.to_path_buf();
    let run = eframe::run_native(
        "aabb-debugger-screenshot",
        options,
        Box::new(move |cc| {
            // Screenshots are taken at one pixel per point, so the PNG is `--size` pixels.
            cc.egui_ctx.set_zoom_factor(1.0);
            let app = DebuggerApp::new(
                &cc.egui_ctx,
                None,
                scene,
                Some(path),
                AppOptions {
                    playing: false,
                    screenshot: Some(plan),
                    ephemeral: true,
                },
            )?;
            if let Ok(mut s) = slot.lock() {
                *s = app.screenshot_result();
            }
            Ok(Box::new(app))
        }),
    );
    done.store(true, Ordering::SeqCst);
    if let Err(e) = std::fs::remove_dir_all(&storage_dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        // The run's own scratch folder; the screenshot itself is not affected.
        eprintln!(
            "screenshot: could not remove the scratch folder {}: {e}",
            storage_dir.display()
        );
    }
    run.map_err(|e| anyhow::anyhow!("screenshot: {e}"))?;
    let outcome = result_slot
        .lock()
        .ok()
        .and_then(|s| s.clone())
        .and_then(|r| r.lock().ok().and_then(|r| r.clone()));
    match outcome {
        Some(Ok(())) => {
            let img = image::open(&out)
                .with_context(|| format!("reading back {}", out.display()))?
                .to_rgba8();
            let colours: std::collections::HashSet<[u8; 4]> = img.pixels().map(|p| p.0).collect();
            println!(
                "{} ({}x{}, {} colours)",
                out.display(),
                img.width(),
                img.height(),
                colours.len()
            );
            if colours.len() < 2 {
                anyhow::bail!(
                    "screenshot: {} is one flat colour; nothing was drawn",
                    out.display()
                );
            }
            Ok(0)
        }
        Some(Err(e)) => anyhow::bail!("screenshot: {e}"),
        None => anyhow::bail!("screenshot: the window closed before the screenshot was taken"),
    }
}
