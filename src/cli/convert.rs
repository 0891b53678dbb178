//! The `convert` subcommand: a stream file (the live link's binary format) to a text trace, or
//! a text trace to a stream file, told by the output's name (`.trace` or `.aabbstream`).

use crate::fileio::{FileKind, STREAM_EXTENSION, WriteOptions, write_atomic};
use crate::stream;
use crate::text::escape_controls;
use crate::trace::{Trace, TraceLimits};
use std::path::{Path, PathBuf};

/// Arguments of `convert`.
#[derive(Debug, clap::Args)]
pub struct ConvertArgs {
    /// A stream file or a text trace.
    pub input: PathBuf,
    /// The file to write: a text trace when its name ends in `.trace`, a stream file when it
    /// ends in `.aabbstream`.
    pub output: PathBuf,
    /// Replaces an existing output that is not of the kind being written.
    #[arg(long)]
    pub force: bool,
}

/// Runs `convert`: exit 0 when written, 1 when the input is refused or the output cannot be
/// written, 2 for a bad command line.
pub fn main(args: &ConvertArgs) -> anyhow::Result<i32> {
    let input = escape_controls(&args.input.display().to_string());
    let output = escape_controls(&args.output.display().to_string());
    let to_stream = match extension(&args.output).as_deref() {
        Some("trace") => false,
        Some(STREAM_EXTENSION) => true,
        _ => {
            eprintln!(
                "{output}: the output's name must end in .trace (a text trace) or \
                 .{STREAM_EXTENSION} (a stream file); nothing was written"
            );
            return Ok(2);
        }
    };
    if crate::fileio::same_file(&args.input, &args.output) {
        eprintln!("{output}: is the input; give another output (nothing was written)");
        return Ok(2);
    }
    let (trace, warning) = if stream::is_stream_file(&args.input) {
        match stream::load_boxes(&args.input, TraceLimits::default()) {
            Ok((trace, info)) => {
                for note in dropped_by_conversion(&info, to_stream) {
                    eprintln!("{input}: note: {note}");
                }
                (trace, info.stopped.map(|why| (why, info.engine)))
            }
            Err(e) => {
                eprintln!("{e}");
                return Ok(1);
            }
        }
    } else {
        match Trace::load(&args.input) {
            Ok(trace) => (trace, None),
            Err(e) => {
                eprintln!("{e}");
                return Ok(1);
            }
        }
    };
    if let Some((why, _)) = &warning {
        eprintln!(
            "{input}: warning: the stream stops early ({why}); the {} before are converted",
            crate::text::count(trace.step_count() as u64, "whole step", "whole steps")
        );
    }
    let mut bytes = Vec::new();
    let written = if to_stream {
        stream::write_trace(&trace, "aabb-debugger convert", &mut bytes).map_err(|e| e.to_string())
    } else {
        trace.write(&mut bytes).map_err(|e| e.to_string())
    };
    if let Err(e) = written {
        eprintln!("{input}: could not convert: {e}");
        return Ok(1);
    }
    let kind = if to_stream {
        FileKind::Stream
    } else {
        FileKind::Trace
    };
    if let Err(e) = write_atomic(
        &args.output,
        &bytes,
        WriteOptions::of_kind(kind, args.force),
    ) {
        eprintln!("{e}");
        return Ok(1);
    }
    super::run::print_out(&format!(
        "{output}: {}, {}, {}D, {} bytes\n",
        crate::text::count(trace.step_count() as u64, "step", "steps"),
        crate::text::count(trace.statics().len() as u64, "static box", "static boxes"),
        trace.dimensions(),
        bytes.len()
    ))?;
    Ok(0)
}

/// What a stream holds that the converted file does not: the engine's own broad phase (a
/// trace holds boxes only; a stream written by `convert` neither), the engine's name and
/// units and the steps it dropped (a trace has no place for them; a stream written by
/// `convert` names itself and numbers its steps from 0).
fn dropped_by_conversion(info: &stream::StreamInfo, to_stream: bool) -> Vec<String> {
    let mut notes = Vec::new();
    let with_parts = info.engine_parts.summary.steps_with_parts;
    if with_parts > 0 {
        notes.push(format!(
            "the engine's own broad phase ({} of fat boxes, pairs, tree or timings) is not \
             converted: {} (`check` reports it)",
            crate::text::count(with_parts, "step", "steps"),
            if to_stream {
                "`convert` writes boxes only"
            } else {
                "a trace holds boxes only"
            }
        ));
    }
    let mut lost = Vec::new();
    if !info.engine.is_empty() {
        lost.push(format!(
            "the engine's name (\"{}\")",
            crate::text::excerpt(&info.engine, crate::text::MAX_EXCERPT_CHARS)
        ));
    }
    if !info.units.is_empty() {
        lost.push(format!(
            "its units (\"{}\")",
            crate::text::excerpt(&info.units, crate::text::MAX_EXCERPT_CHARS)
        ));
    }
    if !info.gaps.is_empty() {
        lost.push(format!(
            "its {} ({} dropped by the engine: the steps on either side of a gap become \
             consecutive steps)",
            crate::text::count(info.gaps.len() as u64, "gap", "gaps"),
            crate::text::count(info.dropped_steps(), "step", "steps")
        ));
    }
    if !lost.is_empty() {
        notes.push(format!(
            "{} not converted: {}",
            join_and(&lost),
            if to_stream {
                "`convert` names the stream \"aabb-debugger convert\" and numbers its steps from 0"
            } else {
                "a trace has no place for them"
            }
        ));
    }
    notes
}

/// `a`, `a and b`, `a, b and c`.
fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}
