//! The debugger application: its state (model, view, preferences), the frame (keys, stepping,
//! panels, then the commands the panels returned), persistence and the self-closing screenshot.

use eframe::egui;

use super::camera::{Plane, TreeCamera, WorldCamera, WorldRect};
use super::commands::Command;
use super::mesh::MeshPool;
use super::prefs::{Layers, Prefs, STORAGE_KEY, ThemeChoice, ViewMode};
use super::snapshot::Snapshot;
use super::stats::History;
use super::tree_view::TreeLayout;
use crate::broadphase::{BroadphaseKind, TreeView};
use crate::scene::{Scene, SceneError, Simulation, ViewSettings};
use crate::tree::{Aabb, NodeId};
use egui::{Key, KeyboardShortcut, Modifiers, Pos2, Rect};
use glam::{Vec2, Vec3};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Something the pointer can rest on or the user can select, in either view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// A sphere (and its leaf).
    Sphere(u32),
    /// A branch node of the tree (valid until the tree next changes).
    Node(NodeId),
}

/// A sphere being dragged with the mouse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphereDrag {
    /// The sphere.
    pub id: u32,
    /// Its centre when the drag began, world.
    pub start_center_world: Vec3,
    /// The plane point under the pointer when the button went down.
    pub press_in_world: Vec2,
    /// Moves applied so far.
    pub moves: u32,
    /// How many of them reinserted the sphere's leaf.
    pub reinserts: u32,
    /// How many of them recomputed the pairs.
    pub recomputations: u32,
    /// True while the button is held.
    pub active: bool,
}

/// How the app starts.
#[derive(Clone, Debug, Default)]
pub struct AppOptions {
    /// Start playing at once (the window does; tests and screenshots do not).
    pub playing: bool,
    /// Render once, save a PNG and close (the `screenshot` command).
    pub screenshot: Option<ScreenshotPlan>,
    /// Ignore and do not write eframe storage (tests, screenshots).
    pub ephemeral: bool,
}

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
}

/// The simulation and the document: changed only by [`DebuggerApp::apply`].
pub struct Model {
    /// The scene as last opened or saved, plus settings changed since (what Reset returns to).
    pub doc: Scene,
    /// Its file, if any.
    pub path: Option<PathBuf>,
    /// Unsaved changes.
    pub dirty: bool,
    /// The running simulation.
    pub sim: Simulation,
    /// The broad phase in use.
    pub kind: BroadphaseKind,
    /// Bumped on every change of the simulation, so views know when to refresh.
    pub rev: u64,
    /// Playing or paused.
    pub playing: bool,
    /// Fractional steps owed to real time.
    pub step_debt: f32,
    /// The status line.
    pub status: String,
    /// Recent steps, for the charts.
    pub history: History,
    /// The result of the last validation, when "validate every step" is on.
    pub validation: Option<Result<(), String>>,
    /// A load or save error to show in a window.
    pub error: Option<String>,
    /// Why the simulation stopped and paused (the pair limit, or a body the broad phase
    /// refused); shown until it runs again.
    pub stopped: Option<String>,
    /// The most candidate pairs a step may find (kept across scenes).
    pub pair_limit: usize,
}

/// What the views show and how (not saved in scene files except camera and plane).
pub struct ViewState {
    /// Projection plane of 3D scenes.
    pub plane: Plane,
    /// The views' mesh buffers, kept from frame to frame.
    pub meshes: MeshPool,
    /// The world camera.
    pub camera: WorldCamera,
    /// Fit the world at the next frame.
    pub fit_pending: bool,
    /// The tree camera.
    pub tree_camera: TreeCamera,
    /// Fit the tree at the next frame.
    pub tree_fit_pending: bool,
    /// The selection.
    pub selection: Option<Pick>,
    /// What the pointer rests on (from the last frame).
    pub hover: Option<Pick>,
    /// The sphere being dragged.
    pub drag: Option<SphereDrag>,
    /// Where the world view was drawn last frame.
    pub world_rect: Option<Rect>,
    /// Where the tree view was drawn last frame.
    pub tree_rect: Option<Rect>,
    /// The tree diagram's layout (cached per change).
    pub tree_layout: TreeLayout,
    /// What the layout was computed for: (model revision, collapse depth).
    pub tree_layout_key: Option<(u64, u32)>,
    /// What the pointer rests on this frame (becomes `hover` at the end of the frame).
    pub hover_next: Option<Pick>,
    /// A primary drag on empty space is panning the world.
    pub panning: bool,
    /// The plane point where the context menu was opened.
    pub context_point: Option<Vec2>,
    /// Milliseconds spent building the world and tree meshes so far this frame.
    pub draw_ms: f32,
    /// The same for the whole last frame (what the statistics show).
    pub last_draw_ms: f32,
    /// False in screenshot runs: no hover from a stray pointer.
    pub interactive: bool,
}

/// Windows and dialogs.
#[derive(Default)]
pub struct Dialogs {
    /// The help window (F1).
    pub help: bool,
    /// A command waiting for "discard unsaved changes?".
    pub confirm: Option<Command>,
    /// A read-only file a save was refused for, waiting for "replace it?".
    pub replace_read_only: Option<PathBuf>,
    /// The in-app file dialog and what it is for.
    pub file: Option<super::files::FileDialogState>,
    /// The "about" window.
    pub about: bool,
}

/// Where a screenshot run leaves its outcome (`Ok` once the PNG is written).
pub(super) type ResultSlot = Arc<Mutex<Option<Result<(), String>>>>;

struct ScreenshotRun {
    plan: ScreenshotPlan,
    frames: u32,
    requested: bool,
    image: Arc<Mutex<Option<Arc<egui::ColorImage>>>>,
    result: ResultSlot,
}

/// The debugger window's app. Build it with [`DebuggerApp::new`]; drive it with eframe or
/// egui_kittest.
pub struct DebuggerApp {
    pub(super) ctx: egui::Context,
    pub(super) prefs: Prefs,
    pub(super) model: Model,
    pub(super) view: ViewState,
    pub(super) snapshot: Snapshot,
    snapshot_key: Option<(u64, Plane)>,
    pub(super) commands: Vec<Command>,
    /// Commands the user confirmed (discarding unsaved changes).
    pub(super) confirmed: Vec<Command>,
    pub(super) dialogs: Dialogs,
    screenshot: Option<ScreenshotRun>,
    ephemeral: bool,
    applied_theme: Option<ThemeChoice>,
    title: String,
    allow_close: bool,
    last_frame: Option<Instant>,
}

impl DebuggerApp {
    /// The app on `scene` (from `path`, if any), with preferences from `storage` unless
    /// `options.ephemeral`. Fails only when the simulation refuses the scene.
    pub fn new(
        ctx: &egui::Context,
        storage: Option<&dyn eframe::Storage>,
        scene: Scene,
        path: Option<PathBuf>,
        options: AppOptions,
    ) -> Result<DebuggerApp, SceneError> {
        let prefs = if options.ephemeral || options.screenshot.is_some() {
            Prefs::default()
        } else {
            storage
                .and_then(|s| eframe::get_value::<Prefs>(s, STORAGE_KEY))
                .unwrap_or_default()
        };
        let kind = BroadphaseKind::Tree;
        let pair_limit = crate::broadphase::DEFAULT_PAIR_LIMIT;
        let sim = Simulation::paused_at_zero(&scene, kind, pair_limit)?;
        let mut app = DebuggerApp {
            ctx: ctx.clone(),
            prefs,
            model: Model {
                doc: scene,
                path,
                dirty: false,
                sim,
                kind,
                rev: 0,
                playing: options.playing,
                step_debt: 0.0,
                status: String::new(),
                history: History::default(),
                validation: None,
                error: None,
                stopped: None,
                pair_limit,
            },
            view: ViewState {
                plane: Plane::XY,
                meshes: MeshPool::default(),
                camera: WorldCamera::default(),
                fit_pending: true,
                tree_camera: TreeCamera::default(),
                tree_fit_pending: true,
                selection: None,
                hover: None,
                drag: None,
                world_rect: None,
                tree_rect: None,
                tree_layout: TreeLayout::default(),
                tree_layout_key: None,
                hover_next: None,
                panning: false,
                context_point: None,
                draw_ms: 0.0,
                last_draw_ms: 0.0,
                interactive: options.screenshot.is_none(),
            },
            snapshot: Snapshot::default(),
            snapshot_key: None,
            commands: Vec::new(),
            confirmed: Vec::new(),
            dialogs: Dialogs::default(),
            screenshot: None,
            ephemeral: options.ephemeral || options.screenshot.is_some(),
            applied_theme: None,
            title: String::new(),
            allow_close: false,
            last_frame: None,
        };
        app.apply_scene_view();
        app.model.status = app.opened_message();
        app.record_step();
        app.sync_stopped();
        if let Some(plan) = options.screenshot {
            app.prepare_screenshot(plan)?;
        }
        Ok(app)
    }

    fn prepare_screenshot(&mut self, plan: ScreenshotPlan) -> Result<(), SceneError> {
        for _ in 0..plan.steps {
            self.step_once();
            if self.model.sim.last_error().is_some() {
                break;
            }
        }
        if let Some(id) = plan.select {
            if !self
                .model
                .sim
                .bodies()
                .iter()
                .any(|b| b.sphere.id == id && b.alive)
            {
                return Err(SceneError::Invalid {
                    file: self.document_name(),
                    message: format!(
                        "--select {id}: no live sphere has id {id} after {} steps",
                        plan.steps
                    ),
                });
            }
            self.view.selection = Some(Pick::Sphere(id));
        }
        if let Some(layers) = plan.layers {
            self.prefs.layers = layers;
        }
        if let Some(view) = plan.view {
            self.prefs.view_mode = view;
        }
        if let Some(theme) = plan.theme {
            self.prefs.theme = theme;
        }
        self.model.playing = false;
        self.screenshot = Some(ScreenshotRun {
            plan,
            frames: 0,
            requested: false,
            image: Arc::default(),
            result: Arc::default(),
        });
        Ok(())
    }

    /// The slot the screenshot run writes its outcome to (for `run_screenshot`).
    pub(super) fn screenshot_result(&self) -> Option<ResultSlot> {
        self.screenshot.as_ref().map(|s| Arc::clone(&s.result))
    }

    // ----------------------------------------------------------------------------------------
    // Read access, for tests and the CLI.

    /// The running simulation.
    #[must_use]
    pub fn sim(&self) -> &Simulation {
        &self.model.sim
    }

    /// The document (the scene as last opened or saved, plus settings changed since).
    #[must_use]
    pub fn document(&self) -> &Scene {
        &self.model.doc
    }

    /// The open file, if any.
    #[must_use]
    pub fn path(&self) -> Option<&Path> {
        self.model.path.as_deref()
    }

    /// True when there are unsaved changes.
    #[must_use]
    pub fn is_dirty(&self) -> bool {
        self.model.dirty
    }

    /// True while playing.
    #[must_use]
    pub fn is_playing(&self) -> bool {
        self.model.playing
    }

    /// The status line.
    #[must_use]
    pub fn status(&self) -> &str {
        &self.model.status
    }

    /// Why the simulation stopped and paused (the pair limit, or a body the broad phase
    /// refused), while it is stopped.
    #[must_use]
    pub fn stopped(&self) -> Option<&str> {
        self.model.stopped.as_deref()
    }

    /// The most candidate pairs a step may find.
    #[must_use]
    pub fn pair_limit(&self) -> usize {
        self.model.pair_limit
    }

    /// The error shown in the error window, if any.
    #[must_use]
    pub fn error(&self) -> Option<&str> {
        self.model.error.as_deref()
    }

    /// The preferences.
    #[must_use]
    pub fn prefs(&self) -> &Prefs {
        &self.prefs
    }

    /// The preferences, to change (layers, theme, panels).
    pub fn prefs_mut(&mut self) -> &mut Prefs {
        &mut self.prefs
    }

    /// The selection.
    #[must_use]
    pub fn selection(&self) -> Option<Pick> {
        self.view.selection
    }

    /// What the pointer rests on, in either view.
    #[must_use]
    pub fn hover(&self) -> Option<Pick> {
        self.view.hover
    }

    /// The sphere drag in progress, or the last one.
    #[must_use]
    pub fn drag(&self) -> Option<SphereDrag> {
        self.view.drag
    }

    /// The window title the app asked for.
    #[must_use]
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The world camera.
    #[must_use]
    pub fn camera(&self) -> WorldCamera {
        self.view.camera
    }

    /// The fat box of a sphere, from the broad phase.
    #[must_use]
    pub fn fat_box(&self, id: u32) -> Option<Aabb<Vec3>> {
        self.model.sim.broadphase().fat_aabb(id)
    }

    /// Queues a command; it is applied at the end of the next frame, like a click would be.
    pub fn push_command(&mut self, command: Command) {
        self.commands.push(command);
    }

    /// Where a sphere's centre was drawn in the last frame's world view.
    #[must_use]
    pub fn sphere_screen_pos(&self, id: u32) -> Option<Pos2> {
        let viewport = self.view.world_rect?;
        let sphere = self.snapshot.sphere(id)?;
        Some(self.view.camera.transform(viewport).pos(sphere.center))
    }

    /// The screen point under which a world plane point was drawn last frame.
    #[must_use]
    pub fn screen_pos_of_world(&self, pos_in_world: Vec2) -> Option<Pos2> {
        let viewport = self.view.world_rect?;
        Some(self.view.camera.transform(viewport).pos(pos_in_world))
    }

    /// Where a tree node was drawn in the last frame's tree view.
    #[must_use]
    pub fn tree_node_screen_pos(&self, node: NodeId) -> Option<Pos2> {
        let viewport = self.view.tree_rect?;
        let index = self.snapshot.node_index(node)?;
        let pos = self.view.tree_layout.position_of(index)?;
        Some(self.view.tree_camera.screen_from_layout(viewport, pos))
    }

    /// The box the world view highlights for the hover (a node's box, or a sphere's fat box).
    #[must_use]
    pub fn world_highlight(&self) -> Option<WorldRect> {
        match self.view.hover? {
            Pick::Sphere(id) => {
                let s = self.snapshot.sphere(id)?;
                Some(s.fat.unwrap_or(s.tight))
            }
            Pick::Node(node) => {
                let i = self.snapshot.node_index(node)?;
                Some(self.snapshot.nodes[i].rect)
            }
        }
    }

    /// The snapshot the views drew last frame.
    #[must_use]
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The name shown in the title: the file name, or the scene's name.
    #[must_use]
    pub fn document_name(&self) -> String {
        match &self.model.path {
            Some(p) => p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            None => format!("{} (not saved)", self.model.doc.name),
        }
    }

    // ----------------------------------------------------------------------------------------
    // Model helpers used by `apply`.

    /// The view settings to save with the scene.
    pub(super) fn view_settings(&self) -> ViewSettings {
        ViewSettings {
            center: Some((self.view.camera.center.x, self.view.camera.center.y)),
            zoom: Some(self.view.camera.zoom),
            layers: Some(self.prefs.layers.names()),
            plane: Some(self.view.plane.name().to_owned()),
        }
    }

    /// Takes camera, layers and plane from the open scene's saved view.
    pub(super) fn apply_scene_view(&mut self) {
        self.view.plane = Plane::XY;
        self.view.fit_pending = true;
        self.view.tree_fit_pending = true;
        let Some(view) = self.model.doc.view.clone() else {
            return;
        };
        if self.model.doc.dimensions == 3
            && let Some(plane) = view.plane.as_deref().and_then(Plane::from_name)
        {
            self.view.plane = plane;
        }
        if let Some(names) = &view.layers
            && let Ok(layers) = Layers::from_names(names)
        {
            self.prefs.layers = layers;
        }
        if let (Some((x, y)), Some(zoom)) = (view.center, view.zoom)
            && x.is_finite()
            && y.is_finite()
            && zoom.is_finite()
            && zoom > 0.0
        {
            self.view.camera = WorldCamera {
                center: Vec2::new(x, y),
                zoom,
            };
            self.view.fit_pending = false;
        }
    }

    /// The status line after opening a scene: its name and size, and its warnings (see
    /// [`Scene::warnings`]).
    pub(super) fn opened_message(&self) -> String {
        let mut status = format!(
            "Opened {} ({} spheres).",
            self.document_name(),
            self.model.sim.bodies().iter().filter(|b| b.alive).count()
        );
        for warning in self.model.doc.warnings(self.model.pair_limit) {
            status.push_str(" Warning: ");
            status.push_str(&warning);
            status.push('.');
        }
        status
    }

    /// One simulation step, with its history sample and validation.
    pub(super) fn step_once(&mut self) {
        let outcome = self.model.sim.step().map(|_| ());
        self.model.rev += 1;
        self.record_step();
        if let Err(e) = outcome {
            // Only the broad phase stops a step (`SceneError::Step`); `sync_stopped` pauses
            // and shows why from the simulation's own record of it.
            debug_assert!(matches!(e, SceneError::Step { .. }), "{e}");
            self.sync_stopped();
        }
    }

    /// Records the current report in the history and validates when asked to.
    pub(super) fn record_step(&mut self) {
        let draw_ms = self.view.last_draw_ms;
        self.model.history.push(self.model.sim.report(), draw_ms);
        if self.prefs.validate_every_step {
            self.model.validation = Some(self.validate_tree());
        }
    }

    /// Checks the tree's invariants (Ok for the other broad phases).
    pub(super) fn validate_tree(&self) -> Result<(), String> {
        match self.model.sim.broadphase().tree_view() {
            Some(TreeView::D2(tree)) => tree.validate().map_err(|e| e.to_string()),
            Some(TreeView::D3(tree)) => tree.validate().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    fn refresh_snapshot(&mut self) {
        let key = (self.model.rev, self.view.plane);
        if self.snapshot_key == Some(key) {
            return;
        }
        self.snapshot.refresh(&self.model.sim, self.view.plane);
        self.snapshot
            .set_walls(&self.model.doc.world, self.view.plane);
        self.snapshot_key = Some(key);
        // Branch selections and hovers name nodes, which a change of the tree may reuse.
        if let Some(Pick::Node(n)) = self.view.selection
            && self.snapshot.node_index(n).is_none()
        {
            self.view.selection = None;
        }
        if let Some(Pick::Sphere(id)) = self.view.selection
            && self.snapshot.sphere(id).is_none()
        {
            self.view.selection = None;
        }
    }

    // ----------------------------------------------------------------------------------------
    // The frame.

    fn shortcuts(&mut self, ctx: &egui::Context) {
        let save_as = KeyboardShortcut::new(Modifiers::COMMAND | Modifiers::SHIFT, Key::S);
        let save = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);
        let open = KeyboardShortcut::new(Modifiers::COMMAND, Key::O);
        let mut cmds = Vec::new();
        ctx.input_mut(|i| {
            if i.consume_shortcut(&save_as) {
                cmds.push(Command::SaveAsDialog);
            }
            if i.consume_shortcut(&save) {
                cmds.push(Command::Save);
            }
            if i.consume_shortcut(&open) {
                cmds.push(Command::OpenDialog);
            }
            if i.consume_key(Modifiers::NONE, Key::F1) {
                cmds.push(Command::ToggleHelp);
            }
        });
        // Single keys only when no text field wants them and no dialog is up.
        if ctx.egui_wants_keyboard_input()
            || self.dialogs.file.is_some()
            || self.dialogs.confirm.is_some()
            || self.dialogs.replace_read_only.is_some()
        {
            self.commands.extend(cmds);
            return;
        }
        ctx.input_mut(|i| {
            if i.consume_key(Modifiers::NONE, Key::Space) {
                cmds.push(Command::TogglePlay);
            }
            if i.consume_key(Modifiers::NONE, Key::ArrowRight)
                || i.consume_key(Modifiers::NONE, Key::N)
            {
                cmds.push(Command::Step);
            }
            if i.consume_key(Modifiers::NONE, Key::R) {
                cmds.push(Command::Reset);
            }
            if i.consume_key(Modifiers::NONE, Key::F) {
                cmds.push(Command::Fit);
            }
            if i.consume_key(Modifiers::NONE, Key::Escape) {
                cmds.push(Command::Select(None));
            }
        });
        let hover = self.view.hover;
        let selection = self.view.selection;
        ctx.input_mut(|i| {
            let delete = i.consume_key(Modifiers::NONE, Key::Delete)
                || i.consume_key(Modifiers::NONE, Key::Backspace);
            if delete && let Some(Pick::Sphere(id)) = selection.or(hover) {
                cmds.push(Command::DeleteSphere(id));
            }
        });
        if let Some(pos) = self.pointer_in_world(ctx)
            && ctx.input_mut(|i| i.consume_key(Modifiers::NONE, Key::A))
        {
            let base = self.view_center_base();
            cmds.push(Command::AddSphere {
                center: self.view.plane.unproject(pos, base),
            });
        }
        self.commands.extend(cmds);
    }

    /// The world point under the pointer when it is over the world view.
    fn pointer_in_world(&self, ctx: &egui::Context) -> Option<Vec2> {
        let viewport = self.view.world_rect?;
        let pos = ctx.input(|i| i.pointer.hover_pos())?;
        viewport
            .contains(pos)
            .then(|| self.view.camera.transform(viewport).world_from_screen(pos))
    }

    /// The world point new spheres get for the coordinate the view plane hides.
    pub(super) fn view_center_base(&self) -> Vec3 {
        let w = &self.model.doc.world;
        (w.min + w.max) * 0.5
    }

    fn advance_time(&mut self, ctx: &egui::Context) {
        let now = Instant::now();
        let dt_secs = ctx.input(|i| i.stable_dt).clamp(0.0, 0.1);
        self.last_frame = Some(now);
        if !self.model.playing {
            self.model.step_debt = 0.0;
            return;
        }
        // `speed` steps per 1/60 s of real time, at most 16 steps per frame.
        self.model.step_debt += dt_secs * 60.0 * self.prefs.speed.max(0.0);
        let steps = (self.model.step_debt.floor() as u32).min(16);
        self.model.step_debt = (self.model.step_debt - steps as f32).min(1.0);
        for _ in 0..steps {
            self.step_once();
            if !self.model.playing {
                // A step stopped (the pair limit): the rest of this frame's steps wait.
                break;
            }
        }
        ctx.request_repaint();
    }

    fn handle_dropped_files(&mut self, ctx: &egui::Context) {
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        if let Some(path) = dropped.into_iter().next() {
            self.commands.push(Command::Open(path));
        }
    }

    fn handle_close_request(&mut self, ctx: &egui::Context) {
        let close = ctx.input(|i| i.viewport().close_requested());
        if close && self.model.dirty && !self.allow_close && self.screenshot.is_none() {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.dialogs.confirm = Some(Command::Quit);
        }
    }

    fn update_title(&mut self, ctx: &egui::Context) {
        let title = format!(
            "{}{} — aabb-debugger",
            self.document_name(),
            if self.model.dirty { " •" } else { "" }
        );
        if title != self.title {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }

    fn apply_theme(&mut self, ctx: &egui::Context) {
        if self.applied_theme != Some(self.prefs.theme) {
            ctx.set_theme(match self.prefs.theme {
                ThemeChoice::Dark => egui::Theme::Dark,
                ThemeChoice::Light => egui::Theme::Light,
            });
            self.applied_theme = Some(self.prefs.theme);
        }
    }

    /// Lets the next close request through (the user agreed to lose unsaved changes).
    pub(super) fn allow_close_now(&mut self) {
        self.allow_close = true;
    }

    fn screenshot_progress(&mut self, ctx: &egui::Context) {
        let Some(run) = &mut self.screenshot else {
            return;
        };
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

    /// Draws one frame into `ui` (the whole window) and applies what it asked for.
    pub fn frame_ui(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.view.last_draw_ms = self.view.draw_ms;
        self.view.draw_ms = 0.0;
        self.apply_theme(&ctx);
        self.handle_close_request(&ctx);
        self.handle_dropped_files(&ctx);
        self.shortcuts(&ctx);
        // Shortcut commands that change the model go first, so this frame shows their result.
        let early = std::mem::take(&mut self.commands);
        for c in early {
            self.apply(c, false);
        }
        self.advance_time(&ctx);
        if self.model.doc.dimensions != 3 {
            self.view.plane = Plane::XY;
        }
        self.refresh_snapshot();

        self.view.hover_next = None;
        self.panels_ui(ui);
        self.view.hover = self.view.hover_next;

        let commands = std::mem::take(&mut self.commands);
        for c in commands {
            self.apply(c, false);
        }
        let confirmed = std::mem::take(&mut self.confirmed);
        for c in confirmed {
            self.apply(c, true);
        }
        self.refresh_snapshot();
        self.update_title(&ctx);
        self.screenshot_progress(&ctx);
    }
}

impl eframe::App for DebuggerApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frame_ui(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if !self.ephemeral {
            eframe::set_value(storage, STORAGE_KEY, &self.prefs);
        }
    }

    fn persist_egui_memory(&self) -> bool {
        !self.ephemeral
    }

    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        visuals.panel_fill.to_normalized_gamma_f32()
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
