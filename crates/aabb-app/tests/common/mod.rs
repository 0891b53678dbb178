//! Helpers the window's tests share: the egui_kittest set-up of the window ([`ui`]), and,
//! from the root package's `tests/common` (the headless tests use them too), a stream with an
//! engine's broad phase ([`engine`]) and recording files ([`replay`]).

// Each test binary uses some of these.
#![allow(dead_code)]

#[path = "../../../../tests/common/engine.rs"]
pub mod engine;
#[path = "../../../../tests/common/replay.rs"]
pub mod replay;
pub mod ui;

/// The file at `rel` from the workspace's root (`scenes/...`): the window's tests run in
/// crates/aabb-app, the scenes are the root package's.
pub fn root_file(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}
