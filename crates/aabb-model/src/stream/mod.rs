//! Streams: the live link's binary format (see `docs/formats.md`, "Stream"), written by the
//! recorders an engine links (the `aabb-recorder` crate, the C header, the Python module) to a
//! socket or to a file. This module turns a stream into a [`Trace`], so that `run`, `sweep`,
//! `convert` and the window take a stream file wherever they take a text trace, and
//! [`listen`] receives one live from an engine over TCP.
//!
//! The codec itself (frames, the decoder and the state that applies the steps' changes) is the
//! recorder crate's [`aabb_recorder::wire`], one definition shared by the engine's side and
//! the debugger's.

pub mod engine;
pub mod listen;

use crate::fileio::ReadError;
use crate::text::escape_controls;
use crate::trace::{
    Trace, TraceBox, TraceBuilder, TraceError, TraceHeader, TraceLimits, check_step_rules,
};
use crate::tree::Aabb;
use aabb_recorder::StreamState;
use aabb_recorder::wire::{self, Decoder, Frame, WireBox, WireErrorKind};
use glam::Vec3;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub use aabb_recorder::wire::{MAGIC as STREAM_MAGIC, WireError};

/// Steps an engine dropped (its recorder's buffer was full): engine steps `first..=last` never
/// arrived, between the received steps `after` and `after + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The received step (0-based, as numbered in the trace) after which the gap lies.
    pub after: u64,
    /// The first engine step that is missing.
    pub first: u64,
    /// The last engine step that is missing.
    pub last: u64,
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.first == self.last {
            write!(f, "step {} dropped by the engine", self.first)
        } else {
            write!(
                f,
                "steps {} to {} dropped by the engine",
                self.first, self.last
            )
        }
    }
}

/// What a stream says of itself besides its boxes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamInfo {
    /// The engine's name, as its HELLO gave it.
    pub engine: String,
    /// The engine's length unit (`m`, `px`), as its HELLO gave it.
    pub units: String,
    /// The engine's number of each received step, in order (the trace's step k is engine
    /// step `engine_steps[k]`).
    pub engine_steps: Vec<u64>,
    /// The steps the engine dropped, in order (an intake that only counts lists none: see
    /// [`StreamInfo::gap_count`]).
    pub gaps: Vec<Gap>,
    /// How many gaps there were, listed or not.
    pub gap_count: u64,
    /// How many engine steps were dropped in all, listed or not.
    pub dropped: u64,
    /// The recorder's own count of steps sent and dropped, when the stream ended with BYE.
    pub bye: Option<(u64, u64)>,
    /// Why the stream stopped before a clean end, when it did (the steps before were kept).
    pub stopped: Option<String>,
    /// For an intake that checks files ([`StreamIntake::checking_files`]): the step at which
    /// readers of a stream file of what was taken stop, and why (they keep the steps before
    /// it); `None` while they open all of it.
    pub readers_stop: Option<String>,
    /// The engine's own broad phase, from the steps that carried it (fat boxes, pairs, tree,
    /// timings): each step's parts and the run's checks.
    pub engine_parts: engine::EngineRecord,
}

impl StreamInfo {
    /// How many engine steps were dropped in all.
    #[must_use]
    pub fn dropped_steps(&self) -> u64 {
        self.dropped
    }
}

/// Why a stream could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// The bytes break the format: `SOURCE: byte N, step S: what`.
    #[error("{}: {}", escape_controls(.source_name), .error)]
    Wire {
        /// The file or connection.
        source_name: String,
        /// The decoder's error (byte offset, step, what).
        error: WireError,
    },
    /// The boxes are valid stream boxes but break a trace's rules or limits.
    #[error("{}: {}", escape_controls(.source_name), .error)]
    Trace {
        /// The file or connection.
        source_name: String,
        /// What the trace refused.
        error: TraceError,
    },
    /// A step is valid in the stream's format but breaks a trace's rules or limits (a velocity
    /// past f32, more steps or boxes than a trace holds): `SOURCE: byte N, step S: what`, with
    /// the engine's step number and the trace's.
    #[error("{}: byte {offset}, step {engine_step}: {message} (the trace's step {index}{})", escape_controls(.source_name), dropped_note(*.dropped_before, *.index))]
    Step {
        /// The file or connection.
        source_name: String,
        /// The byte offset of the step's frame.
        offset: u64,
        /// The engine's number for the step.
        engine_step: u64,
        /// The step's index in the trace.
        index: u64,
        /// Engine steps dropped just before it.
        dropped_before: u64,
        /// What is wrong.
        message: String,
    },
    /// The file could not be opened.
    #[error("{0}")]
    Read(#[from] ReadError),
    /// A text trace was refused.
    #[error("{0}")]
    Text(#[from] TraceError),
    /// The stream held no step.
    #[error("{}: the stream holds no step{}", escape_controls(.source_name), .why)]
    NoStep {
        /// The file or connection.
        source_name: String,
        /// `: ...` with why it stopped, or empty.
        why: String,
    },
}

/// `; the engine dropped the N steps before it, so the trace takes the move of N + 1 steps as
/// one`, or nothing.
fn dropped_note(dropped: u64, index: u64) -> String {
    match dropped {
        0 => String::new(),
        _ if index == 0 => String::new(),
        1 => "; the engine dropped the step before it, so the trace takes the move of 2 steps \
              as one"
            .to_owned(),
        n => format!(
            "; the engine dropped the {n} steps before it, so the trace takes the move of {} \
             steps as one",
            n.saturating_add(1)
        ),
    }
}

impl StreamError {
    /// Whether a reader keeps the steps before this error (with a warning) rather than
    /// refusing the whole stream: the stream is cut (inside a frame or its length field), or
    /// a step passes a limit (more boxes, steps or bytes than a trace or frame may hold, a
    /// velocity past f32), as a listener may have written it.
    #[must_use]
    pub fn keeps_steps_before(&self) -> bool {
        match self {
            StreamError::Wire { error, .. } => matches!(
                error.kind,
                WireErrorKind::Truncated { .. }
                    | WireErrorKind::TruncatedLength { .. }
                    | WireErrorKind::OverLimit { .. }
                    | WireErrorKind::FrameLength { len: 1.., .. }
            ),
            StreamError::Step { .. } => true,
            _ => false,
        }
    }

    /// The message without the file's or connection's name (for a warning that names it
    /// already).
    #[must_use]
    pub fn without_source(&self) -> String {
        let text = self.to_string();
        let prefix = match self {
            StreamError::Wire { source_name, .. }
            | StreamError::Step { source_name, .. }
            | StreamError::Trace { source_name, .. }
            | StreamError::NoStep { source_name, .. } => {
                format!("{}: ", escape_controls(source_name))
            }
            _ => String::new(),
        };
        text.strip_prefix(&prefix)
            .map_or(text.clone(), str::to_owned)
    }
}

/// A tap on a trace being built by a [`StreamIntake`] (see [`StreamIntake::tap`]).
#[derive(Clone)]
pub struct TraceTap(Arc<Mutex<Option<TraceBuilder>>>);

impl TraceTap {
    /// The steps built so far (0 before the first, and after the intake finished).
    #[must_use]
    pub fn step_count(&self) -> usize {
        lock_builder(&self.0)
            .as_ref()
            .map_or(0, TraceBuilder::step_count)
    }

    /// The trace built so far, sharing its boxes with the builder (`None` before the first
    /// step, and after the intake finished).
    #[must_use]
    pub fn snapshot(&self) -> Option<Trace> {
        lock_builder(&self.0).as_ref()?.snapshot().ok()
    }
}

/// The builder behind its lock (a panic while it was held leaves the steps before it intact:
/// a refused step changes nothing).
fn lock_builder(
    builder: &Mutex<Option<TraceBuilder>>,
) -> std::sync::MutexGuard<'_, Option<TraceBuilder>> {
    builder
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Turns decoded frames into a trace step by step: the one place a stream becomes steps, for
/// files and live connections alike.
pub struct StreamIntake {
    source_name: String,
    limits: TraceLimits,
    state: StreamState,
    /// The trace being built, shared with the taps ([`StreamIntake::tap`]).
    builder: Arc<Mutex<Option<TraceBuilder>>>,
    /// Whether the steps are kept as a trace (else only counted: `listen --out` writes them
    /// to its file and holds only the current set).
    keep_steps: bool,
    /// Whether the engine's parts are checked (else only the steps carrying them are
    /// counted: `convert` needs no check).
    check_engine: bool,
    /// Whether readers would open what is taken, when asked ([`StreamIntake::checking_files`]).
    open_check: Option<OpenCheck>,
    /// Steps taken.
    steps: u64,
    info: StreamInfo,
    /// The trace's name.
    name: String,
}

/// What [`StreamIntake::apply`] made of one frame.
#[derive(Clone, Debug, PartialEq)]
pub enum Intake {
    /// The handshake: the engine's name, dimensions and time step.
    Hello,
    /// The static boxes.
    Statics(usize),
    /// A step was appended: its index in the trace, the engine's step number, the boxes it
    /// holds, and the engine steps dropped just before it.
    Step {
        /// Its index in the trace (0, 1, 2, ...).
        index: u64,
        /// The engine's number for it.
        engine_step: u64,
        /// Boxes present (static ones not counted).
        boxes: usize,
        /// Boxes that appeared, moved and disappeared in it.
        changes: (usize, usize, usize),
        /// The gap before it, when the engine dropped steps.
        gap: Option<Gap>,
    },
    /// The engine said goodbye (clean end).
    Bye,
    /// A frame of a later version this build skips.
    Skipped,
}

impl StreamIntake {
    /// An intake whose trace is named `name`; `source_name` names the file or connection in
    /// messages.
    #[must_use]
    pub fn new(name: &str, source_name: &str, limits: TraceLimits) -> Self {
        StreamIntake {
            source_name: source_name.to_owned(),
            limits,
            state: StreamState::new(wire_limits(&limits)),
            builder: Arc::default(),
            keep_steps: true,
            check_engine: true,
            open_check: None,
            steps: 0,
            info: StreamInfo {
                engine_parts: engine::EngineRecord::with_pair_work(
                    limits.max_total_boxes,
                    engine::PairWork::for_limits(&limits),
                ),
                ..StreamInfo::default()
            },
            name: name.to_owned(),
        }
    }

    /// An intake that checks and counts the steps but keeps none of them (memory: the
    /// current set of boxes only, whatever the stream sends: no step numbers or gaps are
    /// listed, only counted; of the engine's parts, only the run's summary).
    #[must_use]
    pub fn counting_only(source_name: &str) -> Self {
        let mut intake = StreamIntake {
            keep_steps: false,
            ..Self::new("", source_name, TraceLimits::default())
        };
        intake.info.engine_parts = engine::EngineRecord::new(0);
        intake
    }

    /// Checks, frame by frame, that readers will open a stream file of what is taken (the
    /// reading rules of [`OpenCheck`]); where and why they would stop is said once in
    /// [`StreamInfo::readers_stop`]. For a writer of stream files (`listen --out`).
    #[must_use]
    pub fn checking_files(mut self) -> Self {
        self.open_check = Some(OpenCheck::new(self.limits));
        self
    }

    /// Leaves the engine's parts unchecked (only the steps that carry some are counted, in
    /// [`engine::EngineSummary::steps_with_parts`]): for a reader that keeps the boxes only.
    #[must_use]
    pub fn without_engine_check(mut self) -> Self {
        self.check_engine = false;
        self
    }

    /// Applies one decoded frame. On an error nothing of that frame was taken.
    pub fn apply(&mut self, frame: Frame, offset: u64) -> Result<Intake, StreamError> {
        let source_name = self.source_name.clone();
        let wire_error = |error: WireError| StreamError::Wire {
            source_name: source_name.clone(),
            error,
        };
        let trace_error = |error: TraceError| StreamError::Trace {
            source_name: source_name.clone(),
            error,
        };
        let kind_of = match &frame {
            Frame::Hello(_) => 0,
            Frame::Static(_) => 1,
            Frame::Step(_) => 2,
            Frame::Bye(_) => 3,
            Frame::Skipped { .. } => 4,
        };
        // The static boxes go to the builder when the first step arrives (or at STATIC).
        let update = self.state.apply(frame, offset).map_err(wire_error)?;
        match kind_of {
            0 => {
                if let Some(hello) = self.state.hello() {
                    self.info.engine = hello.engine.clone();
                    self.info.units = hello.units.clone();
                    if let Some(check) = self.open_check.as_mut()
                        && let Err(why) = check.hello(hello)
                    {
                        self.info.readers_stop.get_or_insert(why);
                    }
                }
                Ok(Intake::Hello)
            }
            1 => {
                if let Some(check) = self.open_check.as_mut()
                    && self.info.readers_stop.is_none()
                    && let Err(why) = check.statics(self.state.statics())
                {
                    self.info.readers_stop = Some(why);
                }
                if self.keep_steps {
                    self.ensure_builder().map_err(trace_error)?;
                }
                Ok(Intake::Statics(self.state.statics().len()))
            }
            2 => {
                let Some(mut update) = update else {
                    return Ok(Intake::Skipped);
                };
                let dims = self.state.hello().map_or(2, |h| h.dimensions);
                let count = update.boxes.len();
                let changes = (
                    update.appeared as usize,
                    update.moved as usize,
                    update.gone as usize,
                );
                let index = self.steps;
                if let Some(check) = self.open_check.as_mut()
                    && self.info.readers_stop.is_none()
                    && let Err(why) = check.step(update.step, &update.boxes)
                {
                    self.info.readers_stop = Some(why);
                }
                if self.keep_steps {
                    self.ensure_builder().map_err(trace_error)?;
                    if let Some(builder) = lock_builder(&self.builder).as_mut() {
                        let boxes = update.boxes.iter().map(|b| trace_box(b, dims)).collect();
                        builder.push_step(boxes).map_err(|error| {
                            let message = match error {
                                TraceError::Invalid { message, .. } => message,
                                other => other.to_string(),
                            };
                            StreamError::Step {
                                source_name: source_name.clone(),
                                offset,
                                engine_step: update.step,
                                index,
                                dropped_before: update.dropped_before,
                                message,
                            }
                        })?;
                    }
                }
                self.steps += 1;
                let gap = (update.dropped_before > 0 && index > 0).then(|| Gap {
                    after: index - 1,
                    first: update.step - update.dropped_before,
                    last: update.step - 1,
                });
                if let Some(gap) = gap {
                    self.info.gap_count += 1;
                    self.info.dropped = self.info.dropped.saturating_add(gap.last - gap.first + 1);
                    // Counting only: memory stays the current step's, whatever the peer sends.
                    if self.keep_steps {
                        self.info.gaps.push(gap);
                    }
                }
                if self.keep_steps {
                    self.info.engine_steps.push(update.step);
                }
                if self.check_engine {
                    self.info.engine_parts.take(
                        index,
                        update.step,
                        std::mem::take(&mut update.engine),
                        &update.boxes,
                        self.state.statics(),
                        dims,
                    );
                } else if !update.engine.is_empty() {
                    self.info.engine_parts.summary.steps_with_parts += 1;
                }
                Ok(Intake::Step {
                    index,
                    engine_step: update.step,
                    boxes: count,
                    changes,
                    gap,
                })
            }
            3 => {
                if let Some(bye) = self.state.bye() {
                    self.info.bye = Some((bye.steps_sent, bye.steps_dropped));
                }
                Ok(Intake::Bye)
            }
            _ => Ok(Intake::Skipped),
        }
    }

    fn ensure_builder(&mut self) -> Result<(), TraceError> {
        if lock_builder(&self.builder).is_some() {
            return Ok(());
        }
        let Some(hello) = self.state.hello() else {
            return Ok(());
        };
        let dims = hello.dimensions;
        let header = TraceHeader {
            dimensions: dims,
            dt: hello.dt_secs,
        };
        let statics = self
            .state
            .statics()
            .iter()
            .map(|b| trace_box(b, dims))
            .collect();
        *lock_builder(&self.builder) =
            Some(TraceBuilder::new(&self.name, header, statics, self.limits)?);
        Ok(())
    }

    /// A tap on the trace as it is built: another thread takes the trace so far through it
    /// whenever it likes ([`TraceTap::snapshot`]), each copy sharing the boxes.
    #[must_use]
    pub fn tap(&self) -> TraceTap {
        TraceTap(Arc::clone(&self.builder))
    }

    /// Steps taken so far.
    #[must_use]
    pub fn step_count(&self) -> u64 {
        self.steps
    }

    /// What the stream said of itself so far.
    #[must_use]
    pub fn info(&self) -> &StreamInfo {
        &self.info
    }

    /// Records why the stream stopped early (the steps before are kept).
    pub fn stopped(&mut self, why: String) {
        self.info.stopped = Some(why);
    }

    /// The trace so far (an error when no step arrived).
    pub fn snapshot(&self) -> Result<Trace, StreamError> {
        match lock_builder(&self.builder).as_ref() {
            Some(b) if b.step_count() > 0 => b.snapshot().map_err(|error| StreamError::Trace {
                source_name: self.source_name.clone(),
                error,
            }),
            _ => Err(self.no_step()),
        }
    }

    /// The finished trace and what the stream said (an error when no step arrived).
    pub fn finish(self) -> Result<(Trace, StreamInfo), StreamError> {
        let no_step = self.no_step();
        let builder = lock_builder(&self.builder).take();
        match builder {
            Some(b) if b.step_count() > 0 => {
                let source_name = self.source_name;
                let trace = b
                    .finish()
                    .map_err(|error| StreamError::Trace { source_name, error })?;
                Ok((trace, self.info))
            }
            _ => Err(no_step),
        }
    }

    fn no_step(&self) -> StreamError {
        StreamError::NoStep {
            source_name: self.source_name.clone(),
            why: self
                .info
                .stopped
                .as_ref()
                .map_or_else(String::new, |w| format!(": {w}")),
        }
    }
}

/// Whether a stream being written will open under the reading rules ([`read_stream`],
/// [`TraceBuilder`]), told frame by frame: a writer of a stream file (`listen --out`) calls
/// [`OpenCheck::hello`], [`OpenCheck::statics`] and [`OpenCheck::step`] for each frame it
/// writes, and the first error says which step readers will stop at (they keep the steps
/// before it with a warning) and why. It holds one step's boxes.
#[derive(Clone, Debug)]
pub struct OpenCheck {
    limits: TraceLimits,
    dims: u8,
    dt: f32,
    static_ids: Vec<u32>,
    previous: Vec<TraceBox>,
    steps: u64,
    boxes: u64,
    /// Why readers stop, once they do.
    stop: Option<String>,
}

impl OpenCheck {
    /// A check under the readers' `limits` (the default ones: [`TraceLimits::default`]).
    #[must_use]
    pub fn new(limits: TraceLimits) -> Self {
        OpenCheck {
            limits,
            dims: 2,
            dt: 1.0,
            static_ids: Vec::new(),
            previous: Vec::new(),
            steps: 0,
            boxes: 0,
            stop: None,
        }
    }

    /// The handshake: its dimensions and dt must be a trace's (2 or 3; > 0 and <= 1). An
    /// error here means no step of the file will open.
    pub fn hello(&mut self, hello: &wire::Hello) -> Result<(), String> {
        self.dims = hello.dimensions;
        self.dt = hello.dt_secs;
        let header = TraceHeader {
            dimensions: hello.dimensions,
            dt: hello.dt_secs,
        };
        TraceBuilder::new("", header, Vec::new(), self.limits).map_err(|e| self.fail(e))?;
        Ok(())
    }

    /// The static boxes (any order).
    pub fn statics(&mut self, statics: &[WireBox]) -> Result<(), String> {
        let header = TraceHeader {
            dimensions: self.dims,
            dt: self.dt,
        };
        let boxes = statics.iter().map(|b| trace_box(b, self.dims)).collect();
        TraceBuilder::new("", header, boxes, self.limits).map_err(|e| self.fail(e))?;
        self.static_ids = statics.iter().map(|b| b.id).collect();
        self.static_ids.sort_unstable();
        Ok(())
    }

    /// The next step: `boxes`, the whole set of moving boxes after it (sorted by id, as
    /// [`aabb_recorder::StepUpdate::boxes`]), the engine's number for it. Ok while
    /// readers will keep this step; once an error was returned, every later step returns it
    /// too (readers stop there).
    pub fn step(&mut self, engine_step: u64, boxes: &[WireBox]) -> Result<(), String> {
        if let Some(stop) = &self.stop {
            return Err(stop.clone());
        }
        let step: Vec<TraceBox> = boxes.iter().map(|b| trace_box(b, self.dims)).collect();
        let previous = (self.steps > 0).then_some(self.previous.as_slice());
        if let Err(why) = check_step_rules(
            &self.limits,
            self.steps,
            self.boxes,
            &self.static_ids,
            previous,
            &step,
            self.dt,
        ) {
            let kept = match self.steps {
                0 => "readers open none of the file".to_owned(),
                n => format!(
                    "readers keep the {} before it",
                    crate::text::count(n, "step", "steps")
                ),
            };
            let stop = format!(
                "step {engine_step} (the trace's step {}) will not open: {why}; {kept}",
                self.steps
            );
            self.stop = Some(stop.clone());
            return Err(stop);
        }
        self.steps += 1;
        self.boxes += step.len() as u64;
        self.previous = step;
        Ok(())
    }

    /// The steps readers will keep so far.
    #[must_use]
    pub fn steps(&self) -> u64 {
        self.steps
    }

    fn fail(&mut self, error: TraceError) -> String {
        let why = match error {
            TraceError::Invalid { message, .. } => message,
            other => other.to_string(),
        };
        let stop = format!("no step will open: {why}");
        self.stop = Some(stop.clone());
        stop
    }
}

/// A stream box as a trace box (z = 0..0 in 2D).
fn trace_box(b: &WireBox, dims: u8) -> TraceBox {
    let mut min = Vec3::from_array(b.min);
    let mut max = Vec3::from_array(b.max);
    if dims == 2 {
        min.z = 0.0;
        max.z = 0.0;
    }
    TraceBox {
        id: b.id,
        aabb: Aabb::new(min, max),
    }
}

/// A trace box as a stream box.
#[must_use]
pub fn wire_box(b: &TraceBox) -> WireBox {
    WireBox {
        id: b.id,
        min: b.aabb.min.to_array(),
        max: b.aabb.max.to_array(),
    }
}

/// Reads a whole stream into a trace, checking the engine's parts it carries. A stream cut
/// inside a frame (an engine killed mid-write), or whose step passes a limit (see
/// [`StreamError::keeps_steps_before`]), keeps the steps before and says why in
/// [`StreamInfo::stopped`]; any other broken frame is an error naming its byte offset and
/// step.
pub fn read_stream(
    input: impl Read,
    name: &str,
    source_name: &str,
    limits: TraceLimits,
) -> Result<(Trace, StreamInfo), StreamError> {
    read_stream_with(input, StreamIntake::new(name, source_name, limits), &limits)
}

/// [`read_stream`] into `intake` (made for the same `limits`).
fn read_stream_with(
    input: impl Read,
    mut intake: StreamIntake,
    limits: &TraceLimits,
) -> Result<(Trace, StreamInfo), StreamError> {
    let mut decoder = Decoder::new(input, wire_limits(limits));
    loop {
        let error = match decoder.next_frame() {
            Ok(Some(frame)) => match intake.apply(frame, decoder.frame_offset()) {
                Ok(_) => continue,
                Err(error) => error,
            },
            Ok(None) => break,
            Err(error) => StreamError::Wire {
                source_name: intake.source_name.clone(),
                error,
            },
        };
        if error.keeps_steps_before() && intake.step_count() > 0 {
            intake.stopped(error.without_source());
            break;
        }
        return Err(error);
    }
    intake.finish()
}

/// The decoder's limits for a trace's.
#[must_use]
pub fn wire_limits(limits: &TraceLimits) -> wire::Limits {
    let boxes = u32::try_from(limits.max_boxes_per_step).unwrap_or(u32::MAX);
    wire::Limits {
        max_step_boxes: boxes,
        max_static_boxes: boxes,
        ..wire::Limits::default()
    }
}

/// Reads a stream file into a trace named after the file's stem, checking the engine's parts
/// it carries.
pub fn load(path: &Path, limits: TraceLimits) -> Result<(Trace, StreamInfo), StreamError> {
    load_with(path, limits, true)
}

/// Reads a stream file's boxes into a trace, leaving the engine's parts unchecked (only the
/// steps that carry some are counted): what `convert` needs.
pub fn load_boxes(path: &Path, limits: TraceLimits) -> Result<(Trace, StreamInfo), StreamError> {
    load_with(path, limits, false)
}

fn load_with(
    path: &Path,
    limits: TraceLimits,
    check_engine: bool,
) -> Result<(Trace, StreamInfo), StreamError> {
    let file = crate::fileio::open_regular(path, limits.max_bytes)?;
    let name = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let mut intake = StreamIntake::new(&name, &path.display().to_string(), limits);
    if !check_engine {
        intake = intake.without_engine_check();
    }
    read_stream_with(
        std::io::BufReader::with_capacity(1 << 16, file),
        intake,
        &limits,
    )
}

/// Opens a trace of either form: a stream file (told by its magic bytes) or a text trace.
/// A stream's own account (engine, dropped steps, an early stop) comes with it.
pub fn open_trace(path: &Path) -> Result<(Trace, Option<StreamInfo>), StreamError> {
    if is_stream_file(path) {
        let (trace, info) = load(path, TraceLimits::default())?;
        Ok((trace, Some(info)))
    } else {
        Ok((Trace::load(path)?, None))
    }
}

/// True when the file at `path` begins with the stream's magic bytes (a regular file only;
/// a FIFO is never opened to find out): [`crate::fileio::kind_of_path`] tells it.
#[must_use]
pub fn is_stream_file(path: &Path) -> bool {
    crate::fileio::kind_of_path(path) == Some(crate::fileio::FileKind::Stream)
}

/// Writes a trace as a stream (what `convert` does from text to binary): HELLO, STATIC, then
/// one STEP a trace step, a keyframe for step 0 and the changes after.
pub fn write_trace(
    trace: &Trace,
    engine: &str,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let dims = trace.dimensions();
    let invalid =
        |e: wire::EncodeError| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string());
    let mut bytes = Vec::new();
    wire::encode_magic(&mut bytes);
    wire::encode_hello(&mut bytes, &wire::Hello::new(engine, dims, trace.dt())).map_err(invalid)?;
    if !trace.statics().is_empty() {
        let statics: Vec<WireBox> = trace.statics().iter().map(wire_box).collect();
        wire::encode_static(&mut bytes, dims, &statics).map_err(invalid)?;
    }
    out.write_all(&bytes)?;
    let mut previous: Vec<WireBox> = Vec::new();
    for k in 0..trace.step_count() {
        let boxes: Vec<WireBox> = trace.step(k).iter().map(wire_box).collect();
        let frame = if k == 0 {
            wire::StepFrame {
                step: 0,
                keyframe: true,
                appeared: boxes.clone(),
                moved: Vec::new(),
                gone: Vec::new(),
                sections: Vec::new(),
            }
        } else {
            delta(k as u64, &previous, &boxes)
        };
        bytes.clear();
        wire::encode_step(&mut bytes, dims, &frame).map_err(invalid)?;
        out.write_all(&bytes)?;
        previous = boxes;
    }
    bytes.clear();
    let steps = trace.step_count() as u64;
    wire::encode_bye(
        &mut bytes,
        &wire::Bye {
            steps_sent: steps,
            steps_dropped: 0,
        },
    );
    out.write_all(&bytes)?;
    out.flush()
}

/// The STEP that takes the set `before` to `after` (both sorted by id): what appeared, moved
/// (its bits changed) and went; no sections.
#[must_use]
pub fn delta(step: u64, before: &[WireBox], after: &[WireBox]) -> wire::StepFrame {
    let mut frame = wire::StepFrame {
        step,
        keyframe: false,
        appeared: Vec::new(),
        moved: Vec::new(),
        gone: Vec::new(),
        sections: Vec::new(),
    };
    let (mut i, mut j) = (0, 0);
    while i < before.len() || j < after.len() {
        match (before.get(i), after.get(j)) {
            (Some(b), Some(a)) if b.id == a.id => {
                if !b.same_bits(a) {
                    frame.moved.push(*a);
                }
                i += 1;
                j += 1;
            }
            (Some(b), Some(a)) if b.id < a.id => {
                frame.gone.push(b.id);
                i += 1;
            }
            (Some(b), None) => {
                frame.gone.push(b.id);
                i += 1;
            }
            (_, Some(a)) => {
                frame.appeared.push(*a);
                j += 1;
            }
            (None, None) => break,
        }
    }
    frame
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bx(id: u32, x: f32) -> WireBox {
        WireBox {
            id,
            min: [x, 0.0, 0.0],
            max: [x + 1.0, 1.0, 0.0],
        }
    }

    /// A handshake no trace takes, a static id reused by a step, and a step past the limit
    /// of boxes in one step: each is what readers refuse, said once and then every time.
    #[test]
    fn open_check_says_what_readers_refuse() {
        let limits = TraceLimits {
            max_boxes_per_step: 2,
            ..TraceLimits::default()
        };
        let mut check = OpenCheck::new(limits);
        assert_eq!(
            check.hello(&wire::Hello::new("e", 4, 0.5)),
            Err("no step will open: dims must be 2 or 3, got 4".to_owned())
        );
        let mut check = OpenCheck::new(limits);
        assert_eq!(
            check.hello(&wire::Hello::new("e", 2, 0.0)),
            Err("no step will open: dt must be > 0 and <= 1, got 0e0".to_owned())
        );
        let mut check = OpenCheck::new(limits);
        check
            .hello(&wire::Hello::new("e", 2, 0.5))
            .expect("a trace's");
        check.statics(&[bx(9, 5.0)]).expect("one static box");
        check.step(3, &[bx(1, 0.0), bx(2, 1.0)]).expect("opens");
        let refused = "step 4 (the trace's step 1) will not open: id 9 is a static box's; \
                       readers keep the 1 step before it";
        assert_eq!(check.step(4, &[bx(9, 0.0)]), Err(refused.to_owned()));
        assert_eq!(check.step(5, &[bx(1, 0.0)]), Err(refused.to_owned()));
        assert_eq!(check.steps(), 1);
        let mut check = OpenCheck::new(limits);
        check
            .hello(&wire::Hello::new("e", 2, 0.5))
            .expect("a trace's");
        assert_eq!(
            check.step(0, &[bx(1, 0.0), bx(2, 1.0), bx(3, 2.0)]),
            Err(
                "step 0 (the trace's step 0) will not open: 3 boxes in one step, more than \
                 the 2 a step may hold; readers open none of the file"
                    .to_owned()
            )
        );
    }
}
