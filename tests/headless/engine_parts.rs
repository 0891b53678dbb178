//! The engine's own broad phase in a stream, end to end: a stream written by the Rust
//! recorder with fat boxes, candidate pairs, the tree and timings at every step is read by
//! the model and checked by `check` and `listen`: a pair dropped on purpose at step 7 is the
//! one missed pair reported; a correct stream reports none; a broken tree is refused naming
//! the node and the step's boxes are kept.

use crate::common::cli::{bin, text, utf8};
use crate::common::engine::{MARGIN, NARROW_NS, STEPS, write_stream};
use aabb_debugger::stream::engine::StepPair;
use aabb_debugger::stream::{self};
use aabb_debugger::trace::TraceLimits;

#[test]
fn a_correct_stream_reports_no_missed_pair_and_every_tree_valid() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("good.aabbstream");
    let expected = write_stream(&path, None, None);
    let (trace, info) = stream::load(&path, TraceLimits::default()).expect("the stream reads");
    assert_eq!(trace.step_count() as u64, STEPS);
    let s = &info.engine_parts.summary;
    assert_eq!(s.steps_with_parts, STEPS);
    assert_eq!(s.pair_steps, STEPS);
    assert_eq!(s.missed_total, 0);
    assert_eq!(s.trees_valid, STEPS);
    assert_eq!(s.trees_refused, 0);
    assert_eq!(s.margin, Some(MARGIN));
    // Every pair is a contact or the margin's (the fat box is the margin, no look-ahead).
    let reported: u64 = expected.iter().map(|e| e.pairs.len() as u64).sum();
    let contacts: u64 = expected.iter().map(|e| e.contacts).sum();
    assert_eq!(s.counts.total(), reported);
    assert_eq!(s.counts.contact, contacts);
    assert_eq!(s.counts.margin, reported - contacts);
    assert_eq!(
        (s.counts.look_ahead, s.counts.fat_only, s.counts.fat_apart),
        (0, 0, 0)
    );
    // The tree built at once by this project is what a fresh build gives: the same cost.
    for sample in &s.health {
        assert_eq!(sample.health.fresh_cost, Some(sample.health.cost));
        assert_eq!(sample.health.leaves, 13);
        assert_eq!(sample.health.min_height, 4);
    }
    // The parts are kept beside the trace, for each step.
    assert_eq!(info.engine_parts.steps.len() as u64, STEPS);
    assert_eq!(
        info.engine_parts.steps[3].pairs.as_deref(),
        Some(&expected[3].pairs[..])
    );

    let out = bin(&["check", utf8(&path)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("\nmissed pairs: 0\nreported pairs: "),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("trees: {STEPS} valid, 0 refused\n")),
        "{stdout}"
    );
    // `convert` to a text trace says what it leaves out.
    let trace_path = dir.path().join("good.trace");
    let out = bin(&["convert", utf8(&path), utf8(&trace_path)]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{0}: note: the engine's own broad phase ({STEPS} steps of fat boxes, pairs, tree or \
             timings) is not converted: a trace holds boxes only (`check` reports it)\n\
             {0}: note: the engine's name (\"engine parts test\") and its units (\"m\") not \
             converted: a trace has no place for them\n",
            path.display()
        )
    );
}

#[test]
fn a_pair_dropped_at_step_7_is_the_one_missed_pair() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("dropped.aabbstream");
    let expected = write_stream(&path, Some(7), None);
    let dropped = expected[7].dropped.expect("a pair was dropped");
    let (_, info) = stream::load(&path, TraceLimits::default()).expect("the stream reads");
    let s = &info.engine_parts.summary;
    assert_eq!(s.missed_total, 1);
    assert_eq!(
        s.missed,
        vec![StepPair {
            engine_step: 7,
            index: 7,
            pair: dropped
        }]
    );
    let reported: u64 = expected.iter().map(|e| e.pairs.len() as u64).sum();
    assert_eq!(s.counts.total(), reported);
    // Per step: the pairs sent, and the one missed at step 7.
    let per_step: Vec<(u64, u64, u64)> = s
        .step_counts
        .iter()
        .map(|c| (c.engine_step, c.counts.total(), c.missed))
        .collect();
    let sent: Vec<(u64, u64, u64)> = expected
        .iter()
        .enumerate()
        .map(|(t, e)| (t as u64, e.pairs.len() as u64, u64::from(t == 7)))
        .collect();
    assert_eq!(per_step, sent);

    let out = bin(&["check", utf8(&path)]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let listed = format!(
        "\nmissed pairs: 1\n  step 7: ({}, {})\nreported pairs: ",
        dropped[0], dropped[1]
    );
    assert!(stdout.contains(&listed), "{stdout}");
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}: the engine's broad phase has errors: 1 missed pair, 0 reported pairs with \
             fat boxes apart, 0 trees refused\n",
            path.display()
        )
    );
}

#[test]
fn a_broken_tree_is_refused_naming_the_node_and_the_step_is_kept() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("broken.aabbstream");
    let expected = write_stream(&path, None, Some(4));
    let message = expected[4].broken.clone().expect("the tree was broken");
    let (trace, info) = stream::load(&path, TraceLimits::default()).expect("the stream reads");
    assert_eq!(trace.step_count() as u64, STEPS);
    assert_eq!(trace.step(4).len(), 12);
    let s = &info.engine_parts.summary;
    assert_eq!((s.trees_valid, s.trees_refused), (STEPS - 1, 1));
    let refused: Vec<String> = s.refused_trees.iter().map(ToString::to_string).collect();
    assert_eq!(refused, vec![message.clone()]);
    // The step's other parts stay; its tree is not kept.
    let kept = &info.engine_parts.steps[4];
    assert_eq!(kept.tree, None);
    assert_eq!(kept.pairs.as_deref(), Some(&expected[4].pairs[..]));
    assert_eq!(s.missed_total, 0);

    let out = bin(&["check", utf8(&path)]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "trees: {} valid, 1 refused\n  {message}\n",
            STEPS - 1
        )),
        "{stdout}"
    );
}

#[test]
fn listen_reports_the_missed_pair_in_its_json_end() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("dropped.aabbstream");
    let expected = write_stream(&path, Some(7), None);
    let dropped = expected[7].dropped.expect("a pair was dropped");
    let l = crate::live_link::listen(&[]);
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", l.port)).expect("connect");
    conn.write_all(&std::fs::read(&path).expect("the stream"))
        .expect("send");
    drop(conn);
    let (code, lines, err) = l.finish();
    assert_eq!(code, Some(0), "{err}");
    let last: serde_json::Value =
        serde_json::from_str(lines.last().expect("a last line")).expect("json");
    let e = &last["engine_parts"];
    assert_eq!(e["missed_total"], 1, "{e}");
    assert_eq!(
        e["missed"],
        serde_json::json!([{ "step": 7, "a": dropped[0], "b": dropped[1] }])
    );
    assert_eq!(e["trees_valid"], STEPS);
    assert_eq!(e["trees_refused"], 0);
    let reported: u64 = expected.iter().map(|x| x.pairs.len() as u64).sum();
    assert_eq!(e["reported"], reported);
    let classes = &e["classes"];
    assert_eq!(
        classes["contact"].as_u64().expect("a count")
            + classes["margin"].as_u64().expect("a count"),
        reported
    );
}

#[test]
fn the_engines_pair_test_cost_is_fitted_from_its_timings_and_sweep_weighs_pairs_by_it() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("timed.aabbstream");
    write_stream(&path, None, None);
    let (_, info) = stream::load(&path, TraceLimits::default()).expect("the stream reads");
    let costs = info
        .engine_parts
        .summary
        .cost_fit
        .costs()
        .expect("the narrow phase's time and pairs tested were sent");
    assert_eq!(costs.pair_steps, STEPS);
    assert!(
        (costs.ns_per_pair_test - NARROW_NS).abs() < 1e-9,
        "{costs:?}"
    );
    assert_eq!(costs.ns_per_reinsert, None, "no reinserts were sent");

    let file = utf8(&path);
    let sweep = [
        "sweep",
        file,
        "--margin",
        "0:0.2:0.1",
        "--lookahead",
        "0",
        "--steps",
        "5",
    ];
    let out = bin(&[&sweep[..], &["--json"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_str(&text(&out.stdout)).expect("JSON");
    let e = &json["engine_pair_cost"];
    assert_eq!(e["steps"], STEPS);
    assert_eq!(e["ns_per_pair_test"].as_f64(), Some(NARROW_NS));
    let (ns_visit, cost) = (
        e["ns_per_node_visit"]
            .as_f64()
            .expect("a node visit's cost"),
        e["pair_cost"].as_f64().expect("a pair cost"),
    );
    assert!(
        ns_visit > 0.0 && (cost - NARROW_NS / ns_visit).abs() < 1e-6 * cost,
        "{e}"
    );
    // The best is the point of least node visits plus that many visits a candidate pair
    // (every point ran all its steps; the first of equal ones).
    let points = json["points"].as_array().expect("points");
    let work = |p: &serde_json::Value| {
        p["node_visits_total"].as_f64().expect("visits")
            + cost * p["candidate_pairs_total"].as_f64().expect("pairs")
    };
    let least = points
        .iter()
        .enumerate()
        .min_by(|a, b| work(a.1).total_cmp(&work(b.1)))
        .map(|(i, _)| i)
        .expect("a point");
    assert_eq!(e["best"]["index"].as_u64(), Some(least as u64), "{e}");
    assert_eq!(e["best"]["margin"], points[least]["margin"], "{e}");
    // The readable report says it in a line.
    let out = bin(&sweep);
    assert!(
        text(&out.stdout).contains(&format!(
            "By the engine's own timings ({STEPS} steps): a pair test costs it 45 ns"
        )),
        "{}",
        text(&out.stdout)
    );
}
