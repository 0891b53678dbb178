//! The session's rules, headless: undo and redo, seek, editing in the past, restarts, refused
//! edits, a slider's drag as one edit, each checked against the recording's own replay.

use super::*;
use crate::replay::StepRecord;
use crate::scene::Sphere;

fn session() -> Session {
    Session::of_scene(Scene::builtin_default(), None, Start::default()).expect("starts")
}

fn steps(s: &mut Session, n: u64) {
    for _ in 0..n {
        let stepped = s.step().expect("steps");
        stepped.outcome.expect("no pair limit");
    }
}

fn with_margin(s: &Session, margin: f32) -> Edit {
    Edit::SetTreeSettings(TreeConfig {
        margin,
        ..s.settings()
    })
}

/// `a` and `b` are the same simulation: step, settings, structure, pairs and every fat box.
fn assert_same(a: &Sim, b: &Sim) {
    assert_eq!(a.step_index(), b.step_index(), "step");
    assert_eq!(a.tree_settings(), b.tree_settings(), "settings");
    assert_eq!(a.broadphase_kind(), b.broadphase_kind(), "broad phase");
    assert_eq!(a.structure_hash(), b.structure_hash(), "structure");
    assert_eq!(
        StepRecord::of(a).difference(&StepRecord::of(b)),
        None,
        "step record"
    );
    assert_eq!(
        a.report().candidate_pairs,
        b.report().candidate_pairs,
        "pairs"
    );
    let ids: Vec<u32> = a.boxes().iter().map(|b| b.id).collect();
    assert_eq!(ids, b.boxes().iter().map(|b| b.id).collect::<Vec<_>>());
    for id in ids {
        assert_eq!(
            a.broadphase().fat_aabb(id),
            b.broadphase().fat_aabb(id),
            "fat box of {id}"
        );
    }
}

/// The session's simulation is what its recording replays to, at the step shown.
fn assert_replays(s: &Session) {
    let replayed = s
        .recording()
        .state_at(s.sim().step_index())
        .expect("replays");
    assert_same(s.sim(), &replayed);
}

#[test]
fn undo_and_redo_take_the_settings_back_and_forth_through_the_log() {
    let mut s = session();
    steps(&mut s, 3);
    let first = s.settings();
    s.edit(with_margin(&s, 0.5), 10).expect("accepted");
    steps(&mut s, 2);
    let second = s.settings();
    s.edit(with_margin(&s, 1.25), 20).expect("accepted");
    assert_eq!(s.undo_len(), 2);
    assert_eq!(s.recording().edits().len(), 2);

    let undone = s.undo().expect("undone");
    assert!(matches!(undone, Undone::Settings { to, .. } if to == second));
    assert_eq!(s.settings(), second);
    assert_eq!(s.doc().tree, second, "the document's copy follows");
    assert_eq!((s.undo_len(), s.redo_len()), (1, 1));
    let undone = s.undo().expect("undone");
    assert!(matches!(undone, Undone::Settings { to, .. } if to == first));
    assert_eq!(s.undo().expect("nothing"), Undone::Nothing);
    assert_eq!(s.redo_len(), 2);

    let redone = s.redo().expect("redone");
    assert!(matches!(redone, Undone::Settings { to, .. } if to == second));
    assert_eq!(s.settings(), second);
    // Each undo and redo is an edit of the log, so the recording replays to what is shown.
    assert_eq!(s.recording().edits().len(), 5);
    assert_replays(&s);
    // A new change clears what Redo would make again.
    s.edit(with_margin(&s, 2.0), 30).expect("accepted");
    assert_eq!(s.redo_len(), 0);
    assert_eq!(s.redo().expect("nothing"), Undone::Nothing);
}

#[test]
fn a_drag_of_one_number_is_one_edit_and_one_undo_step_from_any_step() {
    for at in [0, 4] {
        let mut s = session();
        steps(&mut s, at);
        let before = s.settings();
        let rev = s.rev();
        let values = [0.15, 0.4, 0.9, 0.35, 0.6];
        for (frame, &m) in (100..).zip(&values) {
            let edited = s.edit(with_margin(&s, m), frame).expect("accepted");
            assert_eq!(edited.joined, frame > 100, "frame {frame}");
            assert_eq!(s.settings().margin, m);
        }
        assert_eq!(s.recording().edits().len(), 1, "one log entry");
        assert_eq!(s.undo_len(), 1, "one undo step");
        assert!(s.rev() > rev);
        // What the window shows is the one edit applied to the simulation before the drag.
        assert_replays(&s);
        let mut fresh = session();
        steps(&mut fresh, at);
        fresh.edit(with_margin(&fresh, 0.6), 0).expect("accepted");
        assert_same(s.sim(), fresh.sim());
        steps(&mut s, 3);
        steps(&mut fresh, 3);
        assert_same(s.sim(), fresh.sim());
        assert_replays(&s);
        s.undo().expect("undone");
        assert_eq!(s.settings(), before);
    }
}

#[test]
fn a_drag_ends_with_a_gap_of_frames_another_number_or_a_step() {
    let mut s = session();
    s.edit(with_margin(&s, 0.2), 1).expect("accepted");
    // Two frames later: a new drag.
    assert!(!s.edit(with_margin(&s, 0.3), 3).expect("accepted").joined);
    // Another number in the next frame: its own step.
    let look = Edit::SetTreeSettings(TreeConfig {
        velocity_lookahead: 0.5,
        ..s.settings()
    });
    assert!(!s.edit(look, 4).expect("accepted").joined);
    steps(&mut s, 1);
    let look = Edit::SetTreeSettings(TreeConfig {
        velocity_lookahead: 0.25,
        ..s.settings()
    });
    assert!(!s.edit(look, 5).expect("accepted").joined, "a step between");
    assert_eq!(s.recording().edits().len(), 4);
    assert_eq!(s.undo_len(), 4);
    assert_replays(&s);
}

#[test]
fn seek_shows_a_recorded_step_exactly_and_keeps_the_recording_whole() {
    let mut s = session();
    steps(&mut s, 4);
    s.edit(with_margin(&s, 0.8), 0).expect("accepted");
    steps(&mut s, 6);
    let last = s.recording().last_step();
    assert_eq!(last, 10);
    for step in [7, 2, 4, 10, 0] {
        assert!(s.seek(step).expect("seeks"));
        assert_eq!(s.sim().step_index(), step);
        assert_eq!(s.recording().last_step(), last);
        assert_eq!(s.at_past_step(), step < last);
        let mut fresh = session();
        steps(&mut fresh, step.min(4));
        if step >= 4 {
            fresh.edit(with_margin(&fresh, 0.8), 0).expect("accepted");
            steps(&mut fresh, step - 4);
        }
        assert_same(s.sim(), fresh.sim());
        assert_eq!(
            s.doc().tree,
            s.settings(),
            "the document follows the step's settings"
        );
    }
    assert!(!s.seek(0).expect("seeks"), "shown already");
    assert!(s.seek(99).expect("clamped"));
    assert_eq!(s.sim().step_index(), last);
}

#[test]
fn an_edit_or_a_step_in_the_past_discards_the_future() {
    let mut s = session();
    steps(&mut s, 5);
    s.edit(with_margin(&s, 0.3), 0).expect("accepted");
    steps(&mut s, 5);
    s.seek(3).expect("seeks");
    let edited = s.edit(with_margin(&s, 0.7), 1).expect("accepted");
    let (at, gone) = edited.discarded.expect("discarded");
    assert_eq!((at, gone.steps, gone.edits), (3, 7, 1));
    assert_eq!(s.recording().last_step(), 3);
    assert_eq!(s.recording().edits().len(), 1);
    assert!(!s.at_past_step());
    assert_replays(&s);

    steps(&mut s, 4);
    s.seek(5).expect("seeks");
    let stepped = s.step().expect("steps");
    let (at, gone) = stepped.discarded.expect("discarded");
    assert_eq!((at, gone.steps, gone.edits), (5, 2, 0));
    assert_eq!(s.recording().last_step(), 6);
    assert_replays(&s);
}

#[test]
fn a_refused_edit_changes_nothing_not_even_the_future() {
    let mut s = session();
    steps(&mut s, 6);
    s.seek(2).expect("seeks");
    let (rev, edits, last) = (
        s.rev(),
        s.recording().edits().len(),
        s.recording().last_step(),
    );
    let hash = s.sim().structure_hash();
    let settings = s.settings();
    for bad in [f32::NAN, -1.0, f32::INFINITY] {
        assert!(s.edit(with_margin(&s, bad), 0).is_err(), "margin {bad}");
    }
    assert!(s.edit(Edit::RemoveSphere { id: 99_999 }, 0).is_err());
    assert_eq!(s.rev(), rev);
    assert_eq!(s.recording().edits().len(), edits);
    assert_eq!(s.recording().last_step(), last, "the future is kept");
    assert_eq!(s.sim().structure_hash(), hash);
    assert_eq!(s.settings(), settings);
    assert_eq!(s.undo_len(), 0);
    assert!(!s.dirty());
}

#[test]
fn a_refused_value_in_a_drag_keeps_the_drag_and_its_one_entry() {
    let mut s = session();
    s.edit(with_margin(&s, 0.2), 1).expect("accepted");
    assert!(s.edit(with_margin(&s, -3.0), 2).is_err());
    assert_eq!(s.settings().margin, 0.2);
    assert!(s.edit(with_margin(&s, 0.5), 2).expect("accepted").joined);
    assert_eq!(s.recording().edits().len(), 1);
    assert_replays(&s);
}

#[test]
fn reset_keeps_the_run_for_undo_until_the_new_run_moves() {
    let mut s = session();
    s.edit(with_margin(&s, 0.45), 0).expect("accepted");
    steps(&mut s, 5);
    let id = s.id();
    let hash = s.sim().structure_hash();
    assert_eq!(
        s.reset(crate::replay::DEFAULT_BUDGET_BYTES)
            .expect("resets"),
        5
    );
    assert_eq!(s.sim().step_index(), 0);
    assert_eq!(s.settings().margin, 0.45, "the settings in force are kept");
    assert_eq!(s.recording().last_step(), 0);
    assert_eq!(s.id(), id, "the same spheres: results still apply");
    // R twice: the run before the first is kept.
    assert_eq!(
        s.reset(crate::replay::DEFAULT_BUDGET_BYTES)
            .expect("resets"),
        5
    );
    assert_eq!(s.undo().expect("undone"), Undone::Restart { what: "Reset" });
    assert_eq!(s.sim().step_index(), 5);
    assert_eq!(s.sim().structure_hash(), hash);
    assert_eq!(s.recording().last_step(), 5);
    assert_replays(&s);

    s.reset(crate::replay::DEFAULT_BUDGET_BYTES)
        .expect("resets");
    steps(&mut s, 1);
    assert_eq!(s.restart_undo_steps(), None, "the new run went on");
    assert!(matches!(
        s.undo().expect("settings"),
        Undone::Settings { .. }
    ));
}

#[test]
fn apply_of_the_generator_is_a_new_run_with_a_new_id_and_undo_brings_the_old_back() {
    let mut s = session();
    steps(&mut s, 3);
    s.edit(with_margin(&s, 0.37), 0).expect("accepted");
    assert_eq!(s.undo_len(), 1);
    let (id, count) = (s.id(), s.sim().live_count());
    let generate = crate::scene::Generate {
        count: 40,
        radius: (0.5, 1.0),
        speed: (0.5, 2.0),
        seed: 7,
        density: None,
    };
    let (_, steps_back) = s
        .apply_generator(Some(generate), "test", crate::replay::DEFAULT_BUDGET_BYTES)
        .expect("applied");
    assert_eq!(steps_back, 3);
    assert_ne!(s.id(), id);
    let mut doc = Scene::builtin_default();
    doc.generate = Some(generate);
    let fresh = Session::of_scene(doc, None, Start::default()).expect("starts");
    assert_eq!(s.sim().live_count(), fresh.sim().live_count());
    assert_ne!(s.sim().live_count(), count);
    assert_eq!(s.undo_len(), 0, "the settings' steps were the old spheres'");
    assert!(s.dirty());
    assert_eq!(s.undo().expect("undone"), Undone::Restart { what: "Apply" });
    assert_eq!((s.id(), s.sim().live_count()), (id, count));
    assert_eq!(s.undo_len(), 1);
    // A refused generator changes nothing.
    let bad = crate::scene::Generate {
        radius: (2.0, f32::NAN),
        ..generate
    };
    let rev = s.rev();
    assert!(s.apply_generator(Some(bad), "test", 1 << 30).is_err());
    assert_eq!((s.rev(), s.id()), (rev, id));
}

#[test]
fn sphere_edits_are_recorded_and_replayed_and_make_the_scene_unsaved() {
    let mut s = session();
    steps(&mut s, 2);
    let id = s.sim().spheres()[0].sphere.id;
    s.edit(
        Edit::MoveSphere {
            id,
            center: Vec3::new(10.0, 10.0, 0.0),
        },
        0,
    )
    .expect("moved");
    assert!(s.dirty());
    let added = Sphere {
        id: 9_000,
        label: None,
        center: Vec3::new(20.0, 12.0, 0.0),
        radius: 0.5,
        velocity: Vec3::ZERO,
        appear_at: s.sim().step_index(),
        disappear_at: None,
    };
    s.edit(Edit::AddSphere(added), 0).expect("added");
    steps(&mut s, 2);
    s.edit(Edit::RemoveSphere { id }, 0).expect("removed");
    s.edit(Edit::SetBroadphase(BroadphaseKind::Sap), 0)
        .expect("sap");
    steps(&mut s, 2);
    assert_eq!(s.recording().edits().len(), 4);
    assert_replays(&s);
    for step in 0..=s.recording().last_step() {
        s.seek(step).expect("seeks");
        assert_replays(&s);
    }
}

#[test]
fn a_full_recording_refuses_the_step_and_keeps_the_last() {
    let mut s = session();
    steps(&mut s, 2);
    s.set_budget_bytes(1);
    let last = s.recording().last_step();
    let hash = s.sim().structure_hash();
    assert!(matches!(
        s.step(),
        Err(NotStepped::Recording(ReplayError::Full { .. }))
    ));
    assert_eq!(s.sim().step_index(), last);
    assert_eq!(s.sim().structure_hash(), hash);
}

#[test]
fn a_trace_session_ends_at_its_last_step_and_is_never_unsaved() {
    use crate::trace::{TraceBox, TraceBuilder, TraceHeader, TraceLimits};
    let header = TraceHeader {
        dimensions: 2,
        dt: 1.0 / 60.0,
    };
    let mut builder =
        TraceBuilder::new("three", header, Vec::new(), TraceLimits::default()).expect("a trace");
    let boxed = |id, x0: f32| TraceBox {
        id,
        aabb: crate::tree::Aabb::new(Vec3::new(x0, 0.0, 0.0), Vec3::new(x0 + 1.0, 1.0, 0.0)),
    };
    for k in 0..3 {
        builder
            .push_step(vec![boxed(1, k as f32), boxed(2, 2.0)])
            .expect("a step");
    }
    let trace = builder.finish().expect("finished");
    let mut s = Session::of_trace(Arc::new(trace), None, Start::default()).expect("starts");
    assert_eq!(s.doc().name, "three");
    steps(&mut s, 2);
    assert!(matches!(s.step(), Err(NotStepped::AtEnd(2))));
    s.edit(with_margin(&s, 0.5), 0)
        .expect("settings apply to a trace");
    assert!(!s.dirty(), "a trace is input, never saved");
    assert!(s.edit(Edit::RemoveSphere { id: 1 }, 0).is_err());
    assert_replays(&s);
    s.seek(0).expect("seeks");
    assert_replays(&s);
}

#[test]
fn ids_are_new_for_each_session() {
    let (a, b) = (session(), session());
    assert_ne!(a.id(), b.id());
}

/// A trace builder of 2D boxes drifting right, step by step (a live engine's, as received).
fn drifting(name: &str) -> crate::trace::TraceBuilder {
    use crate::trace::{TraceBox, TraceBuilder, TraceHeader, TraceLimits};
    let header = TraceHeader {
        dimensions: 2,
        dt: 1.0 / 60.0,
    };
    let ground = TraceBox {
        id: 1_000,
        aabb: crate::tree::Aabb::new(Vec3::new(-50.0, -2.0, 0.0), Vec3::new(50.0, 0.0, 0.0)),
    };
    TraceBuilder::new(name, header, vec![ground], TraceLimits::default()).expect("a trace")
}

fn push_drift(builder: &mut crate::trace::TraceBuilder, k: usize) {
    use crate::trace::TraceBox;
    let boxes = (0..30u32)
        .map(|id| {
            let x = (id % 10) as f32 * 1.5 + k as f32 * 0.05 * (1 + id % 3) as f32;
            let y = (id / 10) as f32 * 1.5 + 0.2;
            TraceBox {
                id,
                aabb: crate::tree::Aabb::new(
                    Vec3::new(x, y, 0.0),
                    Vec3::new(x + 1.0, y + 1.0, 0.0),
                ),
            }
        })
        .collect();
    builder.push_step(boxes).expect("a step");
}

#[test]
fn a_live_session_grows_steps_on_and_equals_the_whole_trace_replayed() {
    let mut builder = drifting("live");
    for k in 0..3 {
        push_drift(&mut builder, k);
    }
    let first = Arc::new(builder.snapshot().expect("three steps"));
    let mut live = Session::of_trace(Arc::clone(&first), None, Start::default()).expect("starts");
    assert_eq!(
        live.catch_up(std::time::Duration::from_secs(10))
            .expect("steps"),
        2
    );
    // More steps arrive, in three handovers; one in the middle while the user looks back.
    for (round, more) in [4, 1, 7].into_iter().enumerate() {
        let n = builder.step_count();
        for k in n..n + more {
            push_drift(&mut builder, k);
        }
        let longer = Arc::new(builder.snapshot().expect("steps"));
        assert!(first.is_prefix_of(&longer));
        if round == 1 {
            live.seek(1).expect("seeks");
            let rev = live.rev();
            live.grow(&longer).expect("grows");
            assert!(live.rev() > rev);
            assert_eq!(live.sim().step_index(), 1, "the step shown stays");
            assert_eq!(
                live.catch_up(std::time::Duration::from_secs(10))
                    .expect("none"),
                0
            );
            assert_replays(&live);
            live.seek(live.recording().last_step()).expect("follows");
        } else {
            live.grow(&longer).expect("grows");
        }
        live.catch_up(std::time::Duration::from_secs(10))
            .expect("steps");
        assert_eq!(live.sim().step_index() as usize, longer.step_count() - 1);
    }
    let whole = Arc::new(builder.finish().expect("finished"));
    let mut replayed =
        Session::of_trace(Arc::clone(&whole), None, Start::default()).expect("starts");
    replayed
        .catch_up(std::time::Duration::from_secs(10))
        .expect("steps");
    assert_same(live.sim(), replayed.sim());
    assert_eq!(
        live.doc().world,
        replayed.doc().world,
        "the world holds every step"
    );
    for step in 0..=live.recording().last_step() {
        live.seek(step).expect("seeks");
        replayed.seek(step).expect("seeks");
        assert_same(live.sim(), replayed.sim());
    }
}

#[test]
fn a_trace_that_is_not_the_sessions_grown_is_refused_and_changes_nothing() {
    let mut a = drifting("a");
    let mut b = drifting("a");
    for k in 0..3 {
        push_drift(&mut a, k);
        push_drift(&mut b, k + 1);
    }
    let mut live = Session::of_trace(Arc::new(a.snapshot().expect("a")), None, Start::default())
        .expect("starts");
    push_drift(&mut b, 9);
    let rev = live.rev();
    assert!(live.grow(&Arc::new(b.finish().expect("b"))).is_err());
    let mut other = drifting("another name");
    push_drift(&mut other, 0);
    assert!(
        live.grow(&Arc::new(other.finish().expect("other")))
            .is_err()
    );
    assert_eq!(live.rev(), rev);
    assert_eq!(
        live.catch_up(std::time::Duration::from_secs(10))
            .expect("steps"),
        2
    );
    let mut scene = session();
    assert!(
        scene.grow(&Arc::new(a.finish().expect("a"))).is_err(),
        "a scene does not grow"
    );
}
