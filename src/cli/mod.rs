//! The command line: `aabb-debugger [SCENE]` opens the window; `run`, `replay`, `check`, `sweep`,
//! `quality`, `import-boxes`, `bench`, `listen`, `convert` and `screenshot` are the headless (or self-closing) subcommands. Each lives in its
//! own file.

pub mod bench;
pub mod check;
pub mod convert;
pub mod import_boxes;
pub mod listen;
pub mod quality;
pub mod replay;
pub mod run;
#[cfg(feature = "app")]
pub mod screenshot;
pub mod sweep;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// The parsed command line.
#[derive(Debug, Parser)]
#[command(
    name = "aabb-debugger",
    version,
    about = "A visual debugger for dynamic AABB trees"
)]
pub struct Cli {
    /// A scene file to open in the window (RON or JSON); the built-in scene when absent.
    pub scene: Option<PathBuf>,
    /// A subcommand; none opens the window.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validates a scene file: exit 0 if valid, 1 with the message on stderr if not.
    Check(check::CheckArgs),
    /// Steps a scene headless and prints a summary.
    Run(run::RunArgs),
    /// Rebuilds a step of a recording (`run --record`) and prints what `run` prints for it.
    Replay(replay::ReplayArgs),
    /// Runs a scene at every margin x look-ahead value of a grid and recommends one.
    Sweep(sweep::SweepArgs),
    /// Builds the tree over a box list or a scene's boxes with every insertion x balancing, a
    /// rebuild and a batch creation, and prints each one's height, SAH cost and build time.
    Quality(quality::QualityArgs),
    /// Turns a box list (one box a line) into a scene of static boxes.
    ImportBoxes(import_boxes::ImportBoxesArgs),
    /// Runs the standard benchmark workload on the tree.
    Bench(bench::BenchArgs),
    /// Waits for an engine's recorder on a TCP port and receives its stream (the live link).
    Listen(listen::ListenArgs),
    /// Converts a stream file to a text trace, or a text trace to a stream file.
    Convert(convert::ConvertArgs),
    /// Opens the real window, renders a scene, saves a PNG and exits.
    #[cfg(feature = "app")]
    Screenshot(screenshot::ScreenshotArgs),
}

/// Runs the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Some(Command::Check(args)) => check::main(&args),
        Some(Command::Run(args)) => run::main(&args),
        Some(Command::Replay(args)) => replay::main(&args),
        Some(Command::Sweep(args)) => sweep::main(&args),
        Some(Command::Quality(args)) => quality::main(&args),
        Some(Command::ImportBoxes(args)) => import_boxes::main(&args),
        Some(Command::Bench(args)) => bench::main(&args),
        Some(Command::Listen(args)) => listen::main(&args),
        Some(Command::Convert(args)) => convert::main(&args),
        #[cfg(feature = "app")]
        Some(Command::Screenshot(args)) => screenshot::main(&args),
        None => open_window(cli.scene),
    }
}

#[cfg(feature = "app")]
fn open_window(scene: Option<PathBuf>) -> anyhow::Result<i32> {
    crate::app::run_window(scene)
}

#[cfg(not(feature = "app"))]
fn open_window(_scene: Option<PathBuf>) -> anyhow::Result<i32> {
    anyhow::bail!(
        "this build has no window (built without the `app` feature); try `run` or `bench`"
    )
}

/// `--pair-limit`: a count from 0 to [`crate::broadphase::MAX_PAIR_LIMIT`].
pub(crate) fn pair_limit_arg(text: &str) -> Result<usize, String> {
    let limit: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a count of pairs"))?;
    crate::broadphase::check_pair_limit(limit)?;
    Ok(limit)
}
