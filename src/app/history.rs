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
pub struct History {
    samples: VecDeque<Sample>,
}

impl History {
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
