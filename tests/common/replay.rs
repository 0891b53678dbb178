//! Recording files the replay tests share (`replay_open`, `ui_recording`):
//! `use crate::common::replay as replay_common;`.

use aabb_model::broadphase::{BroadphaseKind, DEFAULT_PAIR_LIMIT};
use aabb_model::replay::{Recording, file};
use aabb_model::scene::Scene;
use std::path::Path;

/// The built-in scene recorded headless for `steps` steps and saved to `path`; the recording.
pub fn record(path: &Path, steps: u64) -> Recording {
    let (mut rec, mut sim) = Recording::start(
        &Scene::builtin_default(),
        "builtin",
        BroadphaseKind::Tree,
        DEFAULT_PAIR_LIMIT,
    )
    .expect("the built-in scene starts");
    for _ in 0..steps {
        rec.step(&mut sim)
            .expect("recorded")
            .expect("the built-in scene steps");
    }
    file::save(rec.history(), path).expect("saved");
    rec
}
