//! UI tests of the in-app file dialog, driven headless with egui_kittest: after a
//! scene is opened, Open and Save As start in its folder; a name typed into the file name
//! field opens or saves that file there; a typed name that is not there says so.

use aabb_app::files::ExportFormat;
use aabb_app::{Command, DebuggerApp};
use aabb_model::scene::Scene;
use eframe::egui;
use egui::{Key, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::{Path, PathBuf};

use crate::common::root_file;
use crate::common::ui;

/// A small scene; `name` tells the scenes apart.
fn scene(name: &str) -> Scene {
    let text = format!(
        r#"(
    format_version: 1,
    name: "{name}",
    dimensions: 2,
    world: (min: (0.0, 0.0), max: (20.0, 12.0)),
    dt: 0.016666668,
    tree: (margin: 1.0, velocity_lookahead: 0.0, insertion: SurfaceArea, balancing: Rotations, pairs: SelfTraversal),
    spheres: [
        (id: 0, center: (3.0, 4.0), radius: 1.0, velocity: (0.0, 0.0)),
        (id: 1, center: (7.0, 4.0), radius: 1.0, velocity: (0.5, 0.0)),
    ],
    generate: None,
    view: None,
)"#
    );
    Scene::parse(&text, "test.ron", false).expect("the test scene is valid")
}

/// The app on the scene "built in", never saved, after its first frames.
fn unsaved_harness() -> Harness<'static, DebuggerApp> {
    let mut h = ui::app_harness(
        Harness::builder()
            .with_size(Vec2::new(1200.0, 800.0))
            // Frames 1/20 s apart, so two clicks a frame apart are a double-click.
            .with_step_dt(0.05),
        scene("built in"),
    );
    h.run_steps(2);
    h
}

/// A temp folder with the scene "A" in `a.ron` and "C" in `c.ron`, and the app with `a.ron`
/// open.
fn opened() -> (tempfile::TempDir, Harness<'static, DebuggerApp>) {
    let dir = tempfile::tempdir().expect("tempdir");
    scene("A").save(&dir.path().join("a.ron")).expect("save a");
    scene("C").save(&dir.path().join("c.ron")).expect("save c");
    let mut h = unsaved_harness();
    h.state_mut()
        .push_command(Command::Open(dir.path().join("a.ron")));
    h.run_steps(2);
    assert_eq!(
        h.state().inspect().path(),
        Some(dir.path().join("a.ron").as_path())
    );
    assert_eq!(h.state().inspect().document().name, "A");
    (dir, h)
}

/// The text of the field labelled `label`.
fn field(h: &Harness<'_, DebuggerApp>, label: &str) -> Option<String> {
    h.get_by_label(label).value()
}

/// The scene in `path`, without the view a save adds.
fn saved_scene(path: &Path) -> Scene {
    let mut scene = Scene::load(path).expect("the saved file loads");
    scene.view = None;
    scene
}

fn folder_text(dir: &Path) -> String {
    std::path::absolute(dir)
        .expect("absolute")
        .display()
        .to_string()
}

/// Two clicks a frame apart: a double-click (after a pause, so that with an earlier click
/// they make no triple-click). A click is three frames (move, press, release).
fn double_click(h: &mut Harness<'_, DebuggerApp>, label: &str) {
    h.run_steps(10);
    h.get_by_label(label).click();
    h.run_steps(1);
    h.get_by_label(label).click();
}

fn dialog_is_open(h: &Harness<'_, DebuggerApp>) -> bool {
    h.query_by_label("File name:").is_some()
}

#[test]
fn save_as_after_open_writes_the_typed_name_in_the_files_folder() {
    let (dir, mut h) = opened();
    h.state_mut().push_command(Command::SaveAsDialog);
    h.run_steps(2);
    assert!(h.query_by_label("Save scene as").is_some());
    // The folder of the open file, not the file's path; its name suggested.
    assert_eq!(field(&h, "Folder:"), Some(folder_text(dir.path())));
    assert_eq!(field(&h, "File name:").as_deref(), Some("a.ron"));

    ui::set_field(&mut h, "File name:", "b");
    h.get_by_label("Save").click();
    h.run_steps(2);

    let b = dir.path().join("b.ron");
    assert!(!dialog_is_open(&h));
    assert_eq!(h.state().inspect().error(), None);
    assert_eq!(
        h.state().inspect().status(),
        format!("Saved {}.", b.display())
    );
    assert_eq!(h.state().inspect().path(), Some(b.as_path()));
    assert!(!h.state().inspect().is_dirty());
    assert_eq!(saved_scene(&b), scene("A"));
    assert_eq!(saved_scene(&dir.path().join("a.ron")), scene("A"));
}

#[test]
fn save_as_over_the_suggested_name_asks_then_replaces() {
    let (dir, mut h) = opened();
    let a = dir.path().join("a.ron");
    let before = std::fs::read_to_string(&a).expect("read a");
    h.state_mut().push_command(Command::SaveAsDialog);
    h.run_steps(2);
    h.get_by_label("Save").click();
    h.run_steps(2);
    assert!(dialog_is_open(&h));
    assert!(
        h.query_by_label("“a.ron” exists: press Save again to replace it.")
            .is_some()
    );
    assert_eq!(std::fs::read_to_string(&a).expect("read a"), before);

    h.get_by_label("Save").click();
    h.run_steps(2);
    assert!(!dialog_is_open(&h));
    assert_eq!(
        h.state().inspect().status(),
        format!("Saved {}.", a.display())
    );
    assert_eq!(saved_scene(&a), scene("A"));
}

#[test]
fn a_typed_name_opens_with_enter() {
    let (dir, mut h) = opened();
    h.state_mut().push_command(Command::OpenDialog);
    h.run_steps(2);
    assert!(h.query_by_label("Open a file").is_some());
    assert_eq!(field(&h, "Folder:"), Some(folder_text(dir.path())));
    assert_eq!(field(&h, "File name:").as_deref(), Some(""));

    ui::set_field(&mut h, "File name:", "c.ron");
    h.key_press(Key::Enter);
    h.run_steps(2);

    assert!(!dialog_is_open(&h));
    assert_eq!(h.state().inspect().error(), None);
    let c = dir.path().join("c.ron");
    assert_eq!(h.state().inspect().path(), Some(c.as_path()));
    assert_eq!(h.state().inspect().document(), &scene("C"));
}

#[test]
fn a_typed_path_opens_with_the_button() {
    let (dir, mut h) = opened();
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    let d = dir.path().join("sub").join("d.ron");
    scene("D").save(&d).expect("save d");
    h.state_mut().push_command(Command::OpenDialog);
    h.run_steps(2);

    // Relative to the folder shown, without the extension.
    ui::set_field(&mut h, "File name:", "sub/d");
    h.get_by_label("Open").click();
    h.run_steps(2);
    assert!(!dialog_is_open(&h));
    assert_eq!(h.state().inspect().path(), Some(folder(&d).as_path()));
    assert_eq!(h.state().inspect().document().name, "D");

    // Absolute.
    h.state_mut().push_command(Command::OpenDialog);
    h.run_steps(2);
    assert_eq!(
        field(&h, "Folder:"),
        Some(folder_text(&dir.path().join("sub")))
    );
    let a = dir.path().join("a.ron");
    ui::set_field(&mut h, "File name:", &a.display().to_string());
    h.get_by_label("Open").click();
    h.run_steps(2);
    assert_eq!(h.state().inspect().path(), Some(a.as_path()));
    assert_eq!(h.state().inspect().document().name, "A");
}

/// `path` as the dialog names it: its folder made absolute, then its name.
fn folder(path: &Path) -> PathBuf {
    let parent = path.parent().expect("a parent");
    std::path::absolute(parent)
        .expect("absolute")
        .join(path.file_name().expect("a name"))
}

#[test]
fn a_typed_name_that_is_not_there_says_so_and_changes_nothing() {
    let (dir, mut h) = opened();
    h.state_mut().push_command(Command::OpenDialog);
    h.run_steps(2);
    ui::set_field(&mut h, "File name:", "missing.ron");
    h.get_by_label("Open").click();
    h.run_steps(2);

    let message = format!(
        "There is no file “missing.ron” in {}.",
        folder_text(dir.path())
    );
    assert!(h.query_by_label(&message).is_some(), "{message}");
    assert!(dialog_is_open(&h));
    assert_eq!(
        h.state().inspect().path(),
        Some(dir.path().join("a.ron").as_path())
    );
    assert_eq!(h.state().inspect().document(), &scene("A"));
    assert_eq!(h.state().inspect().error(), None);

    // Cancel closes it; still nothing changed.
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(!dialog_is_open(&h));
    assert_eq!(
        h.state().inspect().path(),
        Some(dir.path().join("a.ron").as_path())
    );
    assert_eq!(h.state().inspect().document(), &scene("A"));
}

#[test]
fn the_list_enters_folders_and_picks_files() {
    let (dir, mut h) = opened();
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    scene("D")
        .save(&dir.path().join("sub").join("d.ron"))
        .expect("save d");
    h.state_mut().push_command(Command::OpenDialog);
    h.run_steps(2);
    double_click(&mut h, "sub/");
    h.run_steps(2);
    assert_eq!(
        field(&h, "Folder:"),
        Some(folder_text(&dir.path().join("sub")))
    );
    h.get_by_label("d.ron").click();
    h.run_steps(1);
    assert_eq!(field(&h, "File name:").as_deref(), Some("d.ron"));
    h.get_by_label("Up").click();
    h.run_steps(2);
    assert_eq!(field(&h, "Folder:"), Some(folder_text(dir.path())));
    double_click(&mut h, "c.ron");
    h.run_steps(2);
    assert!(!dialog_is_open(&h));
    assert_eq!(h.state().inspect().document().name, "C");
}

#[test]
fn the_file_menu_turns_the_desktops_dialog_off_and_on() {
    let (_dir, mut h) = opened();
    assert!(h.state().inspect().prefs().native_dialogs, "on by default");
    for on in [false, true] {
        h.get_by_label("File").click();
        h.run_steps(2);
        h.get_by_label("Use the desktop's file dialog").click();
        h.run_steps(2);
        assert_eq!(h.state().inspect().prefs().native_dialogs, on);
        h.key_press(Key::Escape);
        h.run_steps(2);
    }
}

#[test]
fn export_starts_beside_the_open_file_with_its_extension() {
    let (dir, mut h) = opened();
    h.state_mut().push_command(Command::ExportDialog {
        text: "margin,reinserts\n0.5,3\n".into(),
        format: ExportFormat::Csv,
    });
    h.run_steps(2);
    assert!(h.query_by_label("Export the sweep").is_some());
    assert_eq!(field(&h, "Folder:"), Some(folder_text(dir.path())));
    assert_eq!(field(&h, "File name:").as_deref(), Some("sweep.csv"));
    ui::set_field(&mut h, "File name:", "margins");
    h.key_press(Key::Enter);
    h.run_steps(2);
    assert!(!dialog_is_open(&h));
    let csv = dir.path().join("margins.csv");
    assert_eq!(
        std::fs::read_to_string(&csv).expect("the export is written"),
        "margin,reinserts\n0.5,3\n"
    );
    assert_eq!(
        h.state().inspect().status(),
        format!("Exported the sweep to {}.", csv.display())
    );
}

/// A FIFO typed into the dialog is opened (not "there is no file"), so the reader refuses it
/// saying what it is, without waiting for a writer; the open scene stays.
#[cfg(unix)]
#[test]
fn a_fifo_typed_in_the_dialog_is_refused_for_what_it_is() {
    let (dir, mut h) = opened();
    let fifo = dir.path().join("pipe.ron");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    h.state_mut().push_command(Command::OpenDialog);
    h.run_steps(2);
    ui::set_field(&mut h, "File name:", "pipe.ron");
    h.get_by_label("Open").click();
    h.run_steps(3);
    let error = h
        .state()
        .inspect()
        .error()
        .expect("an error is shown")
        .to_owned();
    assert!(error.contains("is a FIFO, not a regular file"), "{error}");
    assert!(
        h.query_by_label("The document that was open is unchanged.")
            .is_some()
    );
    assert_eq!(h.state().inspect().document(), &scene("A"));
}

/// "Save, then continue" when the save fails: the error says the changes were not saved,
/// in front, alone (the question waits behind it, not over it), and nothing is quit or
/// lost; once it is dismissed, the question comes back.
#[test]
fn a_failed_save_then_continue_says_so_before_asking_again() {
    let (dir, mut h) = opened();
    let mut tree = h.state().inspect().document().tree;
    tree.margin = 2.5;
    h.state_mut().push_command(Command::SetTreeSettings(tree));
    h.run_steps(2);
    assert!(h.state().inspect().is_dirty());
    // The file becomes a folder: saving over it fails.
    let a = dir.path().join("a.ron");
    std::fs::remove_file(&a).expect("remove");
    std::fs::create_dir(&a).expect("a folder in its place");
    h.state_mut()
        .push_command(Command::Open(dir.path().join("c.ron")));
    h.run_steps(2);
    assert!(h.query_by_label("Unsaved changes").is_some());
    h.get_by_label("Save, then continue").click();
    h.run_steps(3);
    let error = h
        .state()
        .inspect()
        .error()
        .expect("the save's error")
        .to_owned();
    assert!(error.contains("is a directory"), "{error}");
    assert!(
        h.query_by_label_contains("Not saved: your changes are still only in the window")
            .is_some()
    );
    assert!(
        h.query_by_label("Unsaved changes").is_none(),
        "one question at a time"
    );
    assert!(h.state().inspect().is_dirty());
    assert_eq!(h.state().inspect().document().tree.margin, 2.5);
    assert_eq!(h.state().inspect().path(), Some(a.as_path()));
    h.get_by_label("OK").click();
    h.run_steps(3);
    assert_eq!(h.state().inspect().error(), None);
    assert!(h.query_by_label("Unsaved changes").is_some(), "asked again");
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(h.query_by_label("Unsaved changes").is_none());
    assert_eq!(h.state().inspect().document().tree.margin, 2.5);
}

/// A document never saved, with changes, before opening another: "Save as…, then continue"
/// opens the Save As dialog (the question waits behind it), and once saved the opening goes
/// on; cancelled, the question comes back and nothing is lost.
#[test]
fn a_new_document_can_be_saved_as_before_another_opens() {
    let dir = tempfile::tempdir().expect("tempdir");
    scene("C").save(&dir.path().join("c.ron")).expect("save c");
    let mut h = unsaved_harness();
    assert_eq!(h.state().inspect().path(), None);
    let mut tree = h.state().inspect().document().tree;
    tree.margin = 2.5;
    h.state_mut().push_command(Command::SetTreeSettings(tree));
    h.run_steps(2);
    assert!(h.state().inspect().is_dirty());
    let c = dir.path().join("c.ron");
    h.state_mut().push_command(Command::Open(c.clone()));
    h.run_steps(2);
    assert!(h.query_by_label("Save, then continue").is_none());
    // Cancelled: asked again, nothing changed.
    h.get_by_label("Save as…, then continue").click();
    h.run_steps(3);
    assert!(dialog_is_open(&h));
    assert!(
        h.query_by_label("Unsaved changes").is_none(),
        "the dialog first"
    );
    h.get_by_label("Cancel").click();
    h.run_steps(3);
    assert!(!dialog_is_open(&h));
    assert!(h.query_by_label("Unsaved changes").is_some(), "asked again");
    assert_eq!(h.state().inspect().document().name, "built in");
    // Saved: the opening goes on.
    h.get_by_label("Save as…, then continue").click();
    h.run_steps(3);
    let saved = dir.path().join("first.ron");
    ui::set_field(&mut h, "File name:", &saved.display().to_string());
    h.get_by_label("Save").click();
    h.run_steps(4);
    assert_eq!(h.state().inspect().error(), None);
    assert_eq!(saved_scene(&saved).tree.margin, 2.5);
    assert!(h.query_by_label("Unsaved changes").is_none());
    assert_eq!(h.state().inspect().document().name, "C");
    assert_eq!(h.state().inspect().path(), Some(c.as_path()));
}

/// Save As over a file of another kind (a recording named `.ron`) is refused with
/// the save's error, and the file and the unsaved document are kept.
#[test]
fn save_as_over_a_file_of_another_kind_is_refused_and_the_file_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let code = dir.path().join("run.ron");
    std::fs::write(&code, "AABBREC\n").expect("write");
    let mut h = unsaved_harness();
    h.state_mut().push_command(Command::SaveAs(code.clone()));
    h.run_steps(2);
    assert_eq!(
        h.state().inspect().error(),
        Some(
            format!(
                "{}: holds a recording, not a scene; it was not replaced (give another path, or \
                 --force to replace it)",
                code.display()
            )
            .as_str()
        )
    );
    assert_eq!(std::fs::read_to_string(&code).expect("read"), "AABBREC\n");
    assert_eq!(h.state().inspect().path(), None);
}

/// A 70-unit world as the app saves one after some steps (the Advisor's scene is one), with
/// one sphere there almost resting (2.8e-6 a step, below the f32 spacing of 7.6e-6 at 70).
fn seventy_wide(offset: f32) -> String {
    format!(
        r#"(
    format_version: 1,
    name: "advisor",
    dimensions: 2,
    world: (min: ({o}, {o}), max: ({w}, {w})),
    dt: 0.016666668,
    tree: (margin: 0.05, velocity_lookahead: 0.0, insertion: SurfaceArea, balancing: Rotations, pairs: SelfTraversal),
    spheres: [
        (id: 0, center: ({a}, {b}), radius: 0.5, velocity: (0.000168, 0.0)),
        (id: 1, center: ({c}, {b}), radius: 0.4, velocity: (2.0, -1.0)),
    ],
    generate: None,
    view: None,
)"#,
        o = offset,
        w = offset + 70.0,
        a = offset + 69.0,
        b = offset + 35.0,
        c = offset + 20.0,
    )
}

#[test]
fn a_small_world_with_a_resting_sphere_opens_without_a_far_world_warning_a_far_one_warns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let near = dir.path().join("advisor.ron");
    // Saved by the app itself, then opened again.
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1280.0, 800.0)),
        Scene::parse(&seventy_wide(0.0), "advisor.ron", false).expect("valid"),
    );
    h.run_steps(2);
    h.state_mut().apply(Command::Step, false);
    h.state_mut().apply(Command::SaveAs(near.clone()), false);
    assert!(h.state().inspect().error().is_none());
    h.state_mut().apply(Command::Open(near.clone()), true);
    h.run_steps(2);
    let status = h.state().inspect().status().to_owned();
    assert_eq!(status, "Opened advisor.ron (2 spheres).");
    // The same world a million units out: f32 numbers there are 0.0625 apart, more than
    // 1% of the margin: it warns, naming the sphere and the cause.
    let far = dir.path().join("far.ron");
    std::fs::write(&far, seventy_wide(1.0e6)).expect("write");
    h.state_mut().apply(Command::Open(far.clone()), true);
    h.run_steps(2);
    assert_eq!(
        h.state().inspect().status(),
        "Opened far.ron (2 spheres). Warning: sphere 0 is at coordinates of 1.000069e6, where \
             f32 numbers (the tree's boxes) are 6.250e-2 apart, 125.0% of tree.margin (0.05): \
             its box is rounded that coarsely and moves in jumps (positions are simulated in \
             f64). Move the world nearer the origin for smooth boxes."
    );
}

#[test]
fn the_slow_dense_advisor_scene_saved_after_steps_reopens_without_a_far_world_warning() {
    let scene = Scene::load(&root_file("scenes/advisor-slow-dense.ron")).expect("the scene");
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1280.0, 800.0)),
        scene,
    );
    h.run_steps(2);
    for _ in 0..300 {
        h.state_mut().apply(Command::Step, false);
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("slow-dense.ron");
    h.state_mut().apply(Command::SaveAs(path.clone()), false);
    assert!(h.state().inspect().error().is_none());
    let saved = Scene::load(&path).expect("saved");
    // Some sphere there moves less in a step than f32 numbers are apart where it is: a
    // motion below the spacing, in a small world.
    let dt = f64::from(saved.dt);
    let resting = saved.spheres.iter().any(|s| {
        let far = s.center.x.abs().max(s.center.y.abs());
        let moves = f64::from(s.velocity.length()) * dt;
        moves > 0.0 && moves < f64::from(far.next_up() - far)
    });
    assert!(resting, "a sphere almost at rest");
    h.state_mut().apply(Command::Open(path), true);
    h.run_steps(2);
    assert_eq!(
        h.state().inspect().status(),
        "Opened slow-dense.ron (2000 spheres)."
    );
}
