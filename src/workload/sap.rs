//! Sweep-and-prune for the workload: fat boxes kept sorted by their least x (insertion sort,
//! cheap when little moved), then one sweep along x testing y.

use super::{PairTally, Workload, WorkloadBroadphase};

/// One fat box in sweep order.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    min_x: f32,
    max_x: f32,
    min_y: f32,
    max_y: f32,
    id: u32,
}

/// Sweep-and-prune along x with a persistent sorted order.
#[derive(Clone, Debug, Default)]
pub struct SweepAndPrune {
    entries: Vec<Entry>,
    /// Position of each id in `entries`.
    slot_of: Vec<u32>,
}

impl SweepAndPrune {
    /// An empty sweep-and-prune.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn insertion_sort(&mut self) {
        let e = &mut self.entries;
        for i in 1..e.len() {
            let item = e[i];
            let mut j = i;
            while j > 0 && e[j - 1].min_x > item.min_x {
                e[j] = e[j - 1];
                j -= 1;
            }
            e[j] = item;
        }
        for (slot, entry) in self.entries.iter().enumerate() {
            // Slots fit u32 (at most MAX_CIRCLES).
            self.slot_of[entry.id as usize] = slot as u32;
        }
    }
}

impl WorkloadBroadphase for SweepAndPrune {
    fn name(&self) -> String {
        "sweep-and-prune".to_owned()
    }

    fn build(&mut self, workload: &Workload) {
        self.entries = workload
            .fat_boxes()
            .iter()
            .enumerate()
            .map(|(id, b)| Entry {
                min_x: b.min.x,
                max_x: b.max.x,
                min_y: b.min.y,
                max_y: b.max.y,
                id: id as u32,
            })
            .collect();
        self.entries.sort_by(|a, b| a.min_x.total_cmp(&b.min_x));
        self.slot_of = vec![0; self.entries.len()];
        self.insertion_sort();
    }

    fn update(&mut self, workload: &Workload) -> usize {
        let fat = workload.fat_boxes();
        for &id in workload.moved() {
            let b = fat[id as usize];
            let e = &mut self.entries[self.slot_of[id as usize] as usize];
            e.min_x = b.min.x;
            e.max_x = b.max.x;
            e.min_y = b.min.y;
            e.max_y = b.max.y;
        }
        if !workload.moved().is_empty() {
            self.insertion_sort();
        }
        workload.moved().len()
    }

    fn find_pairs(&mut self, _workload: &Workload, tally: &mut PairTally) {
        let e = &self.entries;
        for (i, a) in e.iter().enumerate() {
            for b in &e[i + 1..] {
                if b.min_x > a.max_x {
                    break;
                }
                if b.min_y <= a.max_y && a.min_y <= b.max_y {
                    tally.add(a.id, b.id);
                }
            }
        }
    }
}
