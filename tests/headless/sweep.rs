//! The margin sweep as a library: its counts equal plain runs at the same settings, do not
//! depend on the thread count or the run, a cancel ends it promptly with partial progress,
//! a point past the pair limit stops alone, and bad grids and points are refused up front.

use aabb_debugger::broadphase::BroadphaseKind;
use aabb_debugger::cli::run::{summarize_with_limit, with_overrides};
use aabb_debugger::scene::{Scene, Simulation};
use aabb_debugger::sweep::{
    PointResult, SweepControl, SweepError, SweepOutcome, SweepPlan, SweepReport, SweepSpec,
};
use aabb_debugger::tree::WorkCounts;
use std::path::Path;
use std::time::{Duration, Instant};

fn scene(name: &str) -> Scene {
    Scene::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenes")
            .join(name),
    )
    .expect("scene")
}

fn finished(outcome: SweepOutcome) -> SweepReport {
    match outcome {
        SweepOutcome::Finished(report) => *report,
        SweepOutcome::Cancelled { progress, .. } => panic!("cancelled at {progress:?}"),
    }
}

fn sweep(scene: &Scene, spec: SweepSpec) -> SweepReport {
    let plan = SweepPlan::new(scene, spec).expect("a valid grid");
    finished(plan.run(&SweepControl::new()).expect("runs"))
}

/// What must not depend on the machine, the thread count or the run: everything but times.
type Counts = (f32, f32, u64, u64, u64, u64, WorkCounts, Option<String>);

fn counts(points: &[PointResult]) -> Vec<Counts> {
    points
        .iter()
        .map(|p| {
            (
                p.point.margin,
                p.point.lookahead,
                p.steps,
                p.reinserts_total,
                p.candidate_pairs_total,
                p.contacts_total,
                p.work,
                p.stopped.clone(),
            )
        })
        .collect()
}

/// A plain simulation at one margin and look-ahead: reinserts, candidate pairs and contacts
/// summed over `steps` steps, and the tree's work over them.
fn plain(scene: &Scene, margin: f32, lookahead: f32, steps: u64) -> (u64, u64, u64, WorkCounts) {
    let scene = with_overrides(scene.clone(), Some(margin), Some(lookahead));
    let mut sim = Simulation::new(&scene, BroadphaseKind::Tree).expect("valid");
    let start = sim.work_counts().expect("the tree counts");
    let (mut r, mut c, mut k) = (0, 0, 0);
    for _ in 0..steps {
        let report = sim.step().expect("under the pair limit");
        r += report.reinserted.len() as u64;
        c += report.candidate_pairs.len() as u64;
        k += report.contacts.len() as u64;
    }
    (
        r,
        c,
        k,
        sim.work_counts().expect("the tree counts").since(&start),
    )
}

#[test]
fn sweep_counts_equal_plain_runs_at_the_same_settings() {
    let scene = scene("random-1000.ron");
    let steps = 25;
    let report = sweep(
        &scene,
        SweepSpec::new(vec![0.0, 0.15, 0.6], vec![0.0, 0.1], steps),
    );
    assert_eq!(report.points.len(), 6);
    let mut seen = Vec::new();
    for p in &report.points {
        let (m, l) = (p.point.margin, p.point.lookahead);
        seen.push((m, l));
        assert_eq!(p.steps, steps);
        assert_eq!(p.stopped, None);
        let (r, c, k, work) = plain(&scene, m, l, steps);
        assert_eq!(
            (
                p.reinserts_total,
                p.candidate_pairs_total,
                p.contacts_total,
                p.work
            ),
            (r, c, k, work),
            "margin {m}, look-ahead {l}"
        );
        // And `run`'s own summary (what `run --json` prints).
        let run = summarize_with_limit(
            &with_overrides(scene.clone(), Some(m), Some(l)),
            "x",
            steps,
            BroadphaseKind::Tree,
            aabb_debugger::broadphase::DEFAULT_PAIR_LIMIT,
        )
        .expect("runs");
        assert_eq!(
            p.reinserts_total, run.reinserts_total,
            "margin {m}, look-ahead {l}"
        );
        assert!(p.work.update_node_visits > 0 && p.work.pair_node_visits > 0);
        assert_eq!(p.ms_per_step.count, steps);
    }
    // Grid order: look-ahead values, then margins, the last varying fastest.
    assert_eq!(
        seen,
        vec![
            (0.0, 0.0),
            (0.15, 0.0),
            (0.6, 0.0),
            (0.0, 0.1),
            (0.15, 0.1),
            (0.6, 0.1)
        ]
    );
    // A wider margin: fewer reinserts, more candidate pairs (at look-ahead 0).
    let p = &report.points;
    assert!(p[0].reinserts_total > p[1].reinserts_total);
    assert!(p[1].reinserts_total > p[2].reinserts_total);
    assert!(p[0].candidate_pairs_total < p[1].candidate_pairs_total);
    assert!(p[1].candidate_pairs_total < p[2].candidate_pairs_total);
    // Contacts do not depend on the fat boxes.
    assert!(p.iter().all(|q| q.contacts_total == p[0].contacts_total));
}

#[test]
fn counts_are_identical_with_one_thread_and_with_several() {
    let scene = scene("random-1000.ron");
    let margins = vec![0.0, 0.05, 0.1, 0.2, 0.4];
    let spec = |threads| SweepSpec {
        threads,
        ..SweepSpec::new(margins.clone(), vec![0.0, 0.2], 15)
    };
    let one = sweep(&scene, spec(1));
    let four = sweep(&scene, spec(4));
    assert_eq!(one.threads, 1);
    assert_eq!(four.threads, 4);
    assert_eq!(counts(&one.points), counts(&four.points));
    // The advice by work is counts alone: the same too.
    assert_eq!(one.advice.best_by_work, four.advice.best_by_work);
    assert_eq!(one.advice.why, four.advice.why);
}

#[test]
fn a_sweep_is_deterministic_across_runs() {
    let scene = scene("choi-appear-disappear.ron");
    let spec = SweepSpec::new(vec![0.0, 0.1, 0.2, 0.3], vec![0.0, 0.5], 40);
    let first = sweep(&scene, spec.clone());
    let second = sweep(&scene, spec);
    assert_eq!(counts(&first.points), counts(&second.points));
    assert_eq!(first.advice.best_by_work, second.advice.best_by_work);
}

/// A plan that would take minutes: it can only end in time by being cancelled.
fn long_plan() -> SweepPlan {
    let scene = scene("random-1000.ron");
    let spec = SweepSpec {
        threads: 2,
        ..SweepSpec::new(vec![0.0, 0.1, 0.2, 0.3], vec![0.0], 1_000_000)
    };
    SweepPlan::new(&scene, spec).expect("valid")
}

#[test]
fn a_cancel_before_the_start_ends_the_sweep_at_once() {
    let control = SweepControl::new();
    control.cancel();
    let started = Instant::now();
    match long_plan().run(&control).expect("runs") {
        SweepOutcome::Cancelled { finished, progress } => {
            assert!(finished.is_empty());
            assert_eq!(progress.steps_done, 0);
            assert_eq!(progress.points_done, 0);
            assert_eq!(progress.steps_total, 4_000_000);
            assert_eq!(progress.points_total, 4);
        }
        SweepOutcome::Finished(_) => panic!("a cancelled sweep finished"),
    }
    // No step was taken: far below a step of this scene times the steps of one point.
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_cancel_while_running_ends_the_sweep_promptly_with_partial_progress() {
    let handle = long_plan().start().expect("starts");
    assert_eq!(handle.progress().steps_total, 4_000_000);
    let waited = Instant::now();
    while handle.progress().steps_done < 20 {
        assert!(waited.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!handle.is_finished());
    let asked = Instant::now();
    handle.cancel();
    let outcome = handle.wait().expect("runs");
    // Cancellation is checked before every step (a step here takes about a millisecond, in
    // a debug build a few); the wide bound keeps a loaded machine from failing the test. The
    // latency itself is measured by `cargo bench -p aabb-peers --bench sweep`.
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    match outcome {
        SweepOutcome::Cancelled { finished, progress } => {
            assert!(finished.is_empty(), "no point can finish 1,000,000 steps");
            assert!(progress.steps_done >= 20);
            assert!(progress.steps_done < progress.steps_total);
            assert_eq!(progress.points_done, 0);
        }
        SweepOutcome::Finished(_) => panic!("a cancelled sweep finished"),
    }
}

#[test]
fn a_point_past_the_pair_limit_stops_alone() {
    let scene = scene("random-1000.ron");
    // About 530 candidate pairs a step at margin 0 and 1,400 at 0.5 (look-ahead 0).
    let spec = SweepSpec {
        pair_limit: 1000,
        ..SweepSpec::new(vec![0.0, 0.1, 0.5], vec![0.0], 10)
    };
    let report = sweep(&scene, spec);
    let p = &report.points;
    assert_eq!(p[0].stopped, None);
    assert_eq!(p[1].stopped, None);
    assert_eq!(p[2].steps, 0);
    let stopped = p[2].stopped.as_deref().expect("stopped");
    assert!(
        stopped.starts_with("step 0: more than 1000 candidate pairs"),
        "{stopped}"
    );
    for q in &p[..2] {
        let (r, c, k, work) = plain(&scene, q.point.margin, 0.0, 10);
        assert_eq!(
            (
                q.reinserts_total,
                q.candidate_pairs_total,
                q.contacts_total,
                q.work
            ),
            (r, c, k, work)
        );
    }
    // The stopped point is never recommended.
    let a = &report.advice;
    assert_ne!(a.best_by_time.as_ref().expect("a best").index, 2);
    assert_ne!(a.best_by_work.as_ref().expect("a best").index, 2);
}

#[test]
fn bad_grids_and_points_are_refused_before_anything_runs() {
    let scene = scene("random-1000.ron");
    let refuse = |spec: SweepSpec| SweepPlan::new(&scene, spec).expect_err("refused");
    assert_eq!(
        refuse(SweepSpec::new(vec![0.1], vec![0.0], 0)).to_string(),
        "steps: must be 1 to 1000000, got 0"
    );
    assert_eq!(
        refuse(SweepSpec::new(vec![0.1], vec![0.0], 1_000_001)).to_string(),
        "steps: must be 1 to 1000000, got 1000001"
    );
    assert_eq!(
        refuse(SweepSpec::new(vec![], vec![0.0], 10)).to_string(),
        "margin: no margin to sweep"
    );
    assert_eq!(
        refuse(SweepSpec::new(vec![0.1, f32::NAN], vec![0.0], 10)).to_string(),
        "margin: must be finite and >= 0, got NaN"
    );
    assert_eq!(
        refuse(SweepSpec::new(vec![0.1], vec![-1.0], 10)).to_string(),
        "lookahead: must be finite and >= 0, got -1"
    );
    let many: Vec<f32> = (0..101).map(|i| i as f32 * 0.01).collect();
    assert_eq!(
        refuse(SweepSpec::new(many.clone(), many, 10)).to_string(),
        "points: 101 margins x 101 look-ahead values x 1 configurations = 10201 points; at \
         most 10000"
    );
    assert_eq!(
        refuse(SweepSpec::new(vec![0.0; 200], vec![0.0], 1_000_000)).to_string(),
        "steps: 200 points x 1000000 steps = 200000000 steps; at most 100000000 in one sweep"
    );
    // A look-ahead whose fat boxes overflow f32 at the world's edge: refused naming the point.
    // (Speeds up to 3: 3 x 2e38 is past f32's 3.4e38.)
    match refuse(SweepSpec::new(vec![0.0, 0.1], vec![0.0, 2e38], 10)) {
        SweepError::Scene {
            margin,
            lookahead,
            message,
        } => {
            assert_eq!((margin, lookahead), (0.0, 2e38));
            assert!(
                message.contains("its fat box would overflow f32"),
                "{message}"
            );
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_plan_from_a_running_simulation_starts_where_it_is() {
    let scene = scene("random-1000.ron");
    let mut sim = Simulation::new(&scene, BroadphaseKind::Tree).expect("valid");
    for _ in 0..5 {
        sim.step().expect("steps");
    }
    let sim = aabb_debugger::source::Sim::Scene(sim);
    let plan = SweepPlan::from_sim(&sim, SweepSpec::new(vec![0.3], vec![0.0], 3)).expect("valid");
    assert_eq!(plan.points().len(), 1);
    assert_eq!(plan.points()[0].config.pairs, scene.tree.pairs);
    let report = finished(plan.run(&SweepControl::new()).expect("runs"));
    let (r, c, k, work) = plain(&sim.scene().expect("a scene"), 0.3, 0.0, 3);
    let p = &report.points[0];
    assert_eq!(
        (
            p.reinserts_total,
            p.candidate_pairs_total,
            p.contacts_total,
            p.work
        ),
        (r, c, k, work)
    );
}

/// The three advisor scenes have clearly different best margins by work, on the grid that
/// docs/guide.md ("The Advisor and `sweep`") and comments use at look-ahead 0 (margins 0.02
/// to 1.22 by 0.2, 300 steps): slow and dense 0.22, fast and sparse 1.22, mixed sizes 0.62.
/// The work totals are the exact counts (node visits plus candidate pairs), the same on every
/// machine.
#[test]
fn each_advisor_scene_has_its_own_best_margin_by_work() {
    let margins = aabb_debugger::sweep::MarginRange::parse("0.02:1.22:0.2")
        .and_then(|r| r.values())
        .expect("a valid range");
    assert_eq!(margins.len(), 7);
    for (file, best_margin, work_total) in [
        ("advisor-slow-dense.ron", 0.22, 2_032_194),
        ("advisor-fast-sparse.ron", 1.22, 792_537),
        ("advisor-mixed-sizes.ron", 0.62, 1_628_056),
    ] {
        let report = sweep(
            &scene(file),
            SweepSpec::new(margins.clone(), vec![0.0], 300),
        );
        let best = report.advice.best_by_work.expect("every point finished");
        let point = &report.points[best.index];
        assert_eq!(
            (point.point.margin, point.point.lookahead, best.work_total),
            (best_margin, 0.0, work_total),
            "{file}"
        );
        assert_eq!(best.work_total, point.work_total(), "{file}");
        // Least by definition: every other point does more work.
        for (i, p) in report.points.iter().enumerate() {
            assert!(
                i == best.index || p.work_total() > best.work_total,
                "{file}"
            );
        }
    }
}

/// `sweep --broadphase box2d`: every point on Box2D's own tree counts the reinserts, candidate
/// pairs and contacts the tree's point counts (the work counts are the tree's only: zero);
/// a 3D scene is refused before anything runs.
#[test]
fn a_sweep_on_box2d_counts_what_the_tree_counts() {
    let scene = scene("choi-appear-disappear.ron");
    let spec = SweepSpec::new(vec![0.0, 0.1, 0.3], vec![0.0, 0.5], 40);
    let tree = sweep(&scene, spec.clone());
    let b2 = sweep(
        &scene,
        SweepSpec {
            broadphase: BroadphaseKind::Box2d,
            ..spec.clone()
        },
    );
    let without_work = |points: &[PointResult]| -> Vec<Counts> {
        counts(points)
            .into_iter()
            .map(|mut c| {
                c.6 = WorkCounts::default();
                c
            })
            .collect()
    };
    assert_eq!(without_work(&b2.points), without_work(&tree.points));
    assert!(b2.points.iter().all(|p| p.work == WorkCounts::default()));
    assert!(
        b2.points
            .iter()
            .map(|p| p.candidate_pairs_total)
            .sum::<u64>()
            > 0
    );
    let Err(e) = SweepPlan::new(
        &self::scene("spheres-3d.ron"),
        SweepSpec {
            broadphase: BroadphaseKind::Box2d,
            ..spec
        },
    ) else {
        panic!("a 3D scene swept on Box2D's tree");
    };
    assert_eq!(
        e.to_string(),
        "broadphase: box2d runs 2D scenes and traces only; this one is 3D"
    );
}
