//! The `frames` run: opens the real window on a scene, plays it, pans it or leaves it still
//! for a while, and reports how fast the window draws: frames a second and frame times (the
//! whole frame: the app's work, egui's tessellation and the renderer's painting, measured
//! from the start of one frame to the start of the next), and the steps the scene advanced.
//!
//! This is how the window's speed is measured: on the real window and renderer (glow), not on
//! a headless stand-in, since on a software renderer painting is most of a frame.
//!
//! `live` measures the live link: the window listens, and an engine of this harness (the Rust
//! recorder on a thread) streams [`LivePlan::boxes`] moving boxes a step, paced at
//! [`LivePlan::rate`] steps a second, with their fat boxes and pairs, for the measured time;
//! the report adds the steps sent, dropped, received and stepped by our side, the longest
//! frame while the session ended, and the process's peak memory.

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
    /// Listening, while an engine streams (see [`LivePlan`]).
    Live,
}

/// The engine a `live` measure streams from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LivePlan {
    /// Moving boxes a step.
    pub boxes: u32,
    /// Steps a second the engine sends.
    pub rate: f64,
}

/// What a `live` measure saw of the link (see [`FramesReport::live`]).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LiveReport {
    /// Moving boxes a step.
    pub boxes: u32,
    /// Steps sent by the engine.
    pub sent: u64,
    /// Steps the engine's recorder dropped (the debugger fell behind).
    pub dropped: u64,
    /// Steps received, and stepped by our side, when the session ended.
    pub received: u64,
    /// Steps received a second while the engine streamed.
    pub received_per_sec: f64,
    /// Steps our side had stepped when the engine's stream ended.
    pub stepped_at_end: u64,
    /// The longest frame from the end of the stream to the session shown, ms.
    pub end_max_ms: f64,
    /// The process's peak resident memory, MiB (Linux; 0 elsewhere).
    pub peak_mib: f64,
}

impl FramesMode {
    /// The mode's name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FramesMode::Play => "play",
            FramesMode::Pan => "pan",
            FramesMode::Still => "still",
            FramesMode::Live => "live",
        }
    }

    /// The mode of a name, if it is one.
    #[must_use]
    pub fn from_name(s: &str) -> Option<FramesMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "play" => Some(FramesMode::Play),
            "pan" => Some(FramesMode::Pan),
            "still" => Some(FramesMode::Still),
            "live" => Some(FramesMode::Live),
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
    /// The engine of a `live` measure.
    pub live: LivePlan,
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
    /// The live link's figures, for a `live` measure.
    pub live: Option<LiveReport>,
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
        ) + &self.live.as_ref().map_or_else(String::new, |l| {
            format!(
                "; live: {} boxes, {} steps sent, {} dropped, {} received ({:.1}/s), our side at \
                 {} when the stream ended, longest frame while it ended {:.1} ms, peak {:.0} MiB",
                l.boxes,
                l.sent,
                l.dropped,
                l.received,
                l.received_per_sec,
                l.stepped_at_end,
                l.end_max_ms,
                l.peak_mib
            )
        })
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
    /// A `live` measure's engine, while it streams: steps sent and dropped when it ends.
    engine: Option<std::thread::JoinHandle<(u64, u64)>>,
    /// When the engine's stream ended, with the steps sent and dropped and the step our side
    /// had reached then.
    engine_ended: Option<(Instant, u64, u64, u64)>,
    /// The furthest step our side had stepped, seen so far.
    ours_seen: u64,
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
        if self.plan.mode == FramesMode::Live {
            self.live_frame(ui, now);
            self.app.ui(ui, frame);
            ui.ctx().request_repaint();
            return;
        }
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
    /// A `live` measure's frame: listens at once; once the window has settled, starts the
    /// engine; measures every frame while it streams and until the session it sent is shown
    /// (a second at least after its end), then reports.
    fn live_frame(&mut self, ui: &egui::Ui, now: Instant) {
        let inspect = self.app.inspect();
        let Some(status) = inspect.live_status() else {
            if self.starts.is_empty() && self.engine.is_none() {
                let any: std::net::SocketAddr = ([127, 0, 0, 1], 0).into();
                self.app.apply(Command::StartListening(any), true);
            }
            return;
        };
        if self.done {
            return;
        }
        if self.engine.is_none() && self.engine_ended.is_none() {
            let (Some(addr), true) = (status.addr, self.measuring()) else {
                return;
            };
            let live = self.plan.live;
            let steps = (live.rate * self.plan.measure.as_secs_f64())
                .ceil()
                .max(1.0) as u64;
            self.engine = Some(std::thread::spawn(move || stream_boxes(addr, live, steps)));
            self.starts.push(now);
            return;
        }
        self.starts.push(now);
        self.ours_seen = self.ours_seen.max(status.ours.unwrap_or(0));
        if let Some(engine) = self.engine.take_if(|e| e.is_finished()) {
            let (sent, dropped) = engine.join().unwrap_or((0, 0));
            let stepped = self.ours_seen;
            self.engine_ended = Some((now, sent, dropped, stepped));
        }
        let Some((ended, sent, dropped, stepped)) = self.engine_ended else {
            return;
        };
        let shown = inspect.live_sessions_ended() > 0;
        if !(shown && now.duration_since(ended) >= Duration::from_secs(1)) {
            return;
        }
        let streaming: Vec<Instant> = self
            .starts
            .iter()
            .copied()
            .filter(|t| *t <= ended)
            .collect();
        let intervals: Vec<f64> = streaming
            .windows(2)
            .map(|w| w[1].duration_since(w[0]).as_secs_f64())
            .collect();
        let seconds = match (streaming.first(), streaming.last()) {
            (Some(a), Some(b)) => b.duration_since(*a).as_secs_f64(),
            _ => 0.0,
        };
        let (fps, median_ms, p90_ms, max_ms) = summarize(&intervals, seconds);
        let after = self
            .starts
            .iter()
            .filter(|t| **t >= ended)
            .collect::<Vec<_>>();
        let end_max_ms = after
            .windows(2)
            .map(|w| w[1].duration_since(*w[0]).as_secs_f64() * 1e3)
            .fold(0.0, f64::max);
        let received = inspect.recording().last_step() + 1;
        let report = FramesReport {
            mode: self.plan.mode.name().to_string(),
            width: self.plan.size[0],
            height: self.plan.size[1],
            proxies: self.plan.live.boxes as usize,
            frames: intervals.len(),
            seconds,
            fps,
            median_ms,
            p90_ms,
            max_ms,
            steps: received,
            steps_per_sec: if seconds > 0.0 {
                stepped as f64 / seconds
            } else {
                0.0
            },
            real_time_steps_per_sec: self.plan.live.rate,
            live: Some(LiveReport {
                boxes: self.plan.live.boxes,
                sent,
                dropped,
                received,
                received_per_sec: if seconds > 0.0 {
                    received as f64 / seconds
                } else {
                    0.0
                },
                stepped_at_end: stepped,
                end_max_ms,
                peak_mib: peak_mib(),
            }),
        };
        if let Ok(mut slot) = self.result.lock() {
            *slot = Some(report);
        }
        self.done = true;
        ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
    }

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
            live: None,
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
                    engine: None,
                    engine_ended: None,
                    ours_seen: 0,
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

/// The engine of a `live` measure: `live.boxes` boxes on a lattice, each drifting on its own
/// small circle (so some leave their fat boxes every step), with fat boxes grown by 0.1 and
/// their pairs (none: the lattice keeps the fat boxes apart), `steps` steps paced at
/// `live.rate` a second, through the Rust recorder (which drops steps rather than wait when
/// the debugger falls behind). Steps sent and dropped.
fn stream_boxes(addr: std::net::SocketAddr, live: LivePlan, steps: u64) -> (u64, u64) {
    use aabb_recorder::{Hello, Recorder};
    let hello = Hello::new("frames live engine", 2, 1.0 / 60.0);
    let Ok(mut rec) = Recorder::connect_with(addr, hello, aabb_recorder::Options::default()) else {
        return (0, 0);
    };
    let side = f64::from(live.boxes).sqrt().ceil().max(1.0) as u32;
    let pace = Duration::from_secs_f64(1.0 / live.rate.max(0.001));
    let started = Instant::now();
    for s in 0..steps {
        rec.begin_step();
        let t = s as f32 / 60.0;
        let mut at = Vec::with_capacity(live.boxes as usize);
        for i in 0..live.boxes {
            let phase = i as f32 * 0.37;
            let x = (i % side) as f32 * 3.0 + 0.8 * (2.0 * t + phase).cos();
            let y = (i / side) as f32 * 3.0 + 0.8 * (1.7 * t + phase).sin();
            rec.add_box(i, &[x, y], &[x + 1.0, y + 1.0]);
            at.push((x, y));
        }
        for (i, (x, y)) in (0..live.boxes).zip(at) {
            rec.fat_box(i, &[x - 0.1, y - 0.1], &[x + 1.1, y + 1.1]);
        }
        rec.begin_pairs();
        rec.end_step();
        if let Some(wait) = (pace * (s as u32 + 1)).checked_sub(started.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    let stats = rec.finish();
    (stats.steps_sent, stats.steps_dropped)
}

/// The process's peak resident memory, MiB, from `/proc/self/status` (0 where there is none).
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(0.0, |kib| kib / 1024.0)
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
        for m in [
            FramesMode::Play,
            FramesMode::Pan,
            FramesMode::Still,
            FramesMode::Live,
        ] {
            assert_eq!(FramesMode::from_name(m.name()), Some(m));
        }
        assert_eq!(FramesMode::from_name("fly"), None);
    }
}
