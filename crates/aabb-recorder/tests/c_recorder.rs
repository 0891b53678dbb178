//! The C recorder (recorders/c/aabb_recorder.h): the bouncing-boxes example and a check
//! program are compiled with the system's `cc -std=c99 -Wall -Wextra -Werror -O2` and run;
//! their streams, to a file and to a loopback socket, decode to the same boxes as the same
//! motion computed here, box for box; bad boxes are left out and counted; a full buffer
//! drops whole steps and the next one sent is a keyframe, and with `exact` waits instead.
//! Hostile sinks: a FIFO with no reader, one whose reader stops or exits (no SIGPIPE: the
//! process exits 0 and says what it lost), a debugger that refuses the stream (the rest goes
//! to the file). Skipped, saying so, only when no C compiler (`cc`, `gcc` or `clang`) exists;
//! with `CI=true` a missing one fails instead (`common::needs`).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::Duration;

use aabb_recorder::{Decoder, Limits, StepUpdate, StreamState, WireBox};

mod common;

fn c_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recorders/c")
}

/// Compiles `source` (in recorders/c) into `dir`; None when there is no C compiler (after
/// [`common::needs`]' rule: under CI that fails).
fn compile(source: &str, dir: &Path) -> Option<PathBuf> {
    let cc = common::needs::c_compiler("to build the C recorder")?;
    let exe = dir.join(source.trim_end_matches(".c"));
    let out = Command::new(cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-o"])
        .arg(&exe)
        .arg(c_dir().join(source))
        .output()
        .expect("runs cc");
    assert!(
        out.status.success(),
        "cc {source} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("runs the C program");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
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

/// The example's bodies, as example_bounce.c moves them (the same float operations in the
/// same order).
struct Bounce {
    seed: u32,
    bodies: Vec<[f32; 6]>, // x, y, vx, vy, hw, hh
}

const ROOM_W: f32 = 200.0;
const ROOM_H: f32 = 100.0;

impl Bounce {
    fn new(n: usize) -> Self {
        let mut b = Bounce {
            seed: 12345,
            bodies: Vec::new(),
        };
        for _ in 0..n {
            let hw = 0.2f32 + 0.8f32 * b.rnd01();
            let hh = 0.2f32 + 0.8f32 * b.rnd01();
            let x = hw + (ROOM_W - 2.0 * hw) * b.rnd01();
            let y = hh + (ROOM_H - 2.0 * hh) * b.rnd01();
            let vx = (b.rnd01() - 0.5) * 2.0;
            let vy = (b.rnd01() - 0.5) * 2.0;
            b.bodies.push([x, y, vx, vy, hw, hh]);
        }
        b
    }

    fn rnd01(&mut self) -> f32 {
        self.seed = self
            .seed
            .wrapping_mul(1_664_525)
            .wrapping_add(1_013_904_223);
        (self.seed >> 8) as f32 / 16_777_216.0
    }

    fn step(&mut self) {
        for b in &mut self.bodies {
            let [x, y, vx, vy, hw, hh] = b;
            *vy -= 0.01;
            *x += *vx;
            *y += *vy;
            let (lo, hi) = (*hw, ROOM_W - *hw);
            if *x < lo {
                *x = lo + (lo - *x);
                *vx = -*vx;
            } else if *x > hi {
                *x = hi - (*x - hi);
                *vx = -*vx;
            }
            let (lo, hi) = (*hh, ROOM_H - *hh);
            if *y < lo {
                *y = lo + (lo - *y);
                *vy = -*vy;
            } else if *y > hi {
                *y = hi - (*y - hi);
                *vy = -*vy;
            }
        }
    }

    /// The boxes present at `step`, sorted by id.
    fn boxes(&self, step: usize) -> Vec<WireBox> {
        self.bodies
            .iter()
            .enumerate()
            .filter(|(i, _)| !(step / 50 + i).is_multiple_of(10))
            .map(|(i, &[x, y, _, _, hw, hh])| WireBox {
                id: i as u32 * 3 + 1,
                min: [x - hw, y - hh, 0.0],
                max: [x + hw, y + hh, 0.0],
            })
            .collect()
    }
}

fn check_bounce(steps: &[StepUpdate], n: usize, count: usize) {
    assert_eq!(steps.len(), count);
    let mut motion = Bounce::new(n);
    for (k, u) in steps.iter().enumerate() {
        assert_eq!(u.step, k as u64);
        assert_eq!(u.dropped_before, 0);
        assert_eq!(u.keyframe, k == 0);
        assert_eq!(*u.boxes, motion.boxes(k), "step {k}");
        motion.step();
    }
}

#[test]
fn the_bounce_example_to_a_file_decodes_to_the_same_motion() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let Some(exe) = compile("example_bounce.c", dir.path()) else {
        return;
    };
    let file = dir.path().join("bounce.aabbstream");
    let out = run(Command::new(&exe)
        .arg(&file)
        .args(["--file-only", "--steps", "260"]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!("writing {}\n", file.display())),
        "{stdout}"
    );
    let bytes = std::fs::read(&file).expect("the stream file");
    assert!(stdout.ends_with(&format!(
        "260 steps: 260 sent, 0 dropped, {} bytes\n",
        bytes.len()
    )));
    let (state, steps) = decode(&bytes[..]);
    let hello = state.hello().expect("a handshake");
    assert_eq!(
        (
            hello.engine.as_str(),
            hello.dimensions,
            hello.dt_secs,
            hello.units.as_str()
        ),
        ("example_bounce (C, aabb_recorder.h)", 2, 1.0 / 60.0, "m")
    );
    let walls: Vec<(u32, [f32; 2], [f32; 2])> = state
        .statics()
        .iter()
        .map(|b| (b.id, [b.min[0], b.min[1]], [b.max[0], b.max[1]]))
        .collect();
    assert_eq!(
        walls,
        [
            (100_000, [0.0, -1.0], [200.0, 0.0]),
            (100_001, [0.0, 100.0], [200.0, 101.0]),
            (100_002, [-1.0, 0.0], [0.0, 100.0]),
            (100_003, [200.0, 0.0], [201.0, 100.0]),
        ]
    );
    check_bounce(&steps, 2000, 260);
    // Steps 50 and 100 swap which tenth is away; 99 and 199 are added in reverse.
    assert_eq!((steps[50].appeared, steps[50].gone), (200, 200));
    assert_eq!(
        (steps[99].appeared, steps[99].moved, steps[99].gone),
        (0, 1800, 0)
    );
    let bye = state.bye().expect("a clean end");
    assert_eq!((bye.steps_sent, bye.steps_dropped), (260, 0));
}

#[test]
fn the_bounce_example_streams_to_a_listening_debugger() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let Some(exe) = compile("example_bounce.c", dir.path()) else {
        return;
    };
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = listener.local_addr().expect("an address").port();
    let mut child = Command::new(&exe)
        .arg(dir.path().join("unused.aabbstream"))
        .args(["--steps", "150", "--boxes", "500", "--fast"])
        .env("AABB_DEBUGGER_PORT", port.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .expect("starts the example");
    let (conn, _) = listener.accept().expect("the example connects");
    let (state, steps) = decode(conn);
    let status = child.wait().expect("the example ends");
    assert!(status.success());
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("its stdout")
        .read_to_string(&mut stdout)
        .expect("reads stdout");
    assert!(
        stdout.starts_with(&format!("streaming to the debugger at 127.0.0.1:{port}\n")),
        "{stdout}"
    );
    assert!(!dir.path().join("unused.aabbstream").exists());
    check_bounce(&steps, 500, 150);
    assert_eq!(state.statics().len(), 4);
    assert!(state.bye().is_some());
}

fn wb(id: u32, min: [f32; 2], max: [f32; 2]) -> WireBox {
    WireBox {
        id,
        min: [min[0], min[1], 0.0],
        max: [max[0], max[1], 0.0],
    }
}

#[test]
fn the_engine_parts_round_trip_exactly() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let Some(exe) = compile("check_recorder.c", dir.path()) else {
        return;
    };
    let file = dir.path().join("parts.aabbstream");
    let out = run(Command::new(&exe).arg("parts").arg(&file));
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

#[test]
fn bad_boxes_are_left_out_and_counted() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let Some(exe) = compile("check_recorder.c", dir.path()) else {
        return;
    };
    let file = dir.path().join("rejects.aabbstream");
    let out = run(Command::new(&exe).arg("rejects").arg(&file));
    // 1 outside a step, 2 static, 5 a step in the same order and 2 in reverse, 6 times.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "rejects: steps 12 sent 12 dropped 0 rejected 45 error \"\" last \"box 50: has a static box's id\"\n"
    );
    let (state, steps) = decode(&std::fs::read(&file).expect("the file")[..]);
    assert_eq!(state.statics(), &[wb(50, [0.0, 0.0], [1.0, 1.0])]);
    let got: Vec<Vec<WireBox>> = steps.into_iter().map(|u| u.boxes.to_vec()).collect();
    let mut expected = Vec::new();
    for t in 0..6 {
        let x = t as f32;
        expected.push(
            (1..=4)
                .map(|id| wb(id, [x, 0.0], [x + 1.0, 1.0]))
                .collect::<Vec<_>>(),
        );
        expected.push((1..=4).map(|id| wb(id, [x, 1.0], [x + 1.0, 2.0])).collect());
    }
    assert_eq!(got, expected);
}

#[test]
fn a_full_buffer_drops_whole_steps_and_the_next_is_a_keyframe() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let Some(exe) = compile("check_recorder.c", dir.path()) else {
        return;
    };
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = listener.local_addr().expect("an address").port();
    let child = Command::new(&exe)
        .args(["drops", &port.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("starts the check");
    let (conn, _) = listener.accept().expect("the check connects");
    // A debugger that does not read for 600 ms: the kernel's buffers and the recorder's
    // 200 kB fill up (2,000 boxes a step are 40 kB, sent every 2 ms).
    thread::sleep(Duration::from_millis(600));
    let (state, steps) = decode(conn);
    let out = child.wait_with_output().expect("the check ends");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dropped: Vec<u64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("dropped "))
        .map(|n| n.parse().expect("a step number"))
        .collect();
    assert!(!dropped.is_empty(), "nothing was dropped:\n{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        format!(
            "drops: steps 400 sent {} dropped {} rejected 0 error \"\" last \"\"",
            400 - dropped.len(),
            dropped.len()
        )
    );
    let sent: Vec<u64> = (0..400).filter(|s| !dropped.contains(s)).collect();
    assert_eq!(steps.iter().map(|u| u.step).collect::<Vec<_>>(), sent);
    let mut previous: Option<u64> = None;
    for u in &steps {
        let gap = match previous {
            Some(p) => u.step - p - 1,
            None => u.step,
        };
        assert_eq!(u.dropped_before, gap);
        assert_eq!(u.keyframe, previous.is_none() || gap > 0, "step {}", u.step);
        let expected: Vec<WireBox> = (0..2000u32)
            .map(|i| {
                let x = i as f32 + u.step as f32 * 0.5;
                wb(i, [x, 0.0], [x + 1.0, 1.0])
            })
            .collect();
        assert_eq!(*u.boxes, expected, "step {}", u.step);
        previous = Some(u.step);
    }
    let bye = state.bye().expect("a clean end");
    assert_eq!(
        (bye.steps_sent, bye.steps_dropped),
        (sent.len() as u64, dropped.len() as u64)
    );
}

#[test]
fn exact_mode_waits_for_a_slow_debugger_and_loses_nothing() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let Some(exe) = compile("check_recorder.c", dir.path()) else {
        return;
    };
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = listener.local_addr().expect("an address").port();
    let child = Command::new(&exe)
        .args(["exact", &port.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("starts the check");
    let (conn, _) = listener.accept().expect("the check connects");
    thread::sleep(Duration::from_millis(600));
    let (state, steps) = decode(conn);
    let out = child.wait_with_output().expect("the check ends");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "exact: steps 200 sent 200 dropped 0 rejected 0 error \"\" last \"\"\n"
    );
    assert_eq!(steps.len(), 200);
    for (k, u) in steps.iter().enumerate() {
        assert_eq!(
            (u.step, u.keyframe, u.dropped_before),
            (k as u64, k == 0, 0)
        );
        let expected: Vec<WireBox> = (0..2000u32)
            .map(|i| {
                let x = i as f32 + k as f32 * 0.5;
                wb(i, [x, 0.0], [x + 1.0, 1.0])
            })
            .collect();
        assert_eq!(*u.boxes, expected, "step {k}");
    }
    assert!(state.bye().is_some());
}

#[cfg(target_os = "linux")]
#[test]
fn fifos_without_a_reader_stalled_or_gone_cost_steps_not_the_process() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let Some(exe) = compile("check_recorder.c", dir.path()) else {
        return;
    };
    let fifos = dir.path().join("fifos");
    std::fs::create_dir(&fifos).expect("a folder");
    // A reader that exits raises no SIGPIPE: the process ends normally (run asserts 0).
    let out = run(Command::new(&exe).arg("fifo").arg(&fifos));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = stdout.lines().collect();
    let d = fifos.display();
    assert_eq!(lines.len(), 7, "{stdout}");
    assert_eq!(
        lines[..2],
        [
            "no reader: a FIFO that no process reads (opened without waiting); at once 1",
            "no debugger, no reader: a FIFO that no process reads (opened without waiting); \
             at once 1"
        ]
    );
    let f: Vec<&str> = lines[2].split(' ').collect();
    let sent = f[4].parse::<u64>().expect("a count");
    assert_eq!(
        lines[2],
        format!(
            "stalled: steps 30 sent {sent} dropped {} delivered {sent} closed within the \
             timeout 1",
            30 - sent
        ),
        "the steps sent are the steps delivered"
    );
    let stalled = format!(
        "stalled error: writing to {d}/stalled.fifo: no progress for 300 ms (it stopped reading)"
    );
    let cut = format!("stalled error: closing: {d}/stalled.fifo took nothing more for 300 ms; ");
    assert!(
        lines[3] == stalled
            || (lines[3].starts_with(&cut) && lines[3].ends_with(" steps not written were cut")),
        "{}",
        lines[3]
    );
    assert_eq!(lines[4], "exits: steps 10 sent 0 dropped 10 connected 0");
    assert_eq!(
        lines[5],
        format!("exits error: writing to {d}/exits.fifo: its reader went away: Broken pipe")
    );
    assert_eq!(
        lines[6],
        "full: steps 5 sent 0 dropped 5 error writing to /dev/full: No space left on device"
    );
}

/// What a `check_recorder refused` run left: its stdout (the file's size as N), the file's
/// steps as (step, keyframe, dropped before), the file's BYE, the port, the file.
struct Refused {
    stdout: String,
    seen: Vec<(u64, bool, u64)>,
    bye: (u64, u64),
    port: u16,
    file: PathBuf,
}

/// Runs `check_recorder refused` against a debugger that reads 4 steps, then refuses.
fn refused_case(extra: &[&str]) -> Option<Refused> {
    let dir = tempfile::tempdir().expect("a temp dir");
    let exe = compile("check_recorder.c", dir.path())?;
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = listener.local_addr().expect("an address").port();
    let file = dir.path().join("refused.aabbstream");
    let child = Command::new(&exe)
        .args(["refused", &port.to_string()])
        .arg(&file)
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .expect("starts the check");
    let (mut conn, _) = listener.accept().expect("the check connects");
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
    let out = child.wait_with_output().expect("the check ends");
    assert!(out.status.success());
    let bytes = std::fs::read(&file).expect("the fallback file");
    let (state, steps) = decode(&bytes[..]);
    assert_eq!(state.statics(), &[wb(77, [-5.0, -5.0], [5.0, -4.0])]);
    for u in &steps {
        let expected: Vec<WireBox> = (0..50u32)
            .map(|i| {
                let x = i as f32 + u.step as f32 * 0.5;
                wb(i, [x, 0.0], [x + 1.0, 0.5])
            })
            .collect();
        assert_eq!(*u.boxes, expected, "step {}", u.step);
    }
    let seen = steps
        .iter()
        .map(|u| (u.step, u.keyframe, u.dropped_before))
        .collect();
    let bye = state.bye().expect("a clean end");
    let stdout = String::from_utf8_lossy(&out.stdout).replace(&bytes.len().to_string(), "N");
    // Keeps the folder (and the file) until the caller is done.
    let kept = dir.keep();
    Some(Refused {
        stdout,
        seen,
        bye: (bye.steps_sent, bye.steps_dropped),
        port,
        file: kept.join("refused.aabbstream"),
    })
}

#[test]
fn a_refusing_debugger_sends_the_whole_stream_to_the_file() {
    let Some(Refused {
        stdout,
        seen,
        bye,
        port,
        file,
    }) = refused_case(&[])
    else {
        return;
    };
    // What the debugger was sent is replayed into the file: nothing is lost.
    assert_eq!(
        stdout,
        format!(
            "first target: debugger\n\
             refused: steps 10 sent 10 dropped 0 refused 0 bytes N error \"\"\n\
             to file 1\n\
             fallback: the debugger at 127.0.0.1:{port} refused the stream: another engine is \
             live; the stream goes on in {}\n",
            file.display()
        )
    );
    assert_eq!(seen, (0..10u64).map(|k| (k, k == 0, 0)).collect::<Vec<_>>());
    assert_eq!(bye, (10, 0));
    let _cleanup = std::fs::remove_dir_all(file.parent().expect("its folder"));
}

#[test]
fn a_refusal_past_the_replay_budget_loses_the_steps_sent_and_says_so() {
    // 3,000 bytes kept to replay: the steps (1 kB each) are past it at step 2.
    let Some(Refused {
        stdout,
        seen,
        bye,
        port,
        file,
    }) = refused_case(&["3000"])
    else {
        return;
    };
    assert_eq!(
        stdout,
        format!(
            "first target: debugger\n\
             refused: steps 10 sent 6 dropped 4 refused 4 bytes N error \"\"\n\
             to file 1\n\
             fallback: the debugger at 127.0.0.1:{port} refused the stream: another engine is \
             live; the stream goes on in {}\n",
            file.display()
        )
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
    assert_eq!(bye, (6, 4));
    let _cleanup = std::fs::remove_dir_all(file.parent().expect("its folder"));
}

#[test]
fn a_fast_engine_refused_after_its_end_still_writes_its_file() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let Some(exe) = compile("check_recorder.c", dir.path()) else {
        return;
    };
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = listener.local_addr().expect("an address").port();
    let file = dir.path().join("fast.aabbstream");
    let child = Command::new(&exe)
        .args(["fast", &port.to_string()])
        .arg(&file)
        .stdout(Stdio::piped())
        .spawn()
        .expect("starts the check");
    // Refuses at once, reading nothing.
    let (mut conn, _) = listener.accept().expect("the check connects");
    conn.write_all(b"AABB refused: another engine is live\n")
        .expect("writes the refusal");
    drop(conn);
    let out = child.wait_with_output().expect("the check ends");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "fast: steps 70 sent 70 dropped 0 to file 1 error \"\"\n"
    );
    let (state, steps) = decode(&std::fs::read(&file).expect("the file")[..]);
    assert_eq!(steps.len(), 70);
    assert_eq!(
        state.bye().map(|b| (b.steps_sent, b.steps_dropped)),
        Some((70, 0))
    );
}
