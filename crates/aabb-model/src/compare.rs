//! Two broad phases, or two settings of one, on the same motion, step by step: the pairs only
//! one of them reports, each one's reinserts, tree cost and time. "The engine's tree against
//! ours", "margin 0.05 against 0.2", "Box2D's tree against ours" on one scene or trace.
//!
//! Both sides run the same origin (a scene or a trace, with each side's tree settings) in
//! lockstep, so every difference is the broad phases', not the motion's.

use crate::broadphase::BroadphaseKind;
use crate::replay::Replay;
use crate::scene::{SceneError, StepReport};
use crate::source::{Origin, Sim};
use crate::tree::TreeConfig;
use serde::Serialize;

/// One side of a comparison: a broad phase and its tree settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// The broad phase.
    pub kind: BroadphaseKind,
    /// Its tree settings (the margin and look-ahead count for every broad phase's fat boxes).
    pub config: TreeConfig,
}

impl Side {
    /// The side as written on the command line: `KIND[:KEY=VALUE,...]`, where KIND is `tree`,
    /// `brute`, `sap` or `box2d` and the keys are `margin`, `lookahead`, `insertion`,
    /// `balancing`, `pairs` and `update` (the tree's names), over `base`.
    pub fn parse(text: &str, base: TreeConfig) -> Result<Side, String> {
        let text = text.trim();
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        let kind = match kind.trim().to_ascii_lowercase().as_str() {
            "tree" => BroadphaseKind::Tree,
            "brute" => BroadphaseKind::Brute,
            "sap" => BroadphaseKind::Sap,
            "box2d" => BroadphaseKind::Box2d,
            other => {
                return Err(format!(
                    "`{other}`: the broad phase must be tree, brute, sap or box2d"
                ));
            }
        };
        let mut config = base;
        for setting in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = setting
                .split_once('=')
                .ok_or_else(|| format!("`{setting}`: expected KEY=VALUE"))?;
            let (key, value) = (key.trim(), value.trim());
            let number = || -> Result<f32, String> {
                value
                    .parse::<f32>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| format!("`{key}={value}`: expected a finite number >= 0"))
            };
            let named = |names: &[&str]| format!("`{key}={value}`: expected one of {names:?}");
            match key {
                "margin" => config.margin = number()?,
                "lookahead" => config.velocity_lookahead = number()?,
                "insertion" => {
                    config.insertion = crate::tree::InsertionCost::from_name(value)
                        .ok_or_else(|| named(&crate::tree::InsertionCost::NAMES))?;
                }
                "balancing" => {
                    config.balancing = crate::tree::Balancing::from_name(value)
                        .ok_or_else(|| named(&crate::tree::Balancing::NAMES))?;
                }
                "pairs" => {
                    config.pairs = crate::tree::PairMethod::from_name(value)
                        .ok_or_else(|| named(&crate::tree::PairMethod::NAMES))?;
                }
                "update" => {
                    config.update = crate::tree::UpdateMode::from_name(value)
                        .ok_or_else(|| named(&crate::tree::UpdateMode::NAMES))?;
                }
                _ => {
                    return Err(format!(
                        "`{key}`: the settings are margin, lookahead, insertion, balancing, \
                         pairs and update"
                    ));
                }
            }
        }
        Ok(Side { kind, config })
    }

    /// The side in words: `tree (margin 0.1, look-ahead 0.05 s)`.
    #[must_use]
    pub fn describe(&self) -> String {
        let kind = match self.kind {
            BroadphaseKind::Tree => "tree",
            BroadphaseKind::Brute => "brute",
            BroadphaseKind::Sap => "sap",
            BroadphaseKind::Box2d => "box2d",
        };
        let c = &self.config;
        let mut text = format!(
            "{kind} (margin {}, look-ahead {} s",
            c.margin, c.velocity_lookahead
        );
        if self.kind == BroadphaseKind::Tree {
            text.push_str(&format!(
                ", {} {} {} {}",
                c.insertion.name(),
                c.balancing.name(),
                c.pairs.name(),
                c.update.name()
            ));
        }
        text.push(')');
        text
    }
}

/// What differs between the two sides at one step.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StepDiff {
    /// The step.
    pub step: u64,
    /// Candidate pairs A reports and B does not, sorted.
    pub only_a: Vec<(u32, u32)>,
    /// Candidate pairs B reports and A does not, sorted.
    pub only_b: Vec<(u32, u32)>,
    /// Each side's candidate pairs.
    pub pairs: [usize; 2],
    /// Each side's reinserts.
    pub reinserts: [usize; 2],
    /// Each side's tree cost (area ratio), for a tree.
    pub cost: [Option<f64>; 2],
    /// Each side's broad-phase milliseconds (update and pairs).
    pub ms: [f64; 2],
}

impl StepDiff {
    /// True when both sides report the same pairs.
    #[must_use]
    pub fn same_pairs(&self) -> bool {
        self.only_a.is_empty() && self.only_b.is_empty()
    }
}

/// A comparison's totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CompareSummary {
    /// Steps compared (step 0 included).
    pub steps: u64,
    /// Steps whose pairs differ.
    pub steps_differing: u64,
    /// Pairs only A reported, over every step.
    pub only_a: u64,
    /// Pairs only B reported, over every step.
    pub only_b: u64,
    /// Each side's candidate pairs over every step.
    pub pairs: [u64; 2],
    /// Each side's reinserts over every step.
    pub reinserts: [u64; 2],
    /// Each side's broad-phase milliseconds over every step.
    pub ms: [f64; 2],
    /// The first step whose pairs differ.
    pub first_difference: Option<u64>,
    /// Why the run stopped before `steps`, when it did (a pair limit, the end of a trace).
    pub stopped: Option<String>,
}

/// A list of id pairs.
pub type Pairs = Vec<(u32, u32)>;

/// The difference of two sorted pair lists: (only in `a`, only in `b`).
#[must_use]
pub fn pair_difference(a: &[(u32, u32)], b: &[(u32, u32)]) -> (Pairs, Pairs) {
    let (mut i, mut j) = (0, 0);
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                only_a.push(*x);
                i += 1;
            }
            (Some(_), Some(y)) => {
                only_b.push(*y);
                j += 1;
            }
            (Some(x), None) => {
                only_a.push(*x);
                i += 1;
            }
            (None, Some(y)) => {
                only_b.push(*y);
                j += 1;
            }
            (None, None) => break,
        }
    }
    (only_a, only_b)
}

/// A report's candidate pairs, each `(low, high)`, sorted.
fn sorted_pairs(report: &StepReport) -> Vec<(u32, u32)> {
    let mut pairs: Vec<(u32, u32)> = report
        .candidate_pairs
        .iter()
        .map(|&(a, b)| (a.min(b), a.max(b)))
        .collect();
    pairs.sort_unstable();
    pairs
}

impl StepDiff {
    /// What differs between two reports of the same step, `a`'s side against `b`'s.
    #[must_use]
    pub fn between(a: &StepReport, b: &StepReport) -> StepDiff {
        diff_of(a, b)
    }
}

fn diff_of(a: &StepReport, b: &StepReport) -> StepDiff {
    let (pa, pb) = (sorted_pairs(a), sorted_pairs(b));
    let (only_a, only_b) = pair_difference(&pa, &pb);
    StepDiff {
        step: a.step,
        only_a,
        only_b,
        pairs: [pa.len(), pb.len()],
        reinserts: [a.reinserted.len(), b.reinserted.len()],
        cost: [
            a.tree.map(|t| f64::from(t.area_ratio)),
            b.tree.map(|t| f64::from(t.area_ratio)),
        ],
        ms: [
            (a.update_secs + a.pairs_secs) * 1e3,
            (b.update_secs + b.pairs_secs) * 1e3,
        ],
    }
}

/// Runs `a` and `b` (started from their origins) in lockstep for up to `steps` steps after
/// step 0, calling `on_step` with each step's difference (step 0's too); stops early, saying
/// why, when a side stops (a pair limit) or a trace ends.
pub fn run<S: Replay>(
    mut a: S,
    mut b: S,
    steps: u64,
    mut on_step: impl FnMut(&StepDiff),
) -> CompareSummary {
    let mut summary = CompareSummary::default();
    let mut note = |d: &StepDiff, summary: &mut CompareSummary| {
        summary.steps += 1;
        if !d.same_pairs() {
            summary.steps_differing += 1;
            summary.first_difference.get_or_insert(d.step);
        }
        summary.only_a += d.only_a.len() as u64;
        summary.only_b += d.only_b.len() as u64;
        for k in 0..2 {
            summary.pairs[k] += d.pairs[k] as u64;
            summary.reinserts[k] += d.reinserts[k] as u64;
            summary.ms[k] += d.ms[k];
        }
        on_step(d);
    };
    note(&diff_of(a.report(), b.report()), &mut summary);
    for _ in 0..steps {
        let (before_a, before_b) = (a.step_index(), b.step_index());
        let ra = a.step();
        let rb = b.step();
        if a.step_index() == before_a || b.step_index() == before_b {
            summary.stopped = Some(match (ra, rb) {
                // Both at a trace's end: one reason, not a side's.
                (Err(e), Err(f)) if e.to_string() == f.to_string() => e.to_string(),
                (Err(e), _) => format!("A: {e}"),
                (_, Err(e)) => format!("B: {e}"),
                _ => format!("the run ends at step {before_a}"),
            });
            break;
        }
        note(&diff_of(a.report(), b.report()), &mut summary);
        if let Some(e) = a.last_error() {
            summary.stopped = Some(format!("A: step {}: {e}", a.step_index()));
            break;
        }
        if let Some(e) = b.last_error() {
            summary.stopped = Some(format!("B: step {}: {e}", b.step_index()));
            break;
        }
    }
    summary
}

/// The two sides of a run of `origin` (a scene from its start, a trace from its first step),
/// started: each on its side's tree settings and broad phase.
pub fn start(
    origin: &Origin,
    a: &Side,
    b: &Side,
    pair_limit: usize,
) -> Result<(Sim, Sim), SceneError> {
    let start = |side: &Side| {
        <Sim as Replay>::start(
            &origin.clone().with_tree_settings(side.config),
            side.kind,
            pair_limit,
        )
    };
    Ok((start(a)?, start(b)?))
}

/// Side B of a comparison started at `a`'s step, as the window's compare mode starts it: a
/// copy of `a` (a scene's or a trace's simulation, at any step) with `b`'s broad phase and
/// tree settings applied there. Run it beside a copy of `a` with [`run`].
pub fn side_at(a: &Sim, b: &Side) -> Result<Sim, SceneError> {
    use crate::replay::Edit;
    let mut sim = a.clone();
    if sim.broadphase_kind() != b.kind {
        Replay::apply_edit(&mut sim, &Edit::SetBroadphase(b.kind))?;
    }
    if sim.tree_settings() != b.config {
        Replay::apply_edit(&mut sim, &Edit::SetTreeSettings(b.config))?;
    }
    Ok(sim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_difference_of_sorted_pairs() {
        let a = [(1, 2), (1, 3), (2, 5), (4, 9)];
        let b = [(1, 3), (2, 4), (4, 9), (7, 8)];
        assert_eq!(
            pair_difference(&a, &b),
            (vec![(1, 2), (2, 5)], vec![(2, 4), (7, 8)])
        );
        assert_eq!(pair_difference(&a, &a), (vec![], vec![]));
        assert_eq!(pair_difference(&[], &b), (vec![], b.to_vec()));
    }

    #[test]
    fn sides_parse_with_their_settings_and_refuse_what_they_cannot_take() {
        let base = TreeConfig::default();
        let s = Side::parse(
            "tree:margin=0.05, lookahead=0.2,update=enlarge-and-rebuild",
            base,
        )
        .expect("a side");
        assert_eq!(s.kind, BroadphaseKind::Tree);
        assert_eq!(s.config.margin, 0.05);
        assert_eq!(s.config.velocity_lookahead, 0.2);
        assert_eq!(s.config.update, crate::tree::UpdateMode::EnlargeAndRebuild);
        assert_eq!(
            Side::parse("BOX2D", base).map(|s| s.kind),
            Ok(BroadphaseKind::Box2d)
        );
        assert!(Side::parse("octree", base).is_err());
        assert!(Side::parse("tree:margin=-1", base).is_err());
        assert!(Side::parse("tree:margin", base).is_err());
        assert!(Side::parse("tree:colour=red", base).is_err());
        assert!(Side::parse("tree:update=sometimes", base).is_err());
    }
}
