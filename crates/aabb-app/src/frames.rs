//! The `frames` run: opens the real window on a scene, plays it, pans it or leaves it still
//! for a while, and reports how fast the window draws: frames a second and frame times (the
//! whole frame: the app's work, egui's tessellation and the renderer's painting, measured
//! from the start of one frame to the start of the next), and the steps the scene advanced.
//!
//! This is how the window's speed is measured: on the real window and renderer (glow), not on
//! a headless stand-in, since on a software renderer painting is most of a frame.

use crate::commands::Command;
use crate::shell::{AppOptions, DebuggerApp};
use eframe::egui;
use std::path::Path;
use std::time::{Duration, Instant};

/// What the window does while it is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FramesMode {
    /// Plays the scene at speed 1.
    Play,
    /// Paused; the world view is panned by a held secondary button moving in a circle.
    Pan,
    /// Paused and still (the frames are redrawn all the same).
    Still,
}

impl FramesMode {
    /// The mode's name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FramesMode::Play => "play",
            FramesMode::Pan => "pan",
            FramesMode::Still => "still",
        }
    }

    /// The mode of a name, if it is one.
    #[must_use]
    pub fn from_name(s: &str) -> Option<FramesMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "play" => Some(FramesMode::Play),
            "pan" => Some(FramesMode::Pan),
            "still" => Some(FramesMode::Still),
            _ => None,
        }
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct FramesPlan {
    /// Window size in points (one pixel a point).
    pub size: [u32; 2],
    /// How long to measure.
    pub measure: Duration,
    /// How long to let the window settle first (not measured).
    pub warmup: Duration,
    /// What the window does.
    pub mode: FramesMode,
    /// The renderer (`None`: the window's own choice).
    pub renderer: Option<eframe::Renderer>,
}

/// How fast the window drew.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct FramesReport {
    /// The mode measured (`play`, `pan`, `still`).
    pub mode: String,
    /// Window size, pixels.
    pub width: u32,
    /// Window size, pixels.
    pub height: u32,
    /// Proxies the scene holds when the measure starts (spheres or boxes, and static boxes).
    pub proxies: usize,
    /// Frames measured.
    pub frames: usize,
    /// Seconds measured.
    pub seconds: f64,
    /// Frames a second over the measure.
    pub fps: f64,
    /// Median frame time, ms.
    pub median_ms: f64,
    /// 90th percentile frame time, ms.
    pub p90_ms: f64,
    /// Longest frame, ms.
    pub max_ms: f64,
    /// Steps the scene advanced during the measure.
    pub steps: u64,
    /// Steps a second during the measure.
    pub steps_per_sec: f64,
    /// Steps a second of a scene playing in real time at speed 1.
    pub real_time_steps_per_sec: f64,
}

impl FramesReport {
    /// One line for a person.
    #[must_use]
    pub fn line(&self) -> String {
        format!(
            "{} {}x{} {} proxies: {:.1} frames/s over {:.1} s ({} frames; median {:.1} ms, p90 {:.1} ms, max {:.1} ms); {} steps, {:.1} steps/s (real time {:.0})",
            self.mode,
            self.width,
            self.height,
            self.proxies,
            self.fps,
            self.seconds,
            self.frames,
            self.median_ms,
            self.p90_ms,
            self.max_ms,
            self.steps,
            self.steps_per_sec,
            self.real_time_steps_per_sec
        )
    }
}

/// Fills the report's frame statistics from frame intervals (seconds) over `seconds`.
#[must_use]
pub fn summarize(intervals: &[f64], seconds: f64) -> (f64, f64, f64, f64) {
    if intervals.is_empty() || seconds <= 0.0 {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let mut sorted = intervals.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let i = ((sorted.len() - 1) as f64 * q).round() as usize;
        sorted[i.min(sorted.len() - 1)] * 1e3
    };
    (
        intervals.len() as f64 / seconds,
        at(0.5),
        at(0.9),
        sorted[sorted.len() - 1] * 1e3,
    )
}

/// Steps a second of real time at speed 1 (the window's clock runs 60 steps a second).
const REAL_TIME_STEPS_PER_SEC: f64 = 60.0;

/// A measure in progress.
struct FramesApp {
    app: DebuggerApp,
    plan: FramesPlan,
    opened: Instant,
    /// Frame starts since the measure began.
    starts: Vec<Instant>,
    /// The step when the measure began.
    first_step: u64,
    proxies: usize,
    /// The pan's held button is down.
    pressed: bool,
    /// Where the report goes once the measure ends.
    result: std::sync::Arc<std::sync::Mutex<Option<FramesReport>>>,
    done: bool,
}

impl FramesApp {
    fn measuring(&self) -> bool {
        self.opened.elapsed() >= self.plan.warmup
    }
}

impl eframe::App for FramesApp {
    /// The pointer is the measure's own: events from the (virtual) display are dropped; in
    /// the pan mode a held secondary button circles over the world view.
    fn raw_input_hook(&mut self, _ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        raw_input.events.retain(|e| {
            !matches!(
                e,
                egui::Event::PointerMoved(_)
                    | egui::Event::PointerButton { .. }
                    | egui::Event::MouseWheel { .. }
            )
        });
        if self.plan.mode != FramesMode::Pan {
            raw_input.events.push(egui::Event::PointerGone);
            return;
        }
        let Some(rect) = self.app.inspect().world_view_rect() else {
            return;
        };
        let t = self.opened.elapsed().as_secs_f32();
        let radius = 0.2 * rect.width().min(rect.height());
        let at = rect.center() + radius * egui::vec2(t.cos(), t.sin());
        if !self.pressed {
            raw_input.events.push(egui::Event::PointerMoved(at));
            raw_input.events.push(egui::Event::PointerButton {
                pos: at,
                button: egui::PointerButton::Secondary,
                pressed: true,
                modifiers: egui::Modifiers::NONE,
            });
            self.pressed = true;
        } else if self.done {
            raw_input.events.push(egui::Event::PointerButton {
                pos: at,
                button: egui::PointerButton::Secondary,
                pressed: false,
                modifiers: egui::Modifiers::NONE,
            });
        } else {
            raw_input.events.push(egui::Event::PointerMoved(at));
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let now = Instant::now();
        if self.measuring() && !self.done {
            if self.starts.is_empty() {
                let sim = self.app.inspect().sim();
                self.first_step = sim.step_index();
                self.proxies = sim.live_count() + sim.static_boxes().len();
            }
            self.starts.push(now);
            let measured = now.duration_since(self.starts[0]);
            if measured >= self.plan.measure && self.starts.len() >= 2 {
                self.finish();
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
        }
        self.app.ui(ui, frame);
        ui.ctx().request_repaint();
    }

    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        self.app.clear_color(visuals)
    }
}

impl FramesApp {
    fn finish(&mut self) {
        self.done = true;
        let intervals: Vec<f64> = self
            .starts
            .windows(2)
            .map(|w| w[1].duration_since(w[0]).as_secs_f64())
            .collect();
        let seconds = self.starts[self.starts.len() - 1]
            .duration_since(self.starts[0])
            .as_secs_f64();
        let (fps, median_ms, p90_ms, max_ms) = summarize(&intervals, seconds);
        let steps = self
            .app
            .inspect()
            .sim()
            .step_index()
            .saturating_sub(self.first_step);
        let report = FramesReport {
            mode: self.plan.mode.name().to_string(),
            width: self.plan.size[0],
            height: self.plan.size[1],
            proxies: self.proxies,
            frames: intervals.len(),
            seconds,
            fps,
            median_ms,
            p90_ms,
            max_ms,
            steps,
            steps_per_sec: if seconds > 0.0 {
                steps as f64 / seconds
            } else {
                0.0
            },
            real_time_steps_per_sec: REAL_TIME_STEPS_PER_SEC,
        };
        if let Ok(mut slot) = self.result.lock() {
            *slot = Some(report);
        }
    }
}

/// Opens the real window on `scene_path` (the built-in scene when `None`), measures it as
/// `plan` says and returns the report; fails for a bad scene or when the window cannot open.
pub fn run_frames(scene_path: Option<&Path>, plan: FramesPlan) -> anyhow::Result<FramesReport> {
    let (scene, by_open) = crate::screenshot::scene_for_window(scene_path)?;
    let size = plan.size;
    let storage_dir =
        std::env::temp_dir().join(format!("aabb-debugger-frames-{}", std::process::id()));
    let result = std::sync::Arc::default();
    let slot = std::sync::Arc::clone(&result);
    let path = scene_path.map(Path::to_path_buf);
    let renderers = match plan.renderer {
        Some(r) => vec![r],
        None => crate::renderer::renderers_to_try()?,
    };
    let run = crate::renderer::run_native_with(
        "aabb-debugger-frames",
        || {
            crate::renderer::self_closing_options(
                "aabb-debugger frames",
                "aabb-debugger-frames",
                size,
                &storage_dir,
            )
        },
        &renderers,
        || {
            let (scene, plan, slot, path) = (
                scene.clone(),
                plan.clone(),
                std::sync::Arc::clone(&slot),
                path.clone(),
            );
            Box::new(move |cc| {
                cc.egui_ctx.set_zoom_factor(1.0);
                let mut app = DebuggerApp::new(
                    &cc.egui_ctx,
                    None,
                    scene,
                    if by_open { None } else { path.clone() },
                    AppOptions {
                        playing: plan.mode == FramesMode::Play,
                        ephemeral: true,
                        still: false,
                        native_dialogs: false,
                        background_steps: Some(crate::state::BACKGROUND_STEP_MS),
                    },
                )?;
                if by_open && let Some(path) = &path {
                    app.apply(Command::Open(path.clone()), true);
                    if let Some(e) = app.inspect().error() {
                        return Err(anyhow::anyhow!("{e}").into());
                    }
                    if plan.mode == FramesMode::Play && !app.inspect().is_playing() {
                        app.apply(Command::TogglePlay, true);
                    }
                }
                Ok(Box::new(FramesApp {
                    app,
                    plan,
                    opened: Instant::now(),
                    starts: Vec::new(),
                    first_step: 0,
                    proxies: 0,
                    pressed: false,
                    result: slot,
                    done: false,
                }))
            })
        },
    );
    if let Err(e) = crate::screenshot::remove_scratch(&storage_dir) {
        eprintln!(
            "frames: could not remove the scratch folder {}: {e}",
            storage_dir.display()
        );
    }
    run.map_err(|e| anyhow::anyhow!("frames: {e}"))?;
    let report = result.lock().ok().and_then(|mut r| r.take());
    report.ok_or_else(|| anyhow::anyhow!("frames: the window closed before the measure ended"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_statistics_of_known_intervals() {
        // Nine frames of 0.25 s and one of 1 s over 4 s.
        let mut intervals = vec![0.25; 9];
        intervals.push(1.0);
        let (fps, median, p90, max) = summarize(&intervals, 4.0);
        assert_eq!(fps, 2.5);
        assert_eq!(median, 250.0);
        assert_eq!(p90, 250.0);
        assert_eq!(max, 1000.0);
        assert_eq!(summarize(&[], 1.0), (0.0, 0.0, 0.0, 0.0));
    }

    #[test]
    fn modes_have_names() {
        for m in [FramesMode::Play, FramesMode::Pan, FramesMode::Still] {
            assert_eq!(FramesMode::from_name(m.name()), Some(m));
        }
        assert_eq!(FramesMode::from_name("fly"), None);
    }
}
