//! `listen` against hostile peers and broken pipes: garbage, an HTTP request, idle sockets, a
//! trickled HELLO that says 64 MiB, a slow handshake, fifty connections at once, then a real
//! engine, recorded exactly; a frame that stops arriving; Ctrl-C; `--keep-listening` with two
//! engines one after the other; an `--out` left alone until an engine comes; another user's
//! file in a sticky folder refused by every output.

use crate::common::cli::{bin, text, utf8};
use crate::common::needs;
use crate::live_link::{Listening, drifting, hello_bytes, listen, step_bytes, stream_bytes, wbox};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn connect(port: u16) -> TcpStream {
    let conn = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    conn
}

/// Sends SIGINT to the child, as Ctrl-C would (through the shell's own `kill`).
fn interrupt(l: &Listening) {
    let pid = l.child.id();
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("kill -INT {pid}")])
        .status()
        .expect("sh");
    assert!(status.success());
}

/// Reads what the debugger writes before it closes: its refusal line.
fn refusal(conn: &mut TcpStream) -> String {
    let mut reply = Vec::new();
    // A reset after the line (the peer's own unread bytes) is no failure here.
    let _read = conn.read_to_end(&mut reply);
    String::from_utf8_lossy(&reply).into_owned()
}

#[test]
fn hostile_peers_first_then_a_real_engine_recorded_exactly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("live.aabbstream");
    // Kept listening after the engine, so that the slow handshake's refusal comes too.
    let mut l = listen(&[
        "--out",
        utf8(&out),
        "--handshake-timeout",
        "8",
        "--keep-listening",
    ]);
    let out = dir.path().join("live-1.aabbstream");
    let started = Instant::now();

    let mut garbage = connect(l.port);
    let garbage_addr = garbage.local_addr().expect("addr");
    garbage
        .write_all(b"\x00\xff\x13garbage, not a stream")
        .expect("send");
    let mut http = connect(l.port);
    let http_addr = http.local_addr().expect("addr");
    http.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .expect("send");
    // A HELLO whose length says 64 MiB, its bytes trickled: refused once the length is read.
    let mut bomb = connect(l.port);
    let bomb_addr = bomb.local_addr().expect("addr");
    let mut head = b"AABBSTRM".to_vec();
    head.extend_from_slice(&(64u32 << 20).to_le_bytes());
    for b in &head {
        bomb.write_all(&[*b]).expect("trickle");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        refusal(&mut garbage),
        "AABB refused: not a recorder's handshake\n"
    );
    assert_eq!(
        refusal(&mut http),
        "AABB refused: not a recorder's handshake\n"
    );
    assert_eq!(
        refusal(&mut bomb),
        "AABB refused: not a recorder's handshake\n"
    );

    // A slow handshake: a valid start, a byte at a time, never done in time.
    let slow = connect(l.port);
    let slow_addr = slow.local_addr().expect("addr");
    let trickle = std::thread::spawn(move || {
        let mut slow = slow;
        // A byte every 300 ms: the 35 bytes of a HELLO would take 10.5 s, past the 8 s allowed.
        slow.set_read_timeout(Some(Duration::from_millis(300)))
            .expect("timeout");
        let mut reply = Vec::new();
        for b in hello_bytes().iter().cycle().take(200) {
            // It stops sending once the debugger has answered (a peer that goes on writing
            // into a closed connection is reset, and may lose the line).
            let mut buf = [0u8; 64];
            match slow.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => reply.extend_from_slice(&buf[..n]),
                Err(_) => {}
            }
            if reply.ends_with(b"\n") || slow.write_all(&[*b]).is_err() {
                break;
            }
        }
        slow.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let _rest = slow.read_to_end(&mut reply);
        String::from_utf8_lossy(&reply).into_owned()
    });
    // Fifty idle sockets at once.
    let idle: Vec<TcpStream> = (0..50).map(|_| connect(l.port)).collect();

    // The engine, while the idle sockets and the trickle still hold their connections.
    let trace = drifting(60);
    let sent = stream_bytes(&trace);
    let mut engine = connect(l.port);
    engine.write_all(&sent).expect("send");
    drop(engine);
    let mut lines = Vec::new();
    for line in l.lines.by_ref() {
        let line = line.expect("text");
        let end = line.contains("\"end\"");
        lines.push(line);
        if end {
            break;
        }
    }
    // Received whole while the trickle and the idle sockets still wait for their handshake.
    assert!(started.elapsed() < Duration::from_secs(8), "{lines:?}");
    let slow_reply = trickle.join().expect("trickle");
    drop(idle);
    interrupt(&l);
    let (code, rest, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::read(&out).expect("the file") == sent);
    let last: serde_json::Value =
        serde_json::from_str(lines.last().expect("a last line")).expect("json");
    assert_eq!(last["end"], "bye");
    let summary: serde_json::Value =
        serde_json::from_str(rest.last().expect("the summary")).expect("json");
    assert_eq!(summary["sessions"], 1);
    // Garbage, HTTP, the bomb, the trickle and the fifty idle sockets.
    assert_eq!(summary["not_recorders"], 54, "{err}");
    assert_eq!(last["steps"], 60);
    assert_eq!(last["steps_written"], 60);
    assert_eq!(
        lines.iter().filter(|l| l.contains("\"connected\"")).count(),
        1,
        "{lines:?}"
    );
    let refused = |addr: std::net::SocketAddr| {
        err.lines()
            .find(|l| l.contains(&format!("connection from {addr}:")))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        refused(garbage_addr).starts_with(&format!(
            "refused a peer that is not a recorder: connection from {garbage_addr}: byte 0: \
             not an aabb stream"
        )),
        "{err}"
    );
    assert!(refused(http_addr).contains("HTTP"), "{err}");
    assert_eq!(
        refused(bomb_addr),
        format!(
            "refused a peer that is not a recorder: connection from {bomb_addr}: byte 8: the \
             first frame says it is 67108864 bytes long; it must be a HELLO, at most 523 bytes \
             (not a recorder's handshake)"
        )
    );
    assert_eq!(slow_reply, "AABB refused: not a recorder's handshake\n");
    assert!(refused(slow_addr).contains("no handshake in time"), "{err}");
}

#[test]
fn a_frame_that_stops_arriving_times_out_with_the_steps_before_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("stalled.aabbstream");
    let l = listen(&["--out", utf8(&out), "--frame-timeout", "1"]);
    let mut engine = connect(l.port);
    let mut bytes = hello_bytes();
    bytes.extend(step_bytes(0, &[wbox(1, 0.0, 0.0), wbox(2, 3.0, 0.0)], true));
    bytes.extend(step_bytes(1, &[wbox(1, 0.5, 0.0)], false));
    let whole = bytes.clone();
    let next = step_bytes(2, &[wbox(1, 1.0, 0.0)], false);
    bytes.extend(&next[..7]);
    engine.write_all(&bytes).expect("send");
    let started = Instant::now();
    // The connection stays open, silent.
    let (code, lines, err) = l.finish();
    drop(engine);
    assert_eq!(code, Some(1), "{err}");
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(
        err.trim_end(),
        format!(
            "connection from 127.0.0.1:{}: byte {}: a frame stopped arriving: not whole 1 s \
             after its first byte; the 2 steps before were kept",
            lines_peer_port(&lines),
            whole.len()
        )
    );
    assert!(std::fs::read(&out).expect("the file") == whole);
}

/// The engine's port, from `listen --json`'s "connected" line.
fn lines_peer_port(lines: &[String]) -> u16 {
    let v: serde_json::Value = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v.get("connected").is_some())
        .expect("a connected line");
    v["connected"]
        .as_str()
        .and_then(|a| a.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .expect("port")
}

#[test]
fn ctrl_c_keeps_every_step_received_and_says_the_end() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("cut.aabbstream");
    let mut l = listen(&["--out", utf8(&out)]);
    let mut engine = connect(l.port);
    let trace = drifting(112);
    let all = stream_bytes(&trace);
    // Everything but the BYE (its length field and 17 bytes): the engine is still running.
    let without_bye = &all[..all.len() - 21];
    engine.write_all(without_bye).expect("send");
    // Wait until listen has said the 112th step, then interrupt it.
    let mut seen = Vec::new();
    for line in l.lines.by_ref() {
        let line = line.expect("text");
        let done = line.contains("\"step\":111");
        seen.push(line);
        if done {
            break;
        }
    }
    interrupt(&l);
    let (code, lines, err) = l.finish();
    drop(engine);
    assert_eq!(code, Some(0), "{err}");
    let last: serde_json::Value =
        serde_json::from_str(lines.last().expect("the summary")).expect("json");
    assert_eq!(last["end"], "cancelled");
    assert_eq!(last["steps"], 112);
    assert_eq!(last["steps_written"], 112);
    assert!(std::fs::read(&out).expect("the file") == without_bye);
}

#[test]
fn keep_listening_writes_each_engine_to_its_own_numbered_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("game.aabbstream");
    let mut l = listen(&["--out", utf8(&out), "--keep-listening"]);
    let first = stream_bytes(&drifting(5));
    let second = stream_bytes(&drifting(9));
    for (k, bytes) in [&first, &second].into_iter().enumerate() {
        let mut engine = connect(l.port);
        engine.write_all(bytes).expect("send");
        drop(engine);
        // Wait for the session's end before the next engine comes.
        for line in l.lines.by_ref() {
            let line = line.expect("text");
            if line.contains("\"end\"") {
                assert!(line.contains(&format!("\"session\":{}", k + 1)), "{line}");
                break;
            }
        }
    }
    // A peer that is not a recorder between and after does not end it either.
    let mut garbage = connect(l.port);
    garbage.write_all(b"hello?\n").expect("send");
    assert_eq!(
        refusal(&mut garbage),
        "AABB refused: not a recorder's handshake\n"
    );
    interrupt(&l);
    let (code, lines, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::read(dir.path().join("game-1.aabbstream")).expect("first") == first);
    assert!(std::fs::read(dir.path().join("game-2.aabbstream")).expect("second") == second);
    assert!(!out.exists());
    let last: serde_json::Value =
        serde_json::from_str(lines.last().expect("the summary")).expect("json");
    assert_eq!(last["sessions"], 2);
    assert_eq!(last["not_recorders"], 1);
}

#[test]
fn an_existing_out_file_is_left_alone_until_an_engine_comes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("kept.aabbstream");
    let earlier = stream_bytes(&drifting(4));
    std::fs::write(&out, &earlier).expect("write");
    let l = listen(&["--out", utf8(&out)]);
    let mut garbage = connect(l.port);
    garbage.write_all(b"GET / HTTP/1.0\r\n\r\n").expect("send");
    assert_eq!(
        refusal(&mut garbage),
        "AABB refused: not a recorder's handshake\n"
    );
    interrupt(&l);
    let (code, _, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::read(&out).expect("kept") == earlier);
}

#[test]
fn another_users_file_in_a_sticky_folder_is_refused_by_every_output() {
    use std::os::unix::fs::{PermissionsExt, chown};
    if !needs::root("to plant another user's file") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    let input = dir.path().join("in.aabbstream");
    std::fs::write(&input, stream_bytes(&drifting(3))).expect("write");
    let scene_in = dir.path().join("in.ron");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/default.ron"),
        &scene_in,
    )
    .expect("write");
    // The planted files: empty, of the kind each command writes, owned by "nobody".
    let plant = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("plant");
        chown(&path, Some(65534), Some(65534)).expect("chown");
        path
    };
    let stream_out = plant("planted.aabbstream", b"");
    let trace_out = plant("planted.trace", b"");
    let record_out = plant("planted.aabbrec", b"");
    let expected = |path: &std::path::Path| {
        format!(
            "{}: belongs to user 65534, neither us (0) nor the owner of its folder (0), in a \
             sticky folder anyone may write to; another user could read and change what is \
             written into it, so nothing was written (give a path in a folder of your own)",
            path.display()
        )
    };

    let out = bin(&["listen", "--port", "0", "--out", utf8(&stream_out)]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr).trim_end(), expected(&stream_out));

    let out = bin(&["convert", utf8(&input), utf8(&trace_out)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&expected(&trace_out)),
        "{}",
        text(&out.stderr)
    );

    let out = bin(&[
        "run",
        utf8(&scene_in),
        "--steps",
        "3",
        "--record",
        utf8(&record_out),
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains(&expected(&record_out)),
        "{}",
        text(&out.stderr)
    );
    for planted in [&stream_out, &trace_out, &record_out] {
        assert_eq!(
            std::fs::read(planted).expect("kept"),
            b"",
            "{}",
            planted.display()
        );
    }
}

#[test]
fn a_crowd_of_idle_sockets_drops_its_oldest_and_never_keeps_an_engine_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("crowd.aabbstream");
    let mut l = listen(&[
        "--out",
        utf8(&out),
        "--handshake-timeout",
        "20",
        "--keep-listening",
    ]);
    let out = dir.path().join("crowd-1.aabbstream");
    let crowd = 70;
    let mut idle: Vec<TcpStream> = (0..crowd).map(|_| connect(l.port)).collect();
    // The newest 64 wait for their handshake; the oldest were closed unheard, to make room.
    let evicted = crowd - 64;
    for conn in &mut idle[..evicted] {
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        assert_eq!(refusal(conn), "");
    }
    let trace = drifting(20);
    let sent = stream_bytes(&trace);
    let mut engine = connect(l.port);
    engine.write_all(&sent).expect("send");
    drop(engine);
    let mut lines = Vec::new();
    for line in l.lines.by_ref() {
        let line = line.expect("text");
        let end = line.contains("\"end\"");
        lines.push(line);
        if end {
            break;
        }
    }
    assert!(
        lines.last().is_some_and(|l| l.contains("\"steps\":20")),
        "{lines:?}"
    );
    // The dropped connections' threads say so within a tenth of a second of their drop.
    std::thread::sleep(Duration::from_millis(500));
    interrupt(&l);
    let (code, rest, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::read(&out).expect("the file") == sent);
    let summary: serde_json::Value =
        serde_json::from_str(rest.last().expect("the summary")).expect("json");
    // The engine took one of the 64 places too: one more of the crowd made way for it.
    assert_eq!(summary["crowded"], evicted + 1, "{err}");
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("to make room for newer connections"))
            .count(),
        evicted + 1,
        "{err}"
    );
    drop(idle);
}

#[test]
fn listen_says_where_readers_will_stop_in_the_file_it_writes_and_they_keep_the_steps_before() {
    use aabb_debugger::stream;
    use aabb_debugger::trace::TraceLimits;
    use aabb_recorder::wire::{self, Hello};
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("tiny-dt.aabbstream");
    let l = listen(&["--out", utf8(&out)]);
    // A dt of 1e-45 s: any motion is a velocity past f32.
    let mut bytes = Vec::new();
    wire::encode_magic(&mut bytes);
    wire::encode_hello(&mut bytes, &Hello::new("tiny dt", 2, 1e-45)).expect("hello");
    bytes.extend(step_bytes(0, &[wbox(1, 0.0, 0.0)], true));
    bytes.extend(step_bytes(1, &[wbox(1, 0.5, 0.0)], false));
    bytes.extend(step_bytes(2, &[wbox(1, 1.0, 0.0)], false));
    let mut engine = connect(l.port);
    engine.write_all(&bytes).expect("send");
    drop(engine);
    let (code, lines, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    let last: serde_json::Value =
        serde_json::from_str(lines.last().expect("the summary")).expect("json");
    assert_eq!(last["steps"], 3);
    assert_eq!(last["steps_written"], 3);
    let stop = last["readers_stop"]
        .as_str()
        .expect("where readers stop")
        .to_owned();
    assert!(
        stop.starts_with("step 1 (the trace's step 1) will not open: ")
            && stop.ends_with("; readers keep the 1 step before it"),
        "{stop}"
    );
    assert_eq!(
        err.trim_end(),
        format!(
            "warning: {}: {stop} (every step is still written)",
            out.display()
        )
    );
    // Every step is in the file; readers keep the one before the limit.
    assert!(std::fs::read(&out).expect("the file") == bytes);
    let (trace, _) = stream::load(&out, TraceLimits::default()).expect("opens");
    assert_eq!(trace.step_count(), 1);
}
