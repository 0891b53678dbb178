//! The shell: [`DebuggerApp`] owns the state and the views. Each frame it turns the keyboard
//! and dropped files into commands and applies them, runs the clock, lays the views out (each
//! reads `&State` and pushes commands), then applies what they returned through the one
//! `apply` path. It also saves the preferences and keeps the window title and theme.

use eframe::egui;

use super::camera::{WorldCamera, WorldRect};
use super::commands::Command;
use super::layout;
use super::pick::{Pick, SphereDrag};
use super::prefs::{PrefChange, Prefs, STORAGE_KEY, ThemeChoice, ViewMode};
use super::snapshot::Snapshot;
use super::state::State;
use super::views::advisor::{AdvisorGrid, AdvisorView};
use super::views::controls::Controls;
use super::views::menu::MenuBar;
use super::views::stats::StatsPanel;
use super::views::status::StatusBar;
use super::views::timeline::TimelineView;
use super::views::tree::TreeView;
use super::views::windows::Windows;
use super::views::world::WorldView;
use super::views::world3d::World3dView;
use super::views::{View, free_text_has_focus};
use crate::scene::{Scene, SceneError};
use crate::tree::{Aabb, NodeId};
use egui::{Key, KeyboardShortcut, Modifiers, Pos2};
use glam::{Vec2, Vec3};
use std::path::{Path, PathBuf};

mod inspect;
pub use inspect::Inspect;

/// How the app starts.
#[derive(Clone, Debug, Default)]
pub struct AppOptions {
    /// Start playing at once (the window does; tests and screenshots do not).
    pub playing: bool,
    /// Ignore and do not write eframe storage (tests, screenshots).
    pub ephemeral: bool,
    /// Take no pointer input: no hover, pan or clicks (screenshots, where a stray pointer
    /// must not change the picture).
    pub still: bool,
    /// Use the desktop's file dialog where there is one (the window; tests and screenshots
    /// use the in-app dialog).
    pub native_dialogs: bool,
    /// Run a step slower than this many milliseconds (on average) on the stepping thread, so
    /// the window never waits on it (the window: [`crate::state::BACKGROUND_STEP_MS`]); `None`: every step
    /// runs in the frame (tests and screenshots, so their frames are alike run after run).
    pub background_steps: Option<f64>,
}

/// The views, each its own type (see `views/`).
#[derive(Default)]
struct Views {
    menu: MenuBar,
    status: StatusBar,
    controls: Controls,
    stats: StatsPanel,
    world: WorldView,
    world3d: World3dView,
    tree: TreeView,
    windows: Windows,
    advisor: AdvisorView,
    timeline: TimelineView,
    opening: super::views::opening::OpeningView,
    live: super::views::live::LiveView,
    strip: super::views::strip::TuningStrip,
    /// Side B's world and tree views, while a comparison runs (see `compare.rs`).
    b: SideViews,
}

/// One side's world (plane and 3D) and tree views.
#[derive(Default)]
struct SideViews {
    world: WorldView,
    world3d: World3dView,
    tree: TreeView,
}

impl SideViews {
    fn hide(&mut self) {
        self.world.hide();
        self.world3d.hide();
        self.tree.hide();
    }
}

/// The debugger window's app. Build it with [`DebuggerApp::new`]; drive it with eframe or
/// egui_kittest.
pub struct DebuggerApp {
    ctx: egui::Context,
    /// Everything the views read; changed by [`DebuggerApp::apply`] and the clock.
    pub(super) state: State,
    views: Views,
    /// Commands queued by [`DebuggerApp::push_command`], applied at the next frame.
    pending: Vec<Command>,
    ephemeral: bool,
    applied_theme: Option<ThemeChoice>,
    title: String,
    /// The longest recent time between egui's frames, seconds, fading after a slow frame
    /// (see `keep_clicks_in_slow_frames`).
    slow_frame_secs: f64,
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
        let prefs = if options.ephemeral {
            Prefs::default()
        } else {
            storage
                .and_then(|s| eframe::get_value::<Prefs>(s, STORAGE_KEY))
                .unwrap_or_default()
        };
        let mut state = State::new(scene, path, prefs, options.playing, !options.still)?;
        state.dialogs.native = options.native_dialogs;
        state.background_steps = options.background_steps;
        // A picture is the same every run: no worker racing it.
        state.model.health.set_on_ui_thread(options.still);
        Ok(DebuggerApp {
            ctx: ctx.clone(),
            state,
            views: Views::default(),
            pending: Vec::new(),
            ephemeral: options.ephemeral,
            applied_theme: None,
            title: String::new(),
            slow_frame_secs: 0.0,
        })
    }

    /// Applies one command. `confirmed` is true once the user agreed to lose unsaved changes.
    pub fn apply(&mut self, command: Command, confirmed: bool) {
        self.state.apply(command, confirmed);
        if std::mem::take(&mut self.state.close_requested) {
            self.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    /// A read-only view of the window's state: what the views drew, the model, the dialogs
    /// (for tests and the self-closing screenshot runs; see [`Inspect`]).
    #[must_use]
    pub fn inspect(&self) -> Inspect<'_> {
        Inspect { app: self }
    }

    /// The preferences, to change (layers, theme, panels).
    pub fn prefs_mut(&mut self) -> &mut Prefs {
        &mut self.state.prefs
    }

    /// (as a keyboard shortcut is).
    pub fn push_command(&mut self, command: Command) {
        self.pending.push(command);
    }

    /// (false, the window's default): see [`Health::set_on_ui_thread`](super::health_monitor::Health::set_on_ui_thread).
    pub fn set_health_on_ui_thread(&mut self, on: bool) {
        self.state.model.health.set_on_ui_thread(on);
    }

    /// files its result (tests; the window never waits).
    pub fn wait_for_health(&mut self) {
        self.state.model.health.wait();
    }

    /// Opens the Advisor and starts a sweep at the next frame (as the Start button does), on
    /// its default grid with `grid`'s fields put in; the `screenshot` command's `--advisor`.
    pub fn start_advisor_sweep(&mut self, grid: AdvisorGrid) {
        self.state.dialogs.advisor = true;
        self.views.advisor.request_start(grid);
    }

    // ----------------------------------------------------------------------------------------
    // The frame.

    /// The keyboard: shortcuts become commands, applied before the views draw.
    fn shortcuts(&self, ctx: &egui::Context, out: &mut Vec<Command>) {
        let save_as = KeyboardShortcut::new(Modifiers::COMMAND | Modifiers::SHIFT, Key::S);
        let save = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);
        let open = KeyboardShortcut::new(Modifiers::COMMAND, Key::O);
        // A text field with the focus keeps Ctrl+Z for its own text.
        let typing = ctx.memory(|m| m.focused().is_some());
        let mut cmds = Vec::new();
        // Every press in the frame counts (a slow frame gathers several): three Ctrl+Z are
        // three undos, two F1 or two Spaces show and hide again.
        ctx.input_mut(|i| {
            if !typing {
                // Redo first: Ctrl+Z matches Ctrl+Shift+Z too.
                let redos = i.count_and_consume_key(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z)
                    + i.count_and_consume_key(Modifiers::COMMAND, Key::Y);
                let undos = i.count_and_consume_key(Modifiers::COMMAND, Key::Z);
                cmds.extend(std::iter::repeat_n(Command::Undo, undos));
                cmds.extend(std::iter::repeat_n(Command::Redo, redos));
            }
            if i.consume_shortcut(&save_as) {
                cmds.push(Command::SaveAsDialog);
            }
            if i.consume_shortcut(&save) {
                cmds.push(Command::Save);
            }
            if i.consume_shortcut(&open) {
                cmds.push(Command::OpenDialog);
            }
            let helps = i.count_and_consume_key(Modifiers::NONE, Key::F1);
            cmds.extend(std::iter::repeat_n(Command::ToggleHelp, helps));
        });
        // Single keys only when no text field wants them and no dialog is up; Space also in
        // a number field (or with a slider or button focused): only free text takes spaces.
        let dialogs = &self.state.dialogs;
        if dialogs.file.is_some()
            || dialogs.confirm.is_some()
            || dialogs.replace_read_only.is_some()
        {
            out.extend(cmds);
            return;
        }
        if !free_text_has_focus(ctx) {
            let spaces = ctx.input_mut(|i| {
                let spaces = i.count_and_consume_key(Modifiers::NONE, Key::Space);
                if spaces > 0 {
                    // The space the key would type goes too: a number has none.
                    i.events
                        .retain(|e| !matches!(e, egui::Event::Text(t) if t == " "));
                }
                spaces
            });
            cmds.extend(std::iter::repeat_n(Command::TogglePlay, spaces));
        }
        if ctx.egui_wants_keyboard_input() {
            out.extend(cmds);
            return;
        }
        ctx.input_mut(|i| {
            // Every press in the frame counts, in the order pressed (a slow frame gathers
            // several): ten presses are ten steps.
            i.events.retain(|event| {
                let egui::Event::Key {
                    key,
                    pressed: true,
                    modifiers,
                    ..
                } = event
                else {
                    return true;
                };
                if !modifiers.matches_logically(Modifiers::NONE) {
                    return true;
                }
                cmds.push(match key {
                    Key::ArrowRight | Key::N => Command::Step,
                    Key::ArrowLeft => Command::StepBack,
                    Key::Home => Command::SeekTo(0),
                    Key::End => Command::SeekTo(u64::MAX),
                    Key::R => Command::Reset,
                    Key::F => Command::Fit,
                    Key::Escape => Command::Select(None),
                    _ => return true,
                });
                false
            });
        });
        let selection = self.state.view.selection;
        ctx.input_mut(|i| {
            let delete = i.consume_key(Modifiers::NONE, Key::Delete)
                || i.consume_key(Modifiers::NONE, Key::Backspace);
            // The selected sphere only: the one under the pointer is easily not the one meant,
            // and a removal has no undo.
            if delete && let Some(Pick::Sphere(id)) = selection {
                cmds.push(Command::DeleteSphere(id));
            }
        });
        if let Some(pos) = self
            .views
            .world
            .pointer_in_world(ctx, &self.state.view.camera)
        {
            // A sphere a press.
            let adds = ctx.input_mut(|i| i.count_and_consume_key(Modifiers::NONE, Key::A));
            let base = self.state.pane().view_center_base();
            let center = self.state.view.plane.unproject(pos, base);
            cmds.extend(std::iter::repeat_n(Command::AddSphere { center }, adds));
        }
        out.extend(cmds);
    }

    /// A file dropped on the window opens.
    fn handle_dropped_files(ctx: &egui::Context, out: &mut Vec<Command>) {
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        if let Some(path) = dropped.into_iter().next() {
            out.push(Command::Open(path));
        }
    }

    /// A close request with unsaved changes waits for "discard them?".
    fn handle_close_request(&mut self, ctx: &egui::Context) {
        let close = ctx.input(|i| i.viewport().close_requested());
        if close
            && self.state.session.dirty()
            && !self.state.allow_close
            && self.state.view.interactive
        {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            // Asks, since there are unsaved changes.
            self.apply(Command::Quit, false);
        }
    }

    /// The window title: the document, with a dot while it has unsaved changes.
    fn update_title(&mut self, ctx: &egui::Context) {
        let title = format!(
            "{}{} — aabb-debugger",
            self.state.document_name(),
            if self.state.session.dirty() {
                " •"
            } else {
                ""
            }
        );
        if title != self.title {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }

    /// Sets egui's theme when the preference changed.
    fn apply_theme(&mut self, ctx: &egui::Context) {
        if self.applied_theme != Some(self.state.prefs.theme) {
            ctx.set_theme(match self.state.prefs.theme {
                ThemeChoice::Dark => egui::Theme::Dark,
                ThemeChoice::Light => egui::Theme::Light,
            });
            self.applied_theme = Some(self.state.prefs.theme);
        }
    }

    /// Every panel and window of one frame: each view draws from the state and pushes its
    /// commands onto `out`. The layout's rules are `layout.rs`'s.
    fn views_ui(&mut self, ui: &mut egui::Ui, out: &mut Vec<Command>) {
        let state = &self.state;
        let v = &mut self.views;
        let prefs = &state.prefs;
        let panels = layout::panels(ui.available_width(), prefs.show_controls, prefs.show_stats);
        // A new generation ("Reset layout") gives the panels new ids, so they start again at
        // their default widths rather than at remembered ones.
        let generation = prefs.layout_generation;
        egui::Panel::top("menu_bar").show(ui, |ui| v.menu.ui(ui, state, out));
        egui::Panel::bottom("status_bar").show(ui, |ui| v.status.ui(ui, state, out));
        if super::views::strip::TuningStrip::wanted(&panels) {
            v.strip.set_panels(panels);
            egui::Panel::top("tuning_strip").show(ui, |ui| v.strip.ui(ui, state, out));
        }
        if panels.controls {
            egui::Panel::left(("controls", generation))
                .resizable(true)
                .default_size(layout::CONTROLS_WIDTH)
                .min_size(170.0)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| v.controls.ui(ui, state, out));
                });
        }
        if panels.stats {
            egui::Panel::right(("statistics", generation))
                .resizable(true)
                .default_size(layout::STATS_WIDTH)
                .min_size(190.0)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| v.stats.ui(ui, state, out));
                });
        }
        egui::CentralPanel::no_frame().show(ui, |ui| {
            if prefs.show_timeline {
                egui::Panel::bottom(("timeline", generation))
                    .resizable(true)
                    .default_size(TIMELINE_HEIGHT)
                    .min_size(60.0)
                    .show(ui, |ui| v.timeline.ui(ui, state, out));
            } else {
                v.timeline.hide();
            }
            v.central_ui(ui, state, out);
        });
        v.advisor.ui(ui, state, out);
        v.opening.ui(ui, state, out);
        v.live.ui(ui, state, out);
        v.windows.ui(ui, state, out);
    }
}

/// The timeline's height when it first shows, points.
const TIMELINE_HEIGHT: f32 = 120.0;

impl Views {
    /// The world and tree views in the central area, as the view mode asks; while a
    /// comparison runs, A's on the left and B's on the right under the difference readout.
    fn central_ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        // An engine streaming now: its session as our side steps it, newest step first.
        if let Some(job) = state.dialogs.live.as_ref()
            && state.shows_live()
        {
            let live = job.session();
            if let Some(session) = live.as_ref() {
                self.b.hide();
                let (world, world3d, tree) = (&mut self.world, &mut self.world3d, &mut self.tree);
                side_ui(
                    world,
                    world3d,
                    tree,
                    ui,
                    state.live_pane(session),
                    out,
                    true,
                );
                return;
            }
        }
        let Some(run) = state.compare.as_ref() else {
            self.b.hide();
            let (world, world3d, tree) = (&mut self.world, &mut self.world3d, &mut self.tree);
            side_ui(world, world3d, tree, ui, state.pane(), out, true);
            return;
        };
        let area = ui.available_rect_before_wrap();
        // The readout takes the lines it wraps to (at least COMPARE_HEADER), the views the rest.
        let header = ui
            .scope_builder(egui::UiBuilder::new().max_rect(area), |ui| {
                super::views::compare::header_ui(ui, state, run, out);
            })
            .response
            .rect;
        let top = (header.bottom() + 4.0).max(area.top() + COMPARE_HEADER);
        let body =
            egui::Rect::from_min_max(egui::pos2(area.left(), top.min(area.bottom())), area.max);
        let half = (body.width() - COMPARE_GAP) / 2.0;
        let left = egui::Rect::from_min_size(body.min, egui::vec2(half, body.height()));
        let right =
            egui::Rect::from_min_max(egui::pos2(left.right() + COMPARE_GAP, body.top()), body.max);
        ui.scope_builder(egui::UiBuilder::new().max_rect(left), |ui| {
            let (world, world3d, tree) = (&mut self.world, &mut self.world3d, &mut self.tree);
            side_ui(world, world3d, tree, ui, state.pane(), out, false);
        });
        // B's views draw B's state; of what they ask, the camera (one for both) and the
        // drawing time go through, the rest (a selection, a drag) is A's views' to ask.
        let mut b_out = Vec::new();
        ui.scope_builder(
            egui::UiBuilder::new().max_rect(right).id_salt("compare_b"),
            |ui| {
                let b = &mut self.b;
                side_ui(
                    &mut b.world,
                    &mut b.world3d,
                    &mut b.tree,
                    ui,
                    run.pane(&state.dialogs),
                    &mut b_out,
                    false,
                );
            },
        );
        out.extend(b_out.into_iter().filter(|c| {
            matches!(
                c,
                Command::SetWorldCamera { .. } | Command::AddDrawTime(_) | Command::SeekTo(_)
            )
        }));
    }
}

/// The difference readout's height above the compared views, points.
const COMPARE_HEADER: f32 = 44.0;

/// The gap between the compared views, points.
const COMPARE_GAP: f32 = 4.0;

/// One side's world and tree views in `ui`, as the view mode asks (`splitter`: the
/// world/tree splitter can be dragged here).
fn side_ui(
    world: &mut WorldView,
    world3d: &mut World3dView,
    tree: &mut TreeView,
    ui: &mut egui::Ui,
    state: super::pane::Pane<'_>,
    out: &mut Vec<Command>,
    splitter: bool,
) {
    let world_ui = |world: &mut WorldView,
                    world3d: &mut World3dView,
                    ui: &mut egui::Ui,
                    out: &mut Vec<Command>| {
        if state.shows_world_3d() {
            world.hide();
            world3d.ui(ui, state, out);
        } else {
            world3d.hide();
            world.ui(ui, state, out);
        }
    };
    let prefs = &state.prefs;
    match prefs.view_mode {
        ViewMode::World => {
            tree.hide();
            world_ui(world, world3d, ui, out);
        }
        ViewMode::Tree => {
            world.hide();
            world3d.hide();
            tree.ui(ui, state, out);
        }
        ViewMode::Both => {
            let area = ui.available_rect_before_wrap();
            let split = layout::split(area, prefs.tree_share);
            if splitter {
                splitter_ui(ui, area, &split, out);
            }
            ui.scope_builder(egui::UiBuilder::new().max_rect(split.world), |ui| {
                world_ui(world, world3d, ui, out);
            });
            ui.scope_builder(egui::UiBuilder::new().max_rect(split.tree), |ui| {
                tree.ui(ui, state, out);
            });
        }
    }
}

impl DebuggerApp {
    /// Draws one frame into `ui` (the whole window) and applies what it asked for.
    pub fn frame_ui(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.state.clock.frame_started(
            std::time::Instant::now(),
            self.state.session.sim().step_index(),
            self.state.model.playing,
            ctx.requested_repaint_last_pass(),
        );
        self.keep_clicks_in_slow_frames(&ctx);
        self.state.begin_frame();
        self.apply_theme(&ctx);
        self.handle_close_request(&ctx);
        // Queued commands, dropped files and shortcuts go first, so this frame shows their
        // result.
        let was_playing = self.state.model.playing;
        let mut early = std::mem::take(&mut self.pending);
        Self::handle_dropped_files(&ctx, &mut early);
        self.shortcuts(&ctx, &mut early);
        for c in early {
            self.apply(c, false);
        }
        // Real time since the last frame, up to a quarter second: slower frames still run
        // the steps owed (within the clock's budget), beyond that the run falls behind.
        let dt_secs = if was_playing {
            ctx.input(|i| i.unstable_dt).clamp(0.0, 0.25)
        } else {
            // Play was pressed this frame: the time before was paused, and owes no steps.
            1.0 / 60.0
        };
        if self.state.advance_time(dt_secs) {
            ctx.request_repaint();
        }
        self.state.refresh_snapshot();
        self.state.refresh_live_snapshot();
        self.state.prepare_compare_views();

        // What the pointer rests on is what a view reports this frame, else nothing.
        let mut out = vec![Command::Hover(None)];
        self.views_ui(ui, &mut out);
        // The views' reports of the frame they drew first, then their requests (see
        // `Command::is_report`).
        let (reports, requests): (Vec<Command>, Vec<Command>) =
            out.into_iter().partition(Command::is_report);
        for c in reports.into_iter().chain(requests) {
            self.apply(c, false);
        }
        self.tick_health(&ctx);
        self.state.refresh_snapshot();
        self.update_title(&ctx);
    }

    /// egui counts a press and release as a click when they are at most
    /// `max_click_duration` apart as its frames' clocks tell; in a slow frame a quick click's
    /// press and release fall into frames a whole frame apart. The allowance grows by twice the
    /// recent frame time, so no click is lost to a slow frame (a press held longer on purpose
    /// is still a drag or a long press).
    fn keep_clicks_in_slow_frames(&mut self, ctx: &egui::Context) {
        // egui's clock (the time between its frames), held for a while after a slow frame.
        let dt = f64::from(ctx.input(|i| i.unstable_dt));
        let dt = if dt.is_finite() {
            dt.clamp(0.0, 10.0)
        } else {
            0.0
        };
        self.slow_frame_secs = dt.max(0.9 * self.slow_frame_secs);
        let allowance = CLICK_SECS + 2.0 * self.slow_frame_secs;
        ctx.options_mut(|o| {
            if (o.input_options.max_click_duration - allowance).abs() > 1e-3 {
                o.input_options.max_click_duration = allowance;
            }
        });
    }

    /// The tree's health (see `health_monitor.rs`): files a fresh build that has ended and starts one
    /// when a sample is due; draws again soon while one runs or one was just filed.
    fn tick_health(&mut self, ctx: &egui::Context) {
        let (m, session) = (&mut self.state.model, &self.state.session);
        let watch = super::health_monitor::Watch {
            tree: session.sim().broadphase().tree_view(),
            step: session.sim().step_index(),
            document_id: session.id(),
            rev: session.rev(),
            edits: session.recording().edits().len(),
            playing: m.playing,
            every: self.state.prefs.health_every,
        };
        if m.health.tick(&watch) {
            ctx.request_repaint_after(HEALTH_POLL);
        }
    }
}

/// egui's own longest click, seconds, before the allowance for slow frames.
const CLICK_SECS: f64 = 0.8;

/// How often the window looks for the result of a running fresh build (see `health_monitor.rs`).
const HEALTH_POLL: std::time::Duration = std::time::Duration::from_millis(30);

/// The splitter between the world and the tree: drag it to share the area differently,
/// double-click it for the default share.
fn splitter_ui(ui: &mut egui::Ui, area: egui::Rect, split: &layout::Split, out: &mut Vec<Command>) {
    let response = ui.interact(
        split.splitter,
        egui::Id::unique("world_tree_splitter"),
        egui::Sense::click_and_drag(),
    );
    let active = response.hovered() || response.dragged();
    if active {
        ui.ctx().set_cursor_icon(if split.stacked {
            egui::CursorIcon::ResizeVertical
        } else {
            egui::CursorIcon::ResizeHorizontal
        });
    }
    if response.double_clicked() {
        out.push(Command::SetPref(PrefChange::TreeShare(
            layout::TREE_SHARE_DEFAULT,
        )));
    } else if response.dragged()
        && let Some(pointer) = response.interact_pointer_pos()
    {
        out.push(Command::SetPref(PrefChange::TreeShare(layout::share_at(
            area,
            pointer,
            split.stacked,
        ))));
    }
    let visuals = ui.visuals();
    let stroke = if active {
        visuals.widgets.hovered.fg_stroke
    } else {
        visuals.widgets.noninteractive.bg_stroke
    };
    let r = split.splitter;
    let (a, b) = if split.stacked {
        (r.left_center(), r.right_center())
    } else {
        (r.center_top(), r.center_bottom())
    };
    ui.painter().rect_filled(r, 0.0, visuals.panel_fill);
    ui.painter().line_segment([a, b], stroke);
}

impl eframe::App for DebuggerApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frame_ui(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if !self.ephemeral {
            eframe::set_value(storage, STORAGE_KEY, &self.state.prefs);
        }
    }

    fn persist_egui_memory(&self) -> bool {
        !self.ephemeral
    }

    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        visuals.panel_fill.to_normalized_gamma_f32()
    }
}
