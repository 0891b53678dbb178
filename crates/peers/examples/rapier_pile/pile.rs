//! The pile the `rapier_pile` example simulates, as a function a test can call too
//! (`tests/engines/trace_rapier.rs` includes this file): rapier2d balls poured into an open
//! box under gravity until they pile up (the pile of `examples/common/pile.rs`), each step's
//! ball boxes (from rapier's colliders) handed to a [`PileSink`] (a text trace, or the live
//! link's recorder), the box's walls as its static boxes. A sink that asks for it also gets rapier's own broad phase after each step
//! ([`EngineBroadPhase`]): its BVH's nodes, its leaves' boxes (the fat boxes) and its pairs.

use aabb_debugger::trace::TraceError;
use aabb_recorder::wire::{EngineTree, NodeKind, TreeNode};
use rapier2d::parry::partitioning::{BvhNode, BvhNodeIndex, BvhWorkspace, TraversalAction};
use rapier2d::prelude::{ColliderBuilder, ColliderHandle, PhysicsWorld, RigidBodyBuilder, Vector};
use std::collections::BTreeMap;
use std::io::Write;

// The pile itself (the box, the balls, the sinks) is the same in every engine's example.
// Each example and test uses a part of it; the test binary holds both engines' piles, each
// with its own copy.
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../common/pile.rs"]
mod common;
pub use common::*;

/// rapier's own broad phase at a step, by the stream's ids (balls `0..`, walls after).
///
/// rapier updates its BVH's leaves at the end of a step (to the colliders' new boxes) and
/// refits their ancestors at the next step's broad-phase update, just before it walks the
/// tree for pairs. So the tree a step's pairs came from is the one the step before left,
/// refitted: that is what this holds for step `k` (taken after step `k - 1` on a refitted
/// copy), with the pairs step `k` reported and the colliders' boxes as step `k` took them. The
/// colliders poured at step `k` join the tree only during it: at such a step the tree is
/// partial and they have no fat box (the debugger then leaves the step's pair check out).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineBroadPhase {
    /// Each collider's leaf box in rapier's BVH (its fat box): id, min, max.
    pub fat_boxes: Vec<(u32, [f32; 2], [f32; 2])>,
    /// The pairs rapier's broad phase reported and has not removed (the narrow phase's
    /// contact pairs, which its pair events create and delete), lower id first, sorted.
    pub pairs: Vec<[u32; 2]>,
    /// rapier's BVH, refitted: node ids are parry's node indices (`BvhNodeIndex`), and the
    /// root parry keeps implicit (the union of its first two nodes) is [`IMPLICIT_ROOT`].
    pub tree: EngineTree,
    /// The margin every broad-phase box has around its shape's box: half rapier's prediction
    /// distance. The rest of a leaf's growth (the change-detection skin, which rapier sizes
    /// per collider, and the soft-CCD motion) is beyond it.
    pub margin: f32,
}

/// The node id of the root parry keeps implicit.
pub const IMPLICIT_ROOT: u32 = u32::MAX - 1;

/// The id a leaf is given when its collider is not one of the pile's (never, unless rapier
/// holds a collider the pile did not make): the debugger then refuses the tree, naming it.
const UNKNOWN_COLLIDER: u32 = u32::MAX - 2;

/// The pairs rapier's broad phase holds in `world` (lower id first, sorted), its colliders
/// named by `ids` (collider index -> stream id); colliders not in `ids` are left out.
pub fn engine_pairs(world: &PhysicsWorld, ids: &BTreeMap<u32, u32>) -> Vec<[u32; 2]> {
    let id_of = |handle: ColliderHandle| ids.get(&handle.into_raw_parts().0).copied();
    let mut pairs: Vec<[u32; 2]> = world
        .contact_pairs()
        .filter_map(|p| {
            let (a, b) = (id_of(p.collider1)?, id_of(p.collider2)?);
            Some([a.min(b), a.max(b)])
        })
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// rapier's BVH in `world`, refitted on a copy as the next broad-phase update refits it, with
/// its leaves' boxes (no pairs: see [`EngineBroadPhase`]).
pub fn engine_tree(world: &PhysicsWorld, ids: &BTreeMap<u32, u32>) -> EngineBroadPhase {
    let corners = |n: &BvhNode| {
        let (a, b) = (n.mins(), n.maxs());
        ([a.x, a.y], [b.x, b.y])
    };
    let mut refitted = world.query_pipeline().bvh.clone();
    refitted.refit(&mut BvhWorkspace::default());
    let bvh = &refitted;
    // Every node, parents before children; then each branch's two children (parry keeps a
    // branch's link to its children private: a walk from the branch that stops at them
    // names them). The first two nodes' parent is the root parry keeps implicit.
    let mut visited: Vec<(BvhNodeIndex, BvhNode)> = Vec::new();
    bvh.traverse_indexed(None, |node, index| {
        visited.push((index, *node));
        TraversalAction::Continue
    });
    let single_leaf = visited.len() == 1;
    let mut parent_of: BTreeMap<u32, u32> = BTreeMap::new();
    let mut nodes: Vec<TreeNode> = Vec::with_capacity(visited.len() + 1);
    let mut fat_boxes = Vec::new();
    for (index, node) in &visited {
        let id = index.0 as u32;
        let (min, max) = corners(node);
        let kind = match node.leaf_data() {
            Some(leaf) => {
                let proxy = ids.get(&leaf).copied().unwrap_or(UNKNOWN_COLLIDER);
                fat_boxes.push((proxy, min, max));
                NodeKind::Leaf(proxy)
            }
            None => {
                let mut children = Vec::with_capacity(2);
                bvh.traverse_indexed(Some(*index), |_, i| {
                    if i.0 == index.0 {
                        TraversalAction::Continue
                    } else {
                        children.push(i.0 as u32);
                        TraversalAction::Prune
                    }
                });
                for &c in &children {
                    parent_of.insert(c, id);
                }
                match children[..] {
                    [a, b] => NodeKind::Branch([a, b]),
                    _ => NodeKind::Branch([UNKNOWN_COLLIDER, UNKNOWN_COLLIDER]),
                }
            }
        };
        nodes.push(TreeNode {
            id,
            parent: None,
            kind,
            min: [min[0], min[1], 0.0],
            max: [max[0], max[1], 0.0],
            height: 0,
            enlarged: false,
        });
    }
    for n in &mut nodes {
        n.parent = match parent_of.get(&n.id) {
            Some(&p) => Some(p),
            None if single_leaf => None,
            None => Some(IMPLICIT_ROOT),
        };
    }
    let root = if nodes.is_empty() {
        None
    } else if single_leaf {
        Some(nodes[0].id)
    } else {
        let r = bvh.root_aabb();
        nodes.push(TreeNode {
            id: IMPLICIT_ROOT,
            parent: None,
            kind: NodeKind::Branch([0, 1]),
            min: [r.mins.x, r.mins.y, 0.0],
            max: [r.maxs.x, r.maxs.y, 0.0],
            height: 0,
            enlarged: false,
        });
        Some(IMPLICIT_ROOT)
    };
    // Heights, children before parents: the walk visits parents first.
    let position: BTreeMap<u32, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    for i in (0..nodes.len()).rev() {
        if let NodeKind::Branch(children) = nodes[i].kind {
            let h = children
                .iter()
                .filter_map(|c| position.get(c).map(|&k| nodes[k].height))
                .max()
                .unwrap_or(0);
            nodes[i].height = h + 1;
        }
    }
    // The implicit root was pushed last: its children's heights are known only now.
    if let Some(&k) = position.get(&IMPLICIT_ROOT) {
        let h = [0u32, 1]
            .iter()
            .filter_map(|c| position.get(c).map(|&j| nodes[j].height))
            .max()
            .unwrap_or(0);
        nodes[k].height = h + 1;
    }
    fat_boxes.sort_unstable_by_key(|b| b.0);
    EngineBroadPhase {
        fat_boxes,
        pairs: Vec::new(),
        tree: EngineTree {
            root,
            partial: false,
            nodes,
        },
        margin: world.integration_parameters.prediction_distance() / 2.0,
    }
}

/// Simulates the pile and writes it as a trace to `out` (2D, `dt` = rapier's 1/60 s; the
/// walls are the static boxes, ids `balls`, `balls + 1`, `balls + 2`; ball `k` has id `k`).
#[allow(dead_code)] // The example streams; the test writes the trace.
pub fn write_pile(spec: PileSpec, out: impl Write) -> Result<PileSummary, TraceError> {
    let mut sink = TraceSink::new(out);
    let summary = simulate_pile(spec, &mut sink)?;
    sink.finish()?;
    Ok(summary)
}

/// Simulates the pile, handing each step's ball boxes to `sink` (the walls first).
pub fn simulate_pile<S: PileSink<EngineBroadPhase>>(
    spec: PileSpec,
    sink: &mut S,
) -> Result<PileSummary, S::Error> {
    let container = Container::for_balls(spec.balls);
    let mut world = PhysicsWorld::default();
    let dt = world.integration_parameters.dt;
    // Collider index -> the stream's id (balls 0.., walls after), for rapier's broad phase.
    let mut ids: BTreeMap<u32, u32> = BTreeMap::new();
    for wall in container.walls(spec.balls) {
        let (min, max) = (wall.aabb.min, wall.aabb.max);
        let centre = (min + max) * 0.5;
        let half = (max - min) * 0.5;
        let (_, collider) = world.insert(
            RigidBodyBuilder::fixed().translation(Vector::new(centre.x, centre.y)),
            ColliderBuilder::cuboid(half.x, half.y).friction(0.5),
        );
        ids.insert(collider.into_raw_parts().0, wall.id);
    }
    sink.begin(&container.walls(spec.balls), dt)?;
    let mut pourer = Pourer::new(spec.balls, &container);
    let mut balls: Vec<ColliderHandle> = Vec::with_capacity(spec.balls as usize);
    let mut boxes = Vec::with_capacity(spec.balls as usize);
    let wants = sink.wants_broad_phase();
    let walls = container.walls(spec.balls).len();
    // rapier's tree as the step before left it, refitted (empty before the first step).
    let mut tree_before = EngineBroadPhase {
        margin: world.integration_parameters.prediction_distance() / 2.0,
        ..EngineBroadPhase::default()
    };
    for step in 0..spec.steps {
        for ball in pourer.row(step) {
            let (_, collider) = world.insert(
                RigidBodyBuilder::dynamic()
                    .translation(Vector::new(ball.x, ball.y))
                    .linvel(Vector::new(0.0, -POUR_SPEED)),
                ColliderBuilder::ball(ball.radius)
                    .friction(0.5)
                    .restitution(0.1),
            );
            ids.insert(collider.into_raw_parts().0, ball.id);
            balls.push(collider);
        }
        boxes.clear();
        for (id, &handle) in balls.iter().enumerate() {
            let Some(collider) = world.colliders.get(handle) else {
                continue;
            };
            let a = collider.compute_aabb();
            boxes.push(trace_box(
                id as u32,
                [a.mins.x, a.mins.y],
                [a.maxs.x, a.maxs.y],
            ));
        }
        // The boxes are the colliders' before the step, as its broad phase takes them; the
        // sink gets them with the tree that broad phase walked and the pairs it reported.
        world.step();
        if wants {
            let mut broad_phase = std::mem::take(&mut tree_before);
            broad_phase.pairs = engine_pairs(&world, &ids);
            broad_phase.tree.partial = broad_phase.fat_boxes.len() < boxes.len() + walls;
            sink.step(&boxes, Some(&broad_phase))?;
            tree_before = engine_tree(&world, &ids);
        } else {
            sink.step(&boxes, None)?;
        }
    }
    let speeds = balls
        .iter()
        .filter_map(|&h| world.colliders.get(h)?.parent())
        .filter_map(|body| world.bodies.get(body))
        .map(|body| body.linvel().length());
    Ok(PileSummary::new(
        container,
        spec.steps,
        pourer.poured(),
        &boxes,
        speeds,
    ))
}
