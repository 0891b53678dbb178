//! Static boxes in scenes: in the broad phase from step 0 and never moved; pairs of a sphere
//! and a box reported alike by the tree, brute force and sweep-and-prune, equal to a reference
//! that tests every pair of fat boxes and leaves out pairs of two boxes; contacts by the exact
//! sphere-box distance; the pair limit counting the same on all three.

use aabb_debugger::broadphase::{BroadphaseError, BroadphaseKind};
use aabb_debugger::scene::{FORMAT_VERSION, Scene, SceneError, Simulation, Sphere, StaticBox};
use aabb_debugger::tree::{Aabb, PairMethod, TreeConfig, UpdateMode};
use glam::{DVec3, Vec3};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

const KINDS: [BroadphaseKind; 3] = [
    BroadphaseKind::Tree,
    BroadphaseKind::Brute,
    BroadphaseKind::Sap,
];

type IdPairs = Vec<(u32, u32)>;

/// A random scene: `spheres` moving spheres (ids 0..) and `boxes` static boxes (ids from
/// 1000, in no order), many of them overlapping one another.
fn random_scene(dims: u8, spheres: u32, boxes: u32, seed: u64, config: TreeConfig) -> Scene {
    let mut rng = Pcg64::seed_from_u64(seed);
    let side = 30.0f32;
    let z = |v: f32| if dims == 3 { v } else { 0.0 };
    let world = Aabb::new(Vec3::ZERO, Vec3::new(side, side, z(side)));
    let mut list = Vec::new();
    for id in 0..spheres {
        let r = rng.random_range(0.3..1.2f32);
        let mut c = Vec3::ZERO;
        let mut v = Vec3::ZERO;
        for a in 0..usize::from(dims) {
            c[a] = rng.random_range(r..side - r);
            v[a] = rng.random_range(-6.0..6.0f32);
        }
        list.push(Sphere {
            id,
            label: None,
            center: c,
            radius: r,
            velocity: v,
            appear_at: u64::from(id % 7 == 3) * 5,
            disappear_at: (id % 11 == 4).then_some(40),
        });
    }
    let mut statics = Vec::new();
    for k in 0..boxes {
        let mut min = Vec3::ZERO;
        let mut max = Vec3::ZERO;
        for a in 0..usize::from(dims) {
            let size = rng.random_range(0.0..6.0f32);
            min[a] = rng.random_range(0.0..side - size);
            max[a] = (min[a] + size).min(side);
        }
        statics.push(StaticBox {
            id: 1000 + (k * 7919) % boxes,
            min,
            max,
        });
    }
    Scene {
        format_version: FORMAT_VERSION,
        name: format!("static boxes {seed}"),
        dimensions: dims,
        world,
        dt: 1.0 / 60.0,
        tree: config,
        spheres: list,
        boxes: statics,
        generate: None,
        view: None,
    }
}

/// The reference: every pair of live bodies whose fat boxes (as the broad phase keeps them)
/// overlap, but no pair of two static boxes; contacts by the distances, in f64. Also the
/// number of pairs of two static boxes left out.
fn reference(sim: &Simulation) -> (IdPairs, IdPairs, usize) {
    let bp = sim.broadphase();
    let mut bodies: Vec<(u32, Option<DVec3>, f64, Aabb<Vec3>)> = Vec::new();
    for b in sim.bodies().iter().filter(|b| b.alive) {
        let fat = bp
            .fat_aabb(b.sphere.id)
            .expect("a live sphere has a fat box");
        bodies.push((
            b.sphere.id,
            Some(b.position()),
            f64::from(b.sphere.radius),
            fat,
        ));
    }
    for b in sim.static_boxes() {
        let fat = bp.fat_aabb(b.id).expect("a static box has a fat box");
        bodies.push((b.id, None, 0.0, fat));
    }
    bodies.sort_by_key(|b| b.0);
    let boxes = sim.static_boxes();
    let box_of = |id: u32| {
        let i = boxes.binary_search_by_key(&id, |b| b.id).expect("a box id");
        &boxes[i]
    };
    let (mut pairs, mut contacts, mut left_out) = (Vec::new(), Vec::new(), 0);
    for (i, a) in bodies.iter().enumerate() {
        for b in &bodies[i + 1..] {
            if !a.3.overlaps(&b.3) {
                continue;
            }
            let touch = match (a.1, b.1) {
                (None, None) => {
                    left_out += 1;
                    continue;
                }
                (Some(pa), Some(pb)) => pa.distance(pb) <= a.2 + b.2,
                (Some(p), None) | (None, Some(p)) => {
                    let (r, id) = if a.1.is_some() {
                        (a.2, b.0)
                    } else {
                        (b.2, a.0)
                    };
                    let bx = box_of(id);
                    let nearest = p.clamp(bx.min.as_dvec3(), bx.max.as_dvec3());
                    p.distance_squared(nearest) <= r * r
                }
            };
            pairs.push((a.0, b.0));
            if touch {
                contacts.push((a.0, b.0));
            }
        }
    }
    (pairs, contacts, left_out)
}

/// Steps a scene on the three broad phases for `steps` steps: at every step each one's pairs
/// and contacts equal the reference's, static boxes are never reinserted and keep the fat box
/// they started with. Returns the totals (sphere-box pairs, sphere-box contacts, box-box
/// overlaps left out) so the caller can check the case had each.
fn check_scene(scene: &Scene, steps: u64) -> (usize, usize, usize) {
    let mut sims: Vec<Simulation> = KINDS
        .iter()
        .map(|&k| Simulation::new(scene, k).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let fat0: Vec<Aabb<Vec3>> = scene
        .boxes
        .iter()
        .map(|b| {
            let m = scene.tree.margin;
            Aabb::new(b.min - Vec3::splat(m), b.max + Vec3::splat(m))
        })
        .collect();
    let is_box = |id: u32| scene.boxes.iter().any(|b| b.id == id);
    let (mut mixed_pairs, mut mixed_contacts, mut left_out) = (0, 0, 0);
    for step in 0..=steps {
        for sim in &mut sims {
            if step > 0 {
                sim.step().unwrap_or_else(|e| panic!("{e}"));
            }
            let (pairs, contacts, out) = reference(sim);
            let r = sim.report();
            let kind = sim.broadphase_kind();
            assert_eq!(r.candidate_pairs, pairs, "{kind}, step {step}: pairs");
            assert_eq!(r.contacts, contacts, "{kind}, step {step}: contacts");
            assert!(
                !r.reinserted.iter().any(|&id| is_box(id)),
                "{kind}, step {step}: a static box was reinserted"
            );
            for (b, fat) in scene.boxes.iter().zip(&fat0) {
                let kept = sim.broadphase().fat_aabb(b.id).expect("present");
                // The fat box is the box grown by the margin (the tree's rule: in 2D the z
                // of a scene's box stays 0).
                let mut want = *fat;
                if scene.dimensions == 2 {
                    want.min.z = 0.0;
                    want.max.z = 0.0;
                }
                assert_eq!(kept, want, "{kind}, step {step}: box {}", b.id);
            }
            if kind == BroadphaseKind::Tree {
                mixed_pairs += pairs
                    .iter()
                    .filter(|&&(a, b)| is_box(a) || is_box(b))
                    .count();
                mixed_contacts += contacts
                    .iter()
                    .filter(|&&(a, b)| is_box(a) || is_box(b))
                    .count();
                left_out += out;
            }
        }
    }
    (mixed_pairs, mixed_contacts, left_out)
}

#[test]
fn every_broad_phase_reports_the_reference_pairs_without_box_box_pairs() {
    let methods = [
        (PairMethod::SelfTraversal, UpdateMode::Reinsert),
        (PairMethod::MovedQueries, UpdateMode::LocalReinsert),
        (PairMethod::MovedTraversal, UpdateMode::EnlargeAndRebuild),
    ];
    for (seed, dims) in [(1u64, 2u8), (2, 3), (3, 2)] {
        for (pairs, update) in methods {
            let config = TreeConfig {
                margin: 0.3,
                velocity_lookahead: 0.05,
                pairs,
                update,
                ..TreeConfig::default()
            };
            let scene = random_scene(dims, 60, 40, seed, config);
            let (mixed, touching, left_out) = check_scene(&scene, 60);
            let case = format!("{dims}D seed {seed} {pairs:?}");
            assert!(mixed > 100, "{case}: sphere-box pairs to find ({mixed})");
            assert!(touching > 20, "{case}: sphere-box contacts ({touching})");
            assert!(
                left_out > 100,
                "{case}: box-box overlaps left out ({left_out})"
            );
        }
    }
}

#[test]
fn the_shipped_level_pairs_spheres_with_boxes_and_never_boxes_together() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/static-level.ron");
    let scene = Scene::load(std::path::Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.boxes.len(), 7);
    check_scene(&scene, 120);
    let sim = Simulation::new(&scene, BroadphaseKind::Tree).expect("runs");
    let r = sim.report();
    // Sphere 10 rests on platform 102 (its bottom at 11.5 is inside the box: a contact);
    // the step's two boxes, 105 and 106, overlap but are no pair; the floor touches the
    // pillar and the step, and pairs with neither.
    assert!(r.contacts.contains(&(10, 102)), "{:?}", r.contacts);
    assert!(r.candidate_pairs.iter().all(|&(a, _)| a < 100));
    // The saved scene keeps the boxes.
    let saved = sim.scene();
    assert_eq!(saved.boxes, scene.boxes);
    let ids: Vec<u32> = sim.static_boxes().iter().map(|b| b.id).collect();
    assert_eq!(ids, [100, 101, 102, 103, 104, 105, 106]);
}

/// A sphere near a box's corner: its box overlaps the box (a candidate pair), but it is a
/// contact only once the corner is within its radius.
#[test]
fn a_sphere_box_contact_is_the_exact_distance_not_the_boxes() {
    let scene = |x: f32| Scene {
        format_version: FORMAT_VERSION,
        name: String::new(),
        dimensions: 2,
        world: Aabb::new(Vec3::ZERO, Vec3::new(10.0, 10.0, 0.0)),
        dt: 1.0 / 60.0,
        tree: TreeConfig {
            margin: 0.0,
            velocity_lookahead: 0.0,
            ..TreeConfig::default()
        },
        spheres: vec![Sphere {
            id: 0,
            label: None,
            center: Vec3::new(x, x, 0.0),
            radius: 1.0,
            velocity: Vec3::ZERO,
            appear_at: 0,
            disappear_at: None,
        }],
        boxes: vec![StaticBox {
            id: 1,
            min: Vec3::new(1.0, 1.0, 0.0),
            max: Vec3::new(4.0, 4.0, 0.0),
        }],
        generate: None,
        view: None,
    };
    // Corner (4, 4): at (4.8, 4.8) it is 1.13 away, at (4.7, 4.7) 0.99.
    for (x, touching) in [(4.8, false), (4.7, true), (2.5, true)] {
        for kind in KINDS {
            let sim = Simulation::new(&scene(x), kind).expect("runs");
            let r = sim.report();
            assert_eq!(r.candidate_pairs, [(0, 1)], "{kind} at {x}");
            let want: &[(u32, u32)] = if touching { &[(0, 1)] } else { &[] };
            assert_eq!(r.contacts, want, "{kind} at {x}");
        }
    }
}

/// Ten boxes all overlapping (45 box-box overlaps) and two spheres, one over the boxes (10
/// pairs) and near the other (1 pair): the limit counts 56 on every broad phase, 11 are
/// reported.
#[test]
fn the_pair_limit_counts_box_box_overlaps_alike_on_every_broad_phase() {
    let mut scene = random_scene(2, 0, 0, 9, TreeConfig::default());
    scene.tree.margin = 0.1;
    scene.boxes = (0..10)
        .map(|k| StaticBox {
            id: 100 + k,
            min: Vec3::new(10.0 + k as f32 * 0.1, 10.0, 0.0),
            max: Vec3::new(12.0 + k as f32 * 0.1, 12.0, 0.0),
        })
        .collect();
    scene.spheres = [(0, 11.0, 15.0), (1, 12.5, 13.0)]
        .into_iter()
        .map(|(id, x, y)| Sphere {
            id,
            label: None,
            center: Vec3::new(x, y, 0.0),
            radius: 1.0,
            velocity: Vec3::ZERO,
            appear_at: 0,
            disappear_at: None,
        })
        .collect();
    for kind in KINDS {
        let sim = Simulation::with_pair_limit(&scene, kind, 56).expect("56 fit");
        let (pairs, _, left_out) = reference(&sim);
        assert_eq!(left_out, 45, "{kind}");
        assert_eq!(pairs.len(), 11, "{kind}: {pairs:?}");
        assert_eq!(sim.report().candidate_pairs, pairs, "{kind}");
        match Simulation::with_pair_limit(&scene, kind, 55) {
            Err(
                e @ SceneError::Step {
                    step: 0,
                    source:
                        BroadphaseError::PairLimit {
                            limit: 55,
                            static_boxes: true,
                        },
                },
            ) => {
                // The message says that the boxes' own overlaps count (45 of the 56 here).
                let message = e.to_string();
                assert!(
                    message.contains("overlaps of two static boxes count too")
                        && message.contains("static boxes that overlap less"),
                    "{kind}: {message}"
                );
            }
            Err(e) => panic!("{kind}: {e}"),
            Ok(_) => panic!("{kind}: 56 pairs passed a limit of 55"),
        }
    }
}

#[test]
fn a_sphere_may_not_take_a_box_id_and_settings_keep_box_fat_boxes_finite() {
    let scene = random_scene(2, 5, 3, 4, TreeConfig::default());
    let mut sim = Simulation::new(&scene, BroadphaseKind::Brute).expect("runs");
    let box_id = scene.boxes[0].id;
    let mut sphere = scene.spheres[0].clone();
    sphere.id = box_id;
    let err = sim.add_sphere(sphere).expect_err("a box's id");
    assert_eq!(
        err.to_string(),
        format!("<scene>: id {box_id} is already taken by a static box")
    );
    // Switching broad phase keeps the boxes static.
    sim.set_broadphase(BroadphaseKind::Tree).expect("switch");
    let (pairs, _, _) = reference(&sim);
    assert_eq!(sim.report().candidate_pairs, pairs);
    // A settings change (a huge margin and look-ahead) keeps every fat box finite, the boxes'
    // too, and the pairs those of brute force over them.
    let wide = TreeConfig {
        margin: 1.0e6,
        velocity_lookahead: 10.0,
        ..TreeConfig::default()
    };
    sim.set_tree_settings(wide).expect("settings");
    assert_eq!(sim.tree_settings(), wide);
    for b in &scene.boxes {
        let fat = sim
            .broadphase()
            .fat_aabb(b.id)
            .unwrap_or_else(|| panic!("box {} has a fat box", b.id));
        assert!(
            fat.min.is_finite() && fat.max.is_finite(),
            "box {}: {fat:?}",
            b.id
        );
        assert!(
            fat.min.cmple(b.min).all() && fat.max.cmpge(b.max).all(),
            "box {}: {fat:?}",
            b.id
        );
    }
    let (pairs, _, _) = reference(&sim);
    assert_eq!(sim.report().candidate_pairs, pairs);
}

/// The hash and stats of the tree that one batch creation of `boxes` (id, min, max; sorted by
/// id, at rest) builds under `config`: what a scene's or a trace's broad phase holds before
/// its first update puts the moving bodies in.
fn batch_built(
    dims: u8,
    config: TreeConfig,
    boxes: &[(u32, Vec3, Vec3)],
) -> (u64, aabb_debugger::tree::TreeStats) {
    use aabb_debugger::tree::DynamicTree;
    use glam::Vec2;
    if dims == 2 {
        let items: Vec<(Aabb<Vec2>, Vec2, u32)> = boxes
            .iter()
            .map(|&(id, min, max)| (Aabb::new(min.truncate(), max.truncate()), Vec2::ZERO, id))
            .collect();
        let mut tree = DynamicTree::<Vec2, u32>::try_new(config).expect("settings");
        tree.create_proxies(&items).expect("boxes");
        (tree.structure_hash(), tree.stats())
    } else {
        let items: Vec<(Aabb<Vec3>, Vec3, u32)> = boxes
            .iter()
            .map(|&(id, min, max)| (Aabb::new(min, max), Vec3::ZERO, id))
            .collect();
        let mut tree = DynamicTree::<Vec3, u32>::try_new(config).expect("settings");
        tree.create_proxies(&items).expect("boxes");
        (tree.structure_hash(), tree.stats())
    }
}

/// Level geometry is built, not inserted box by box: a scene's static boxes, and a trace's,
/// go into the tree in one batch by the settings' rebuild method before the first update
/// inserts the moving bodies, so the tree a level opens with is the batch build's exactly,
/// and again when the broad phase is switched back to the tree.
#[test]
fn a_scene_and_a_trace_open_with_their_static_boxes_built_in_one_batch() {
    use aabb_debugger::trace::{Trace, TraceBox, TraceHeader, TraceSimulation};
    use aabb_debugger::tree::RebuildMethod;
    use std::sync::Arc;
    for dims in [2u8, 3] {
        for rebuild in [
            RebuildMethod::BinnedSah,
            RebuildMethod::Agglomerative,
            RebuildMethod::Greedy,
        ] {
            let config = TreeConfig {
                rebuild,
                ..TreeConfig::default()
            };
            let scene = random_scene(dims, 0, 2000, 40 + u64::from(dims), config);
            let mut boxes: Vec<(u32, Vec3, Vec3)> =
                scene.boxes.iter().map(|b| (b.id, b.min, b.max)).collect();
            boxes.sort_by_key(|b| b.0);
            let (hash, stats) = batch_built(dims, config, &boxes);
            let what = format!("{dims}D, {rebuild:?}");
            let sim = Simulation::new(&scene, BroadphaseKind::Tree).expect("opens");
            assert_eq!(sim.structure_hash(), hash, "{what}");
            let live = sim.report().tree.expect("a tree");
            assert_eq!(
                (live.leaves, live.nodes, live.height, live.area_ratio),
                (stats.leaves, stats.nodes, stats.height, stats.area_ratio),
                "{what}"
            );
            // Switching broad phase and back builds them the same way again.
            let mut sim = sim;
            sim.set_broadphase(BroadphaseKind::Brute).expect("switched");
            sim.set_broadphase(BroadphaseKind::Tree).expect("switched");
            assert_eq!(sim.structure_hash(), hash, "{what}, switched back");

            // A trace with the same static boxes and one step with no moving box.
            let statics: Vec<TraceBox> = boxes
                .iter()
                .map(|&(id, min, max)| TraceBox {
                    id,
                    aabb: Aabb::new(min, max),
                })
                .collect();
            let header = TraceHeader {
                dimensions: dims,
                dt: 1.0 / 60.0,
            };
            let trace =
                Trace::from_steps("level", header, statics, vec![Vec::new()]).expect("a trace");
            let sim = TraceSimulation::new(
                Arc::new(trace),
                BroadphaseKind::Tree,
                config,
                aabb_debugger::broadphase::DEFAULT_PAIR_LIMIT,
            )
            .expect("opens");
            assert_eq!(sim.structure_hash(), hash, "{what}, trace");
        }
    }
}
