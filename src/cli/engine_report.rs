//! The summary of an engine's own broad phase, as a stream carried it (fat boxes, candidate
//! pairs, tree, timings): what `listen` prints at the end of a stream and `check` prints for
//! a stream file. Lines of text, or one JSON object.

use crate::stream::engine::{EngineSummary, PairCounts, TreeSample};

/// How many missed pairs, pairs reported with fat boxes apart and refused trees the text lists (the JSON
/// lists up to [`crate::stream::engine::MAX_LISTED`]; all are counted).
pub const MAX_PRINTED: usize = 10;

/// How many tree-health samples the summary shows: the first step's, evenly spaced ones and
/// the last's.
const HEALTH_LINES: usize = 11;

/// Whether the engine's parts hold an error: a missed pair, a reported pair whose fat boxes
/// are apart, or a refused tree.
#[must_use]
pub fn has_errors(s: &EngineSummary) -> bool {
    s.missed_total > 0 || s.apart_total > 0 || s.trees_refused > 0
}

fn percent(part: u64, counts: &PairCounts) -> String {
    format!("{:.1}%", 100.0 * counts.share(part))
}

fn ids(pair: [u32; 2]) -> String {
    format!("({}, {})", pair[0], pair[1])
}

/// The tree-health samples shown: the first, evenly spaced ones and the last (in order, no
/// repeats).
fn shown_samples(health: &[TreeSample]) -> Vec<&TreeSample> {
    if health.len() <= HEALTH_LINES {
        return health.iter().collect();
    }
    let every = (health.len() - 1).div_ceil(HEALTH_LINES - 1);
    let mut out: Vec<&TreeSample> = health.iter().step_by(every).collect();
    if let Some(last) = health.last()
        && out.last().map(|s| s.index) != Some(last.index)
    {
        out.push(last);
    }
    out
}

fn ratio(s: &TreeSample) -> Option<f64> {
    s.health
        .fresh_cost
        .filter(|&f| f > 0.0)
        .map(|f| s.health.cost / f)
}

/// The summary as lines of text (none when no step carried an engine part).
#[must_use]
pub fn lines(s: &EngineSummary) -> Vec<String> {
    let mut out = Vec::new();
    if s.is_empty() {
        return out;
    }
    out.push(format!(
        "engine's broad phase: {} carried it; pairs checked at {}{}",
        crate::text::count(s.steps_with_parts, "step", "steps"),
        crate::text::count(s.pair_steps, "step", "steps"),
        match (&s.unchecked_reason, s.pair_steps_unchecked) {
            (Some(why), n) => format!(" ({n} not checked; the first: {why})"),
            (None, _) => String::new(),
        }
    ));
    if let Some(why) = &s.pairs_stopped {
        out.push(format!("pair check: {why}"));
    }
    if s.pair_steps > 0 {
        out.push(format!("missed pairs: {}", s.missed_total));
        for m in s.missed.iter().take(MAX_PRINTED) {
            out.push(format!("  step {}: {}", m.engine_step, ids(m.pair)));
        }
        if s.missed_total > MAX_PRINTED.min(s.missed.len()) as u64 {
            out.push(format!(
                "  ({} of {} listed)",
                MAX_PRINTED.min(s.missed.len()),
                s.missed_total
            ));
        }
        let c = &s.counts;
        let mut classes = vec![format!("tight boxes overlap {}", c.contact)];
        if s.margin.is_some() || c.margin + c.look_ahead > 0 {
            classes.push(format!("margin {}", c.margin));
            classes.push(format!("look-ahead {}", c.look_ahead));
        }
        if c.fat_only > 0 || s.margin.is_none() {
            classes.push(format!("fat only (margin or look-ahead) {}", c.fat_only));
        }
        classes.push(format!("reported but fat boxes apart {}", c.fat_apart));
        out.push(format!(
            "reported pairs: {} ({})",
            c.total(),
            classes.join(", ")
        ));
        let mut causes = Vec::new();
        if s.margin.is_some() || c.margin + c.look_ahead > 0 {
            causes.push(format!("margin {}", percent(c.margin, c)));
            causes.push(format!("look-ahead {}", percent(c.look_ahead, c)));
        }
        if c.fat_only > 0 || s.margin.is_none() {
            causes.push(format!("fat only {}", percent(c.fat_only, c)));
        }
        causes.push(format!("fat boxes apart {}", percent(c.fat_apart, c)));
        out.push(format!(
            "false positives: {} of {} ({}): {}{}",
            c.false_positives(),
            c.total(),
            percent(c.false_positives(), c),
            causes.join(", "),
            s.margin
                .map_or_else(String::new, |m| format!(" (declared margin {m})"))
        ));
        for a in s.apart.iter().take(MAX_PRINTED) {
            out.push(format!(
                "  step {}: {} reported but fat boxes apart",
                a.engine_step,
                ids(a.pair)
            ));
        }
        if s.apart_total > MAX_PRINTED.min(s.apart.len()) as u64 {
            out.push(format!(
                "  ({} of {} listed)",
                MAX_PRINTED.min(s.apart.len()),
                s.apart_total
            ));
        }
    }
    if !s.timings.is_empty() {
        out.push("timings and counts (over the steps that sent each):".to_owned());
        for (key, t) in &s.timings {
            out.push(format!(
                "  {key}: mean {:.3}, min {:.3}, max {:.3} ({})",
                t.mean(),
                t.min,
                t.max,
                crate::text::count(t.steps, "step", "steps")
            ));
        }
    }
    if s.trees_valid + s.trees_refused + s.trees_unchecked > 0 {
        out.push(format!(
            "trees: {} valid, {} refused{}",
            s.trees_valid,
            s.trees_refused,
            match s.trees_unchecked {
                0 => String::new(),
                n => format!(", {n} not checked (the check's work was spent)"),
            }
        ));
        for r in s.refused_trees.iter().take(MAX_PRINTED) {
            out.push(format!("  {r}"));
        }
        if s.trees_refused > MAX_PRINTED.min(s.refused_trees.len()) as u64 {
            out.push(format!(
                "  ({} of {} listed)",
                MAX_PRINTED.min(s.refused_trees.len()),
                s.trees_refused
            ));
        }
        if !s.health.is_empty() {
            out.push(
                "tree cost (SAH, branches over the root) against a fresh build of the same \
                 leaves; height against the least:"
                    .to_owned(),
            );
            for t in shown_samples(&s.health) {
                let h = &t.health;
                out.push(format!(
                    "  step {}: {} leaves, cost {:.3} (fresh build {}, ratio {}), height {} \
                     (least {})",
                    t.engine_step,
                    h.leaves,
                    h.cost,
                    h.fresh_cost
                        .map_or_else(|| "none".to_owned(), |f| format!("{f:.3}")),
                    ratio(t).map_or_else(|| "none".to_owned(), |r| format!("{r:.2}")),
                    h.height,
                    h.min_height
                ));
            }
        }
    }
    out
}

/// The summary as one JSON object (`null` when no step carried an engine part).
#[must_use]
pub fn json(s: &EngineSummary) -> serde_json::Value {
    if s.is_empty() {
        return serde_json::Value::Null;
    }
    let c = &s.counts;
    let step_pairs = |list: &[crate::stream::engine::StepPair]| {
        list.iter()
            .map(|p| serde_json::json!({ "step": p.engine_step, "a": p.pair[0], "b": p.pair[1] }))
            .collect::<Vec<_>>()
    };
    serde_json::json!({
        "steps_with_parts": s.steps_with_parts,
        "pair_steps": s.pair_steps,
        "pair_steps_unchecked": s.pair_steps_unchecked,
        "unchecked_reason": s.unchecked_reason,
        "pairs_stopped": s.pairs_stopped,
        "missed_total": s.missed_total,
        "missed": step_pairs(&s.missed),
        "reported": c.total(),
        "classes": {
            "contact": c.contact,
            "margin": c.margin,
            "look_ahead": c.look_ahead,
            "fat_only": c.fat_only,
            "fat_apart": c.fat_apart,
        },
        "false_positives": c.false_positives(),
        "false_positive_share": {
            "all": c.share(c.false_positives()),
            "margin": c.share(c.margin),
            "look_ahead": c.share(c.look_ahead),
            "fat_only": c.share(c.fat_only),
            "fat_apart": c.share(c.fat_apart),
        },
        "declared_margin": s.margin,
        "timings": s.timings.iter().map(|(key, t)| (key.clone(), serde_json::json!({
            "mean": t.mean(),
            "min": t.min,
            "max": t.max,
            "steps": t.steps,
        }))).collect::<serde_json::Map<String, serde_json::Value>>(),
        "apart_total": s.apart_total,
        "apart": step_pairs(&s.apart),
        "trees_valid": s.trees_valid,
        "trees_refused": s.trees_refused,
        "trees_unchecked": s.trees_unchecked,
        "refused_trees": s.refused_trees.iter().map(|r| serde_json::json!({
            "step": r.engine_step,
            "node": r.fault.node,
            "message": r.fault.to_string(),
        })).collect::<Vec<_>>(),
        "tree_health": shown_samples(&s.health).iter().map(|t| serde_json::json!({
            "step": t.engine_step,
            "leaves": t.health.leaves,
            "cost": t.health.cost,
            "fresh_cost": t.health.fresh_cost,
            "height": t.health.height,
            "min_height": t.health.min_height,
        })).collect::<Vec<_>>(),
    })
}
