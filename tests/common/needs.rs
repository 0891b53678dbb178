//! What a test needs of the machine beyond Rust: a C compiler, `python3`, pymunk, root, a
//! writable `/dev/full`. A test that finds it missing never passes silently: under CI
//! (`CI=true`), which installs all of them and runs the tests as root, it fails saying what is
//! missing; elsewhere it says on stderr that it is skipped and why, and returns:
//!
//! ```text
//! let Some(cc) = needs::c_compiler("to build the C recorder") else { return };
//! if !needs::root("to give a file to another user") { return; }
//! ```
//!
//! One file for every package's tests: the root's headless tests (`crate::common::needs`),
//! the recorder crate's (crates/aabb-recorder/tests/common) and the model's unit tests
//! (crates/aabb-model/src/fileio.rs) include it. Standard library only.

// Each test binary uses some of these.
#![allow(dead_code)]

use std::process::Command;

/// `have`, after the rule: when false, fails under `CI=true` with `lack` (what is missing and
/// what for), else says on stderr that the test is skipped.
pub fn found(have: bool, lack: &str) -> bool {
    if !have {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{lack}: under CI (CI=true) a test that cannot run fails rather than skips"
        );
        eprintln!("skipped: {lack}");
    }
    have
}

/// True when `program ARGS` runs and succeeds.
fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The C compiler, `cc`, `gcc` or `clang` (the first that runs), needed `why` ("to build
/// ..."); `None` after [`found`]'s rule.
pub fn c_compiler(why: &str) -> Option<&'static str> {
    let cc = ["cc", "gcc", "clang"]
        .into_iter()
        .find(|cc| runs(cc, &["--version"]));
    found(
        cc.is_some(),
        &format!("no C compiler (cc, gcc or clang) on this machine {why}"),
    );
    cc
}

/// True when `python3` runs, needed `why`; else false after [`found`]'s rule.
pub fn python3(why: &str) -> bool {
    found(
        runs("python3", &["--version"]),
        &format!("no python3 on this machine {why}"),
    )
}

/// True when `python3` imports pymunk, needed `why`; else false after [`found`]'s rule.
pub fn pymunk(why: &str) -> bool {
    found(
        runs("python3", &["-c", "import pymunk"]),
        &format!(
            "no pymunk for python3 on this machine (python3 -m pip install 'pymunk>=7,<8') {why}"
        ),
    )
}

/// True when this process runs as root (effective user id 0, from `/proc/self/status`),
/// needed `why`; else false after [`found`]'s rule.
pub fn root(why: &str) -> bool {
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    });
    found(root, &format!("not running as root, which is needed {why}"))
}

/// `/dev/full` opened for writing (every write fails: no space left), needed `why`; `None`
/// after [`found`]'s rule.
pub fn dev_full(why: &str) -> Option<std::fs::File> {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .ok();
    found(
        full.is_some(),
        &format!("no writable /dev/full on this machine {why}"),
    );
    full
}
