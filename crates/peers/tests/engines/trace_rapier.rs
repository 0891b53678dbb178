//! The rapier example's trace, made here with a small ball count (the example's own code,
//! included): the tree, brute force, sweep-and-prune and Box2D's own tree give the same pairs
//! and contacts at every step, and the balls really pile up inside the box.

#[path = "../../examples/rapier_pile/pile.rs"]
pub(crate) mod pile;

use aabb_debugger::broadphase::BroadphaseKind;
use aabb_debugger::cli::run::summarize_trace;
use aabb_debugger::trace::{Stepper, Trace, TraceSimulation};
use aabb_debugger::tree::TreeConfig;
use std::sync::Arc;

const BALLS: u32 = 150;

/// The example's pile of [`BALLS`] balls, long enough to settle, as text and as a trace.
fn small_pile() -> (Vec<u8>, pile::PileSummary, Trace) {
    let spec = pile::PileSpec {
        balls: BALLS,
        steps: pile::PileSpec::settling_steps(BALLS),
    };
    let mut text = Vec::new();
    let summary = pile::write_pile(spec, &mut text).expect("the pile is written");
    let trace = Trace::parse(&text, "pile.trace").expect("the example's trace reads back");
    (text, summary, trace)
}

/// Every broad phase, Box2D's own tree included (the pile is 2D).
#[test]
fn the_example_trace_gives_the_same_pairs_on_every_broad_phase() {
    let (text, summary, trace) = small_pile();
    // Every ball poured, the steps asked for, three walls.
    assert_eq!(summary.poured, BALLS);
    assert_eq!(trace.step_count() as u64, summary.steps);
    assert_eq!(trace.statics().len(), 3);
    assert_eq!(trace.step(trace.step_count() - 1).len(), BALLS as usize);
    // Written back, the trace is the same text.
    let mut again = Vec::new();
    trace.write(&mut again).expect("written");
    assert_eq!(again, text);

    let trace = Arc::new(trace);
    // A margin and look-ahead that make pairs come and go, and reinserts happen.
    let config = TreeConfig {
        margin: 0.05,
        velocity_lookahead: 0.05,
        ..TreeConfig::default()
    };
    let limit = aabb_debugger::broadphase::DEFAULT_PAIR_LIMIT;
    let mut sims: Vec<TraceSimulation> = BroadphaseKind::ALL
        .iter()
        .map(|&kind| {
            TraceSimulation::new(Arc::clone(&trace), kind, config, limit).expect("step 0 runs")
        })
        .collect();
    let (mut pairs, mut contacts, mut reinserts, mut wall_contacts) = (0usize, 0usize, 0, 0);
    loop {
        let reports: Vec<_> = sims.iter().map(|s| s.report().clone()).collect();
        let step = reports[0].step;
        for (r, sim) in reports.iter().zip(&sims).skip(1) {
            let kind = sim.broadphase_kind();
            assert_eq!(r.step, step);
            assert_eq!(
                r.candidate_pairs, reports[0].candidate_pairs,
                "{kind}, step {step}"
            );
            assert_eq!(r.contacts, reports[0].contacts, "{kind}, step {step}");
            assert_eq!(r.reinserted, reports[0].reinserted, "{kind}, step {step}");
            assert_eq!(r.appeared, reports[0].appeared, "{kind}, step {step}");
            assert_eq!(r.disappeared, reports[0].disappeared, "{kind}, step {step}");
        }
        pairs += reports[0].candidate_pairs.len();
        contacts += reports[0].contacts.len();
        reinserts += reports[0].reinserted.len();
        wall_contacts += reports[0]
            .contacts
            .iter()
            .filter(|&&(_, b)| b >= BALLS)
            .count();
        if sims[0].is_at_end() {
            break;
        }
        for sim in &mut sims {
            sim.step().expect("a step under the pair limit");
        }
    }
    // The case is not empty: balls touch each other and the walls, and move out of their
    // fat boxes.
    assert!(pairs > 10_000, "{pairs} candidate pairs");
    assert!(contacts > 5_000, "{contacts} contacts");
    assert!(
        wall_contacts > 1_000,
        "{wall_contacts} contacts with the walls"
    );
    assert!(reinserts > 1_000, "{reinserts} reinserts");
    // Balls were poured in rows over the first steps: they appeared, none disappeared.
    assert!(sims[0].trace().step(0).len() < BALLS as usize);
}

#[test]
fn the_balls_pile_up_inside_the_box() {
    let (_, summary, trace) = small_pile();
    let c = summary.container;
    // Poured from high up, they end in a heap on the floor: the mean centre is low, the
    // pile is a few layers deep, and it has come to rest.
    assert!(
        summary.final_mean_height < 0.25 * c.pour_height,
        "{summary:?}"
    );
    assert!(summary.final_top > 4.0 * pile::RADIUS.0, "{summary:?}");
    assert!(summary.final_top < 0.5 * c.pour_height, "{summary:?}");
    assert!(summary.final_mean_speed < 0.1, "{summary:?}");
    // Every ball box at the last step lies inside the box, to a centimetre (an eighth of the
    // smallest radius): rapier lets resting contacts sink in by a few millimetres.
    let tolerance = 0.01;
    let half = 0.5 * c.width;
    for b in trace.step(trace.step_count() - 1) {
        assert!(b.aabb.min.x >= -half - tolerance, "{b:?}");
        assert!(b.aabb.max.x <= half + tolerance, "{b:?}");
        assert!(b.aabb.min.y >= -tolerance, "{b:?}");
        assert!(b.aabb.max.y <= c.height, "{b:?}");
    }
    // The same arguments, the same pile.
    let (text_a, ..) = small_pile();
    let (text_b, ..) = small_pile();
    assert_eq!(text_a, text_b);
}

#[test]
fn run_on_the_example_trace_reports_the_last_step_alike_on_each_broad_phase() {
    let (_, _, trace) = small_pile();
    let trace = Arc::new(trace);
    let last = trace.step_count() as u64 - 1;
    let config = TreeConfig::default();
    let limit = aabb_debugger::broadphase::DEFAULT_PAIR_LIMIT;
    let runs: Vec<_> = BroadphaseKind::ALL
        .iter()
        .map(|&kind| {
            // More steps asked than the trace has: the run stops at its end.
            summarize_trace(&trace, "pile.trace", last + 50, kind, config, limit)
                .expect("the trace runs")
        })
        .collect();
    for r in &runs {
        assert_eq!(r.steps, last);
        assert_eq!(r.spheres, BALLS as usize + 3);
        assert_eq!(r.dimensions, 2);
        assert_eq!(r.scene, "pile.trace");
        assert_eq!(
            r.candidate_pairs, runs[0].candidate_pairs,
            "{}",
            r.broadphase
        );
        assert_eq!(r.contacts, runs[0].contacts, "{}", r.broadphase);
        assert_eq!(
            r.reinserts_total, runs[0].reinserts_total,
            "{}",
            r.broadphase
        );
    }
    assert!(runs[0].tree.is_some() && runs[1].tree.is_none());
    assert!(!runs[0].contacts.is_empty());
}
