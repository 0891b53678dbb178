//! The engine's own broad phase in a stream, end to end: a stream written by the Rust
//! recorder with fat boxes, candidate pairs, the tree and timings at every step is read by
//! the model and checked by `check` and `listen`: a pair dropped on purpose at step 7 is the
//! one missed pair reported; a correct stream reports none; a broken tree is refused naming
//! the node and the step's boxes are kept.

use crate::common::cli::{bin, text, utf8};
use aabb_debugger::stream::engine::StepPair;
use aabb_debugger::stream::{self};
use aabb_debugger::trace::TraceLimits;
use aabb_debugger::tree::{Aabb, DynamicTree, TreeConfig};
use aabb_recorder::wire::{NodeKind, TreeNode};
use aabb_recorder::{Hello, Recorder};
use glam::Vec2;
use std::path::Path;

const STEPS: u64 = 10;
const MARGIN: f32 = 0.1;
const GROUND: u32 = 1000;

/// The boxes of step `t`: 12 moving ones (id, min, max) and the ground.
fn boxes(t: u64) -> Vec<(u32, [f32; 2], [f32; 2])> {
    let mut out: Vec<_> = (0..12u32)
        .map(|i| {
            let x = i as f32 * 0.7 + t as f32 * 0.05 * ((i % 3) as f32 - 1.0);
            let y = (i % 4) as f32 * 0.6;
            (i, [x, y], [x + 0.5, y + 0.5])
        })
        .collect();
    out.push((GROUND, [-10.0, -1.0], [10.0, 0.0]));
    out
}

fn overlap(a: &([f32; 2], [f32; 2]), b: &([f32; 2], [f32; 2])) -> bool {
    (0..2).all(|k| a.0[k] <= b.1[k] && b.0[k] <= a.1[k])
}

/// What the test stream holds at one step, worked out here.
struct Expected {
    /// The pairs sent.
    pairs: Vec<[u32; 2]>,
    /// Those whose tight boxes overlap.
    contacts: u64,
    /// The pair dropped, when one was.
    dropped: Option<[u32; 2]>,
    /// The message of the broken tree, when it was broken.
    broken: Option<String>,
}

/// Writes the test stream to `path`: every step's boxes, fat boxes (the tight box grown by
/// [`MARGIN`]), every pair of overlapping fat boxes (but the first at `drop_at`), the tree this
/// project builds over the fat boxes (with the root's height one too high at `break_at`) and
/// the margin as a timing.
fn write_stream(path: &Path, drop_at: Option<u64>, break_at: Option<u64>) -> Vec<Expected> {
    let hello = Hello::new("engine parts test", 2, 1.0 / 60.0);
    let mut rec = Recorder::to_file(path, hello).expect("the stream file");
    let ground = boxes(0).pop().expect("the ground");
    rec.static_box(GROUND, &ground.1, &ground.2);
    let mut expected = Vec::new();
    for t in 0..STEPS {
        let all = boxes(t);
        rec.begin_step();
        for &(id, min, max) in &all {
            if id != GROUND {
                rec.add_box_2d(id, min, max);
            }
        }
        let fat: Vec<(u32, [f32; 2], [f32; 2])> = all
            .iter()
            .map(|&(id, min, max)| {
                if id == GROUND {
                    (id, min, max)
                } else {
                    (
                        id,
                        [min[0] - MARGIN, min[1] - MARGIN],
                        [max[0] + MARGIN, max[1] + MARGIN],
                    )
                }
            })
            .collect();
        for &(id, min, max) in &fat {
            rec.fat_box(id, &min, &max);
        }
        let mut pairs = Vec::new();
        for (i, a) in fat.iter().enumerate() {
            for b in &fat[i + 1..] {
                if overlap(&(a.1, a.2), &(b.1, b.2)) {
                    pairs.push([a.0.min(b.0), a.0.max(b.0)]);
                }
            }
        }
        pairs.sort_unstable();
        let dropped = (drop_at == Some(t)).then(|| pairs.remove(0));
        let tight = |id: u32| {
            let b = all.iter().find(|b| b.0 == id).expect("a box of the step");
            (b.1, b.2)
        };
        let contacts = pairs
            .iter()
            .filter(|[a, b]| overlap(&tight(*a), &tight(*b)))
            .count() as u64;
        rec.begin_pairs();
        for &[a, b] in &pairs {
            rec.pair(a, b);
        }
        // The tree this project builds at once over the fat boxes.
        let config = TreeConfig {
            margin: 0.0,
            ..TreeConfig::default()
        };
        let mut tree = DynamicTree::<Vec2, u32>::new(config);
        let items: Vec<(Aabb<Vec2>, Vec2, u32)> = fat
            .iter()
            .map(|&(id, min, max)| (Aabb::new(Vec2::from(min), Vec2::from(max)), Vec2::ZERO, id))
            .collect();
        tree.create_proxies(&items).expect("the tree builds");
        let root = tree.root().expect("a root").0;
        rec.tree_root(Some(root));
        let mut broken = None;
        tree.walk(|id, view, _| {
            let kind = match (view.children, view.proxy) {
                (Some([a, b]), _) => NodeKind::Branch([a.0, b.0]),
                (None, Some(p)) => NodeKind::Leaf(tree.user_data(p).expect("a proxy")),
                (None, None) => unreachable!("a leaf has a proxy"),
            };
            let mut height = view.height;
            if break_at == Some(t) && id.0 == root {
                height += 1;
                broken = Some(format!(
                    "step {t}: the engine's tree is refused: node {root}: height {height}, but \
                     1 + its higher child's is {}",
                    view.height
                ));
            }
            rec.tree_node(&TreeNode {
                id: id.0,
                parent: view.parent.map(|p| p.0),
                kind,
                min: [view.aabb.min.x, view.aabb.min.y, 0.0],
                max: [view.aabb.max.x, view.aabb.max.y, 0.0],
                height,
                enlarged: false,
            });
        });
        rec.timing("margin", f64::from(MARGIN));
        rec.timing("broad_phase_ns", 1000.0 + t as f64);
        rec.end_step();
        expected.push(Expected {
            pairs,
            contacts,
            dropped,
            broken,
        });
    }
    let stats = rec.finish();
    assert_eq!(stats.parts_rejected, 0, "{:?}", stats.last_rejection);
    assert_eq!(stats.steps_sent, STEPS);
    expected
}

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
            "{}: note: the engine's own broad phase ({STEPS} steps of fat boxes, pairs, tree or \
             timings) is not converted: a trace holds boxes only (`check` reports it)\n",
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
            "{}: the engine's broad phase has errors: 1 missed pairs, 0 reported pairs with \
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
