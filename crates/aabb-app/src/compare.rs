//! Compare mode: a second run, B, beside the document's, A, on the same motion: "margin 0.05
//! against 0.2", "Box2D's tree against ours", "the engine's tree against ours on my pile".
//!
//! B is a whole [`State`] of its own (its simulation, recording, snapshot and charts), so
//! B's world and tree views are the same views as A's, drawing B's state. It starts as a
//! copy of A at the step shown, with B's broad phase and tree settings applied there as
//! edits of B's recording (A's recorded future is not B's: B makes its steps anew); from then
//! on A and B run in lockstep: every step A makes, B makes; every edit of the motion made on
//! A (a sphere moved, added or deleted, a rebuild, the pair limit) is made on B; the
//! timeline's playhead moves both (before the start B has no run of its own; an edit there
//! starts it from that step). A's settings stay A's (a slider tunes A against a fixed B). Each step's difference ([`StepDiff`]: pairs only in
//! A, only in B, reinserts, cost, time) is kept as a [`CompareRow`], for the timeline and
//! the readout above the views. Another document ends the comparison.

use crate::compare_model::{Side, StepDiff};
use crate::replay::Edit;
use crate::state::State;

/// One compared step: how many pairs only one side reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompareRow {
    /// The step.
    pub step: u64,
    /// Candidate pairs A reported and B did not.
    pub only_a: u32,
    /// Candidate pairs B reported and A did not.
    pub only_b: u32,
}

/// The comparison's totals over the compared steps (see [`CompareRun::totals`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompareTotals {
    /// Steps compared.
    pub steps: u64,
    /// Steps whose pairs differ.
    pub differing: u64,
    /// Pairs only A reported, over those steps.
    pub only_a: u64,
    /// Pairs only B reported, over those steps.
    pub only_b: u64,
    /// The first step whose pairs differ.
    pub first_difference: Option<u64>,
}

/// A comparison running beside the document (see the module doc).
pub struct CompareRun {
    /// B's broad phase and settings.
    pub side: Side,
    /// B's state: drawn by B's views, stepped with A.
    pub b: Box<State>,
    /// The document compared (another ends the comparison).
    pub document_id: u64,
    /// The step both runs started from (B's settings apply from there).
    pub started_at: u64,
    /// One row per step run in lockstep, in step order (a step run again after the timeline
    /// moved back replaces the rows from there).
    pub rows: Vec<CompareRow>,
    /// The difference at the step shown, when B is at A's step.
    pub here: Option<StepDiff>,
    /// B's steps made on the stepping thread beside A's (the rest B made here).
    pub steps_beside: u64,
}

impl CompareRun {
    /// The comparison's totals over its rows.
    #[must_use]
    pub fn totals(&self) -> CompareTotals {
        let mut t = CompareTotals::default();
        for r in &self.rows {
            t.steps += 1;
            if r.only_a > 0 || r.only_b > 0 {
                t.differing += 1;
                t.first_difference.get_or_insert(r.step);
            }
            t.only_a += u64::from(r.only_a);
            t.only_b += u64::from(r.only_b);
        }
        t
    }
}

/// True for an edit of the motion, which B makes too; settings and the broad phase are
/// each side's own.
fn is_motion_edit(edit: &Edit) -> bool {
    matches!(
        edit,
        Edit::MoveSphere { .. }
            | Edit::AddSphere(_)
            | Edit::RemoveSphere { .. }
            | Edit::Rebuild
            | Edit::SetPairLimit(_)
    )
}

impl State {
    /// The side A is now: its broad phase and tree settings.
    #[must_use]
    pub fn side_now(&self) -> Side {
        Side {
            kind: self.model.sim.broadphase_kind(),
            config: self.model.sim.tree_settings(),
        }
    }

    /// Starts comparing with `side` from the step shown (see the module doc). Fails, with
    /// the message for the status line, when B's settings are refused.
    pub(crate) fn start_compare(&mut self, side: Side) -> Result<(), String> {
        self.stop_compare();
        let mut b = Box::new(self.twin());
        let at = self.model.sim.step_index();
        if !b.take_side(&side) {
            return Err(format!(
                "B was not started: {} ({})",
                side.describe(),
                b.model.status
            ));
        }
        // B's run is its own from here: A's recorded future is not B's (with A's settings
        // it would be shown as B's, and no row kept).
        b.discard_future();
        b.model.discarded = None;
        let mut run = CompareRun {
            side,
            b,
            document_id: self.model.document_id,
            started_at: at,
            rows: Vec::new(),
            here: None,
            steps_beside: 0,
        };
        run.b.model.status.clear();
        self.compare = Some(run);
        // B is at A's step with its settings applied there: no step was made, so B is not
        // brought back to the step before (which would step it again without them).
        self.follow_compare(false);
        self.retake_difference(true);
        Ok(())
    }

    /// Gives this state (B) `side`'s broad phase and tree settings at its step, as recorded
    /// edits, where they differ; true when it has them.
    fn take_side(&mut self, side: &Side) -> bool {
        if side.kind != self.model.sim.broadphase_kind() {
            self.apply(crate::commands::Command::SetBroadphase(side.kind), true);
        }
        if side.config != self.model.sim.tree_settings() {
            self.apply(crate::commands::Command::SetTreeSettings(side.config), true);
        }
        self.side_now() == *side
    }

    /// Ends the comparison, if one runs.
    pub(crate) fn stop_compare(&mut self) {
        self.compare = None;
    }

    /// Brings B to A's step: B steps on (recorded) to a step A has just made (`stepped`), or
    /// shows the recorded step the timeline moved to; then the difference at that step (a
    /// step just made keeps its row).
    pub(crate) fn follow_compare(&mut self, stepped: bool) {
        let Some(run) = self.compare.as_mut() else {
            return;
        };
        if run.document_id != self.model.document_id {
            self.compare = None;
            self.model
                .status
                .push_str(" The comparison ended: another document was opened or restarted.");
            return;
        }
        let at = self.model.sim.step_index();
        let b = &mut run.b;
        // A step A has just made, B makes too, from the step before (discarding B's recorded
        // future there, as A's was); otherwise B shows A's step as recorded.
        let from = if stepped { at.saturating_sub(1) } else { at };
        if b.model.sim.step_index() != from && from <= b.model.recording.last_step() {
            b.seek_to(from);
        }
        // Every step B makes, it makes with its own settings: at a step before the one the
        // comparison started from (the timeline moved back), B's recording has A's, so B
        // takes its side again where it steps on from. Where B cannot take it (refused, its
        // status says why), B does not step: a step on A's settings would be shown as B's.
        let will_step = stepped || b.model.sim.step_index() < at;
        let on_side = b.side_now() == run.side || (will_step && b.take_side(&run.side));
        // B's own run goes back to where it took its settings.
        if on_side {
            run.started_at = run.started_at.min(b.model.sim.step_index());
        }
        // B's step made on the stepping thread beside A's: recorded as a step made here.
        if let Some((sim, outcome)) = self.b_stepped.take()
            && stepped
            && on_side
            && sim.broadphase_kind() == run.side.kind
            && sim.tree_settings() == run.side.config
            && b.model.sim.step_index() == from
            && sim.step_index() == at
            && !b.at_past_step()
            && b.model.recording.record_step(&sim).is_ok()
        {
            b.model.sim = sim;
            b.after_step(outcome);
            run.steps_beside += 1;
        }
        // B stepping on to A's step (A showing its recorded future, B making it anew) is a
        // step run in lockstep too: its row is kept.
        let b_steps_on = on_side && b.model.sim.step_index() < at;
        while on_side && b.model.sim.step_index() < at {
            let before = b.model.sim.step_index();
            b.step_once();
            if b.model.sim.step_index() == before {
                // B stopped (its pair limit, the end of a trace): its status says why.
                break;
            }
        }
        self.retake_difference(stepped || b_steps_on);
    }

    /// The difference at the step shown, taken again (B is where it is); `keep`: it becomes
    /// the step's row (replacing the rows from there).
    fn retake_difference(&mut self, keep: bool) {
        let Some(run) = self.compare.as_mut() else {
            return;
        };
        let at = self.model.sim.step_index();
        let b = &run.b;
        // At a step before the comparison started B has A's settings: no difference of B's.
        run.here = (b.model.sim.step_index() == at && b.side_now() == run.side)
            .then(|| StepDiff::between(self.model.sim.report(), b.model.sim.report()));
        if keep && let Some(d) = &run.here {
            let keep = run.rows.partition_point(|r| r.step < at);
            run.rows.truncate(keep);
            run.rows.push(CompareRow {
                step: at,
                only_a: u32::try_from(d.only_a.len()).unwrap_or(u32::MAX),
                only_b: u32::try_from(d.only_b.len()).unwrap_or(u32::MAX),
            });
        }
    }

    /// Makes an edit of the motion that A accepted on B too (at A's step), recorded in B's
    /// recording; the difference is taken again.
    pub(crate) fn mirror_edit(&mut self, edit: &Edit) {
        if self.compare.is_none() || !is_motion_edit(edit) {
            return;
        }
        self.follow_compare(false);
        let Some(run) = self.compare.as_mut() else {
            return;
        };
        let b = &mut run.b;
        match b.apply_edit(edit.clone()) {
            Ok(_) => {
                b.model.rev += 1;
                b.sync_stopped();
                // Before the step the comparison started at, B's recording has A's settings;
                // the edit discarded its future, so B runs on from here with its own.
                if b.side_now() != run.side && b.take_side(&run.side) {
                    run.started_at = run.started_at.min(b.model.sim.step_index());
                }
                // Refused, B's status says why and B does not step (`follow_compare`).
            }
            Err(e) => {
                b.model.status = format!("B refused \"{}\": {e}", edit.describe());
            }
        }
        // The step's row holds the difference after its edits.
        self.retake_difference(true);
    }

    /// Before B's views draw: B shows what A shows (camera, plane, preferences), and its
    /// snapshot follows its model.
    pub(crate) fn prepare_compare_views(&mut self) {
        let Some(run) = self.compare.as_mut() else {
            return;
        };
        let b = &mut run.b;
        b.view.camera = self.view.camera;
        b.view.plane = self.view.plane;
        b.view.world_3d = self.view.world_3d;
        b.view.fit_pending = false;
        b.view.fit_3d_request = self.view.fit_3d_request;
        b.view.tree_fit_request = self.view.tree_fit_request;
        b.view.interactive = self.view.interactive;
        let mut prefs = self.prefs.clone();
        if self.prefs.compare_b_engine_tree {
            // The engine's tree beside ours: B draws the engine's, whatever A draws.
            prefs.views_show_engine_tree = true;
        }
        if b.prefs != prefs {
            b.prefs = prefs;
            b.model.rev += 1;
        }
        b.refresh_snapshot();
    }
}
