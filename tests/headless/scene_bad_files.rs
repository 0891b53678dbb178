//! Every file under tests/data/bad/ is refused, without a panic, with the message the table
//! expects: syntax errors as `FILE:LINE:COL: message`, meaning errors as `FILE: where: what`.

use aabb_debugger::fileio::ReadError;
use aabb_debugger::scene::{MAX_SPHERES, Scene, SceneError, Sphere};
use glam::Vec3;
use std::path::Path;

/// How a file must be refused: at a line and column (syntax) or by meaning, and what the
/// message says after the location.
enum Expect {
    /// `FILE:LINE:COL: message`.
    At(usize, usize, &'static str),
    /// `FILE: message`.
    Meaning(&'static str),
}
use Expect::{At, Meaning};

const TABLE: &[(&str, Expect)] = &[
    (
        "empty.ron",
        At(1, 1, "the file is empty; expected a scene (RON)"),
    ),
    (
        "not-utf8.ron",
        At(3, 15, "the file is not UTF-8 text (byte 0xFF at offset 39)"),
    ),
    ("truncated.ron", At(9, 36, "Unexpected end of RON")),
    (
        "truncated.json",
        At(
            7,
            1,
            "control character (\\u0000-\\u001F) found while parsing a string",
        ),
    ),
    ("wrong-type.ron", At(10, 45, "Expected float")),
    ("negative-id.ron", At(10, 15, "Integer is out of bounds")),
    (
        "missing-world.ron",
        At(13, 1, "Unexpected missing field named `world` in `scene`"),
    ),
    (
        "unknown-sphere-field.ron",
        At(
            10,
            17,
            "Unexpected field named `colour` in `sphere`, expected one of `id`, `label`, `center`, `radius`, `velocity`, `appear_at`, or `disappear_at` instead",
        ),
    ),
    (
        "unknown-top-field.ron",
        At(
            12,
            5,
            "Unexpected field named `gravity` in `scene`, expected one of `format_version`, `name`, `dimensions`, `world`, `dt`, `tree`, `spheres`, `boxes`, `generate`, or `view` instead",
        ),
    ),
    (
        "unknown-view-field.ron",
        At(
            13,
            34,
            "Unexpected field named `tilt` in `view`, expected one of `center`, `zoom`, `layers`, `plane`, `branch_letters`, `fit_content`, `caption`, `generator`, or `pair_cost` instead",
        ),
    ),
    (
        "unknown-insertion.ron",
        At(
            7,
            61,
            "Unexpected variant named `Fastest` in enum `InsertionCost`, expected one of `Volume`, `Perimeter`, `SurfaceArea`, or `ExactSurfaceArea` instead",
        ),
    ),
    (
        "unknown-field.json",
        At(
            7,
            57,
            "unknown field `mass`, expected one of `id`, `label`, `center`, `radius`, `velocity`, `appear_at`, `disappear_at`",
        ),
    ),
    (
        "ron-syntax.json",
        At(
            1,
            1,
            "expected value (this looks like RON; a .json file must hold JSON)",
        ),
    ),
    (
        "radius-negative.ron",
        Meaning("spheres[1] (id 7): radius must be > 0, got -1"),
    ),
    (
        "radius-negative.json",
        Meaning("spheres[1] (id 9): radius must be > 0, got -0.5"),
    ),
    (
        "radius-zero.ron",
        Meaning("spheres[1] (id 7): radius must be > 0, got 0"),
    ),
    (
        "inf-radius.ron",
        Meaning("spheres[1] (id 7): radius must be a finite number > 0, got inf"),
    ),
    (
        "nan-center.ron",
        Meaning("spheres[1] (id 7): center must have finite numbers, got (NaN, 6)"),
    ),
    (
        "outside-world.ron",
        Meaning(
            "spheres[1] (id 7): the sphere (center (19, 6), radius 2) reaches outside the world (min (0, 0), max (20, 12))",
        ),
    ),
    (
        "duplicate-id.ron",
        Meaning("spheres[1] (id 0): duplicate id, also used by spheres[0]"),
    ),
    (
        "vector-too-long.ron",
        Meaning(
            "spheres[1] (id 7): center must have 2 numbers (dimensions is 2), got 3 (12, 6, 1)",
        ),
    ),
    (
        "velocity-too-short.ron",
        Meaning("spheres[1] (id 7): velocity must have 2 numbers (dimensions is 2), got 1 (0)"),
    ),
    (
        "world-min-ge-max.ron",
        Meaning("world: min must be < max on every axis, got min (0, 0) and max (20, 0)"),
    ),
    (
        "dt-zero.ron",
        Meaning("dt must be in (0, 1] seconds, got 0"),
    ),
    (
        "dt-too-big.ron",
        Meaning("dt must be in (0, 1] seconds, got 1.5"),
    ),
    (
        "negative-margin.ron",
        Meaning("tree.margin must be >= 0, got -0.1"),
    ),
    (
        "negative-lookahead.ron",
        Meaning("tree.velocity_lookahead must be >= 0, got -1"),
    ),
    (
        "disappear-not-after-appear.ron",
        Meaning("spheres[1] (id 7): disappear_at (5) must be > appear_at (5)"),
    ),
    (
        "too-many-generated.ron",
        Meaning("generate.count: 1000001 spheres; the generator makes at most 1000000"),
    ),
    (
        "generate-radius-inverted.ron",
        Meaning("generate.radius must be (min, max) with 0 < min <= max, got (2, 1)"),
    ),
    (
        "generate-density-zero.ron",
        Meaning("generate.density is the share of the world the spheres fill, in (0, 1], got 0"),
    ),
    (
        "generate-density-overflow.ron",
        Meaning(
            "generate.density: 900000 spheres at density 0.001 would need a world wider than 1000000000 units",
        ),
    ),
    (
        "newer-version.ron",
        Meaning(
            "this file needs a newer aabb-debugger (format_version 2; this build reads format_version 1)",
        ),
    ),
    (
        "version-zero.ron",
        Meaning("format_version must be 1, got 0"),
    ),
    (
        "dimensions-four.ron",
        Meaning("dimensions must be 2 or 3, got 4"),
    ),
    (
        "box-nan.ron",
        Meaning(
            "boxes[1] (id 101): min and max must have finite numbers, got min (2, NaN) and max (4, 3)",
        ),
    ),
    (
        "box-min-gt-max.ron",
        Meaning(
            "boxes[1] (id 101): min must be <= max on every axis, got min (5, 2) and max (4, 3)",
        ),
    ),
    (
        "box-duplicate-id.ron",
        Meaning("boxes[1] (id 100): duplicate id, also used by boxes[0]"),
    ),
    (
        "box-sphere-id.ron",
        Meaning(
            "boxes[1] (id 7): duplicate id, also used by spheres[1]; a box's id must be no sphere's",
        ),
    ),
    (
        "box-wrong-dimensions.ron",
        Meaning("boxes[1] (id 101): min must have 2 numbers (dimensions is 2), got 3 (2, 2, 0)"),
    ),
    (
        "box-outside-world.ron",
        Meaning(
            "boxes[1] (id 101): the box (min (18, 2), max (21, 3)) reaches outside the world (min (0, 0), max (20, 12))",
        ),
    ),
    (
        "box-unknown-field.ron",
        At(
            14,
            53,
            "Unexpected field named `colour` in `box`, expected one of `id`, `min`, or `max` instead",
        ),
    ),
    (
        "box-missing-max.ron",
        At(14, 34, "Unexpected missing field named `max` in `box`"),
    ),
];

fn bad_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bad"))
}

#[test]
fn every_bad_file_is_refused_with_its_message() {
    assert!(TABLE.len() >= 20);
    for (name, expect) in TABLE {
        let path = bad_dir().join(name);
        let file = path.display().to_string();
        let err = match Scene::load(&path) {
            Ok(_) => panic!("{name} was accepted"),
            Err(e) => e,
        };
        match (expect, &err) {
            (At(line, col, message), SceneError::Syntax { .. }) => {
                assert_eq!(
                    err.to_string(),
                    format!("{file}:{line}:{col}: {message}"),
                    "{name}"
                );
            }
            (Meaning(message), SceneError::Invalid { .. }) => {
                assert_eq!(err.to_string(), format!("{file}: {message}"), "{name}");
            }
            _ => panic!("{name}: wrong kind of error: {err}"),
        }
    }
}

#[test]
fn the_table_covers_every_file_in_the_corpus() {
    let mut on_disk: Vec<String> = std::fs::read_dir(bad_dir())
        .expect("tests/data/bad")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = TABLE.iter().map(|(n, _)| (*n).to_owned()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

#[test]
fn every_cut_short_copy_of_a_good_file_is_refused_without_panic() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/choi-results.ron"
    ))
    .expect("scene");
    assert!(text.ends_with(")\n"));
    let accepted: Vec<usize> = (0..text.len())
        .filter(|&end| text.is_char_boundary(end))
        .filter(|&end| Scene::parse(&text[..end], "cut.ron", false).is_ok())
        .collect();
    // Only the prefix that drops the final newline is still a whole scene.
    assert_eq!(accepted, vec![text.len() - 1]);
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let err = Scene::load(Path::new("no/such/scene.ron")).expect_err("missing");
    assert!(
        matches!(
            err,
            SceneError::Read(ReadError::Io {
                action: "look up the file",
                ..
            })
        ),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("no/such/scene.ron: "), "{err}");
}

#[test]
fn more_than_a_million_listed_spheres_are_refused() {
    let mut scene = Scene::builtin_default();
    scene.generate = None;
    scene.world.max = Vec3::new(1.0e4, 1.0e4, 0.0);
    scene.spheres = (0..=MAX_SPHERES as u32)
        .map(|id| Sphere {
            id,
            label: None,
            center: Vec3::new(5.0, 5.0, 0.0),
            radius: 1.0,
            velocity: Vec3::ZERO,
            appear_at: 0,
            disappear_at: None,
        })
        .collect();
    let err = scene.validate("big.ron").expect_err("too many");
    assert_eq!(
        err.to_string(),
        "big.ron: spheres: the scene lists 1000001 spheres; at most 1000000 are allowed"
    );
}

#[test]
fn the_generator_makes_a_million_beside_listed_spheres_and_bodies_past_two_million_are_refused() {
    // The count given is the count generated: the listed spheres do not lower it.
    let mut scene = Scene::builtin_default();
    let listed = scene.spheres.len();
    assert_eq!(listed, 3);
    let mut g = scene.generate.unwrap_or(aabb_debugger::scene::Generate {
        count: 0,
        radius: (0.1, 0.2),
        speed: (0.0, 1.0),
        seed: 1,
        density: Some(0.1),
    });
    g.count = MAX_SPHERES as u32;
    scene.generate = Some(g);
    scene
        .validate("default.ron")
        .expect("a million generated beside 3 listed");
    assert_eq!(scene.sphere_count(), MAX_SPHERES + 3);
    // Bodies in all: a million listed, a million generated and a static box are too many.
    scene.world.max = Vec3::new(1.0e4, 1.0e4, 0.0);
    scene.spheres = (0..MAX_SPHERES as u32)
        .map(|id| Sphere {
            id,
            label: None,
            center: Vec3::new(5.0, 5.0, 0.0),
            radius: 1.0,
            velocity: Vec3::ZERO,
            appear_at: 0,
            disappear_at: None,
        })
        .collect();
    scene.validate("many.ron").expect("two million bodies");
    scene.boxes = vec![aabb_debugger::scene::StaticBox {
        id: 3_000_000,
        min: Vec3::new(1.0, 1.0, 0.0),
        max: Vec3::new(2.0, 2.0, 0.0),
    }];
    let err = scene.validate("many.ron").expect_err("too many bodies");
    assert_eq!(
        err.to_string(),
        "many.ron: boxes: the scene has 2000000 spheres (listed and generated) and 1 static boxes; at most 2000000 bodies together are allowed"
    );
}

#[test]
fn json_numbers_too_big_for_f32_are_refused_as_non_finite() {
    let text = r#"{"format_version": 1, "dimensions": 2,
        "world": {"min": [0, 0], "max": [10, 10]},
        "spheres": [{"id": 1, "center": [5, 5], "radius": 1e39}]}"#;
    let err = Scene::parse(text, "big.json", true).expect_err("inf");
    assert_eq!(
        err.to_string(),
        "big.json: spheres[0] (id 1): radius must be a finite number > 0, got inf"
    );
}
