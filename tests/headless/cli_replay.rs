//! The built binary's `run --record` and `replay`: `replay FILE --at S --json` prints what
//! `run SCENE --steps S --json` prints, timings aside, on several scenes and broad phases; a
//! run stopped by the pair limit leaves a recording whose last step stops `replay` with
//! `run`'s message; bad files and steps are refused with messages.

use crate::common::cli;
use cli::{bin, text};

/// The JSON object printed, without the timings (which differ from run to run).
fn json_without_timings(args: &[&str]) -> serde_json::Value {
    let out = bin(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let object = v.as_object_mut().expect("an object");
    for key in ["ms_per_step", "update_ms_per_step", "pairs_ms_per_step"] {
        assert!(object.remove(key).is_some_and(|t| t.is_f64()), "{key}");
    }
    v
}

#[test]
fn replay_at_a_step_prints_what_run_prints_for_that_step() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (scene, steps, extra, at) in [
        (
            "scenes/default.ron",
            "120",
            &[][..],
            &[0u64, 1, 37, 119, 120][..],
        ),
        (
            "scenes/choi-appear-disappear.ron",
            "60",
            &["--broadphase", "sap"][..],
            &[3, 30, 60][..],
        ),
        (
            "scenes/spheres-3d.ron",
            "50",
            &["--margin", "0.05"][..],
            &[25, 50][..],
        ),
        ("scenes/stress-5000.ron", "40", &[][..], &[40][..]),
        // Box2D's tree: a keyframe is a deep copy of the C tree, which steps as the original.
        (
            "scenes/random-1000.ron",
            "60",
            &["--broadphase", "box2d"][..],
            &[1, 37, 60][..],
        ),
    ] {
        let file = dir.path().join("r.rec");
        let file = file.to_str().expect("UTF-8 path");
        let mut args = vec!["run", scene, "--steps", steps, "--json", "--record", file];
        args.extend_from_slice(extra);
        let recorded = json_without_timings(&args);
        // Recording does not change what run prints.
        let mut plain = args.clone();
        plain.retain(|a| *a != "--record" && *a != file);
        assert_eq!(json_without_timings(&plain), recorded, "{scene}");
        for &s in at {
            let s = s.to_string();
            let mut run = vec!["run", scene, "--steps", &s, "--json"];
            run.extend_from_slice(extra);
            let replayed = json_without_timings(&["replay", file, "--at", &s, "--json"]);
            assert_eq!(replayed, json_without_timings(&run), "{scene} at {s}");
            assert_eq!(replayed["file"], scene);
        }
        // Without --at: the last step.
        assert_eq!(
            json_without_timings(&["replay", file, "--json"]),
            recorded,
            "{scene}"
        );
    }
}

#[test]
fn replay_without_json_names_the_recording_and_the_step() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("r.rec");
    let file = file.to_str().expect("UTF-8 path");
    let out = bin(&[
        "run",
        "scenes/default.ron",
        "--steps",
        "20",
        "--record",
        file,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = bin(&["replay", file, "--at", "7"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    let mut lines = shown.lines();
    assert_eq!(
        lines.next(),
        Some(format!("recording: {file} at step 7 of 20").as_str())
    );
    assert_eq!(
        lines.next(),
        Some("scene: \"Default: eighty bouncing spheres\" (scenes/default.ron), 2D, 80 spheres")
    );
    assert_eq!(lines.next(), Some("broad phase: tree, 7 steps"));
}

#[test]
fn a_run_stopped_by_the_pair_limit_is_recorded_up_to_the_stop() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("r.rec");
    let file = file.to_str().expect("UTF-8 path");
    let args = [
        "run",
        "scenes/stress-5000.ron",
        "--steps",
        "50",
        "--pair-limit",
        "3",
    ];
    let plain = bin(&args);
    assert_eq!(plain.status.code(), Some(1));
    let mut recorded = args.to_vec();
    recorded.extend_from_slice(&["--record", file]);
    let out = bin(&recorded);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), text(&plain.stderr));
    assert!(
        text(&out.stderr)
            .starts_with("scenes/stress-5000.ron: step 0: more than 3 candidate pairs"),
        "{}",
        text(&out.stderr)
    );
    // The recording holds step 0, which stopped: replay says what run said, of the recording
    // and with the run's limit (replay takes no --pair-limit).
    let out = bin(&["replay", file, "--at", "0", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let said = text(&plain.stderr);
    let why = said
        .strip_prefix("scenes/stress-5000.ron: ")
        .and_then(|t| t.strip_suffix(" (the limit is --pair-limit 3)\n"))
        .expect("run's message");
    assert_eq!(
        text(&out.stderr),
        format!("{file}: {why} (the recorded run stopped there too; the run's pair limit was 3)\n")
    );
    let out = bin(&["replay", file, "--at", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("{file}: step 1 is not in the recording (it holds steps 0 to 0)\n")
    );
}

#[test]
fn replay_refuses_bad_files_with_messages() {
    let out = bin(&["replay", "scenes/default.ron", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr),
        "scenes/default.ron: not a recording file (it does not start with the magic \
         \"AABBREC\"; write one with `aabb-debugger run SCENE --record FILE`)\n"
    );
    let out = bin(&["replay", "no-such.rec"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("no-such.rec: could not look up the file: "));
    // A recording cut short.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("r.rec");
    let name = file.to_str().expect("UTF-8 path");
    let out = bin(&[
        "run",
        "scenes/default.ron",
        "--steps",
        "10",
        "--record",
        name,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bytes = std::fs::read(&file).expect("written");
    std::fs::write(&file, &bytes[..bytes.len() - 30]).expect("cut");
    let out = bin(&["replay", name, "--at", "3"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{name}: the file is truncated: the header says 11 steps (60 bytes each), but 630 \
             bytes follow the header\n"
        )
    );
}

#[test]
fn replay_reports_a_step_that_does_not_rebuild_as_recorded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("r.rec");
    let name = file.to_str().expect("UTF-8 path");
    let out = bin(&[
        "run",
        "scenes/default.ron",
        "--steps",
        "10",
        "--record",
        name,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut bytes = std::fs::read(&file).expect("written");
    let header = u32::from_le_bytes(bytes[20..24].try_into().expect("4 bytes")) as usize;
    // Step 5's hash changed, and the checksum made right: only rebuilding can tell.
    let at = 24 + header + 5 * aabb_debugger::replay::file::STEP_BYTES;
    let recorded = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    bytes[at..at + 8].copy_from_slice(&(recorded ^ 1).to_le_bytes());
    let sum = aabb_debugger::replay::file::checksum(&bytes[20..]);
    bytes[12..20].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&file, &bytes).expect("changed");
    // Steps before it still rebuild.
    assert_eq!(
        bin(&["replay", name, "--at", "4", "--json"]).status.code(),
        Some(0)
    );
    let out = bin(&["replay", name, "--at", "8", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr),
        format!(
            "{name}: step 5 rebuilt differs from the recording: tree hash: recorded {:016x}, \
             rebuilt {recorded:016x}\n",
            recorded ^ 1
        )
    );
}

#[test]
fn a_recording_that_cannot_be_written_fails_the_run_with_a_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("no-such-folder").join("r.rec");
    let name = missing.to_str().expect("UTF-8 path");
    let out = bin(&[
        "run",
        "scenes/default.ron",
        "--steps",
        "5",
        "--json",
        "--record",
        name,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let folder = dir.path().join("no-such-folder");
    assert!(
        text(&out.stderr).starts_with(&format!(
            "{name}: could not create a temporary file in {}: ",
            folder.display()
        )),
        "{}",
        text(&out.stderr)
    );
    assert!(!missing.exists());
}
