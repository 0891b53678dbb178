//! The live link from the debugger's side: stream files read box for box as the text trace
//! they convert to, `listen` recording exactly what a recorder sent, and every hostile peer
//! (not a recorder, a broken or truncated frame, a second engine, silence) refused with a
//! message naming the connection, with the steps before kept.

use crate::common::cli;
use crate::common::needs;

use aabb_debugger::stream::{self, read_stream};
use aabb_debugger::trace::{Trace, TraceBox, TraceHeader, TraceLimits};
use aabb_debugger::tree::Aabb;
use aabb_recorder::wire::{self, Hello, StepFrame, WireBox};
use cli::{bin, text, utf8};
use glam::Vec3;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A 2D trace of `steps` steps: boxes 0..8 drift right, box 3 leaves at step 4, box 20 arrives
/// at step 2, box 5 stands still; two static boxes.
pub(crate) fn drifting(steps: u32) -> Trace {
    let b = |id: u32, x: f32, y: f32| TraceBox {
        id,
        aabb: Aabb::new(Vec3::new(x, y, 0.0), Vec3::new(x + 1.2, y + 0.5, 0.0)),
    };
    let mut all = Vec::new();
    for s in 0..steps {
        let mut step = Vec::new();
        for id in 0..8u32 {
            if id == 3 && s >= 4 {
                continue;
            }
            let x = if id == 5 {
                1.0
            } else {
                id as f32 + 0.1 * s as f32
            };
            step.push(b(id, x, 0.25 * id as f32));
        }
        if s >= 2 {
            step.push(b(20, 3.0 - 0.2 * s as f32, 1.5));
        }
        all.push(step);
    }
    Trace::from_steps(
        "drifting",
        TraceHeader {
            dimensions: 2,
            dt: 1.0 / 60.0,
        },
        vec![b(100, -5.0, -1.0), b(101, 20.0, -1.0)],
        all,
    )
    .expect("a valid trace")
}

pub(crate) fn stream_bytes(trace: &Trace) -> Vec<u8> {
    let mut bytes = Vec::new();
    stream::write_trace(trace, "test", &mut bytes).expect("written");
    bytes
}

pub(crate) fn assert_same_steps(a: &Trace, b: &Trace) {
    assert_eq!(a.header(), b.header());
    assert_eq!(a.statics(), b.statics());
    assert_eq!(a.step_count(), b.step_count());
    for k in 0..a.step_count() {
        assert_eq!(a.step(k), b.step(k), "step {k}");
    }
}

#[test]
fn a_trace_round_trips_through_a_stream_box_for_box() {
    let trace = drifting(12);
    let bytes = stream_bytes(&trace);
    assert_eq!(&bytes[..8], b"AABBSTRM");
    let (back, info) =
        read_stream(&bytes[..], "drifting", "<bytes>", TraceLimits::default()).expect("read");
    assert_same_steps(&trace, &back);
    assert_eq!(info.engine, "test");
    assert_eq!(info.bye, Some((12, 0)));
    assert_eq!(info.gaps, []);
    assert_eq!(info.stopped, None);
    assert_eq!(info.engine_steps, (0..12).collect::<Vec<u64>>());
}

#[test]
fn a_stream_that_ends_inside_a_frame_keeps_its_whole_steps() {
    let trace = drifting(6);
    let bytes = stream_bytes(&trace);
    // The BYE is 17 bytes; cut inside the last STEP frame.
    let cut = &bytes[..bytes.len() - 17 - 5];
    let (back, info) =
        read_stream(cut, "cut", "cut.aabbstream", TraceLimits::default()).expect("kept");
    assert_eq!(back.step_count(), 5);
    for k in 0..5 {
        assert_eq!(back.step(k), trace.step(k));
    }
    let why = info.stopped.expect("said");
    assert!(why.starts_with("byte "), "{why}");
}

#[test]
fn run_and_convert_take_a_stream_file_as_they_take_its_text_trace() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = drifting(20);
    let text_path = dir.path().join("d.trace");
    let mut t = Vec::new();
    trace.write(&mut t).expect("text");
    std::fs::write(&text_path, &t).expect("write");
    let stream_path = dir.path().join("d.aabbstream");
    std::fs::write(&stream_path, stream_bytes(&trace)).expect("write");

    let on_text = bin(&["run", utf8(&text_path), "--steps", "100", "--json"]);
    let on_stream = bin(&["run", utf8(&stream_path), "--steps", "100", "--json"]);
    assert!(on_text.status.success(), "{}", text(&on_text.stderr));
    assert!(on_stream.status.success(), "{}", text(&on_stream.stderr));
    let strip = |o: &std::process::Output| -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let m = v.as_object_mut().expect("object");
        for key in [
            "file",
            "timings",
            "ms_per_step",
            "update_ms_per_step",
            "pairs_ms_per_step",
        ] {
            m.remove(key);
        }
        v
    };
    let (a, b) = (strip(&on_text), strip(&on_stream));
    assert_eq!(a, b);
    // Not an empty case: pairs and contacts at the end, reinserts along the way.
    assert!(
        !a["candidate_pairs"].as_array().expect("pairs").is_empty(),
        "{a}"
    );
    assert!(
        !a["contacts"].as_array().expect("contacts").is_empty(),
        "{a}"
    );

    // Stream -> text gives the same text; text -> stream -> text again.
    let converted = dir.path().join("c.trace");
    let out = bin(&["convert", utf8(&stream_path), utf8(&converted)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&converted).expect("read"), t);
    let again = dir.path().join("again.aabbstream");
    let out = bin(&["convert", utf8(&converted), utf8(&again)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (back, _) = stream::load(&again, TraceLimits::default()).expect("loads");
    assert_same_steps(&trace, &back);

    // An output of the other kind is not replaced without --force.
    let out = bin(&[
        "convert",
        utf8(&stream_path),
        utf8(&again).replace(".aabbstream", ".trace").as_str(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let scene = dir.path().join("keep.trace");
    std::fs::write(&scene, "(format_version: 1)").expect("write");
    let out = bin(&["convert", utf8(&stream_path), utf8(&scene)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).trim_end(),
        format!(
            "{}: note: the engine's name (\"test\") and its units (\"m\") not converted: a trace \
             has no place for them\n\
             {}: holds a scene, not a trace; it was not replaced (give another path, or --force \
             to replace it)",
            stream_path.display(),
            scene.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&scene).expect("kept"),
        "(format_version: 1)"
    );
}

/// `listen --port 0 --json` started: the child, its stdout lines and the port it took.
pub(crate) struct Listening {
    pub(crate) child: Child,
    pub(crate) lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    pub(crate) port: u16,
}

pub(crate) fn listen(extra: &[&str]) -> Listening {
    let mut child = Command::new(env!("CARGO_BIN_EXE_aabb-debugger"))
        .args(["listen", "--port", "0", "--json"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start listen");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a first line").expect("text");
    let v: serde_json::Value = serde_json::from_str(&first).expect("json");
    let addr = v["listening"].as_str().expect("listening").to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let port = addr
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    Listening { child, lines, port }
}

/// A test that fails part-way leaves no `listen` running behind it.
impl Drop for Listening {
    fn drop(&mut self) {
        // Already ended when the test finished it: nothing to kill or wait for.
        let _killed = self.child.kill();
        let _waited = self.child.wait();
    }
}

impl Listening {
    /// Waits for the child (at most 60 s); its exit code, the rest of stdout and stderr.
    pub(crate) fn finish(mut self) -> (Option<i32>, Vec<String>, String) {
        let rest: Vec<String> = self.lines.by_ref().map_while(Result::ok).collect();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            e.read_to_string(&mut err).expect("stderr");
        }
        let status = self.child.wait().expect("wait");
        (status.code(), rest, err)
    }
}

pub(crate) fn wbox(id: u32, x: f32, y: f32) -> WireBox {
    WireBox {
        id,
        min: [x, y, 0.0],
        max: [x + 1.0, y + 1.0, 0.0],
    }
}

pub(crate) fn hello_bytes() -> Vec<u8> {
    let mut b = Vec::new();
    wire::encode_magic(&mut b);
    wire::encode_hello(&mut b, &Hello::new("hand-made", 2, 0.02)).expect("hello");
    b
}

pub(crate) fn step_bytes(step: u64, boxes: &[WireBox], keyframe: bool) -> Vec<u8> {
    let mut b = Vec::new();
    let frame = StepFrame {
        step,
        keyframe,
        appeared: if keyframe { boxes.to_vec() } else { Vec::new() },
        moved: if keyframe { Vec::new() } else { boxes.to_vec() },
        gone: Vec::new(),
        sections: Vec::new(),
    };
    wire::encode_step(&mut b, 2, &frame).expect("step");
    b
}

#[test]
fn listen_records_every_step_a_recorder_sent_box_for_box() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("live.aabbstream");
    let l = listen(&["--out", utf8(&out)]);
    let trace = drifting(100);
    let mut conn = TcpStream::connect(("127.0.0.1", l.port)).expect("connect");
    conn.write_all(&stream_bytes(&trace)).expect("send");
    drop(conn);
    let (code, lines, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    let steps: Vec<serde_json::Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("step").is_some())
        .collect();
    assert_eq!(steps.len(), 100);
    assert_eq!(steps[0]["boxes"], 8);
    assert_eq!(steps[4]["gone"], 1);
    let last: serde_json::Value =
        serde_json::from_str(lines.last().expect("a last line")).expect("json");
    assert_eq!(last["end"], "bye");
    assert_eq!(last["steps"], 100);
    let (back, info) = stream::load(&out, TraceLimits::default()).expect("the file loads");
    assert_same_steps(&trace, &back);
    assert_eq!(info.bye, Some((100, 0)));
}

#[test]
fn listen_refuses_an_http_request_naming_the_connection_and_the_byte_and_keeps_listening() {
    let l = listen(&[]);
    let mut conn = TcpStream::connect(("127.0.0.1", l.port)).expect("connect");
    let local = conn.local_addr().expect("addr");
    conn.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("send");
    // The refusal line, then the end of the connection.
    let mut reply = String::new();
    conn.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    conn.read_to_string(&mut reply).expect("the refusal");
    assert_eq!(reply, "AABB refused: not a recorder's handshake\n");
    // Still listening: an engine after it is received.
    let mut engine = TcpStream::connect(("127.0.0.1", l.port)).expect("connect");
    engine.write_all(&stream_bytes(&drifting(3))).expect("send");
    drop(engine);
    let (code, lines, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!(
            "refused a peer that is not a recorder: connection from {local}: byte 0"
        )),
        "{err}"
    );
    assert!(first.contains("HTTP"), "{err}");
    assert!(
        lines.last().is_some_and(|l| l.contains("\"steps\":3")),
        "{lines:?}"
    );
}

#[test]
fn a_frame_cut_off_by_a_killed_engine_keeps_every_step_before_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("cut.aabbstream");
    let l = listen(&["--out", utf8(&out)]);
    let mut conn = TcpStream::connect(("127.0.0.1", l.port)).expect("connect");
    let mut bytes = hello_bytes();
    bytes.extend(step_bytes(0, &[wbox(1, 0.0, 0.0), wbox(2, 3.0, 0.0)], true));
    bytes.extend(step_bytes(1, &[wbox(1, 0.5, 0.0)], false));
    bytes.extend(step_bytes(2, &[wbox(2, 2.5, 0.0)], false));
    let next = step_bytes(3, &[wbox(1, 1.0, 0.0)], false);
    bytes.extend(&next[..next.len() / 2]);
    conn.write_all(&bytes).expect("send");
    drop(conn);
    let (code, lines, err) = l.finish();
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("ends inside") || err.contains("truncated"),
        "{err}"
    );
    let steps = lines.iter().filter(|l| l.contains("\"step\"")).count();
    assert_eq!(steps, 3);
    let (back, _) = stream::load(&out, TraceLimits::default()).expect("the steps before are kept");
    assert_eq!(back.step_count(), 3);
    assert_eq!(back.step(2)[1].aabb.min.x, 2.5);
}

#[test]
fn a_box_with_nan_is_refused_at_its_step_and_byte() {
    let l = listen(&[]);
    let mut conn = TcpStream::connect(("127.0.0.1", l.port)).expect("connect");
    let mut bytes = hello_bytes();
    bytes.extend(step_bytes(0, &[wbox(1, 0.0, 0.0)], true));
    let offset = bytes.len();
    let mut bad = step_bytes(1, &[wbox(1, 0.5, 0.0)], false);
    // The moved box's min.x: after length (4), kind (1), step (8), flags (1), appeared (4),
    // moved count (4) and the id (4).
    let at = 4 + 1 + 8 + 1 + 4 + 4 + 4;
    bad[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    bytes.extend(bad);
    conn.write_all(&bytes).expect("send");
    drop(conn);
    let (code, lines, err) = l.finish();
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("byte {offset}, step 1")), "{err}");
    assert_eq!(lines.iter().filter(|l| l.contains("\"step\"")).count(), 1);
}

#[test]
fn a_second_engine_is_refused_while_one_is_live() {
    let l = listen(&[]);
    let mut first = TcpStream::connect(("127.0.0.1", l.port)).expect("connect");
    first.write_all(&hello_bytes()).expect("send");
    first
        .write_all(&step_bytes(0, &[wbox(1, 0.0, 0.0)], true))
        .expect("send");
    std::thread::sleep(Duration::from_millis(300));
    let mut second = TcpStream::connect(("127.0.0.1", l.port)).expect("connect");
    let second_addr = second.local_addr().expect("addr");
    second.write_all(&hello_bytes()).expect("send");
    second
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    // Refused after its handshake, with the line a recorder reads to fall back to its file.
    let mut reply = String::new();
    second.read_to_string(&mut reply).expect("the refusal");
    assert_eq!(reply, "AABB refused: busy: another engine is live\n");
    drop(first);
    let (code, lines, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(&format!("refused a second engine from {second_addr}")),
        "{err}"
    );
    assert!(
        lines.last().is_some_and(|l| l.contains("\"steps\":1")),
        "{lines:?}"
    );
}

#[test]
fn a_connection_that_sends_nothing_is_refused_after_the_handshake_timeout_and_listen_goes_on() {
    let l = listen(&["--handshake-timeout", "0.5"]);
    let mut idle = TcpStream::connect(("127.0.0.1", l.port)).expect("connect");
    let idle_addr = idle.local_addr().expect("addr");
    idle.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut reply = String::new();
    idle.read_to_string(&mut reply).expect("the refusal");
    assert_eq!(reply, "AABB refused: not a recorder's handshake\n");
    let mut engine = TcpStream::connect(("127.0.0.1", l.port)).expect("connect");
    engine.write_all(&stream_bytes(&drifting(2))).expect("send");
    drop(engine);
    let (code, _, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        err.lines().next().unwrap_or_default(),
        format!(
            "refused a peer that is not a recorder: connection from {idle_addr}: no handshake \
             in time (the magic bytes and HELLO) after 0 bytes"
        ),
        "{err}"
    );
}

#[test]
fn listen_refuses_an_out_file_of_another_kind() {
    let dir = tempfile::tempdir().expect("temp dir");
    let keep = dir.path().join("main.rs");
    std::fs::write(&keep, "fn main() {}").expect("write");
    let out = bin(&["listen", "--port", "0", "--out", utf8(&keep)]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).trim_end(),
        format!(
            "{}: holds other data (not a scene, recording, trace, stream file, box list or PNG \
             image), not a stream file; it was not replaced (give another path, or --force to \
             replace it)",
            keep.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&keep).expect("kept"),
        "fn main() {}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
    /// Any mutation of a valid stream file is read or refused, never a panic, and a refusal
    /// names a byte inside the input.
    #[test]
    fn a_mutated_stream_is_read_or_refused_with_its_byte(
        flips in proptest::collection::vec((0usize..4000, proptest::prelude::any::<u8>()), 1..6),
        cut in 0usize..4000,
    ) {
        let mut bytes = stream_bytes(&drifting(8));
        for (at, v) in flips {
            let n = bytes.len();
            bytes[at % n] = v;
        }
        bytes.truncate(cut.max(1).min(bytes.len()).max(bytes.len() / 2));
        match read_stream(&bytes[..], "m", "m", TraceLimits::default()) {
            Ok((trace, _)) => proptest::prop_assert!(trace.step_count() >= 1),
            Err(e) => {
                let m = e.to_string();
                if let Some(rest) = m.split("byte ").nth(1) {
                    let n: u64 = rest
                        .split(|c: char| !c.is_ascii_digit())
                        .next()
                        .and_then(|d| d.parse().ok())
                        .unwrap_or(0);
                    proptest::prop_assert!(n <= bytes.len() as u64, "{}", m);
                }
            }
        }
    }
}

/// Starts `listen --out` in a temp folder; the folder, the output's path and the child.
fn listen_to_file(name: &str) -> (tempfile::TempDir, std::path::PathBuf, Listening) {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join(name);
    let l = listen(&["--out", utf8(&out)]);
    (dir, out, l)
}

/// Waits for `listen` and checks the engine ended its stream with every step.
fn received_whole(l: Listening) {
    let (code, lines, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    let last: serde_json::Value =
        serde_json::from_str(lines.last().expect("a last line")).expect("json");
    assert_eq!(last["end"], "bye", "{last}");
    assert_eq!(last["dropped_steps"], 0, "{last}");
}

#[test]
fn the_rust_recorder_streams_to_listen_box_for_box() {
    let (_dir, out, l) = listen_to_file("rust.aabbstream");
    let trace = drifting(150);
    let options = aabb_recorder::Options {
        exact: true,
        ..aabb_recorder::Options::default()
    };
    let mut rec = aabb_recorder::Recorder::connect_with(
        ("127.0.0.1", l.port),
        Hello::new("rust test", 2, trace.dt()),
        options,
    )
    .expect("connect");
    for b in trace.statics() {
        rec.static_box(
            b.id,
            &b.aabb.min.to_array()[..2],
            &b.aabb.max.to_array()[..2],
        );
    }
    for k in 0..trace.step_count() {
        rec.begin_step();
        // Not in id order, and a different order each step: the recorder's slow path too.
        let mut boxes = trace.step(k).to_vec();
        let turn = k % boxes.len().max(1);
        boxes.rotate_left(turn);
        for b in &boxes {
            rec.add_box(
                b.id,
                &b.aabb.min.to_array()[..2],
                &b.aabb.max.to_array()[..2],
            );
        }
        rec.end_step();
    }
    let stats = rec.finish();
    assert_eq!(
        (stats.steps_sent, stats.steps_dropped),
        (150, 0),
        "{stats:?}"
    );
    received_whole(l);
    let (back, info) = stream::load(&out, TraceLimits::default()).expect("loads");
    assert_same_steps(&trace, &back);
    assert_eq!(info.engine, "rust test");
}

/// Decodes two stream files and asserts they hold the same steps, box for box.
fn same_stream_files(a: &std::path::Path, b: &std::path::Path) -> usize {
    let (ta, _) = stream::load(a, TraceLimits::default()).expect("the first loads");
    let (tb, _) = stream::load(b, TraceLimits::default()).expect("the second loads");
    assert_same_steps(&ta, &tb);
    ta.step_count()
}

#[test]
fn the_c_recorder_streams_to_listen_what_it_writes_to_a_file() {
    let Some(cc) = needs::c_compiler("to build the C recorder's example") else {
        return;
    };
    let (dir, out, l) = listen_to_file("c.aabbstream");
    let exe = dir.path().join("bounce");
    let root = env!("CARGO_MANIFEST_DIR");
    let built = Command::new(cc)
        .args(["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(format!("{root}/recorders/c/example_bounce.c"))
        .output()
        .expect("run the compiler");
    assert!(built.status.success(), "{}", text(&built.stderr));
    let file = dir.path().join("file.aabbstream");
    let port = l.port.to_string();
    let live = Command::new(&exe)
        .args([
            "--port", &port, "--fast", "--steps", "200", "--boxes", "500",
        ])
        .arg(dir.path().join("unused.aabbstream"))
        .output()
        .expect("run the example");
    assert!(live.status.success(), "{}", text(&live.stderr));
    assert!(
        text(&live.stdout).contains("streaming to the debugger"),
        "{}",
        text(&live.stdout)
    );
    received_whole(l);
    let offline = Command::new(&exe)
        .args(["--file-only", "--fast", "--steps", "200", "--boxes", "500"])
        .arg(&file)
        .output()
        .expect("run the example");
    assert!(offline.status.success(), "{}", text(&offline.stderr));
    assert_eq!(same_stream_files(&out, &file), 200);
}

#[test]
fn the_python_recorder_streams_to_listen_what_it_writes_to_a_file() {
    if !needs::python3("to run the Python recorder") {
        return;
    }
    let (dir, out, l) = listen_to_file("py.aabbstream");
    let script = format!(
        "{}/recorders/python/check_recorder.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let live = Command::new("python3")
        .args([script.as_str(), "socket", &l.port.to_string()])
        .output()
        .expect("run python");
    assert!(live.status.success(), "{}", text(&live.stderr));
    received_whole(l);
    let file = dir.path().join("file.aabbstream");
    let offline = Command::new("python3")
        .args([script.as_str(), "sets", utf8(&file)])
        .output()
        .expect("run python");
    assert!(offline.status.success(), "{}", text(&offline.stderr));
    assert_eq!(same_stream_files(&out, &file), 40);
}
