//! Reads a stream file (or standard input) and prints one line per step:
//! `step N: B boxes (+A ~M -G)`; exits 1 with the error's message on a bad stream.
//!
//! `cargo run -p aabb-recorder --example decode -- bounce.aabbstream`

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::process::ExitCode;

use aabb_recorder::{Decoder, Limits, StreamState};

fn main() -> ExitCode {
    let path = std::env::args().nth(1).unwrap_or_else(|| "-".to_owned());
    let input: Box<dyn Read> = if path == "-" {
        Box::new(io::stdin().lock())
    } else {
        match File::open(&path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    let mut decoder = Decoder::new(BufReader::with_capacity(1 << 20, input), Limits::default());
    let mut state = StreamState::new(Limits::default());
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    loop {
        match state.next_step(&mut decoder) {
            Ok(Some(u)) => {
                let dropped = if u.dropped_before > 0 {
                    format!(", {} dropped before", u.dropped_before)
                } else {
                    String::new()
                };
                let line = format!(
                    "step {}: {} boxes (+{} ~{} -{}){dropped}",
                    u.step,
                    u.boxes.len(),
                    u.appeared,
                    u.moved,
                    u.gone
                );
                if writeln!(out, "{line}").is_err() {
                    return ExitCode::FAILURE;
                }
            }
            Ok(None) => break,
            Err(e) => {
                let _ = out.flush();
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let _ = out.flush();
    if let Some(h) = state.hello() {
        let end = match state.bye() {
            Some(b) => format!(
                "ended cleanly ({} steps sent, {} dropped)",
                b.steps_sent, b.steps_dropped
            ),
            None => "no BYE (the engine stopped without finishing)".to_owned(),
        };
        eprintln!(
            "{path}: {} ({}D, dt {} s, units {}): {} steps, {} static boxes; {end}",
            h.engine,
            h.dimensions,
            h.dt_secs,
            h.units,
            state.steps_received(),
            state.statics().len()
        );
    }
    ExitCode::SUCCESS
}
