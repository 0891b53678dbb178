//! The views: each is its own type in its own file, reads the state (`&State`), keeps only
//! its own UI state (the world view its pan and mesh buffers, the tree view its camera and
//! layout, the windows the file dialog widget), and returns what it wants changed as
//! [`Command`]s pushed onto `out`. The shell lays the views out and applies the commands after
//! all of them are drawn.

use eframe::egui;

use crate::app::commands::Command;
use crate::app::state::State;

pub mod advisor;
pub mod controls;
pub mod files;
pub mod menu;
pub mod stats;
pub mod status;
pub mod tree;
pub mod windows;
pub mod world;
pub mod world3d;

/// One view of the state.
pub trait View {
    /// Draws the view into `ui` from `state`, and pushes onto `out` what it asks for.
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>);
}
