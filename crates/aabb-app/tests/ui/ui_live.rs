//! UI test of the live link (egui_kittest): the window listens, an engine's recorder connects
//! and sends 100 steps, the live window counts them, and when the engine ends the stream the
//! steps are on the timeline; the tree at step 50 equals a headless run of the same stream;
//! File > "Save received stream…" keeps every step.

use aabb_app::{Command, DebuggerApp};
use aabb_model::broadphase::{BroadphaseKind, DEFAULT_PAIR_LIMIT};
use aabb_model::scene::Scene;
use aabb_model::stream::{self, read_stream};
use aabb_model::trace::{Stepper, TraceLimits, TraceSimulation};
use aabb_model::tree::TreeConfig;
use aabb_recorder::{Hello, Options, Recorder};
use eframe::egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::ui;

const STEPS: u32 = 100;

/// Box `id` of step `s`: 40 boxes circling at their own speeds, box 7 gone from step 30.
fn boxes(s: u32) -> Vec<(u32, [f32; 2], [f32; 2])> {
    (0..40u32)
        .filter(|&id| !(id == 7 && s >= 30))
        .map(|id| {
            let a = 0.02 * s as f32 * (1.0 + id as f32 * 0.1) + id as f32;
            let (x, y) = (10.0 + 6.0 * a.cos(), 10.0 + 6.0 * a.sin());
            (id, [x - 0.5, y - 0.5], [x + 0.5, y + 0.5])
        })
        .collect()
}

/// Sends the stream through the Rust recorder to `addr` (exactly: nothing dropped), and to
/// memory as the same bytes for the headless run.
fn send(addr: std::net::SocketAddr) -> Vec<u8> {
    let hello = Hello::new("ui test engine", 2, 1.0 / 60.0);
    let options = Options {
        exact: true,
        ..Options::default()
    };
    let mut live = Recorder::connect_with(addr, hello.clone(), options.clone()).expect("connect");
    let memory = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut copy =
        Recorder::to_writer_with(SharedVec(Arc::clone(&memory)), hello, options).expect("memory");
    for rec in [&mut live, &mut copy] {
        rec.static_box(1000, &[0.0, 0.0], &[20.0, 1.0]);
    }
    for s in 0..STEPS {
        for rec in [&mut live, &mut copy] {
            rec.begin_step();
            for (id, min, max) in boxes(s) {
                rec.add_box(id, &min, &max);
            }
            rec.end_step();
        }
    }
    let stats = live.finish();
    assert_eq!(stats.steps_sent, u64::from(STEPS), "{stats:?}");
    copy.finish();
    memory.lock().map(|v| v.clone()).expect("lock")
}

struct SharedVec(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for SharedVec {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_window_records_every_step_an_engine_streams_and_shows_the_headless_tree() {
    let mut h: Harness<'static, DebuggerApp> = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    h.state_mut().apply(
        Command::StartListening("127.0.0.1:0".parse().expect("addr")),
        false,
    );
    h.run_steps(2);
    let status = h.state().inspect().live_status().expect("listening");
    let addr = status.addr.expect("an address");
    assert_ne!(addr.port(), 0);
    assert_eq!(
        status.line(),
        format!("Waiting for an engine on {addr}: start it with its recorder.")
    );
    let engine = std::thread::spawn(move || send(addr));
    let started = Instant::now();
    while h.state().inspect().live_sessions_ended() == 0 {
        h.run_steps(1);
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "still live: {:?}",
            h.state().inspect().live_status()
        );
    }
    let bytes = engine.join().expect("the engine thread");
    h.run_steps(2);
    let app = h.state();
    assert!(
        app.inspect().error().is_none(),
        "{:?}",
        app.inspect().error()
    );
    assert!(app.inspect().sim().is_trace(), "{}", app.inspect().status());
    assert_eq!(app.inspect().recording().last_step(), u64::from(STEPS) - 1);
    assert!(
        app.inspect().status().starts_with(
            "Live session ended (the engine ended the stream): 100 steps received, showing \
             the last. Recorded from ui test engine."
        ),
        "{}",
        app.inspect().status()
    );
    h.state_mut().apply(Command::SeekTo(50), false);
    h.run_steps(2);
    assert_eq!(h.state().inspect().sim().step_index(), 50);
    let (trace, _) =
        read_stream(&bytes[..], "t", "memory", TraceLimits::default()).expect("the same stream");
    // File > Save received stream… keeps every step, box for box, with the engine's name.
    let dir = tempfile::tempdir().expect("temp dir");
    h.state_mut()
        .apply(Command::SaveStream(dir.path().join("kept")), false);
    let kept = dir.path().join("kept.aabbstream");
    assert!(
        h.state().inspect().status().starts_with(&format!(
            "Saved the 100 steps received from ui test engine to {}",
            kept.display()
        )),
        "{}",
        h.state().inspect().status()
    );
    let (saved, info) = stream::load(&kept, TraceLimits::default()).expect("the saved stream");
    assert_eq!(info.engine, "ui test engine");
    assert_eq!(saved.statics(), trace.statics());
    assert_eq!(saved.step_count(), trace.step_count());
    for k in 0..trace.step_count() {
        assert_eq!(saved.step(k), trace.step(k), "step {k}");
    }
    let mut sim = TraceSimulation::new(
        Arc::new(trace),
        BroadphaseKind::Tree,
        TreeConfig::default(),
        DEFAULT_PAIR_LIMIT,
    )
    .expect("starts");
    for _ in 0..50 {
        Stepper::step(&mut sim).expect("steps");
    }
    assert_eq!(
        h.state().inspect().sim().structure_hash(),
        sim.structure_hash()
    );
}

/// Reads the refusal line the debugger writes before it closes a peer.
fn refusal(conn: &mut std::net::TcpStream) -> String {
    use std::io::Read;
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut reply = Vec::new();
    // A reset after the line (the peer's own unread bytes) is no failure here.
    let _read = conn.read_to_end(&mut reply);
    String::from_utf8_lossy(&reply).into_owned()
}

/// Runs frames until `done` holds (at most 60 s), keeping the window live meanwhile; the
/// longest frame, to show the window never waited on the link.
fn frames_until(
    h: &mut Harness<'static, DebuggerApp>,
    mut done: impl FnMut(&Harness<'static, DebuggerApp>) -> bool,
) -> Duration {
    let started = Instant::now();
    let mut longest = Duration::ZERO;
    while !done(h) {
        let frame = Instant::now();
        h.run_steps(1);
        longest = longest.max(frame.elapsed());
        std::thread::sleep(Duration::from_millis(10));
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "not done: {:?}",
            h.state().inspect().live_status()
        );
    }
    longest
}

#[test]
fn the_window_keeps_listening_after_peers_that_are_not_recorders() {
    use std::io::Write;
    let (mut h, addr) = listening();
    let mut garbage = std::net::TcpStream::connect(addr).expect("connect");
    garbage
        .write_all(b"\x16\x03\x01 not a stream")
        .expect("send");
    let mut http = std::net::TcpStream::connect(addr).expect("connect");
    http.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .expect("send");
    // An idle socket stays open through the engine's session.
    let idle = std::net::TcpStream::connect(addr).expect("connect");
    assert_eq!(
        refusal(&mut garbage),
        "AABB refused: not a recorder's handshake\n"
    );
    assert_eq!(
        refusal(&mut http),
        "AABB refused: not a recorder's handshake\n"
    );
    frames_until(&mut h, |h| {
        h.state()
            .inspect()
            .live_status()
            .is_some_and(|s| s.refused_count == 2)
    });
    let status = h.state().inspect().live_status().expect("still listening");
    assert_eq!(status.peer, None);
    assert_eq!(
        status.line(),
        format!("Waiting for an engine on {addr}: start it with its recorder.")
    );
    assert_eq!(status.refused.len(), 2);
    assert!(
        status.refused[1].starts_with("refused a peer that is not a recorder: connection from"),
        "{:?}",
        status.refused
    );
    let engine = std::thread::spawn(move || send(addr));
    frames_until(&mut h, |h| h.state().inspect().live_sessions_ended() == 1);
    engine.join().expect("the engine thread");
    drop(idle);
    h.run_steps(2);
    let app = h.state();
    assert!(app.inspect().sim().is_trace(), "{}", app.inspect().status());
    assert_eq!(app.inspect().recording().last_step(), u64::from(STEPS) - 1);
}

#[test]
fn stop_ends_a_session_whose_engine_trickles_a_frame_at_once() {
    use std::io::Write;
    let (mut h, addr) = listening();
    // Three whole steps, then a frame a byte every 50 ms, never finished while the test runs.
    let mut bytes = Vec::new();
    let trace = {
        let steps: Vec<Vec<aabb_model::trace::TraceBox>> = (0..4)
            .map(|s| {
                boxes(s)
                    .into_iter()
                    .map(|(id, min, max)| aabb_model::trace::TraceBox {
                        id,
                        aabb: aabb_model::tree::Aabb::new(
                            glam::Vec3::new(min[0], min[1], 0.0),
                            glam::Vec3::new(max[0], max[1], 0.0),
                        ),
                    })
                    .collect()
            })
            .collect();
        aabb_model::trace::Trace::from_steps(
            "trickle",
            aabb_model::trace::TraceHeader {
                dimensions: 2,
                dt: 1.0 / 60.0,
            },
            Vec::new(),
            steps,
        )
        .expect("a trace")
    };
    stream::write_trace(&trace, "trickler", &mut bytes).expect("bytes");
    // Everything but the BYE (17 bytes) and half of the last step.
    let whole = bytes.len() - 17;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let engine = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut conn = std::net::TcpStream::connect(addr).expect("connect");
            let last_start = whole - 60;
            conn.write_all(&bytes[..last_start]).expect("send");
            for b in &bytes[last_start..whole] {
                if stop.load(std::sync::atomic::Ordering::Relaxed) || conn.write_all(&[*b]).is_err()
                {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    frames_until(&mut h, |h| {
        h.state()
            .inspect()
            .live_status()
            .is_some_and(|s| s.steps == 3)
    });
    h.state_mut().apply(Command::StopListening, false);
    h.run_steps(1);
    let stopping = h.state().inspect().live_status();
    // Either still stopping (and saying so) or already done.
    if let Some(status) = stopping {
        assert!(status.line().starts_with("Stopping"), "{}", status.line());
    }
    let asked = Instant::now();
    let longest = frames_until(&mut h, |h| h.state().inspect().live_status().is_none());
    let took = asked.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    engine.join().expect("the engine thread");
    // A bound on hanging, not a speed test: the worker sees Stop between two reads.
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert!(longest < Duration::from_secs(3), "{longest:?}");
    h.run_steps(2);
    let app = h.state();
    assert!(app.inspect().sim().is_trace(), "{}", app.inspect().status());
    assert_eq!(app.inspect().recording().last_step(), 2);
}

/// The window listening on a free loopback port: the harness and the address.
fn listening() -> (Harness<'static, DebuggerApp>, std::net::SocketAddr) {
    let mut h: Harness<'static, DebuggerApp> = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    h.state_mut().apply(
        Command::StartListening("127.0.0.1:0".parse().expect("addr")),
        false,
    );
    h.run_steps(2);
    let addr = h
        .state()
        .inspect()
        .live_status()
        .and_then(|s| s.addr)
        .expect("listening");
    (h, addr)
}

/// Sends `bytes` to `addr` as an engine would, then closes; the window runs until the session
/// has ended.
fn send_bytes(h: &mut Harness<'static, DebuggerApp>, addr: std::net::SocketAddr, bytes: Vec<u8>) {
    let engine = std::thread::spawn(move || {
        use std::io::Write;
        let mut conn = std::net::TcpStream::connect(addr).expect("connect");
        conn.write_all(&bytes).expect("send");
    });
    let started = Instant::now();
    let before = h.state().inspect().live_sessions_ended();
    while h.state().inspect().live_sessions_ended() == before {
        h.run_steps(1);
        std::thread::sleep(Duration::from_millis(20));
        assert!(started.elapsed() < Duration::from_secs(60), "still live");
    }
    engine.join().expect("the engine thread");
    h.run_steps(2);
}

/// The engine-parts test stream (fat boxes, pairs, tree, timings at every step) as an engine
/// in pixels sends it that dropped engine steps 5 to 7: its frames again, the HELLO's units
/// "px", the steps from 5 on numbered 3 higher, the BYE saying so.
fn engine_stream_with_a_gap() -> Vec<u8> {
    use aabb_recorder::wire::{self, Decoder, Frame, Limits};
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("engine.aabbstream");
    crate::common::engine::write_stream(&path, None, None);
    let sent = std::fs::read(&path).expect("the stream");
    let mut decoder = Decoder::new(&sent[..], Limits::default());
    let mut out = Vec::new();
    wire::encode_magic(&mut out);
    while let Some(frame) = decoder.next_frame().expect("a frame") {
        let frame = match frame {
            Frame::Hello(hello) => Frame::Hello(hello.with_units("px")),
            Frame::Step(mut s) => {
                if s.step >= 5 {
                    s.step += 3;
                }
                Frame::Step(s)
            }
            Frame::Bye(mut b) => {
                b.steps_dropped = 3;
                Frame::Bye(b)
            }
            other => other,
        };
        wire::encode_frame(&mut out, 2, &frame).expect("encodes");
    }
    out
}

#[test]
fn a_received_stream_saved_from_the_window_holds_what_listen_out_holds_part_for_part() {
    let (mut h, addr) = listening();
    let sent = engine_stream_with_a_gap();
    send_bytes(&mut h, addr, sent.clone());
    assert!(
        h.state().inspect().sim().is_trace(),
        "{}",
        h.state().inspect().status()
    );
    let dir = tempfile::tempdir().expect("temp dir");
    h.state_mut()
        .apply(Command::SaveStream(dir.path().join("kept")), false);
    let kept = dir.path().join("kept.aabbstream");
    let status = h.state().inspect().status().to_owned();
    assert!(
        status.starts_with(&format!(
            "Saved the 10 steps received from engine parts test (the engine's broad phase at \
             10 of them) to {} (",
            kept.display()
        )),
        "{status}"
    );
    assert!(!status.contains("Not in the file"), "{status}");
    // `listen --out` writes the bytes received, the bytes sent: the window's file is the same,
    // byte for byte.
    assert!(std::fs::read(&kept).expect("the saved stream") == sent);
    let (want_trace, want) =
        read_stream(&sent[..], "t", "sent", TraceLimits::default()).expect("the sent stream");
    let (got_trace, got) = stream::load(&kept, TraceLimits::default()).expect("the saved one");
    assert_eq!(got_trace.statics(), want_trace.statics());
    assert_eq!(got_trace.step_count(), want_trace.step_count());
    for k in 0..want_trace.step_count() {
        assert_eq!(got_trace.step(k), want_trace.step(k), "step {k}");
    }
    assert_eq!(got_trace.dt(), want_trace.dt());
    assert_eq!(got.engine, "engine parts test");
    assert_eq!(got.units, "px");
    assert_eq!(got.gaps.len(), 1);
    assert_eq!((got.gaps[0].first, got.gaps[0].last), (5, 7));
    assert_eq!(got.engine_parts.steps.len(), 10);
    assert!(got.engine_parts.steps.iter().all(|s| s.tree.is_some()
        && s.fat_boxes.is_some()
        && s.pairs.is_some()
        && s.timings.is_some()));
    // Everything else the stream says of itself, the engine's parts step by step and their
    // checks: equal.
    assert_eq!(got, want);
}

#[test]
fn a_stream_refused_before_its_first_step_is_said_once_in_the_error_window() {
    let (mut h, addr) = listening();
    let mut bytes = Vec::new();
    aabb_recorder::wire::encode_magic(&mut bytes);
    aabb_recorder::wire::encode_hello(&mut bytes, &Hello::new("broken", 2, 1.0 / 60.0))
        .expect("hello");
    // A frame of an unknown required kind.
    bytes.extend_from_slice(&[1, 0, 0, 0, 0x42]);
    send_bytes(&mut h, addr, bytes);
    let error = h
        .state()
        .inspect()
        .error()
        .expect("the error window")
        .to_owned();
    let status = h.state().inspect().status().to_owned();
    assert!(status.starts_with("Live session ended ("), "{status}");
    // The refusal (its byte offset and what) appears once.
    let refusal = status
        .trim_start_matches("Live session ended (")
        .split("): no step arrived")
        .next()
        .expect("the refusal")
        .to_owned();
    assert!(refusal.contains("byte "), "{refusal}");
    assert_eq!(error.matches(refusal.as_str()).count(), 1, "{error}");
}

/// The trace simulation of the first `steps` steps of `bytes` (a stream), stepped to its
/// last: what the window's live view must show after that many steps arrived.
fn headless_at(bytes: &[u8], steps: usize) -> TraceSimulation {
    let (trace, _) =
        read_stream(bytes, "t", "memory", TraceLimits::default()).expect("the same stream");
    let mut sim = TraceSimulation::new(
        Arc::new(trace),
        BroadphaseKind::Tree,
        TreeConfig::default(),
        DEFAULT_PAIR_LIMIT,
    )
    .expect("starts");
    for _ in 1..steps {
        Stepper::step(&mut sim).expect("steps");
    }
    sim
}

#[test]
fn the_window_draws_the_engine_while_it_streams_as_the_headless_run_of_what_arrived() {
    let (mut h, addr) = listening();
    // The engine sends 30 steps, waits for the test, sends 30 more, waits, then ends.
    let (go_on, wait) = std::sync::mpsc::channel::<()>();
    let (sent, steps_sent) = std::sync::mpsc::channel::<usize>();
    let engine = std::thread::spawn(move || {
        let hello = Hello::new("live view engine", 2, 1.0 / 60.0);
        let options = Options {
            exact: true,
            ..Options::default()
        };
        let mut live =
            Recorder::connect_with(addr, hello.clone(), options.clone()).expect("connect");
        let memory = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut copy = Recorder::to_writer_with(SharedVec(Arc::clone(&memory)), hello, options)
            .expect("memory");
        for rec in [&mut live, &mut copy] {
            rec.static_box(1000, &[0.0, 0.0], &[20.0, 1.0]);
        }
        for (s, pause) in (0..60u32).map(|s| (s, s == 29 || s == 59)) {
            for rec in [&mut live, &mut copy] {
                rec.begin_step();
                for (id, min, max) in boxes(s) {
                    rec.add_box(id, &min, &max);
                }
                rec.end_step();
            }
            if pause {
                sent.send(s as usize + 1).expect("the test");
                wait.recv().expect("go on");
            }
        }
        live.finish();
        copy.finish();
        memory.lock().map(|v| v.clone()).expect("lock")
    });
    // What the live view showed after each pause: steps arrived, and our tree's hash.
    let mut shown = Vec::new();
    for round in 0..2 {
        let n = steps_sent.recv().expect("steps sent");
        let last = n as u64 - 1;
        // While the engine is still connected (it waits), the views draw its newest step.
        frames_until(&mut h, |h| {
            h.state()
                .inspect()
                .live_session()
                .is_some_and(|(at, _, _)| at == last)
        });
        h.run_steps(2);
        let app = h.state();
        assert!(app.inspect().shows_live(), "round {round}");
        assert!(app.inspect().live_status().is_some(), "still live");
        let (at, recorded, hash) = app.inspect().live_session().expect("a live session");
        assert_eq!((at, recorded), (last, last), "round {round}");
        let snapshot = app.inspect().live_snapshot();
        assert_eq!(
            snapshot.spheres.len(),
            boxes(n as u32 - 1).len() + 1,
            "round {round}: every box of the newest step and the static one"
        );
        assert!(!snapshot.nodes.is_empty(), "our tree is drawn");
        // The status bar, the timeline and the statistics follow the live session too.
        h.get_by_label(&format!("live step {last}"));
        h.get_by_label(&format!("step {last} of {last}"));
        shown.push((n, hash));
        go_on.send(()).expect("the engine");
    }
    let bytes = engine.join().expect("the engine thread");
    // Each is the headless run of the steps that had arrived (two starting points).
    for (n, hash) in shown {
        assert_eq!(
            hash,
            headless_at(&bytes, n).structure_hash(),
            "after {n} steps"
        );
    }
    frames_until(&mut h, |h| h.state().inspect().live_sessions_ended() == 1);
    h.run_steps(2);
    let app = h.state();
    assert!(!app.inspect().shows_live());
    assert_eq!(app.inspect().recording().last_step(), 59);
    assert_eq!(app.inspect().sim().step_index(), 59);
}

#[test]
fn the_live_view_holds_a_received_step_while_the_engine_streams_on_and_follows_again() {
    let (mut h, addr) = listening();
    let (go_on, wait) = std::sync::mpsc::channel::<()>();
    let (sent, steps_sent) = std::sync::mpsc::channel::<usize>();
    let engine = std::thread::spawn(move || {
        let hello = Hello::new("held view engine", 2, 1.0 / 60.0);
        let options = Options {
            exact: true,
            ..Options::default()
        };
        let mut live =
            Recorder::connect_with(addr, hello.clone(), options.clone()).expect("connect");
        let memory = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut copy = Recorder::to_writer_with(SharedVec(Arc::clone(&memory)), hello, options)
            .expect("memory");
        for rec in [&mut live, &mut copy] {
            rec.static_box(1000, &[0.0, 0.0], &[20.0, 1.0]);
        }
        for s in 0..50u32 {
            for rec in [&mut live, &mut copy] {
                rec.begin_step();
                for (id, min, max) in boxes(s) {
                    rec.add_box(id, &min, &max);
                }
                rec.end_step();
            }
            if s == 19 || s == 49 {
                sent.send(s as usize + 1).expect("the test");
                wait.recv().expect("go on");
            }
        }
        live.finish();
        copy.finish();
        memory.lock().map(|v| v.clone()).expect("lock")
    });
    let at = |h: &Harness<'static, DebuggerApp>| h.state().inspect().live_session();
    assert_eq!(steps_sent.recv().expect("20 sent"), 20);
    frames_until(&mut h, |h| at(h).is_some_and(|(s, _, _)| s == 19));
    // Held at step 8: the views draw step 8 while 30 more steps arrive and are stepped.
    h.state_mut().apply(Command::LiveShow(Some(8)), false);
    h.run_steps(2);
    let held = h.state().inspect().live_snapshot().spheres.clone();
    go_on.send(()).expect("the engine");
    assert_eq!(steps_sent.recv().expect("50 sent"), 50);
    frames_until(&mut h, |h| at(h).is_some_and(|(s, _, _)| s == 49));
    h.run_steps(2);
    let app = h.state();
    assert_eq!(
        app.inspect().live_session().map(|(_, last, _)| last),
        Some(49)
    );
    assert_eq!(
        app.inspect().live_snapshot().spheres,
        held,
        "the held step is drawn as it was while more arrived"
    );
    assert!(
        app.inspect()
            .status()
            .starts_with("The live view holds received step 8 of 19"),
        "{}",
        app.inspect().status()
    );
    assert_eq!(
        app.inspect().live_snapshot().spheres.len(),
        boxes(8).len() + 1
    );
    // Follow: the newest step, our tree's, drawn again.
    h.state_mut().apply(Command::LiveShow(None), false);
    h.run_steps(2);
    let (_, _, newest_hash) = h.state().inspect().live_session().expect("live");
    assert_ne!(h.state().inspect().live_snapshot().spheres, held);
    go_on.send(()).expect("the engine");
    let bytes = engine.join().expect("the engine thread");
    assert_eq!(newest_hash, headless_at(&bytes, 50).structure_hash());
    frames_until(&mut h, |h| h.state().inspect().live_sessions_ended() == 1);
    h.run_steps(2);
    assert_eq!(h.state().inspect().recording().last_step(), 49);
}

/// Sends `steps` steps of [`boxes`] as engine `name` through the Rust recorder, exactly.
fn send_as(addr: std::net::SocketAddr, name: &str, steps: u32) {
    let hello = Hello::new(name, 2, 1.0 / 60.0);
    let options = Options {
        exact: true,
        ..Options::default()
    };
    let mut live = Recorder::connect_with(addr, hello, options).expect("connect");
    live.static_box(1000, &[0.0, 0.0], &[20.0, 1.0]);
    for s in 0..steps {
        live.begin_step();
        for (id, min, max) in boxes(s) {
            live.add_box(id, &min, &max);
        }
        live.end_step();
    }
    let stats = live.finish();
    assert_eq!(stats.steps_sent, u64::from(steps), "{stats:?}");
}

#[test]
fn an_engine_that_connects_again_is_a_new_session_and_the_window_keeps_both() {
    let (mut h, addr) = listening();
    std::thread::spawn(move || send_as(addr, "first run", 25))
        .join()
        .expect("the first engine");
    frames_until(&mut h, |h| h.state().inspect().live_sessions_ended() == 1);
    h.run_steps(2);
    let status = h.state().inspect().live_status().expect("still listening");
    assert_eq!(status.peer, None);
    assert!(
        h.state()
            .inspect()
            .status()
            .ends_with(&format!("Still listening on {addr} for the next engine.")),
        "{}",
        h.state().inspect().status()
    );
    assert_eq!(h.state().inspect().recording().last_step(), 24);
    // The game restarted: the same engine connects again, a session of its own.
    std::thread::spawn(move || send_as(addr, "second run", 40))
        .join()
        .expect("the second engine");
    frames_until(&mut h, |h| h.state().inspect().live_sessions_ended() == 2);
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.inspect().recording().last_step(), 39);
    assert_eq!(
        app.inspect().received_sessions(),
        vec![("first run".to_owned(), 24)]
    );
    // Switching shows the first again; the second takes its place in the list.
    h.state_mut().apply(Command::ShowSession(0), false);
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.inspect().recording().last_step(), 24);
    assert!(
        app.inspect()
            .status()
            .starts_with("Showing the session received from first run #"),
        "{}",
        app.inspect().status()
    );
    assert_eq!(
        app.inspect().received_sessions(),
        vec![("second run".to_owned(), 39)]
    );
    // A budget too small for any: the next session keeps the window within it, dropping the
    // older ones, oldest first, with a message.
    h.state_mut().apply(
        Command::SetPref(aabb_app::prefs::PrefChange::RecordingBudget(1)),
        false,
    );
    std::thread::spawn(move || send_as(addr, "third run", 10))
        .join()
        .expect("the third engine");
    frames_until(&mut h, |h| h.state().inspect().live_sessions_ended() == 3);
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.inspect().recording().last_step(), 9);
    assert_eq!(app.inspect().received_sessions(), vec![]);
    let status = app.inspect().status();
    assert!(
        status.contains("Dropped the 2 oldest received sessions (first run #"),
        "{status}"
    );
    let (first, second) = (
        status.find("first run #").expect("first"),
        status.find("second run #").expect("second"),
    );
    assert!(first < second, "oldest first: {status}");
    h.state_mut().apply(Command::StopListening, false);
    frames_until(&mut h, |h| h.state().inspect().live_status().is_none());
}

#[test]
fn the_live_view_pauses_at_the_engines_first_missed_pair_while_the_engine_streams_on() {
    use aabb_recorder::wire::{self, Decoder, Frame, Limits};
    use std::io::Write;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("missed.aabbstream");
    // The engine leaves out one pair at step 4: a missed pair.
    crate::common::engine::write_stream(&path, Some(4), None);
    let sent = std::fs::read(&path).expect("the stream");
    // Its frames but the BYE: the engine is still streaming.
    let mut decoder = Decoder::new(&sent[..], Limits::default());
    let mut bytes = Vec::new();
    wire::encode_magic(&mut bytes);
    while let Some(frame) = decoder.next_frame().expect("a frame") {
        if !matches!(frame, Frame::Bye(_)) {
            wire::encode_frame(&mut bytes, 2, &frame).expect("encodes");
        }
    }
    let (mut h, addr) = listening();
    let mut conn = std::net::TcpStream::connect(addr).expect("connect");
    conn.write_all(&bytes).expect("send");
    let last = crate::common::engine::STEPS - 1;
    frames_until(&mut h, |h| {
        h.state()
            .inspect()
            .live_session()
            .is_some_and(|(_, recorded, _)| recorded == last)
            && h.state().inspect().live_held_step().is_some()
    });
    h.run_steps(2);
    let app = h.state();
    assert_eq!(
        app.inspect().live_held_step(),
        Some(4),
        "held at the missed pair"
    );
    let status = app.inspect().live_status().expect("still live");
    assert_eq!((status.missed, status.first_missed), (1, Some(4)));
    assert!(
        status
            .line()
            .contains("; 1 missed pair (the first at step 4)"),
        "{}",
        status.line()
    );
    assert!(app.inspect().shows_live());
    // Follow: the newest step again; the hold is not taken again for the same pair.
    h.state_mut().apply(Command::LiveShow(None), false);
    h.run_steps(3);
    assert_eq!(h.state().inspect().live_held_step(), None);
    drop(conn);
    frames_until(&mut h, |h| h.state().inspect().live_sessions_ended() == 1);
    h.run_steps(2);
    assert_eq!(h.state().inspect().recording().last_step(), last);
    assert_eq!(h.state().inspect().live_held_step(), None);
}

#[test]
fn the_controls_wait_for_a_live_session_to_end_and_space_or_the_timeline_hold_a_step() {
    let (mut h, addr) = listening();
    let (go_on, wait) = std::sync::mpsc::channel::<()>();
    let engine = std::thread::spawn(move || {
        let hello = Hello::new("waiting engine", 2, 1.0 / 60.0);
        let options = Options {
            exact: true,
            ..Options::default()
        };
        let mut live = Recorder::connect_with(addr, hello, options).expect("connect");
        for s in 0..10u32 {
            live.begin_step();
            for (id, min, max) in boxes(s) {
                live.add_box(id, &min, &max);
            }
            live.end_step();
        }
        wait.recv().expect("go on");
        live.finish();
    });
    frames_until(&mut h, |h| {
        h.state()
            .inspect()
            .live_session()
            .is_some_and(|(at, _, _)| at == 9)
    });
    h.run_steps(2);
    let margin = h.state().inspect().document().tree.margin;
    for command in [
        Command::SetTreeSettings(TreeConfig {
            margin: margin + 0.5,
            ..TreeConfig::default()
        }),
        Command::Reset,
        Command::ShowAdvisor(true),
        Command::StartCompare(aabb_model::compare::Side {
            kind: BroadphaseKind::Tree,
            config: TreeConfig::default(),
        }),
    ] {
        h.state_mut().apply(command, false);
        h.run_steps(1);
        assert!(
            h.state()
                .inspect()
                .status()
                .starts_with("While an engine streams, the views show its session: the controls"),
            "{}",
            h.state().inspect().status()
        );
        assert!(h.state().inspect().compare().is_none());
    }
    assert_eq!(
        h.state().inspect().document().tree.margin,
        margin,
        "the document is unchanged"
    );
    // Space holds the newest step, and follows again.
    h.state_mut().apply(Command::TogglePlay, false);
    h.run_steps(1);
    assert_eq!(h.state().inspect().live_held_step(), Some(9));
    h.state_mut().apply(Command::TogglePlay, false);
    h.run_steps(1);
    assert_eq!(h.state().inspect().live_held_step(), None);
    // A step picked on the timeline is held.
    h.state_mut().apply(Command::SeekTo(4), false);
    h.run_steps(1);
    assert_eq!(h.state().inspect().live_held_step(), Some(4));
    go_on.send(()).expect("the engine");
    engine.join().expect("the engine thread");
    frames_until(&mut h, |h| h.state().inspect().live_sessions_ended() == 1);
    h.run_steps(2);
    // Once it has ended, they work on every step received.
    h.state_mut().apply(
        Command::StartCompare(aabb_model::compare::Side {
            kind: BroadphaseKind::Brute,
            config: TreeConfig::default(),
        }),
        false,
    );
    h.run_steps(2);
    assert!(
        h.state().inspect().compare().is_some(),
        "{}",
        h.state().inspect().status()
    );
}

/// Streams 600 steps of [`boxes`] with the engine's fat boxes (the tight box grown by 0.1)
/// and its pairs (every pair of overlapping fat boxes, but one left out at step 300), a
/// millisecond apart, through the Rust recorder to `addr`, and the same to memory; waits for
/// `go_on` after step 349. Returns the bytes.
fn stream_600_with_a_missed_pair(
    addr: std::net::SocketAddr,
    at_349: std::sync::mpsc::Sender<()>,
    go_on: std::sync::mpsc::Receiver<()>,
) -> Vec<u8> {
    let hello = Hello::new("acceptance engine", 2, 1.0 / 60.0);
    let options = Options {
        exact: true,
        ..Options::default()
    };
    let mut live = Recorder::connect_with(addr, hello.clone(), options.clone()).expect("connect");
    let memory = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut copy =
        Recorder::to_writer_with(SharedVec(Arc::clone(&memory)), hello, options).expect("memory");
    let grow = |(id, min, max): (u32, [f32; 2], [f32; 2])| {
        (
            id,
            [min[0] - 0.1, min[1] - 0.1],
            [max[0] + 0.1, max[1] + 0.1],
        )
    };
    for s in 0..600u32 {
        let fat: Vec<_> = boxes(s).into_iter().map(grow).collect();
        let mut pairs = Vec::new();
        for (i, a) in fat.iter().enumerate() {
            for b in &fat[i + 1..] {
                if (0..2).all(|k| a.1[k] <= b.2[k] && b.1[k] <= a.2[k]) {
                    pairs.push((a.0.min(b.0), a.0.max(b.0)));
                }
            }
        }
        pairs.sort_unstable();
        if s == 300 {
            assert!(!pairs.is_empty(), "a pair to leave out at step 300");
            pairs.remove(0);
        }
        for rec in [&mut live, &mut copy] {
            rec.begin_step();
            for (id, min, max) in boxes(s) {
                rec.add_box(id, &min, &max);
            }
            for &(id, min, max) in &fat {
                rec.fat_box(id, &min, &max);
            }
            rec.begin_pairs();
            for &(a, b) in &pairs {
                rec.pair(a, b);
            }
            rec.end_step();
        }
        std::thread::sleep(Duration::from_millis(1));
        if s == 349 {
            at_349.send(()).expect("the test");
            go_on.recv().expect("go on");
        }
    }
    live.finish();
    copy.finish();
    memory.lock().map(|v| v.clone()).expect("lock")
}

#[test]
fn a_600_step_stream_is_drawn_as_it_arrives_paused_at_its_missed_pair_scrubbed_and_followed() {
    let (mut h, addr) = listening();
    let (at_349, paused) = std::sync::mpsc::channel();
    let (go_on, wait) = std::sync::mpsc::channel();
    let engine = std::thread::spawn(move || stream_600_with_a_missed_pair(addr, at_349, wait));
    // The step shown advances while the stream arrives, until the view pauses at step 300,
    // where the engine missed a pair.
    let mut drawn = std::collections::BTreeSet::new();
    frames_until(&mut h, |h| {
        let app = h.state().inspect();
        if app.live_held_step().is_none()
            && let Some((at, _, _)) = app.live_session()
        {
            drawn.insert(at);
        }
        app.live_held_step().is_some()
    });
    assert!(
        drawn.len() >= 5,
        "many steps drawn before the end: {drawn:?}"
    );
    assert_eq!(h.state().inspect().live_held_step(), Some(300));
    let status = h.state().inspect().live_status().expect("live");
    assert_eq!(status.first_missed, Some(300));
    assert!(status.missed >= 1);
    // Paused: the step shown stays while the steps received go on (to 350, where the engine
    // waits for the test).
    paused.recv().expect("the engine at step 349");
    frames_until(&mut h, |h| {
        h.state()
            .inspect()
            .live_status()
            .is_some_and(|s| s.steps == 350)
    });
    h.run_steps(2);
    assert_eq!(h.state().inspect().live_held_step(), Some(300));
    assert!(
        h.state().inspect().live_status().is_some(),
        "still streaming"
    );
    // Scrubbed back to step 50 while the engine streams.
    h.state_mut().apply(Command::LiveShow(Some(50)), false);
    h.run_steps(2);
    assert_eq!(h.state().inspect().live_held_step(), Some(50));
    let hash_50 = h.state().inspect().live_held_hash().expect("held");
    // Follow: the newest step again.
    h.state_mut().apply(Command::LiveShow(None), false);
    frames_until(&mut h, |h| {
        h.state()
            .inspect()
            .live_session()
            .is_some_and(|(at, _, _)| at == 349)
    });
    h.run_steps(2);
    assert_eq!(h.state().inspect().live_held_step(), None);
    go_on.send(()).expect("the engine");
    let bytes = engine.join().expect("the engine thread");
    frames_until(&mut h, |h| h.state().inspect().live_sessions_ended() == 1);
    h.run_steps(2);
    assert_eq!(h.state().inspect().recording().last_step(), 599);
    // Scrubbed to step 50: the headless run of the same bytes to step 50.
    assert_eq!(hash_50, headless_at(&bytes, 51).structure_hash());
}

/// The window listening with `kind` as our side's broad phase; its address.
fn listening_on(kind: BroadphaseKind) -> (Harness<'static, DebuggerApp>, std::net::SocketAddr) {
    let mut h: Harness<'static, DebuggerApp> = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    h.state_mut().apply(Command::SetBroadphase(kind), false);
    h.state_mut().apply(
        Command::StartListening("127.0.0.1:0".parse().expect("addr")),
        false,
    );
    h.run_steps(2);
    let addr = h
        .state()
        .inspect()
        .live_status()
        .and_then(|s| s.addr)
        .expect("listening");
    (h, addr)
}

/// Streams `steps` steps of `boxes` (id, min, max), exactly.
fn send_boxes(
    addr: std::net::SocketAddr,
    name: &str,
    steps: u32,
    boxes: Vec<(u32, [f32; 2], [f32; 2])>,
) {
    let hello = Hello::new(name, 2, 1.0 / 60.0);
    let options = Options {
        exact: true,
        ..Options::default()
    };
    let mut live = Recorder::connect_with(addr, hello, options).expect("connect");
    for _ in 0..steps {
        live.begin_step();
        for (id, min, max) in &boxes {
            live.add_box(*id, min, max);
        }
        live.end_step();
    }
    let stats = live.finish();
    assert_eq!(stats.steps_sent, u64::from(steps), "{stats:?}");
}

#[test]
fn a_session_our_broad_phase_refuses_is_said_and_the_window_keeps_listening() {
    // Brute force over 60,000 boxes is more pair tests a step than it takes.
    let (mut h, addr) = listening_on(BroadphaseKind::Brute);
    let many: Vec<_> = (0..60_000u32)
        .map(|i| {
            let (x, y) = ((i % 300) as f32 * 2.0, (i / 300) as f32 * 2.0);
            (i, [x, y], [x + 1.0, y + 1.0])
        })
        .collect();
    std::thread::spawn(move || send_boxes(addr, "too many for brute force", 2, many))
        .join()
        .expect("the engine");
    frames_until(&mut h, |h| h.state().inspect().live_sessions_ended() == 1);
    h.run_steps(2);
    let app = h.state();
    let status = app.inspect().status();
    assert!(
        status.starts_with(
            "Live session ended (the engine ended the stream): our tree could not take the \
             received steps; the open document is unchanged."
        ),
        "{status}"
    );
    let error = app.inspect().error().expect("the error window");
    assert!(error.starts_with(aabb_app::live::OURS_FAILED), "{error}");
    assert!(error.contains("use the tree broad phase"), "{error}");
    assert!(
        !app.inspect().sim().is_trace(),
        "the open document is unchanged"
    );
    assert!(
        app.inspect()
            .live_status()
            .is_some_and(|s| s.peer.is_none()),
        "still listening"
    );
}

#[test]
fn a_box_our_broad_phase_stops_at_opens_the_session_paused_saying_why() {
    // Box2D's tree stops at a box as wide as its B2_HUGE: the session opens, paused there.
    let (mut h, addr) = listening_on(BroadphaseKind::Box2d);
    let boxes = vec![
        (1, [0.0, 0.0], [300_000.0, 1.0]),
        (2, [0.0, 0.0], [1.0, 1.0]),
    ];
    std::thread::spawn(move || send_boxes(addr, "too wide for Box2D", 3, boxes))
        .join()
        .expect("the engine");
    frames_until(&mut h, |h| h.state().inspect().live_sessions_ended() == 1);
    h.run_steps(2);
    let app = h.state();
    assert!(app.inspect().sim().is_trace());
    assert_eq!(app.inspect().recording().last_step(), 2);
    let status = app.inspect().status();
    assert!(
        status.starts_with("Paused: Step 2: box 1: its fat box"),
        "{status}"
    );
    assert!(status.contains("B2_HUGE"), "{status}");
}
