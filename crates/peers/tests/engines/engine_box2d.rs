//! Box2D's own broad phase in a stream: the Box2D example's pile (its code, included) sends,
//! through the Rust recorder, each shape's AABB and fat box, Box2D's contacts (its candidate
//! pairs, followed from the pairs its broad phase creates) and their count at every step.
//! Read back, the stream is whole; every fat box holds its box; the pairs sent are as many as
//! Box2D's contacts, and as the pairs of overlapping fat boxes counted by brute force; the
//! debugger finds no missed pair; the balls pile up in the box; and the same arguments give
//! the same bytes.

#[path = "../../examples/box2d_pile/pile.rs"]
mod pile;

use aabb_debugger::stream;
use aabb_debugger::trace::{Trace, TraceBox, TraceLimits};
use aabb_recorder::{Hello, Recorder};

const BALLS: u32 = 150;

/// Streams the pile's boxes and Box2D's broad phase to a file; keeps, step by step, Box2D's
/// count of candidate pairs and the brute-force count over the fat boxes it sent.
struct StreamSink {
    recorder: Option<Recorder>,
    path: std::path::PathBuf,
    /// Whether the broad and narrow phases' times are sent (they differ run to run).
    times: bool,
    walls: Vec<TraceBox>,
    /// Per step: Box2D's count of contacts, the pairs sent, and the pairs of overlapping fat
    /// boxes (walls with walls left out).
    counts: Vec<(u32, u32, u32)>,
    /// Per step: the pairs of overlapping boxes (Box2D's shape AABBs).
    tight: Vec<u32>,
    /// Fat boxes that do not contain their box, and boxes with no fat box.
    fat_faults: Vec<String>,
}

impl StreamSink {
    fn new(path: std::path::PathBuf, times: bool) -> Self {
        StreamSink {
            recorder: None,
            path,
            times,
            walls: Vec::new(),
            counts: Vec::new(),
            tight: Vec::new(),
            fat_faults: Vec::new(),
        }
    }
}

/// Pairs of overlapping boxes (touching counts), not both walls (ids `BALLS..`).
fn overlapping_pairs(fat: &[pile::FatBox]) -> u32 {
    let mut n = 0;
    for (i, a) in fat.iter().enumerate() {
        for b in &fat[i + 1..] {
            let overlap = (0..2).all(|k| a.1[k] <= b.2[k] && b.1[k] <= a.2[k]);
            if overlap && (a.0 < BALLS || b.0 < BALLS) {
                n += 1;
            }
        }
    }
    n
}

impl pile::PileSink<pile::EngineBroadPhase> for StreamSink {
    type Error = std::io::Error;
    fn begin(&mut self, walls: &[TraceBox], dt: f32) -> std::io::Result<()> {
        let mut r = Recorder::to_file(&self.path, Hello::new("Box2D (test)", 2, dt))?;
        for w in walls {
            r.static_box(
                w.id,
                &w.aabb.min.to_array()[..2],
                &w.aabb.max.to_array()[..2],
            );
        }
        self.walls = walls.to_vec();
        self.recorder = Some(r);
        Ok(())
    }
    fn step(
        &mut self,
        boxes: &[TraceBox],
        broad_phase: Option<&pile::EngineBroadPhase>,
    ) -> std::io::Result<()> {
        let (Some(r), Some(bp)) = (self.recorder.as_mut(), broad_phase) else {
            return Err(std::io::Error::other("no recorder, or no broad phase"));
        };
        r.begin_step();
        for b in boxes {
            r.add_box(
                b.id,
                &b.aabb.min.to_array()[..2],
                &b.aabb.max.to_array()[..2],
            );
        }
        bp.send(r, self.times);
        r.end_step();
        let step = self.counts.len();
        let ids: Vec<u32> = bp.fat_boxes.iter().map(|f| f.0).collect();
        let expected: Vec<u32> = (0..boxes.len() as u32).chain(BALLS..BALLS + 3).collect();
        if ids != expected {
            self.fat_faults
                .push(format!("step {step}: fat boxes for ids {ids:?}"));
        }
        for b in boxes.iter().chain(&self.walls) {
            let Ok(k) = bp.fat_boxes.binary_search_by_key(&b.id, |f| f.0) else {
                continue;
            };
            let (_, min, max) = bp.fat_boxes[k];
            let inside = (0..2).all(|a| min[a] <= b.aabb.min[a] && b.aabb.max[a] <= max[a]);
            if !inside {
                self.fat_faults.push(format!(
                    "step {step}: the fat box of {} does not hold its box",
                    b.id
                ));
            }
        }
        self.counts.push((
            bp.candidate_pairs,
            bp.pairs.len() as u32,
            overlapping_pairs(&bp.fat_boxes),
        ));
        let corners = |b: &TraceBox| {
            (
                b.id,
                [b.aabb.min.x, b.aabb.min.y],
                [b.aabb.max.x, b.aabb.max.y],
            )
        };
        let tight: Vec<_> = boxes.iter().chain(&self.walls).map(corners).collect();
        self.tight.push(overlapping_pairs(&tight));
        Ok(())
    }
    fn wants_broad_phase(&self) -> bool {
        true
    }
}

fn spec() -> pile::PileSpec {
    pile::PileSpec {
        balls: BALLS,
        steps: pile::PileSpec::settling_steps(BALLS),
    }
}

/// Streams the pile to `path`; the sink and the recorder's stats.
fn stream_pile(path: &std::path::Path, times: bool) -> (StreamSink, aabb_recorder::Stats) {
    let mut sink = StreamSink::new(path.to_path_buf(), times);
    pile::simulate_pile(spec(), &mut sink).expect("the pile streams");
    let stats = sink.recorder.take().expect("a recorder").finish();
    (sink, stats)
}

#[test]
fn box2ds_pairs_are_as_many_as_its_contacts_and_none_is_missed_at_every_step() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("pile.aabbstream");
    let spec = spec();
    let (sink, stats) = stream_pile(&path, true);
    assert_eq!(
        (
            stats.steps_sent,
            stats.steps_dropped,
            stats.parts_rejected,
            stats.boxes_rejected
        ),
        (spec.steps, 0, 0, 0),
        "{:?}",
        stats.last_rejection
    );
    assert_eq!(sink.fat_faults, Vec::<String>::new());
    // Box2D's contacts are exactly the pairs of shapes whose fat boxes (the ones the step's
    // broad phase used) overlap: the fat boxes read from its debug draw are its own, and the
    // pairs followed are as many as its contacts.
    let differ: Vec<(usize, &(u32, u32, u32))> = sink
        .counts
        .iter()
        .enumerate()
        .filter(|(_, (engine, sent, brute))| engine != sent || engine != brute)
        .take(10)
        .collect();
    assert_eq!(differ, Vec::new());
    let pairs: u64 = sink.counts.iter().map(|c| u64::from(c.0)).sum();
    assert!(pairs > 50_000, "{pairs} candidate pairs over the run");
    // Most of them are contact candidates (their shape AABBs overlap), not all: the rest are
    // the fat boxes' margins' false positives. Every pair of overlapping AABBs is among them.
    let tight: u64 = sink.tight.iter().map(|&t| u64::from(t)).sum();
    assert!(sink.tight.iter().zip(&sink.counts).all(|(&t, c)| t <= c.0));
    assert!(tight > pairs / 2 && tight < pairs, "{tight} of {pairs}");

    let (trace, info) = stream::load(&path, TraceLimits::default()).expect("the stream reads");
    assert_eq!(trace.step_count() as u64, spec.steps);
    assert_eq!(trace.statics().len(), 3);
    assert_eq!(trace.step(trace.step_count() - 1).len(), BALLS as usize);
    let s = &info.engine_parts.summary;
    assert_eq!(s.steps_with_parts, spec.steps);
    // Every step's pairs are checked against brute force over Box2D's fat boxes: none is
    // missed, none has its fat boxes apart, and each pair of overlapping AABBs is a contact
    // candidate; the rest are the fat boxes' false positives (no margin is declared: Box2D's
    // differs by shape). No tree is sent.
    assert_eq!((s.pair_steps, s.pair_steps_unchecked), (spec.steps, 0));
    let missed: Vec<_> = s.missed.iter().take(10).collect();
    assert_eq!(s.missed_total, 0, "{missed:?}");
    assert_eq!(s.apart_total, 0);
    assert_eq!(s.counts.total(), pairs);
    assert_eq!(s.counts.contact, tight);
    assert_eq!(s.counts.fat_only, pairs - tight);
    assert_eq!((s.trees_valid, s.trees_refused), (0, 0));
    let keys: Vec<(&str, u64)> = s
        .timings
        .iter()
        .map(|(k, t)| (k.as_str(), t.steps))
        .collect();
    assert_eq!(
        keys,
        [
            "broad_phase_ns",
            "candidate_pairs",
            "narrow_phase_ns",
            "pairs_tested",
            "static_tree_height",
            "tree_height"
        ]
        .map(|k| (k, spec.steps))
    );
    let candidate = s.timings["candidate_pairs"];
    assert_eq!(candidate.sum, pairs as f64);
    // The narrow phase tested every contact: from its time over them, a pair test's cost.
    assert_eq!(s.timings["pairs_tested"].sum, pairs as f64);
    let costs = s.cost_fit.costs().expect("Box2D's pair test is costed");
    assert_eq!(costs.pair_steps, spec.steps);
    assert!(costs.ns_per_pair_test.is_finite() && costs.ns_per_pair_test > 0.0);
    // Every step's fat boxes were kept beside the trace, one per box.
    let last = info.engine_parts.steps.last().expect("parts kept");
    let fat = last.fat_boxes.as_ref().expect("fat boxes");
    assert_eq!(fat.len(), BALLS as usize + 3);
}

#[test]
fn the_box2d_pile_settles_in_the_box_and_the_same_arguments_give_the_same_bytes() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (a, b) = (
        dir.path().join("a.aabbstream"),
        dir.path().join("b.aabbstream"),
    );
    // Without the times (wall-clock), two runs write the same bytes.
    stream_pile(&a, false);
    stream_pile(&b, false);
    let bytes = std::fs::read(&a).expect("read a");
    assert_eq!(bytes, std::fs::read(&b).expect("read b"));

    // The text trace holds the same boxes as the stream.
    let mut text = Vec::new();
    let summary = pile::write_pile(spec(), &mut text).expect("the pile is written");
    let trace = Trace::parse(&text, "pile.trace").expect("the example's trace reads back");
    let (streamed, _) = stream::load(&a, TraceLimits::default()).expect("the stream reads");
    assert_eq!(trace.step_count(), streamed.step_count());
    assert_eq!(trace.statics(), streamed.statics());
    for k in 0..trace.step_count() {
        assert_eq!(trace.step(k), streamed.step(k), "step {k}");
    }
    let mut again = Vec::new();
    pile::write_pile(spec(), &mut again).expect("the pile is written again");
    assert_eq!(again, text);

    // Poured from high up, the balls end in a heap on the floor, at rest.
    let c = summary.container;
    assert_eq!(summary.poured, BALLS);
    assert!(
        summary.final_mean_height < 0.25 * c.pour_height,
        "{summary:?}"
    );
    assert!(summary.final_top > 4.0 * pile::RADIUS.0, "{summary:?}");
    assert!(summary.final_top < 0.5 * c.pour_height, "{summary:?}");
    assert!(summary.final_mean_speed < 0.1, "{summary:?}");
    // Every ball's box (its AABB, Box2D's speculative 0.02 m included) lies inside the box,
    // to a centimetre more.
    let tolerance = 0.02 + 0.01;
    let half = 0.5 * c.width;
    for b in trace.step(trace.step_count() - 1) {
        assert!(b.aabb.min.x >= -half - tolerance, "{b:?}");
        assert!(b.aabb.max.x <= half + tolerance, "{b:?}");
        assert!(b.aabb.min.y >= -tolerance, "{b:?}");
        assert!(b.aabb.max.y <= c.height, "{b:?}");
    }
}
