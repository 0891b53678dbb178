//! Brute force: every pair of fat boxes tested, the reference the other broad phases must match.

use super::{
    Bodies, Body, Broadphase, BroadphaseCore, BroadphaseError, BroadphaseKind, PairOutcome,
    SceneVector, UpdateOutcome, box_to_vec3, store::Store,
};
use crate::tree::{Aabb, TreeConfig, TreeError};
use glam::Vec3;

/// Tests every pair of fat boxes (O(n²)) when something changed since the last search.
#[derive(Clone, Debug)]
pub struct BruteForce<V> {
    store: Store<V>,
    /// The fat boxes again, one array per axis and side (index as in the store), so that the
    /// inner loop is a straight scan; refreshed from the store before each search.
    min: [Vec<f32>; 3],
    max: [Vec<f32>; 3],
}

impl<V: SceneVector> BruteForce<V> {
    /// An empty broad phase; the margin and look-ahead are assumed valid (see [`super::make`]).
    #[must_use]
    pub fn new(config: TreeConfig) -> Self {
        Self {
            store: Store::new(config),
            min: Default::default(),
            max: Default::default(),
        }
    }

    /// Brings the per-axis arrays to the store's fat boxes.
    fn refresh_columns(&mut self) {
        let reshaped = self.store.take_reshaped();
        let fat = &self.store.fat;
        if reshaped {
            for axis in 0..V::DIM {
                self.min[axis] = fat.iter().map(|b| b.min.axis(axis)).collect();
                self.max[axis] = fat.iter().map(|b| b.max.axis(axis)).collect();
            }
        } else {
            for &k in &self.store.refattened {
                let (k, b) = (k as usize, fat[k as usize]);
                for axis in 0..V::DIM {
                    self.min[axis][k] = b.min.axis(axis);
                    self.max[axis][k] = b.max.axis(axis);
                }
            }
        }
        self.store.refattened.clear();
    }
}

impl<V: SceneVector> BroadphaseCore<V> for BruteForce<V> {
    fn kind(&self) -> BroadphaseKind {
        BroadphaseKind::Brute
    }

    fn update_bodies(
        &mut self,
        bodies: &(impl Bodies<V> + ?Sized),
        out: &mut UpdateOutcome,
    ) -> Result<(), BroadphaseError> {
        self.store.update(bodies, out)?;
        self.refresh_columns();
        Ok(())
    }

    fn build(&mut self, bodies: &(impl Bodies<V> + ?Sized)) -> Result<(), BroadphaseError> {
        self.store.build(bodies)?;
        self.refresh_columns();
        Ok(())
    }

    fn visit_pairs(&mut self, mut visit: impl FnMut(u32, u32)) -> Result<bool, BroadphaseError> {
        let (min, max) = (&self.min, &self.max);
        let recomputed = self.store.search(true, |ids, statics, sink| {
            let n = ids.len();
            for i in 0..n {
                // A row is at most n tests: a cancel stops a search of a million boxes within
                // about a millisecond.
                sink.check_cancel()?;
                let mut lo = [0.0f32; 3];
                let mut hi = [0.0f32; 3];
                for axis in 0..V::DIM {
                    lo[axis] = min[axis][i];
                    hi[axis] = max[axis][i];
                }
                for j in i + 1..n {
                    let mut hit = true;
                    for axis in 0..V::DIM {
                        hit &= (min[axis][j] <= hi[axis]) & (lo[axis] <= max[axis][j]);
                    }
                    if hit {
                        if !statics.is_empty() && statics[i] && statics[j] {
                            sink.skip()?;
                        } else {
                            // Ids ascend with the index: (ids[i], ids[j]) has a < b, in order.
                            sink.push((ids[i], ids[j]))?;
                        }
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
        let columns: usize = self
            .min
            .iter()
            .chain(&self.max)
            .map(|c| c.capacity() * std::mem::size_of::<f32>())
            .sum();
        self.store.bytes() + columns
    }
}

impl<V: SceneVector> Broadphase for BruteForce<V> {
    fn kind(&self) -> BroadphaseKind {
        BroadphaseKind::Brute
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

    fn find_pairs(&mut self) -> Result<PairOutcome, BroadphaseError> {
        let recomputed = self.visit_pairs(|_, _| {})?;
        Ok(PairOutcome {
            pairs: self.store.sorted_pairs().to_vec(),
            recomputed,
        })
    }

    fn set_pair_limit(&mut self, limit: usize) {
        self.store.set_pair_limit(limit);
    }

    fn set_static_ids(&mut self, ids: &[u32]) {
        self.store.set_static_ids(ids);
    }

    fn fat_aabb(&self, id: u32) -> Option<Aabb<Vec3>> {
        self.store.fat_aabb(id).map(|b| box_to_vec3(&b))
    }

    fn set_config(&mut self, config: TreeConfig) -> Result<(), TreeError> {
        config.check()?;
        self.store.set_config(config);
        self.refresh_columns();
        Ok(())
    }
}
