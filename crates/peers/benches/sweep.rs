//! Criterion benchmark of the margin sweep: 50 margins x 3 look-ahead values x 300 steps on
//! `scenes/random-1000.ron`, on one thread and on every core (the counts are the same; the
//! speed-up is the point), and the latency of a cancel: from `cancel()` to the sweep's
//! return, while every thread is stepping a point.
//!
//! `cargo bench -p aabb-peers --bench sweep`.

use aabb_debugger::scene::Scene;
use aabb_debugger::sweep::{SweepOutcome, SweepPlan, SweepSpec};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

fn scene() -> Scene {
    Scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/random-1000.ron"))
        .expect("scenes/random-1000.ron")
}

/// 50 margins, 0 to 0.98 by 0.02; look-ahead 0, 0.05 and 0.1 s; 300 steps.
fn spec(threads: usize) -> SweepSpec {
    let margins = (0..50).map(|i| (i as f64 * 0.02) as f32).collect();
    SweepSpec {
        threads,
        ..SweepSpec::new(margins, vec![0.0, 0.05, 0.1], 300)
    }
}

fn sweep(c: &mut Criterion) {
    let scene = scene();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut group = c.benchmark_group("sweep random-1000, 50 x 3 points x 300 steps");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(30));
    for threads in [1, cores] {
        let plan = SweepPlan::new(&scene, spec(threads)).expect("a valid grid");
        group.bench_function(format!("{threads} thread(s)"), |b| {
            b.iter(|| {
                let control = aabb_debugger::sweep::SweepControl::new();
                match plan.run(&control).expect("runs") {
                    SweepOutcome::Finished(report) => black_box(report.points.len()),
                    SweepOutcome::Cancelled { .. } => unreachable!("nobody cancels"),
                }
            });
        });
    }
    group.finish();
}

fn cancel_latency(c: &mut Criterion) {
    let scene = scene();
    let mut group = c.benchmark_group("sweep cancel");
    group.sample_size(20);
    group.bench_function("latency: cancel() to return, every thread stepping", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let plan = SweepPlan::new(&scene, spec(0)).expect("a valid grid");
                let handle = plan.start().expect("starts");
                // Wait until every thread is inside a point (a few steps each).
                while handle.progress().steps_done < 50 {
                    std::thread::sleep(Duration::from_micros(200));
                }
                let asked = Instant::now();
                handle.cancel();
                let outcome = handle.wait().expect("runs");
                total += asked.elapsed();
                assert!(matches!(outcome, SweepOutcome::Cancelled { .. }));
            }
            total
        });
    });
    group.finish();
}

criterion_group!(benches, sweep, cancel_latency);
criterion_main!(benches);
