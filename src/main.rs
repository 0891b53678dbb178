//! The `aabb-debugger` binary: parses the command line and dispatches (see `cli`).

use clap::Parser;

/// mimalloc: the window allocates many short-lived buffers per frame (meshes, text); it is
/// faster there than the system allocator. Only in builds with the app.
#[cfg(feature = "app")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = aabb_debugger::cli::Cli::parse();
    match aabb_debugger::cli::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::exit(1);
        }
    }
}
