//! A stream received live, written again as a stream file (File > "Save received stream…"):
//! every step's boxes, the engine's step numbers (so its gaps), its name, units and time step,
//! the engine's own broad phase of each step that carried it (fat boxes, pairs, tree,
//! timings), and the recorder's goodbye, so the file reads back as the stream received.

use crate::stream::engine::EngineRecord;
use crate::stream::{StreamInfo, wire_box};
use crate::trace::Trace;
use aabb_recorder::wire::{self, EngineParts, WireBox};

/// What a received stream's file holds of the engine's parts, beside its bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The stream's bytes.
    pub bytes: Vec<u8>,
    /// Steps written with some of the engine's parts.
    pub steps_with_parts: u64,
    /// What of the engine's parts the window did not keep and so could not write (the first
    /// step past the memory budget, trees refused as broken): a sentence, or empty.
    pub missing: String,
}

/// Encodes `trace` as received with `info` (its handshake, engine step numbers and
/// goodbye) and `engine` (the parts each step carried, as kept): HELLO, STATIC, one STEP a
/// step (a keyframe first, then the changes), BYE when the engine sent one.
pub fn encode(
    trace: &Trace,
    info: &StreamInfo,
    engine: Option<&EngineRecord>,
) -> Result<Written, String> {
    let dims = trace.dimensions();
    let invalid = |e: wire::EncodeError| e.to_string();
    let mut out = Written::default();
    let bytes = &mut out.bytes;
    wire::encode_magic(bytes);
    let mut hello = wire::Hello::new(&info.engine, dims, trace.dt());
    hello.units.clone_from(&info.units);
    wire::encode_hello(bytes, &hello).map_err(invalid)?;
    if !trace.statics().is_empty() {
        let statics: Vec<WireBox> = trace.statics().iter().map(wire_box).collect();
        wire::encode_static(bytes, dims, &statics).map_err(invalid)?;
    }
    // The engine's numbers when there is one a step (the gaps between them are the steps it
    // dropped), else the trace's own.
    let count = trace.step_count();
    let numbers = (info.engine_steps.len() == count).then_some(&info.engine_steps);
    let mut previous: Vec<WireBox> = Vec::new();
    for k in 0..count {
        let step = numbers.and_then(|n| n.get(k).copied()).unwrap_or(k as u64);
        let boxes: Vec<WireBox> = trace.step(k).iter().map(wire_box).collect();
        let mut frame = if k == 0 {
            wire::StepFrame {
                step,
                keyframe: true,
                appeared: boxes.clone(),
                ..wire::StepFrame::default()
            }
        } else {
            crate::stream::delta(step, &previous, &boxes)
        };
        if let Some(s) = engine.and_then(|e| e.step_at(k as u64)) {
            let parts = EngineParts {
                fat_boxes: s.fat_boxes.clone(),
                pairs: s.pairs.clone(),
                tree: s.tree.clone(),
                timings: s.timings.clone(),
            };
            frame.sections = parts.to_sections(dims);
            out.steps_with_parts += u64::from(!frame.sections.is_empty());
        }
        wire::encode_step(bytes, dims, &frame).map_err(|e| format!("step {k}: {e}"))?;
        previous = boxes;
    }
    if let Some((steps_sent, steps_dropped)) = info.bye {
        wire::encode_bye(
            bytes,
            &wire::Bye {
                steps_sent,
                steps_dropped,
            },
        );
    }
    if let Some(e) = engine {
        let mut missing = Vec::new();
        if let Some(from) = e.not_kept_from {
            missing.push(format!(
                "the engine's parts from step {from} on (over the window's memory budget)"
            ));
        }
        let refused = e.summary.refused_trees.len();
        if refused > 0 {
            missing.push(format!(
                "{refused} tree{} refused as broken",
                if refused == 1 { "" } else { "s" }
            ));
        }
        if !missing.is_empty() {
            out.missing = format!(" Not in the file: {}.", missing.join("; "));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::engine::{EngineStep, RefusedTree, TreeFault};
    use crate::trace::TraceLimits;

    const TEXT: &[u8] = b"aabb-trace 1 dims=2 dt=0.02\nstatic\n100 -10 -1 10 0\nstep 0\n\
        0 0 0 1 1\n1 2 0 3 1\nstep 1\n0 0.5 0 1.5 1\n2 5 5 6 6\nstep 2\n2 5 5 6 6\n";

    #[test]
    fn a_trace_written_again_reads_back_with_its_numbers_gaps_and_notes() {
        let trace = Trace::parse(TEXT, "t.trace").expect("a trace");
        let info = StreamInfo {
            engine: "test engine".to_owned(),
            units: "px".to_owned(),
            engine_steps: vec![0, 1, 5],
            bye: Some((3, 3)),
            ..StreamInfo::default()
        };
        let mut engine = EngineRecord::new(1_000);
        engine.steps.push(EngineStep {
            index: 1,
            engine_step: 1,
            fat_boxes: None,
            pairs: Some(vec![[0, 2]]),
            tree: None,
            timings: None,
        });
        engine.not_kept_from = Some(2);
        engine.summary.refused_trees.push(RefusedTree {
            engine_step: 0,
            index: 0,
            fault: TreeFault {
                node: Some(3),
                problem: "a cycle".to_owned(),
            },
        });
        let written = encode(&trace, &info, Some(&engine)).expect("encodes");
        assert_eq!(written.steps_with_parts, 1);
        assert_eq!(
            written.missing,
            " Not in the file: the engine's parts from step 2 on (over the window's memory \
             budget); 1 tree refused as broken."
        );
        let (back, got) =
            crate::stream::read_stream(&written.bytes[..], "t", "memory", TraceLimits::default())
                .expect("reads back");
        assert_eq!(back.statics(), trace.statics());
        for k in 0..3 {
            assert_eq!(back.step(k), trace.step(k), "step {k}");
        }
        assert_eq!(back.dt(), 0.02);
        assert_eq!(
            (got.engine.as_str(), got.units.as_str()),
            ("test engine", "px")
        );
        assert_eq!(got.engine_steps, vec![0, 1, 5]);
        assert_eq!(
            got.gaps
                .iter()
                .map(|g| (g.after, g.first, g.last))
                .collect::<Vec<_>>(),
            vec![(1, 2, 4)]
        );
        assert_eq!(got.bye, Some((3, 3)));
        assert_eq!(
            got.engine_parts.step_at(1).and_then(|s| s.pairs.clone()),
            Some(vec![[0, 2]])
        );
        assert_eq!(got.engine_parts.steps.len(), 1);
    }
}
