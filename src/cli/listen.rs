//! The `listen` subcommand: listens on a TCP port (loopback unless `--bind` opens it up) and
//! keeps listening whatever connects: a peer that is not a recorder is refused with one line on
//! stderr and does not end it. The first engine's stream is received to its end (one line, or
//! one JSON object, per step), every accepted frame written to `--out` as it arrives; then
//! `listen` ends, or with `--keep-listening` waits for the next engine, each session to its own
//! numbered file. Ctrl-C ends it at once, keeping every step received. When the engine sent its
//! own broad phase (fat boxes, pairs, tree), the end says what its checks found (see
//! [`super::engine_report`]).

use crate::fileio::{FileKind, WriteOptions};
use crate::stream::listen::{self as live, Listener};
use crate::stream::{Intake, StreamIntake};
use crate::text::{count, escape_controls};
use crate::trace::TraceLimits;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Arguments of `listen`.
#[derive(Debug, clap::Args)]
pub struct ListenArgs {
    /// The TCP port; 0 picks a free one (printed on the first line).
    #[arg(long, default_value_t = live::DEFAULT_PORT)]
    pub port: u16,
    /// The address to listen on. The default, 127.0.0.1, accepts engines on this machine only;
    /// another (0.0.0.0, a LAN address) opens the debugger to the network, with a warning.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind: IpAddr,
    /// Writes the stream to this file as it arrives (every accepted frame; a stream file that
    /// `run`, `sweep`, `convert` and the window open). It is created (or emptied) when an
    /// engine's handshake arrives, not before. With `--keep-listening`, each session has its
    /// own file: `NAME-1.aabbstream`, `NAME-2.aabbstream`, ...
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replaces an `--out` file that is not a stream file.
    #[arg(long)]
    pub force: bool,
    /// One JSON object a line instead of readable lines.
    #[arg(long)]
    pub json: bool,
    /// Seconds a connection may take to send its handshake (the magic bytes and HELLO) before
    /// it is refused.
    #[arg(long, default_value_t = live::HANDSHAKE_TIMEOUT.as_secs_f64())]
    pub handshake_timeout: f64,
    /// Seconds one frame may take to arrive whole once its first byte came (the engine may
    /// pause between frames as long as it likes).
    #[arg(long, default_value_t = live::FRAME_TIMEOUT.as_secs_f64())]
    pub frame_timeout: f64,
    /// After an engine's stream ends, waits for the next engine (a restarted game) instead of
    /// ending; each session is written to its own numbered `--out` file. Ctrl-C ends it.
    #[arg(long)]
    pub keep_listening: bool,
}

/// Runs `listen`: exit 0 when the (last) engine ended or closed the stream or the user pressed
/// Ctrl-C, 1 when its stream was refused or lost (the steps before are kept in `--out`), 2 for
/// a bad command line.
pub fn main(args: &ListenArgs) -> anyhow::Result<i32> {
    let addr = SocketAddr::new(args.bind, args.port);
    let Some(handshake_timeout) = seconds("--handshake-timeout", args.handshake_timeout) else {
        return Ok(2);
    };
    let Some(frame_timeout) = seconds("--frame-timeout", args.frame_timeout) else {
        return Ok(2);
    };
    if let Some(path) = &args.out
        && let Err(message) = check_out(path, args.force)
    {
        eprintln!("{message}");
        return Ok(2);
    }
    let socket = match live::bind(addr) {
        Ok(l) => l,
        Err(message) => {
            eprintln!("{message}");
            return Ok(2);
        }
    };
    let local = socket.local_addr()?;
    if !live::is_loopback(&local) {
        eprintln!("{}", live::open_warning(&local));
    }
    // Ctrl-C (and a polite kill) stops listening: the session's end is said, the file is whole.
    let cancel = Arc::new(AtomicBool::new(false));
    // A second Ctrl-C while the first is being honoured ends the process at once.
    #[cfg(unix)]
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&cancel))?;
        signal_hook::flag::register(signal, Arc::clone(&cancel))?;
    }
    let listener = Listener::start(
        socket,
        live::ListenRules { handshake_timeout },
        Arc::new(|refusal: &live::Refusal| eprintln!("{}", escape_controls(&refusal.line()))),
    )?;
    if args.json {
        line(&serde_json::json!({ "listening": local.to_string() }).to_string())?;
    } else {
        line(&format!("listening on {local}"))?;
    }
    let mut code = 0;
    let mut session = 0u64;
    while let Some(engine) = listener.next_engine(&cancel) {
        session += 1;
        if !args.keep_listening {
            // One engine: any other is refused from now on, not left waiting.
            listener.stop_taking_engines();
        }
        code = receive_one(args, engine, session, &cancel, frame_timeout)?;
        if !args.keep_listening {
            break;
        }
    }
    // Stopped (Ctrl-C) with sessions to count, or before any engine came.
    if args.keep_listening || session == 0 {
        // The handshakes under way when it stopped are counted (each ends within its
        // refusal's half second, or at most the wait here).
        listener.stop_taking_engines();
        listener.settle(Duration::from_secs(2));
        let turned = listener.turned();
        if args.json {
            line(
                &serde_json::json!({
                    "stopped_listening": true,
                    "sessions": session,
                    "not_recorders": turned.not_recorders,
                    "busy": turned.busy,
                    "crowded": turned.crowded,
                })
                .to_string(),
            )?;
        } else {
            let strays = turned.not_recorders + turned.crowded;
            line(&format!(
                "stopped listening: {}; refused {} that {} not recorders and {}",
                count(session, "session", "sessions"),
                count(strays, "peer", "peers"),
                if strays == 1 { "was" } else { "were" },
                count(turned.busy, "second engine", "second engines"),
            ))?;
        }
    }
    Ok(code)
}

/// Receives one engine's session to its end; its exit code.
fn receive_one(
    args: &ListenArgs,
    engine: live::Engine,
    session: u64,
    cancel: &AtomicBool,
    frame_timeout: Duration,
) -> anyhow::Result<i32> {
    let peer = engine.peer();
    let json = args.json;
    let out_path = args.out.as_ref().map(|p| {
        if args.keep_listening {
            numbered(p, session)
        } else {
            p.clone()
        }
    });
    let mut out = match &out_path {
        Some(path) => match open_out(path, args.force) {
            Ok(file) => Some(file),
            Err(message) => {
                // Not written, but received: the engine is not left hanging.
                eprintln!("{message}");
                None
            }
        },
        None => None,
    };
    if json {
        line(
            &serde_json::json!({ "connected": peer.to_string(), "session": session }).to_string(),
        )?;
    } else {
        line(&format!("engine connected from {peer}"))?;
    }
    let mut intake = StreamIntake::counting_only(&format!("connection from {peer}"));
    if out.is_some() {
        // What is written must open: where readers would stop is said as it happens.
        intake = intake.checking_files();
    }
    let mut print_error = None;
    let mut warned = false;
    let received = live::receive(
        engine,
        intake,
        out.as_mut().map(|w| w as &mut dyn Write),
        &live::Receiving {
            cancel,
            limits: TraceLimits::default(),
            frame_timeout,
        },
        |event, intake| {
            if !warned && let Some(why) = &intake.info().readers_stop {
                warned = true;
                eprintln!(
                    "warning: {}: {} (every step is still written)",
                    out_path
                        .as_ref()
                        .map_or_else(String::new, |p| escape_controls(&p.display().to_string())),
                    escape_controls(why)
                );
            }
            if print_error.is_some() {
                return;
            }
            let text = describe(event, intake, json);
            if let Some(text) = text
                && let Err(e) = line(&text)
            {
                print_error = Some(e);
            }
        },
    );
    let out_written = out.is_some();
    drop(out);
    if let Some(e) = print_error {
        return Err(e);
    }
    let info = received.intake.info();
    let steps = received.intake.step_count();
    let mb = received.bytes as f64 / 1e6;
    let secs = received.secs.max(1e-9);
    let written_to = out_path.as_ref().filter(|_| out_written);
    if json {
        line(
            &serde_json::json!({
                "end": received.end.word(),
                "message": received.end.describe(),
                "session": session,
                "engine": info.engine,
                "steps": steps,
                "steps_written": written_to.map(|_| received.steps_written),
                "out": written_to.map(|p| p.display().to_string()),
                "dropped_steps": info.dropped_steps(),
                "readers_stop": written_to.and(info.readers_stop.as_ref()),
                "bytes": received.bytes,
                "seconds": received.secs,
                "steps_per_sec": steps as f64 / secs,
                "mb_per_sec": mb / secs,
                "engine_parts": super::engine_report::json(&info.engine_parts.summary),
            })
            .to_string(),
        )?;
    } else {
        line(&format!(
            "{}: {} received ({} dropped by the engine), {mb:.1} MB in {:.2} s \
             ({:.1} steps/s, {:.1} MB/s){}",
            received.end.describe(),
            count(steps, "step", "steps"),
            info.dropped_steps(),
            received.secs,
            steps as f64 / secs,
            mb / secs,
            written_to.map_or_else(String::new, |p| format!(
                "; {} written to {}",
                received.steps_written,
                escape_controls(&p.display().to_string())
            ))
        ))?;
        if let (Some(path), Some(why)) = (written_to, &info.readers_stop) {
            line(&format!(
                "warning: {}: {}",
                escape_controls(&path.display().to_string()),
                escape_controls(why)
            ))?;
        }
        for text in super::engine_report::lines(&info.engine_parts.summary) {
            line(&text)?;
        }
    }
    if received.end.is_error() {
        eprintln!("{}", received.end.describe());
        return Ok(1);
    }
    Ok(0)
}

/// A number of seconds in (0, 3600], or `None` after saying what is wrong.
fn seconds(flag: &str, value: f64) -> Option<Duration> {
    if value.is_finite() && value > 0.0 && value <= 3600.0 {
        Some(Duration::from_secs_f64(value))
    } else {
        eprintln!("{flag}: must be a number of seconds in (0, 3600], got {value}");
        None
    }
}

/// `PATH` with `-N` before its extension: `pile.aabbstream` -> `pile-2.aabbstream`.
fn numbered(path: &Path, n: u64) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{n}"),
    };
    path.with_file_name(name)
}

/// The line printed for one event, or none.
fn describe(event: &Intake, intake: &StreamIntake, json: bool) -> Option<String> {
    let info = intake.info();
    match event {
        Intake::Hello if json => {
            Some(serde_json::json!({ "engine": info.engine, "units": info.units }).to_string())
        }
        Intake::Hello => Some(format!(
            "engine: {} (units: {})",
            escape_controls(&info.engine),
            escape_controls(&info.units)
        )),
        Intake::Statics(n) if json => Some(serde_json::json!({ "static_boxes": n }).to_string()),
        Intake::Statics(n) => Some(count(*n as u64, "static box", "static boxes")),
        Intake::Step {
            index,
            engine_step,
            boxes,
            changes,
            gap,
        } => Some(if json {
            serde_json::json!({
                "step": index,
                "engine_step": engine_step,
                "boxes": boxes,
                "appeared": changes.0,
                "moved": changes.1,
                "gone": changes.2,
                "dropped_before": gap.map_or(0, |g| g.last - g.first + 1),
            })
            .to_string()
        } else {
            format!(
                "{}step {index}: {} (+{} ~{} -{})",
                gap.map_or_else(String::new, |g| format!("({g})\n")),
                count(*boxes as u64, "box", "boxes"),
                changes.0,
                changes.1,
                changes.2
            )
        }),
        Intake::Bye | Intake::Skipped => None,
    }
}

/// Checks `--out` before listening, writing nothing: never a symbolic link, a regular file if
/// it exists, ours (or in a folder of our own: another user's file in a sticky folder such as
/// /tmp is refused), and a stream file unless `force`.
fn check_out(path: &Path, force: bool) -> Result<(), String> {
    let shown = escape_controls(&path.display().to_string());
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.file_type().is_symlink()
    {
        return Err(format!(
            "{shown}: is a symbolic link; --out writes a new file, never through a link \
             (nothing was written)"
        ));
    }
    crate::fileio::check_replaceable(path, WriteOptions::of_kind(FileKind::Stream, force))
        .map(|_| ())
        .map_err(|e| escape_controls(&e.to_string()))
}

/// Opens `--out` for writing when an engine arrives: checked again (it may have changed while
/// listening), then created or emptied, never through a link.
fn open_out(path: &Path, force: bool) -> Result<std::fs::File, String> {
    check_out(path, force)?;
    let shown = escape_controls(&path.display().to_string());
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    options
        .open(path)
        .map_err(|e| format!("{shown}: could not create the stream file: {e} (the stream is received but not written)"))
}

/// Prints one line to stdout and flushes it (a test or a pipe reads each line as it comes).
fn line(text: &str) -> anyhow::Result<()> {
    super::run::print_out(&format!("{text}\n"))
}
