//! Streams a physics engine's boxes, step by step, to the aabb-debugger over TCP (the live
//! link) or to a stream file, with the format's encoder and decoder. std only.
//!
//! ```no_run
//! use aabb_recorder::{Hello, Recorder, debugger_addr};
//!
//! let hello = Hello::new("my engine 1.0", 2, 1.0 / 60.0);
//! let mut rec = Recorder::connect_or_file(debugger_addr(), "run.aabbstream", hello)?;
//! rec.static_box(1000, &[-50.0, -1.0], &[50.0, 0.0]);
//! for step in 0..600 {
//!     rec.begin_step();
//!     for id in 0..100u32 {
//!         let x = id as f32 + step as f32 * 0.01;
//!         rec.add_box_2d(id, [x, 0.0], [x + 0.5, 0.5]);
//!     }
//!     rec.end_step();
//! }
//! let stats = rec.finish();
//! println!("{} steps sent, {} dropped", stats.steps_sent, stats.steps_dropped);
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! The recorder never raises an error into the frame loop and never panics on what a peer
//! or a box does: a debugger that is absent, slow or closes costs steps, counted in
//! [`Recorder::stats`]. See [`wire`] for the format and [`StreamState`] for the reading
//! side.

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
