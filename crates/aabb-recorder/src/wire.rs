//! The stream format (version 1) of the live link: its constants, its frames, an encoder that
//! writes each frame to a `Vec<u8>`, and a [`Decoder`] that reads frames from any [`Read`]
//! and refuses whatever does not follow the format (docs/formats.md, "Stream").

use std::fmt;
use std::io::{self, Read};

mod engine;

pub use engine::{
    EngineParts, EngineTree, MAX_TIMING_KEY_BYTES, MAX_TIMINGS, NODE_FLAG_ENLARGED, NODE_FLAG_LEAF,
    NONE_ID, NodeKind, TIMING_BROAD_PHASE_NS, TIMING_MARGIN, TIMING_NARROW_PHASE_NS,
    TIMING_PAIRS_TESTED, TIMING_REINSERTS, TREE_FLAG_PARTIAL, Timing, TreeNode, decode_fat_boxes,
    decode_pairs, decode_timings, decode_tree, encode_fat_boxes, encode_pairs, encode_timings,
    encode_tree, node_bytes, section_name, valid_timing_key,
};

/// The 8 bytes every stream starts with.
pub const MAGIC: [u8; 8] = *b"AABBSTRM";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 1;
/// The largest frame (its kind byte and body) the format allows: 64 MiB.
pub const MAX_FRAME_BYTES: u32 = 64 << 20;
/// The longest string (engine name, units) in bytes.
pub const MAX_STR_BYTES: usize = 255;
/// The longest HELLO frame (its length field's value): kind, version, dimensions, flags, dt and
/// two strings of at most [`MAX_STR_BYTES`]. A first frame that says more is no handshake.
pub const MAX_HELLO_BYTES: u32 = 1 + 2 + 1 + 1 + 4 + 2 * (2 + MAX_STR_BYTES as u32);

/// Frame kind of the handshake, the first frame.
pub const KIND_HELLO: u8 = 0x01;
/// Frame kind of the static boxes, sent at most once before the first step.
pub const KIND_STATIC: u8 = 0x02;
/// Frame kind of one step's changes.
pub const KIND_STEP: u8 = 0x03;
/// Frame kind of the clean end of a stream.
pub const KIND_BYE: u8 = 0x04;
/// Kinds from this one up are optional frames that a decoder skips.
pub const KIND_OPTIONAL_FIRST: u8 = 0x80;

/// STEP flag bit: the step lists the whole set of moving boxes in `appeared`.
pub const FLAG_KEYFRAME: u8 = 0x01;

/// Section tag of the engine's fat boxes (see [`EngineParts`]).
pub const SECTION_FAT_BOXES: u8 = 1;
/// Section tag of the engine's candidate pairs.
pub const SECTION_PAIRS: u8 = 2;
/// Section tag of the engine's tree nodes.
pub const SECTION_TREE_NODES: u8 = 3;
/// Section tag of the engine's per-step timings and counts.
pub const SECTION_TIMINGS: u8 = 4;

/// The name of a frame kind, as error messages say it.
pub fn kind_name(kind: u8) -> &'static str {
    match kind {
        KIND_HELLO => "HELLO",
        KIND_STATIC => "STATIC",
        KIND_STEP => "STEP",
        KIND_BYE => "BYE",
        k if k >= KIND_OPTIONAL_FIRST => "optional",
        _ => "unknown",
    }
}

/// `1 byte`, `2 bytes`.
pub(crate) fn byte_count(n: u64) -> String {
    if n == 1 {
        "1 byte".to_owned()
    } else {
        format!("{n} bytes")
    }
}

/// The name of a frame kind after its article: "a STEP", "an optional".
fn a_kind(kind: u8) -> String {
    let name = kind_name(kind);
    let article = if name.starts_with(['o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

/// The handshake: who sends, in how many dimensions, at what time step.
#[derive(Clone, Debug, PartialEq)]
pub struct Hello {
    /// The format version ([`VERSION`]).
    pub version: u16,
    /// 2 or 3.
    pub dimensions: u8,
    /// Seconds per step: finite, > 0, <= 1.
    pub dt_secs: f32,
    /// The engine's name and version, e.g. "rapier2d 0.36" (at most 255 bytes of UTF-8).
    pub engine: String,
    /// The length unit, e.g. "m" (at most 255 bytes of UTF-8).
    pub units: String,
}

impl Hello {
    /// A handshake of this format version in meters; `engine` is cut to 255 bytes (at a
    /// character boundary).
    pub fn new(engine: &str, dimensions: u8, dt_secs: f32) -> Self {
        Self {
            version: VERSION,
            dimensions,
            dt_secs,
            engine: truncate_str(engine).to_owned(),
            units: "m".to_owned(),
        }
    }

    /// The same handshake with another length unit (cut to 255 bytes).
    pub fn with_units(mut self, units: &str) -> Self {
        self.units = truncate_str(units).to_owned();
        self
    }

    /// Why a decoder would refuse this handshake, if it would (version, dimensions, dt,
    /// string lengths).
    pub fn check(&self) -> Result<(), WireErrorKind> {
        if self.version != VERSION {
            return Err(WireErrorKind::Version(self.version));
        }
        if self.dimensions != 2 && self.dimensions != 3 {
            return Err(WireErrorKind::Dimensions(self.dimensions));
        }
        check_dt(self.dt_secs)?;
        for (what, s) in [("engine name", &self.engine), ("units", &self.units)] {
            if s.len() > MAX_STR_BYTES {
                return Err(WireErrorKind::StringTooLong { what, len: s.len() });
            }
        }
        Ok(())
    }
}

/// The longest prefix of `s` of at most [`MAX_STR_BYTES`] bytes that ends at a character.
fn truncate_str(s: &str) -> &str {
    let mut end = s.len().min(MAX_STR_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn check_dt(dt: f32) -> Result<(), WireErrorKind> {
    if dt.is_finite() && dt > 0.0 && dt <= 1.0 {
        Ok(())
    } else {
        Err(WireErrorKind::Dt(dt))
    }
}

/// One box on the wire: the object's id and its corners (z = 0 in 2D).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WireBox {
    /// The object's id, stable over the object's life.
    pub id: u32,
    /// The lower corner.
    pub min: [f32; 3],
    /// The upper corner.
    pub max: [f32; 3],
}

impl WireBox {
    /// Whether the two boxes have the same id and bit-identical corners.
    pub fn same_bits(&self, other: &WireBox) -> bool {
        self.id == other.id
            && self.min.map(f32::to_bits) == other.min.map(f32::to_bits)
            && self.max.map(f32::to_bits) == other.max.map(f32::to_bits)
    }

    /// Why a decoder would refuse this box in `dims` dimensions: a non-finite coordinate or
    /// min > max on an axis.
    pub fn check(&self, dims: u8) -> Result<(), WireErrorKind> {
        let d = if dims == 2 { 2 } else { 3 };
        for (k, &axis) in AXES.iter().enumerate().take(d) {
            for (corner, v) in [("min", self.min[k]), ("max", self.max[k])] {
                if !v.is_finite() {
                    return Err(WireErrorKind::NonFinite {
                        id: self.id,
                        corner,
                        axis,
                        value: v,
                    });
                }
            }
            if self.min[k] > self.max[k] {
                return Err(WireErrorKind::MinAboveMax {
                    id: self.id,
                    axis,
                    min: self.min[k],
                    max: self.max[k],
                });
            }
        }
        Ok(())
    }
}

const AXES: [char; 3] = ['x', 'y', 'z'];

/// An optional part of a STEP after its three lists: a tag and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// What the bytes hold ([`SECTION_FAT_BOXES`] ...); unknown tags are kept as they are.
    pub tag: u8,
    /// The section's bytes.
    pub bytes: Vec<u8>,
}

/// One STEP frame as it is on the wire: a keyframe (the whole set in `appeared`) or a delta
/// against the previous STEP frame.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct StepFrame {
    /// The recorder's step counter (0 for its first step), strictly increasing.
    pub step: u64,
    /// Whether `appeared` is the whole set of moving boxes.
    pub keyframe: bool,
    /// New boxes (or, in a keyframe, every box).
    pub appeared: Vec<WireBox>,
    /// Boxes whose corners changed.
    pub moved: Vec<WireBox>,
    /// Ids removed.
    pub gone: Vec<u32>,
    /// Optional sections, kept in order.
    pub sections: Vec<Section>,
}

/// The clean end of a stream: what the recorder sent and dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bye {
    /// STEP frames the recorder sent.
    pub steps_sent: u64,
    /// Steps the recorder dropped (its buffer was full, or the step could not be sent).
    pub steps_dropped: u64,
}

/// One decoded frame.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    /// The handshake.
    Hello(Hello),
    /// The static boxes, in the order sent.
    Static(Vec<WireBox>),
    /// One step.
    Step(StepFrame),
    /// The clean end.
    Bye(Bye),
    /// An optional frame (kind 0x80 and up) that was skipped; `len` counts its kind byte
    /// and body, as the frame's length field does.
    Skipped {
        /// The frame's kind.
        kind: u8,
        /// The frame's length field.
        len: u32,
    },
}

impl Frame {
    /// The frame's kind byte.
    pub fn kind(&self) -> u8 {
        match self {
            Frame::Hello(_) => KIND_HELLO,
            Frame::Static(_) => KIND_STATIC,
            Frame::Step(_) => KIND_STEP,
            Frame::Bye(_) => KIND_BYE,
            Frame::Skipped { kind, .. } => *kind,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Encoder

/// Why a frame could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// The frame would be longer than [`MAX_FRAME_BYTES`]; nothing was written.
    FrameTooLarge {
        /// The frame's length (kind byte and body).
        bytes: u64,
    },
    /// A string longer than a u16 length can say; nothing was written.
    StringTooLong {
        /// Its length in bytes.
        len: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::FrameTooLarge { bytes } => write!(
                f,
                "a frame of {bytes} bytes, over the format's limit of {MAX_FRAME_BYTES}"
            ),
            EncodeError::StringTooLong { len } => {
                write!(f, "a string of {len} bytes, longer than a u16 can say")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

/// Writes the stream's 8 magic bytes.
pub fn encode_magic(out: &mut Vec<u8>) {
    out.extend_from_slice(&MAGIC);
}

/// Starts a frame of `kind` at the end of `out`; returns where its length field is.
pub(crate) fn begin_frame(out: &mut Vec<u8>, kind: u8) -> usize {
    let at = out.len();
    out.extend_from_slice(&[0, 0, 0, 0, kind]);
    at
}

/// Writes the length field of the frame begun at `at`, or takes the frame back out of `out`
/// when it is over the limit.
pub(crate) fn end_frame(out: &mut Vec<u8>, at: usize) -> Result<(), EncodeError> {
    let len = (out.len() - at - 4) as u64;
    if len > u64::from(MAX_FRAME_BYTES) {
        out.truncate(at);
        return Err(EncodeError::FrameTooLarge { bytes: len });
    }
    out[at..at + 4].copy_from_slice(&(len as u32).to_le_bytes());
    Ok(())
}

/// Appends a box in `dims` dimensions (2: x and y; otherwise x, y and z).
#[inline]
pub(crate) fn put_box(out: &mut Vec<u8>, dims: u8, b: &WireBox) {
    if dims == 2 {
        let mut a = [0u8; 20];
        a[0..4].copy_from_slice(&b.id.to_le_bytes());
        a[4..8].copy_from_slice(&b.min[0].to_le_bytes());
        a[8..12].copy_from_slice(&b.min[1].to_le_bytes());
        a[12..16].copy_from_slice(&b.max[0].to_le_bytes());
        a[16..20].copy_from_slice(&b.max[1].to_le_bytes());
        out.extend_from_slice(&a);
    } else {
        let mut a = [0u8; 28];
        a[0..4].copy_from_slice(&b.id.to_le_bytes());
        for k in 0..3 {
            a[4 + 4 * k..8 + 4 * k].copy_from_slice(&b.min[k].to_le_bytes());
            a[16 + 4 * k..20 + 4 * k].copy_from_slice(&b.max[k].to_le_bytes());
        }
        out.extend_from_slice(&a);
    }
}

/// The bytes of one box in `dims` dimensions.
pub fn box_bytes(dims: u8) -> usize {
    if dims == 2 { 20 } else { 28 }
}

fn put_str(out: &mut Vec<u8>, s: &str) -> Result<(), EncodeError> {
    let len = u16::try_from(s.len()).map_err(|_| EncodeError::StringTooLong { len: s.len() })?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

/// Writes a HELLO frame as the handshake says, without checking it (see [`Hello::check`]):
/// tests use this to write what a decoder refuses.
pub fn encode_hello(out: &mut Vec<u8>, hello: &Hello) -> Result<(), EncodeError> {
    let at = begin_frame(out, KIND_HELLO);
    out.extend_from_slice(&hello.version.to_le_bytes());
    out.push(hello.dimensions);
    out.push(0);
    out.extend_from_slice(&hello.dt_secs.to_le_bytes());
    if let Err(e) = put_str(out, &hello.engine).and_then(|()| put_str(out, &hello.units)) {
        out.truncate(at);
        return Err(e);
    }
    end_frame(out, at)
}

/// Writes a STATIC frame of `boxes` in `dims` dimensions.
pub fn encode_static(out: &mut Vec<u8>, dims: u8, boxes: &[WireBox]) -> Result<(), EncodeError> {
    let at = begin_frame(out, KIND_STATIC);
    put_list(out, dims, boxes);
    end_frame(out, at)
}

fn put_list(out: &mut Vec<u8>, dims: u8, boxes: &[WireBox]) {
    out.extend_from_slice(&(boxes.len() as u32).to_le_bytes());
    out.reserve(boxes.len() * box_bytes(dims));
    for b in boxes {
        put_box(out, dims, b);
    }
}

/// Writes a STEP frame in `dims` dimensions, as it is (a keyframe's `moved` and `gone` are
/// written too if not empty).
pub fn encode_step(out: &mut Vec<u8>, dims: u8, step: &StepFrame) -> Result<(), EncodeError> {
    let at = begin_frame(out, KIND_STEP);
    out.extend_from_slice(&step.step.to_le_bytes());
    out.push(if step.keyframe { FLAG_KEYFRAME } else { 0 });
    put_list(out, dims, &step.appeared);
    put_list(out, dims, &step.moved);
    out.extend_from_slice(&(step.gone.len() as u32).to_le_bytes());
    for id in &step.gone {
        out.extend_from_slice(&id.to_le_bytes());
    }
    for s in &step.sections {
        out.push(s.tag);
        out.extend_from_slice(&(s.bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(&s.bytes);
    }
    end_frame(out, at)
}

/// Writes a BYE frame.
pub fn encode_bye(out: &mut Vec<u8>, bye: &Bye) {
    let at = begin_frame(out, KIND_BYE);
    out.extend_from_slice(&bye.steps_sent.to_le_bytes());
    out.extend_from_slice(&bye.steps_dropped.to_le_bytes());
    // 17 bytes: never over the limit.
    let _ = end_frame(out, at);
}

/// Writes any frame in `dims` dimensions; a [`Frame::Skipped`] is written as its kind and
/// `len - 1` zero bytes.
pub fn encode_frame(out: &mut Vec<u8>, dims: u8, frame: &Frame) -> Result<(), EncodeError> {
    match frame {
        Frame::Hello(h) => encode_hello(out, h),
        Frame::Static(b) => encode_static(out, dims, b),
        Frame::Step(s) => encode_step(out, dims, s),
        Frame::Bye(b) => {
            encode_bye(out, b);
            Ok(())
        }
        Frame::Skipped { kind, len } => {
            let at = begin_frame(out, *kind);
            out.resize(out.len() + (*len as usize).saturating_sub(1), 0);
            end_frame(out, at)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Errors

/// A refused stream: where (the byte offset of the frame, and the step when known) and why.
#[derive(Clone, Debug, PartialEq)]
pub struct WireError {
    /// The byte offset in the stream of the frame refused (0 for the magic).
    pub offset: u64,
    /// The step of the frame refused, when it was read.
    pub step: Option<u64>,
    /// What is wrong.
    pub kind: WireErrorKind,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.step {
            Some(step) => write!(f, "byte {}, step {}: {}", self.offset, step, self.kind),
            None => write!(f, "byte {}: {}", self.offset, self.kind),
        }
    }
}

impl std::error::Error for WireError {}

/// What is wrong with a stream.
#[derive(Clone, Debug, PartialEq)]
pub enum WireErrorKind {
    /// Reading failed (a read timeout, a reset connection); the decoder cannot go on.
    Io {
        /// The I/O error's kind.
        kind: io::ErrorKind,
        /// Its message.
        message: String,
    },
    /// The stream does not start with [`MAGIC`]; `start` holds its first bytes.
    BadMagic {
        /// Up to 8 first bytes.
        start: Vec<u8>,
    },
    /// The stream ends inside its magic (or is empty).
    TruncatedMagic {
        /// Bytes read.
        got: usize,
    },
    /// A HELLO of another version.
    Version(u16),
    /// A HELLO with dimensions other than 2 or 3.
    Dimensions(u8),
    /// A HELLO whose dt is not finite, > 0 and <= 1.
    Dt(f32),
    /// A frame length of 0 or over the limit.
    FrameLength {
        /// The length field.
        len: u32,
        /// The limit in force.
        limit: u32,
    },
    /// The first frame (which must be HELLO) says it is longer than a HELLO can be.
    HelloLength {
        /// The length field.
        len: u32,
    },
    /// The stream ends inside a frame's length field.
    TruncatedLength {
        /// The bytes of the field there were.
        got: u64,
    },
    /// The stream ends inside a frame.
    Truncated {
        /// The frame's kind, when it was read.
        kind: Option<u8>,
        /// The bytes the frame needs after its length field.
        expected: u64,
        /// The bytes there were.
        got: u64,
    },
    /// A kind that is none of the format's and below 0x80.
    UnknownKind(u8),
    /// A frame's body ends inside one of its fields.
    ShortFrame {
        /// The frame's kind.
        kind: u8,
        /// The field.
        what: &'static str,
    },
    /// A count of elements that cannot fit in the rest of the frame.
    CountTooLarge {
        /// What is counted.
        what: &'static str,
        /// The count.
        count: u32,
        /// How many fit.
        room: u64,
    },
    /// More boxes than the limit allows.
    OverLimit {
        /// What is counted.
        what: &'static str,
        /// The number.
        count: u64,
        /// The limit.
        limit: u32,
    },
    /// Bytes after a STEP's lists that are not whole sections, or after another frame's body.
    TrailingBytes {
        /// The frame's kind.
        kind: u8,
        /// How many bytes are left over.
        len: u64,
    },
    /// A box with a NaN or infinite coordinate.
    NonFinite {
        /// The box's id.
        id: u32,
        /// "min" or "max".
        corner: &'static str,
        /// The axis.
        axis: char,
        /// The value.
        value: f32,
    },
    /// A box whose min is above its max on an axis.
    MinAboveMax {
        /// The box's id.
        id: u32,
        /// The axis.
        axis: char,
        /// The min.
        min: f32,
        /// The max.
        max: f32,
    },
    /// A string that is not UTF-8.
    StringNotUtf8 {
        /// Which string.
        what: &'static str,
    },
    /// A string over 255 bytes.
    StringTooLong {
        /// Which string.
        what: &'static str,
        /// Its length.
        len: usize,
    },
    /// An id twice in one STEP (across its three lists).
    DuplicateId(u32),
    /// An id twice in STATIC.
    DuplicateStaticId(u32),
    /// A delta's appeared id that is already present.
    AlreadyPresent(u32),
    /// A delta's moved or gone id that is not present.
    NotPresent {
        /// "moved" or "gone".
        list: &'static str,
        /// The id.
        id: u32,
    },
    /// A moving box's id equal to a static box's.
    StaticId(u32),
    /// A step number not greater than the one before.
    StepOrder {
        /// The previous step.
        previous: u64,
    },
    /// The first STEP is not a keyframe.
    FirstStepNotKeyframe,
    /// A keyframe that lists moved or gone boxes.
    KeyframeWithChanges,
    /// A second HELLO.
    SecondHello,
    /// A second STATIC.
    SecondStatic,
    /// A STATIC after a STEP.
    StaticAfterStep,
    /// A frame after BYE.
    AfterBye(u8),
    /// A frame before HELLO.
    BeforeHello(u8),
    /// A reserved STEP section (the engine's broad phase) that breaks its layout or names
    /// an id that is not a box of the step.
    Section {
        /// The section's tag.
        tag: u8,
        /// What is wrong, and where in the section.
        detail: String,
    },
}

impl fmt::Display for WireErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use WireErrorKind as K;
        match self {
            K::Io { message, .. } => write!(f, "reading the stream failed: {message}"),
            K::BadMagic { start } => {
                write!(
                    f,
                    "not an aabb stream: it starts with {}",
                    describe_start(start)
                )
            }
            K::TruncatedMagic { got: 0 } => write!(f, "the stream is empty (no magic)"),
            K::TruncatedMagic { got } => {
                write!(f, "the stream ends inside its magic ({got} of 8 bytes)")
            }
            K::Version(v) => write!(f, "stream version {v}, this reader knows version {VERSION}"),
            K::Dimensions(d) => write!(f, "{d} dimensions (a stream is 2D or 3D)"),
            K::Dt(dt) => write!(f, "dt {dt} s (it must be finite, > 0 and <= 1)"),
            K::FrameLength { len: 0, .. } => write!(f, "a frame of length 0"),
            K::FrameLength { len, limit } => {
                write!(f, "a frame of {len} bytes, over the limit of {limit}")
            }
            K::HelloLength { len } => write!(
                f,
                "the first frame says it is {len} bytes long; it must be a HELLO, at most \
                 {MAX_HELLO_BYTES} bytes (not a recorder's handshake)"
            ),
            K::TruncatedLength { got } => {
                write!(
                    f,
                    "the stream ends inside a frame's length ({got} of 4 bytes)"
                )
            }
            K::Truncated {
                kind: None,
                expected,
                got,
            } => write!(
                f,
                "the stream ends inside a frame ({got} of {expected} bytes)"
            ),
            K::Truncated {
                kind: Some(k),
                expected,
                got,
            } => write!(
                f,
                "the stream ends inside {} frame ({got} of {expected} bytes)",
                a_kind(*k)
            ),
            K::UnknownKind(k) => write!(f, "a frame of unknown kind 0x{k:02x}"),
            K::ShortFrame { kind, what } => {
                write!(f, "the {} frame ends inside its {what}", kind_name(*kind))
            }
            K::CountTooLarge { what, count, room } => write!(
                f,
                "a count of {count} {what} does not fit in the rest of the frame (room for {room})"
            ),
            K::OverLimit { what, count, limit } => {
                write!(f, "{count} {what}, over the limit of {limit}")
            }
            K::TrailingBytes { kind, len } if *kind == KIND_STEP => {
                write!(
                    f,
                    "{} after the step's lists that are not whole sections",
                    byte_count(*len)
                )
            }
            K::TrailingBytes { kind, len } => {
                write!(
                    f,
                    "{} left over after the {} frame's body",
                    byte_count(*len),
                    kind_name(*kind)
                )
            }
            K::NonFinite {
                id,
                corner,
                axis,
                value,
            } => write!(
                f,
                "a box with a non-finite {corner} (id {id}, axis {axis}: {value})"
            ),
            K::MinAboveMax { id, axis, min, max } => {
                write!(
                    f,
                    "a box with min > max (id {id}, axis {axis}: {min} > {max})"
                )
            }
            K::StringNotUtf8 { what } => write!(f, "the {what} is not UTF-8"),
            K::StringTooLong { what, len } => {
                write!(
                    f,
                    "the {what} is {len} bytes long (at most {MAX_STR_BYTES})"
                )
            }
            K::DuplicateId(id) => write!(f, "id {id} twice in one step"),
            K::DuplicateStaticId(id) => write!(f, "id {id} twice in STATIC"),
            K::AlreadyPresent(id) => write!(f, "appeared id {id} is already present"),
            K::NotPresent { list, id } => write!(f, "{list} id {id} is not present"),
            K::StaticId(id) => write!(f, "moving id {id} is a static box's id"),
            K::StepOrder { previous } => {
                write!(
                    f,
                    "the step number is not greater than the one before ({previous})"
                )
            }
            K::FirstStepNotKeyframe => write!(f, "the first step is not a keyframe"),
            K::KeyframeWithChanges => write!(f, "a keyframe with moved or gone boxes"),
            K::SecondHello => write!(f, "a second HELLO"),
            K::SecondStatic => write!(f, "a second STATIC"),
            K::StaticAfterStep => write!(f, "STATIC after a STEP"),
            K::AfterBye(k) => write!(f, "{} frame after BYE", a_kind(*k)),
            K::BeforeHello(k) => write!(f, "{} frame before HELLO", a_kind(*k)),
            K::Section { tag, detail } => {
                write!(f, "the {} section: {detail}", section_name(*tag))
            }
        }
    }
}

/// What the first bytes of something that is not a stream look like.
fn describe_start(start: &[u8]) -> String {
    let shown: String = start
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                char::from(b).to_string()
            } else {
                format!("\\x{b:02x}")
            }
        })
        .collect();
    let what = if start.starts_with(b"GET ")
        || start.starts_with(b"POST")
        || start.starts_with(b"HEAD")
        || start.starts_with(b"PUT ")
    {
        "an HTTP request"
    } else if !start.is_empty()
        && start
            .iter()
            .all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace())
    {
        "printable text"
    } else {
        "random bytes"
    };
    format!("\"{shown}\" ({what})")
}

// ---------------------------------------------------------------------------------------------
// Decoder

/// Limits on what a decoder accepts, whatever the peer claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest frame; a larger value than [`MAX_FRAME_BYTES`] is taken as that.
    pub max_frame_bytes: u32,
    /// The most boxes in a step: the three lists of a STEP together, and the set of moving
    /// boxes at any time.
    pub max_step_boxes: u32,
    /// The most static boxes.
    pub max_static_boxes: u32,
    /// The most candidate pairs in a step's pairs section.
    pub max_pairs: u32,
    /// The most nodes in a step's tree section.
    pub max_tree_nodes: u32,
}

impl Default for Limits {
    /// 64 MiB frames, 4,000,000 boxes a step, 4,000,000 static boxes, 8,000,000 candidate
    /// pairs and 16,000,000 tree nodes a step.
    fn default() -> Self {
        Self {
            max_frame_bytes: MAX_FRAME_BYTES,
            max_step_boxes: 4_000_000,
            max_static_boxes: 4_000_000,
            max_pairs: 8_000_000,
            max_tree_nodes: 16_000_000,
        }
    }
}

/// Reads frames from a stream: the magic, then one frame a call. It checks each frame's
/// syntax (lengths, counts, numbers, strings) and that HELLO comes first and once; the
/// rest of the rules (ids, step order) are [`crate::StreamState`]'s.
///
/// After an error the decoder is done: every later call returns `Ok(None)`.
pub struct Decoder<R: Read> {
    reader: R,
    limits: Limits,
    offset: u64,
    frame_offset: u64,
    magic_read: bool,
    dims: Option<u8>,
    failed: bool,
    buf: Vec<u8>,
}

impl<R: Read> Decoder<R> {
    /// A decoder at the start of a stream (before its magic).
    pub fn new(reader: R, limits: Limits) -> Self {
        Self {
            reader,
            limits,
            offset: 0,
            frame_offset: 0,
            magic_read: false,
            dims: None,
            failed: false,
            buf: Vec::new(),
        }
    }

    /// The bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The byte offset of the last frame returned (or refused).
    pub fn frame_offset(&self) -> u64 {
        self.frame_offset
    }

    /// The stream's dimensions, once its HELLO was read.
    pub fn dimensions(&self) -> Option<u8> {
        self.dims
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The reader, e.g. to change a socket's timeout.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// The next frame: `Ok(None)` at a clean end of the input between frames (or after an
    /// error), an error for anything the format refuses.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, WireError> {
        if self.failed {
            return Ok(None);
        }
        let result = self.read_frame();
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    fn fail(&self, kind: WireErrorKind) -> WireError {
        WireError {
            offset: self.frame_offset,
            step: None,
            kind,
        }
    }

    /// Reads up to `want` bytes into `self.buf` (cleared first); returns how many came.
    fn fill(&mut self, want: u64) -> Result<usize, WireError> {
        self.buf.clear();
        let got = (&mut self.reader)
            .take(want)
            .read_to_end(&mut self.buf)
            .map_err(|e| {
                self.fail(WireErrorKind::Io {
                    kind: e.kind(),
                    message: e.to_string(),
                })
            })?;
        self.offset += got as u64;
        Ok(got)
    }

    fn read_frame(&mut self) -> Result<Option<Frame>, WireError> {
        if !self.magic_read {
            self.frame_offset = 0;
            let got = self.fill(8)?;
            if self.buf[..] != MAGIC[..got] {
                return Err(self.fail(WireErrorKind::BadMagic {
                    start: self.buf.clone(),
                }));
            }
            if got < 8 {
                return Err(self.fail(WireErrorKind::TruncatedMagic { got }));
            }
            self.magic_read = true;
        }
        self.frame_offset = self.offset;
        let got = self.fill(4)?;
        if got == 0 {
            return Ok(None);
        }
        if got < 4 {
            return Err(self.fail(WireErrorKind::TruncatedLength { got: got as u64 }));
        }
        let len = u32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
        let limit = self.limits.max_frame_bytes.min(MAX_FRAME_BYTES);
        if len == 0 || len > limit {
            return Err(self.fail(WireErrorKind::FrameLength { len, limit }));
        }
        // Before HELLO only a HELLO may come: a longer first frame is refused before a byte
        // of it is read (a peer cannot hold the reader on a handshake that never ends).
        if self.dims.is_none() && len > MAX_HELLO_BYTES {
            return Err(self.fail(WireErrorKind::HelloLength { len }));
        }
        // The buffer grows with the bytes that arrive, never from the length claimed.
        let got = self.fill(u64::from(len))?;
        if got < len as usize {
            let kind = self.buf.first().copied();
            return Err(self.fail(WireErrorKind::Truncated {
                kind,
                expected: u64::from(len),
                got: got as u64,
            }));
        }
        let buf = std::mem::take(&mut self.buf);
        let result = self.parse(&buf);
        self.buf = buf;
        result.map(Some)
    }

    fn parse(&mut self, frame: &[u8]) -> Result<Frame, WireError> {
        let kind = frame[0];
        let mut body = Body {
            bytes: &frame[1..],
            pos: 0,
            kind,
        };
        let at = self.frame_offset;
        let err = |kind: WireErrorKind, step: Option<u64>| WireError {
            offset: at,
            step,
            kind,
        };
        if kind >= KIND_OPTIONAL_FIRST {
            if self.dims.is_none() {
                return Err(err(WireErrorKind::BeforeHello(kind), None));
            }
            return Ok(Frame::Skipped {
                kind,
                len: frame.len() as u32,
            });
        }
        match kind {
            KIND_HELLO => {
                if self.dims.is_some() {
                    return Err(err(WireErrorKind::SecondHello, None));
                }
                let hello = parse_hello(&mut body).map_err(|k| err(k, None))?;
                body.finish().map_err(|k| err(k, None))?;
                self.dims = Some(hello.dimensions);
                Ok(Frame::Hello(hello))
            }
            KIND_STATIC | KIND_STEP | KIND_BYE => {
                let Some(dims) = self.dims else {
                    return Err(err(WireErrorKind::BeforeHello(kind), None));
                };
                match kind {
                    KIND_STATIC => {
                        let limit = self.limits.max_static_boxes;
                        let boxes = body
                            .boxes(dims, "static boxes", limit, 0)
                            .map_err(|k| err(k, None))?;
                        body.finish().map_err(|k| err(k, None))?;
                        Ok(Frame::Static(boxes))
                    }
                    KIND_STEP => {
                        let step = body.u64("step number").map_err(|k| err(k, None))?;
                        parse_step(&mut body, dims, step, self.limits.max_step_boxes)
                            .map(Frame::Step)
                            .map_err(|k| err(k, Some(step)))
                    }
                    _ => {
                        let steps_sent = body.u64("steps sent").map_err(|k| err(k, None))?;
                        let steps_dropped = body.u64("steps dropped").map_err(|k| err(k, None))?;
                        body.finish().map_err(|k| err(k, None))?;
                        Ok(Frame::Bye(Bye {
                            steps_sent,
                            steps_dropped,
                        }))
                    }
                }
            }
            _ => Err(err(WireErrorKind::UnknownKind(kind), None)),
        }
    }
}

fn parse_hello(body: &mut Body<'_>) -> Result<Hello, WireErrorKind> {
    let version = body.u16("version")?;
    if version != VERSION {
        return Err(WireErrorKind::Version(version));
    }
    let dimensions = body.u8("dimensions")?;
    if dimensions != 2 && dimensions != 3 {
        return Err(WireErrorKind::Dimensions(dimensions));
    }
    let _flags = body.u8("flags")?;
    let dt_secs = body.f32("dt")?;
    check_dt(dt_secs)?;
    let engine = body.str("engine name")?;
    let units = body.str("units")?;
    Ok(Hello {
        version,
        dimensions,
        dt_secs,
        engine,
        units,
    })
}

fn parse_step(
    body: &mut Body<'_>,
    dims: u8,
    step: u64,
    limit: u32,
) -> Result<StepFrame, WireErrorKind> {
    let flags = body.u8("flags")?;
    let appeared = body.boxes(dims, "appeared boxes", limit, 0)?;
    let moved = body.boxes(dims, "moved boxes", limit, appeared.len() as u64)?;
    let count = body.u32("gone count")?;
    let room = body.remaining() / 4;
    if u64::from(count) > room {
        return Err(WireErrorKind::CountTooLarge {
            what: "gone ids",
            count,
            room,
        });
    }
    let total = (appeared.len() + moved.len()) as u64 + u64::from(count);
    if total > u64::from(limit) {
        return Err(WireErrorKind::OverLimit {
            what: "boxes in a step",
            count: total,
            limit,
        });
    }
    let mut gone = Vec::with_capacity(count as usize);
    for _ in 0..count {
        gone.push(body.u32("gone ids")?);
    }
    let mut sections = Vec::new();
    while body.remaining() > 0 {
        let left = body.remaining();
        let trailing = WireErrorKind::TrailingBytes {
            kind: KIND_STEP,
            len: left,
        };
        if left < 5 {
            return Err(trailing);
        }
        let tag = body.u8("section tag")?;
        let len = body.u32("section length")?;
        if u64::from(len) > body.remaining() {
            return Err(trailing);
        }
        let bytes = body.take(len as usize, "section")?.to_vec();
        sections.push(Section { tag, bytes });
    }
    Ok(StepFrame {
        step,
        keyframe: flags & FLAG_KEYFRAME != 0,
        appeared,
        moved,
        gone,
        sections,
    })
}

/// A frame's body being parsed.
struct Body<'a> {
    bytes: &'a [u8],
    pos: usize,
    kind: u8,
}

impl<'a> Body<'a> {
    fn remaining(&self) -> u64 {
        (self.bytes.len() - self.pos) as u64
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], WireErrorKind> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(end) => {
                let s = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(WireErrorKind::ShortFrame {
                kind: self.kind,
                what,
            }),
        }
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], WireErrorKind> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, WireErrorKind> {
        Ok(self.array::<1>(what)?[0])
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, WireErrorKind> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, WireErrorKind> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, WireErrorKind> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn f32(&mut self, what: &'static str) -> Result<f32, WireErrorKind> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }

    fn str(&mut self, what: &'static str) -> Result<String, WireErrorKind> {
        let len = usize::from(self.u16(what)?);
        if len > MAX_STR_BYTES {
            return Err(WireErrorKind::StringTooLong { what, len });
        }
        let bytes = self.take(len, what)?;
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_owned()),
            Err(_) => Err(WireErrorKind::StringNotUtf8 { what }),
        }
    }

    /// A count and that many boxes; the count is checked against the bytes left and against
    /// `limit` (with `before` boxes already in the frame) before anything is allocated.
    fn boxes(
        &mut self,
        dims: u8,
        what: &'static str,
        limit: u32,
        before: u64,
    ) -> Result<Vec<WireBox>, WireErrorKind> {
        let count = self.u32(what)?;
        let size = box_bytes(dims);
        let room = self.remaining() / size as u64;
        if u64::from(count) > room {
            return Err(WireErrorKind::CountTooLarge { what, count, room });
        }
        let total = before + u64::from(count);
        if total > u64::from(limit) {
            let what = if what == "static boxes" {
                what
            } else {
                "boxes in a step"
            };
            return Err(WireErrorKind::OverLimit {
                what,
                count: total,
                limit,
            });
        }
        let bytes = self.take(count as usize * size, what)?;
        let mut out = Vec::with_capacity(count as usize);
        let f = |c: &[u8], i: usize| f32::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
        for c in bytes.chunks_exact(size) {
            let id = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let b = if dims == 2 {
                WireBox {
                    id,
                    min: [f(c, 4), f(c, 8), 0.0],
                    max: [f(c, 12), f(c, 16), 0.0],
                }
            } else {
                WireBox {
                    id,
                    min: [f(c, 4), f(c, 8), f(c, 12)],
                    max: [f(c, 16), f(c, 20), f(c, 24)],
                }
            };
            b.check(dims)?;
            out.push(b);
        }
        Ok(out)
    }

    /// Refuses bytes left over.
    fn finish(&self) -> Result<(), WireErrorKind> {
        match self.remaining() {
            0 => Ok(()),
            len => Err(WireErrorKind::TrailingBytes {
                kind: self.kind,
                len,
            }),
        }
    }
}
