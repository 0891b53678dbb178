//! The `run` subcommand.

/// Arguments of `run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {}

/// Runs `run`; returns the exit code.
pub fn main(_args: &RunArgs) -> anyhow::Result<i32> {
    anyhow::bail!("`run` is not built yet")
}
