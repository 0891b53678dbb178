//! The window's live link: File > "Listen for an engine…" binds a TCP port (loopback unless
//! the user opens it up) and a worker thread listens: a peer that is not a recorder (a port
//! scan, a browser, an idle socket) is refused, counted and logged, and the worker goes on
//! listening; the first engine whose handshake is valid is received (every frame checked,
//! every step kept) and says how it goes; the window shows that in the live window ("Listening
//! on 127.0.0.1:7616", then "Live: ENGINE, step N, B boxes, S steps/s") and never waits on it.
//! When the engine ends the stream, or the user stops listening (effective between two reads,
//! within a tenth of a second; the status says "Stopping…" until then), what arrived opens as
//! a trace: the timeline, the tree view, Changes, health and the Advisor work on it as on a
//! trace file.

use crate::stream::listen::{self as live, End, Listener, Refusal};
use crate::stream::{Gap, Intake, StreamInfo, StreamIntake};
use crate::trace::{Trace, TraceLimits};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// How the live link stands, as the live window shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveStatus {
    /// The address listened on.
    pub addr: Option<SocketAddr>,
    /// The engine's address, once one connected.
    pub peer: Option<SocketAddr>,
    /// The engine's name, once its handshake arrived.
    pub engine: String,
    /// Steps received.
    pub steps: u64,
    /// Boxes in the last step received (static ones not counted).
    pub boxes: usize,
    /// Static boxes.
    pub statics: usize,
    /// Steps a second over the last second or so.
    pub steps_per_sec: f64,
    /// Bytes received.
    pub bytes: u64,
    /// The last gap the engine left (steps it dropped), if any.
    pub last_gap: Option<Gap>,
    /// Engine steps dropped in all.
    pub dropped: u64,
    /// The last peers refused (not recorders, or second engines while one was live), newest
    /// last, at most [`REFUSAL_LOG`] lines.
    pub refused: Vec<String>,
    /// Peers refused in all.
    pub refused_count: u64,
    /// The user asked to stop; the worker has not ended yet.
    pub stopping: bool,
}

/// The refusal lines the live window keeps.
pub const REFUSAL_LOG: usize = 20;

impl LiveStatus {
    /// The status line: listening, or live with the engine's numbers.
    #[must_use]
    pub fn line(&self) -> String {
        let addr = self.addr.map_or_else(|| "?".to_owned(), |a| a.to_string());
        if self.stopping {
            return "Stopping: what arrived opens as a trace in a moment…".to_owned();
        }
        match self.peer {
            None => format!("Waiting for an engine on {addr}: start it with its recorder."),
            Some(peer) if self.engine.is_empty() => {
                format!("An engine connected from {peer}; waiting for its handshake…")
            }
            Some(_) => {
                let mut line = format!(
                    "Live: {}, step {}, {} boxes, {:.0} steps/s",
                    crate::text::excerpt(&self.engine, 60),
                    self.steps.saturating_sub(1),
                    self.boxes,
                    self.steps_per_sec
                );
                if let Some(gap) = self.last_gap {
                    line.push_str(&format!(" ({gap}; {} in all)", self.dropped));
                }
                line
            }
        }
    }
}

/// What a finished live session left.
pub struct LiveResult {
    /// The received steps as a trace (an error when none arrived).
    pub trace: Result<Trace, String>,
    /// What the stream said of itself.
    pub info: StreamInfo,
    /// How it ended.
    pub end: End,
    /// The engine's address.
    pub peer: Option<SocketAddr>,
    /// The stream's bytes as they arrived (every accepted frame, from the magic on): what
    /// `listen --out` writes of the same session.
    pub stream: Vec<u8>,
}

struct Shared {
    status: LiveStatus,
    result: Option<LiveResult>,
}

/// A live link in progress: the worker thread and what it shares with the window.
pub struct LiveJob {
    shared: Arc<Mutex<Shared>>,
    cancel: Arc<AtomicBool>,
    addr: SocketAddr,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl LiveJob {
    /// Binds `addr` (so a port in use is said at once) and starts waiting for an engine on a
    /// worker thread.
    pub fn start(addr: SocketAddr) -> Result<LiveJob, String> {
        let listener = live::bind(addr)?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let shared = Arc::new(Mutex::new(Shared {
            status: LiveStatus {
                addr: Some(addr),
                ..LiveStatus::default()
            },
            result: None,
        }));
        let cancel = Arc::new(AtomicBool::new(false));
        let worker = {
            let shared = Arc::clone(&shared);
            let cancel = Arc::clone(&cancel);
            std::thread::Builder::new()
                .name("live link".to_owned())
                .spawn(move || work(listener, &shared, &cancel))
                .map_err(|e| format!("could not start the live link's thread: {e}"))?
        };
        Ok(LiveJob {
            shared,
            cancel,
            addr,
            worker: Some(worker),
        })
    }

    /// The address listened on.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How it stands now.
    #[must_use]
    pub fn status(&self) -> LiveStatus {
        lock(&self.shared).status.clone()
    }

    /// True once the session has ended (the engine left, or the user stopped it).
    #[must_use]
    pub fn is_finished(&self) -> bool {
        lock(&self.shared).result.is_some()
    }

    /// Asks the worker to stop: it ends within a tenth of a second, keeping what arrived; the
    /// status says "stopping" until it has.
    pub fn stop(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        let mut shared = lock(&self.shared);
        if shared.result.is_none() {
            shared.status.stopping = true;
        }
    }

    /// The session's result once it has ended; `None` before.
    pub fn take_result(&mut self) -> Option<LiveResult> {
        let result = lock(&self.shared).result.take()?;
        if let Some(worker) = self.worker.take() {
            // It has stored its result: it is about to return.
            let _joined = worker.join();
        }
        Some(result)
    }
}

impl Drop for LiveJob {
    fn drop(&mut self) {
        self.stop();
    }
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The worker: listens (refusing and logging every peer that is not a recorder) until one
/// engine's handshake arrives, receives its stream to its end, and leaves the result.
fn work(listener: std::net::TcpListener, shared: &Arc<Mutex<Shared>>, cancel: &AtomicBool) {
    let on_refused = {
        let shared = Arc::clone(shared);
        Arc::new(move |refusal: &Refusal| {
            let mut s = lock(&shared);
            let status = &mut s.status;
            status.refused_count += 1;
            if status.refused.len() >= REFUSAL_LOG {
                status.refused.remove(0);
            }
            status
                .refused
                .push(crate::text::excerpt(&refusal.line(), 200));
        })
    };
    let listener = match Listener::start(listener, live::ListenRules::default(), on_refused) {
        Ok(listener) => listener,
        Err(e) => {
            lock(shared).result = Some(LiveResult {
                trace: Err(format!("could not start listening: {e}")),
                info: StreamInfo::default(),
                end: End::Failed(e.to_string()),
                peer: None,
                stream: Vec::new(),
            });
            return;
        }
    };
    let Some(engine) = listener.next_engine(cancel) else {
        lock(shared).result = Some(LiveResult {
            trace: Err("no engine connected".to_owned()),
            info: StreamInfo::default(),
            end: End::Cancelled,
            peer: None,
            stream: Vec::new(),
        });
        return;
    };
    // One session a job: any other engine is refused from now on.
    listener.stop_taking_engines();
    let peer = engine.peer();
    {
        let mut s = lock(shared);
        s.status.peer = Some(peer);
        s.status.engine = engine.hello().engine.clone();
    }
    let name = format!("live {peer}");
    let intake = StreamIntake::new(
        &name,
        &format!("connection from {peer}"),
        TraceLimits::default(),
    );
    let mut window_start = (Instant::now(), 0u64);
    // The frames as they arrived: "Save received stream…" writes these bytes.
    let mut stream = Vec::new();
    let received = live::receive(
        engine,
        intake,
        Some(&mut stream),
        &live::Receiving {
            cancel,
            limits: TraceLimits::default(),
            frame_timeout: live::FRAME_TIMEOUT,
        },
        |event, intake| {
            let mut s = lock(shared);
            let status = &mut s.status;
            match event {
                Intake::Hello => status.engine = intake.info().engine.clone(),
                Intake::Statics(n) => status.statics = *n,
                Intake::Step { boxes, gap, .. } => {
                    status.steps = intake.step_count();
                    status.boxes = *boxes;
                    if let Some(gap) = gap {
                        status.last_gap = Some(*gap);
                        status.dropped = intake.info().dropped_steps();
                    }
                    let secs = window_start.0.elapsed().as_secs_f64();
                    if secs >= 0.5 {
                        status.steps_per_sec = (status.steps - window_start.1) as f64 / secs;
                        window_start = (Instant::now(), status.steps);
                    }
                }
                Intake::Bye | Intake::Skipped => {}
            }
        },
    );
    // Later engines are refused while the trace is made (the listener closes with this).
    drop(listener);
    let bytes = received.bytes;
    let end = received.end;
    let (trace, info) = match received.intake.finish() {
        Ok((trace, info)) => (Ok(trace), info),
        Err(e) => (Err(e.to_string()), StreamInfo::default()),
    };
    let mut s = lock(shared);
    s.status.bytes = bytes;
    s.status.stopping = false;
    s.result = Some(LiveResult {
        trace,
        info,
        end,
        peer: Some(peer),
        stream,
    });
}
