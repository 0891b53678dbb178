//! Sweep-and-prune along x: fat boxes kept sorted by their least x (an insertion sort between
//! searches, cheap when little moved), each tested only against the boxes that start before it
//! ends.

use super::{
    Bodies, Body, Broadphase, BroadphaseCore, BroadphaseError, BroadphaseKind, PairOutcome,
    SceneVector, UpdateOutcome, box_to_vec3, store::Store,
};
use crate::tree::{Aabb, TreeConfig, TreeError};
use glam::Vec3;

/// One fat box in sweep order.
#[derive(Clone, Copy, Debug)]
struct SweepEntry<V> {
    fat: Aabb<V>,
    /// The body's id.
    id: u32,
    /// The body's index in the store.
    index: u32,
}

/// Sorts fat boxes along x and sweeps; the sweep order and a copy of each fat box are kept
/// between searches, so a search after a step re-sorts a nearly sorted list and sweeps one
/// contiguous array.
#[derive(Clone, Debug)]
pub struct SweepAndPrune<V> {
    store: Store<V>,
    /// By least x (ties in any order: the pairs are a set).
    sweep: Vec<SweepEntry<V>>,
    /// Position in `sweep` of each store index.
    position: Vec<u32>,
}

impl<V: SceneVector> SweepAndPrune<V> {
    /// An empty broad phase; the margin and look-ahead are assumed valid (see [`super::make`]).
    #[must_use]
    pub fn new(config: TreeConfig) -> Self {
        Self {
            store: Store::new(config),
            sweep: Vec::new(),
            position: Vec::new(),
        }
    }

    /// Brings the sweep copies to the store's fat boxes: all of them, sorted afresh, when
    /// bodies came or went; otherwise only the recomputed ones (the sort waits for the search).
    fn refresh_sweep(&mut self) {
        if self.store.take_reshaped() {
            let store = &self.store;
            self.sweep = (0..store.ids.len())
                .map(|k| SweepEntry {
                    fat: store.fat[k],
                    id: store.ids[k],
                    // Indices fit u32: there is one per body id.
                    index: k as u32,
                })
                .collect();
            self.sweep
                .sort_unstable_by(|a, b| a.fat.min.axis(0).total_cmp(&b.fat.min.axis(0)));
            self.position = vec![0; self.sweep.len()];
            self.record_positions();
        } else {
            let store = &self.store;
            for &k in &store.refattened {
                self.sweep[self.position[k as usize] as usize].fat = store.fat[k as usize];
            }
        }
        self.store.refattened.clear();
    }

    /// Insertion sort by least x: linear in the number of boxes plus the number of swaps.
    fn resort(&mut self) {
        let e = &mut self.sweep;
        let mut swapped = false;
        for i in 1..e.len() {
            let item = e[i];
            let key = item.fat.min.axis(0);
            let mut j = i;
            while j > 0 && e[j - 1].fat.min.axis(0) > key {
                e[j] = e[j - 1];
                j -= 1;
            }
            if j != i {
                e[j] = item;
                swapped = true;
            }
        }
        if swapped {
            self.record_positions();
        }
    }

    fn record_positions(&mut self) {
        for (p, entry) in self.sweep.iter().enumerate() {
            // Positions fit u32, as indices do.
            self.position[entry.index as usize] = p as u32;
        }
    }
}

impl<V: SceneVector> BroadphaseCore<V> for SweepAndPrune<V> {
    fn kind(&self) -> BroadphaseKind {
        BroadphaseKind::Sap
    }

    fn update_bodies(
        &mut self,
        bodies: &(impl Bodies<V> + ?Sized),
        out: &mut UpdateOutcome,
    ) -> Result<(), BroadphaseError> {
        self.store.update(bodies, out)?;
        self.refresh_sweep();
        Ok(())
    }

    fn build(&mut self, bodies: &(impl Bodies<V> + ?Sized)) -> Result<(), BroadphaseError> {
        self.store.build(bodies)?;
        self.refresh_sweep();
        Ok(())
    }

    fn visit_pairs(&mut self, mut visit: impl FnMut(u32, u32)) -> Result<bool, BroadphaseError> {
        if self.store.is_dirty() {
            self.resort();
        }
        let sweep = &self.sweep;
        let recomputed = self.store.search(false, |_, statics, sink| {
            for (k, a) in sweep.iter().enumerate() {
                // A degenerate sweep (every box spans all x) makes a row as long as brute
                // force's: a cancel stops it within one.
                sink.check_cancel()?;
                let end_x = a.fat.max.axis(0);
                for b in &sweep[k + 1..] {
                    // Sorted by least x: once one starts after `a` ends, all later ones do.
                    if b.fat.min.axis(0) > end_x {
                        break;
                    }
                    if a.fat.overlaps(&b.fat) {
                        if !statics.is_empty()
                            && statics[a.index as usize]
                            && statics[b.index as usize]
                        {
                            sink.skip()?;
                            continue;
                        }
                        sink.push(if a.id < b.id {
                            (a.id, b.id)
                        } else {
                            (b.id, a.id)
                        })?;
                    }
                }
            }
            Ok(())
        })?;
        for &(a, b) in self.store.pairs() {
            visit(a, b);
        }
        Ok(recomputed)
    }

    fn bytes(&self) -> usize {
        self.store.bytes()
            + self.sweep.capacity() * std::mem::size_of::<SweepEntry<V>>()
            + self.position.capacity() * std::mem::size_of::<u32>()
    }
}

impl<V: SceneVector> Broadphase for SweepAndPrune<V> {
    fn kind(&self) -> BroadphaseKind {
        BroadphaseKind::Sap
    }

    fn update(&mut self, bodies: &[Body]) -> Result<UpdateOutcome, BroadphaseError> {
        self.update_from_scene(bodies)
    }

    fn build_from(&mut self, bodies: &[Body]) -> Result<(), BroadphaseError> {
        self.build_from_scene(bodies)
    }

    fn clone_box(&self) -> Box<dyn Broadphase> {
        Box::new(self.clone())
    }

    fn structure_hash(&self) -> u64 {
        self.store.structure_hash()
    }

    fn heap_bytes(&self) -> usize {
        self.bytes()
    }

    fn set_pair_limit(&mut self, limit: usize) {
        self.store.set_pair_limit(limit);
    }

    fn set_static_ids(&mut self, ids: &[u32]) {
        self.store.set_static_ids(ids);
    }

    fn find_pairs(&mut self) -> Result<PairOutcome, BroadphaseError> {
        let recomputed = self.visit_pairs(|_, _| {})?;
        Ok(PairOutcome {
            pairs: self.store.sorted_pairs().to_vec(),
            recomputed,
        })
    }

    fn fat_aabb(&self, id: u32) -> Option<Aabb<Vec3>> {
        self.store.fat_aabb(id).map(|b| box_to_vec3(&b))
    }

    fn set_config(&mut self, config: TreeConfig) -> Result<(), TreeError> {
        config.check()?;
        self.store.set_config(config);
        self.refresh_sweep();
        Ok(())
    }
}
