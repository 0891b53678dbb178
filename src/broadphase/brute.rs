//! Brute force: every pair of fat boxes tested, the reference the other broad phases must match.

use super::{
    Body, Broadphase, BroadphaseError, BroadphaseKind, PairOutcome, SceneVector, UpdateOutcome,
    box_to_vec3, store::Store,
};
use crate::tree::{Aabb, TreeConfig, TreeError, Vector};
use glam::Vec3;

/// Tests every pair of fat boxes (O(n²)) when something changed since the last search.
#[derive(Clone, Debug)]
pub struct BruteForce<V> {
    store: Store<V>,
}

impl<V: SceneVector> BruteForce<V> {
    /// An empty broad phase; the margin and look-ahead are assumed valid (see [`super::make`]).
    #[must_use]
    pub fn new(config: TreeConfig) -> Self {
        Self {
            store: Store::new(config),
        }
    }
}

/// True when the closed boxes share a point, axis by axis (the same test as the tree's).
#[inline]
pub(crate) fn overlaps<V: Vector>(a: &Aabb<V>, b: &Aabb<V>) -> bool {
    a.overlaps(b)
}

impl<V: SceneVector> Broadphase for BruteForce<V> {
    fn kind(&self) -> BroadphaseKind {
        BroadphaseKind::Brute
    }

    fn update(&mut self, bodies: &[Body]) -> Result<UpdateOutcome, BroadphaseError> {
        self.store.update(bodies)
    }

    fn find_pairs(&mut self) -> Result<PairOutcome, BroadphaseError> {
        self.store.find_pairs(|entries, sink| {
            // Entries are sorted by id, so (a, b) with a before b already has a < b and the
            // pairs come out sorted.
            for (i, a) in entries.iter().enumerate() {
                for b in &entries[i + 1..] {
                    if overlaps(&a.fat, &b.fat) {
                        sink.push((a.id, b.id))?;
                    }
                }
            }
            Ok(())
        })
    }

    fn set_pair_limit(&mut self, limit: usize) {
        self.store.set_pair_limit(limit);
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
