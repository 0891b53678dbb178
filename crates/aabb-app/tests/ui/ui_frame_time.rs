//! Frame cost of the real app, headless (egui_kittest): one simulation step plus building the
//! whole UI and tessellating it, with every layer on. Reports wall time per frame (mean and
//! median) and, on Linux, the thread's CPU time per frame (from `/proc/thread-self/schedstat`,
//! which leaves out the time other programs of a shared machine take). Not a pass/fail test
//! (no timing assertions); run it to measure:
//! `cargo test --release -p aabb-app --test ui ui_frame_time -- --ignored --nocapture`.

use aabb_app::Command;
use aabb_app::prefs::{Layers, ViewMode};
use aabb_model::scene::Scene;
use eframe::egui;
use egui_kittest::Harness;
use std::time::Instant;

use crate::common::ui;

/// The allocator the app binary uses (`src/main.rs`): with glibc's, the frame's output buffers
/// page-fault and a frame costs up to three times as much.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn scene(count: u32) -> Scene {
    let side = (f64::from(count).sqrt() * 4.0) as f32;
    let text = format!(
        r#"(
    format_version: 1,
    name: "frame time {count}",
    dimensions: 2,
    world: (min: (0.0, 0.0), max: ({side}, {side})),
    dt: 0.016666668,
    tree: (margin: 0.1, velocity_lookahead: 0.0),
    spheres: [],
    generate: Some((count: {count}, radius: (0.5, 1.5), speed: (0.0, 1.4), seed: 42)),
    view: None,
)"#
    );
    Scene::parse(&text, "frame-time.ron", false).expect("valid scene")
}

/// Nanoseconds this thread has run on a CPU (Linux; `None` elsewhere).
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Per frame over `frames` playing frames: mean and median wall milliseconds, and mean CPU
/// milliseconds when the platform tells.
fn measure(count: u32, frames: usize) -> (f64, f64, Option<f64>) {
    let scene = scene(count);
    let mut h = ui::app_harness(
        Harness::builder()
            .with_size(egui::Vec2::new(1600.0, 1000.0))
            // One simulation step a frame, as at 60 frames a second (the harness's default
            // step of a quarter second would run six).
            .with_step_dt(1.0 / 60.0),
        scene,
    );
    {
        let prefs = h.state_mut().prefs_mut();
        prefs.view_mode = ViewMode::Both;
        prefs.layers = Layers::from_names(&["all"]).expect("all layers");
        prefs.tree_collapse_depth = 64;
    }
    // Start playing only now: the harness runs a new app until it stops asking for frames.
    h.state_mut().push_command(Command::SetPlaying(true));
    h.run_steps(10);
    let first_step = h.state().inspect().sim().step_index();
    let cpu_start = thread_cpu_ns();
    let mut ms = Vec::with_capacity(frames);
    for _ in 0..frames {
        let start = Instant::now();
        h.step();
        // The shapes are shared (`Arc`s), so the clone costs next to nothing.
        let shapes = h.output().shapes.clone();
        let primitives = h.ctx.tessellate(shapes, 1.0);
        std::hint::black_box(primitives);
        ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let cpu = cpu_start
        .zip(thread_cpu_ns())
        .map(|(a, b)| (b - a) as f64 / 1e6 / frames as f64);
    assert_eq!(
        h.state().inspect().sim().step_index() - first_step,
        frames as u64,
        "one simulation step a frame"
    );
    ms.sort_by(f64::total_cmp);
    (
        ms.iter().sum::<f64>() / ms.len() as f64,
        ms[ms.len() / 2],
        cpu,
    )
}

#[test]
#[ignore = "measures frame time; run with --release -- --ignored --nocapture"]
fn frame_time_with_every_layer_on() {
    for (count, frames) in frame_time_cases() {
        let (mean, median, cpu) = measure(count, frames);
        let cpu = cpu.map_or(String::new(), |c| format!(", {c:8.2} ms CPU"));
        println!(
            "{count:>7} spheres: {mean:8.2} ms mean, {median:8.2} ms median{cpu} per frame (step + UI + tessellation)"
        );
    }
}

/// `AABB_FRAME_TIME_CASES=1000x60,10000x30` overrides the sphere counts and frame counts.
fn frame_time_cases() -> Vec<(u32, usize)> {
    std::env::var("AABB_FRAME_TIME_CASES")
        .ok()
        .map(|s| {
            s.split(',')
                .filter_map(|c| {
                    let (n, f) = c.split_once('x')?;
                    Some((n.trim().parse().ok()?, f.trim().parse().ok()?))
                })
                .collect()
        })
        .unwrap_or_else(|| vec![(1_000, 60), (10_000, 60), (100_000, 10)])
}
