//! The `frames` subcommand (part of the binary: it opens the app crate's window): measures
//! how fast the real window draws a scene while it plays, pans or stands still, and prints
//! frames a second and frame times; see `aabb_app::frames`.

use crate::screenshot::parse_size;
use aabb_app::frames::{FramesMode, FramesPlan, LivePlan, run_frames};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `frames`.
#[derive(Debug, clap::Args)]
pub struct FramesArgs {
    /// The scene, trace, stream file or box list to open (the built-in scene when absent).
    pub scene: Option<PathBuf>,
    /// What the window does: play (the scene runs at speed 1), pan (paused; the world view is
    /// dragged in a circle), still (paused), or live (it listens while an engine of this
    /// harness streams `--live-boxes` boxes a step at `--live-rate` steps a second, with fat
    /// boxes and pairs, for `--seconds`; the scene is not used).
    #[arg(long, default_value = "play", value_parser = parse_mode)]
    pub mode: FramesMode,
    /// Seconds to measure.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Seconds to let the window settle first.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    /// Window size in pixels, `WIDTHxHEIGHT`.
    #[arg(long, default_value = "1280x800", value_parser = parse_size)]
    pub size: (u32, u32),
    /// The renderer: glow (OpenGL) or wgpu (Vulkan, Metal, DirectX, or OpenGL).
    #[arg(long, value_parser = parse_renderer)]
    pub renderer: Option<aabb_app::Renderer>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// `live`: moving boxes a step (1 to 10,000,000).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub live_boxes: u32,
    /// `live`: steps a second the engine sends (more than 0, at most 10,000).
    #[arg(long, default_value_t = 60.0)]
    pub live_rate: f64,
}

fn parse_mode(s: &str) -> Result<FramesMode, String> {
    FramesMode::from_name(s).ok_or_else(|| format!("expected play, pan, still or live, got `{s}`"))
}

fn parse_renderer(s: &str) -> Result<aabb_app::Renderer, String> {
    match aabb_app::renderer::renderer_from_name(s) {
        Ok(Some(r)) => Ok(r),
        Ok(None) => Err(format!("expected glow or wgpu, got `{s}`")),
        Err(why) => Err(why.to_owned()),
    }
}

/// Seconds as a duration: finite, from 0 to a day.
fn seconds(name: &str, s: f64) -> anyhow::Result<Duration> {
    if s.is_finite() && (0.0..=86_400.0).contains(&s) {
        Ok(Duration::from_secs_f64(s))
    } else {
        anyhow::bail!("--{name} {s}: expected seconds from 0 to 86400")
    }
}

/// `--live-rate`: finite, more than 0, at most 10,000 steps a second.
fn live_rate(rate: f64) -> anyhow::Result<f64> {
    if rate.is_finite() && rate > 0.0 && rate <= 10_000.0 {
        Ok(rate)
    } else {
        anyhow::bail!("--live-rate {rate}: expected steps a second, more than 0 and at most 10000")
    }
}

/// Runs `frames`; returns the exit code.
pub fn main(args: &FramesArgs) -> anyhow::Result<i32> {
    let plan = FramesPlan {
        size: [args.size.0, args.size.1],
        measure: seconds("seconds", args.seconds)?.max(Duration::from_millis(100)),
        warmup: seconds("warmup", args.warmup)?,
        mode: args.mode,
        renderer: args.renderer,
        live: LivePlan {
            boxes: args.live_boxes,
            rate: live_rate(args.live_rate)?,
        },
    };
    let report = run_frames(args.scene.as_deref(), plan)?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", report.line());
    }
    Ok(0)
}
