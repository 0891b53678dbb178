//! The recent steps' figures (a ring of [`Sample`]s), which the statistics panel charts.

use crate::scene::StepReport;
use std::collections::VecDeque;

/// How many recent steps the charts keep.
pub const HISTORY_LEN: usize = 600;

/// One step's figures, for the charts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// The step.
    pub step: u64,
    /// Milliseconds moving bodies and updating the broad phase.
    pub update_ms: f64,
    /// Milliseconds finding pairs and contacts.
    pub pairs_ms: f64,
    /// Milliseconds building the views' meshes (the frame before).
    pub draw_ms: f64,
    /// Leaves reinserted.
    pub reinserts: usize,
    /// Candidate pairs.
    pub candidates: usize,
    /// Contacts.
    pub contacts: usize,
    /// Tree height.
    pub height: u32,
    /// Tree area ratio (SAH cost).
    pub area_ratio: f32,
}

/// A ring of the recent samples.
#[derive(Clone, Debug, Default)]
pub struct RecentSteps {
    samples: VecDeque<Sample>,
}

impl RecentSteps {
    /// Records a report.
    pub fn push(&mut self, report: &StepReport, draw_ms: f32) {
        if self.samples.len() == HISTORY_LEN {
            self.samples.pop_front();
        }
        let tree = report.tree.unwrap_or_default();
        self.samples.push_back(Sample {
            step: report.step,
            update_ms: report.update_secs * 1e3,
            pairs_ms: report.pairs_secs * 1e3,
            draw_ms: f64::from(draw_ms),
            reinserts: report.reinserted.len(),
            candidates: report.candidate_pairs.len(),
            contacts: report.contacts.len(),
            height: tree.height,
            area_ratio: tree.area_ratio,
        });
    }

    /// Forgets everything (after a restart).
    pub fn clear(&mut self) {
        self.samples.clear();
    }

    /// The samples, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter()
    }

    /// Number of samples.
    #[must_use]
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// True when empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Median of a figure over the samples (0 when empty): unlike the mean, it is not moved
    /// by a rare slow step (the first step's build, a busy machine).
    #[must_use]
    pub fn median(&self, f: impl Fn(&Sample) -> f64) -> f64 {
        let mut v: Vec<f64> = self
            .samples
            .iter()
            .map(f)
            .filter(|x| x.is_finite())
            .collect();
        if v.is_empty() {
            return 0.0;
        }
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        if v.len() % 2 == 1 {
            v[mid]
        } else {
            0.5 * (v[mid - 1] + v[mid])
        }
    }

    /// Mean of a figure over the samples.
    #[must_use]
    pub fn mean(&self, f: impl Fn(&Sample) -> f64) -> f64 {
        if self.samples.is_empty() {
            0.0
        } else {
            self.samples.iter().map(f).sum::<f64>() / self.samples.len() as f64
        }
    }
}

/// The top of a chart's y axis over `values`: a quarter above their 95th percentile (at least
/// a little above 0), and how many values lie above it. A rare spike (a slow frame, a
/// rebuild) is cut at the top, and the chart says how many were, rather than flattening every
/// other step to the floor.
#[must_use]
pub fn chart_top(values: impl Iterator<Item = f64>) -> (f64, usize) {
    let mut v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return (1.0, 0);
    }
    v.sort_by(f64::total_cmp);
    let p95 = v[((v.len() - 1) as f64 * 0.95).round() as usize];
    let top = if p95 > 0.0 {
        p95 * 1.25
    } else {
        v[v.len() - 1].max(1.0)
    };
    let above = v.iter().filter(|&&x| x > top).count();
    (top, above)
}

/// A number in a few characters for a chart's axis: 950, 1.2k, 3.4M; fractions to two digits.
#[must_use]
pub fn compact_number(x: f64) -> String {
    let a = x.abs();
    if a >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", x / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else if a >= 10.0 || x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rare_spike_is_cut_and_counted_and_a_steady_series_is_not() {
        // 99 steps of 1 ms and one of 40 ms: the chart shows 0 to 1.25 and says one is above.
        let spiky = (0..100).map(|i| if i == 50 { 40.0 } else { 1.0 });
        assert_eq!(chart_top(spiky), (1.25, 1));
        let steady = (0..100).map(f64::from);
        let (top, above) = chart_top(steady);
        assert_eq!(top, 94.0 * 1.25);
        assert_eq!(above, 0);
        assert_eq!(chart_top(std::iter::empty()), (1.0, 0));
        assert_eq!(chart_top([0.0, 0.0, f64::NAN].into_iter()), (1.0, 0));
    }

    #[test]
    fn the_median_ignores_a_rare_slow_step() {
        let mut h = RecentSteps::default();
        assert_eq!(h.median(|s| s.update_ms), 0.0);
        for (k, ms) in [40.0, 1.0, 2.0, 1.5].into_iter().enumerate() {
            let report = crate::scene::StepReport {
                step: k as u64,
                update_secs: ms / 1e3,
                ..Default::default()
            };
            h.push(&report, 0.0);
        }
        let median = h.median(|s| s.update_ms);
        assert!((median - 1.75).abs() < 1e-9, "{median}");
    }

    #[test]
    fn axis_numbers_stay_short() {
        assert_eq!(compact_number(0.0), "0");
        assert_eq!(compact_number(0.375), "0.38");
        assert_eq!(compact_number(950.0), "950");
        assert_eq!(compact_number(1234.0), "1.2k");
        assert_eq!(compact_number(45_000.0), "45k");
        assert_eq!(compact_number(3_400_000.0), "3.4M");
    }
}
