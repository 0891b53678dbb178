//! The recommendation of a sweep: the point of least measured time (with its spread and the
//! points within noise of it), the point of least work, one sentence on why, and a
//! least-squares cost model with its fit.
//!
//! Only points that ran every step count (a point stopped by the pair limit is left out).
//!
//! - **Best by time**: the least median milliseconds a step; ties to the smaller margin,
//!   then the smaller look-ahead, then the earlier point. *Within noise*: a point whose
//!   median's notch (`median ± 1.57 * IQR / sqrt(steps)`, McGill, Tukey and Larsen 1978)
//!   overlaps the best's. Points run at different moments on a machine whose speed may
//!   drift, so a point within noise is as good a choice as the best.
//! - **Best by work**: the least node visits (updates and pair finding); ties as above. Work
//!   counts are the same on every machine.
//! - **Why**: along the margins of the best-by-work point's look-ahead and configuration, the
//!   counts at the smallest and the largest margin: reinserts and the updates' share of the
//!   node visits below, false positives and pair finding's share above.
//! - **Cost model**: `ms a step ≈ a * reinserts a step + b * pair tests a step + c` (pair
//!   tests: the pair search's node tests), fitted by least squares to the mean times of the
//!   points of the best-by-time point's configuration (at least 4 points). It is said to
//!   predict the curve when `R² >= R_SQUARED_FIT` and both unit costs are >= 0; otherwise the
//!   note says it does not.

use super::{PointResult, Spread};
use crate::scene::PAIR_COST_RANGE;
use crate::tree::TreeConfig;

/// The least R² at which the cost model is said to predict the measured curve: 90% of the
/// variance of the times across points explained by the counts.
pub const R_SQUARED_FIT: f64 = 0.9;

/// The point of least median time.
#[derive(Clone, Debug, PartialEq)]
pub struct BestByTime {
    /// Its index in the sweep's points.
    pub index: usize,
    /// Its milliseconds a step (median and spread).
    pub ms_per_step: Spread,
    /// Half the width of its median's notch, ms: the noise it is judged with.
    pub noise_ms: f64,
    /// The other points whose median's notch overlaps this one's, in grid order.
    pub within_noise: Vec<usize>,
}

/// The point of least work.
#[derive(Clone, Debug, PartialEq)]
pub struct BestByWork {
    /// Its index in the sweep's points.
    pub index: usize,
    /// Its node visits (updates and pair finding).
    pub node_visits_total: u64,
    /// What was minimised: node visits plus `pair_cost` times the candidate pairs
    /// ([`PointResult::work_at`]), rounded.
    pub work_total: u64,
    /// What a pair test was counted as, in node visits.
    pub pair_cost: f64,
}

/// How the point of least work moves with the cost of a pair test: for each cost, the point
/// of least [`PointResult::work_at`] (`None` when no point ran to the end).
#[must_use]
pub fn best_by_pair_cost(points: &[PointResult], costs: &[f64]) -> Vec<(f64, Option<usize>)> {
    costs
        .iter()
        .map(|&cost| (cost, least_work(points, cost)))
        .collect()
}

/// The pair-test costs the advice shows its recommendation at.
pub const PAIR_COSTS_SHOWN: [f64; 5] = [1.0, 3.0, 10.0, 30.0, 100.0];

/// The usable point of least work at `pair_cost`, ties broken by [`tie_order`].
fn least_work(points: &[PointResult], pair_cost: f64) -> Option<usize> {
    (0..points.len())
        .filter(|&i| points[i].stopped.is_none() && points[i].steps > 0)
        .min_by(|&a, &b| {
            points[a]
                .work_at(pair_cost)
                .total_cmp(&points[b].work_at(pair_cost))
                .then(tie_order(points, a, b))
        })
}

/// `ms a step ≈ ms_per_reinsert * reinserts + ms_per_pair_test * pair tests + ms_fixed`.
#[derive(Clone, Debug, PartialEq)]
pub struct CostModel {
    /// Milliseconds per reinsert.
    pub ms_per_reinsert: f64,
    /// Milliseconds per node test of the pair search.
    pub ms_per_pair_test: f64,
    /// Milliseconds a step the counts do not explain (moving spheres, containment tests).
    pub ms_fixed: f64,
    /// The share of the variance of the mean times the model explains.
    pub r_squared: f64,
    /// True when `r_squared >= R_SQUARED_FIT` and both unit costs are >= 0.
    pub fits: bool,
    /// The points it was fitted to (indices), in grid order.
    pub points: Vec<usize>,
    /// Its prediction of each of those points' mean milliseconds a step.
    pub predicted_ms: Vec<f64>,
}

/// The recommendation.
#[derive(Clone, Debug, PartialEq)]
pub struct Advice {
    /// The point of least median time; `None` when no point ran to the end.
    pub best_by_time: Option<BestByTime>,
    /// The point of least work; `None` when no point ran to the end.
    pub best_by_work: Option<BestByWork>,
    /// One sentence on why the least work is where it is, with the counts.
    pub why: String,
    /// The cost model, when one could be fitted.
    pub model: Option<CostModel>,
    /// One sentence on the model: its formula and fit, and whether it predicts the curve; or
    /// why there is none.
    pub model_note: String,
}

/// A pair test's cost in this sweep's node visits, from the engine's own nanoseconds a pair
/// test (fitted from its stream's timings): what the Advisor weighs the pairs by when the
/// engine said what its narrow phase costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnginePairCost {
    /// The engine's nanoseconds a pair test.
    pub ns_per_pair_test: f64,
    /// Nanoseconds a node visit of the tree costs here, from the sweep's own times.
    pub ns_per_node_visit: f64,
    /// Their ratio, within [`PAIR_COST_RANGE`]: a pair test as this many node visits.
    pub pair_cost: f64,
    /// The point of least work at that cost.
    pub best: Option<usize>,
}

/// [`EnginePairCost`] for `points`: a node visit's cost is the cost model's
/// (`model`, when it fits the times), else the mean time a step over the node visits a step,
/// fitted through the origin over the points that ran to the end. `None` when no point did or
/// the costs are not positive.
#[must_use]
pub fn engine_pair_cost(
    ns_per_pair_test: f64,
    points: &[PointResult],
    model: Option<&CostModel>,
) -> Option<EnginePairCost> {
    if !(ns_per_pair_test.is_finite() && ns_per_pair_test > 0.0) {
        return None;
    }
    let from_model = model
        .filter(|m| m.fits && m.ms_per_pair_test > 0.0)
        .map(|m| m.ms_per_pair_test * 1e6);
    let ns_per_node_visit = from_model.or_else(|| {
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for p in points.iter().filter(|p| p.stopped.is_none() && p.steps > 0) {
            let x = p.per_step(p.node_visits_total());
            let y = p.ms_per_step.mean * 1e6;
            if x.is_finite() && y.is_finite() {
                sxy += x * y;
                sxx += x * x;
            }
        }
        (sxx > 0.0).then(|| sxy / sxx)
    })?;
    if !(ns_per_node_visit.is_finite() && ns_per_node_visit > 0.0) {
        return None;
    }
    let pair_cost =
        (ns_per_pair_test / ns_per_node_visit).clamp(PAIR_COST_RANGE.0, PAIR_COST_RANGE.1);
    Some(EnginePairCost {
        ns_per_pair_test,
        ns_per_node_visit,
        pair_cost,
        best: least_work(points, pair_cost),
    })
}

/// True when two configurations differ only in margin and look-ahead.
fn same_strategy(a: &TreeConfig, b: &TreeConfig) -> bool {
    (a.insertion, a.balancing, a.pairs, a.update) == (b.insertion, b.balancing, b.pairs, b.update)
}

/// The order of ties: smaller margin, smaller look-ahead, earlier point.
fn tie_order(points: &[PointResult], a: usize, b: usize) -> std::cmp::Ordering {
    let key = |i: usize| (points[i].point.margin, points[i].point.lookahead, i);
    let (ka, kb) = (key(a), key(b));
    ka.0.total_cmp(&kb.0)
        .then(ka.1.total_cmp(&kb.1))
        .then(ka.2.cmp(&kb.2))
}

/// The recommendation for the points of a sweep (in grid order), a pair test counted as one
/// node visit.
#[must_use]
pub fn advise(points: &[PointResult]) -> Advice {
    advise_with(points, 1.0)
}

/// The recommendation for the points of a sweep (in grid order), a pair test counted as
/// `pair_cost` node visits.
#[must_use]
pub fn advise_with(points: &[PointResult], pair_cost: f64) -> Advice {
    let usable: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].stopped.is_none() && points[i].steps > 0)
        .collect();
    let best_time = usable.iter().copied().min_by(|&a, &b| {
        let (ta, tb) = (points[a].ms_per_step.median, points[b].ms_per_step.median);
        ta.total_cmp(&tb).then(tie_order(points, a, b))
    });
    let best_work = least_work(points, pair_cost);
    let (Some(best_time), Some(best_work)) = (best_time, best_work) else {
        let none = "No point ran every step (each stopped at the pair limit): nothing to \
                    recommend; lower the margins or raise the pair limit."
            .to_owned();
        return Advice {
            best_by_time: None,
            best_by_work: None,
            why: none.clone(),
            model: None,
            model_note: none,
        };
    };
    let b = &points[best_time].ms_per_step;
    let within_noise = usable
        .iter()
        .copied()
        .filter(|&i| i != best_time)
        .filter(|&i| {
            let p = &points[i].ms_per_step;
            p.median - p.notch() <= b.median + b.notch()
        })
        .collect();
    let (model, model_note) = fit_model(points, &usable, best_time);
    Advice {
        best_by_time: Some(BestByTime {
            index: best_time,
            ms_per_step: *b,
            noise_ms: b.notch(),
            within_noise,
        }),
        best_by_work: Some(BestByWork {
            index: best_work,
            node_visits_total: points[best_work].node_visits_total(),
            work_total: points[best_work].work_at(pair_cost).round() as u64,
            pair_cost,
        }),
        why: why(points, &usable, best_work),
        model,
        model_note,
    }
}

/// The sentence on why the least work is at `best`'s margin.
fn why(points: &[PointResult], usable: &[usize], best: usize) -> String {
    let b = &points[best];
    let mut line: Vec<usize> = usable
        .iter()
        .copied()
        .filter(|&i| {
            let p = &points[i].point;
            p.lookahead == b.point.lookahead && same_strategy(&p.config, &b.point.config)
        })
        .collect();
    line.sort_by(|&x, &y| points[x].point.margin.total_cmp(&points[y].point.margin));
    let (Some(&lo), Some(&hi)) = (line.first(), line.last()) else {
        return String::new();
    };
    if lo == hi {
        return format!(
            "Only one margin ({}) ran every step at look-ahead {} s: nothing to compare.",
            b.point.margin, b.point.lookahead
        );
    }
    let (lo, hi) = (&points[lo], &points[hi]);
    let pct = |x: f64| 100.0 * x;
    let update_share = |p: &PointResult| {
        let total = p.node_visits_total();
        if total == 0 {
            0.0
        } else {
            p.work.update_node_visits as f64 / total as f64
        }
    };
    let low_side = format!(
        "at {}: {:.1} reinserts a step, {:.0}% of the node visits in updates",
        lo.point.margin,
        lo.per_step(lo.reinserts_total),
        pct(update_share(lo))
    );
    let high_side = format!(
        "at {}: {:.0}% of {:.1} candidate pairs a step are not contacts, {:.0}% of the node \
         visits in pair finding",
        hi.point.margin,
        pct(hi.false_positive_share()),
        hi.per_step(hi.candidate_pairs_total),
        pct(1.0 - update_share(hi))
    );
    // Each claim only when the counts bear it out: updates cost more below the best, pair
    // finding more above it.
    let updates_fall = lo.work.update_node_visits > b.work.update_node_visits;
    let pairs_grow = hi.work.pair_node_visits + hi.candidate_pairs_total
        > b.work.pair_node_visits + b.candidate_pairs_total;
    let m = b.point.margin;
    if m == lo.point.margin && pairs_grow {
        format!(
            "The least work is at the smallest margin tried, {m}: its reinserts cost less than \
             the false positives a wider margin brings ({high_side}); a smaller margin may do \
             better still."
        )
    } else if m == hi.point.margin && updates_fall {
        format!(
            "The least work is at the largest margin tried, {m}: below it reinserts dominate \
             ({low_side}); a larger margin may do better still ({high_side})."
        )
    } else if updates_fall && pairs_grow {
        format!(
            "Below margin {m} reinserts dominate ({low_side}); above it false positives do \
             ({high_side})."
        )
    } else {
        format!(
            "The least work is at margin {m} ({} node visits and pair tests a step; {:.0} at \
             {}, {:.0} at {}); neither reinserts nor false positives clearly drive it.",
            b.per_step(b.work_total()) as u64,
            lo.per_step(lo.work_total()),
            lo.point.margin,
            hi.per_step(hi.work_total()),
            hi.point.margin
        )
    }
}

/// Least squares of the mean time a step on reinserts and pair tests a step (with a
/// constant) over the usable points of `best`'s configuration.
fn fit_model(points: &[PointResult], usable: &[usize], best: usize) -> (Option<CostModel>, String) {
    let config = &points[best].point.config;
    let chosen: Vec<usize> = usable
        .iter()
        .copied()
        .filter(|&i| same_strategy(&points[i].point.config, config))
        .collect();
    if chosen.len() < 4 {
        return (
            None,
            format!(
                "No cost model: {} point(s) of this configuration ran every step; a fit of \
                 three unit costs needs at least 4.",
                chosen.len()
            ),
        );
    }
    let rows: Vec<(f64, f64, f64)> = chosen
        .iter()
        .map(|&i| {
            let p = &points[i];
            (
                p.per_step(p.reinserts_total),
                p.per_step(p.work.pair_node_visits),
                p.ms_per_step.mean,
            )
        })
        .collect();
    let n = rows.len() as f64;
    let mean = |f: fn(&(f64, f64, f64)) -> f64| rows.iter().map(f).sum::<f64>() / n;
    let (m1, m2, my) = (mean(|r| r.0), mean(|r| r.1), mean(|r| r.2));
    let (mut s11, mut s12, mut s22, mut s1y, mut s2y, mut syy) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for &(x1, x2, y) in &rows {
        let (d1, d2, dy) = (x1 - m1, x2 - m2, y - my);
        s11 += d1 * d1;
        s12 += d1 * d2;
        s22 += d2 * d2;
        s1y += d1 * dy;
        s2y += d2 * dy;
        syy += dy * dy;
    }
    let det = s11 * s22 - s12 * s12;
    if det.is_nan() || det <= 1e-9 * s11 * s22 || syy <= 0.0 {
        return (
            None,
            "No cost model: across these points the reinserts and the pair tests do not vary \
             independently (or the times do not vary), so their unit costs cannot be told apart."
                .to_owned(),
        );
    }
    let a = (s1y * s22 - s2y * s12) / det;
    let b = (s2y * s11 - s1y * s12) / det;
    let c = my - a * m1 - b * m2;
    let predicted: Vec<f64> = rows.iter().map(|r| a * r.0 + b * r.1 + c).collect();
    let ss_res: f64 = rows
        .iter()
        .zip(&predicted)
        .map(|(r, p)| (r.2 - p) * (r.2 - p))
        .sum();
    let r2 = 1.0 - ss_res / syy;
    let fits = r2 >= R_SQUARED_FIT && a >= 0.0 && b >= 0.0;
    let sign = if c < 0.0 { '-' } else { '+' };
    let formula = format!(
        "ms a step ≈ {a:.3e} x reinserts + {b:.3e} x pair tests {sign} {:.4} (fitted to the \
         mean times of {} points; R² = {r2:.3})",
        c.abs(),
        rows.len()
    );
    let note = if fits {
        format!("{formula}: the model predicts the measured curve.")
    } else if r2 < R_SQUARED_FIT {
        format!(
            "{formula}: R² is below {R_SQUARED_FIT}, so the model does not predict the measured \
             times; trust the measured best, not the model."
        )
    } else {
        format!(
            "{formula}: a unit cost came out negative, so the model does not describe these \
             times; trust the measured best, not the model."
        )
    };
    let model = CostModel {
        ms_per_reinsert: a,
        ms_per_pair_test: b,
        ms_fixed: c,
        r_squared: r2,
        fits,
        points: chosen,
        predicted_ms: predicted,
    };
    (Some(model), note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::SweepPoint;
    use crate::tree::WorkCounts;

    /// A point with the given counts a step over 100 steps and a time a step in ms.
    fn point(
        margin: f32,
        reinserts: u64,
        pair_tests: u64,
        candidates: u64,
        ms: f64,
    ) -> PointResult {
        let steps = 100;
        let spread = Spread {
            median: ms,
            q1: ms,
            q3: ms,
            min: ms,
            max: ms,
            mean: ms,
            count: steps,
        };
        PointResult {
            point: SweepPoint {
                margin,
                lookahead: 0.0,
                config: TreeConfig {
                    margin,
                    ..TreeConfig::default()
                },
            },
            steps,
            reinserts_total: reinserts * steps,
            candidate_pairs_total: candidates * steps,
            contacts_total: 10 * steps,
            work: WorkCounts {
                update_node_visits: 20 * reinserts * steps,
                update_leaf_visits: 0,
                pair_node_visits: pair_tests * steps,
                pair_leaf_visits: 0,
            },
            ms_per_step: spread,
            ms_update: spread,
            ms_pairs: spread,
            stopped: None,
        }
    }

    #[test]
    fn the_engines_pair_test_is_counted_in_node_visits_of_this_machine() {
        // 2 ns a node visit exactly (20 x reinserts + pair tests visits a step), no model.
        let ms = |reinserts: u64, pair_tests: u64| (20 * reinserts + pair_tests) as f64 * 2e-6;
        let points = [
            point(0.05, 100, 1_000, 900, ms(100, 1_000)),
            point(0.1, 50, 1_200, 1_000, ms(50, 1_200)),
            point(0.2, 10, 1_600, 1_400, ms(10, 1_600)),
        ];
        let c = engine_pair_cost(60.0, &points, None).expect("costed");
        assert!((c.ns_per_node_visit - 2.0).abs() < 1e-9, "{c:?}");
        assert!((c.pair_cost - 30.0).abs() < 1e-6, "{c:?}");
        // At 30 visits a pair: 3000 + 27000, 2200 + 30000, 1800 + 42000: the smallest margin.
        assert_eq!(c.best, Some(0));
        // At a cheap pair test the widest margin does least work.
        assert_eq!(
            engine_pair_cost(0.2, &points, None).and_then(|c| c.best),
            Some(2)
        );
        // A fitting model's node-visit cost is taken instead.
        let model = CostModel {
            ms_per_reinsert: 0.0,
            ms_per_pair_test: 4e-6,
            ms_fixed: 0.0,
            r_squared: 1.0,
            fits: true,
            points: vec![0, 1, 2],
            predicted_ms: vec![],
        };
        let c = engine_pair_cost(60.0, &points, Some(&model)).expect("costed");
        assert!((c.pair_cost - 15.0).abs() < 1e-6, "{c:?}");
        assert_eq!(engine_pair_cost(f64::NAN, &points, None), None);
        assert_eq!(engine_pair_cost(60.0, &[], None), None);
    }

    #[test]
    fn an_exact_cost_model_is_found_and_said_to_fit() {
        // ms = 0.001 * reinserts + 0.0001 * pair tests + 0.01, exactly.
        let data = [
            (0.0, 100, 1000),
            (0.1, 40, 1500),
            (0.2, 10, 2500),
            (0.3, 5, 4000),
        ];
        let points: Vec<PointResult> = data
            .iter()
            .map(|&(m, r, t)| point(m, r, t, t / 10, 0.001 * r as f64 + 0.0001 * t as f64 + 0.01))
            .collect();
        let advice = advise(&points);
        let model = advice.model.expect("a model");
        assert!((model.ms_per_reinsert - 0.001).abs() < 1e-12);
        assert!((model.ms_per_pair_test - 0.0001).abs() < 1e-12);
        assert!((model.ms_fixed - 0.01).abs() < 1e-12);
        assert!((model.r_squared - 1.0).abs() < 1e-12);
        assert!(model.fits);
        assert_eq!(model.points, vec![0, 1, 2, 3]);
        assert!(
            advice
                .model_note
                .ends_with("the model predicts the measured curve.")
        );
        // Times 0.1 + 0.1 + 0.01, 0.04 + 0.15 + 0.01, 0.01 + 0.25 + 0.01, 0.005 + 0.4 + 0.01:
        // the second is least.
        assert_eq!(advice.best_by_time.expect("a best").index, 1);
        // Node visits 20 * r + t a step: 3000, 2300, 2700, 4100; plus t / 10 candidate pairs:
        // work 3100, 2450, 2950, 4500.
        assert_eq!(
            advice.best_by_work,
            Some(BestByWork {
                index: 1,
                node_visits_total: 230_000,
                work_total: 245_000,
                pair_cost: 1.0,
            })
        );
        // A pair test as 30 node visits: work 6000, 6800, 10200, 16100 a step; the first is
        // least. How the best moves with the cost: visits alone and up to 10 keep the second.
        assert_eq!(
            advise_with(&points, 30.0).best_by_work,
            Some(BestByWork {
                index: 0,
                node_visits_total: 300_000,
                work_total: 600_000,
                pair_cost: 30.0,
            })
        );
        assert_eq!(
            best_by_pair_cost(&points, &[0.0, 1.0, 10.0, 30.0]),
            vec![
                (0.0, Some(1)),
                (1.0, Some(1)),
                (10.0, Some(1)),
                (30.0, Some(0))
            ]
        );
        assert_eq!(
            advice.why,
            "Below margin 0.1 reinserts dominate (at 0: 100.0 reinserts a step, 67% of the \
             node visits in updates); above it false positives do (at 0.3: 98% of 400.0 \
             candidate pairs a step are not contacts, 98% of the node visits in pair finding)."
        );
    }

    #[test]
    fn times_the_counts_do_not_explain_are_said_not_to_fit() {
        let data = [
            (0.0, 100, 1000, 5.0),
            (0.1, 40, 1500, 1.0),
            (0.2, 10, 2500, 4.0),
            (0.3, 5, 4000, 2.0),
            (0.4, 4, 4100, 4.5),
        ];
        let points: Vec<PointResult> = data
            .iter()
            .map(|&(m, r, t, ms)| point(m, r, t, t / 10, ms))
            .collect();
        let advice = advise(&points);
        let model = advice.model.expect("a model");
        assert!(!model.fits);
        assert!(model.r_squared < R_SQUARED_FIT);
        assert!(
            advice
                .model_note
                .contains("so the model does not predict the measured times"),
            "{}",
            advice.model_note
        );
        // Every time is exact (no spread): only the best itself is within its noise.
        let best = advice.best_by_time.expect("a best");
        assert_eq!(best.index, 1);
        assert_eq!(best.noise_ms, 0.0);
        assert_eq!(best.within_noise, Vec::<usize>::new());
    }

    #[test]
    fn ties_go_to_the_smaller_margin_and_stopped_points_are_left_out() {
        let mut points = vec![
            point(0.2, 10, 1000, 100, 1.0),
            point(0.1, 10, 1000, 100, 1.0),
            point(0.0, 1, 1, 10, 0.1),
        ];
        points[2].stopped = Some("step 3: more than 10 candidate pairs".to_owned());
        let advice = advise(&points);
        assert_eq!(advice.best_by_time.expect("a best").index, 1);
        assert_eq!(advice.best_by_work.expect("a best").index, 1);
        assert_eq!(
            advice.model_note,
            "No cost model: 2 point(s) of this configuration ran every step; a fit of three \
             unit costs needs at least 4."
        );
    }

    #[test]
    fn no_point_to_the_end_means_no_recommendation() {
        let mut p = point(0.0, 1, 1, 10, 1.0);
        p.stopped = Some("step 0: more than 1 candidate pairs".to_owned());
        let advice = advise(&[p]);
        assert_eq!(advice.best_by_time, None);
        assert_eq!(advice.best_by_work, None);
        assert!(advice.why.starts_with("No point ran every step"));
    }

    #[test]
    fn notches_that_overlap_are_within_noise() {
        let mut points = vec![point(0.0, 1, 1, 100, 1.0), point(0.1, 1, 1, 100, 1.05)];
        points.push(point(0.2, 1, 1, 100, 2.0));
        for p in &mut points {
            // IQR 0.5 over 100 steps: notch 1.57 * 0.5 / 10 = 0.0785.
            p.ms_per_step.q1 = p.ms_per_step.median - 0.25;
            p.ms_per_step.q3 = p.ms_per_step.median + 0.25;
        }
        let best = advise(&points).best_by_time.expect("a best");
        assert_eq!(best.index, 0);
        assert!((best.noise_ms - 0.0785).abs() < 1e-12);
        assert_eq!(best.within_noise, vec![1]);
    }
}
