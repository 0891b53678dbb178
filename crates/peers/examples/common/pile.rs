//! The pile the engine examples simulate, whatever the engine (`examples/rapier_pile` and
//! `examples/box2d_pile` include this file, and their tests through them): balls of varied
//! sizes poured in rows into an open box under gravity until they pile up, each step's ball
//! boxes handed to a [`PileSink`] (a text trace, or the live link's recorder), the box's walls
//! as its static boxes. Both engines pour the same balls at the same steps: the same seed,
//! the same radii, the same rows.

use aabb_debugger::trace::{TraceBox, TraceError, TraceHeader, TraceWriter};
use aabb_debugger::tree::Aabb;
use glam::Vec3;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
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
pub const POUR_SPEED: f32 = 5.0;
/// The walls' thickness, metres.
const WALL: f32 = 1.0;
/// The acceleration of gravity, metres per second squared, downwards.
pub const GRAVITY: f32 = 9.81;

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

/// A ball to pour: its id, where its centre starts and its radius (its speed is
/// [`POUR_SPEED`] downwards).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ball {
    /// Its id in the stream: balls are numbered from 0 in the order poured.
    pub id: u32,
    /// Its centre, metres.
    pub x: f32,
    /// Its centre, metres.
    pub y: f32,
    /// Its radius, metres.
    pub radius: f32,
}

/// The balls to pour, step by step: a row every few steps, each ball nudged sideways so the
/// pile is not a lattice.
pub struct Pourer {
    rng: Pcg64,
    balls: u32,
    poured: u32,
    per_row: u32,
    row_width: f32,
    pour_height: f32,
}

impl Pourer {
    /// Pours `balls` balls into `container`.
    #[must_use]
    pub fn new(balls: u32, container: &Container) -> Self {
        let per_row = container.per_row();
        Pourer {
            rng: Pcg64::seed_from_u64(SEED),
            balls,
            poured: 0,
            per_row,
            row_width: (per_row - 1) as f32 * ROW_SPACING,
            pour_height: container.pour_height,
        }
    }

    /// Balls poured so far.
    #[must_use]
    pub fn poured(&self) -> u32 {
        self.poured
    }

    /// The balls poured at `step` (none between rows and after the last ball).
    pub fn row(&mut self, step: u64) -> Vec<Ball> {
        if !step.is_multiple_of(STEPS_PER_ROW) {
            return Vec::new();
        }
        let count = self.per_row.min(self.balls - self.poured);
        let mut row = Vec::with_capacity(count as usize);
        for k in 0..count {
            let radius = self.rng.random_range(RADIUS.0..RADIUS.1);
            let jitter = self.rng.random_range(-0.02..0.02);
            row.push(Ball {
                id: self.poured,
                x: -0.5 * self.row_width + k as f32 * ROW_SPACING + jitter,
                y: self.pour_height,
                radius,
            });
            self.poured += 1;
        }
        row
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

impl PileSummary {
    /// The summary of a run whose last step had the ball boxes `boxes`, the balls moving at
    /// `speeds`.
    #[must_use]
    pub fn new(
        container: Container,
        steps: u64,
        poured: u32,
        boxes: &[TraceBox],
        speeds: impl Iterator<Item = f32>,
    ) -> Self {
        let count = boxes.len().max(1) as f32;
        let mean_height = boxes
            .iter()
            .map(|b| 0.5 * (b.aabb.min.y + b.aabb.max.y))
            .sum::<f32>()
            / count;
        let top = boxes.iter().map(|b| b.aabb.max.y).fold(0.0, f32::max);
        PileSummary {
            container,
            steps,
            poured,
            final_mean_height: mean_height,
            final_top: top,
            final_mean_speed: speeds.sum::<f32>() / count,
        }
    }
}

/// Where the pile's boxes go, step by step: a text trace ([`TraceSink`]) or the live link's
/// recorder. `P` is the engine's own broad phase at a step, as the engine's pile gives it.
pub trait PileSink<P> {
    /// Why the sink refused.
    type Error: Into<anyhow::Error>;
    /// The walls (once, before the first step) and the time step.
    fn begin(&mut self, walls: &[TraceBox], dt: f32) -> Result<(), Self::Error>;
    /// One step's ball boxes (as the engine's broad phase took them at that step), and the
    /// engine's own broad phase at the step when [`PileSink::wants_broad_phase`].
    fn step(&mut self, boxes: &[TraceBox], broad_phase: Option<&P>) -> Result<(), Self::Error>;
    /// Whether [`PileSink::step`] wants the engine's broad phase (reading it costs time).
    fn wants_broad_phase(&self) -> bool {
        false
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

impl<W: Write, P> PileSink<P> for TraceSink<W> {
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
    fn step(&mut self, boxes: &[TraceBox], _broad_phase: Option<&P>) -> Result<(), TraceError> {
        match &mut self.writer {
            Some(writer) => writer.step(boxes),
            None => Ok(()),
        }
    }
}

/// A 2D box as the trace holds it.
#[must_use]
pub fn trace_box(id: u32, min: [f32; 2], max: [f32; 2]) -> TraceBox {
    TraceBox {
        id,
        aabb: Aabb::new(
            Vec3::new(min[0], min[1], 0.0),
            Vec3::new(max[0], max[1], 0.0),
        ),
    }
}
