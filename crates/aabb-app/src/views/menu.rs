//! The menu bar: File, Scenes (the scene files beside the app and the recent ones), View
//! (views, panels, theme) and Help.

use eframe::egui;

use super::View;
use crate::commands::Command;
use crate::files::{list_scenes, scenes_dir};
use crate::layout;
use crate::prefs::{PrefChange, ThemeChoice, ViewMode};
use crate::state::State;
use egui::RichText;

/// Why a wanted side panel is not shown.
const SET_ASIDE: &str = "Set aside while the window is too narrow: the world and the tree keep \
                         their room. Widen the window, or hide the other panel.";

/// A menu's items in a scroll area no taller than the window below the menu's top, so a long
/// menu in a small window scrolls to its last item (it ran past the window's edge).
fn scrolling(ui: &mut egui::Ui, add: impl FnOnce(&mut egui::Ui)) {
    let room = ui.ctx().content_rect().bottom() - ui.max_rect().top() - 12.0;
    egui::ScrollArea::vertical()
        .max_height(room.max(48.0))
        .show(ui, add);
}

/// The menu bar (it keeps nothing of its own).
#[derive(Default)]
pub struct MenuBar;

impl View for MenuBar {
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui
                    .add(egui::Button::new("Open…").shortcut_text("Ctrl+O"))
                    .clicked()
                {
                    out.push(Command::OpenDialog);
                }
                // A trace is input: Save and Save As are off, and say why.
                let savable = !state.session.sim().is_trace();
                let why = format!("{}.", crate::source::TRACE_IS_INPUT);
                if ui
                    .add_enabled(savable, egui::Button::new("Save").shortcut_text("Ctrl+S"))
                    .on_disabled_hover_text(&why)
                    .clicked()
                {
                    out.push(Command::Save);
                }
                if ui
                    .add_enabled(
                        savable,
                        egui::Button::new("Save As…").shortcut_text("Ctrl+Shift+S"),
                    )
                    .on_disabled_hover_text(&why)
                    .clicked()
                {
                    out.push(Command::SaveAsDialog);
                }
                if ui
                    .add_enabled(savable, egui::Button::new("Save recording…"))
                    .on_hover_text(
                        "Every step and edit since the scene was opened, as a .rec file \
                         (open it again, or `aabb-debugger replay` it).",
                    )
                    .on_disabled_hover_text(format!(
                        "{}.",
                        crate::source::TRACE_HAS_NO_RECORDING_FILE
                    ))
                    .clicked()
                {
                    out.push(Command::SaveRecordingDialog);
                }
                let listening = state.dialogs.live.is_some();
                if ui
                    .add_enabled(!listening, egui::Button::new("Listen for an engine…"))
                    .on_hover_text(
                        "Receive a running engine's boxes live through a recorder (Rust, C \
                         or Python); what arrives opens as a trace.",
                    )
                    .on_disabled_hover_text("Listening already: see the live window.")
                    .clicked()
                {
                    out.push(Command::ListenDialog);
                }
                if ui
                    .add_enabled(
                        state.session.received().is_some(),
                        egui::Button::new("Save received stream…"),
                    )
                    .on_hover_text(
                        "Every step the engine sent, as a stream file (.aabbstream) that run, \
                         sweep, convert and the window open.",
                    )
                    .on_disabled_hover_text("For a stream received live (Listen for an engine…).")
                    .clicked()
                {
                    out.push(Command::SaveStreamDialog);
                }
                if !state.sessions.is_empty() {
                    ui.menu_button("Received sessions", |ui| {
                        if state.session.received().is_some() {
                            ui.add_enabled(
                                false,
                                egui::Button::new(format!(
                                    "{} (shown)",
                                    session_label(&state.session)
                                )),
                            );
                        }
                        for (k, session) in state.sessions.iter().enumerate() {
                            if ui.button(session_label(session)).clicked() {
                                out.push(Command::ShowSession(k));
                            }
                        }
                    })
                    .response
                    .on_hover_text(
                        "The sessions engines streamed in this run, kept within the recording \
                         budget (the oldest go first): show one to look at it or save it.",
                    );
                }
                let mut native = state.prefs.native_dialogs;
                if ui
                    .checkbox(&mut native, "Use the desktop's file dialog")
                    .on_hover_text(
                        "Off: the in-app dialog, which is also used when the desktop has none.",
                    )
                    .changed()
                {
                    out.push(Command::SetPref(PrefChange::NativeDialogs(native)));
                }
                ui.separator();
                if ui.button("Open the built-in scene").clicked() {
                    out.push(Command::OpenBuiltin);
                }
                ui.separator();
                if ui.button("Quit").clicked() {
                    out.push(Command::Quit);
                }
            });
            ui.menu_button("Edit", |ui| {
                let undo = state.session.undo_label();
                if ui
                    .add_enabled(
                        undo.is_some(),
                        egui::Button::new(undo.as_deref().unwrap_or("Undo"))
                            .shortcut_text("Ctrl+Z"),
                    )
                    .on_hover_text(
                        "Go back to the run before the last Reset or Apply (until the next \
                         step), or to the tree settings before the last change.",
                    )
                    .clicked()
                {
                    out.push(Command::Undo);
                }
                let redo = state.session.redo_label();
                if ui
                    .add_enabled(
                        redo.is_some(),
                        egui::Button::new(redo.as_deref().unwrap_or("Redo"))
                            .shortcut_text("Ctrl+Shift+Z"),
                    )
                    .on_hover_text("Make again the settings change the last Undo took back.")
                    .clicked()
                {
                    out.push(Command::Redo);
                }
            });
            ui.menu_button("Scenes", |ui| {
                scrolling(ui, |ui| {
                    let files = scenes_dir().map(|d| list_scenes(&d)).unwrap_or_default();
                    if files.is_empty() {
                        ui.weak("No scenes/ directory found");
                    }
                    for f in files {
                        let name = f
                            .file_name()
                            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                        if ui
                            .button(name)
                            .on_hover_text(f.display().to_string())
                            .clicked()
                        {
                            out.push(Command::Open(f.clone()));
                        }
                    }
                    ui.separator();
                    ui.label(RichText::new("Recent").strong());
                    if state.prefs.recent_files.is_empty() {
                        ui.weak("none yet");
                    }
                    for f in &state.prefs.recent_files {
                        if ui.button(f.display().to_string()).clicked() {
                            out.push(Command::Open(f.clone()));
                        }
                    }
                })
            });
            ui.menu_button("View", |ui| {
                scrolling(ui, |ui| {
                    let prefs = &state.prefs;
                    let mut mode = prefs.view_mode;
                    ui.radio_value(&mut mode, ViewMode::Both, "World and tree");
                    ui.radio_value(&mut mode, ViewMode::World, "World only");
                    ui.radio_value(&mut mode, ViewMode::Tree, "Tree only");
                    if mode != prefs.view_mode {
                        out.push(Command::SetPref(PrefChange::ViewMode(mode)));
                    }
                    ui.separator();
                    if state.compare.is_some() {
                        if ui.button("End the comparison").clicked() {
                            out.push(Command::StopCompare);
                            ui.close();
                        }
                    } else if ui
                        .button("Compare with 4x the margin")
                        .on_hover_text(
                            "A second run, B, beside this one on the same motion (A left, B \
                             right); choose B's broad phase and margin in the controls' \
                             Compare section.",
                        )
                        .clicked()
                    {
                        out.push(Command::StartCompare(super::compare::default_b(
                            &state.side_now(),
                        )));
                        ui.close();
                    }
                    ui.separator();
                    let width = ui.ctx().content_rect().width();
                    let panels = layout::panels(width, prefs.show_controls, prefs.show_stats);
                    let mut controls = prefs.show_controls;
                    let check = ui.checkbox(&mut controls, "Controls panel");
                    if check.changed() {
                        out.push(Command::SetPref(PrefChange::ShowControls(controls)));
                    }
                    if panels.controls_set_aside {
                        check.on_hover_text(SET_ASIDE);
                        ui.weak("  (set aside: the window is too narrow)");
                    }
                    let mut stats = prefs.show_stats;
                    let check = ui.checkbox(&mut stats, "Statistics panel");
                    if check.changed() {
                        out.push(Command::SetPref(PrefChange::ShowStats(stats)));
                    }
                    if panels.stats_set_aside {
                        check.on_hover_text(SET_ASIDE);
                        ui.weak("  (set aside: the window is too narrow)");
                    }
                    let mut timeline = prefs.show_timeline;
                    if ui.checkbox(&mut timeline, "Timeline panel").changed() {
                        out.push(Command::SetPref(PrefChange::ShowTimeline(timeline)));
                    }
                    let mut events = prefs.show_events;
                    if ui.checkbox(&mut events, "Tree event list").changed() {
                        out.push(Command::SetPref(PrefChange::ShowEvents(events)));
                    }
                    let mut advisor = state.dialogs.advisor;
                    if ui
                        .checkbox(&mut advisor, "Advisor (margin sweep)")
                        .changed()
                    {
                        out.push(Command::ShowAdvisor(advisor));
                    }
                    ui.separator();
                    let mut theme = prefs.theme;
                    ui.radio_value(&mut theme, ThemeChoice::Dark, "Dark theme");
                    ui.radio_value(&mut theme, ThemeChoice::Light, "Light theme");
                    if theme != prefs.theme {
                        out.push(Command::SetPref(PrefChange::Theme(theme)));
                    }
                    ui.separator();
                    if ui
                        .add(egui::Button::new("Fit").shortcut_text("F"))
                        .clicked()
                    {
                        out.push(Command::Fit);
                    }
                    if ui
                        .button("Reset layout")
                        .on_hover_text("Both views, both side panels at their default widths.")
                        .clicked()
                    {
                        out.push(Command::SetPref(PrefChange::ResetLayout));
                        out.push(Command::Fit);
                    }
                })
            });
            ui.menu_button("Help", |ui| {
                if ui
                    .add(egui::Button::new("Keyboard and mouse").shortcut_text("F1"))
                    .clicked()
                {
                    out.push(Command::ToggleHelp);
                }
                if ui.button("About").clicked() {
                    out.push(Command::ShowAbout(true));
                }
            });
        });
    }
}

/// A received session in the Sessions menu: its engine, its number and its steps.
fn session_label(session: &crate::session::Session) -> String {
    let from = session.received().map_or("a stream", |r| r.from.as_str());
    format!(
        "{} #{}: {} steps",
        crate::text::excerpt(from, 40),
        session.id(),
        session.recording().last_step() + 1
    )
}
