//! The egui_kittest set-up and helpers the UI tests share (`ui_app`, `ui_advisor`, `ui_files`,
//! `ui_recording`, `ui_snapshots` and the others):
//! `use crate::common::ui;`.

// Each test binary uses some of these.
#![allow(dead_code)]

use aabb_app::{AppOptions, DebuggerApp};
use aabb_model::scene::Scene;
use eframe::egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use egui_kittest::{Harness, HarnessBuilder};

/// The debugger app on `scene`, in a harness `builder` set up (size, step, renderer): paused,
/// on the default preferences, storing nothing, measuring the tree's health on the UI thread
/// (so pictures do not depend on a worker's timing; `ui_health` turns the worker on). Runs no
/// frame.
pub fn app_harness(
    builder: HarnessBuilder<DebuggerApp>,
    scene: Scene,
) -> Harness<'static, DebuggerApp> {
    app_harness_with(
        builder,
        scene,
        AppOptions {
            playing: false,
            ephemeral: true,
            ..AppOptions::default()
        },
    )
}

/// As [`app_harness`], with the app's `options`.
pub fn app_harness_with(
    builder: HarnessBuilder<DebuggerApp>,
    scene: Scene,
    options: AppOptions,
) -> Harness<'static, DebuggerApp> {
    builder.build_eframe(move |cc| {
        let mut app =
            DebuggerApp::new(&cc.egui_ctx, None, scene, None, options).expect("the app starts");
        app.set_health_on_ui_thread(true);
        app
    })
}

/// Replaces the text of the field labelled `label` (select all, then type).
pub fn set_field(h: &mut Harness<'_, DebuggerApp>, label: &str, text: &str) {
    h.get_by_label(label).focus();
    h.run_steps(1);
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.run_steps(1);
    h.get_by_label(label).type_text(text);
    h.run_steps(1);
}

/// A click as a user makes it: the pointer moves to `pos` (a frame, so the widget under it
/// is hovered), the primary button goes down and up within the next frame, then two frames.
pub fn click_at(h: &mut Harness<'_, DebuggerApp>, pos: eframe::egui::Pos2) {
    use eframe::egui::{Event, PointerButton};
    h.event(Event::PointerMoved(pos));
    h.run_steps(1);
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    h.run_steps(2);
}

/// A drag as a user makes it, a frame after each event: the pointer moves to `from`,
/// `button` goes down, the pointer moves to `to` in `moves` equal moves, `button` goes up;
/// then two frames.
pub fn drag(
    h: &mut Harness<'_, DebuggerApp>,
    button: eframe::egui::PointerButton,
    from: eframe::egui::Pos2,
    to: eframe::egui::Pos2,
    moves: u32,
) {
    use eframe::egui::Event;
    let press = |h: &mut Harness<'_, DebuggerApp>, pos, pressed| {
        h.event(Event::PointerButton {
            pos,
            button,
            pressed,
            modifiers: Modifiers::NONE,
        });
        h.run_steps(1);
    };
    h.event(Event::PointerMoved(from));
    h.run_steps(1);
    press(h, from, true);
    for k in 1..=moves {
        h.event(Event::PointerMoved(
            from + (to - from) * (k as f32 / moves as f32),
        ));
        h.run_steps(1);
    }
    press(h, to, false);
    h.run_steps(1);
}
