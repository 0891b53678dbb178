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
//!
//! Our side keeps up off the UI thread: while steps arrive, a second thread (`ours`) takes
//! the received trace as it grows (through the intake's tap: a copy that shares the received
//! boxes, at most twenty a second) and steps it through our broad phase, a [`Session`] that grows
//! ([`Session::grow`]); when it falls behind the engine the status line says by how many
//! steps, and it catches up without dropping one. When the stream ends, that thread steps the
//! rest and hands the whole session over: opening it costs the window nothing, however long
//! the session was.

use crate::session::{Session, Start};
use crate::stream::listen::{self as live, End, Listener, Refusal};
use crate::stream::{Gap, Intake, StreamInfo, StreamIntake};
use crate::trace::{Trace, TraceLimits};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

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
    /// Pairs the engine's broad phase missed so far (its pairs checked against its fat boxes
    /// as each step arrives), and the received step of the first.
    pub missed: u64,
    /// The received step of the first missed pair.
    pub first_missed: Option<u64>,
    /// The step our broad phase has reached in the received steps (`None` before it has
    /// one).
    pub ours: Option<u64>,
    /// Why our side stopped stepping the received steps, if it did.
    pub ours_stopped: Option<String>,
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
                if let Some(first) = self.first_missed {
                    line.push_str(&format!(
                        "; {} missed {} (the first at step {first})",
                        self.missed,
                        if self.missed == 1 { "pair" } else { "pairs" }
                    ));
                }
                line.push_str(&self.ours_text());
                line
            }
        }
    }

    /// Where our broad phase is in the received steps, for the status line: nothing while
    /// it keeps up, "; our tree N steps behind" when it does not, or why it stopped.
    #[must_use]
    pub fn ours_text(&self) -> String {
        if let Some(why) = &self.ours_stopped {
            return format!("; our tree stopped: {}", crate::text::excerpt(why, 120));
        }
        let last = self.steps.saturating_sub(1);
        match self.ours {
            Some(at) if last.saturating_sub(at) > 1 => {
                format!("; our tree at step {at}, {} steps behind", last - at)
            }
            _ => String::new(),
        }
    }
}

/// What a finished live session left.
pub struct LiveResult {
    /// The received steps, stepped through our broad phase: the session (an error when no
    /// step arrived, or our side could not start on them).
    pub session: Result<Session, String>,
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
    /// The sessions that have ended, oldest first, until the window takes them.
    finished: std::collections::VecDeque<LiveResult>,
    /// The worker has ended (the user stopped listening, or the listener failed).
    ended: bool,
    /// Engines received in all.
    sessions: u64,
}

/// A live link in progress: the worker thread and what it shares with the window.
pub struct LiveJob {
    shared: Arc<Mutex<Shared>>,
    cancel: Arc<AtomicBool>,
    addr: SocketAddr,
    worker: Option<std::thread::JoinHandle<()>>,
    /// Our side's session, while the engine streams (see [`LiveJob::session`]).
    ours: Arc<Ours>,
}

impl LiveJob {
    /// Binds `addr` (so a port in use is said at once) and starts waiting for an engine on a
    /// worker thread.
    /// Our side steps the received steps as `start` says (broad phase, pair limit, recording
    /// budget).
    pub fn start(addr: SocketAddr, start: Start) -> Result<LiveJob, String> {
        let listener = live::bind(addr)?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let shared = Arc::new(Mutex::new(Shared {
            status: LiveStatus {
                addr: Some(addr),
                ..LiveStatus::default()
            },
            finished: std::collections::VecDeque::new(),
            ended: false,
            sessions: 0,
        }));
        let cancel = Arc::new(AtomicBool::new(false));
        let ours = Arc::new(Ours::default());
        let worker = {
            let shared = Arc::clone(&shared);
            let cancel = Arc::clone(&cancel);
            let ours = Arc::clone(&ours);
            std::thread::Builder::new()
                .name("live link".to_owned())
                .spawn(move || work(listener, &shared, &cancel, &ours, start))
                .map_err(|e| format!("could not start the live link's thread: {e}"))?
        };
        Ok(LiveJob {
            shared,
            cancel,
            addr,
            worker: Some(worker),
            ours,
        })
    }

    /// The session our side steps while the engine streams (`None` before the first step
    /// and after the end, when it is handed over): held, the window reads it while our side
    /// waits, at most one drawing of the views (our side steps in slices of a few
    /// milliseconds, so the window waits at most that long for it).
    pub fn session(&self) -> std::sync::MutexGuard<'_, Option<Session>> {
        self.ours
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
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

    /// True when a session has ended (its engine left, or the user stopped listening) and
    /// waits for the window ([`LiveJob::take_finished`]).
    #[must_use]
    pub fn has_finished(&self) -> bool {
        !lock(&self.shared).finished.is_empty()
    }

    /// True once the worker has ended: nothing more comes (the user stopped listening).
    #[must_use]
    pub fn ended(&self) -> bool {
        let s = lock(&self.shared);
        s.ended && s.finished.is_empty()
    }

    /// Asks the worker to stop: it ends within a tenth of a second, keeping what arrived; the
    /// status says "stopping" until it has.
    pub fn stop(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        let mut shared = lock(&self.shared);
        if !shared.ended {
            shared.status.stopping = true;
        }
    }

    /// The oldest session that has ended and not been taken; `None` when none waits.
    pub fn take_finished(&mut self) -> Option<LiveResult> {
        let (result, ended) = {
            let mut s = lock(&self.shared);
            (s.finished.pop_front()?, s.ended)
        };
        if ended && let Some(worker) = self.worker.take() {
            // It has ended: it has returned, or is about to.
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

/// The worker: listens (refusing and logging every peer that is not a recorder), receives
/// each engine that comes to the end of its stream (one at a time: another that comes
/// meanwhile is refused as busy) and leaves each session for the window, until the user
/// stops listening.
fn work(
    listener: std::net::TcpListener,
    shared: &Arc<Mutex<Shared>>,
    cancel: &AtomicBool,
    ours: &Arc<Ours>,
    start: Start,
) {
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
    let ending = |result: Option<LiveResult>| {
        let mut s = lock(shared);
        s.finished.extend(result);
        s.ended = true;
        s.status.stopping = false;
    };
    let listener = match Listener::start(listener, live::ListenRules::default(), on_refused) {
        Ok(listener) => listener,
        Err(e) => {
            return ending(Some(LiveResult {
                session: Err(format!("could not start listening: {e}")),
                info: StreamInfo::default(),
                end: End::Failed(e.to_string()),
                peer: None,
                stream: Vec::new(),
            }));
        }
    };
    while let Some(engine) = listener.next_engine(cancel) {
        ours.reset();
        receive_session(engine, shared, cancel, ours, start);
        if cancel.load(Ordering::Relaxed) {
            break;
        }
    }
    // Stopped: later engines are refused while the window takes what arrived.
    listener.stop_taking_engines();
    let none = lock(shared).sessions == 0;
    ending(none.then(|| LiveResult {
        session: Err("no engine connected".to_owned()),
        info: StreamInfo::default(),
        end: End::Cancelled,
        peer: None,
        stream: Vec::new(),
    }));
}

/// Receives one engine's stream to its end, our side stepping it as it comes, and leaves the
/// session for the window.
fn receive_session(
    engine: live::Engine,
    shared: &Arc<Mutex<Shared>>,
    cancel: &AtomicBool,
    ours: &Arc<Ours>,
    start: Start,
) {
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
    let stepper = {
        let (ours, shared, tap) = (Arc::clone(ours), Arc::clone(shared), intake.tap());
        std::thread::Builder::new()
            .name("live link: our tree".to_owned())
            .spawn(move || step_ours(&ours, &tap, &shared, start))
    };
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
                    let parts = &intake.info().engine_parts.summary;
                    status.missed = parts.missed_total;
                    status.first_missed = parts.missed.first().map(|p| p.index);
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
    let bytes = received.bytes;
    let end = received.end;
    let (session, info) = match received.intake.finish() {
        Ok((trace, info)) => {
            // Our side steps what it has not yet, and hands the session over.
            ours.hand_over(Some(trace));
            let session = match stepper {
                Ok(thread) => thread
                    .join()
                    .unwrap_or_else(|_| Err("our side's thread failed".to_owned())),
                Err(e) => Err(format!("could not start our side's thread: {e}")),
            };
            (session, info)
        }
        Err(e) => {
            ours.hand_over(None);
            if let Ok(thread) = stepper {
                let _nothing = thread.join();
            }
            (Err(e.to_string()), StreamInfo::default())
        }
    };
    let mut s = lock(shared);
    s.status.bytes += bytes;
    s.sessions += 1;
    s.finished.push_back(LiveResult {
        session,
        info,
        end,
        peer: Some(peer),
        stream,
    });
    // The next engine starts from nothing; what was refused is kept.
    let status = &mut s.status;
    status.peer = None;
    status.engine.clear();
    status.steps = 0;
    status.boxes = 0;
    status.statics = 0;
    status.steps_per_sec = 0.0;
    status.last_gap = None;
    status.dropped = 0;
    status.ours = None;
    status.ours_stopped = None;
    status.missed = 0;
    status.first_missed = None;
}

/// How the error of a session our side could not start or grow begins (the window shows it).
pub const OURS_FAILED: &str = "our tree could not take the received steps: ";

/// How often at most our side takes the received trace as it has grown.
const HANDOVER_EVERY: Duration = Duration::from_millis(50);

/// How long our side steps before it lets the window read the session.
const STEP_SLICE: Duration = Duration::from_millis(8);

/// Our side's session and the end of the stream (see the module doc).
#[derive(Default)]
struct Ours {
    end: Mutex<Ending>,
    wake: Condvar,
    /// The session our side steps, while it does (the window reads it between slices).
    session: Mutex<Option<Session>>,
}

/// The end of the stream, as the receiving thread tells our side.
#[derive(Default)]
struct Ending {
    /// The stream has ended.
    ended: bool,
    /// The whole received trace (`None`: no step arrived).
    whole: Option<Trace>,
}

impl Ours {
    /// Ready for the next engine: not ended, no session.
    fn reset(&self) {
        *self.lock_end() = Ending::default();
        *self.session.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn lock_end(&self) -> std::sync::MutexGuard<'_, Ending> {
        self.end.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The stream has ended with `whole` (the received trace; `None`: no step arrived).
    fn hand_over(&self, whole: Option<Trace>) {
        let mut end = self.lock_end();
        end.ended = true;
        end.whole = whole;
        self.wake.notify_one();
    }

    /// Waits at most `wait` for the end: `Some(whole)` once the stream has ended.
    fn ended_within(&self, wait: Duration) -> Option<Option<Trace>> {
        let end = self.lock_end();
        let (mut end, _) = self
            .wake
            .wait_timeout_while(end, wait, |e| !e.ended)
            .unwrap_or_else(PoisonError::into_inner);
        end.ended.then(|| end.whole.take())
    }
}

/// Our side (its own thread): takes the received trace through `tap` as it grows (at most
/// every [`HANDOVER_EVERY`], when steps came since), and steps it through our broad phase in
/// slices, saying in the status where it is; returns the session once the stream has ended
/// and every received step is stepped. It stops stepping at a step the recording refuses
/// (its budget) and still takes every received step, so the session holds them all.
fn step_ours(
    ours: &Ours,
    tap: &crate::stream::TraceTap,
    shared: &Mutex<Shared>,
    start: Start,
) -> Result<Session, String> {
    let mut taken = 0;
    let mut stopped = false;
    loop {
        let ended = ours.ended_within(HANDOVER_EVERY);
        let trace = match &ended {
            Some(whole) => whole.clone(),
            None if tap.step_count() > taken => tap.snapshot(),
            None => None,
        };
        if let Some(trace) = trace {
            taken = trace.step_count();
            let trace = Arc::new(trace);
            let grown = {
                let mut slot = ours.session.lock().unwrap_or_else(PoisonError::into_inner);
                match slot.as_mut() {
                    Some(session) => session.grow(&trace),
                    None => Session::of_trace(trace, None, start)
                        .map(|session| *slot = Some(session))
                        .map_err(|e| e.to_string()),
                }
            };
            if let Err(why) = grown {
                let why = format!("{OURS_FAILED}{why}");
                lock(shared).status.ours_stopped = Some(why.clone());
                return Err(why);
            }
            // Stepped in slices, so the window can read the session between them.
            while !stopped {
                let mut slot = ours.session.lock().unwrap_or_else(PoisonError::into_inner);
                let Some(session) = slot.as_mut() else { break };
                let made = session.catch_up(STEP_SLICE);
                let at = session.sim().step_index();
                let done = session.sim().is_at_end() || session.at_past_step();
                drop(slot);
                let mut s = lock(shared);
                s.status.ours = Some(at);
                match made {
                    Err(crate::session::NotStepped::Recording(e)) => {
                        s.status.ours_stopped = Some(e.to_string());
                        stopped = true;
                    }
                    Err(crate::session::NotStepped::AtEnd(_)) => break,
                    Ok(_) if done => break,
                    Ok(_) => {}
                }
            }
        }
        if ended.is_some() {
            let session = ours
                .session
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            return session.ok_or_else(|| "no step arrived".to_owned());
        }
    }
}
