//! Scene files: every example scene round-trips through RON and JSON text and through atomic
//! saves; generated spheres are deterministic and inside the world.

use aabb_debugger::scene::{Generate, Scene, Sphere, StaticBox};
use aabb_debugger::tree::Balancing;
use glam::Vec3;
use std::path::{Path, PathBuf};

fn scene_files() -> Vec<PathBuf> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("scenes/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    files.sort();
    files
}

/// A scene with every optional field set and awkward numbers, 2D or 3D.
fn awkward_scene(dimensions: u8) -> Scene {
    let mut scene = Scene::builtin_default();
    scene.dimensions = dimensions;
    scene.world.max.z = if dimensions == 3 { 9.75 } else { 0.0 };
    if dimensions == 3 {
        // The built-in scene is 2D (z = 0): lift its spheres to the middle of the new depth.
        for s in &mut scene.spheres {
            s.center.z = 4.875;
        }
    }
    scene.dt = 1.0 / 120.0;
    scene.tree.velocity_lookahead = 0.123_456_79;
    scene.tree.update = aabb_debugger::tree::UpdateMode::EnlargeAndRebuild;
    scene.tree.pairs = aabb_debugger::tree::PairMethod::MovedQueries;
    scene.view = Some(aabb_debugger::scene::ViewSettings {
        center: Some((1.5, -2.25)),
        zoom: Some(17.0),
        layers: Some(vec!["branches".to_owned(), "leaves".to_owned()]),
        plane: Some("XZ".to_owned()),
        branch_letters: Some(true),
        fit_content: Some(true),
        caption: Some("A caption: \"quoted\", Ünïcode, r#None".to_owned()),
        generator: Some(Box::new(aabb_debugger::scene::Generate {
            count: 1234,
            radius: (0.25, 0.75),
            speed: (0.5, 2.0),
            seed: 987_654_321,
            density: Some(0.125),
        })),
        pair_cost: Some(12.5),
    });
    let z = |v: f32| if dimensions == 3 { v } else { 0.0 };
    scene.spheres.push(Sphere {
        id: 40_000,
        label: Some("Ünïcode \"quoted\"".to_owned()),
        center: Vec3::new(10.1, 3.3, z(4.9)),
        radius: 0.1 + 0.2,
        velocity: Vec3::new(-1.0e-7, 3.0e7, z(-0.0)),
        appear_at: 12,
        disappear_at: Some(u64::MAX),
    });
    // Static boxes in no id order, one flat, one touching the walls, awkward numbers.
    scene.boxes = vec![
        StaticBox {
            id: 60_001,
            min: Vec3::new(0.1 + 0.2, 1.0e-7, z(0.0)),
            max: Vec3::new(7.25, 1.0e-7, z(9.75)),
        },
        StaticBox {
            id: 3,
            min: Vec3::new(0.0, 0.0, z(0.0)),
            max: Vec3::new(40.0, 1.0 / 3.0, z(2.5)),
        },
    ];
    scene.generate = Some(Generate {
        count: 33,
        radius: (0.25, 0.5),
        speed: (0.0, 0.1),
        seed: u64::MAX,
        density: Some(0.3),
    });
    scene
}

#[test]
fn every_scene_file_round_trips_through_ron_and_json_text() {
    let files = scene_files();
    // 14 article figures, stress-5000, random-1000, spheres-3d, the built-in default, the
    // three advisor scenes and a level of static boxes.
    assert_eq!(files.len(), 22, "{} scene files", files.len());
    for path in files {
        let scene = Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
        for json in [false, true] {
            let text = scene.to_text(json).expect("text");
            let back = Scene::parse(&text, "copy", json).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(back, scene, "{} (json: {json})", path.display());
        }
    }
}

/// A scene without static boxes is written without `boxes`: files from before static boxes
/// read and save as they did. One with them writes them one a line and reads them back.
#[test]
fn boxes_are_left_out_when_empty_and_written_one_a_line_when_not() {
    for path in scene_files() {
        let scene = Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
        for json in [false, true] {
            let text = scene.to_text(json).expect("text");
            let again = Scene::parse(&text, "copy", json).expect("parse");
            assert_eq!(
                again.to_text(json).expect("text"),
                text,
                "{}",
                path.display()
            );
            let field = if json { "\"boxes\": [" } else { "boxes: [" };
            assert_eq!(
                text.contains(field),
                !scene.boxes.is_empty(),
                "{}",
                path.display()
            );
        }
    }
    let scene = awkward_scene(2);
    let ron = scene.to_text(false).expect("text");
    assert!(
        ron.contains(
            "    boxes: [\n        (id: 60001, min: (0.3, 1e-7), max: (7.25, 1e-7)),\n        \
             (id: 3, min: (0.0, 0.0), max: (40.0, 0.33333334)),\n    ],\n"
        ),
        "{ron}"
    );
    let json = scene.to_text(true).expect("text");
    assert!(
        json.contains(
            "\"boxes\": [\n    {\"id\":60001,\"min\":[0.3,1e-7],\"max\":[7.25,1e-7]},\n    \
             {\"id\":3,\"min\":[0.0,0.0],\"max\":[40.0,0.33333334]}\n  ],\n"
        ),
        "{json}"
    );
}

#[test]
fn awkward_scenes_round_trip_through_saves_in_both_formats() {
    let dir = tempfile::tempdir().expect("temp dir");
    for dims in [2, 3] {
        let scene = awkward_scene(dims);
        scene.validate("awkward").expect("valid");
        for name in ["s.ron", "s.json", "S.JSON"] {
            let path = dir.path().join(name);
            scene.save(&path).expect("save");
            assert_eq!(Scene::load(&path).expect("load"), scene, "{name} {dims}D");
        }
    }
    let json = std::fs::read_to_string(dir.path().join("s.json")).expect("read");
    assert!(json.trim_start().starts_with('{'));
    let ron = std::fs::read_to_string(dir.path().join("s.ron")).expect("read");
    assert!(ron.trim_start().starts_with('('));
    // Nothing but the saved files is left beside them.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["S.JSON", "s.json", "s.ron"]);
}

#[test]
fn a_save_replaces_the_old_file_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("scene.ron");
    std::fs::write(
        &path,
        // An older scene, much longer than the new one.
        format!(
            "// {}\n(name: \"old\")\n",
            "old contents that are much longer than nothing ".repeat(1000)
        ),
    )
    .expect("write");
    let scene = Scene::load(&scene_files()[0]).expect("load");
    scene.save(&path).expect("save");
    assert_eq!(Scene::load(&path).expect("load"), scene);
}

#[test]
fn a_failed_save_leaves_no_file_behind() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("missing-dir").join("scene.ron");
    let scene = Scene::builtin_default();
    let err = scene.save(&path).expect_err("no directory");
    assert!(
        err.to_string().starts_with(&path.display().to_string()),
        "{err}"
    );
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 0);
}

#[test]
fn an_invalid_scene_is_not_saved() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.ron");
    let mut scene = Scene::builtin_default();
    scene.spheres[0].radius = -2.0;
    let err = scene.save(&path).expect_err("invalid");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: spheres[0] (id 0): radius must be > 0, got -2",
            path.display()
        )
    );
    assert!(!path.exists());
}

#[test]
fn the_builtin_default_is_the_scenes_default_file() {
    let from_file = Scene::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/default.ron"
    )))
    .expect("load");
    assert_eq!(Scene::builtin_default(), from_file);
    assert!(from_file.sphere_count() >= 50);
}

#[test]
fn generated_spheres_are_deterministic_distinct_and_inside_the_world() {
    for dims in [2, 3] {
        let scene = awkward_scene(dims);
        let a = scene.all_spheres();
        assert_eq!(a, scene.all_spheres());
        assert_eq!(a.len(), scene.sphere_count());
        let ids: Vec<u32> = a.iter().map(|s| s.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted, "sorted and distinct");
        // Generated ids follow the largest listed id, a sphere's or (here) a static box's.
        assert_eq!(*ids.last().expect("some"), 60_001 + 33);
        let (min, max) = (scene.world.min, scene.world.max);
        let g = scene.generate.expect("generate");
        for s in a.iter().filter(|s| s.id > 40_000) {
            assert!(s.radius >= g.radius.0 && s.radius <= g.radius.1);
            let speed = s.velocity.length();
            assert!(speed <= g.speed.1 * 1.0001, "speed {speed}");
            for axis in 0..usize::from(dims) {
                assert!(s.center[axis] >= min[axis] + s.radius);
                assert!(s.center[axis] <= max[axis] - s.radius);
            }
            if dims == 2 {
                assert_eq!((s.center.z, s.velocity.z), (0.0, 0.0));
            }
        }
        // Each sphere, listed or generated, passes the scene's own rules.
        let mut listed = scene.clone();
        listed.spheres = a.clone();
        listed.generate = None;
        listed.validate("listed").expect("valid");
        // Another seed gives other spheres.
        let mut other = scene.clone();
        other.generate = Some(Generate { seed: 7, ..g });
        assert_ne!(other.all_spheres(), a);
    }
}

#[test]
fn a_seed_always_gives_the_same_spheres() {
    // Golden values: these must never change, on any platform or crate version, or saved
    // scenes would change under their users.
    let scene = Scene::parse(
        "(format_version: 1, dimensions: 2, world: (min: (0.0, 0.0), max: (100.0, 50.0)),
          generate: Some((count: 3, radius: (0.5, 1.5), speed: (0.0, 2.0), seed: 42)))",
        "golden.ron",
        false,
    )
    .expect("valid");
    let bits: Vec<[u32; 5]> = scene
        .all_spheres()
        .iter()
        .map(|s| {
            [
                s.radius.to_bits(),
                s.center.x.to_bits(),
                s.center.y.to_bits(),
                s.velocity.x.to_bits(),
                s.velocity.y.to_bits(),
            ]
        })
        .collect();
    assert_eq!(bits, GOLDEN_SEED_42, "{bits:#x?}");
}

/// Bits of (radius, center x, center y, velocity x, velocity y) for seed 42, computed by an
/// independent emulation of PCG32 and the f32 operations of `scene/generate.rs`.
const GOLDEN_SEED_42: [[u32; 5]; 3] = [
    [0x3f9ed6ef, 0x425704b6, 0x414a1806, 0x3cf75729, 0xbd08478c],
    [0x3f836a0e, 0x41bed8e7, 0x416a1f3a, 0x3f45687e, 0x3f137166],
    [0x3f624682, 0x41a7ddf7, 0x4226e282, 0x3f4437a4, 0x3f796550],
];

#[test]
fn optional_fields_take_their_defaults() {
    let scene = Scene::parse(
        "(format_version: 1, dimensions: 3,
          world: (min: (0.0, 0.0, 0.0), max: (10.0, 10.0, 10.0)),
          spheres: [(id: 4, center: (5.0, 5.0, 5.0), radius: 1.0, disappear_at: 9)])",
        "short.ron",
        false,
    )
    .expect("valid");
    assert_eq!(scene.name, "");
    assert_eq!(scene.dt, 1.0 / 60.0);
    assert_eq!(
        scene.tree.margin,
        aabb_debugger::tree::TreeConfig::default().margin
    );
    let s = &scene.spheres[0];
    assert_eq!(
        (s.label.as_deref(), s.velocity, s.appear_at, s.disappear_at),
        (None, Vec3::ZERO, 0, Some(9))
    );
}

#[test]
fn the_update_mode_is_optional_and_written_only_when_not_the_default() {
    use aabb_debugger::tree::UpdateMode;
    let text = "(format_version: 1, dimensions: 2, world: (min: (0.0, 0.0), max: (9.0, 9.0)),
          tree: (update: Reinsert), spheres: [])";
    let mut scene = Scene::parse(text, "update.ron", false).expect("valid");
    assert_eq!(scene.tree.update, UpdateMode::Reinsert);
    let ron = scene.to_text(false).expect("text");
    assert!(ron.contains("update: Reinsert"), "{ron}");
    scene.tree.update = UpdateMode::default();
    for json in [false, true] {
        let text = scene.to_text(json).expect("text");
        assert!(!text.contains("update"), "{text}");
        assert_eq!(Scene::parse(&text, "copy", json).expect("valid"), scene);
    }
    let err = Scene::parse(
        "(format_version: 1, dimensions: 2, world: (min: (0.0, 0.0), max: (9.0, 9.0)),
          tree: (update: Sometimes), spheres: [])",
        "bad.ron",
        false,
    )
    .expect_err("unknown mode");
    assert!(err.to_string().starts_with("bad.ron:2:"), "{err}");
}

#[test]
fn a_saved_scene_says_balancing_none_plainly_and_keeps_strings_as_they_are() {
    let mut scene = Scene::load(Path::new("scenes/choi-appear-disappear.ron")).expect("scene");
    assert_eq!(scene.tree.balancing, Balancing::None);
    // A name that holds what the fix rewrites outside strings must come back unchanged.
    scene.name = r#"quote " and balancing: r#None"#.to_owned();
    let text = scene.to_text(false).expect("text");
    assert!(text.contains("balancing: None,"), "{text}");
    assert_eq!(
        text.matches("r#").count(),
        1,
        "only inside the name: {text}"
    );
    let back = Scene::parse(&text, "copy", false).expect("reads back");
    assert_eq!(back, scene);
}

#[test]
fn the_rebuild_method_and_optimization_share_round_trip_and_are_optional() {
    let mut scene = Scene::builtin_default();
    let default_text = scene.to_text(false).expect("text");
    assert!(!default_text.contains("rebuild") && !default_text.contains("optimize_share"));
    scene.tree.rebuild = aabb_debugger::tree::RebuildMethod::Agglomerative;
    scene.tree.optimize_share = 0.0125;
    for json in [false, true] {
        let text = scene.to_text(json).expect("text");
        assert!(
            text.contains("Agglomerative") && text.contains("0.0125"),
            "{text}"
        );
        let back = Scene::parse(&text, "copy", json).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back, scene, "json: {json}");
    }
    // A share outside [0, 1] is refused.
    let text = scene
        .to_text(false)
        .expect("text")
        .replace("optimize_share: 0.0125", "optimize_share: 2.0");
    let err = Scene::parse(&text, "bad", false).expect_err("a share of 2");
    assert!(
        err.to_string()
            .contains("tree.optimize_share must be in [0, 1], got 2"),
        "{err}"
    );
}
