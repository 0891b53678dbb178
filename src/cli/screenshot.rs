//! The `screenshot` subcommand: opens the real window, renders, saves a PNG, exits.

/// Arguments of `screenshot`.
#[derive(Debug, clap::Args)]
pub struct ScreenshotArgs {}

/// Runs `screenshot`; returns the exit code.
pub fn main(_args: &ScreenshotArgs) -> anyhow::Result<i32> {
    anyhow::bail!("`screenshot` is not built yet")
}
