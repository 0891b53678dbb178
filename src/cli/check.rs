//! The `check` subcommand.

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {}

/// Runs `check`; returns the exit code.
pub fn main(_args: &CheckArgs) -> anyhow::Result<i32> {
    anyhow::bail!("`check` is not built yet")
}
