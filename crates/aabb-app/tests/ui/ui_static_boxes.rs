//! The window on a scene of static boxes (as `import-boxes` makes one): a sphere added with
//! the mouse takes an id no box has, and saving keeps the boxes.

use aabb_app::Command;
use aabb_model::scene::Scene;
use aabb_model::scene::boxlist::parse_box_list;
use aabb_model::scene::boxlist::scene_of;
use eframe::egui::Vec2;
use egui_kittest::Harness;
use glam::Vec3;

use crate::common::ui;

#[test]
fn a_sphere_added_to_a_level_takes_a_free_id_and_a_save_keeps_the_boxes() {
    let set = parse_box_list("0 0 10 1\n2 3 4 5\n6 2 8 3\n", "level.txt").expect("a list");
    let scene = scene_of(&set, "level".to_owned(), 0);
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(900.0, 600.0)),
        scene.clone(),
    );
    h.run_steps(2);
    h.state_mut().push_command(Command::AddSphere {
        center: Vec3::new(5.0, 2.0, 0.0),
    });
    h.run_steps(2);
    // Boxes 0, 1 and 2: the sphere is 3. With no sphere to take the median radius of, its
    // radius is 1: from (4, 1) to (6, 3), it touches the floor (0 to 1 in y) and box 2 at
    // (6, 2), 1 away, and only the fat box of box 1, whose corner (4, 3) is 1.41 away.
    let ids: Vec<u32> = h
        .state()
        .inspect()
        .sim()
        .spheres()
        .iter()
        .map(|b| b.sphere.id)
        .collect();
    assert_eq!(ids, [3]);
    let report = h.state().inspect().sim().report();
    assert_eq!(report.candidate_pairs, [(0, 3), (1, 3), (2, 3)]);
    assert_eq!(report.contacts, [(0, 3), (2, 3)]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("level.ron");
    h.state_mut().push_command(Command::SaveAs(path.clone()));
    h.run_steps(2);
    let saved = Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(saved.boxes, scene.boxes);
    assert_eq!(saved.spheres.len(), 1);
}

/// Open on a box list (here in Catto's corner lines) imports it as `import-boxes` would: a new
/// scene of its static boxes named after the file, not yet saved, the list on the recent list;
/// Save As keeps it. A malformed list is refused with the list's own message, and the open
/// scene stays.
#[test]
fn open_imports_a_box_list_as_a_new_scene_and_refuses_a_malformed_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = dir.path().join("level.txt");
    let text =
        "# two walls and a floor\nv 0 0 0\nv 10 1 10\nv 0 1 0\nv 1 4 10\nv 9 1 0\nv 10 4 10\n";
    std::fs::write(&list, text).expect("write");
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(900.0, 600.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    h.state_mut().push_command(Command::Open(list.clone()));
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.inspect().error(), None);
    assert_eq!(app.inspect().path(), None, "a new scene, not the list");
    assert!(!app.inspect().is_dirty());
    let want = scene_of(
        &parse_box_list(text, "level.txt").expect("a list"),
        "level".into(),
        0,
    );
    assert_eq!(app.inspect().document().boxes, want.boxes);
    assert_eq!(app.inspect().document().name, "level");
    assert_eq!(app.inspect().document().dimensions, 3);
    assert_eq!(
        app.inspect().sim().scene().map(|s| s.boxes),
        Some(want.boxes.clone())
    );
    assert!(app.inspect().sim().spheres().is_empty());
    assert_eq!(
        app.inspect().status(),
        format!(
            "Imported 3 static boxes (3D) from {} as a new scene, not yet saved: Save asks \
             where to keep it.",
            list.display()
        )
    );
    assert_eq!(app.inspect().prefs().recent_files.first(), Some(&list));
    let saved = dir.path().join("level.ron");
    h.state_mut().push_command(Command::SaveAs(saved.clone()));
    h.run_steps(2);
    assert_eq!(h.state().inspect().path(), Some(saved.as_path()));
    let scene = Scene::load(&saved).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.boxes, want.boxes);

    let bad = dir.path().join("bad.boxes");
    std::fs::write(&bad, "v 0 0 0\nv 1 1 1\nv 2 2 2\n").expect("write");
    h.state_mut().push_command(Command::Open(bad.clone()));
    h.run_steps(2);
    let app = h.state();
    let error = app.inspect().error().expect("an error is shown");
    assert_eq!(
        error,
        format!(
            "{}:3: a lower corner without its upper one (a box is two corner lines: `v minx \
             miny minz`, then `v maxx maxy maxz`)",
            bad.display()
        )
    );
    assert_eq!(
        app.inspect().path(),
        Some(saved.as_path()),
        "the open scene stays"
    );
    assert_eq!(app.inspect().document().boxes, want.boxes);
    assert!(
        app.inspect()
            .status()
            .starts_with("Could not import the box list"),
        "{}",
        app.inspect().status()
    );

    // A list named so, but holding no box yet, is refused by the box list's reader.
    let empty = dir.path().join("notes.txt");
    std::fs::write(&empty, "# walls go here\n\n").expect("write");
    h.state_mut().push_command(Command::Open(empty.clone()));
    h.run_steps(2);
    let app = h.state();
    assert_eq!(
        app.inspect().error(),
        Some(format!("{}: no boxes (no line holds a box)", empty.display()).as_str())
    );
    assert_eq!(
        app.inspect().path(),
        Some(saved.as_path()),
        "the open scene stays"
    );
}

/// An imported list's warnings are on the status line after the import, as after opening a
/// scene: here six boxes alike overlap in 15 pairs, more than half the pair limit of 20.
#[test]
fn an_imported_box_list_says_its_warnings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = dir.path().join("stack.boxes");
    let text = "0 0 0 1 1 1\n".repeat(6);
    std::fs::write(&list, &text).expect("write");
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(900.0, 600.0)),
        Scene::builtin_default(),
    );
    h.run_steps(2);
    h.state_mut().push_command(Command::SetPairLimit(20));
    h.state_mut().push_command(Command::Open(list.clone()));
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.inspect().error(), None);
    let want = scene_of(
        &parse_box_list(&text, "stack.boxes").expect("a list"),
        "stack".into(),
        0,
    );
    let warnings = want.warnings(20);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(
        app.inspect().status(),
        format!(
            "Imported 6 static boxes (3D) from {} as a new scene, not yet saved: Save asks \
             where to keep it. Warning: {}.",
            list.display(),
            warnings[0]
        )
    );
}
