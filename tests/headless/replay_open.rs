//! Opening a recording file off the UI thread ([`LoadJob`]): it loads and rebuilds exactly
//! what was saved, reports progress, stops soon after a cancel, and refuses a damaged file
//! with its message. `Recording` is `Send` (checked at compile time).

use aabb_debugger::replay::file::{LoadControl, LoadJob, LoadOutcome};
use aabb_debugger::replay::{KeyframePolicy, Recording};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::replay as replay_common;

/// Waits (bounded) for the job to end.
fn wait_end(job: &LoadJob, limit: Duration) -> Duration {
    let start = Instant::now();
    while !job.is_finished() {
        assert!(start.elapsed() < limit, "not ended within {limit:?}");
        std::thread::sleep(Duration::from_millis(1));
    }
    start.elapsed()
}

#[test]
fn a_recording_and_what_rebuilding_it_gives_are_send() {
    fn is_send<T: Send>() {}
    is_send::<Recording>();
    is_send::<aabb_debugger::scene::Simulation>();
    is_send::<LoadJob>();
}

#[test]
fn a_job_loads_and_rebuilds_the_saved_recording() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("r.rec");
    let saved = replay_common::record(&path, 40);
    let job = LoadJob::start(&path, KeyframePolicy::default()).expect("started");
    wait_end(&job, Duration::from_secs(120));
    let p = job.progress();
    let size = std::fs::metadata(&path).expect("the file").len();
    assert_eq!((p.bytes_read, p.bytes_total), (size, size));
    assert_eq!((p.steps_done, p.steps_total), (41, 41));
    assert!((p.share() - 1.0).abs() < 1e-6);
    let Ok(LoadOutcome::Loaded(loaded)) = job.wait() else {
        panic!("loaded");
    };
    assert_eq!(loaded.recording.steps(), saved.steps());
    assert_eq!(loaded.recording.edits(), saved.edits());
    assert_eq!(loaded.sim.step_index(), 40);
    let at_end = saved.state_at(40).expect("step 40");
    assert_eq!(loaded.sim.structure_hash(), at_end.structure_hash());
}

#[test]
fn a_job_cancelled_before_it_starts_reads_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("r.rec");
    replay_common::record(&path, 5);
    let control = Arc::new(LoadControl::default());
    control.cancel();
    let job = LoadJob::start_with(&path, KeyframePolicy::default(), control).expect("started");
    assert!(matches!(job.wait(), Ok(LoadOutcome::Cancelled)));
}

#[test]
fn a_cancel_stops_the_rebuild_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("long.rec");
    let steps = 3000;
    replay_common::record(&path, steps);
    let job = LoadJob::start(&path, KeyframePolicy::default()).expect("started");
    let start = Instant::now();
    while job.progress().steps_done < 5 {
        assert!(!job.is_finished(), "ended before 5 steps were rebuilt");
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(1));
    }
    job.cancel();
    // The rule is one step (about 2 ms at 10,000 spheres, far less here); a wide margin
    // for a busy machine.
    let took = wait_end(&job, Duration::from_secs(10));
    assert!(took < Duration::from_millis(1000), "{took:?}");
    let p = job.progress();
    assert!(p.steps_done < steps + 1, "{p:?}");
    assert!(matches!(job.wait(), Ok(LoadOutcome::Cancelled)));
}

#[test]
fn a_truncated_file_is_refused_with_its_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("r.rec");
    replay_common::record(&path, 10);
    let bytes = std::fs::read(&path).expect("read");
    std::fs::write(&path, &bytes[..bytes.len() - 7]).expect("write");
    let job = LoadJob::start(&path, KeyframePolicy::default()).expect("started");
    let Err(e) = job.wait() else {
        panic!("refused");
    };
    let message = e.to_string();
    assert!(
        message.starts_with(&format!(
            "{}: the file is truncated: the header says 11 steps",
            path.display()
        )),
        "{message}"
    );
}
