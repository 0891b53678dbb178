//! The `aabb-debugger` binary: parses the command line and dispatches: the headless
//! subcommands to the library's `cli`, the window and `screenshot` to the app crate.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[cfg(feature = "app")]
mod frames;
#[cfg(feature = "app")]
mod screenshot;

/// mimalloc: the window allocates many short-lived buffers per frame (meshes, text); it is
/// faster there than the system allocator. Only in builds with the app.
#[cfg(feature = "app")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The whole command line.
#[derive(Debug, Parser)]
#[command(
    name = "aabb-debugger",
    version,
    about = "A visual debugger for dynamic AABB trees"
)]
struct Args {
    /// A scene file to open in the window (RON or JSON), or a recording, trace, stream file or
    /// box list; the built-in scene when absent.
    scene: Option<PathBuf>,
    /// Opens the window already listening for an engine on this port (7616 when no port is
    /// given) of 127.0.0.1, on an empty world that waits for it.
    #[arg(long, value_name = "PORT", num_args = 0..=1,
          default_missing_value = "7616", conflicts_with = "scene")]
    listen: Option<u16>,
    /// A subcommand; none opens the window.
    #[command(subcommand)]
    command: Option<BinCommand>,
}

/// Every subcommand: the library's headless ones and `screenshot`.
#[derive(Debug, Subcommand)]
enum BinCommand {
    #[command(flatten)]
    Headless(aabb_debugger::cli::HeadlessCommand),
    /// Opens the real window, renders a scene, saves a PNG and exits.
    #[cfg(feature = "app")]
    Screenshot(screenshot::ScreenshotArgs),
    /// Opens the real window on a scene, plays or pans it, and prints how fast it draws.
    #[cfg(feature = "app")]
    Frames(frames::FramesArgs),
}

fn run(args: Args) -> anyhow::Result<i32> {
    match args.command {
        Some(BinCommand::Headless(command)) => aabb_debugger::cli::run(command),
        #[cfg(feature = "app")]
        Some(BinCommand::Screenshot(args)) => screenshot::main(&args),
        #[cfg(feature = "app")]
        Some(BinCommand::Frames(args)) => frames::main(&args),
        None => match args.listen {
            Some(port) => open_listening(port),
            None => open_window(args.scene),
        },
    }
}

#[cfg(feature = "app")]
fn open_window(scene: Option<PathBuf>) -> anyhow::Result<i32> {
    aabb_app::run_window(scene)
}

#[cfg(feature = "app")]
fn open_listening(port: u16) -> anyhow::Result<i32> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    aabb_app::run_window_listening(addr)
}

#[cfg(not(feature = "app"))]
fn open_listening(_port: u16) -> anyhow::Result<i32> {
    open_window(None)
}

#[cfg(not(feature = "app"))]
fn open_window(_scene: Option<PathBuf>) -> anyhow::Result<i32> {
    anyhow::bail!(
        "this build has no window (built without the `app` feature); try `run` or `bench`"
    )
}

fn main() {
    match run(Args::parse()) {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::exit(1);
        }
    }
}
