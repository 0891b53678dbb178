//! The recorder's cost on the engine's thread: one step of 100,000 boxes, all moving, added
//! in the same order as the step before (the fast path), in 2D and 3D, and in a shuffled
//! order (the map fallback); the stream goes to `io::sink()` on the writer thread.

use std::hint::black_box;
use std::io;

use aabb_recorder::{Hello, Options, Recorder};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const N: u32 = 100_000;

fn recorder(dims: u8) -> Recorder {
    let options = Options {
        exact: true,
        ..Options::default()
    };
    Recorder::to_writer_with(io::sink(), Hello::new("bench", dims, 1.0 / 60.0), options)
        .expect("a valid handshake")
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("recorder");
    group.throughput(Throughput::Elements(u64::from(N)));
    group.sample_size(30);

    let mut rec = recorder(2);
    let mut t = 0.0f32;
    group.bench_function("2d all moving, same order", |b| {
        b.iter(|| {
            t += 0.001;
            rec.begin_step();
            for id in 0..N {
                let x = id as f32 + t;
                rec.add_box_2d(id, [x, 1.0], [x + 0.5, 1.5]);
            }
            black_box(rec.end_step());
        })
    });
    drop(rec);

    let mut rec = recorder(3);
    group.bench_function("3d all moving, same order", |b| {
        b.iter(|| {
            t += 0.001;
            rec.begin_step();
            for id in 0..N {
                let x = id as f32 + t;
                rec.add_box_3d(id, [x, 1.0, 2.0], [x + 0.5, 1.5, 2.5]);
            }
            black_box(rec.end_step());
        })
    });
    drop(rec);

    let mut rec = recorder(2);
    let mut flip = false;
    group.bench_function("2d all moving, order reversed every step", |b| {
        b.iter(|| {
            t += 0.001;
            flip = !flip;
            rec.begin_step();
            for k in 0..N {
                let id = if flip { N - 1 - k } else { k };
                let x = id as f32 + t;
                rec.add_box_2d(id, [x, 1.0], [x + 0.5, 1.5]);
            }
            black_box(rec.end_step());
        })
    });
    drop(rec);
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
