//! A real physics engine's motion as a trace for the debugger: rapier2d pours balls of
//! varied sizes into an open box under gravity until they pile up, and each step's ball
//! boxes (rapier's own colliders' AABBs) are written as an `aabb-trace` file, the box's
//! walls as its static boxes.
//!
//! ```text
//! cargo run --release --example rapier_pile -- --out pile.trace
//! aabb-debugger run pile.trace --steps 100000
//! aabb-debugger sweep pile.trace --margin 0:0.2:0.05 --lookahead 0,0.05 --steps 900
//! ```
//!
//! `--balls N` (default 3000) and `--steps N` (default: long enough to pour them all and let
//! the pile settle). The same arguments always give the same file.

#[path = "rapier_pile/pile.rs"]
mod pile;

use clap::Parser;
use std::path::PathBuf;

/// Pours rapier2d balls into a box and writes the pile as a trace.
#[derive(Debug, Parser)]
struct Args {
    /// The trace file to write.
    #[arg(long)]
    out: PathBuf,
    /// Balls poured.
    #[arg(long, default_value_t = 3000)]
    balls: u32,
    /// Steps to simulate (default: enough to pour every ball and let the pile settle).
    #[arg(long)]
    steps: Option<u64>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let spec = pile::PileSpec {
        balls: args.balls,
        steps: args
            .steps
            .unwrap_or_else(|| pile::PileSpec::settling_steps(args.balls)),
    };
    let file = std::fs::File::create(&args.out)
        .map_err(|e| anyhow::anyhow!("{}: could not create the file: {e}", args.out.display()))?;
    let started = std::time::Instant::now();
    let summary = pile::write_pile(spec, std::io::BufWriter::new(file))?;
    let c = summary.container;
    println!(
        "{}: {} steps, {} balls poured from {:.1} m into a box {:.1} m wide; at the end their \
         mean height is {:.2} m, the top {:.2} m, mean speed {:.3} m/s ({:.1} s)",
        args.out.display(),
        summary.steps,
        summary.poured,
        c.pour_height,
        c.width,
        summary.final_mean_height,
        summary.final_top,
        summary.final_mean_speed,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
