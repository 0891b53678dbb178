//! Traces: boxes recorded from any physics engine, step by step, replayed through the broad
//! phases as if they were a scene's spheres ([`TraceSimulation`]), so that `run`, the margin
//! sweep (the advisor) and the window work on motion from a real engine.
//!
//! # The format (version 1)
//!
//! Plain text, one record a line, so that a trace can be written from C, C++, C#, Python or
//! anything else with a `printf` and read back with a line number in every message; it
//! is written and read one step at a time, compresses well, and `grep`, `head` and
//! `diff` work on it. (JSON lines were the other choice: they need a JSON writer in the
//! engine and are about twice the size for the same boxes.)
//!
//! ```text
//! aabb-trace 1 dims=2 dt=0.016666668
//! # comment lines start with '#'; blank lines are ignored
//! static
//! 100000 -10 -1 10 0
//! step 0
//! 0 -0.25 5 0.25 5.5
//! 1 0.5 5 1 5.5
//! step 1
//! 0 -0.25 4.99 0.25 5.49
//! 2 3 5 3.5 5.5
//! ```
//!
//! - **Header** (the first line): `aabb-trace`, the format version (`1`), `dims=2` or
//!   `dims=3`, and optionally `dt=SECONDS` (the time between steps, > 0 and <= 1; 1/60 when
//!   left out).
//! - **`static`** (optional, before `step 0`): boxes that are there at every step and never
//!   move (walls, the ground). Their ids may not be used by a step's boxes.
//! - **`step N`**: the boxes of step N, one a line, until the next `step` line or the end.
//!   Steps are numbered 0, 1, 2, ... in order with none left out; a step may be empty.
//! - **A box**: `id minx miny maxx maxy` in 2D, `id minx miny minz maxx maxy maxz` in 3D.
//!   The id is a whole number from 0 to 4294967295, unique within its step; the numbers are
//!   decimal (`1`, `-0.5`, `2.5e-3`), finite, read as the nearest `f32`, with min <= max.
//!   A box listed at one step and not at the next has disappeared; a new id has appeared.
//!   Ids need not be sorted.
//!
//! The reader ([`TraceReader`], [`Trace::load`]) refuses anything else with `FILE:LINE:
//! message` (a number that is not one, NaN or infinity, min > max, an id twice in a step, the
//! wrong number of values, steps out of order, an unknown header field, a newer version) and
//! stops at its [`TraceLimits`] (line length, boxes a step, steps, boxes in all, bytes), so no
//! input makes it panic or fill memory.
//!
//! # How a trace drives the broad phase
//!
//! Each step, the broad phase gets every box present (static ones included) as a body with
//! that tight box and a velocity of `(centre now - centre at the previous step) / dt` (zero
//! for a box new this step, and for static boxes); the tree fattens it by its margin and
//! look-ahead as it does a sphere's box. Candidate pairs are fat boxes that overlap, except
//! two static boxes (never a pair, as a scene's static boxes); contacts are candidate pairs
//! whose tight boxes overlap.

mod format;
mod simulation;

pub use format::{
    DEFAULT_TRACE_DT, MAX_TRACE_BYTES, TRACE_VERSION, Trace, TraceBox, TraceBuilder, TraceError,
    TraceHeader, TraceLimits, TraceReader, TraceWriter, check_step_rules, is_trace_path,
};
pub use simulation::{Stepper, TraceSimulation};
