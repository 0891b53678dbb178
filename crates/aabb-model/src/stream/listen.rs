//! Receiving a stream live: a TCP listener (loopback unless the user opens it up), one engine
//! at a time, each connection read to its end through [`StreamIntake`], every frame checked
//! before it is kept, and the bytes of every accepted frame optionally written to a stream
//! file as they arrive (so the file is a valid stream whatever the peer does next).
//!
//! Used by `aabb-debugger listen` and by the window's "Listen for an engine...".

use super::{Intake, StreamError, StreamIntake, wire_limits};
use crate::text::escape_controls;
use crate::trace::TraceLimits;
use aabb_recorder::wire::Decoder;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The port the debugger listens on unless told otherwise (the recorders' default too).
pub const DEFAULT_PORT: u16 = aabb_recorder::DEFAULT_PORT;

/// How long a new connection may take to send its handshake (magic and HELLO) before it is
/// dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a blocked read or accept wakes to look at the cancel flag.
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

/// Waits for the next connection on `listener`; `None` when `cancel` is set first.
pub fn accept(
    listener: &TcpListener,
    cancel: &AtomicBool,
) -> std::io::Result<Option<(TcpStream, SocketAddr)>> {
    listener.set_nonblocking(true)?;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        match listener.accept() {
            Ok((conn, peer)) => {
                conn.set_nonblocking(false)?;
                return Ok(Some((conn, peer)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Refuses every connection on `listener` (one engine at a time) until `stop` is set, telling
/// `on_refused` each peer's address. Runs on its own thread.
pub fn refuse_others(
    listener: TcpListener,
    stop: Arc<AtomicBool>,
    mut on_refused: impl FnMut(SocketAddr) + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while let Ok(Some((conn, peer))) = accept(&listener, &stop) {
            // Closing at once is the refusal: a recorder counts it as a failed connection.
            let _closed = conn.shutdown(std::net::Shutdown::Both);
            on_refused(peer);
        }
    })
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
    /// The connection failed (reset, or an I/O error).
    Failed(String),
    /// Nothing (or no handshake) arrived within the handshake timeout.
    HandshakeTimeout,
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
            End::HandshakeTimeout => {
                "no handshake in time (the magic bytes and HELLO): not a recorder, dropped"
                    .to_owned()
            }
            End::Cancelled => "stopped listening".to_owned(),
        }
    }

    /// True for an end that refused or lost data (exit 1 in `listen`).
    #[must_use]
    pub fn is_error(&self) -> bool {
        matches!(
            self,
            End::Refused(_) | End::Failed(_) | End::HandshakeTimeout
        )
    }
}

/// What one connection brought.
pub struct Received {
    /// The steps (kept, or only counted) and what the stream said.
    pub intake: StreamIntake,
    /// How it ended.
    pub end: End,
    /// Bytes received.
    pub bytes: u64,
    /// Seconds from the connection to its end.
    pub secs: f64,
}

/// The socket as the decoder reads it: waits in short slices so that Cancel and the handshake
/// deadline are seen, counts the bytes, and keeps the bytes of the frame being read for the
/// output file.
struct Wire<'a> {
    conn: TcpStream,
    cancel: &'a AtomicBool,
    capture: bool,
    /// What the decoder's owner changes between reads (the decoder lends only `&Wire`).
    side: std::cell::RefCell<WireSide>,
}

/// The parts of [`Wire`] that change as it reads.
#[derive(Default)]
struct WireSide {
    deadline: Option<Instant>,
    captured: Vec<u8>,
    bytes: u64,
    why: Option<End>,
}

impl Read for Wire<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.conn.read(buf) {
                Ok(n) => {
                    let side = self.side.get_mut();
                    side.bytes += n as u64;
                    if self.capture {
                        side.captured.extend_from_slice(&buf[..n]);
                    }
                    return Ok(n);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    let side = self.side.get_mut();
                    if self.cancel.load(Ordering::Relaxed) {
                        side.why = Some(End::Cancelled);
                        return Err(std::io::Error::other("stopped listening"));
                    }
                    if side.deadline.is_some_and(|d| Instant::now() >= d) {
                        side.why = Some(End::HandshakeTimeout);
                        return Err(std::io::Error::other("no handshake in time"));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// How a connection is received: the flag that stops it, the limits, and how long the
/// handshake may take.
pub struct Receiving<'a> {
    /// Set to stop (within a tenth of a second); what arrived is kept.
    pub cancel: &'a AtomicBool,
    /// The decoder's and the trace's limits.
    pub limits: TraceLimits,
    /// How long the magic bytes and HELLO may take to arrive.
    pub handshake_timeout: Duration,
}

/// Reads one engine's connection to its end: every frame is checked, applied to `intake`
/// (which keeps or counts the steps), its bytes written to `out` when given, and
/// `on_event` told. Never panics on anything the peer sends; the steps before a refused
/// frame are kept.
pub fn receive(
    conn: TcpStream,
    peer: SocketAddr,
    mut intake: StreamIntake,
    mut out: Option<&mut dyn Write>,
    rules: &Receiving<'_>,
    mut on_event: impl FnMut(&Intake, &StreamIntake),
) -> Received {
    let started = Instant::now();
    let name = format!("connection from {peer}");
    if let Err(e) = conn.set_read_timeout(Some(POLL)) {
        return Received {
            intake,
            end: End::Failed(format!("{name}: {e}")),
            bytes: 0,
            secs: 0.0,
        };
    }
    let _nodelay = conn.set_nodelay(true);
    let (cancel, limits, handshake_timeout) =
        (rules.cancel, &rules.limits, rules.handshake_timeout);
    let wire = Wire {
        conn,
        cancel,
        capture: out.is_some(),
        side: std::cell::RefCell::new(WireSide {
            deadline: Some(started + handshake_timeout),
            ..WireSide::default()
        }),
    };
    let mut decoder = Decoder::new(wire, wire_limits(limits));
    let end = loop {
        let frame = match decoder.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => break End::Closed,
            Err(error) => {
                if let Some(why) = decoder.get_ref().side.borrow_mut().why.take() {
                    break why;
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
                let mut side = decoder.get_ref().side.borrow_mut();
                if matches!(event, Intake::Hello) {
                    side.deadline = None;
                }
                if let Some(out) = out.as_mut()
                    && let Err(e) = out.write_all(&side.captured)
                {
                    break End::Failed(format!(
                        "{name}: could not write the stream file: {e} (the steps before \
                         are in it)"
                    ));
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
    if let Some(out) = out.as_mut()
        && let Err(e) = out.flush()
        && !end.is_error()
    {
        let bytes = decoder.get_ref().side.borrow().bytes;
        return Received {
            intake,
            end: End::Failed(format!("{name}: could not write the stream file: {e}")),
            bytes,
            secs: started.elapsed().as_secs_f64(),
        };
    }
    if let End::Refused(_) | End::Failed(_) = &end {
        intake.stopped(end.describe());
    }
    let bytes = decoder.get_ref().side.borrow().bytes;
    Received {
        intake,
        end,
        bytes,
        secs: started.elapsed().as_secs_f64(),
    }
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
