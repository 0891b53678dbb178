//! Recording and rebuilding steps: random scenes with random edits at random steps, every
//! rebuilt step equal to the original (tree hash, pairs, contacts, bodies), also after
//! changing the past and after a round trip through a file; a changed record or edit is
//! found; the memory budget thins keyframes and then refuses steps.

use aabb_debugger::broadphase::BroadphaseKind;
use aabb_debugger::replay::{
    Edit, History, KeyframePolicy, Metric, Recording, ReplayError, StepRecord, file,
};
use aabb_debugger::scene::{FORMAT_VERSION, Generate, Scene, Simulation, Sphere};
use aabb_debugger::tree::{Aabb, Balancing, InsertionCost, TreeConfig, UpdateMode};
use glam::Vec3;
use proptest::prelude::*;

/// A generated scene of `count` spheres in a `side`-wide world.
fn scene(dimensions: u8, count: u32, seed: u64, margin: f32, update: UpdateMode) -> Scene {
    let side = 40.0;
    let max = if dimensions == 3 {
        Vec3::splat(side)
    } else {
        Vec3::new(side, side, 0.0)
    };
    Scene {
        format_version: FORMAT_VERSION,
        name: format!("random {seed}"),
        dimensions,
        world: Aabb::new(Vec3::ZERO, max),
        dt: 1.0 / 60.0,
        tree: TreeConfig {
            margin,
            velocity_lookahead: 0.05,
            update,
            ..TreeConfig::default()
        },
        spheres: Vec::new(),
        boxes: Vec::new(),
        generate: Some(Generate {
            count,
            radius: (0.4, 1.5),
            speed: (0.5, 8.0),
            seed,
            density: None,
        }),
        view: None,
    }
}

/// What must be equal between a step as it was and as rebuilt.
#[derive(Clone, Debug, PartialEq)]
struct Seen {
    step: u64,
    hash: u64,
    pairs: Vec<(u32, u32)>,
    contacts: Vec<(u32, u32)>,
    bodies: Vec<aabb_debugger::scene::SphereBody>,
    kind: BroadphaseKind,
    stopped: bool,
}

fn seen(sim: &Simulation) -> Seen {
    Seen {
        step: sim.step_index(),
        hash: sim.structure_hash(),
        pairs: sim.report().candidate_pairs.clone(),
        contacts: sim.report().contacts.clone(),
        bodies: sim.bodies().to_vec(),
        kind: sim.broadphase_kind(),
        stopped: sim.last_error().is_some(),
    }
}

/// A random edit from a few random numbers (`a` picks the kind).
fn edit_of(sim: &Simulation, a: u8, b: u32, x: f32, y: f32) -> Edit {
    let world = sim.world();
    let at = |r: f32| {
        let p = world.min + (world.max - world.min) * Vec3::new(x, y, (x + y) * 0.5);
        sim.clamp_center(r, p)
    };
    let ids: Vec<u32> = sim.bodies().iter().map(|b| b.sphere.id).collect();
    let id = ids.get(b as usize % ids.len().max(1)).copied().unwrap_or(0);
    match a % 8 {
        0 | 1 => Edit::MoveSphere {
            id,
            center: at(sim.body(id).map_or(1.0, |b| b.sphere.radius)),
        },
        2 => Edit::AddSphere(Sphere {
            id: 10_000 + b % 1000,
            label: Some("new".to_owned()),
            center: at(0.7),
            radius: 0.7,
            velocity: Vec3::new(3.0 * x - 1.5, 2.0 * y - 1.0, 0.0),
            appear_at: 0,
            disappear_at: Some(sim.step_index() + 1 + u64::from(b % 20)),
        }),
        3 => Edit::RemoveSphere { id },
        4 => Edit::SetTreeSettings(TreeConfig {
            margin: 0.05 + x,
            balancing: [Balancing::None, Balancing::Avl, Balancing::Rotations][b as usize % 3],
            insertion: [InsertionCost::Volume, InsertionCost::SurfaceArea][b as usize % 2],
            update: [
                UpdateMode::Reinsert,
                UpdateMode::LocalReinsert,
                UpdateMode::EnlargeAndRebuild,
            ][(b / 3) as usize % 3],
            ..sim.tree_settings()
        }),
        5 => Edit::SetBroadphase(BroadphaseKind::ALL[b as usize % 3]),
        6 => Edit::Rebuild,
        // Sometimes so low that steps stop at the limit.
        _ => Edit::SetPairLimit(if b.is_multiple_of(3) { 3 } else { 5_000_000 }),
    }
}

/// Drives `rec` and `sim` to step `until`, applying the edits planned for each step, and
/// notes what every step looked like after its edits.
fn drive(
    rec: &mut Recording,
    sim: &mut Simulation,
    until: u64,
    plan: &[(u64, u8, u32, f32, f32)],
    out: &mut Vec<Seen>,
) {
    loop {
        let step = sim.step_index();
        for &(_, a, b, x, y) in plan.iter().filter(|p| p.0 == step) {
            let edit = edit_of(sim, a, b, x, y);
            // Refused edits change nothing and are not recorded; both are fine here.
            let _outcome = rec.apply(sim, edit);
        }
        out.truncate(step as usize);
        out.push(seen(sim));
        if step >= until {
            return;
        }
        let _stepped = rec.step(sim).expect("recorded within the budget");
    }
}

fn check_all(rec: &Recording, expected: &[Seen]) -> Result<(), TestCaseError> {
    prop_assert_eq!(rec.last_step() + 1, expected.len() as u64);
    for want in expected {
        let got = rec
            .state_at(want.step)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&seen(&got), want, "step {}", want.step);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_rebuilt_step_equals_the_original_also_after_changing_the_past_and_a_file(
        dims in 2u8..=3,
        count in 5u32..50,
        seed in 0u64..1000,
        margin in 0.05f32..0.6,
        update in 0usize..3,
        kind in 0usize..3,
        every in 1u64..9,
        steps in 10u64..60,
        plan in prop::collection::vec((0u64..60, any::<u8>(), any::<u32>(), 0.0f32..1.0, 0.0f32..1.0), 0..12),
        back in 0u64..60,
        plan2 in prop::collection::vec((0u64..100, any::<u8>(), any::<u32>(), 0.0f32..1.0, 0.0f32..1.0), 0..8),
    ) {
        let updates = [UpdateMode::Reinsert, UpdateMode::LocalReinsert, UpdateMode::EnlargeAndRebuild];
        let scene = scene(dims, count, seed, margin, updates[update]);
        let (mut rec, mut sim) =
            Recording::start(&scene, "random.ron", BroadphaseKind::ALL[kind], 5_000_000)
                .expect("a valid scene");
        rec.set_keyframe_policy(KeyframePolicy::Every(every));
        let mut expected = Vec::new();
        drive(&mut rec, &mut sim, steps, &plan, &mut expected);
        prop_assert_eq!(rec.keyframe_steps()[0], 0);
        check_all(&rec, &expected)?;

        // Changing the past: back to a step, everything after it goes, new edits and steps.
        let back = back % (steps + 1);
        let (mut sim2, discarded) = rec.resume_at(back).expect("recorded");
        prop_assert_eq!(discarded.steps, steps - back);
        prop_assert_eq!(seen(&sim2), expected[back as usize].clone());
        prop_assert!(rec.edits().iter().all(|e| e.step <= back));
        prop_assert!(rec.keyframe_steps().iter().all(|&k| k <= back));
        let plan2: Vec<_> = plan2.iter().map(|p| (p.0 % 40 + back + 1, p.1, p.2, p.3, p.4)).collect();
        expected.truncate(back as usize + 1);
        drive(&mut rec, &mut sim2, back + 30, &plan2, &mut expected);
        check_all(&rec, &expected)?;

        // Through a file: the same history, and every step rebuilt from it alone.
        let bytes = file::to_bytes(rec.history()).expect("written");
        let read = file::from_bytes(&bytes, "rec.aabbrec").expect("read back");
        prop_assert_eq!(&read, rec.history());
        let again = Recording::from_history(read.clone(), KeyframePolicy::Every(every + 3))
            .expect("rebuilt");
        check_all(&again, &expected)?;
        let mid = (back + 15) as usize;
        let got = read.state_at(mid as u64).expect("rebuilt from the scene");
        prop_assert_eq!(seen(&got), expected[mid].clone());
    }
}

fn small_recording(steps: u64) -> (Recording, Simulation, Vec<Seen>) {
    let scene = scene(2, 40, 7, 0.2, UpdateMode::Reinsert);
    let (mut rec, mut sim) =
        Recording::start(&scene, "small.ron", BroadphaseKind::Tree, 5_000_000).expect("valid");
    rec.set_keyframe_policy(KeyframePolicy::Every(10));
    let plan = [
        (5, 0, 3, 0.2, 0.7),
        (12, 6, 0, 0.0, 0.0),
        (12, 4, 4, 0.3, 0.3),
    ];
    let mut seen = Vec::new();
    drive(&mut rec, &mut sim, steps, &plan, &mut seen);
    (rec, sim, seen)
}

#[test]
fn keyframes_follow_the_policy_and_the_history_holds_every_step_and_edit() {
    let (rec, sim, _) = small_recording(35);
    assert_eq!(rec.keyframe_steps(), vec![0, 10, 20, 30]);
    assert_eq!(rec.steps().len(), 36);
    assert_eq!(rec.last_step(), 35);
    let steps: Vec<u64> = rec.edits().iter().map(|e| e.step).collect();
    assert_eq!(steps, vec![5, 12, 12]);
    assert_eq!(rec.edits()[1].edit, Edit::Rebuild);
    assert_eq!(rec.steps()[35], StepRecord::of(&sim));
    assert_eq!(rec.steps()[35].hash, sim.structure_hash());
    // The worst step of a metric is the first step where it is greatest.
    let worst = rec.worst_step(Metric::CandidatePairs);
    let most = rec.steps().iter().map(|r| r.candidate_pairs).max();
    assert_eq!(Some(rec.steps()[worst as usize].candidate_pairs), most);
    assert!(
        rec.steps()[..worst as usize]
            .iter()
            .all(|r| Some(r.candidate_pairs) < most)
    );
}

#[test]
fn the_default_rule_counts_body_steps_or_steps() {
    let scene = scene(2, 40, 7, 0.2, UpdateMode::Reinsert);
    for (policy, expected) in [
        // 40 bodies: 400 body-steps are 10 steps.
        (
            KeyframePolicy::Work {
                body_steps: 400,
                max_steps: 1000,
            },
            vec![0, 10, 20],
        ),
        (
            KeyframePolicy::Work {
                body_steps: 1_000_000,
                max_steps: 7,
            },
            vec![0, 7, 14, 21],
        ),
        (KeyframePolicy::default(), vec![0]),
    ] {
        let (mut rec, mut sim) =
            Recording::start(&scene, "", BroadphaseKind::Tree, 5_000_000).expect("valid");
        rec.set_keyframe_policy(policy);
        for _ in 0..25 {
            rec.step(&mut sim).expect("recorded").expect("stepped");
        }
        assert_eq!(rec.keyframe_steps(), expected, "{policy:?}");
    }
    assert_eq!(
        KeyframePolicy::default(),
        KeyframePolicy::Work {
            body_steps: 400_000,
            max_steps: 1000
        }
    );
}

#[test]
fn a_step_past_the_recording_and_steps_out_of_order_are_refused() {
    let (mut rec, sim, _) = small_recording(20);
    let e = rec.state_at(21).err().expect("not recorded");
    assert_eq!(
        e.to_string(),
        "step 21 is not in the recording (it holds steps 0 to 20)"
    );
    let e = rec.record_step(&sim).expect_err("step 20 again");
    assert_eq!(
        e.to_string(),
        "cannot record step 20: the recording is at step 20; steps are recorded one after the other"
    );
}

#[test]
fn a_changed_step_record_or_edit_is_found_when_rebuilding() {
    let (rec, _, _) = small_recording(30);
    let mut history: History = rec.history().clone();
    history.steps[17].hash ^= 1;
    let e = history.state_at(25).err().expect("mismatch");
    let text = e.to_string();
    assert!(
        text.starts_with("step 17 rebuilt differs from the recording: tree hash: recorded "),
        "{text}"
    );
    assert!(matches!(e, ReplayError::Mismatch { step: 17, .. }));
    // Rebuilding up to step 16 does not reach the changed record.
    assert_eq!(
        history.state_at(16).expect("fine").structure_hash(),
        rec.steps()[16].hash
    );

    let mut history = rec.history().clone();
    history.steps[9].contacts += 1;
    let e = history.state_at(9).err().expect("mismatch");
    assert!(
        e.to_string()
            .starts_with("step 9 rebuilt differs from the recording: contacts: recorded "),
        "{e}"
    );

    let mut history = rec.history().clone();
    history.edits[0].edit = Edit::RemoveSphere { id: 999_999 };
    let e = history.state_at(6).err().expect("refused edit");
    assert_eq!(
        e.to_string(),
        "step 5 rebuilt differs from the recording: the recorded edit \"remove sphere 999999\" \
         was refused: no sphere has id 999999"
    );
    // A file holding the changed history is read, and the difference found on rebuilding.
    let read = file::from_bytes(&file::to_bytes(&history).expect("bytes"), "x").expect("read");
    assert!(Recording::from_history(read, KeyframePolicy::Every(4)).is_err());
}

#[test]
fn an_edit_not_recorded_is_found_at_the_next_step() {
    let scene = scene(2, 30, 3, 0.2, UpdateMode::Reinsert);
    let (mut rec, mut sim) =
        Recording::start(&scene, "", BroadphaseKind::Tree, 5_000_000).expect("valid");
    for _ in 0..5 {
        rec.step(&mut sim).expect("recorded").expect("stepped");
    }
    // The caller rebuilds the tree without telling the recording.
    sim.rebuild().expect("rebuilt");
    rec.step(&mut sim).expect("recorded").expect("stepped");
    let e = rec.state_at(6).err().expect("mismatch");
    assert!(
        e.to_string()
            .starts_with("step 6 rebuilt differs from the recording: tree hash"),
        "{e}"
    );
}

#[test]
fn the_budget_drops_keyframes_evenly_then_refuses_steps() {
    let (mut rec, mut sim, expected) = small_recording(40);
    let frames = rec.memory_bytes() - rec.history().memory_bytes();
    assert_eq!(rec.keyframe_steps(), vec![0, 10, 20, 30, 40]);
    // Room for four of the five: the one whose loss leaves the shortest stretch goes (40:
    // the stretch from 30 to the end, step 40, is 10 steps; any other would leave 20).
    rec.set_budget_bytes(rec.history().memory_bytes() + frames * 9 / 10);
    assert_eq!(rec.keyframe_steps(), vec![0, 10, 20, 30]);
    assert_eq!(rec.keyframes_dropped(), 1);
    assert!(rec.memory_bytes() <= rec.budget_bytes());
    // Ten more steps: the keyframe at 50 goes over, so one goes again: 10, 20 and 50 would
    // each leave 20 steps without one (30 would leave 30); ties drop the oldest.
    let plan = [];
    let mut seen_now = expected.clone();
    drive(&mut rec, &mut sim, 50, &plan, &mut seen_now);
    assert_eq!(rec.keyframes_dropped(), 2);
    assert_eq!(rec.keyframe_steps(), vec![0, 20, 30, 50]);
    for s in [0, 19, 21, 40, 50] {
        assert_eq!(
            seen(&rec.state_at(s).expect("rebuilt")),
            seen_now[s as usize]
        );
    }
    // No room beyond what is used: down to keyframe 0, then no more steps.
    rec.set_budget_bytes(rec.memory_bytes() / 3);
    assert_eq!(rec.keyframe_steps(), vec![0]);
    rec.set_budget_bytes(rec.memory_bytes());
    let e = rec.step(&mut sim).expect_err("full");
    assert!(e.to_string().starts_with("the recording is full: "), "{e}");
    assert_eq!(rec.last_step(), 50);
    assert_eq!(seen(&rec.state_at(33).expect("rebuilt")), seen_now[33]);
}

#[test]
fn an_edit_for_a_past_step_is_refused_until_the_recording_resumes_there() {
    let (mut rec, _, expected) = small_recording(20);
    let mut past = rec.state_at(8).expect("rebuilt");
    let e = rec
        .apply(&mut past, Edit::Rebuild)
        .expect_err("not at the end");
    assert_eq!(
        e.to_string(),
        "<recording>: the simulation is at step 8 but the recording ends at step 20: an edit \
         is recorded at the end (to act at a past step, resume the recording there first)"
    );
    // Nothing changed, nothing recorded.
    assert_eq!(seen(&past), expected[8]);
    assert_eq!(rec.edits().len(), 3);
    assert!(rec.record_edit(&past, Edit::Rebuild).is_err());
    let (mut past, discarded) = rec.resume_at(8).expect("recorded");
    assert_eq!((discarded.steps, discarded.edits), (12, 2));
    rec.apply(&mut past, Edit::Rebuild).expect("rebuilt");
    assert_eq!(
        rec.edits().last().map(|e| (e.step, e.edit.clone())),
        Some((8, Edit::Rebuild))
    );
    assert_eq!(
        rec.state_at(8).expect("rebuilt").structure_hash(),
        past.structure_hash()
    );
}

#[test]
fn truncate_after_says_what_went_and_keeps_the_edits_at_the_step() {
    let (mut rec, _, _) = small_recording(30);
    let discarded = rec.truncate_after(12);
    assert_eq!(discarded.steps, 18);
    assert_eq!(discarded.edits, 0);
    assert_eq!(rec.edits().len(), 3);
    assert_eq!(rec.keyframe_steps(), vec![0, 10]);
    let discarded = rec.truncate_after(11);
    assert_eq!((discarded.steps, discarded.edits), (1, 2));
    let discarded = rec.truncate_after(0);
    assert_eq!((discarded.steps, discarded.edits), (11, 1));
    assert_eq!(rec.last_step(), 0);
    assert_eq!(rec.keyframe_steps(), vec![0]);
}

#[test]
fn the_structure_hash_follows_the_shape_and_boxes_only() {
    use aabb_debugger::tree::DynamicTree;
    use glam::Vec2;
    let mut tree: DynamicTree<Vec2, u32> = DynamicTree::new(TreeConfig::default());
    let empty = tree.structure_hash();
    let boxes = [(0.0, 0.0), (3.0, 0.0), (0.0, 3.0), (5.0, 5.0)];
    let mut proxies = Vec::new();
    for (k, &(x, y)) in boxes.iter().enumerate() {
        let b = Aabb::new(Vec2::new(x, y), Vec2::new(x + 1.0, y + 1.0));
        proxies.push(tree.create_proxy(b, Vec2::ZERO, k as u32).expect("created"));
    }
    let four = tree.structure_hash();
    assert_ne!(four, empty);
    assert_eq!(tree.clone().structure_hash(), four);
    // A move within the margin changes no box: the same hash.
    let inside = Aabb::new(Vec2::new(0.05, 0.0), Vec2::new(1.05, 1.0));
    assert!(
        !tree
            .move_proxy(proxies[0], inside, Vec2::ZERO)
            .expect("moved")
    );
    assert_eq!(tree.structure_hash(), four);
    // Out of it: the leaf is reinserted and its box changes.
    let out = Aabb::new(Vec2::new(9.0, 9.0), Vec2::new(10.0, 10.0));
    assert!(tree.move_proxy(proxies[0], out, Vec2::ZERO).expect("moved"));
    let moved = tree.structure_hash();
    assert_ne!(moved, four);
    // The same boxes inserted the same way give the same hash, whatever the user data.
    let mut again: DynamicTree<Vec2, u32> = DynamicTree::new(TreeConfig::default());
    for (k, &(x, y)) in boxes.iter().enumerate() {
        let b = Aabb::new(Vec2::new(x, y), Vec2::new(x + 1.0, y + 1.0));
        again
            .create_proxy(b, Vec2::ZERO, 100 + k as u32)
            .expect("created");
    }
    assert_eq!(again.structure_hash(), four);
    // A rebuild changes the shape.
    tree.rebuild();
    assert_ne!(tree.structure_hash(), moved);
}

/// An edit is applied, applied and stopped (its outcome, recorded as stopped), or refused
/// (an error, nothing changed, nothing recorded).
#[test]
fn an_edit_past_the_pair_limit_is_applied_and_stopped_and_a_refused_one_is_not_recorded() {
    use aabb_debugger::broadphase::BroadphaseError;
    use aabb_debugger::replay::EditOutcome;
    let scene = Scene::builtin_default();
    let (mut rec, mut sim) =
        Recording::start(&scene, "edits", BroadphaseKind::Tree, 5_000_000).expect("starts");
    for _ in 0..3 {
        rec.step(&mut sim).expect("recorded").expect("stepped");
    }
    let pairs = sim.report().candidate_pairs.len();
    assert!(pairs > 1, "the built-in scene has pairs at step 3");
    assert_eq!(
        rec.apply(&mut sim, Edit::Rebuild).expect("applied"),
        EditOutcome::Applied
    );
    let outcome = rec
        .apply(&mut sim, Edit::SetPairLimit(1))
        .expect("applied, and stopped");
    assert!(
        matches!(
            outcome.stopped(),
            Some(BroadphaseError::PairLimit { limit: 1, .. })
        ),
        "{outcome:?}"
    );
    assert_eq!(rec.edits().len(), 2);
    assert!(rec.edits()[1].stopped);
    let bad = TreeConfig {
        margin: f32::NAN,
        ..scene.tree
    };
    assert!(rec.apply(&mut sim, Edit::SetTreeSettings(bad)).is_err());
    assert_eq!(rec.edits().len(), 2, "a refused edit is not recorded");
}
