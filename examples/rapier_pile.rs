//! A real physics engine streaming live to the debugger: rapier2d pours balls of varied sizes
//! into an open box under gravity until they pile up, and each step's ball boxes (rapier's own
//! colliders' AABBs) go through the Rust recorder (`aabb-recorder`) to a debugger that
//! listens, the box's walls as its static boxes. When no debugger listens, the stream goes to
//! a file instead (`pile.aabbstream`, or `--stream-out`); `--out FILE.trace` writes a text
//! trace.
//!
//! ```text
//! aabb-debugger listen --out pile.aabbstream &      # or the window: File > Listen for an engine…
//! cargo run --release --example rapier_pile
//! aabb-debugger run pile.aabbstream --steps 100000
//! aabb-debugger sweep pile.aabbstream --margin 0:0.2:0.05 --lookahead 0,0.05 --steps 900
//! ```
//!
//! `--balls N` (default 3000) and `--steps N` (default: long enough to pour them all and let
//! the pile settle); `--port N` (default 7616); `--realtime` paces the steps at 60 a second.
//! The same arguments always give the same boxes.

#[path = "rapier_pile/pile.rs"]
mod pile;

use aabb_debugger::trace::TraceBox;
use aabb_recorder::{Recorder, wire::Hello};
use clap::Parser;
use std::path::PathBuf;

/// Pours rapier2d balls into a box and streams the pile to the debugger.
#[derive(Debug, Parser)]
struct Args {
    /// Writes a text trace to this file instead of streaming.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The debugger's port on this machine.
    #[arg(long, default_value_t = aabb_recorder::DEFAULT_PORT)]
    port: u16,
    /// The stream file written when no debugger listens.
    #[arg(long, default_value = "pile.aabbstream")]
    stream_out: PathBuf,
    /// Balls poured.
    #[arg(long, default_value_t = 3000)]
    balls: u32,
    /// Steps to simulate (default: enough to pour every ball and let the pile settle).
    #[arg(long)]
    steps: Option<u64>,
    /// Paces the steps at rapier's 60 a second, as a game would run.
    #[arg(long)]
    realtime: bool,
    /// Streams the balls' boxes only, not rapier's own broad phase (its BVH, fat boxes and
    /// pairs, sent by default).
    #[arg(long)]
    boxes_only: bool,
}

/// The recorder as the pile's sink.
struct RecorderSink {
    recorder: Option<Recorder>,
    address: String,
    stream_out: PathBuf,
    realtime: Option<std::time::Instant>,
    steps: u64,
    broad_phase: bool,
}

/// Adds rapier's own broad phase to the open step: its leaves' boxes (the fat boxes), its
/// pairs, its BVH and the margin its broad-phase boxes have.
fn send_broad_phase(r: &mut Recorder, bp: &pile::EngineBroadPhase) {
    for (id, min, max) in &bp.fat_boxes {
        r.fat_box(*id, min, max);
    }
    r.begin_pairs();
    for &[a, b] in &bp.pairs {
        r.pair(a, b);
    }
    r.tree_root(bp.tree.root);
    if bp.tree.partial {
        r.tree_partial();
    }
    for n in &bp.tree.nodes {
        r.tree_node(n);
    }
    r.timing(aabb_recorder::wire::TIMING_MARGIN, f64::from(bp.margin));
    // rapier's counters time its broad and narrow phases only when it is built with its
    // `profiler` feature (they read 0 otherwise): no times are sent.
}

impl pile::PileSink for RecorderSink {
    type Error = anyhow::Error;
    fn wants_broad_phase(&self) -> bool {
        self.broad_phase
    }
    fn begin(&mut self, walls: &[TraceBox], dt: f32) -> anyhow::Result<()> {
        let hello = Hello::new("rapier2d 0.36 (rapier_pile example)", 2, dt).with_units("m");
        let recorder = match Recorder::connect(&self.address, hello.clone()) {
            Ok(r) => {
                println!("streaming to the debugger at {}", self.address);
                r
            }
            Err(e) => {
                println!(
                    "no debugger listens at {} ({e}); writing the stream to {}",
                    self.address,
                    self.stream_out.display()
                );
                Recorder::to_file(&self.stream_out, hello).map_err(|e| {
                    anyhow::anyhow!(
                        "{}: could not create the file: {e}",
                        self.stream_out.display()
                    )
                })?
            }
        };
        self.recorder = Some(recorder);
        if let Some(r) = self.recorder.as_mut() {
            for w in walls {
                r.static_box(
                    w.id,
                    &w.aabb.min.to_array()[..2],
                    &w.aabb.max.to_array()[..2],
                );
            }
        }
        Ok(())
    }
    fn step(
        &mut self,
        boxes: &[TraceBox],
        broad_phase: Option<&pile::EngineBroadPhase>,
    ) -> anyhow::Result<()> {
        if let Some(r) = self.recorder.as_mut() {
            r.begin_step();
            for b in boxes {
                r.add_box(
                    b.id,
                    &b.aabb.min.to_array()[..2],
                    &b.aabb.max.to_array()[..2],
                );
            }
            if let Some(bp) = broad_phase {
                send_broad_phase(r, bp);
            }
            r.end_step();
        }
        self.steps += 1;
        if let Some(start) = self.realtime {
            let due = start + std::time::Duration::from_secs_f64(self.steps as f64 / 60.0);
            if let Some(wait) = due.checked_duration_since(std::time::Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        Ok(())
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let spec = pile::PileSpec {
        balls: args.balls,
        steps: args
            .steps
            .unwrap_or_else(|| pile::PileSpec::settling_steps(args.balls)),
    };
    let started = std::time::Instant::now();
    let (summary, written) = if let Some(out) = &args.out {
        let file = std::fs::File::create(out)
            .map_err(|e| anyhow::anyhow!("{}: could not create the file: {e}", out.display()))?;
        let summary = pile::write_pile(spec, std::io::BufWriter::new(file))?;
        (summary, out.display().to_string())
    } else {
        let mut sink = RecorderSink {
            recorder: None,
            address: format!("127.0.0.1:{}", args.port),
            stream_out: args.stream_out.clone(),
            realtime: args.realtime.then(std::time::Instant::now),
            steps: 0,
            broad_phase: !args.boxes_only,
        };
        let summary = pile::simulate_pile(spec, &mut sink)?;
        let stats = sink.recorder.take().map(|mut r| r.finish());
        let said = match stats {
            Some(s) => format!(
                "{} steps sent, {} dropped{}",
                s.steps_sent,
                s.steps_dropped,
                s.error.map_or_else(String::new, |e| format!(" ({e})"))
            ),
            None => "nothing sent".to_owned(),
        };
        (summary, said)
    };
    let c = summary.container;
    println!(
        "{written}: {} steps, {} balls poured from {:.1} m into a box {:.1} m wide; at the end \
         their mean height is {:.2} m, the top {:.2} m, mean speed {:.3} m/s ({:.1} s)",
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
