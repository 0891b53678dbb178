//! Helpers the headless tests share: running the built binary ([`cli`]), a stream with an
//! engine's broad phase ([`engine`]) and recording files ([`replay`]). The window's tests
//! (crates/aabb-app/tests) include `engine` and `replay` from here too, so these two name the
//! model as `aabb_model`, which both packages depend on.

// Each test binary uses some of these.
#![allow(dead_code)]

pub mod cli;
pub mod engine;
pub mod replay;
