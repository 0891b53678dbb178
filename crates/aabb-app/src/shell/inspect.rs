//! [`Inspect`]: a read-only view of the window's state for tests and the self-closing
//! screenshot runs (`screenshot`, `frames`): the model (simulation, document, recording),
//! the dialogs, and where the views drew what last frame. The window itself never reads
//! through it; [`DebuggerApp`] keeps only what changes the state.

use super::*;

/// A read-only view of a [`DebuggerApp`] (see [`DebuggerApp::inspect`]).
#[derive(Clone, Copy)]
pub struct Inspect<'a> {
    pub(super) app: &'a DebuggerApp,
}

impl<'a> Inspect<'a> {
    /// The running simulation (a scene's or a trace's).
    #[must_use]
    pub fn sim(self) -> &'a crate::source::Sim {
        self.app.state.session.sim()
    }

    /// The document (the scene as last opened or saved, plus settings changed since).
    #[must_use]
    pub fn document(self) -> &'a Scene {
        self.app.state.session.doc()
    }

    /// The open file, if any.
    #[must_use]
    pub fn path(self) -> Option<&'a Path> {
        self.app.state.session.path()
    }

    /// True when there are unsaved changes.
    #[must_use]
    pub fn is_dirty(self) -> bool {
        self.app.state.session.dirty()
    }

    /// True while playing.
    #[must_use]
    pub fn is_playing(self) -> bool {
        self.app.state.model.playing
    }

    /// The status line.
    #[must_use]
    pub fn status(self) -> &'a str {
        &self.app.state.model.status
    }

    /// Why the simulation stopped and paused (the pair limit, or a body the broad phase
    /// refused), while it is stopped.
    #[must_use]
    pub fn stopped(self) -> Option<&'a str> {
        self.app.state.model.stopped.as_deref()
    }

    /// The engine's own broad phase at the step shown (a received stream's).
    #[must_use]
    pub fn engine_step(self) -> Option<&'a crate::stream::engine::EngineStep> {
        self.app.state.engine_step()
    }

    /// The engine's received tree at trace step `step`, when that step carried one.
    #[must_use]
    pub fn engine_tree_at(self, step: u64) -> Option<&'a crate::stream::engine::EngineTree> {
        self.app.state.session.engine_tree_at(step)
    }

    /// The pairs the engine's broad phase missed at the step shown.
    #[must_use]
    pub fn engine_missed_here(self) -> Vec<[u32; 2]> {
        self.app.state.pane().engine_missed_here().collect()
    }

    /// True while a step runs on the stepping thread.
    #[must_use]
    pub fn stepping_in_background(self) -> bool {
        self.app.state.stepping_in_background()
    }

    /// The most candidate pairs a step may find.
    #[must_use]
    pub fn pair_limit(self) -> usize {
        self.app.state.session.sim().pair_limit()
    }

    /// The error shown in the error window, if any.
    #[must_use]
    pub fn error(self) -> Option<&'a str> {
        self.app.state.model.error.as_deref()
    }

    /// The preferences.
    #[must_use]
    pub fn prefs(self) -> &'a Prefs {
        &self.app.state.prefs
    }

    /// The selection.
    #[must_use]
    pub fn selection(self) -> Option<Pick> {
        self.app.state.view.selection
    }

    /// What the pointer rests on, in either view.
    #[must_use]
    pub fn hover(self) -> Option<Pick> {
        self.app.state.view.hover
    }

    /// The sphere drag in progress, or the last one.
    #[must_use]
    pub fn drag(self) -> Option<SphereDrag> {
        self.app.state.view.drag
    }

    /// The window title the app asked for.
    #[must_use]
    pub fn title(self) -> &'a str {
        &self.app.title
    }

    /// The world camera.
    #[must_use]
    pub fn camera(self) -> WorldCamera {
        self.app.state.view.camera
    }

    /// The fat box of a sphere, from the broad phase.
    #[must_use]
    pub fn fat_box(self, id: u32) -> Option<Aabb<Vec3>> {
        self.app.state.pane().fat_box(id)
    }

    /// Queues a command; it is applied at the start of the next frame, before the views draw
    /// Where a sphere's centre was drawn in the last frame's world view.
    #[must_use]
    pub fn sphere_screen_pos(self, id: u32) -> Option<Pos2> {
        let viewport = self.app.views.world.rect()?;
        let sphere = self.app.state.snapshot.sphere(id)?;
        Some(
            self.app
                .state
                .view
                .camera
                .transform(viewport)
                .pos(sphere.center),
        )
    }

    /// Where the world view was drawn last frame, if it was.
    #[must_use]
    pub fn world_view_rect(self) -> Option<egui::Rect> {
        self.app.views.world.rect()
    }

    /// The recording of the open document (the timeline's steps and edits).
    #[must_use]
    pub fn recording(self) -> &'a crate::replay::Recording<crate::source::Sim> {
        self.app.state.session.recording()
    }

    /// How far the recording being opened on a worker thread has got, while one is.
    #[must_use]
    pub fn opening_progress(self) -> Option<crate::replay::file::LoadProgress> {
        self.app
            .state
            .dialogs
            .opening
            .as_ref()
            .map(|j| j.progress())
    }

    /// The received step the live view holds (`None`: it follows the newest).
    #[must_use]
    pub fn live_held_step(self) -> Option<u64> {
        self.app
            .state
            .live_held
            .as_ref()
            .map(|h| h.sim.step_index())
    }

    /// The structure hash of our broad phase at the received step the live view holds.
    #[must_use]
    pub fn live_held_hash(self) -> Option<u64> {
        self.app
            .state
            .live_held
            .as_ref()
            .map(|h| h.sim.structure_hash())
    }

    /// Live sessions that have ended and been taken in so far.
    #[must_use]
    pub fn live_sessions_ended(self) -> u64 {
        self.app.state.live_sessions_ended
    }

    /// The received sessions kept beside the one shown, oldest first: each one's engine and
    /// its last recorded step.
    #[must_use]
    pub fn received_sessions(self) -> Vec<(String, u64)> {
        self.app
            .state
            .sessions
            .iter()
            .map(|s| {
                (
                    s.received().map_or_else(String::new, |r| r.from.clone()),
                    s.recording().last_step(),
                )
            })
            .collect()
    }

    /// True while the world and tree views draw an engine streaming now.
    #[must_use]
    pub fn shows_live(self) -> bool {
        self.app.state.shows_live()
    }

    /// What the world and tree views draw of an engine streaming now.
    #[must_use]
    pub fn live_snapshot(self) -> &'a Snapshot {
        &self.app.state.live_snapshot
    }

    /// The live session our side steps, while an engine streams: its step shown, its last
    /// recorded step and its broad phase's structure hash (`None` before the first step).
    #[must_use]
    pub fn live_session(self) -> Option<(u64, u64, u64)> {
        let job = self.app.state.dialogs.live.as_ref()?;
        let live = job.session();
        let session = live.as_ref()?;
        Some((
            session.sim().step_index(),
            session.recording().last_step(),
            session.sim().structure_hash(),
        ))
    }

    /// How the live link stands, while the window listens or receives.
    #[must_use]
    pub fn live_status(self) -> Option<crate::live::LiveStatus> {
        self.app
            .state
            .dialogs
            .live
            .as_ref()
            .map(crate::live::LiveJob::status)
    }

    /// Where the timeline drew `step` on track `track` (its middle; the tracks are
    /// [`TRACKS`](crate::views::timeline::TRACKS)) last frame, if it was shown.
    #[must_use]
    pub fn timeline_step_pos(self, step: u64, track: usize) -> Option<Pos2> {
        self.app.views.timeline.step_pos(step, track)
    }

    /// The comparison running beside the document, if one does.
    #[must_use]
    pub fn compare(self) -> Option<&'a crate::compare::CompareRun> {
        self.app.state.compare.as_ref()
    }

    /// Where side B's world view was drawn last frame (a comparison's right half).
    #[must_use]
    pub fn compare_world_rect(self) -> Option<egui::Rect> {
        self.app.views.b.world.rect()
    }

    /// Where side B's tree view was drawn last frame.
    #[must_use]
    pub fn compare_tree_rect(self) -> Option<egui::Rect> {
        self.app.views.b.tree.rect()
    }

    /// The timeline's tracks as drawn last frame: each track's value at the playhead (A's,
    /// and B's while comparing), and the points of B's line on each.
    #[must_use]
    pub fn timeline_values(self) -> (&'a [crate::views::timeline::TrackValue], &'a [usize]) {
        (
            self.app.views.timeline.values(),
            self.app.views.timeline.b_points(),
        )
    }

    /// The tree's health samples (the statistics' readout, the timeline's track).
    #[must_use]
    pub fn health(self) -> &'a crate::health_monitor::Health {
        &self.app.state.model.health
    }

    /// Measures the tree's health on the UI thread, at once (true), or on a worker thread
    /// Waits for the running fresh build of the tree's health, if one runs; the next frame
    /// Where the timeline drew its health track's points (one per sample) last frame.
    #[must_use]
    pub fn timeline_health_points(self) -> &'a [Pos2] {
        self.app.views.timeline.health_points()
    }

    /// Where the tree diagram was drawn last frame, if it was.
    #[must_use]
    pub fn tree_view_rect(self) -> Option<egui::Rect> {
        self.app.views.tree.rect()
    }

    /// Where a sphere's centre was drawn in the last frame's 3D view (`None` when the 3D view
    /// was not shown or the sphere is behind its camera).
    #[must_use]
    pub fn sphere_screen_pos_3d(self, id: u32) -> Option<Pos2> {
        self.app
            .views
            .world3d
            .sphere_screen_pos(&self.app.state.snapshot, id)
    }

    /// The 3D view's orbit camera.
    #[must_use]
    pub fn orbit_camera(self) -> crate::camera3d::OrbitCamera {
        self.app.views.world3d.camera()
    }

    /// Where the 3D view was drawn last frame, if it was.
    #[must_use]
    pub fn world_3d_rect(self) -> Option<egui::Rect> {
        self.app.views.world3d.rect()
    }

    /// The screen point under which a world plane point was drawn last frame.
    #[must_use]
    pub fn screen_pos_of_world(self, pos_in_world: Vec2) -> Option<Pos2> {
        let viewport = self.app.views.world.rect()?;
        Some(
            self.app
                .state
                .view
                .camera
                .transform(viewport)
                .pos(pos_in_world),
        )
    }

    /// The tree view (what it drew last frame: layout, labels, fold markers).
    #[must_use]
    pub fn tree_view(self) -> &'a TreeView {
        &self.app.views.tree
    }

    /// Where a tree node was drawn in the last frame's tree view.
    #[must_use]
    pub fn tree_node_screen_pos(self, node: NodeId) -> Option<Pos2> {
        self.app
            .views
            .tree
            .node_screen_pos(&self.app.state.snapshot, node)
    }

    /// The box the world view highlights for the hover (a node's box, or a sphere's fat box).
    #[must_use]
    pub fn world_highlight(self) -> Option<WorldRect> {
        match self.app.state.view.hover? {
            Pick::Sphere(id) => {
                let s = self.app.state.snapshot.sphere(id)?;
                Some(s.fat.unwrap_or(s.tight))
            }
            Pick::Node(node) => {
                let i = self.app.state.snapshot.node_index(node)?;
                Some(self.app.state.snapshot.nodes[i].rect)
            }
        }
    }

    /// The snapshot the views drew last frame.
    #[must_use]
    pub fn snapshot(self) -> &'a Snapshot {
        &self.app.state.snapshot
    }

    /// The name shown in the title: the file name, or the scene's name.
    #[must_use]
    pub fn document_name(self) -> String {
        self.app.state.document_name()
    }

    /// The Advisor's finished sweep, if any (the last one that ran to the end).
    #[must_use]
    pub fn advisor_report(self) -> Option<&'a crate::sweep::SweepReport> {
        self.app.views.advisor.report()
    }

    /// True while the Advisor's sweep runs.
    #[must_use]
    pub fn advisor_running(self) -> bool {
        self.app.views.advisor.is_running()
    }

    /// The Advisor's message (a refused grid, a cancelled or failed sweep), if any.
    #[must_use]
    pub fn advisor_message(self) -> Option<&'a str> {
        self.app.views.advisor.message()
    }

    /// Where the Advisor drew point `index` of its report in last frame's reinserts plot
    /// (a click there applies the point).
    #[must_use]
    pub fn advisor_point_screen_pos(self, index: usize) -> Option<Pos2> {
        self.app.views.advisor.point_screen_pos(index)
    }
}
