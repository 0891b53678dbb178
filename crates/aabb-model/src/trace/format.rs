//! The trace text format: a streaming, bounded reader ([`TraceReader`]), a writer
//! ([`TraceWriter`]) and the in-memory [`Trace`] the simulation replays. The format itself is
//! described in the module docs of [`crate::trace`] and in docs/formats.md ("Traces").

use crate::fileio::{ReadError, TRACE_MAGIC};
use crate::text::{clean_message, escape_controls, excerpt};
use crate::tree::Aabb;
use glam::Vec3;
use std::io::{BufRead, Write};
use std::path::Path;

/// The newest trace format version this build reads, and the one it writes.
pub const TRACE_VERSION: u32 = 1;
/// The time step when the header gives no `dt`: one 60th of a second.
pub const DEFAULT_TRACE_DT: f32 = 1.0 / 60.0;
/// The largest trace file [`Trace::load`] reads: 4 GiB.
pub const MAX_TRACE_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// How much a reader accepts before it stops with an error naming the line: memory and time
/// stay bounded whatever the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceLimits {
    /// The longest line, bytes (without its line break).
    pub max_line_bytes: usize,
    /// The most boxes one step (or the static section) may list.
    pub max_boxes_per_step: usize,
    /// The most steps.
    pub max_steps: u64,
    /// The most boxes over all steps together (a [`Trace`] keeps them all: 28 bytes each).
    pub max_total_boxes: u64,
    /// The most bytes read in all.
    pub max_bytes: u64,
}

impl Default for TraceLimits {
    /// 4096-byte lines, 1,000,000 boxes a step, 1,000,000 steps, 16,000,000 boxes in all
    /// (about 450 MB in memory), 4 GiB of text.
    fn default() -> Self {
        TraceLimits {
            max_line_bytes: 4096,
            max_boxes_per_step: crate::scene::MAX_SPHERES,
            max_steps: 1_000_000,
            max_total_boxes: 16_000_000,
            max_bytes: MAX_TRACE_BYTES,
        }
    }
}

/// The header line: `aabb-trace 1 dims=2 dt=0.016666668`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceHeader {
    /// 2 or 3.
    pub dimensions: u8,
    /// Seconds between two steps, in (0, 1]; the velocity of a box is its centre's motion
    /// over one step divided by this.
    pub dt: f32,
}

/// One box of a step: its id and its tight box (z = 0..0 in 2D, as in scenes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceBox {
    /// The body's id, unique within a step (and never a static box's id).
    pub id: u32,
    /// The tight box.
    pub aabb: Aabb<Vec3>,
}

/// Why a trace could not be read or written. A syntax message reads `FILE:LINE: message`.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// `FILE:LINE: what is wrong`.
    #[error("{}:{line}: {}", escape_controls(.file), clean_message(.message))]
    Syntax {
        /// File name (or `<text>`).
        file: String,
        /// 1-based line.
        line: u64,
        /// What was expected.
        message: String,
    },
    /// The file could not be opened: not a regular file, larger than [`MAX_TRACE_BYTES`],
    /// or an I/O error. The message names the file.
    #[error("{}", escape_controls(&.0.to_string()))]
    Read(#[from] ReadError),
    /// Reading (or writing) failed part-way.
    #[error("{}: could not {action} the trace: {source}", escape_controls(.file))]
    Io {
        /// File name.
        file: String,
        /// `read` or `write`.
        action: &'static str,
        /// The error.
        source: std::io::Error,
    },
    /// A writer was given a box it cannot write so that a reader accepts it (not finite,
    /// min > max, a repeated id): nothing of that step was written.
    #[error("trace step {step}: {message}")]
    Invalid {
        /// The step (`static` boxes: the static section, shown as step 0).
        step: u64,
        /// What is wrong.
        message: String,
    },
}

/// The part of the file a reader is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Section {
    /// After the header, before `static` or `step 0`.
    Preamble,
    /// Inside `static`.
    Static,
    /// Inside `step N` (its number in `TraceReader::step`).
    Step,
    /// At the end of the input.
    End,
}

/// Reads a trace from any [`BufRead`] one step at a time, holding one step in memory; every
/// line is checked as it comes, and the first problem is an error naming its line. No input
/// makes it panic or read past its [`TraceLimits`].
pub struct TraceReader<R> {
    input: R,
    file: String,
    limits: TraceLimits,
    header: TraceHeader,
    statics: Vec<TraceBox>,
    /// The line just read (bytes, no line break).
    line: Vec<u8>,
    /// Its 1-based number.
    line_no: u64,
    bytes_read: u64,
    boxes_read: u64,
    section: Section,
    /// The step whose `step N` line was read last (the next to return).
    step: u64,
    /// The step [`TraceReader::next_step`] returned last.
    returned: u64,
    /// Ids of the step being read with their lines, for the duplicate check.
    seen: Vec<(u32, u64)>,
}

/// What one non-blank line is.
enum Line<'a> {
    /// `static`.
    Static,
    /// `step N`.
    Step(&'a str),
    /// A box: its words.
    Box,
}

impl<R: BufRead> TraceReader<R> {
    /// Reads the header and the static boxes; `file` names the input in messages.
    pub fn new(input: R, file: &str, limits: TraceLimits) -> Result<Self, TraceError> {
        let mut reader = TraceReader {
            input,
            file: file.to_owned(),
            limits,
            header: TraceHeader {
                dimensions: 2,
                dt: DEFAULT_TRACE_DT,
            },
            statics: Vec::new(),
            line: Vec::new(),
            line_no: 0,
            bytes_read: 0,
            boxes_read: 0,
            section: Section::Preamble,
            step: 0,
            returned: 0,
            seen: Vec::new(),
        };
        if !reader.read_line()? {
            return Err(reader.error_at(
                1,
                format!(
                    "empty: a trace starts with the header `{}`",
                    header_example()
                ),
            ));
        }
        reader.header = reader.parse_header()?;
        // The static section, up to `step 0` (or the end).
        let mut statics = Vec::new();
        reader.read_boxes(&mut statics)?;
        statics.sort_by_key(|b| b.id);
        reader.statics = statics;
        Ok(reader)
    }

    /// The header.
    #[must_use]
    pub fn header(&self) -> TraceHeader {
        self.header
    }

    /// The static boxes, sorted by id (present at every step, never moving).
    #[must_use]
    pub fn statics(&self) -> &[TraceBox] {
        &self.statics
    }

    /// The next step's boxes into `out` (cleared first), sorted by id; `Ok(false)` at the end.
    pub fn next_step(&mut self, out: &mut Vec<TraceBox>) -> Result<bool, TraceError> {
        out.clear();
        if self.section != Section::Step {
            return Ok(false);
        }
        self.returned = self.step;
        self.read_boxes(out)?;
        out.sort_by_key(|b| b.id);
        Ok(true)
    }

    /// The number of the step [`TraceReader::next_step`] returned last.
    #[must_use]
    pub fn step_number(&self) -> u64 {
        self.returned
    }

    fn error_at(&self, line: u64, message: String) -> TraceError {
        TraceError::Syntax {
            file: self.file.clone(),
            line,
            message,
        }
    }

    fn error(&self, message: String) -> TraceError {
        self.error_at(self.line_no, message)
    }

    /// Reads box lines into `out` up to the next `step N` line (checked and taken: the
    /// section becomes that step) or the end of the input.
    fn read_boxes(&mut self, out: &mut Vec<TraceBox>) -> Result<(), TraceError> {
        let mut in_static = self.section == Section::Static;
        self.seen.clear();
        loop {
            if !self.read_line()? {
                self.section = Section::End;
                break;
            }
            let text = std::str::from_utf8(&self.line)
                .map_err(|_| self.error("the line is not UTF-8 text".to_owned()))?;
            let text = text.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let kind = classify(text);
            match kind {
                Line::Static => {
                    if self.section != Section::Preamble {
                        return Err(
                            self.error("`static` must come once, before `step 0`".to_owned())
                        );
                    }
                    self.section = Section::Static;
                    in_static = true;
                }
                Line::Step(number) => {
                    let number = number.to_owned();
                    self.take_step_line(&number)?;
                    break;
                }
                Line::Box => {
                    if self.section == Section::Preamble {
                        return Err(self.error(
                            "a box before `static` or `step 0`: boxes belong to a step".to_owned(),
                        ));
                    }
                    let text = text.to_owned();
                    let b = self.parse_box(&text)?;
                    if !in_static && self.statics.binary_search_by_key(&b.id, |s| s.id).is_ok() {
                        return Err(self.error(format!(
                            "id {} is a static box's; a step may not list it",
                            b.id
                        )));
                    }
                    if out.len() >= self.limits.max_boxes_per_step {
                        // The static section is not a step: named as what it is.
                        let place = if in_static {
                            "the static section"
                        } else {
                            "one step"
                        };
                        return Err(self.error(format!(
                            "more than {} boxes in {place}",
                            self.limits.max_boxes_per_step
                        )));
                    }
                    self.boxes_read += 1;
                    if self.boxes_read > self.limits.max_total_boxes {
                        return Err(self.error(format!(
                            "more than {} boxes in the whole trace",
                            self.limits.max_total_boxes
                        )));
                    }
                    self.seen.push((b.id, self.line_no));
                    out.push(b);
                }
            }
        }
        // Repeated ids: the message names the later line.
        self.seen.sort_unstable();
        if let Some(w) = self.seen.windows(2).find(|w| w[0].0 == w[1].0) {
            let (first, second) = (w[0].1.min(w[1].1), w[0].1.max(w[1].1));
            let place = if in_static {
                "the static section".to_owned()
            } else {
                format!("step {}", self.previous_step())
            };
            return Err(self.error_at(
                second,
                format!(
                    "id {} appears twice in {place} (also on line {first})",
                    w[0].0
                ),
            ));
        }
        Ok(())
    }

    /// The step whose boxes were just read (the one before the `step` line just taken, if
    /// any was taken).
    fn previous_step(&self) -> u64 {
        match self.section {
            Section::Step => self.step.saturating_sub(1),
            _ => self.step,
        }
    }

    /// Checks `step N` against the expected number and moves to that step.
    fn take_step_line(&mut self, number: &str) -> Result<(), TraceError> {
        let expected = match self.section {
            Section::Step => self.step + 1,
            _ => 0,
        };
        let n: u64 = number.parse().map_err(|_| {
            self.error(format!(
                "`step {}`: the step number must be a whole number (expected `step {expected}`)",
                excerpt(number, 20)
            ))
        })?;
        if n != expected {
            return Err(self.error(format!(
                "steps out of order: expected `step {expected}`, got `step {n}` (steps are \
                 numbered 0, 1, 2, ... with none left out)"
            )));
        }
        if n >= self.limits.max_steps {
            return Err(self.error(format!("more than {} steps", self.limits.max_steps)));
        }
        self.step = n;
        self.section = Section::Step;
        Ok(())
    }

    /// One line into `self.line` (no line break, a final `\r` dropped); false at the end.
    fn read_line(&mut self) -> Result<bool, TraceError> {
        self.line.clear();
        let mut got_any = false;
        loop {
            let available = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(TraceError::Io {
                        file: self.file.clone(),
                        action: "read",
                        source,
                    });
                }
            };
            if available.is_empty() {
                if !got_any {
                    return Ok(false);
                }
                break;
            }
            got_any = true;
            let (take, used, found) = match available.iter().position(|&c| c == b'\n') {
                Some(i) => (i, i + 1, true),
                None => (available.len(), available.len(), false),
            };
            // One byte more for the CR of a CRLF line end, which is not part of the line (a
            // line of the limit was accepted with LF and refused with CRLF).
            if self.line.len() + take > self.limits.max_line_bytes + 1 {
                let cr_only = self.line.contains(&b'\r') || available[..take].contains(&b'\r');
                return Err(self.error_at(
                    self.line_no + 1,
                    format!(
                        "the line is longer than {} bytes{}",
                        self.limits.max_line_bytes,
                        if cr_only {
                            "; it holds carriage returns (CR) without line feeds: lines must \
                             end in LF or CRLF, not CR alone"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            self.line.extend_from_slice(&available[..take]);
            self.input.consume(used);
            self.bytes_read += used as u64;
            if self.bytes_read > self.limits.max_bytes {
                return Err(self.error_at(
                    self.line_no + 1,
                    format!("the trace is longer than {} bytes", self.limits.max_bytes),
                ));
            }
            if found {
                break;
            }
        }
        self.line_no += 1;
        // A byte-order mark some editors put before the first line is not part of it.
        if self.line_no == 1 && self.line.starts_with(BOM) {
            self.line.drain(..BOM.len());
        }
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        if self.line.len() > self.limits.max_line_bytes {
            return Err(self.error(format!(
                "the line is longer than {} bytes",
                self.limits.max_line_bytes
            )));
        }
        if self.line.contains(&b'\r') {
            return Err(self.error(
                "a carriage return (CR) inside the line: lines must end in LF or CRLF, not CR \
                 alone"
                    .to_owned(),
            ));
        }
        Ok(true)
    }

    /// The header line: `aabb-trace VERSION dims=2|3 [dt=SECONDS]`.
    fn parse_header(&self) -> Result<TraceHeader, TraceError> {
        let not_a_trace = || {
            self.error(format!(
                "not a trace: the first line must be the header `{}`",
                header_example()
            ))
        };
        let text = std::str::from_utf8(&self.line).map_err(|_| not_a_trace())?;
        let mut words = text.split_ascii_whitespace();
        if words.next() != Some(TRACE_MAGIC) {
            return Err(not_a_trace());
        }
        let version = words.next().ok_or_else(not_a_trace)?;
        match version.parse::<u32>() {
            Ok(TRACE_VERSION) => {}
            Ok(v) if v > TRACE_VERSION => {
                return Err(self.error(format!(
                    "trace format version {v} is newer than this build reads ({TRACE_VERSION})"
                )));
            }
            _ => {
                return Err(self.error(format!(
                    "`{}` is not a trace format version (this build reads {TRACE_VERSION})",
                    excerpt(version, 20)
                )));
            }
        }
        let (mut dims, mut dt) = (None, None);
        for word in words {
            let (key, value) = word.split_once('=').unwrap_or((word, ""));
            let slot_taken = match key {
                "dims" => dims.replace(value).is_some(),
                "dt" => dt.replace(value).is_some(),
                _ => {
                    return Err(self.error(format!(
                        "unknown header field `{}` (the fields are dims=2|3 and dt=SECONDS)",
                        excerpt(word, 30)
                    )));
                }
            };
            if slot_taken {
                return Err(self.error(format!("the header gives `{key}` twice")));
            }
        }
        let dimensions = match dims {
            Some("2") => 2,
            Some("3") => 3,
            Some(other) => {
                return Err(
                    self.error(format!("dims must be 2 or 3, got `{}`", excerpt(other, 20)))
                );
            }
            None => return Err(self.error("the header must give dims=2 or dims=3".to_owned())),
        };
        let dt = match dt {
            None => DEFAULT_TRACE_DT,
            Some(text) => match text.parse::<f32>() {
                Ok(dt) if dt.is_finite() && dt > 0.0 && dt <= 1.0 => dt,
                _ => {
                    return Err(self.error(format!(
                        "dt must be a number of seconds > 0 and <= 1, got `{}`",
                        excerpt(text, 20)
                    )));
                }
            },
        };
        Ok(TraceHeader { dimensions, dt })
    }

    /// A box line: `id` then min and max (2 or 3 numbers each).
    fn parse_box(&self, text: &str) -> Result<TraceBox, TraceError> {
        let dims = usize::from(self.header.dimensions);
        let wanted = 1 + 2 * dims;
        let axes = ["x", "y", "z"];
        let mut words = [""; 7];
        let mut count = 0;
        for w in text.split_ascii_whitespace() {
            if count < words.len() {
                words[count] = w;
            }
            count += 1;
        }
        if count != wanted {
            let names: Vec<String> = ["min", "max"]
                .iter()
                .flat_map(|m| axes[..dims].iter().map(move |a| format!("{m}{a}")))
                .collect();
            return Err(self.error(format!(
                "a box line is an id and {} numbers (`id {}`), got {count} value{}{}",
                2 * dims,
                names.join(" "),
                if count == 1 { "" } else { "s" },
                crate::text::odd_space_note(text)
            )));
        }
        let id: u32 = words[0].parse().map_err(|_| {
            self.error(format!(
                "`{}` is not a box id (a whole number from 0 to {}){}",
                excerpt(words[0], 20),
                u32::MAX,
                crate::text::odd_space_note(words[0])
            ))
        })?;
        let mut min = [0.0f32; 3];
        let mut max = [0.0f32; 3];
        for a in 0..dims {
            for (side, target, word) in [
                ("min", &mut min, words[1 + a]),
                ("max", &mut max, words[1 + dims + a]),
            ] {
                let x: f32 = word.parse().map_err(|_| {
                    self.error(format!(
                        "box {id}: {side} {} `{}` is not a number{}",
                        axes[a],
                        excerpt(word, 20),
                        crate::text::odd_space_note(word)
                    ))
                })?;
                if !x.is_finite() {
                    return Err(self.error(format!(
                        "box {id}: {side} {} `{}` is not finite (or is beyond f32's range)",
                        axes[a],
                        excerpt(word, 20)
                    )));
                }
                target[a] = x;
            }
            if min[a] > max[a] {
                return Err(self.error(format!(
                    "box {id}: min {ax} {} > max {ax} {}",
                    min[a],
                    max[a],
                    ax = axes[a]
                )));
            }
        }
        Ok(TraceBox {
            id,
            aabb: Aabb::new(Vec3::from_array(min), Vec3::from_array(max)),
        })
    }
}

/// A box's velocity is its centre's motion since the previous step over `dt` (the look-ahead
/// fattens by it): refused, naming the box's line, when that is past what `f32` holds (a jump
/// across most of the number range, or a `dt` too small for the motion). `previous` and
/// `step` are sorted by id; the reader's `seen` holds the step's ids and lines, sorted.
fn check_velocities<R: BufRead>(
    reader: &TraceReader<R>,
    previous: &[TraceBox],
    step: &[TraceBox],
) -> Result<(), TraceError> {
    let dt = f64::from(reader.header().dt);
    let centre = |b: &TraceBox| (b.aabb.min.as_dvec3() + b.aabb.max.as_dvec3()) * 0.5;
    let mut p = 0;
    for (k, b) in step.iter().enumerate() {
        while p < previous.len() && previous[p].id < b.id {
            p += 1;
        }
        let Some(before) = previous.get(p).filter(|before| before.id == b.id) else {
            continue;
        };
        let velocity = (centre(b) - centre(before)) / dt;
        if velocity.as_vec3().is_finite() {
            continue;
        }
        let line = reader.seen.get(k).map_or(reader.line_no, |&(_, line)| line);
        let d = usize::from(reader.header().dimensions);
        let shown = |v: glam::DVec3| format!("{:?}", &v.as_vec3().to_array()[..d]);
        return Err(reader.error_at(
            line,
            format!(
                "box {} moves from centre {} to {} in one step of dt = {:e} s: its velocity, \
                 {}, is past what f32 holds, and the look-ahead cannot use it",
                b.id,
                shown(centre(before)),
                shown(centre(b)),
                reader.header().dt,
                shown(velocity)
            ),
        ));
    }
    Ok(())
}

/// The UTF-8 byte-order mark, skipped before the header.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What a trimmed, non-blank, non-comment line is.
fn classify(text: &str) -> Line<'_> {
    let mut words = text.split_ascii_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("static"), None, _) => Line::Static,
        (Some("step"), Some(n), None) => Line::Step(n),
        (Some("step"), _, _) => Line::Step(text.get(4..).map_or("", str::trim)),
        _ => Line::Box,
    }
}

/// The header as the messages show it.
fn header_example() -> String {
    format!("{TRACE_MAGIC} {TRACE_VERSION} dims=2 dt=0.016666668")
}

/// Writes a trace: the header and the static boxes at [`TraceWriter::new`], then one
/// [`TraceWriter::step`] per step. Every box is checked first (finite, min <= max, no id twice
/// in a step, no static id in a step), so what it writes a [`TraceReader`] reads back
/// exactly (numbers are written as the shortest text that reads back to the same `f32`).
pub struct TraceWriter<W: Write> {
    out: W,
    dims: usize,
    statics: Vec<u32>,
    next_step: u64,
    /// Ids of the step being checked, reused.
    ids: Vec<u32>,
    /// Text of the step being written, reused.
    text: String,
}

impl<W: Write> TraceWriter<W> {
    /// Writes the header and the static boxes (none: no `static` section).
    pub fn new(out: W, header: TraceHeader, statics: &[TraceBox]) -> Result<Self, TraceError> {
        if !(header.dimensions == 2 || header.dimensions == 3) {
            return Err(TraceError::Invalid {
                step: 0,
                message: format!("dims must be 2 or 3, got {}", header.dimensions),
            });
        }
        if !(header.dt.is_finite() && header.dt > 0.0 && header.dt <= 1.0) {
            return Err(TraceError::Invalid {
                step: 0,
                message: format!("dt must be > 0 and <= 1, got {}", header.dt),
            });
        }
        let mut writer = TraceWriter {
            out,
            dims: usize::from(header.dimensions),
            statics: Vec::new(),
            next_step: 0,
            ids: Vec::new(),
            text: format!(
                "{TRACE_MAGIC} {TRACE_VERSION} dims={} dt={}\n",
                header.dimensions, header.dt
            ),
        };
        if !statics.is_empty() {
            writer.check(statics, 0)?;
            writer.statics.clone_from(&writer.ids);
            writer.text.push_str("static\n");
            writer.push_boxes(statics);
        }
        writer.flush_text()?;
        Ok(writer)
    }

    /// Writes the next step (`step 0` first) with `boxes` in the order given.
    pub fn step(&mut self, boxes: &[TraceBox]) -> Result<(), TraceError> {
        self.check(boxes, self.next_step)?;
        self.text.clear();
        self.text.push_str(&format!("step {}\n", self.next_step));
        self.push_boxes(boxes);
        self.flush_text()?;
        self.next_step += 1;
        Ok(())
    }

    /// How many steps were written.
    #[must_use]
    pub fn steps_written(&self) -> u64 {
        self.next_step
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> Result<W, TraceError> {
        self.out.flush().map_err(write_error)?;
        Ok(self.out)
    }

    fn push_boxes(&mut self, boxes: &[TraceBox]) {
        use std::fmt::Write as _;
        for b in boxes {
            // Writing to a String cannot fail.
            let _ = write!(self.text, "{}", b.id);
            for v in [b.aabb.min, b.aabb.max] {
                for x in &v.to_array()[..self.dims] {
                    let _ = write!(self.text, " {x}");
                }
            }
            self.text.push('\n');
        }
    }

    fn flush_text(&mut self) -> Result<(), TraceError> {
        self.out
            .write_all(self.text.as_bytes())
            .map_err(write_error)
    }

    /// The writer's rules for one step's boxes; leaves their ids sorted in `self.ids`.
    fn check(&mut self, boxes: &[TraceBox], step: u64) -> Result<(), TraceError> {
        let invalid = |message: String| TraceError::Invalid { step, message };
        self.ids.clear();
        for b in boxes {
            let (min, max) = (b.aabb.min, b.aabb.max);
            if !(min.is_finite() && max.is_finite()) {
                return Err(invalid(format!("box {}: not finite ({min}, {max})", b.id)));
            }
            if !min.cmple(max).all() {
                return Err(invalid(format!("box {}: min {min} > max {max}", b.id)));
            }
            if self.statics.binary_search(&b.id).is_ok() {
                return Err(invalid(format!("id {} is a static box's", b.id)));
            }
            self.ids.push(b.id);
        }
        self.ids.sort_unstable();
        if let Some(w) = self.ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(invalid(format!("id {} appears twice", w[0])));
        }
        Ok(())
    }
}

fn write_error(source: std::io::Error) -> TraceError {
    TraceError::Io {
        file: "<output>".to_owned(),
        action: "write",
        source,
    }
}

/// A whole trace in memory: the header, the static boxes and every step's boxes (each sorted
/// by id), for replaying it at any margin, any number of times, and for showing any step.
/// (Its `Debug` gives the counts, not the boxes.)
///
/// A copy shares the steps' boxes with the original, so a trace still growing (a
/// live engine's) can be handed over as it is, again and again, each copy costing a pointer a
/// chunk of steps rather than its boxes; a copy is a prefix of the trace it was taken from.
#[derive(Clone, PartialEq)]
pub struct Trace {
    name: String,
    header: TraceHeader,
    statics: Vec<TraceBox>,
    steps: Steps,
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace")
            .field("name", &self.name)
            .field("header", &self.header)
            .field("statics", &self.statics.len())
            .field("steps", &self.steps.count)
            .field("boxes", &self.steps.boxes)
            .finish()
    }
}

/// Every step's boxes, in chunks of consecutive steps that copies share. A step is appended
/// to the last chunk when no copy holds it, else it starts a new chunk, so a copy never sees a
/// step appended after it was taken and appending never copies boxes.
#[derive(Clone, Default)]
struct Steps {
    chunks: Vec<std::sync::Arc<Chunk>>,
    /// Steps in all.
    count: usize,
    /// Boxes in all.
    boxes: usize,
}

/// Consecutive steps from `first`: step `first + k` is `boxes[ends[k - 1]..ends[k]]`.
#[derive(Clone, Default)]
struct Chunk {
    first: usize,
    boxes: Vec<TraceBox>,
    ends: Vec<usize>,
}

impl Steps {
    /// Step `k`'s boxes; empty past the end.
    fn get(&self, k: usize) -> &[TraceBox] {
        if k >= self.count {
            return &[];
        }
        let at = self.chunks.partition_point(|c| c.first <= k);
        let Some(chunk) = at.checked_sub(1).and_then(|i| self.chunks.get(i)) else {
            return &[];
        };
        let j = k - chunk.first;
        let start = j.checked_sub(1).map_or(0, |i| chunk.ends[i]);
        chunk.boxes.get(start..chunk.ends[j]).unwrap_or_default()
    }

    /// Appends a step (see the type's doc).
    fn push(&mut self, boxes: &[TraceBox]) {
        let count = self.count;
        let last = self.chunks.last_mut().and_then(std::sync::Arc::get_mut);
        let chunk = match last {
            Some(chunk) => chunk,
            None => {
                self.chunks.push(std::sync::Arc::new(Chunk {
                    first: count,
                    ..Chunk::default()
                }));
                match self.chunks.last_mut().and_then(std::sync::Arc::get_mut) {
                    Some(chunk) => chunk,
                    // Just made, so held by no copy.
                    None => return,
                }
            }
        };
        chunk.boxes.extend_from_slice(boxes);
        chunk.ends.push(chunk.boxes.len());
        self.count += 1;
        self.boxes += boxes.len();
    }
}

impl PartialEq for Steps {
    /// The same steps, however they are chunked.
    fn eq(&self, other: &Steps) -> bool {
        self.count == other.count
            && self.boxes == other.boxes
            && (0..self.count).all(|k| self.get(k) == other.get(k))
    }
}

impl Trace {
    /// Reads a trace file with the default [`TraceLimits`]; its name is the file's stem.
    pub fn load(path: &Path) -> Result<Trace, TraceError> {
        Self::load_with(path, TraceLimits::default())
    }

    /// [`Trace::load`] with other limits.
    pub fn load_with(path: &Path, limits: TraceLimits) -> Result<Trace, TraceError> {
        let file = crate::fileio::open_regular(path, limits.max_bytes)?;
        let name = path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        let mut trace = Self::read(
            std::io::BufReader::with_capacity(1 << 16, file),
            &path.display().to_string(),
            limits,
        )?;
        trace.name = name;
        Ok(trace)
    }

    /// Reads a trace from `input`; `file` names it in messages. An error for a trace with no
    /// step.
    pub fn read(input: impl BufRead, file: &str, limits: TraceLimits) -> Result<Trace, TraceError> {
        let mut reader = TraceReader::new(input, file, limits)?;
        let mut trace = Trace {
            name: file.to_owned(),
            header: reader.header(),
            statics: reader.statics().to_vec(),
            steps: Steps::default(),
        };
        let mut step = Vec::new();
        while reader.next_step(&mut step)? {
            if let Some(last) = trace.steps.count.checked_sub(1) {
                check_velocities(&reader, trace.steps.get(last), &step)?;
            }
            trace.steps.push(&step);
        }
        if trace.steps.count == 0 {
            return Err(reader.error_at(
                reader.line_no.max(1),
                "the trace has no step: it needs at least `step 0`".to_owned(),
            ));
        }
        Ok(trace)
    }

    /// Parses a trace held in memory (bytes of any kind); `file` names it in messages.
    pub fn parse(bytes: &[u8], file: &str) -> Result<Trace, TraceError> {
        Self::read(bytes, file, TraceLimits::default())
    }

    /// A trace from boxes in memory, checked by the writer's rules (each step's boxes are
    /// sorted by id here). An error for no step or a box a reader would refuse.
    pub fn from_steps(
        name: &str,
        header: TraceHeader,
        statics: Vec<TraceBox>,
        steps: Vec<Vec<TraceBox>>,
    ) -> Result<Trace, TraceError> {
        let mut text = Vec::new();
        let mut writer = TraceWriter::new(&mut text, header, &statics)?;
        for s in &steps {
            writer.step(s)?;
        }
        writer.finish()?;
        let mut trace = Self::parse(&text, name)?;
        trace.name = name.to_owned();
        Ok(trace)
    }

    /// Writes the whole trace in the text format.
    pub fn write(&self, out: impl Write) -> Result<(), TraceError> {
        let mut writer = TraceWriter::new(out, self.header, &self.statics)?;
        for k in 0..self.step_count() {
            writer.step(self.step(k))?;
        }
        writer.finish()?;
        Ok(())
    }

    /// The trace's name (the file's stem when loaded from a file).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The header.
    #[must_use]
    pub fn header(&self) -> TraceHeader {
        self.header
    }

    /// 2 or 3.
    #[must_use]
    pub fn dimensions(&self) -> u8 {
        self.header.dimensions
    }

    /// Seconds between steps.
    #[must_use]
    pub fn dt(&self) -> f32 {
        self.header.dt
    }

    /// The static boxes, sorted by id.
    #[must_use]
    pub fn statics(&self) -> &[TraceBox] {
        &self.statics
    }

    /// How many steps (at least 1).
    #[must_use]
    pub fn step_count(&self) -> usize {
        self.steps.count
    }

    /// The pair tests a step of each broad phase makes over step `k`'s boxes and the static
    /// ones ([`crate::broadphase::Work`]).
    #[must_use]
    pub fn work_at(&self, k: usize) -> crate::broadphase::Work {
        let boxes: Vec<crate::tree::Aabb<glam::Vec3>> = self
            .step(k)
            .iter()
            .chain(self.statics())
            .map(|b| b.aabb)
            .collect();
        crate::broadphase::estimate_work(&boxes)
    }

    /// Step `k`'s boxes sorted by id (static boxes not included); empty past the end.
    #[must_use]
    pub fn step(&self, k: usize) -> &[TraceBox] {
        self.steps.get(k)
    }

    /// True when `self` is `longer` up to this trace's last step: the same name, header and
    /// static boxes, and the same boxes at each of its steps (a live trace handed over before
    /// more steps came). Compares the steps' boxes only where the two do not share them.
    #[must_use]
    pub fn is_prefix_of(&self, longer: &Trace) -> bool {
        self.name == longer.name
            && self.header == longer.header
            && self.statics == longer.statics
            && self.steps.count <= longer.steps.count
            && self
                .steps
                .chunks
                .iter()
                .zip(&longer.steps.chunks)
                .all(|(a, b)| {
                    std::sync::Arc::ptr_eq(a, b)
                        || (a.first == b.first
                            && (0..a.ends.len()).all(|j| {
                                self.steps.get(a.first + j) == longer.steps.get(a.first + j)
                            }))
                })
    }

    /// The most boxes any one step holds, static boxes included.
    #[must_use]
    pub fn max_boxes(&self) -> usize {
        (0..self.step_count())
            .map(|k| self.step(k).len())
            .max()
            .unwrap_or(0)
            + self.statics.len()
    }
}

/// Builds a [`Trace`] one step at a time from boxes in memory (a stream file, a live engine),
/// checked by the reader's rules as each step comes: finite, min <= max, no id twice, no
/// static id in a step, a velocity that f32 holds, and the [`TraceLimits`] on boxes and
/// steps. A refused step leaves the steps before it intact ([`TraceBuilder::snapshot`]).
#[derive(Clone, Debug)]
pub struct TraceBuilder {
    trace: Trace,
    limits: TraceLimits,
    static_ids: Vec<u32>,
}

impl TraceBuilder {
    /// A trace named `name` with `header` and `statics` (any order; sorted here), no step yet.
    pub fn new(
        name: &str,
        header: TraceHeader,
        mut statics: Vec<TraceBox>,
        limits: TraceLimits,
    ) -> Result<Self, TraceError> {
        let invalid = |message: String| TraceError::Invalid { step: 0, message };
        if !(header.dimensions == 2 || header.dimensions == 3) {
            return Err(invalid(format!(
                "dims must be 2 or 3, got {}",
                header.dimensions
            )));
        }
        if !(header.dt.is_finite() && header.dt > 0.0 && header.dt <= 1.0) {
            return Err(invalid(format!(
                "dt must be > 0 and <= 1, got {:e}",
                header.dt
            )));
        }
        if statics.len() > limits.max_boxes_per_step {
            return Err(invalid(format!(
                "{} static boxes, more than the {} a trace may hold",
                statics.len(),
                limits.max_boxes_per_step
            )));
        }
        statics.sort_unstable_by_key(|b| b.id);
        check_sorted_boxes(&statics).map_err(|m| invalid(format!("static boxes: {m}")))?;
        let static_ids = statics.iter().map(|b| b.id).collect();
        Ok(TraceBuilder {
            trace: Trace {
                name: name.to_owned(),
                header,
                statics,
                steps: Steps::default(),
            },
            limits,
            static_ids,
        })
    }

    /// Appends the next step (`boxes` in any order; sorted here). An error leaves the trace
    /// as it was before the call.
    pub fn push_step(&mut self, mut boxes: Vec<TraceBox>) -> Result<(), TraceError> {
        let step = self.trace.steps.count as u64;
        boxes.sort_unstable_by_key(|b| b.id);
        let previous = self
            .trace
            .step_count()
            .checked_sub(1)
            .map(|last| self.trace.step(last));
        check_step_rules(
            &self.limits,
            step,
            self.trace.steps.boxes as u64,
            &self.static_ids,
            previous,
            &boxes,
            self.trace.header.dt,
        )
        .map_err(|message| TraceError::Invalid { step, message })?;
        self.trace.steps.push(&boxes);
        Ok(())
    }

    /// The steps appended so far.
    #[must_use]
    pub fn step_count(&self) -> usize {
        self.trace.step_count()
    }

    /// The trace as built so far (an error when it has no step yet): it shares the steps'
    /// boxes with the builder, so taking one costs a pointer a chunk of steps, and the next
    /// step appended starts a chunk of its own.
    pub fn snapshot(&self) -> Result<Trace, TraceError> {
        if self.trace.steps.count == 0 {
            return Err(TraceError::Invalid {
                step: 0,
                message: "the trace has no step yet".to_owned(),
            });
        }
        Ok(self.trace.clone())
    }

    /// The finished trace (an error when it has no step).
    pub fn finish(self) -> Result<Trace, TraceError> {
        if self.trace.steps.count == 0 {
            return Err(TraceError::Invalid {
                step: 0,
                message: "the trace has no step: it needs at least one".to_owned(),
            });
        }
        Ok(self.trace)
    }
}

/// The reader's rules for step `step` (0-based) of a trace: `boxes` sorted by id, after
/// `boxes_before` boxes in the steps before, `previous` the step before it (sorted by id),
/// `static_ids` sorted, `dt` the header's. The limits on steps and boxes, finite boxes with
/// min <= max, no id twice, no static id, and a velocity (centre's move over `dt`) that f32
/// holds: what [`TraceBuilder::push_step`] checks, and so what a reader of a stream accepts.
pub fn check_step_rules(
    limits: &TraceLimits,
    step: u64,
    boxes_before: u64,
    static_ids: &[u32],
    previous: Option<&[TraceBox]>,
    boxes: &[TraceBox],
    dt: f32,
) -> Result<(), String> {
    if step >= limits.max_steps {
        return Err(format!(
            "more than {} steps, the most a trace may hold",
            limits.max_steps
        ));
    }
    if boxes.len() > limits.max_boxes_per_step {
        return Err(format!(
            "{} boxes in one step, more than the {} a step may hold",
            boxes.len(),
            limits.max_boxes_per_step
        ));
    }
    let total = boxes_before.saturating_add(boxes.len() as u64);
    if total > limits.max_total_boxes {
        return Err(format!(
            "{total} boxes over all steps, more than the {} a trace may hold in memory",
            limits.max_total_boxes
        ));
    }
    check_sorted_boxes(boxes)?;
    if let Some(b) = boxes
        .iter()
        .find(|b| static_ids.binary_search(&b.id).is_ok())
    {
        return Err(format!("id {} is a static box's", b.id));
    }
    if let Some(previous) = previous {
        let dt = f64::from(dt);
        let centre = |b: &TraceBox| (b.aabb.min.as_dvec3() + b.aabb.max.as_dvec3()) * 0.5;
        let mut p = 0;
        for b in boxes {
            while p < previous.len() && previous[p].id < b.id {
                p += 1;
            }
            if let Some(before) = previous.get(p).filter(|before| before.id == b.id)
                && !((centre(b) - centre(before)) / dt).as_vec3().is_finite()
            {
                return Err(format!(
                    "box {} moves from centre {} to {} in one step of the trace: its \
                     velocity is past what f32 holds, and the look-ahead cannot use it",
                    b.id,
                    centre(before).as_vec3(),
                    centre(b).as_vec3()
                ));
            }
        }
    }
    Ok(())
}

/// Checks boxes sorted by id: finite, min <= max, no id twice.
fn check_sorted_boxes(boxes: &[TraceBox]) -> Result<(), String> {
    for b in boxes {
        let (min, max) = (b.aabb.min, b.aabb.max);
        if !(min.is_finite() && max.is_finite()) {
            return Err(format!("box {}: not finite ({min}, {max})", b.id));
        }
        if !min.cmple(max).all() {
            return Err(format!("box {}: min {min} > max {max}", b.id));
        }
    }
    if let Some(w) = boxes.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(format!("id {} appears twice", w[0].id));
    }
    Ok(())
}

/// True when `path` opens as a trace: its name ends in `.trace` or `.aabbstream`, or the file
/// begins with `aabb-trace` or with a stream's magic bytes (see [`crate::fileio::open_as`]).
#[must_use]
pub fn is_trace_path(path: &Path) -> bool {
    crate::fileio::open_as(path) == crate::fileio::OpenAs::Trace
}
