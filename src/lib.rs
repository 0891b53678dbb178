//! aabb-debugger: an interactive visual debugger for dynamic AABB trees (the broad phase of
//! collision detection), and the fast tree library under it.
//!
//! This library is what the binary and the tests share: the model layer (the `aabb-model`
//! crate, re-exported here module by module) and the headless command line ([`cli`]). The
//! window is the `aabb-app` crate, which only the binary links (`aabb-debugger [SCENE]`,
//! `screenshot`). See ARCHITECTURE.md for the layers.
//!
//! - [`tree`]: the dynamic AABB tree; knows nothing of spheres, scenes or the UI.
//! - [`scene`], [`broadphase`], [`trace`], [`stream`], [`source`], [`replay`], [`compare`],
//!   [`sweep`], [`workload`], [`motion`], [`job`], [`fileio`], [`text`]: the model layer (see
//!   [`aabb_model`]).
//! - [`cli`]: the headless subcommands.

pub use aabb_model::{
    broadphase, compare, fileio, job, motion, replay, scene, source, stream, sweep, text, trace,
    tree, workload,
};
pub mod cli;

/// The README's Rust examples, compiled and run as doctests by `cargo test`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
