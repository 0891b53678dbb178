//! The built binary's `check` and `run` commands: exit codes, messages, the JSON object and
//! its keys, identical pairs on every broad phase, determinism.

use std::path::Path;

use crate::common::cli;
use cli::{bin, text};

fn run_json(args: &[&str]) -> serde_json::Value {
    let out = bin(args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn check_accepts_every_scene_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("scenes/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let path = format!("scenes/{name}");
        let out = bin(&["check", &path]);
        assert_eq!(out.status.code(), Some(0), "{path}: {}", text(&out.stderr));
        assert!(text(&out.stdout).starts_with(&format!("{path}: ok: ")));
    }
}

#[test]
fn check_refuses_a_truncated_stress_scene_with_line_and_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/stress-5000.ron"),
    )
    .expect("read");
    let cut = dir.path().join("stress-cut.ron");
    std::fs::write(&cut, &full[..full.len() * 2 / 3]).expect("write");
    let cut = cut.display().to_string();
    let out = bin(&["check", &cut]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    let rest = err
        .strip_prefix(&format!("{cut}:"))
        .expect("starts with the file");
    let mut parts = rest.splitn(3, ':');
    let line: usize = parts.next().expect("line").parse().expect("a line number");
    let col: usize = parts.next().expect("col").parse().expect("a column number");
    assert!(line > 1 && col >= 1, "{err}");
    assert!(parts.next().expect("message").starts_with(' '));
}

#[test]
fn check_and_run_refuse_a_bad_file_with_its_message() {
    for cmd in ["check", "run"] {
        let out = bin(&[cmd, "tests/data/bad/radius-negative.ron"]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            text(&out.stderr),
            "tests/data/bad/radius-negative.ron: spheres[1] (id 7): radius must be > 0, got -1\n"
        );
    }
    let out = bin(&["check", "no-such-file.ron"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("no-such-file.ron: "));
}

#[test]
fn run_json_has_the_documented_keys() {
    let v = run_json(&["run", "scenes/choi-results.ron", "--steps", "10", "--json"]);
    let obj = v.as_object().expect("object");
    for key in [
        "scene",
        "steps",
        "broadphase",
        "reinserts_total",
        "candidate_pairs",
        "contacts",
        "tree",
        "ms_per_step",
    ] {
        assert!(obj.contains_key(key), "missing {key}");
    }
    assert_eq!(v["scene"], "Choi: results, six spheres");
    assert_eq!(v["steps"], 10);
    assert_eq!(v["broadphase"], "tree");
    assert_eq!(v["reinserts_total"], 0);
    assert_eq!(
        v["candidate_pairs"],
        serde_json::json!([[0, 1], [2, 3], [4, 5]])
    );
    assert_eq!(v["contacts"], serde_json::json!([[0, 1], [4, 5]]));
    let tree = v["tree"].as_object().expect("tree");
    for key in ["height", "min_height", "nodes", "leaves", "area_ratio"] {
        assert!(tree.contains_key(key), "tree missing {key}");
    }
    assert_eq!(v["tree"]["leaves"], 6);
    assert_eq!(v["tree"]["nodes"], 11);
    assert!(v["ms_per_step"].as_f64().expect("number") >= 0.0);
}

#[test]
fn run_gives_the_same_pairs_on_every_broad_phase_and_every_time() {
    let strip = |mut v: serde_json::Value| {
        for key in [
            "ms_per_step",
            "update_ms_per_step",
            "pairs_ms_per_step",
            "broadphase",
            "tree",
        ] {
            v.as_object_mut().expect("object").remove(key);
        }
        v
    };
    let args = |kind| {
        [
            "run",
            "scenes/random-1000.ron",
            "--steps",
            "60",
            "--broadphase",
            kind,
            "--json",
        ]
    };
    let tree = run_json(&args("tree"));
    assert!(tree["candidate_pairs"].as_array().expect("pairs").len() > 100);
    assert!(tree["tree"]["leaves"] == 1000);
    assert_eq!(strip(tree.clone()), strip(run_json(&args("brute"))));
    assert_eq!(strip(tree.clone()), strip(run_json(&args("sap"))));
    let b2 = run_json(&args("box2d"));
    assert_eq!(b2["broadphase"], "box2d");
    assert_eq!(strip(tree.clone()), strip(b2));
    // Twice the same, timings aside (the tree stats too).
    let mut again = run_json(&args("tree"));
    let mut first = tree;
    for v in [&mut first, &mut again] {
        for key in ["ms_per_step", "update_ms_per_step", "pairs_ms_per_step"] {
            v.as_object_mut().expect("object").remove(key);
        }
    }
    assert_eq!(first, again);
    assert_eq!(run_json(&args("sap"))["tree"], serde_json::Value::Null);
}

#[test]
fn run_prints_a_readable_summary_without_json() {
    let out = bin(&["run", "scenes/randall-bounding-aabbs.ron", "--steps", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(
        lines[0],
        "scene: \"Randall: bounding AABBs of shapes that do not touch\" (scenes/randall-bounding-aabbs.ron), 2D, 2 spheres"
    );
    assert_eq!(lines[1], "broad phase: tree, 5 steps");
    assert_eq!(
        lines[2],
        "reinserts: 0 (0.00 per step); pairs recomputed on 0 of 5 steps"
    );
    assert_eq!(lines[3], "candidate pairs at the last step: 0  ");
    assert_eq!(lines[4], "contacts at the last step: 0  ");
    assert!(lines[5].starts_with("tree: height 1 (least possible 1), 3 nodes, 2 leaves"));
    assert!(lines[6].starts_with("time: "));
}

/// Box2D's tree is 2D: `run --broadphase box2d` on the 3D scene stops with exit 1 and says so.
#[test]
fn run_box2d_refuses_a_3d_scene() {
    let out = bin(&["run", "scenes/spheres-3d.ron", "--broadphase", "box2d"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("is 2D only, and this is a 3D scene or trace"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn run_refuses_an_unknown_broad_phase() {
    let out = bin(&["run", "scenes/default.ron", "--broadphase", "grid"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("grid"));
}
