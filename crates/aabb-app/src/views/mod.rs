//! The views: each is its own type in its own file, reads the state (`&State`), keeps only
//! its own UI state (the world view its pan and mesh buffers, the tree view its camera and
//! layout, the windows the file dialog widget), and returns what it wants changed as
//! [`Command`]s pushed onto `out`. The shell lays the views out and applies the commands after
//! all of them are drawn.

use eframe::egui;

use crate::commands::Command;
use crate::state::State;

pub mod advisor;
pub mod compare;
pub mod controls;
pub mod files;
pub mod health;
pub mod live;
pub mod menu;
pub mod opening;
pub mod stats;
pub mod status;
pub mod strip;
pub mod timeline;
pub mod tree;
pub mod windows;
pub mod world;
pub mod world3d;

/// One view of the state.
pub trait View {
    /// Draws the view into `ui` from `state`, and pushes onto `out` what it asks for.
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>);
}

/// The mark of a text field whose text may hold spaces (see [`mark_free_text`]).
#[derive(Clone, Copy)]
struct FreeText;

/// Marks the text field `response` as free text: while it has the focus, Space types a space
/// there. Everywhere else (a number field, a slider's value, a button) Space plays and pauses.
pub fn mark_free_text(response: &egui::Response) {
    response
        .ctx
        .data_mut(|d| d.insert_temp(response.id, FreeText));
}

/// True when the widget with the keyboard focus is a field marked by [`mark_free_text`].
#[must_use]
pub fn free_text_has_focus(ctx: &egui::Context) -> bool {
    ctx.memory(egui::Memory::focused)
        .is_some_and(|id| ctx.data(|d| d.get_temp::<FreeText>(id).is_some()))
}
