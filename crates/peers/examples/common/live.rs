//! What the engine examples share around their pile (`examples/rapier_pile.rs` and
//! `examples/box2d_pile.rs` include this file): the command line, the sink that streams the
//! pile through the Rust recorder to a listening debugger (or to a stream file when none
//! listens), and the run that picks a text trace or the stream and says what it did.
//!
//! Each example's pile module is `crate::pile`: it re-exports the engine-independent pile of
//! `examples/common/pile.rs`.

use crate::pile::{PileSink, PileSpec, PileSummary, TraceSink};
use aabb_debugger::trace::TraceBox;
use aabb_recorder::{Recorder, wire::Hello};
use clap::{CommandFactory, FromArgMatches};
use std::path::PathBuf;

/// The command line of a pile example.
#[derive(Debug, clap::Parser)]
pub struct PileArgs {
    /// Writes a text trace to this file instead of streaming.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The debugger's port on this machine.
    #[arg(long, default_value_t = aabb_recorder::DEFAULT_PORT)]
    port: u16,
    /// The stream file written when no debugger listens.
    #[arg(long)]
    stream_out: PathBuf,
    /// Balls poured.
    #[arg(long, default_value_t = 3000)]
    balls: u32,
    /// Steps to simulate (default: enough to pour every ball and let the pile settle).
    #[arg(long)]
    steps: Option<u64>,
    /// Paces the steps at the engine's time step (60 a second), as a game would run.
    #[arg(long)]
    realtime: bool,
    /// Streams the balls' boxes only, not the engine's own broad phase (sent by default).
    #[arg(long)]
    boxes_only: bool,
}

/// An engine's part of a step: adds what it read of its own broad phase to the recorder's
/// open step.
pub trait SendParts {
    /// Adds the parts between `begin_step` and `end_step`.
    fn send(&self, recorder: &mut Recorder);
}

/// A physics engine that simulates the pile.
pub trait PileEngine {
    /// Its own broad phase at a step, as its pile gives it.
    type BroadPhase: SendParts;
    /// The engine, as the stream's handshake names it.
    const NAME: &'static str;
    /// The example, as its command line names it.
    const EXAMPLE: &'static str;
    /// What the example does, for `--help`.
    const ABOUT: &'static str;
    /// The stream file written when no debugger listens.
    const STREAM_OUT: &'static str;
    /// Simulates the pile into `sink`.
    fn simulate<S: PileSink<Self::BroadPhase>>(
        spec: PileSpec,
        sink: &mut S,
    ) -> anyhow::Result<PileSummary>;
}

/// The recorder as the pile's sink: connects to the debugger at `address`, or writes
/// `stream_out` when none listens.
pub struct RecorderSink {
    engine: &'static str,
    recorder: Option<Recorder>,
    address: String,
    stream_out: PathBuf,
    realtime: Option<std::time::Instant>,
    dt: f64,
    steps: u64,
    broad_phase: bool,
}

impl<P: SendParts> PileSink<P> for RecorderSink {
    type Error = anyhow::Error;
    fn wants_broad_phase(&self) -> bool {
        self.broad_phase
    }
    fn begin(&mut self, walls: &[TraceBox], dt: f32) -> anyhow::Result<()> {
        let hello = Hello::new(self.engine, 2, dt).with_units("m");
        let mut recorder = match Recorder::connect(&self.address, hello.clone()) {
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
        for w in walls {
            recorder.static_box(
                w.id,
                &w.aabb.min.to_array()[..2],
                &w.aabb.max.to_array()[..2],
            );
        }
        self.recorder = Some(recorder);
        self.dt = f64::from(dt);
        Ok(())
    }
    fn step(&mut self, boxes: &[TraceBox], broad_phase: Option<&P>) -> anyhow::Result<()> {
        if let Some(r) = self.recorder.as_mut() {
            r.begin_step();
            for b in boxes {
                r.add_box(
                    b.id,
                    &b.aabb.min.to_array()[..2],
                    &b.aabb.max.to_array()[..2],
                );
            }
            if let Some(parts) = broad_phase {
                parts.send(r);
            }
            r.end_step();
        }
        self.steps += 1;
        if let Some(start) = self.realtime {
            let due = start + std::time::Duration::from_secs_f64(self.steps as f64 * self.dt);
            if let Some(wait) = due.checked_duration_since(std::time::Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        Ok(())
    }
}

/// The example's `main`: reads the command line, simulates the pile into a text trace
/// (`--out`) or the stream, and says what it did.
pub fn main<E: PileEngine>() -> anyhow::Result<()> {
    let matches = PileArgs::command()
        .name(E::EXAMPLE)
        .about(E::ABOUT)
        .mut_arg("stream_out", |a| {
            a.default_value(E::STREAM_OUT).required(false)
        })
        .get_matches();
    let args = PileArgs::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let spec = PileSpec {
        balls: args.balls,
        steps: args
            .steps
            .unwrap_or_else(|| PileSpec::settling_steps(args.balls)),
    };
    let started = std::time::Instant::now();
    let (summary, written) = if let Some(out) = &args.out {
        let file = std::fs::File::create(out)
            .map_err(|e| anyhow::anyhow!("{}: could not create the file: {e}", out.display()))?;
        let mut sink = TraceSink::new(std::io::BufWriter::new(file));
        let summary = E::simulate(spec, &mut sink)?;
        sink.finish()?;
        (summary, out.display().to_string())
    } else {
        let mut sink = RecorderSink {
            engine: E::NAME,
            recorder: None,
            address: format!("127.0.0.1:{}", args.port),
            stream_out: args.stream_out.clone(),
            realtime: args.realtime.then(std::time::Instant::now),
            dt: 0.0,
            steps: 0,
            broad_phase: !args.boxes_only,
        };
        let summary = E::simulate(spec, &mut sink)?;
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
