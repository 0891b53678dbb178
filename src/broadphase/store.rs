//! The body store brute force and sweep-and-prune share: tight box, velocity and fat box per
//! id, kept with the tree's fat-box rule, and the dirty flag behind `recomputed`.

use super::{
    Body, BroadphaseError, DEFAULT_PAIR_LIMIT, PairOutcome, SceneVector, UpdateOutcome,
    box_from_vec3, check_bodies, fat_box, sorted_bodies,
};
use crate::tree::{Aabb, TreeConfig};

/// One body as brute force and sweep-and-prune keep it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Entry<V> {
    /// The sphere id.
    pub id: u32,
    /// The tight box given by the last update.
    pub tight: Aabb<V>,
    /// The velocity given by the last update.
    pub velocity: V,
    /// The fat box, recomputed only when the tight box leaves it.
    pub fat: Aabb<V>,
}

/// Bodies sorted by id, their fat boxes, and whether anything changed since pairs were found.
#[derive(Clone, Debug)]
pub(crate) struct Store<V> {
    /// Margin, look-ahead and the rest (only margin and look-ahead matter here).
    pub config: TreeConfig,
    /// Sorted by id.
    pub entries: Vec<Entry<V>>,
    /// True when a fat box changed, or a body came or went, since the last pair search.
    pub dirty: bool,
    /// The pairs of the last search, sorted.
    pub pairs: Vec<(u32, u32)>,
    /// The most pairs a search may find.
    pub pair_limit: usize,
}

impl<V: SceneVector> Store<V> {
    /// An empty store (the config is assumed checked).
    pub fn new(config: TreeConfig) -> Self {
        Self {
            config,
            entries: Vec::new(),
            dirty: true,
            pairs: Vec::new(),
            pair_limit: DEFAULT_PAIR_LIMIT,
        }
    }

    fn fat(&self, tight: &Aabb<V>, velocity: V) -> Aabb<V> {
        fat_box(
            tight,
            velocity,
            self.config.margin,
            self.config.velocity_lookahead,
        )
    }

    /// Merges `bodies` into the store: new ids get a fat box, missing ids go, the others keep
    /// their fat box unless their tight box left it. A body whose boxes cannot be used is an
    /// error, and nothing changes.
    pub fn update(&mut self, bodies: &[Body]) -> Result<UpdateOutcome, BroadphaseError> {
        check_bodies(bodies, &self.config)?;
        let bodies = sorted_bodies(bodies);
        let mut out = UpdateOutcome::default();
        let mut merged = Vec::with_capacity(bodies.len());
        let mut old = self.entries.iter().peekable();
        for body in bodies.iter() {
            while let Some(e) = old.next_if(|e| e.id < body.id) {
                out.removed.push(e.id);
            }
            let tight = box_from_vec3::<V>(&body.tight);
            let velocity = V::from_vec3(body.velocity);
            let entry = match old.next_if(|e| e.id == body.id) {
                Some(e) if e.fat.contains(&tight) => Entry {
                    tight,
                    velocity,
                    ..*e
                },
                Some(_) => {
                    out.reinserted.push(body.id);
                    Entry {
                        id: body.id,
                        tight,
                        velocity,
                        fat: self.fat(&tight, velocity),
                    }
                }
                None => {
                    out.added.push(body.id);
                    out.reinserted.push(body.id);
                    Entry {
                        id: body.id,
                        tight,
                        velocity,
                        fat: self.fat(&tight, velocity),
                    }
                }
            };
            merged.push(entry);
        }
        out.removed.extend(old.map(|e| e.id));
        if !(out.removed.is_empty() && out.reinserted.is_empty()) {
            self.dirty = true;
        }
        self.entries = merged;
        Ok(out)
    }

    /// Applies new settings; when the margin or look-ahead changed, every fat box is
    /// recomputed from the last tight box and velocity (as the tree does).
    pub fn set_config(&mut self, config: TreeConfig) {
        let refatten = config.margin != self.config.margin
            || config.velocity_lookahead != self.config.velocity_lookahead;
        self.config = config;
        self.dirty = true;
        if !refatten {
            return;
        }
        for i in 0..self.entries.len() {
            let e = self.entries[i];
            self.entries[i].fat = self.fat(&e.tight, e.velocity);
        }
    }

    /// Finds pairs with `search` (given the entries, sorted by id, and a [`PairSink`] that
    /// holds the limit; the pairs must come out sorted `(a, b)` with `a < b`) only when
    /// something changed since the last search; otherwise the previous pairs, with
    /// `recomputed: false` (Choi's `tree_updated`). Past the limit the pairs are dropped and
    /// the next call searches again.
    pub fn find_pairs(
        &mut self,
        search: impl FnOnce(&[Entry<V>], &mut PairSink) -> Result<(), BroadphaseError>,
    ) -> Result<PairOutcome, BroadphaseError> {
        if self.dirty {
            let mut sink = PairSink {
                pairs: std::mem::take(&mut self.pairs),
                limit: self.pair_limit,
            };
            sink.pairs.clear();
            if let Err(e) = search(&self.entries, &mut sink) {
                self.pairs = Vec::new();
                return Err(e);
            }
            self.pairs = sink.pairs;
            self.dirty = false;
            return Ok(PairOutcome {
                pairs: self.pairs.clone(),
                recomputed: true,
            });
        }
        Ok(PairOutcome {
            pairs: self.pairs.clone(),
            recomputed: false,
        })
    }

    /// Sets the pair limit; the next search runs again (a search refused under the old limit
    /// may pass under the new one).
    pub fn set_pair_limit(&mut self, limit: usize) {
        self.pair_limit = limit;
        self.dirty = true;
    }

    /// The fat box of `id`.
    pub fn fat_aabb(&self, id: u32) -> Option<Aabb<V>> {
        self.entries
            .binary_search_by_key(&id, |e| e.id)
            .ok()
            .map(|i| self.entries[i].fat)
    }
}

/// Where a search puts its pairs: refuses the pair past the limit.
pub(crate) struct PairSink {
    /// The pairs so far.
    pub pairs: Vec<(u32, u32)>,
    limit: usize,
}

impl PairSink {
    /// Adds a pair; [`BroadphaseError::PairLimit`] when that would pass the limit.
    #[inline]
    pub fn push(&mut self, pair: (u32, u32)) -> Result<(), BroadphaseError> {
        if self.pairs.len() >= self.limit {
            return Err(BroadphaseError::PairLimit { limit: self.limit });
        }
        self.pairs.push(pair);
        Ok(())
    }
}
