//! The generic recording on a trace: every step of a `Recording<TraceSimulation>` (with
//! edits of the tree settings, a rebuild, a switch of broad phase) is rebuilt exactly from
//! its keyframes and from the start alone, as the scene tests in `replay.rs` assert; sphere
//! edits are refused and not recorded.

use aabb_debugger::broadphase::{BroadphaseKind, DEFAULT_PAIR_LIMIT};
use aabb_debugger::replay::{Edit, EditOutcome, KeyframePolicy, Recording, StepRecord, TraceStart};
use aabb_debugger::trace::{Trace, TraceSimulation};
use aabb_debugger::tree::TreeConfig;
use std::sync::Arc;

/// A 3D trace of 12 boxes drifting apart and together over 60 steps, with a static floor.
fn trace() -> Arc<Trace> {
    let mut t = String::from("aabb-trace 1 dims=3 dt=0.1\nstatic\n1000 -20 -1 -20 20 0 20\n");
    for s in 0..60u32 {
        t.push_str(&format!("step {s}\n"));
        for id in 0..12u32 {
            let phase = (s as f32 * 0.15 + id as f32).sin();
            let (x, y, z) = (id as f32 * 1.2 + 2.0 * phase, 1.0 + 0.5 * id as f32, phase);
            t.push_str(&format!(
                "{id} {x} {y} {z} {} {} {}\n",
                x + 1.0,
                y + 1.0,
                z + 1.0
            ));
        }
    }
    Arc::new(Trace::parse(t.as_bytes(), "drift").expect("the trace parses"))
}

fn start() -> (Recording<TraceSimulation>, TraceSimulation) {
    let origin = TraceStart {
        trace: trace(),
        config: TreeConfig::default(),
    };
    Recording::start_from(&origin, "drift", BroadphaseKind::Tree, DEFAULT_PAIR_LIMIT)
        .expect("the trace starts")
}

#[test]
fn every_rebuilt_step_of_a_trace_equals_the_recorded_one() {
    let (mut rec, mut sim) = start();
    rec.set_keyframe_policy(KeyframePolicy::Every(8));
    let mut hashes = vec![sim.structure_hash()];
    for s in 1..60u64 {
        rec.step(&mut sim).expect("recorded").expect("stepped");
        match s {
            10 => {
                let settings = TreeConfig {
                    margin: 0.4,
                    ..TreeConfig::default()
                };
                assert_eq!(
                    rec.apply(&mut sim, Edit::SetTreeSettings(settings))
                        .expect("applied"),
                    EditOutcome::Applied
                );
            }
            20 => assert_eq!(
                rec.apply(&mut sim, Edit::Rebuild).expect("applied"),
                EditOutcome::Applied
            ),
            30 => assert_eq!(
                rec.apply(&mut sim, Edit::SetBroadphase(BroadphaseKind::Sap))
                    .expect("applied"),
                EditOutcome::Applied
            ),
            40 => assert_eq!(
                rec.apply(&mut sim, Edit::SetBroadphase(BroadphaseKind::Tree))
                    .expect("applied"),
                EditOutcome::Applied
            ),
            _ => {}
        }
        hashes.push(sim.structure_hash());
    }
    // At the end: no further step, nothing recorded.
    let outcome = rec.step(&mut sim).expect("not recorded, not an error");
    assert!(outcome.is_err(), "the trace has no step 60");
    assert_eq!(rec.last_step(), 59);
    assert_eq!(rec.edits().len(), 4);
    assert_eq!(rec.keyframe_steps(), vec![0, 8, 16, 24, 32, 40, 48, 56]);
    for s in 0..60u64 {
        let from_keyframe = rec.state_at(s).expect("rebuilt");
        let from_start = rec.history().state_at(s).expect("rebuilt from the start");
        assert_eq!(from_keyframe.step_index(), s);
        assert_eq!(
            from_keyframe.structure_hash(),
            hashes[s as usize],
            "step {s}"
        );
        assert_eq!(from_start.structure_hash(), hashes[s as usize], "step {s}");
        if ![10, 20, 30, 40].contains(&s) {
            // A step's record is taken before the edits made at it.
            let record = StepRecord::of(&from_keyframe);
            assert_eq!(
                rec.steps()[s as usize].difference(&record),
                None,
                "step {s}"
            );
        }
        assert_eq!(
            from_keyframe.tree_settings().margin,
            if s >= 10 {
                0.4
            } else {
                TreeConfig::default().margin
            }
        );
    }
    // A history rebuilds into the same recording.
    let again = Recording::from_history(rec.history().clone(), KeyframePolicy::Every(8))
        .expect("every step checks");
    assert_eq!(again.history(), rec.history());
}

#[test]
fn sphere_edits_are_refused_on_a_trace_and_not_recorded() {
    let (mut rec, mut sim) = start();
    let hash = sim.structure_hash();
    let refused = rec
        .apply(&mut sim, Edit::RemoveSphere { id: 3 })
        .expect_err("a trace has no spheres");
    assert_eq!(
        refused.to_string(),
        "<trace>: cannot remove sphere 3 in a trace: its boxes come from its file"
    );
    assert!(rec.edits().is_empty());
    assert_eq!(sim.structure_hash(), hash);
}
