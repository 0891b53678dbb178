//! The dynamic AABB tree as a broad phase: one proxy per body, reinserted only when its tight
//! box leaves its fat box; pairs from the tree's own pair finder.

use super::{
    Body, Broadphase, BroadphaseError, BroadphaseKind, DEFAULT_PAIR_LIMIT, PairOutcome,
    SceneVector, TreeView, UpdateOutcome, box_from_vec3, box_to_vec3, check_bodies, sorted_bodies,
};
use crate::tree::{
    Aabb, DynamicTree, ProxyId, TreeConfig, TreeError, TreeEvent, TreeStats, WorkCounts,
};
use glam::Vec3;

/// A [`DynamicTree`] keyed by sphere id, recording its events for the debugger.
#[derive(Clone, Debug)]
pub struct TreeBroadphase<V: SceneVector> {
    tree: DynamicTree<V, u32>,
    /// `(sphere id, proxy)`, sorted by id.
    proxies: Vec<(u32, ProxyId)>,
    /// The pairs of the last search as sphere ids, sorted.
    pairs: Vec<(u32, u32)>,
    /// True when proxies came or went since the last search (the tree says the rest).
    changed: bool,
    /// The most pairs a search may find.
    pair_limit: usize,
}

impl<V: SceneVector> TreeBroadphase<V> {
    /// An empty tree broad phase; an error when the margin or look-ahead is bad.
    pub fn new(config: TreeConfig) -> Result<Self, TreeError> {
        let mut tree = DynamicTree::try_new(config)?;
        tree.set_recording(true);
        Ok(Self {
            tree,
            proxies: Vec::new(),
            pairs: Vec::new(),
            changed: true,
            pair_limit: DEFAULT_PAIR_LIMIT,
        })
    }

    /// The tree itself.
    #[must_use]
    pub fn tree(&self) -> &DynamicTree<V, u32> {
        &self.tree
    }

    /// Moves `proxy` to `body`'s box and velocity; true when the tree reinserted it.
    fn move_to(&mut self, proxy: ProxyId, body: &Body) -> Result<bool, BroadphaseError> {
        let tight = box_from_vec3::<V>(&body.tight);
        self.tree
            .move_proxy(proxy, tight, V::from_vec3(body.velocity))
            .map_err(|e| BroadphaseError::Body {
                id: body.id,
                reason: e.to_string(),
            })
    }

    fn proxy(&self, id: u32) -> Option<ProxyId> {
        self.proxies
            .binary_search_by_key(&id, |&(i, _)| i)
            .ok()
            .map(|k| self.proxies[k].1)
    }
}

impl<V: SceneVector> Broadphase for TreeBroadphase<V> {
    fn kind(&self) -> BroadphaseKind {
        BroadphaseKind::Tree
    }

    fn update(&mut self, bodies: &[Body]) -> Result<UpdateOutcome, BroadphaseError> {
        // Every body is checked first, so a refused one changes nothing (the tree would refuse
        // the same ones, but only after moving those before it).
        check_bodies(bodies, self.tree.config())?;
        let bodies = sorted_bodies(bodies);
        let mut out = UpdateOutcome::default();
        // The usual step: the same bodies as last time, each only moved.
        if bodies.len() == self.proxies.len()
            && bodies
                .iter()
                .zip(&self.proxies)
                .all(|(b, &(id, _))| b.id == id)
        {
            for k in 0..bodies.len() {
                let (id, proxy) = self.proxies[k];
                if self.move_to(proxy, &bodies[k])? {
                    out.reinserted.push(id);
                }
            }
            return Ok(out);
        }
        // Stage 1: remove the proxies of bodies that are gone, so their nodes can be reused.
        let mut kept = Vec::with_capacity(self.proxies.len());
        let mut next = bodies.iter().peekable();
        for &(id, proxy) in &self.proxies {
            while next.next_if(|b| b.id < id).is_some() {}
            if next.peek().is_some_and(|b| b.id == id) {
                kept.push((id, proxy));
            } else {
                self.tree.destroy_proxy(proxy)?;
                out.removed.push(id);
            }
        }
        // Stage 2: move the bodies that stay and create the new ones, in id order.
        let mut proxies = Vec::with_capacity(bodies.len());
        let mut old = kept.into_iter().peekable();
        for body in bodies.iter() {
            match old.next_if(|&(id, _)| id == body.id) {
                Some((id, proxy)) => {
                    if self.move_to(proxy, body)? {
                        out.reinserted.push(id);
                    }
                    proxies.push((id, proxy));
                }
                None => {
                    let tight = box_from_vec3::<V>(&body.tight);
                    let velocity = V::from_vec3(body.velocity);
                    let proxy = self
                        .tree
                        .create_proxy(tight, velocity, body.id)
                        .map_err(|e| BroadphaseError::Body {
                            id: body.id,
                            reason: e.to_string(),
                        })?;
                    proxies.push((body.id, proxy));
                    out.added.push(body.id);
                    out.reinserted.push(body.id);
                }
            }
        }
        if !(out.added.is_empty() && out.removed.is_empty()) {
            self.changed = true;
        }
        self.proxies = proxies;
        Ok(out)
    }

    fn set_pair_limit(&mut self, limit: usize) {
        self.pair_limit = limit;
        self.tree.set_pair_limit(limit);
        self.changed = true;
    }

    fn find_pairs(&mut self) -> Result<PairOutcome, BroadphaseError> {
        let update = match self.tree.update_pairs() {
            Ok(update) => update,
            Err(TreeError::PairLimit { limit }) => {
                self.pairs.clear();
                self.changed = true;
                return Err(BroadphaseError::PairLimit { limit });
            }
            Err(e) => return Err(e.into()),
        };
        let recomputed = update.recomputed || self.changed;
        if recomputed {
            let tree = &self.tree;
            // Refilled in place: a fresh buffer a step cost page faults at 10,000 spheres.
            self.pairs.clear();
            for (a, b) in tree.pairs_unsorted() {
                let (a, b) = (tree.user_data(a)?, tree.user_data(b)?);
                self.pairs.push(if a < b { (a, b) } else { (b, a) });
            }
            self.pairs.sort_unstable();
            self.changed = false;
        }
        Ok(PairOutcome {
            pairs: self.pairs.clone(),
            recomputed,
        })
    }

    fn fat_aabb(&self, id: u32) -> Option<Aabb<Vec3>> {
        let proxy = self.proxy(id)?;
        self.tree.fat_aabb(proxy).ok().map(|b| box_to_vec3(&b))
    }

    fn set_config(&mut self, config: TreeConfig) -> Result<(), TreeError> {
        self.tree.set_config(config)?;
        self.changed = true;
        Ok(())
    }

    fn tree_stats(&self) -> Option<TreeStats> {
        Some(self.tree.stats())
    }

    fn take_events(&mut self) -> Vec<TreeEvent> {
        self.tree.take_events()
    }

    fn tree_view(&self) -> Option<TreeView<'_>> {
        Some(V::tree_view(&self.tree))
    }

    fn rebuild(&mut self) {
        self.tree.rebuild();
    }

    fn work_counts(&self) -> Option<WorkCounts> {
        Some(self.tree.work())
    }
}
