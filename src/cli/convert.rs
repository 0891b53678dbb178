//! The `convert` subcommand: a stream file (the live link's binary format) to a text trace, or
//! a text trace to a stream file, told by the output's name (`.trace` or `.aabbstream`).

use crate::fileio::{FileKind, WriteOptions, write_atomic};
use crate::stream::{self, STREAM_EXTENSION};
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
        match stream::load(&args.input, TraceLimits::default()) {
            Ok((trace, info)) => {
                let with_parts = info.engine_parts.summary.steps_with_parts;
                if with_parts > 0 {
                    eprintln!(
                        "{input}: note: the engine's own broad phase ({with_parts} steps of fat \
                         boxes, pairs, tree or timings) is not converted: a trace holds boxes \
                         only (`check` reports it)"
                    );
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
            "{input}: warning: the stream stops early ({why}); the {} whole steps before are \
             converted",
            trace.step_count()
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
        "{output}: {} steps, {} static boxes, {}D, {} bytes\n",
        trace.step_count(),
        trace.statics().len(),
        trace.dimensions(),
        bytes.len()
    ))?;
    Ok(0)
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}
