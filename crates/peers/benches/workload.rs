//! Criterion benchmark of the standard workload (docs/performance.md, "The standard workload"):
//! our tree's configurations against the peers a user would pick instead (parry2d's `Bvh`,
//! obvhs's `Bvh2` as avian drives it, Box2D v3's own tree (its C code) and a Rust port of it,
//! the `bvh` crate, `rstar`, sweep-and-prune, brute force), with a check that all report the
//! same pairs and pair hash, and a table of ms per step and the ratio to ours at the end.
//!
//! Environment: `AABB_BENCH_N` (comma list, default `1000,10000,100000`), `AABB_BENCH_STEPS`
//! (steps of the checking run; default 600 at N <= 1,000, 100 at N <= 10,000, 30 above, so
//! that brute force and the slow peers finish), `AABB_BENCH_CONFIGS=all` (every tree
//! configuration in the checking run, not only the ones criterion times),
//! `AABB_BENCH_SECS` (criterion measurement seconds per implementation, default 2),
//! `AABB_BENCH_SLOW_PEERS=1` (also `bvh` with `update_shapes` and `rstar` with remove+insert),
//! `AABB_BENCH_ONLY` (comma list of label fragments, case-insensitive: run only the
//! implementations whose label holds one of them; the default tree always runs, as the
//! reference of the ratios), `AABB_BENCH_PAIRED=rounds,steps` (the paired run, below;
//! `0` turns it off), `AABB_BENCH_CRITERION=0` (skip criterion's timing: the checking run and
//! the paired run only), `AABB_BENCH_NEIGHBOUR=MB` (a busy neighbour, below),
//! `AABB_BENCH_PROFILE=fragment` (the run for a profiler, below).
//!
//! Criterion times one implementation after the other, so on a shared machine with slow and
//! fast phases two neighbours in the table can land in different phases. The paired run
//! after it gives each implementation (brute force aside) its own copy of the workload and
//! times them in interleaved rounds: every round, each implementation runs the same `steps`
//! steps, in an order that rotates from round to round. Every implementation then has timed
//! exactly the same steps of the same trajectory, spread over the same minutes, and the ratio
//! of total times is a paired comparison; every step is also timed alone, so the table gives
//! the median step beside the mean. Builds are timed the same way (one build per
//! implementation per round).
//!
//! **A busy neighbour.** `AABB_BENCH_NEIGHBOUR=256` starts, before anything is timed, a
//! second process (this benchmark's own executable again, told by
//! `AABB_BENCH_NEIGHBOUR_CHILD`) that streams through 256 MB of memory without pause, reading
//! and writing every 8-byte word in turn, as a game's other threads (rendering, audio,
//! streaming assets) share the memory bus and the last-level cache with the physics. It runs
//! on the other core while the benchmark runs, and stops when the benchmark ends (it watches
//! its standard input, a pipe from the benchmark, and exits when that closes, even if the
//! benchmark is killed). A process rather than a thread: the neighbour then shares nothing
//! with the benchmark but the machine (no allocator, no page tables), as another program or
//! a game's other subsystems would.
//!
//! **For a profiler.** `AABB_BENCH_PROFILE=parry` (a label fragment as in `AABB_BENCH_ONLY`;
//! `ours` for our default) runs only the first implementation whose label holds it, at the
//! first size of `AABB_BENCH_N`: a build, `AABB_BENCH_PROFILE_WARM` steps (default 60), then
//! `AABB_BENCH_PROFILE_STEPS` steps (default 600) whose update and pair search each run in
//! one call of `profiled_step`, a function never inlined, so that
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*profiled_step*'`
//! counts those and nothing else (`scripts/callgrind-workload.sh` does it). The workload's
//! own motion is outside; the pair tally (one hash a pair, the same for everyone) is inside.

mod peers;

use aabb_debugger::broadphase::config_label;
use aabb_debugger::tree::{Balancing, InsertionCost, PairMethod, TreeConfig, UpdateMode};
use aabb_debugger::workload::{
    self, OurBroadphase, PairTally, RunReport, Workload, WorkloadBroadphase,
};
use criterion::{Criterion, SamplingMode};
use peers::{Box2dReal, Box2dTree, BvhCrate, ObvhsBvh, ParryBvh, RstarTree};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// Brute force runs only up to this many circles.
const MAX_BRUTE_N: usize = 10_000;

/// One implementation in the run: how to make it and whether it is ours.
struct Entry {
    label: String,
    ours: bool,
    make: Box<dyn Fn() -> Box<dyn WorkloadBroadphase>>,
}

fn tree_entry(config: TreeConfig) -> Entry {
    Entry {
        label: format!("ours {}", config_label(&config)),
        ours: true,
        make: Box::new(move || Box::new(OurBroadphase::tree(config))),
    }
}

/// The default configuration with its pairs found on rayon's pool: the extra figure beside
/// the single-thread one.
fn parallel_entry() -> Entry {
    let config = TreeConfig {
        margin: workload::MARGIN,
        velocity_lookahead: 0.0,
        ..TreeConfig::default()
    };
    Entry {
        label: format!(
            "ours default, rayon ({} thr.)",
            rayon::current_num_threads()
        ),
        ours: true,
        make: Box::new(move || Box::new(OurBroadphase::tree_parallel(config))),
    }
}

/// The default configuration without the incremental optimization pass
/// (`optimize_share` 0): beside the default, it shows what the pass adds to a step (the
/// issue's bound: at most 10% at 100,000).
fn pass_off_entry() -> Entry {
    Entry {
        label: "ours default, pass off".to_owned(),
        ..tree_entry(TreeConfig {
            optimize_share: 0.0,
            ..TreeConfig::default()
        })
    }
}

fn tree_config(
    insertion: InsertionCost,
    balancing: Balancing,
    pairs: PairMethod,
    update: UpdateMode,
) -> TreeConfig {
    TreeConfig {
        margin: workload::MARGIN,
        velocity_lookahead: 0.0,
        insertion,
        balancing,
        pairs,
        update,
        ..TreeConfig::default()
    }
}

/// The tree configurations criterion times: the default first (the "ours" of the ratios).
/// Greedy perimeter descent with AVL balancing is slow; it runs at N <= 1,000 only.
fn timed_tree_configs(n: usize) -> Vec<TreeConfig> {
    use Balancing as B;
    use InsertionCost as I;
    use PairMethod as P;
    use UpdateMode as U;
    let default = tree_config(
        InsertionCost::default(),
        Balancing::default(),
        PairMethod::default(),
        UpdateMode::default(),
    );
    let mut list = vec![default];
    for c in [
        tree_config(
            I::SurfaceArea,
            B::Rotations,
            P::MovedTraversal,
            U::LocalReinsert,
        ),
        tree_config(I::SurfaceArea, B::Rotations, P::MovedTraversal, U::Reinsert),
        tree_config(
            I::SurfaceArea,
            B::Rotations,
            P::MovedQueries,
            U::LocalReinsert,
        ),
        tree_config(I::SurfaceArea, B::Rotations, P::MovedQueries, U::Reinsert),
        tree_config(
            I::SurfaceArea,
            B::Rotations,
            P::SelfTraversal,
            U::LocalReinsert,
        ),
        tree_config(
            I::SurfaceArea,
            B::Rotations,
            P::MovedTraversal,
            U::EnlargeAndRebuild,
        ),
        tree_config(
            I::SurfaceArea,
            B::Rotations,
            P::SelfTraversal,
            U::EnlargeAndRebuild,
        ),
        tree_config(I::SurfaceArea, B::Avl, P::MovedTraversal, U::LocalReinsert),
        tree_config(I::Perimeter, B::Avl, P::SelfTraversal, U::Reinsert),
    ] {
        if c.insertion == I::Perimeter && n > 1_000 {
            continue;
        }
        if !list.contains(&c) {
            list.push(c);
        }
    }
    list
}

/// Every tree configuration (for `AABB_BENCH_CONFIGS=all`).
fn all_tree_configs() -> Vec<TreeConfig> {
    tree_config(
        InsertionCost::default(),
        Balancing::default(),
        PairMethod::default(),
        UpdateMode::default(),
    )
    .every_combination()
}

fn peer_entries(n: usize) -> Vec<Entry> {
    let mut list = vec![
        Entry {
            label: "parry2d Bvh".to_owned(),
            ours: false,
            make: Box::new(|| Box::new(ParryBvh::new())),
        },
        Entry {
            label: "obvhs Bvh2 (reinsert)".to_owned(),
            ours: false,
            make: Box::new(|| Box::new(ObvhsBvh::new(true))),
        },
        Entry {
            label: "obvhs Bvh2 (reinsert, given moved)".to_owned(),
            ours: false,
            make: Box::new(|| Box::new(ObvhsBvh::new(false))),
        },
        Entry {
            label: "Box2D v3 tree (real, C)".to_owned(),
            ours: false,
            make: Box::new(|| Box::new(Box2dReal::new())),
        },
        Entry {
            label: "Box2D v3 tree (port)".to_owned(),
            ours: false,
            make: Box::new(|| Box::new(Box2dTree::new())),
        },
        Entry {
            label: "bvh (rebuild)".to_owned(),
            ours: false,
            make: Box::new(|| Box::new(BvhCrate::new(true))),
        },
        Entry {
            label: "rstar (bulk load)".to_owned(),
            ours: false,
            make: Box::new(|| Box::new(RstarTree::new(true))),
        },
        Entry {
            label: "sweep-and-prune".to_owned(),
            ours: false,
            make: Box::new(|| Box::new(OurBroadphase::sweep_and_prune())),
        },
    ];
    if std::env::var("AABB_BENCH_SLOW_PEERS").is_ok_and(|v| v == "1") {
        list.push(Entry {
            label: "bvh (update_shapes)".to_owned(),
            ours: false,
            make: Box::new(|| Box::new(BvhCrate::new(false))),
        });
        list.push(Entry {
            label: "rstar (remove+insert)".to_owned(),
            ours: false,
            make: Box::new(|| Box::new(RstarTree::new(false))),
        });
    }
    if n <= MAX_BRUTE_N {
        list.push(Entry {
            label: "brute force".to_owned(),
            ours: false,
            make: Box::new(|| Box::new(OurBroadphase::brute_force())),
        });
    }
    list
}

/// Whether `label` is selected by the `AABB_BENCH_ONLY` fragments (all are, with none).
fn selected(only: &[String], label: &str) -> bool {
    let label = label.to_lowercase();
    only.is_empty() || only.iter().any(|t| label.contains(t.as_str()))
}

fn env_usize_list(name: &str, default: &[usize]) -> Vec<usize> {
    match std::env::var(name) {
        Ok(s) => s
            .split(',')
            .filter_map(|t| t.trim().replace('_', "").parse().ok())
            .collect(),
        Err(_) => default.to_vec(),
    }
}

/// Accumulated criterion measurements of one implementation: total timed steps and time.
#[derive(Default, Clone, Copy)]
struct Timing {
    steps: u64,
    total: Duration,
}

/// What the final table shows for one implementation at one N.
struct Row {
    label: String,
    ours: bool,
    check: RunReport,
    bytes_per_proxy: Option<f64>,
    timing: Option<Timing>,
    /// The paired run: step time and build time over all rounds (same steps for everyone).
    paired: Option<Paired>,
}

/// What the paired run measured for one implementation.
#[derive(Default, Clone)]
struct Paired {
    steps: u64,
    step_total: Duration,
    /// Each step's time, nanoseconds, in the order run.
    step_ns: Vec<u64>,
    builds: u64,
    build_total: Duration,
}

impl Paired {
    /// Mean ms a step.
    fn mean_ms(&self) -> f64 {
        self.step_total.as_secs_f64() * 1e3 / self.steps.max(1) as f64
    }

    /// Median ms a step (the mean of the middle two for an even count).
    fn median_ms(&self) -> f64 {
        let mut v = self.step_ns.clone();
        if v.is_empty() {
            return 0.0;
        }
        v.sort_unstable();
        let m = v.len() / 2;
        let ns = if v.len() % 2 == 1 {
            v[m] as f64
        } else {
            (v[m - 1] + v[m]) as f64 / 2.0
        };
        ns * 1e-6
    }

    /// Mean ms a build.
    fn build_ms(&self) -> f64 {
        self.build_total.as_secs_f64() * 1e3 / self.builds.max(1) as f64
    }
}

fn check_run(entry: &Entry, n: usize, steps: usize) -> (RunReport, Option<f64>) {
    let mut imp = (entry.make)();
    let report = workload::run(imp.as_mut(), n, steps).expect("valid workload size");
    let bytes = imp.bytes().map(|b| b as f64 / n as f64);
    (report, bytes)
}

/// The variable that makes this executable the busy neighbour (see the module doc).
const NEIGHBOUR_CHILD: &str = "AABB_BENCH_NEIGHBOUR_CHILD";

/// The busy neighbour while it runs: dropping it stops the process.
struct Neighbour {
    child: std::process::Child,
}

impl Drop for Neighbour {
    fn drop(&mut self) {
        // The child also exits by itself when its standard input closes.
        if let Err(e) = self.child.kill() {
            eprintln!("busy neighbour: could not stop it: {e}");
        }
        if let Err(e) = self.child.wait() {
            eprintln!("busy neighbour: could not wait for it: {e}");
        }
    }
}

/// Starts the busy neighbour when `AABB_BENCH_NEIGHBOUR` asks for one (megabytes to stream).
fn start_neighbour() -> Option<Neighbour> {
    let mb = *env_usize_list("AABB_BENCH_NEIGHBOUR", &[]).first()?;
    if mb == 0 {
        return None;
    }
    let exe = std::env::current_exe().expect("the benchmark's own executable");
    let child = std::process::Command::new(exe)
        .env(NEIGHBOUR_CHILD, mb.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the busy neighbour starts");
    println!(
        "busy neighbour: process {} streams through {mb} MB, reading and writing each word",
        child.id()
    );
    Some(Neighbour { child })
}

/// The busy neighbour itself: streams through `mb` megabytes, one 8-byte word after the other,
/// until its standard input closes.
fn run_neighbour(mb: &str) {
    let mb: usize = mb.trim().parse().unwrap_or(256);
    std::thread::spawn(|| {
        let mut sink = Vec::new();
        // EOF or an error: the benchmark has gone.
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        std::process::exit(0);
    });
    let mut words = vec![0u64; (mb << 20) / 8];
    loop {
        for w in &mut words {
            *w = w.wrapping_add(1);
        }
        std::hint::black_box(&mut words);
    }
}

fn main() {
    if let Ok(mb) = std::env::var(NEIGHBOUR_CHILD) {
        run_neighbour(&mb);
        return;
    }
    if let Ok(fragment) = std::env::var("AABB_BENCH_PROFILE") {
        profile_run(&fragment.to_lowercase());
        return;
    }
    let _neighbour = start_neighbour();
    let sizes = env_usize_list("AABB_BENCH_N", &[1_000, 10_000, 100_000]);
    let steps_override = env_usize_list("AABB_BENCH_STEPS", &[]).first().copied();
    let all_configs = std::env::var("AABB_BENCH_CONFIGS").is_ok_and(|v| v == "all");
    let only: Vec<String> = std::env::var("AABB_BENCH_ONLY")
        .map(|s| {
            s.split(',')
                .map(|t| t.trim().to_lowercase())
                .filter(|t| !t.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let use_criterion = !std::env::var("AABB_BENCH_CRITERION").is_ok_and(|v| v == "0");
    let secs = env_usize_list("AABB_BENCH_SECS", &[2])
        .first()
        .copied()
        .unwrap_or(2);

    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(secs as u64))
        .without_plots()
        .configure_from_args();

    let mut tables: Vec<(usize, Vec<Row>)> = Vec::new();
    for &n in &sizes {
        let steps = steps_override.unwrap_or(match n {
            0..=1_000 => workload::STANDARD_STEPS,
            1_001..=10_000 => 100,
            _ => 30,
        });
        let timed: Vec<Entry> = timed_tree_configs(n)
            .into_iter()
            .map(tree_entry)
            .chain([parallel_entry(), pass_off_entry()])
            .chain(peer_entries(n))
            .enumerate()
            .filter(|(i, e)| *i == 0 || selected(&only, &e.label))
            .map(|(_, e)| e)
            .collect();
        let extra: Vec<Entry> = if all_configs {
            let timed_configs = timed_tree_configs(n);
            all_tree_configs()
                .into_iter()
                .filter(|c| !timed_configs.contains(c))
                .map(tree_entry)
                .filter(|e| selected(&only, &e.label))
                .collect()
        } else {
            Vec::new()
        };

        // 1. The checking run: every implementation over the same `steps` steps must report the
        //    same pair count and hash.
        println!(
            "\n== standard workload, N = {n}, {steps} steps: checking every implementation =="
        );
        let mut rows: Vec<Row> = Vec::new();
        for (entry, is_timed) in timed
            .iter()
            .map(|e| (e, true))
            .chain(extra.iter().map(|e| (e, false)))
        {
            let (check, bytes) = check_run(entry, n, steps);
            println!(
                "{:<34} avg pairs {:>12.3}  pair_hash {}  reinserts/step {:>9.2}  {:>9.4} ms/step  build {:>8.3} ms",
                entry.label,
                check.avg_pairs(),
                check.pair_hash_hex(),
                check.reinserts_per_step(),
                check.mean_step_ms(),
                check.build_ms
            );
            rows.push(Row {
                label: entry.label.clone(),
                ours: entry.ours,
                check,
                bytes_per_proxy: bytes,
                timing: if is_timed {
                    Some(Timing::default())
                } else {
                    None
                },
                paired: None,
            });
        }
        let reference = &rows[rows.len() - 1].check;
        let reference_label = rows[rows.len() - 1].label.clone();
        let (ref_pairs, ref_hash) = (reference.total_pairs, reference.pair_hash);
        for row in &rows {
            assert_eq!(
                (row.check.total_pairs, row.check.pair_hash),
                (ref_pairs, ref_hash),
                "N = {n}: {} disagrees with {reference_label} (pairs {} vs {}, hash {} vs {:016x})",
                row.label,
                row.check.total_pairs,
                ref_pairs,
                row.check.pair_hash_hex(),
                ref_hash
            );
        }
        println!(
            "all {} implementations agree: avg pairs {:.3}, pair_hash {:016x}",
            rows.len(),
            ref_pairs as f64 / steps as f64,
            ref_hash
        );

        // 2. Criterion: steady-state steps on a persistent state per implementation.
        if use_criterion {
            criterion_run(&mut criterion, &timed, &mut rows, n);
        }

        // 3. The paired run.
        let (rounds, paired_steps) = paired_settings(n);
        if rounds > 0 {
            let in_paired: Vec<usize> = (0..timed.len())
                .filter(|&i| timed[i].label != "brute force")
                .collect();
            println!(
                "\n== N = {n}: paired run, {rounds} rounds of {paired_steps} steps and one build each, {} implementations interleaved ==",
                in_paired.len()
            );
            let paired = paired_run(
                &in_paired.iter().map(|&i| &timed[i]).collect::<Vec<_>>(),
                n,
                rounds,
                paired_steps,
            );
            for (&i, p) in in_paired.iter().zip(paired) {
                rows[i].paired = Some(p);
            }
        }
        tables.push((n, rows));
    }
    criterion.final_summary();
    print_tables(&tables);
}

/// The update and pair search of one step, never inlined: the function a profiler's toggle
/// names (see the module doc).
#[inline(never)]
fn profiled_step(imp: &mut dyn WorkloadBroadphase, w: &Workload, tally: &mut PairTally) {
    imp.update(w);
    imp.find_pairs(w, tally);
}

/// The run for a profiler (see the module doc): the first implementation whose label holds
/// `fragment`, at the first size.
fn profile_run(fragment: &str) {
    let first = |name: &str, default: usize| {
        env_usize_list(name, &[default])
            .first()
            .copied()
            .unwrap_or(default)
    };
    let n = first("AABB_BENCH_N", 1_000);
    let warm = first("AABB_BENCH_PROFILE_WARM", 60);
    let steps = first("AABB_BENCH_PROFILE_STEPS", 600);
    let entries: Vec<Entry> = timed_tree_configs(n)
        .into_iter()
        .map(tree_entry)
        .chain(peer_entries(n))
        .collect();
    let Some(entry) = entries
        .iter()
        .find(|e| e.label.to_lowercase().contains(fragment))
    else {
        let labels: Vec<&str> = entries.iter().map(|e| e.label.as_str()).collect();
        eprintln!("AABB_BENCH_PROFILE={fragment}: no implementation's label holds it: {labels:?}");
        std::process::exit(2);
    };
    let mut w = Workload::new(n).expect("valid workload size");
    let mut imp = (entry.make)();
    imp.build(&w);
    let mut tally = PairTally::default();
    for _ in 0..warm {
        w.step();
        imp.update(&w);
        imp.find_pairs(&w, &mut tally);
    }
    let mut profiled = PairTally::default();
    for _ in 0..steps {
        w.step();
        profiled_step(imp.as_mut(), &w, &mut profiled);
    }
    println!(
        "{}: N = {n}, {warm} steps, then {steps} profiled steps: {} pairs, pair_hash {:016x}",
        entry.label, profiled.pairs, profiled.hash
    );
}

/// Criterion's timing of the `timed` implementations at `n` (their rows come first in `rows`).
fn criterion_run(criterion: &mut Criterion, timed: &[Entry], rows: &mut [Row], n: usize) {
    let mut group = criterion.benchmark_group(format!("workload/{n}"));
    group.sampling_mode(SamplingMode::Flat);
    for (index, entry) in timed.iter().enumerate() {
        let timing = RefCell::new(Timing::default());
        let mut state: Option<(Workload, Box<dyn WorkloadBroadphase>)> = None;
        group.bench_function(
            entry.label.replace(['/', ' ', ',', '+', '(', ')'], "_"),
            |b| {
                b.iter_custom(|iters| {
                    let (w, imp) = state.get_or_insert_with(|| {
                        let w = Workload::new(n).expect("valid workload size");
                        let mut imp = (entry.make)();
                        imp.build(&w);
                        (w, imp)
                    });
                    let mut tally = PairTally::default();
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        w.step();
                        let t = Instant::now();
                        imp.update(w);
                        imp.find_pairs(w, &mut tally);
                        total += t.elapsed();
                    }
                    std::hint::black_box(tally);
                    let mut acc = timing.borrow_mut();
                    acc.steps += iters;
                    acc.total += total;
                    total
                });
            },
        );
        let acc = timing.into_inner();
        rows[index].timing = Some(acc);
    }
    group.finish();
}

/// Rounds and steps per round of the paired run at `n` (`AABB_BENCH_PAIRED=rounds,steps`):
/// by default 30 rounds, of 20 steps above 1,000 circles (the 600 steps of the standard
/// workload, spike steps included) and of 200 steps at 1,000 and below (where a step is
/// too short to time alone).
fn paired_settings(n: usize) -> (usize, usize) {
    let given = env_usize_list("AABB_BENCH_PAIRED", &[]);
    match given.as_slice() {
        [0, ..] => (0, 0),
        [rounds, steps, ..] => (*rounds, (*steps).max(1)),
        [rounds] => (*rounds, default_paired_steps(n)),
        [] => (30, default_paired_steps(n)),
    }
}

fn default_paired_steps(n: usize) -> usize {
    match n {
        0..=1_000 => 200,
        _ => 20,
    }
}

/// Times `entries` in interleaved rounds on identical workloads (see the module doc): each
/// round builds each implementation once (timed, then dropped) and runs `steps` steps of each
/// persistent state (timed: update and pair search). The order rotates every round.
fn paired_run(entries: &[&Entry], n: usize, rounds: usize, steps: usize) -> Vec<Paired> {
    let mut states: Vec<(Workload, Box<dyn WorkloadBroadphase>, PairTally)> = entries
        .iter()
        .map(|e| {
            let w = Workload::new(n).expect("valid workload size");
            let mut imp = (e.make)();
            imp.build(&w);
            (w, imp, PairTally::default())
        })
        .collect();
    let mut out = vec![Paired::default(); entries.len()];
    let count = entries.len();
    for round in 0..rounds {
        for k in 0..count {
            let i = (round + k) % count;
            // A fresh build of the initial boxes.
            let w0 = Workload::new(n).expect("valid workload size");
            let mut fresh = (entries[i].make)();
            let t = Instant::now();
            fresh.build(&w0);
            out[i].build_total += t.elapsed();
            out[i].builds += 1;
            drop(fresh);
            // `steps` steps of the persistent state.
            let (w, imp, tally) = &mut states[i];
            let mut total = Duration::ZERO;
            for _ in 0..steps {
                w.step();
                let t = Instant::now();
                imp.update(w);
                imp.find_pairs(w, tally);
                let dt = t.elapsed();
                total += dt;
                out[i].step_ns.push(dt.as_nanos() as u64);
            }
            out[i].step_total += total;
            out[i].steps += steps as u64;
        }
    }
    // Everyone ran the same steps: the pairs must agree here too.
    let first = (states[0].2.pairs, states[0].2.hash);
    for ((_, _, tally), entry) in states.iter().zip(entries) {
        assert_eq!(
            (tally.pairs, tally.hash),
            first,
            "N = {n}: {} disagrees with {} in the paired run",
            entry.label,
            entries[0].label
        );
    }
    out
}

fn ms_per_step(row: &Row) -> Option<f64> {
    let t = row.timing?;
    (t.steps > 0).then(|| t.total.as_secs_f64() * 1e3 / t.steps as f64)
}

fn print_tables(tables: &[(usize, Vec<Row>)]) {
    println!("\n== standard workload: ms per step (criterion, steady state) and ratio to ours ==");
    println!("ours = the tree's default configuration (the first row); ratio = theirs / ours");
    for (n, rows) in tables {
        let ours_ms = rows
            .iter()
            .find(|r| r.ours)
            .and_then(ms_per_step)
            .or_else(|| rows.iter().find(|r| r.ours).map(|r| r.check.mean_step_ms()));
        let check_steps = rows.first().map_or(0, |r| r.check.steps);
        println!("\nN = {n} (checking run: {check_steps} steps; ms/step: criterion)");
        println!(
            "{:<34} {:>11} {:>8} {:>12} {:>10} {:>10} {:>12} {:>18}",
            "implementation",
            "ms/step",
            "ratio",
            "check ms/st",
            "build ms",
            "bytes/px",
            "avg pairs",
            "pair_hash"
        );
        for row in rows {
            let ms = ms_per_step(row);
            let ms_text = ms.map_or_else(|| "-".to_owned(), |v| format!("{v:.4}"));
            let ratio = match (ms.or(Some(row.check.mean_step_ms())), ours_ms) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
                _ => "-".to_owned(),
            };
            let bytes = row
                .bytes_per_proxy
                .map_or_else(|| "-".to_owned(), |b| format!("{b:.1}"));
            println!(
                "{:<34} {:>11} {:>8} {:>12.4} {:>10.3} {:>10} {:>12.3} {:>18}",
                row.label,
                ms_text,
                ratio,
                row.check.mean_step_ms(),
                row.check.build_ms,
                bytes,
                row.check.avg_pairs(),
                row.check.pair_hash_hex()
            );
        }
        print_paired(rows);
    }
}

/// The paired run's table for one N: mean and median ms per step and build ms, each with its
/// ratio to ours (theirs / ours), and ours / theirs for the mean and median step.
fn print_paired(rows: &[Row]) {
    let Some(ours) = rows.iter().find(|r| r.ours).and_then(|r| r.paired.as_ref()) else {
        return;
    };
    println!(
        "paired run ({} steps and {} builds each, interleaved; ratio = theirs / ours; ours/th = ours / theirs):",
        ours.steps, ours.builds
    );
    println!(
        "{:<34} {:>10} {:>7} {:>8} {:>10} {:>7} {:>8} {:>10} {:>7}",
        "implementation",
        "mean ms",
        "ratio",
        "ours/th",
        "median ms",
        "ratio",
        "ours/th",
        "build ms",
        "ratio"
    );
    for row in rows {
        let Some(p) = row.paired.as_ref() else {
            continue;
        };
        println!(
            "{:<34} {:>10.4} {:>7.2} {:>8.3} {:>10.4} {:>7.2} {:>8.3} {:>10.3} {:>7.2}",
            row.label,
            p.mean_ms(),
            p.mean_ms() / ours.mean_ms(),
            ours.mean_ms() / p.mean_ms(),
            p.median_ms(),
            p.median_ms() / ours.median_ms(),
            ours.median_ms() / p.median_ms(),
            p.build_ms(),
            p.build_ms() / ours.build_ms()
        );
    }
}
