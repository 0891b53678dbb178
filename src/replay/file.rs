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

use super::{History, RecordedEdit, StepRecord};
use crate::broadphase::BroadphaseKind;
use crate::fileio::{self, WriteOptions};
use crate::scene::{Scene, SceneError};
use crate::tree::StructureHasher;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The first eight bytes of every recording file.
pub const MAGIC: [u8; 8] = *b"AABBREC\n";
/// The format version this build reads and writes.
pub const RECORDING_FORMAT_VERSION: u32 = 1;
/// The largest recording file read: 512 MiB (a scene of up to 256 MiB and about 4 million
/// steps).
pub const MAX_RECORDING_BYTES: u64 = 512 * 1024 * 1024;
/// Bytes of one step record in a file.
pub const STEP_BYTES: usize = 60;

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

/// The bytes of a recording file holding `history`.
pub fn to_bytes(history: &History) -> Result<Vec<u8>, SceneError> {
    let fail = |message: String| SceneError::Invalid {
        file: "<recording>".to_owned(),
        message,
    };
    let header = Header {
        scene_file: history.scene_file.clone(),
        broadphase: history.broadphase,
        pair_limit: history.pair_limit,
        steps: history.steps.len() as u64,
        edits: history.edits.clone(),
        scene: history.scene.to_text(true)?,
    };
    let json = serde_json::to_vec(&header).map_err(|e| fail(e.to_string()))?;
    let header_len = u32::try_from(json.len())
        .map_err(|_| fail(format!("the header is too long ({} bytes)", json.len())))?;
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

/// Writes `history` to `path` atomically ([`fileio::write_atomic`]).
pub fn save(history: &History, path: &Path) -> Result<(), SceneError> {
    let bytes = to_bytes(history)?;
    Ok(fileio::write_atomic(path, &bytes, WriteOptions::default())?)
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
        steps.push(read_step(chunk).ok_or_else(|| {
            bad(format!(
                "step {s}: its flags or padding are not those of format version \
                 {RECORDING_FORMAT_VERSION}"
            ))
        })?);
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
    let scene = Scene::parse(&header.scene, &format!("{file} (its scene)"), true)?;
    Ok(History {
        scene,
        scene_file: header.scene_file,
        broadphase: header.broadphase,
        pair_limit: header.pair_limit,
        steps,
        edits: header.edits,
    })
}
