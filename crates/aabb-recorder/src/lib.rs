#![doc = include_str!("../README.md")]
//!
//! ## In this crate
//!
//! [`Recorder`] is the engine's side: made with [`Recorder::connect`],
//! [`Recorder::to_file`], [`Recorder::connect_or_file`] or [`Recorder::to_writer`] (each
//! also `_with` [`Options`]), it never raises an error into the frame loop and never panics
//! on what a peer or a box does: a debugger that is absent, slow or closes costs steps,
//! counted in [`Recorder::stats`]. See [`wire`] for the format and [`StreamState`] for the
//! reading side.

mod recorder;
mod state;
pub mod wire;

pub use recorder::{
    DEFAULT_PORT, Options, PORT_ENV, Recorder, Stats, StepStatus, Target, debugger_addr,
};
pub use state::{StepUpdate, StreamState};
pub use wire::{
    Bye, Decoder, Frame, Hello, Limits, Section, StepFrame, WireBox, WireError, WireErrorKind,
};
