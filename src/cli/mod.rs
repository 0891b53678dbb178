//! The headless command line: `run`, `replay`, `check`, `sweep`, `quality`, `import-boxes`,
//! `bench`, `listen`, `convert` and `compare`, each in its own file. The binary (`src/main.rs`) adds the
//! window (`aabb-debugger [SCENE]`) and `screenshot`, which open the app crate's window; this
//! library part never links it, so the tests of the headless commands do not either.

pub mod bench;
pub mod check;
pub mod compare;
pub mod convert;
pub mod engine_report;
pub mod import_boxes;
pub mod listen;
pub mod quality;
pub mod replay;
pub mod run;
pub mod sweep;

use clap::{Parser, Subcommand};

/// The headless command line: `aabb-debugger SUBCOMMAND ...` (the binary adds the window and
/// `screenshot`).
#[derive(Debug, Parser)]
#[command(
    name = "aabb-debugger",
    version,
    about = "A visual debugger for dynamic AABB trees"
)]
pub struct Cli {
    /// A subcommand.
    #[command(subcommand)]
    pub command: Option<HeadlessCommand>,
}

/// The headless subcommands.
#[derive(Debug, Subcommand)]
pub enum HeadlessCommand {
    /// Validates a scene file, or a stream file and its engine's broad phase: exit 0 if
    /// valid, 1 with the message on stderr if not.
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
    /// Runs two broad phases, or two settings of one, on the same scene or trace, and prints
    /// what differs step by step: the pairs only one reports, reinserts, tree cost, time.
    Compare(compare::CompareArgs),
}

/// Runs a headless subcommand; returns the process exit code.
pub fn run(command: HeadlessCommand) -> anyhow::Result<i32> {
    match command {
        HeadlessCommand::Check(args) => check::main(&args),
        HeadlessCommand::Run(args) => run::main(&args),
        HeadlessCommand::Replay(args) => replay::main(&args),
        HeadlessCommand::Sweep(args) => sweep::main(&args),
        HeadlessCommand::Quality(args) => quality::main(&args),
        HeadlessCommand::ImportBoxes(args) => import_boxes::main(&args),
        HeadlessCommand::Bench(args) => bench::main(&args),
        HeadlessCommand::Listen(args) => listen::main(&args),
        HeadlessCommand::Convert(args) => convert::main(&args),
        HeadlessCommand::Compare(args) => compare::main(&args),
    }
}

/// `--pair-limit`: a count from 0 to [`crate::broadphase::MAX_PAIR_LIMIT`].
pub fn pair_limit_arg(text: &str) -> Result<usize, String> {
    let limit: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a count of pairs"))?;
    crate::broadphase::check_pair_limit(limit)?;
    Ok(limit)
}
