//! The generator in the controls (egui_kittest): the count typed is the count generated,
//! whatever the scene lists beside it (a million on the built-in scene, its 3 listed spheres
//! with them); a refused generator keeps the typed count and density in their fields.

use aabb_app::{Command, DebuggerApp};
use aabb_model::scene::{MAX_SPHERES, Scene};
use eframe::egui::{Key, Modifiers, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};

use crate::common::ui;

/// The number a field labelled `label` shows (the first such node).
fn number_of(h: &Harness<'_, DebuggerApp>, label: &str) -> Option<f64> {
    h.get_all_by_label(label)
        .next()
        .and_then(|n| n.accesskit_node().numeric_value())
}

/// Types `text` into the number field labelled `label` (a click opens its text; all of it
/// is replaced; Enter takes it).
fn type_number(h: &mut Harness<'_, DebuggerApp>, label: &str, text: &str) {
    h.get_all_by_label(label)
        .last()
        .unwrap_or_else(|| panic!("a {label} field"))
        .click();
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.run_steps(1);
    h.get_all_by_label(label)
        .last()
        .unwrap_or_else(|| panic!("a {label} field"))
        .type_text(text);
    h.run_steps(1);
    h.key_press(Key::Enter);
    h.run_steps(2);
}

#[test]
fn a_million_generated_on_the_built_in_scene_are_a_million_beside_its_three_listed() {
    let scene = Scene::builtin_default();
    assert_eq!(scene.spheres.len(), 3);
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1440.0, 1200.0)),
        scene.clone(),
    );
    h.run_steps(2);
    let mut g = scene.generate.expect("the built-in scene generates");
    g.count = MAX_SPHERES as u32;
    g.density = Some(0.1);
    h.state_mut().apply(Command::SetGenerator(Some(g)), false);
    let status = h.state().inspect().status().to_owned();
    assert!(
        status.starts_with("Generator applied; the world grew to "),
        "{status}"
    );
    assert_eq!(
        h.state().inspect().document().generate.map(|g| g.count),
        Some(1_000_000)
    );
    assert_eq!(h.state().inspect().sim().live_count(), 1_000_003);
    h.run_steps(1);
    assert_eq!(number_of(&h, "Count"), Some(1_000_000.0));
}

#[test]
fn a_refused_generator_keeps_the_typed_count_and_density() {
    // Spheres this large at a low density would need a world wider than the limit.
    let text = r#"(
    format_version: 1,
    dimensions: 2,
    world: (min: (0.0, 0.0), max: (200.0, 200.0)),
    dt: 0.016666668,
    tree: (margin: 0.1),
    spheres: [],
    generate: Some((count: 10, radius: (100000.0, 100000.0), speed: (0.0, 1.0), seed: 5, density: Some(0.5))),
    view: None,
)"#;
    let scene = Scene::parse(text, "large.ron", false).expect("valid");
    let mut h = ui::app_harness(
        Harness::builder().with_size(Vec2::new(1440.0, 1200.0)),
        scene,
    );
    h.run_steps(2);
    assert_eq!(number_of(&h, "Count"), Some(10.0));
    type_number(&mut h, "Count", "1000000");
    type_number(&mut h, "Density", "0.002");
    assert_eq!(number_of(&h, "Count"), Some(1_000_000.0));
    h.get_by_label("Apply (restarts)").click();
    h.run_steps(2);
    assert_eq!(
        h.state().inspect().status(),
        "Generator refused: generate.density: 1000000 spheres at density 0.002 would \
         need a world wider than 1000000000 units"
    );
    assert_eq!(
        h.state().inspect().document().generate.map(|g| g.count),
        Some(10)
    );
    // The fields still say what was typed, to be corrected.
    assert_eq!(number_of(&h, "Count"), Some(1_000_000.0));
    let density = h
        .get_all_by_label("Density")
        .filter_map(|n| n.accesskit_node().numeric_value())
        .next();
    assert_eq!(density, Some(f64::from(0.002f32)));
}
