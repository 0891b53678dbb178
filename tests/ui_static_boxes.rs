//! The window on a scene of static boxes (as `import-boxes` makes one): a sphere added with
//! the mouse takes an id no box has, and saving keeps the boxes.

#![cfg(feature = "app")]

use aabb_debugger::app::Command;
use aabb_debugger::cli::import_boxes::scene_of;
use aabb_debugger::scene::Scene;
use aabb_debugger::scene::boxlist::parse_box_list;
use eframe::egui::Vec2;
use egui_kittest::Harness;
use glam::Vec3;

#[path = "common/ui.rs"]
mod ui;

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
        .sim()
        .spheres()
        .iter()
        .map(|b| b.sphere.id)
        .collect();
    assert_eq!(ids, [3]);
    let report = h.state().sim().report();
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
