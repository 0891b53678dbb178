//! Recording files: a [`History`] on disk, read with bounds and checks and refused with
//! `FILE: what is wrong` messages as scenes are ([`SceneError`]), written atomically.
//!
//! # Format (version 1)
//!
//! All numbers little-endian.
//!
//! | bytes | what |
//! |---|---|
//! | 8 | the magic `AABBREC\n` |
//! | 4 | the format version, `u32` ([`RECORDING_FORMAT_VERSION`]) |
//! | 8 | a checksum of every byte after this field ([`checksum`]) |
//! | 4 | the header's length `H`, `u32` |
//! | `H` | the header: one JSON object (below) |
//! | `60 × steps` | one [`StepRecord`] per step from step 0, 60 bytes each (below) |
//!
//! The header: `{"scene_file": "...", "broadphase": "Tree", "pair_limit": 5000000,
//! "steps": N, "edits": [{"step": 3, "edit": {"move_sphere": {"id": 7, "center": [1, 2,
//! 0]}}, "hash": 123, "stopped": false}, ...], "scene": "<the scene file's JSON text>"}`. The
//! scene is the scene format's own JSON text, read back with [`Scene::parse`], so it is
//! checked by every rule a scene file is.
//!
//! A step record: the structural hash (`u64`); reinserted, appeared, disappeared, candidate
//! pairs, contacts, height, least height, leaves and nodes (`u32` each); area ratio, update
//! seconds and pair seconds (`f32` each); one byte of flags (bit 0 pairs recomputed, 1
//! stopped, 2 the broad phase is the tree, 3 the tree was rebuilt; the others 0); three zero
//! bytes. 60 bytes a step, fixed, so that the step count is checked against the file's
//! length before anything is allocated, and a step is found without parsing the ones before
//! it. (JSON would take about 250 bytes a step; the edits, few and varied, are JSON.)
//! Keyframes are not stored: they are rebuilt by re-simulating from the scene, which checks
//! every step's hash on the way. At 10,000 steps a file is about 600 KB plus the scene.
//!
//! # Reading
//!
//! At most [`MAX_RECORDING_BYTES`] are read ([`crate::fileio::read_bounded`]); the header's
//! length and the step count are checked against the bytes there are before any allocation;
//! the checksum, the flags, the order and steps of the edits and the scene are checked; a
//! newer format version gets its own message. Nothing a file holds can make reading panic.
//!
//! # Opening off the UI thread
//!
//! [`LoadJob::start`] reads, checks and rebuilds a recording (every step re-simulated and
//! checked, as [`Recording::from_history_with`]) on a worker thread, reporting progress
//! ([`LoadProgress`]: bytes read of the file's size, then steps rebuilt of the recording's)
//! and checking a cancel flag ([`LoadControl::cancel`]) between chunks of 1 MiB read and
//! before every step rebuilt, so a cancel ends it within one chunk or one step (a step of
//! 10,000 spheres takes about 2 ms). Parsing the header (and its scene) is not interrupted.

use super::{History, KeyframePolicy, RecordedEdit, Recording, ReplayError, StepRecord};
use crate::broadphase::BroadphaseKind;
use crate::fileio::{self, ReadError, WriteOptions};
use crate::scene::{Scene, SceneError, Simulation};
use crate::tree::StructureHasher;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The first eight bytes of every recording file.
pub const MAGIC: [u8; 8] = *b"AABBREC\n";
/// The format version this build reads and writes.
pub const RECORDING_FORMAT_VERSION: u32 = 1;
/// The largest recording file read: 512 MiB (a scene of up to 256 MiB and about 4 million
/// steps).
pub const MAX_RECORDING_BYTES: u64 = 512 * 1024 * 1024;
/// Bytes of one step record in a file.
pub const STEP_BYTES: usize = 60;
/// The most steps a recording file holds (its header aside): [`MAX_RECORDING_BYTES`] over
/// [`STEP_BYTES`], 8,947,848.
pub const MAX_RECORDED_STEPS: u64 = MAX_RECORDING_BYTES / STEP_BYTES as u64;

/// Bytes before the header: magic, version, checksum, header length.
const PREFIX_BYTES: usize = 24;
/// Where the checksummed bytes start (after the checksum field).
const CHECKED_FROM: usize = 20;

const PAIRS_RECOMPUTED: u8 = 1;
const STOPPED: u8 = 2;
const HAS_TREE: u8 = 4;
const REBUILT: u8 = 8;

/// The header's JSON form.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    scene_file: String,
    broadphase: BroadphaseKind,
    pair_limit: u64,
    steps: u64,
    edits: Vec<RecordedEdit>,
    scene: String,
}

/// The checksum of a file's bytes after the checksum field: [`StructureHasher`] over the
/// bytes as little-endian words (the last one padded with zeros) and their count.
#[must_use]
pub fn checksum(bytes: &[u8]) -> u64 {
    let mut h = StructureHasher::new();
    h.word(bytes.len() as u64);
    for (k, chunk) in bytes.chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h.word_in(k, u64::from_le_bytes(word));
    }
    h.finish()
}

/// The header of `history`'s file, as JSON.
fn header_json(history: &History) -> Result<Vec<u8>, SceneError> {
    let header = Header {
        scene_file: history.scene_file.clone(),
        broadphase: history.broadphase,
        pair_limit: history.pair_limit,
        steps: history.steps.len() as u64,
        edits: history.edits.clone(),
        scene: history.scene.to_text(true)?,
    };
    serde_json::to_vec(&header).map_err(|e| SceneError::Invalid {
        file: "<recording>".to_owned(),
        message: e.to_string(),
    })
}

/// The most steps after step 0 a recording file of `history`'s scene, broad phase and
/// edits may hold (its header takes the rest of [`MAX_RECORDING_BYTES`]).
pub fn max_steps_after_zero(history: &History) -> Result<u64, SceneError> {
    let json = header_json(history)?;
    let room = MAX_RECORDING_BYTES.saturating_sub((PREFIX_BYTES + json.len()) as u64);
    // Step 0's record is one of them.
    Ok((room / STEP_BYTES as u64).saturating_sub(1))
}

/// The bytes of a recording file holding `history`.
pub fn to_bytes(history: &History) -> Result<Vec<u8>, SceneError> {
    let fail = |message: String| SceneError::Invalid {
        file: "<recording>".to_owned(),
        message,
    };
    let json = header_json(history)?;
    let steps = history.steps.len() as u64;
    let header_len = u32::try_from(json.len())
        .map_err(|_| fail(format!("the header is too long ({} bytes)", json.len())))?;
    // A file `load` would refuse is not written: the same limit on both sides.
    let total = (PREFIX_BYTES + json.len()) as u64 + (STEP_BYTES as u64) * steps;
    if total > MAX_RECORDING_BYTES {
        return Err(fail(format!(
            "the recording of {} steps would take {total} bytes ({:.1} MiB), more than the \
             {MAX_RECORDING_BYTES} bytes ({:.1} MiB) a recording may hold, so it could not be \
             read back; record fewer steps (at most {MAX_RECORDED_STEPS} of {STEP_BYTES} bytes \
             each, fewer with a large scene)",
            steps,
            total as f64 / 1_048_576.0,
            MAX_RECORDING_BYTES as f64 / 1_048_576.0
        )));
    }
    let mut out = Vec::with_capacity(PREFIX_BYTES + json.len() + STEP_BYTES * history.steps.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&RECORDING_FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&header_len.to_le_bytes());
    out.extend_from_slice(&json);
    for r in &history.steps {
        write_step(&mut out, r);
    }
    let sum = checksum(&out[CHECKED_FROM..]);
    out[12..20].copy_from_slice(&sum.to_le_bytes());
    Ok(out)
}

fn write_step(out: &mut Vec<u8>, r: &StepRecord) {
    out.extend_from_slice(&r.hash.to_le_bytes());
    for n in [
        r.reinserted,
        r.appeared,
        r.disappeared,
        r.candidate_pairs,
        r.contacts,
        r.height,
        r.min_height,
        r.leaves,
        r.nodes,
    ] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    for x in [r.area_ratio, r.update_secs, r.pairs_secs] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    let flag = |on: bool, bit: u8| if on { bit } else { 0 };
    let flags = flag(r.pairs_recomputed, PAIRS_RECOMPUTED)
        | flag(r.stopped, STOPPED)
        | flag(r.has_tree, HAS_TREE)
        | flag(r.rebuilt, REBUILT);
    out.extend_from_slice(&[flags, 0, 0, 0]);
}

/// Reads one step record (`bytes` is exactly [`STEP_BYTES`] long); `None` when its flags or
/// padding are not what this version writes.
fn read_step(bytes: &[u8]) -> Option<StepRecord> {
    let word = |at: usize| -> Option<[u8; 4]> { bytes.get(at..at + 4)?.try_into().ok() };
    let u = |k: usize| word(8 + 4 * k).map(u32::from_le_bytes);
    let f = |k: usize| word(44 + 4 * k).map(f32::from_le_bytes);
    let hash = u64::from_le_bytes(bytes.get(0..8)?.try_into().ok()?);
    let tail = bytes.get(56..60)?;
    let flags = tail[0];
    if flags & !(PAIRS_RECOMPUTED | STOPPED | HAS_TREE | REBUILT) != 0 || tail[1..] != [0, 0, 0] {
        return None;
    }
    Some(StepRecord {
        hash,
        reinserted: u(0)?,
        appeared: u(1)?,
        disappeared: u(2)?,
        candidate_pairs: u(3)?,
        contacts: u(4)?,
        height: u(5)?,
        min_height: u(6)?,
        leaves: u(7)?,
        nodes: u(8)?,
        area_ratio: f(0)?,
        update_secs: f(1)?,
        pairs_secs: f(2)?,
        pairs_recomputed: flags & PAIRS_RECOMPUTED != 0,
        stopped: flags & STOPPED != 0,
        has_tree: flags & HAS_TREE != 0,
        rebuilt: flags & REBUILT != 0,
    })
}

/// Writes `history` to `path` atomically ([`fileio::write_atomic`]); an existing file that is
/// not a recording (a scene, source code) is refused and left unchanged.
pub fn save(history: &History, path: &Path) -> Result<(), SceneError> {
    save_with(history, path, false)
}

/// [`save`], replacing a file of another kind too when `force` (`run --record --force`).
pub fn save_with(history: &History, path: &Path, force: bool) -> Result<(), SceneError> {
    let bytes = to_bytes(history).map_err(|e| match e {
        SceneError::Invalid { message, .. } => SceneError::Invalid {
            file: path.display().to_string(),
            message,
        },
        other => other,
    })?;
    Ok(fileio::write_atomic(
        path,
        &bytes,
        WriteOptions::of_kind(fileio::FileKind::Recording, force),
    )?)
}

/// Reads and checks a recording file (at most [`MAX_RECORDING_BYTES`]).
pub fn load(path: &Path) -> Result<History, SceneError> {
    let bytes = fileio::read_bounded(path, MAX_RECORDING_BYTES)?;
    from_bytes(&bytes, &path.display().to_string())
}

/// Reads and checks the bytes of a recording file; `file` names it in messages.
pub fn from_bytes(bytes: &[u8], file: &str) -> Result<History, SceneError> {
    let bad = |message: String| SceneError::Invalid {
        file: file.to_owned(),
        message,
    };
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(bad(
            "not a recording file (it does not start with the magic \"AABBREC\"; write one \
             with `aabb-debugger run SCENE --record FILE`)"
                .to_owned(),
        ));
    }
    if bytes.len() < PREFIX_BYTES {
        return Err(bad(format!(
            "the file is truncated: {} bytes, less than the {PREFIX_BYTES} bytes of a \
             recording's start",
            bytes.len()
        )));
    }
    let u32_at = |at: usize| -> u32 {
        let mut w = [0u8; 4];
        w.copy_from_slice(&bytes[at..at + 4]);
        u32::from_le_bytes(w)
    };
    let version = u32_at(8);
    if version > RECORDING_FORMAT_VERSION {
        return Err(bad(format!(
            "the recording is format version {version}; this build reads version \
             {RECORDING_FORMAT_VERSION} (a newer aabb-debugger wrote it)"
        )));
    }
    if version == 0 {
        return Err(bad("format version 0 is not a recording format".to_owned()));
    }
    let mut sum = [0u8; 8];
    sum.copy_from_slice(&bytes[12..20]);
    let sum = u64::from_le_bytes(sum);
    let header_len = u32_at(20) as usize;
    let rest = &bytes[PREFIX_BYTES..];
    let Some(json) = rest.get(..header_len) else {
        return Err(bad(format!(
            "the file is truncated: the header says it is {header_len} bytes, but only {} \
             bytes follow",
            rest.len()
        )));
    };
    let header: Header = serde_json::from_slice(json).map_err(|e| {
        bad(format!(
            "the header (bytes {PREFIX_BYTES} to {}) is not valid: {e}",
            PREFIX_BYTES + header_len
        ))
    })?;
    let records = &rest[header_len..];
    let expected = header.steps.checked_mul(STEP_BYTES as u64);
    if expected != Some(records.len() as u64) {
        let what = if expected.is_some_and(|n| n > records.len() as u64) || expected.is_none() {
            "the file is truncated"
        } else {
            "the file has bytes after its last step"
        };
        return Err(bad(format!(
            "{what}: the header says {} steps ({STEP_BYTES} bytes each), but {} bytes follow \
             the header",
            header.steps,
            records.len()
        )));
    }
    if checksum(&bytes[CHECKED_FROM..]) != sum {
        return Err(bad(
            "the file is damaged: its checksum does not match its content".to_owned(),
        ));
    }
    if header.steps == 0 {
        return Err(bad(
            "the recording holds no step (it must hold step 0 at least)".to_owned(),
        ));
    }
    let mut steps = Vec::with_capacity(records.len() / STEP_BYTES);
    for (s, chunk) in records.chunks_exact(STEP_BYTES).enumerate() {
        let record = read_step(chunk).ok_or_else(|| {
            bad(format!(
                "step {s}: its flags or padding are not those of format version \
                 {RECORDING_FORMAT_VERSION}"
            ))
        })?;
        // Times are shown and summed as they are: a negative or endless one is no time.
        for (name, secs) in [("update", record.update_secs), ("pairs", record.pairs_secs)] {
            if !(secs.is_finite() && secs >= 0.0) {
                return Err(bad(format!(
                    "step {s}: its {name} time must be a finite number of seconds >= 0, got \
                     {secs}"
                )));
            }
        }
        steps.push(record);
    }
    let last = header.steps - 1;
    let mut previous = 0;
    for (k, e) in header.edits.iter().enumerate() {
        if e.step < previous || e.step > last {
            return Err(bad(format!(
                "edits[{k}] is at step {}: edits must be in step order and within steps 0 to \
                 {last}",
                e.step
            )));
        }
        previous = e.step;
    }
    if let Err(why) = crate::broadphase::check_pair_limit(
        usize::try_from(header.pair_limit).unwrap_or(usize::MAX),
    ) {
        return Err(bad(format!("the header's pair_limit: {why}")));
    }
    let scene = Scene::parse(&header.scene, &format!("{file} (its scene)"), true)?;
    check_header_against_records(&scene, header.broadphase, &steps[0]).map_err(bad)?;
    check_pair_counts(header.pair_limit, &header.edits, &steps).map_err(bad)?;
    Ok(History {
        scene,
        scene_file: header.scene_file,
        broadphase: header.broadphase,
        pair_limit: header.pair_limit,
        steps,
        edits: header.edits,
    })
}

/// What the header orders, checked against what the records say before anything is built, so
/// that a header changed to order far more work than was recorded (a million generated
/// spheres over the records of thirty) is refused at once: the spheres at step 0 are step 0's
/// `appeared`, and (the tree) its leaves are those spheres and the static boxes, whether or
/// not step 0 stopped (a stopped step still made its bodies). The work a
/// step of the header's broad phase takes is bounded as for any scene
/// ([`crate::broadphase::check_work`]).
fn check_header_against_records(
    scene: &Scene,
    kind: BroadphaseKind,
    first: &StepRecord,
) -> Result<(), String> {
    // Counted without generating the spheres: the generated ones all start at step 0.
    let listed_alive = scene
        .spheres
        .iter()
        .filter(|s| s.appear_at == 0 && s.disappear_at.is_none_or(|gone| gone > 0))
        .count();
    let generated = scene.generate.map_or(0, |g| g.count as usize);
    let spheres = listed_alive + generated;
    if spheres as u64 != u64::from(first.appeared) {
        return Err(format!(
            "the header's scene has {spheres} spheres at step 0, but step 0's record says {} \
             appeared: the header does not belong to these records (nothing was rebuilt)",
            first.appeared
        ));
    }
    let bodies = spheres + scene.boxes.len();
    if first.has_tree && bodies as u64 != u64::from(first.leaves) {
        return Err(format!(
            "the header's scene has {bodies} bodies at step 0 (spheres and static boxes), but \
             step 0's record says the tree holds {} leaves: the header does not belong to \
             these records (nothing was rebuilt)",
            first.leaves
        ));
    }
    if first.has_tree != (kind == BroadphaseKind::Tree) {
        return Err(format!(
            "the header's broad phase is {kind}, but step 0's record says {}: the header does \
             not belong to these records (nothing was rebuilt)",
            if first.has_tree {
                "the tree"
            } else {
                "another broad phase"
            }
        ));
    }
    crate::broadphase::check_work(kind, bodies).map_err(|why| format!("the header's scene: {why}"))
}

/// The pair counts the records say against the pair limits the header and its edits set: a
/// step that did not stop found at most the greatest of them (the search stops past its
/// limit), so a record of more pairs does not belong to this header.
fn check_pair_counts(
    pair_limit: u64,
    edits: &[RecordedEdit],
    steps: &[StepRecord],
) -> Result<(), String> {
    let most = edits
        .iter()
        .filter_map(|e| match e.edit {
            super::Edit::SetPairLimit(limit) => Some(limit),
            _ => None,
        })
        .fold(pair_limit, u64::max);
    match steps
        .iter()
        .enumerate()
        .find(|(_, r)| !r.stopped && u64::from(r.candidate_pairs) > most)
    {
        Some((s, r)) => Err(format!(
            "step {s}'s record says {} candidate pairs, more than the header's pair_limit {}{}: \
             the header does not belong to these records (nothing was rebuilt)",
            r.candidate_pairs,
            pair_limit,
            if most > pair_limit {
                format!(" (and its edits' {most})")
            } else {
                String::new()
            }
        )),
        None => Ok(()),
    }
}

/// Bytes read between two looks at the cancel flag.
const READ_CHUNK: usize = 1024 * 1024;

/// A recording and what rebuilding it gives: moved from a worker thread to the window.
const fn assert_send<T: Send>() {}
const _: () = assert_send::<Recording>();
const _: () = assert_send::<Simulation>();

/// How far opening a recording has got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadProgress {
    /// Bytes of the file read.
    pub bytes_read: u64,
    /// The file's size, bytes (0 until it is opened).
    pub bytes_total: u64,
    /// Steps rebuilt and checked.
    pub steps_done: u64,
    /// Steps the recording holds (0 until its header is read).
    pub steps_total: u64,
}

impl LoadProgress {
    /// The share done, 0 to 1: reading counts for the first tenth, rebuilding for the rest.
    #[must_use]
    pub fn share(&self) -> f32 {
        let part = |done: u64, total: u64| {
            if total == 0 {
                0.0
            } else {
                (done as f64 / total as f64).clamp(0.0, 1.0)
            }
        };
        (0.1 * part(self.bytes_read, self.bytes_total)
            + 0.9 * part(self.steps_done, self.steps_total)) as f32
    }
}

/// The progress and the cancel flag of a recording being opened, shared between the worker
/// and the window.
#[derive(Debug, Default)]
pub struct LoadControl {
    /// Shared with the pair searches of the rebuild ([`crate::broadphase::with_cancel`]).
    cancel: Arc<AtomicBool>,
    bytes_read: AtomicU64,
    bytes_total: AtomicU64,
    steps_done: AtomicU64,
    steps_total: AtomicU64,
}

impl LoadControl {
    /// Asks the worker to stop: it ends with [`LoadOutcome::Cancelled`] within one chunk read
    /// or one step rebuilt.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// True once [`LoadControl::cancel`] was called.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// How far it has got.
    #[must_use]
    pub fn progress(&self) -> LoadProgress {
        LoadProgress {
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            bytes_total: self.bytes_total.load(Ordering::Relaxed),
            steps_done: self.steps_done.load(Ordering::Relaxed),
            steps_total: self.steps_total.load(Ordering::Relaxed),
        }
    }
}

/// A recording opened and rebuilt.
pub struct Loaded {
    /// The recording (keyframes rebuilt).
    pub recording: Recording,
    /// The simulation at its last step, after that step's edits.
    pub sim: Simulation,
}

/// How opening a recording ended, when it did not fail.
pub enum LoadOutcome {
    /// Read, checked and rebuilt.
    Loaded(Box<Loaded>),
    /// Cancelled ([`LoadControl::cancel`]); nothing was kept.
    Cancelled,
}

/// Why a recording could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read, or is not a valid recording (the message names it).
    #[error("{0}")]
    File(#[from] SceneError),
    /// A step rebuilt is not the recorded one.
    #[error("{file}: {error}")]
    Replay {
        /// The file, as given.
        file: String,
        /// What differs.
        error: ReplayError,
    },
    /// The worker thread could not be started, or ended without an answer.
    #[error("{0}")]
    Worker(String),
}

/// Reads the file at `path` (at most [`MAX_RECORDING_BYTES`], with [`fileio::open_regular`]'s
/// checks) a chunk at a time, counting bytes in `control`; `None` when cancelled.
fn read_cancellable(path: &Path, control: &LoadControl) -> Result<Option<Vec<u8>>, SceneError> {
    let file = fileio::open_regular(path, MAX_RECORDING_BYTES)?;
    let size = file.metadata().map_or(0, |m| m.len());
    control.bytes_total.store(size, Ordering::Relaxed);
    // The open file's size was checked against the limit, so this reserves at most that.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    let mut reader = file.take(MAX_RECORDING_BYTES.saturating_add(1));
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        if control.is_cancelled() {
            return Ok(None);
        }
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(ReadError::Io {
                    path: path.to_path_buf(),
                    action: "read the file",
                    source,
                }
                .into());
            }
        };
        bytes.extend_from_slice(&chunk[..n]);
        control
            .bytes_read
            .store(bytes.len() as u64, Ordering::Relaxed);
    }
    if bytes.len() as u64 > MAX_RECORDING_BYTES {
        return Err(ReadError::Grew {
            path: path.to_path_buf(),
            max: MAX_RECORDING_BYTES,
        }
        .into());
    }
    Ok(Some(bytes))
}

/// Reads, checks and rebuilds the recording at `path` (keyframes by `policy`), reporting to
/// and checking `control`: what [`LoadJob`] runs on its thread.
pub fn load_and_rebuild(
    path: &Path,
    policy: KeyframePolicy,
    control: &LoadControl,
) -> Result<LoadOutcome, LoadError> {
    let Some(bytes) = read_cancellable(path, control)? else {
        return Ok(LoadOutcome::Cancelled);
    };
    let file = path.display().to_string();
    let history = from_bytes(&bytes, &file)?;
    drop(bytes);
    control
        .steps_total
        .store(history.steps.len() as u64, Ordering::Relaxed);
    // The pair searches look at the cancel flag once a row, so a cancel stops even step 0 of
    // a huge brute-force scene within a row.
    let rebuilt = crate::broadphase::with_cancel(Arc::clone(&control.cancel), || {
        Recording::from_history_with(history, policy, |step| {
            control.steps_done.store(step, Ordering::Relaxed);
            !control.is_cancelled()
        })
    });
    if control.is_cancelled() {
        // A search stopped by the cancel makes the step differ from its record: that is the
        // cancel, not a damaged file.
        return Ok(LoadOutcome::Cancelled);
    }
    match rebuilt {
        Ok((recording, sim)) => {
            let total = control.steps_total.load(Ordering::Relaxed);
            control.steps_done.store(total, Ordering::Relaxed);
            Ok(LoadOutcome::Loaded(Box::new(Loaded { recording, sim })))
        }
        Err(ReplayError::Cancelled { .. }) => Ok(LoadOutcome::Cancelled),
        Err(error) => Err(LoadError::Replay { file, error }),
    }
}

/// A recording being opened on a worker thread ([`load_and_rebuild`]): poll
/// [`LoadJob::is_finished`], then [`LoadJob::wait`]; [`LoadJob::cancel`] stops it soon.
pub struct LoadJob {
    path: PathBuf,
    job: crate::job::Job<LoadControl, Result<LoadOutcome, LoadError>>,
}

impl LoadJob {
    /// Starts opening `path` on a new thread, under a new control.
    pub fn start(path: &Path, policy: KeyframePolicy) -> Result<LoadJob, LoadError> {
        Self::start_with(path, policy, Arc::new(LoadControl::default()))
    }

    /// Starts opening `path` on a new thread under `control` (already cancelled: it ends at
    /// once with [`LoadOutcome::Cancelled`]).
    pub fn start_with(
        path: &Path,
        policy: KeyframePolicy,
        control: Arc<LoadControl>,
    ) -> Result<LoadJob, LoadError> {
        let worker_path = path.to_path_buf();
        let job = crate::job::Job::spawn("open-recording", control, move |control| {
            load_and_rebuild(&worker_path, policy, control)
        })
        .map_err(LoadError::Worker)?;
        Ok(LoadJob {
            path: path.to_path_buf(),
            job,
        })
    }

    /// The file being opened.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How far it has got.
    #[must_use]
    pub fn progress(&self) -> LoadProgress {
        self.job.control().progress()
    }

    /// Asks it to stop (see [`LoadControl::cancel`]).
    pub fn cancel(&self) {
        self.job.control().cancel();
    }

    /// True once it has ended: [`LoadJob::wait`] then returns at once.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.job.is_finished()
    }

    /// Waits for the end and returns the outcome.
    pub fn wait(self) -> Result<LoadOutcome, LoadError> {
        self.job.join().unwrap_or_else(|message| {
            Err(LoadError::Worker(format!(
                "opening the recording failed: {message}"
            )))
        })
    }
}
