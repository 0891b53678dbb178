//! The window's tests, one binary (egui_kittest drives the real app headless; the snapshot
//! tests render through wgpu with this crate's `snapshots` feature). Each module is one part of
//! the window; the helpers they share are in `tests/common`.

#[path = "../common/mod.rs"]
mod common;

mod ui_advisor;
mod ui_app;
mod ui_compare;
mod ui_files;
mod ui_frame_time;
mod ui_generator;
mod ui_health;
mod ui_keys;
mod ui_layout;
mod ui_live;
mod ui_polish;
mod ui_recording;
mod ui_scale;
mod ui_snapshots;
mod ui_static_boxes;
mod ui_timeline;
mod ui_trace;
mod ui_tree;
mod ui_tree_changes;
mod ui_world3d;
