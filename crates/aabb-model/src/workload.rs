//! The standard benchmark workload (docs/performance.md, "The standard workload"):
//! deterministic 2D circles (splitmix64, seed 42), the step rule, the pair hash, and a driver
//! that runs any broad phase over it.
//!
//! A broad phase plugs in through [`WorkloadBroadphase`]; [`run`] builds it, steps the circles
//! and tallies the pairs it reports. Every correct broad phase gives the same
//! [`RunReport::pair_hash`]. Ours are the crate's broad phases ([`crate::broadphase`]: the
//! tree, brute force, sweep-and-prune, Box2D's own tree), driven through [`OurBroadphase`];
//! the benchmark adds the peers.

use crate::broadphase::{
    Bodies, Body, Box2dBroadphase, BroadphaseCore, BruteForce, SweepAndPrune, TreeBroadphase,
    UpdateOutcome, config_label,
};
use crate::motion::advance_and_bounce;
use crate::tree::{Aabb, TreeConfig};
use glam::Vec2;
use std::time::Instant;

/// The seed of the workload's splitmix64 generator.
pub const SEED: u64 = 42;
/// Fat-box margin, world units: a fat box is the tight box grown by this on every side.
pub const MARGIN: f32 = 0.1;
/// Seconds per step.
pub const DT_SECS: f32 = 1.0 / 60.0;
/// Steps of the standard run.
pub const STANDARD_STEPS: usize = 600;
/// The largest circle count accepted (ids must fit the pair key's 32-bit halves).
pub const MAX_CIRCLES: usize = 10_000_000;
/// The largest step count accepted.
pub const MAX_STEPS: usize = 1_000_000;

/// Input the workload refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    /// The circle count is 0 or above [`MAX_CIRCLES`].
    #[error("the circle count must be between 1 and {MAX_CIRCLES}, got {0}")]
    CircleCount(usize),
    /// The step count is 0 or above [`MAX_STEPS`].
    #[error("the step count must be between 1 and {MAX_STEPS}, got {0}")]
    StepCount(usize),
    /// A hand-made circle does not fit the world or has a bad radius or velocity.
    #[error("circle {index}: {what}")]
    BadCircle {
        /// Index of the circle.
        index: usize,
        /// What is wrong with it.
        what: &'static str,
    },
}

/// splitmix64's finaliser (a bijection on `u64`; wrapping arithmetic).
#[must_use]
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The splitmix64 generator of the workload.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator with the given state (the workload uses [`SEED`]).
    #[must_use]
    pub fn new(state: u64) -> Self {
        Self { state }
    }

    /// The next 64 random bits: `state += 0x9E3779B97F4A7C15`, then [`mix64`] of the state.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }

    /// A number in `[a, b)`: 53 random bits scaled in `f64`, rounded to `f32` at the end.
    pub fn uniform(&mut self, a: f64, b: f64) -> f32 {
        let u = (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        (a + (b - a) * u) as f32
    }
}

/// One circle of the workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Circle {
    /// Centre, world units.
    pub center: Vec2,
    /// Velocity, world units per second.
    pub velocity: Vec2,
    /// Radius, world units.
    pub radius: f32,
}

impl Circle {
    /// The tight box: the centre ± the radius.
    #[must_use]
    #[inline]
    pub fn tight(&self) -> Aabb<Vec2> {
        Aabb::new(
            self.center - Vec2::splat(self.radius),
            self.center + Vec2::splat(self.radius),
        )
    }
}

/// The fat box of a tight box: grown by [`MARGIN`] on every side.
#[must_use]
#[inline]
pub fn fat_box(tight: &Aabb<Vec2>) -> Aabb<Vec2> {
    tight.grown(MARGIN)
}

/// True when two closed boxes share a point (the workload's overlap test).
#[must_use]
#[inline]
pub fn overlaps(a: &Aabb<Vec2>, b: &Aabb<Vec2>) -> bool {
    a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y
}

/// The hash term of pair `(i, j)`, `i < j`: `mix64((i << 32) | j)`.
#[must_use]
#[inline]
pub fn pair_key(i: u32, j: u32) -> u64 {
    mix64((u64::from(i) << 32) | u64::from(j))
}

/// A running count and hash of pairs; the order pairs arrive in does not matter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairTally {
    /// Pairs added.
    pub pairs: u64,
    /// Wrapping sum of [`pair_key`] over the pairs added.
    pub hash: u64,
}

impl PairTally {
    /// Adds pair `{a, b}` (either order; `a != b`).
    #[inline]
    pub fn add(&mut self, a: u32, b: u32) {
        let (i, j) = if a < b { (a, b) } else { (b, a) };
        self.pairs += 1;
        self.hash = self.hash.wrapping_add(pair_key(i, j));
    }

    /// Adds another tally's pairs.
    pub fn merge(&mut self, other: PairTally) {
        self.pairs += other.pairs;
        self.hash = self.hash.wrapping_add(other.hash);
    }
}

/// The circles of the workload, their fat boxes, and which fat boxes the last step changed.
#[derive(Clone, Debug)]
pub struct Workload {
    side: f32,
    circles: Vec<Circle>,
    fat: Vec<Aabb<Vec2>>,
    moved: Vec<u32>,
}

impl Workload {
    /// The standard workload of `n` circles (seed [`SEED`]); an error when `n` is 0 or above
    /// [`MAX_CIRCLES`].
    pub fn new(n: usize) -> Result<Self, WorkloadError> {
        if n == 0 || n > MAX_CIRCLES {
            return Err(WorkloadError::CircleCount(n));
        }
        let side = ((n as f64).sqrt() * 4.0) as f32;
        let mut rng = SplitMix64::new(SEED);
        let mut circles = Vec::with_capacity(n);
        for _ in 0..n {
            let r = rng.uniform(0.5, 1.5);
            let x = rng.uniform(f64::from(r), f64::from(side - r));
            let y = rng.uniform(f64::from(r), f64::from(side - r));
            let vx = rng.uniform(-1.0, 1.0);
            let vy = rng.uniform(-1.0, 1.0);
            circles.push(Circle {
                center: Vec2::new(x, y),
                velocity: Vec2::new(vx, vy),
                radius: r,
            });
        }
        Ok(Self::from_parts(side, circles))
    }

    /// A workload of hand-made circles in the square `[0, side]²` (for small checkable cases).
    /// An error names a circle whose numbers are not finite, whose radius is not positive, or
    /// that does not fit the square.
    pub fn from_circles(side: f32, circles: Vec<Circle>) -> Result<Self, WorkloadError> {
        if circles.is_empty() || circles.len() > MAX_CIRCLES {
            return Err(WorkloadError::CircleCount(circles.len()));
        }
        for (index, c) in circles.iter().enumerate() {
            let bad = |what| Err(WorkloadError::BadCircle { index, what });
            if !(c.center.is_finite() && c.velocity.is_finite() && c.radius.is_finite()) {
                return bad("a number is not finite");
            }
            if c.radius <= 0.0 {
                return bad("the radius must be > 0");
            }
            let lo = c.center - Vec2::splat(c.radius);
            let hi = c.center + Vec2::splat(c.radius);
            if !(side.is_finite() && lo.min_element() >= 0.0 && hi.max_element() <= side) {
                return bad("the circle does not fit the world square");
            }
        }
        Ok(Self::from_parts(side, circles))
    }

    fn from_parts(side: f32, circles: Vec<Circle>) -> Self {
        let fat = circles.iter().map(|c| fat_box(&c.tight())).collect();
        Self {
            side,
            circles,
            fat,
            moved: Vec::new(),
        }
    }

    /// Side of the world square, world units.
    #[must_use]
    pub fn side(&self) -> f32 {
        self.side
    }

    /// Number of circles.
    #[must_use]
    pub fn len(&self) -> usize {
        self.circles.len()
    }

    /// True when there are no circles (never, for a workload made by [`Workload::new`]).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.circles.is_empty()
    }

    /// The circles; a circle's index is its id.
    #[must_use]
    pub fn circles(&self) -> &[Circle] {
        &self.circles
    }

    /// The current fat boxes, indexed by circle id.
    #[must_use]
    pub fn fat_boxes(&self) -> &[Aabb<Vec2>] {
        &self.fat
    }

    /// Ids whose fat box the last [`Workload::step`] recomputed, ascending.
    #[must_use]
    pub fn moved(&self) -> &[u32] {
        &self.moved
    }

    /// Advances every circle by [`DT_SECS`], bouncing off the walls, and recomputes the fat box
    /// of each circle whose tight box left it (comparisons `<=`). Returns those ids, ascending.
    pub fn step(&mut self) -> &[u32] {
        let side = self.side;
        self.moved.clear();
        for (i, (c, fat)) in self.circles.iter_mut().zip(&mut self.fat).enumerate() {
            let r = c.radius;
            let mut p = c.center;
            let mut v = c.velocity;
            for axis in 0..2 {
                let (x, bounced) = advance_and_bounce(p[axis], v[axis], DT_SECS, r, side - r);
                p[axis] = x;
                if bounced {
                    v[axis] = -v[axis];
                }
            }
            c.center = p;
            c.velocity = v;
            let tight = c.tight();
            if !fat.contains(&tight) {
                *fat = fat_box(&tight);
                // The count is at most MAX_CIRCLES, which fits u32.
                self.moved.push(i as u32);
            }
        }
        &self.moved
    }
}

/// A broad phase the workload can drive: it mirrors the workload's fat boxes and reports the
/// pairs whose fat boxes overlap.
pub trait WorkloadBroadphase {
    /// A short name for tables ("brute", "sap", "tree SA+rot+self", ...).
    fn name(&self) -> String;
    /// Builds from the workload's current fat boxes (circle `i` is proxy `i`).
    fn build(&mut self, workload: &Workload);
    /// Brings the structure up to date after [`Workload::step`] (see [`Workload::moved`]);
    /// returns how many proxies it reinserted or enlarged.
    fn update(&mut self, workload: &Workload) -> usize;
    /// Adds every pair of circles whose fat boxes overlap to `tally`, once each, any order.
    fn find_pairs(&mut self, workload: &Workload, tally: &mut PairTally);
    /// Bytes the structure holds (capacities), when the implementation can say.
    fn bytes(&self) -> Option<usize> {
        None
    }
}

/// One of the crate's broad phases ([`crate::broadphase`]) driving the workload: circle `i` is
/// body `i`, with the workload's margin ([`MARGIN`]) and no look-ahead. It keeps the bodies
/// and the update's outcome between steps, so a step allocates nothing.
#[derive(Clone, Debug)]
pub struct OurBroadphase<B> {
    phase: B,
    name: String,
    outcome: UpdateOutcome,
}

/// The circles as the broad phases' bodies: circle `i` is body `i`, read in place.
struct CircleBodies<'a>(&'a [Circle]);

impl Bodies<Vec2> for CircleBodies<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    #[inline]
    fn body(&self, k: usize) -> Body<Vec2> {
        let c = &self.0[k];
        Body {
            // Ids fit u32: the count is at most MAX_CIRCLES.
            id: k as u32,
            tight: c.tight(),
            velocity: c.velocity,
        }
    }

    /// The workload's circles are finite and inside its finite world square (checked when it
    /// was made, kept by the step rule). With no look-ahead, as the workload runs, and a
    /// margin under 1e30 (less than half the spacing of f32 at its largest value, so adding it
    /// to any finite coordinate rounds to a finite one), no fat box can overflow.
    fn known_usable(&self, config: &TreeConfig) -> bool {
        config.velocity_lookahead == 0.0 && config.margin.is_finite() && config.margin < 1e30
    }

    /// Circle `k` is body `k`.
    fn ids_are_positions(&self) -> bool {
        true
    }
}

/// The workload's settings for a tree configuration: its margin, no look-ahead.
#[must_use]
pub fn workload_config(config: TreeConfig) -> TreeConfig {
    TreeConfig {
        margin: MARGIN,
        velocity_lookahead: 0.0,
        ..config
    }
}

impl OurBroadphase<TreeBroadphase<Vec2>> {
    /// The tree with a given configuration (margin and look-ahead forced to the workload's).
    #[must_use]
    pub fn tree(config: TreeConfig) -> Self {
        Self::tree_on(config, false)
    }

    /// The same, finding pairs on rayon's thread pool.
    #[must_use]
    pub fn tree_parallel(config: TreeConfig) -> Self {
        Self::tree_on(config, true)
    }

    fn tree_on(config: TreeConfig, parallel: bool) -> Self {
        let config = workload_config(config);
        let mut tree = match TreeBroadphase::new(config) {
            Ok(tree) => tree,
            // The workload's margin (0.1) and look-ahead (0) are valid settings.
            Err(_) => unreachable!("the workload's margin and look-ahead are valid"),
        };
        // The workload's pairs are bounded (about 0.63 per circle); it runs without a limit,
        // as the peers do.
        crate::broadphase::Broadphase::set_pair_limit(&mut tree, usize::MAX);
        tree.set_parallel(parallel);
        let threads = if parallel { ", rayon" } else { "" };
        Self::with_name(tree, format!("tree {}{threads}", config_label(&config)))
    }
}

impl OurBroadphase<BruteForce<Vec2>> {
    /// Brute force.
    #[must_use]
    pub fn brute_force() -> Self {
        let mut phase = BruteForce::new(workload_config(TreeConfig::default()));
        crate::broadphase::Broadphase::set_pair_limit(&mut phase, usize::MAX);
        Self::with_name(phase, "brute force".to_owned())
    }
}

impl OurBroadphase<SweepAndPrune<Vec2>> {
    /// Sweep-and-prune.
    #[must_use]
    pub fn sweep_and_prune() -> Self {
        let mut phase = SweepAndPrune::new(workload_config(TreeConfig::default()));
        crate::broadphase::Broadphase::set_pair_limit(&mut phase, usize::MAX);
        Self::with_name(phase, "sweep-and-prune".to_owned())
    }
}

impl OurBroadphase<Box2dBroadphase> {
    /// Box2D v3's own tree, driven as Box2D's broad phase drives it (see
    /// [`crate::broadphase::box2d`]).
    #[must_use]
    pub fn box2d() -> Self {
        let mut phase = Box2dBroadphase::new(workload_config(TreeConfig::default()));
        crate::broadphase::Broadphase::set_pair_limit(&mut phase, usize::MAX);
        Self::with_name(
            phase,
            format!("Box2D's tree ({})", &box2d_tree::BOX2D_COMMIT[..8]),
        )
    }
}

impl<B: BroadphaseCore<Vec2>> OurBroadphase<B> {
    fn with_name(phase: B, name: String) -> Self {
        Self {
            phase,
            name,
            outcome: UpdateOutcome::default(),
        }
    }
}

impl<B: BroadphaseCore<Vec2>> WorkloadBroadphase for OurBroadphase<B> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn build(&mut self, workload: &Workload) {
        if let Err(e) = self.phase.build(&CircleBodies(workload.circles())) {
            unreachable!("the workload's circles are finite and fit the world: {e}");
        }
    }

    fn update(&mut self, workload: &Workload) -> usize {
        let bodies = CircleBodies(workload.circles());
        if let Err(e) = self.phase.update_bodies(&bodies, &mut self.outcome) {
            unreachable!("the workload's circles are finite and fit the world: {e}");
        }
        self.outcome.reinserted.len()
    }

    fn find_pairs(&mut self, _workload: &Workload, tally: &mut PairTally) {
        if let Err(e) = self.phase.visit_pairs(|a, b| tally.add(a, b)) {
            unreachable!("the workload runs without a pair limit: {e}");
        }
    }

    fn bytes(&self) -> Option<usize> {
        Some(self.phase.bytes())
    }
}

/// What [`run`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct RunReport {
    /// The broad phase's name.
    pub name: String,
    /// Circles.
    pub n: usize,
    /// Steps run.
    pub steps: usize,
    /// Time to build the broad phase from the initial fat boxes, milliseconds.
    pub build_ms: f64,
    /// Time of each step's update and pair search, milliseconds (the circles' motion, the
    /// same for everyone, is not timed).
    pub step_ms: Vec<f64>,
    /// Pairs over all steps.
    pub total_pairs: u64,
    /// Reinserts (or enlargements) over all steps, as the broad phase counted them.
    pub total_reinserts: u64,
    /// Fat-box recomputations over all steps, by the workload's rule.
    pub total_moved: u64,
    /// Wrapping sum of [`pair_key`] over all steps and pairs.
    pub pair_hash: u64,
    /// Bytes of the structure after the last step, when the broad phase can say.
    pub structure_bytes: Option<usize>,
}

impl RunReport {
    /// Mean milliseconds per step.
    #[must_use]
    pub fn mean_step_ms(&self) -> f64 {
        if self.step_ms.is_empty() {
            return 0.0;
        }
        self.step_ms.iter().sum::<f64>() / self.step_ms.len() as f64
    }

    /// Median milliseconds per step (the mean of the middle two for an even count).
    #[must_use]
    pub fn median_step_ms(&self) -> f64 {
        let mut v = self.step_ms.clone();
        if v.is_empty() {
            return 0.0;
        }
        v.sort_by(f64::total_cmp);
        let m = v.len() / 2;
        if v.len() % 2 == 1 {
            v[m]
        } else {
            (v[m - 1] + v[m]) / 2.0
        }
    }

    /// Average pairs per step.
    #[must_use]
    pub fn avg_pairs(&self) -> f64 {
        self.total_pairs as f64 / self.steps.max(1) as f64
    }

    /// Average reinserts per step, as the broad phase counted them.
    #[must_use]
    pub fn reinserts_per_step(&self) -> f64 {
        self.total_reinserts as f64 / self.steps.max(1) as f64
    }

    /// The pair hash as 16 lowercase hex digits.
    #[must_use]
    pub fn pair_hash_hex(&self) -> String {
        format!("{:016x}", self.pair_hash)
    }
}

/// Runs the standard workload of `n` circles for `steps` steps on `broadphase`.
pub fn run<B: WorkloadBroadphase + ?Sized>(
    broadphase: &mut B,
    n: usize,
    steps: usize,
) -> Result<RunReport, WorkloadError> {
    let workload = Workload::new(n)?;
    run_workload(broadphase, workload, steps)
}

/// Runs a given workload (standard or hand-made) for `steps` steps on `broadphase`.
pub fn run_workload<B: WorkloadBroadphase + ?Sized>(
    broadphase: &mut B,
    mut workload: Workload,
    steps: usize,
) -> Result<RunReport, WorkloadError> {
    if steps == 0 || steps > MAX_STEPS {
        return Err(WorkloadError::StepCount(steps));
    }
    let t0 = Instant::now();
    broadphase.build(&workload);
    let build_ms = t0.elapsed().as_secs_f64() * 1e3;
    let mut step_ms = Vec::with_capacity(steps);
    let mut tally = PairTally::default();
    let mut total_reinserts = 0u64;
    let mut total_moved = 0u64;
    for _ in 0..steps {
        total_moved += workload.step().len() as u64;
        let t = Instant::now();
        total_reinserts += broadphase.update(&workload) as u64;
        broadphase.find_pairs(&workload, &mut tally);
        step_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(RunReport {
        name: broadphase.name(),
        n: workload.len(),
        steps,
        build_ms,
        step_ms,
        total_pairs: tally.pairs,
        total_reinserts,
        total_moved,
        pair_hash: tally.hash,
        structure_bytes: broadphase.bytes(),
    })
}

/// Peak resident set size of this process in KiB (`VmHWM` of `/proc/self/status`); `None`
/// where that is not available.
#[must_use]
pub fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values below were computed independently (Python, wrapping 64-bit arithmetic,
    // `struct` for f32 rounding).

    #[test]
    fn mix64_of_known_inputs() {
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 0x5692_161d_100b_05e5);
        assert_eq!(pair_key(1, 2), 0xf2c6_924e_7dfe_d23e);
    }

    #[test]
    fn splitmix64_seed_42_first_outputs() {
        let mut rng = SplitMix64::new(SEED);
        assert_eq!(rng.next_u64(), 0xbdd7_3226_2feb_6e95);
        assert_eq!(rng.next_u64(), 0x28ef_e333_b266_f103);
        assert_eq!(rng.next_u64(), 0x4752_6757_130f_9f52);
    }

    #[test]
    fn standard_circles_match_an_independent_generator() {
        let w = Workload::new(1000).expect("valid count");
        assert_eq!(w.side().to_bits(), 0x42fc_fb72);
        let bits = |c: &Circle| {
            [
                c.radius.to_bits(),
                c.center.x.to_bits(),
                c.center.y.to_bits(),
                c.velocity.x.to_bits(),
                c.velocity.y.to_bits(),
            ]
        };
        assert_eq!(
            bits(&w.circles()[0]),
            [
                0x3f9e_eb99,
                0x41a8_92e7,
                0x420f_294c,
                0xbe9f_8c78,
                0xbf6c_874f
            ]
        );
        assert_eq!(
            bits(&w.circles()[1]),
            [
                0x3faf_2219,
                0x41e3_2cd3,
                0x42c8_e67a,
                0xbea3_e91e,
                0x3e72_a6ba
            ]
        );
        assert_eq!(w.fat_boxes()[0], fat_box(&w.circles()[0].tight()));
    }

    #[test]
    fn tally_is_order_free_and_normalises_pairs() {
        let mut a = PairTally::default();
        a.add(2, 1);
        a.add(0, 1);
        let mut b = PairTally::default();
        b.add(0, 1);
        b.add(1, 2);
        assert_eq!(a, b);
        assert_eq!(a.pairs, 2);
        assert_eq!(
            a.hash,
            0x5692_161d_100b_05e5u64.wrapping_add(0xf2c6_924e_7dfe_d23e)
        );
    }

    #[test]
    fn bad_counts_are_refused() {
        assert_eq!(Workload::new(0).err(), Some(WorkloadError::CircleCount(0)));
        assert_eq!(
            Workload::new(MAX_CIRCLES + 1).err(),
            Some(WorkloadError::CircleCount(MAX_CIRCLES + 1))
        );
        assert_eq!(
            run(&mut OurBroadphase::brute_force(), 10, 0).err(),
            Some(WorkloadError::StepCount(0))
        );
    }

    #[test]
    fn bad_hand_made_circles_are_refused() {
        let ok = Circle {
            center: Vec2::new(2.0, 2.0),
            velocity: Vec2::ZERO,
            radius: 1.0,
        };
        let cases = [
            (Circle { radius: 0.0, ..ok }, "the radius must be > 0"),
            (
                Circle {
                    radius: f32::NAN,
                    ..ok
                },
                "a number is not finite",
            ),
            (
                Circle {
                    center: Vec2::new(9.5, 2.0),
                    ..ok
                },
                "the circle does not fit the world square",
            ),
        ];
        for (bad, what) in cases {
            assert_eq!(
                Workload::from_circles(10.0, vec![ok, bad]).err(),
                Some(WorkloadError::BadCircle { index: 1, what })
            );
        }
        assert_eq!(
            Workload::from_circles(10.0, vec![]).err(),
            Some(WorkloadError::CircleCount(0))
        );
    }

    #[test]
    fn step_moves_and_bounces() {
        let c = Circle {
            center: Vec2::new(1.01, 5.0),
            velocity: Vec2::new(-6.0, 0.0),
            radius: 1.0,
        };
        let mut w = Workload::from_circles(10.0, vec![c]).expect("valid circle");
        // 1.01 - 0.1 < 1: clamped to the wall, velocity reversed; the tight box [0, 2] is still
        // inside the first fat box [-0.09, 2.11]: not moved.
        assert_eq!(w.step(), &[] as &[u32]);
        assert_eq!(w.circles()[0].center.x, 1.0);
        assert_eq!(w.circles()[0].velocity.x, 6.0);
        // At +0.1 a step, the tight box's max reaches 2.1 (inside), then 2.2 (outside 2.11).
        let moved: Vec<usize> = (0..2).map(|_| w.step().len()).collect();
        assert_eq!(moved, [0, 1]);
        assert_eq!(w.moved(), &[0]);
    }

    #[test]
    fn brute_force_and_sweep_and_prune_agree() {
        let brute = run(&mut OurBroadphase::brute_force(), 500, 60).expect("valid run");
        let sap = run(&mut OurBroadphase::sweep_and_prune(), 500, 60).expect("valid run");
        assert_eq!(brute.total_pairs, sap.total_pairs);
        assert_eq!(brute.pair_hash, sap.pair_hash);
        assert_eq!(brute.total_reinserts, sap.total_reinserts);
        assert_eq!(brute.total_reinserts, brute.total_moved);
        assert!(brute.total_pairs > 0);
    }
}
