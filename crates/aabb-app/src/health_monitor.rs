//! Tree health in the window: the live tree's cost against a fresh best rebuild of the same
//! leaves ([`crate::broadphase::health`]), sampled every few steps on a worker thread, and the
//! samples by step (the statistics panel's readout and the timeline's track).
//!
//! Each frame the shell calls [`Health::tick`] with what it sees of the model ([`Watch`]).
//! When a sample is due (every [`Prefs::health_every`](super::prefs::Prefs) steps while
//! playing; at once when paused, shown at another step, or edited) and no fresh build is
//! running, the UI thread copies the leaves' boxes (one `Vec`) and measures the live tree's
//! own cost and height, and a worker thread builds the fresh trees. A later frame takes the
//! result when the worker has ended (never waiting for it) and files the sample under its
//! step. At most one build runs; a due sample waits for it. A result for another document,
//! or for a step whose recorded past was discarded meanwhile, is dropped.
//!
//! The samples are kept by step beside the recording (`Model::health`): a change of the past
//! ([`Health::truncate_after`]) drops those after it, a restart ([`Health::clear`]) all.

use crate::broadphase::TreeRef;
use crate::broadphase::health::{FreshBuild, LeafBoxes, Shape, cost_ratio, least_height};
use crate::tree::TreeError;
use std::collections::BTreeMap;
use std::time::Instant;

/// One measurement of the tree's health at a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HealthSample {
    /// The step it was measured at.
    pub step: u64,
    /// The live tree's cost and height.
    pub live: Shape,
    /// The best fresh build over the same leaves.
    pub fresh: FreshBuild,
}

impl HealthSample {
    /// The live cost over the fresh build's ([`cost_ratio`]): 1 for a tree as good as a fresh
    /// rebuild, more as it degrades.
    #[must_use]
    pub fn ratio(&self) -> f64 {
        cost_ratio(self.live.cost, self.fresh.shape.cost)
    }

    /// The least height a tree of its leaves can have.
    #[must_use]
    pub fn least_height(&self) -> u32 {
        least_height(self.live.leaves)
    }
}

/// What the health monitor sees of the model in a frame.
pub struct Watch<'a> {
    /// The broad phase's tree, `None` for brute force and sweep-and-prune.
    pub tree: Option<TreeRef<'a>>,
    /// The step shown.
    pub step: u64,
    /// The document's id (`Model::document_id`).
    pub document_id: u64,
    /// The model's revision (`Model::rev`): bumped on every change of the simulation.
    pub rev: u64,
    /// The number of edits recorded (a new one samples at once).
    pub edits: usize,
    /// Playing (else every change samples at once).
    pub playing: bool,
    /// Sample every this many steps while playing (at least 1).
    pub every: u64,
}

/// What a sample was last asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    document_id: u64,
    rev: u64,
    step: u64,
    edits: usize,
}

/// What the worker returns.
type BuildResult = Result<FreshBuild, TreeError>;

/// A fresh build running on the worker thread, and the live figures taken with its boxes.
struct Job {
    /// The worker, until it is joined.
    handle: Option<aabb_model::job::Job<(), BuildResult>>,
    /// Its result once joined (`Err`: the message the build panicked with).
    ended: Option<Result<BuildResult, String>>,
    document_id: u64,
    step: u64,
    live: Shape,
    /// The past it was measured in was discarded (or the document restarted) since: its
    /// result is dropped.
    stale: bool,
}

/// The health monitor: the samples by step and the fresh build running, if any.
#[derive(Default)]
pub struct Health {
    samples: BTreeMap<u64, HealthSample>,
    job: Option<Job>,
    requested: Option<Seen>,
    /// Why the last fresh build failed, if it did.
    error: Option<String>,
    /// Milliseconds the last copy of the leaves and live figures took on the UI thread.
    copy_ms: f64,
    /// Samples taken so far (results filed; a test waits on it).
    taken: u64,
    /// Build on the calling thread (pictures that must be the same every run).
    on_ui_thread: bool,
}

impl Health {
    /// The samples, by step.
    #[must_use]
    pub fn samples(&self) -> &BTreeMap<u64, HealthSample> {
        &self.samples
    }

    /// The sample of the greatest step at or before `step` (what the readout shows).
    #[must_use]
    pub fn at_or_before(&self, step: u64) -> Option<&HealthSample> {
        self.samples.range(..=step).next_back().map(|(_, s)| s)
    }

    /// True while a fresh build runs.
    #[must_use]
    pub fn is_busy(&self) -> bool {
        self.job.is_some()
    }

    /// Why the last fresh build failed, if it did.
    #[must_use]
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Milliseconds the last copy of the leaves (and the live cost) took on the UI thread.
    #[must_use]
    pub fn copy_ms(&self) -> f64 {
        self.copy_ms
    }

    /// Samples filed so far (counting those a newer one replaced).
    #[must_use]
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// The recorded past after `step` was discarded: drops the samples after it (and the
    /// result of a build measured there).
    pub fn truncate_after(&mut self, step: u64) {
        self.samples.split_off(&step.saturating_add(1));
        if let Some(job) = &mut self.job
            && job.step > step
        {
            job.stale = true;
        }
        self.requested = None;
    }

    /// The recording restarted: drops every sample (and the running build's result).
    pub fn clear(&mut self) {
        self.samples.clear();
        if let Some(job) = &mut self.job {
            job.stale = true;
        }
        self.requested = None;
        self.error = None;
    }

    /// Builds on the calling thread, at once, instead of on a worker: for pictures that must
    /// be the same every run (the `screenshot` command, snapshot tests), where a worker might
    /// end before or after the picture is taken.
    pub fn set_on_ui_thread(&mut self, on: bool) {
        self.on_ui_thread = on;
    }

    /// Waits for the running fresh build to end, if one runs (tests: the window never waits);
    /// the next [`Health::tick`] files its result.
    pub fn wait(&mut self) {
        if let Some(job) = &mut self.job
            && let Some(handle) = job.handle.take()
        {
            job.ended = Some(handle.join());
        }
    }

    /// One frame: files the result of a build that has ended, then starts a build when a
    /// sample is due and none runs. Returns true while a build runs or when a sample was just
    /// filed (the caller draws again soon).
    pub fn tick(&mut self, watch: &Watch<'_>) -> bool {
        let mut filed = self.poll(watch.document_id);
        if self.job.is_none() && self.due(watch) {
            self.start(watch);
            if self.on_ui_thread {
                // Built already: filed now. (A worker's result waits for the next frame.)
                filed |= self.poll(watch.document_id);
            }
        }
        filed || self.job.is_some()
    }

    /// True when a sample should be taken now.
    fn due(&self, watch: &Watch<'_>) -> bool {
        let Some(last) = self.requested else {
            return true;
        };
        if last.rev == watch.rev && last.document_id == watch.document_id {
            return false;
        }
        last.document_id != watch.document_id
            || last.edits != watch.edits
            || !watch.playing
            || watch.step < last.step
            || watch.step >= last.step.saturating_add(watch.every.max(1))
    }

    /// Takes the leaves and the live figures, and starts the fresh build on a worker.
    fn start(&mut self, watch: &Watch<'_>) {
        self.requested = Some(Seen {
            document_id: watch.document_id,
            rev: watch.rev,
            step: watch.step,
            edits: watch.edits,
        });
        let Some(tree) = &watch.tree else {
            return;
        };
        let started = Instant::now();
        let live = Shape::of(tree);
        let boxes = LeafBoxes::of(tree);
        self.copy_ms = started.elapsed().as_secs_f64() * 1e3;
        if self.on_ui_thread {
            self.job = Some(Job {
                handle: None,
                ended: Some(Ok(boxes.best_rebuild())),
                document_id: watch.document_id,
                step: watch.step,
                live,
                stale: false,
            });
            return;
        }
        let spawned =
            aabb_model::job::Job::spawn("tree-health", std::sync::Arc::new(()), move |_| {
                boxes.best_rebuild()
            });
        match spawned {
            Ok(handle) => {
                self.job = Some(Job {
                    handle: Some(handle),
                    ended: None,
                    document_id: watch.document_id,
                    step: watch.step,
                    live,
                    stale: false,
                });
            }
            Err(e) => self.error = Some(format!("the fresh build was not started: {e}")),
        }
    }

    /// Files the result of a build that has ended (never waits for one running); true when
    /// a sample was filed.
    fn poll(&mut self, document_id: u64) -> bool {
        let Some(job) = &mut self.job else {
            return false;
        };
        if let Some(handle) = job.handle.take_if(|h| h.is_finished()) {
            job.ended = Some(handle.join());
        }
        let Some(result) = job.ended.take() else {
            return false;
        };
        let Some(job) = self.job.take() else {
            return false;
        };
        if job.stale || job.document_id != document_id {
            return false;
        }
        match result {
            Ok(Ok(fresh)) => {
                self.samples.insert(
                    job.step,
                    HealthSample {
                        step: job.step,
                        live: job.live,
                        fresh,
                    },
                );
                self.taken += 1;
                self.error = None;
                return true;
            }
            Ok(Err(e)) => self.error = Some(format!("the fresh build refused the leaves: {e}")),
            Err(message) => {
                self.error = Some(format!("the fresh build stopped with a panic: {message}"));
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Aabb, Balancing, DynamicTree, TreeConfig};
    use glam::Vec3;

    /// 300 boxes on a 3D grid, inserted without balancing.
    fn tree() -> DynamicTree<Vec3, u32> {
        let mut tree = DynamicTree::new(TreeConfig {
            balancing: Balancing::None,
            ..TreeConfig::default()
        });
        for i in 0..300u32 {
            let p = Vec3::new((i % 7) as f32, ((i / 7) % 6) as f32, (i / 42) as f32) * 3.0;
            tree.create_proxy(
                Aabb::new(p, p + Vec3::splat(1.0 + (i % 3) as f32)),
                Vec3::X,
                i,
            )
            .expect("a valid box");
        }
        tree
    }

    fn watch<'a>(tree: &'a DynamicTree<Vec3, u32>, step: u64, rev: u64) -> Watch<'a> {
        Watch {
            tree: Some(TreeRef::D3(tree)),
            step,
            document_id: 1,
            rev,
            edits: 0,
            playing: true,
            every: 10,
        }
    }

    /// Waits for the running build and files its result.
    fn settle(health: &mut Health, watch: &Watch<'_>) {
        health.wait();
        health.poll(watch.document_id);
        assert!(!health.is_busy());
    }

    #[test]
    fn the_workers_sample_equals_the_synchronous_computation() {
        let tree = tree();
        let mut health = Health::default();
        let w = watch(&tree, 4, 1);
        assert!(health.tick(&w), "the first frame starts a build");
        assert!(health.is_busy(), "on a worker");
        assert_eq!(health.taken(), 0);
        settle(&mut health, &w);
        let sample = *health.at_or_before(4).expect("filed at step 4");
        let view = TreeRef::D3(&tree);
        let fresh = LeafBoxes::of(&view).best_rebuild().expect("builds");
        assert_eq!(sample.step, 4);
        assert_eq!(sample.fresh, fresh);
        assert_eq!(sample.live, Shape::of(&view));
        assert_eq!(sample.live.cost, tree.sah_cost());
        assert_eq!(sample.least_height(), 9);
        assert_eq!(sample.ratio(), tree.sah_cost() / fresh.shape.cost);
        assert!(sample.ratio() > 1.0, "{sample:?}");
        assert_eq!(health.taken(), 1);
    }

    #[test]
    fn samples_come_every_k_steps_while_playing_and_at_once_when_paused() {
        let tree = tree();
        let mut health = Health::default();
        health.tick(&watch(&tree, 0, 1));
        settle(&mut health, &watch(&tree, 0, 1));
        // Playing: steps 1..9 are not due, step 10 is.
        for step in 1..10 {
            assert!(!health.tick(&watch(&tree, step, 1 + step)), "step {step}");
        }
        assert!(health.tick(&watch(&tree, 10, 11)));
        settle(&mut health, &watch(&tree, 10, 11));
        assert_eq!(
            health.samples().keys().copied().collect::<Vec<_>>(),
            vec![0, 10]
        );
        // Paused: the next change samples at once; no change, no sample.
        let paused = Watch {
            playing: false,
            ..watch(&tree, 11, 12)
        };
        assert!(health.tick(&paused));
        settle(&mut health, &paused);
        assert!(!health.tick(&paused));
        // An edit while playing samples at once.
        let edited = Watch {
            edits: 1,
            ..watch(&tree, 12, 13)
        };
        assert!(health.tick(&edited));
        settle(&mut health, &edited);
        assert_eq!(
            health.samples().keys().copied().collect::<Vec<_>>(),
            vec![0, 10, 11, 12]
        );
        // Discarding the past after step 10 drops 11 and 12.
        health.truncate_after(10);
        assert_eq!(
            health.samples().keys().copied().collect::<Vec<_>>(),
            vec![0, 10]
        );
        assert_eq!(health.at_or_before(15).map(|s| s.step), Some(10));
    }

    #[test]
    fn a_result_for_a_discarded_past_or_another_document_is_dropped() {
        let tree = tree();
        let mut health = Health::default();
        assert!(health.tick(&watch(&tree, 20, 1)));
        health.truncate_after(5);
        settle(&mut health, &watch(&tree, 6, 2));
        assert!(health.samples().is_empty());
        // Another document opened while a build ran.
        assert!(health.tick(&watch(&tree, 20, 3)));
        let other = Watch {
            document_id: 2,
            ..watch(&tree, 0, 4)
        };
        health.wait();
        health.poll(other.document_id);
        assert!(health.samples().is_empty());
        assert_eq!(health.taken(), 0);
    }

    #[test]
    fn on_the_ui_thread_a_sample_is_filed_in_the_same_tick() {
        let tree = tree();
        let mut health = Health::default();
        health.set_on_ui_thread(true);
        let w = watch(&tree, 7, 1);
        assert!(health.tick(&w), "filed: draw again");
        assert!(!health.is_busy());
        let view = TreeRef::D3(&tree);
        let fresh = LeafBoxes::of(&view).best_rebuild().expect("builds");
        assert_eq!(health.at_or_before(7).map(|s| s.fresh), Some(fresh));
        assert!(!health.tick(&w), "nothing new");
    }

    #[test]
    fn no_tree_takes_no_sample() {
        let mut health = Health::default();
        let w = Watch {
            tree: None,
            step: 3,
            document_id: 1,
            rev: 1,
            edits: 0,
            playing: false,
            every: 10,
        };
        assert!(!health.tick(&w));
        assert!(health.samples().is_empty());
        assert!(health.at_or_before(3).is_none());
    }
}
