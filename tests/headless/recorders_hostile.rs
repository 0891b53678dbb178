//! The recorders against the real debugger's refusal: `listen` with one engine live refuses
//! a second, and the second engine's Rust recorder (`connect_or_file`) goes on in its file,
//! a valid stream that opens as a trace. The C and Python recorders' refusals, FIFOs and
//! hostile arguments are tested in `crates/aabb-recorder/tests`.

use crate::live_link::listen;

use aabb_debugger::stream;
use aabb_debugger::trace::TraceLimits;
use aabb_recorder::{Hello, Recorder, Target};
use std::time::{Duration, Instant};

#[test]
fn a_recorder_refused_by_a_busy_listen_goes_on_in_its_file() {
    let l = listen(&[]);
    let mut first =
        Recorder::connect(("127.0.0.1", l.port), Hello::new("first", 2, 0.02)).expect("connect");
    first.begin_step();
    first.add_box_2d(1, [0.0, 0.0], [1.0, 1.0]);
    first.end_step();
    // The first engine is live before the second comes.
    std::thread::sleep(Duration::from_millis(300));
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("second.aabbstream");
    let mut second =
        Recorder::connect_or_file(("127.0.0.1", l.port), &path, Hello::new("second", 2, 0.02))
            .expect("connects");
    let deadline = Instant::now() + Duration::from_secs(10);
    while second.stats().fallback.is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    for k in 0..5u8 {
        second.begin_step();
        second.add_box_2d(7, [f32::from(k), 0.0], [f32::from(k) + 1.0, 1.0]);
        second.end_step();
    }
    let stats = second.finish();
    let why = stats.fallback.clone().expect("it left the debugger");
    assert!(
        why.starts_with(&format!("the debugger at 127.0.0.1:{} ", l.port))
            && why.ends_with(&format!("; the stream goes on in {}", path.display())),
        "{why}"
    );
    assert_eq!(stats.target, Target::File(path.clone()));
    assert_eq!(
        (
            stats.steps,
            stats.steps_sent,
            stats.steps_dropped,
            stats.error
        ),
        (5, 5, 0, None)
    );
    let first_stats = first.finish();
    assert_eq!((first_stats.steps_sent, first_stats.error), (1, None));
    let (code, _, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    let (trace, info) = stream::load(&path, TraceLimits::default()).expect("the file opens");
    assert_eq!(trace.step_count(), 5);
    assert_eq!(info.engine, "second");
    assert_eq!(info.bye, Some((5, 0)));
}
