//! Helpers the headless tests share: running the built binary ([`cli`]), a stream with an
//! engine's broad phase ([`engine`]), recording files ([`replay`]) and what a test needs of
//! the machine, failing under CI when it is missing ([`needs`]). The window's tests
//! (crates/aabb-app/tests) include `engine` and `replay` from here too, so these two name the
//! model as `aabb_model`, which both packages depend on; other crates' tests include `needs`.

// Each test binary uses some of these.
#![allow(dead_code)]

pub mod cli;
pub mod engine;
pub mod needs;
pub mod replay;
