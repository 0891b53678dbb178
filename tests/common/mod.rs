//! Helpers the test modules share: running the built binary ([`cli`]), a stream with an
//! engine's broad phase ([`engine`]), recording files
//! ([`replay`]), and the egui_kittest set-up of the window ([`ui`], with the app only).

// Each test binary uses some of these.
#![allow(dead_code)]

pub mod cli;
pub mod engine;
pub mod replay;
#[cfg(feature = "app")]
pub mod ui;
