//! `compare`: two broad phases, or two settings of one, on the same motion. The same side
//! twice differs at no step; the tree and brute force with the same settings report the same
//! pairs at every step; two margins differ, and every step's counts add up; bad sides and
//! inputs are refused with a message and exit code.

use crate::common::cli::{bin, text, write};
use serde_json::Value;

/// `compare` with `--json`: the step lines and the summary line.
fn compare_json(args: &[&str]) -> (Vec<Value>, Value) {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = bin(&all);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let summary = lines.pop().expect("a summary line");
    (lines, summary)
}

fn count(v: &Value, key: &str) -> usize {
    v[key].as_array().map_or(usize::MAX, Vec::len)
}

#[test]
fn the_same_side_twice_differs_at_no_step() {
    let (steps, summary) =
        compare_json(&["tree", "tree", "scenes/random-1000.ron", "--steps", "40"]);
    assert_eq!(steps.len(), 41, "step 0 and 40 steps");
    for (k, s) in steps.iter().enumerate() {
        assert_eq!(s["step"], k as u64);
        assert_eq!((count(s, "only_a"), count(s, "only_b")), (0, 0), "step {k}");
        assert_eq!(s["pairs"][0], s["pairs"][1]);
        assert_eq!(s["reinserts"][0], s["reinserts"][1]);
    }
    assert_eq!(summary["summary"]["steps"], 41);
    assert_eq!(summary["summary"]["steps_differing"], 0);
    assert_eq!(summary["summary"]["first_difference"], Value::Null);
}

#[test]
fn the_tree_and_brute_force_report_the_same_pairs_at_every_step() {
    for scene in [
        "scenes/random-1000.ron",
        "scenes/static-level.ron",
        "scenes/spheres-3d.ron",
    ] {
        let (steps, summary) = compare_json(&["tree", "brute", scene, "--steps", "30"]);
        assert_eq!(summary["summary"]["steps_differing"], 0, "{scene}");
        assert_eq!(summary["summary"]["only_a"], 0, "{scene}");
        assert_eq!(steps.len(), 31, "{scene}");
    }
}

#[test]
fn two_margins_differ_and_each_step_adds_up() {
    let (steps, summary) = compare_json(&[
        "tree:margin=0.05",
        "tree:margin=0.2",
        "scenes/random-1000.ron",
        "--steps",
        "30",
    ]);
    let mut only_b = 0;
    for s in &steps {
        let pairs = |k: usize| s["pairs"][k].as_u64().expect("a count") as usize;
        // The pairs both report, counted from either side.
        assert_eq!(
            pairs(0) - count(s, "only_a"),
            pairs(1) - count(s, "only_b"),
            "step {}",
            s["step"]
        );
        only_b += count(s, "only_b");
    }
    assert!(
        only_b > 0,
        "a wider margin reports pairs the narrower does not"
    );
    assert_eq!(summary["summary"]["only_b"], only_b as u64);
    assert!(
        summary["a"]
            .as_str()
            .is_some_and(|a| a.starts_with("tree (margin 0.05,"))
    );
    assert!(
        summary["b"]
            .as_str()
            .is_some_and(|b| b.starts_with("tree (margin 0.2,"))
    );
    // The step's pair counts are what `run` reports for each margin alone.
    for (k, margin) in ["0.05", "0.2"].iter().enumerate() {
        let out = bin(&[
            "run",
            "scenes/random-1000.ron",
            "--steps",
            "30",
            "--margin",
            margin,
            "--json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let run: Value = serde_json::from_slice(&out.stdout).expect("run's JSON");
        assert_eq!(
            run["candidate_pairs"].as_array().map(Vec::len),
            steps[30]["pairs"][k].as_u64().map(|n| n as usize),
            "margin {margin}"
        );
    }
}

#[test]
fn a_trace_compares_as_a_scene_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut t = String::from("aabb-trace 1 dims=2 dt=0.05\n");
    for s in 0..12 {
        t.push_str(&format!("step {s}\n"));
        for id in 0..6u32 {
            let x = id as f32 * 1.2 + s as f32 * 0.1 * (id % 2) as f32;
            t.push_str(&format!("{id} {x} 0 {} 1\n", x + 1.0));
        }
    }
    let path = write(dir.path(), "six.trace", t.as_bytes());
    let (steps, summary) = compare_json(&[
        "tree",
        "sap",
        path.to_str().expect("utf-8"),
        "--steps",
        "50",
    ]);
    assert_eq!(steps.len(), 12, "a trace compares to its end");
    assert_eq!(summary["summary"]["steps_differing"], 0);
    assert!(
        summary["summary"]["stopped"]
            .as_str()
            .is_some_and(|s| s.contains("ends at step 11"))
    );
}

#[test]
fn bad_sides_and_inputs_are_refused() {
    for (args, code, says) in [
        (
            vec!["compare", "octree", "tree", "scenes/default.ron"],
            2,
            "side A: `octree`",
        ),
        (
            vec!["compare", "tree", "tree:margin=-1", "scenes/default.ron"],
            2,
            "side B: `margin=-1`",
        ),
        (
            vec!["compare", "tree", "box2d", "scenes/spheres-3d.ron"],
            2,
            "2D only",
        ),
        (
            vec!["compare", "tree", "tree", "no-such-scene.ron"],
            1,
            "no-such-scene.ron",
        ),
    ] {
        let out = bin(&args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
