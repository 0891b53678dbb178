//! The pile the `rapier_pile` example simulates, as a function a test can call too
//! (`tests/trace_rapier.rs` includes this file): rapier2d balls poured into an open box under
//! gravity until they pile up, each step's ball boxes (from rapier's colliders) handed to a
//! [`PileSink`] (a text trace, or the live link's recorder), the box's walls as its static
//! boxes. A sink that asks for it also gets rapier's own broad phase after each step
//! ([`EngineBroadPhase`]): its BVH's nodes, its leaves' boxes (the fat boxes) and its pairs.

use aabb_debugger::trace::{TraceBox, TraceError, TraceHeader, TraceWriter};
use aabb_debugger::tree::Aabb;
use aabb_recorder::wire::{EngineTree, NodeKind, TreeNode};
use glam::Vec3;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use rapier2d::parry::partitioning::{BvhNode, BvhNodeIndex, BvhWorkspace, TraversalAction};
use rapier2d::prelude::{ColliderBuilder, ColliderHandle, PhysicsWorld, RigidBodyBuilder, Vector};
use std::collections::BTreeMap;
use std::io::Write;

/// The seed of the radii and the pouring order: the same pile every run.
pub const SEED: u64 = 16;
/// The smallest and largest ball radius, metres.
pub const RADIUS: (f32, f32) = (0.08, 0.2);
/// Distance between ball centres in a poured row, metres (more than the largest diameter).
const ROW_SPACING: f32 = 0.45;
/// Steps between two poured rows (a row falls well clear of the next in this time).
const STEPS_PER_ROW: u64 = 6;
/// The speed a ball is poured at, metres per second, downwards.
const POUR_SPEED: f32 = 5.0;
/// The walls' thickness, metres.
const WALL: f32 = 1.0;

/// What to simulate.
#[derive(Clone, Copy, Debug)]
pub struct PileSpec {
    /// Balls poured.
    pub balls: u32,
    /// Steps simulated (and written: steps 0 to `steps - 1`).
    pub steps: u64,
}

impl PileSpec {
    /// Steps that pour every ball, let the last row fall and the pile settle: the pouring
    /// time plus six seconds.
    #[must_use]
    pub fn settling_steps(balls: u32) -> u64 {
        let rows = u64::from(balls).div_ceil(u64::from(Container::for_balls(balls).per_row()));
        rows * STEPS_PER_ROW + 360
    }
}

/// The open box: a floor at y = 0 and two walls at x = ±width/2, `height` high.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Container {
    /// Inside width, metres.
    pub width: f32,
    /// Wall height, metres.
    pub height: f32,
    /// Height the balls are poured from, metres.
    pub pour_height: f32,
}

impl Container {
    /// A box about as wide as the settled pile is high (its area holds the balls loosely).
    #[must_use]
    pub fn for_balls(balls: u32) -> Container {
        let width = (ROW_SPACING * (balls as f32).sqrt()).max(3.0);
        Container {
            width,
            height: 1.5 * width + 4.0,
            pour_height: 1.2 * width + 3.0,
        }
    }

    /// Balls in one poured row.
    #[must_use]
    pub fn per_row(&self) -> u32 {
        (((self.width - 2.0 * RADIUS.1) / ROW_SPACING) as u32).max(1)
    }

    /// The floor and the two walls as boxes, with ids `first`, `first + 1`, `first + 2`.
    #[must_use]
    pub fn walls(&self, first: u32) -> [TraceBox; 3] {
        let (half, h) = (0.5 * self.width, self.height);
        let b = |id, min: (f32, f32), max: (f32, f32)| TraceBox {
            id,
            aabb: Aabb::new(Vec3::new(min.0, min.1, 0.0), Vec3::new(max.0, max.1, 0.0)),
        };
        [
            b(first, (-half - WALL, -WALL), (half + WALL, 0.0)),
            b(first + 1, (-half - WALL, 0.0), (-half, h)),
            b(first + 2, (half, 0.0), (half + WALL, h)),
        ]
    }
}

/// What a pile run did.
#[derive(Clone, Debug, PartialEq)]
pub struct PileSummary {
    /// The container.
    pub container: Container,
    /// Steps written.
    pub steps: u64,
    /// Balls poured by the end.
    pub poured: u32,
    /// Mean height of the ball centres at the last step, metres.
    pub final_mean_height: f32,
    /// Highest ball top at the last step, metres.
    pub final_top: f32,
    /// Mean ball speed at the last step, metres per second.
    pub final_mean_speed: f32,
}

/// Where the pile's boxes go, step by step: a text trace ([`TraceWriter`]) or the live link's
/// recorder.
pub trait PileSink {
    /// Why the sink refused.
    type Error;
    /// The walls (once, before the first step) and the time step.
    fn begin(&mut self, walls: &[TraceBox], dt: f32) -> Result<(), Self::Error>;
    /// One step's ball boxes (as rapier's broad phase took them at that step), and rapier's
    /// own broad phase after the step when [`PileSink::wants_broad_phase`].
    fn step(
        &mut self,
        boxes: &[TraceBox],
        broad_phase: Option<&EngineBroadPhase>,
    ) -> Result<(), Self::Error>;
    /// Whether [`PileSink::step`] wants rapier's broad phase (walking it costs time).
    fn wants_broad_phase(&self) -> bool {
        false
    }
}

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

/// A sink that writes a text trace to `W` (made at [`PileSink::begin`]).
pub struct TraceSink<W: Write> {
    out: Option<W>,
    writer: Option<TraceWriter<W>>,
}

impl<W: Write> TraceSink<W> {
    /// A sink writing to `out`.
    pub fn new(out: W) -> Self {
        TraceSink {
            out: Some(out),
            writer: None,
        }
    }

    /// Flushes the trace.
    pub fn finish(self) -> Result<(), TraceError> {
        if let Some(writer) = self.writer {
            writer.finish()?;
        }
        Ok(())
    }
}

impl<W: Write> PileSink for TraceSink<W> {
    type Error = TraceError;
    fn begin(&mut self, walls: &[TraceBox], dt: f32) -> Result<(), TraceError> {
        if let Some(out) = self.out.take() {
            self.writer = Some(TraceWriter::new(
                out,
                TraceHeader { dimensions: 2, dt },
                walls,
            )?);
        }
        Ok(())
    }
    fn step(
        &mut self,
        boxes: &[TraceBox],
        _broad_phase: Option<&EngineBroadPhase>,
    ) -> Result<(), TraceError> {
        match &mut self.writer {
            Some(writer) => writer.step(boxes),
            None => Ok(()),
        }
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
pub fn simulate_pile<S: PileSink>(spec: PileSpec, sink: &mut S) -> Result<PileSummary, S::Error> {
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
    let mut rng = Pcg64::seed_from_u64(SEED);
    let per_row = container.per_row();
    let row_width = (per_row - 1) as f32 * ROW_SPACING;
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
        if step % STEPS_PER_ROW == 0 {
            // A row, each ball nudged sideways so the pile is not a lattice.
            for k in 0..per_row.min(spec.balls - balls.len() as u32) {
                let radius = rng.random_range(RADIUS.0..RADIUS.1);
                let jitter = rng.random_range(-0.02..0.02);
                let x = -0.5 * row_width + k as f32 * ROW_SPACING + jitter;
                let (_, collider) = world.insert(
                    RigidBodyBuilder::dynamic()
                        .translation(Vector::new(x, container.pour_height))
                        .linvel(Vector::new(0.0, -POUR_SPEED)),
                    ColliderBuilder::ball(radius).friction(0.5).restitution(0.1),
                );
                ids.insert(collider.into_raw_parts().0, balls.len() as u32);
                balls.push(collider);
            }
        }
        boxes.clear();
        for (id, &handle) in balls.iter().enumerate() {
            let Some(collider) = world.colliders.get(handle) else {
                continue;
            };
            let a = collider.compute_aabb();
            boxes.push(TraceBox {
                id: id as u32,
                aabb: Aabb::new(
                    Vec3::new(a.mins.x, a.mins.y, 0.0),
                    Vec3::new(a.maxs.x, a.maxs.y, 0.0),
                ),
            });
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
    let count = boxes.len().max(1) as f32;
    let mean_height = boxes
        .iter()
        .map(|b| 0.5 * (b.aabb.min.y + b.aabb.max.y))
        .sum::<f32>()
        / count;
    let top = boxes.iter().map(|b| b.aabb.max.y).fold(0.0, f32::max);
    let speed = balls
        .iter()
        .filter_map(|&h| world.colliders.get(h)?.parent())
        .filter_map(|body| world.bodies.get(body))
        .map(|body| body.linvel().length())
        .sum::<f32>()
        / count;
    Ok(PileSummary {
        container,
        steps: spec.steps,
        poured: balls.len() as u32,
        final_mean_height: mean_height,
        final_top: top,
        final_mean_speed: speed,
    })
}
