//! The recorder a game links: it takes every box of each step, diffs the step against the
//! last one, encodes it and hands it to a writer thread through a queue bounded in bytes,
//! so that the engine's thread never waits on the socket or the file (unless asked to).

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
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
    /// at the cost of the engine's time), at most [`Options::timeout`] a step. Off by default.
    pub exact: bool,
    /// The longest a write to the socket or file may make no progress (a debugger or a
    /// FIFO's reader that stopped reading is then given up), the longest `exact` waits for
    /// room, and the longest `finish` waits for the queue to drain. 5 s by default.
    pub timeout: Duration,
}

impl Options {
    /// The options with a timeout of at least 1 ms (a zero timeout cannot be set on a
    /// socket).
    fn bounded(mut self) -> Self {
        self.timeout = self.timeout.max(Duration::from_millis(1));
        self
    }
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
    /// Steps handed to the writer and not lost by it: written to the target in use (see
    /// [`Stats::target`]) or waiting to be.
    pub steps_sent: u64,
    /// Steps not sent: the buffer was full, the step was over the frame limit, the socket
    /// or file failed, `finish` cut what was still queued, or the debugger refused them.
    pub steps_dropped: u64,
    /// Of `steps_dropped`, the steps written to a debugger that then refused the stream.
    pub steps_refused: u64,
    /// Bytes written to the target in use.
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
    /// Where the bytes go in the end: the debugger, or the file `connect_or_file` fell
    /// back to.
    pub target: Target,
    /// Why the recorder left the debugger for the file, if it did (the debugger refused
    /// the stream, or closed the connection before its end).
    pub fallback: Option<String>,
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// A debugger over TCP.
    Socket(SocketAddr),
    /// A stream file.
    File(PathBuf),
    /// A writer given by the caller.
    #[default]
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

/// What a queued frame is, for the writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The magic and the HELLO.
    Header,
    /// The STATIC frame.
    Static,
    /// A STEP frame, a keyframe or not.
    Step { keyframe: bool },
    /// The end of the stream: the writer encodes the BYE with what it wrote of `steps`.
    Bye { steps: u64 },
}

/// What the reader of a socket saw: the debugger refused the stream or closed it.
#[derive(Clone, Debug)]
struct Refusal {
    /// The reason from the debugger's `AABB refused: REASON` line, or what happened.
    reason: String,
    /// Whether the debugger sent a refusal line (not just closed).
    said: bool,
    /// Whether the connection was reset (closed with what we sent unread).
    reset: bool,
}

/// The queue between the engine's thread and the writer's.
struct Queue {
    /// Frames to write.
    frames: VecDeque<(Vec<u8>, Kind)>,
    /// Bytes in `frames` and in the frame being written.
    bytes: usize,
    /// No more frames will come: write what is queued, then stop.
    closing: bool,
    /// The writer has stopped (or `finish` gave up on it).
    done: bool,
    error: Option<String>,
    /// Bytes written to the target in use.
    bytes_sent: u64,
    /// STEP frames queued that never reached the target in use.
    steps_lost: u64,
    /// Of `steps_lost`, those written to a debugger that refused them.
    steps_refused: u64,
    /// Written frames' buffers, for the next steps.
    spare: Vec<Vec<u8>>,
    /// The writer is writing a STEP frame now.
    writing_step: bool,
    /// `finish` gave up waiting: what the writer still held was counted lost.
    cut: bool,
    /// The writer changed target: the engine's next step goes as a keyframe.
    keyframe_wanted: bool,
    /// What the socket's reader saw (a refusal or a close), for the writer.
    refused: Option<Refusal>,
    /// The BYE was written: the peer closing is no refusal then.
    ended: bool,
    /// Where the bytes go now.
    target: Target,
    /// Why the writer left the debugger for the file.
    fallback: Option<String>,
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

    /// [`Recorder::connect`] with options. A debugger that refuses the stream (it writes
    /// `AABB refused: REASON`) or closes before its end stops it; [`Stats::error`] says why.
    pub fn connect_with(
        addr: impl ToSocketAddrs,
        hello: Hello,
        options: Options,
    ) -> io::Result<Self> {
        Self::connect_then(addr, hello, options, None)
    }

    fn connect_then(
        addr: impl ToSocketAddrs,
        hello: Hello,
        options: Options,
        fallback: Option<PathBuf>,
    ) -> io::Result<Self> {
        check_hello(&hello)?;
        let options = options.bounded();
        let mut last = io::Error::new(io::ErrorKind::InvalidInput, "no address to connect to");
        for a in addr.to_socket_addrs()? {
            match TcpStream::connect_timeout(&a, options.timeout) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    stream.set_write_timeout(Some(options.timeout))?;
                    stream.set_read_timeout(Some(READ_TICK))?;
                    let cut = stream.try_clone()?;
                    let reader = stream.try_clone()?;
                    let rec = Self::start(
                        Sink::Socket(stream),
                        Target::Socket(a),
                        Some(cut),
                        hello,
                        options,
                        fallback,
                    )?;
                    let shared = Arc::clone(&rec.shared);
                    // Without the reader, a refusal shows as the write that fails.
                    let _no_reader = std::thread::Builder::new()
                        .name("aabb-recorder-refusal".to_owned())
                        .spawn(move || read_refusal(&shared, reader));
                    return Ok(rec);
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

    /// [`Recorder::to_file`] with options. The file is opened without waiting: a FIFO that
    /// no process reads is an error at once (not a hang), and writes that make no progress
    /// for [`Options::timeout`] give the file up.
    pub fn to_file_with(
        path: impl AsRef<Path>,
        hello: Hello,
        options: Options,
    ) -> io::Result<Self> {
        check_hello(&hello)?;
        let path = path.as_ref();
        let file = open_file(path)?;
        Self::start(
            Sink::File(file),
            Target::File(path.to_owned()),
            None,
            hello,
            options,
            None,
        )
    }

    /// Connects to the debugger at `addr`, or, when none listens there, writes a stream file
    /// at `path`; [`Recorder::target`] tells which. When the debugger refuses the stream
    /// later (another engine is live) or closes it before its end, the writer thread goes
    /// on in the file: a valid stream from the next step on, the steps lost in between
    /// counted dropped (the file's step numbers carry the gap).
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
        let path = path.as_ref();
        match Self::connect_then(addr, hello.clone(), options.clone(), Some(path.to_owned())) {
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
        check_hello(&hello)?;
        Self::start(
            Sink::Writer(Box::new(writer)),
            Target::Writer,
            None,
            hello,
            options,
            None,
        )
    }

    fn start(
        sink: Sink,
        target: Target,
        socket: Option<TcpStream>,
        hello: Hello,
        options: Options,
        fallback: Option<PathBuf>,
    ) -> io::Result<Self> {
        let options = options.bounded();
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                frames: VecDeque::new(),
                bytes: 0,
                closing: false,
                done: false,
                error: None,
                bytes_sent: 0,
                steps_lost: 0,
                steps_refused: 0,
                spare: Vec::new(),
                writing_step: false,
                cut: false,
                keyframe_wanted: false,
                refused: None,
                ended: false,
                target: target.clone(),
                fallback: None,
            }),
            cond: Condvar::new(),
        });
        let fallback_retained = fallback.as_ref().map(|_| Vec::new());
        let mut w = FrameWriter {
            shared: Arc::clone(&shared),
            name: target_name(&target),
            sink,
            timeout: options.timeout,
            fallback,
            header: None,
            statics: None,
            steps_here: 0,
            need_keyframe: false,
            retained: fallback_retained,
            retain_budget: options.buffer_bytes.min(MAX_RETAINED),
        };
        let writer = std::thread::Builder::new()
            .name("aabb-recorder".to_owned())
            .spawn(move || w.run())?;
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
        rec.queue(out, Kind::Header, true);
        Ok(rec)
    }

    /// Where the bytes go now: the debugger, a file (the one asked for, or the one
    /// `connect_or_file` fell back to), or the writer.
    pub fn target(&self) -> Target {
        self.shared.lock().target.clone()
    }

    /// Where the bytes went first.
    pub fn first_target(&self) -> &Target {
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
                        self.queue(out, Kind::Static, true);
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
                "timing key {:?}{} is not 1 to 32 bytes of a-z, 0-9, _",
                key.chars().take(40).collect::<String>(),
                if key.chars().nth(40).is_some() {
                    "..."
                } else {
                    ""
                }
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
        let mut out = {
            let mut q = self.shared.lock();
            if q.keyframe_wanted {
                // The writer changed target: the new one starts from a whole step.
                q.keyframe_wanted = false;
                self.keyframe_next = true;
            }
            q.spare.pop().unwrap_or_default()
        };
        out.clear();
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
        let kind = Kind::Step {
            keyframe: self.keyframe_next,
        };
        if self.queue(out, kind, false) {
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
    /// when the buffer is full (and not `exact`, or no room came within the timeout) or
    /// the writer has stopped.
    fn queue(&mut self, frame: Vec<u8>, kind: Kind, force: bool) -> bool {
        let len = frame.len();
        let cap = self.options.buffer_bytes;
        let mut q = self.shared.lock();
        let full = |q: &Queue| q.bytes > 0 && q.bytes + len > cap;
        if !force && self.options.exact {
            let deadline = Instant::now() + self.options.timeout;
            while !q.done && full(&q) {
                let now = Instant::now();
                if now >= deadline {
                    self.last_rejection = Some(format!(
                        "step {}: no room in the buffer within the timeout ({:?})",
                        self.step, self.options.timeout
                    ));
                    break;
                }
                q = match self.shared.cond.wait_timeout(q, deadline - now) {
                    Ok((q, _)) => q,
                    Err(e) => e.into_inner().0,
                };
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
        q.frames.push_back((frame, kind));
        self.shared.cond.notify_all();
        true
    }

    /// What the recorder did so far.
    pub fn stats(&self) -> Stats {
        let q = self.shared.lock();
        Stats {
            steps: self.steps,
            steps_sent: self.steps_queued.saturating_sub(q.steps_lost),
            steps_dropped: self.steps_dropped + q.steps_lost,
            steps_refused: q.steps_refused,
            bytes_sent: q.bytes_sent,
            boxes_rejected: self.boxes_rejected,
            parts_rejected: self.parts_rejected,
            last_rejection: self.last_rejection.clone(),
            error: q.error.clone(),
            connected: !q.done,
            target: q.target.clone(),
            fallback: q.fallback.clone(),
        }
    }

    /// Ends the open step, sends the end of the stream (BYE), waits for the writer to write
    /// what is queued, at most [`Options::timeout`] (then cuts the socket or leaves the
    /// file, counting the steps not written as dropped) and returns the final counts.
    /// Later calls return the same counts.
    pub fn finish(&mut self) -> Stats {
        if self.finished {
            return self.stats();
        }
        if self.in_step {
            self.end_step();
        }
        self.finished = true;
        let mut out = self.take_buffer();
        // The writer encodes the BYE with what it wrote.
        out.clear();
        self.queue(out, Kind::Bye { steps: self.steps }, true);
        let deadline = Instant::now() + self.options.timeout;
        let finished = {
            let mut q = self.shared.lock();
            q.closing = true;
            self.shared.cond.notify_all();
            loop {
                if q.done {
                    break !q.cut;
                }
                let now = Instant::now();
                if now >= deadline && q.ended {
                    // All written; the writer only waits for a late refusal: stop it.
                    q.cut = true;
                    q.done = true;
                    self.shared.cond.notify_all();
                    break false;
                }
                if now >= deadline {
                    // A sink that stopped taking bytes: what it holds is lost.
                    let lost = q.frames.iter().filter(|f| is_step(f.1)).count() as u64
                        + u64::from(q.writing_step);
                    q.steps_lost += lost;
                    q.frames.clear();
                    q.bytes = 0;
                    q.cut = true;
                    q.done = true;
                    q.error = Some(format!(
                        "closing: {} took nothing more within the timeout ({:?}); {lost} \
                         steps not written were cut",
                        target_name(&q.target),
                        self.options.timeout
                    ));
                    if let Some(socket) = &self.socket {
                        // The writer's blocked write returns; the socket is given up.
                        let _cut = socket.shutdown(Shutdown::Both);
                    }
                    self.shared.cond.notify_all();
                    break false;
                }
                q = match self.shared.cond.wait_timeout(q, deadline - now) {
                    Ok((q, _)) => q,
                    Err(e) => e.into_inner().0,
                };
            }
        };
        if let Some(w) = self.writer.take()
            && finished
        {
            // The writer has stopped: joining does not wait. A writer still blocked in a
            // caller's writer after the cut is left to end on its own.
            let _panicked = w.join();
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

/// How often the socket's reader looks whether the stream has ended.
const READ_TICK: Duration = Duration::from_millis(50);

/// The most bytes of a stream the writer keeps to replay into the fallback file.
const MAX_RETAINED: usize = 16 << 20;

/// The longest the writer waits, after the stream's end, for a debugger's refusal.
const REFUSAL_GRACE: Duration = Duration::from_millis(500);

/// The longest a refusal line may be, newline included.
const MAX_REFUSAL: usize = 256;

/// What a debugger writes, then closes, when it refuses a stream.
const REFUSAL_PREFIX: &[u8] = b"AABB refused: ";

fn check_hello(hello: &Hello) -> io::Result<()> {
    hello
        .check()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))
}

fn is_step(kind: Kind) -> bool {
    matches!(kind, Kind::Step { .. })
}

fn target_name(target: &Target) -> String {
    match target {
        Target::Socket(a) => format!("the debugger at {a}"),
        Target::File(p) => format!("{}", p.display()),
        Target::Writer => "the writer".to_owned(),
    }
}

/// `O_NONBLOCK` of the platforms whose value is known; 0 (a blocking open) elsewhere.
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(any(
        target_arch = "mips",
        target_arch = "mips64",
        target_arch = "sparc",
        target_arch = "sparc64"
    ))
))]
const O_NONBLOCK: i32 = 0o4000;
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "mips", target_arch = "mips64")
))]
const O_NONBLOCK: i32 = 0x80;
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "sparc", target_arch = "sparc64")
))]
const O_NONBLOCK: i32 = 0x4000;
#[cfg(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly"
))]
const O_NONBLOCK: i32 = 0x4;
#[cfg(all(
    unix,
    not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    ))
))]
const O_NONBLOCK: i32 = 0;

/// `ENXIO`: the open of a FIFO for writing that no process reads.
const ENXIO: i32 = 6;

/// Creates or empties the stream file at `path` without waiting: a FIFO with no reader is
/// an error at once, named as such.
fn open_file(path: &Path) -> io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(O_NONBLOCK);
    }
    o.open(path).map_err(|e| {
        if e.raw_os_error() == Some(ENXIO) {
            io::Error::new(
                e.kind(),
                format!(
                    "{}: a FIFO that no process reads (opened without waiting: {e})",
                    path.display()
                ),
            )
        } else {
            io::Error::new(e.kind(), format!("{}: {e}", path.display()))
        }
    })
}

/// Where the writer thread writes.
enum Sink {
    /// A debugger's socket, its writes bounded by its write timeout.
    Socket(TcpStream),
    /// A file or FIFO opened without waiting, its writes bounded by the timeout.
    File(File),
    /// A writer given by the caller.
    Writer(Box<dyn Write + Send>),
}

/// Writes all of `buf` to a file opened non-blocking: a FIFO that takes nothing for
/// `timeout` (or a `finish` that gave up) ends it with `TimedOut`.
fn patient_write(
    f: &mut File,
    mut buf: &[u8],
    timeout: Duration,
    shared: &Shared,
) -> io::Result<()> {
    let mut progress = Instant::now();
    let mut pause = Duration::from_micros(100);
    while !buf.is_empty() {
        match f.write(buf) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "it took no bytes")),
            Ok(n) => {
                buf = &buf[n..];
                progress = Instant::now();
                pause = Duration::from_micros(100);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if shared.lock().cut || progress.elapsed() >= timeout {
                    return Err(io::Error::from(io::ErrorKind::TimedOut));
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What the writer takes next.
enum Next {
    Frame((Vec<u8>, Kind)),
    Refused(Option<Refusal>),
}

/// The writer thread's state: the sink, and what it needs to go on in the fallback file.
struct FrameWriter {
    shared: Arc<Shared>,
    name: String,
    sink: Sink,
    timeout: Duration,
    /// The file to go on in when the debugger refuses the stream (`connect_or_file`).
    fallback: Option<PathBuf>,
    /// The magic and HELLO, and the STATIC frame, once seen (kept for the fallback file).
    header: Option<Vec<u8>>,
    statics: Option<Vec<u8>>,
    /// STEP frames written to the sink in use.
    steps_here: u64,
    /// After a change of sink: STEP frames are left out (counted lost) until a keyframe.
    need_keyframe: bool,
    /// Every frame written to the debugger so far, while they fit in the budget: a
    /// refusal then replays them into the file and nothing is lost.
    retained: Option<Vec<u8>>,
    /// The most bytes `retained` holds.
    retain_budget: usize,
}

impl FrameWriter {
    /// Writes queued frames until the queue closes or the sink fails.
    fn run(&mut self) {
        loop {
            let next = {
                let mut q = self.shared.lock();
                loop {
                    if q.cut {
                        break None;
                    }
                    // After the BYE, the debugger closing is the stream's end.
                    if q.refused.is_some() && !q.ended && matches!(self.sink, Sink::Socket(_)) {
                        break Some(Next::Refused(q.refused.take()));
                    }
                    if let Some(f) = q.frames.pop_front() {
                        q.writing_step = is_step(f.1);
                        break Some(Next::Frame(f));
                    }
                    if q.closing {
                        break None;
                    }
                    q = self.shared.cond.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            let (frame, kind) = match next {
                None => break,
                Some(Next::Frame(f)) => f,
                Some(Next::Refused(r)) => {
                    // Without a fallback, a close shows as the write that fails; a refusal
                    // line stops the stream at once.
                    if let Some(r) = r
                        && (r.said || self.fallback.is_some())
                        && !self.leave_socket(r, None)
                    {
                        self.give_up(&[], Kind::Header);
                        return;
                    }
                    continue;
                }
            };
            match self.write(&frame, kind) {
                Ok(written) => {
                    self.written(frame, kind, written);
                    if let Kind::Bye { .. } = kind
                        && matches!(self.sink, Sink::Socket(_))
                        && self.fallback.is_some()
                    {
                        self.after_the_end(kind);
                    }
                }
                Err(e) => {
                    if matches!(self.sink, Sink::Socket(_)) && self.fallback.is_some() {
                        // A refusal shows first as a write that fails: wait a little for
                        // the reader's verdict, then go on in the file.
                        let r = self.await_refusal();
                        if self.leave_socket(r, Some(&e)) {
                            match self.write(&frame, kind) {
                                Ok(written) => {
                                    self.written(frame, kind, written);
                                    continue;
                                }
                                Err(e) => {
                                    self.fail(&frame, kind, &e);
                                    return;
                                }
                            }
                        }
                        self.give_up(&frame, kind);
                        return;
                    }
                    let said = self.shared.lock().refused.clone().filter(|r| r.said);
                    match said {
                        Some(r) => {
                            let why = format!("{} refused the stream: {}", self.name, r.reason);
                            self.stop(&frame, kind, why);
                        }
                        None => self.fail(&frame, kind, &e),
                    }
                    return;
                }
            }
        }
        self.end();
    }

    /// Writes one frame (a BYE encoded here); Ok(false) when it was left out.
    fn write(&mut self, frame: &[u8], kind: Kind) -> io::Result<bool> {
        let bye;
        let bytes = match kind {
            Kind::Header | Kind::Static => {
                self.write_bytes(frame)?;
                self.retain(frame);
                // Kept for the fallback file, once written.
                if self.fallback.is_some() {
                    let keep = Some(frame.to_vec());
                    if kind == Kind::Header {
                        self.header = keep;
                    } else {
                        self.statics = keep;
                    }
                }
                return Ok(true);
            }
            Kind::Step { keyframe } => {
                if self.need_keyframe && !keyframe {
                    return Ok(false);
                }
                self.need_keyframe = false;
                frame
            }
            Kind::Bye { steps } => {
                let mut b = Vec::with_capacity(21);
                encode_bye(
                    &mut b,
                    &Bye {
                        steps_sent: self.steps_here,
                        steps_dropped: steps.saturating_sub(self.steps_here),
                    },
                );
                bye = b;
                &bye
            }
        };
        self.write_bytes(bytes)?;
        if !matches!(kind, Kind::Bye { .. }) {
            self.retain(bytes);
        }
        Ok(true)
    }

    /// Keeps a frame written to the debugger while the budget lasts.
    fn retain(&mut self, bytes: &[u8]) {
        if !matches!(self.sink, Sink::Socket(_)) {
            return;
        }
        if let Some(r) = &mut self.retained {
            if r.len() + bytes.len() <= self.retain_budget {
                r.extend_from_slice(bytes);
            } else {
                self.retained = None;
            }
        }
    }

    fn write_bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.sink {
            Sink::Socket(s) => s.write_all(bytes),
            Sink::File(f) => patient_write(f, bytes, self.timeout, &self.shared),
            Sink::Writer(w) => {
                w.write_all(bytes)?;
                w.flush()
            }
        }
    }

    /// Counts a frame written (or left out after a change of sink).
    fn written(&mut self, frame: Vec<u8>, kind: Kind, written: bool) {
        let mut q = self.shared.lock();
        q.writing_step = false;
        if q.cut {
            // `finish` counted it already.
            return;
        }
        q.bytes = q.bytes.saturating_sub(frame.len());
        if written {
            q.bytes_sent += frame.len() as u64;
            if is_step(kind) {
                self.steps_here += 1;
            }
            if let Kind::Bye { .. } = kind {
                q.bytes_sent += 21 - frame.len() as u64;
                q.ended = true;
            }
        } else if is_step(kind) {
            q.steps_lost += 1;
        }
        if q.spare.len() < 4 {
            q.spare.push(frame);
        }
        self.shared.cond.notify_all();
    }

    /// After the BYE: waits a little (this thread only) for the debugger to close (its end
    /// of a stream it took) or refuse (a fast engine can end its stream before a refusal
    /// arrives); a refusal or a reset sends the stream to the file, with its BYE.
    fn after_the_end(&mut self, bye: Kind) {
        let deadline = Instant::now() + self.timeout.min(REFUSAL_GRACE);
        let verdict = {
            let mut q = self.shared.lock();
            loop {
                if let Some(r) = q.refused.take() {
                    break Some(r);
                }
                let now = Instant::now();
                if now >= deadline || q.cut {
                    break None;
                }
                q = match self.shared.cond.wait_timeout(q, deadline - now) {
                    Ok((q, _)) => q,
                    Err(e) => e.into_inner().0,
                };
            }
        };
        let Some(r) = verdict.filter(|r| r.said || r.reset) else {
            return;
        };
        if !self.leave_socket(r, None) {
            self.give_up(&[], Kind::Header);
            return;
        }
        match self.write(&[], bye) {
            Ok(_) => self.shared.lock().bytes_sent += 21,
            Err(e) => self.fail(&[], Kind::Header, &e),
        }
    }

    /// Waits (this thread only, a bounded time) for the socket's reader to say why the
    /// debugger went; what it said, or that it closed.
    fn await_refusal(&self) -> Refusal {
        let deadline = Instant::now() + self.timeout.min(Duration::from_millis(500));
        let mut q = self.shared.lock();
        loop {
            if let Some(r) = q.refused.take() {
                return r;
            }
            let now = Instant::now();
            if now >= deadline || q.cut {
                return Refusal {
                    reason: "it closed the connection".to_owned(),
                    said: false,
                    reset: false,
                };
            }
            q = match self.shared.cond.wait_timeout(q, deadline - now) {
                Ok((q, _)) => q,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// Leaves the debugger that refused (or closed) for the fallback file: writes its
    /// magic, HELLO and STATIC, and asks the engine for a keyframe. False when there is no
    /// fallback or the file cannot be opened (the error is set).
    fn leave_socket(&mut self, r: Refusal, e: Option<&io::Error>) -> bool {
        let why = if r.said {
            format!("{} refused the stream: {}", self.name, r.reason)
        } else {
            match e {
                Some(e) => format!(
                    "{} closed the connection before the stream's end ({e})",
                    self.name
                ),
                None => format!("{} {} before the stream's end", self.name, r.reason),
            }
        };
        let Some(path) = self.fallback.take() else {
            self.shared.lock().error = Some(why);
            return false;
        };
        let file = match open_file(&path) {
            Ok(f) => f,
            Err(e) => {
                self.shared.lock().error = Some(format!("{why}; the fallback file: {e}"));
                return false;
            }
        };
        self.sink = Sink::File(file);
        if let Some(stream) = self.retained.take() {
            // Everything written to the debugger is here: the file gets the stream from its
            // start and nothing is lost.
            {
                let mut q = self.shared.lock();
                q.bytes_sent = 0;
                q.target = Target::File(path.clone());
                q.fallback = Some(format!("{why}; the stream goes on in {}", path.display()));
            }
            self.name = format!("{}", path.display());
            self.header = None;
            self.statics = None;
            if let Err(e) = self.write_bytes(&stream) {
                let why = describe_write_error(&self.name, &e);
                let mut q = self.shared.lock();
                q.error = Some(why);
                // The steps the debugger took are lost with the file.
                q.steps_lost += self.steps_here;
                return false;
            }
            self.shared.lock().bytes_sent += stream.len() as u64;
            return true;
        }
        {
            let mut q = self.shared.lock();
            // What the debugger got is lost with it.
            q.steps_lost += self.steps_here;
            q.steps_refused += self.steps_here;
            q.bytes_sent = 0;
            q.target = Target::File(path.clone());
            q.fallback = Some(format!("{why}; the stream goes on in {}", path.display()));
            q.keyframe_wanted = true;
        }
        self.name = format!("{}", path.display());
        self.steps_here = 0;
        self.need_keyframe = true;
        for frame in [self.header.take(), self.statics.take()]
            .into_iter()
            .flatten()
        {
            if let Err(e) = self.write_bytes(&frame) {
                let why = describe_write_error(&self.name, &e);
                self.shared.lock().error = Some(why);
                return false;
            }
            self.shared.lock().bytes_sent += frame.len() as u64;
        }
        true
    }

    /// Stops with the error of a write.
    fn fail(&mut self, frame: &[u8], kind: Kind, e: &io::Error) {
        let cut = self.shared.lock().cut;
        let why = if cut {
            String::new()
        } else {
            describe_write_error(&self.name, e)
        };
        self.stop(frame, kind, why);
    }

    /// Stops with the error already set.
    fn give_up(&mut self, frame: &[u8], kind: Kind) {
        let why = self.shared.lock().error.clone().unwrap_or_default();
        self.stop(frame, kind, why);
    }

    /// Stops: the frame in hand and every queued step are lost.
    fn stop(&mut self, _frame: &[u8], kind: Kind, why: String) {
        let mut q = self.shared.lock();
        q.writing_step = false;
        if !q.cut {
            let lost = q.frames.iter().filter(|f| is_step(f.1)).count() as u64;
            q.steps_lost += lost + u64::from(is_step(kind));
            q.frames.clear();
            q.bytes = 0;
            q.error = Some(why);
        }
        q.done = true;
        self.shared.cond.notify_all();
        drop(q);
        self.close_sink();
    }

    /// The queue closed: flush and close the sink.
    fn end(&mut self) {
        let result = match &mut self.sink {
            Sink::Writer(w) => w.flush(),
            _ => Ok(()),
        };
        self.close_sink();
        let mut q = self.shared.lock();
        if let Err(e) = result
            && !q.cut
        {
            q.error = Some(describe_write_error(&self.name, &e));
        }
        q.done = true;
        self.shared.cond.notify_all();
    }

    fn close_sink(&mut self) {
        if let Sink::Socket(s) = &self.sink {
            // The end of the stream for the debugger; it may be gone already.
            let _gone = s.shutdown(Shutdown::Write);
        }
        self.sink = Sink::Writer(Box::new(io::sink()));
    }
}

/// The socket's reader: a debugger writes only to refuse a stream (`AABB refused:
/// REASON\n`, then it closes), so any byte, a close or a reset before the stream's end is
/// told to the writer. Ends when the stream does.
fn read_refusal(shared: &Shared, mut socket: TcpStream) {
    let mut got: Vec<u8> = Vec::new();
    let mut buf = [0u8; MAX_REFUSAL];
    let error = loop {
        match socket.read(&mut buf) {
            Ok(0) => break None,
            Ok(n) => {
                let room = MAX_REFUSAL - got.len();
                got.extend_from_slice(&buf[..n.min(room)]);
                if got.contains(&b'\n') || got.len() >= MAX_REFUSAL {
                    break None;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                // Past the BYE too: the writer waits a little for a late refusal.
                if shared.lock().done {
                    return;
                }
            }
            Err(e) => break Some(e),
        }
    };
    let refusal = if let Some(rest) = got.strip_prefix(REFUSAL_PREFIX) {
        let line = rest.split(|&b| b == b'\n').next().unwrap_or_default();
        let reason: String = line
            .iter()
            .map(|&b| {
                if (0x20..0x7f).contains(&b) {
                    b as char
                } else {
                    '?'
                }
            })
            .collect();
        Refusal {
            reason: reason.trim().to_owned(),
            said: true,
            reset: false,
        }
    } else if !got.is_empty() {
        Refusal {
            reason: format!("it wrote {} bytes that are not a refusal line", got.len()),
            said: true,
            reset: false,
        }
    } else {
        Refusal {
            reset: error.is_some(),
            reason: match error {
                Some(e) => format!("reset the connection ({e})"),
                None => "closed the connection".to_owned(),
            },
            said: false,
        }
    };
    // Also after the stream's end: the writer waits a little for it then.
    let mut q = shared.lock();
    if !q.done {
        q.refused = Some(refusal);
        shared.cond.notify_all();
    }
}

fn describe_write_error(name: &str, e: &io::Error) -> String {
    use io::ErrorKind as K;
    let socket = name.starts_with("the debugger at ");
    match e.kind() {
        K::BrokenPipe if !socket => {
            format!("writing to {name}: its reader went away ({e})")
        }
        K::WouldBlock | K::TimedOut => {
            format!("writing to {name}: no progress within the timeout (it stopped reading)")
        }
        K::BrokenPipe | K::ConnectionReset | K::ConnectionAborted | K::NotConnected => {
            format!("writing to {name}: the connection was closed ({e})")
        }
        _ => format!("writing to {name}: {e}"),
    }
}
