//! The engine's own broad phase in a STEP: the four reserved sections (fat boxes, candidate
//! pairs, tree nodes, timings and counts) as typed values, their encoder and their bounded
//! decoder (docs/formats.md, "The engine's broad phase").
//!
//! The decoder checks each section's syntax: lengths and counts against the section's bytes
//! and the [`Limits`] before anything is allocated, NaN and infinite numbers, min > max,
//! reserved bits, a pair of one id, a pair or a timing key twice. That every id is a box of
//! the step is [`crate::StreamState`]'s check; that a tree is a tree (links, boxes, heights)
//! is the debugger's, which refuses a broken tree without refusing its step.

use super::{
    AXES, Limits, SECTION_FAT_BOXES, SECTION_PAIRS, SECTION_TIMINGS, SECTION_TREE_NODES, Section,
    WireBox, WireErrorKind, box_bytes, put_box,
};

/// The id that stands for "none" in the tree section: a root's parent, a leaf's second
/// child, the root of an empty tree.
pub const NONE_ID: u32 = u32::MAX;

/// Tree section flag bit: the tree holds only some of the step's boxes (the others are in
/// no leaf, e.g. an engine that keeps its static bodies elsewhere).
pub const TREE_FLAG_PARTIAL: u8 = 0x01;
/// Tree node flag bit: the node's box was enlarged (it may be larger than its children's
/// union; the engine will refit or rebuild it).
pub const NODE_FLAG_ENLARGED: u8 = 0x01;
/// Tree node flag bit: the node is a leaf (its first link is a box id, its second
/// [`NONE_ID`]).
pub const NODE_FLAG_LEAF: u8 = 0x02;

/// The longest timing key, in bytes.
pub const MAX_TIMING_KEY_BYTES: usize = 32;
/// The most entries of one timings section.
pub const MAX_TIMINGS: usize = 64;

/// Timing key: nanoseconds the engine's broad phase took this step.
pub const TIMING_BROAD_PHASE_NS: &str = "broad_phase_ns";
/// Timing key: nanoseconds the engine's narrow phase took this step.
pub const TIMING_NARROW_PHASE_NS: &str = "narrow_phase_ns";
/// Timing key: box pairs the broad phase tested for overlap this step.
pub const TIMING_PAIRS_TESTED: &str = "pairs_tested";
/// Timing key: leaves the broad phase reinserted (or refitted) this step.
pub const TIMING_REINSERTS: &str = "reinserts";
/// Timing key: the engine's uniform fat-box margin, in the stream's units (a fat box is its
/// tight box grown by this much on every side, plus any velocity look-ahead).
pub const TIMING_MARGIN: &str = "margin";

/// The name of a reserved section, as messages say it.
pub fn section_name(tag: u8) -> &'static str {
    match tag {
        SECTION_FAT_BOXES => "fat boxes",
        SECTION_PAIRS => "candidate pairs",
        SECTION_TREE_NODES => "tree",
        SECTION_TIMINGS => "timings",
        _ => "unknown",
    }
}

/// One node of the engine's tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeNode {
    /// The engine's id of the node (any u32 but [`NONE_ID`]).
    pub id: u32,
    /// The parent's node id; `None` for the root.
    pub parent: Option<u32>,
    /// What is below it.
    pub kind: NodeKind,
    /// The node's box (z = 0 in 2D).
    pub min: [f32; 3],
    /// The node's box's upper corner.
    pub max: [f32; 3],
    /// Its height: 0 for a leaf, 1 + the higher child's for a branch.
    pub height: u32,
    /// Whether the engine marked its box enlarged ([`NODE_FLAG_ENLARGED`]).
    pub enlarged: bool,
}

/// A tree node's children.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A branch: its two children's node ids.
    Branch([u32; 2]),
    /// A leaf: the id of the box (proxy) it holds.
    Leaf(u32),
}

/// The engine's tree at one step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineTree {
    /// The root's node id; `None` for an empty tree.
    pub root: Option<u32>,
    /// Whether the tree holds only some of the step's boxes ([`TREE_FLAG_PARTIAL`]).
    pub partial: bool,
    /// The nodes, in the order sent.
    pub nodes: Vec<TreeNode>,
}

/// One timing or count: a key and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    /// The key: 1 to 32 bytes of `a-z`, `0-9` and `_` ([`TIMING_BROAD_PHASE_NS`] ...).
    pub key: String,
    /// The value, finite.
    pub value: f64,
}

/// The engine's broad phase at one step: each part present when the step carried it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineParts {
    /// The fat box of each box (proxy) the engine sent, by the box's id, in the order sent.
    pub fat_boxes: Option<Vec<WireBox>>,
    /// The candidate pairs, each `[a, b]` with `a < b`, sorted.
    pub pairs: Option<Vec<[u32; 2]>>,
    /// The tree.
    pub tree: Option<EngineTree>,
    /// Timings and counts, in the order sent.
    pub timings: Option<Vec<Timing>>,
}

impl EngineParts {
    /// True when the step carried none of the parts.
    pub fn is_empty(&self) -> bool {
        self.fat_boxes.is_none()
            && self.pairs.is_none()
            && self.tree.is_none()
            && self.timings.is_none()
    }

    /// The value of a timing key, when sent.
    pub fn timing(&self, key: &str) -> Option<f64> {
        self.timings
            .as_ref()?
            .iter()
            .find(|t| t.key == key)
            .map(|t| t.value)
    }

    /// The sections of the parts present, in tag order, for a STEP in `dims` dimensions
    /// (written as they are: pairs are not sorted here).
    pub fn to_sections(&self, dims: u8) -> Vec<Section> {
        let mut out = Vec::new();
        if let Some(fat) = &self.fat_boxes {
            out.push(Section {
                tag: SECTION_FAT_BOXES,
                bytes: encode_fat_boxes(dims, fat),
            });
        }
        if let Some(pairs) = &self.pairs {
            out.push(Section {
                tag: SECTION_PAIRS,
                bytes: encode_pairs(pairs),
            });
        }
        if let Some(tree) = &self.tree {
            out.push(Section {
                tag: SECTION_TREE_NODES,
                bytes: encode_tree(dims, tree),
            });
        }
        if let Some(timings) = &self.timings {
            out.push(Section {
                tag: SECTION_TIMINGS,
                bytes: encode_timings(timings),
            });
        }
        out
    }

    /// Decodes the reserved sections of a STEP in `dims` dimensions; other tags are skipped.
    /// A section of length 0 repeats the part of `previous` (the previous STEP frame's parts,
    /// as decoded): an error when that frame had none. A reserved tag twice, or a section
    /// that breaks its layout, is an error naming the section and the entry.
    pub fn from_sections(
        sections: &[Section],
        dims: u8,
        limits: &Limits,
        previous: &EngineParts,
    ) -> Result<EngineParts, WireErrorKind> {
        fn take<T: Clone>(
            slot: &mut Option<T>,
            s: &Section,
            previous: &Option<T>,
            decode: impl FnOnce(&[u8]) -> Result<T, WireErrorKind>,
        ) -> Result<(), WireErrorKind> {
            let error = |detail: &str| WireErrorKind::Section {
                tag: s.tag,
                detail: detail.to_owned(),
            };
            if slot.is_some() {
                return Err(error("twice in one step"));
            }
            *slot = Some(if s.bytes.is_empty() {
                previous.clone().ok_or_else(|| {
                    error(
                        "empty (the same as the previous step's), but the previous step \
                         had none",
                    )
                })?
            } else {
                decode(&s.bytes)?
            });
            Ok(())
        }
        let mut parts = EngineParts::default();
        for s in sections {
            match s.tag {
                SECTION_FAT_BOXES => take(&mut parts.fat_boxes, s, &previous.fat_boxes, |b| {
                    decode_fat_boxes(b, dims, limits)
                })?,
                SECTION_PAIRS => take(&mut parts.pairs, s, &previous.pairs, |b| {
                    decode_pairs(b, limits)
                })?,
                SECTION_TREE_NODES => take(&mut parts.tree, s, &previous.tree, |b| {
                    decode_tree(b, dims, limits)
                })?,
                SECTION_TIMINGS => {
                    take(&mut parts.timings, s, &previous.timings, decode_timings)?;
                }
                _ => {}
            }
        }
        Ok(parts)
    }
}

// ---------------------------------------------------------------------------------------------
// Encoder

/// The bytes of a fat-boxes section: `count:u32 box[count]`.
pub fn encode_fat_boxes(dims: u8, boxes: &[WireBox]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + boxes.len() * box_bytes(dims));
    out.extend_from_slice(&(boxes.len() as u32).to_le_bytes());
    for b in boxes {
        put_box(&mut out, dims, b);
    }
    out
}

/// The bytes of a candidate-pairs section: `count:u32 (a:u32 b:u32)[count]`, as given.
pub fn encode_pairs(pairs: &[[u32; 2]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + pairs.len() * 8);
    out.extend_from_slice(&(pairs.len() as u32).to_le_bytes());
    for [a, b] in pairs {
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(&b.to_le_bytes());
    }
    out
}

/// The bytes of one tree node in `dims` dimensions.
pub fn node_bytes(dims: u8) -> usize {
    21 + 2 * 4 * if dims == 2 { 2 } else { 3 }
}

/// Appends one tree node in `dims` dimensions.
pub fn put_node(out: &mut Vec<u8>, dims: u8, n: &TreeNode) {
    let (first, second, leaf) = match n.kind {
        NodeKind::Branch([a, b]) => (a, b, 0),
        NodeKind::Leaf(proxy) => (proxy, NONE_ID, NODE_FLAG_LEAF),
    };
    out.extend_from_slice(&n.id.to_le_bytes());
    out.extend_from_slice(&n.parent.unwrap_or(NONE_ID).to_le_bytes());
    out.extend_from_slice(&first.to_le_bytes());
    out.extend_from_slice(&second.to_le_bytes());
    out.extend_from_slice(&n.height.to_le_bytes());
    out.push(leaf | if n.enlarged { NODE_FLAG_ENLARGED } else { 0 });
    let d = if dims == 2 { 2 } else { 3 };
    for v in n.min[..d].iter().chain(&n.max[..d]) {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// The bytes of a tree section: `flags:u8 root:u32 count:u32 node[count]`.
pub fn encode_tree(dims: u8, tree: &EngineTree) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + tree.nodes.len() * node_bytes(dims));
    out.push(if tree.partial { TREE_FLAG_PARTIAL } else { 0 });
    out.extend_from_slice(&tree.root.unwrap_or(NONE_ID).to_le_bytes());
    out.extend_from_slice(&(tree.nodes.len() as u32).to_le_bytes());
    for n in &tree.nodes {
        put_node(&mut out, dims, n);
    }
    out
}

/// The bytes of a timings section: `count:u8 (key_len:u8 key value:f64)[count]`; keys are
/// cut to [`MAX_TIMING_KEY_BYTES`] and at most [`MAX_TIMINGS`] entries are written.
pub fn encode_timings(timings: &[Timing]) -> Vec<u8> {
    let timings = &timings[..timings.len().min(MAX_TIMINGS)];
    let mut out = vec![timings.len() as u8];
    for t in timings {
        let key = &t.key.as_bytes()[..t.key.len().min(MAX_TIMING_KEY_BYTES)];
        out.push(key.len() as u8);
        out.extend_from_slice(key);
        out.extend_from_slice(&t.value.to_le_bytes());
    }
    out
}

/// Whether `key` is a valid timing key: 1 to 32 bytes of `a-z`, `0-9` and `_`.
pub fn valid_timing_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_TIMING_KEY_BYTES
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

// ---------------------------------------------------------------------------------------------
// Decoder

/// A section's bytes being read; errors name the section.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    tag: u8,
}

impl<'a> Reader<'a> {
    fn error(&self, detail: String) -> WireErrorKind {
        WireErrorKind::Section {
            tag: self.tag,
            detail,
        }
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], WireErrorKind> {
        if n > self.remaining() {
            return Err(self.error(format!(
                "it ends inside its {what} (byte {} of the section)",
                self.pos
            )));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self, what: &str) -> Result<u8, WireErrorKind> {
        Ok(self.take(1, what)?[0])
    }

    fn u32(&mut self, what: &str) -> Result<u32, WireErrorKind> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    fn f32(&mut self, what: &str) -> Result<f32, WireErrorKind> {
        Ok(f32::from_bits(self.u32(what)?))
    }

    fn f64(&mut self, what: &str) -> Result<f64, WireErrorKind> {
        let s = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(f64::from_le_bytes(a))
    }

    /// A count of elements of `size` bytes each, checked against the bytes left and against
    /// `limit` before anything is allocated.
    fn count(&mut self, what: &str, size: usize, limit: u64) -> Result<usize, WireErrorKind> {
        let count = self.u32(&format!("{what} count"))?;
        let room = (self.remaining() / size) as u64;
        if u64::from(count) > room {
            return Err(self.error(format!(
                "a count of {count} {what} does not fit in the rest of the section (room for \
                 {room})"
            )));
        }
        if u64::from(count) > limit {
            return Err(self.error(format!("{count} {what}, over the limit of {limit}")));
        }
        Ok(count as usize)
    }

    /// Refuses bytes left over.
    fn finish(&self) -> Result<(), WireErrorKind> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(self.error(format!(
                "{} left over after its last entry",
                super::byte_count(n as u64)
            ))),
        }
    }

    /// Corners in `dims` dimensions, checked finite with min <= max; `what` names the entry.
    fn corners(&mut self, dims: u8, what: &str) -> Result<([f32; 3], [f32; 3]), WireErrorKind> {
        let d = if dims == 2 { 2 } else { 3 };
        let (mut min, mut max) = ([0.0f32; 3], [0.0f32; 3]);
        for v in &mut min[..d] {
            *v = self.f32(what)?;
        }
        for v in &mut max[..d] {
            *v = self.f32(what)?;
        }
        for k in 0..d {
            for (corner, v) in [("min", min[k]), ("max", max[k])] {
                if !v.is_finite() {
                    return Err(self.error(format!(
                        "{what} has a non-finite {corner} (axis {}: {v})",
                        AXES[k]
                    )));
                }
            }
            if min[k] > max[k] {
                return Err(self.error(format!(
                    "{what} has min > max (axis {}: {} > {})",
                    AXES[k], min[k], max[k]
                )));
            }
        }
        Ok((min, max))
    }
}

/// Decodes a fat-boxes section in `dims` dimensions (at most `max_step_boxes +
/// max_static_boxes` boxes).
pub fn decode_fat_boxes(
    bytes: &[u8],
    dims: u8,
    limits: &Limits,
) -> Result<Vec<WireBox>, WireErrorKind> {
    let mut r = Reader {
        bytes,
        pos: 0,
        tag: SECTION_FAT_BOXES,
    };
    let limit = u64::from(limits.max_step_boxes) + u64::from(limits.max_static_boxes);
    let count = r.count("fat boxes", box_bytes(dims), limit)?;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let id = r.u32("box id")?;
        let (min, max) = r.corners(dims, &format!("the fat box of id {id}"))?;
        out.push(WireBox { id, min, max });
    }
    r.finish()?;
    Ok(out)
}

/// Decodes a candidate-pairs section: each pair is taken as `[min, max]` of its two ids
/// (whatever order it was sent in) and the result is sorted; a pair of one id, or a pair
/// twice, is refused.
pub fn decode_pairs(bytes: &[u8], limits: &Limits) -> Result<Vec<[u32; 2]>, WireErrorKind> {
    let mut r = Reader {
        bytes,
        pos: 0,
        tag: SECTION_PAIRS,
    };
    let count = r.count("pairs", 8, u64::from(limits.max_pairs))?;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let a = r.u32("pair")?;
        let b = r.u32("pair")?;
        if a == b {
            return Err(r.error(format!("pair ({a}, {b}) of one id with itself")));
        }
        out.push([a.min(b), a.max(b)]);
    }
    r.finish()?;
    out.sort_unstable();
    if let Some(w) = out.windows(2).find(|w| w[0] == w[1]) {
        return Err(r.error(format!("pair ({}, {}) twice", w[0][0], w[0][1])));
    }
    Ok(out)
}

/// Decodes a tree section in `dims` dimensions (at most `limits.max_tree_nodes` nodes).
/// Only the layout is checked here: node ids not [`NONE_ID`], a branch's two children given,
/// a leaf's second link [`NONE_ID`], boxes finite with min <= max, no reserved bit set.
pub fn decode_tree(bytes: &[u8], dims: u8, limits: &Limits) -> Result<EngineTree, WireErrorKind> {
    let mut r = Reader {
        bytes,
        pos: 0,
        tag: SECTION_TREE_NODES,
    };
    let flags = r.u8("flags")?;
    if flags & !TREE_FLAG_PARTIAL != 0 {
        return Err(r.error(format!("flags 0x{flags:02x} set reserved bits")));
    }
    let root = r.u32("root")?;
    let count = r.count("nodes", node_bytes(dims), u64::from(limits.max_tree_nodes))?;
    let mut nodes = Vec::with_capacity(count);
    for k in 0..count {
        let id = r.u32("node id")?;
        let parent = r.u32("node parent")?;
        let first = r.u32("node's first link")?;
        let second = r.u32("node's second link")?;
        let height = r.u32("node height")?;
        let flags = r.u8("node flags")?;
        let name = format!("node {id} (entry {k})");
        if id == NONE_ID {
            return Err(r.error(format!("entry {k} has the node id {NONE_ID} (none)")));
        }
        if flags & !(NODE_FLAG_ENLARGED | NODE_FLAG_LEAF) != 0 {
            return Err(r.error(format!("{name} has flags 0x{flags:02x} with reserved bits")));
        }
        let kind = if flags & NODE_FLAG_LEAF != 0 {
            if second != NONE_ID {
                return Err(r.error(format!(
                    "{name} is a leaf with a second link {second} (a leaf's is {NONE_ID})"
                )));
            }
            NodeKind::Leaf(first)
        } else {
            if first == NONE_ID || second == NONE_ID {
                return Err(r.error(format!("{name} is a branch with a missing child")));
            }
            NodeKind::Branch([first, second])
        };
        let (min, max) = r.corners(dims, &name)?;
        nodes.push(TreeNode {
            id,
            parent: (parent != NONE_ID).then_some(parent),
            kind,
            min,
            max,
            height,
            enlarged: flags & NODE_FLAG_ENLARGED != 0,
        });
    }
    r.finish()?;
    Ok(EngineTree {
        root: (root != NONE_ID).then_some(root),
        partial: flags & TREE_FLAG_PARTIAL != 0,
        nodes,
    })
}

/// Decodes a timings section: keys valid and each at most once, values finite.
pub fn decode_timings(bytes: &[u8]) -> Result<Vec<Timing>, WireErrorKind> {
    let mut r = Reader {
        bytes,
        pos: 0,
        tag: SECTION_TIMINGS,
    };
    let count = usize::from(r.u8("count")?);
    if count > MAX_TIMINGS {
        return Err(r.error(format!("{count} entries, over the limit of {MAX_TIMINGS}")));
    }
    let mut out: Vec<Timing> = Vec::with_capacity(count);
    for k in 0..count {
        let len = usize::from(r.u8("key length")?);
        let raw = r.take(len, "key")?;
        let key = match std::str::from_utf8(raw) {
            Ok(key) if valid_timing_key(key) => key.to_owned(),
            _ => {
                return Err(r.error(format!(
                    "entry {k} has the key {:?} (1 to {MAX_TIMING_KEY_BYTES} bytes of a-z, 0-9 \
                     and _)",
                    String::from_utf8_lossy(raw)
                )));
            }
        };
        let value = r.f64("value")?;
        if !value.is_finite() {
            return Err(r.error(format!("{key} is {value} (values are finite)")));
        }
        if out.iter().any(|t| t.key == key) {
            return Err(r.error(format!("{key} twice")));
        }
        out.push(Timing { key, value });
    }
    r.finish()?;
    Ok(out)
}
