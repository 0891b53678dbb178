//! What one side's world and tree views draw: a session, its snapshot, and the preferences
//! and view state it is shown with. The document's side is the state's own
//! ([`State::pane`](super::state::State::pane)); a comparison's side B is its own session and
//! snapshot shown with A's camera ([`CompareRun::pane`](super::compare::CompareRun::pane)), so
//! both sides are drawn by the same views.

use super::camera::{Plane, WorldRect};
use super::prefs::Prefs;
use super::snapshot::Snapshot;
use super::state::{Dialogs, ViewState};
use crate::scene::Scene;
use crate::session::Session;
use crate::stream::engine::{EngineStep, EngineTree, WireBox};
use crate::tree::Aabb;
use glam::{Vec2, Vec3};

/// See the module doc. Cheap to copy: references only.
#[derive(Clone, Copy)]
pub struct Pane<'a> {
    /// The session shown.
    pub session: &'a Session,
    /// The step shown: the session's simulation, or a step of it held while the session goes
    /// on (an engine streaming now, its view paused).
    pub sim: &'a crate::source::Sim,
    /// What the views draw of it.
    pub snapshot: &'a Snapshot,
    /// The preferences it is shown with.
    pub prefs: &'a Prefs,
    /// The shared view state it is shown with (camera, plane, selection).
    pub view: &'a ViewState,
    /// The window's dialogs (a view keeps its keys while one is up).
    pub dialogs: &'a Dialogs,
    /// The views show the engine's received tree in place of ours.
    pub engine_tree: bool,
    /// The recent steps' figures (the document's side; a comparison's B keeps none).
    pub history: Option<&'a super::history::RecentSteps>,
}

impl<'a> Pane<'a> {
    /// The document shown.
    #[must_use]
    pub fn doc(&self) -> &'a Scene {
        self.session.doc()
    }

    /// The fat box of a sphere, from the broad phase.
    #[must_use]
    pub fn fat_box(&self, id: u32) -> Option<Aabb<Vec3>> {
        self.sim.broadphase().fat_aabb(id)
    }

    /// The world point new spheres get for the coordinate the view plane hides.
    #[must_use]
    pub fn view_center_base(&self) -> Vec3 {
        let w = &self.doc().world;
        (w.min + w.max) * 0.5
    }

    /// True when the world is shown in the 3D view: a 3D scene, with "3D" chosen.
    #[must_use]
    pub fn shows_world_3d(&self) -> bool {
        self.view.world_3d && self.doc().dimensions == 3
    }

    /// What fitting the world view frames: the spheres and the tree when the scene asks for
    /// it (`view.fit_content`), else everything with the walls.
    #[must_use]
    pub fn fit_bounds(&self) -> Option<WorldRect> {
        if let Some(r) = self.view.fit_to {
            return Some(r);
        }
        let content = self
            .doc()
            .view
            .as_ref()
            .and_then(|v| v.fit_content)
            .unwrap_or(false);
        if content {
            // A border of a tenth of the content's larger side, so no box touches the edge.
            let framed = self.snapshot.content_bounds().map(|r| {
                // In f64 and kept within f32: the content of a huge world is wider than f32.
                let pad = (0.1 * r.size_f64().max_element()).min(f64::from(f32::MAX)) as f32;
                let lim = Vec2::splat(f32::MAX);
                WorldRect::new(
                    (r.min - Vec2::splat(pad)).max(-lim),
                    (r.max + Vec2::splat(pad)).min(lim),
                )
            });
            framed.or_else(|| self.snapshot.bounds())
        } else {
            self.snapshot.bounds()
        }
    }

    /// The scene's caption, if it has one.
    #[must_use]
    pub fn caption(&self) -> Option<&'a str> {
        self.doc().view.as_ref().and_then(|v| v.caption.as_deref())
    }

    /// [`WorldRect::huge_note`] of what the world view shows: the snapshot's bounds, or the
    /// document's world when the snapshot is not made yet (just opened or imported).
    #[must_use]
    pub fn huge_world_note(&self) -> Option<String> {
        let world = self.doc().world;
        self.snapshot
            .bounds()
            .and_then(|b| b.huge_note())
            .or_else(|| WorldRect::new(world.min.truncate(), world.max.truncate()).huge_note())
    }

    /// The engine's own broad phase at the step shown (a received stream's, when its step
    /// carried it).
    #[must_use]
    pub fn engine_step(&self) -> Option<&'a EngineStep> {
        self.session.engine_step_at(self.sim.step_index())
    }

    /// The engine's received tree at step `step`, when that step carried one.
    #[must_use]
    pub fn engine_tree_at(&self, step: u64) -> Option<&'a EngineTree> {
        self.session.engine_tree_at(step)
    }

    /// True when the views show the engine's received tree in place of ours.
    #[must_use]
    pub fn shows_engine_tree(&self) -> bool {
        self.engine_tree
    }

    /// The pairs the engine missed at the step shown (as far as the record lists them).
    pub fn engine_missed_here(&self) -> impl Iterator<Item = [u32; 2]> + 'a {
        let at = self.sim.step_index();
        self.session
            .engine()
            .into_iter()
            .flat_map(|r| r.summary.missed.iter())
            .filter(move |p| p.index == at)
            .map(|p| p.pair)
    }
}

/// What a snapshot was taken of: the session, the revision of what is shown, the window's own
/// revision, the plane, and which of the engine's parts are drawn.
pub type SnapshotKey = (u64, u64, u64, Plane, bool, bool);

/// What a snapshot shows: `sim`, a step of `session` (its own simulation, or a step held),
/// `shown_rev` the revision of that (the session's, or one the holder counts).
#[derive(Clone, Copy)]
pub struct Shown<'a> {
    /// The session.
    pub session: &'a Session,
    /// The step shown.
    pub sim: &'a crate::source::Sim,
    /// Changes whenever `sim` does.
    pub shown_rev: u64,
}

impl<'a> Shown<'a> {
    /// The session's own step.
    #[must_use]
    pub fn session(session: &'a Session) -> Shown<'a> {
        Shown {
            session,
            sim: session.sim(),
            shown_rev: session.rev(),
        }
    }
}

/// Takes a new snapshot of `shown` into `snapshot` when `key` (what it was taken of) says
/// the step shown, the plane or the engine's parts drawn changed: the engine's tree in place
/// of ours (`engine_tree`), its pairs by class (`engine_parts`). True when it was taken.
pub fn refresh_snapshot(
    snapshot: &mut Snapshot,
    key: &mut Option<SnapshotKey>,
    shown: Shown<'_>,
    view_rev: u64,
    plane: Plane,
    engine_tree: bool,
    engine_parts: bool,
) -> bool {
    let Shown {
        session,
        sim,
        shown_rev,
    } = shown;
    let now = (
        session.id(),
        shown_rev,
        view_rev,
        plane,
        engine_tree,
        engine_parts,
    );
    if *key == Some(now) {
        return false;
    }
    snapshot.refresh(sim, plane);
    if engine_tree && let Some(tree) = session.engine_tree_at(sim.step_index()) {
        snapshot.use_tree(tree, plane);
    }
    snapshot.set_walls(&session.doc().world, plane);
    snapshot.engine_pairs.clear();
    if engine_parts && let Some(step) = session.engine_step_at(sim.step_index()) {
        // The engine's pairs, each with why it exists, for the world view's colours.
        let tight: Vec<WireBox> = sim
            .boxes()
            .iter()
            .map(|b| WireBox {
                id: b.id,
                min: b.tight.min.to_array(),
                max: b.tight.max.to_array(),
            })
            .collect();
        let margin = session.engine().and_then(|e| e.summary.margin);
        let classes = crate::stream::engine::classify_step(step, &tight, margin, sim.dimensions());
        let pairs = classes.into_iter().filter_map(|([a, b], class)| {
            Some((snapshot.sphere_index(a)?, snapshot.sphere_index(b)?, class))
        });
        let pairs: Vec<_> = pairs.collect();
        snapshot.engine_pairs = pairs;
    }
    *key = Some(now);
    true
}
