//! Hostile and extreme scenes: one answer from every broad phase on any scene `check`
//! accepts, no wrong contact or NaN at the edges of f32, a bounded stop when the pairs explode,
//! motion kept far from the origin, and messages that are short and safe to print.

use aabb_debugger::broadphase::{BroadphaseError, BroadphaseKind};
use aabb_debugger::cli::run::{summarize, summarize_with_limit};
use aabb_debugger::scene::{Scene, SceneError, Simulation};
use glam::Vec3;
use std::process::Command;

use crate::common::cli;
use cli::bin;

const KINDS: [BroadphaseKind; 3] = [
    BroadphaseKind::Tree,
    BroadphaseKind::Brute,
    BroadphaseKind::Sap,
];

type IdPairs = Vec<(u32, u32)>;

fn parse(text: &str) -> Result<Scene, SceneError> {
    Scene::parse(text, "test.ron", false)
}

/// A 2D scene with the given world, tree section and sphere lines.
fn scene_text(world: &str, tree: &str, spheres: &str, generate: &str) -> String {
    format!(
        "(format_version: 1, name: \"t\", dimensions: 2, world: {world}, dt: 0.016666668,\n\
         tree: ({tree}),\nspheres: [{spheres}],\ngenerate: {generate})"
    )
}

/// Runs `steps` steps on every broad phase; each step's pairs and contacts must be equal.
/// Returns the last step's (pairs, contacts).
fn agree(scene: &Scene, steps: u64) -> (IdPairs, IdPairs) {
    let mut sims: Vec<Simulation> = KINDS
        .iter()
        .map(|&k| Simulation::new(scene, k).expect("start"))
        .collect();
    let mut last = (Vec::new(), Vec::new());
    for step in 0..=steps {
        if step > 0 {
            for sim in &mut sims {
                sim.step().expect("step");
            }
        }
        let first = &sims[0].report();
        for other in &sims[1..] {
            let r = other.report();
            assert_eq!(
                r.candidate_pairs,
                first.candidate_pairs,
                "{} pairs at step {step}",
                other.broadphase_kind()
            );
            assert_eq!(r.contacts, first.contacts, "contacts at step {step}");
            assert_eq!(r.reinserted, first.reinserted, "reinserts at step {step}");
        }
        last = (first.candidate_pairs.clone(), first.contacts.clone());
    }
    last
}

#[test]
fn a_fat_box_that_overflows_f32_is_refused_naming_the_sphere_and_field() {
    // Still spheres, a margin that overflows at the world's edge (1e38 + 3e38 > 3.4e38).
    let text = scene_text(
        "(min: (0.0, 0.0), max: (1.0e38, 10.0))",
        "margin: 3.0e38",
        "(id: 4, center: (5.0, 5.0), radius: 1.0)",
        "None",
    );
    let err = parse(&text).expect_err("overflowing margin").to_string();
    assert!(err.contains("spheres[0] (id 4)"), "{err}");
    assert!(err.contains("fat box would overflow f32"), "{err}");
    assert!(err.contains("lower tree.margin"), "{err}");
    // Huge coordinates: the world's edge plus an ordinary margin overflows.
    let text = scene_text(
        "(min: (0.0, 0.0), max: (3.4028235e38, 10.0))",
        "margin: 1.0e37",
        "(id: 1, center: (5.0, 5.0), radius: 1.0)",
        "None",
    );
    let err = parse(&text).expect_err("overflow at the wall").to_string();
    assert!(err.contains("(id 1)") && err.contains("overflow"), "{err}");
    // Moving: speed times look-ahead overflows.
    let text = scene_text(
        "(min: (0.0, 0.0), max: (10.0, 10.0))",
        "margin: 0.1, velocity_lookahead: 1.0e30",
        "(id: 7, center: (5.0, 5.0), radius: 1.0, velocity: (1.0e9, 0.0))",
        "None",
    );
    let err = parse(&text)
        .expect_err("overflowing look-ahead")
        .to_string();
    assert!(err.contains("(id 7)"), "{err}");
    assert!(err.contains("velocity x tree.velocity_lookahead"), "{err}");
    // Generated spheres: the fastest possible one is checked.
    let text = scene_text(
        "(min: (0.0, 0.0), max: (10.0, 10.0))",
        "margin: 0.1, velocity_lookahead: 1.0e30",
        "",
        "Some((count: 3, radius: (0.5, 1.0), speed: (0.0, 1.0e9), seed: 1))",
    );
    let err = parse(&text).expect_err("generated").to_string();
    assert!(
        err.contains("generate (radius 1, speed 1000000000)"),
        "{err}"
    );
    // The same sphere without the overflow is accepted, and every broad phase agrees.
    let text = scene_text(
        "(min: (0.0, 0.0), max: (10.0, 10.0))",
        "margin: 1.0e37, velocity_lookahead: 1.0e20",
        "(id: 7, center: (5.0, 5.0), radius: 1.0, velocity: (1.0e9, 0.0)),\
         (id: 8, center: (2.0, 2.0), radius: 1.0, velocity: (0.0, 3.0))",
        "None",
    );
    let scene = parse(&text).expect("finite fat boxes");
    let (pairs, _) = agree(&scene, 30);
    assert_eq!(pairs, [(7, 8)], "margins of 1e37 overlap everything");
}

#[test]
fn changing_the_margin_to_an_overflowing_one_is_refused_and_changes_nothing() {
    let text = scene_text(
        "(min: (0.0, 0.0), max: (1.0e38, 1.0e38))",
        "margin: 0.1",
        "(id: 1, center: (5.0, 5.0), radius: 1.0), (id: 2, center: (6.5, 5.0), radius: 1.0)",
        "None",
    );
    let scene = parse(&text).expect("valid");
    for kind in KINDS {
        let mut sim = Simulation::new(&scene, kind).expect("start");
        let before = sim.report().clone();
        let mut settings = sim.tree_settings();
        settings.margin = f32::MAX;
        let err = sim.set_tree_settings(settings).expect_err("overflow");
        assert!(err.to_string().contains("sphere (id 1)"), "{err}");
        assert_eq!(sim.tree_settings(), scene.tree, "{kind}");
        assert_eq!(sim.report(), &before, "{kind}");
        sim.step().expect("still runs");
    }
}

#[test]
fn far_apart_huge_spheres_are_not_a_contact() {
    // Radii 2e19, centres 4.95e19 apart (diagonally, so the boxes overlap): the squares of
    // these numbers overflow f32, but the spheres do not touch.
    let text = scene_text(
        "(min: (0.0, 0.0), max: (2.0e20, 2.0e20))",
        "margin: 0.1",
        "(id: 0, center: (3.0e19, 3.0e19), radius: 2.0e19),\
         (id: 1, center: (6.5e19, 6.5e19), radius: 2.0e19)",
        "None",
    );
    let scene = parse(&text).expect("valid");
    let (pairs, contacts) = agree(&scene, 0);
    assert_eq!(pairs, [(0, 1)], "the boxes overlap");
    assert!(
        contacts.is_empty(),
        "4.95e19 apart with radii 2e19: no contact"
    );
    // Nudged together to 3.9e19 apart they touch.
    let text = scene_text(
        "(min: (0.0, 0.0), max: (2.0e20, 2.0e20))",
        "margin: 0.1",
        "(id: 0, center: (3.0e19, 3.0e19), radius: 2.0e19),\
         (id: 1, center: (5.7e19, 5.7e19), radius: 2.0e19)",
        "None",
    );
    let (_, contacts) = agree(&parse(&text).expect("valid"), 0);
    assert_eq!(contacts, [(0, 1)]);
}

#[test]
fn statistics_stay_finite_when_areas_overflow_f32() {
    // A 3D world of 1e20 (volumes of 1e60) and one with a margin near f32's limit.
    for (world, margin) in [
        (
            "(min: (0.0, 0.0, 0.0), max: (1.0e20, 1.0e20, 1.0e20))",
            "0.1",
        ),
        ("(min: (0.0, 0.0, 0.0), max: (10.0, 10.0, 10.0))", "1.0e38"),
    ] {
        let text = format!(
            "(format_version: 1, dimensions: 3, world: {world}, tree: (margin: {margin}),\n\
             spheres: [(id: 0, center: (2.0, 2.0, 2.0), radius: 1.0),\n\
             (id: 1, center: (5.0, 5.0, 5.0), radius: 1.0),\n\
             (id: 2, center: (8.0, 8.0, 8.0), radius: 1.0, velocity: (1.0, 0.0, 0.0))])"
        );
        let scene = parse(&text).expect("valid");
        let s = summarize(&scene, "t", 10, BroadphaseKind::Tree).expect("run");
        let tree = s.tree.as_ref().expect("tree stats");
        assert!(tree.area_ratio.is_finite(), "{margin}: {}", tree.area_ratio);
        assert!(tree.area_ratio >= 1.0, "{margin}: {}", tree.area_ratio);
        let json = serde_json::to_value(&s).expect("json");
        assert!(json["tree"]["area_ratio"].is_number(), "{json}");
        assert!(s.ms_per_step.is_finite());
    }
}

/// 100,000 generated spheres in a 2 x 2 world: about 5e9 candidate pairs.
const EXPLOSION: &str = "(format_version: 1, dimensions: 2, world: (min: (0.0, 0.0), max: (2.0, 2.0)), \
     generate: Some((count: 100000, radius: (0.1, 0.2), speed: (0.0, 1.0), seed: 3)))";

#[test]
fn a_pair_explosion_stops_at_the_limit_on_every_broad_phase() {
    // 3,000 spheres in a small world: about 4.5 million pairs; a limit of 20,000.
    let text = "(format_version: 1, dimensions: 2, world: (min: (0.0, 0.0), max: (3.0, 3.0)), \
         generate: Some((count: 3000, radius: (0.5, 0.6), speed: (0.0, 1.0), seed: 3)))";
    let scene = parse(text).expect("valid");
    for kind in KINDS {
        let err = summarize_with_limit(&scene, "t", 5, kind, 20_000).expect_err("explodes");
        match &err {
            SceneError::Step {
                step: 0,
                source:
                    BroadphaseError::PairLimit {
                        limit: 20_000,
                        static_boxes: false,
                    },
            } => {}
            other => panic!("{kind}: {other}"),
        }
        let message = err.to_string();
        assert!(
            message.starts_with("step 0: more than 20000 candidate pairs"),
            "{message}"
        );
        assert!(message.contains("raise the pair limit"), "{message}");
        assert!(!message.contains("static"), "no static box here: {message}");
        // The simulation keeps the spheres, and runs on once the limit allows it.
        let mut sim = Simulation::paused_at_zero(&scene, kind, 20_000).expect("kept");
        assert!(matches!(
            sim.last_error(),
            Some(BroadphaseError::PairLimit {
                limit: 20_000,
                static_boxes: false
            })
        ));
        assert!(sim.report().candidate_pairs.is_empty());
        assert_eq!(sim.bodies().len(), 3000);
        assert!(sim.step().is_err(), "{kind}: still past the limit");
        let r = sim
            .set_pair_limit(aabb_debugger::broadphase::MAX_PAIR_LIMIT)
            .expect("the largest limit");
        assert!(r.candidate_pairs.len() > 20_000);
        assert!(sim.last_error().is_none());
    }
}

#[test]
fn the_pair_limit_is_inclusive_and_every_broad_phase_agrees_at_it() {
    let scene =
        parse(&std::fs::read_to_string("scenes/random-1000.ron").expect("read")).expect("valid");
    let exact = Simulation::new(&scene, BroadphaseKind::Brute)
        .expect("start")
        .report()
        .candidate_pairs
        .len();
    assert!(exact > 10, "{exact}");
    for kind in KINDS {
        let sim = Simulation::with_pair_limit(&scene, kind, exact).expect("exactly the limit");
        assert_eq!(sim.report().candidate_pairs.len(), exact, "{kind}");
        let err = Simulation::with_pair_limit(&scene, kind, exact - 1).map(|_| ());
        assert!(
            matches!(err, Err(SceneError::Step { step: 0, .. })),
            "{kind}: one below the count"
        );
    }
}

#[test]
fn run_stops_a_pair_explosion_with_exit_1_and_a_message_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("explosion.ron");
    std::fs::write(&path, EXPLOSION).expect("write");
    let path = path.to_str().expect("utf-8 path");
    let check = bin(&["check", path]);
    assert_eq!(check.status.code(), Some(0));
    let warned = String::from_utf8_lossy(&check.stderr).into_owned();
    assert!(warned.contains(": warning: about "), "{warned}");
    assert!(warned.contains("candidate pairs are expected"), "{warned}");
    // Peak memory, read from /proc while the run goes (Linux), must stay far below the 40 GB
    // the pairs would take.
    let mut child = Command::new(env!("CARGO_BIN_EXE_aabb-debugger"))
        .args(["run", path, "--steps", "3", "--pair-limit", "200000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    while child.try_wait().expect("wait").is_none() {
        if let Ok(status) = std::fs::read_to_string(&status_file)
            && let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:"))
        {
            let kib = line
                .split_whitespace()
                .nth(1)
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
            peak_kib = peak_kib.max(kib);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let out = child.wait_with_output().expect("output");
    assert!(peak_kib < 1024 * 1024, "peak {peak_kib} KiB");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let message = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        message.contains("step 0: more than 200000 candidate pairs"),
        "{message}"
    );
    assert!(message.contains("--pair-limit 200000"), "{message}");
    assert!(message.lines().count() == 1, "{message}");
    // The shipped scenes draw no warning.
    let quiet = bin(&["check", "scenes/stress-5000.ron"]);
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}

#[test]
fn motion_is_not_lost_far_from_the_origin() {
    // Near 1e7 the f32 spacing (1.0) is larger than a step's motion (1/60).
    let far = "(format_version: 1, dimensions: 2, world: (min: (10000000.0, 10000000.0), \
         max: (10000100.0, 10000100.0)), tree: (margin: 0.1), spheres: [(id: 0, center: \
         (10000002.0, 10000050.0), radius: 1.0, velocity: (1.0, 0.0)), (id: 1, center: \
         (10000050.0, 10000050.0), radius: 1.0, velocity: (0.0, -1.0))])";
    let scene = parse(far).expect("valid");
    let warnings = scene.warnings(aabb_debugger::broadphase::DEFAULT_PAIR_LIMIT);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    // The sphere is named, with the spacing where it is against what matters (the margin).
    assert_eq!(
        warnings[0],
        "sphere 0 is at coordinates of 1.000005e7, where f32 numbers (the tree's boxes) are \
         1.000e0 apart, 1000.0% of tree.margin (0.1): its box is rounded that coarsely and \
         moves in jumps (positions are simulated in f64). Move the world nearer the origin for \
         smooth boxes"
    );
    // A sphere moving almost along an axis, as a saved scene has them, is not far: its whole
    // motion a step is far above the spacing where it is.
    let near = "(format_version: 1, dimensions: 2, world: (min: (0.0, 0.0), max: (400.0, \
         400.0)), tree: (margin: 0.1), spheres: [(id: 3, center: (300.0, 350.0), radius: 1.0, \
         velocity: (1.25, 0.0000001))])";
    let scene_near = parse(near).expect("valid");
    assert_eq!(
        scene_near.warnings(aabb_debugger::broadphase::DEFAULT_PAIR_LIMIT),
        Vec::<String>::new()
    );
    for kind in KINDS {
        let mut sim = Simulation::new(&scene, kind).expect("start");
        let start: Vec<Vec3> = sim.bodies().iter().map(|b| b.sphere.center).collect();
        let mut reinserts = 0;
        for _ in 0..300 {
            reinserts += sim.step().expect("step").reinserted.len();
        }
        // 300 steps of 1/60 s at speed 1: 5 units, within f64 rounding.
        let b = &sim.bodies()[0];
        assert!(
            (b.position().x - (1.0e7 + 2.0 + 5.0)).abs() < 1e-6,
            "{kind}: {b:?}"
        );
        assert_ne!(b.sphere.center, start[0], "{kind}");
        assert_ne!(sim.bodies()[1].sphere.center, start[1], "{kind}");
        assert!(reinserts >= 4, "{kind}: {reinserts} reinserts");
    }
    // The same scene near the origin draws no warning.
    let near = far
        .replace("1000000", "")
        .replace("1000010", "10")
        .replace("1000005", "5");
    assert!(near.contains("center: (2.0, 50.0)"), "{near}");
    assert_eq!(
        parse(&near).expect("valid").warnings(5_000_000),
        Vec::<String>::new()
    );
}

#[test]
fn messages_quote_short_excerpts_and_no_control_characters() {
    // An unknown field name of 1 MB, in RON and JSON.
    let long = "f".repeat(1 << 20);
    let ron = format!("(format_version: 1, dimensions: 2, {long}: 1)");
    let json = format!("{{\"format_version\": 1, \"dimensions\": 2, \"{long}\": 1}}");
    for (text, is_json) in [(&ron, false), (&json, true)] {
        let err = Scene::parse(text, "big", is_json).expect_err("unknown field");
        let message = err.to_string();
        assert!(message.chars().count() <= 500, "{}", message.len());
        assert!(
            message.contains(&format!("{}…", "f".repeat(60))),
            "{message}"
        );
    }
    // ESC, OSC and BEL in a name, a label and a field.
    let evil = "\u{1b}]0;owned\u{7}\u{1b}[2J";
    let ron = format!("(format_version: 1, dimensions: 2, bad{evil}: 1)");
    let message = parse(&ron).expect_err("bad").to_string();
    assert!(!message.chars().any(char::is_control), "{message:?}");
    let named = format!(
        "(format_version: 1, name: \"{evil}\", dimensions: 2, world: (min: (0.0, 0.0), max: \
         (4.0, 4.0)))"
    );
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("evil.ron");
    std::fs::write(&path, &named).expect("write");
    let out = bin(&["check", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.trim_end().chars().any(char::is_control),
        "{stdout:?}"
    );
    assert!(stdout.contains("\\u{1b}]0;owned\\u{7}"), "{stdout}");
    let out = bin(&["run", path.to_str().expect("utf-8"), "--steps", "1"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
}

#[test]
fn json_and_ron_columns_count_characters() {
    // The same syntax error (a value that is not one) after a name of multi-byte characters.
    let ron = "(name: \"ééééé\", format_version: @)";
    let json = "{\"name\": \"ééééé\", \"format_version\": @}";
    let column = |text: &str, is_json| match Scene::parse(text, "t", is_json) {
        Err(SceneError::Syntax { line, col, .. }) => (line, col),
        other => panic!("{other:?}"),
    };
    let at = |text: &str| text[..text.find('@').expect("@")].chars().count() + 1;
    // Each parser points at the bad value its own way (RON just before it, serde_json at
    // it); both columns count characters, not bytes.
    assert_eq!(column(ron, false), (1, at(ron) - 1), "RON");
    assert_eq!(column(json, true), (1, at(json)), "JSON, in characters");
    // serde_json's own column counts bytes: 5 more (five 2-byte characters).
    let bytes = serde_json::from_str::<serde_json::Value>(json)
        .expect_err("bad")
        .column();
    assert_eq!(bytes, at(json) + 5);
    // The same without the multi-byte name: the columns do not move.
    let ascii = json.replace("ééééé", "eeeee");
    assert_eq!(column(&ascii, true), (1, at(&ascii)));
}
