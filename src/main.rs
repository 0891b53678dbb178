//! The `aabb-debugger` binary: parses the command line and dispatches (see `cli`).

use clap::Parser;

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
