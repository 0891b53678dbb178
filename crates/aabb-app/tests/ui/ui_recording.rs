//! UI tests of recording files in the window (egui_kittest, headless): File > Save
//! recording… writes the recording, which opens back with the same steps; a recording opens
//! on a worker thread with a progress window; its Cancel keeps the open document; a
//! truncated file shows its message.

use aabb_app::{Command, DebuggerApp};
use aabb_model::scene::Scene;
use eframe::egui;
use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::time::{Duration, Instant};

use crate::common::ui;

use crate::common::replay as replay_common;

/// The built-in scene after `steps` steps, paused.
fn harness_after(steps: u64) -> Harness<'static, DebuggerApp> {
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1200.0, 800.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    for _ in 0..steps {
        h.state_mut().apply(Command::Step, false);
    }
    h.run_steps(2);
    assert_eq!(h.state().inspect().recording().last_step(), steps);
    h
}

/// Runs frames until no recording is being opened (bounded).
fn run_until_opened(h: &mut Harness<'_, DebuggerApp>) {
    // The first frame applies the queued Open, which starts the worker.
    h.step();
    let start = Instant::now();
    while h.state().inspect().opening_progress().is_some() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the recording did not open"
        );
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    h.run_steps(2);
}

#[test]
fn a_saved_recording_opens_back_with_the_same_steps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = harness_after(20);
    let hash_at_7 = h
        .state()
        .inspect()
        .recording()
        .state_at(7)
        .expect("step 7")
        .structure_hash();
    // File > Save recording…, a name typed without the extension.
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Save recording…").click();
    h.run_steps(3);
    assert!(h.query_by_label("Save recording as").is_some());
    assert_eq!(
        h.get_by_label("File name:").value().as_deref(),
        Some("recording.rec")
    );
    let typed = dir.path().join("run");
    ui::set_field(&mut h, "File name:", &typed.display().to_string());
    h.get_by_label("Save").click();
    h.run_steps(2);
    let saved = dir.path().join("run.rec");
    assert_eq!(h.state().inspect().error(), None);
    assert_eq!(
        h.state().inspect().status(),
        format!("Saved the recording (21 steps) to {}.", saved.display())
    );
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("run.rec")]);

    h.state_mut().push_command(Command::Open(saved.clone()));
    run_until_opened(&mut h);
    assert_eq!(h.state().inspect().error(), None);
    assert_eq!(h.state().inspect().recording().last_step(), 20);
    assert_eq!(h.state().inspect().sim().step_index(), 20);
    h.state_mut().push_command(Command::SeekTo(7));
    h.run_steps(2);
    assert_eq!(h.state().inspect().sim().step_index(), 7);
    assert_eq!(h.state().inspect().sim().structure_hash(), hash_at_7);
}

#[test]
fn a_recording_that_cannot_be_written_is_reported_and_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = harness_after(5);
    let target = dir.path().join("no-such-folder").join("r.rec");
    h.state_mut()
        .push_command(Command::SaveRecording(target.clone()));
    h.run_steps(2);
    assert_eq!(
        h.state().inspect().status(),
        format!(
            "Could not save the recording to {}; nothing was changed.",
            target.display()
        )
    );
    assert!(h.state().inspect().error().is_some());
    assert_eq!(h.state().inspect().recording().last_step(), 5);
    assert!(!target.exists());
}

#[test]
fn a_recording_opens_with_a_progress_window_then_shows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("long.rec");
    replay_common::record(&path, 4000);
    let mut h = harness_after(0);
    h.state_mut().push_command(Command::Open(path.clone()));
    h.run_steps(3);
    let progress = h.state().inspect().opening_progress().expect("opening");
    assert!(progress.steps_done < 4001, "{progress:?}");
    assert!(h.query_by_label("Opening recording").is_some());
    assert!(h.query_by_label("Cancel").is_some());
    run_until_opened(&mut h);
    assert_eq!(h.state().inspect().error(), None);
    assert_eq!(h.state().inspect().recording().last_step(), 4000);
    assert_eq!(h.state().inspect().sim().step_index(), 4000);
    assert_eq!(
        h.state().inspect().status(),
        format!(
            "Opened the recording {} (4001 steps); showing its last step, 4000.",
            path.display()
        )
    );
    assert!(h.query_by_label("Opening recording").is_none());
}

#[test]
fn cancel_leaves_the_open_document_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("long.rec");
    replay_common::record(&path, 4000);
    let mut h = harness_after(3);
    let name = h.state().inspect().document_name();
    let hash = h.state().inspect().sim().structure_hash();
    h.state_mut().push_command(Command::Open(path.clone()));
    h.run_steps(3);
    assert!(h.state().inspect().opening_progress().is_some());
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(h.state().inspect().opening_progress().is_none());
    assert_eq!(
        h.state().inspect().status(),
        format!(
            "Opening the recording {} cancelled; the open scene is unchanged.",
            path.display()
        )
    );
    assert_eq!(h.state().inspect().error(), None);
    assert_eq!(h.state().inspect().document_name(), name);
    assert_eq!(h.state().inspect().recording().last_step(), 3);
    assert_eq!(h.state().inspect().sim().structure_hash(), hash);
    assert!(h.query_by_label("Opening recording").is_none());
}

#[test]
fn a_truncated_recording_shows_its_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cut.rec");
    replay_common::record(&path, 10);
    let bytes = std::fs::read(&path).expect("read");
    std::fs::write(&path, &bytes[..bytes.len() - 7]).expect("write");
    let mut h = harness_after(2);
    h.state_mut().push_command(Command::Open(path.clone()));
    run_until_opened(&mut h);
    assert_eq!(
        h.state().inspect().status(),
        format!(
            "Could not open the recording {}; the open scene is unchanged.",
            path.display()
        )
    );
    let error = h.state().inspect().error().expect("an error shown");
    assert!(
        error.starts_with(&format!(
            "{}: the file is truncated: the header says 11 steps",
            path.display()
        )),
        "{error}"
    );
    assert_eq!(h.state().inspect().recording().last_step(), 2);
}

#[test]
fn opening_a_scene_meanwhile_cancels_the_recording_being_opened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("long.rec");
    replay_common::record(&path, 4000);
    let mut h = harness_after(3);
    h.state_mut().push_command(Command::Open(path));
    h.run_steps(1);
    assert!(h.state().inspect().opening_progress().is_some());
    h.state_mut().push_command(Command::OpenBuiltin);
    h.run_steps(2);
    assert!(h.state().inspect().opening_progress().is_none());
    assert_eq!(h.state().inspect().recording().last_step(), 0);
    assert_eq!(
        h.state().inspect().document_name(),
        format!("{} (not saved)", Scene::builtin_default().name)
    );
    // Nothing arrives later.
    std::thread::sleep(Duration::from_millis(200));
    h.run_steps(3);
    assert_eq!(h.state().inspect().recording().last_step(), 0);
    assert!(
        h.state().inspect().status().starts_with("Opened "),
        "{}",
        h.state().inspect().status()
    );
}
