//! The engine's own broad phase, as a stream's steps carry it (fat boxes, candidate pairs,
//! tree, timings: see `docs/formats.md`, "The engine's broad phase"), checked against the
//! step's boxes:
//!
//! - **its tree** is validated before use ([`validate_tree`]): links, reachability, boxes,
//!   heights, one leaf a box. A broken tree is refused with a message naming the node (the
//!   step's boxes are kept); a valid one is measured ([`tree_health`]): its SAH cost against a
//!   fresh build of the same leaves by this project's tree, its height against the least.
//! - **its pairs** are checked against brute force over its own fat boxes ([`check_pairs`]):
//!   a pair whose fat boxes overlap and that it did not report is *missed*; each reported
//!   pair is classified ([`PairClass`]).
//!
//! [`EngineRecord`] gathers, step by step, what a stream's engine parts gave: the parts of
//! each step (for a view to draw, within a memory budget) and the run's [`EngineSummary`].

use crate::tree::{Aabb, DynamicTree, TreeConfig};
use aabb_recorder::wire::{EngineParts, TIMING_MARGIN, Timing};

pub use aabb_recorder::wire::{EngineTree, NodeKind, TreeNode, WireBox};
use glam::{Vec2, Vec3};
use std::collections::BTreeMap;

/// The most missed pairs, pairs with fat boxes apart and refused trees a summary lists (all
/// are counted).
pub const MAX_LISTED: usize = 1000;

/// The most tree-health samples and per-step pair counts a summary keeps (those of the
/// first steps).
pub const MAX_HEALTH_SAMPLES: usize = 100_000;

/// The engine's parts of one received step, as kept beside the trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineStep {
    /// The step's index in the trace.
    pub index: u64,
    /// The engine's number for it.
    pub engine_step: u64,
    /// The fat box of each box, sorted by id.
    pub fat_boxes: Option<Vec<WireBox>>,
    /// The candidate pairs, `[a, b]` with `a < b`, sorted.
    pub pairs: Option<Vec<[u32; 2]>>,
    /// The tree, when sent and valid (a refused tree is not kept: see
    /// [`EngineSummary::refused_trees`]).
    pub tree: Option<EngineTree>,
    /// The timings and counts, in the order sent.
    pub timings: Option<Vec<Timing>>,
}

// ---------------------------------------------------------------------------------------------
// The tree

/// What is wrong with an engine's tree: the node (when one is to blame) and the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeFault {
    /// The node's id, when the fault is a node's.
    pub node: Option<u32>,
    /// What is wrong.
    pub problem: String,
}

impl std::fmt::Display for TreeFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.node {
            Some(n) => write!(f, "node {n}: {}", self.problem),
            None => write!(f, "{}", self.problem),
        }
    }
}

/// The shape of a valid tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeShape {
    /// Leaves.
    pub leaves: usize,
    /// Nodes.
    pub nodes: usize,
    /// The root's height (0 for an empty tree or a single leaf).
    pub height: u32,
}

fn axes(dims: u8) -> usize {
    if dims == 2 { 2 } else { 3 }
}

/// Whether the box `outer` contains `inner` on the first `dims` axes (boundaries included).
fn contains(outer: (&[f32; 3], &[f32; 3]), inner: (&[f32; 3], &[f32; 3]), dims: u8) -> bool {
    (0..axes(dims)).all(|k| outer.0[k] <= inner.0[k] && inner.1[k] <= outer.1[k])
}

/// Whether two boxes overlap on the first `dims` axes (touching counts, as in the tree).
fn overlaps(a: (&[f32; 3], &[f32; 3]), b: (&[f32; 3], &[f32; 3]), dims: u8) -> bool {
    (0..axes(dims)).all(|k| a.0[k] <= b.1[k] && b.0[k] <= a.1[k])
}

/// Checks an engine's tree against the step's boxes `proxies` (moving and static, sorted by
/// id):
///
/// - the root is a node, and has no parent; an empty tree has no node;
/// - each branch's two children are nodes (two different ones) whose parent is the branch;
/// - every node is reached once from the root (no cycle, no node with two parents, none
///   left out);
/// - each branch's box contains its children's, each leaf's box its box's (tight) box;
/// - heights: a leaf's is 0, a branch's 1 + its higher child's;
/// - each leaf holds a box of the step, each box in at most one leaf, and, unless the tree
///   is marked partial, every box of the step in one.
///
/// The first fault found is returned, naming the node.
pub fn validate_tree(
    tree: &EngineTree,
    proxies: &[WireBox],
    dims: u8,
) -> Result<TreeShape, TreeFault> {
    let fault = |node: Option<u32>, problem: String| Err(TreeFault { node, problem });
    let nodes = &tree.nodes;
    // Node id -> entry, sorted.
    let mut index: Vec<(u32, usize)> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    index.sort_unstable();
    if let Some(w) = index.windows(2).find(|w| w[0].0 == w[1].0) {
        return fault(Some(w[0].0), "twice in the tree".to_owned());
    }
    let find = |id: u32| {
        index
            .binary_search_by_key(&id, |&(n, _)| n)
            .ok()
            .map(|k| index[k].1)
    };
    let Some(root_id) = tree.root else {
        if !nodes.is_empty() {
            return fault(
                None,
                format!(
                    "no root, but {} nodes (an empty tree has none)",
                    nodes.len()
                ),
            );
        }
        if !tree.partial && !proxies.is_empty() {
            return fault(
                None,
                format!(
                    "an empty tree, but the step has {} boxes (and the tree is not marked \
                     partial)",
                    proxies.len()
                ),
            );
        }
        return Ok(TreeShape {
            leaves: 0,
            nodes: 0,
            height: 0,
        });
    };
    let Some(root) = find(root_id) else {
        return fault(
            None,
            format!("the root {root_id} is not a node of the tree"),
        );
    };
    if let Some(p) = nodes[root].parent {
        return fault(Some(root_id), format!("the root has a parent ({p})"));
    }
    // Walk from the root: each node reached once, its parent the node that reached it.
    let mut seen = vec![false; nodes.len()];
    // For each box of `proxies`, the leaf holding it.
    let mut leaf_of: Vec<Option<u32>> = vec![None; proxies.len()];
    seen[root] = true;
    let mut stack = vec![root];
    let mut leaves = 0;
    while let Some(i) = stack.pop() {
        let n = &nodes[i];
        match n.kind {
            NodeKind::Branch([a, b]) => {
                if a == b {
                    return fault(Some(n.id), format!("both children are node {a}"));
                }
                let mut highest = 0;
                for c in [a, b] {
                    let Some(ci) = find(c) else {
                        return fault(
                            Some(n.id),
                            format!("its child {c} is not a node of the tree"),
                        );
                    };
                    if seen[ci] {
                        return fault(
                            Some(c),
                            format!(
                                "reached twice from the root (again as a child of node {}: a \
                                 cycle, or two parents)",
                                n.id
                            ),
                        );
                    }
                    let child = &nodes[ci];
                    if child.parent != Some(n.id) {
                        return fault(
                            Some(c),
                            format!(
                                "its parent is {}, but node {} has it as a child",
                                child
                                    .parent
                                    .map_or_else(|| "none".to_owned(), |p| p.to_string()),
                                n.id
                            ),
                        );
                    }
                    if !contains((&n.min, &n.max), (&child.min, &child.max), dims) {
                        return fault(
                            Some(n.id),
                            format!("its box does not contain its child {c}'s"),
                        );
                    }
                    seen[ci] = true;
                    stack.push(ci);
                    highest = highest.max(child.height);
                }
                let expected = highest.saturating_add(1);
                if n.height != expected {
                    return fault(
                        Some(n.id),
                        format!(
                            "height {}, but 1 + its higher child's is {expected}",
                            n.height
                        ),
                    );
                }
            }
            NodeKind::Leaf(p) => {
                leaves += 1;
                if n.height != 0 {
                    return fault(
                        Some(n.id),
                        format!("a leaf of height {} (a leaf's is 0)", n.height),
                    );
                }
                let Ok(k) = proxies.binary_search_by_key(&p, |b| b.id) else {
                    return fault(
                        Some(n.id),
                        format!("a leaf of id {p}, which is not a box of the step"),
                    );
                };
                if let Some(other) = leaf_of[k] {
                    return fault(
                        Some(n.id),
                        format!("a leaf of id {p}, which leaf {other} holds too"),
                    );
                }
                leaf_of[k] = Some(n.id);
                let b = &proxies[k];
                if !contains((&n.min, &n.max), (&b.min, &b.max), dims) {
                    return fault(
                        Some(n.id),
                        format!("its box does not contain the box of id {p}"),
                    );
                }
            }
        }
    }
    if let Some(i) = seen.iter().position(|&s| !s) {
        return fault(
            Some(nodes[i].id),
            format!("not reachable from the root {root_id}"),
        );
    }
    if !tree.partial
        && let Some(k) = leaf_of.iter().position(Option::is_none)
    {
        return fault(
            None,
            format!(
                "id {}, a box of the step, is in no leaf (and the tree is not marked partial)",
                proxies[k].id
            ),
        );
    }
    Ok(TreeShape {
        leaves,
        nodes: nodes.len(),
        height: nodes[root].height,
    })
}

/// A valid tree's health: its SAH cost against a fresh build over the same leaves, its
/// height against the least possible.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeHealth {
    /// Leaves.
    pub leaves: usize,
    /// The root's height.
    pub height: u32,
    /// The least height a tree of as many leaves can have: `ceil(log2(leaves))`.
    pub min_height: u32,
    /// The tree's SAH cost, as [`DynamicTree::sah_cost`] measures this project's: the SAH
    /// measure (half the perimeter in 2D, half the surface area in 3D) of every branch but
    /// the root, summed, over the root's; 0 for a root of measure 0.
    pub cost: f64,
    /// The same cost of a tree built afresh over the same leaf boxes by this project's bulk
    /// build ([`DynamicTree::create_proxies`], margin 0); `None` when it could not be built.
    pub fresh_cost: Option<f64>,
}

impl TreeHealth {
    /// Its cost against the fresh build's (1: as good as a fresh build), when there was one
    /// of positive cost.
    #[must_use]
    pub fn ratio(&self) -> Option<f64> {
        let fresh = self.fresh_cost?;
        (fresh > 0.0 && self.cost.is_finite()).then(|| self.cost / fresh)
    }
}

/// The SAH measure of a box in `dims` dimensions, as the tree computes it.
fn half_area(min: &[f32; 3], max: &[f32; 3], dims: u8) -> f64 {
    if dims == 2 {
        Aabb::new(Vec2::new(min[0], min[1]), Vec2::new(max[0], max[1])).half_area_f64()
    } else {
        Aabb::new(Vec3::from_array(*min), Vec3::from_array(*max)).half_area_f64()
    }
}

/// The least height of a tree of `leaves` leaves.
#[must_use]
pub fn min_height(leaves: usize) -> u32 {
    if leaves <= 1 {
        0
    } else {
        usize::BITS - (leaves - 1).leading_zeros()
    }
}

/// The health of a tree that [`validate_tree`] accepted.
#[must_use]
pub fn tree_health(tree: &EngineTree, shape: &TreeShape, dims: u8) -> TreeHealth {
    let root = tree
        .root
        .and_then(|r| tree.nodes.iter().find(|n| n.id == r));
    let cost = root.map_or(0.0, |root| {
        let root_area = half_area(&root.min, &root.max, dims);
        if root_area <= 0.0 {
            return 0.0;
        }
        let total = tree
            .nodes
            .iter()
            .filter(|n| n.id != root.id && matches!(n.kind, NodeKind::Branch(_)))
            .fold(0.0, |sum, n| sum + half_area(&n.min, &n.max, dims));
        total / root_area
    });
    let leaves = tree
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Leaf(_)));
    let fresh_cost = if dims == 2 {
        let items: Vec<(Aabb<Vec2>, Vec2, u32)> = leaves
            .map(|n| {
                let b = Aabb::new(Vec2::new(n.min[0], n.min[1]), Vec2::new(n.max[0], n.max[1]));
                (b, Vec2::ZERO, n.id)
            })
            .collect();
        fresh_build_cost(&items)
    } else {
        let items: Vec<(Aabb<Vec3>, Vec3, u32)> = leaves
            .map(|n| {
                let b = Aabb::new(Vec3::from_array(n.min), Vec3::from_array(n.max));
                (b, Vec3::ZERO, n.id)
            })
            .collect();
        fresh_build_cost(&items)
    };
    TreeHealth {
        leaves: shape.leaves,
        height: shape.height,
        min_height: min_height(shape.leaves),
        cost,
        fresh_cost,
    }
}

/// The SAH cost of this project's tree built at once over `items` with no margin.
fn fresh_build_cost<V: crate::tree::Vector>(items: &[(Aabb<V>, V, u32)]) -> Option<f64> {
    let config = TreeConfig {
        margin: 0.0,
        velocity_lookahead: 0.0,
        ..TreeConfig::default()
    };
    let mut tree = DynamicTree::<V, u32>::try_new(config).ok()?;
    tree.create_proxies(items).ok()?;
    Some(tree.sah_cost())
}

// ---------------------------------------------------------------------------------------------
// The pairs

/// Why the engine reported a pair, judged from the two boxes' tight and fat boxes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PairClass {
    /// The tight boxes overlap: a real contact candidate.
    Contact,
    /// The tight boxes are apart but overlap once each is grown by the declared margin
    /// (and cut to its fat box): a false positive the margin causes.
    Margin,
    /// Only the fat boxes' growth beyond the declared margin (the velocity look-ahead)
    /// makes them overlap.
    LookAhead,
    /// The tight boxes are apart and the fat boxes overlap, and the engine declared no
    /// margin (so margin and look-ahead cannot be told apart).
    FatOnly,
    /// The fat boxes do not overlap at all: the engine reported a pair its own fat boxes
    /// do not justify (an error of the engine's, or a pair kept too long).
    FatApart,
}

impl PairClass {
    /// Its name in summaries.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            PairClass::Contact => "tight boxes overlap",
            PairClass::Margin => "margin",
            PairClass::LookAhead => "look-ahead",
            PairClass::FatOnly => "fat only (margin or look-ahead)",
            PairClass::FatApart => "reported but fat boxes apart",
        }
    }
}

/// How many reported pairs fell in each [`PairClass`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairCounts {
    /// [`PairClass::Contact`].
    pub contact: u64,
    /// [`PairClass::Margin`].
    pub margin: u64,
    /// [`PairClass::LookAhead`].
    pub look_ahead: u64,
    /// [`PairClass::FatOnly`].
    pub fat_only: u64,
    /// [`PairClass::FatApart`].
    pub fat_apart: u64,
}

impl PairCounts {
    /// Counts one pair of `class`.
    pub fn count(&mut self, class: PairClass) {
        *match class {
            PairClass::Contact => &mut self.contact,
            PairClass::Margin => &mut self.margin,
            PairClass::LookAhead => &mut self.look_ahead,
            PairClass::FatOnly => &mut self.fat_only,
            PairClass::FatApart => &mut self.fat_apart,
        } += 1;
    }

    /// Adds another's counts.
    pub fn add(&mut self, other: &PairCounts) {
        self.contact += other.contact;
        self.margin += other.margin;
        self.look_ahead += other.look_ahead;
        self.fat_only += other.fat_only;
        self.fat_apart += other.fat_apart;
    }

    /// Every pair counted.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.contact + self.margin + self.look_ahead + self.fat_only + self.fat_apart
    }

    /// The pairs whose tight boxes do not overlap.
    #[must_use]
    pub fn false_positives(&self) -> u64 {
        self.total() - self.contact
    }

    /// The share of the reported pairs in `count` (0 when none was reported).
    #[must_use]
    pub fn share(&self, count: u64) -> f64 {
        match self.total() {
            0 => 0.0,
            total => count as f64 / total as f64,
        }
    }
}

/// Classifies a reported pair from the tight (`ta`, `tb`) and fat (`fa`, `fb`) boxes of its
/// two boxes and the engine's declared margin:
///
/// 1. the tight boxes overlap: [`PairClass::Contact`];
/// 2. else the fat boxes do not overlap: [`PairClass::FatApart`];
/// 3. else with no margin declared: [`PairClass::FatOnly`];
/// 4. else each tight box grown by the margin on every side and cut to its fat box (the
///    part of the fat box the margin explains): when these overlap, [`PairClass::Margin`],
///    otherwise [`PairClass::LookAhead`] (only the growth beyond the margin makes the pair).
#[must_use]
pub fn classify_pair(
    ta: &WireBox,
    tb: &WireBox,
    fa: &WireBox,
    fb: &WireBox,
    margin: Option<f32>,
    dims: u8,
) -> PairClass {
    if overlaps((&ta.min, &ta.max), (&tb.min, &tb.max), dims) {
        return PairClass::Contact;
    }
    if !overlaps((&fa.min, &fa.max), (&fb.min, &fb.max), dims) {
        return PairClass::FatApart;
    }
    let Some(m) = margin else {
        return PairClass::FatOnly;
    };
    let grown = |t: &WireBox, f: &WireBox| {
        let mut min = [0.0f32; 3];
        let mut max = [0.0f32; 3];
        for k in 0..axes(dims) {
            min[k] = (t.min[k] - m).max(f.min[k]);
            max[k] = (t.max[k] + m).min(f.max[k]);
        }
        (min, max)
    };
    let (a, b) = (grown(ta, fa), grown(tb, fb));
    let nonempty = |(min, max): &([f32; 3], [f32; 3])| (0..axes(dims)).all(|k| min[k] <= max[k]);
    if nonempty(&a) && nonempty(&b) && overlaps((&a.0, &a.1), (&b.0, &b.1), dims) {
        PairClass::Margin
    } else {
        PairClass::LookAhead
    }
}

/// One step's pairs against brute force over the engine's fat boxes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairCheck {
    /// The reported pairs by class.
    pub counts: PairCounts,
    /// Pairs whose fat boxes overlap that the engine did not report (two static boxes are
    /// never a pair), counted whole.
    pub missed_total: u64,
    /// The least [`MAX_LISTED`] of them, sorted.
    pub missed: Vec<[u32; 2]>,
    /// Reported pairs whose fat boxes are apart, counted whole.
    pub apart_total: u64,
    /// The first [`MAX_LISTED`] of them, sorted.
    pub apart: Vec<[u32; 2]>,
    /// The pairs of fat boxes the check tested (those that overlap along the axis swept).
    pub tests: u64,
}

/// How much work the check may do: at most `per_step` pair tests at one step, and at most
/// `per_stream` units of work over a whole stream (a pair tested, a box, fat box or tree node
/// read); past either, a step is left unchecked and the summary says why, so a stream built
/// to defeat the check costs time bounded by the limits whatever it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairWork {
    /// The most pair tests one step's check makes.
    pub per_step: u64,
    /// The most units of work over a stream.
    pub per_stream: u64,
}

/// Pair tests a step's check may make for each box a step may hold
/// ([`crate::trace::TraceLimits::max_boxes_per_step`]).
pub const PAIR_TESTS_PER_STEP_BOX: u64 = 8;
/// Units of work a stream's check may do for each box a trace may hold
/// ([`crate::trace::TraceLimits::max_total_boxes`]).
pub const PAIR_TESTS_PER_TRACE_BOX: u64 = 4;

impl PairWork {
    /// The work the check may do on a stream read under `limits`: 8 pair tests a box of the
    /// largest step at one step, 4 a box of the largest trace over the stream (8 and 64
    /// million under the default limits).
    #[must_use]
    pub fn for_limits(limits: &crate::trace::TraceLimits) -> Self {
        PairWork {
            per_step: (limits.max_boxes_per_step as u64).saturating_mul(PAIR_TESTS_PER_STEP_BOX),
            per_stream: limits
                .max_total_boxes
                .saturating_mul(PAIR_TESTS_PER_TRACE_BOX),
        }
    }
}

impl Default for PairWork {
    fn default() -> Self {
        Self::for_limits(&crate::trace::TraceLimits::default())
    }
}

/// Why a step's pairs were not checked for the work they would take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TooMuchWork {
    /// The stream's check has done all the work it may: the step was not looked at.
    Stream,
    /// The step's fat boxes overlap in more pairs than one step's check may test.
    Step {
        /// The pairs of fat boxes that overlap along the axis with fewest.
        tests: u64,
        /// The most one step may test.
        limit: u64,
    },
}

/// The pair tests a sweep along `axis` makes over `fat`: for each box, the boxes after it in
/// the order of their lower bounds whose lower bound is within its upper one. Counted without
/// testing a pair (a sort and a binary search a box).
fn sweep_tests(fat: &[WireBox], axis: usize) -> u64 {
    let mut mins: Vec<f32> = fat.iter().map(|b| b.min[axis]).collect();
    mins.sort_unstable_by(f32::total_cmp);
    let mut total = 0u64;
    for b in fat {
        // The boxes whose lower bound is at most this one's upper bound, this one included.
        let reach = mins.partition_point(|m| m.total_cmp(&b.max[axis]).is_le());
        // Of those, the ones before it in the sweep's order are counted from their side; a
        // box with a lower bound equal to another's is before or after it by id, once.
        let before = mins.partition_point(|m| m.total_cmp(&b.min[axis]).is_lt());
        total += (reach - before).saturating_sub(1) as u64;
    }
    // Each pair whose lower bounds tie is counted from both sides: once too many.
    let mut k = 0;
    while k < mins.len() {
        let run = mins[k..]
            .iter()
            .take_while(|m| m.total_cmp(&mins[k]).is_eq())
            .count();
        let ties = run as u64 * (run as u64 - 1) / 2;
        total -= ties;
        k += run;
    }
    total
}

/// Keeps the least `MAX_LISTED` of the pairs given it, and counts them all.
#[derive(Default)]
struct Least {
    total: u64,
    heap: std::collections::BinaryHeap<[u32; 2]>,
}

impl Least {
    fn push(&mut self, pair: [u32; 2]) {
        self.total += 1;
        if self.heap.len() < MAX_LISTED {
            self.heap.push(pair);
        } else if self.heap.peek().is_some_and(|top| pair < *top) {
            self.heap.pop();
            self.heap.push(pair);
        }
    }

    fn into_sorted(self) -> (u64, Vec<[u32; 2]>) {
        (self.total, self.heap.into_sorted_vec())
    }
}

/// Checks the engine's `pairs` (sorted, `a < b`) against every pair of its `fat` boxes that
/// overlap (sort and sweep along the axis where fewest pairs overlap, exact), and classifies
/// each reported pair. `proxies` are the step's boxes (moving and static, sorted by id),
/// `statics` the static ones' ids (sorted). Missed pairs are counted, and the least
/// [`MAX_LISTED`] kept. An error when some box has no fat box (the check needs them all);
/// [`TooMuchWork`] (before any pair is tested) when the sweep would test more than
/// `max_tests` pairs.
pub fn check_pairs(
    proxies: &[WireBox],
    statics: &[u32],
    fat: &[WireBox],
    pairs: &[[u32; 2]],
    margin: Option<f32>,
    dims: u8,
    max_tests: u64,
) -> Result<Result<PairCheck, TooMuchWork>, String> {
    if fat.len() != proxies.len() {
        return Err(format!(
            "fat boxes for {} of the step's {} boxes (the pair check needs them all)",
            fat.len(),
            proxies.len()
        ));
    }
    let mut fat_sorted = fat.to_vec();
    fat_sorted.sort_unstable_by_key(|b| b.id);
    // -0 as 0, so that the order of the sweep (total) is the order of the overlap test.
    for b in &mut fat_sorted {
        for v in b.min.iter_mut().chain(b.max.iter_mut()) {
            *v += 0.0;
        }
    }
    // The axis along which the fewest pairs overlap (the first of equals).
    let (axis, tests) = (0..axes(dims))
        .map(|k| (k, sweep_tests(&fat_sorted, k)))
        .min_by_key(|&(k, t)| (t, k))
        .unwrap_or((0, 0));
    if tests > max_tests {
        return Ok(Err(TooMuchWork::Step {
            tests,
            limit: max_tests,
        }));
    }
    let is_static = |id: u32| statics.binary_search(&id).is_ok();
    let mut check = PairCheck {
        tests,
        ..PairCheck::default()
    };
    let mut missed = Least::default();
    // Every overlapping pair of fat boxes, by a sweep along the axis.
    let mut order: Vec<usize> = (0..fat_sorted.len()).collect();
    order.sort_unstable_by(|&i, &j| {
        fat_sorted[i].min[axis]
            .total_cmp(&fat_sorted[j].min[axis])
            .then(fat_sorted[i].id.cmp(&fat_sorted[j].id))
    });
    for (k, &i) in order.iter().enumerate() {
        let a = &fat_sorted[i];
        for &j in &order[k + 1..] {
            let b = &fat_sorted[j];
            if b.min[axis].total_cmp(&a.max[axis]).is_gt() {
                break;
            }
            if !overlaps((&a.min, &a.max), (&b.min, &b.max), dims) {
                continue;
            }
            if is_static(a.id) && is_static(b.id) {
                continue;
            }
            let pair = [a.id.min(b.id), a.id.max(b.id)];
            if pairs.binary_search(&pair).is_err() {
                missed.push(pair);
            }
        }
    }
    (check.missed_total, check.missed) = missed.into_sorted();
    let get = |list: &[WireBox], id: u32| {
        list.binary_search_by_key(&id, |b| b.id)
            .ok()
            .map(|k| list[k])
    };
    for &[a, b] in pairs {
        let (Some(ta), Some(tb), Some(fa), Some(fb)) = (
            get(proxies, a),
            get(proxies, b),
            get(&fat_sorted, a),
            get(&fat_sorted, b),
        ) else {
            return Err(format!(
                "pair ({a}, {b}) names an id that is not a box of the step"
            ));
        };
        let class = classify_pair(&ta, &tb, &fa, &fb, margin, dims);
        check.counts.count(class);
        if class == PairClass::FatApart {
            check.apart_total += 1;
            if check.apart.len() < MAX_LISTED {
                check.apart.push([a, b]);
            }
        }
    }
    Ok(Ok(check))
}

/// Each pair the engine reported at `step` with why it exists ([`PairClass`]), in the
/// step's order: the step's tight boxes `tight` (sorted by id) against the engine's fat boxes,
/// with the step's declared margin (else `margin`). Empty when the step carried no pairs or
/// no fat boxes; a pair naming a box the step lacks is left out.
#[must_use]
pub fn classify_step(
    step: &EngineStep,
    tight: &[WireBox],
    margin: Option<f32>,
    dims: u8,
) -> Vec<([u32; 2], PairClass)> {
    let (Some(pairs), Some(fat)) = (&step.pairs, &step.fat_boxes) else {
        return Vec::new();
    };
    let margin = step
        .timings
        .iter()
        .flatten()
        .find(|t| t.key == TIMING_MARGIN)
        .map(|t| t.value as f32)
        .or(margin);
    let get = |list: &[WireBox], id: u32| {
        list.binary_search_by_key(&id, |b| b.id)
            .ok()
            .map(|k| list[k])
    };
    pairs
        .iter()
        .filter_map(|&[a, b]| {
            let class = classify_pair(
                &get(tight, a)?,
                &get(tight, b)?,
                &get(fat, a)?,
                &get(fat, b)?,
                margin,
                dims,
            );
            Some(([a, b], class))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// A run

/// A pair at a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct StepPair {
    /// The engine's step number.
    pub engine_step: u64,
    /// The step's index in the trace.
    pub index: u64,
    /// The two ids, lower first.
    pub pair: [u32; 2],
}

/// A tree refused at a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedTree {
    /// The engine's step number.
    pub engine_step: u64,
    /// The step's index in the trace.
    pub index: u64,
    /// What is wrong, naming the node.
    pub fault: TreeFault,
}

impl std::fmt::Display for RefusedTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "step {}: the engine's tree is refused: {}",
            self.engine_step, self.fault
        )
    }
}

/// The health of the tree of one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeSample {
    /// The engine's step number.
    pub engine_step: u64,
    /// The step's index in the trace.
    pub index: u64,
    /// The tree's health.
    pub health: TreeHealth,
}

/// One timing or count over the steps that sent it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimingStat {
    /// Steps that sent it.
    pub steps: u64,
    /// The sum of its values.
    pub sum: f64,
    /// The least value.
    pub min: f64,
    /// The greatest value.
    pub max: f64,
}

impl TimingStat {
    /// The mean value.
    #[must_use]
    pub fn mean(&self) -> f64 {
        self.sum / self.steps.max(1) as f64
    }
}

/// One step's pair check in numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepPairCounts {
    /// The engine's step number.
    pub engine_step: u64,
    /// The step's index in the trace.
    pub index: u64,
    /// Its reported pairs by class.
    pub counts: PairCounts,
    /// Its missed pairs.
    pub missed: u64,
}

/// What a run's engine parts gave, over every step received.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineSummary {
    /// Steps that carried at least one part.
    pub steps_with_parts: u64,
    /// Steps whose pairs were checked (they carried fat boxes for every box, and pairs).
    pub pair_steps: u64,
    /// Steps that carried pairs but could not be checked, and the first reason.
    pub pair_steps_unchecked: u64,
    /// Why the first unchecked step could not be.
    pub unchecked_reason: Option<String>,
    /// Why the pair check stopped before the end of the stream (its work over the stream
    /// reached [`PairWork::per_stream`]), when it did.
    pub pairs_stopped: Option<String>,
    /// The reported pairs by class, over the checked steps.
    pub counts: PairCounts,
    /// Each checked step's counts, in step order (the first [`MAX_HEALTH_SAMPLES`]).
    pub step_counts: Vec<StepPairCounts>,
    /// Missed pairs in all.
    pub missed_total: u64,
    /// The first [`MAX_LISTED`] missed pairs, in step order.
    pub missed: Vec<StepPair>,
    /// Reported pairs with fat boxes apart in all.
    pub apart_total: u64,
    /// The first [`MAX_LISTED`] of them, in step order.
    pub apart: Vec<StepPair>,
    /// Trees validated.
    pub trees_valid: u64,
    /// Trees refused in all.
    pub trees_refused: u64,
    /// Trees not checked because the stream's check had done all the work it may.
    pub trees_unchecked: u64,
    /// The first [`MAX_LISTED`] refused trees.
    pub refused_trees: Vec<RefusedTree>,
    /// The health of every valid tree, in step order (the first [`MAX_HEALTH_SAMPLES`]).
    pub health: Vec<TreeSample>,
    /// The margin the engine last declared (timing `margin`).
    pub margin: Option<f32>,
    /// Each timing or count key over the steps that sent it, by key (the first
    /// [`aabb_recorder::wire::MAX_TIMINGS`] keys seen).
    pub timings: BTreeMap<String, TimingStat>,
    /// The sums the engine's own costs are fitted from ([`CostFit::costs`]).
    pub cost_fit: CostFit,
}

/// A least-squares line `y = a + b x`, summed as samples arrive (so a run of any length
/// takes constant memory).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LineFit {
    /// Samples taken.
    pub n: u64,
    sx: f64,
    sy: f64,
    sxx: f64,
    sxy: f64,
}

impl LineFit {
    /// Takes one sample (ignored unless both values are finite).
    pub fn add(&mut self, x: f64, y: f64) {
        if x.is_finite() && y.is_finite() {
            self.n += 1;
            self.sx += x;
            self.sy += y;
            self.sxx += x * x;
            self.sxy += x * y;
        }
    }

    /// The slope through the origin, `sum(x y) / sum(x x)`: what one unit of `x` costs when
    /// `y` is all `x`'s doing (`None` with fewer than [`MIN_FIT_SAMPLES`] samples, or all
    /// `x` 0).
    #[must_use]
    pub fn slope_through_origin(&self) -> Option<f64> {
        (self.n >= MIN_FIT_SAMPLES && self.sxx > 0.0).then(|| self.sxy / self.sxx)
    }

    /// The slope of the line with an intercept: what one more unit of `x` costs over a fixed
    /// part (`None` with fewer than [`MIN_FIT_SAMPLES`] samples, or `x` never varying).
    #[must_use]
    pub fn slope(&self) -> Option<f64> {
        let n = self.n as f64;
        let var = self.sxx - self.sx * self.sx / n;
        (self.n >= MIN_FIT_SAMPLES && var > 1e-9 * self.sxx.max(1.0))
            .then(|| (self.sxy - self.sx * self.sy / n) / var)
    }
}

/// The fewest steps a cost is fitted from.
pub const MIN_FIT_SAMPLES: u64 = 8;

/// The engine's own costs, fitted from the timings and counts its stream carried each step:
/// its narrow phase's time against the pairs it tested, its broad phase's against the
/// leaves it reinserted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CostFit {
    /// `narrow_phase_ns` against `pairs_tested`.
    pub pair_test: LineFit,
    /// `broad_phase_ns` against `reinserts`.
    pub reinsert: LineFit,
}

/// What [`CostFit::costs`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineCosts {
    /// Nanoseconds one narrow-phase pair test costs the engine.
    pub ns_per_pair_test: f64,
    /// Steps it was fitted from.
    pub pair_steps: u64,
    /// Nanoseconds one more reinserted leaf costs its broad phase, when the steps varied
    /// enough to tell.
    pub ns_per_reinsert: Option<f64>,
    /// Steps that was fitted from.
    pub reinsert_steps: u64,
}

impl CostFit {
    /// Takes one step's timings (those that sent a pair: time and count together).
    pub fn take(&mut self, parts: &EngineParts) {
        use aabb_recorder::wire::{
            TIMING_BROAD_PHASE_NS, TIMING_NARROW_PHASE_NS, TIMING_PAIRS_TESTED, TIMING_REINSERTS,
        };
        if let (Some(ns), Some(pairs)) = (
            parts.timing(TIMING_NARROW_PHASE_NS),
            parts.timing(TIMING_PAIRS_TESTED),
        ) {
            self.pair_test.add(pairs, ns);
        }
        if let (Some(ns), Some(reinserts)) = (
            parts.timing(TIMING_BROAD_PHASE_NS),
            parts.timing(TIMING_REINSERTS),
        ) {
            self.reinsert.add(reinserts, ns);
        }
    }

    /// The engine's costs, when at least [`MIN_FIT_SAMPLES`] steps sent its narrow phase's
    /// time and pairs tested (a pair test's cost is that time over those pairs, fitted
    /// through the origin: the narrow phase does little besides its tests).
    #[must_use]
    pub fn costs(&self) -> Option<EngineCosts> {
        let ns_per_pair_test = self
            .pair_test
            .slope_through_origin()
            .filter(|c| c.is_finite() && *c > 0.0)?;
        let ns_per_reinsert = self.reinsert.slope().filter(|c| c.is_finite() && *c > 0.0);
        Some(EngineCosts {
            ns_per_pair_test,
            pair_steps: self.pair_test.n,
            ns_per_reinsert,
            reinsert_steps: if ns_per_reinsert.is_some() {
                self.reinsert.n
            } else {
                0
            },
        })
    }
}

impl EngineSummary {
    /// True when no step carried an engine part.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.steps_with_parts == 0
    }
}

/// What one step's parts gave.
#[derive(Clone, Debug, PartialEq)]
pub struct StepCheck {
    /// The pair check, when the step carried pairs: an error when it could not be run, or
    /// [`TooMuchWork`] when it would test more than it may.
    pub pairs: Option<Result<Result<PairCheck, TooMuchWork>, String>>,
    /// The tree's health, or why it was refused, when the step carried a tree.
    pub tree: Option<Result<TreeHealth, TreeFault>>,
}

/// Checks one step's parts against its boxes: `moving` and `statics` sorted by id; the pair
/// check tests at most `max_tests` pairs of fat boxes.
#[must_use]
pub fn check_step(
    parts: &EngineParts,
    moving: &[WireBox],
    statics: &[WireBox],
    dims: u8,
    max_tests: u64,
) -> StepCheck {
    let mut proxies: Vec<WireBox> = Vec::with_capacity(moving.len() + statics.len());
    proxies.extend_from_slice(moving);
    proxies.extend_from_slice(statics);
    proxies.sort_unstable_by_key(|b| b.id);
    let margin = parts.timing(TIMING_MARGIN).map(|m| m as f32);
    let pairs = parts.pairs.as_ref().map(|pairs| {
        let Some(fat) = &parts.fat_boxes else {
            return Err("the step carries pairs but no fat boxes".to_owned());
        };
        let static_ids: Vec<u32> = statics.iter().map(|b| b.id).collect();
        check_pairs(&proxies, &static_ids, fat, pairs, margin, dims, max_tests)
    });
    let tree = parts.tree.as_ref().map(|tree| {
        validate_tree(tree, &proxies, dims).map(|shape| tree_health(tree, &shape, dims))
    });
    StepCheck { pairs, tree }
}

/// A stream's engine parts, step by step: the run's summary, and the parts of each step
/// (kept while their elements fit in the budget).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineRecord {
    /// The run's summary.
    pub summary: EngineSummary,
    /// The parts of the steps that carried some, in step order (while they fit the budget).
    pub steps: Vec<EngineStep>,
    /// Fat boxes, pairs and tree nodes kept in `steps`.
    pub kept_elements: u64,
    /// The most elements kept (0: none kept, only the summary).
    pub budget: u64,
    /// The first step whose parts were not kept for the budget, when one was not.
    pub not_kept_from: Option<u64>,
    /// The most work the pair check may do.
    pub pair_work: PairWork,
    /// The check's work so far over the stream: pairs tested, and boxes, fat boxes (once an
    /// axis) and tree nodes read.
    pub check_work: u64,
    /// The last step checked: its moving boxes, the parts the check reads, and what it gave
    /// (a step that repeats them, a settled pile's, is not checked again).
    last: Option<LastCheck>,
}

/// What [`EngineRecord`] keeps of the last step it checked.
#[derive(Clone, Debug, PartialEq)]
struct LastCheck {
    moving: Vec<WireBox>,
    fat_boxes: Option<Vec<WireBox>>,
    pairs: Option<Vec<[u32; 2]>>,
    tree: Option<EngineTree>,
    margin: Option<u64>,
    check: StepCheck,
}

impl LastCheck {
    /// Whether a step of these boxes and parts is checked as this one was.
    fn repeats(&self, moving: &[WireBox], parts: &EngineParts) -> bool {
        self.moving == moving
            && self.fat_boxes == parts.fat_boxes
            && self.pairs == parts.pairs
            && self.tree == parts.tree
            && self.margin == parts.timing(TIMING_MARGIN).map(f64::to_bits)
    }
}

impl EngineRecord {
    /// A record that keeps at most `budget` fat boxes, pairs and tree nodes (0: only the
    /// summary).
    #[must_use]
    pub fn new(budget: u64) -> Self {
        EngineRecord {
            budget,
            ..EngineRecord::default()
        }
    }

    /// A record that keeps at most `budget` fat boxes, pairs and tree nodes, whose pair check
    /// does at most `pair_work`.
    #[must_use]
    pub fn with_pair_work(budget: u64, pair_work: PairWork) -> Self {
        EngineRecord {
            budget,
            pair_work,
            ..EngineRecord::default()
        }
    }

    /// The parts kept of trace step `index`, when that step carried some and they were kept.
    #[must_use]
    pub fn step_at(&self, index: u64) -> Option<&EngineStep> {
        let k = self.steps.binary_search_by_key(&index, |s| s.index).ok()?;
        self.steps.get(k)
    }

    /// Takes one step's parts (`moving` and `statics` sorted by id).
    pub fn take(
        &mut self,
        index: u64,
        engine_step: u64,
        mut parts: EngineParts,
        moving: &[WireBox],
        statics: &[WireBox],
        dims: u8,
    ) {
        if parts.is_empty() {
            return;
        }
        let left = self.pair_work.per_stream.saturating_sub(self.check_work);
        let mut tree_unchecked = false;
        let check = match &self.last {
            // The same boxes and parts as the step before (the static boxes never change):
            // the same result, no work spent.
            Some(last) if last.repeats(moving, &parts) => {
                let mut check = last.check.clone();
                if let Some(Ok(Ok(pairs))) = &mut check.pairs {
                    pairs.tests = 0;
                }
                check
            }
            // The stream's work is spent: nothing of the step is looked at.
            _ if left == 0 => {
                tree_unchecked = parts.tree.is_some();
                StepCheck {
                    pairs: parts.pairs.as_ref().map(|_| Ok(Err(TooMuchWork::Stream))),
                    tree: None,
                }
            }
            _ => {
                // What the step costs besides its pair tests: its boxes sorted, its fat
                // boxes counted along each axis, its tree's nodes walked.
                let read = (moving.len() + statics.len()) as u64
                    + parts
                        .fat_boxes
                        .as_ref()
                        .map_or(0, |f| f.len() as u64 * axes(dims) as u64)
                    + parts.tree.as_ref().map_or(0, |t| t.nodes.len() as u64);
                self.check_work = self.check_work.saturating_add(read);
                let check = check_step(
                    &parts,
                    moving,
                    statics,
                    dims,
                    self.pair_work.per_step.min(left.saturating_sub(read)),
                );
                if let Some(Ok(Ok(pairs))) = &check.pairs {
                    self.check_work = self.check_work.saturating_add(pairs.tests);
                }
                self.last = Some(LastCheck {
                    moving: moving.to_vec(),
                    fat_boxes: parts.fat_boxes.clone(),
                    pairs: parts.pairs.clone(),
                    tree: parts.tree.clone(),
                    margin: parts.timing(TIMING_MARGIN).map(f64::to_bits),
                    check: check.clone(),
                });
                check
            }
        };
        let s = &mut self.summary;
        s.steps_with_parts += 1;
        if let Some(m) = parts.timing(TIMING_MARGIN) {
            s.margin = Some(m as f32);
        }
        s.cost_fit.take(&parts);
        for t in parts.timings.iter().flatten() {
            if let Some(stat) = s.timings.get_mut(&t.key) {
                stat.steps += 1;
                stat.sum += t.value;
                stat.min = stat.min.min(t.value);
                stat.max = stat.max.max(t.value);
            } else if s.timings.len() < aabb_recorder::wire::MAX_TIMINGS {
                s.timings.insert(
                    t.key.clone(),
                    TimingStat {
                        steps: 1,
                        sum: t.value,
                        min: t.value,
                        max: t.value,
                    },
                );
            }
        }
        match check.pairs {
            Some(Ok(Ok(pairs))) => {
                s.pair_steps += 1;
                s.counts.add(&pairs.counts);
                if s.step_counts.len() < MAX_HEALTH_SAMPLES {
                    s.step_counts.push(StepPairCounts {
                        engine_step,
                        index,
                        counts: pairs.counts,
                        missed: pairs.missed_total,
                    });
                }
                s.missed_total += pairs.missed_total;
                s.apart_total += pairs.apart_total;
                for (list, found) in [(&mut s.missed, pairs.missed), (&mut s.apart, pairs.apart)] {
                    let room = MAX_LISTED.saturating_sub(list.len());
                    list.extend(found.into_iter().take(room).map(|pair| StepPair {
                        engine_step,
                        index,
                        pair,
                    }));
                }
            }
            Some(Ok(Err(TooMuchWork::Step { tests, limit })))
                if limit >= self.pair_work.per_step =>
            {
                s.pair_steps_unchecked += 1;
                if s.unchecked_reason.is_none() {
                    s.unchecked_reason = Some(format!(
                        "too many overlapping fat boxes to check at step {engine_step} (more \
                         than {limit} pairs: {tests} overlap along the axis with fewest)"
                    ));
                }
            }
            Some(Ok(Err(_))) => {
                // The stream's work, not the step's, ran out: no later step is checked.
                s.pair_steps_unchecked += 1;
                if s.pairs_stopped.is_none() {
                    s.pairs_stopped = Some(format!(
                        "stopped checking pairs and trees at step {engine_step}: the check has \
                         done {} units of work over the stream (a pair tested, a box or tree \
                         node read), the most it may ({})",
                        self.check_work, self.pair_work.per_stream
                    ));
                }
                if s.unchecked_reason.is_none() {
                    s.unchecked_reason.clone_from(&s.pairs_stopped);
                }
            }
            Some(Err(why)) => {
                s.pair_steps_unchecked += 1;
                if s.unchecked_reason.is_none() {
                    s.unchecked_reason = Some(format!("step {engine_step}: {why}"));
                }
            }
            None => {}
        }
        if tree_unchecked {
            s.trees_unchecked += 1;
        }
        match check.tree {
            Some(Ok(health)) => {
                s.trees_valid += 1;
                if s.health.len() < MAX_HEALTH_SAMPLES {
                    s.health.push(TreeSample {
                        engine_step,
                        index,
                        health,
                    });
                }
            }
            Some(Err(fault)) => {
                s.trees_refused += 1;
                if s.refused_trees.len() < MAX_LISTED {
                    s.refused_trees.push(RefusedTree {
                        engine_step,
                        index,
                        fault,
                    });
                }
                parts.tree = None;
            }
            None => {}
        }
        let elements = parts.fat_boxes.as_ref().map_or(0, Vec::len)
            + parts.pairs.as_ref().map_or(0, Vec::len)
            + parts.tree.as_ref().map_or(0, |t| t.nodes.len());
        let elements = elements as u64;
        if self.not_kept_from.is_none() && self.kept_elements + elements <= self.budget {
            self.kept_elements += elements;
            if let Some(fat) = &mut parts.fat_boxes {
                fat.sort_unstable_by_key(|b| b.id);
            }
            self.steps.push(EngineStep {
                index,
                engine_step,
                fat_boxes: parts.fat_boxes,
                pairs: parts.pairs,
                tree: parts.tree,
                timings: parts.timings,
            });
        } else if self.not_kept_from.is_none() && self.budget > 0 {
            self.not_kept_from = Some(engine_step);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aabb_recorder::wire::TreeNode;

    fn bx(id: u32, x0: f32, x1: f32) -> WireBox {
        WireBox {
            id,
            min: [x0, 0.0, 0.0],
            max: [x1, 1.0, 0.0],
        }
    }

    fn node(id: u32, parent: Option<u32>, kind: NodeKind, x0: f32, x1: f32, h: u32) -> TreeNode {
        TreeNode {
            id,
            parent,
            kind,
            min: [x0, 0.0, 0.0],
            max: [x1, 1.0, 0.0],
            height: h,
            enlarged: false,
        }
    }

    fn checked(result: Result<Result<PairCheck, TooMuchWork>, String>) -> PairCheck {
        result.expect("checked").expect("within the work")
    }

    /// Boxes 1 (x 0..1), 2 (x 2..3), 3 (x 4..5).
    fn proxies() -> Vec<WireBox> {
        vec![bx(1, 0.0, 1.0), bx(2, 2.0, 3.0), bx(3, 4.0, 5.0)]
    }

    /// Root 100 over branch 101 (leaves 1, 2) and leaf 3.
    fn good_tree() -> EngineTree {
        EngineTree {
            root: Some(100),
            partial: false,
            nodes: vec![
                node(100, None, NodeKind::Branch([101, 13]), 0.0, 5.0, 2),
                node(101, Some(100), NodeKind::Branch([11, 12]), 0.0, 3.0, 1),
                node(11, Some(101), NodeKind::Leaf(1), 0.0, 1.0, 0),
                node(12, Some(101), NodeKind::Leaf(2), 2.0, 3.0, 0),
                node(13, Some(100), NodeKind::Leaf(3), 4.0, 5.0, 0),
            ],
        }
    }

    fn fault_of(tree: &EngineTree) -> String {
        match validate_tree(tree, &proxies(), 2) {
            Ok(shape) => format!("valid: {shape:?}"),
            Err(f) => f.to_string(),
        }
    }

    #[test]
    fn a_good_tree_validates_and_is_measured() {
        let tree = good_tree();
        let shape = validate_tree(&tree, &proxies(), 2).expect("valid");
        assert_eq!(
            shape,
            TreeShape {
                leaves: 3,
                nodes: 5,
                height: 2
            }
        );
        let health = tree_health(&tree, &shape, 2);
        // Root 5 x 1 (half perimeter 6); branch 101 is 3 x 1 (4): 4 / 6.
        assert_eq!(health.cost, 4.0 / 6.0);
        assert_eq!(health.min_height, 2);
        assert_eq!(health.height, 2);
        // The fresh build pairs 1 and 2 (the cheapest split) as the engine did.
        assert_eq!(health.fresh_cost, Some(4.0 / 6.0));
    }

    #[test]
    fn each_kind_of_broken_tree_is_refused_naming_the_node() {
        type Edit = fn(&mut EngineTree);
        let cases: Vec<(Edit, &str)> = vec![
            (
                |t| t.nodes[2].parent = Some(100),
                "node 11: its parent is 100, but node 101 has it as a child",
            ),
            (
                |t| t.nodes[0].parent = Some(101),
                "node 100: the root has a parent (101)",
            ),
            (
                // A cycle: 101's second child is the root.
                |t| t.nodes[1].kind = NodeKind::Branch([11, 100]),
                "node 100: reached twice from the root (again as a child of node 101: a \
                 cycle, or two parents)",
            ),
            (
                // Leaf 12 unreachable: 101 lists 11 twice.
                |t| t.nodes[1].kind = NodeKind::Branch([11, 11]),
                "node 101: both children are node 11",
            ),
            (
                // Leaf 12 under the root too: its parent says 101.
                |t| t.nodes[0].kind = NodeKind::Branch([101, 12]),
                "node 12: its parent is 101, but node 100 has it as a child",
            ),
            (
                |t| t.nodes[0].kind = NodeKind::Branch([101, 77]),
                "node 100: its child 77 is not a node of the tree",
            ),
            (
                |t| t.nodes[1].max[0] = 5.5,
                "node 100: its box does not contain its child 101's",
            ),
            (
                |t| t.nodes[1].max[0] = 2.5,
                "node 101: its box does not contain its child 12's",
            ),
            (
                |t| t.nodes[4].max[0] = 4.5,
                "node 13: its box does not contain the box of id 3",
            ),
            (
                |t| t.nodes[0].height = 3,
                "node 100: height 3, but 1 + its higher child's is 2",
            ),
            (
                |t| t.nodes[4].height = 1,
                "node 13: a leaf of height 1 (a leaf's is 0)",
            ),
            (
                |t| {
                    t.nodes[4].kind = NodeKind::Leaf(1);
                    t.nodes[4].min[0] = 0.0;
                },
                "node 11: a leaf of id 1, which leaf 13 holds too",
            ),
            (
                |t| t.nodes[4].kind = NodeKind::Leaf(9),
                "node 13: a leaf of id 9, which is not a box of the step",
            ),
            (
                |t| {
                    t.nodes
                        .push(node(200, None, NodeKind::Leaf(3), 4.0, 5.0, 0))
                },
                "node 200: not reachable from the root 100",
            ),
            (|t| t.nodes[3].id = 11, "node 11: twice in the tree"),
            (|t| t.root = Some(5), "the root 5 is not a node of the tree"),
            (
                |t| t.root = None,
                "no root, but 5 nodes (an empty tree has none)",
            ),
            (
                // Box 3 in no leaf, and the tree not marked partial.
                |t| {
                    t.nodes = vec![
                        node(100, None, NodeKind::Branch([11, 12]), 0.0, 3.0, 1),
                        node(11, Some(100), NodeKind::Leaf(1), 0.0, 1.0, 0),
                        node(12, Some(100), NodeKind::Leaf(2), 2.0, 3.0, 0),
                    ];
                },
                "id 3, a box of the step, is in no leaf (and the tree is not marked partial)",
            ),
        ];
        for (edit, message) in cases {
            let mut tree = good_tree();
            edit(&mut tree);
            assert_eq!(fault_of(&tree), message);
        }
    }

    #[test]
    fn a_partial_tree_may_leave_boxes_out() {
        let mut tree = good_tree();
        tree.nodes = vec![
            node(100, None, NodeKind::Branch([11, 12]), 0.0, 3.0, 1),
            node(11, Some(100), NodeKind::Leaf(1), 0.0, 1.0, 0),
            node(12, Some(100), NodeKind::Leaf(2), 2.0, 3.0, 0),
        ];
        tree.partial = true;
        assert_eq!(
            fault_of(&tree),
            "valid: TreeShape { leaves: 2, nodes: 3, height: 1 }"
        );
        let empty = EngineTree {
            root: None,
            partial: false,
            nodes: Vec::new(),
        };
        assert_eq!(
            fault_of(&empty),
            "an empty tree, but the step has 3 boxes (and the tree is not marked partial)"
        );
    }

    #[test]
    fn pairs_are_classified_by_hand() {
        // Tight boxes on a line, y 0..1. Margin 0.5: box 1's fat box 0..1 grown to -0.5..1.5;
        // box 4 moves right fast: its fat box reaches from 9.5 to 13.
        let tight = vec![
            bx(1, 0.0, 1.0),
            bx(2, 0.8, 2.0), // overlaps 1: contact
            bx(3, 2.9, 4.0), // 2..3 apart by 0.9 < 2 * 0.5: margin
            bx(4, 10.0, 11.0),
            bx(5, 12.5, 13.0), // 4's look-ahead reaches it, margins do not (11.5 < 12)
            bx(6, 20.0, 21.0), // reported with 1: fat boxes apart
        ];
        let fat: Vec<WireBox> = tight
            .iter()
            .map(|b| {
                let mut f = *b;
                f.min = [b.min[0] - 0.5, -0.5, 0.0];
                f.max = [b.max[0] + 0.5, 1.5, 0.0];
                if b.id == 4 {
                    f.max[0] = 13.0;
                }
                f
            })
            .collect();
        let pairs = vec![[1, 2], [1, 6], [2, 3], [4, 5]];
        let check = checked(check_pairs(
            &tight,
            &[],
            &fat,
            &pairs,
            Some(0.5),
            2,
            u64::MAX,
        ));
        assert_eq!(
            check.counts,
            PairCounts {
                contact: 1,
                margin: 1,
                look_ahead: 1,
                fat_only: 0,
                fat_apart: 1,
            }
        );
        assert_eq!(check.apart, vec![[1, 6]]);
        // 1's fat box (-0.5..1.5) meets 3's (2.4..4.5)? No; 1 and 3 are not missed. None is.
        assert_eq!(check.missed, Vec::<[u32; 2]>::new());
        // Without a declared margin, margin and look-ahead are one class.
        let check = checked(check_pairs(&tight, &[], &fat, &pairs, None, 2, u64::MAX));
        assert_eq!(
            check.counts,
            PairCounts {
                contact: 1,
                margin: 0,
                look_ahead: 0,
                fat_only: 2,
                fat_apart: 1,
            }
        );
        assert_eq!(check.counts.false_positives(), 3);
        // Drop (2, 3): it is missed, and only it.
        let check = checked(check_pairs(
            &tight,
            &[],
            &fat,
            &[[1, 2], [4, 5]],
            Some(0.5),
            2,
            u64::MAX,
        ));
        assert_eq!(check.missed, vec![[2, 3]]);

        // A step's pairs one by one (what the window colours), the step's margin first.
        let mut step = EngineStep {
            fat_boxes: Some(fat.clone()),
            pairs: Some(pairs.clone()),
            ..EngineStep::default()
        };
        let want = vec![
            ([1, 2], PairClass::Contact),
            ([1, 6], PairClass::FatApart),
            ([2, 3], PairClass::Margin),
            ([4, 5], PairClass::LookAhead),
        ];
        assert_eq!(classify_step(&step, &tight, Some(0.5), 2), want);
        step.timings = Some(vec![Timing {
            key: TIMING_MARGIN.to_owned(),
            value: 0.5,
        }]);
        assert_eq!(classify_step(&step, &tight, None, 2), want);
        step.timings = None;
        assert_eq!(
            classify_step(&step, &tight, None, 2)[2..],
            [([2, 3], PairClass::FatOnly), ([4, 5], PairClass::FatOnly)]
        );
        // No pairs sent, or a pair naming a box the step lacks: nothing, or that one left out.
        step.pairs = None;
        assert!(classify_step(&step, &tight, Some(0.5), 2).is_empty());
        step.pairs = Some(vec![[1, 2], [1, 99]]);
        assert_eq!(
            classify_step(&step, &tight, Some(0.5), 2),
            [([1, 2], PairClass::Contact)]
        );
    }

    #[test]
    fn two_static_boxes_are_never_missed_and_every_box_needs_a_fat_box() {
        let tight = vec![bx(1, 0.0, 1.0), bx(2, 0.5, 2.0)];
        let check = checked(check_pairs(&tight, &[1, 2], &tight, &[], None, 2, u64::MAX));
        assert_eq!(check.missed, Vec::<[u32; 2]>::new());
        let check = checked(check_pairs(&tight, &[1], &tight, &[], None, 2, u64::MAX));
        assert_eq!(check.missed, vec![[1, 2]]);
        assert_eq!(
            check_pairs(&tight, &[], &tight[..1], &[], None, 2, u64::MAX),
            Err("fat boxes for 1 of the step's 2 boxes (the pair check needs them all)".to_owned())
        );
    }

    /// The pairs a sweep along `axis` tests, by the sweep itself.
    fn swept(fat: &[WireBox], axis: usize) -> u64 {
        let mut order: Vec<&WireBox> = fat.iter().collect();
        order.sort_by(|a, b| a.min[axis].total_cmp(&b.min[axis]).then(a.id.cmp(&b.id)));
        let mut n = 0;
        for (k, a) in order.iter().enumerate() {
            n += order[k + 1..]
                .iter()
                .take_while(|b| b.min[axis] <= a.max[axis])
                .count() as u64;
        }
        n
    }

    proptest::proptest! {
        /// The count of a sweep's tests made before it is the sweep's own, ties included.
        #[test]
        fn the_sweeps_tests_are_counted_before_it(
            spans in proptest::collection::vec((0u8..6, 0u8..4), 0..40),
        ) {
            let fat: Vec<WireBox> = spans
                .iter()
                .enumerate()
                .map(|(k, &(x0, w))| bx(k as u32, f32::from(x0), f32::from(x0 + w)))
                .collect();
            proptest::prop_assert_eq!(sweep_tests(&fat, 0), swept(&fat, 0));
        }

        /// Whatever the boxes, fat boxes and pairs, the check keeps at most MAX_LISTED
        /// missed and apart pairs, tests at most what it may, and counts what it lists.
        #[test]
        fn the_checks_memory_and_work_are_bounded(
            spans in proptest::collection::vec((0u8..4, 0u8..3, 0u8..4, 0u8..3), 1..60),
            reported in proptest::collection::vec((0u32..60, 0u32..60), 0..40),
            max_tests in 0u64..600,
        ) {
            let fat: Vec<WireBox> = spans
                .iter()
                .enumerate()
                .map(|(k, &(x0, w, y0, h))| WireBox {
                    id: k as u32,
                    min: [f32::from(x0), f32::from(y0), 0.0],
                    max: [f32::from(x0 + w), f32::from(y0 + h), 0.0],
                })
                .collect();
            let n = fat.len() as u32;
            let mut pairs: Vec<[u32; 2]> = reported
                .iter()
                .map(|&(a, b)| [a % n, b % n])
                .filter(|p| p[0] < p[1])
                .collect();
            pairs.sort_unstable();
            pairs.dedup();
            let brute = |listed: bool| {
                let mut missed = Vec::new();
                for a in &fat {
                    for b in fat.iter().filter(|b| b.id > a.id) {
                        if overlaps((&a.min, &a.max), (&b.min, &b.max), 2)
                            && (!listed || pairs.binary_search(&[a.id, b.id]).is_err())
                        {
                            missed.push([a.id, b.id]);
                        }
                    }
                }
                missed
            };
            let want = brute(true);
            match check_pairs(&fat, &[], &fat, &pairs, None, 2, max_tests) {
                Ok(Ok(check)) => {
                    proptest::prop_assert!(check.tests <= max_tests);
                    proptest::prop_assert!(check.tests >= brute(false).len() as u64);
                    proptest::prop_assert_eq!(check.missed_total, want.len() as u64);
                    let listed: Vec<[u32; 2]> = want.iter().take(MAX_LISTED).copied().collect();
                    proptest::prop_assert_eq!(check.missed, listed);
                    let apart = pairs
                        .iter()
                        .filter(|[a, b]| {
                            let (a, b) = (&fat[*a as usize], &fat[*b as usize]);
                            !overlaps((&a.min, &a.max), (&b.min, &b.max), 2)
                        })
                        .count() as u64;
                    proptest::prop_assert_eq!(check.apart_total, apart);
                    proptest::prop_assert_eq!(check.apart.len() as u64, apart);
                }
                Ok(Err(TooMuchWork::Step { tests, limit })) => {
                    proptest::prop_assert_eq!(limit, max_tests);
                    proptest::prop_assert!(tests > max_tests);
                    let least = sweep_tests(&fat, 0).min(sweep_tests(&fat, 1));
                    proptest::prop_assert_eq!(tests, least);
                }
                Ok(Err(TooMuchWork::Stream)) => proptest::prop_assert!(false, "a step alone"),
                Err(why) => proptest::prop_assert!(false, "{}", why),
            }
        }
    }

    /// Identical fat boxes, none reported: every pair is missed; the pairs are counted, the
    /// least MAX_LISTED kept, and past the step's work the step is not checked at all.
    #[test]
    fn identical_fat_boxes_are_counted_not_listed() {
        let fat: Vec<WireBox> = (0..2000).map(|k| bx(k, 0.0, 1.0)).collect();
        let check = checked(check_pairs(&fat, &[], &fat, &[], None, 2, u64::MAX));
        assert_eq!(check.missed_total, 1_999_000);
        assert_eq!(check.tests, 1_999_000);
        assert_eq!(check.missed.len(), MAX_LISTED);
        assert_eq!(check.missed[0], [0, 1]);
        assert_eq!(check.missed[MAX_LISTED - 1], [0, 1000]);
        assert_eq!(
            check_pairs(&fat, &[], &fat, &[], None, 2, 1_998_999),
            Ok(Err(TooMuchWork::Step {
                tests: 1_999_000,
                limit: 1_998_999
            }))
        );
    }

    /// Boxes in one column along x are swept along y, where none overlap: no test at all.
    #[test]
    fn a_column_is_swept_along_its_length() {
        let fat: Vec<WireBox> = (0..5000)
            .map(|k| WireBox {
                id: k,
                min: [0.0, 2.0 * k as f32, 0.0],
                max: [1.0, 2.0 * k as f32 + 1.0, 0.0],
            })
            .collect();
        let check = checked(check_pairs(&fat, &[], &fat, &[], None, 2, 0));
        assert_eq!((check.tests, check.missed_total), (0, 0));
    }

    /// A stream's steps spend one budget: the steps past it are not checked, and the summary
    /// says where the check stopped and why; a step past the step's limit is named.
    #[test]
    fn the_pair_work_is_bounded_per_step_and_per_stream() {
        let fat: Vec<WireBox> = (0..10).map(|k| bx(k, 0.0, 1.0)).collect();
        let parts = EngineParts {
            fat_boxes: Some(fat.clone()),
            pairs: Some(Vec::new()),
            ..EngineParts::default()
        };
        let mut record = EngineRecord::with_pair_work(
            0,
            PairWork {
                per_step: 45,
                per_stream: 200,
            },
        );
        // Box 0's tight box moves a little each step: each step is checked afresh. A step
        // reads 10 boxes and 10 fat boxes along 2 axes (30), then tests 45 pairs.
        let moved = |step: u64| {
            let mut moving = fat.clone();
            moving[0].min[0] = step as f32 / 16.0;
            moving
        };
        for step in 0..5 {
            let mut parts = parts.clone();
            if step == 4 {
                parts.tree = Some(EngineTree::default());
            }
            record.take(step, step + 10, parts, &moved(step), &[], 2);
        }
        let s = &record.summary;
        assert_eq!((s.pair_steps, s.pair_steps_unchecked), (2, 3));
        assert_eq!((s.missed_total, record.check_work), (90, 210));
        let stopped = "stopped checking pairs and trees at step 12: the check has done 180 units \
                       of work over the stream (a pair tested, a box or tree node read), the most \
                       it may (200)";
        assert_eq!(s.pairs_stopped.as_deref(), Some(stopped));
        assert_eq!(s.unchecked_reason.as_deref(), Some(stopped));
        // Past the stream's work, a tree is not looked at either, and is counted so.
        assert_eq!(
            (s.trees_valid, s.trees_refused, s.trees_unchecked),
            (0, 0, 1)
        );
        let mut record = EngineRecord::with_pair_work(
            0,
            PairWork {
                per_step: 44,
                per_stream: 100,
            },
        );
        record.take(0, 7, parts, &fat, &[], 2);
        let s = &record.summary;
        assert_eq!((s.pair_steps, s.pair_steps_unchecked), (0, 1));
        assert_eq!(s.pairs_stopped, None);
        assert_eq!(
            s.unchecked_reason.as_deref(),
            Some(
                "too many overlapping fat boxes to check at step 7 (more than 44 pairs: 45 \
                 overlap along the axis with fewest)"
            )
        );
    }

    /// A step that repeats the boxes and parts of the step before (a settled pile) gives its
    /// result again without spending the stream's work; a change in either checks afresh.
    #[test]
    fn a_repeated_step_is_not_checked_again() {
        let fat: Vec<WireBox> = (0..10).map(|k| bx(k, 0.0, 1.0)).collect();
        let parts = EngineParts {
            fat_boxes: Some(fat.clone()),
            pairs: Some(Vec::new()),
            ..EngineParts::default()
        };
        let mut record = EngineRecord::with_pair_work(
            0,
            PairWork {
                per_step: 45,
                per_stream: 1000,
            },
        );
        for step in 0..5 {
            record.take(step, step, parts.clone(), &fat, &[], 2);
        }
        // 10 boxes and 10 fat boxes along 2 axes read, 45 pairs tested, once.
        assert_eq!(record.check_work, 75);
        let s = &record.summary;
        assert_eq!((s.pair_steps, s.pair_steps_unchecked), (5, 0));
        assert_eq!(s.missed_total, 5 * 45);
        let mut fewer = parts.clone();
        fewer.pairs = Some(vec![[0, 1]]);
        record.take(5, 5, fewer, &fat, &[], 2);
        assert_eq!(record.check_work, 150);
        assert_eq!(record.summary.missed_total, 5 * 45 + 44);
    }

    #[test]
    fn the_engines_costs_are_fitted_from_its_timings() {
        use aabb_recorder::wire::{
            TIMING_BROAD_PHASE_NS, TIMING_NARROW_PHASE_NS, TIMING_PAIRS_TESTED, TIMING_REINSERTS,
        };
        let timing = |key: &str, value: f64| Timing {
            key: key.to_owned(),
            value,
        };
        let mut fit = CostFit::default();
        for k in 0..MIN_FIT_SAMPLES - 1 {
            let pairs = 100.0 + 10.0 * k as f64;
            fit.take(&EngineParts {
                timings: Some(vec![
                    timing(TIMING_NARROW_PHASE_NS, 40.0 * pairs),
                    timing(TIMING_PAIRS_TESTED, pairs),
                ]),
                ..EngineParts::default()
            });
        }
        assert_eq!(fit.costs(), None, "too few steps");
        for k in 0..20u32 {
            let (pairs, reinserts) = (200.0 + f64::from(k), f64::from(k % 5) * 10.0);
            fit.take(&EngineParts {
                timings: Some(vec![
                    timing(TIMING_NARROW_PHASE_NS, 40.0 * pairs),
                    timing(TIMING_PAIRS_TESTED, pairs),
                    timing(TIMING_BROAD_PHASE_NS, 5_000.0 + 120.0 * reinserts),
                    timing(TIMING_REINSERTS, reinserts),
                ]),
                ..EngineParts::default()
            });
        }
        // A step without its count is not a sample.
        fit.take(&EngineParts {
            timings: Some(vec![timing(TIMING_NARROW_PHASE_NS, 1e9)]),
            ..EngineParts::default()
        });
        let c = fit.costs().expect("fitted");
        assert!((c.ns_per_pair_test - 40.0).abs() < 1e-9, "{c:?}");
        assert_eq!(c.pair_steps, MIN_FIT_SAMPLES - 1 + 20);
        let r = c.ns_per_reinsert.expect("the reinserts varied");
        assert!((r - 120.0).abs() < 1e-6, "{c:?}");
        assert_eq!(c.reinsert_steps, 20);
        // Reinserts that never vary tell nothing of their cost.
        let mut flat = CostFit::default();
        for _ in 0..10 {
            flat.take(&EngineParts {
                timings: Some(vec![
                    timing(TIMING_NARROW_PHASE_NS, 400.0),
                    timing(TIMING_PAIRS_TESTED, 10.0),
                    timing(TIMING_BROAD_PHASE_NS, 900.0),
                    timing(TIMING_REINSERTS, 3.0),
                ]),
                ..EngineParts::default()
            });
        }
        let c = flat.costs().expect("fitted");
        assert_eq!((c.ns_per_pair_test, c.ns_per_reinsert), (40.0, None));
    }

    /// Box2D's tree (the `box2d` broad phase) read node by node in this tree shape
    /// ([`crate::broadphase::Broadphase::foreign_tree`], what the window draws and measures),
    /// step after step as bodies creep, jump, come and go: valid against the bodies' tight
    /// boxes, one leaf each, measured with Box2D's own height and area ratio.
    #[test]
    fn box2ds_tree_read_as_an_engine_tree_is_valid_and_measures_as_box2ds() {
        use crate::broadphase::{Body, Box2dBroadphase, Broadphase, BroadphaseCore, UpdateOutcome};
        use rand::{RngExt, SeedableRng};
        use rand_pcg::Pcg64;

        // Bodies with ids `0..150` at random places in `[0, 20]²`, about `keep`% of them.
        let bodies = |rng: &mut Pcg64, keep: u64| -> Vec<Body<Vec2>> {
            let mut out = Vec::new();
            for id in 0..150 {
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
        };
        let config = TreeConfig {
            margin: 0.3,
            velocity_lookahead: 0.1,
            ..TreeConfig::default()
        };
        let mut b2 = Box2dBroadphase::new(config);
        let mut rng = Pcg64::seed_from_u64(36);
        let mut now = bodies(&mut rng, 90);
        let mut out = UpdateOutcome::default();
        for step in 0..30usize {
            if step % 10 == 5 {
                now = bodies(&mut rng, 80);
            } else {
                for (k, b) in now.iter_mut().enumerate() {
                    let shift = if (k + step) % 4 == 0 {
                        Vec2::new(rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0))
                    } else {
                        Vec2::splat(0.02)
                    };
                    b.tight = Aabb::new(b.tight.min + shift, b.tight.max + shift);
                }
            }
            b2.update_bodies(&now, &mut out).expect("usable");
            let tree = b2.tree();
            let foreign = Broadphase::foreign_tree(&b2).expect("Box2D's tree, read");
            assert_eq!(foreign.nodes.len() as u32, tree.node_count(), "step {step}");
            let proxies: Vec<WireBox> = now
                .iter()
                .map(|b| WireBox {
                    id: b.id,
                    min: [b.tight.min.x, b.tight.min.y, 0.0],
                    max: [b.tight.max.x, b.tight.max.y, 0.0],
                })
                .collect();
            let read = validate_tree(&foreign, &proxies, 2).expect("Box2D's tree holds the bodies");
            assert_eq!(read.leaves, now.len(), "step {step}");
            let health = tree_health(&foreign, &read, 2);
            assert_eq!(health.height, tree.height(), "step {step}");
            let ratio = f64::from(tree.area_ratio());
            assert!(
                (health.cost - ratio).abs() <= 1e-5 * ratio.max(1.0),
                "step {step}: cost {} against Box2D's area ratio {ratio}",
                health.cost
            );
        }
    }
}
