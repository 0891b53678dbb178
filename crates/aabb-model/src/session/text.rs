//! What the session's changes say of themselves, for a status line.

use crate::stream::StreamInfo;
use crate::tree::TreeConfig;

/// What a change of the tree settings from `old` to `new` does, in one sentence.
#[must_use]
pub fn describe_settings_change(old: &TreeConfig, new: &TreeConfig) -> String {
    if old.margin != new.margin {
        format!(
            "Margin {:.3}: every fat box recomputed, pairs recomputed.",
            new.margin
        )
    } else if old.velocity_lookahead != new.velocity_lookahead {
        format!(
            "Look-ahead {:.3} s: every fat box recomputed, pairs recomputed.",
            new.velocity_lookahead
        )
    } else if old.insertion != new.insertion {
        format!(
            "Insertion cost {:?}: used from the next insertion on.",
            new.insertion
        )
    } else if old.balancing != new.balancing {
        format!(
            "Balancing {:?}: used from the next insertion on.",
            new.balancing
        )
    } else if old.pairs != new.pairs {
        format!("Pair method {:?}.", new.pairs)
    } else if old.update != new.update {
        format!(
            "Update mode {:?}: used from the next move out of a fat box on.",
            new.update
        )
    } else {
        "Tree settings unchanged.".into()
    }
}

/// What a stream says of itself, for the status line: its engine, the steps the engine
/// dropped and an early stop (empty for none); each sentence starts with a space.
#[must_use]
pub fn stream_notes(info: &StreamInfo) -> String {
    let mut notes = String::new();
    if !info.engine.is_empty() {
        notes.push_str(&format!(
            " Recorded from {}.",
            crate::text::excerpt(&info.engine, 80)
        ));
    }
    match info.gaps.as_slice() {
        [] => {}
        [gap] => notes.push_str(&format!(" {gap} (after step {}).", gap.after)),
        gaps => notes.push_str(&format!(
            " {} steps dropped by the engine in {} gaps (the first: {}).",
            info.dropped_steps(),
            gaps.len(),
            gaps[0]
        )),
    }
    if let Some(why) = &info.stopped {
        notes.push_str(&format!(
            " The stream stops early: {}",
            crate::text::excerpt(why, 160)
        ));
    }
    notes
}
