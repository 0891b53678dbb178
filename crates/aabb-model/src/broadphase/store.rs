//! The body store brute force and sweep-and-prune share: tight box, velocity and fat box per
//! id (one array each, sorted by id), kept with the tree's fat-box rule, and the dirty flag
//! behind `recomputed`.

use super::{
    Bodies, Body, BroadphaseError, DEFAULT_PAIR_LIMIT, SceneVector, UpdateOutcome, check_bodies,
    check_bodies_against, fat_box, sorted_bodies,
};
use crate::tree::{Aabb, TreeConfig};

/// Bodies sorted by id, their fat boxes, and whether anything changed since pairs were found.
#[derive(Clone, Debug)]
pub(crate) struct Store<V> {
    /// Margin, look-ahead and the rest (only margin and look-ahead matter here).
    pub config: TreeConfig,
    /// Body ids, ascending; index `k` of the other arrays is body `ids[k]`.
    pub ids: Vec<u32>,
    /// The tight box given by the last update.
    pub tight: Vec<Aabb<V>>,
    /// The velocity given by the last update.
    pub velocity: Vec<V>,
    /// The fat box, recomputed only when the tight box leaves it.
    pub fat: Vec<Aabb<V>>,
    /// Indices whose fat box the last update recomputed, ascending (when not `reshaped`).
    pub refattened: Vec<u32>,
    /// True when indices changed (bodies came or went) or every fat box was recomputed since
    /// the owner last looked ([`Store::take_reshaped`]).
    reshaped: bool,
    /// True when a fat box changed, or a body came or went, since the last pair search.
    dirty: bool,
    /// The pairs of the last search, `(a, b)` with `a < b`; sorted when `sorted`.
    pairs: Vec<(u32, u32)>,
    sorted: bool,
    /// The most pairs a search may find.
    pair_limit: usize,
    /// Ids of the static bodies, sorted (see [`Store::set_static_ids`]).
    static_ids: Vec<u32>,
    /// Per index, true for a static body; empty when there are none.
    is_static: Vec<bool>,
}

impl<V: SceneVector> Store<V> {
    /// An empty store (the config is assumed checked).
    pub fn new(config: TreeConfig) -> Self {
        Self {
            config,
            ids: Vec::new(),
            tight: Vec::new(),
            velocity: Vec::new(),
            fat: Vec::new(),
            refattened: Vec::new(),
            reshaped: true,
            dirty: true,
            pairs: Vec::new(),
            sorted: true,
            pair_limit: DEFAULT_PAIR_LIMIT,
            static_ids: Vec::new(),
            is_static: Vec::new(),
        }
    }

    /// Marks the bodies with these ids as static (replacing the last set; ids not present
    /// are kept for when they come): a pair of two static bodies is not reported, though it
    /// counts towards the pair limit, as in the tree, which holds it (see
    /// [`super::Broadphase::set_static_ids`]). The next search runs again.
    pub fn set_static_ids(&mut self, ids: &[u32]) {
        self.static_ids = ids.to_vec();
        self.static_ids.sort_unstable();
        self.static_ids.dedup();
        self.refresh_static();
        self.dirty = true;
    }

    /// Brings [`Store::is_static`] to the ids.
    fn refresh_static(&mut self) {
        self.is_static.clear();
        if !self.static_ids.is_empty() {
            let statics = &self.static_ids;
            self.is_static
                .extend(self.ids.iter().map(|id| statics.binary_search(id).is_ok()));
        }
    }

    #[inline]
    fn fat_of(&self, tight: &Aabb<V>, velocity: V) -> Aabb<V> {
        fat_box(
            tight,
            velocity,
            self.config.margin,
            self.config.velocity_lookahead,
        )
    }

    /// A hash of the ids and fat boxes (see [`super::Broadphase::structure_hash`]).
    pub fn structure_hash(&self) -> u64 {
        let mut h = crate::tree::StructureHasher::new();
        h.word(self.ids.len() as u64);
        for (k, (&id, fat)) in self.ids.iter().zip(&self.fat).enumerate() {
            h.word_in(k, u64::from(id));
            h.aabb_in(k, fat);
        }
        h.finish()
    }

    /// True (once) when indices changed or every fat box was recomputed since the last call:
    /// an owner that mirrors the fat boxes rebuilds its copy then, and otherwise copies only
    /// [`Store::refattened`].
    pub fn take_reshaped(&mut self) -> bool {
        std::mem::take(&mut self.reshaped)
    }

    /// Merges `bodies` into the store: new ids get a fat box, missing ids go, the others keep
    /// their fat box unless their tight box left it. A body whose boxes cannot be used is an
    /// error, and nothing changes.
    pub fn update(
        &mut self,
        bodies: &(impl Bodies<V> + ?Sized),
        out: &mut UpdateOutcome,
    ) -> Result<(), BroadphaseError> {
        let ids = &self.ids;
        let same = check_bodies_against(bodies, &self.config, ids.len(), |k| ids[k])?;
        out.reinserted.clear();
        out.added.clear();
        out.removed.clear();
        self.refattened.clear();
        if same {
            // The usual step: the same bodies, each only moved.
            for k in 0..bodies.len() {
                let body = bodies.body(k);
                self.tight[k] = body.tight;
                self.velocity[k] = body.velocity;
                if !self.fat[k].contains(&body.tight) {
                    self.fat[k] = self.fat_of(&body.tight, body.velocity);
                    out.reinserted.push(body.id);
                    // Indices fit u32: there is one per body id.
                    self.refattened.push(k as u32);
                }
            }
        } else {
            self.merge(&sorted_bodies(&bodies.to_vec()), out);
        }
        if !(out.removed.is_empty() && out.reinserted.is_empty()) {
            self.dirty = true;
        }
        Ok(())
    }

    /// The update when bodies came or went: new arrays, merged by id.
    fn merge(&mut self, bodies: &[Body<V>], out: &mut UpdateOutcome) {
        let n = bodies.len();
        let (mut ids, mut tight, mut velocity, mut fat) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut old = (0..self.ids.len()).peekable();
        for body in bodies {
            while let Some(k) = old.next_if(|&k| self.ids[k] < body.id) {
                out.removed.push(self.ids[k]);
            }
            let f = match old.next_if(|&k| self.ids[k] == body.id) {
                Some(k) if self.fat[k].contains(&body.tight) => self.fat[k],
                Some(_) => {
                    out.reinserted.push(body.id);
                    self.fat_of(&body.tight, body.velocity)
                }
                None => {
                    out.added.push(body.id);
                    out.reinserted.push(body.id);
                    self.fat_of(&body.tight, body.velocity)
                }
            };
            ids.push(body.id);
            tight.push(body.tight);
            velocity.push(body.velocity);
            fat.push(f);
        }
        out.removed.extend(old.map(|k| self.ids[k]));
        self.ids = ids;
        self.tight = tight;
        self.velocity = velocity;
        self.fat = fat;
        self.reshaped = true;
        self.refresh_static();
    }

    /// Replaces every body with `bodies`. An error as for [`Store::update`].
    pub fn build(&mut self, bodies: &(impl Bodies<V> + ?Sized)) -> Result<(), BroadphaseError> {
        check_bodies(bodies, &self.config)?;
        let owned = bodies.to_vec();
        let bodies = sorted_bodies(&owned);
        self.ids = bodies.iter().map(|b| b.id).collect();
        self.tight = bodies.iter().map(|b| b.tight).collect();
        self.velocity = bodies.iter().map(|b| b.velocity).collect();
        self.fat = bodies
            .iter()
            .map(|b| self.fat_of(&b.tight, b.velocity))
            .collect();
        self.refresh_static();
        self.refattened.clear();
        self.reshaped = true;
        self.dirty = true;
        Ok(())
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
        for k in 0..self.ids.len() {
            self.fat[k] = self.fat_of(&self.tight[k], self.velocity[k]);
        }
        self.reshaped = true;
    }

    /// Runs `search` (given the ids, the static flags by index (empty when no body is static)
    /// and a [`PairSink`] that holds the limit; it must give each pair once, `(a, b)` with
    /// `a < b`, any order, a pair of two static bodies to [`PairSink::skip`] instead; `sorted`
    /// says whether it gives them sorted) only when
    /// something changed since the last search; returns whether it ran (Choi's
    /// `tree_updated`). Past the limit the pairs are dropped and the next call searches again.
    pub fn search(
        &mut self,
        sorted: bool,
        search: impl FnOnce(&[u32], &[bool], &mut PairSink<'_>) -> Result<(), BroadphaseError>,
    ) -> Result<bool, BroadphaseError> {
        if !self.dirty {
            return Ok(false);
        }
        let mut sink = PairSink {
            pairs: std::mem::take(&mut self.pairs),
            limit: self.pair_limit,
            skipped: 0,
            is_static: &self.is_static,
            cancel: super::cancel_flag(),
        };
        sink.pairs.clear();
        if let Err(e) = search(&self.ids, &self.is_static, &mut sink) {
            self.pairs = Vec::new();
            return Err(e);
        }
        self.pairs = sink.pairs;
        self.sorted = sorted;
        self.dirty = false;
        Ok(true)
    }

    /// True when the next [`Store::search`] will run.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// The pairs of the last search, in the order it found them.
    pub fn pairs(&self) -> &[(u32, u32)] {
        &self.pairs
    }

    /// The pairs of the last search, sorted.
    pub fn sorted_pairs(&mut self) -> &[(u32, u32)] {
        if !self.sorted {
            self.pairs.sort_unstable();
            self.sorted = true;
        }
        &self.pairs
    }

    /// Sets the pair limit; the next search runs again (a search refused under the old limit
    /// may pass under the new one).
    pub fn set_pair_limit(&mut self, limit: usize) {
        self.pair_limit = limit;
        self.dirty = true;
    }

    /// The fat box of `id`.
    pub fn fat_aabb(&self, id: u32) -> Option<Aabb<V>> {
        self.ids.binary_search(&id).ok().map(|k| self.fat[k])
    }

    /// Bytes the arrays hold (capacities).
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.ids.capacity() * size_of::<u32>()
            + (self.tight.capacity() + self.fat.capacity()) * size_of::<Aabb<V>>()
            + self.velocity.capacity() * size_of::<V>()
            + self.refattened.capacity() * size_of::<u32>()
            + self.pairs.capacity() * size_of::<(u32, u32)>()
            + self.static_ids.capacity() * size_of::<u32>()
            + self.is_static.capacity()
    }
}

/// Where a search puts its pairs: refuses the pair past the limit.
pub(crate) struct PairSink<'a> {
    /// The pairs so far.
    pub pairs: Vec<(u32, u32)>,
    limit: usize,
    /// Pairs of two static bodies found so far: not kept, but counted towards the limit.
    skipped: usize,
    /// Per body searched, whether it is static: read only past the limit
    /// ([`BroadphaseError::PairLimit::static_boxes`]).
    is_static: &'a [bool],
    /// The cancel flag of this thread's work, when there is one ([`super::with_cancel`]).
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl PairSink<'_> {
    /// [`BroadphaseError::Cancelled`] once the work this search is part of was cancelled
    /// ([`super::with_cancel`]); the long loops call it once a row.
    #[inline]
    pub fn check_cancel(&self) -> Result<(), BroadphaseError> {
        match &self.cancel {
            Some(flag) if flag.load(std::sync::atomic::Ordering::Relaxed) => {
                Err(BroadphaseError::Cancelled)
            }
            _ => Ok(()),
        }
    }

    /// The error of a search past the limit.
    #[cold]
    fn past_limit(&self) -> BroadphaseError {
        BroadphaseError::PairLimit {
            limit: self.limit,
            static_boxes: self.is_static.contains(&true),
        }
    }

    /// Adds a pair; [`BroadphaseError::PairLimit`] when that would pass the limit.
    #[inline]
    pub fn push(&mut self, pair: (u32, u32)) -> Result<(), BroadphaseError> {
        if self.pairs.len() + self.skipped >= self.limit {
            return Err(self.past_limit());
        }
        self.pairs.push(pair);
        Ok(())
    }

    /// Counts a pair of two static bodies, which is not reported; the same
    /// [`BroadphaseError::PairLimit`] as [`PairSink::push`].
    #[inline]
    pub fn skip(&mut self) -> Result<(), BroadphaseError> {
        if self.pairs.len() + self.skipped >= self.limit {
            return Err(self.past_limit());
        }
        self.skipped += 1;
        Ok(())
    }
}
