//! The `listen` subcommand: waits for one engine on a TCP port (loopback unless `--bind`
//! opens it up), receives its stream to its end, prints a line (or a JSON object) per step,
//! and writes every accepted frame to `--out` as it arrives. When the engine sent its own broad
//! phase (fat boxes, pairs, tree), the end says what its checks found (see
//! [`super::engine_report`]).

use crate::fileio::FileKind;
use crate::stream::listen::{self as live, End};
use crate::stream::{Intake, StreamIntake};
use crate::text::escape_controls;
use crate::trace::TraceLimits;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

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
    /// `run`, `sweep`, `convert` and the window open).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replaces an `--out` file that is not a stream file.
    #[arg(long)]
    pub force: bool,
    /// One JSON object a line instead of readable lines.
    #[arg(long)]
    pub json: bool,
    /// Seconds a connection may take to send its handshake before it is dropped.
    #[arg(long, default_value_t = live::HANDSHAKE_TIMEOUT.as_secs_f64())]
    pub handshake_timeout: f64,
}

/// Runs `listen`: exit 0 when the engine ended or closed the stream, 1 when its stream was
/// refused (the steps before are kept in `--out`), 2 for a bad command line.
pub fn main(args: &ListenArgs) -> anyhow::Result<i32> {
    let addr = SocketAddr::new(args.bind, args.port);
    if !(args.handshake_timeout.is_finite()
        && args.handshake_timeout > 0.0
        && args.handshake_timeout <= 3600.0)
    {
        eprintln!(
            "--handshake-timeout: must be a number of seconds in (0, 3600], got {}",
            args.handshake_timeout
        );
        return Ok(2);
    }
    let mut out = match &args.out {
        Some(path) => match open_out(path, args.force) {
            Ok(file) => Some(std::io::BufWriter::with_capacity(1 << 20, file)),
            Err(message) => {
                eprintln!("{message}");
                return Ok(2);
            }
        },
        None => None,
    };
    let listener = match live::bind(addr) {
        Ok(l) => l,
        Err(message) => {
            eprintln!("{message}");
            return Ok(2);
        }
    };
    let local = listener.local_addr()?;
    if !live::is_loopback(&local) {
        eprintln!("{}", live::open_warning(&local));
    }
    if args.json {
        line(&serde_json::json!({ "listening": local.to_string() }).to_string())?;
    } else {
        line(&format!("listening on {local}"))?;
    }
    let cancel = AtomicBool::new(false);
    let Some((conn, peer)) = live::accept(&listener, &cancel)? else {
        return Ok(0);
    };
    // One engine at a time: later connections are refused (and said) while this one lives.
    let stop = Arc::new(AtomicBool::new(false));
    let refuser = listener.try_clone().map(|l| {
        live::refuse_others(l, Arc::clone(&stop), move |other| {
            eprintln!(
                "refused a second engine from {other}: one engine at a time (the engine from \
                 {peer} is live)"
            );
        })
    });
    let json = args.json;
    if json {
        line(&serde_json::json!({ "connected": peer.to_string() }).to_string())?;
    } else {
        line(&format!("engine connected from {peer}"))?;
    }
    let intake = StreamIntake::counting_only(&format!("connection from {peer}"));
    let mut print_error = None;
    let received = live::receive(
        conn,
        peer,
        intake,
        out.as_mut().map(|w| w as &mut dyn Write),
        &live::Receiving {
            cancel: &cancel,
            limits: TraceLimits::default(),
            handshake_timeout: std::time::Duration::from_secs_f64(args.handshake_timeout),
        },
        |event, intake| {
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
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    if let Ok(handle) = refuser {
        let _joined = handle.join();
    }
    drop(out);
    if let Some(e) = print_error {
        return Err(e);
    }
    let info = received.intake.info();
    let steps = received.intake.step_count();
    let mb = received.bytes as f64 / 1e6;
    let secs = received.secs.max(1e-9);
    if json {
        line(
            &serde_json::json!({
                "end": end_word(&received.end),
                "message": received.end.describe(),
                "engine": info.engine,
                "steps": steps,
                "dropped_steps": info.dropped_steps(),
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
            "{}: {steps} steps received ({} dropped by the engine), {mb:.1} MB in {:.2} s \
             ({:.1} steps/s, {:.1} MB/s){}",
            received.end.describe(),
            info.dropped_steps(),
            received.secs,
            steps as f64 / secs,
            mb / secs,
            args.out.as_ref().map_or_else(String::new, |p| format!(
                "; written to {}",
                escape_controls(&p.display().to_string())
            ))
        ))?;
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

fn end_word(end: &End) -> &'static str {
    match end {
        End::Bye => "bye",
        End::Closed => "closed",
        End::Refused(_) => "refused",
        End::Failed(_) => "failed",
        End::HandshakeTimeout => "timeout",
        End::Cancelled => "cancelled",
    }
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
        Intake::Statics(n) => Some(format!("{n} static boxes")),
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
                "{}step {index}: {boxes} boxes (+{} ~{} -{})",
                gap.map_or_else(String::new, |g| format!("({g})\n")),
                changes.0,
                changes.1,
                changes.2
            )
        }),
        Intake::Bye | Intake::Skipped => None,
    }
}

/// Opens `--out` for writing: never through a symbolic link, and an existing file that is
/// not a stream file only with `--force`.
fn open_out(path: &Path, force: bool) -> Result<std::fs::File, String> {
    let shown = escape_controls(&path.display().to_string());
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            return Err(format!(
                "{shown}: is a symbolic link; --out writes a new file, never through a link \
                 (nothing was written)"
            ));
        }
        if !meta.is_file() {
            return Err(format!(
                "{shown}: is not a regular file (nothing was written)"
            ));
        }
        match crate::fileio::kind_of_path(path) {
            Some(FileKind::Stream | FileKind::Empty) => {}
            _ if force => {}
            kind => {
                return Err(format!(
                    "{shown}: holds {}, not a stream file; it was not replaced (give another \
                     path, or --force to replace it)",
                    kind.map_or("a file that cannot be read", FileKind::noun)
                ));
            }
        }
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options
        .open(path)
        .map_err(|e| format!("{shown}: could not create the stream file: {e}"))
}

/// Prints one line to stdout and flushes it (a test or a pipe reads each line as it comes).
fn line(text: &str) -> anyhow::Result<()> {
    super::run::print_out(&format!("{text}\n"))
}
