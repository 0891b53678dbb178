//! The pile the `rapier_pile` example simulates, as a function a test can call too
//! (`tests/trace_rapier.rs` includes this file): rapier2d balls poured into an open box under
//! gravity until they pile up, each step's ball boxes (from rapier's colliders) handed to a
//! [`PileSink`] (a text trace, or the live link's recorder), the box's walls as its static
//! boxes.

use aabb_debugger::trace::{TraceBox, TraceError, TraceHeader, TraceWriter};
use aabb_debugger::tree::Aabb;
use glam::Vec3;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use rapier2d::prelude::{ColliderBuilder, ColliderHandle, PhysicsWorld, RigidBodyBuilder, Vector};
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
    /// One step's ball boxes.
    fn step(&mut self, boxes: &[TraceBox]) -> Result<(), Self::Error>;
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
    fn step(&mut self, boxes: &[TraceBox]) -> Result<(), TraceError> {
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
    for wall in container.walls(spec.balls) {
        let (min, max) = (wall.aabb.min, wall.aabb.max);
        let centre = (min + max) * 0.5;
        let half = (max - min) * 0.5;
        world.insert(
            RigidBodyBuilder::fixed().translation(Vector::new(centre.x, centre.y)),
            ColliderBuilder::cuboid(half.x, half.y).friction(0.5),
        );
    }
    sink.begin(&container.walls(spec.balls), dt)?;
    let mut rng = Pcg64::seed_from_u64(SEED);
    let per_row = container.per_row();
    let row_width = (per_row - 1) as f32 * ROW_SPACING;
    let mut balls: Vec<ColliderHandle> = Vec::with_capacity(spec.balls as usize);
    let mut boxes = Vec::with_capacity(spec.balls as usize);
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
        sink.step(&boxes)?;
        world.step();
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
