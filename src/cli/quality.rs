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
    /// The method of least cost (the first listed among equals).
    pub best: Best,
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
    // A bar on stderr (drawn only on a terminal): on a degenerate set some methods take long
    // (a tree of height n makes every reinsertion walk n nodes), and the user sees which.
    let bar = indicatif::ProgressBar::new(method_count() as u64);
    bar.set_style(indicatif::ProgressStyle::with_template(
        "quality {bar:30} {pos}/{len} {msg} ({elapsed})",
    )?);
    // The elapsed time keeps counting while one method takes long.
    bar.enable_steady_tick(std::time::Duration::from_millis(250));
    let report = measure_with_progress(&set, &mut |method| {
        bar.inc(1);
        bar.set_message(format!("(done: {method})"));
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
    let _ = writeln!(
        out,
        "best: {} (cost {:.4})",
        report.best.method, report.best.cost
    );
    out
}

/// The boxes of a file: a scene when the name ends in `.ron` or `.json`, a box list otherwise.
/// The error is the message to print (starting with the file's name).
pub fn load_boxes(path: &Path) -> Result<BoxSet, String> {
    let file = escape_controls(&path.display().to_string());
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if matches!(ext.as_deref(), Some("ron" | "json")) {
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

/// [`measure`], calling `progress` with each method's name as it finishes it (in the order of
/// the report, [`method_count`] calls in all).
pub fn measure_with_progress(
    set: &BoxSet,
    progress: &mut dyn FnMut(&str),
) -> Result<QualityReport, TreeError> {
    let methods = if set.dimensions == 2 {
        let boxes: Vec<Aabb<Vec2>> = set
            .boxes
            .iter()
            .map(|b| Aabb::new(b.min.truncate(), b.max.truncate()))
            .collect();
        measure_all(&boxes, progress)?
    } else {
        measure_all(&set.boxes, progress)?
    };
    let mut best = Best {
        method: String::new(),
        cost: f64::INFINITY,
    };
    for m in &methods {
        if m.cost < best.cost {
            best = Best {
                method: m.method.clone(),
                cost: m.cost,
            };
        }
    }
    Ok(QualityReport {
        boxes: set.boxes.len(),
        dimensions: set.dimensions,
        methods,
        best,
    })
}

/// The name of an insertion cost, as `bench --insertion` spells it.
fn insertion_name(cost: InsertionCost) -> &'static str {
    match cost {
        InsertionCost::Volume => "volume",
        InsertionCost::Perimeter => "perimeter",
        InsertionCost::SurfaceArea => "surface-area",
        InsertionCost::ExactSurfaceArea => "exact-surface-area",
    }
}

/// The name of a balancing, as `bench --balancing` spells it.
fn balancing_name(balancing: Balancing) -> &'static str {
    match balancing {
        Balancing::None => "none",
        Balancing::Avl => "avl",
        Balancing::Rotations => "rotations",
    }
}

/// Passes of [`DynamicTree::optimize_until_converged`] at most in the `+optimize` methods.
pub const OPTIMIZE_PASSES: usize = 100;

/// Rounds of [`DynamicTree::optimize_thorough`] at most in the `+thorough` methods.
pub const THOROUGH_ROUNDS: usize = 100;

/// The name of a rebuild method in method names: `rebuild` and `create-proxies` alone for
/// binned SAH, with `-agglomerative` for PLOC and `-greedy` for the exact greedy build.
fn rebuild_suffix(method: RebuildMethod) -> &'static str {
    match method {
        RebuildMethod::BinnedSah => "",
        RebuildMethod::Agglomerative => "-agglomerative",
        RebuildMethod::Greedy => "-greedy",
    }
}

/// Every method over one dimension's boxes: insertion x balancing, then each insertion with
/// no balancing and with rotations followed by the optimization until converged (at most
/// [`OPTIMIZE_PASSES`] passes), then for each rebuild method a rebuild of the tree the
/// default settings insert and one batch creation, then each optimized and each rebuilt tree
/// followed by the thorough optimization ([`DynamicTree::optimize_thorough`], at most
/// [`THOROUGH_ROUNDS`] rounds: subtree reinsertion and treelet restructuring, never raising
/// the cost).
fn measure_all<V: Vector>(
    boxes: &[Aabb<V>],
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<MethodQuality>, TreeError> {
    let config = |insertion, balancing, rebuild| TreeConfig {
        margin: 0.0,
        velocity_lookahead: 0.0,
        insertion,
        balancing,
        rebuild,
        ..TreeConfig::default()
    };
    let mut quality = |method: String, tree: &DynamicTree<V, u32>, ms: f64| {
        progress(&method);
        MethodQuality {
            method,
            height: tree.stats().height,
            cost: tree.sah_cost(),
            build_ms: ms,
        }
    };
    let name = |insertion, balancing| {
        format!(
            "{}/{}",
            insertion_name(insertion),
            balancing_name(balancing)
        )
    };
    // The tree of `config` with the boxes inserted one by one, and the milliseconds it took.
    let inserted = |config: TreeConfig| -> Result<(DynamicTree<V, u32>, f64), TreeError> {
        let mut tree = DynamicTree::try_new(config)?;
        let start = Instant::now();
        for (i, b) in boxes.iter().enumerate() {
            tree.create_proxy(*b, V::default(), i as u32)?;
        }
        Ok((tree, start.elapsed().as_secs_f64() * 1e3))
    };
    let binned = RebuildMethod::BinnedSah;
    let mut out = Vec::new();
    for insertion in InsertionCost::ALL {
        for balancing in Balancing::ALL {
            let (tree, ms) = inserted(config(insertion, balancing, binned))?;
            out.push(quality(name(insertion, balancing), &tree, ms));
        }
    }
    // Insertion, then the optimization (timed together); each tree is kept for the
    // thorough optimization at the end.
    let mut to_polish = Vec::new();
    for insertion in InsertionCost::ALL {
        for balancing in [Balancing::None, Balancing::Rotations] {
            let (mut tree, ms) = inserted(config(insertion, balancing, binned))?;
            let start = Instant::now();
            tree.optimize_until_converged(OPTIMIZE_PASSES);
            let ms = ms + start.elapsed().as_secs_f64() * 1e3;
            let method = format!("{}+optimize", name(insertion, balancing));
            out.push(quality(method.clone(), &tree, ms));
            to_polish.push((method, tree, ms));
        }
    }
    // The rebuilds: of the tree the default settings insert, timed alone.
    let defaults = TreeConfig::default();
    for rebuild in RebuildMethod::ALL {
        let (mut tree, _) = inserted(config(defaults.insertion, defaults.balancing, rebuild))?;
        let start = Instant::now();
        tree.rebuild();
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let method = format!("rebuild{}", rebuild_suffix(rebuild));
        out.push(quality(method.clone(), &tree, ms));
        to_polish.push((method, tree, ms));
    }
    // One batch into an empty tree.
    let items: Vec<(Aabb<V>, V, u32)> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| (*b, V::default(), i as u32))
        .collect();
    for rebuild in RebuildMethod::ALL {
        let mut tree =
            DynamicTree::try_new(config(defaults.insertion, defaults.balancing, rebuild))?;
        let start = Instant::now();
        tree.create_proxies(&items)?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let method = format!("create-proxies{}", rebuild_suffix(rebuild));
        out.push(quality(method, &tree, ms));
    }
    // The thorough optimization of each optimized and rebuilt tree (timed with its build).
    for (method, mut tree, ms) in to_polish {
        let start = Instant::now();
        tree.optimize_thorough(THOROUGH_ROUNDS);
        let ms = ms + start.elapsed().as_secs_f64() * 1e3;
        out.push(quality(format!("{method}+thorough"), &tree, ms));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
