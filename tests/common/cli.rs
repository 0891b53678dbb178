//! Running the built binary, for the command-line tests (`cli_*`, `reliability`,
//! `trace_cli`): `use crate::common::cli;`.

// Not every test file uses every helper.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `aabb-debugger ARGS` from the package's folder (so `scenes/...` paths resolve) and
/// waits for it.
pub fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aabb-debugger"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run the binary")
}

/// Output bytes as text (invalid UTF-8 replaced).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Writes `contents` to `name` in `dir`; returns its path.
pub fn write(dir: &Path, name: &str, contents: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write the file");
    path
}

/// A path as text, for an argument (the tests' temporary paths are UTF-8).
pub fn utf8(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// What [`bin_bounded`] saw: the exit code, stdout, stderr and how long it ran.
pub struct Bounded {
    /// The exit code (`None` when a signal ended it).
    pub code: Option<i32>,
    /// Standard output as text.
    pub stdout: String,
    /// Standard error as text.
    pub stderr: String,
    /// From the start to the end.
    pub took: std::time::Duration,
}

/// Runs `aabb-debugger ARGS` with at most `kib` KiB of address space (`ulimit -v`: an
/// allocation past it fails, as under a memory cap), killed and failed past `secs` seconds.
pub fn bin_bounded(args: &[&str], kib: u64, secs: u64) -> Bounded {
    let started = std::time::Instant::now();
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_aabb-debugger"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > std::time::Duration::from_secs(secs) {
            child.kill().expect("kill");
            let _reaped = child.wait();
            panic!("{args:?} ran past {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    Bounded {
        code: out.status.code(),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
        took: started.elapsed(),
    }
}
