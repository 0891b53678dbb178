//! The Python recorder (recorders/python/aabb_recorder.py), run by `python3`: its streams, to
//! a file and to a loopback socket, decode to what the check script says it sent, box for
//! box (its numbers rounded to f32 as the wire holds them); bad boxes are left out and
//! counted; a full queue drops whole steps and the next is a keyframe; `exact` loses
//! nothing; and, where pymunk is installed, the pymunk pile example decodes. Hostile sinks
//! and arguments: a FIFO with no reader, one whose reader stops or exits, a debugger that
//! refuses the stream (the rest goes to the file), arguments of every wrong kind (counted,
//! never raised). Skipped, saying so, only when there is no `python3` (the pymunk part when
//! pymunk is missing); with `CI=true` a missing `python3` or pymunk fails instead
//! (`common::needs`).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use aabb_recorder::{Decoder, Limits, StepUpdate, StreamState, WireBox};

mod common;

#[test]
fn the_engine_parts_round_trip_exactly() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("parts.aabbstream");
    let out = run(check_script().arg("parts").arg(&file));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "parts: steps 3 sent 3 rejected 0 parts rejected {}\n",
            common::PARTS_REJECTED
        )
    );
    let bytes = std::fs::read(&file).expect("the file");
    let (_, steps) = decode(&bytes[..]);
    let parts: Vec<_> = steps.into_iter().map(|u| u.engine).collect();
    assert_eq!(parts, common::parts_case());
    assert_eq!(
        common::repeated_sections(&bytes),
        common::parts_case_repeats()
    );
}

fn py_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recorders/python")
}

/// True when `python3` runs; else false after [`common::needs`]' rule (under CI it fails).
fn have_python() -> bool {
    common::needs::python3("to run the Python recorder")
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("runs python3");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn check_script() -> Command {
    let mut c = Command::new("python3");
    c.arg(py_dir().join("check_recorder.py"));
    c
}

fn decode(bytes: impl Read) -> (StreamState, Vec<StepUpdate>) {
    let mut d = Decoder::new(bytes, Limits::default());
    let mut s = StreamState::new(Limits::default());
    let mut out = Vec::new();
    while let Some(u) = s.next_step(&mut d).expect("a valid stream") {
        out.push(u);
    }
    (s, out)
}

/// The sets the script printed (`step S`, then `box ID X0 Y0 X1 Y1` in Python's repr), as
/// f32 boxes, and its last line.
fn printed_sets(stdout: &str) -> (Vec<Vec<WireBox>>, String) {
    let mut sets: Vec<Vec<WireBox>> = Vec::new();
    let mut last = String::new();
    for line in stdout.lines() {
        if line.starts_with("step ") {
            sets.push(Vec::new());
        } else if let Some(rest) = line.strip_prefix("box ") {
            let f: Vec<&str> = rest.split(' ').collect();
            let num = |s: &str| s.parse::<f64>().expect("a number") as f32;
            let b = WireBox {
                id: f[0].parse().expect("an id"),
                min: [num(f[1]), num(f[2]), 0.0],
                max: [num(f[3]), num(f[4]), 0.0],
            };
            sets.last_mut().expect("a step line first").push(b);
        } else {
            last = line.to_owned();
        }
    }
    (sets, last)
}

const SETS_STATS: &str = "stats: steps 40 sent 40 dropped 0 rejected 242 error None \
                          last box 780: float too large to pack with f format";

fn check_sets(state: &StreamState, steps: &[StepUpdate], stdout: &str) {
    let (expected, last) = printed_sets(stdout);
    // 1 outside a step, 1 static twice, 6 bad boxes a step for 40 steps.
    assert_eq!(last, SETS_STATS);
    assert_eq!(expected.len(), 40);
    assert_eq!(steps.len(), 40);
    for (k, (u, e)) in steps.iter().zip(&expected).enumerate() {
        assert_eq!(u.step, k as u64);
        assert_eq!(u.keyframe, k == 0);
        assert_eq!(&*u.boxes, e, "step {k}");
    }
    let hello = state.hello().expect("a handshake");
    assert_eq!((hello.engine.as_str(), hello.dt_secs), ("check sets", 0.5));
    assert_eq!(
        state.statics(),
        &[
            WireBox {
                id: 900,
                min: [-1.0, -1.0, 0.0],
                max: [100.0, 0.0, 0.0]
            },
            WireBox {
                id: 901,
                min: [-1.0, 0.0, 0.0],
                max: [0.0, 10.0, 0.0]
            },
        ]
    );
    let bye = state.bye().expect("a clean end");
    assert_eq!((bye.steps_sent, bye.steps_dropped), (40, 0));
}

#[test]
fn a_file_holds_what_the_script_sent_box_for_box() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("sets.aabbstream");
    let out = run(check_script().arg("sets").arg(&file));
    let (state, steps) = decode(&std::fs::read(&file).expect("the file")[..]);
    check_sets(&state, &steps, &String::from_utf8_lossy(&out.stdout));
    // Boxes standing still are not sent again (every fourth box moves every third step).
    assert!(steps[1].moved < steps[1].boxes.len() as u32);
}

#[test]
fn a_loopback_socket_gets_what_the_script_sent() {
    if !have_python() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = listener.local_addr().expect("an address").port();
    let child = check_script()
        .args(["socket", &port.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("starts python3");
    let (conn, _) = listener.accept().expect("the script connects");
    let (state, steps) = decode(conn);
    let out = child.wait_with_output().expect("the script ends");
    assert!(out.status.success());
    check_sets(&state, &steps, &String::from_utf8_lossy(&out.stdout));
}

fn four(t: f32) -> Vec<WireBox> {
    (1..=4)
        .map(|id| WireBox {
            id,
            min: [t, 0.0, 0.0],
            max: [t + 1.0, 0.5, 0.0],
        })
        .collect()
}

#[test]
fn a_full_queue_drops_whole_steps_and_the_next_is_a_keyframe() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("drops.aabbstream");
    let out = run(check_script().arg("drops").arg(&file));
    let bytes = std::fs::read(&file).expect("the file");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "statuses True False False True True\nstats: steps 5 sent 3 dropped 2 bytes {}\n",
            bytes.len()
        )
    );
    let (state, steps) = decode(&bytes[..]);
    let seen: Vec<(u64, bool, u64)> = steps
        .iter()
        .map(|u| (u.step, u.keyframe, u.dropped_before))
        .collect();
    assert_eq!(seen, [(0, true, 0), (3, true, 2), (4, false, 0)]);
    for u in &steps {
        assert_eq!(*u.boxes, four(u.step as f32));
    }
    let bye = state.bye().expect("a clean end");
    assert_eq!((bye.steps_sent, bye.steps_dropped), (3, 2));
}

#[test]
fn exact_mode_loses_nothing() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("exact.aabbstream");
    let out = run(check_script().arg("exact").arg(&file));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "all sent\nstats: steps 30 sent 30 dropped 0\n"
    );
    let (_, steps) = decode(&std::fs::read(&file).expect("the file")[..]);
    assert_eq!(steps.len(), 30);
    for (k, u) in steps.iter().enumerate() {
        assert_eq!(u.step, k as u64);
        assert_eq!(*u.boxes, four(k as f32));
    }
}

#[test]
fn the_pymunk_pile_example_decodes() {
    if !have_python() {
        return;
    }
    if !common::needs::pymunk("to run the pymunk pile example") {
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("pile.aabbstream");
    let out = run(Command::new("python3")
        .arg(py_dir().join("examples/pymunk_pile.py"))
        .arg(&file)
        .args(["--file-only", "--steps", "120"]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let bytes = std::fs::read(&file).expect("the file");
    assert_eq!(
        stdout,
        format!(
            "writing {}\n120 steps, 40 bodies: 120 sent, 0 dropped, {} bytes\n",
            file.display(),
            bytes.len()
        )
    );
    let (state, steps) = decode(&bytes[..]);
    assert_eq!(steps.len(), 120);
    let hello = state.hello().expect("a handshake");
    assert!(hello.engine.starts_with("pymunk 7."), "{}", hello.engine);
    assert_eq!((hello.dimensions, hello.units.as_str()), (2, "px"));
    assert_eq!(state.statics().len(), 3);
    // One body poured every 3 steps, from step 0: ids 1 to 40 at the end.
    let last = steps[119].boxes.as_slice();
    assert_eq!(
        last.iter().map(|b| b.id).collect::<Vec<_>>(),
        (1..=40).collect::<Vec<_>>()
    );
    for (k, u) in steps.iter().enumerate() {
        assert_eq!(u.boxes.len(), k / 3 + 1, "step {k}");
    }
    // Inside the container: within its walls' boxes, together.
    let walls = state.statics();
    let left = walls.iter().map(|w| w.min[0]).fold(f32::INFINITY, f32::min);
    let right = walls
        .iter()
        .map(|w| w.max[0])
        .fold(f32::NEG_INFINITY, f32::max);
    let floor = walls.iter().map(|w| w.min[1]).fold(f32::INFINITY, f32::min);
    assert_eq!((left, right, floor), (-10.0, 610.0, -10.0));
    for b in last {
        assert!(
            b.min[0] >= left && b.max[0] <= right && b.min[1] >= floor,
            "{b:?}"
        );
    }
    assert!(state.bye().is_some());
}

#[test]
fn hostile_arguments_are_counted_never_raised() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("hostile.aabbstream");
    let out = run(check_script().arg("hostile").arg(&file));
    // 2 statics, and 11 boxes and 19 parts a step over 3 steps.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hostile: steps 3 sent 3 rejected 35 parts rejected 57 raised 0\n"
    );
    let (_, steps) = decode(&std::fs::read(&file).expect("the file")[..]);
    let sets: Vec<Vec<WireBox>> = steps.into_iter().map(|u| u.boxes.to_vec()).collect();
    let one = |t: f32| {
        vec![WireBox {
            id: 1,
            min: [t, 0.0, 0.0],
            max: [t + 1.0, 1.0, 0.0],
        }]
    };
    assert_eq!(sets, vec![one(0.0), one(1.0), one(2.0)]);
}

#[cfg(target_os = "linux")]
#[test]
fn fifos_without_a_reader_stalled_or_gone_cost_steps_not_the_loop() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = run(check_script().arg("fifo").arg(dir.path()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = stdout.lines().collect();
    let d = dir.path().display();
    assert_eq!(lines.len(), 7, "{stdout}");
    assert_eq!(
        lines[0],
        format!(
            "no reader: {d}/none.fifo: a FIFO that no process reads (opened without waiting); \
             at once True"
        )
    );
    assert_eq!(
        lines[1],
        format!(
            "no debugger, no reader: {d}/none.fifo: a FIFO that no process reads (opened \
             without waiting); at once True"
        )
    );
    let f: Vec<&str> = lines[2].split(' ').collect();
    let num = |k: usize| f[k].parse::<u64>().expect("a count");
    assert_eq!(
        lines[2],
        format!(
            "stalled: steps 30 sent {} dropped {} delivered {} closed within the timeout True",
            num(8),
            30 - num(8),
            num(8)
        ),
        "the steps sent are the steps delivered"
    );
    let stalled = format!(
        "stalled error: writing to file {d}/stalled.fifo: no progress within the timeout (it \
         stopped reading)"
    );
    let cut = format!(
        "stalled error: closing: file {d}/stalled.fifo took nothing more within the timeout \
         (0.3 s); "
    );
    assert!(
        lines[3] == stalled
            || (lines[3].starts_with(&cut) && lines[3].ends_with(" steps not written were cut")),
        "{}",
        lines[3]
    );
    assert_eq!(
        lines[4],
        "exits: steps 10 sent 0 dropped 10 connected False"
    );
    assert_eq!(
        lines[5],
        format!(
            "exits error: writing to file {d}/exits.fifo: its reader went away ([Errno 32] \
             Broken pipe)"
        )
    );
    assert_eq!(
        lines[6],
        "full: steps 5 sent 0 dropped 5 error writing to file /dev/full: [Errno 28] No space \
         left on device"
    );
}

/// A decoded step: its number, whether a keyframe, the steps dropped before it.
type Seen = (u64, bool, u64);

/// Runs `check_recorder.py refused` (with `extra` arguments) against a debugger that reads
/// 4 steps, then refuses; checks the file's boxes and gives its stdout (the file's size as
/// N, the port as P, the file as F) and its steps as (step, keyframe, dropped before).
fn refused_case(extra: &[&str]) -> (String, Vec<Seen>, Option<(u64, u64)>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = listener.local_addr().expect("an address").port();
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("refused.aabbstream");
    let child = check_script()
        .args(["refused", &port.to_string()])
        .arg(&file)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts python3");
    let (mut conn, _) = listener.accept().expect("the script connects");
    {
        let mut d = Decoder::new(conn.try_clone().expect("a clone"), Limits::default());
        let mut s = StreamState::new(Limits::default());
        for _ in 0..4 {
            s.next_step(&mut d)
                .expect("a valid stream")
                .expect("a step");
        }
    }
    conn.write_all(b"AABB refused: another engine is live\n")
        .expect("writes the refusal");
    drop(conn);
    let out = child.wait_with_output().expect("the script ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&file).expect("the fallback file");
    let (state, steps) = decode(&bytes[..]);
    assert_eq!(state.statics().len(), 1);
    for u in &steps {
        let expected: Vec<WireBox> = (0..50u32)
            .map(|i| {
                let x = i as f32 + u.step as f32 * 0.5;
                WireBox {
                    id: i,
                    min: [x, 0.0, 0.0],
                    max: [x + 1.0, 0.5, 0.0],
                }
            })
            .collect();
        assert_eq!(*u.boxes, expected, "step {}", u.step);
    }
    let stdout = String::from_utf8_lossy(&out.stdout)
        .replace(&format!(" bytes {} ", bytes.len()), " bytes N ")
        .replace(&file.display().to_string(), "F")
        .replace(&port.to_string(), "P");
    let seen = steps
        .iter()
        .map(|u| (u.step, u.keyframe, u.dropped_before))
        .collect();
    let bye = state.bye().map(|b| (b.steps_sent, b.steps_dropped));
    (stdout, seen, bye)
}

#[test]
fn a_refusing_debugger_sends_the_whole_stream_to_the_file() {
    if !have_python() {
        return;
    }
    let (stdout, seen, bye) = refused_case(&[]);
    // What the debugger was sent is replayed into the file: nothing is lost.
    assert_eq!(
        stdout,
        "first target: socket 127.0.0.1:P\n\
         refused: steps 10 sent 10 dropped 0 refused 0 bytes N error None\n\
         target: file F\n\
         fallback: socket 127.0.0.1:P refused the stream: another engine is live; the stream \
         goes on in F\n"
    );
    assert_eq!(seen, (0..10u64).map(|k| (k, k == 0, 0)).collect::<Vec<_>>());
    assert_eq!(bye, Some((10, 0)));
}

#[test]
fn a_refusal_past_the_replay_budget_loses_the_steps_sent_and_says_so() {
    if !have_python() {
        return;
    }
    // 3,000 bytes kept to replay: the steps (1 kB each) are past it at step 2.
    let (stdout, seen, bye) = refused_case(&["3000"]);
    assert_eq!(
        stdout,
        "first target: socket 127.0.0.1:P\n\
         refused: steps 10 sent 6 dropped 4 refused 4 bytes N error None\n\
         target: file F\n\
         fallback: socket 127.0.0.1:P refused the stream: another engine is live; the stream \
         goes on in F\n"
    );
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
    assert_eq!(bye, Some((6, 4)));
}

#[test]
fn a_fast_engine_refused_after_its_end_still_writes_its_file() {
    if !have_python() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = listener.local_addr().expect("an address").port();
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("fast.aabbstream");
    let child = check_script()
        .args(["fast", &port.to_string()])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts python3");
    // Refuses at once, reading nothing.
    let (mut conn, _) = listener.accept().expect("the script connects");
    conn.write_all(b"AABB refused: another engine is live\n")
        .expect("writes the refusal");
    drop(conn);
    let out = child.wait_with_output().expect("the script ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "fast: steps 70 sent 70 dropped 0 target file error None\n"
    );
    let (state, steps) = decode(&std::fs::read(&file).expect("the file")[..]);
    assert_eq!(steps.len(), 70);
    assert_eq!(
        state.bye().map(|b| (b.steps_sent, b.steps_dropped)),
        Some((70, 0))
    );
}

#[test]
fn close_leaves_a_debugger_that_reads_nothing_within_the_timeout() {
    if !have_python() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = listener.local_addr().expect("an address").port();
    let child = check_script()
        .args(["stall", &port.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts python3");
    // Accepts and reads nothing until the script has ended.
    let (conn, _) = listener.accept().expect("the script connects");
    let out = child.wait_with_output().expect("the script ends");
    drop(conn);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(
        lines[0],
        "stall: steps 40 sent and dropped 40 some dropped True closed within the timeout True"
    );
    let stalled = format!(
        "stall error: writing to socket 127.0.0.1:{port}: no progress within the timeout (it \
         stopped reading)"
    );
    let cut = format!(
        "stall error: closing: socket 127.0.0.1:{port} took nothing more within the timeout \
         (0.3 s); "
    );
    assert!(
        lines[1] == stalled
            || (lines[1].starts_with(&cut) && lines[1].ends_with(" steps not written were cut")),
        "{}",
        lines[1]
    );
}
