//! UI tests of the timeline (egui_kittest): the window records as it plays; dragging the
//! playhead, Left / Right / Home / End and a click on a spike show a recorded step exactly as
//! it was; an edit or playing at a past step discards the recorded future; the View menu
//! hides the timeline.

use aabb_app::prefs::ViewMode;
use aabb_app::{Command, DebuggerApp};
use aabb_model::broadphase::{BroadphaseKind, DEFAULT_PAIR_LIMIT};
use aabb_model::replay::{Edit, Metric};
use aabb_model::scene::{Scene, Simulation};
use eframe::egui;
use egui::{Event, Key, Modifiers, PointerButton, Pos2, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use crate::common::ui;

/// The built-in scene (eighty bouncing spheres: reinserts every step) after `steps` steps,
/// paused, in a 1400 x 900 window.
fn harness_after(steps: u64) -> Harness<'static, DebuggerApp> {
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        Scene::builtin_default(),
    );
    h.state_mut().prefs_mut().view_mode = ViewMode::Both;
    h.run_steps(2);
    for _ in 0..steps {
        h.state_mut().apply(Command::Step, false);
    }
    h.run_steps(2);
    assert_eq!(h.state().inspect().sim().step_index(), steps);
    assert_eq!(h.state().inspect().recording().last_step(), steps);
    h
}

/// The structural hash of the built-in scene run headless to `step` (no window, no recording).
fn fresh_hash_at(step: u64) -> u64 {
    let mut sim = Simulation::paused_at_zero(
        &Scene::builtin_default(),
        BroadphaseKind::Tree,
        DEFAULT_PAIR_LIMIT,
    )
    .expect("the built-in scene starts");
    for _ in 0..step {
        sim.step().expect("the built-in scene steps");
    }
    sim.structure_hash()
}

fn pos_of(h: &Harness<'_, DebuggerApp>, step: u64) -> Pos2 {
    h.state()
        .inspect()
        .timeline_step_pos(step, 0)
        .expect("the timeline is shown")
}

fn press(h: &mut Harness<'_, DebuggerApp>, pos: Pos2, pressed: bool) {
    h.event(Event::PointerButton {
        pos,
        button: PointerButton::Primary,
        pressed,
        modifiers: Modifiers::NONE,
    });
    h.run();
}

fn click(h: &mut Harness<'_, DebuggerApp>, pos: Pos2) {
    h.event(Event::PointerMoved(pos));
    h.run();
    press(h, pos, true);
    press(h, pos, false);
    h.run_steps(2);
}

#[test]
fn dragging_the_playhead_shows_the_recorded_step_and_arrows_step_through_it() {
    let mut h = harness_after(200);
    let (from, to) = (pos_of(&h, 200), pos_of(&h, 50));
    ui::drag(&mut h, PointerButton::Primary, from, to, 6);
    let app = h.state();
    assert_eq!(app.inspect().sim().step_index(), 50);
    assert_eq!(app.inspect().sim().structure_hash(), fresh_hash_at(50));
    assert_eq!(
        app.inspect().sim().structure_hash(),
        app.inspect().recording().steps()[50].hash
    );
    assert_eq!(app.inspect().status(), "Showing step 50 of 200 (recorded).");
    // The recording is kept whole while a past step is shown.
    assert_eq!(app.inspect().recording().last_step(), 200);
    // The step's report is that step's: its reinserted leaves are what the views highlight.
    assert_eq!(
        app.inspect().sim().report().reinserted.len() as u32,
        app.inspect().recording().steps()[50].reinserted
    );

    h.key_press(Key::ArrowLeft);
    h.run();
    assert_eq!(h.state().inspect().sim().step_index(), 49);
    assert_eq!(
        h.state().inspect().sim().structure_hash(),
        fresh_hash_at(49)
    );
    h.key_press(Key::ArrowRight);
    h.run();
    assert_eq!(h.state().inspect().sim().step_index(), 50);
    assert_eq!(h.state().inspect().recording().last_step(), 200);

    h.key_press(Key::Home);
    h.run();
    assert_eq!(h.state().inspect().sim().step_index(), 0);
    h.key_press(Key::End);
    h.run();
    assert_eq!(h.state().inspect().sim().step_index(), 200);
    // At the last recorded step Right steps the simulation, recorded.
    h.key_press(Key::ArrowRight);
    h.run();
    assert_eq!(h.state().inspect().sim().step_index(), 201);
    assert_eq!(h.state().inspect().recording().last_step(), 201);
    assert_eq!(
        h.state().inspect().sim().structure_hash(),
        fresh_hash_at(201)
    );
}

#[test]
fn clicking_near_a_spike_moves_the_playhead_onto_it() {
    let mut h = harness_after(200);
    let spike = h
        .state()
        .inspect()
        .recording()
        .worst_step(Metric::Reinserts);
    let steps = h.state().inspect().recording().steps();
    let peak = steps[spike as usize].reinserted;
    // A real spike: higher than both neighbours.
    assert!(spike > 0 && spike < 200, "spike at {spike}");
    assert!(peak > steps[spike as usize - 1].reinserted);
    assert!(peak > steps[spike as usize + 1].reinserted);
    let at = pos_of(&h, spike);
    let next = pos_of(&h, spike + 1);
    // Three points right of the spike: nearer the next step than the spike (steps are under
    // six points apart here), yet the click lands on the spike.
    assert!(next.x - at.x < 6.0, "{at:?} {next:?}");
    click(&mut h, at + Vec2::new(3.0, 0.0));
    assert_eq!(h.state().inspect().sim().step_index(), spike);
    assert_eq!(
        h.state().inspect().sim().structure_hash(),
        fresh_hash_at(spike)
    );
}

#[test]
fn an_edit_at_a_past_step_discards_the_recorded_future() {
    let mut h = harness_after(200);
    h.state_mut().push_command(Command::SeekTo(50));
    h.run();
    assert_eq!(h.state().inspect().sim().step_index(), 50);
    h.state_mut().push_command(Command::Rebuild);
    h.run();
    let app = h.state();
    assert!(
        app.inspect()
            .status()
            .ends_with("Recorded future after step 50 discarded (150 steps, 0 edits)."),
        "{}",
        app.inspect().status()
    );
    assert_eq!(app.inspect().recording().last_step(), 50);
    let edits = app.inspect().recording().edits();
    assert_eq!(edits.len(), 1);
    assert_eq!((edits[0].step, &edits[0].edit), (50, &Edit::Rebuild));
    // Recording goes on from there.
    for _ in 0..3 {
        h.key_press(Key::ArrowRight);
        h.run();
    }
    let app = h.state();
    assert_eq!(app.inspect().sim().step_index(), 53);
    assert_eq!(app.inspect().recording().last_step(), 53);
    let rebuilt = app
        .inspect()
        .recording()
        .state_at(53)
        .expect("step 53 rebuilds");
    assert_eq!(
        rebuilt.structure_hash(),
        app.inspect().sim().structure_hash()
    );
}

/// A slider's drag at a past step sends a change a frame: the first discards the recorded
/// future, and the status line keeps saying so for the rest of the drag (each change rewrites
/// it); a later change of another kind, or of the same after a pause, does not repeat it.
#[test]
fn a_drag_at_a_past_step_keeps_saying_the_future_was_discarded() {
    let mut h = harness_after(120);
    h.state_mut().push_command(Command::SeekTo(40));
    h.run();
    let note = "Recorded future after step 40 discarded (80 steps, 0 edits).";
    let mut tree = h.state().inspect().document().tree;
    for k in 1..=4 {
        tree.margin = 0.1 + 0.05 * k as f32;
        h.state_mut().push_command(Command::SetTreeSettings(tree));
        h.run_steps(1);
        let status = h.state().inspect().status().to_owned();
        assert!(
            status.starts_with(&format!("Margin {:.3}", tree.margin)) && status.ends_with(note),
            "change {k}: {status}"
        );
    }
    assert_eq!(h.state().inspect().recording().last_step(), 40);
    // Another kind of command drops the note.
    h.state_mut().push_command(Command::Rebuild);
    h.run_steps(1);
    assert!(
        !h.state().inspect().status().contains("discarded"),
        "{}",
        h.state().inspect().status()
    );
    // The same kind, frames later (a new drag, at the last step): no note.
    h.run_steps(3);
    tree.margin = 0.5;
    h.state_mut().push_command(Command::SetTreeSettings(tree));
    h.run_steps(1);
    assert!(
        !h.state().inspect().status().contains("discarded"),
        "{}",
        h.state().inspect().status()
    );
}

#[test]
fn playing_from_a_past_step_discards_the_recorded_future() {
    let mut h = harness_after(100);
    h.state_mut().push_command(Command::SeekTo(30));
    h.run();
    h.state_mut().push_command(Command::SetPlaying(true));
    h.run_steps(3);
    h.state_mut().push_command(Command::SetPlaying(false));
    h.run();
    let app = h.state();
    let at = app.inspect().sim().step_index();
    assert!(at > 30 && at < 100, "at {at}");
    assert_eq!(
        app.inspect().status(),
        "Recorded future after step 30 discarded (70 steps, 0 edits)."
    );
    assert_eq!(app.inspect().recording().last_step(), at);
    assert_eq!(app.inspect().sim().structure_hash(), fresh_hash_at(at));
}

#[test]
fn the_view_menu_hides_and_shows_the_timeline() {
    let mut h = harness_after(5);
    assert!(h.state().inspect().prefs().show_timeline);
    assert!(h.state().inspect().timeline_step_pos(0, 0).is_some());
    for shown in [false, true] {
        h.get_by_label("View").click();
        h.run();
        h.get_by_label("Timeline panel").click();
        h.run_steps(2);
        assert_eq!(h.state().inspect().prefs().show_timeline, shown);
        assert_eq!(h.state().inspect().timeline_step_pos(0, 0).is_some(), shown);
        h.key_press(Key::Escape);
        h.run();
    }
}

/// Runs frames until the recording being opened (on its worker thread) is shown (bounded).
fn run_until_opened(h: &mut Harness<'_, DebuggerApp>) {
    // The first frame applies the queued Open, which starts the worker.
    h.step();
    let start = std::time::Instant::now();
    while h.state().inspect().opening_progress().is_some() {
        assert!(
            start.elapsed().as_secs() < 120,
            "the recording did not open"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.step();
    }
    h.run_steps(2);
}

#[test]
fn a_recording_file_opens_at_its_last_step_with_the_timeline_filled() {
    use aabb_model::replay::{Recording, file};
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("bounce.rec");
    let (mut rec, mut sim) = Recording::start(
        &Scene::builtin_default(),
        "default.ron",
        BroadphaseKind::Tree,
        DEFAULT_PAIR_LIMIT,
    )
    .expect("the built-in scene starts");
    for _ in 0..40 {
        rec.step(&mut sim)
            .expect("recorded")
            .expect("the built-in scene steps");
    }
    file::save(rec.history(), &path).expect("the recording is written");

    let mut h = harness_after(3);
    h.state_mut().push_command(Command::Open(path.clone()));
    run_until_opened(&mut h);
    let app = h.state();
    assert_eq!(
        app.inspect().status(),
        format!(
            "Opened the recording {} (41 steps); showing its last step, 40.",
            path.display()
        )
    );
    assert_eq!(app.inspect().sim().step_index(), 40);
    assert_eq!(app.inspect().recording().last_step(), 40);
    assert_eq!(app.inspect().sim().structure_hash(), fresh_hash_at(40));
    assert!(!app.inspect().is_playing());
    assert!(app.inspect().timeline_step_pos(40, 0).is_some());
    // The timeline goes back into it.
    h.key_press(Key::Home);
    h.run();
    assert_eq!(h.state().inspect().sim().step_index(), 0);

    // A damaged recording is refused with the file's message; the open one stays.
    let bytes = std::fs::read(&path).expect("read back");
    let broken = dir.path().join("broken.rec");
    std::fs::write(&broken, &bytes[..30]).expect("written");
    h.state_mut().push_command(Command::Open(broken.clone()));
    run_until_opened(&mut h);
    let app = h.state();
    assert_eq!(
        app.inspect().status(),
        format!(
            "Could not open the recording {}; the open scene is unchanged.",
            broken.display()
        )
    );
    assert!(
        app.inspect()
            .error()
            .is_some_and(|e| e.starts_with(&format!("{}: ", broken.display()))),
        "{:?}",
        app.inspect().error()
    );
    assert_eq!(app.inspect().recording().last_step(), 40);
}

#[test]
fn a_full_recording_pauses_at_its_last_step_and_a_bigger_budget_goes_on() {
    use aabb_app::prefs::PrefChange;
    let mut h = harness_after(20);
    h.state_mut()
        .push_command(Command::SetPref(PrefChange::RecordingBudget(1000)));
    h.run();
    assert_eq!(h.state().inspect().recording().budget_bytes(), 1000);
    h.key_press(Key::ArrowRight);
    h.run();
    let app = h.state();
    assert!(
        app.inspect()
            .status()
            .starts_with("Paused: the recording is full: ")
            && app
                .inspect()
                .status()
                .ends_with("step 21 was not recorded."),
        "{}",
        app.inspect().status()
    );
    // The step the recording refused is undone: the window stays at the last recorded step.
    assert_eq!(app.inspect().sim().step_index(), 20);
    assert_eq!(app.inspect().recording().last_step(), 20);
    assert_eq!(app.inspect().sim().structure_hash(), fresh_hash_at(20));
    assert!(!app.inspect().is_playing());

    let default = aabb_model::replay::DEFAULT_BUDGET_BYTES as u64;
    h.state_mut()
        .push_command(Command::SetPref(PrefChange::RecordingBudget(default)));
    h.run();
    h.key_press(Key::ArrowRight);
    h.run();
    assert_eq!(h.state().inspect().sim().step_index(), 21);
    assert_eq!(h.state().inspect().recording().last_step(), 21);
    assert_eq!(
        h.state().inspect().sim().structure_hash(),
        fresh_hash_at(21)
    );
}

#[test]
fn at_a_recorded_step_the_controls_show_the_settings_in_force_then() {
    let mut h = harness_after(10);
    let before = h.state().inspect().document().tree;
    let mut wider = before;
    wider.margin = 0.9;
    h.state_mut().push_command(Command::SetTreeSettings(wider));
    h.state_mut()
        .push_command(Command::SetBroadphase(BroadphaseKind::Sap));
    h.run();
    for _ in 0..5 {
        h.state_mut().apply(Command::Step, false);
    }
    h.state_mut().push_command(Command::SeekTo(4));
    h.run();
    assert_eq!(h.state().inspect().document().tree, before);
    assert_eq!(
        h.state().inspect().sim().broadphase_kind(),
        BroadphaseKind::Tree
    );
    assert_eq!(h.state().inspect().sim().structure_hash(), fresh_hash_at(4));
    h.key_press(Key::End);
    h.run();
    assert_eq!(h.state().inspect().sim().step_index(), 15);
    assert_eq!(h.state().inspect().document().tree, wider);
    assert_eq!(
        h.state().inspect().sim().broadphase_kind(),
        BroadphaseKind::Sap
    );
    let edits: Vec<(u64, Edit)> = h
        .state()
        .inspect()
        .recording()
        .edits()
        .iter()
        .map(|e| (e.step, e.edit.clone()))
        .collect();
    assert_eq!(
        edits,
        vec![
            (10, Edit::SetTreeSettings(wider)),
            (10, Edit::SetBroadphase(BroadphaseKind::Sap)),
        ]
    );
}

#[test]
fn the_worst_step_menu_jumps_to_the_greatest_value_of_a_metric() {
    let mut h = harness_after(120);
    let worst = h
        .state()
        .inspect()
        .recording()
        .worst_step(Metric::CandidatePairs);
    let most = h.state().inspect().recording().steps()[worst as usize].candidate_pairs;
    assert_ne!(worst, 120);
    h.get_by_label("Worst step").click();
    h.run();
    h.get_by_label(&format!("most candidate pairs: step {worst} ({most})"))
        .click();
    h.run_steps(2);
    assert_eq!(h.state().inspect().sim().step_index(), worst);
    assert_eq!(
        h.state().inspect().sim().report().candidate_pairs.len(),
        most as usize
    );
    assert_eq!(
        h.state().inspect().sim().structure_hash(),
        fresh_hash_at(worst)
    );
}

/// Reset (the R key) and Apply of the generator start a new run; Ctrl+Z, before the new run
/// steps, brings back the one they replaced, recording and all, where it was shown; once the
/// new run steps, Undo no longer reaches it (it undoes settings again).
#[test]
fn undo_brings_back_the_run_a_reset_or_an_apply_replaced() {
    let mut h = harness_after(120);
    h.state_mut().push_command(Command::SeekTo(90));
    h.run();
    let hash = h.state().inspect().sim().structure_hash();
    h.key_press(Key::R);
    h.run();
    let app = h.state();
    assert_eq!(
        (
            app.inspect().sim().step_index(),
            app.inspect().recording().last_step()
        ),
        (0, 0)
    );
    assert!(
        app.inspect()
            .status()
            .ends_with("Ctrl+Z brings back the run before it (120 recorded steps)."),
        "{}",
        app.inspect().status()
    );
    // R again before the new run moves: Undo still reaches the long run.
    h.key_press(Key::R);
    h.run();
    assert!(
        h.state()
            .inspect()
            .status()
            .ends_with("Ctrl+Z brings back the run before it (120 recorded steps)."),
        "{}",
        h.state().inspect().status()
    );
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run();
    let app = h.state();
    assert_eq!(
        app.inspect().status(),
        "Undone: Reset. Back at step 90 of the run (120 recorded steps)."
    );
    assert_eq!(
        (
            app.inspect().sim().step_index(),
            app.inspect().recording().last_step()
        ),
        (90, 120)
    );
    assert_eq!(app.inspect().sim().structure_hash(), hash);
    assert_eq!(
        app.inspect()
            .recording()
            .state_at(120)
            .map(|s| s.step_index())
            .ok(),
        Some(120)
    );

    // Apply of the generator: the document's generator comes back too.
    let before = h
        .state()
        .inspect()
        .document()
        .generate
        .expect("a generator");
    let mut more = before;
    more.count += 10;
    h.state_mut()
        .push_command(Command::SetGenerator(Some(more)));
    h.run();
    assert_eq!(h.state().inspect().document().generate, Some(more));
    assert_eq!(h.state().inspect().recording().last_step(), 0);
    h.state_mut().push_command(Command::Undo);
    h.run();
    let app = h.state();
    assert!(
        app.inspect().status().starts_with("Undone: Apply."),
        "{}",
        app.inspect().status()
    );
    assert_eq!(app.inspect().document().generate, Some(before));
    assert_eq!(app.inspect().recording().last_step(), 120);
    assert!(!app.inspect().is_dirty());

    // Once the new run steps, the old one is gone for good.
    h.key_press(Key::R);
    h.run();
    h.state_mut().apply(Command::Step, false);
    h.run();
    h.state_mut().push_command(Command::Undo);
    h.run();
    assert_eq!(h.state().inspect().status(), "Nothing to undo.");
    assert_eq!(h.state().inspect().recording().last_step(), 1);
}
