//! Our dynamic tree driven by the workload: every circle's tight box goes to `move_proxy`
//! each step (the tree decides what to reinsert), then the pairs come from `update_pairs`.

use super::{MARGIN, PairTally, Workload, WorkloadBroadphase};
use crate::tree::{
    Balancing, DynamicTree, InsertionCost, PairMethod, ProxyId, TreeConfig, UpdateMode,
};
use glam::Vec2;

/// The workload on a [`DynamicTree`] with a given configuration (margin [`MARGIN`], no
/// look-ahead, whatever the configuration says).
#[derive(Clone, Debug)]
pub struct TreeBroadphase {
    config: TreeConfig,
    tree: DynamicTree<Vec2, u32>,
    /// Proxy of each circle.
    proxies: Vec<ProxyId>,
    /// Circle of each proxy slot (`ProxyId::index`).
    circle_of_slot: Vec<u32>,
    /// Pairs by [`DynamicTree::update_pairs_parallel`] (rayon's pool) instead of one thread.
    parallel: bool,
}

impl TreeBroadphase {
    /// A tree broad phase; the margin is forced to [`MARGIN`] and the look-ahead to 0, as the
    /// workload requires.
    #[must_use]
    pub fn new(config: TreeConfig) -> Self {
        let config = TreeConfig {
            margin: MARGIN,
            velocity_lookahead: 0.0,
            ..config
        };
        Self {
            config,
            tree: DynamicTree::new(config),
            proxies: Vec::new(),
            circle_of_slot: Vec::new(),
            parallel: false,
        }
    }

    /// The same, finding pairs on rayon's thread pool ([`DynamicTree::update_pairs_parallel`]).
    #[must_use]
    pub fn parallel(config: TreeConfig) -> Self {
        Self {
            parallel: true,
            ..Self::new(config)
        }
    }

    /// The configuration it runs.
    #[must_use]
    pub fn config(&self) -> &TreeConfig {
        &self.config
    }

    /// The tree (for stats after a run).
    #[must_use]
    pub fn tree(&self) -> &DynamicTree<Vec2, u32> {
        &self.tree
    }
}

/// A short label of a configuration, e.g. `SA+rot, self, reinsert`.
#[must_use]
pub fn config_label(config: &TreeConfig) -> String {
    let insertion = match config.insertion {
        InsertionCost::Volume => "vol",
        InsertionCost::Perimeter => "perim",
        InsertionCost::SurfaceArea => "SA",
    };
    let balancing = match config.balancing {
        Balancing::None => "none",
        Balancing::Avl => "avl",
        Balancing::Rotations => "rot",
    };
    let pairs = match config.pairs {
        PairMethod::SelfTraversal => "self",
        PairMethod::MovedQueries => "queries",
        PairMethod::MovedTraversal => "moved",
    };
    let update = match config.update {
        UpdateMode::Reinsert => "reinsert",
        UpdateMode::LocalReinsert => "local",
        UpdateMode::EnlargeAndRebuild => "enlarge",
    };
    format!("{insertion}+{balancing}, {pairs}, {update}")
}

impl WorkloadBroadphase for TreeBroadphase {
    fn name(&self) -> String {
        let threads = if self.parallel { ", rayon" } else { "" };
        format!("tree {}{threads}", config_label(&self.config))
    }

    fn build(&mut self, workload: &Workload) {
        self.tree = DynamicTree::new(self.config);
        let items: Vec<_> = workload
            .circles()
            .iter()
            .enumerate()
            .map(|(i, c)| (c.tight(), c.velocity, i as u32))
            .collect();
        self.proxies = self
            .tree
            .create_proxies(&items)
            .expect("workload circles are finite and fewer than MAX_CIRCLES");
        self.circle_of_slot.clear();
        for (i, id) in self.proxies.iter().enumerate() {
            let slot = id.index as usize;
            if self.circle_of_slot.len() <= slot {
                self.circle_of_slot.resize(slot + 1, u32::MAX);
            }
            self.circle_of_slot[slot] = i as u32;
        }
    }

    fn update(&mut self, workload: &Workload) -> usize {
        let mut reinserted = 0;
        for (c, &id) in workload.circles().iter().zip(&self.proxies) {
            let moved = self
                .tree
                .move_proxy(id, c.tight(), c.velocity)
                .expect("workload proxies are live and their boxes finite");
            reinserted += usize::from(moved);
        }
        reinserted
    }

    fn bytes(&self) -> Option<usize> {
        Some(self.tree.bytes())
    }

    fn find_pairs(&mut self, _workload: &Workload, tally: &mut PairTally) {
        let update = if self.parallel {
            self.tree.update_pairs_parallel()
        } else {
            self.tree.update_pairs()
        };
        update.expect("the workload's tree has no pair limit");
        for &(a, b) in self.tree.pair_indices() {
            tally.add(
                self.circle_of_slot[a as usize],
                self.circle_of_slot[b as usize],
            );
        }
    }
}
