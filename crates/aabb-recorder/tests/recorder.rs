//! The Rust recorder end to end: to a file, to a writer and to a loopback socket, what is
//! decoded equals what was added, box for box, at every step; a full queue drops whole
//! steps and the next one sent is a keyframe; a debugger that closes or stops reading costs
//! steps, not the engine's loop; `exact` loses nothing; bad boxes are left out and counted.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use aabb_recorder::{
    Decoder, Hello, Limits, Options, Recorder, StepStatus, StepUpdate, StreamState, Target, WireBox,
};

/// What a test needs of the machine (here `/dev/full`): the workspace's one helper.
#[path = "../../../tests/common/needs.rs"]
mod needs;

/// A writer into a shared `Vec<u8>`.
#[derive(Clone, Default)]
struct SharedVec(Arc<Mutex<Vec<u8>>>);

impl Write for SharedVec {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("not poisoned").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SharedVec {
    fn bytes(&self) -> Vec<u8> {
        self.0.lock().expect("not poisoned").clone()
    }
}

/// A writer that blocks until its gate opens.
#[derive(Clone, Default)]
struct GatedVec {
    out: SharedVec,
    gate: Arc<(Mutex<bool>, Condvar)>,
}

impl GatedVec {
    fn open(&self) {
        *self.gate.0.lock().expect("not poisoned") = true;
        self.gate.1.notify_all();
    }
}

impl Write for GatedVec {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut open = self.gate.0.lock().expect("not poisoned");
        while !*open {
            open = self.gate.1.wait(open).expect("not poisoned");
        }
        self.out.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Every step of a stream, and its error if any.
fn decode(bytes: impl Read) -> (StreamState, Vec<StepUpdate>, Option<String>) {
    let mut d = Decoder::new(bytes, Limits::default());
    let mut s = StreamState::new(Limits::default());
    let mut out = Vec::new();
    loop {
        match s.next_step(&mut d) {
            Ok(Some(u)) => out.push(u),
            Ok(None) => return (s, out, None),
            Err(e) => return (s, out, Some(e.to_string())),
        }
    }
}

fn bx(id: u32, x: f32, y: f32) -> WireBox {
    WireBox {
        id,
        min: [x, y, 0.0],
        max: [x + 1.0, y + 0.5, 0.0],
    }
}

/// What a scene adds at `step`, in order: a moving crowd whose members come and go, added in
/// the same order most steps, reversed on some, with one appended each step.
fn scene(step: u32) -> Vec<WireBox> {
    let mut boxes = Vec::new();
    for i in 0..300u32 {
        // Box i is away for 5 steps out of 40, starting at a step of its own.
        if (step + i * 7) % 40 < 5 {
            continue;
        }
        // Some boxes stand still on some steps (not listed as moved).
        let t = if i % 3 == 0 { step / 4 } else { step };
        boxes.push(bx(i * 2 + 1, i as f32 + t as f32 * 0.25, (i % 17) as f32));
    }
    if step % 10 == 9 {
        boxes.reverse();
    }
    // A spawner: one more box every step, appended.
    for k in 0..step.min(50) {
        boxes.push(bx(10_000 + k, k as f32, -3.0));
    }
    boxes
}

fn sorted(mut boxes: Vec<WireBox>) -> Vec<WireBox> {
    boxes.sort_by_key(|b| b.id);
    boxes
}

fn hello() -> Hello {
    Hello::new("test engine", 2, 1.0 / 60.0)
}

fn add_all(rec: &mut Recorder, boxes: &[WireBox]) {
    for b in boxes {
        rec.add_box_2d(b.id, [b.min[0], b.min[1]], [b.max[0], b.max[1]]);
    }
}

#[test]
fn a_file_holds_every_step_box_for_box() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("run.aabbstream");
    let mut rec = Recorder::to_file(&path, hello()).expect("creates the file");
    assert_eq!(rec.target(), Target::File(path.clone()));
    let walls = [(5_000u32, [-10.0f32, -10.0], [110.0f32, -9.0])];
    for (id, min, max) in walls {
        rec.static_box(id, &min, &max);
    }
    for step in 0..120 {
        rec.begin_step();
        add_all(&mut rec, &scene(step));
        assert_eq!(rec.end_step(), StepStatus::Queued);
    }
    let stats = rec.finish();
    assert_eq!(
        (
            stats.steps,
            stats.steps_sent,
            stats.steps_dropped,
            stats.boxes_rejected
        ),
        (120, 120, 0, 0)
    );
    assert_eq!(stats.error, None);

    let bytes = std::fs::read(&path).expect("reads the file");
    assert_eq!(stats.bytes_sent, bytes.len() as u64);
    let (state, steps, err) = decode(&bytes[..]);
    assert_eq!(err, None);
    assert_eq!(state.hello(), Some(&hello()));
    assert_eq!(
        state.statics(),
        &[WireBox {
            id: 5_000,
            min: [-10.0, -10.0, 0.0],
            max: [110.0, -9.0, 0.0]
        }]
    );
    assert_eq!(steps.len(), 120);
    for (k, u) in steps.iter().enumerate() {
        assert_eq!(u.step, k as u64);
        assert_eq!(u.keyframe, k == 0);
        assert_eq!(u.dropped_before, 0);
        assert_eq!(*u.boxes, sorted(scene(k as u32)), "step {k}");
    }
    // Boxes standing still are not sent again: step 1 moves the 200 boxes not divisible
    // by 3 that are there at steps 0 and 1, and those of the spawner do not move.
    let here = |s: u32, i: u32| (s + i * 7) % 40 >= 5;
    let moved = (0..300)
        .filter(|i| i % 3 != 0 && here(0, *i) && here(1, *i))
        .count();
    assert_eq!(steps[1].moved, moved as u32);
    let bye = state.bye().expect("a clean end");
    assert_eq!((bye.steps_sent, bye.steps_dropped), (120, 0));
}

#[test]
fn a_loopback_socket_gets_every_step_box_for_box() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("an address");
    let debugger = thread::spawn(move || {
        let (conn, _) = listener.accept().expect("a connection");
        decode(conn)
    });
    let hello3 = Hello::new("3d engine", 3, 0.01).with_units("cm");
    let mut rec = Recorder::connect(addr, hello3.clone()).expect("connects");
    assert_eq!(rec.target(), Target::Socket(addr));
    let mut expected = Vec::new();
    for step in 0..200u32 {
        rec.begin_step();
        let boxes: Vec<WireBox> = scene(step)
            .into_iter()
            .map(|mut b| {
                b.min[2] = -(b.id as f32);
                b.max[2] = step as f32;
                b
            })
            .collect();
        for b in &boxes {
            rec.add_box(b.id, &b.min, &b.max);
        }
        rec.end_step();
        expected.push(sorted(boxes));
    }
    let stats = rec.finish();
    assert_eq!(
        (stats.steps_sent, stats.steps_dropped, stats.error),
        (200, 0, None)
    );
    let (state, steps, err) = debugger.join().expect("the debugger thread");
    assert_eq!(err, None);
    assert_eq!(state.hello(), Some(&hello3));
    assert_eq!(steps.len(), 200);
    for (k, (u, e)) in steps.iter().zip(&expected).enumerate() {
        assert_eq!(u.step, k as u64);
        assert_eq!(&*u.boxes, e, "step {k}");
    }
    assert!(state.bye().is_some());
}

#[test]
fn a_full_queue_drops_whole_steps_and_the_next_is_a_keyframe() {
    let out = GatedVec::default();
    // The handshake (37 bytes) is held in the blocked writer; step 0 (4 boxes: 106 bytes)
    // fits beside it, step 1 does not; steps 3 and 4 fit together.
    let options = Options {
        buffer_bytes: 220,
        ..Options::default()
    };
    let mut rec = Recorder::to_writer_with(out.clone(), hello(), options).expect("starts");
    let set = |t: f32| (1..=4).map(|id| bx(id, t, 0.0)).collect::<Vec<_>>();
    let mut statuses = Vec::new();
    for step in 0..3 {
        rec.begin_step();
        add_all(&mut rec, &set(step as f32));
        statuses.push(rec.end_step());
    }
    assert_eq!(
        statuses,
        [StepStatus::Queued, StepStatus::Dropped, StepStatus::Dropped]
    );
    let s = rec.stats();
    assert_eq!((s.steps, s.steps_sent, s.steps_dropped), (3, 1, 2));
    out.open();
    // Wait for the queue to drain.
    let deadline = Instant::now() + Duration::from_secs(10);
    while rec.stats().bytes_sent < 37 + 106 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(rec.stats().bytes_sent, 37 + 106);
    for step in 3..5 {
        rec.begin_step();
        add_all(&mut rec, &set(step as f32));
        statuses.push(rec.end_step());
    }
    assert_eq!(statuses[3..], [StepStatus::Queued, StepStatus::Queued]);
    let stats = rec.finish();
    assert_eq!(
        (stats.steps, stats.steps_sent, stats.steps_dropped),
        (5, 3, 2)
    );

    let (state, steps, err) = decode(&out.out.bytes()[..]);
    assert_eq!(err, None);
    let seen: Vec<(u64, bool, u64, u32)> = steps
        .iter()
        .map(|u| (u.step, u.keyframe, u.dropped_before, u.moved))
        .collect();
    // Step 3 is a keyframe after the gap; step 4 a delta moving the 4 boxes.
    assert_eq!(seen, [(0, true, 0, 0), (3, true, 2, 4), (4, false, 0, 4)]);
    for u in &steps {
        assert_eq!(*u.boxes, set(u.step as f32));
    }
    assert_eq!(state.steps_dropped(), 2);
    let bye = state.bye().expect("a clean end");
    assert_eq!((bye.steps_sent, bye.steps_dropped), (3, 2));
}

#[test]
fn exact_mode_waits_and_loses_nothing() {
    let out = GatedVec::default();
    let options = Options {
        buffer_bytes: 200,
        exact: true,
        ..Options::default()
    };
    let mut rec = Recorder::to_writer_with(out.clone(), hello(), options).expect("starts");
    let opener = {
        let out = out.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(100));
            out.open();
        })
    };
    for step in 0..50u32 {
        rec.begin_step();
        add_all(&mut rec, &scene(step)[..6]);
        assert_eq!(rec.end_step(), StepStatus::Queued);
    }
    let stats = rec.finish();
    opener.join().expect("the opener");
    assert_eq!((stats.steps_sent, stats.steps_dropped), (50, 0));
    let (_, steps, err) = decode(&out.out.bytes()[..]);
    assert_eq!(err, None);
    assert_eq!(steps.len(), 50);
    for (k, u) in steps.iter().enumerate() {
        assert_eq!(*u.boxes, sorted(scene(k as u32)[..6].to_vec()));
    }
}

#[test]
fn the_debugger_closing_mid_stream_costs_steps_not_the_loop() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("an address");
    let debugger = thread::spawn(move || {
        let (conn, _) = listener.accept().expect("a connection");
        let mut d = Decoder::new(conn, Limits::default());
        let mut s = StreamState::new(Limits::default());
        for _ in 0..5 {
            s.next_step(&mut d)
                .expect("a valid stream")
                .expect("a step");
        }
        // Closes the connection after 5 steps.
    });
    let mut rec = Recorder::connect(addr, hello()).expect("connects");
    let big: Vec<WireBox> = (0..2_000).map(|i| bx(i, i as f32, 0.0)).collect();
    let start = Instant::now();
    let mut steps = 0u64;
    while rec.stats().error.is_none() && start.elapsed() < Duration::from_secs(20) {
        rec.begin_step();
        for b in &big {
            rec.add_box_2d(
                b.id,
                [b.min[0] + steps as f32, b.min[1]],
                [b.max[0] + steps as f32, b.max[1]],
            );
        }
        rec.end_step();
        steps += 1;
        thread::sleep(Duration::from_millis(1));
    }
    debugger.join().expect("the debugger thread");
    // The loop goes on after the loss: these steps are counted dropped.
    for _ in 0..10 {
        rec.begin_step();
        add_all(&mut rec, &big);
        assert_eq!(rec.end_step(), StepStatus::Dropped);
    }
    let stats = rec.finish();
    let error = stats.error.clone().expect("the loss is reported");
    assert!(
        error.starts_with(&format!(
            "writing to the debugger at {addr}: the connection was closed"
        )),
        "{error}"
    );
    assert!(!stats.connected);
    assert_eq!(stats.steps, steps + 10);
    assert_eq!(stats.steps_sent + stats.steps_dropped, stats.steps);
    assert!(stats.steps_dropped >= 10);
    assert!(stats.steps_sent >= 5, "{stats:?}");
}

#[test]
fn a_debugger_that_stops_reading_is_given_up_within_the_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("an address");
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let debugger = thread::spawn(move || {
        // Accepts, reads nothing, and holds the connection until the test ends.
        let (_conn, _) = listener.accept().expect("a connection");
        let _ = rx.recv_timeout(Duration::from_secs(30));
    });
    let options = Options {
        buffer_bytes: 1 << 20,
        timeout: Duration::from_secs(2),
        ..Options::default()
    };
    let mut rec = Recorder::connect_with(addr, hello(), options).expect("connects");
    let big: Vec<WireBox> = (0..20_000).map(|i| bx(i, i as f32, 0.0)).collect();
    let start = Instant::now();
    let mut longest = Duration::ZERO;
    let mut n = 0;
    while rec.stats().error.is_none() && start.elapsed() < Duration::from_secs(20) {
        let t = Instant::now();
        rec.begin_step();
        for b in &big {
            rec.add_box_2d(b.id, [b.min[0] + n as f32, 0.0], [b.max[0] + n as f32, 0.5]);
        }
        rec.end_step();
        longest = longest.max(t.elapsed());
        n += 1;
    }
    let stats = rec.stats();
    let error = stats.error.clone().expect("the stall is reported");
    assert_eq!(
        error,
        format!(
            "writing to the debugger at {addr}: no progress within the timeout (it stopped reading)"
        )
    );
    assert!(stats.steps_dropped > 0);
    // The engine's thread never waited on the socket (a write blocks up to 2 s).
    assert!(longest < Duration::from_secs(1), "a step took {longest:?}");
    let t = Instant::now();
    drop(rec);
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "drop took {:?}",
        t.elapsed()
    );
    let _ = tx.send(());
    debugger.join().expect("the debugger thread");
}

#[test]
fn finish_cuts_a_stalled_connection_after_the_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("an address");
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let debugger = thread::spawn(move || {
        let (_conn, _) = listener.accept().expect("a connection");
        let _ = rx.recv_timeout(Duration::from_secs(30));
    });
    let options = Options {
        timeout: Duration::from_millis(400),
        ..Options::default()
    };
    let mut rec = Recorder::connect_with(addr, hello(), options).expect("connects");
    // 80 MB sent, more than the socket's buffers (at most 37 MB here) hold.
    let big: Vec<WireBox> = (0..100_000).map(|i| bx(i, i as f32, 0.0)).collect();
    for n in 0..40 {
        rec.begin_step();
        for b in &big {
            rec.add_box_2d(b.id, [b.min[0] + n as f32, 0.0], [b.max[0] + n as f32, 0.5]);
        }
        rec.end_step();
    }
    let t = Instant::now();
    let stats = rec.finish();
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "finish took {:?}",
        t.elapsed()
    );
    // A stalled debugger is said as such, never as a closed connection.
    let error = stats.error.clone().expect("said");
    assert!(
        error
            == format!(
                "writing to the debugger at {addr}: no progress within the timeout (it \
                 stopped reading)"
            )
            || (error.starts_with(&format!(
                "closing: the debugger at {addr} took nothing more within the timeout \
                 (400ms); "
            )) && error.ends_with(" steps not written were cut")),
        "{error}"
    );
    assert!(stats.steps_dropped > 0);
    assert_eq!(stats.steps_sent + stats.steps_dropped, 40);
    let _ = tx.send(());
    debugger.join().expect("the debugger thread");
}

#[test]
fn bad_boxes_are_left_out_and_counted() {
    let out = SharedVec::default();
    let mut rec = Recorder::to_writer(out.clone(), hello()).expect("starts");
    rec.add_box_2d(1, [0.0, 0.0], [1.0, 1.0]); // outside a step
    rec.static_box(50, &[0.0, 0.0], &[1.0, 1.0]);
    rec.static_box(50, &[0.0, 0.0], &[2.0, 1.0]); // twice
    rec.static_box(51, &[0.0, 0.0, 0.0], &[1.0, 1.0, 1.0]); // 3D in 2D
    rec.static_box(52, &[3.0, 0.0], &[1.0, 1.0]); // min > max
    let mut expected: Vec<Vec<WireBox>> = Vec::new();
    let mut rejected = 4;
    for step in 0..6u32 {
        rec.begin_step();
        let t = step as f32;
        // Ids 1..=4 in order, then step-specific trouble.
        for id in 1..=4 {
            rec.add_box_2d(id, [t, 0.0], [t + 1.0, 1.0]);
        }
        rec.add_box_2d(2, [9.0, 9.0], [9.5, 9.5]); // twice (appended phase)
        rec.add_box_2d(5, [f32::NAN, 0.0], [1.0, 1.0]);
        rec.add_box_2d(6, [0.0, 0.0], [f32::INFINITY, 1.0]);
        rec.add_box_2d(7, [2.0, 0.0], [1.0, 1.0]);
        rec.add_box_2d(50, [0.0, 0.0], [1.0, 1.0]); // a static box's id
        rec.add_box_3d(8, [0.0; 3], [1.0; 3]); // 3D in 2D
        rec.add_box(9, &[0.0], &[1.0]); // one coordinate
        rejected += 7;
        if step % 2 == 1 {
            // Shuffled: the fallback sees id 3 twice and id 50.
            rec.add_box_2d(3, [7.0, 7.0], [8.0, 8.0]);
            rejected += 1;
        }
        rec.end_step();
        expected.push(
            (1..=4)
                .map(|id| bx(id, t, 0.0))
                .map(|mut b| {
                    b.max[1] = 1.0;
                    b
                })
                .collect(),
        );
        // A shuffled step: ids reversed, and a duplicate and a static id in the middle.
        rec.begin_step();
        for id in [4, 3, 3, 50, 2, 1] {
            rec.add_box_2d(id, [t, 1.0], [t + 1.0, 2.0]);
        }
        rejected += 2;
        rec.end_step();
        let mut e: Vec<WireBox> = (1..=4)
            .map(|id| WireBox {
                id,
                min: [t, 1.0, 0.0],
                max: [t + 1.0, 2.0, 0.0],
            })
            .collect();
        e.sort_by_key(|b| b.id);
        expected.push(e);
    }
    let stats = rec.finish();
    assert_eq!(stats.boxes_rejected, rejected);
    assert_eq!(
        stats.last_rejection.as_deref(),
        Some("box 50 has a static box's id")
    );
    assert_eq!((stats.steps_sent, stats.steps_dropped), (12, 0));
    let (state, steps, err) = decode(&out.bytes()[..]);
    assert_eq!(err, None);
    assert_eq!(state.statics().len(), 1);
    let got: Vec<Vec<WireBox>> = steps.into_iter().map(|u| u.boxes.to_vec()).collect();
    assert_eq!(got, expected);
}

#[test]
fn misuse_is_counted_not_raised() {
    let out = SharedVec::default();
    let mut rec = Recorder::to_writer(out.clone(), hello()).expect("starts");
    assert_eq!(rec.end_step(), StepStatus::NoStep);
    rec.begin_step();
    rec.add_box_2d(1, [0.0, 0.0], [1.0, 1.0]);
    // A second begin ends the open step.
    rec.begin_step();
    rec.add_box_2d(1, [1.0, 0.0], [2.0, 1.0]);
    rec.static_box(9, &[0.0, 0.0], &[1.0, 1.0]);
    let stats = rec.finish();
    assert_eq!(
        stats.last_rejection.as_deref(),
        Some("static box 9 added after the first step")
    );
    assert_eq!(
        (stats.steps, stats.steps_sent, stats.boxes_rejected),
        (2, 2, 1)
    );
    // finish ended the open step; a second finish changes nothing.
    assert_eq!(rec.finish(), stats);
    let (_, steps, err) = decode(&out.bytes()[..]);
    assert_eq!(err, None);
    let sets: Vec<Vec<WireBox>> = steps.into_iter().map(|u| u.boxes.to_vec()).collect();
    let b = |x: f32| WireBox {
        id: 1,
        min: [x, 0.0, 0.0],
        max: [x + 1.0, 1.0, 0.0],
    };
    assert_eq!(sets, vec![vec![b(0.0)], vec![b(1.0)]]);
}

#[test]
fn connect_or_file_writes_the_file_when_no_debugger_listens() {
    // A port nobody listens on: bind one, note it, let it go.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("fallback.aabbstream");
    let mut rec =
        Recorder::connect_or_file(("127.0.0.1", port), &path, hello()).expect("falls back");
    assert_eq!(rec.target(), Target::File(path.clone()));
    rec.begin_step();
    rec.add_box_2d(3, [0.0, 0.0], [1.0, 1.0]);
    rec.end_step();
    drop(rec);
    let (_, steps, err) = decode(&std::fs::read(&path).expect("the file")[..]);
    assert_eq!(err, None);
    assert_eq!(steps.len(), 1);
    assert_eq!(
        *steps[0].boxes,
        vec![WireBox {
            id: 3,
            min: [0.0; 3],
            max: [1.0, 1.0, 0.0]
        }]
    );

    let mut bad = hello();
    bad.dt_secs = 0.0;
    let err = Recorder::connect_or_file(("127.0.0.1", port), &path, bad).err();
    assert_eq!(
        err.map(|e| e.to_string()),
        Some("dt 0 s (it must be finite, > 0 and <= 1)".to_owned())
    );
}

#[test]
fn random_sets_round_trip_through_the_recorder() {
    // A deterministic pseudo-random walk over sets: ids come and go, order shuffles.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let out = SharedVec::default();
    let mut rec = Recorder::to_writer(out.clone(), hello()).expect("starts");
    let mut set: BTreeMap<u32, WireBox> = BTreeMap::new();
    let mut expected = Vec::new();
    for step in 0..300 {
        for _ in 0..(next() % 6) {
            let id = (next() % 64) as u32;
            if set.remove(&id).is_none() {
                set.insert(id, bx(id, (next() % 100) as f32, step as f32));
            }
        }
        for b in set.values_mut() {
            if next() % 3 == 0 {
                b.min[0] += 1.0;
                b.max[0] += 1.0;
            }
        }
        let mut order: Vec<WireBox> = set.values().copied().collect();
        if next() % 4 == 0 {
            let k = (next() as usize) % (order.len() + 1);
            order.rotate_left(k);
        }
        rec.begin_step();
        add_all(&mut rec, &order);
        rec.end_step();
        expected.push(set.values().copied().collect::<Vec<_>>());
    }
    let stats = rec.finish();
    assert_eq!((stats.steps_sent, stats.boxes_rejected), (300, 0));
    let (_, steps, err) = decode(&out.bytes()[..]);
    assert_eq!(err, None);
    let got: Vec<Vec<WireBox>> = steps.into_iter().map(|u| u.boxes.to_vec()).collect();
    assert_eq!(got, expected);
}

/// A FIFO made by `mkfifo` in a temp dir (its dir, its path).
#[cfg(target_os = "linux")]
fn fifo() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("pipe.aabbstream");
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .expect("runs mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
    (dir, path)
}

/// The read end of a FIFO, opened without waiting for a writer.
#[cfg(target_os = "linux")]
fn fifo_reader(path: &std::path::Path) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(0o4000) // O_NONBLOCK
        .open(path)
        .expect("opens the read end")
}

/// Everything a FIFO holds now (its writer may still have it open).
#[cfg(target_os = "linux")]
fn drain(reader: &mut std::fs::File) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return out,
            Err(e) => panic!("reading the FIFO: {e}"),
        }
    }
}

/// `steps` steps of `n` boxes, all moving.
fn crowd(rec: &mut Recorder, from: u32, steps: u32, n: u32) {
    for step in from..from + steps {
        rec.begin_step();
        for i in 0..n {
            let x = i as f32 + step as f32 * 0.5;
            rec.add_box_2d(i, [x, 0.0], [x + 1.0, 0.5]);
        }
        rec.end_step();
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_fifo_with_no_reader_is_an_error_at_once() {
    let (_dir, path) = fifo();
    let t = Instant::now();
    let err = Recorder::to_file(&path, hello()).err().expect("refused");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: a FIFO that no process reads (opened without waiting: No such device or \
             address (os error 6))",
            path.display()
        )
    );
    // connect_or_file with no debugger: the same error, at once.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let err = Recorder::connect_or_file(("127.0.0.1", port), &path, hello())
        .err()
        .expect("refused");
    assert!(
        err.to_string().contains("a FIFO that no process reads"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

#[cfg(target_os = "linux")]
#[test]
fn a_fifo_whose_reader_stops_is_given_up_and_counts_what_it_lost() {
    let (_dir, path) = fifo();
    let mut reader = fifo_reader(&path);
    let timeout = Duration::from_millis(300);
    let options = Options {
        timeout,
        ..Options::default()
    };
    let mut rec = Recorder::to_file_with(&path, hello(), options).expect("opens the FIFO");
    // 30 steps of 40 kB: far more than the pipe's 64 kB.
    let t = Instant::now();
    crowd(&mut rec, 0, 30, 2_000);
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "steps took {:?}",
        t.elapsed()
    );
    // The writer gives the FIFO up after the timeout without progress.
    let deadline = Instant::now() + Duration::from_secs(10);
    while rec.stats().connected && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    let t = Instant::now();
    let stats = rec.finish();
    assert!(
        t.elapsed() < timeout + Duration::from_secs(1),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(
        stats.error.as_deref(),
        Some(
            format!(
                "writing to {}: no progress within the timeout (it stopped reading)",
                path.display()
            )
            .as_str()
        )
    );
    let (_, steps, err) = decode(&drain(&mut reader)[..]);
    assert!(err.is_some(), "the last frame is cut");
    let delivered = steps.len() as u64;
    assert!(delivered < 30);
    assert_eq!(
        (stats.steps, stats.steps_sent, stats.steps_dropped),
        (30, delivered, 30 - delivered)
    );
}

#[cfg(target_os = "linux")]
#[test]
fn finish_leaves_a_stalled_fifo_within_the_timeout() {
    let (_dir, path) = fifo();
    let mut reader = fifo_reader(&path);
    let timeout = Duration::from_millis(400);
    let options = Options {
        timeout,
        ..Options::default()
    };
    let mut rec = Recorder::to_file_with(&path, hello(), options).expect("opens the FIFO");
    crowd(&mut rec, 0, 30, 2_000);
    let t = Instant::now();
    let stats = rec.finish();
    assert!(
        t.elapsed() < timeout + Duration::from_secs(1),
        "{:?}",
        t.elapsed()
    );
    let error = stats.error.clone().expect("said");
    let stalled = format!(
        "writing to {}: no progress within the timeout (it stopped reading)",
        path.display()
    );
    assert!(
        error == stalled
            || (error.starts_with(&format!(
                "closing: {} took nothing more within the timeout (400ms); ",
                path.display()
            )) && error.ends_with(" steps not written were cut")),
        "{error}"
    );
    let (_, steps, _) = decode(&drain(&mut reader)[..]);
    let delivered = steps.len() as u64;
    assert_eq!(
        (stats.steps, stats.steps_sent, stats.steps_dropped),
        (30, delivered, 30 - delivered)
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_fifo_reader_that_exits_costs_steps_not_the_process() {
    let (_dir, path) = fifo();
    let reader = fifo_reader(&path);
    let mut rec = Recorder::to_file(&path, hello()).expect("opens the FIFO");
    drop(reader);
    crowd(&mut rec, 0, 10, 100);
    let stats = rec.finish();
    assert_eq!(
        stats.error.as_deref(),
        Some(
            format!(
                "writing to {}: its reader went away (Broken pipe (os error 32))",
                path.display()
            )
            .as_str()
        )
    );
    assert_eq!(
        (stats.steps, stats.steps_sent, stats.steps_dropped),
        (10, 0, 10)
    );
    assert!(!stats.connected);
}

/// A debugger that reads `keep` steps of the stream, then writes `line` (if any) and
/// closes; its thread returns the steps it read.
fn refusing_debugger(
    keep: usize,
    line: Option<&'static str>,
) -> (std::net::SocketAddr, thread::JoinHandle<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("an address");
    let handle = thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("a connection");
        let mut read = 0;
        if keep > 0 {
            let mut d = Decoder::new(conn.try_clone().expect("a clone"), Limits::default());
            let mut s = StreamState::new(Limits::default());
            while read < keep {
                s.next_step(&mut d)
                    .expect("a valid stream")
                    .expect("a step");
                read += 1;
            }
        }
        if let Some(line) = line {
            conn.write_all(line.as_bytes()).expect("writes the refusal");
        }
        read
    });
    (addr, handle)
}

/// Waits (at most 10 s) until the recorder says it left the debugger.
fn await_fallback(rec: &Recorder) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while rec.stats().fallback.is_none() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
}

/// Ends steps `from..from + steps` of 50 boxes, each once the writer took the last (so
/// that none is dropped for a full queue).
fn paced_crowd(rec: &mut Recorder, from: u32, steps: u32) {
    for step in from..from + steps {
        let before = rec.stats().bytes_sent;
        crowd(rec, step, 1, 50);
        let deadline = Instant::now() + Duration::from_secs(10);
        while rec.stats().bytes_sent == before && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
    }
}

fn fifty(step: u64) -> Vec<WireBox> {
    (0..50)
        .map(|i| {
            let x = i as f32 + step as f32 * 0.5;
            WireBox {
                id: i,
                min: [x, 0.0, 0.0],
                max: [x + 1.0, 0.5, 0.0],
            }
        })
        .collect()
}

#[test]
fn a_refusing_debugger_sends_the_whole_stream_to_the_file() {
    let (addr, debugger) = refusing_debugger(4, Some("AABB refused: another engine is live\n"));
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("refused.aabbstream");
    let mut rec = Recorder::connect_or_file(addr, &path, hello()).expect("connects");
    assert_eq!(rec.target(), Target::Socket(addr));
    rec.static_box(77, &[-5.0, -5.0], &[5.0, -4.0]);
    crowd(&mut rec, 0, 4, 50);
    assert_eq!(debugger.join().expect("the debugger"), 4);
    await_fallback(&rec);
    crowd(&mut rec, 4, 6, 50);
    let stats = rec.finish();
    let bytes = std::fs::read(&path).expect("the fallback file");
    assert_eq!(
        stats.fallback.as_deref(),
        Some(
            format!(
                "the debugger at {addr} refused the stream: another engine is live; the \
                 stream goes on in {}",
                path.display()
            )
            .as_str()
        )
    );
    assert_eq!(stats.target, Target::File(path.clone()));
    // What the debugger was sent is replayed into the file: nothing is lost.
    assert_eq!(
        (
            stats.steps,
            stats.steps_sent,
            stats.steps_dropped,
            stats.steps_refused
        ),
        (10, 10, 0, 0)
    );
    assert_eq!(stats.error, None);
    assert_eq!(stats.bytes_sent, bytes.len() as u64);
    let (state, steps, err) = decode(&bytes[..]);
    assert_eq!(err, None);
    assert_eq!(state.hello(), Some(&hello()));
    assert_eq!(
        state.statics(),
        &[WireBox {
            id: 77,
            min: [-5.0, -5.0, 0.0],
            max: [5.0, -4.0, 0.0]
        }]
    );
    let seen: Vec<(u64, bool, u64)> = steps
        .iter()
        .map(|u| (u.step, u.keyframe, u.dropped_before))
        .collect();
    assert_eq!(seen, (0..10u64).map(|k| (k, k == 0, 0)).collect::<Vec<_>>());
    for u in &steps {
        assert_eq!(*u.boxes, fifty(u.step), "step {}", u.step);
    }
    let bye = state.bye().expect("a clean end");
    assert_eq!((bye.steps_sent, bye.steps_dropped), (10, 0));
}

#[test]
fn a_refusal_past_the_replay_budget_loses_the_steps_sent_and_says_so() {
    let (addr, debugger) = refusing_debugger(4, Some("AABB refused: another engine is live\n"));
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("refused.aabbstream");
    // Steps of 1 kB against 3 kB kept to replay: step 2 is past it.
    let options = Options {
        buffer_bytes: 3_000,
        ..Options::default()
    };
    let mut rec = Recorder::connect_or_file_with(addr, &path, hello(), options).expect("connects");
    rec.static_box(77, &[-5.0, -5.0], &[5.0, -4.0]);
    paced_crowd(&mut rec, 0, 4);
    assert_eq!(debugger.join().expect("the debugger"), 4);
    await_fallback(&rec);
    paced_crowd(&mut rec, 4, 6);
    let stats = rec.finish();
    let bytes = std::fs::read(&path).expect("the fallback file");
    assert_eq!(
        (
            stats.steps,
            stats.steps_sent,
            stats.steps_dropped,
            stats.steps_refused
        ),
        (10, 6, 4, 4)
    );
    assert_eq!((stats.error, stats.bytes_sent), (None, bytes.len() as u64));
    let (state, steps, err) = decode(&bytes[..]);
    assert_eq!(err, None);
    assert_eq!(state.statics().len(), 1);
    let seen: Vec<(u64, bool, u64)> = steps
        .iter()
        .map(|u| (u.step, u.keyframe, u.dropped_before))
        .collect();
    assert_eq!(
        seen,
        [
            (4, true, 4),
            (5, false, 0),
            (6, false, 0),
            (7, false, 0),
            (8, false, 0),
            (9, false, 0)
        ]
    );
    for u in &steps {
        assert_eq!(*u.boxes, fifty(u.step), "step {}", u.step);
    }
    let bye = state.bye().expect("a clean end");
    assert_eq!((bye.steps_sent, bye.steps_dropped), (6, 4));
}

#[test]
fn a_fast_engine_refused_after_its_end_still_writes_its_file() {
    // The debugger refuses at once, reading nothing; the engine ends 70 steps before or
    // after the refusal arrives.
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("an address");
    let debugger = thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("a connection");
        conn.write_all(b"AABB refused: another engine is live\n")
            .expect("writes the refusal");
    });
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("fast.aabbstream");
    let mut rec = Recorder::connect_or_file(addr, &path, hello()).expect("connects");
    crowd(&mut rec, 0, 70, 5);
    let stats = rec.finish();
    debugger.join().expect("the debugger");
    assert_eq!(stats.target, Target::File(path.clone()));
    assert_eq!(
        (
            stats.steps,
            stats.steps_sent,
            stats.steps_dropped,
            stats.error
        ),
        (70, 70, 0, None)
    );
    let (_, steps, err) = decode(&std::fs::read(&path).expect("the file")[..]);
    assert_eq!(err, None);
    assert_eq!(steps.len(), 70);
}

#[test]
fn a_debugger_closing_before_the_end_sends_the_stream_to_the_file() {
    let (addr, debugger) = refusing_debugger(2, None);
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("closed.aabbstream");
    let mut rec = Recorder::connect_or_file(addr, &path, hello()).expect("connects");
    crowd(&mut rec, 0, 2, 10);
    assert_eq!(debugger.join().expect("the debugger"), 2);
    await_fallback(&rec);
    crowd(&mut rec, 2, 3, 10);
    let stats = rec.finish();
    assert_eq!(
        stats.fallback.as_deref(),
        Some(
            format!(
                "the debugger at {addr} closed the connection before the stream's end; the \
                 stream goes on in {}",
                path.display()
            )
            .as_str()
        )
    );
    assert_eq!(
        (
            stats.steps,
            stats.steps_sent,
            stats.steps_dropped,
            stats.steps_refused
        ),
        (5, 5, 0, 0)
    );
    let (_, steps, err) = decode(&std::fs::read(&path).expect("the file")[..]);
    assert_eq!(err, None);
    let seen: Vec<(u64, bool, u64)> = steps
        .iter()
        .map(|u| (u.step, u.keyframe, u.dropped_before))
        .collect();
    // The two steps the debugger took are replayed into the file.
    assert_eq!(seen, (0..5u64).map(|k| (k, k == 0, 0)).collect::<Vec<_>>());
}

#[test]
fn a_refusal_without_a_fallback_stops_the_stream_and_says_why() {
    let (addr, debugger) = refusing_debugger(0, Some("AABB refused: not a recorder\n"));
    let mut rec = Recorder::connect(addr, hello()).expect("connects");
    debugger.join().expect("the debugger");
    let deadline = Instant::now() + Duration::from_secs(10);
    while rec.stats().connected && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    crowd(&mut rec, 0, 3, 10);
    let stats = rec.finish();
    assert_eq!(
        stats.error.as_deref(),
        Some(format!("the debugger at {addr} refused the stream: not a recorder").as_str())
    );
    assert_eq!(
        (stats.steps, stats.steps_sent, stats.steps_dropped),
        (3, 0, 3)
    );
    assert_eq!(stats.fallback, None);
}

#[test]
fn exact_mode_waits_at_most_the_timeout_for_room() {
    let out = GatedVec::default();
    let options = Options {
        buffer_bytes: 200,
        exact: true,
        timeout: Duration::from_millis(200),
    };
    let mut rec = Recorder::to_writer_with(out.clone(), hello(), options).expect("starts");
    let set = |t: f32| (1..=4).map(|id| bx(id, t, 0.0)).collect::<Vec<_>>();
    let t = Instant::now();
    let mut statuses = Vec::new();
    for step in 0..3 {
        rec.begin_step();
        add_all(&mut rec, &set(step as f32));
        statuses.push(rec.end_step());
    }
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(
        statuses,
        [StepStatus::Queued, StepStatus::Dropped, StepStatus::Dropped]
    );
    assert_eq!(
        rec.stats().last_rejection.as_deref(),
        Some("step 2: no room in the buffer within the timeout (200ms)")
    );
    // A caller's writer that never returns: finish still returns, counting it cut.
    let t = Instant::now();
    let stats = rec.finish();
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(
        (stats.steps, stats.steps_sent, stats.steps_dropped),
        (3, 0, 3)
    );
    assert_eq!(
        stats.error.as_deref(),
        Some(
            "closing: the writer took nothing more within the timeout (200ms); 1 steps not \
             written were cut"
        )
    );
    out.open();
}

#[test]
fn hostile_arguments_are_counted_with_short_messages() {
    let out = SharedVec::default();
    let mut rec = Recorder::to_writer(out.clone(), hello()).expect("starts");
    rec.begin_step();
    rec.add_box_2d(1, [0.0, 0.0], [1.0, 1.0]);
    let key = "x".repeat(1_000_000);
    rec.timing(&key, 1.0);
    assert_eq!(
        rec.stats().last_rejection,
        Some(format!(
            "timing key {:?}... is not 1 to 32 bytes of a-z, 0-9, _",
            "x".repeat(40)
        ))
    );
    rec.timing("k", f64::NAN);
    rec.timing("k2", f64::INFINITY);
    rec.fat_box(1, &[0.0], &[1.0, 1.0]);
    rec.fat_box(u32::MAX, &[0.0, 0.0], &[1.0, 1.0]); // not a box of the step
    rec.pair(1, 1);
    rec.add_box(2, &[], &[]);
    rec.add_box_3d(3, [0.0; 3], [1.0; 3]);
    assert_eq!(rec.end_step(), StepStatus::Queued);
    let s = rec.finish();
    assert_eq!(
        (s.steps_sent, s.boxes_rejected, s.parts_rejected),
        (1, 2, 6)
    );
    let (_, steps, err) = decode(&out.bytes()[..]);
    assert_eq!(err, None);
    assert_eq!(steps.len(), 1);
    assert_eq!(
        *steps[0].boxes,
        vec![WireBox {
            id: 1,
            min: [0.0; 3],
            max: [1.0, 1.0, 0.0]
        }]
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_costs_steps_and_says_so() {
    let path = std::path::Path::new("/dev/full");
    if needs::dev_full("to fill up").is_none() {
        return;
    }
    let mut rec = Recorder::to_file(path, hello()).expect("opens /dev/full");
    crowd(&mut rec, 0, 5, 10);
    let stats = rec.finish();
    assert_eq!(
        stats.error.as_deref(),
        Some("writing to /dev/full: No space left on device (os error 28)")
    );
    assert_eq!(
        (
            stats.steps,
            stats.steps_sent,
            stats.steps_dropped,
            stats.bytes_sent
        ),
        (5, 0, 5, 0)
    );
}

#[test]
fn connect_or_file_to_a_debugger_that_reads_it_all_writes_no_file() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("an address");
    let debugger = thread::spawn(move || {
        let (conn, _) = listener.accept().expect("a connection");
        let (state, steps, err) = decode(conn);
        // Closes once the stream ended.
        (state.bye().is_some(), steps.len(), err)
    });
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("unused.aabbstream");
    let mut rec = Recorder::connect_or_file(addr, &path, hello()).expect("connects");
    crowd(&mut rec, 0, 20, 30);
    let stats = rec.finish();
    assert_eq!(debugger.join().expect("the debugger"), (true, 20, None));
    assert_eq!(
        (
            stats.steps_sent,
            stats.steps_dropped,
            stats.target,
            stats.fallback,
            stats.error
        ),
        (20, 0, Target::Socket(addr), None, None)
    );
    assert!(!path.exists());
}

#[test]
fn a_refusal_that_comes_after_the_end_still_sends_the_stream_to_the_file() {
    // A debugger slow to refuse: the engine's 20 steps and BYE are written first.
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("an address");
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let debugger = thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("a connection");
        let _ = rx.recv_timeout(Duration::from_secs(10));
        thread::sleep(Duration::from_millis(100));
        conn.write_all(b"AABB refused: another engine is live\n")
            .expect("writes the refusal");
    });
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("late.aabbstream");
    let mut rec = Recorder::connect_or_file(addr, &path, hello()).expect("connects");
    crowd(&mut rec, 0, 20, 5);
    let sender = thread::spawn(move || {
        // The refusal goes once finish has begun.
        thread::sleep(Duration::from_millis(50));
        let _ = tx.send(());
    });
    let stats = rec.finish();
    sender.join().expect("the sender");
    debugger.join().expect("the debugger");
    assert_eq!(
        (
            stats.target,
            stats.steps,
            stats.steps_sent,
            stats.steps_dropped,
            stats.error
        ),
        (Target::File(path.clone()), 20, 20, 0, None)
    );
    let (state, steps, err) = decode(&std::fs::read(&path).expect("the file")[..]);
    assert_eq!((err, steps.len()), (None, 20));
    assert_eq!(
        state.bye().map(|b| (b.steps_sent, b.steps_dropped)),
        Some((20, 0))
    );
}
