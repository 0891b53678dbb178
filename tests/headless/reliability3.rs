//! Reliability: the built binary on the inputs a hostile or careless user
//! gives the newer surfaces. One test (at least) per defect class; the rules themselves are
//! also tested where they live (`fileio`, `sweep`, `quality`, `camera`, `text`):
//!
//! 1. a link another user planted in a sticky folder is not followed (as root: the link is
//!    given to another user; the rule on numbers is `fileio::tests`);
//! 2. an output never replaces a file of another kind without `--force`;
//! 3. a stale temporary file of a killed save is removed by the next save;
//! 4. a recording's header cannot order unbounded work: mutated headers with valid checksums
//!    end within bounded time and memory, refused or replayed as recorded (a property test);
//! 6. `quality` skips the slow methods past its box limit and its time budget, and says so;
//! 7. brute force and sweep-and-prune are refused past a size and warned about, and a
//!    degenerate sweep is said;
//! 8. boxes whose areas pass f32 are refused by `quality` with short numbers;
//! 9. messages: numbers printed short, line endings named, one exit code for refused input.

use crate::common::cli;
use crate::common::needs;
use aabb_debugger::broadphase::BroadphaseKind;
use aabb_debugger::replay::Recording;
use aabb_debugger::replay::file::{self, checksum};
use aabb_debugger::scene::Scene;
use cli::{bin, text, utf8, write};
use proptest::prelude::*;
use std::path::Path;
use std::time::Duration;

// ---- 1. links planted by another user ------------------------------------------------------

#[cfg(unix)]
#[test]
fn import_boxes_does_not_follow_a_link_another_user_planted_in_a_sticky_folder() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).expect("mkdir");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    let victim = write(dir.path(), "victim.txt", b"precious");
    let link = shared.join("level.ron");
    std::os::unix::fs::symlink(&victim, &link).expect("plant");
    let list = write(dir.path(), "level.txt", b"0 0 1 1\n2 2 3 3\n");
    // Giving the link to another user needs root; fileio's tests check the rule itself.
    if !needs::root("to give the planted link to another user") {
        return;
    }
    std::os::unix::fs::lchown(&link, Some(4242), Some(4242)).expect("lchown");
    let out = bin(&["import-boxes", utf8(&list), "--out", utf8(&link)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{l}: the symbolic link {l} is in a sticky folder anyone may write to and belongs \
             to user 4242, neither us (0) nor the folder's owner (0); it was not followed and \
             nothing was written\n",
            l = link.display()
        )
    );
    assert_eq!(std::fs::read(&victim).expect("read"), b"precious");
    // `--force` does not follow it either: the rule is not about the kind of file.
    let out = bin(&["import-boxes", utf8(&list), "--out", utf8(&link), "--force"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(&victim).expect("read"), b"precious");
}

// ---- 2. outputs of another kind ------------------------------------------------------------

#[test]
fn import_boxes_refuses_to_replace_a_file_of_another_kind_unless_forced() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = write(dir.path(), "level.txt", b"0 0 1 1\n2 2 3 3\n");
    for (name, bytes, kind) in [
        (
            "main.rs",
            &b"fn main() {}\n"[..],
            "other data (not a scene, recording, trace, stream file, box list or PNG image)",
        ),
        ("other-list.txt", &b"5 5 6 6\n"[..], "a box list"),
    ] {
        let out_path = write(dir.path(), name, bytes);
        let out = bin(&["import-boxes", utf8(&list), "--out", utf8(&out_path)]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "{}: holds {kind}, not a scene; it was not replaced (give another path, or \
                 --force to replace it)\n",
                out_path.display()
            )
        );
        assert_eq!(text(&out.stdout), "");
        assert_eq!(std::fs::read(&out_path).expect("read"), bytes);
        let out = bin(&[
            "import-boxes",
            utf8(&list),
            "--out",
            utf8(&out_path),
            "--force",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(Scene::load(&out_path).is_ok(), "{name} holds the scene now");
        // A scene over the scene it is now needs no --force.
        let out = bin(&["import-boxes", utf8(&list), "--out", utf8(&out_path)]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
}

#[test]
fn run_record_refuses_to_replace_a_scene_before_the_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/default.ron"))
        .expect("scene");
    let b = write(dir.path(), "b.ron", &scene);
    let out = bin(&[
        "run",
        "scenes/default.ron",
        "--steps",
        "3",
        "--record",
        utf8(&b),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}: holds a scene, not a recording; it was not replaced (give another path, or \
             --force to replace it)\n",
            b.display()
        )
    );
    assert_eq!(text(&out.stdout), "");
    assert_eq!(std::fs::read(&b).expect("read"), scene);
    let out = bin(&[
        "run",
        "scenes/default.ron",
        "--steps",
        "3",
        "--record",
        utf8(&b),
        "--force",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(file::load(&b).expect("a recording now").steps.len(), 4);
}

// ---- 3. leftovers of a killed save ---------------------------------------------------------

#[test]
fn a_save_removes_the_stale_temporary_file_a_killed_save_left() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = write(dir.path(), "level.txt", b"0 0 1 1\n2 2 3 3\n");
    let stale = write(dir.path(), ".aabb-save-k1LLed.tmp", &[0u8; 4096]);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .expect("open")
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .expect("age it");
    let fresh = write(dir.path(), ".aabb-save-Saving.tmp", b"a save under way");
    // A save under way holds its temporary file locked.
    let held = std::fs::File::open(&fresh).expect("open");
    held.lock().expect("lock");
    let out_path = dir.path().join("level.ron");
    let out = bin(&["import-boxes", utf8(&list), "--out", utf8(&out_path)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![".aabb-save-Saving.tmp", "level.ron", "level.txt"]
    );
    assert!(fresh.exists());
    drop(held);
}

// ---- 4. recording headers that order unbounded work ----------------------------------------

/// A recording of 30 generated spheres, 4 steps, on `kind`, as bytes, and the header's JSON.
fn small_recording(kind: BroadphaseKind) -> (Vec<u8>, serde_json::Value) {
    let scene = Scene::parse(
        "(format_version: 1, name: \"small\", dimensions: 2, \
         world: (min: (0.0, 0.0), max: (40.0, 24.0)), dt: 0.016666668, \
         tree: (margin: 0.3, velocity_lookahead: 0.1), spheres: [], \
         generate: Some((count: 30, radius: (0.4, 1.2), speed: (1.0, 5.0), seed: 7)))",
        "small.ron",
        false,
    )
    .expect("scene");
    let (mut rec, mut sim) = Recording::start(&scene, "small.ron", kind, 5_000_000).expect("ok");
    for _ in 0..4 {
        rec.step(&mut sim).expect("recorded").expect("stepped");
    }
    let bytes = file::to_bytes(rec.history()).expect("bytes");
    let len = u32::from_le_bytes(bytes[20..24].try_into().expect("4")) as usize;
    let header = serde_json::from_slice(&bytes[24..24 + len]).expect("header JSON");
    (bytes, header)
}

/// `bytes` with its header replaced by `header`, the length and checksum made right.
fn with_header(bytes: &[u8], header: &serde_json::Value) -> Vec<u8> {
    let len = u32::from_le_bytes(bytes[20..24].try_into().expect("4")) as usize;
    let json = serde_json::to_vec(header).expect("JSON");
    let mut out = bytes[..20].to_vec();
    out.extend_from_slice(&u32::try_from(json.len()).expect("fits").to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&bytes[24 + len..]);
    let sum = checksum(&out[20..]);
    out[12..20].copy_from_slice(&sum.to_le_bytes());
    out
}

/// The most a `replay` of a mutated header may take: 60 s (a debug build) and 2 GiB of
/// address space.
const CASE_SECS: u64 = 60;
const CASE_KIB: u64 = 2 * 1024 * 1024;

/// Runs `replay FILE --json` under the memory bound, killed past the time bound; returns its
/// exit code, stdout, stderr and how long it took.
fn bounded_replay(path: &Path) -> (Option<i32>, String, String, Duration) {
    let path = path.to_str().expect("utf-8 path");
    let run = crate::common::cli::bin_bounded(&["replay", path, "--json"], CASE_KIB, CASE_SECS);
    (run.code, run.stdout, run.stderr, run.took)
}

/// One change to a header: a field of the header or of its scene, and the new value.
fn mutation() -> impl Strategy<Value = (&'static str, serde_json::Value)> {
    use serde_json::json;
    prop_oneof![
        prop::sample::select(vec![json!("Tree"), json!("Brute"), json!("Sap")])
            .prop_map(|v| ("broadphase", v)),
        prop::sample::select(vec![
            json!(0),
            json!(1),
            json!(1000),
            json!(100_000_000u64),
            json!(100_000_001u64),
            json!(u64::MAX)
        ])
        .prop_map(|v| ("pair_limit", v)),
        prop::sample::select(vec![
            json!(0),
            json!(29),
            json!(31),
            json!(14_000),
            json!(100_000),
            json!(1_000_000),
            json!(4_000_000_000u64)
        ])
        .prop_map(|v| ("generate.count", v)),
        prop::sample::select(vec![
            json!([100.0, 200.0]),
            json!([0.001, 0.002]),
            json!([1e30, 1e30])
        ])
        .prop_map(|v| ("generate.radius", v)),
        prop::sample::select(vec![
            json!(0),
            json!(1),
            json!(5),
            json!(6),
            json!(u64::MAX)
        ])
        .prop_map(|v| ("steps", v)),
        prop::sample::select(vec![json!(2), json!(3)]).prop_map(|v| ("dimensions", v)),
    ]
}

/// Applies `(field, value)` to the header (its scene is a JSON text in `scene`).
fn mutate(header: &mut serde_json::Value, field: &str, value: serde_json::Value) {
    if let Some(inner) = field.strip_prefix("generate.") {
        let text = header["scene"].as_str().expect("scene text").to_owned();
        let mut scene: serde_json::Value = serde_json::from_str(&text).expect("scene JSON");
        scene["generate"][inner] = value;
        header["scene"] = serde_json::Value::String(scene.to_string());
    } else if field == "dimensions" {
        let text = header["scene"].as_str().expect("scene text").to_owned();
        let mut scene: serde_json::Value = serde_json::from_str(&text).expect("scene JSON");
        scene["dimensions"] = value;
        header["scene"] = serde_json::Value::String(scene.to_string());
    } else {
        header[field] = value;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever a header with a valid checksum asks (a million spheres, a
    /// pair limit of 1e8, brute force, huge spheres, other step counts), `replay` ends within
    /// the bounds: refused with one line naming the file, or replayed as the records say (the
    /// original's output).
    #[test]
    fn mutated_recording_headers_end_within_bounds(
        kind in prop::sample::select(vec![BroadphaseKind::Tree, BroadphaseKind::Brute, BroadphaseKind::Sap]),
        changes in prop::collection::vec(mutation(), 1..=3),
    ) {
        let dir = tempfile::tempdir().expect("temp dir");
        let (bytes, original) = small_recording(kind);
        let plain = dir.path().join("plain.rec");
        std::fs::write(&plain, &bytes).expect("write");
        let (code, want, stderr, _) = bounded_replay(&plain);
        prop_assert_eq!(code, Some(0), "{}", stderr);
        let mut header = original.clone();
        for (field, value) in &changes {
            mutate(&mut header, field, value.clone());
        }
        let path = dir.path().join("mutated.rec");
        std::fs::write(&path, with_header(&bytes, &header)).expect("write");
        let (code, stdout, stderr, took) = bounded_replay(&path);
        prop_assert!(!stderr.contains("panicked"), "{}", stderr);
        match code {
            Some(0) => {
                // Replayed: what the records say, so what the original says (the timings
                // aside, and the broad phase's name when only that changed).
                let strip = |s: &str| -> serde_json::Value {
                    let mut v: serde_json::Value = serde_json::from_str(s).expect("JSON");
                    let o = v.as_object_mut().expect("object");
                    for key in ["ms_per_step", "update_ms_per_step", "pairs_ms_per_step", "broadphase"] {
                        o.remove(key);
                    }
                    v
                };
                prop_assert_eq!(strip(&stdout), strip(&want), "{:?}", changes);
            }
            Some(1) => {
                let lines: Vec<&str> = stderr.lines().collect();
                prop_assert_eq!(lines.len(), 1, "{}", stderr);
                prop_assert!(lines[0].starts_with(&path.display().to_string()), "{}", stderr);
                prop_assert!(lines[0].chars().count() <= 400 + path.display().to_string().len(), "{}", stderr);
                prop_assert_eq!(stdout, "");
            }
            other => prop_assert!(false, "exit {:?} after {:?}: {}", other, took, stderr),
        }
    }
}

/// Two headers that order unbounded work: a million generated spheres by brute force, and a pair limit of
/// 1e8 over 14,000 spheres (records of 30): refused at once, naming the file and what differs.
#[test]
fn headers_ordering_unbounded_work_are_refused_before_anything_is_built() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (bytes, original) = small_recording(BroadphaseKind::Brute);
    let mut million = original.clone();
    mutate(&mut million, "generate.count", serde_json::json!(1_000_000));
    let path = dir.path().join("million.rec");
    std::fs::write(&path, with_header(&bytes, &million)).expect("write");
    let (code, _, stderr, took) = bounded_replay(&path);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        format!(
            "{}: the header's scene has 1000000 spheres at step 0, but step 0's record says 30 \
             appeared: the header does not belong to these records (nothing was rebuilt)\n",
            path.display()
        )
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    let mut limit = original.clone();
    mutate(&mut limit, "generate.count", serde_json::json!(14_000));
    mutate(&mut limit, "pair_limit", serde_json::json!(100_000_000u64));
    std::fs::write(&path, with_header(&bytes, &limit)).expect("write");
    let (code, _, stderr, _) = bounded_replay(&path);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        format!(
            "{}: the header's scene has 14000 spheres at step 0, but step 0's record says 30 \
             appeared: the header does not belong to these records (nothing was rebuilt)\n",
            path.display()
        )
    );
    // A limit below the pairs the records say were found: refused from the records alone.
    let (pairs, zero) = {
        let history = file::from_bytes(&bytes, "r").expect("valid");
        (history.steps[0].candidate_pairs, history.steps[0].stopped)
    };
    assert!(pairs > 1 && !zero, "{pairs}");
    let mut below = original.clone();
    mutate(&mut below, "pair_limit", serde_json::json!(1));
    std::fs::write(&path, with_header(&bytes, &below)).expect("write");
    let (code, _, stderr, _) = bounded_replay(&path);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        format!(
            "{}: step 0's record says {pairs} candidate pairs, more than the header's \
             pair_limit 1: the header does not belong to these records (nothing was rebuilt)\n",
            path.display()
        )
    );
    let mut over = original;
    mutate(&mut over, "pair_limit", serde_json::json!(100_000_001u64));
    std::fs::write(&path, with_header(&bytes, &over)).expect("write");
    let (code, _, stderr, _) = bounded_replay(&path);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        format!(
            "{}: the header's pair_limit: the pair limit must be at most 100000000 (the pairs \
             up to it are kept in memory), got 100000001\n",
            path.display()
        )
    );
}

// ---- 6. quality's bounds -------------------------------------------------------------------

#[test]
fn quality_skips_the_slow_methods_past_its_limits_and_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = write(dir.path(), "l.txt", b"0 0 1 1\n2 0 3 1\n4 0 5 1\n0 2 1 3\n");
    let out = bin(&["quality", utf8(&list), "--json", "--optimize-limit", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["methods"].as_array().expect("methods").len(), 18);
    let skipped = v["skipped"].as_array().expect("skipped");
    assert_eq!(skipped.len(), 19);
    for s in skipped {
        assert_eq!(
            s["reason"],
            "4 boxes, more than --optimize-limit 3: its optimization passes would take \
             minutes (raise the limit to run it)"
        );
    }
    let out = bin(&["quality", utf8(&list), "--time-budget", "0"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert_eq!(
        table
            .lines()
            .filter(|l| l.ends_with(
                "skipped: not started: the time budget of 0 s (--time-budget) was spent"
            ))
            .count(),
        37,
        "{table}"
    );
}

/// Off a terminal (here a pipe) quality says how far it is on stderr: with
/// `--progress-every 0`, after every method, in order.
#[test]
fn quality_writes_progress_to_a_stderr_that_is_not_a_terminal() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = write(dir.path(), "l.txt", b"0 0 1 1\n2 0 3 1\n4 0 5 1\n0 2 1 3\n");
    let out = bin(&["quality", utf8(&list), "--json", "--progress-every", "0"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 37, "{stderr}");
    assert!(
        lines[0].starts_with("quality: 1 of 37 methods done (volume/none last), "),
        "{}",
        lines[0]
    );
    assert!(
        lines[36].starts_with("quality: 37 of 37 methods done (rebuild-greedy+thorough last), "),
        "{}",
        lines[36]
    );
    for (k, line) in lines.iter().enumerate() {
        assert!(
            line.starts_with(&format!("quality: {} of 37 methods done (", k + 1)),
            "{line}"
        );
        assert!(line.ends_with(" s"), "{line}");
    }
    // A terminal-less run with the default cadence on a small set writes nothing.
    let out = bin(&["quality", utf8(&list), "--json"]);
    assert_eq!(text(&out.stderr), "");
}

// ---- 7. brute force and sweep-and-prune past a size ----------------------------------------

/// A scene of `count` generated spheres in a world of `side` (2D).
fn generated(dir: &Path, count: u32, side: f32) -> std::path::PathBuf {
    write(
        dir,
        &format!("g{count}.ron"),
        format!(
            "(format_version: 1, name: \"g\", dimensions: 2, \
             world: (min: (0.0, 0.0), max: ({side:.1}, {side:.1})), dt: 0.016666668, \
             tree: (margin: 0.1, velocity_lookahead: 0.0), spheres: [], \
             generate: Some((count: {count}, radius: (0.1, 0.2), speed: (0.0, 0.1), seed: 1)))"
        )
        .as_bytes(),
    )
}

#[test]
fn brute_force_is_refused_past_its_size_and_warned_about_before() {
    let dir = tempfile::tempdir().expect("temp dir");
    let big = generated(dir.path(), 60_000, 2000.0);
    let out = bin(&["run", utf8(&big), "--steps", "1", "--broadphase", "brute"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}: --broadphase brute: brute force tests 1.8e9 pairs a step over these 60000 \
             bodies, more than the 1.25e9 allowed (minutes a step); use the tree broad phase\n",
            big.display()
        )
    );
    let mid = generated(dir.path(), 12_000, 1000.0);
    let out = bin(&["check", utf8(&mid)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}: warning: with --broadphase brute: brute force tests 7.2e7 pairs a step over \
             these 12000 bodies; the tree finds the same pairs faster\n",
            mid.display()
        )
    );
    let out = bin(&[
        "run",
        utf8(&mid),
        "--steps",
        "1",
        "--broadphase",
        "brute",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}: warning: --broadphase brute: brute force tests 7.2e7 pairs a step over these \
             12000 bodies; the tree finds the same pairs faster\n",
            mid.display()
        )
    );
}

#[test]
fn a_degenerate_sweep_is_said_by_check_and_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 1,000 boxes that all span x from 0 to 1, one above the other.
    let mut list = String::new();
    for i in 0..1000 {
        list.push_str(&format!("0 {i} 1 {i}.5\n"));
    }
    let boxes = write(dir.path(), "column.txt", list.as_bytes());
    let scene = dir.path().join("column.ron");
    let out = bin(&["import-boxes", utf8(&boxes), "--out", utf8(&scene)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let note = "sweep-and-prune degenerates on these 1000 bodies: 100% of their pairs overlap \
                along x (the sweep axis), so it tests 499500 pairs a step, nearly as many as \
                brute force; the tree finds the same pairs faster";
    let out = bin(&["check", utf8(&scene)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}: warning: with --broadphase sap: {note}\n",
            scene.display()
        )
    );
    let out = bin(&[
        "run",
        utf8(&scene),
        "--steps",
        "1",
        "--broadphase",
        "sap",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!("{}: warning: --broadphase sap: {note}\n", scene.display())
    );
}

// ---- 8. boxes past f32's areas -------------------------------------------------------------

#[test]
fn quality_refuses_boxes_whose_areas_pass_f32_with_short_numbers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = write(
        dir.path(),
        "huge.txt",
        b"-3e38 -3e38 -2e38 -2e38\n2e38 2e38 3e38 3e38\n",
    );
    let out = bin(&["quality", utf8(&list)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}: the boxes span 6e38 x 6e38: the half perimeter of the box around them is \
             1.2e39, past f32's largest number (3.4e38), so the trees' costs would be \
             infinite; scale the boxes down\n",
            list.display()
        )
    );
    assert_eq!(text(&out.stdout), "");
}

// ---- 9. messages ---------------------------------------------------------------------------

#[test]
fn replay_shows_a_long_scene_file_name_cut() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (bytes, mut header) = small_recording(BroadphaseKind::Tree);
    header["scene_file"] = serde_json::Value::String("x".repeat(100_000));
    let path = dir.path().join("long.rec");
    std::fs::write(&path, with_header(&bytes, &header)).expect("write");
    let out = bin(&["replay", utf8(&path)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.len() < 2_000, "{} bytes", stdout.len());
    assert!(stdout.contains(&format!("{}…", "x".repeat(60))), "{stdout}");
}

#[test]
fn sweep_on_a_trace_of_step_0_alone_does_not_blame_steps() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = write(
        dir.path(),
        "one.trace",
        b"aabb-trace 1 dims=2 dt=0.1\nstep 0\n1 0 0 1 1\n",
    );
    let out = bin(&[
        "sweep",
        utf8(&trace),
        "--margin",
        "0:0.2:0.1",
        "--lookahead",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}: the trace holds step 0 only; a sweep steps each point from it, so it needs \
             at least one step after step 0\n",
            trace.display()
        )
    );
}

#[test]
fn import_boxes_warns_as_check_does_of_what_it_wrote() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 2,300 boxes that all overlap: 2,643,850 pairs, more than half the default limit.
    let mut list = String::new();
    for i in 0..2300 {
        let d = f64::from(i) * 1e-4;
        list.push_str(&format!("{d} {d} {} {}\n", 10.0 + d, 10.0 + d));
    }
    let boxes = write(dir.path(), "dense.txt", list.as_bytes());
    let scene = dir.path().join("dense.ron");
    let out = bin(&["import-boxes", utf8(&boxes), "--out", utf8(&scene)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let check = bin(&["check", utf8(&scene)]);
    let warned: Vec<String> = text(&check.stderr)
        .lines()
        .filter(|l| l.contains("static boxes alone overlap"))
        .map(str::to_owned)
        .collect();
    assert_eq!(warned.len(), 1, "{}", text(&check.stderr));
    assert_eq!(text(&out.stderr), format!("{}\n", warned[0]));
}

#[test]
fn trace_lines_end_in_lf_or_crlf_alike_and_cr_alone_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A comment line of exactly 4096 bytes: accepted with LF and with CRLF.
    let long = format!("#{}", "c".repeat(4095));
    for end in ["\n", "\r\n"] {
        let body = format!(
            "aabb-trace 1 dims=2 dt=0.1{end}{long}{end}step 0{end}1 0 0 1 1{end}step 1{end}1 0 0 1 1{end}"
        );
        let trace = write(dir.path(), "t.trace", body.as_bytes());
        let out = bin(&["run", utf8(&trace), "--steps", "1", "--json"]);
        assert_eq!(out.status.code(), Some(0), "{end:?}: {}", text(&out.stderr));
    }
    let trace = write(
        dir.path(),
        "cr.trace",
        b"aabb-trace 1 dims=2 dt=0.1\nstep 0\r1 0 0 1 1\rstep 1\r1 0 0 1 1\r",
    );
    let out = bin(&["run", utf8(&trace), "--steps", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}:2: a carriage return (CR) inside the line: lines must end in LF or CRLF, not \
             CR alone\n",
            trace.display()
        )
    );
    let nbsp = write(
        dir.path(),
        "nbsp.trace",
        "aabb-trace 1 dims=2 dt=0.1\nstep 0\n1 0 0\u{a0}1 1\n".as_bytes(),
    );
    let out = bin(&["run", utf8(&nbsp), "--steps", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}:3: a box line is an id and 4 numbers (`id minx miny maxx maxy`), got 4 values \
             (it holds the space U+00A0, not an ASCII space: separate numbers with spaces or \
             tabs)\n",
            nbsp.display()
        )
    );
}

#[test]
fn a_static_section_over_the_limit_is_not_called_a_step() {
    use aabb_debugger::trace::{Trace, TraceLimits};
    let limits = TraceLimits {
        max_line_bytes: 40,
        max_boxes_per_step: 3,
        max_steps: 4,
        max_total_boxes: 100,
        max_bytes: 10_000,
    };
    let text = "aabb-trace 1 dims=2\nstatic\n0 0 0 1 1\n1 0 0 1 1\n2 0 0 1 1\n3 0 0 1 1\nstep 0\n";
    let err = Trace::read(text.as_bytes(), "t", limits).expect_err("refused");
    assert_eq!(
        err.to_string(),
        "t:6: more than 3 boxes in the static section"
    );
}

#[test]
fn a_box_list_with_cr_alone_between_lines_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = write(dir.path(), "mac.txt", b"0 0 1 1\r2 2 3 3\r");
    let out_path = dir.path().join("mac.ron");
    let out = bin(&["import-boxes", utf8(&list), "--out", utf8(&out_path)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}:1: a carriage return (CR) inside the line: lines must end in LF or CRLF, not \
             CR alone\n",
            list.display()
        )
    );
    assert!(!out_path.exists());
}

#[test]
fn a_message_about_f32s_limit_prints_its_numbers_short() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = write(
        dir.path(),
        "far.ron",
        b"(format_version: 1, name: \"far\", dimensions: 2, \
          world: (min: (-3e38, -3e38), max: (3e38, 3e38)), dt: 0.016666668, \
          tree: (margin: 2e38, velocity_lookahead: 0.0), \
          spheres: [(id: 0, center: (0.0, 0.0), radius: 1.0, velocity: (0.0, 0.0))])",
    );
    let out = bin(&["check", utf8(&scene)]);
    assert_eq!(out.status.code(), Some(1));
    // 3e38 was printed as its 39 digits, and the message passed 400 characters.
    let message = "spheres[0] (id 0): its fat box would overflow f32 (beyond ±3.4e38) at the \
                   world's edge: world min (-3e38, -3e38), max (3e38, 3e38), radius 1, speed \
                   (0, 0), tree.margin 2e38, tree.velocity_lookahead 0 s; every fat box must \
                   stay finite, so lower tree.margin";
    assert_eq!(
        text(&out.stderr),
        format!("{}: {message}\n", scene.display())
    );
    assert!(message.chars().count() <= 400);
}

#[test]
fn refused_input_exits_1_and_usage_errors_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = write(dir.path(), "bad.ron", b"(name: ");
    for args in [
        vec!["check", utf8(&bad)],
        vec!["run", utf8(&bad)],
        vec![
            "sweep",
            utf8(&bad),
            "--margin",
            "0:1:0.5",
            "--lookahead",
            "0",
        ],
        vec!["quality", utf8(&bad)],
        vec!["import-boxes", utf8(&bad), "--out", "/nonexistent/x.ron"],
    ] {
        let out = bin(&args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            text(&out.stderr).lines().count(),
            1,
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    for args in [
        vec!["run", "scenes/default.ron", "--margin", "-1"],
        vec!["run", "scenes/default.ron", "--steps", "x"],
        vec!["check", "scenes/default.ron", "--pair-limit", "100000001"],
        vec!["import-boxes", utf8(&bad), "--out", utf8(&bad)],
    ] {
        let out = bin(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}
