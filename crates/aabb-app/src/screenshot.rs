//! The `screenshot` command's run: opens the real window on a scene, prepares it as the plan
//! says (steps, selection, layers, views, theme), renders a few frames, saves the window as a
//! PNG and closes. [`ScreenshotApp`] wraps the [`DebuggerApp`]; the app knows nothing of it.

use eframe::egui;

use super::camera::WorldRect;
use super::commands::Command;
use super::pick::Pick;
use super::prefs::{Layers, ThemeChoice, ViewMode};
use super::shell::{AppOptions, DebuggerApp};
use super::views::advisor::AdvisorGrid;
use crate::scene::{Scene, SceneError};
use anyhow::Context as _;
use glam::Vec2;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the `screenshot` command asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct ScreenshotPlan {
    /// Where the PNG goes.
    pub out: PathBuf,
    /// Steps to run before the shot.
    pub steps: u64,
    /// Window size in points.
    pub size: [u32; 2],
    /// A sphere to select.
    pub select: Option<u32>,
    /// Visible layers (default: the scene's, else the defaults).
    pub layers: Option<Layers>,
    /// Views to show.
    pub view: Option<ViewMode>,
    /// Theme.
    pub theme: Option<ThemeChoice>,
    /// Show the timeline under the world view (the article figures leave it out).
    pub timeline: bool,
    /// The broad phase to run (the window's default, the tree, when `None`).
    pub broadphase: Option<crate::broadphase::BroadphaseKind>,
    /// Open the Advisor and sweep this grid first (from the scene after `steps`); the shot
    /// waits for the sweep to end.
    pub advisor: Option<AdvisorGrid>,
    /// Compare with this side B from step 0 (see `compare.rs`), as `compare` takes a side
    /// (`tree:margin=0.2`) over the document's settings: the shot shows both.
    pub compare: Option<String>,
    /// With `compare`: A's broad phase and settings (the document's when `None`), set before
    /// the comparison starts.
    pub compare_a: Option<String>,
    /// With `compare`: B's views draw the engine's own tree (a stream that carried one),
    /// A's ours.
    pub compare_engine_tree: bool,
    /// Frame this world rectangle (min x, min y, max x, max y on the view's plane) instead
    /// of the world.
    pub frame: Option<[f32; 4]>,
}

/// Where a screenshot run leaves its outcome (`Ok` once the PNG is written).
type ResultSlot = Arc<Mutex<Option<Result<(), String>>>>;

/// A screenshot in progress.
struct ScreenshotRun {
    plan: ScreenshotPlan,
    frames: u32,
    requested: bool,
    image: Arc<Mutex<Option<Arc<egui::ColorImage>>>>,
    result: ResultSlot,
    /// The Advisor's message was printed.
    advisor_reported: bool,
}

/// The debugger app, and the screenshot it is taking.
struct ScreenshotApp {
    app: DebuggerApp,
    run: ScreenshotRun,
}

impl eframe::App for ScreenshotApp {
    /// A screenshot shows the app as it is, not where the pointer happens to rest (on a
    /// virtual display it sits in the middle of the window): pointer motion is dropped and
    /// the pointer treated as gone, so no hover or tooltip appears in the image.
    fn raw_input_hook(&mut self, _ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        raw_input
            .events
            .retain(|e| !matches!(e, egui::Event::PointerMoved(_)));
        raw_input.events.push(egui::Event::PointerGone);
    }

    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        self.app.ui(ui, frame);
        if self.app.inspect().advisor_running() {
            // Wait for the Advisor's sweep; the frames that settle the window come after it.
            ui.ctx().request_repaint_after(Duration::from_millis(50));
            return;
        }
        if let Some(message) = self.app.inspect().advisor_message()
            && !self.run.advisor_reported
        {
            eprintln!("screenshot: the Advisor says: {message}");
            self.run.advisor_reported = true;
        }
        self.run.progress(ui.ctx());
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        self.app.save(storage);
    }

    fn persist_egui_memory(&self) -> bool {
        self.app.persist_egui_memory()
    }

    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        self.app.clear_color(visuals)
    }
}

/// Runs the plan's steps, selects its sphere and sets its layers, views and theme (the status
/// line keeps the "Opened …" message). Fails when the sphere to select is not alive then.
fn prepare(app: &mut DebuggerApp, plan: &ScreenshotPlan) -> Result<(), SceneError> {
    if let Some(kind) = plan.broadphase {
        app.apply(Command::SetBroadphase(kind), true);
        if let Some(e) = app.inspect().error() {
            return Err(SceneError::Invalid {
                file: app.inspect().document_name(),
                message: format!("--broadphase: {e}"),
            });
        }
    }
    if let Some(text) = &plan.compare_a {
        let a = crate::compare_model::Side::parse(text, app.inspect().sim().tree_settings())
            .map_err(|e| SceneError::Invalid {
                file: app.inspect().document_name(),
                message: format!("--compare-a: {e}"),
            })?;
        if a.kind != app.inspect().sim().broadphase_kind() {
            app.apply(Command::SetBroadphase(a.kind), true);
        }
        app.apply(Command::SetTreeSettings(a.config), true);
    }
    if let Some(text) = &plan.compare {
        let side = crate::compare_model::Side::parse(text, app.inspect().sim().tree_settings())
            .map_err(|e| SceneError::Invalid {
                file: app.inspect().document_name(),
                message: format!("--compare: {e}"),
            })?;
        app.apply(Command::StartCompare(side), true);
        if plan.compare_engine_tree {
            if app.state.session.engine().is_none() {
                return Err(SceneError::Invalid {
                    file: app.inspect().document_name(),
                    message: "--compare-engine-tree: the document carries no engine's tree (a \
                              stream that sent one does)"
                        .to_owned(),
                });
            }
            app.state.prefs.compare_b_engine_tree = true;
        }
        if app.inspect().compare().is_none() {
            return Err(SceneError::Invalid {
                file: app.inspect().document_name(),
                message: format!("--compare: {}", app.inspect().status()),
            });
        }
    }
    if let Some([x0, y0, x1, y1]) = plan.frame {
        app.state.view.fit_to = Some(WorldRect::new(Vec2::new(x0, y0), Vec2::new(x1, y1)));
        app.state.view.fit_pending = true;
    }
    let state = &mut app.state;
    for _ in 0..plan.steps {
        let before = state.session.sim().step_index();
        state.step_once();
        if state.session.sim().last_error().is_some() || state.session.sim().step_index() == before
        {
            break;
        }
    }
    // Said on the shot's output too, not only in the picture's overlay.
    if let Some(note) = state.pane().huge_world_note() {
        eprintln!("screenshot: note: {note}");
    }
    let at = state.session.sim().step_index();
    if at < plan.steps {
        // The shot is of an earlier step than asked: said, not left to be found in the
        // picture.
        let why = match state.session.sim().last_error() {
            Some(e) => format!("step {at} stopped: {e}"),
            None => format!("it ends at step {at}"),
        };
        eprintln!(
            "screenshot: --steps {}: the shot is of step {at}: {why}",
            plan.steps
        );
    }
    if let Some(id) = plan.select {
        let sim = &state.session.sim();
        let alive = |b: &crate::scene::SphereBody| b.sphere.id == id && b.alive;
        if !(sim.spheres().iter().any(alive) || sim.boxes().iter().any(|b| b.id == id)) {
            return Err(SceneError::Invalid {
                file: state.document_name(),
                message: format!(
                    "--select {id}: no live sphere has id {id} after {} steps",
                    plan.steps
                ),
            });
        }
        state.view.selection = Some(Pick::Sphere(id));
    }
    if let Some(layers) = plan.layers {
        state.prefs.layers = layers;
    }
    if let Some(view) = plan.view {
        state.prefs.view_mode = view;
    }
    if let Some(theme) = plan.theme {
        state.prefs.theme = theme;
    }
    state.prefs.show_timeline = plan.timeline;
    state.model.playing = false;
    if let Some(grid) = &plan.advisor {
        app.start_advisor_sweep(grid.clone());
    }
    Ok(())
}

impl ScreenshotRun {
    /// After each frame: asks for the pixels once the panels settled, then saves them and
    /// closes the window.
    fn progress(&mut self, ctx: &egui::Context) {
        let run = self;
        run.frames += 1;
        ctx.request_repaint();
        // Let panels settle (sizes are known after the first frames), then ask for the pixels.
        if !run.requested && run.frames >= 5 {
            let slot = Arc::clone(&run.image);
            ctx.request_screenshot(move |image| {
                if let Ok(mut s) = slot.lock() {
                    *s = Some(image);
                }
            });
            run.requested = true;
            return;
        }
        let image = run.image.lock().ok().and_then(|mut s| s.take());
        if let Some(image) = image {
            let outcome = save_png(&image, &run.plan.out);
            if let Ok(mut r) = run.result.lock() {
                *r = Some(outcome);
            }
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }
}

/// The scene a self-closing window run starts on, and whether `path` is then opened over it
/// (`true` for a trace or a box list, which open as File > Open opens them, over the built-in
/// scene); the built-in scene when `path` is `None`.
pub(crate) fn scene_for_window(path: Option<&Path>) -> anyhow::Result<(Scene, bool)> {
    let Some(path) = path else {
        return Ok((Scene::builtin_default(), false));
    };
    if crate::trace::is_trace_path(path) || crate::scene::boxlist::opens_as_box_list(path) {
        Ok((Scene::builtin_default(), true))
    } else {
        Ok((Scene::load(path)?, false))
    }
}

/// Opens the real window on `scene_path`, renders it as `plan` says, writes the PNG and closes.
/// Returns 0 on success; an error (exit 1) for a bad scene or a failed render; exits the
/// process with status 3 when nothing was saved within `timeout`.
pub fn run_screenshot(
    scene_path: &Path,
    plan: ScreenshotPlan,
    timeout: Duration,
) -> anyhow::Result<i32> {
    let (scene, by_open) = scene_for_window(Some(scene_path))?;
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
    let result: ResultSlot = Arc::default();
    let slot = Arc::clone(&result);
    let path = scene_path.to_path_buf();
    let renderers = crate::renderer::renderers_to_try()?;
    let run = crate::renderer::run_native_with(
        "aabb-debugger-screenshot",
        || {
            crate::renderer::self_closing_options(
                "aabb-debugger screenshot",
                "aabb-debugger-screenshot",
                size,
                &storage_dir,
            )
        },
        &renderers,
        || {
            let (scene, plan, slot, path) =
                (scene.clone(), plan.clone(), Arc::clone(&slot), path.clone());
            Box::new(move |cc| {
                // Screenshots are taken at one pixel per point, so the PNG is `--size` pixels.
                cc.egui_ctx.set_zoom_factor(1.0);
                let mut app = DebuggerApp::new(
                    &cc.egui_ctx,
                    None,
                    scene,
                    (!by_open).then(|| path.clone()),
                    AppOptions {
                        playing: false,
                        ephemeral: true,
                        still: true,
                        native_dialogs: false,
                        background_steps: None,
                    },
                )?;
                if by_open {
                    app.apply(Command::Open(path.clone()), true);
                    if let Some(e) = app.inspect().error() {
                        return Err(anyhow::anyhow!("{e}").into());
                    }
                }
                prepare(&mut app, &plan)?;
                Ok(Box::new(ScreenshotApp {
                    app,
                    run: ScreenshotRun {
                        plan,
                        frames: 0,
                        requested: false,
                        image: Arc::default(),
                        result: slot,
                        advisor_reported: false,
                    },
                }))
            })
        },
    );
    done.store(true, Ordering::SeqCst);
    if let Err(e) = remove_scratch(&storage_dir) {
        // The run's own scratch folder; the screenshot itself is not affected.
        eprintln!(
            "screenshot: could not remove the scratch folder {}: {e}",
            storage_dir.display()
        );
    }
    run.map_err(|e| anyhow::anyhow!("screenshot: {e}"))?;
    let outcome = result.lock().ok().and_then(|r| r.clone());
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

/// Removes a window run's private storage (eframe keeps it as a file or a folder, by
/// version); nothing there is not an error.
pub(crate) fn remove_scratch(path: &Path) -> std::io::Result<()> {
    let outcome = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) => Err(e),
    };
    match outcome {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Writes an egui image as a PNG: encoded in memory, then written atomically (a read-only
/// file is refused).
fn save_png(image: &egui::ColorImage, path: &Path) -> Result<(), String> {
    let [w, h] = image.size;
    let mut bytes = Vec::with_capacity(w * h * 4);
    for c in &image.pixels {
        bytes.extend_from_slice(&c.to_srgba_unmultiplied());
    }
    let img = image::RgbaImage::from_raw(w as u32, h as u32, bytes)
        .ok_or_else(|| format!("the screenshot has the wrong number of pixels for {w}x{h}"))?;
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| format!("{}: could not encode the PNG: {e}", path.display()))?;
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    crate::fileio::write_atomic(path, &png, crate::fileio::WriteOptions::default())
        .map_err(|e| e.to_string())
}
