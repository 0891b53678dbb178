//! The model layer of aabb-debugger: everything the window and the command line share, with
//! neither a UI nor a command line (this crate depends on neither the window's toolkit nor
//! clap, so the compiler keeps them out). See ARCHITECTURE.md for the layers and the data
//! flow of a step.
//!
//! - [`tree`]: the dynamic AABB tree (the `dynamic-aabb-tree` crate); knows nothing of
//!   spheres, scenes or the UI.
//! - [`scene`]: the scene model, file format and simulation.
//! - [`broadphase`]: the broad phases (the tree, brute force, sweep-and-prune), one each.
//! - [`workload`]: the standard benchmark workload (deterministic circles).
//! - [`motion`]: the step rule (move, bounce off the walls) the scene and the workload share.
//! - [`replay`]: recording every step, rebuilding any recorded step exactly, recording files.
//! - [`sweep`]: the margin advisor: a scene run over a grid of margins and look-ahead values,
//!   in parallel, with a recommendation, and its export (JSON, CSV, a table).
//! - [`trace`]: traces of boxes from other engines (a text format, its reader and writer) and
//!   the simulation that replays them through the broad phases.
//! - [`source`]: what is stepped, a scene's simulation or a trace's, behind one type (the
//!   window's document and its recordings).
//! - [`stream`]: the live link: an engine's binary stream of boxes (a file, or a TCP
//!   connection from a recorder), read into a trace.
//! - [`session`]: the thing being debugged, whatever its origin (a scene, a trace, a stream,
//!   a live engine), with its one edit path, undo and redo, restarts; a live trace's grows.
//! - [`job`]: work on a thread of its own with progress and cancel, one type for every long
//!   job.
//! - [`fileio`]: reading the user's files with a size limit and saving them atomically, and
//!   telling their kinds apart.
//! - [`text`]: messages that quote a user's file, made safe to print.
//!
//! # Layers
//!
//! The modules are layers, lowest first: a module refers (`crate::…`, `super::…`) only to
//! modules of the layers before its own, never to one of its own layer or a later one, so
//! their imports form no circle (`tests/module_layers.rs` fails on one that does). [`tree`],
//! another crate, is under them all.
//!
//! 1. `text`, `fileio`, `job`, `motion`
//! 2. `broadphase`
//! 3. `scene`, `workload`
//! 4. `trace`
//! 5. `stream`, `replay`
//! 6. `source`
//! 7. `compare`, `sweep`
//! 8. `session`

pub mod broadphase;
pub mod compare;
pub mod fileio;
pub mod job;
pub mod motion;
pub mod replay;
pub mod scene;
pub mod session;
pub mod source;
pub mod stream;
pub mod sweep;
pub mod text;
pub mod trace;
/// The dynamic AABB tree: the [`dynamic_aabb_tree`] crate of this workspace, under the path
/// `aabb_model::tree` (and `crate::tree`).
pub use dynamic_aabb_tree as tree;
pub mod workload;
