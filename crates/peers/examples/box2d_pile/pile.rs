//! The pile the `box2d_pile` example simulates, as a function a test can call too
//! (`tests/engines/engine_box2d.rs` includes this file): Box2D v3 (through boxdd) pours balls
//! into an open box under gravity until they pile up (the pile of `examples/common/pile.rs`,
//! as rapier pours it), each step's ball boxes (Box2D's own shape AABBs) handed to a
//! [`PileSink`], the box's walls as its static boxes. A sink that asks for it also gets what
//! boxdd lets be read of Box2D's own broad phase at each step ([`EngineBroadPhase`]).
//!
//! What Box2D's broad phase holds, and what of it can be read:
//!
//! - **A shape's AABB** (`b2Shape_GetAABB`): its geometry's box grown by Box2D's speculative
//!   distance (4 linear slops, 0.02 m). It is the box streamed for each ball and wall.
//! - **A shape's fat AABB**, its leaf's box in Box2D's trees: the AABB grown by the shape's
//!   margin (1/8 of a ball's radius, at most 0.05 m; a static shape's is the speculative
//!   distance) whenever the AABB leaves it. No getter returns it, but Box2D's debug draw
//!   walks its broad-phase trees and draws each shape, then that shape's fat AABB: each shape
//!   is given a custom colour that names it (its stream id + 1), so each drawn fat AABB is
//!   known by the colour drawn just before it. These are streamed as the fat boxes.
//! - **Its candidate pairs**: Box2D makes a contact for every pair of shapes whose fat AABBs
//!   overlap (unless both are static) and destroys it when they stop overlapping. The public
//!   API lists only the *touching* contacts (`b2Body_GetContactData`, begin/end touch
//!   events), which are not the candidate pairs. But its broad phase calls the world's
//!   custom filter for each pair it finds that has no contact yet, just before making one
//!   (its continuous collision calls it too, for a fast ball and a wall). So the pairs
//!   streamed are Box2D's contacts, followed: each pair the filter heard of, kept while its
//!   fat boxes overlap (Box2D's own rule for destroying a contact, applied to the fat boxes
//!   it holds; a pair its broad phase never made is missed, and the debugger says so). The
//!   world's contact count ([`EngineBroadPhase::candidate_pairs`], streamed too) is their
//!   number at every step (the test checks it).
//! - **Its trees**: their heights (`b2World_GetCounters`), not their nodes.
//! - **Its timings** (`b2World_GetProfile`): the pair update and the tree refits (its broad
//!   phase) and the collide pass (its narrow phase), in milliseconds.

use aabb_debugger::trace::TraceBox;
use aabb_recorder::Recorder;
use aabb_recorder::wire::{TIMING_BROAD_PHASE_NS, TIMING_NARROW_PHASE_NS};
use boxdd::prelude::{
    Aabb, BodyBuilder, BodyId, BodyType, DebugDraw, DebugDrawOptions, Foundation, HexColor,
    Position, ShapeDef, ShapeId, SurfaceMaterial, Vec2, World, WorldBuilder, WorldTransform,
    shapes,
};
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

// The pile itself (the box, the balls, the sinks) is the same in every engine's example.
// Each example and test uses a part of it; the test binary holds both engines' piles, each
// with its own copy.
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../common/pile.rs"]
mod common;
pub use common::*;

/// The time step, seconds.
pub const DT: f32 = 1.0 / 60.0;
/// Box2D's sub-steps a step (its recommended 4).
pub const SUB_STEPS: i32 = 4;
/// The most balls: each shape's custom colour (24 bits, 0 meaning none) names it.
pub const MAX_BALLS: u32 = 1_000_000;

/// Timing key: Box2D's contacts after the step's pair update and collide pass, one per pair
/// of shapes whose fat boxes overlap (both static excepted): its candidate pairs, counted.
pub const TIMING_CANDIDATE_PAIRS: &str = "candidate_pairs";
/// Timing key: the height of Box2D's tree of moving shapes.
pub const TIMING_TREE_HEIGHT: &str = "tree_height";
/// Timing key: the height of Box2D's tree of static shapes.
pub const TIMING_STATIC_TREE_HEIGHT: &str = "static_tree_height";

/// A shape's fat box: its stream id, min, max.
pub type FatBox = (u32, [f32; 2], [f32; 2]);

/// What can be read of Box2D's own broad phase at a step, by the stream's ids (balls `0..`,
/// walls after).
///
/// Box2D finds a step's new pairs at its start, from the fat boxes the step before left, and
/// drops the pairs whose fat boxes no longer overlap in the same step's collide pass; the
/// fat boxes then move with the shapes at the step's end. So step `k` carries the fat boxes
/// and shape AABBs read before it (the ones its broad phase used) and the contact count read
/// after it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineBroadPhase {
    /// Each shape's fat box: id, min, max, sorted by id.
    pub fat_boxes: Vec<FatBox>,
    /// Box2D's contacts after the step, followed: each pair its broad phase created (at this
    /// step or before) whose fat boxes still overlap, lower id first, sorted.
    pub pairs: Vec<[u32; 2]>,
    /// Box2D's count of its contacts after the step: one per candidate pair.
    pub candidate_pairs: u32,
    /// The height of its tree of moving shapes.
    pub tree_height: u32,
    /// The height of its tree of static shapes.
    pub static_tree_height: u32,
    /// Milliseconds of the step's pair update (`pairs`) and tree refit (`refit`): its broad
    /// phase. Wall-clock time: it differs from run to run.
    pub broad_phase_ms: f32,
    /// Milliseconds of the step's collide pass: its narrow phase. Wall-clock time.
    pub narrow_phase_ms: f32,
}

impl EngineBroadPhase {
    /// Adds the parts to the recorder's open step: the fat boxes and the counts, and with
    /// `times` the broad and narrow phases' times (which differ from run to run).
    pub fn send(&self, r: &mut Recorder, times: bool) {
        for (id, min, max) in &self.fat_boxes {
            r.fat_box(*id, min, max);
        }
        r.begin_pairs();
        for &[a, b] in &self.pairs {
            r.pair(a, b);
        }
        r.timing(TIMING_CANDIDATE_PAIRS, f64::from(self.candidate_pairs));
        r.timing(TIMING_TREE_HEIGHT, f64::from(self.tree_height));
        r.timing(
            TIMING_STATIC_TREE_HEIGHT,
            f64::from(self.static_tree_height),
        );
        if times {
            r.timing(TIMING_BROAD_PHASE_NS, f64::from(self.broad_phase_ms) * 1e6);
            r.timing(
                TIMING_NARROW_PHASE_NS,
                f64::from(self.narrow_phase_ms) * 1e6,
            );
            // The pairs its narrow phase tested: Box2D's collide pass updates the contacts of
            // awake bodies, which while the pile pours and settles are all of them (a pile
            // gone to sleep would make this an overcount). With the time above the debugger
            // fits what one pair test costs Box2D.
            r.timing(
                aabb_recorder::wire::TIMING_PAIRS_TESTED,
                f64::from(self.candidate_pairs),
            );
        }
    }
}

/// The colour that names the shape of stream id `id`.
fn tag(id: u32) -> HexColor {
    HexColor::from_rgb_u32(id + 1)
}

/// Collects the fat boxes Box2D's debug draw draws, each named by the custom colour of the
/// shape drawn just before it.
struct FatBoxes {
    /// The id the last shape drawn was tagged with.
    last: Option<u32>,
    boxes: Vec<FatBox>,
    /// Boxes drawn after no tagged shape (none, unless Box2D draws in another order).
    unnamed: usize,
}

impl FatBoxes {
    fn shape(&mut self, color: HexColor) {
        self.last = color.rgb_u32().checked_sub(1);
    }
}

impl DebugDraw for FatBoxes {
    fn draw_solid_circle(&mut self, _: WorldTransform, _: Vec2, _: f32, color: HexColor) {
        self.shape(color);
    }
    fn draw_solid_polygon(&mut self, _: WorldTransform, _: &[Vec2], _: f32, color: HexColor) {
        self.shape(color);
    }
    fn draw_bounds(&mut self, bounds: Aabb, _: HexColor) {
        match self.last.take() {
            Some(id) => {
                let (lo, hi) = (bounds.lower(), bounds.upper());
                self.boxes.push((id, [lo.x, lo.y], [hi.x, hi.y]));
            }
            None => self.unnamed += 1,
        }
    }
}

/// Box2D's fat boxes in `world` (sorted by id): an error when one cannot be named, or a
/// shape has two.
pub fn fat_boxes(world: &mut World) -> anyhow::Result<Vec<FatBox>> {
    let mut draw = FatBoxes {
        last: None,
        boxes: Vec::new(),
        unnamed: 0,
    };
    let options = DebugDrawOptions {
        draw_shapes: true,
        draw_bounds: true,
        draw_joints: false,
        ..DebugDrawOptions::default()
    };
    world.debug_draw(&mut draw, options)?;
    if draw.unnamed > 0 {
        anyhow::bail!("Box2D drew {} fat boxes of no named shape", draw.unnamed);
    }
    draw.boxes.sort_unstable_by_key(|b| b.0);
    if let Some(w) = draw.boxes.windows(2).find(|w| w[0].0 == w[1].0) {
        anyhow::bail!("Box2D drew two fat boxes for id {}", w[0].0);
    }
    Ok(draw.boxes)
}

/// The AABB Box2D holds for `shape` (its speculative distance included), as a trace box.
fn shape_box(world: &mut World, shape: ShapeId, id: u32) -> boxdd::Result<TraceBox> {
    let a = world.shape(shape)?.aabb()?;
    let (lo, hi) = (a.lower(), a.upper());
    Ok(trace_box(id, [lo.x, lo.y], [hi.x, hi.y]))
}

/// A shape's definition: the pile's friction and restitution, and the colour naming it; with
/// `filtered`, Box2D calls the world's custom filter for its new pairs.
fn shape_def(id: u32, restitution: f32, filtered: bool) -> boxdd::Result<ShapeDef> {
    let material = SurfaceMaterial::new()
        .with_friction(0.5)?
        .with_restitution(restitution)?
        .with_custom_color(tag(id));
    ShapeDef::builder()
        .density(1.0)
        .material(material)
        .enable_custom_filtering(filtered)
        .build()
}

/// The pairs Box2D's broad phase creates, as its custom filter sees them: the stream id of
/// each shape, the pairs seen since they were last taken, and the shapes seen that have no id.
#[derive(Default)]
struct NewPairs {
    ids: HashMap<ShapeId, u32>,
    pairs: Vec<[u32; 2]>,
    unknown: u64,
}

/// Box2D's contacts, followed from step to step: the pairs its broad phase created, each kept
/// while the fat boxes `fat` (sorted by id) overlap.
fn follow_pairs(kept: &mut Vec<[u32; 2]>, new: &[[u32; 2]], fat: &[FatBox]) {
    let fat_box = |id: u32| fat.binary_search_by_key(&id, |f| f.0).ok().map(|k| fat[k]);
    let overlap = |&[a, b]: &[u32; 2]| match (fat_box(a), fat_box(b)) {
        (Some(a), Some(b)) => (0..2).all(|k| a.1[k] <= b.2[k] && b.1[k] <= a.2[k]),
        _ => false,
    };
    // A contact is destroyed in the step's collide pass when its fat boxes no longer overlap.
    // A new one overlaps: Box2D finds it by querying its trees with a fat box. The filter also
    // hears of pairs its continuous collision considers (a fast ball and a wall) after the
    // collide pass; those whose fat boxes are apart are not contacts, and are left out here.
    kept.extend_from_slice(new);
    kept.retain(overlap);
    kept.sort_unstable();
    kept.dedup();
}

/// Simulates the pile and writes it as a trace to `out` (2D, `dt` 1/60 s; the walls are the
/// static boxes, ids `balls`, `balls + 1`, `balls + 2`; ball `k` has id `k`).
#[allow(dead_code)] // The example writes through its own sink.
pub fn write_pile(spec: PileSpec, out: impl Write) -> anyhow::Result<PileSummary> {
    let mut sink = TraceSink::new(out);
    let summary = simulate_pile(spec, &mut sink)?;
    sink.finish()?;
    Ok(summary)
}

/// Simulates the pile, handing each step's ball boxes to `sink` (the walls first): an error
/// when Box2D refuses a call, or the sink refuses.
pub fn simulate_pile<S: PileSink<EngineBroadPhase>>(
    spec: PileSpec,
    sink: &mut S,
) -> anyhow::Result<PileSummary> {
    if spec.balls > MAX_BALLS {
        anyhow::bail!("{} balls: at most {MAX_BALLS}", spec.balls);
    }
    let container = Container::for_balls(spec.balls);
    let foundation = Foundation::initialize_default()?;
    let mut world = foundation.create_world(
        WorldBuilder::from(foundation.world_def())
            .gravity(Vec2::new(0.0, -GRAVITY))
            .build()?,
    )?;
    // The pairs Box2D's broad phase creates: it asks the custom filter about each (the balls'
    // shapes enable it), which lets every one be.
    let new_pairs: Arc<Mutex<NewPairs>> = Arc::default();
    let wants = sink.wants_broad_phase();
    if wants {
        let seen = Arc::clone(&new_pairs);
        world.set_custom_filter(move |a, b| {
            if let Ok(mut seen) = seen.lock() {
                match (seen.ids.get(&a).copied(), seen.ids.get(&b).copied()) {
                    (Some(a), Some(b)) => seen.pairs.push([a.min(b), a.max(b)]),
                    _ => seen.unknown += 1,
                }
            }
            true
        })?;
    }
    let lost = || anyhow::anyhow!("the filter's pair list was poisoned");
    let name = |shape: ShapeId, id: u32| -> anyhow::Result<()> {
        new_pairs.lock().map_err(|_| lost())?.ids.insert(shape, id);
        Ok(())
    };
    // The walls, as Box2D holds them.
    let mut walls = Vec::new();
    for wall in container.walls(spec.balls) {
        let (min, max) = (wall.aabb.min, wall.aabb.max);
        let centre = (min + max) * 0.5;
        let half = (max - min) * 0.5;
        let body = world.create_body(
            BodyBuilder::from(foundation.body_def())
                .body_type(BodyType::Static)
                .position(Position::new(centre.x, centre.y))
                .build()?,
        )?;
        let shape = world.body(body)?.create_polygon(
            &shape_def(wall.id, 0.0, false)?,
            &shapes::box_polygon(half.x, half.y)?,
        )?;
        name(shape, wall.id)?;
        walls.push(shape_box(&mut world, shape, wall.id)?);
    }
    sink.begin(&walls, DT).map_err(Into::into)?;
    let mut pourer = Pourer::new(spec.balls, &container);
    let mut balls: Vec<(BodyId, ShapeId)> = Vec::with_capacity(spec.balls as usize);
    let mut boxes = Vec::with_capacity(spec.balls as usize);
    let mut kept: Vec<[u32; 2]> = Vec::new();
    for step in 0..spec.steps {
        for ball in pourer.row(step) {
            let body = world.create_body(
                BodyBuilder::from(foundation.body_def())
                    .body_type(BodyType::Dynamic)
                    .position(Position::new(ball.x, ball.y))
                    .linear_velocity(Vec2::new(0.0, -POUR_SPEED))
                    .build()?,
            )?;
            let shape = world.body(body)?.create_circle(
                &shape_def(ball.id, 0.1, wants)?,
                &shapes::circle(Vec2::new(0.0, 0.0), ball.radius)?,
            )?;
            name(shape, ball.id)?;
            balls.push((body, shape));
        }
        // The boxes and fat boxes before the step, as its broad phase takes them; the counts
        // after it.
        boxes.clear();
        for (id, &(_, shape)) in balls.iter().enumerate() {
            boxes.push(shape_box(&mut world, shape, id as u32)?);
        }
        let fat = if wants {
            fat_boxes(&mut world)?
        } else {
            Vec::new()
        };
        // No events are read: the step is checked for a failure after it and dropped.
        drop(world.step(DT, SUB_STEPS)?.into_result()?);
        if wants {
            let new = {
                let mut seen = new_pairs.lock().map_err(|_| lost())?;
                if seen.unknown > 0 {
                    anyhow::bail!(
                        "step {step}: Box2D made {} pairs with a shape the pile did not make",
                        seen.unknown
                    );
                }
                std::mem::take(&mut seen.pairs)
            };
            follow_pairs(&mut kept, &new, &fat);
            let counters = world.counters()?;
            let profile = world.profile()?;
            let count = |n: i32| u32::try_from(n).unwrap_or(0);
            let broad_phase = EngineBroadPhase {
                fat_boxes: fat,
                pairs: kept.clone(),
                candidate_pairs: count(counters.contact_count),
                tree_height: count(counters.tree_height),
                static_tree_height: count(counters.static_tree_height),
                broad_phase_ms: profile.pairs + profile.refit,
                narrow_phase_ms: profile.collide,
            };
            sink.step(&boxes, Some(&broad_phase)).map_err(Into::into)?;
        } else {
            sink.step(&boxes, None).map_err(Into::into)?;
        }
    }
    let mut speeds = Vec::with_capacity(balls.len());
    for &(body, _) in &balls {
        let v = world.body(body)?.linear_velocity()?;
        speeds.push(v.x.hypot(v.y));
    }
    Ok(PileSummary::new(
        container,
        spec.steps,
        pourer.poured(),
        &boxes,
        speeds.into_iter(),
    ))
}
