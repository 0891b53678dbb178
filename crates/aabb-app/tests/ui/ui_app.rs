//! UI tests: drive the real debugger app headless with egui_kittest (no display needed): load,
//! play and step, the margin slider, layers, selecting and dragging a sphere, shared hover
//! between the tree and the world, a bad file, save-then-reopen, and saving over a read-only
//! file.

use aabb_app::prefs::ViewMode;
use aabb_app::{Command, DebuggerApp, Pick};
use aabb_model::broadphase::TreeRef;
use aabb_model::scene::Scene;
use eframe::egui;
use egui::accesskit::Role;
use egui::{Key, PointerButton, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use crate::common::ui;
use crate::common::ui::click_at;

/// Five spheres in a 20 x 12 box, margin 1: 2 and 5 touch, 3 moves.
const SCENE: &str = r#"(
    format_version: 1,
    name: "UI test",
    dimensions: 2,
    world: (min: (0.0, 0.0), max: (20.0, 12.0)),
    dt: 0.016666668,
    tree: (margin: 1.0, velocity_lookahead: 0.0, insertion: SurfaceArea, balancing: Rotations, pairs: SelfTraversal),
    spheres: [
        (id: 0, center: (3.0, 4.0), radius: 1.0, velocity: (0.0, 0.0)),
        (id: 1, center: (7.0, 4.0), radius: 1.0, velocity: (0.0, 0.0)),
        (id: 2, center: (12.0, 9.0), radius: 1.5, velocity: (0.0, 0.0)),
        (id: 3, center: (16.0, 3.0), radius: 1.0, velocity: (1.0, 0.5)),
        (id: 5, center: (12.0, 6.0), radius: 2.0, velocity: (0.0, 0.0)),
    ],
    generate: None,
    view: None,
)"#;

fn scene() -> Scene {
    Scene::parse(SCENE, "ui-test.ron", false).expect("the test scene is valid")
}

fn harness_with(scene: Scene) -> Harness<'static, DebuggerApp> {
    let mut harness = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1400.0, 900.0)),
        scene,
    );
    harness.state_mut().prefs_mut().view_mode = ViewMode::Both;
    harness.run_steps(3);
    harness
}

fn harness() -> Harness<'static, DebuggerApp> {
    harness_with(scene())
}

fn center_of(h: &Harness<'_, DebuggerApp>, id: u32) -> glam::Vec3 {
    h.state()
        .inspect()
        .sim()
        .spheres()
        .iter()
        .find(|b| b.sphere.id == id)
        .expect("sphere exists")
        .sphere
        .center
}

#[test]
fn loads_a_scene_and_draws_every_sphere_inside_the_world_view() {
    let h = harness();
    let app = h.state();
    assert_eq!(app.inspect().sim().spheres().len(), 5);
    assert_eq!(app.inspect().snapshot().spheres.len(), 5);
    assert_eq!(app.inspect().sim().step_index(), 0);
    assert!(!app.inspect().is_dirty());
    for id in [0, 1, 2, 3, 5] {
        let pos = app.inspect().sphere_screen_pos(id).expect("drawn");
        assert!(
            pos.x > 0.0 && pos.x < 1400.0 && pos.y > 0.0 && pos.y < 900.0,
            "{id} at {pos:?}"
        );
    }
    // Contacts: only 2 and 5 touch.
    assert_eq!(app.inspect().sim().report().contacts, vec![(2, 5)]);
    assert!(
        app.inspect().title().starts_with("UI test (not saved)"),
        "{}",
        app.inspect().title()
    );
}

#[test]
fn space_plays_and_pauses_and_n_and_right_step_once() {
    let mut h = harness();
    h.key_press(Key::Space);
    h.run_steps(5);
    assert!(h.state().inspect().is_playing());
    let played = h.state().inspect().sim().step_index();
    assert!(played >= 3, "played {played} steps");
    h.key_press(Key::Space);
    h.run_steps(2);
    assert!(!h.state().inspect().is_playing());
    let paused_at = h.state().inspect().sim().step_index();
    h.run_steps(3);
    assert_eq!(
        h.state().inspect().sim().step_index(),
        paused_at,
        "paused means no steps"
    );
    h.key_press(Key::N);
    h.run_steps(1);
    assert_eq!(h.state().inspect().sim().step_index(), paused_at + 1);
    h.key_press(Key::ArrowRight);
    h.run_steps(1);
    assert_eq!(h.state().inspect().sim().step_index(), paused_at + 2);
    // Sphere 3 moved at 1 unit/s along x for those steps.
    let dt = 1.0 / 60.0f32;
    let x = center_of(&h, 3).x;
    let expected = 16.0 + (paused_at + 2) as f32 * dt;
    assert!((x - expected).abs() < 1e-3, "x = {x}, expected {expected}");
    // R resets to step 0.
    h.key_press(Key::R);
    h.run_steps(1);
    assert_eq!(h.state().inspect().sim().step_index(), 0);
    assert_eq!(center_of(&h, 3).x, 16.0);
}

fn tree_margin(app: &DebuggerApp) -> f32 {
    match app.inspect().sim().broadphase().tree_view() {
        Some(TreeRef::D2(t)) => t.config().margin,
        Some(TreeRef::D3(t)) => t.config().margin,
        None => panic!("tree broad phase expected"),
    }
}

#[test]
fn margin_slider_changes_the_tree_margin_and_fat_boxes_at_once() {
    let mut h = harness();
    let before = h.state().inspect().fat_box(0).expect("fat box");
    assert_eq!(before.min.x, 1.0); // 3 - 1 - margin 1
    h.get_by_role_and_label(Role::Slider, "Margin")
        .set_value_accesskit(2.0);
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.inspect().document().tree.margin, 2.0);
    assert_eq!(tree_margin(app), 2.0);
    let after = app.inspect().fat_box(0).expect("fat box");
    assert_eq!(after.min.x, 0.0);
    assert_eq!(after.max.x, 6.0);
    assert!(app.inspect().is_dirty());
    // With margin 2 the fat boxes of 0 (x 0..6) and 1 (x 4..10) overlap: a candidate pair.
    assert!(
        app.inspect()
            .sim()
            .report()
            .candidate_pairs
            .contains(&(0, 1))
    );
    assert!(!app.inspect().sim().report().contacts.contains(&(0, 1)));
}

#[test]
fn a_layer_checkbox_switches_the_layer() {
    let mut h = harness();
    assert!(h.state().inspect().prefs().layers.leaves);
    h.get_by_role_and_label(Role::CheckBox, "Leaf boxes (blue)")
        .click();
    h.run_steps(2);
    assert!(!h.state().inspect().prefs().layers.leaves);
    h.get_by_role_and_label(Role::CheckBox, "Candidate pairs")
        .click();
    h.run_steps(2);
    assert!(h.state().inspect().prefs().layers.pairs);
}

#[test]
fn clicking_where_a_sphere_is_drawn_selects_it() {
    let mut h = harness();
    let pos = h.state().inspect().sphere_screen_pos(5).expect("drawn");
    click_at(&mut h, pos);
    assert_eq!(h.state().inspect().selection(), Some(Pick::Sphere(5)));
    // Clicking empty space (inside the walls, away from everything) clears it.
    let empty = h
        .state()
        .inspect()
        .screen_pos_of_world(glam::Vec2::new(18.5, 10.5))
        .expect("world view drawn");
    click_at(&mut h, empty);
    assert_eq!(h.state().inspect().selection(), None);
}

#[test]
fn dragging_within_the_margin_does_not_reinsert_and_out_of_it_reinserts_once() {
    let mut h = harness();
    let app = h.state();
    let from = app.inspect().sphere_screen_pos(0).expect("drawn");
    let inside = app
        .inspect()
        .screen_pos_of_world(glam::Vec2::new(3.5, 4.0))
        .expect("drawn");
    ui::drag(&mut h, PointerButton::Primary, from, inside, 4);
    let d = h.state().inspect().drag().expect("a drag happened");
    assert_eq!(d.id, 0);
    assert!(d.moves >= 1);
    assert_eq!(d.reinserts, 0, "{}", h.state().inspect().status());
    let c = center_of(&h, 0);
    assert!(
        (c.x - 3.5).abs() < 0.05 && (c.y - 4.0).abs() < 0.05,
        "{c:?}"
    );
    assert!(
        h.state().inspect().status().contains("not reinserted"),
        "{}",
        h.state().inspect().status()
    );
    assert_eq!(h.state().inspect().selection(), Some(Pick::Sphere(0)));

    // Far out of its fat box in one move: exactly one reinsert.
    let from = h.state().inspect().sphere_screen_pos(0).expect("drawn");
    let far = h
        .state()
        .inspect()
        .screen_pos_of_world(glam::Vec2::new(3.5, 9.0))
        .expect("drawn");
    ui::drag(&mut h, PointerButton::Primary, from, far, 1);
    let d = h.state().inspect().drag().expect("a drag happened");
    assert_eq!(d.reinserts, 1, "{}", h.state().inspect().status());
    assert!(
        h.state().inspect().status().contains("reinserted"),
        "{}",
        h.state().inspect().status()
    );
    let c = center_of(&h, 0);
    assert!((c.y - 9.0).abs() < 0.05, "{c:?}");
    assert!(h.state().inspect().is_dirty());
}

#[test]
fn hovering_a_tree_node_lights_its_box_in_the_world() {
    let mut h = harness();
    let (id, rect) = {
        let snap = h.state().inspect().snapshot();
        let node = snap
            .nodes
            .iter()
            .find(|n| n.children.is_some() && n.depth == 1)
            .or_else(|| snap.nodes.first())
            .expect("a tree");
        (node.id, node.rect)
    };
    let pos = h
        .state()
        .inspect()
        .tree_node_screen_pos(id)
        .expect("drawn in the tree view");
    h.hover_at(pos);
    h.run_steps(2);
    assert_eq!(h.state().inspect().hover(), Some(Pick::Node(id)));
    assert_eq!(h.state().inspect().world_highlight(), Some(rect));

    // And the reverse: hovering a sphere in the world marks its leaf.
    let pos = h.state().inspect().sphere_screen_pos(2).expect("drawn");
    h.hover_at(pos);
    h.run_steps(2);
    assert_eq!(h.state().inspect().hover(), Some(Pick::Sphere(2)));
    let fat = h.state().inspect().snapshot().sphere(2).and_then(|s| s.fat);
    assert_eq!(h.state().inspect().world_highlight(), fat);
}

#[test]
fn opening_a_bad_file_shows_its_error_and_keeps_the_scene() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.ron");
    std::fs::write(
        &bad,
        "( format_version: 1, name: \"broken\", dimensions: 2, world: ",
    )
    .expect("write");
    let mut h = harness();
    let before = h.state().inspect().sim().scene().expect("a scene");
    h.state_mut().push_command(Command::Open(bad.clone()));
    h.run_steps(2);
    let app = h.state();
    let error = app.inspect().error().expect("an error is shown");
    assert!(error.contains("bad.ron"), "{error}");
    let expected = Scene::load(&bad).expect_err("bad file").to_string();
    assert_eq!(error, expected, "the same message as `check`");
    assert_eq!(app.inspect().sim().scene(), Some(before));
    assert_eq!(app.inspect().path(), None);
    assert!(
        app.inspect().status().contains("unchanged"),
        "{}",
        app.inspect().status()
    );
}

#[test]
fn save_then_reopen_through_ui_commands_gives_the_same_scene() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("saved.ron");
    let mut h = harness();
    // Change something first so the save has to carry it.
    h.state_mut().push_command(Command::MoveSphere {
        id: 1,
        center: glam::Vec3::new(8.0, 5.0, 0.0),
    });
    h.run_steps(1);
    assert!(h.state().inspect().is_dirty());
    let before = h.state().inspect().sim().scene().expect("a scene");
    h.state_mut().push_command(Command::SaveAs(path.clone()));
    h.run_steps(1);
    assert!(
        !h.state().inspect().is_dirty(),
        "{}",
        h.state().inspect().status()
    );
    assert!(
        h.state().inspect().title().starts_with("saved.ron"),
        "{}",
        h.state().inspect().title()
    );
    h.state_mut().push_command(Command::Open(path.clone()));
    h.run_steps(1);
    let app = h.state();
    assert_eq!(
        app.inspect().error(),
        None,
        "{}",
        std::fs::read_to_string(&path).unwrap_or_default()
    );
    assert_eq!(app.inspect().path(), Some(path.as_path()));
    let mut after = app.inspect().sim().scene().expect("a scene");
    let mut before = before;
    assert!(after.view.is_some(), "the save includes the view");
    after.view = None;
    before.view = None;
    assert_eq!(after, before);
}

#[cfg(unix)]
#[test]
fn saving_over_a_read_only_file_asks_and_cancel_or_replace_do_what_they_say() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("locked.ron");
    std::fs::write(&path, "// old content\n(name: \"old\")\n").expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o7777;
    let question = format!("{} is read-only. Replace it?", path.display());
    let mut h = harness();
    h.state_mut().push_command(Command::MoveSphere {
        id: 1,
        center: glam::Vec3::new(8.0, 5.0, 0.0),
    });
    h.run_steps(1);
    assert!(h.state().inspect().is_dirty());
    let scene = h.state().inspect().sim().scene().expect("a scene");

    // The save is refused and the question is shown.
    h.state_mut().push_command(Command::SaveAs(path.clone()));
    h.run_steps(2);
    assert_eq!(
        h.state().inspect().status(),
        format!(
            "{} is read-only: replace it, or cancel the save?",
            path.display()
        )
    );
    assert!(
        h.query_by_label(&question).is_some(),
        "the question is shown"
    );
    assert_eq!(h.state().inspect().error(), None);

    // Cancel: the file and the scene are untouched, and the status line says so.
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(h.query_by_label(&question).is_none());
    assert_eq!(
        h.state().inspect().status(),
        format!(
            "Not saved: {} is read-only and was left unchanged.",
            path.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        "// old content\n(name: \"old\")\n"
    );
    assert_eq!(mode(&path), 0o444);
    assert!(h.state().inspect().is_dirty());
    assert_eq!(h.state().inspect().path(), None);
    assert_eq!(h.state().inspect().sim().scene(), Some(scene.clone()));

    // Again, and Replace: the scene is written, the file stays read-only.
    h.state_mut().push_command(Command::SaveAs(path.clone()));
    h.run_steps(2);
    h.get_by_label("Replace").click();
    h.run_steps(2);
    assert!(h.query_by_label(&question).is_none());
    assert_eq!(
        h.state().inspect().status(),
        format!("Saved {}.", path.display())
    );
    assert_eq!(h.state().inspect().error(), None);
    assert!(!h.state().inspect().is_dirty());
    assert_eq!(h.state().inspect().path(), Some(path.as_path()));
    assert_eq!(mode(&path), 0o444);
    let mut saved = Scene::load(&path).expect("the saved file loads");
    let mut expected = scene;
    assert!(saved.view.is_some(), "the save includes the view");
    saved.view = None;
    expected.view = None;
    assert_eq!(saved, expected);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("locked.ron")]);
}

#[test]
fn opening_with_unsaved_changes_asks_first() {
    let mut h = harness();
    h.state_mut().push_command(Command::DeleteSphere(3));
    h.run_steps(1);
    assert!(h.state().inspect().is_dirty());
    h.state_mut().push_command(Command::OpenBuiltin);
    h.run_steps(2);
    // Still the same document, and a question on screen.
    assert_eq!(h.state().inspect().document().name, "UI test");
    h.get_by_label("Discard changes").click();
    h.run_steps(2);
    assert_ne!(h.state().inspect().document().name, "UI test");
    assert!(!h.state().inspect().is_dirty());
}

#[test]
fn keys_add_and_delete_spheres() {
    let mut h = harness();
    let pos = h
        .state()
        .inspect()
        .screen_pos_of_world(glam::Vec2::new(17.0, 9.0))
        .expect("drawn");
    h.hover_at(pos);
    h.run_steps(1);
    h.key_press(Key::A);
    h.run_steps(2);
    let app = h.state();
    assert_eq!(
        app.inspect()
            .sim()
            .spheres()
            .iter()
            .filter(|b| b.alive)
            .count(),
        6
    );
    assert_eq!(app.inspect().selection(), Some(Pick::Sphere(6)));
    let c = center_of(&h, 6);
    assert!(
        (c.x - 17.0).abs() < 0.05 && (c.y - 9.0).abs() < 0.05,
        "{c:?}"
    );
    h.key_press(Key::Delete);
    h.run_steps(2);
    assert_eq!(
        h.state()
            .inspect()
            .sim()
            .spheres()
            .iter()
            .filter(|b| b.alive)
            .count(),
        5
    );
    assert_eq!(h.state().inspect().selection(), None);
    // With nothing selected, Delete removes nothing, not the sphere under the pointer (a
    // removal has no undo).
    let pos = h
        .state()
        .inspect()
        .screen_pos_of_world(glam::Vec2::new(c.x, c.y))
        .expect("drawn");
    h.key_press(Key::A);
    h.run_steps(2);
    h.key_press(Key::Escape);
    h.run_steps(1);
    h.hover_at(pos);
    h.run_steps(1);
    assert_eq!(h.state().inspect().selection(), None);
    h.key_press(Key::Delete);
    h.run_steps(2);
    assert_eq!(
        h.state()
            .inspect()
            .sim()
            .spheres()
            .iter()
            .filter(|b| b.alive)
            .count(),
        6
    );
}

/// Two columns of five spheres that run into each other at about step 54.
const CROSSING: &str = r#"(
    format_version: 1,
    name: "Crossing",
    dimensions: 2,
    world: (min: (0.0, 0.0), max: (40.0, 10.0)),
    tree: (margin: 0.1),
    spheres: [
        (id: 0, center: (2.0, 1.0), radius: 0.5, velocity: (20.0, 0.0)),
        (id: 1, center: (2.0, 3.0), radius: 0.5, velocity: (20.0, 0.0)),
        (id: 2, center: (2.0, 5.0), radius: 0.5, velocity: (20.0, 0.0)),
        (id: 3, center: (2.0, 7.0), radius: 0.5, velocity: (20.0, 0.0)),
        (id: 4, center: (2.0, 9.0), radius: 0.5, velocity: (20.0, 0.0)),
        (id: 10, center: (38.0, 1.0), radius: 0.5, velocity: (-20.0, 0.0)),
        (id: 11, center: (38.0, 3.0), radius: 0.5, velocity: (-20.0, 0.0)),
        (id: 12, center: (38.0, 5.0), radius: 0.5, velocity: (-20.0, 0.0)),
        (id: 13, center: (38.0, 7.0), radius: 0.5, velocity: (-20.0, 0.0)),
        (id: 14, center: (38.0, 9.0), radius: 0.5, velocity: (-20.0, 0.0)),
    ],
)"#;

#[test]
fn hitting_the_pair_limit_while_playing_pauses_keeps_the_scene_and_says_why() {
    let scene = Scene::parse(CROSSING, "crossing.ron", false).expect("valid");
    let mut h = harness_with(scene.clone());
    h.state_mut().push_command(Command::SetPairLimit(2));
    h.run_steps(2);
    assert_eq!(h.state().inspect().pair_limit(), 2);
    assert!(
        h.state().inspect().stopped().is_none(),
        "no pairs at step 0"
    );
    h.state_mut().prefs_mut().speed = 4.0;
    h.key_press(Key::Space);
    h.run_steps(1);
    assert!(h.state().inspect().is_playing());
    let mut frames = 0;
    while h.state().inspect().is_playing() && frames < 200 {
        h.run_steps(1);
        frames += 1;
    }
    let app = h.state();
    assert!(
        !app.inspect().is_playing(),
        "paused by the limit after {frames} frames"
    );
    let step = app.inspect().sim().step_index();
    assert!(
        (40..70).contains(&step),
        "the columns meet near step 54, stopped at {step}"
    );
    let message = app.inspect().stopped().expect("the reason is shown");
    assert!(
        message.starts_with(&format!("Step {step}: more than 2 candidate pairs")),
        "{message}"
    );
    assert!(message.contains("The scene is kept"), "{message}");
    assert!(
        app.inspect().status().starts_with("Paused: "),
        "{}",
        app.inspect().status()
    );
    // The scene is kept: every sphere, where the simulation left it; the document unchanged.
    assert_eq!(app.inspect().sim().spheres().len(), 10);
    assert!(app.inspect().sim().spheres().iter().all(|b| b.alive));
    assert_eq!(app.inspect().document(), &scene);
    assert!(app.inspect().sim().report().candidate_pairs.is_empty());
    // The message is on screen.
    assert!(
        h.get_all_by_label_contains("more than 2 candidate pairs")
            .count()
            >= 1
    );
    // Raising the limit finds the pairs and lets it play on.
    h.state_mut().push_command(Command::SetPairLimit(1000));
    h.run_steps(2);
    let app = h.state();
    assert!(app.inspect().stopped().is_none());
    assert!(app.inspect().sim().report().candidate_pairs.len() > 2);
    h.key_press(Key::Space);
    h.run_steps(3);
    assert!(h.state().inspect().sim().step_index() > step);
}

#[test]
fn space_pauses_with_a_number_field_or_slider_focused_but_types_in_free_text() {
    let mut h = harness();
    let limit = h.state().inspect().pair_limit();
    // A click on a number field edits it as text: Space still plays, and types nothing.
    h.get_by_label_contains("Pair limit").click();
    h.run_steps(2);
    assert!(h.get_by_label_contains("Pair limit").is_focused());
    h.key_press(Key::Space);
    h.run_steps(2);
    assert!(
        h.state().inspect().is_playing(),
        "Space in a number field plays"
    );
    // A focused slider: Space pauses.
    h.get_by_role_and_label(Role::Slider, "Margin").focus();
    h.run_steps(1);
    h.key_press(Key::Space);
    h.run_steps(1);
    assert!(
        !h.state().inspect().is_playing(),
        "Space with a slider focused pauses"
    );
    assert_eq!(h.state().inspect().pair_limit(), limit);
    // The Advisor's lists take spaces: Space types there.
    h.state_mut().push_command(Command::ShowAdvisor(true));
    h.run_steps(2);
    let field = h.get_by_label("Look-ahead values (s)");
    field.focus();
    h.run_steps(1);
    h.key_press(Key::Space);
    h.run_steps(1);
    assert!(
        !h.state().inspect().is_playing(),
        "Space in free text types"
    );
}

#[test]
fn the_branch_depth_range_survives_another_broad_phase_and_the_top_means_all() {
    use aabb_model::broadphase::BroadphaseKind;
    let mut h = harness();
    let all = (
        h.state().inspect().prefs().branch_depth_min,
        h.state().inspect().prefs().branch_depth_max,
    );
    assert_eq!(all, (0, u32::MAX));
    h.state_mut()
        .push_command(Command::SetBroadphase(BroadphaseKind::Brute));
    h.run_steps(3);
    h.state_mut()
        .push_command(Command::SetBroadphase(BroadphaseKind::Tree));
    h.run_steps(3);
    let now = (
        h.state().inspect().prefs().branch_depth_min,
        h.state().inspect().prefs().branch_depth_max,
    );
    assert_eq!(now, all, "showing no tree does not narrow the range");
    // The user narrows it: kept; then the top of the slider is "to the bottom" again.
    let deepest = h.state().inspect().snapshot().max_depth;
    assert!(deepest >= 2, "deepest {deepest}");
    h.get_by_role_and_label(Role::Slider, "… to depth")
        .set_value_accesskit(1.0);
    h.run_steps(2);
    assert_eq!(h.state().inspect().prefs().branch_depth_max, 1);
    h.get_by_role_and_label(Role::Slider, "… to depth")
        .set_value_accesskit(f64::from(deepest));
    h.run_steps(2);
    assert_eq!(h.state().inspect().prefs().branch_depth_max, u32::MAX);
}

#[test]
fn generated_spheres_at_a_density_grow_the_world_and_stay_inside_it() {
    use aabb_model::scene::Generate;
    let mut h = harness();
    let before = h.state().inspect().document().world;
    h.state_mut()
        .push_command(Command::SetGenerator(Some(Generate {
            count: 20_000,
            radius: (0.3, 1.0),
            speed: (0.0, 3.0),
            seed: 7,
            density: Some(0.1),
        })));
    h.run_steps(2);
    let app = h.state();
    let world = app.inspect().document().world;
    assert_eq!(
        app.inspect().sim().as_scene().expect("a scene").world(),
        world,
        "the document shows the world it runs in"
    );
    let size = world.max - world.min;
    let area = f64::from(size.x) * f64::from(size.y);
    // 20,000 spheres of mean area pi (0.09 + 0.3 + 1) / 3, a tenth of the world.
    let want = 20_000.0 * std::f64::consts::PI * (0.09 + 0.3 + 1.0) / 3.0 / 0.1;
    assert!(
        area >= want * 0.9999 && area <= want * 1.0001,
        "{area} against {want}"
    );
    assert!(size.x > (before.max - before.min).x);
    assert!(
        app.inspect().status().contains("the world grew"),
        "{}",
        app.inspect().status()
    );
    for b in app.inspect().sim().spheres() {
        let (c, r) = (b.sphere.center, b.sphere.radius);
        assert!(c.x - r >= world.min.x && c.x + r <= world.max.x, "{c:?}");
        assert!(c.y - r >= world.min.y && c.y + r <= world.max.y, "{c:?}");
    }
}

/// The tree's settings in the running broad phase.
fn tree_config(app: &DebuggerApp) -> aabb_model::tree::TreeConfig {
    match app.inspect().sim().broadphase().tree_view() {
        Some(TreeRef::D2(t)) => *t.config(),
        Some(TreeRef::D3(t)) => *t.config(),
        None => panic!("tree broad phase expected"),
    }
}

#[test]
fn the_options_menu_sets_the_rebuild_method_and_the_optimization_share() {
    use aabb_model::tree::RebuildMethod;
    let mut h = harness();
    assert_eq!(
        h.state().inspect().document().tree.rebuild,
        RebuildMethod::BinnedSah
    );
    h.get_by_label("Options…").click();
    h.run_steps(2);
    h.get_by_label("Agglomerative (PLOC, bottom-up)").click();
    h.run_steps(2);
    assert_eq!(
        h.state().inspect().document().tree.rebuild,
        RebuildMethod::Agglomerative
    );
    assert_eq!(tree_config(h.state()).rebuild, RebuildMethod::Agglomerative);
    if h.query_by_label_contains("Optimize share").is_none() {
        h.get_by_label("Options…").click();
        h.run_steps(2);
    }
    h.get_by_label_contains("Optimize share")
        .set_value_accesskit(0.25);
    h.run_steps(2);
    assert_eq!(h.state().inspect().document().tree.optimize_share, 0.25);
    assert_eq!(tree_config(h.state()).optimize_share, 0.25);
    assert!(h.state().inspect().is_dirty());
}

/// Spheres all at one point, each drawn large: every circle, leaf box and branch box lands on
/// the same spot, so no level of detail thins them out (the window ended at 100,000 such
/// spheres: 14 million vertices in one frame, past the 256 MiB buffer wgpu takes; and with
/// fewer, a software renderer shaded the view some 80,000 times over, no frame within five
/// minutes). Each view's mesh stops at a cap of whole shapes, of vertices and of ink (the
/// area its shapes cover), so the frame stays under both; and the tree diagram of a list as
/// deep as the spheres are many is laid out in linear time (it took the depth times the
/// leaves before: no frame within a minute at 100,000).
#[test]
fn a_crowd_at_one_point_is_drawn_within_the_vertex_budget() {
    use aabb_app::mesh::MAX_WORLD_VERTICES;
    let spheres: Vec<String> = (0..60_000)
        .map(|id| format!("(id: {id}, center: (5.0, 5.0), radius: 4.0, velocity: (0.0, 0.0))"))
        .collect();
    let text = format!(
        "(format_version: 1, dimensions: 2, world: (min: (0.0, 0.0), max: (10.0, 10.0)), \
         spheres: [{}])",
        spheres.join(", ")
    );
    let scene = Scene::parse(&text, "crowd.ron", false).expect("valid");
    let h = harness_with(scene);
    let stats = h.state().inspect().sim().report().tree.expect("a tree");
    assert_eq!((stats.leaves, stats.height), (60_000, 59_999), "a list");
    let output = h.output().clone();
    let primitives = h.ctx.tessellate(output.shapes, output.pixels_per_point);
    let sizes: Vec<usize> = primitives
        .iter()
        .filter_map(|p| match &p.primitive {
            egui::epaint::Primitive::Mesh(mesh) => Some(mesh.vertices.len()),
            egui::epaint::Primitive::Callback(_) => None,
        })
        .collect();
    let total: usize = sizes.iter().sum();
    // The shapes would take about 11.7 million vertices; the world's ink cap (64 times its
    // area) stops its mesh long before the vertex cap: at a few thousand branch boxes.
    let largest = sizes.iter().copied().max().unwrap_or(0);
    assert!(
        (10_000..MAX_WORLD_VERTICES / 100).contains(&largest),
        "{sizes:?}"
    );
    let wgpu_limit = (256 << 20) / std::mem::size_of::<egui::epaint::Vertex>();
    assert!(total < wgpu_limit, "{total} vertices in the frame");
}

/// The Broad phase panel's "Box2D's tree": a click runs Box2D's own tree (the same pairs as
/// ours); its tree, read node by node, is drawn by both views as ours is and measured under
/// Statistics.
#[test]
fn box2d_is_picked_under_broad_phase_and_gives_the_same_pairs() {
    use aabb_model::broadphase::BroadphaseKind;
    let mut h = harness();
    let ours = h.state().inspect().sim().report().candidate_pairs.clone();
    assert!(!ours.is_empty());
    h.get_by_label("Box2D's tree").click();
    h.run_steps(3);
    assert_eq!(
        h.state().inspect().sim().broadphase_kind(),
        BroadphaseKind::Box2d
    );
    assert_eq!(h.state().inspect().sim().report().candidate_pairs, ours);
    // Both views draw Box2D's own nodes as they draw ours: the tree view's diagram holds its
    // root, and every sphere sits in one of its leaves.
    let _ = h.get_by_label("Box2D's tree (its own nodes)");
    let snap = h.state().inspect().snapshot();
    let root = snap
        .nodes
        .first()
        .expect("Box2D's nodes in the snapshot")
        .id;
    assert!(
        h.state().inspect().tree_node_screen_pos(root).is_some(),
        "the diagram draws it"
    );
    let leaves = snap.nodes.iter().filter(|n| n.sphere.is_some()).count();
    assert_eq!(leaves, snap.spheres.len());
    assert!(
        snap.spheres
            .iter()
            .all(|s| s.node.is_some() && s.fat.is_some())
    );
    let foreign = h
        .state()
        .inspect()
        .snapshot()
        .foreign_tree
        .as_ref()
        .expect("Box2D's tree, read");
    // Checked against the step's boxes: one leaf a sphere.
    let health = foreign
        .health
        .as_ref()
        .expect("measured")
        .as_ref()
        .expect("Box2D's tree holds the spheres");
    assert_eq!(health.leaves, h.state().inspect().sim().live_count());
    assert!(
        h.get_all_by_label_contains("x a fresh build")
            .next()
            .is_some(),
        "its cost against a fresh build is shown"
    );
}
