//! A finished sweep as the `sweep` command prints it and the window's Advisor exports it: one
//! JSON object ([`SweepJson`]), CSV rows ([`csv`]), or a readable table with the
//! recommendation ([`readable`]).

use crate::scene::Scene;
use crate::stream::engine::EngineCosts;
use crate::sweep::{Advice, PointResult, SweepReport};
use serde::Serialize;

/// One point as `--json` prints it (and `--csv`, field for field: see [`CSV_FIELDS`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointRow {
    /// Fat-box margin.
    pub margin: f32,
    /// Velocity look-ahead, seconds.
    pub lookahead: f32,
    /// Insertion cost.
    pub insertion: String,
    /// Balancing.
    pub balancing: String,
    /// Pair method.
    pub pairs: String,
    /// Update mode.
    pub update: String,
    /// Steps taken.
    pub steps: u64,
    /// Leaves reinserted over the steps (as `run --json`).
    pub reinserts_total: u64,
    /// Candidate pairs summed over the steps.
    pub candidate_pairs_total: u64,
    /// Contacts summed over the steps.
    pub contacts_total: u64,
    /// Share of candidate pairs that are not contacts.
    pub false_positive_share: f64,
    /// Node visits of updates and pair finding.
    pub node_visits_total: u64,
    /// Node visits of updates.
    pub update_node_visits: u64,
    /// Leaf visits of updates.
    pub update_leaf_visits: u64,
    /// Node tests of pair finding.
    pub pair_node_visits: u64,
    /// Leaf tests of pair finding.
    pub pair_leaf_visits: u64,
    /// Median ms a step.
    pub ms_per_step: f64,
    /// First quartile of ms a step.
    pub ms_per_step_q1: f64,
    /// Third quartile of ms a step.
    pub ms_per_step_q3: f64,
    /// Mean ms a step.
    pub ms_per_step_mean: f64,
    /// Median ms a step in the update.
    pub ms_update: f64,
    /// First quartile of the update's ms.
    pub ms_update_q1: f64,
    /// Third quartile of the update's ms.
    pub ms_update_q3: f64,
    /// Median ms a step finding pairs and contacts.
    pub ms_pairs: f64,
    /// First quartile of the pairs' ms.
    pub ms_pairs_q1: f64,
    /// Third quartile of the pairs' ms.
    pub ms_pairs_q3: f64,
    /// Why the point stopped early, when it did (`null`, or empty in CSV, when it ran
    /// every step).
    pub stopped: Option<String>,
}

/// The CSV header: the fields of [`PointRow`] in order.
pub const CSV_FIELDS: [&str; 27] = [
    "margin",
    "lookahead",
    "insertion",
    "balancing",
    "pairs",
    "update",
    "steps",
    "reinserts_total",
    "candidate_pairs_total",
    "contacts_total",
    "false_positive_share",
    "node_visits_total",
    "update_node_visits",
    "update_leaf_visits",
    "pair_node_visits",
    "pair_leaf_visits",
    "ms_per_step",
    "ms_per_step_q1",
    "ms_per_step_q3",
    "ms_per_step_mean",
    "ms_update",
    "ms_update_q1",
    "ms_update_q3",
    "ms_pairs",
    "ms_pairs_q1",
    "ms_pairs_q3",
    "stopped",
];

impl PointRow {
    /// The row of a point.
    #[must_use]
    pub fn of(p: &PointResult) -> PointRow {
        let c = &p.point.config;
        PointRow {
            margin: p.point.margin,
            lookahead: p.point.lookahead,
            insertion: format!("{:?}", c.insertion),
            balancing: format!("{:?}", c.balancing),
            pairs: format!("{:?}", c.pairs),
            update: format!("{:?}", c.update),
            steps: p.steps,
            reinserts_total: p.reinserts_total,
            candidate_pairs_total: p.candidate_pairs_total,
            contacts_total: p.contacts_total,
            false_positive_share: p.false_positive_share(),
            node_visits_total: p.node_visits_total(),
            update_node_visits: p.work.update_node_visits,
            update_leaf_visits: p.work.update_leaf_visits,
            pair_node_visits: p.work.pair_node_visits,
            pair_leaf_visits: p.work.pair_leaf_visits,
            ms_per_step: p.ms_per_step.median,
            ms_per_step_q1: p.ms_per_step.q1,
            ms_per_step_q3: p.ms_per_step.q3,
            ms_per_step_mean: p.ms_per_step.mean,
            ms_update: p.ms_update.median,
            ms_update_q1: p.ms_update.q1,
            ms_update_q3: p.ms_update.q3,
            ms_pairs: p.ms_pairs.median,
            ms_pairs_q1: p.ms_pairs.q1,
            ms_pairs_q3: p.ms_pairs.q3,
            stopped: p.stopped.clone(),
        }
    }

    /// The CSV cells, in the order of [`CSV_FIELDS`].
    #[must_use]
    pub fn csv_cells(&self) -> Vec<String> {
        let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        vec![
            self.margin.to_string(),
            self.lookahead.to_string(),
            self.insertion.clone(),
            self.balancing.clone(),
            self.pairs.clone(),
            self.update.clone(),
            self.steps.to_string(),
            self.reinserts_total.to_string(),
            self.candidate_pairs_total.to_string(),
            self.contacts_total.to_string(),
            self.false_positive_share.to_string(),
            self.node_visits_total.to_string(),
            self.update_node_visits.to_string(),
            self.update_leaf_visits.to_string(),
            self.pair_node_visits.to_string(),
            self.pair_leaf_visits.to_string(),
            self.ms_per_step.to_string(),
            self.ms_per_step_q1.to_string(),
            self.ms_per_step_q3.to_string(),
            self.ms_per_step_mean.to_string(),
            self.ms_update.to_string(),
            self.ms_update_q1.to_string(),
            self.ms_update_q3.to_string(),
            self.ms_pairs.to_string(),
            self.ms_pairs_q1.to_string(),
            self.ms_pairs_q3.to_string(),
            self.stopped.as_deref().map(quote).unwrap_or_default(),
        ]
    }
}

/// A point named in the recommendation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointRef {
    /// Its index in `points`.
    pub index: usize,
    /// Its margin.
    pub margin: f32,
    /// Its look-ahead.
    pub lookahead: f32,
}

/// `best_by_time` in `--json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BestByTimeJson {
    /// The point.
    #[serde(flatten)]
    pub point: PointRef,
    /// Its median ms a step.
    pub ms_per_step: f64,
    /// Its first quartile.
    pub ms_per_step_q1: f64,
    /// Its third quartile.
    pub ms_per_step_q3: f64,
    /// Half the width of its median's notch (`1.57 * IQR / sqrt(steps)`).
    pub noise_ms: f64,
    /// The other points whose notch overlaps its own.
    pub within_noise: Vec<PointRef>,
}

/// `best_by_work` in `--json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BestByWorkJson {
    /// The point.
    #[serde(flatten)]
    pub point: PointRef,
    /// Its node visits.
    pub node_visits_total: u64,
    /// What was minimised: node visits plus `pair_cost` times the candidate pairs (one
    /// narrow-phase test each).
    pub work_total: u64,
    /// What a pair test was counted as, in node visits.
    pub pair_cost: f64,
}

/// One row of `by_pair_cost` in `--json`: the point of least work at a pair test's cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ByPairCostJson {
    /// A pair test's cost, node visits.
    pub pair_cost: f64,
    /// The point of least work at it (its index, margin and look-ahead; left out when no
    /// point ran every step).
    #[serde(flatten)]
    pub best: Option<PointRef>,
}

/// `cost_model` in `--json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostModelJson {
    /// ms per reinsert.
    pub ms_per_reinsert: f64,
    /// ms per node test of the pair search.
    pub ms_per_pair_test: f64,
    /// ms a step the counts do not explain.
    pub ms_fixed: f64,
    /// R² of the fit.
    pub r_squared: f64,
    /// True when it predicts the measured curve.
    pub fits: bool,
    /// The points it was fitted to.
    pub points: Vec<usize>,
    /// Its prediction of their mean ms a step.
    pub predicted_ms: Vec<f64>,
}

/// The object `--json` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepJson {
    /// The scene's name.
    pub scene: String,
    /// The file as given.
    pub file: String,
    /// Spheres in the scene.
    pub spheres: usize,
    /// Steps a point.
    pub steps: u64,
    /// Threads the points ran on.
    pub threads: usize,
    /// Wall-clock seconds of the sweep.
    pub elapsed_secs: f64,
    /// Every point, in grid order (look-ahead values, then margins, the last varying
    /// fastest).
    pub points: Vec<PointRow>,
    /// The point of least median time, `null` when no point ran every step.
    pub best_by_time: Option<BestByTimeJson>,
    /// The point of least work, `null` when no point ran every step.
    pub best_by_work: Option<BestByWorkJson>,
    /// How the point of least work moves with a pair test's cost (1, 3, 10, 30, 100 node
    /// visits).
    pub by_pair_cost: Vec<ByPairCostJson>,
    /// One sentence on why.
    pub why: String,
    /// The cost model, `null` when none could be fitted.
    pub cost_model: Option<CostModelJson>,
    /// One sentence on the cost model.
    pub cost_model_note: String,
    /// What a pair test costs by the engine's own timings (a stream that sent its narrow
    /// phase's time and pairs tested), and the best by work at that cost; left out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_pair_cost: Option<EnginePairCostJson>,
}

/// `engine_pair_cost` in `--json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnginePairCostJson {
    /// Steps the engine's cost was fitted from.
    pub steps: u64,
    /// The engine's nanoseconds a pair test.
    pub ns_per_pair_test: f64,
    /// Nanoseconds a node visit costs here (the sweep's own times).
    pub ns_per_node_visit: f64,
    /// A pair test as this many node visits.
    pub pair_cost: f64,
    /// The point of least work at that cost.
    pub best: Option<PointRef>,
    /// The engine's nanoseconds a reinsert, when its steps varied enough to tell.
    pub ns_per_reinsert: Option<f64>,
}

impl SweepJson {
    /// The object for a finished sweep of `scene` from `file`.
    #[must_use]
    pub fn of(scene: &Scene, file: &str, report: &SweepReport) -> SweepJson {
        Self::named(&scene.name, scene.sphere_count(), file, report)
    }

    /// The object for a finished sweep of something named `name` with `spheres` spheres (a
    /// trace: the most boxes one step holds).
    #[must_use]
    pub fn named(name: &str, spheres: usize, file: &str, report: &SweepReport) -> SweepJson {
        let points = &report.points;
        let at = |index: usize| PointRef {
            index,
            margin: points[index].point.margin,
            lookahead: points[index].point.lookahead,
        };
        let Advice {
            best_by_time,
            best_by_work,
            why,
            model,
            model_note,
        } = &report.advice;
        SweepJson {
            scene: name.to_owned(),
            file: file.to_owned(),
            spheres,
            steps: report.steps,
            threads: report.threads,
            elapsed_secs: report.elapsed_secs,
            points: points.iter().map(PointRow::of).collect(),
            best_by_time: best_by_time.as_ref().map(|b| BestByTimeJson {
                point: at(b.index),
                ms_per_step: b.ms_per_step.median,
                ms_per_step_q1: b.ms_per_step.q1,
                ms_per_step_q3: b.ms_per_step.q3,
                noise_ms: b.noise_ms,
                within_noise: b.within_noise.iter().map(|&i| at(i)).collect(),
            }),
            best_by_work: best_by_work.as_ref().map(|b| BestByWorkJson {
                point: at(b.index),
                node_visits_total: b.node_visits_total,
                work_total: b.work_total,
                pair_cost: b.pair_cost,
            }),
            by_pair_cost: super::best_by_pair_cost(points, &super::PAIR_COSTS_SHOWN)
                .into_iter()
                .map(|(pair_cost, best)| ByPairCostJson {
                    pair_cost,
                    best: best.map(at),
                })
                .collect(),
            why: why.clone(),
            cost_model: model.as_ref().map(|m| CostModelJson {
                ms_per_reinsert: m.ms_per_reinsert,
                ms_per_pair_test: m.ms_per_pair_test,
                ms_fixed: m.ms_fixed,
                r_squared: m.r_squared,
                fits: m.fits,
                points: m.points.clone(),
                predicted_ms: m.predicted_ms.clone(),
            }),
            cost_model_note: model_note.clone(),
            engine_pair_cost: None,
        }
    }

    /// With the engine's own pair-test cost (`costs`, fitted from a stream's timings) put
    /// in the sweep's node visits.
    #[must_use]
    pub fn with_engine(mut self, costs: Option<&EngineCosts>, report: &SweepReport) -> Self {
        self.engine_pair_cost = costs.and_then(|c| {
            let p = super::engine_pair_cost(
                c.ns_per_pair_test,
                &report.points,
                report.advice.model.as_ref(),
            )?;
            Some(EnginePairCostJson {
                steps: c.pair_steps,
                ns_per_pair_test: p.ns_per_pair_test,
                ns_per_node_visit: p.ns_per_node_visit,
                pair_cost: p.pair_cost,
                best: p.best.map(|index| PointRef {
                    index,
                    margin: report.points[index].point.margin,
                    lookahead: report.points[index].point.lookahead,
                }),
                ns_per_reinsert: c.ns_per_reinsert,
            })
        });
        self
    }

    /// The engine's pair-test cost in a line of the readable report, when there is one.
    #[must_use]
    pub fn engine_line(&self) -> Option<String> {
        let e = self.engine_pair_cost.as_ref()?;
        let best = e
            .best
            .as_ref()
            .map_or("no point ran to the end".to_owned(), |b| {
                format!("margin {}, look-ahead {} s", b.margin, b.lookahead)
            });
        Some(format!(
            "By the engine's own timings ({} steps): a pair test costs it {:.0} ns, a node \
             visit {:.1} ns here: a pair test as {:.1} node visits; best by work at that cost: \
             {best}.",
            e.steps, e.ns_per_pair_test, e.ns_per_node_visit, e.pair_cost
        ))
    }
}

/// The CSV `--csv` prints: the header and one row per point.
#[must_use]
pub fn csv(report: &SweepReport) -> String {
    let mut out = CSV_FIELDS.join(",");
    out.push('\n');
    for p in &report.points {
        out.push_str(&PointRow::of(p).csv_cells().join(","));
        out.push('\n');
    }
    out
}

/// The table and recommendation printed without `--json` or `--csv`.
#[must_use]
pub fn readable(scene: &Scene, file: &str, report: &SweepReport) -> String {
    readable_named(&scene.name, scene.sphere_count(), file, report)
}

/// [`readable`] for something named `name` with `spheres` spheres (a trace: the most boxes
/// one step holds).
#[must_use]
pub fn readable_named(name: &str, spheres: usize, file: &str, report: &SweepReport) -> String {
    let mut out = String::new();
    let mut line = |l: String| {
        out.push_str(&l);
        out.push('\n');
    };
    line(format!(
        "scene: \"{}\" ({}), {} spheres; {} points x {} steps on {} threads in {:.1} s",
        crate::text::excerpt(name, crate::text::MAX_EXCERPT_CHARS),
        crate::text::escape_controls(file),
        spheres,
        report.points.len(),
        report.steps,
        report.threads,
        report.elapsed_secs
    ));
    line(format!(
        "{:>9} {:>9} {:>11} {:>12} {:>7} {:>13} {:>24}",
        "margin",
        "lookahead",
        "reins/step",
        "pairs/step",
        "false+",
        "visits/step",
        "ms/step median [q1, q3]"
    ));
    for p in &report.points {
        let ms = &p.ms_per_step;
        let mut row = format!(
            "{:>9} {:>9} {:>11.2} {:>12.1} {:>6.1}% {:>13.0} {:>9.4} [{:.4}, {:.4}]",
            p.point.margin,
            p.point.lookahead,
            p.per_step(p.reinserts_total),
            p.per_step(p.candidate_pairs_total),
            100.0 * p.false_positive_share(),
            p.per_step(p.node_visits_total()),
            ms.median,
            ms.q1,
            ms.q3
        );
        if let Some(why) = &p.stopped {
            row.push_str(&format!("  stopped: {why}"));
        }
        line(row);
    }
    let a = &report.advice;
    let name = |i: usize| {
        let p = &report.points[i].point;
        format!("margin {}, look-ahead {} s", p.margin, p.lookahead)
    };
    if let Some(b) = &a.best_by_time {
        let near: Vec<String> = b.within_noise.iter().map(|&i| name(i)).collect();
        line(format!(
            "best by time: {} ({:.4} ms/step median, quartiles {:.4}-{:.4}, noise ±{:.4}); \
             within noise: {}",
            name(b.index),
            b.ms_per_step.median,
            b.ms_per_step.q1,
            b.ms_per_step.q3,
            b.noise_ms,
            if near.is_empty() {
                "none".to_owned()
            } else {
                near.join("; ")
            }
        ));
    }
    if let Some(b) = &a.best_by_work {
        line(format!(
            "best by work: {} ({} node visits; a pair test counted as {} node visits)",
            name(b.index),
            b.node_visits_total,
            b.pair_cost
        ));
        let moves: Vec<String> = super::best_by_pair_cost(&report.points, &super::PAIR_COSTS_SHOWN)
            .into_iter()
            .filter_map(|(cost, best)| {
                best.map(|i| {
                    let p = &report.points[i].point;
                    format!(
                        "{cost} -> margin {} (look-ahead {} s)",
                        p.margin, p.lookahead
                    )
                })
            })
            .collect();
        line(format!(
            "best by work as a pair test costs more node visits: {}",
            moves.join("; ")
        ));
    }
    line(format!("why: {}", a.why));
    line(format!("cost model: {}", a.model_note));
    out
}
