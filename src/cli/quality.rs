//! The `quality` subcommand: builds the tree over a fixed set of boxes with every insertion
//! cost x balancing, with each insertion cost (no balancing, and rotations) followed by the
//! incremental optimization until converged, with a full rebuild and with one batch creation
//! (each by binned SAH, by agglomerative clustering and by exact greedy clustering), with each
//! optimized and each rebuilt tree followed by the thorough optimization (`+thorough`), and
//! prints each tree's height, SAH cost and build time (a table, or one JSON object with
//! `--json`).
//!
//! The boxes come from a box list (one box a line: `minx miny maxx maxy` in 2D or `minx miny
//! minz maxx maxy maxz` in 3D; `#` starts a comment; blank lines are skipped) or from a scene
//! file (`.ron` or `.json`: its static boxes in file order, then the tight boxes of its
//! spheres that exist at step 0, in id order). The trees take the boxes as they are (margin 0, no look-ahead), in file order.
//!
//! Every method may make at most [`work_budget`] node visits: on a set where a method
//! degenerates (boxes all alike make the volume and perimeter descents a list that every
//! insertion walks, `O(n^2)`, and an optimization of a list walks it for every node) it is
//! left out of `methods` and listed in `skipped` with the reason, so that `quality` ends on
//! any set, and the same ones are left out on every machine.
//!
//! The cost is [`DynamicTree::sah_cost`]: the SAH measure of every branch but the root, summed,
//! over the root's; the measure is half the perimeter in 2D and half the surface area in 3D
//! (the tree's [`crate::tree::Vector::half_area`]). Leaves are not counted. The height counts
//! a leaf as 0.

use crate::scene::Scene;
use crate::scene::boxlist::read_box_list;
pub use crate::scene::boxlist::{BoxSet, MAX_BOX_LIST_BYTES, parse_box_list};
use crate::text::escape_controls;
use crate::tree::{
    Aabb, Balancing, DynamicTree, InsertionCost, RebuildMethod, TreeConfig, TreeError, Vector,
};
use glam::{Vec2, Vec3};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `quality`.
#[derive(Debug, clap::Args)]
pub struct QualityArgs {
    /// A box list (one box a line) or a scene file (`.ron` or `.json`).
    pub file: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Past this many boxes the optimization methods (`+optimize`, `+thorough`: minutes on
    /// 200,000 boxes) are skipped, and said so.
    #[arg(long, default_value_t = DEFAULT_OPTIMIZE_LIMIT)]
    pub optimize_limit: usize,
    /// Seconds the whole measure may take: the methods not started by then are skipped, and
    /// said so (a method under way is finished).
    #[arg(long, default_value_t = DEFAULT_TIME_BUDGET_SECS)]
    pub time_budget: u64,
    /// When stderr is not a terminal (a log, a pipe: no progress bar), a progress line is
    /// written at most this often, seconds (0: after every method).
    #[arg(long, default_value_t = 5)]
    pub progress_every: u64,
}

/// `--optimize-limit`'s default: 50,000 boxes (their optimizations take seconds).
pub const DEFAULT_OPTIMIZE_LIMIT: usize = 50_000;

/// `--time-budget`'s default: 120 seconds.
pub const DEFAULT_TIME_BUDGET_SECS: u64 = 120;

/// What bounds a measure besides the work budget ([`work_budget`]).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Past this many boxes the optimization methods are skipped.
    pub optimize_limit: usize,
    /// Methods not started by then are skipped (with the budget's seconds, for the reason).
    pub deadline: Option<(Instant, u64)>,
}

impl Limits {
    /// No bound but the work budget.
    pub const NONE: Limits = Limits {
        optimize_limit: usize::MAX,
        deadline: None,
    };

    /// Why a method is not started now: the time budget was spent.
    fn late(&self) -> Option<String> {
        let (deadline, secs) = self.deadline?;
        (Instant::now() >= deadline)
            .then(|| format!("not started: the time budget of {secs} s (--time-budget) was spent"))
    }

    /// Why an optimization over `boxes` boxes is not run: more than the limit.
    fn too_many(&self, boxes: usize) -> Option<String> {
        (boxes > self.optimize_limit).then(|| {
            format!(
                "{boxes} boxes, more than --optimize-limit {}: its optimization passes would \
                 take minutes (raise the limit to run it)",
                self.optimize_limit
            )
        })
    }
}

/// One way of building the tree, measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MethodQuality {
    /// `insertion/balancing` (as `bench`'s `--insertion` and `--balancing` values), the same
    /// with `+optimize`, `rebuild`, `rebuild-agglomerative`, `rebuild-greedy`,
    /// `create-proxies`, `create-proxies-agglomerative` or `create-proxies-greedy`; an
    /// optimized or rebuilt tree's name with `+thorough`.
    pub method: String,
    /// The root's height (a leaf is 0).
    pub height: u32,
    /// [`DynamicTree::sah_cost`].
    pub cost: f64,
    /// Milliseconds the build took (for a rebuild, the rebuild alone; for `+optimize`, the
    /// insertions and the optimization; for `+thorough`, the tree's own time and the thorough
    /// optimization).
    pub build_ms: f64,
}

/// The method of least cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Best {
    /// Its name.
    pub method: String,
    /// Its cost.
    pub cost: f64,
}

/// A method left out because it would pass the work budget ([`work_budget`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkippedMethod {
    /// Its name, as in [`MethodQuality::method`].
    pub method: String,
    /// Why: what passed the budget, and where.
    pub reason: String,
}

/// Node visits a method may make per box ([`work_budget`]).
pub const WORK_PER_BOX: u64 = 4_096;

/// The least work budget, whatever the number of boxes: 2^26 node visits (about a second of
/// insertions, a list of 8,000 boxes walked once for each).
pub const MIN_WORK: u64 = 1 << 26;

/// The node visits a method may make over `boxes` boxes: [`WORK_PER_BOX`] a box, at least
/// [`MIN_WORK`]. The insertions count the nodes their descents visit (the tree's
/// [`crate::tree::WorkCounts::update_node_visits`]), checked after each box; an optimization
/// is not started on a tree whose leaves times height (the nodes it walks when every subtree
/// is moved once: each move walks from its place to the root) pass the budget. Nothing is
/// left out on the real and generated level sets of `docs/quality.md` nor on 200,000 random
/// boxes; on 100,000 boxes all alike 20 methods are (every method ran to the end before, and
/// `quality` did not end in 15 minutes; now in 12 s).
#[must_use]
pub fn work_budget(boxes: usize) -> u64 {
    (boxes as u64).saturating_mul(WORK_PER_BOX).max(MIN_WORK)
}

/// What `quality --json` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QualityReport {
    /// Number of boxes.
    pub boxes: usize,
    /// 2 or 3.
    pub dimensions: u8,
    /// Every method: insertion x balancing, then `+optimize`, then the rebuilds and the batch
    /// creations.
    pub methods: Vec<MethodQuality>,
    /// The method of least cost (among equals the one of least height, then the first
    /// listed).
    pub best: Best,
    /// The methods left out (in the order of the full list), each with why: empty on every
    /// set but degenerate ones.
    pub skipped: Vec<SkippedMethod>,
}

/// Runs `quality`; returns the exit code: 0, or 1 with a message on stderr when the file is
/// refused.
pub fn main(args: &QualityArgs) -> anyhow::Result<i32> {
    let set = match load_boxes(&args.file) {
        Ok(set) => set,
        Err(message) => {
            eprintln!("{message}");
            return Ok(1);
        }
    };
    if let Some(why) = beyond_f32_areas(&set) {
        eprintln!(
            "{}: {why}",
            escape_controls(&args.file.display().to_string())
        );
        return Ok(1);
    }
    let started = Instant::now();
    let limits = Limits {
        optimize_limit: args.optimize_limit,
        deadline: Some((
            started + std::time::Duration::from_secs(args.time_budget),
            args.time_budget,
        )),
    };
    use std::io::IsTerminal as _;
    let terminal = std::io::stderr().is_terminal();
    let total = method_count();
    let (mut done, mut last_line) = (0usize, started);
    let every = std::time::Duration::from_secs(args.progress_every);
    // A bar on stderr (drawn only on a terminal): on a degenerate set some methods take long
    // (a tree of height n makes every reinsertion walk n nodes), and the user sees which.
    let bar = indicatif::ProgressBar::new(method_count() as u64);
    bar.set_style(indicatif::ProgressStyle::with_template(
        "quality {bar:30} {pos}/{len} {msg} ({elapsed})",
    )?);
    // The elapsed time keeps counting while one method takes long.
    bar.enable_steady_tick(std::time::Duration::from_millis(250));
    let report = measure_limited(&set, limits, &mut |method| {
        bar.inc(1);
        bar.set_message(format!("(done: {method})"));
        done += 1;
        // No bar off a terminal (a log, a pipe): a line now and then says how far it is.
        if !terminal && last_line.elapsed() >= every {
            last_line = Instant::now();
            eprintln!(
                "quality: {done} of {total} methods done ({method} last), {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
    });
    bar.finish_and_clear();
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            eprintln!(
                "{}: the tree refused the boxes: {e}",
                escape_controls(&args.file.display().to_string())
            );
            return Ok(1);
        }
    };
    if args.json {
        super::run::print_out(&format!("{}\n", serde_json::to_string(&report)?))?;
    } else {
        super::run::print_out(&table(&report))?;
    }
    Ok(0)
}

/// The report as a table, one method a line, and the best.
#[must_use]
pub fn table(report: &QualityReport) -> String {
    let mut out = format!("{} boxes, {}D\n", report.boxes, report.dimensions);
    let _ = writeln!(
        out,
        "{:<46} {:>6} {:>10} {:>10}",
        "method", "height", "cost", "build ms"
    );
    for m in &report.methods {
        let _ = writeln!(
            out,
            "{:<46} {:>6} {:>10.4} {:>10.3}",
            m.method, m.height, m.cost, m.build_ms
        );
    }
    for m in &report.skipped {
        let _ = writeln!(out, "{:<46} skipped: {}", m.method, m.reason);
    }
    let _ = writeln!(
        out,
        "best: {} (cost {:.4})",
        report.best.method, report.best.cost
    );
    if report.boxes > 2 && report.methods.iter().all(|m| m.cost == 0.0) {
        out.push_str(
            "every tree costs 0: its branches have no area (boxes at one point or along one \
             line), so the best is the lowest tree\n",
        );
    }
    out
}

/// The boxes of a file: a scene when the name ends in `.ron` or `.json` (unless it starts as a
/// box list does), a box list otherwise. The error is the message to print (starting with the
/// file's name).
pub fn load_boxes(path: &Path) -> Result<BoxSet, String> {
    let file = escape_controls(&path.display().to_string());
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if matches!(ext.as_deref(), Some("ron" | "json"))
        && !crate::scene::boxlist::is_box_list_file(path)
    {
        let scene = Scene::load(path).map_err(|e| e.to_string())?;
        return scene_boxes(&scene, &file);
    }
    read_box_list(path, usize::MAX)
}

/// The scene's static boxes in file order, then the tight boxes of the spheres that exist at
/// step 0, in id order (listed and generated).
fn scene_boxes(scene: &Scene, file: &str) -> Result<BoxSet, String> {
    let dims = scene.dimensions;
    let statics = scene.boxes.iter().map(|b| Aabb::new(b.min, b.max));
    let boxes: Vec<Aabb<Vec3>> = statics
        .chain(
            scene
                .all_spheres()
                .iter()
                .filter(|s| s.appear_at == 0 && s.disappear_at != Some(0))
                .map(|s| tight_box(s.center, s.radius, dims)),
        )
        .collect();
    if boxes.is_empty() {
        return Err(format!(
            "{file}: no boxes: the scene has no static boxes and no sphere exists at step 0"
        ));
    }
    Ok(BoxSet {
        dimensions: dims,
        boxes,
    })
}

/// A sphere's tight box, rounded outwards to `f32` as the simulation does (z = 0..0 in 2D).
fn tight_box(center: Vec3, radius: f32, dims: u8) -> Aabb<Vec3> {
    let r = f64::from(radius);
    let mut min = [0.0f32; 3];
    let mut max = [0.0f32; 3];
    for a in 0..usize::from(dims.min(3)) {
        let c = f64::from(center[a]);
        let (lo, hi) = ((c - r) as f32, (c + r) as f32);
        min[a] = if f64::from(lo) > c - r {
            lo.next_down()
        } else {
            lo
        };
        max[a] = if f64::from(hi) < c + r {
            hi.next_up()
        } else {
            hi
        };
    }
    Aabb::new(Vec3::from_array(min), Vec3::from_array(max))
}

/// Builds every tree over the boxes and measures it.
pub fn measure(set: &BoxSet) -> Result<QualityReport, TreeError> {
    measure_with_progress(set, &mut |_| {})
}

/// How many methods [`measure`] builds: every insertion x balancing, insertion and the
/// optimization for each insertion with no balancing and with rotations, a rebuild and a
/// batch creation by each rebuild method, and the thorough optimization of every optimized
/// and rebuilt tree.
#[must_use]
pub fn method_count() -> usize {
    let insertions = InsertionCost::ALL.len();
    let optimized = insertions * 2;
    let rebuilds = RebuildMethod::ALL.len();
    insertions * Balancing::ALL.len() + optimized + 2 * rebuilds + optimized + rebuilds
}

/// [`measure`], calling `progress` with each method's name as it finishes it or leaves it
/// out (in the order of the full list, [`method_count`] calls in all).
pub fn measure_with_progress(
    set: &BoxSet,
    progress: &mut dyn FnMut(&str),
) -> Result<QualityReport, TreeError> {
    measure_within(set, work_budget(set.boxes.len()), Limits::NONE, progress)
}

/// [`measure_with_progress`] within `limits`: the optimizations skipped past
/// [`Limits::optimize_limit`] boxes, the methods not started by the deadline skipped.
pub fn measure_limited(
    set: &BoxSet,
    limits: Limits,
    progress: &mut dyn FnMut(&str),
) -> Result<QualityReport, TreeError> {
    measure_within(set, work_budget(set.boxes.len()), limits, progress)
}

/// Why the boxes are refused: their extent's half area (perimeter or surface) passes f32's
/// range, where the tree's insertion costs and optimizations compare infinities and its
/// costs say nothing (every optimization "raised" the cost); `None` when it is within.
#[must_use]
pub fn beyond_f32_areas(set: &BoxSet) -> Option<String> {
    let first = set.boxes.first()?;
    let (mut lo, mut hi) = (first.min.as_dvec3(), first.max.as_dvec3());
    for b in &set.boxes {
        lo = lo.min(b.min.as_dvec3());
        hi = hi.max(b.max.as_dvec3());
    }
    let e = hi - lo;
    let half_area = if set.dimensions == 2 {
        e.x + e.y
    } else {
        e.x * e.y + e.y * e.z + e.z * e.x
    };
    (half_area > f64::from(f32::MAX)).then(|| {
        format!(
            "the boxes span {} x {}{}: the {} of the box around them is {}, past f32's \
             largest number ({}), so the trees' costs would be infinite; scale the boxes down",
            crate::text::short_number(e.x),
            crate::text::short_number(e.y),
            if set.dimensions == 2 {
                String::new()
            } else {
                format!(" x {}", crate::text::short_number(e.z))
            },
            if set.dimensions == 2 {
                "half perimeter"
            } else {
                "half surface"
            },
            crate::text::short_number(half_area),
            crate::text::short_number(f64::from(f32::MAX)),
        )
    })
}

/// [`measure_with_progress`] under a work budget of `budget` node visits a method.
fn measure_within(
    set: &BoxSet,
    budget: u64,
    limits: Limits,
    progress: &mut dyn FnMut(&str),
) -> Result<QualityReport, TreeError> {
    let (methods, skipped) = if set.dimensions == 2 {
        let boxes: Vec<Aabb<Vec2>> = set
            .boxes
            .iter()
            .map(|b| Aabb::new(b.min.truncate(), b.max.truncate()))
            .collect();
        measure_all(&boxes, budget, limits, progress)?
    } else {
        measure_all(&set.boxes, budget, limits, progress)?
    };
    // Least cost; among equal costs the lower tree (boxes on a line cost 0 in every tree,
    // and a list of them is no answer); among those the first listed.
    let best = methods
        .iter()
        .fold(None::<&MethodQuality>, |best, m| match best {
            Some(b) if (b.cost, b.height) <= (m.cost, m.height) => Some(b),
            _ => Some(m),
        })
        .map_or(
            Best {
                method: String::new(),
                cost: f64::INFINITY,
            },
            |m| Best {
                method: m.method.clone(),
                cost: m.cost,
            },
        );
    Ok(QualityReport {
        boxes: set.boxes.len(),
        dimensions: set.dimensions,
        methods,
        best,
        skipped,
    })
}

/// Passes of [`DynamicTree::optimize_until_converged`] at most in the `+optimize` methods.
pub const OPTIMIZE_PASSES: usize = 100;

/// Rounds of [`DynamicTree::optimize_thorough`] at most in the `+thorough` methods.
pub const THOROUGH_ROUNDS: usize = 100;

/// The name of a rebuild method in method names: `rebuild` and `create-proxies` alone for
/// binned SAH (the default), with `-agglomerative` for PLOC and `-greedy` for the exact greedy
/// build.
fn rebuild_suffix(method: RebuildMethod) -> String {
    if method.is_default() {
        String::new()
    } else {
        format!("-{}", method.name())
    }
}

/// A tree built for a method, with the milliseconds it took; or why the method was left out.
type Built<V> = Result<(DynamicTree<V, u32>, f64), String>;

/// A built method as [`measure_all`] reports it: the tree and its milliseconds, or why not.
fn shown<V: Vector>(built: &Built<V>) -> Result<(&DynamicTree<V, u32>, f64), String> {
    built
        .as_ref()
        .map(|(tree, ms)| (tree, *ms))
        .map_err(Clone::clone)
}

/// Why an optimization of `tree` is not started under `budget`: one move of every subtree
/// walks from its place to the root, about its leaves times its height in all; `None` when
/// that is within the budget.
fn too_deep<V: Vector>(tree: &DynamicTree<V, u32>, budget: u64) -> Option<String> {
    let stats = tree.stats();
    let walk = (stats.leaves as u64).saturating_mul(u64::from(stats.height) + 1);
    (walk > budget).then(|| {
        format!(
            "the tree it starts from has height {} over {} leaves: moving each subtree once \
             walks about {walk} nodes, past the work budget of {budget} node visits",
            stats.height, stats.leaves
        )
    })
}

/// `built` followed by `optimize`, timed with it; left out when the tree is too deep for
/// `budget` ([`too_deep`]).
fn optimized<V: Vector>(
    built: Built<V>,
    budget: u64,
    limits: Limits,
    optimize: impl FnOnce(&mut DynamicTree<V, u32>),
) -> Built<V> {
    let (mut tree, ms) = built?;
    if let Some(reason) = limits.late() {
        return Err(reason);
    }
    if let Some(reason) = too_deep(&tree, budget) {
        return Err(reason);
    }
    let start = Instant::now();
    optimize(&mut tree);
    Ok((tree, ms + start.elapsed().as_secs_f64() * 1e3))
}

/// Every method over one dimension's boxes: insertion x balancing, then each insertion with
/// no balancing and with rotations followed by the optimization until converged (at most
/// [`OPTIMIZE_PASSES`] passes), then for each rebuild method a rebuild of the tree the
/// default settings insert and one batch creation, then each optimized and each rebuilt tree
/// followed by the thorough optimization ([`DynamicTree::optimize_thorough`], at most
/// [`THOROUGH_ROUNDS`] rounds: subtree reinsertion and treelet restructuring, never raising
/// the cost). The methods measured, and those left out by the work budget (`budget` node
/// visits a method: insertions stopped once past it, no optimization of a tree too deep for
/// it, and nothing built on a tree left out).
fn measure_all<V: Vector>(
    boxes: &[Aabb<V>],
    budget: u64,
    limits: Limits,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<MethodQuality>, Vec<SkippedMethod>), TreeError> {
    let config = |insertion, balancing, rebuild| TreeConfig {
        margin: 0.0,
        velocity_lookahead: 0.0,
        insertion,
        balancing,
        rebuild,
        ..TreeConfig::default()
    };
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    // Each method's outcome, in the order of the full list, reported as it comes.
    let mut report = |method: String, built: Result<(&DynamicTree<V, u32>, f64), String>| {
        progress(&method);
        match built {
            Ok((tree, ms)) => out.push(MethodQuality {
                method,
                height: tree.stats().height,
                cost: tree.sah_cost(),
                build_ms: ms,
            }),
            Err(reason) => skipped.push(SkippedMethod { method, reason }),
        }
    };
    let name = |insertion: InsertionCost, balancing: Balancing| {
        format!("{}/{}", insertion.name(), balancing.name())
    };
    // The tree of `config` with the boxes inserted one by one, and the milliseconds it took;
    // or, once the descents have visited more nodes than the budget, why it was stopped.
    let inserted = |config: TreeConfig| -> Result<Built<V>, TreeError> {
        if let Some(reason) = limits.late() {
            return Ok(Err(reason));
        }
        let mut tree = DynamicTree::try_new(config)?;
        let start = Instant::now();
        for (i, b) in boxes.iter().enumerate() {
            tree.create_proxy(*b, V::default(), i as u32)?;
            let visits = tree.work().update_node_visits;
            if visits > budget {
                return Ok(Err(format!(
                    "its insertions visited {visits} nodes by box {} of {} (a tree of \
                     height {}), past the work budget of {budget} node visits",
                    i + 1,
                    boxes.len(),
                    tree.stats().height
                )));
            }
        }
        Ok(Ok((tree, start.elapsed().as_secs_f64() * 1e3)))
    };
    let binned = RebuildMethod::BinnedSah;
    // Why each insertion x balancing was stopped, if it was: its `+optimize` is not tried.
    let mut stopped: Vec<(InsertionCost, Balancing, String)> = Vec::new();
    for insertion in InsertionCost::ALL {
        for balancing in Balancing::ALL {
            let built = inserted(config(insertion, balancing, binned))?;
            if let Err(reason) = &built {
                stopped.push((insertion, balancing, reason.clone()));
            }
            report(name(insertion, balancing), shown(&built));
        }
    }
    let stopped_reason = |insertion, balancing| {
        stopped
            .iter()
            .find(|(i, b, _)| *i == insertion && *b == balancing)
            .map(|(_, _, reason)| reason.clone())
    };
    // Insertion, then the optimization (timed together); each tree is kept for the
    // thorough optimization at the end.
    let mut to_polish: Vec<(String, Built<V>)> = Vec::new();
    for insertion in InsertionCost::ALL {
        for balancing in [Balancing::None, Balancing::Rotations] {
            let method = format!("{}+optimize", name(insertion, balancing));
            let built = match stopped_reason(insertion, balancing)
                .or_else(|| limits.too_many(boxes.len()))
            {
                Some(reason) => Err(reason),
                None => inserted(config(insertion, balancing, binned))?,
            };
            let built = optimized(built, budget, limits, |tree| {
                tree.optimize_until_converged(OPTIMIZE_PASSES);
            });
            report(method.clone(), shown(&built));
            to_polish.push((method, built));
        }
    }
    // The rebuilds: of the tree the default settings insert, timed alone.
    let defaults = TreeConfig::default();
    for rebuild in RebuildMethod::ALL {
        let method = format!("rebuild{}", rebuild_suffix(rebuild));
        let built = match limits.late() {
            Some(reason) => Err(reason),
            None => inserted(config(defaults.insertion, defaults.balancing, rebuild))?
                .map(|(mut tree, _)| {
                    let start = Instant::now();
                    tree.rebuild();
                    (tree, start.elapsed().as_secs_f64() * 1e3)
                })
                .map_err(|reason| format!("the tree it rebuilds was not made: {reason}")),
        };
        report(method.clone(), shown(&built));
        to_polish.push((method, built));
    }
    // One batch into an empty tree.
    let items: Vec<(Aabb<V>, V, u32)> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| (*b, V::default(), i as u32))
        .collect();
    for rebuild in RebuildMethod::ALL {
        let method = format!("create-proxies{}", rebuild_suffix(rebuild));
        if let Some(reason) = limits.late() {
            report(method, Err(reason));
            continue;
        }
        let mut tree =
            DynamicTree::try_new(config(defaults.insertion, defaults.balancing, rebuild))?;
        let start = Instant::now();
        tree.create_proxies(&items)?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        report(method, Ok((&tree, ms)));
    }
    // The thorough optimization of each optimized and rebuilt tree (timed with its build).
    for (method, built) in to_polish {
        let built = built.and_then(|b| match limits.too_many(boxes.len()) {
            Some(reason) => Err(reason),
            None => Ok(b),
        });
        let built = optimized(built, budget, limits, |tree| {
            tree.optimize_thorough(THOROUGH_ROUNDS);
        });
        report(format!("{method}+thorough"), shown(&built));
    }
    Ok((out, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The optimizations are skipped past the box limit, and every method not
    /// started by the deadline is skipped; each says why, and nothing else changes.
    #[test]
    fn the_box_limit_and_the_time_budget_skip_methods_and_say_why() {
        let set = parse_box_list("0 0 1 1\n2 0 3 1\n4 0 5 1\n0 2 1 3\n", "f").expect("valid");
        let limits = Limits {
            optimize_limit: 3,
            deadline: None,
        };
        let mut seen = 0;
        let report = measure_limited(&set, limits, &mut |_| seen += 1).expect("measured");
        assert_eq!(seen, method_count());
        assert_eq!(report.methods.len(), 4 * 3 + 3 + 3);
        assert_eq!(report.skipped.len(), 4 * 2 + 4 * 2 + 3);
        let why = "4 boxes, more than --optimize-limit 3: its optimization passes would take \
                   minutes (raise the limit to run it)";
        for s in &report.skipped {
            assert!(
                s.method.contains("+optimize") || s.method.ends_with("+thorough"),
                "{}",
                s.method
            );
            assert_eq!(s.reason, why, "{}", s.method);
        }
        let spent = Limits {
            optimize_limit: usize::MAX,
            deadline: Some((Instant::now(), 7)),
        };
        let report = measure_limited(&set, spent, &mut |_| {}).expect("measured");
        assert_eq!(report.methods.len(), 0);
        assert_eq!(report.skipped.len(), method_count());
        for s in &report.skipped {
            assert_eq!(
                s.reason, "not started: the time budget of 7 s (--time-budget) was spent",
                "{}",
                s.method
            );
        }
        assert_eq!(report.best.method, "");
    }

    /// Boxes whose extent's area passes f32 are refused (the trees' costs would be
    /// infinite), saying so with short numbers.
    #[test]
    fn boxes_beyond_f32_areas_are_refused_with_short_numbers() {
        let huge =
            parse_box_list("-3e38 -3e38 -2e38 -2e38\n2e38 2e38 3e38 3e38\n", "f").expect("valid");
        assert_eq!(
            beyond_f32_areas(&huge).as_deref(),
            Some(
                "the boxes span 6e38 x 6e38: the half perimeter of the box around them is \
                 1.2e39, past f32's largest number (3.4e38), so the trees' costs would be \
                 infinite; scale the boxes down"
            )
        );
        let fine = parse_box_list("0 0 1e18 1e18\n", "f").expect("valid");
        assert_eq!(beyond_f32_areas(&fine), None);
    }

    #[test]
    fn every_method_is_measured_and_the_best_is_least() {
        let set = parse_box_list("0 0 1 1\n2 0 3 1\n4 0 5 1\n0 2 1 3\n", "f").expect("valid");
        let report = measure(&set).expect("measured");
        assert_eq!(report.methods.len(), 4 * 3 + 4 * 2 + 3 + 3 + 4 * 2 + 3);
        // The thorough optimization never raises the cost of the tree it starts from.
        for m in report
            .methods
            .iter()
            .filter(|m| m.method.ends_with("+thorough"))
        {
            let start = m.method.trim_end_matches("+thorough");
            let from = report.methods.iter().find(|s| s.method == start);
            assert!(from.is_some_and(|s| m.cost <= s.cost), "{}", m.method);
        }
        let least = report
            .methods
            .iter()
            .map(|m| m.cost)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(report.best.cost, least);
        assert!(report.methods.iter().all(|m| m.height >= 2));
    }

    /// The progress calls name every method once, as it finishes, in the report's order.
    #[test]
    fn progress_names_each_method_in_report_order() {
        let set = parse_box_list("0 0 1 1\n2 0 3 1\n4 0 5 1\n", "f").expect("valid");
        let mut seen = Vec::new();
        let report = measure_with_progress(&set, &mut |m| seen.push(m.to_owned())).expect("ok");
        let names: Vec<String> = report.methods.iter().map(|m| m.method.clone()).collect();
        assert_eq!(seen, names);
        assert_eq!(seen.len(), method_count());
        assert_eq!(method_count(), 37);
        assert!(report.skipped.is_empty());
    }

    /// Boxes along one line in 3D: the root has no area, so every tree costs 0. The best is
    /// then the lowest tree (the first listed, `volume/none`, is a list of height 49), and the
    /// table says why every cost is 0.
    #[test]
    fn among_equal_costs_the_best_is_the_lowest_tree() {
        let list: String = (0..50)
            .map(|i| format!("{i} 0 0 {} 0 0\n", i + 1))
            .collect();
        let set = parse_box_list(&list, "f").expect("valid");
        let report = measure(&set).expect("measured");
        assert!(report.methods.iter().all(|m| m.cost == 0.0));
        let first = &report.methods[0];
        assert_eq!((first.method.as_str(), first.height), ("volume/none", 49));
        let least = report.methods.iter().map(|m| m.height).min();
        let best = report
            .methods
            .iter()
            .find(|m| m.method == report.best.method);
        assert_eq!(best.map(|m| m.height), least);
        assert_eq!(least, Some(6));
        // The first listed of the lowest.
        let lowest = report.methods.iter().find(|m| Some(m.height) == least);
        assert_eq!(
            lowest.map(|m| m.method.as_str()),
            Some(report.best.method.as_str())
        );
        assert_eq!(report.best.cost, 0.0);
        assert!(table(&report).ends_with(
            "every tree costs 0: its branches have no area (boxes at one point or along one \
             line), so the best is the lowest tree\n"
        ));
        // Boxes with area: no such line.
        let flat = parse_box_list("0 0 1 1\n2 0 3 1\n4 0 5 1\n", "f").expect("valid");
        let report = measure(&flat).expect("measured");
        assert!(!table(&report).contains("every tree costs 0"));
    }

    /// Boxes all alike: the volume and perimeter descents (with no balancing, and with
    /// rotations, which no rotation improves) make a list that every insertion walks, and
    /// every insertion but the AVL-balanced ones makes a list. Under a small budget the four
    /// descents are stopped, nothing is optimized (every tree it would start from is a list),
    /// and the rest is measured; progress names every method once, in the full order.
    #[test]
    fn a_method_past_the_work_budget_is_left_out_and_said_why() {
        let list = "0 0 1 1\n".repeat(300);
        let set = parse_box_list(&list, "f").expect("valid");
        let full = measure(&set).expect("measured");
        assert!(full.skipped.is_empty(), "{:?}", full.skipped);
        assert_eq!(full.methods.len(), method_count());
        let mut seen = Vec::new();
        let report = measure_within(&set, 20_000, Limits::NONE, &mut |m| seen.push(m.to_owned()))
            .expect("ok");
        let names = |methods: &[MethodQuality]| -> Vec<String> {
            methods.iter().map(|m| m.method.clone()).collect()
        };
        assert_eq!(seen, names(&full.methods), "every method, in order");
        let skipped: Vec<&str> = report.skipped.iter().map(|m| m.method.as_str()).collect();
        let mut want = vec![
            "volume/none",
            "volume/rotations",
            "perimeter/none",
            "perimeter/rotations",
        ];
        let optimized = [
            "volume/none",
            "volume/rotations",
            "perimeter/none",
            "perimeter/rotations",
            "surface-area/none",
            "surface-area/rotations",
            "exact-surface-area/none",
            "exact-surface-area/rotations",
        ];
        let plus = |suffix: &str| -> Vec<String> {
            optimized.iter().map(|m| format!("{m}{suffix}")).collect()
        };
        let with_optimize = plus("+optimize");
        let with_thorough = plus("+optimize+thorough");
        want.extend(with_optimize.iter().map(String::as_str));
        want.extend(with_thorough.iter().map(String::as_str));
        assert_eq!(skipped, want);
        // The measured ones are the full report's trees, exactly, less those left out (the
        // times differ from run to run; the trees do not).
        let shape = |m: &MethodQuality| (m.method.clone(), m.height, m.cost);
        let kept: Vec<(String, u32, f64)> = full
            .methods
            .iter()
            .filter(|m| !want.contains(&m.method.as_str()))
            .map(shape)
            .collect();
        assert_eq!(report.methods.iter().map(shape).collect::<Vec<_>>(), kept);
        assert_eq!(report.methods.len() + report.skipped.len(), method_count());
        // Why: the stopped insertions say where, the optimizations what they would walk.
        let reason = |m: &str| {
            report
                .skipped
                .iter()
                .find(|s| s.method == m)
                .map(|s| s.reason.clone())
                .expect("skipped")
        };
        assert!(
            reason("volume/none").starts_with("its insertions visited ")
                && reason("volume/none").contains(" of 300 (a tree of height ")
                && reason("volume/none").ends_with("past the work budget of 20000 node visits"),
            "{}",
            reason("volume/none")
        );
        assert_eq!(reason("volume/none+optimize"), reason("volume/none"));
        assert_eq!(
            reason("surface-area/none+optimize"),
            "the tree it starts from has height 299 over 300 leaves: moving each subtree once \
             walks about 90000 nodes, past the work budget of 20000 node visits"
        );
        // The best is of the methods measured; a table lists the skipped ones.
        assert!(
            report
                .methods
                .iter()
                .any(|m| m.method == report.best.method)
        );
        let text = table(&report);
        assert!(text.contains("surface-area/none+optimize"), "{text}");
        assert!(
            text.contains("skipped: the tree it starts from has height 299"),
            "{text}"
        );
    }

    #[test]
    fn the_work_budget_grows_with_the_boxes_from_its_least() {
        assert_eq!(work_budget(0), MIN_WORK);
        assert_eq!(work_budget(16_384), MIN_WORK);
        assert_eq!(work_budget(16_385), MIN_WORK + WORK_PER_BOX);
        assert_eq!(work_budget(1_000_000), 4_096_000_000);
        assert_eq!(work_budget(usize::MAX), u64::MAX);
    }
}
