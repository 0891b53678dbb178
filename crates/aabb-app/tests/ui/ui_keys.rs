//! The step and seek keys (egui_kittest): every press counts, however many a slow frame
//! gathers. Right and N step (or move the playhead on, at a past step), Left steps back, Home
//! and End seek; in a scene, at a past step, on a trace, and in compare mode (where B follows
//! A press for press).

use aabb_app::{Command, DebuggerApp};
use aabb_model::broadphase::BroadphaseKind;
use aabb_model::compare::Side;
use aabb_model::scene::Scene;
use eframe::egui::{Event, Key, Modifiers, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use crate::common::ui;

fn harness() -> Harness<'static, DebuggerApp> {
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    h
}

/// `count` presses of `key` (each down and up, as a keyboard sends them) gathered in one
/// frame, as a slow frame gathers them; then that frame.
fn presses_in_one_frame(h: &mut Harness<'_, DebuggerApp>, key: Key, count: usize) {
    for _ in 0..count {
        for pressed in [true, false] {
            h.event(Event::Key {
                key,
                physical_key: None,
                pressed,
                repeat: false,
                modifiers: Modifiers::NONE,
            });
        }
    }
    h.run_steps(1);
}

fn at(h: &Harness<'_, DebuggerApp>) -> u64 {
    h.state().inspect().sim().step_index()
}

#[test]
fn ten_presses_in_one_slow_frame_are_ten_steps_forward_back_and_on() {
    let mut h = harness();
    presses_in_one_frame(&mut h, Key::ArrowRight, 10);
    assert_eq!(at(&h), 10);
    assert_eq!(h.state().inspect().recording().last_step(), 10);
    presses_in_one_frame(&mut h, Key::N, 7);
    assert_eq!(at(&h), 17);
    presses_in_one_frame(&mut h, Key::ArrowLeft, 9);
    assert_eq!(at(&h), 8);
    // At a past step a forward press moves the playhead on, one recorded step a press.
    presses_in_one_frame(&mut h, Key::N, 4);
    assert_eq!(at(&h), 12);
    assert_eq!(h.state().inspect().recording().last_step(), 17);
    presses_in_one_frame(&mut h, Key::ArrowRight, 3);
    assert_eq!(at(&h), 15);
    presses_in_one_frame(&mut h, Key::Home, 2);
    assert_eq!(at(&h), 0);
    presses_in_one_frame(&mut h, Key::End, 2);
    assert_eq!(at(&h), 17);
    // Left at step 0 stops there.
    presses_in_one_frame(&mut h, Key::Home, 1);
    presses_in_one_frame(&mut h, Key::ArrowLeft, 3);
    assert_eq!(at(&h), 0);
}

#[test]
fn presses_of_different_keys_in_one_frame_are_taken_in_the_order_pressed() {
    let mut h = harness();
    // Right, Right, Left, N, Left, Left in one frame: 2 - 1 + 1 - 2 = step 0, having made 2.
    for key in [
        Key::ArrowRight,
        Key::ArrowRight,
        Key::ArrowLeft,
        Key::N,
        Key::ArrowLeft,
        Key::ArrowLeft,
    ] {
        for pressed in [true, false] {
            h.event(Event::Key {
                key,
                physical_key: None,
                pressed,
                repeat: false,
                modifiers: Modifiers::NONE,
            });
        }
    }
    h.run_steps(1);
    assert_eq!(at(&h), 0);
    assert_eq!(h.state().inspect().recording().last_step(), 2);
}

#[test]
fn thirty_presses_of_n_in_compare_mode_are_thirty_steps_of_both_sides() {
    let mut h = harness();
    let mut config = h.state().inspect().sim().tree_settings();
    config.margin *= 4.0;
    h.state_mut().apply(
        Command::StartCompare(Side {
            kind: BroadphaseKind::Tree,
            config,
        }),
        false,
    );
    h.run_steps(1);
    presses_in_one_frame(&mut h, Key::N, 30);
    assert_eq!(at(&h), 30);
    let run = h.state().inspect().compare().expect("comparing");
    assert_eq!(run.b.sim().step_index(), 30);
    assert_eq!(run.rows.len(), 31);
    assert_eq!(run.rows.last().map(|r| r.step), Some(30));
    presses_in_one_frame(&mut h, Key::ArrowLeft, 12);
    assert_eq!(at(&h), 18);
    let run = h.state().inspect().compare().expect("comparing");
    assert_eq!(run.b.sim().step_index(), 18);
    presses_in_one_frame(&mut h, Key::ArrowRight, 5);
    assert_eq!(at(&h), 23);
    let run = h.state().inspect().compare().expect("comparing");
    assert_eq!(run.b.sim().step_index(), 23);
}

#[test]
fn on_a_trace_every_press_steps_through_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("engine.aabbstream");
    crate::common::engine::write_stream(&path, None, None);
    let mut h = harness();
    h.state_mut().apply(Command::Open(path), false);
    h.run_steps(2);
    assert!(h.state().inspect().sim().is_trace());
    presses_in_one_frame(&mut h, Key::ArrowRight, 6);
    assert_eq!(at(&h), 6);
    presses_in_one_frame(&mut h, Key::ArrowLeft, 4);
    assert_eq!(at(&h), 2);
    presses_in_one_frame(&mut h, Key::N, 5);
    assert_eq!(at(&h), 7);
}

/// `keys` pressed (down and up) with `modifiers`, all in one frame; then that frame.
fn chord_presses_in_one_frame(
    h: &mut Harness<'_, DebuggerApp>,
    keys: &[Key],
    modifiers: Modifiers,
) {
    for &key in keys {
        for pressed in [true, false] {
            h.event(Event::Key {
                key,
                physical_key: None,
                pressed,
                repeat: false,
                modifiers,
            });
        }
    }
    h.run_steps(1);
}

#[test]
fn undo_space_help_and_add_count_every_press_in_one_frame() {
    let mut h = harness();
    // Three changes of the margin, then three Ctrl+Z in one frame: back to the first.
    let first = h.state().inspect().document().tree.margin;
    for margin in [0.4, 0.5, 0.7] {
        let mut config = h.state().inspect().sim().tree_settings();
        config.margin = margin;
        h.state_mut().apply(Command::SetTreeSettings(config), false);
        h.run_steps(2);
    }
    assert_eq!(h.state().inspect().document().tree.margin, 0.7);
    chord_presses_in_one_frame(&mut h, &[Key::Z, Key::Z, Key::Z], Modifiers::COMMAND);
    assert_eq!(h.state().inspect().document().tree.margin, first);
    // Ctrl+Shift+Z twice and Ctrl+Y once: the three changes made again, in order.
    let redo = Modifiers::COMMAND | Modifiers::SHIFT;
    chord_presses_in_one_frame(&mut h, &[Key::Z, Key::Z], redo);
    assert_eq!(h.state().inspect().document().tree.margin, 0.5);
    assert!(
        h.state()
            .inspect()
            .status()
            .starts_with("Redone: Margin 0.500"),
        "{}",
        h.state().inspect().status()
    );
    chord_presses_in_one_frame(&mut h, &[Key::Y], Modifiers::COMMAND);
    assert_eq!(h.state().inspect().document().tree.margin, 0.7);
    chord_presses_in_one_frame(&mut h, &[Key::Y], Modifiers::COMMAND);
    assert_eq!(h.state().inspect().status(), "Nothing to redo.");
    chord_presses_in_one_frame(&mut h, &[Key::Z, Key::Z, Key::Z], Modifiers::COMMAND);
    assert_eq!(h.state().inspect().document().tree.margin, first);
    // Two Spaces: play, then pause again.
    chord_presses_in_one_frame(&mut h, &[Key::Space, Key::Space], Modifiers::NONE);
    assert!(!h.state().inspect().is_playing());
    chord_presses_in_one_frame(&mut h, &[Key::Space], Modifiers::NONE);
    assert!(h.state().inspect().is_playing());
    chord_presses_in_one_frame(&mut h, &[Key::Space], Modifiers::NONE);
    // F1 twice: the help shows and hides again; three times, it stays.
    chord_presses_in_one_frame(&mut h, &[Key::F1, Key::F1], Modifiers::NONE);
    h.run_steps(1);
    assert!(h.query_by_label("Help: keyboard and mouse").is_none());
    chord_presses_in_one_frame(&mut h, &[Key::F1, Key::F1, Key::F1], Modifiers::NONE);
    h.run_steps(1);
    assert!(h.query_by_label("Help: keyboard and mouse").is_some());
    chord_presses_in_one_frame(&mut h, &[Key::F1], Modifiers::NONE);
    // A with the pointer over the world: a sphere a press.
    let world = h.state().inspect().world_view_rect().expect("the world");
    h.event(Event::PointerMoved(world.center()));
    h.run_steps(1);
    let before = h.state().inspect().sim().live_count();
    chord_presses_in_one_frame(&mut h, &[Key::A, Key::A, Key::A], Modifiers::NONE);
    assert_eq!(h.state().inspect().sim().live_count(), before + 3);
}
