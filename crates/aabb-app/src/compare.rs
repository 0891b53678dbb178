//! Compare mode: a second run, B, beside the document's, A, on the same motion: "margin 0.05
//! against 0.2", "Box2D's tree against ours", "the engine's tree against ours on my pile".
//!
//! B is a [`Session`] of its own (its simulation and recording) with its own snapshot, shown
//! through a [`Pane`] as A is, so B's world and tree views are the same views as A's. It
//! starts as a copy of A's session at the step shown, with B's broad phase and tree settings applied there as
//! edits of B's recording (A's recorded future is not B's: B makes its steps anew); from then
//! on A and B run in lockstep: every step A makes, B makes; every edit of the motion made on
//! A (a sphere moved, added or deleted, a rebuild, the pair limit) is made on B; the
//! timeline's playhead moves both (before the start B has no run of its own; an edit there
//! starts it from that step). A's settings stay A's (a slider tunes A against a fixed B). Each step's difference ([`StepDiff`]: pairs only in
//! A, only in B, reinserts, cost, time) is kept as a [`CompareRow`], for the timeline and
//! the readout above the views. Another document ends the comparison.

use crate::compare_model::{Side, StepDiff};
use crate::pane::{Pane, SnapshotKey};
use crate::prefs::Prefs;
use crate::replay::Edit;
use crate::session::Session;
use crate::snapshot::Snapshot;
use crate::state::{Dialogs, State, ViewState};

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
    /// B's session: stepped with A's.
    pub b: Session,
    /// What B's views draw.
    pub b_snapshot: Snapshot,
    b_snapshot_key: Option<SnapshotKey>,
    /// B's view state: A's camera and plane, no selection of its own.
    pub b_view: ViewState,
    /// B's preferences: A's, but for the engine's tree drawn on B's side.
    pub b_prefs: Prefs,
    /// Why B did not take an edit or its side (for the readout), if it did not.
    pub b_note: Option<String>,
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

    /// What B's world and tree views draw (the window's `dialogs` for their keys).
    #[must_use]
    pub fn pane<'a>(&'a self, dialogs: &'a Dialogs) -> Pane<'a> {
        Pane {
            session: &self.b,
            sim: self.b.sim(),
            snapshot: &self.b_snapshot,
            prefs: &self.b_prefs,
            view: &self.b_view,
            dialogs,
            engine_tree: self.b_prefs.views_show_engine_tree && self.b.engine().is_some(),
            history: None,
        }
    }

    /// B takes its side's broad phase and tree settings at its step, as recorded edits, where
    /// they differ; true when it has them (else `b_note` says why not).
    fn take_side(&mut self, frame: u64) -> bool {
        let side = self.side.clone();
        let mut refused = None;
        if side.kind != self.b.sim().broadphase_kind()
            && let Err(e) = self.b.edit(Edit::SetBroadphase(side.kind), frame)
        {
            refused = Some(e.to_string());
        }
        if refused.is_none()
            && side.config != self.b.settings()
            && let Err(e) = self.b.edit(Edit::SetTreeSettings(side.config), frame)
        {
            refused = Some(e.to_string());
        }
        if let Some(why) = refused {
            self.b_note = Some(format!("B's settings refused: {why}"));
        }
        side_of(&self.b) == side
    }
}

/// The side `session` is now: its broad phase and tree settings.
pub fn side_of(session: &Session) -> Side {
    Side {
        kind: session.sim().broadphase_kind(),
        config: session.settings(),
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
        side_of(&self.session)
    }

    /// Starts comparing with `side` from the step shown (see the module doc). Fails, with
    /// the message for the status line, when B's settings are refused.
    pub(crate) fn start_compare(&mut self, side: Side) -> Result<(), String> {
        self.stop_compare();
        let at = self.session.sim().step_index();
        let mut run = CompareRun {
            side: side.clone(),
            b: self.session.twin(),
            b_snapshot: Snapshot::default(),
            b_snapshot_key: None,
            b_view: ViewState::new(self.view.interactive),
            b_prefs: self.prefs.clone(),
            b_note: None,
            document_id: self.session.id(),
            started_at: at,
            rows: Vec::new(),
            here: None,
            steps_beside: 0,
        };
        if !run.take_side(self.model.frame) {
            return Err(format!(
                "B was not started: {} ({})",
                side.describe(),
                run.b_note.as_deref().unwrap_or("refused")
            ));
        }
        // B's run is its own from here: A's recorded future is not B's (with A's settings
        // it would be shown as B's, and no row kept).
        run.b.discard_future();
        run.b_note = None;
        self.compare = Some(run);
        // B is at A's step with its settings applied there: no step was made, so B is not
        // brought back to the step before (which would step it again without them).
        self.follow_compare(false);
        self.retake_difference(true);
        Ok(())
    }

    /// Ends the comparison, if one runs.
    pub(crate) fn stop_compare(&mut self) {
        self.compare = None;
    }

    /// Brings B to A's step: B steps on (recorded) to a step A has just made (`stepped`), or
    /// shows the recorded step the timeline moved to; then the difference at that step (a
    /// step just made keeps its row).
    pub(crate) fn follow_compare(&mut self, stepped: bool) {
        let frame = self.model.frame;
        let Some(run) = self.compare.as_mut() else {
            return;
        };
        if run.document_id != self.session.id() {
            self.compare = None;
            self.model
                .status
                .push_str(" The comparison ended: another document was opened or restarted.");
            return;
        }
        let at = self.session.sim().step_index();
        // A step A has just made, B makes too, from the step before (discarding B's recorded
        // future there, as A's was); otherwise B shows A's step as recorded.
        let from = if stepped { at.saturating_sub(1) } else { at };
        if run.b.sim().step_index() != from
            && from <= run.b.recording().last_step()
            && let Err(e) = run.b.seek(from)
        {
            run.b_note = Some(crate::state::seek_error(from, &e));
        }
        // Every step B makes, it makes with its own settings: at a step before the one the
        // comparison started from (the timeline moved back), B's recording has A's, so B
        // takes its side again where it steps on from. Where B cannot take it (refused, its
        // note says why), B does not step: a step on A's settings would be shown as B's.
        let will_step = stepped || run.b.sim().step_index() < at;
        let on_side = side_of(&run.b) == run.side || (will_step && run.take_side(frame));
        // B's own run goes back to where it took its settings.
        if on_side {
            run.started_at = run.started_at.min(run.b.sim().step_index());
        }
        // B's step made on the stepping thread beside A's: recorded as a step made here.
        if let Some((sim, outcome)) = self.b_stepped.take()
            && stepped
            && on_side
            && side_of_sim(&sim) == run.side
            && run.b.sim().step_index() == from
            && sim.step_index() == at
            && !run.b.at_past_step()
            && run.b.take_step(sim).unwrap_or(false)
        {
            run.steps_beside += 1;
            if let Err(e) = outcome {
                run.b_note = Some(e.to_string());
            }
        }
        // B stepping on to A's step (A showing its recorded future, B making it anew) is a
        // step run in lockstep too: its row is kept.
        let b_steps_on = on_side && run.b.sim().step_index() < at;
        while on_side && run.b.sim().step_index() < at {
            match run.b.step() {
                Ok(stepped) if stepped.outcome.is_ok() => {}
                Ok(_) => {
                    // B stopped (its pair limit): its simulation says why.
                    run.b_note = run.b.stopped();
                    break;
                }
                Err(e) => {
                    run.b_note = Some(match e {
                        crate::session::NotStepped::AtEnd(step) => {
                            format!("B's trace ends at step {step}")
                        }
                        crate::session::NotStepped::Recording(e) => e.to_string(),
                    });
                    break;
                }
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
        let at = self.session.sim().step_index();
        let b = &run.b;
        // At a step before the comparison started B has A's settings: no difference of B's.
        run.here = (b.sim().step_index() == at && side_of(b) == run.side)
            .then(|| StepDiff::between(self.session.sim().report(), b.sim().report()));
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
        let frame = self.model.frame;
        let Some(run) = self.compare.as_mut() else {
            return;
        };
        match run.b.edit(edit.clone(), frame) {
            Ok(_) => {
                run.b_note = run.b.stopped();
                // Before the step the comparison started at, B's recording has A's settings;
                // the edit discarded its future, so B runs on from here with its own.
                if side_of(&run.b) != run.side && run.take_side(frame) {
                    run.started_at = run.started_at.min(run.b.sim().step_index());
                }
                // Refused, B's note says why and B does not step (`follow_compare`).
            }
            Err(e) => {
                run.b_note = Some(format!("B refused \"{}\": {e}", edit.describe()));
            }
        }
        // The step's row holds the difference after its edits.
        self.retake_difference(true);
    }

    /// Before B's views draw: B shows what A shows (camera, plane, preferences), and its
    /// snapshot follows its session.
    pub(crate) fn prepare_compare_views(&mut self) {
        let Some(run) = self.compare.as_mut() else {
            return;
        };
        let b = &mut run.b_view;
        b.camera = self.view.camera;
        b.plane = self.view.plane;
        b.world_3d = self.view.world_3d;
        b.fit_pending = false;
        b.fit_3d_request = self.view.fit_3d_request;
        b.tree_fit_request = self.view.tree_fit_request;
        b.interactive = self.view.interactive;
        b.fit_to = self.view.fit_to;
        let mut prefs = self.prefs.clone();
        if self.prefs.compare_b_engine_tree {
            // The engine's tree beside ours: B draws the engine's, whatever A draws.
            prefs.views_show_engine_tree = true;
        }
        if run.b_prefs != prefs {
            run.b_prefs = prefs;
            // Drawn anew with the preferences taken.
            run.b_snapshot_key = None;
        }
        let engine_tree = run.b_prefs.views_show_engine_tree && run.b.engine().is_some();
        crate::pane::refresh_snapshot(
            &mut run.b_snapshot,
            &mut run.b_snapshot_key,
            crate::pane::Shown::session(&run.b),
            0,
            run.b_view.plane,
            engine_tree,
            run.b_prefs.show_engine_tree,
        );
    }
}

/// The side a simulation is on: its broad phase and tree settings.
fn side_of_sim(sim: &crate::source::Sim) -> Side {
    Side {
        kind: sim.broadphase_kind(),
        config: sim.tree_settings(),
    }
}
