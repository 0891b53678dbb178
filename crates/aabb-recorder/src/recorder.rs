//! The recorder a game links: it takes every box of each step, diffs the step against the
//! last one, encodes it and hands it to a writer thread through a queue bounded in bytes,
//! so that the engine's thread never waits on the socket or the file (unless asked to).

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufWriter, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::wire::{
    Bye, EngineParts, EngineTree, FLAG_KEYFRAME, Hello, KIND_STEP, NONE_ID, Timing, TreeNode,
    WireBox, begin_frame, encode_bye, encode_hello, encode_magic, encode_static, end_frame,
    put_box, valid_timing_key,
};

/// The debugger's default port (on 127.0.0.1).
pub const DEFAULT_PORT: u16 = 7616;

/// The environment variable that names another port for [`debugger_addr`].
pub const PORT_ENV: &str = "AABB_DEBUGGER_PORT";

/// Where the debugger listens: 127.0.0.1 and the port in `AABB_DEBUGGER_PORT`, or
/// [`DEFAULT_PORT`] when it is unset or not a port number.
pub fn debugger_addr() -> SocketAddr {
    let port = std::env::var(PORT_ENV)
        .ok()
        .and_then(|p| p.trim().parse::<u16>().ok())
        .unwrap_or(DEFAULT_PORT);
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// How a recorder buffers and how long it waits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The most bytes waiting to be written; a step that does not fit is dropped whole (or,
    /// with `exact`, waited for). 64 MiB by default.
    pub buffer_bytes: usize,
    /// Block `end_step` until there is room instead of dropping steps (a complete recording
    /// at the cost of the engine's time). Off by default.
    pub exact: bool,
    /// The longest one write to the socket may block (a debugger that stopped reading is
    /// then given up), and the longest `finish` waits for the queue to drain. 5 s by default.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            buffer_bytes: 64 << 20,
            exact: false,
            timeout: Duration::from_secs(5),
        }
    }
}

/// What a recorder did so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Steps ended.
    pub steps: u64,
    /// Steps handed to the writer and not lost by it.
    pub steps_sent: u64,
    /// Steps not sent: the buffer was full, the step was over the frame limit, or the
    /// socket or file failed.
    pub steps_dropped: u64,
    /// Bytes written to the socket or file.
    pub bytes_sent: u64,
    /// Boxes left out: NaN or infinite, min > max, added twice in a step, a moving box with
    /// a static box's id, added outside a step, of the wrong dimension.
    pub boxes_rejected: u64,
    /// Parts of the engine's broad phase left out: a fat box, pair, tree node or timing
    /// that is not finite, names an id that is not a box of the step, or comes twice.
    pub parts_rejected: u64,
    /// Why the last box, part or step was left out.
    pub last_rejection: Option<String>,
    /// Why the socket or file stopped taking bytes, if it did.
    pub error: Option<String>,
    /// Whether the socket or file still takes bytes.
    pub connected: bool,
}

/// What [`Recorder::end_step`] did with the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepStatus {
    /// Queued for the writer.
    Queued,
    /// Dropped (counted in [`Stats::steps_dropped`]); the next step sent is a keyframe.
    Dropped,
    /// There was no step to end.
    NoStep,
}

/// Where a recorder's bytes go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A debugger over TCP.
    Socket(SocketAddr),
    /// A stream file.
    File(PathBuf),
    /// A writer given by the caller.
    Writer,
}

/// A fast hasher for ids (a multiply and a fold), deterministic.
#[derive(Clone, Copy, Default)]
struct IdHash(u64);

impl Hasher for IdHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(u32::from(b) ^ (self.0 as u32));
        }
    }
    fn write_u32(&mut self, x: u32) {
        let h = (u64::from(x) ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
}

impl BuildHasher for IdHash {
    type Hasher = IdHash;
    fn build_hasher(&self) -> IdHash {
        IdHash(0)
    }
}

type IdMap = HashMap<u32, u32, IdHash>;
type IdSet = HashSet<u32, IdHash>;

/// The queue between the engine's thread and the writer's.
struct Queue {
    /// Frames to write, and whether each is a STEP.
    frames: VecDeque<(Vec<u8>, bool)>,
    /// Bytes in `frames` and in the frame being written.
    bytes: usize,
    /// No more frames will come: write what is queued, then stop.
    closing: bool,
    /// The writer has stopped.
    done: bool,
    error: Option<String>,
    bytes_sent: u64,
    /// STEP frames queued that the writer could not write.
    steps_lost: u64,
    /// Written frames' buffers, for the next steps.
    spare: Vec<Vec<u8>>,
}

struct Shared {
    queue: Mutex<Queue>,
    cond: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Where the diff of the open step stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Every box so far had the id of the box at its index in the last step.
    Same,
    /// Every box of the last step came, in order; the boxes after them are new.
    Appending,
    /// The order differs from the last step's: diffed through a map at the end.
    Shuffled,
}

/// Streams a physics engine's boxes, step by step, to the debugger or a stream file.
///
/// Add every box of every step; the recorder sends what changed. Nothing a peer or a box
/// does makes it panic or return an error into the frame loop: problems are counted in
/// [`Recorder::stats`]. Dropping it sends the end of the stream, as [`Recorder::finish`].
pub struct Recorder {
    dims: u8,
    options: Options,
    shared: Arc<Shared>,
    writer: Option<JoinHandle<()>>,
    socket: Option<TcpStream>,
    target: Target,
    finished: bool,
    /// The writer stopped: steps are counted dropped without being diffed.
    dead: bool,

    step: u64,
    next_step: u64,
    in_step: bool,
    started: bool,
    keyframe_next: bool,
    statics: Vec<WireBox>,
    static_ids: IdSet,

    /// The last step's boxes, in the order added.
    prev: Vec<WireBox>,
    /// The index in `prev` of each of its ids.
    prev_pos: IdMap,
    cur: Vec<WireBox>,
    order: Order,
    appeared: Vec<u8>,
    appeared_n: u32,
    moved: Vec<u8>,
    moved_n: u32,
    gone: Vec<u8>,
    gone_n: u32,
    scratch_pos: IdMap,
    scratch_boxes: Vec<WireBox>,
    /// The engine's broad phase of the open step, as added.
    parts: EngineParts,
    /// The bytes of each part (tags 1 to 4) in the last STEP queued: a part the same in the
    /// next step goes as an empty section (the format's "same as the previous step").
    last_sections: [Option<Vec<u8>>; 4],

    steps: u64,
    steps_queued: u64,
    steps_dropped: u64,
    boxes_rejected: u64,
    parts_rejected: u64,
    last_rejection: Option<String>,
}

impl Recorder {
    /// Connects to a debugger listening at `addr` (e.g. [`debugger_addr`]) and sends the
    /// handshake, with default [`Options`].
    pub fn connect(addr: impl ToSocketAddrs, hello: Hello) -> io::Result<Self> {
        Self::connect_with(addr, hello, Options::default())
    }

    /// [`Recorder::connect`] with options.
    pub fn connect_with(
        addr: impl ToSocketAddrs,
        hello: Hello,
        options: Options,
    ) -> io::Result<Self> {
        hello
            .check()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let mut last = io::Error::new(io::ErrorKind::InvalidInput, "no address to connect to");
        for a in addr.to_socket_addrs()? {
            match TcpStream::connect_timeout(&a, options.timeout) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    stream.set_write_timeout(Some(options.timeout))?;
                    let cut = stream.try_clone()?;
                    let sink = Box::new(SocketSink(stream));
                    return Self::start(sink, Target::Socket(a), Some(cut), hello, options);
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Writes a stream file at `path` (created or emptied), with default [`Options`].
    pub fn to_file(path: impl AsRef<Path>, hello: Hello) -> io::Result<Self> {
        Self::to_file_with(path, hello, Options::default())
    }

    /// [`Recorder::to_file`] with options.
    pub fn to_file_with(
        path: impl AsRef<Path>,
        hello: Hello,
        options: Options,
    ) -> io::Result<Self> {
        hello
            .check()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let path = path.as_ref();
        let file = File::create(path)?;
        let sink = Box::new(BufWriter::with_capacity(1 << 20, file));
        Self::start(sink, Target::File(path.to_owned()), None, hello, options)
    }

    /// Connects to the debugger at `addr`, or, when none listens there, writes a stream file
    /// at `path`; [`Recorder::target`] tells which.
    pub fn connect_or_file(
        addr: impl ToSocketAddrs,
        path: impl AsRef<Path>,
        hello: Hello,
    ) -> io::Result<Self> {
        Self::connect_or_file_with(addr, path, hello, Options::default())
    }

    /// [`Recorder::connect_or_file`] with options.
    pub fn connect_or_file_with(
        addr: impl ToSocketAddrs,
        path: impl AsRef<Path>,
        hello: Hello,
        options: Options,
    ) -> io::Result<Self> {
        match Self::connect_with(addr, hello.clone(), options.clone()) {
            Ok(r) => Ok(r),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => Err(e),
            Err(_) => Self::to_file_with(path, hello, options),
        }
    }

    /// Writes the stream to `writer` (a `Vec<u8>` behind a lock, a pipe...), with default
    /// [`Options`]. Fails only on an invalid handshake.
    pub fn to_writer(writer: impl Write + Send + 'static, hello: Hello) -> io::Result<Self> {
        Self::to_writer_with(writer, hello, Options::default())
    }

    /// [`Recorder::to_writer`] with options.
    pub fn to_writer_with(
        writer: impl Write + Send + 'static,
        hello: Hello,
        options: Options,
    ) -> io::Result<Self> {
        hello
            .check()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        Self::start(Box::new(writer), Target::Writer, None, hello, options)
    }

    fn start(
        sink: Box<dyn Write + Send>,
        target: Target,
        socket: Option<TcpStream>,
        hello: Hello,
        options: Options,
    ) -> io::Result<Self> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                frames: VecDeque::new(),
                bytes: 0,
                closing: false,
                done: false,
                error: None,
                bytes_sent: 0,
                steps_lost: 0,
                spare: Vec::new(),
            }),
            cond: Condvar::new(),
        });
        let name = match &target {
            Target::Socket(a) => format!("the debugger at {a}"),
            Target::File(p) => format!("{}", p.display()),
            Target::Writer => "the writer".to_owned(),
        };
        let thread_shared = Arc::clone(&shared);
        let writer = std::thread::Builder::new()
            .name("aabb-recorder".to_owned())
            .spawn(move || write_frames(&thread_shared, sink, &name))?;
        let mut rec = Self {
            dims: hello.dimensions,
            options,
            shared,
            writer: Some(writer),
            socket,
            target,
            finished: false,
            dead: false,
            step: 0,
            next_step: 0,
            in_step: false,
            started: false,
            keyframe_next: true,
            statics: Vec::new(),
            static_ids: IdSet::default(),
            prev: Vec::new(),
            prev_pos: IdMap::default(),
            cur: Vec::new(),
            order: Order::Same,
            appeared: Vec::new(),
            appeared_n: 0,
            moved: Vec::new(),
            moved_n: 0,
            gone: Vec::new(),
            gone_n: 0,
            scratch_pos: IdMap::default(),
            scratch_boxes: Vec::new(),
            parts: EngineParts::default(),
            last_sections: Default::default(),
            steps: 0,
            steps_queued: 0,
            steps_dropped: 0,
            boxes_rejected: 0,
            parts_rejected: 0,
            last_rejection: None,
        };
        let mut out = Vec::new();
        encode_magic(&mut out);
        encode_hello(&mut out, &hello)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        rec.queue(out, false, true);
        Ok(rec)
    }

    /// Where the bytes go.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// 2 or 3.
    pub fn dimensions(&self) -> u8 {
        self.dims
    }

    /// Adds a box that never moves (a wall, the ground); only before the first step.
    /// `min` and `max` have 2 or 3 coordinates, as the handshake said.
    pub fn static_box(&mut self, id: u32, min: &[f32], max: &[f32]) {
        let Some(b) = self.make_box(id, min, max) else {
            return;
        };
        if self.started {
            self.reject(format!("static box {id} added after the first step"));
        } else if !valid(&b, self.dims) {
            self.reject(format!("static box {id}: {b:?} is not finite or min > max"));
        } else if !self.static_ids.insert(id) {
            self.reject(format!("static box {id} added twice"));
        } else {
            self.statics.push(b);
        }
    }

    /// Begins a step (ending the open one, if any).
    pub fn begin_step(&mut self) {
        if self.in_step {
            self.end_step();
        }
        if !self.started {
            self.started = true;
            if !self.statics.is_empty() {
                let mut out = self.take_buffer();
                // A STATIC over the frame limit is left out (its steps still go).
                match encode_static(&mut out, self.dims, &self.statics) {
                    Ok(()) => {
                        self.queue(out, false, true);
                    }
                    Err(e) => {
                        self.last_rejection = Some(format!("the static boxes: {e}"));
                        self.boxes_rejected += self.statics.len() as u64;
                    }
                }
            }
        }
        self.in_step = true;
        self.step = self.next_step;
        self.next_step += 1;
        self.order = Order::Same;
        self.cur.clear();
        self.appeared.clear();
        self.appeared_n = 0;
        self.moved.clear();
        self.moved_n = 0;
        self.gone.clear();
        self.gone_n = 0;
        self.parts = EngineParts::default();
    }

    /// Adds a box to the open step: `min` and `max` have as many coordinates as the
    /// handshake's dimensions. Add every box, every step.
    pub fn add_box(&mut self, id: u32, min: &[f32], max: &[f32]) {
        if let Some(b) = self.make_box(id, min, max) {
            self.push(b);
        }
    }

    /// Adds a 2D box to the open step (the fastest way for a 2D stream).
    #[inline]
    pub fn add_box_2d(&mut self, id: u32, min: [f32; 2], max: [f32; 2]) {
        if self.dims != 2 {
            self.reject(format!("box {id}: 2D in a {}D stream", self.dims));
            return;
        }
        self.push(WireBox {
            id,
            min: [min[0], min[1], 0.0],
            max: [max[0], max[1], 0.0],
        });
    }

    /// Adds a 3D box to the open step.
    #[inline]
    pub fn add_box_3d(&mut self, id: u32, min: [f32; 3], max: [f32; 3]) {
        if self.dims != 3 {
            self.reject(format!("box {id}: 3D in a {}D stream", self.dims));
            return;
        }
        self.push(WireBox { id, min, max });
    }

    fn make_box(&mut self, id: u32, min: &[f32], max: &[f32]) -> Option<WireBox> {
        let d = usize::from(self.dims);
        if min.len() != d || max.len() != d {
            self.reject(format!(
                "box {id}: {} and {} coordinates in a {d}D stream",
                min.len(),
                max.len()
            ));
            return None;
        }
        let mut b = WireBox {
            id,
            min: [0.0; 3],
            max: [0.0; 3],
        };
        b.min[..d].copy_from_slice(min);
        b.max[..d].copy_from_slice(max);
        Some(b)
    }

    fn reject(&mut self, why: String) {
        self.boxes_rejected += 1;
        self.last_rejection = Some(why);
    }

    #[inline]
    fn push(&mut self, b: WireBox) {
        if !self.in_step {
            self.reject(format!("box {} added outside a step", b.id));
            return;
        }
        if self.dead {
            return;
        }
        if !valid(&b, self.dims) {
            self.reject(format!(
                "box {} is not finite or has min > max: {:?} {:?}",
                b.id, b.min, b.max
            ));
            return;
        }
        let i = self.cur.len();
        match self.order {
            Order::Same => match self.prev.get(i) {
                Some(p) if p.id == b.id => {
                    if !p.same_bits(&b) {
                        put_box(&mut self.moved, self.dims, &b);
                        self.moved_n += 1;
                    }
                }
                Some(_) => self.order = Order::Shuffled,
                None => {
                    self.order = Order::Appending;
                    return self.push_new(b);
                }
            },
            Order::Appending => return self.push_new(b),
            Order::Shuffled => {}
        }
        self.cur.push(b);
    }

    /// A box after all of the last step's: a new id.
    fn push_new(&mut self, b: WireBox) {
        if self.prev_pos.contains_key(&b.id) {
            self.reject(format!("box {} added twice in step {}", b.id, self.step));
            return;
        }
        if self.static_ids.contains(&b.id) {
            self.reject(format!("box {} has a static box's id", b.id));
            return;
        }
        self.prev_pos.insert(b.id, self.cur.len() as u32);
        put_box(&mut self.appeared, self.dims, &b);
        self.appeared_n += 1;
        self.cur.push(b);
    }

    fn reject_part(&mut self, why: String) {
        self.parts_rejected += 1;
        self.last_rejection = Some(why);
    }

    /// Whether a part may be added now (in a step); counts it rejected if not.
    fn part_allowed(&mut self, what: &str) -> bool {
        if !self.in_step {
            self.reject_part(format!("{what} added outside a step"));
            return false;
        }
        !self.dead
    }

    /// Adds the engine's fat box of the box `id` (a box of this step, moving or static) to
    /// the open step: `min` and `max` have as many coordinates as the handshake's
    /// dimensions. One per box; a box without one is left out of the debugger's pair check.
    pub fn fat_box(&mut self, id: u32, min: &[f32], max: &[f32]) {
        if !self.part_allowed("a fat box") {
            return;
        }
        let d = usize::from(self.dims);
        if min.len() != d || max.len() != d {
            self.reject_part(format!("fat box {id}: not {d} coordinates"));
            return;
        }
        let mut b = WireBox {
            id,
            min: [0.0; 3],
            max: [0.0; 3],
        };
        b.min[..d].copy_from_slice(min);
        b.max[..d].copy_from_slice(max);
        if !valid(&b, self.dims) {
            self.reject_part(format!("fat box {id} is not finite or has min > max"));
            return;
        }
        self.parts.fat_boxes.get_or_insert_with(Vec::new).push(b);
    }

    /// Says that this step sends its candidate pairs, even if [`Recorder::pair`] is not
    /// called (the engine has none): without it (or a pair) the step says nothing of pairs.
    pub fn begin_pairs(&mut self) {
        if self.part_allowed("the pairs") {
            self.parts.pairs.get_or_insert_with(Vec::new);
        }
    }

    /// Adds one of the engine's candidate pairs to the open step, in either order; the
    /// recorder sends each pair once, as `(lower id, higher id)`, sorted.
    pub fn pair(&mut self, a: u32, b: u32) {
        if !self.part_allowed("a pair") {
            return;
        }
        if a == b {
            self.reject_part(format!("pair ({a}, {b}) of one id"));
            return;
        }
        self.parts
            .pairs
            .get_or_insert_with(Vec::new)
            .push([a.min(b), a.max(b)]);
    }

    /// Sets the root of the engine's tree in the open step (`None`: an empty tree) and says
    /// that the step sends its tree.
    pub fn tree_root(&mut self, root: Option<u32>) {
        if self.part_allowed("the tree's root") {
            self.parts.tree.get_or_insert_with(EngineTree::default).root = root;
        }
    }

    /// Says that the engine's tree holds only some of the step's boxes (so the debugger
    /// does not ask every box to be in a leaf).
    pub fn tree_partial(&mut self) {
        if self.part_allowed("the tree's flags") {
            self.parts
                .tree
                .get_or_insert_with(EngineTree::default)
                .partial = true;
        }
    }

    /// Adds a node of the engine's tree to the open step (z of min and max is ignored in
    /// 2D). A node with a non-finite box, min > max or the id [`NONE_ID`] is left out.
    pub fn tree_node(&mut self, node: &TreeNode) {
        if !self.part_allowed("a tree node") {
            return;
        }
        let b = WireBox {
            id: node.id,
            min: node.min,
            max: node.max,
        };
        if node.id == NONE_ID || !valid(&b, self.dims) {
            self.reject_part(format!(
                "tree node {}: the id {NONE_ID}, or a box not finite or with min > max",
                node.id
            ));
            return;
        }
        let mut node = *node;
        if self.dims == 2 {
            node.min[2] = 0.0;
            node.max[2] = 0.0;
        }
        self.parts
            .tree
            .get_or_insert_with(EngineTree::default)
            .nodes
            .push(node);
    }

    /// Adds a timing or count of the engine to the open step: `key` is 1 to 32 bytes of
    /// `a-z`, `0-9` and `_` (see [`crate::wire::TIMING_BROAD_PHASE_NS`] and the other
    /// keys), `value` finite; a key at most once a step, at most 64 a step.
    pub fn timing(&mut self, key: &str, value: f64) {
        if !self.part_allowed("a timing") {
            return;
        }
        let timings = self.parts.timings.get_or_insert_with(Vec::new);
        let why = if !valid_timing_key(key) {
            Some(format!(
                "timing key {key:?} is not 1 to 32 bytes of a-z, 0-9, _"
            ))
        } else if !value.is_finite() {
            Some(format!("timing {key} is {value}"))
        } else if timings.iter().any(|t| t.key == key) {
            Some(format!("timing {key} added twice in step {}", self.step))
        } else if timings.len() >= crate::wire::MAX_TIMINGS {
            Some(format!(
                "timing {key}: over 64 timings in step {}",
                self.step
            ))
        } else {
            timings.push(Timing {
                key: key.to_owned(),
                value,
            });
            None
        };
        if let Some(why) = why {
            self.reject_part(why);
        }
    }

    /// The open step's parts, checked against its boxes (`prev_pos` holds the step's ids
    /// by then): fat boxes and pairs of ids not in the step, and repeats, are left out.
    fn checked_parts(&mut self) -> EngineParts {
        let mut parts = std::mem::take(&mut self.parts);
        let mut rejected = Vec::new();
        {
            let present =
                |id: u32| self.prev_pos.contains_key(&id) || self.static_ids.contains(&id);
            if let Some(fat) = &mut parts.fat_boxes {
                let mut seen = IdSet::default();
                fat.retain(|b| {
                    let ok = present(b.id) && seen.insert(b.id);
                    if !ok {
                        rejected.push(format!(
                            "fat box {}: not a box of step {}, or twice",
                            b.id, self.step
                        ));
                    }
                    ok
                });
            }
            if let Some(pairs) = &mut parts.pairs {
                pairs.sort_unstable();
                let before = pairs.len();
                pairs.dedup();
                for _ in pairs.len()..before {
                    rejected.push(format!("a pair twice in step {}", self.step));
                }
                pairs.retain(|&[a, b]| {
                    let ok = present(a) && present(b);
                    if !ok {
                        rejected.push(format!("pair ({a}, {b}): not boxes of step {}", self.step));
                    }
                    ok
                });
            }
        }
        for why in rejected {
            self.reject_part(why);
        }
        parts
    }

    /// Ends the open step and sends it, or drops it when the buffer is full (the next step
    /// sent is then a keyframe). Never fails; blocks only with [`Options::exact`].
    pub fn end_step(&mut self) -> StepStatus {
        if !self.in_step {
            return StepStatus::NoStep;
        }
        self.in_step = false;
        self.steps += 1;
        if self.dead {
            self.steps_dropped += 1;
            return StepStatus::Dropped;
        }
        match self.order {
            Order::Same => {
                for p in &self.prev[self.cur.len()..] {
                    self.gone.extend_from_slice(&p.id.to_le_bytes());
                    self.prev_pos.remove(&p.id);
                }
                self.gone_n = (self.prev.len() - self.cur.len()) as u32;
            }
            Order::Appending => {}
            Order::Shuffled => self.rediff(),
        }
        let status = self.send_step();
        std::mem::swap(&mut self.prev, &mut self.cur);
        self.cur.clear();
        status
    }

    /// The diff of a step whose order differs from the last one's, through maps; leaves
    /// out ids added twice and new ids of static boxes.
    fn rediff(&mut self) {
        let mut pos = std::mem::take(&mut self.scratch_pos);
        let mut kept = std::mem::take(&mut self.scratch_boxes);
        pos.clear();
        kept.clear();
        self.appeared.clear();
        self.moved.clear();
        self.gone.clear();
        let (mut appeared_n, mut moved_n, mut gone_n) = (0, 0, 0);
        let cur = std::mem::take(&mut self.cur);
        for b in &cur {
            if pos.contains_key(&b.id) {
                self.reject(format!("box {} added twice in step {}", b.id, self.step));
                continue;
            }
            match self.prev_pos.get(&b.id) {
                Some(&p) => {
                    if !self.prev[p as usize].same_bits(b) {
                        put_box(&mut self.moved, self.dims, b);
                        moved_n += 1;
                    }
                }
                None => {
                    if self.static_ids.contains(&b.id) {
                        self.reject(format!("box {} has a static box's id", b.id));
                        continue;
                    }
                    put_box(&mut self.appeared, self.dims, b);
                    appeared_n += 1;
                }
            }
            pos.insert(b.id, kept.len() as u32);
            kept.push(*b);
        }
        for p in &self.prev {
            if !pos.contains_key(&p.id) {
                self.gone.extend_from_slice(&p.id.to_le_bytes());
                gone_n += 1;
            }
        }
        self.appeared_n = appeared_n;
        self.moved_n = moved_n;
        self.gone_n = gone_n;
        self.scratch_pos = std::mem::replace(&mut self.prev_pos, pos);
        self.scratch_boxes = cur;
        self.cur = kept;
    }

    /// Encodes the step (`cur` against `prev`) and queues it.
    fn send_step(&mut self) -> StepStatus {
        let mut out = self.take_buffer();
        let at = begin_frame(&mut out, KIND_STEP);
        out.extend_from_slice(&self.step.to_le_bytes());
        if self.keyframe_next {
            out.push(FLAG_KEYFRAME);
            out.extend_from_slice(&(self.cur.len() as u32).to_le_bytes());
            out.reserve(self.cur.len() * crate::wire::box_bytes(self.dims) + 8);
            for b in &self.cur {
                put_box(&mut out, self.dims, b);
            }
            out.extend_from_slice(&[0; 8]);
        } else {
            out.push(0);
            for (n, bytes) in [
                (self.appeared_n, &self.appeared),
                (self.moved_n, &self.moved),
                (self.gone_n, &self.gone),
            ] {
                out.extend_from_slice(&n.to_le_bytes());
                out.extend_from_slice(bytes);
            }
        }
        // Each part whole, or empty when it is the same as in the last STEP queued.
        let mut sections: [Option<Vec<u8>>; 4] = Default::default();
        if !self.parts.is_empty() {
            for s in self.checked_parts().to_sections(self.dims) {
                let k = usize::from(s.tag - 1);
                let same = !self.keyframe_next && self.last_sections[k].as_ref() == Some(&s.bytes);
                out.push(s.tag);
                if same {
                    out.extend_from_slice(&0u32.to_le_bytes());
                } else {
                    out.extend_from_slice(&(s.bytes.len() as u32).to_le_bytes());
                    out.extend_from_slice(&s.bytes);
                }
                sections[k] = Some(s.bytes);
            }
        }
        if let Err(e) = end_frame(&mut out, at) {
            self.last_rejection = Some(format!("step {}: {e}", self.step));
            self.steps_dropped += 1;
            self.keyframe_next = true;
            self.last_sections = Default::default();
            return StepStatus::Dropped;
        }
        if self.queue(out, true, false) {
            self.steps_queued += 1;
            self.keyframe_next = false;
            self.last_sections = sections;
            StepStatus::Queued
        } else {
            self.steps_dropped += 1;
            self.keyframe_next = true;
            self.last_sections = Default::default();
            StepStatus::Dropped
        }
    }

    fn take_buffer(&self) -> Vec<u8> {
        let mut b = self.shared.lock().spare.pop().unwrap_or_default();
        b.clear();
        b
    }

    /// Hands a frame to the writer; `force` queues it whatever the buffer holds. False
    /// when the buffer is full (and not `exact`) or the writer has stopped.
    fn queue(&mut self, frame: Vec<u8>, is_step: bool, force: bool) -> bool {
        let len = frame.len();
        let cap = self.options.buffer_bytes;
        let mut q = self.shared.lock();
        let full = |q: &Queue| q.bytes > 0 && q.bytes + len > cap;
        if !force && self.options.exact {
            while !q.done && full(&q) {
                q = self.shared.cond.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        }
        if q.done {
            self.dead = true;
            return false;
        }
        if !force && full(&q) {
            // Give the buffer back for the next step.
            if q.spare.len() < 4 {
                q.spare.push(frame);
            }
            return false;
        }
        q.bytes += len;
        q.frames.push_back((frame, is_step));
        self.shared.cond.notify_all();
        true
    }

    /// What the recorder did so far.
    pub fn stats(&self) -> Stats {
        let q = self.shared.lock();
        Stats {
            steps: self.steps,
            steps_sent: self.steps_queued - q.steps_lost,
            steps_dropped: self.steps_dropped + q.steps_lost,
            bytes_sent: q.bytes_sent,
            boxes_rejected: self.boxes_rejected,
            parts_rejected: self.parts_rejected,
            last_rejection: self.last_rejection.clone(),
            error: q.error.clone(),
            connected: !q.done,
        }
    }

    /// Ends the open step, sends the end of the stream (BYE), waits for the writer to write
    /// what is queued (at most [`Options::timeout`] for a socket, then cuts it) and returns
    /// the final counts. Later calls return the same counts.
    pub fn finish(&mut self) -> Stats {
        if self.finished {
            return self.stats();
        }
        if self.in_step {
            self.end_step();
        }
        self.finished = true;
        let s = self.stats();
        let mut out = self.take_buffer();
        encode_bye(
            &mut out,
            &Bye {
                steps_sent: s.steps_sent,
                steps_dropped: s.steps_dropped,
            },
        );
        self.queue(out, false, true);
        let deadline = Instant::now() + self.options.timeout;
        {
            let mut q = self.shared.lock();
            q.closing = true;
            self.shared.cond.notify_all();
            if let Some(socket) = &self.socket {
                while !q.done {
                    let now = Instant::now();
                    if now >= deadline {
                        // A debugger that stopped reading: cut the connection.
                        let _ = socket.shutdown(Shutdown::Both);
                        break;
                    }
                    q = match self.shared.cond.wait_timeout(q, deadline - now) {
                        Ok((q, _)) => q,
                        Err(e) => e.into_inner().0,
                    };
                }
            }
        }
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
        self.stats()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Whether a box can go on the wire: finite, min <= max on each axis.
#[inline]
fn valid(b: &WireBox, dims: u8) -> bool {
    let d = if dims == 2 { 2 } else { 3 };
    (0..d).all(|k| b.min[k].is_finite() && b.max[k].is_finite() && b.min[k] <= b.max[k])
}

/// A socket as the writer's sink, shut down for writing once the stream ends.
struct SocketSink(TcpStream);

impl Write for SocketSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl Drop for SocketSink {
    fn drop(&mut self) {
        let _ = self.0.shutdown(Shutdown::Write);
    }
}

/// The writer thread: writes queued frames until the queue closes or a write fails.
fn write_frames(shared: &Shared, mut sink: Box<dyn Write + Send>, name: &str) {
    loop {
        let next = {
            let mut q = shared.lock();
            loop {
                if let Some(f) = q.frames.pop_front() {
                    break Some(f);
                }
                if q.closing {
                    break None;
                }
                q = shared.cond.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        let Some((frame, is_step)) = next else {
            break;
        };
        let mut result = sink.write_all(&frame);
        // Flush when the queue runs dry, so that the file or socket is current between steps.
        if result.is_ok() && shared.lock().frames.is_empty() {
            result = sink.flush();
        }
        let mut q = shared.lock();
        q.bytes = q.bytes.saturating_sub(frame.len());
        match result {
            Ok(()) => {
                q.bytes_sent += frame.len() as u64;
                if q.spare.len() < 4 {
                    q.spare.push(frame);
                }
                shared.cond.notify_all();
            }
            Err(e) => {
                let lost = q.frames.iter().filter(|f| f.1).count() as u64;
                q.steps_lost += lost + u64::from(is_step);
                q.frames.clear();
                q.bytes = 0;
                q.error = Some(describe_write_error(name, &e));
                q.done = true;
                shared.cond.notify_all();
                return;
            }
        }
    }
    let result = sink.flush();
    drop(sink);
    let mut q = shared.lock();
    if let Err(e) = result {
        q.error = Some(describe_write_error(name, &e));
    }
    q.done = true;
    shared.cond.notify_all();
}

fn describe_write_error(name: &str, e: &io::Error) -> String {
    use io::ErrorKind as K;
    match e.kind() {
        K::WouldBlock | K::TimedOut => {
            format!("writing to {name}: no progress within the timeout (it stopped reading)")
        }
        K::BrokenPipe | K::ConnectionReset | K::ConnectionAborted | K::NotConnected => {
            format!("writing to {name}: the connection was closed ({e})")
        }
        _ => format!("writing to {name}: {e}"),
    }
}
