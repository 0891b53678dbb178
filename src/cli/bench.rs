//! The `bench` subcommand.

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {}

/// Runs `bench`; returns the exit code.
pub fn main(_args: &BenchArgs) -> anyhow::Result<i32> {
    anyhow::bail!("`bench` is not built yet")
}
