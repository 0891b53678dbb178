//! The tests that open no window, one binary: the command line (the built binary run as a user
//! would), the model (scenes, broad phases, traces, streams, replay, the sweep) and the live
//! link. It links the library (the model and the headless commands), never the window. The
//! helpers the modules share are in `tests/common`.

#[path = "../common/mod.rs"]
mod common;

mod bench_workload;
mod cli_compare;
mod cli_hostile;
mod cli_import_boxes;
mod cli_quality;
mod cli_replay;
mod cli_run;
mod cli_sweep;
mod engine_parts;
mod listener;
mod live_link;
mod recorders_hostile;
mod reliability;
mod reliability3;
mod reliability4;
mod replay;
mod replay_file;
mod replay_open;
mod replay_trace;
mod scene_bad_files;
mod scene_figures;
mod scene_format;
mod scene_fuzz;
mod scene_sim;
mod static_boxes;
mod sweep;
mod trace_cli;
mod trace_format;
