//! The broad phases: the dynamic tree, brute force, sweep-and-prune and Box2D's own tree
//! ([`box2d`], 2D only), one implementation each, which must give identical pairs and refuse
//! the same bodies with the same [`BroadphaseError`] (Box2D's also refuses boxes past its
//! `B2_HUGE`).
//!
//! Each works in its own dimension `V` (`Vec2` or `Vec3`) through [`BroadphaseCore`], the
//! allocation-free per-step interface the benchmark workload drives
//! ([`crate::workload::OurBroadphase`]). The scene drives the same types through the
//! object-safe [`Broadphase`] (boxes in `Vec3`, pairs as a sorted list), which [`make`] builds
//! for a scene's dimension.

pub mod box2d;
mod brute;
pub mod health;
mod sap;
mod store;
mod tree;

pub use box2d::Box2dBroadphase;
pub use brute::BruteForce;
pub use sap::SweepAndPrune;
pub use tree::{TreeBroadphase, config_label};

use crate::tree::{
    Aabb, DynamicTree, TreeConfig, TreeError, TreeEvent, TreeStats, Vector, WorkCounts,
};
use aabb_recorder::wire::EngineTree;
use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};

/// One body as the broad phase sees it. Scenes give `Vec3` (2D scenes use z = 0, which a 2D
/// broad phase ignores); [`BroadphaseCore`] takes bodies in the broad phase's own dimension.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body<V = Vec3> {
    /// The body's id (a sphere's id; unique within one update).
    pub id: u32,
    /// The tight box.
    pub tight: Aabb<V>,
    /// Velocity, world units per second.
    pub velocity: V,
}

impl Body {
    /// A static body: a box that never moves (zero velocity), as scenes' static boxes and
    /// traces' static boxes are given to the broad phase.
    #[must_use]
    pub fn fixed(id: u32, tight: Aabb<Vec3>) -> Self {
        Body {
            id,
            tight,
            velocity: Vec3::ZERO,
        }
    }
}

/// The message of [`BroadphaseError::PairLimit`].
fn pair_limit_message(limit: usize, static_boxes: bool) -> String {
    if static_boxes {
        format!(
            "more than {limit} candidate pairs (fat boxes that overlap; overlaps of two static \
             boxes count too, though they are never reported): the fat boxes are too big for \
             the spacing of the spheres and the static boxes. Lower the margin or look-ahead, \
             use fewer spheres or static boxes that overlap less, or raise the pair limit"
        )
    } else {
        format!(
            "more than {limit} candidate pairs (fat boxes that overlap): the fat boxes are too \
             big for the spheres' spacing. Lower the margin or look-ahead, use fewer spheres or \
             a larger world, or raise the pair limit"
        )
    }
}

/// True when some id of `ids` is in `static_ids` (both sorted, ascending).
pub(crate) fn holds_static(ids: &[u32], static_ids: &[u32]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < ids.len() && j < static_ids.len() {
        match ids[i].cmp(&static_ids[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// Puts a scene's or a trace's static boxes into a fresh broad phase in one batch (the tree
/// by its rebuild method), so that level geometry starts as a built tree, not as one made by
/// inserting box after box; the first update then inserts the spheres (or the trace's moving
/// boxes) one at a time. A box the broad phase refuses leaves it empty (a failed build
/// changes nothing): the first update then refuses the same box and its report says so, as
/// when a step refuses one.
pub fn build_statics(broadphase: &mut dyn Broadphase, statics: &[Body]) {
    if statics.is_empty() {
        return;
    }
    if let Err(_refused_again_by_the_first_update) = broadphase.build_from(statics) {
        // Nothing was changed; the first update reports the box.
    }
}

/// Fills `out` (cleared first) with `statics` and `moving`, each sorted by id, merged in id
/// order (an id in both is listed from each): the live bodies of a scene or a trace step.
pub fn merge_by_id(statics: &[Body], moving: impl Iterator<Item = Body>, out: &mut Vec<Body>) {
    out.clear();
    let mut s = statics.iter().peekable();
    for body in moving {
        while let Some(b) = s.next_if(|b| b.id < body.id) {
            out.push(*b);
        }
        out.push(body);
    }
    out.extend(s);
}

/// Which broad phase to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BroadphaseKind {
    /// The dynamic AABB tree.
    #[default]
    Tree,
    /// Every pair tested.
    Brute,
    /// Sweep-and-prune along x.
    Sap,
    /// Box2D v3's own tree (its C code), driven as Box2D's broad phase drives it; 2D only.
    Box2d,
}

/// What one `update` did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UpdateOutcome {
    /// Ids whose fat box was recomputed (tight box left it, or the body is new), sorted.
    pub reinserted: Vec<u32>,
    /// Ids added this update, sorted.
    pub added: Vec<u32>,
    /// Ids removed this update, sorted.
    pub removed: Vec<u32>,
}

/// The candidate-pair limit a broad phase starts with: past it, finding pairs stops with
/// [`BroadphaseError::PairLimit`] instead of filling memory (at about 8 bytes a pair in each
/// of the few lists a step keeps, 5 million pairs are a few hundred MB; the standard workload
/// at 1,000,000 circles has about 630,000).
pub const DEFAULT_PAIR_LIMIT: usize = 5_000_000;

/// The largest pair limit taken: 100,000,000 pairs are 800 MB as a list, more with the copies
/// a search makes; a limit far past it let a pair explosion run the process out of memory (an
/// abort, no message) before the limit stopped it.
pub const MAX_PAIR_LIMIT: usize = 100_000_000;

/// Refuses a pair limit past [`MAX_PAIR_LIMIT`], saying why.
pub fn check_pair_limit(limit: usize) -> Result<(), String> {
    if limit > MAX_PAIR_LIMIT {
        return Err(format!(
            "the pair limit must be at most {MAX_PAIR_LIMIT} (the pairs up to it are kept in \
             memory), got {limit}"
        ));
    }
    Ok(())
}

/// Why a broad phase could not take a step.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BroadphaseError {
    /// A body's boxes cannot be used: a number is not finite, a box is inverted, or its fat
    /// box overflows f32 under the current margin and look-ahead. Nothing was changed.
    #[error("{noun} {id}: {reason}")]
    Body {
        /// What the body is to the user: "sphere" (a scene's), "box" (a trace's; see
        /// [`BroadphaseError::of_boxes`]).
        noun: &'static str,
        /// The body's id.
        id: u32,
        /// What is wrong, with the numbers.
        reason: String,
    },
    /// More candidate pairs than the limit: the search stopped early (see
    /// [`Broadphase::set_pair_limit`]). The bodies are kept; the next search starts afresh.
    #[error("{}", pair_limit_message(*limit, *static_boxes))]
    PairLimit {
        /// The limit in force.
        limit: usize,
        /// True when the broad phase holds static bodies (a scene's or a trace's static
        /// boxes): the overlaps of two of them count towards the limit too, though they are
        /// never reported, so the message names them (level geometry that overlaps a lot can
        /// pass the limit with no sphere at all).
        static_boxes: bool,
    },
    /// The tree refused an operation (its message says which).
    #[error("the tree: {0}")]
    Tree(#[from] TreeError),
    /// The work this search was part of was cancelled ([`with_cancel`]: opening a recording
    /// in the window, Cancel pressed); nothing of the search is kept.
    #[error("cancelled")]
    Cancelled,
}

/// The most pair tests a step of brute force or sweep-and-prune may make
/// ([`Work::refusal`]): about 1.25e9, brute force over 50,000 bodies, a second or more a step.
/// Past it the broad phase is refused at the start (the tree finds the same pairs in a tiny
/// share of the time).
pub const MAX_PAIR_TESTS: u64 = 1_250_000_000;

/// Past this many pair tests a step (brute force over 10,000 bodies) `check`, `run` and the
/// window warn ([`Work::warning`]).
pub const WARN_PAIR_TESTS: u64 = 50_000_000;

/// Sweep-and-prune is said to degenerate when at least this many bodies and more than half
/// of all their pairs overlap along x, the sweep axis: it then tests nearly every pair.
pub const SAP_DEGENERATE_BODIES: usize = 1_000;

/// What a step of each broad phase costs over some boxes: pair tests, counted without testing
/// ([`estimate_work`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// The bodies.
    pub bodies: usize,
    /// Pairs brute force tests: every pair, n (n - 1) / 2.
    pub brute_tests: u64,
    /// Pairs sweep-and-prune tests: the pairs whose ranges of x overlap.
    pub sweep_tests: u64,
}

/// `n` in a message, short: 1234 as is, 5e7, 1.3e9 (a count of 39 digits is unreadable).
#[must_use]
pub fn short_count(n: u64) -> String {
    if n < 100_000 {
        return n.to_string();
    }
    crate::text::short_number(n as f64)
}

impl Work {
    /// The pair tests a step of `kind` makes (a tree, ours or Box2D's: 0, not estimated; it
    /// is never slow this way).
    #[must_use]
    pub fn tests(&self, kind: BroadphaseKind) -> u64 {
        match kind {
            BroadphaseKind::Tree | BroadphaseKind::Box2d => 0,
            BroadphaseKind::Brute => self.brute_tests,
            BroadphaseKind::Sap => self.sweep_tests,
        }
    }

    /// True when most pairs overlap along x ([`SAP_DEGENERATE_BODIES`]).
    #[must_use]
    pub fn sap_degenerates(&self) -> bool {
        self.bodies >= SAP_DEGENERATE_BODIES
            && self.sweep_tests.saturating_mul(2) > self.brute_tests
    }

    fn what(&self, kind: BroadphaseKind) -> String {
        let tests = short_count(self.tests(kind));
        match kind {
            BroadphaseKind::Sap if self.sap_degenerates() => format!(
                "sweep-and-prune degenerates on these {} bodies: {}% of their pairs overlap \
                 along x (the sweep axis), so it tests {tests} pairs a step, nearly as many as \
                 brute force",
                self.bodies,
                self.sweep_tests.saturating_mul(100) / self.brute_tests.max(1)
            ),
            BroadphaseKind::Sap => format!(
                "sweep-and-prune tests {tests} pairs a step over these {} bodies",
                self.bodies
            ),
            _ => format!(
                "brute force tests {tests} pairs a step over these {} bodies",
                self.bodies
            ),
        }
    }

    /// Why `kind` is refused over these bodies: more than [`MAX_PAIR_TESTS`] pair tests a
    /// step.
    #[must_use]
    pub fn refusal(&self, kind: BroadphaseKind) -> Option<String> {
        (self.tests(kind) > MAX_PAIR_TESTS).then(|| {
            format!(
                "{}, more than the {} allowed (minutes a step); use the tree broad phase",
                self.what(kind),
                short_count(MAX_PAIR_TESTS)
            )
        })
    }

    /// A warning about `kind` over these bodies: past [`WARN_PAIR_TESTS`] tests a step, or
    /// sweep-and-prune degenerate ([`Work::sap_degenerates`]); `None` when it is fine or
    /// refused.
    #[must_use]
    pub fn warning(&self, kind: BroadphaseKind) -> Option<String> {
        if self.refusal(kind).is_some() {
            return None;
        }
        let slow = self.tests(kind) > WARN_PAIR_TESTS;
        let degenerate = kind == BroadphaseKind::Sap && self.sap_degenerates();
        (slow || degenerate)
            .then(|| format!("{}; the tree finds the same pairs faster", self.what(kind)))
    }
}

/// The pair tests each broad phase makes over `boxes` in a step ([`Work`]): brute force's
/// from their count, sweep-and-prune's by sorting the least x and counting, for each box, the
/// boxes that start within its range of x (what its sweep visits). O(n log n).
#[must_use]
pub fn estimate_work(boxes: &[Aabb<Vec3>]) -> Work {
    let n = boxes.len();
    let n64 = n as u64;
    let mut mins: Vec<f32> = boxes.iter().map(|b| b.min.x).collect();
    mins.sort_unstable_by(f32::total_cmp);
    let mut sorted: Vec<(f32, f32)> = boxes.iter().map(|b| (b.min.x, b.max.x)).collect();
    sorted.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let mut sweep_tests = 0u64;
    for (p, &(_, max)) in sorted.iter().enumerate() {
        // The boxes after p in sweep order that start at or before p's end.
        let end = mins.partition_point(|&m| m <= max);
        sweep_tests += end.saturating_sub(p + 1) as u64;
    }
    Work {
        bodies: n,
        brute_tests: n64 * n64.saturating_sub(1) / 2,
        sweep_tests,
    }
}

/// Refuses brute force over `bodies` bodies past [`MAX_PAIR_TESTS`], from the count alone
/// (before any box is made: a recording's header is checked so); the other broad phases'
/// work depends on the boxes ([`estimate_work`]).
pub fn check_work(kind: BroadphaseKind, bodies: usize) -> Result<(), String> {
    if kind != BroadphaseKind::Brute {
        return Ok(());
    }
    let n = bodies as u64;
    let work = Work {
        bodies,
        brute_tests: n * n.saturating_sub(1) / 2,
        sweep_tests: 0,
    };
    work.refusal(kind).map_or(Ok(()), Err)
}

thread_local! {
    /// The cancel flag of the work running on this thread ([`with_cancel`]).
    static CANCEL: std::cell::RefCell<Option<std::sync::Arc<std::sync::atomic::AtomicBool>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `work` on this thread with `flag` as the cancel flag of every pair search it makes:
/// brute force and sweep-and-prune look at it once a row and stop with
/// [`BroadphaseError::Cancelled`] once it is set, so a step of a huge or degenerate scene
/// stops within a row, not at its end. The previous flag (if any) is back afterwards.
pub fn with_cancel<R>(
    flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    work: impl FnOnce() -> R,
) -> R {
    let previous = CANCEL.with(|c| c.replace(Some(flag)));
    let result = work();
    CANCEL.with(|c| *c.borrow_mut() = previous);
    result
}

/// The cancel flag of this thread's work ([`with_cancel`]).
fn cancel_flag() -> Option<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    CANCEL.with(|c| c.borrow().clone())
}

impl BroadphaseError {
    /// The error said of a trace's bodies, which are boxes ("box 3: ..."), not spheres.
    #[must_use]
    pub fn of_boxes(self) -> Self {
        match self {
            BroadphaseError::Body { id, reason, .. } => BroadphaseError::Body {
                noun: "box",
                id,
                reason,
            },
            other => other,
        }
    }
}

/// Candidate pairs and whether they were recomputed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairOutcome {
    /// `(a, b)` sphere ids with `a < b` whose fat boxes overlap, sorted.
    pub pairs: Vec<(u32, u32)>,
    /// False when nothing changed since the last call and the previous set was reused
    /// (Choi's `tree_updated` flag).
    pub recomputed: bool,
}

/// Where a broad phase reads the bodies of one update: a slice of [`Body`], or anything that
/// can give body `k` on demand (the benchmark's circles), so that nothing is copied on the
/// usual step.
pub trait Bodies<V> {
    /// How many bodies.
    fn len(&self) -> usize;
    /// True when there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Body `k`, `k < len()`.
    fn body(&self, k: usize) -> Body<V>;
    /// All of them, in order.
    fn to_vec(&self) -> Vec<Body<V>> {
        (0..self.len()).map(|k| self.body(k)).collect()
    }
    /// True when the source guarantees that every body passes [`check_body`] under `config`
    /// (finite boxes, not inverted, fat boxes within f32), so the update can skip that pass.
    /// The default, and the slices the scene gives, say false. A source that says true and is
    /// wrong gets an error from the tree part-way through the update instead of before it.
    fn known_usable(&self, config: &TreeConfig) -> bool {
        let _ = config;
        false
    }
    /// True when the source guarantees that body `k` has id `k` for every `k` (a simulation's
    /// own array of bodies): with [`Bodies::known_usable`], an update of a broad phase whose
    /// bodies were numbered the same way need not compare ids to know they are the same
    /// bodies. The default says false. A source that says true and is wrong gets its pairs
    /// named by place instead of by id.
    fn ids_are_positions(&self) -> bool {
        false
    }
}

impl<V: Copy> Bodies<V> for [Body<V>] {
    fn len(&self) -> usize {
        <[Body<V>]>::len(self)
    }
    #[inline]
    fn body(&self, k: usize) -> Body<V> {
        self[k]
    }
    fn to_vec(&self) -> Vec<Body<V>> {
        <[Body<V>]>::to_vec(self)
    }
}

impl<V: Copy> Bodies<V> for Vec<Body<V>> {
    fn len(&self) -> usize {
        <[Body<V>]>::len(self)
    }
    #[inline]
    fn body(&self, k: usize) -> Body<V> {
        self[k]
    }
    fn to_vec(&self) -> Vec<Body<V>> {
        self.clone()
    }
}

/// A broad phase in its own dimension `V`: what both the scene (through [`Broadphase`]) and
/// the benchmark workload drive each step, with no conversion and no copies of the pairs.
///
/// The fat-box rule is the tree's ([`fat_box`]): the tight box grown by the margin and
/// stretched by `velocity * velocity_lookahead`, recomputed only when the tight box leaves it.
pub trait BroadphaseCore<V: SceneVector> {
    /// Which one this is.
    fn kind(&self) -> BroadphaseKind;
    /// Brings the broad phase to `bodies` (sorted by id, or sorted here; the first of a
    /// repeated id counts): adds new ids, removes missing ones, moves the others, and records
    /// what it did in `out` (cleared first). A body whose boxes cannot be used (see
    /// [`check_body`]) is an error, and then nothing is changed.
    fn update_bodies(
        &mut self,
        bodies: &(impl Bodies<V> + ?Sized),
        out: &mut UpdateOutcome,
    ) -> Result<(), BroadphaseError>;
    /// Replaces everything with `bodies`, the way the broad phase builds best from scratch
    /// (the tree: one bulk build). An error as for [`BroadphaseCore::update_bodies`], and
    /// then nothing is changed.
    fn build(&mut self, bodies: &(impl Bodies<V> + ?Sized)) -> Result<(), BroadphaseError>;
    /// Finds the candidate pairs as of the last update (only if something changed since the
    /// last search) and calls `visit(a, b)`, `a < b`, once for each, in no set order. Returns
    /// whether the pairs were recomputed; [`BroadphaseError::PairLimit`] when there are more
    /// than the limit (the search stops as soon as it passes it, and `visit` is not called).
    fn visit_pairs(&mut self, visit: impl FnMut(u32, u32)) -> Result<bool, BroadphaseError>;
    /// Bytes the structure holds (capacities).
    fn bytes(&self) -> usize;
    /// [`BroadphaseCore::update_bodies`] from a scene's bodies (in `Vec3`), with a fresh
    /// outcome: what [`Broadphase::update`] is for each of them.
    fn update_from_scene(&mut self, bodies: &[Body]) -> Result<UpdateOutcome, BroadphaseError> {
        let mut out = UpdateOutcome::default();
        self.update_bodies(&*V::bodies_from_vec3(bodies), &mut out)?;
        Ok(out)
    }
    /// [`BroadphaseCore::build`] from a scene's bodies (in `Vec3`): what
    /// [`Broadphase::build_from`] is for each of them.
    fn build_from_scene(&mut self, bodies: &[Body]) -> Result<(), BroadphaseError> {
        self.build(&*V::bodies_from_vec3(bodies))
    }
}

/// A broad phase: keeps a fat box per body and reports the pairs whose fat boxes overlap.
///
/// Every implementation uses the same fat-box rule as the tree (tight box grown by the margin
/// and stretched by `velocity * velocity_lookahead`, recomputed only when the tight box
/// leaves it), so all three report the same pairs.
///
/// `Send`, so that a simulation (and a recording of it) can be built on a worker thread and
/// handed to the window (a recording file is opened off the UI thread).
pub trait Broadphase: Send {
    /// Which one this is.
    fn kind(&self) -> BroadphaseKind;
    /// Brings the broad phase to `bodies` (sorted by id): adds new ids, removes missing ones,
    /// moves the others. A body whose boxes cannot be used (see [`check_body`]) is an error,
    /// and then nothing is changed.
    fn update(&mut self, bodies: &[Body]) -> Result<UpdateOutcome, BroadphaseError>;
    /// Replaces everything with `bodies` (sorted by id or not) the way this broad phase builds
    /// best from scratch: the tree in one batch by its rebuild method
    /// ([`crate::tree::TreeConfig::rebuild`]), not one insertion at a time. A scene's and a
    /// trace's static boxes go in this way before the first `update` (level geometry: a
    /// hundred thousand boxes inserted one at a time make a tree several times the least
    /// height). An error as for `update`, and then nothing is changed.
    fn build_from(&mut self, bodies: &[Body]) -> Result<(), BroadphaseError>;
    /// The candidate pairs as of the last `update`; [`BroadphaseError::PairLimit`] when there
    /// are more than the limit (the search stops as soon as it passes it).
    fn find_pairs(&mut self) -> Result<PairOutcome, BroadphaseError>;
    /// The most candidate pairs `find_pairs` may report ([`DEFAULT_PAIR_LIMIT`] at first).
    fn set_pair_limit(&mut self, limit: usize);
    /// Marks the bodies with these ids as static (a scene's static boxes; replaces the last
    /// set, and ids not present now count when they come): a pair of two static bodies is
    /// never reported. It still counts towards the pair limit, on all three alike: the tree
    /// finds and holds it (its pair finder knows nothing of static bodies), so the limit keeps
    /// bounding what the tree holds. The pairs are found again at the next search.
    fn set_static_ids(&mut self, ids: &[u32]);
    /// The fat box of a body, if present.
    fn fat_aabb(&self, id: u32) -> Option<Aabb<Vec3>>;
    /// Changes settings (margin, look-ahead, insertion, balancing, pairs); fat boxes are
    /// recomputed at once. An error names the bad setting.
    fn set_config(&mut self, config: TreeConfig) -> Result<(), crate::tree::TreeError>;
    /// Tree stats, for the tree; `None` for the others.
    fn tree_stats(&self) -> Option<TreeStats> {
        None
    }
    /// Events since the last call (the tree's; empty for the others).
    fn take_events(&mut self) -> Vec<TreeEvent> {
        Vec::new()
    }
    /// The tree for drawing, when this is the tree broad phase.
    fn tree_view(&self) -> Option<TreeRef<'_>> {
        None
    }
    /// Another library's tree (Box2D's), read node by node in the live link's tree shape, so
    /// the window draws and measures it as it does an engine's received tree; `None` for the
    /// broad phases that are not such a tree, or when its nodes cannot be read (the error is
    /// then the broad phase's next step's).
    fn foreign_tree(&self) -> Option<EngineTree> {
        None
    }
    /// Full rebuild (the tree only; the others have nothing to rebuild).
    fn rebuild(&mut self) {}
    /// The tree's machine-independent work counts since this broad phase was made (see
    /// [`WorkCounts`]); `None` for brute force and sweep-and-prune.
    fn work_counts(&self) -> Option<WorkCounts> {
        None
    }
    /// A copy of the whole broad phase (a recording's keyframe: the copy steps exactly as the
    /// original would).
    fn clone_box(&self) -> Box<dyn Broadphase>;
    /// A hash of the structure a replay checks: the tree's
    /// ([`DynamicTree::structure_hash`]); for brute force and sweep-and-prune, the ids and
    /// fat boxes they keep.
    fn structure_hash(&self) -> u64;
    /// Bytes the structure holds (capacities), as [`BroadphaseCore::bytes`].
    fn heap_bytes(&self) -> usize;
}

impl Clone for Box<dyn Broadphase> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Ok when a body's tight box and velocity are finite, the box is not inverted, and its fat
/// box under `config` is finite: the rule all three broad phases apply before they change
/// anything, so they accept and refuse the same bodies.
pub fn check_body(body: &Body, config: &TreeConfig) -> Result<(), BroadphaseError> {
    let refuse = |reason: String| BroadphaseError::Body {
        noun: "sphere",
        id: body.id,
        reason,
    };
    let tight = &body.tight;
    if !(tight.min.is_finite() && tight.max.is_finite()) {
        return Err(refuse(format!(
            "its box has a number that is not finite (min {}, max {})",
            tight.min, tight.max
        )));
    }
    if !body.velocity.is_finite() {
        return Err(refuse(format!(
            "its velocity is not finite ({})",
            body.velocity
        )));
    }
    if !tight.min.cmple(tight.max).all() {
        return Err(refuse(format!(
            "its box has min > max (min {}, max {})",
            tight.min, tight.max
        )));
    }
    let fat = fat_box(
        tight,
        body.velocity,
        config.margin,
        config.velocity_lookahead,
    );
    if !(fat.min.is_finite() && fat.max.is_finite()) {
        return Err(refuse(format!(
            "its fat box overflows f32 (box min {}, max {}, velocity {}, margin {}, look-ahead \
             {} s)",
            tight.min, tight.max, body.velocity, config.margin, config.velocity_lookahead
        )));
    }
    Ok(())
}

/// [`check_body`] for every body of any dimension, before anything changes: a quick test of
/// each, and the full one (which words the error) only for a body that fails it.
pub(crate) fn check_bodies<V: SceneVector>(
    bodies: &(impl Bodies<V> + ?Sized),
    config: &TreeConfig,
) -> Result<(), BroadphaseError> {
    check_bodies_against(bodies, config, 0, |_| 0).map(|_| ())
}

/// [`check_bodies`], and in the same pass whether the bodies have exactly the ids
/// `id_at(0), .., id_at(known - 1)` in that order (the usual step: the same bodies as last
/// time, each only moved).
pub(crate) fn check_bodies_against<V: SceneVector>(
    bodies: &(impl Bodies<V> + ?Sized),
    config: &TreeConfig,
    known: usize,
    id_at: impl Fn(usize) -> u32,
) -> Result<bool, BroadphaseError> {
    let mut same = bodies.len() == known;
    if bodies.known_usable(config) {
        for k in 0..bodies.len().min(known) {
            same = same && id_at(k) == bodies.body(k).id;
        }
        return Ok(same);
    }
    let (margin, lookahead) = (config.margin, config.velocity_lookahead);
    for k in 0..bodies.len() {
        let body = &bodies.body(k);
        let fat = fat_box(&body.tight, body.velocity, margin, lookahead);
        let usable = body.tight.min.all_le(body.tight.max)
            && body.velocity.all_finite()
            && fat.min.all_finite()
            && fat.max.all_finite();
        if !usable {
            check_body(&body_to_vec3(body), config)?;
            // The quick test and the full one agree; this is only reached if they did not.
            return Err(BroadphaseError::Body {
                noun: "sphere",
                id: body.id,
                reason: "its boxes cannot be used".to_owned(),
            });
        }
        same = same && id_at(k) == body.id;
    }
    Ok(same)
}

/// A body in the scene's `Vec3`, from a body in `V`.
pub(crate) fn body_to_vec3<V: SceneVector>(body: &Body<V>) -> Body<Vec3> {
    Body {
        id: body.id,
        tight: box_to_vec3(&body.tight),
        velocity: body.velocity.to_vec3(),
    }
}

/// The tree behind a tree broad phase, in the dimension of the scene, for drawing.
pub enum TreeRef<'a> {
    /// A 2D scene's tree; user data is the sphere id.
    D2(&'a crate::tree::DynamicTree<glam::Vec2, u32>),
    /// A 3D scene's tree; user data is the sphere id.
    D3(&'a crate::tree::DynamicTree<glam::Vec3, u32>),
}

/// Why [`make`] could not make a broad phase.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MakeError {
    /// A bad setting (margin, look-ahead) or a dimension count other than 2 or 3.
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// Box2D's tree is 2D; the scene or trace is 3D.
    #[error(
        "the box2d broad phase (Box2D's own tree) is 2D only, and this is a 3D scene or trace: \
         pick tree, brute or sap"
    )]
    Box2dIs2dOnly,
}

/// Makes a broad phase of the given kind for a scene of `dimensions` (2 or 3). An error when
/// the margin or look-ahead is negative or not finite, `dimensions` is neither 2 nor 3, or
/// Box2D's tree (2D only) is asked for in 3D.
pub fn make(
    kind: BroadphaseKind,
    dimensions: u8,
    config: TreeConfig,
) -> Result<Box<dyn Broadphase>, MakeError> {
    config.check()?;
    match (kind, dimensions) {
        (BroadphaseKind::Box2d, 2) => Ok(Box::new(Box2dBroadphase::new(config))),
        (BroadphaseKind::Box2d, 3) => Err(MakeError::Box2dIs2dOnly),
        (BroadphaseKind::Tree, 2) => Ok(Box::new(recording(TreeBroadphase::<Vec2>::new(config)?))),
        (BroadphaseKind::Tree, 3) => Ok(Box::new(recording(TreeBroadphase::<Vec3>::new(config)?))),
        (BroadphaseKind::Brute, 2) => Ok(Box::new(BruteForce::<Vec2>::new(config))),
        (BroadphaseKind::Brute, 3) => Ok(Box::new(BruteForce::<Vec3>::new(config))),
        (BroadphaseKind::Sap, 2) => Ok(Box::new(SweepAndPrune::<Vec2>::new(config))),
        (BroadphaseKind::Sap, 3) => Ok(Box::new(SweepAndPrune::<Vec3>::new(config))),
        (_, other) => Err(TreeError::InvalidSetting {
            name: "dimensions (2 or 3)",
            value: f32::from(other),
        }
        .into()),
    }
}

/// The tree broad phase of a scene records its events for the debugger.
fn recording<V: SceneVector>(mut tree: TreeBroadphase<V>) -> TreeBroadphase<V> {
    tree.set_recording(true);
    tree
}

impl BroadphaseKind {
    /// Every kind, in the order the UI and the CLI list them.
    pub const ALL: [BroadphaseKind; 4] = [
        BroadphaseKind::Tree,
        BroadphaseKind::Brute,
        BroadphaseKind::Sap,
        BroadphaseKind::Box2d,
    ];

    /// The kinds that run a scene or trace of `dimensions` (Box2D's tree is 2D only): all
    /// of them in 2D, the first three in 3D.
    #[must_use]
    pub fn for_dimensions(dimensions: u8) -> &'static [BroadphaseKind] {
        if dimensions == 2 {
            &Self::ALL
        } else {
            &Self::ALL[..3]
        }
    }

    /// True when this kind runs a scene or trace of `dimensions`.
    #[must_use]
    pub fn runs_in(self, dimensions: u8) -> bool {
        Self::for_dimensions(dimensions).contains(&self)
    }

    /// The name used on the command line and in reports: `tree`, `brute`, `sap` or `box2d`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            BroadphaseKind::Tree => "tree",
            BroadphaseKind::Brute => "brute",
            BroadphaseKind::Sap => "sap",
            BroadphaseKind::Box2d => "box2d",
        }
    }
}

impl std::fmt::Display for BroadphaseKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The fat-box rule every broad phase shares with the tree (the tree's own function, so the
/// boxes agree to the bit).
pub use crate::tree::fat_box;

/// A 2D or 3D vector a broad phase can work in: converts from and to the scene's `Vec3`
/// (2D drops z and gives z = 0 back) and wraps its tree in a [`TreeRef`].
pub trait SceneVector: Vector {
    /// `bodies` in this dimension: borrowed as they are in 3D, converted in 2D.
    fn bodies_from_vec3(bodies: &[Body<Vec3>]) -> std::borrow::Cow<'_, [Body<Self>]>;
    /// The first `DIM` components of `v`.
    fn from_vec3(v: Vec3) -> Self;
    /// As a `Vec3`, z = 0 in 2D.
    fn to_vec3(self) -> Vec3;
    /// The tree, for drawing.
    fn tree_view(tree: &DynamicTree<Self, u32>) -> TreeRef<'_>;
}

impl SceneVector for Vec2 {
    fn bodies_from_vec3(bodies: &[Body<Vec3>]) -> std::borrow::Cow<'_, [Body<Self>]> {
        std::borrow::Cow::Owned(
            bodies
                .iter()
                .map(|b| Body {
                    id: b.id,
                    tight: box_from_vec3(&b.tight),
                    velocity: b.velocity.truncate(),
                })
                .collect(),
        )
    }
    fn from_vec3(v: Vec3) -> Self {
        v.truncate()
    }
    fn to_vec3(self) -> Vec3 {
        self.extend(0.0)
    }
    fn tree_view(tree: &DynamicTree<Self, u32>) -> TreeRef<'_> {
        TreeRef::D2(tree)
    }
}

impl SceneVector for Vec3 {
    fn bodies_from_vec3(bodies: &[Body<Vec3>]) -> std::borrow::Cow<'_, [Body<Self>]> {
        std::borrow::Cow::Borrowed(bodies)
    }
    fn from_vec3(v: Vec3) -> Self {
        v
    }
    fn to_vec3(self) -> Vec3 {
        self
    }
    fn tree_view(tree: &DynamicTree<Self, u32>) -> TreeRef<'_> {
        TreeRef::D3(tree)
    }
}

/// A box in the scene's `Vec3` from a box in `V`.
pub(crate) fn box_to_vec3<V: SceneVector>(b: &Aabb<V>) -> Aabb<Vec3> {
    Aabb::new(b.min.to_vec3(), b.max.to_vec3())
}

/// A box in `V` from a box in the scene's `Vec3`.
pub(crate) fn box_from_vec3<V: SceneVector>(b: &Aabb<Vec3>) -> Aabb<V> {
    Aabb::new(V::from_vec3(b.min), V::from_vec3(b.max))
}

/// `bodies` when they are strictly sorted by id, else a sorted copy with the first of each id.
pub(crate) fn sorted_bodies<V: Copy>(bodies: &[Body<V>]) -> std::borrow::Cow<'_, [Body<V>]> {
    if bodies.windows(2).all(|w| w[0].id < w[1].id) {
        std::borrow::Cow::Borrowed(bodies)
    } else {
        let mut owned = bodies.to_vec();
        // Stable: the first of a repeated id stays first, and dedup keeps it.
        owned.sort_by_key(|b| b.id);
        owned.dedup_by_key(|b| b.id);
        std::borrow::Cow::Owned(owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64;

    /// A cancel stops brute force's and sweep-and-prune's search (within a row);
    /// without a cancel, or outside [`with_cancel`], the same search finds its pairs.
    #[test]
    fn a_cancelled_search_stops_and_an_uncancelled_one_does_not() {
        let bodies: Vec<Body> = (0..50)
            .map(|id| {
                let c = Vec3::new(id as f32, 0.0, 0.0);
                Body {
                    id,
                    tight: Aabb::new(c, c + Vec3::new(1.5, 1.0, 0.0)),
                    velocity: Vec3::ZERO,
                }
            })
            .collect();
        for kind in [BroadphaseKind::Brute, BroadphaseKind::Sap] {
            let config = TreeConfig {
                margin: 0.0,
                velocity_lookahead: 0.0,
                ..TreeConfig::default()
            };
            let mut b = make(kind, 2, config).expect("made");
            b.build_from(&bodies).expect("built");
            let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
            let cancelled = with_cancel(std::sync::Arc::clone(&flag), || b.find_pairs());
            assert_eq!(cancelled, Err(BroadphaseError::Cancelled), "{kind}");
            flag.store(false, std::sync::atomic::Ordering::Relaxed);
            let found = with_cancel(flag, || b.find_pairs()).expect("found");
            // Boxes 1 apart and 1.5 wide: each overlaps the next one only.
            assert_eq!(found.pairs.len(), 49, "{kind}");
            assert!(cancel_flag().is_none());
        }
    }

    /// The work estimate counts what each broad phase tests, and says when
    /// sweep-and-prune degenerates; brute force is refused past [`MAX_PAIR_TESTS`].
    #[test]
    fn the_work_estimate_counts_pair_tests_and_tells_degenerate_sweeps() {
        // 1,000 boxes in one column: every pair overlaps along x.
        let column: Vec<Aabb<Vec3>> = (0..1000)
            .map(|i| {
                Aabb::new(
                    Vec3::new(0.0, i as f32, 0.0),
                    Vec3::new(1.0, i as f32 + 0.5, 0.0),
                )
            })
            .collect();
        let w = estimate_work(&column);
        assert_eq!(
            w,
            Work {
                bodies: 1000,
                brute_tests: 499_500,
                sweep_tests: 499_500
            }
        );
        assert!(w.sap_degenerates());
        assert_eq!(
            w.warning(BroadphaseKind::Sap).as_deref(),
            Some(
                "sweep-and-prune degenerates on these 1000 bodies: 100% of their pairs overlap \
                 along x (the sweep axis), so it tests 499500 pairs a step, nearly as many as \
                 brute force; the tree finds the same pairs faster"
            )
        );
        assert_eq!(w.warning(BroadphaseKind::Brute), None);
        // The same boxes in a row: no two overlap along x.
        let row: Vec<Aabb<Vec3>> = (0..1000)
            .map(|i| {
                Aabb::new(
                    Vec3::new(2.0 * i as f32, 0.0, 0.0),
                    Vec3::new(2.0 * i as f32 + 1.0, 1.0, 0.0),
                )
            })
            .collect();
        assert_eq!(estimate_work(&row).sweep_tests, 0);
        assert_eq!(check_work(BroadphaseKind::Brute, 50_000), Ok(()));
        assert_eq!(
            check_work(BroadphaseKind::Brute, 1_000_000),
            Err(
                "brute force tests 5e11 pairs a step over these 1000000 bodies, more than the \
                 1.25e9 allowed (minutes a step); use the tree broad phase"
                    .to_owned()
            )
        );
        assert_eq!(check_work(BroadphaseKind::Sap, 1_000_000), Ok(()));
    }

    /// Bodies with ids `0..n` at random places in `[0, 20]²`, some of them missing.
    fn bodies(rng: &mut Pcg64, n: u32, keep: u64) -> Vec<Body<Vec2>> {
        let mut out = Vec::new();
        for id in 0..n {
            if rng.random_range(0..100) >= keep {
                continue;
            }
            let c = Vec2::new(rng.random_range(0.0..20.0), rng.random_range(0.0..20.0));
            let r = rng.random_range(0.1..1.0);
            out.push(Body {
                id,
                tight: Aabb::new(c - Vec2::splat(r), c + Vec2::splat(r)),
                velocity: Vec2::new(rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0)),
            });
        }
        out
    }

    /// The pairs `visit_pairs` gives, sorted, and whether they were recomputed.
    fn visited<B: BroadphaseCore<Vec2>>(b: &mut B) -> (Vec<(u32, u32)>, bool) {
        let mut pairs = Vec::new();
        let recomputed = b
            .visit_pairs(|a, c| {
                assert!(a < c, "({a}, {c}) is not ordered");
                pairs.push((a, c));
            })
            .expect("under the pair limit");
        pairs.sort_unstable();
        (pairs, recomputed)
    }

    /// Every pair of fat boxes, tested directly.
    fn reference(fat: &[(u32, Aabb<Vec2>)]) -> Vec<(u32, u32)> {
        let mut pairs = Vec::new();
        for (i, (a, fa)) in fat.iter().enumerate() {
            for (b, fb) in &fat[i + 1..] {
                if fa.overlaps(fb) {
                    pairs.push(((*a).min(*b), (*a).max(*b)));
                }
            }
        }
        pairs.sort_unstable();
        pairs
    }

    /// One broad phase of each kind, driven through the per-step interface by bodies that
    /// come, go and move, and one built from scratch at every step: the pairs equal brute
    /// force over the fat boxes the tree keeps, the updates report the same ids, and the
    /// object-safe interface gives the same pairs sorted.
    #[test]
    fn the_three_agree_through_the_core_interface_and_build_matches_update() {
        let config = TreeConfig {
            margin: 0.3,
            velocity_lookahead: 0.1,
            ..TreeConfig::default()
        };
        let mut tree = TreeBroadphase::<Vec2>::new(config).expect("valid config");
        let mut brute = BruteForce::<Vec2>::new(config);
        let mut sap = SweepAndPrune::<Vec2>::new(config);
        let mut rng = Pcg64::seed_from_u64(7);
        let mut total = 0;
        for step in 0..40 {
            // Every fifth step some bodies come and go; otherwise the same ones move.
            let keep = if step % 5 == 0 { 80 } else { 100 };
            let now = bodies(&mut rng, 120, keep);
            let mut outs = [
                UpdateOutcome::default(),
                UpdateOutcome::default(),
                UpdateOutcome::default(),
            ];
            tree.update_bodies(&now, &mut outs[0]).expect("usable");
            brute.update_bodies(&now, &mut outs[1]).expect("usable");
            sap.update_bodies(&now, &mut outs[2]).expect("usable");
            assert_eq!(outs[0], outs[1], "step {step}");
            assert_eq!(outs[0], outs[2], "step {step}");
            let fat: Vec<(u32, Aabb<Vec2>)> = now
                .iter()
                .map(|b| {
                    let f = Broadphase::fat_aabb(&tree, b.id).expect("present");
                    assert_eq!(Broadphase::fat_aabb(&brute, b.id), Some(f));
                    assert_eq!(Broadphase::fat_aabb(&sap, b.id), Some(f));
                    (b.id, box_from_vec3(&f))
                })
                .collect();
            let expected = reference(&fat);
            total += expected.len();
            assert_eq!(visited(&mut tree).0, expected, "tree, step {step}");
            assert_eq!(visited(&mut brute).0, expected, "brute, step {step}");
            assert_eq!(visited(&mut sap).0, expected, "sap, step {step}");
            // Asked again with nothing changed: the same pairs, not recomputed.
            assert_eq!(visited(&mut sap), (expected.clone(), false));
            assert_eq!(visited(&mut brute), (expected.clone(), false));
            assert_eq!(
                Broadphase::find_pairs(&mut sap).expect("found").pairs,
                expected
            );
            // Built from scratch on the same bodies: fresh fat boxes, so pairs by them.
            let mut built = TreeBroadphase::<Vec2>::new(config).expect("valid config");
            built.build(&now).expect("usable");
            let fresh: Vec<(u32, Aabb<Vec2>)> = now
                .iter()
                .map(|b| (b.id, fat_box(&b.tight, b.velocity, 0.3, 0.1)))
                .collect();
            assert_eq!(visited(&mut built).0, reference(&fresh), "step {step}");
            built.tree().validate().expect("a valid tree");
        }
        assert!(total > 200, "the case has pairs to find ({total})");
    }

    /// Bodies that say (truly) whether body `k` has id `k`, and that they are usable.
    struct Numbered<'a>(&'a [Body<Vec2>]);

    impl Bodies<Vec2> for Numbered<'_> {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn body(&self, k: usize) -> Body<Vec2> {
            self.0[k]
        }
        fn known_usable(&self, _config: &TreeConfig) -> bool {
            true
        }
        fn ids_are_positions(&self) -> bool {
            self.0.iter().enumerate().all(|(k, b)| b.id as usize == k)
        }
    }

    /// The tree broad phase skips comparing ids only when both its bodies and the new ones are
    /// numbered by place and as many: bodies that say so, step by step (as many, fewer, some
    /// missing, more), give the same outcomes and pairs as the same bodies that do not.
    #[test]
    fn bodies_numbered_by_place_update_the_tree_as_any_bodies_do() {
        let config = TreeConfig {
            margin: 0.2,
            ..TreeConfig::default()
        };
        let mut numbered = TreeBroadphase::<Vec2>::new(config).expect("valid config");
        let mut plain = TreeBroadphase::<Vec2>::new(config).expect("valid config");
        let mut rng = Pcg64::seed_from_u64(9);
        for (step, (n, keep)) in [
            (120, 100),
            (120, 100),
            (120, 70),
            (120, 100),
            (120, 100),
            (100, 100),
            (100, 100),
            (130, 100),
            (130, 100),
        ]
        .into_iter()
        .enumerate()
        {
            let now = bodies(&mut rng, n, keep);
            let (mut a, mut b) = (UpdateOutcome::default(), UpdateOutcome::default());
            numbered
                .update_bodies(&Numbered(&now), &mut a)
                .expect("usable");
            plain.update_bodies(&now, &mut b).expect("usable");
            assert_eq!(a, b, "step {step}");
            assert_eq!(visited(&mut numbered), visited(&mut plain), "step {step}");
            numbered.tree().validate().expect("a valid tree");
        }
    }

    /// Some bodies static (every third id, including ids that come and go): the three give
    /// the reference's pairs without the pairs of two static bodies, and the same pair limit
    /// error, which counts those pairs too.
    #[test]
    fn static_bodies_pair_with_the_others_and_never_together_on_all_three() {
        let config = TreeConfig {
            margin: 0.4,
            ..TreeConfig::default()
        };
        let statics: Vec<u32> = (0..150u32).filter(|id| id.is_multiple_of(3)).collect();
        let is_static = |id: u32| id.is_multiple_of(3);
        let mut phases: Vec<Box<dyn Broadphase>> = BroadphaseKind::ALL
            .iter()
            .map(|&k| {
                let mut b = make(k, 2, config).expect("valid config");
                b.set_static_ids(&statics);
                b
            })
            .collect();
        let mut rng = Pcg64::seed_from_u64(11);
        let (mut left_out_total, mut mixed_total) = (0, 0);
        for step in 0..30 {
            let keep = if step % 4 == 0 { 75 } else { 100 };
            let now: Vec<Body> = bodies(&mut rng, 150, keep)
                .iter()
                .map(body_to_vec3)
                .collect();
            for phase in &mut phases {
                phase.update(&now).expect("usable");
            }
            let fat: Vec<(u32, Aabb<Vec2>)> = now
                .iter()
                .map(|b| {
                    let f = phases[0].fat_aabb(b.id).expect("present");
                    (b.id, box_from_vec3(&f))
                })
                .collect();
            let all = reference(&fat);
            let (expected, left_out): (Vec<_>, Vec<_>) = all
                .iter()
                .partition(|&&(a, b)| !(is_static(a) && is_static(b)));
            left_out_total += left_out.len();
            mixed_total += expected
                .iter()
                .filter(|&&(a, b)| is_static(a) || is_static(b))
                .count();
            for phase in &mut phases {
                let found = phase.find_pairs().expect("under the limit");
                assert_eq!(found.pairs, expected, "{}, step {step}", phase.kind());
            }
            // The limit counts every overlap: all of them fit, one fewer does not. Box2D's
            // never finds two static bodies' overlap (a static proxy's query sees only moving
            // proxies, as in Box2D, where static proxies query only the dynamic tree), so
            // only the reported pairs count for it.
            for phase in &mut phases {
                let counted = if phase.kind() == BroadphaseKind::Box2d {
                    expected.len()
                } else {
                    all.len()
                };
                phase.set_pair_limit(counted);
                assert_eq!(phase.find_pairs().map(|p| p.pairs), Ok(expected.clone()));
                if counted > 0 {
                    phase.set_pair_limit(counted - 1);
                    assert_eq!(
                        phase.find_pairs(),
                        Err(BroadphaseError::PairLimit {
                            limit: counted - 1,
                            static_boxes: true,
                        }),
                        "{}, step {step}",
                        phase.kind()
                    );
                }
                phase.set_pair_limit(DEFAULT_PAIR_LIMIT);
            }
        }
        assert!(
            left_out_total > 100,
            "static pairs left out: {left_out_total}"
        );
        assert!(mixed_total > 100, "static-moving pairs: {mixed_total}");
    }

    /// A bad body among good ones is refused by all three with the same error, and nothing
    /// changes: the next good update reports the same outcome on each.
    #[test]
    fn a_bad_body_is_refused_alike_and_changes_nothing() {
        let config = TreeConfig::default();
        let mut rng = Pcg64::seed_from_u64(3);
        let good = bodies(&mut rng, 30, 100);
        let mut bad = good.clone();
        bad[17].velocity.x = f32::NAN;
        let mut tree = TreeBroadphase::<Vec2>::new(config).expect("valid config");
        let mut brute = BruteForce::<Vec2>::new(config);
        let mut sap = SweepAndPrune::<Vec2>::new(config);
        let mut out = UpdateOutcome::default();
        let errors = [
            tree.update_bodies(&bad, &mut out).expect_err("refused"),
            brute.update_bodies(&bad, &mut out).expect_err("refused"),
            sap.update_bodies(&bad, &mut out).expect_err("refused"),
        ];
        for e in &errors {
            assert!(
                e.to_string()
                    .starts_with("sphere 17: its velocity is not finite ([NaN, "),
                "{e}"
            );
        }
        // Nothing was added: the good bodies all arrive new, on each.
        let ids: Vec<u32> = good.iter().map(|b| b.id).collect();
        for phase in [
            &mut tree as &mut dyn Broadphase,
            &mut brute as &mut dyn Broadphase,
            &mut sap as &mut dyn Broadphase,
        ] {
            let bodies: Vec<Body> = good.iter().map(body_to_vec3).collect();
            let out = phase.update(&bodies).expect("usable");
            assert_eq!(out.added, ids, "{}", phase.kind());
            assert_eq!(out.reinserted, ids, "{}", phase.kind());
            assert!(out.removed.is_empty(), "{}", phase.kind());
        }
    }

    /// The tree's update, in one batch of moves (below 50 bodies in the unit tests) and in
    /// runs (from 50, runs of 16): in each step some bodies stay in their fat boxes and some
    /// leave, interleaved. The outcome (the leavers, in id order), the fat boxes and the
    /// pairs are brute force's, step after step.
    #[test]
    fn bodies_that_stay_and_leave_in_one_run_update_as_brute_force_does() {
        for n in [40u32, 120] {
            stay_and_leave_as_brute_force(n);
        }
    }

    fn stay_and_leave_as_brute_force(n: u32) {
        let config = TreeConfig {
            margin: 0.3,
            ..TreeConfig::default()
        };
        let mut tree = TreeBroadphase::<Vec2>::new(config).expect("valid config");
        let mut brute = BruteForce::<Vec2>::new(config);
        let mut rng = Pcg64::seed_from_u64(11);
        let mut now = bodies(&mut rng, n, 100);
        let mut out = [UpdateOutcome::default(), UpdateOutcome::default()];
        tree.update_bodies(&now, &mut out[0]).expect("usable");
        brute.update_bodies(&now, &mut out[1]).expect("usable");
        for step in 0..6usize {
            // Every third body (a different third each step) jumps; the others creep 0.01.
            for (k, b) in now.iter_mut().enumerate() {
                let shift = if (k + step) % 3 == 0 {
                    Vec2::new(rng.random_range(-5.0..5.0), rng.random_range(-5.0..5.0))
                } else {
                    Vec2::splat(0.01)
                };
                b.tight = Aabb::new(b.tight.min + shift, b.tight.max + shift);
            }
            tree.update_bodies(&now, &mut out[0]).expect("usable");
            brute.update_bodies(&now, &mut out[1]).expect("usable");
            assert_eq!(out[0], out[1], "{n} bodies, step {step}");
            let left = out[0].reinserted.len();
            assert!(
                (n as usize / 4..=n as usize / 2).contains(&left),
                "{n} bodies, step {step}: {left} left"
            );
            let fat: Vec<(u32, Aabb<Vec2>)> = now
                .iter()
                .map(|b| {
                    let f = Broadphase::fat_aabb(&tree, b.id).expect("present");
                    assert_eq!(Broadphase::fat_aabb(&brute, b.id), Some(f));
                    (b.id, box_from_vec3(&f))
                })
                .collect();
            let expected = reference(&fat);
            assert_eq!(visited(&mut tree).0, expected, "{n} bodies, step {step}");
            tree.tree().validate().expect("a valid tree");
        }
    }
}
