//! The simulation: every example scene gives the same candidate pairs and contacts on the
//! tree, brute force, sweep-and-prune and (2D scenes) Box2D's own tree at every step; runs
//! are deterministic; moves inside the margin do nothing, moves out of it reinsert once and
//! recompute the pairs.

use aabb_debugger::broadphase::BroadphaseKind;
use aabb_debugger::cli::run::summarize;
use aabb_debugger::scene::{Scene, Simulation, Sphere, StepReport};
use glam::Vec3;
use std::path::{Path, PathBuf};

const KINDS: [BroadphaseKind; 3] = [
    BroadphaseKind::Tree,
    BroadphaseKind::Brute,
    BroadphaseKind::Sap,
];

fn scenes_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes"))
}

fn scene_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenes_dir())
        .expect("scenes/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    files.sort();
    files
}

fn load(name: &str) -> Scene {
    Scene::load(&scenes_dir().join(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// Sorted `(a, b)` id pairs.
type IdPairs = Vec<(u32, u32)>;

/// Pairs and contacts of a report, the part all broad phases must agree on.
fn pairs_of(r: &StepReport) -> (IdPairs, IdPairs) {
    (r.candidate_pairs.clone(), r.contacts.clone())
}

/// Steps `sims` together for `steps` steps and checks they agree at every step (and that
/// contacts are candidates, and pairs are sorted with a < b).
fn assert_agree(name: &str, sims: &mut [Simulation], steps: u64) {
    for step in 0..=steps {
        if step > 0 {
            for sim in sims.iter_mut() {
                sim.step().expect("step");
            }
        }
        let first = pairs_of(sims[0].report());
        assert!(first.0.windows(2).all(|w| w[0] < w[1]), "{name}: sorted");
        assert!(first.0.iter().all(|(a, b)| a < b), "{name}: a < b");
        assert!(first.1.iter().all(|c| first.0.binary_search(c).is_ok()));
        for sim in &sims[1..] {
            assert_eq!(
                pairs_of(sim.report()),
                first,
                "{name}: {} and {} differ at step {step}",
                sims[0].broadphase_kind(),
                sim.broadphase_kind()
            );
            assert_eq!(
                sim.report().reinserted,
                sims[0].report().reinserted,
                "{name}"
            );
            assert_eq!(
                sim.report().pairs_recomputed,
                sims[0].report().pairs_recomputed,
                "{name} step {step}"
            );
        }
    }
}

/// Every shipped scene on every broad phase that runs it: Box2D's tree on the 2D ones (all
/// but one), the others on all.
#[test]
fn every_scene_agrees_on_tree_brute_force_sweep_and_prune_and_box2d_for_200_steps() {
    let files = scene_files();
    assert_eq!(files.len(), 22, "scene files");
    let mut on_box2d = 0;
    for path in files {
        let name = path.display().to_string();
        let scene = Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
        if scene.sphere_count() > 1000 {
            continue; // see the test below
        }
        let kinds = BroadphaseKind::for_dimensions(scene.dimensions);
        on_box2d += usize::from(kinds.contains(&BroadphaseKind::Box2d));
        let mut sims: Vec<Simulation> = kinds
            .iter()
            .map(|&k| Simulation::new(&scene, k).expect("sim"))
            .collect();
        assert_agree(&name, &mut sims, 200);
    }
    assert_eq!(on_box2d, 17, "the 2D scenes of up to 1000 spheres");
}

/// Box2D's tree is 2D: a 3D scene refuses it with a message that says so.
#[test]
fn box2d_refuses_a_3d_scene_saying_why() {
    let scene = load("spheres-3d.ron");
    let Err(err) = Simulation::new(&scene, BroadphaseKind::Box2d) else {
        panic!("a 3D scene ran on Box2D's tree");
    };
    assert!(
        err.to_string()
            .contains("the box2d broad phase (Box2D's own tree) is 2D only"),
        "{err}"
    );
}

/// The scenes of more than 1000 spheres (1200 to 5000): brute force is O(n²) per step, too
/// slow for 200 unoptimised steps, so it checks the first 10 steps and the tree,
/// sweep-and-prune and Box2D go on to 200.
#[test]
fn the_large_scenes_agree_too() {
    let mut large = Vec::new();
    for path in scene_files() {
        let scene = Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
        if scene.sphere_count() > 1000 {
            large.push(
                path.file_name()
                    .expect("a file")
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    assert_eq!(
        large,
        [
            "advisor-mixed-sizes.ron",
            "advisor-slow-dense.ron",
            "gaul-5000-bodies.ron",
            "stress-5000.ron"
        ]
    );
    for name in &large {
        let name = name.as_str();
        let scene = load(name);
        assert_eq!(scene.dimensions, 2);
        let mut all: Vec<Simulation> = BroadphaseKind::ALL
            .iter()
            .map(|&k| Simulation::new(&scene, k).expect("sim"))
            .collect();
        assert_agree(name, &mut all, 10);
        let mut two: Vec<Simulation> = all
            .into_iter()
            .filter(|s| s.broadphase_kind() != BroadphaseKind::Brute)
            .collect();
        assert_agree(name, &mut two, 190);
    }
}

#[test]
fn runs_are_deterministic_and_survive_save_and_load() {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in ["default.ron", "spheres-3d.ron", "choi-appear-disappear.ron"] {
        let scene = load(name);
        for kind in KINDS {
            let strip = |mut s: aabb_debugger::cli::run::RunSummary| {
                s.ms_per_step = 0.0;
                s.update_ms_per_step = 0.0;
                s.pairs_ms_per_step = 0.0;
                serde_json::to_string(&s).expect("json")
            };
            let a = strip(summarize(&scene, name, 120, kind).expect("run"));
            let b = strip(summarize(&scene, name, 120, kind).expect("run"));
            assert_eq!(a, b, "{name} {kind}");
            for ext in ["ron", "json"] {
                let path = dir.path().join(format!("copy.{ext}"));
                scene.save(&path).expect("save");
                let copy = Scene::load(&path).expect("load");
                let c = strip(summarize(&copy, name, 120, kind).expect("run"));
                assert_eq!(a, c, "{name} {kind} after save and load as {ext}");
            }
        }
    }
}

#[test]
fn a_sphere_moving_inside_its_margin_changes_nothing() {
    let scene = load("choi-move-within-margin.ron");
    for kind in KINDS {
        let mut sim = Simulation::new(&scene, kind).expect("sim");
        let before = pairs_of(sim.report());
        for step in 1..=30 {
            let r = sim.step().expect("step");
            assert_eq!(r.step, step);
            assert!(r.reinserted.is_empty(), "{kind} step {step}");
            assert!(!r.pairs_recomputed, "{kind} step {step}");
            assert_eq!(pairs_of(r), before);
        }
        let r = sim.step().expect("step");
        assert_eq!(r.reinserted, [5], "{kind}");
        assert!(r.pairs_recomputed);
    }
}

#[test]
fn a_sphere_leaving_its_margin_is_reinserted_once_and_the_pairs_recomputed() {
    let scene = load("choi-move-out-of-margin.ron");
    for kind in KINDS {
        let mut sim = Simulation::new(&scene, kind).expect("sim");
        for step in 1..=4 {
            let r = sim.step().expect("step");
            assert_eq!(r.reinserted, [5], "{kind} step {step}");
            assert!(r.pairs_recomputed, "{kind} step {step}");
        }
        // By step 4 sphere 5 has left sphere 4 behind.
        assert_eq!(sim.report().contacts, [(0, 1)]);
        assert_eq!(sim.report().candidate_pairs, [(0, 1), (2, 3)]);
    }
}

#[test]
fn dragging_a_sphere_inside_and_out_of_its_margin() {
    let scene = load("choi-results.ron");
    for kind in KINDS {
        let mut sim = Simulation::new(&scene, kind).expect("sim");
        let start = sim.body(5).expect("5").sphere.center;
        // Margin 0.5: a move of 0.3 stays inside the fat box.
        let r = sim
            .move_sphere(5, start + Vec3::new(-0.3, 0.2, 0.0))
            .expect("move");
        assert!(r.reinserted.is_empty(), "{kind}");
        assert!(!r.pairs_recomputed, "{kind}");
        assert_eq!(r.contacts, [(0, 1), (4, 5)]);
        // A move of 3 leaves it: one reinsert, pairs recomputed, sphere 4 no longer touched.
        let r = sim
            .move_sphere(5, start + Vec3::new(-3.0, 0.0, 0.0))
            .expect("move");
        assert_eq!(r.reinserted, [5], "{kind}");
        assert!(r.pairs_recomputed, "{kind}");
        assert_eq!(r.contacts, [(0, 1)]);
        assert_eq!(r.step, 0, "a drag is not a step");
        // Bad moves change nothing.
        assert!(sim.move_sphere(99, start).is_err());
        let err = sim
            .move_sphere(5, Vec3::new(19.5, 6.0, 0.0))
            .expect_err("outside");
        assert!(
            err.to_string().contains("reaches outside the world"),
            "{err}"
        );
        let err = sim
            .move_sphere(5, Vec3::new(f32::NAN, 6.0, 0.0))
            .expect_err("nan");
        assert!(err.to_string().contains("finite"), "{err}");
        assert_eq!(
            sim.body(5).expect("5").sphere.center,
            start + Vec3::new(-3.0, 0.0, 0.0)
        );
        let clamped = sim.clamp_center(2.0, Vec3::new(25.0, -4.0, 3.0));
        assert_eq!(clamped, Vec3::new(18.0, 2.0, 0.0));
    }
}

#[test]
fn adding_and_removing_spheres() {
    let scene = load("choi-results.ron");
    for kind in KINDS {
        let mut sim = Simulation::new(&scene, kind).expect("sim");
        sim.step().expect("step");
        let new = Sphere {
            id: 6,
            label: None,
            center: Vec3::new(3.5, 2.5, 0.0),
            radius: 1.0,
            velocity: Vec3::ZERO,
            appear_at: 0,
            disappear_at: None,
        };
        let r = sim.add_sphere(new.clone()).expect("add");
        assert_eq!(
            (r.appeared.clone(), r.reinserted.clone()),
            (vec![6], vec![])
        );
        assert!(r.pairs_recomputed);
        assert_eq!(r.contacts, [(0, 1), (0, 6), (4, 5)], "{kind}");
        let err = sim.add_sphere(new.clone()).expect_err("taken");
        assert!(err.to_string().contains("id 6 is already taken"), "{err}");
        let bad = Sphere {
            id: 8,
            radius: -1.0,
            ..new.clone()
        };
        assert!(sim.add_sphere(bad).is_err());
        let r = sim.remove_sphere(0).expect("remove");
        assert_eq!(r.disappeared, [0]);
        assert!(r.pairs_recomputed);
        assert_eq!(r.contacts, [(4, 5)], "{kind}");
        assert!(sim.remove_sphere(0).is_err());
        let ids: Vec<u32> = sim.bodies().iter().map(|b| b.sphere.id).collect();
        assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
        let saved = sim.scene();
        assert_eq!(saved.spheres.len(), 6);
        saved.validate("saved").expect("valid");
    }
}

#[test]
fn spheres_appear_and_disappear_at_their_steps() {
    let scene = load("choi-appear-disappear.ron");
    for kind in KINDS {
        let mut sim = Simulation::new(&scene, kind).expect("sim");
        assert_eq!(sim.report().appeared, [0, 1, 2, 3, 4, 5]);
        for step in 1..=40 {
            let r = sim.step().expect("step").clone();
            match step {
                20 => {
                    assert_eq!((r.appeared, r.disappeared), (vec![6], vec![2]), "{kind}");
                    assert!(r.pairs_recomputed);
                    assert!(!r.candidate_pairs.contains(&(2, 3)));
                }
                40 => {
                    assert_eq!((r.appeared, r.disappeared), (vec![7], vec![]), "{kind}");
                    assert!(r.pairs_recomputed);
                }
                _ => {
                    assert!(r.appeared.is_empty() && r.disappeared.is_empty());
                    assert!(!r.pairs_recomputed, "{kind} step {step}");
                }
            }
        }
        let alive: Vec<u32> = sim
            .bodies()
            .iter()
            .filter(|b| b.alive)
            .map(|b| b.sphere.id)
            .collect();
        assert_eq!(alive, [0, 1, 3, 4, 5, 6, 7]);
        // Saved mid-run: the gone sphere is left out, the steps count from now.
        let saved = sim.scene();
        assert!(saved.spheres.iter().all(|s| s.id != 2));
        assert!(saved.spheres.iter().all(|s| s.appear_at == 0));
    }
}

#[test]
fn spheres_bounce_off_the_walls_by_the_standard_rule() {
    let text = "(format_version: 1, dimensions: 2, world: (min: (0.0, 0.0), max: (10.0, 10.0)),
        dt: 0.5, spheres: [(id: 1, center: (8.5, 5.0), radius: 1.0, velocity: (2.0, -1.0))])";
    let scene = Scene::parse(text, "bounce.ron", false).expect("valid");
    let mut sim = Simulation::new(&scene, BroadphaseKind::Brute).expect("sim");
    sim.step().expect("step");
    // x = 8.5 + 1.0 = 9.5 > 9: clamped to 9 and vx flipped; y = 4.5.
    let s = &sim.body(1).expect("1").sphere;
    assert_eq!(
        (s.center, s.velocity),
        (Vec3::new(9.0, 4.5, 0.0), Vec3::new(-2.0, -1.0, 0.0))
    );
}

#[test]
fn tree_settings_apply_at_once_and_bad_ones_change_nothing() {
    let scene = load("choi-results.ron");
    for kind in KINDS {
        let mut sim = Simulation::new(&scene, kind).expect("sim");
        let mut settings = sim.tree_settings();
        settings.margin = 0.0;
        sim.set_tree_settings(settings).expect("ok");
        assert!(sim.report().pairs_recomputed);
        // With no margin only the boxes that really overlap remain.
        assert_eq!(sim.report().candidate_pairs, [(0, 1), (4, 5)], "{kind}");
        let fat = sim.broadphase().fat_aabb(5).expect("5");
        assert_eq!((fat.min.x, fat.max.x), (12.5, 16.5));
        settings.margin = -1.0;
        let err = sim.set_tree_settings(settings).expect_err("negative");
        assert_eq!(err.to_string(), "<scene>: tree.margin must be >= 0, got -1");
        assert_eq!(sim.tree_settings().margin, 0.0);
        settings.margin = 0.5;
        settings.velocity_lookahead = f32::NAN;
        assert!(sim.set_tree_settings(settings).is_err());
    }
}

#[test]
fn switching_broad_phase_keeps_the_spheres_and_the_pairs() {
    let scene = load("random-1000.ron");
    let mut sim = Simulation::new(&scene, BroadphaseKind::Tree).expect("sim");
    for _ in 0..30 {
        sim.step().expect("step");
    }
    let bodies = sim.bodies().to_vec();
    for kind in [
        BroadphaseKind::Sap,
        BroadphaseKind::Brute,
        BroadphaseKind::Tree,
    ] {
        sim.set_broadphase(kind).expect("switch");
        assert_eq!(sim.broadphase_kind(), kind);
        assert_eq!(sim.bodies(), bodies.as_slice());
        assert!(sim.report().pairs_recomputed);
        assert_eq!(sim.report().step, 30);
    }
    assert!(sim.broadphase().tree_view().is_some());
    assert!(sim.report().tree.is_some());
    sim.rebuild().expect("rebuild");
    let t = sim.report().tree.expect("tree");
    assert_eq!(t.leaves, 1000);
}
