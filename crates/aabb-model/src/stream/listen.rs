//! Receiving a stream live: a TCP listener (loopback unless the user opens it up) that keeps
//! listening whatever connects. Each connection gets its own short-lived handshake: the magic
//! bytes and a valid HELLO within the handshake timeout, every read checked against that
//! deadline, a first frame longer than a HELLO can be refused before it is read. Only then is
//! it an engine. A peer that is not a recorder (garbage, an HTTP request, an idle socket, a
//! trickle) is refused with one line, counted, and never blocks an engine that comes after
//! it; an engine that arrives while another is live is refused the same way ("busy").
//!
//! An engine's stream is read to its end through [`StreamIntake`] by [`receive`]: every frame
//! checked before it is kept, a frame that stops arriving timed out, the bytes of every
//! accepted frame optionally written to a stream file as they arrive (so the file is a valid
//! stream whatever the peer does next, and holds every step said to be in it).
//!
//! Used by `aabb-debugger listen` and by the window's "Listen for an engine...".

use super::{Intake, StreamError, StreamIntake, wire_limits};
use crate::text::escape_controls;
use crate::trace::TraceLimits;
use aabb_recorder::wire::{Decoder, Frame, Hello, WireErrorKind};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The port the debugger listens on unless told otherwise (the recorders' default too).
pub const DEFAULT_PORT: u16 = aabb_recorder::DEFAULT_PORT;

/// How long a new connection may take to send its handshake (magic and HELLO) before it is
/// refused.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one frame may take to arrive whole once its first byte came (an engine may pause
/// between frames for as long as it likes; a frame that stops half way is a dead peer).
pub const FRAME_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections waiting for their handshake at once; a new one past this drops the oldest, so
/// a crowd of idle sockets never keeps an engine out.
pub const MAX_PENDING_HANDSHAKES: usize = 64;

/// The line the debugger writes to a peer it refuses, before it closes the connection:
/// `AABB refused: WHY\n`, at most [`REFUSAL_MAX_BYTES`] bytes of ASCII. The recorders read it
/// to fall back to their file. The debugger writes nothing else to a peer.
pub const REFUSAL_PREFIX: &str = "AABB refused: ";

/// The longest refusal line, its newline included.
pub const REFUSAL_MAX_BYTES: usize = 256;

/// How often a blocked read or accept wakes to look at the cancel flag and the deadlines.
const POLL: Duration = Duration::from_millis(100);

/// The default address: loopback, [`DEFAULT_PORT`].
#[must_use]
pub fn default_addr() -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), DEFAULT_PORT)
}

/// Binds a listener on `addr`, with a message that names the address when it cannot.
pub fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr).map_err(|e| {
        let hint = match e.kind() {
            std::io::ErrorKind::AddrInUse => {
                " (another program, or another debugger, listens there: give another port, or \
                 0 for any free one)"
            }
            std::io::ErrorKind::PermissionDenied => " (ports below 1024 need privileges)",
            _ => "",
        };
        format!("could not listen on {addr}: {e}{hint}")
    })
}

/// Why a peer was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalKind {
    /// Its first bytes were not a recorder's handshake (or none came in time).
    NotARecorder,
    /// A recorder, but another engine is live (one at a time).
    Busy,
    /// Dropped unheard: more connections were waiting for their handshake than are kept.
    Crowded,
}

/// A peer the listener refused: who, and why, in one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The peer's address.
    pub peer: SocketAddr,
    /// Why, as a kind.
    pub kind: RefusalKind,
    /// Why, for the user: names the connection and, where it applies, the byte.
    pub why: String,
}

impl Refusal {
    /// The line for a log.
    #[must_use]
    pub fn line(&self) -> String {
        match self.kind {
            RefusalKind::NotARecorder => {
                format!("refused a peer that is not a recorder: {}", self.why)
            }
            RefusalKind::Busy => {
                format!("refused a second engine from {}: {}", self.peer, self.why)
            }
            RefusalKind::Crowded => format!("dropped {}: {}", self.peer, self.why),
        }
    }
}

/// An engine whose handshake arrived: its connection, and the bytes read of it so far (the
/// magic and the HELLO, read again by [`receive`]'s decoder).
pub struct Engine {
    conn: TcpStream,
    peer: SocketAddr,
    prefix: Vec<u8>,
    hello: Hello,
}

impl Engine {
    /// The engine's address.
    #[must_use]
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Its handshake.
    #[must_use]
    pub fn hello(&self) -> &Hello {
        &self.hello
    }
}

/// How the listener treats connections.
#[derive(Clone, Copy, Debug)]
pub struct ListenRules {
    /// How long the magic bytes and HELLO may take to arrive.
    pub handshake_timeout: Duration,
}

impl Default for ListenRules {
    fn default() -> Self {
        ListenRules {
            handshake_timeout: HANDSHAKE_TIMEOUT,
        }
    }
}

/// What the listener has turned away so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Turned {
    /// Peers that were not recorders (or sent no handshake in time).
    pub not_recorders: u64,
    /// Engines refused because another was live.
    pub busy: u64,
    /// Connections dropped before their handshake because too many were waiting.
    pub crowded: u64,
}

/// A listener that keeps listening: its accepting thread takes every connection, each
/// connection's handshake runs on a thread of its own, and engines (valid handshakes) come out
/// of [`Listener::next_engine`] one at a time.
pub struct Listener {
    addr: SocketAddr,
    engines: Receiver<Engine>,
    stop: Arc<AtomicBool>,
    /// Set by the handshake that hands an engine over; cleared when the owner asks for the
    /// next engine. While it is set, engines are refused as busy.
    busy: Arc<AtomicBool>,
    turned: Arc<Counters>,
    acceptor: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct Counters {
    not_recorders: AtomicU64,
    busy: AtomicU64,
    crowded: AtomicU64,
    /// Handshake threads running (see [`Listener::settle`]).
    handshaking: AtomicU64,
}

/// Counts a handshake thread as running until it is dropped (its end, or a panic).
struct Running(Arc<Counters>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.handshaking.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Says a refusal where the user sees it (stderr, the window's log): called on the listener's
/// threads.
pub type OnRefused = Arc<dyn Fn(&Refusal) + Send + Sync>;

impl Listener {
    /// Starts listening on `listener` (bound by [`bind`]): every refusal is told to
    /// `on_refused`.
    pub fn start(
        listener: TcpListener,
        rules: ListenRules,
        on_refused: OnRefused,
    ) -> std::io::Result<Listener> {
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let (to_engines, engines) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        // An engine that comes before the owner asks waits in the channel for it.
        let busy = Arc::new(AtomicBool::new(false));
        let turned = Arc::new(Counters::default());
        let acceptor = {
            let shared = Shared {
                stop: Arc::clone(&stop),
                busy: Arc::clone(&busy),
                turned: Arc::clone(&turned),
                to_engines,
                on_refused,
            };
            std::thread::Builder::new()
                .name("listener".to_owned())
                .spawn(move || accept_loop(&listener, &rules, &shared))?
        };
        Ok(Listener {
            addr,
            engines,
            stop,
            busy,
            turned,
            acceptor: Some(acceptor),
        })
    }

    /// The address listened on.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The next engine (a connection whose handshake was valid); `None` when `cancel` is set
    /// first (checked every tenth of a second). Between two calls (while the owner receives
    /// an engine) other engines are refused as busy; one that came before the first call
    /// waits for it.
    pub fn next_engine(&self, cancel: &AtomicBool) -> Option<Engine> {
        // One handed over before the owner was ready is taken first; only with none waiting
        // may the next handshake hand one over.
        if let Ok(engine) = self.engines.try_recv() {
            return Some(engine);
        }
        self.busy.store(false, Ordering::SeqCst);
        loop {
            if cancel.load(Ordering::Relaxed) {
                return None;
            }
            match self.engines.recv_timeout(POLL) {
                Ok(engine) => return Some(engine),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// Takes no more engines: every later one is refused as busy (the owner is done, or about
    /// to close the listener).
    pub fn stop_taking_engines(&self) {
        self.busy.store(true, Ordering::SeqCst);
    }

    /// Waits, at most `within`, for the handshakes under way to end (each refused one counted
    /// and said), so a count read after it holds every peer that had connected: what `listen`
    /// does before its last summary.
    pub fn settle(&self, within: Duration) {
        let until = Instant::now() + within;
        while self.turned.handshaking.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// What it turned away so far.
    #[must_use]
    pub fn turned(&self) -> Turned {
        Turned {
            not_recorders: self.turned.not_recorders.load(Ordering::Relaxed),
            busy: self.turned.busy.load(Ordering::Relaxed),
            crowded: self.turned.crowded.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(acceptor) = self.acceptor.take() {
            // It wakes within a tenth of a second; a panic there is already said on stderr.
            let _joined = acceptor.join();
        }
    }
}

/// The connections waiting for their handshake, oldest first (a clone of each socket, to drop
/// the oldest when the list is full).
type Pending = Arc<Mutex<VecDeque<(u64, TcpStream)>>>;

/// What the accepting thread and every handshake share.
#[derive(Clone)]
struct Shared {
    stop: Arc<AtomicBool>,
    busy: Arc<AtomicBool>,
    turned: Arc<Counters>,
    to_engines: Sender<Engine>,
    on_refused: OnRefused,
}

fn accept_loop(listener: &TcpListener, rules: &ListenRules, shared: &Shared) {
    let pending: Pending = Arc::default();
    let mut next_id = 0u64;
    while !shared.stop.load(Ordering::Relaxed) {
        let (conn, peer) = match listener.accept() {
            Ok(pair) => pair,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(POLL.min(Duration::from_millis(20)));
                continue;
            }
            // A connection that failed before it was taken (reset, out of descriptors for a
            // moment): nothing to refuse; the next one is taken.
            Err(_) => {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        let id = next_id;
        next_id += 1;
        // Room for it: the oldest waiting handshake is dropped, never the newcomer.
        {
            let mut waiting = pending.lock().unwrap_or_else(PoisonError::into_inner);
            while waiting.len() >= MAX_PENDING_HANDSHAKES {
                if let Some((_, oldest)) = waiting.pop_front() {
                    // Its thread sees the connection end and says so.
                    let _shut = oldest.shutdown(Shutdown::Both);
                }
            }
            match conn.try_clone() {
                Ok(clone) => waiting.push_back((id, clone)),
                Err(e) => {
                    drop(waiting);
                    refuse(
                        conn,
                        Refusal {
                            peer,
                            kind: RefusalKind::Crowded,
                            why: format!("connection from {peer}: {e}"),
                        },
                        &shared.turned,
                        &shared.on_refused,
                    );
                    continue;
                }
            }
        }
        let job = Handshake {
            id,
            conn,
            peer,
            rules: *rules,
            shared: shared.clone(),
            pending: Arc::clone(&pending),
        };
        shared.turned.handshaking.fetch_add(1, Ordering::SeqCst);
        let running = Running(Arc::clone(&shared.turned));
        if let Err(e) = std::thread::Builder::new()
            .name("handshake".to_owned())
            .spawn(move || {
                let _running = running;
                job.run();
            })
        {
            shared.turned.crowded.fetch_add(1, Ordering::Relaxed);
            (shared.on_refused)(&Refusal {
                peer,
                kind: RefusalKind::Crowded,
                why: format!("connection from {peer}: could not start its thread: {e}"),
            });
            let mut waiting = pending.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(at) = waiting.iter().position(|(k, _)| *k == id)
                && let Some((_, conn)) = waiting.remove(at)
            {
                let _shut = conn.shutdown(Shutdown::Both);
            }
        }
    }
}

/// One connection's handshake, on a thread of its own.
struct Handshake {
    id: u64,
    conn: TcpStream,
    peer: SocketAddr,
    rules: ListenRules,
    shared: Shared,
    pending: Pending,
}

impl Handshake {
    fn run(self) {
        let name = format!("connection from {}", self.peer);
        let deadline = Instant::now() + self.rules.handshake_timeout;
        let result = read_handshake(&self.conn, deadline);
        // Whether this connection still has its place among the waiting ones (`take`: and
        // give it up). A refusal keeps its place until it is done, so the places also bound
        // the connections being refused; an engine gives its place up before it is handed
        // over, so the crowd never drops an engine.
        let listed = |take: bool| {
            let mut waiting = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            match waiting.iter().position(|(k, _)| *k == self.id) {
                Some(at) => {
                    if take {
                        waiting.remove(at);
                    }
                    true
                }
                None => false,
            }
        };
        let refusal = |kind, why| Refusal {
            peer: self.peer,
            kind,
            why,
        };
        let crowded = || {
            self.shared.turned.crowded.fetch_add(1, Ordering::Relaxed);
            (self.shared.on_refused)(&refusal(
                RefusalKind::Crowded,
                format!(
                    "{name}: dropped before its handshake ended, to make room for newer \
                     connections ({MAX_PENDING_HANDSHAKES} may wait at once)"
                ),
            ));
        };
        match result {
            Err(why) => {
                if !listed(false) {
                    crowded();
                    return;
                }
                refuse(
                    self.conn,
                    refusal(RefusalKind::NotARecorder, format!("{name}: {why}")),
                    &self.shared.turned,
                    &self.shared.on_refused,
                );
                let _released = listed(true);
            }
            Ok((prefix, hello)) => {
                if !listed(true) {
                    crowded();
                    return;
                }
                if self.shared.busy.swap(true, Ordering::SeqCst) {
                    refuse(
                        self.conn,
                        refusal(
                            RefusalKind::Busy,
                            "one engine at a time, and another engine is live".to_owned(),
                        ),
                        &self.shared.turned,
                        &self.shared.on_refused,
                    );
                    return;
                }
                let engine = Engine {
                    conn: self.conn,
                    peer: self.peer,
                    prefix,
                    hello,
                };
                // The listener's owner is gone: dropping the engine closes it and frees the
                // slot.
                let _sent = self.shared.to_engines.send(engine);
            }
        }
    }
}

/// Writes the refusal line to the peer (at most a second), closes it, counts and tells it.
fn refuse(conn: TcpStream, refusal: Refusal, turned: &Counters, on_refused: &OnRefused) {
    let counter = match refusal.kind {
        RefusalKind::NotARecorder => &turned.not_recorders,
        RefusalKind::Busy => &turned.busy,
        RefusalKind::Crowded => &turned.crowded,
    };
    counter.fetch_add(1, Ordering::Relaxed);
    // Said first: the peer may hold its end open for a while.
    on_refused(&refusal);
    let mut line = String::from(REFUSAL_PREFIX);
    let reason = match refusal.kind {
        RefusalKind::NotARecorder => "not a recorder's handshake",
        RefusalKind::Busy => "busy: another engine is live",
        RefusalKind::Crowded => "too many connections at once",
    };
    line.push_str(reason);
    line.truncate(REFUSAL_MAX_BYTES - 1);
    line.push('\n');
    // The peer may be gone or never read: a refusal it does not get is no loss.
    let _timeout = conn.set_write_timeout(Some(Duration::from_secs(1)));
    let mut conn = conn;
    let _written = conn.write_all(line.as_bytes());
    // The line, then the end of what we send; what the peer still sends is read and dropped
    // for a moment, so that closing does not reset the connection before the peer has read
    // the line (a close with unread bytes is a reset, which discards what it had not read).
    let _shut = conn.shutdown(Shutdown::Write);
    drain(&conn, Duration::from_millis(500), 1 << 16);
}

/// Reads and drops what `conn` still sends, for at most `time` and `bytes`, or until it ends.
fn drain(conn: &TcpStream, time: Duration, bytes: usize) {
    let until = Instant::now() + time;
    let mut left = bytes;
    let mut buf = [0u8; 4096];
    while left > 0 {
        let now = Instant::now();
        if now >= until || conn.set_read_timeout(Some(until - now)).is_err() {
            return;
        }
        match (&mut &*conn).read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => left = left.saturating_sub(n),
        }
    }
}

/// Reads the magic and the HELLO, checking `deadline` before every read; the bytes read and the
/// HELLO, or why it is no handshake.
fn read_handshake(conn: &TcpStream, deadline: Instant) -> Result<(Vec<u8>, Hello), String> {
    let mut wire = Capture {
        conn,
        deadline,
        bytes: Vec::new(),
        timed_out: false,
    };
    let mut decoder = Decoder::new(&mut wire, wire_limits(&TraceLimits::default()));
    let first = decoder.next_frame();
    let timed_out = decoder.get_ref().timed_out;
    match first {
        Ok(Some(Frame::Hello(hello))) => {
            drop(decoder);
            Ok((wire.bytes, hello))
        }
        // The decoder refuses any first frame but HELLO.
        Ok(Some(_)) => Err("byte 8: the first frame is not a HELLO".to_owned()),
        Ok(None) => Err("closed before its handshake".to_owned()),
        Err(_) if timed_out => Err(format!(
            "no handshake in time (the magic bytes and HELLO) after {} bytes",
            decoder.offset()
        )),
        Err(e) if matches!(e.kind, WireErrorKind::TruncatedMagic { got: 0 }) => {
            Err("closed before its handshake".to_owned())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// A socket read for a handshake: the deadline checked before every read, whatever trickles
/// in; every byte kept (they are the stream's first bytes).
struct Capture<'a> {
    conn: &'a TcpStream,
    deadline: Instant,
    bytes: Vec<u8>,
    timed_out: bool,
}

impl Read for Capture<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let (conn, deadline, timed_out) = (self.conn, self.deadline, &mut self.timed_out);
        let n = poll_read(conn, buf, || {
            let now = Instant::now();
            if now >= deadline {
                *timed_out = true;
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "no handshake in time",
                ));
            }
            conn.set_read_timeout(Some((deadline - now).min(POLL)))
        })?;
        self.bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// Reads `conn` into `buf`, calling `before` ahead of every attempt (an error from it ends
/// the read) and trying again when a read times out: the one loop of the handshake's and the
/// engine's reads, which check their deadline and Cancel in `before`.
fn poll_read(
    conn: &TcpStream,
    buf: &mut [u8],
    mut before: impl FnMut() -> std::io::Result<()>,
) -> std::io::Result<usize> {
    loop {
        before()?;
        match (&mut &*conn).read(buf) {
            Ok(n) => return Ok(n),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
}

/// How a connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// The engine said goodbye (BYE).
    Bye,
    /// The engine closed the connection between frames without BYE.
    Closed,
    /// The bytes broke the format or the limits: the message names the connection, the byte
    /// offset and the step. Every step before was kept.
    Refused(String),
    /// The connection failed (reset, an I/O error, a frame that stopped arriving, or the
    /// stream file could not be written).
    Failed(String),
    /// The user stopped listening.
    Cancelled,
}

impl End {
    /// A line for the user.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            End::Bye => "the engine ended the stream".to_owned(),
            End::Closed => "the engine closed the connection".to_owned(),
            End::Refused(m) | End::Failed(m) => m.clone(),
            End::Cancelled => "stopped listening".to_owned(),
        }
    }

    /// True for an end that refused or lost data (exit 1 in `listen`).
    #[must_use]
    pub fn is_error(&self) -> bool {
        matches!(self, End::Refused(_) | End::Failed(_))
    }

    /// One word for it (`listen --json`).
    #[must_use]
    pub fn word(&self) -> &'static str {
        match self {
            End::Bye => "bye",
            End::Closed => "closed",
            End::Refused(_) => "refused",
            End::Failed(_) => "failed",
            End::Cancelled => "cancelled",
        }
    }
}

/// What one engine's connection brought.
pub struct Received {
    /// The steps (kept, or only counted) and what the stream said.
    pub intake: StreamIntake,
    /// How it ended.
    pub end: End,
    /// Bytes received.
    pub bytes: u64,
    /// Steps whose frames are whole in the output file (all accepted steps unless writing it
    /// failed).
    pub steps_written: u64,
    /// Seconds from the handshake to the end.
    pub secs: f64,
}

/// The engine's socket as the decoder reads it: waits in short slices so that Cancel is seen,
/// times out a frame that stops arriving, counts the bytes, and keeps the bytes of the frame
/// being read for the output file.
struct Wire<'a> {
    conn: &'a TcpStream,
    cancel: &'a AtomicBool,
    frame_timeout: Duration,
    capture: bool,
    /// What the decoder's owner changes between reads (the decoder lends only `&Wire`).
    side: std::cell::RefCell<WireSide>,
}

/// The parts of [`Wire`] that change as it reads.
#[derive(Default)]
struct WireSide {
    /// When the first byte of the frame being read arrived (`None` between frames).
    frame_started: Option<Instant>,
    captured: Vec<u8>,
    bytes: u64,
    why: Option<End>,
}

impl Read for Wire<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let side = self.side.get_mut();
        let (cancel, frame_timeout) = (self.cancel, self.frame_timeout);
        let n = poll_read(self.conn, buf, || {
            if cancel.load(Ordering::Relaxed) {
                side.why = Some(End::Cancelled);
                return Err(std::io::Error::other("stopped listening"));
            }
            if let Some(started) = side.frame_started
                && started.elapsed() >= frame_timeout
            {
                side.why = Some(End::Failed(format!(
                    "a frame stopped arriving: not whole {:.0} s after its first byte",
                    frame_timeout.as_secs_f64()
                )));
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "a frame stopped arriving",
                ));
            }
            Ok(())
        })?;
        side.bytes += n as u64;
        if n > 0 && side.frame_started.is_none() {
            side.frame_started = Some(Instant::now());
        }
        if self.capture {
            side.captured.extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }
}

/// How an engine's connection is received: the flag that stops it, the limits, and how long a
/// frame may take.
pub struct Receiving<'a> {
    /// Set to stop (within a tenth of a second); what arrived is kept.
    pub cancel: &'a AtomicBool,
    /// The decoder's and the trace's limits.
    pub limits: TraceLimits,
    /// How long one frame may take to arrive whole once it began.
    pub frame_timeout: Duration,
}

/// Reads one engine's connection to its end: every frame is checked, applied to `intake`
/// (which keeps or counts the steps), its bytes written to `out` when given (frame by frame,
/// unbuffered: what is said to be in the file is in it), and `on_event` told. Never panics on
/// anything the peer sends; the steps before a refused frame are kept.
pub fn receive(
    engine: Engine,
    mut intake: StreamIntake,
    mut out: Option<&mut dyn Write>,
    rules: &Receiving<'_>,
    mut on_event: impl FnMut(&Intake, &StreamIntake),
) -> Received {
    let started = Instant::now();
    let name = format!("connection from {}", engine.peer);
    let received = |intake, end, bytes, steps_written| Received {
        intake,
        end,
        bytes,
        steps_written,
        secs: started.elapsed().as_secs_f64(),
    };
    if let Err(e) = engine.conn.set_read_timeout(Some(POLL)) {
        return received(intake, End::Failed(format!("{name}: {e}")), 0, 0);
    }
    let _nodelay = engine.conn.set_nodelay(true);
    let wire = Wire {
        conn: &engine.conn,
        cancel: rules.cancel,
        frame_timeout: rules.frame_timeout,
        capture: out.is_some(),
        side: std::cell::RefCell::new(WireSide {
            captured: engine.prefix.clone(),
            bytes: engine.prefix.len() as u64,
            ..WireSide::default()
        }),
    };
    // The handshake's bytes are read again from memory, then the socket.
    let prefix = std::io::Cursor::new(engine.prefix.clone());
    let mut decoder = Decoder::new(prefix.chain(wire), wire_limits(&rules.limits));
    let mut steps_written = 0u64;
    let end = loop {
        let frame = match decoder.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => break End::Closed,
            Err(error) => {
                if let Some(why) = decoder.get_ref().get_ref().1.side.borrow_mut().why.take() {
                    break match why {
                        End::Failed(m) => End::Failed(format!(
                            "{name}: byte {}: {m}; the {} steps before were kept",
                            decoder.frame_offset(),
                            intake.step_count()
                        )),
                        other => other,
                    };
                }
                break End::Refused(
                    StreamError::Wire {
                        source_name: name.clone(),
                        error,
                    }
                    .to_string(),
                );
            }
        };
        match intake.apply(frame, decoder.frame_offset()) {
            Ok(event) => {
                let mut side = decoder.get_ref().get_ref().1.side.borrow_mut();
                side.frame_started = None;
                if let Some(out) = out.as_mut() {
                    if let Err(e) = out.write_all(&side.captured).and_then(|()| out.flush()) {
                        break End::Failed(format!(
                            "{name}: could not write the stream file: {e} (it holds the first \
                             {steps_written} {} whole)",
                            if steps_written == 1 { "step" } else { "steps" }
                        ));
                    }
                    if matches!(event, Intake::Step { .. }) {
                        steps_written += 1;
                    }
                }
                side.captured.clear();
                drop(side);
                on_event(&event, &intake);
                if event == Intake::Bye {
                    break End::Bye;
                }
            }
            Err(e) => break End::Refused(e.to_string()),
        }
    };
    if let End::Refused(_) | End::Failed(_) = &end {
        intake.stopped(end.describe());
    }
    let bytes = decoder.get_ref().get_ref().1.side.borrow().bytes;
    drop(decoder);
    let _shut = engine.conn.shutdown(Shutdown::Both);
    received(intake, end, bytes, steps_written)
}

/// True for a loopback address (the default; anything else opens the debugger to the
/// network and is said with a warning).
#[must_use]
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// The warning for a listener open beyond this machine.
#[must_use]
pub fn open_warning(addr: &SocketAddr) -> String {
    format!(
        "warning: listening on {} accepts engines from other machines; anyone who can reach \
         this port can send boxes to the debugger (the default, 127.0.0.1, accepts only this \
         machine)",
        escape_controls(&addr.to_string())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use aabb_recorder::wire::{self, StepFrame, WireBox};

    fn hello() -> Vec<u8> {
        let mut b = Vec::new();
        wire::encode_magic(&mut b);
        wire::encode_hello(&mut b, &Hello::new("test", 2, 0.02)).expect("hello");
        b
    }

    /// A step numbered `step` moving box 1 (a keyframe holding it at step 0).
    fn step(step: u64) -> Vec<u8> {
        let b = WireBox {
            id: 1,
            min: [step as f32 * 0.01, 0.0, 0.0],
            max: [step as f32 * 0.01 + 1.0, 1.0, 0.0],
        };
        let keyframe = step == 0;
        let frame = StepFrame {
            step,
            keyframe,
            appeared: if keyframe { vec![b] } else { Vec::new() },
            moved: if keyframe { Vec::new() } else { vec![b] },
            gone: Vec::new(),
            sections: Vec::new(),
        };
        let mut out = Vec::new();
        wire::encode_step(&mut out, 2, &frame).expect("step");
        out
    }

    #[test]
    fn a_counting_intake_lists_no_step_numbers_or_gaps_whatever_the_stream_sends() {
        let mut bytes = hello();
        // Steps 0, 2, 4, ...: a gap before every step but the first.
        for k in 0..10_000u64 {
            bytes.extend(step(2 * k));
        }
        let mut intake = StreamIntake::counting_only("test");
        let mut decoder = Decoder::new(&bytes[..], wire_limits(&TraceLimits::default()));
        while let Some(frame) = decoder.next_frame().expect("valid") {
            intake.apply(frame, decoder.frame_offset()).expect("taken");
        }
        assert_eq!(intake.step_count(), 10_000);
        let info = intake.info();
        assert_eq!(info.gaps, Vec::new());
        assert_eq!(info.engine_steps, Vec::<u64>::new());
        assert_eq!(info.gap_count, 9_999);
        assert_eq!(info.dropped_steps(), 9_999);
        // A keeping intake lists them.
        let mut keeping = StreamIntake::new("t", "test", TraceLimits::default());
        let mut decoder = Decoder::new(&bytes[..], wire_limits(&TraceLimits::default()));
        while let Some(frame) = decoder.next_frame().expect("valid") {
            keeping.apply(frame, decoder.frame_offset()).expect("taken");
        }
        assert_eq!(keeping.info().gaps.len(), 9_999);
        assert_eq!(keeping.info().dropped_steps(), 9_999);
    }

    /// A writer that takes `frames` writes, then says the disk is full.
    struct FullAfter {
        frames: usize,
        taken: Vec<u8>,
    }

    impl Write for FullAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.frames == 0 {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            self.frames -= 1;
            self.taken.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn engine_sending(bytes: Vec<u8>) -> (Listener, Engine) {
        let socket = bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
        let refused = Arc::new(|r: &Refusal| panic!("refused: {r:?}"));
        let listener = Listener::start(socket, ListenRules::default(), refused).expect("start");
        let addr = listener.addr();
        std::thread::spawn(move || {
            let mut conn = TcpStream::connect(addr).expect("connect");
            conn.write_all(&bytes).expect("send");
        });
        let cancel = AtomicBool::new(false);
        let engine = listener.next_engine(&cancel).expect("an engine");
        (listener, engine)
    }

    #[test]
    fn a_full_disk_says_how_many_whole_steps_the_file_holds() {
        let mut bytes = hello();
        for k in 0..10 {
            bytes.extend(step(k));
        }
        let (_listener, engine) = engine_sending(bytes.clone());
        // The handshake and 5 steps are written; the 6th step finds the disk full.
        let mut out = FullAfter {
            frames: 6,
            taken: Vec::new(),
        };
        let cancel = AtomicBool::new(false);
        let received = receive(
            engine,
            StreamIntake::counting_only("test"),
            Some(&mut out),
            &Receiving {
                cancel: &cancel,
                limits: TraceLimits::default(),
                frame_timeout: FRAME_TIMEOUT,
            },
            |_, _| {},
        );
        assert_eq!(received.steps_written, 5);
        let End::Failed(why) = &received.end else {
            panic!("{:?}", received.end);
        };
        assert!(
            why.ends_with(
                "could not write the stream file: No space left on device (os error 28) (it \
                 holds the first 5 steps whole)"
            ),
            "{why}"
        );
        let whole = hello().len() + (0..5).map(|k| step(k).len()).sum::<usize>();
        assert_eq!(out.taken, bytes[..whole]);
    }

    #[test]
    fn an_engine_is_read_from_its_first_byte_with_its_handshake_kept() {
        let mut bytes = hello();
        for k in 0..3 {
            bytes.extend(step(k));
        }
        let (_listener, engine) = engine_sending(bytes.clone());
        assert_eq!(engine.hello().engine, "test");
        let mut out = Vec::new();
        let cancel = AtomicBool::new(false);
        let received = receive(
            engine,
            StreamIntake::counting_only("test"),
            Some(&mut out),
            &Receiving {
                cancel: &cancel,
                limits: TraceLimits::default(),
                frame_timeout: FRAME_TIMEOUT,
            },
            |_, _| {},
        );
        assert_eq!(received.end, End::Closed);
        assert_eq!(received.intake.step_count(), 3);
        assert_eq!(received.steps_written, 3);
        assert_eq!(received.bytes, bytes.len() as u64);
        assert_eq!(out, bytes);
    }
}
