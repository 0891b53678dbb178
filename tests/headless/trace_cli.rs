//! `run` and `sweep` on a trace file: told from a scene by its name or its header, the same
//! pairs on every broad phase, the sweep's points and verdict, and a malformed trace refused
//! with `FILE:LINE: message`.

use crate::common::cli;
use cli::{bin, text};

/// Twelve boxes falling onto a floor at 1 unit a step for 20 steps, side by side so that
/// neighbours touch, then resting; box 11 leaves at step 10.
fn falling() -> String {
    let mut t =
        String::from("aabb-trace 1 dims=2 dt=0.05\n# a test trace\nstatic\n100 -1 -1 13 0\n");
    for step in 0..30 {
        t.push_str(&format!("step {step}\n"));
        let y = (10.0 - 0.5 * f64::from(step)).max(0.0);
        for id in 0..12u32 {
            if id == 11 && step >= 10 {
                continue;
            }
            let x = f64::from(id);
            t.push_str(&format!("{id} {x} {y} {} {}\n", x + 1.0, y + 1.0));
        }
    }
    t
}

fn write_trace(dir: &std::path::Path, name: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, falling()).expect("written");
    path.display().to_string()
}

#[test]
fn run_accepts_a_trace_by_name_or_header_with_the_same_pairs_on_every_broad_phase() {
    let dir = tempfile::tempdir().expect("temp dir");
    let by_name = write_trace(dir.path(), "fall.trace");
    let by_header = write_trace(dir.path(), "fall.txt");
    let mut firsts = Vec::new();
    for file in [&by_name, &by_header] {
        for kind in ["tree", "brute", "sap"] {
            let out = bin(&[
                "run",
                file,
                "--json",
                "--steps",
                "1000",
                "--broadphase",
                kind,
            ]);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            // The trace ends after 29 steps; the last step has 11 boxes on the floor, each
            // touching its neighbours and the floor.
            assert_eq!(v["steps"], 29);
            assert_eq!(v["dimensions"], 2);
            assert_eq!(v["spheres"], 13);
            let contacts = v["contacts"].as_array().expect("contacts").len();
            assert_eq!(contacts, 10 + 11, "{kind}");
            assert_eq!(v["tree"].is_null(), kind != "tree");
            firsts.push((v["candidate_pairs"].clone(), v["contacts"].clone()));
        }
    }
    assert!(firsts.iter().all(|f| *f == firsts[0]));
    // The readable summary names the trace.
    let out = bin(&["run", &by_name, "--steps", "5", "--margin", "0.5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.starts_with("scene: \"fall\" ("), "{shown}");
    assert!(shown.contains("broad phase: tree, 5 steps"), "{shown}");
}

#[test]
fn sweep_runs_a_trace_and_gives_a_verdict() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = write_trace(dir.path(), "fall.trace");
    let out = bin(&[
        "sweep",
        &file,
        "--margin",
        "0:0.2:0.1",
        "--lookahead",
        "0,0.1",
        "--steps",
        "29",
        "--json",
        "--threads",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["scene"], "fall");
    assert_eq!(v["spheres"], 13);
    let points = v["points"].as_array().expect("points");
    assert_eq!(points.len(), 6);
    for p in points {
        assert_eq!(p["steps"], 29);
        assert!(p["stopped"].is_null());
    }
    // A wider margin never has fewer candidate pairs.
    let pairs = |i: usize| points[i]["candidate_pairs_total"].as_u64().expect("count");
    assert!(pairs(0) <= pairs(1) && pairs(1) <= pairs(2));
    assert!(v["best_by_work"].is_object());
    assert!(!v["why"].as_str().expect("why").is_empty());
    // More steps than the trace has: refused, naming the flag.
    let out = bin(&[
        "sweep",
        &file,
        "--margin",
        "0:0.1:0.1",
        "--lookahead",
        "0",
        "--steps",
        "30",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "error: --steps: the trace has 29 steps after step 0; got 30\n"
    );
}

#[test]
fn a_malformed_trace_is_refused_with_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.trace");
    std::fs::write(
        &path,
        "aabb-trace 1 dims=2\nstep 0\n1 0 0 1 1\n2 0 0 nan 1\n",
    )
    .expect("written");
    let file = path.display().to_string();
    for args in [
        vec!["run", file.as_str()],
        vec![
            "sweep",
            file.as_str(),
            "--margin",
            "0:0.1:0.1",
            "--lookahead",
            "0",
            "--steps",
            "1",
        ],
    ] {
        let out = bin(&args);
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        assert_eq!(
            text(&out.stderr),
            format!("{file}:4: box 2: max x `nan` is not finite (or is beyond f32's range)\n")
        );
    }
}
