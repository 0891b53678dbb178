//! Sweep-and-prune along x: fat boxes sorted by their least x, each tested only against the
//! boxes that start before it ends.

use super::{
    Body, Broadphase, BroadphaseError, BroadphaseKind, PairOutcome, SceneVector, UpdateOutcome,
    box_to_vec3, brute::overlaps, store::Store,
};
use crate::tree::{Aabb, TreeConfig, TreeError};
use glam::Vec3;

/// Sorts fat boxes along x and sweeps; the sort order is kept between searches, so a
/// nearly sorted list sorts fast.
#[derive(Clone, Debug)]
pub struct SweepAndPrune<V> {
    store: Store<V>,
    /// Indices into the store's entries, by least x then id (rebuilt when bodies come or go).
    order: Vec<u32>,
}

impl<V: SceneVector> SweepAndPrune<V> {
    /// An empty broad phase; the margin and look-ahead are assumed valid (see [`super::make`]).
    #[must_use]
    pub fn new(config: TreeConfig) -> Self {
        Self {
            store: Store::new(config),
            order: Vec::new(),
        }
    }
}

impl<V: SceneVector> Broadphase for SweepAndPrune<V> {
    fn kind(&self) -> BroadphaseKind {
        BroadphaseKind::Sap
    }

    fn update(&mut self, bodies: &[Body]) -> Result<UpdateOutcome, BroadphaseError> {
        let out = self.store.update(bodies)?;
        if !(out.added.is_empty() && out.removed.is_empty()) {
            self.order.clear();
        }
        Ok(out)
    }

    fn set_pair_limit(&mut self, limit: usize) {
        self.store.set_pair_limit(limit);
    }

    fn find_pairs(&mut self) -> Result<PairOutcome, BroadphaseError> {
        let order = &mut self.order;
        self.store.find_pairs(|entries, sink| {
            if order.len() != entries.len() {
                *order = (0..entries.len() as u32).collect();
            }
            // Stable sort on the kept order: adaptive on nearly sorted input. Ties on least x are
            // broken by index (that is, by id) so the order never depends on history.
            order.sort_by(|&a, &b| {
                let (ea, eb) = (&entries[a as usize], &entries[b as usize]);
                ea.fat
                    .min
                    .axis(0)
                    .total_cmp(&eb.fat.min.axis(0))
                    .then(a.cmp(&b))
            });
            for (k, &i) in order.iter().enumerate() {
                let a = &entries[i as usize];
                let end_x = a.fat.max.axis(0);
                for &j in &order[k + 1..] {
                    let b = &entries[j as usize];
                    // Sorted by least x: once one starts after `a` ends, all later ones do.
                    if b.fat.min.axis(0) > end_x {
                        break;
                    }
                    if overlaps(&a.fat, &b.fat) {
                        sink.push(if a.id < b.id {
                            (a.id, b.id)
                        } else {
                            (b.id, a.id)
                        })?;
                    }
                }
            }
            sink.pairs.sort_unstable();
            Ok(())
        })
    }

    fn fat_aabb(&self, id: u32) -> Option<Aabb<Vec3>> {
        self.store.fat_aabb(id).map(|b| box_to_vec3(&b))
    }

    fn set_config(&mut self, config: TreeConfig) -> Result<(), TreeError> {
        config.check()?;
        self.store.set_config(config);
        Ok(())
    }
}
