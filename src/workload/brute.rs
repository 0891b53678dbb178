//! Brute force for the workload: every pair of fat boxes tested, the reference every other
//! broad phase must match.

use super::{PairTally, Workload, WorkloadBroadphase};

/// Tests all `n (n - 1) / 2` pairs each step; the fat boxes are kept as four arrays so the
/// inner loop is a straight scan.
#[derive(Clone, Debug, Default)]
pub struct BruteForce {
    min_x: Vec<f32>,
    min_y: Vec<f32>,
    max_x: Vec<f32>,
    max_y: Vec<f32>,
}

impl BruteForce {
    /// An empty brute force.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

impl WorkloadBroadphase for BruteForce {
    fn name(&self) -> String {
        "brute force".to_owned()
    }

    fn build(&mut self, workload: &Workload) {
        let fat = workload.fat_boxes();
        self.min_x = fat.iter().map(|b| b.min.x).collect();
        self.min_y = fat.iter().map(|b| b.min.y).collect();
        self.max_x = fat.iter().map(|b| b.max.x).collect();
        self.max_y = fat.iter().map(|b| b.max.y).collect();
    }

    fn update(&mut self, workload: &Workload) -> usize {
        let fat = workload.fat_boxes();
        for &i in workload.moved() {
            let (i, b) = (i as usize, fat[i as usize]);
            self.min_x[i] = b.min.x;
            self.min_y[i] = b.min.y;
            self.max_x[i] = b.max.x;
            self.max_y[i] = b.max.y;
        }
        workload.moved().len()
    }

    fn find_pairs(&mut self, _workload: &Workload, tally: &mut PairTally) {
        let n = self.min_x.len();
        for i in 0..n {
            let (ax0, ay0, ax1, ay1) = (self.min_x[i], self.min_y[i], self.max_x[i], self.max_y[i]);
            let rest = i + 1..n;
            let (bx0, by0) = (&self.min_x[rest.clone()], &self.min_y[rest.clone()]);
            let (bx1, by1) = (&self.max_x[rest.clone()], &self.max_y[rest]);
            for (k, (((&x0, &y0), &x1), &y1)) in bx0.iter().zip(by0).zip(bx1).zip(by1).enumerate() {
                if (x0 <= ax1) & (ax0 <= x1) & (y0 <= ay1) & (ay0 <= y1) {
                    // Ids fit u32 (at most MAX_CIRCLES).
                    tally.add(i as u32, (i + 1 + k) as u32);
                }
            }
        }
    }
}
