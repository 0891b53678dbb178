//! The cost of recording and the time of a jump (docs/performance.md, "Recording"), at 10,000
//! spheres (Gaul's density: 10,000 spheres of radius 0.5 to 1.5 in a 400 x 400 world).
//!
//! - `replay/step_plain`: one step, not recorded; `replay/clone`, `replay/structure_hash`
//!   and `replay/step_record_of`: a keyframe's copy, a step's hash, and a step's record
//!   (hash included). (A step recorded is timed in the paired run below, not by criterion:
//!   timed one after the other, two simulations at different steps of the scene differ by
//!   more than the recording costs.)
//! - `replay/jump_worst`: `state_at` of the step of a 10,000-step recording that lies
//!   furthest after its keyframe (the worst jump).
//! - A paired run after criterion: a plain and a recorded simulation of the same scene step
//!   in alternating rounds of 50 steps, so both see the same trajectory on the same minutes of
//!   a shared machine; it prints the ratio of their total times (the recording's overhead),
//!   and the recording's memory per step and keyframe.
//!
//! Environment: `REPLAY_BENCH_STEPS` (steps of the long recording, default 10,000),
//! `REPLAY_BENCH_N` (spheres, default 10,000), `REPLAY_BENCH_BUDGET_MIB` (the long
//! recording's budget; the default budget when absent).

use aabb_debugger::broadphase::BroadphaseKind;
use aabb_debugger::replay::{Recording, StepRecord};
use aabb_debugger::scene::{FORMAT_VERSION, Generate, Scene, Simulation};
use aabb_debugger::tree::{Aabb, TreeConfig};
use criterion::Criterion;
use glam::Vec3;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `n` spheres at Gaul's density (5,000 in 282.8 x 282.8).
fn scene(n: u32) -> Scene {
    let side = 282.842_7 * (f64::from(n) / 5000.0).sqrt() as f32;
    Scene {
        format_version: FORMAT_VERSION,
        name: format!("{n} spheres"),
        dimensions: 2,
        world: Aabb::new(Vec3::ZERO, Vec3::new(side, side, 0.0)),
        dt: 1.0 / 60.0,
        tree: TreeConfig {
            margin: 0.1,
            velocity_lookahead: 0.0,
            ..TreeConfig::default()
        },
        spheres: Vec::new(),
        boxes: Vec::new(),
        generate: Some(Generate {
            count: n,
            radius: (0.5, 1.5),
            speed: (0.0, 1.4),
            seed: 1,
            density: None,
        }),
        view: None,
    }
}

fn start(scene: &Scene) -> (Recording, Simulation) {
    match Recording::start(scene, "bench", BroadphaseKind::Tree, 5_000_000) {
        Ok(started) => started,
        Err(e) => panic!("the bench scene: {e}"),
    }
}

fn step(sim: &mut Simulation) {
    if let Err(e) = sim.step() {
        panic!("a step: {e}");
    }
}

fn record(rec: &mut Recording, sim: &mut Simulation) {
    match rec.step(sim) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("a step: {e}"),
        Err(e) => panic!("recording: {e}"),
    }
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let n = u32::try_from(env_u64("REPLAY_BENCH_N", 10_000)).unwrap_or(10_000);
    let long = env_u64("REPLAY_BENCH_STEPS", 10_000);
    let scene = scene(n);
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));

    {
        let (_, mut sim) = start(&scene);
        c.bench_function("replay/step_plain", |b| b.iter(|| step(&mut sim)));
        c.bench_function("replay/clone", |b| b.iter(|| black_box(sim.clone())));
        c.bench_function("replay/structure_hash", |b| {
            b.iter(|| black_box(sim.structure_hash()))
        });
        c.bench_function("replay/step_record_of", |b| {
            b.iter(|| black_box(StepRecord::of(&sim)))
        });
    }

    // The long recording.
    let started = Instant::now();
    let (mut rec, mut sim) = start(&scene);
    if let Ok(mib) = std::env::var("REPLAY_BENCH_BUDGET_MIB") {
        let mib: usize = mib.parse().unwrap_or(1024);
        rec.set_budget_bytes(mib * 1024 * 1024);
    }
    for _ in 0..long {
        record(&mut rec, &mut sim);
    }
    let built = started.elapsed();
    let frames = rec.keyframe_steps();
    // The worst jump: the step just before the keyframe after the widest gap (or the last).
    let mut worst = (
        rec.last_step(),
        rec.last_step() - frames.last().copied().unwrap_or(0),
    );
    for w in frames.windows(2) {
        if w[1] - w[0] - 1 > worst.1 {
            worst = (w[1] - 1, w[1] - w[0] - 1);
        }
    }
    eprintln!(
        "long recording: {long} steps of {n} spheres in {:.1} s; {} keyframes ({} dropped, \
         policy {:?}); memory {:.1} MiB of a {:.0} MiB budget; the worst step {} lies {} \
         steps after its keyframe",
        built.as_secs_f64(),
        frames.len(),
        rec.keyframes_dropped(),
        rec.keyframe_policy(),
        mib(rec.memory_bytes()),
        mib(rec.budget_bytes()),
        worst.0,
        worst.1
    );
    let keyframe = rec.memory_bytes() - rec.history().memory_bytes();
    eprintln!(
        "memory: {:.2} MiB a keyframe, {} bytes a step record ({:.1} MiB for the {} step \
         records)",
        mib(keyframe / frames.len().max(1)),
        std::mem::size_of::<StepRecord>(),
        mib(rec.history().memory_bytes()),
        rec.steps().len()
    );
    c.bench_function("replay/jump_worst", |b| {
        b.iter(|| match rec.state_at(worst.0) {
            Ok(sim) => black_box(sim),
            Err(e) => panic!("jump: {e}"),
        })
    });
    drop(rec);

    // Paired: the same trajectory, plain and recorded, in alternating rounds.
    let rounds = 20;
    let chunk = 50;
    let (_, mut plain) = start(&scene);
    let (mut rec, mut recorded) = start(&scene);
    let (mut plain_secs, mut recorded_secs) = (0.0, 0.0);
    for round in 0..rounds {
        let mut time_plain = || {
            let t = Instant::now();
            for _ in 0..chunk {
                step(&mut plain);
            }
            t.elapsed().as_secs_f64()
        };
        let mut time_recorded = || {
            let t = Instant::now();
            for _ in 0..chunk {
                record(&mut rec, &mut recorded);
            }
            t.elapsed().as_secs_f64()
        };
        if round % 2 == 0 {
            plain_secs += time_plain();
            recorded_secs += time_recorded();
        } else {
            recorded_secs += time_recorded();
            plain_secs += time_plain();
        }
    }
    let steps = f64::from(rounds * chunk);
    eprintln!(
        "paired ({} steps each): plain {:.3} ms a step, recorded {:.3} ms a step: recording \
         adds {:+.1}% ({} keyframes)",
        rounds * chunk,
        plain_secs * 1000.0 / steps,
        recorded_secs * 1000.0 / steps,
        (recorded_secs / plain_secs - 1.0) * 100.0,
        rec.keyframe_steps().len()
    );
    c.final_summary();
}
