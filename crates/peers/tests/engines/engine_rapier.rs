//! rapier's own broad phase in a stream: the rapier example's pile (its code, included by
//! `trace_rapier`) sends rapier2d's BVH, its leaves' boxes and its pairs at every step through
//! the Rust recorder; read back, every step's tree validates, no pair is missed, no reported
//! pair has its fat boxes apart, and the pair classes add up to the pairs rapier reported.

use crate::trace_rapier::pile;

use aabb_debugger::stream;
use aabb_debugger::trace::{TraceBox, TraceLimits};
use aabb_recorder::{Hello, Recorder};

const BALLS: u32 = 150;

/// Streams the pile's boxes and rapier's broad phase to a recorder; counts the pairs sent.
struct StreamSink {
    recorder: Option<Recorder>,
    path: std::path::PathBuf,
    pairs_sent: u64,
    steps: u64,
    /// Steps whose tree lacks the balls poured at that step (rapier inserts them during it).
    partial_steps: u64,
    /// The pairs sent at those steps.
    partial_pairs: u64,
}

impl pile::PileSink<pile::EngineBroadPhase> for StreamSink {
    type Error = std::io::Error;
    fn begin(&mut self, walls: &[TraceBox], dt: f32) -> std::io::Result<()> {
        let mut r = Recorder::to_file(&self.path, Hello::new("rapier2d 0.36 (test)", 2, dt))?;
        for w in walls {
            r.static_box(
                w.id,
                &w.aabb.min.to_array()[..2],
                &w.aabb.max.to_array()[..2],
            );
        }
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
        for (id, min, max) in &bp.fat_boxes {
            r.fat_box(*id, min, max);
        }
        r.begin_pairs();
        for &[a, b] in &bp.pairs {
            r.pair(a, b);
        }
        r.tree_root(bp.tree.root);
        if bp.tree.partial {
            r.tree_partial();
            self.partial_steps += 1;
            self.partial_pairs += bp.pairs.len() as u64;
        }
        for n in &bp.tree.nodes {
            r.tree_node(n);
        }
        r.timing("margin", f64::from(bp.margin));
        r.end_step();
        self.pairs_sent += bp.pairs.len() as u64;
        self.steps += 1;
        Ok(())
    }
    fn wants_broad_phase(&self) -> bool {
        true
    }
}

#[test]
fn rapiers_tree_validates_and_misses_no_pair_at_every_step() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("pile.aabbstream");
    let spec = pile::PileSpec {
        balls: BALLS,
        steps: pile::PileSpec::settling_steps(BALLS),
    };
    let mut sink = StreamSink {
        recorder: None,
        path: path.clone(),
        pairs_sent: 0,
        steps: 0,
        partial_steps: 0,
        partial_pairs: 0,
    };
    pile::simulate_pile(spec, &mut sink).expect("the pile streams");
    let stats = sink.recorder.take().expect("a recorder").finish();
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
    let (trace, info) = stream::load(&path, TraceLimits::default()).expect("the stream reads");
    assert_eq!(trace.step_count() as u64, spec.steps);
    let s = &info.engine_parts.summary;
    let refused: Vec<String> = s.refused_trees.iter().map(ToString::to_string).collect();
    assert_eq!(refused, Vec::<String>::new());
    assert_eq!(s.trees_valid, spec.steps);
    // The steps that pour a row (every 6th, until every ball is in) have a partial tree and no
    // fat box for the new balls: their pairs are not checked.
    let rows = u64::from(BALLS).div_ceil(u64::from(pile::Container::for_balls(BALLS).per_row()));
    assert_eq!(sink.partial_steps, rows);
    assert_eq!(s.pair_steps_unchecked, rows, "{:?}", s.unchecked_reason);
    assert_eq!(s.pair_steps, spec.steps - rows);
    let missed: Vec<_> = s.missed.iter().take(10).collect();
    assert_eq!(s.missed_total, 0, "{missed:?}");
    assert_eq!(s.apart_total, 0);
    // The pairs of the checked steps, classified, are the pairs rapier reported there.
    let checked: u64 = info
        .engine_parts
        .steps
        .iter()
        .filter(|e| e.tree.as_ref().is_some_and(|t| !t.partial))
        .map(|e| e.pairs.as_ref().map_or(0, |p| p.len() as u64))
        .sum();
    assert_eq!(s.counts.total(), checked);
    assert_eq!(checked + sink.partial_pairs, sink.pairs_sent);
    // Every ball and wall is a leaf of rapier's tree at the last step.
    let last = s.health.last().expect("a tree");
    assert_eq!(last.health.leaves, BALLS as usize + 3);
}
