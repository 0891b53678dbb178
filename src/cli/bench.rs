//! The `bench` subcommand: the standard workload (docs/performance.md, "The standard workload")
//! on our tree (or on brute force, sweep-and-prune or Box2D's own tree), printing timings, pair
//! counts, the pair hash and peak memory.

use super::run::BroadphaseArg;
use crate::tree::{Balancing, InsertionCost, PairMethod, TreeConfig, UpdateMode};
use crate::workload::{self, OurBroadphase, RunReport, STANDARD_STEPS, WorkloadBroadphase};
use clap::ValueEnum;
use std::fmt::Write as _;

/// The most circles brute force accepts (it tests every pair each step).
pub const MAX_BRUTE_CIRCLES: usize = 100_000;

/// A parser of one strategy's names (`NAMES`), listing them in `--help` and in its error.
macro_rules! names_parser {
    ($ty:ty) => {
        clap::builder::TypedValueParser::try_map(
            clap::builder::PossibleValuesParser::new(<$ty>::NAMES),
            |name: String| {
                <$ty>::from_name(&name)
                    .ok_or_else(|| format!("`{name}` is not one of {:?}", <$ty>::NAMES))
            },
        )
    };
}

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Number of circles (1 to 10,000,000).
    #[arg(long, default_value_t = 10_000)]
    pub n: usize,
    /// Number of steps (1 to 1,000,000).
    #[arg(long, default_value_t = STANDARD_STEPS)]
    pub steps: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Which broad phase runs the workload.
    #[arg(long, value_enum, default_value_t = BroadphaseArg::Tree)]
    pub broadphase: BroadphaseArg,
    /// The tree's insertion cost.
    #[arg(long, default_value = InsertionCost::default().name(), value_parser = names_parser!(InsertionCost))]
    pub insertion: InsertionCost,
    /// The tree's balancing.
    #[arg(long, default_value = Balancing::default().name(), value_parser = names_parser!(Balancing))]
    pub balancing: Balancing,
    /// The tree's pair method.
    #[arg(long, default_value = PairMethod::default().name(), value_parser = names_parser!(PairMethod))]
    pub pairs: PairMethod,
    /// What the tree does with a proxy that left its fat box.
    #[arg(long, default_value = UpdateMode::default().name(), value_parser = names_parser!(UpdateMode))]
    pub update: UpdateMode,
    /// The share of the leaves the tree's incremental optimization reinserts at each pair
    /// update (0 to 1; 0 turns it off).
    #[arg(long, default_value_t = crate::tree::DEFAULT_OPTIMIZE_SHARE)]
    pub optimize_share: f32,
}

/// The name clap shows for a value (`surface-area`, ...).
fn value_name<E: ValueEnum>(v: &E) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_owned())
        .unwrap_or_default()
}

impl BenchArgs {
    /// The tree configuration the options choose (margin and look-ahead are the workload's).
    #[must_use]
    pub fn tree_config(&self) -> TreeConfig {
        TreeConfig {
            margin: workload::MARGIN,
            velocity_lookahead: 0.0,
            insertion: self.insertion,
            balancing: self.balancing,
            pairs: self.pairs,
            update: self.update,
            optimize_share: self.optimize_share,
            ..TreeConfig::default()
        }
    }

    /// Refuses counts the workload cannot run, with a message that says what is allowed.
    pub fn check(&self) -> anyhow::Result<()> {
        if self.n == 0 || self.n > workload::MAX_CIRCLES {
            anyhow::bail!(
                "--n must be between 1 and {}, got {}",
                workload::MAX_CIRCLES,
                self.n
            );
        }
        if self.steps == 0 || self.steps > workload::MAX_STEPS {
            anyhow::bail!(
                "--steps must be between 1 and {}, got {}",
                workload::MAX_STEPS,
                self.steps
            );
        }
        if !(0.0..=1.0).contains(&self.optimize_share) {
            anyhow::bail!(
                "--optimize-share must be between 0 and 1, got {}",
                self.optimize_share
            );
        }
        if self.broadphase == BroadphaseArg::Brute && self.n > MAX_BRUTE_CIRCLES {
            anyhow::bail!(
                "--broadphase brute tests every pair each step; it accepts at most \
                 {MAX_BRUTE_CIRCLES} circles, got {}",
                self.n
            );
        }
        Ok(())
    }
}

/// Runs the workload the arguments describe and returns its report.
pub fn run_bench(args: &BenchArgs) -> anyhow::Result<RunReport> {
    args.check()?;
    let mut broadphase: Box<dyn WorkloadBroadphase> = match args.broadphase {
        BroadphaseArg::Tree => Box::new(OurBroadphase::tree(args.tree_config())),
        BroadphaseArg::Brute => Box::new(OurBroadphase::brute_force()),
        BroadphaseArg::Sap => Box::new(OurBroadphase::sweep_and_prune()),
        BroadphaseArg::Box2d => Box::new(OurBroadphase::box2d()),
    };
    Ok(workload::run(broadphase.as_mut(), args.n, args.steps)?)
}

/// The report as one JSON object: the standard keys (`n`, `steps`, `mean_step_ms`, ...) plus
/// the configuration (`broadphase`, and for the tree `insertion`, `balancing`, `pairs`,
/// `update`; null otherwise)
/// and the bytes the structure holds (`structure_bytes`, `bytes_per_proxy`; null when the
/// broad phase cannot say).
#[must_use]
pub fn report_json(args: &BenchArgs, report: &RunReport, peak_rss_kb: Option<u64>) -> String {
    let tree = args.broadphase == BroadphaseArg::Tree;
    let opt = |s: String| {
        if tree {
            serde_json::Value::String(s)
        } else {
            serde_json::Value::Null
        }
    };
    let value = serde_json::json!({
        "n": report.n,
        "steps": report.steps,
        "build_ms": report.build_ms,
        "ms_per_step": report.mean_step_ms(),
        "median_step_ms": report.median_step_ms(),
        "avg_pairs": report.avg_pairs(),
        "reinserts_per_step": report.reinserts_per_step(),
        "pair_hash": report.pair_hash_hex(),
        "peak_rss_kb": peak_rss_kb,
        "structure_bytes": report.structure_bytes,
        "bytes_per_proxy": report.structure_bytes.map(|b| b as f64 / report.n as f64),
        "broadphase": value_name(&args.broadphase),
        "insertion": opt(args.insertion.name().to_owned()),
        "balancing": opt(args.balancing.name().to_owned()),
        "pairs": opt(args.pairs.name().to_owned()),
        "update": opt(args.update.name().to_owned()),
    });
    value.to_string()
}

/// The report as aligned text lines.
#[must_use]
pub fn report_text(report: &RunReport, peak_rss_kb: Option<u64>) -> String {
    let mut s = String::new();
    let rss = peak_rss_kb.map_or_else(|| "unknown".to_owned(), |kb| format!("{kb} kB"));
    // Writing to a String cannot fail.
    let _ = writeln!(
        s,
        "standard workload: {} circles, {} steps, {}",
        report.n, report.steps, report.name
    );
    let _ = writeln!(s, "build              {:.3} ms", report.build_ms);
    let _ = writeln!(s, "ms per step        {:.4} (mean)", report.mean_step_ms());
    let _ = writeln!(s, "median ms per step {:.4}", report.median_step_ms());
    let _ = writeln!(s, "pairs per step     {:.2}", report.avg_pairs());
    let _ = writeln!(s, "reinserts per step {:.2}", report.reinserts_per_step());
    let _ = writeln!(s, "pair_hash          {}", report.pair_hash_hex());
    let _ = writeln!(s, "peak RSS           {rss}");
    if let Some(bytes) = report.structure_bytes {
        let _ = writeln!(
            s,
            "structure          {bytes} bytes ({:.1} per proxy)",
            bytes as f64 / report.n as f64
        );
    }
    s
}

/// Runs `bench`; returns the exit code.
pub fn main(args: &BenchArgs) -> anyhow::Result<i32> {
    let report = run_bench(args)?;
    let rss = workload::peak_rss_kb();
    let text = if args.json {
        format!("{}\n", report_json(args, &report, rss))
    } else {
        report_text(&report, rss)
    };
    super::run::print_out(&text)?;
    Ok(0)
}
