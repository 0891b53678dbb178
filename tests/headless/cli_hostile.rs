//! The built binary against inputs a user can give that once did harm: an output path that
//! is the input (the input was replaced), a recording too long to read back (written anyway,
//! or the run ran out of memory), a full standard output (a panic), a trace whose motion
//! makes a velocity past `f32`, box lists at the ends of `f32`'s range, a byte-order mark,
//! a file of another kind given as a scene or a box list, recorded times that are no times,
//! and static boxes that overlap past the pair limit (`check` said ok). Each is refused, or
//! handled, with a message that names the file or the option, and nothing is lost.

use std::path::Path;

use crate::common::cli;
use crate::common::needs;
use cli::{bin, text, utf8, write};

/// Three spheres at one point: three pairs, past a pair limit of 2.
const CROWD: &str = "(format_version: 1, dimensions: 2, world: (min: (0.0, 0.0), max: (10.0, \
                     10.0)), spheres: [(id: 0, center: (5.0, 5.0), radius: 1.0, velocity: (0.0, \
                     0.0)), (id: 1, center: (5.0, 5.0), radius: 1.0, velocity: (0.0, 0.0)), (id: \
                     2, center: (5.0, 5.0), radius: 1.0, velocity: (0.0, 0.0))])";

const SCENE: &str = "(format_version: 1, dimensions: 2, world: (min: (0.0, 0.0), max: (10.0, \
                     10.0)), spheres: [(id: 0, center: (5.0, 5.0), radius: 1.0, velocity: (1.0, \
                     0.0))])";

#[test]
fn an_output_that_is_the_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = write(dir.path(), "s.ron", SCENE.as_bytes());
    let list = write(dir.path(), "l.boxes", b"0 0 1 1\n2 2 3 3\n");
    #[cfg(unix)]
    let link = {
        let link = dir.path().join("link.ron");
        std::os::unix::fs::symlink(&scene, &link).expect("a link");
        link
    };
    #[cfg(not(unix))]
    let link = scene.clone();
    let cases: Vec<(Vec<&str>, &Path, &str)> = vec![
        (
            vec![
                "run",
                utf8(&scene),
                "--steps",
                "3",
                "--record",
                utf8(&scene),
            ],
            &scene,
            "give --record another path",
        ),
        (
            vec!["run", utf8(&scene), "--steps", "3", "--record", utf8(&link)],
            &scene,
            "give --record another path",
        ),
        (
            vec!["import-boxes", utf8(&list), "--out", utf8(&list)],
            &list,
            "give --out another path",
        ),
        (
            vec!["screenshot", utf8(&scene), "--out", utf8(&scene)],
            &scene,
            "give --out another path",
        ),
    ];
    for (args, input, says) in cases {
        let before = std::fs::read(input).expect("read");
        let out = bin(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(says) && err.contains("nothing was written"),
            "{err}"
        );
        assert_eq!(std::fs::read(input).expect("read"), before, "{args:?}");
    }
}

/// `run --record` refuses, before the run, more steps than a readable recording of this
/// scene holds (its header takes part of the 512 MiB `replay` reads): once it ran out of
/// memory, or wrote a file `replay` refused.
#[test]
fn a_recording_too_long_to_read_back_is_refused_before_the_run() {
    use aabb_debugger::replay::{History, file};
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = write(dir.path(), "s.ron", SCENE.as_bytes());
    let rec = dir.path().join("r.rec");
    let parsed = aabb_debugger::scene::Scene::load(&scene).expect("valid");
    let sim = aabb_debugger::scene::Simulation::paused_at_zero(
        &parsed,
        aabb_debugger::broadphase::BroadphaseKind::Tree,
        aabb_debugger::broadphase::DEFAULT_PAIR_LIMIT,
    )
    .expect("a simulation");
    let most =
        file::max_steps_after_zero(&History::new(&parsed, utf8(&scene), &sim)).expect("a header");
    assert!(most < file::MAX_RECORDED_STEPS && most > file::MAX_RECORDED_STEPS - 100);
    for steps in [most + 1, file::MAX_RECORDED_STEPS + 1, u64::MAX] {
        let steps = steps.to_string();
        let out = bin(&[
            "run",
            utf8(&scene),
            "--steps",
            &steps,
            "--record",
            utf8(&rec),
        ]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(
            err,
            format!(
                "{}: --steps: a recording of this scene holds at most {most} steps (its file at \
                 most {} bytes, what replay reads), got {steps}\n",
                utf8(&scene),
                file::MAX_RECORDING_BYTES
            )
        );
        assert!(!rec.exists());
    }
}

#[test]
fn a_full_standard_output_is_an_error_not_a_panic() {
    let Some(full) = needs::dev_full("to fill standard output") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = write(dir.path(), "s.ron", SCENE.as_bytes());
    for args in [
        vec!["bench", "--n", "50", "--steps", "2"],
        vec!["bench", "--n", "50", "--steps", "2", "--json"],
        vec!["run", utf8(&scene), "--steps", "2"],
        vec!["check", utf8(&scene)],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_aabb-debugger"))
            .args(&args)
            .stdout(full.try_clone().expect("clone"))
            .output()
            .expect("run the binary");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("could not write the result to the standard output")
                && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
    // A closed pipe is no error: the reader has what it wanted.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_aabb-debugger"))
        .args(["bench", "--n", "50", "--steps", "2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_trace_whose_motion_overflows_f32_is_refused_at_the_line_that_moves() {
    let dir = tempfile::tempdir().expect("temp dir");
    let jump = write(
        dir.path(),
        "jump.trace",
        b"aabb-trace 1 dims=2 dt=0.016666668\nstep 0\n0 -3.4e38 0 -3.4e38 1\n1 0 0 1 1\nstep 1\n1 0 0 1 1\n0 3.4e38 0 3.4e38 1\n",
    );
    let tiny_dt = write(
        dir.path(),
        "dt.trace",
        b"aabb-trace 1 dims=2 dt=1e-45\nstep 0\n0 0 0 1 1\nstep 1\n0 1 1 2 2\n",
    );
    for (file, line, says) in [
        (
            &jump,
            7,
            "box 0 moves from centre [-3.4e38, 0.5] to [3.4e38, 0.5] in one step of dt = \
             1.6666668e-2 s: its velocity, [inf, 0.0], is past what f32 holds",
        ),
        (
            &tiny_dt,
            5,
            "box 0 moves from centre [0.5, 0.5] to [1.5, 1.5] in one step of dt = 1e-45 s",
        ),
    ] {
        for command in ["run", "sweep"] {
            let mut args = vec![command, utf8(file)];
            if command == "sweep" {
                args.extend(["--margin", "0:0.2:0.1", "--lookahead", "0"]);
            }
            let out = bin(&args);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(
                err.starts_with(&format!("{}:{line}: {says}", utf8(file))),
                "{err}"
            );
        }
    }
}

#[test]
fn step_errors_name_the_pair_limit_only_when_it_stopped_the_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Margin 1e38 overflows the fat box of a box at 3e38: a body's error, not the limit's.
    let far = write(
        dir.path(),
        "far.trace",
        b"aabb-trace 1 dims=2 dt=0.016666668\nstep 0\n0 3e38 3e38 3.1e38 3.1e38\n",
    );
    let out = bin(&["run", utf8(&far), "--margin", "1e38", "--steps", "0"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("step 0: box 0: its fat box overflows f32") && !err.contains("--pair-limit"),
        "{err}"
    );
    // Three spheres at one point, a limit of 2: the limit's error says which limit.
    let crowd = write(dir.path(), "crowd.ron", CROWD.as_bytes());
    let out = bin(&["run", utf8(&crowd), "--pair-limit", "2"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.trim_end().ends_with("(the limit is --pair-limit 2)"),
        "{err}"
    );
}

#[test]
fn command_line_overrides_are_refused_naming_the_option() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = write(dir.path(), "s.ron", SCENE.as_bytes());
    let trace = write(
        dir.path(),
        "t.trace",
        b"aabb-trace 1 dims=2 dt=0.016666668\nstep 0\n0 0 0 1 1\n",
    );
    for (file, option, value) in [
        (&scene, "--margin", "-1"),
        (&trace, "--margin", "-1"),
        (&scene, "--lookahead", "NaN"),
        (&trace, "--lookahead", "inf"),
    ] {
        let out = bin(&["run", utf8(file), option, value]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.starts_with(&format!("{option}: must be a finite number >= 0, got")),
            "{err}"
        );
    }
    // A value the scene cannot take names the file and the option, not a placeholder: a
    // sphere at speed 100 looks 3e38 s ahead past f32's range.
    let fast = write(
        dir.path(),
        "fast.ron",
        SCENE.replace("(1.0, 0.0)", "(100.0, 0.0)").as_bytes(),
    );
    let scene = fast;
    let out = bin(&["run", utf8(&scene), "--lookahead", "3e38"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(utf8(&scene))
            && err.contains("from the command line")
            && !err.contains("<scene>"),
        "{err}"
    );
}

#[test]
fn box_lists_at_the_ends_of_f32_and_sphere_counts_past_the_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out_path = dir.path().join("o.ron");
    let out = utf8(&out_path);
    // Boxes at f32's ends: the world touches them there, and the scene runs.
    for (name, list) in [
        (
            "edge.boxes",
            &b"3.4e38 3.4e38 3.4028235e38 3.4028235e38\n"[..],
        ),
        (
            "all.boxes",
            b"-3.4028235e38 -3.4028235e38 3.4028235e38 3.4028235e38\n0 0 1 1\n",
        ),
    ] {
        let list = write(dir.path(), name, list);
        let made = bin(&["import-boxes", utf8(&list), "--out", out]);
        assert_eq!(made.status.code(), Some(0), "{}", text(&made.stderr));
        let run = bin(&["run", out, "--steps", "2"]);
        assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    }
    std::fs::remove_file(&out_path).expect("remove");
    // Spheres over boxes wider than a generator takes: the list and the rule are named.
    let wide = write(dir.path(), "wide.boxes", b"-1.6e38 -1.6e38 1.6e38 1.6e38\n");
    let made = bin(&["import-boxes", utf8(&wide), "--out", out, "--spheres", "10"]);
    let err = text(&made.stderr);
    assert_eq!(made.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "{}: the scene made of these boxes would not be valid: generate: spheres are \
             generated only in a world at most 1000000000 units wide",
            utf8(&wide)
        )),
        "{err}"
    );
    // Too many spheres, alone or with the boxes.
    let two = write(dir.path(), "two.boxes", b"0 0 1 1\n2 2 3 3\n");
    let alone = bin(&[
        "import-boxes",
        utf8(&two),
        "--out",
        out,
        "--spheres",
        "4294967295",
    ]);
    assert_eq!(alone.status.code(), Some(2));
    assert!(text(&alone.stderr).starts_with(
        "--spheres: import-boxes makes at most 1000000 bodies (spheres and boxes), got 4294967295"
    ));
    let both = bin(&[
        "import-boxes",
        utf8(&two),
        "--out",
        out,
        "--spheres",
        "1000000",
    ]);
    assert_eq!(both.status.code(), Some(1));
    assert_eq!(
        text(&both.stderr).trim_end(),
        format!(
            "{}: 2 boxes and --spheres 1000000 make 1000002 bodies; import-boxes makes at most 1000000",
            utf8(&two)
        )
    );
    assert!(!out_path.exists());
}

#[test]
fn a_byte_order_mark_is_skipped_in_box_lists_and_traces() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = write(
        dir.path(),
        "bom.boxes",
        b"\xEF\xBB\xBF0 0 1 1\r\n2 2 3 3\r\n",
    );
    let out_path = dir.path().join("o.json");
    let made = bin(&[
        "import-boxes",
        utf8(&list),
        "--out",
        utf8(&out_path),
        "--json",
    ]);
    assert_eq!(made.status.code(), Some(0), "{}", text(&made.stderr));
    assert!(text(&made.stdout).contains("\"boxes\":2"));
    // Told a trace by its first word behind the mark, whatever its name.
    let trace = write(
        dir.path(),
        "bom.txt",
        b"\xEF\xBB\xBFaabb-trace 1 dims=2 dt=0.5\nstep 0\n0 0 0 1 1\nstep 1\n0 1 0 2 1\n",
    );
    let run = bin(&["run", utf8(&trace), "--json"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert!(text(&run.stdout).contains("\"steps\":1"));
}

#[test]
fn a_file_of_another_kind_is_named_for_what_it_is() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = write(dir.path(), "s.ron", SCENE.as_bytes());
    let rec = dir.path().join("r.rec");
    let made = bin(&["run", utf8(&scene), "--steps", "3", "--record", utf8(&rec)]);
    assert_eq!(made.status.code(), Some(0), "{}", text(&made.stderr));
    let trace = write(
        dir.path(),
        "t.trace",
        b"aabb-trace 1 dims=2 dt=0.5\nstep 0\n0 0 0 1 1\n",
    );
    for (args, says) in [
        (
            vec!["check", utf8(&rec)],
            "not a scene: this is a recording",
        ),
        (
            vec![
                "sweep",
                utf8(&rec),
                "--margin",
                "0:0.2:0.1",
                "--lookahead",
                "0",
            ],
            "not a scene: this is a recording",
        ),
        (
            vec!["check", utf8(&trace)],
            "not a scene: this is a trace of boxes",
        ),
        (
            vec!["quality", utf8(&trace)],
            "not a box list: this is a trace of boxes",
        ),
        (
            vec!["quality", utf8(&rec)],
            "not a box list: this is a recording",
        ),
    ] {
        let out = bin(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn a_recorded_time_that_is_no_time_is_refused() {
    use aabb_debugger::replay::file;
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = write(dir.path(), "s.ron", SCENE.as_bytes());
    let rec = dir.path().join("r.rec");
    let made = bin(&["run", utf8(&scene), "--steps", "3", "--record", utf8(&rec)]);
    assert_eq!(made.status.code(), Some(0), "{}", text(&made.stderr));
    let good = std::fs::read(&rec).expect("read");
    // The last step's update seconds (bytes 48..52 of its 60), then the checksum redone.
    for (value, shown) in [(-1.0f32, "-1"), (f32::NAN, "NaN"), (f32::INFINITY, "inf")] {
        let mut bytes = good.clone();
        let at = bytes.len() - file::STEP_BYTES + 48;
        bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
        let sum = file::checksum(&bytes[20..]);
        bytes[12..20].copy_from_slice(&sum.to_le_bytes());
        let err = file::from_bytes(&bytes, "r.rec")
            .expect_err("refused")
            .to_string();
        assert_eq!(
            err,
            format!(
                "r.rec: step 3: its update time must be a finite number of seconds >= 0, got \
                 {shown}"
            )
        );
    }
    assert!(file::from_bytes(&good, "r.rec").is_ok());
}

#[test]
fn check_warns_when_static_boxes_alone_pass_the_pair_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let boxes: Vec<String> = (0..100)
        .map(|id| format!("(id: {id}, min: (1.0, 1.0), max: (2.0, 2.0))"))
        .collect();
    let scene = write(
        dir.path(),
        "level.ron",
        format!(
            "(format_version: 1, dimensions: 2, world: (min: (0.0, 0.0), max: (10.0, 10.0)), \
             boxes: [{}])",
            boxes.join(", ")
        )
        .as_bytes(),
    );
    // 100 boxes at one place: 4,950 pairs.
    for (limit, says) in [
        ("4000", "overlap in more than 4000 pairs"),
        ("9000", "overlap in 4950 pairs"),
    ] {
        let out = bin(&["check", utf8(&scene), "--pair-limit", limit]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(err.contains(says), "{limit}: {err}");
    }
    let out = bin(&["check", utf8(&scene), "--pair-limit", "10000"]);
    assert_eq!(text(&out.stderr), "");
    let run = bin(&["run", utf8(&scene), "--pair-limit", "4000", "--steps", "1"]);
    assert_eq!(run.status.code(), Some(1));
}

#[test]
fn a_sweep_of_a_short_trace_takes_all_its_steps_unless_told() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = write(
        dir.path(),
        "t.trace",
        b"aabb-trace 1 dims=2 dt=0.5\nstep 0\n0 0 0 1 1\nstep 1\n0 1 0 2 1\nstep 2\n0 2 0 3 1\n",
    );
    let grid = ["--margin", "0:0.2:0.1", "--lookahead", "0", "--json"];
    let mut args = vec!["sweep", utf8(&trace)];
    args.extend(grid);
    let out = bin(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("\"steps\":2"),
        "{}",
        text(&out.stdout)
    );
    // Asked for more than it has: refused, naming the option.
    args.extend(["--steps", "3"]);
    let out = bin(&args);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--steps: the trace has 2 steps after step 0; got 3"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn check_says_what_of_a_saved_view_the_window_leaves_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    let with_view =
        |view: &str| SCENE.trim_end_matches(')').to_owned() + ", view: Some(" + view + "))";
    let bad = write(
        dir.path(),
        "bad.ron",
        with_view(r#"(center: Some((NaN, inf)), zoom: Some(-1.0), plane: Some("QQ"), layers: Some(["walls", "nope"]))"#).as_bytes(),
    );
    let out = bin(&["check", utf8(&bad)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let file = utf8(&bad);
    let expected = [
        format!(
            "{file}: warning: view.center (NaN, inf) is not a point; the window fits the view instead"
        ),
        format!(
            "{file}: warning: view.zoom must be a number > 0, got -1; the window fits the view instead"
        ),
        format!("{file}: warning: view.plane \"QQ\" is not one of XY, XZ, YZ; the window shows XY"),
        format!(
            "{file}: warning: view.layers names `nope`, not a layer (one of walls, branches, \
             leaves, tight, contacts, pairs, spheres, velocity, labels or `all`); the window \
             keeps the layers it shows"
        ),
    ];
    assert_eq!(err.lines().collect::<Vec<_>>(), expected);
    // A good view, aliases and any case, says nothing.
    let good = write(
        dir.path(),
        "good.ron",
        with_view(r#"(center: Some((1.0, 2.0)), zoom: Some(3.0), plane: Some("xz"), layers: Some(["Fat", "tree", "all", ""]))"#).as_bytes(),
    );
    let out = bin(&["check", utf8(&good)]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn import_boxes_json_names_the_output_as_it_is() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = write(dir.path(), "l.boxes", b"0 0 1 1\n");
    let out_path = dir.path().join("o\u{1b}[2J.ron");
    let made = bin(&[
        "import-boxes",
        utf8(&list),
        "--out",
        utf8(&out_path),
        "--json",
    ]);
    assert_eq!(made.status.code(), Some(0), "{}", text(&made.stderr));
    let json: serde_json::Value = serde_json::from_slice(&made.stdout).expect("JSON");
    assert_eq!(json["out"].as_str(), Some(utf8(&out_path)));
    assert!(!text(&made.stdout).contains('\u{1b}'));
    let plain = bin(&["import-boxes", utf8(&list), "--out", utf8(&out_path)]);
    assert!(!text(&plain.stdout).contains('\u{1b}'));
}

#[test]
fn a_pair_limit_past_what_memory_holds_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = write(dir.path(), "s.ron", SCENE.as_bytes());
    let max = aabb_debugger::broadphase::MAX_PAIR_LIMIT;
    let past = (max + 1).to_string();
    for args in [
        vec!["run", utf8(&scene), "--pair-limit", &past],
        vec!["check", utf8(&scene), "--pair-limit", &past],
        vec![
            "sweep",
            utf8(&scene),
            "--margin",
            "0:0.2:0.1",
            "--lookahead",
            "0",
            "--pair-limit",
            &past,
        ],
    ] {
        let out = bin(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("the pair limit must be at most {max}")),
            "{args:?}: {err}"
        );
    }
    let at_max = bin(&[
        "run",
        utf8(&scene),
        "--pair-limit",
        &max.to_string(),
        "--steps",
        "2",
    ]);
    assert_eq!(at_max.status.code(), Some(0), "{}", text(&at_max.stderr));
    // The library refuses it too (a recording's header or edit could carry one).
    let parsed = aabb_debugger::scene::Scene::parse(SCENE, "s.ron", false).expect("valid");
    let made = aabb_debugger::scene::Simulation::paused_at_zero(
        &parsed,
        aabb_debugger::broadphase::BroadphaseKind::Tree,
        max + 1,
    );
    assert!(made.is_err());
    let mut sim = aabb_debugger::scene::Simulation::paused_at_zero(
        &parsed,
        aabb_debugger::broadphase::BroadphaseKind::Tree,
        10,
    )
    .expect("a simulation");
    assert!(sim.set_pair_limit(max + 1).is_err());
    assert_eq!(sim.pair_limit(), 10);
}

#[test]
fn screenshot_options_are_checked_before_the_window_opens() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = write(dir.path(), "s.ron", SCENE.as_bytes());
    let keep = write(dir.path(), "keep.jpg", b"not a picture, and kept");
    let png = dir.path().join("shot.png");
    for (args, says) in [
        (
            vec!["screenshot", utf8(&scene), "--out", utf8(&keep)],
            "--out must name a .png file (nothing was written)",
        ),
        (
            vec![
                "screenshot",
                utf8(&scene),
                "--out",
                utf8(&png),
                "--steps",
                "1000001",
            ],
            "--steps: at most 1000000 steps before the shot",
        ),
        (
            vec![
                "screenshot",
                utf8(&scene),
                "--out",
                utf8(&png),
                "--advisor-margin",
                "1:0:0.1",
            ],
            "--advisor-margin: ",
        ),
        (
            vec![
                "screenshot",
                utf8(&scene),
                "--out",
                utf8(&png),
                "--advisor-lookahead",
                "x",
            ],
            "--advisor-lookahead: ",
        ),
        (
            vec![
                "screenshot",
                utf8(&scene),
                "--out",
                utf8(&png),
                "--advisor-steps",
                "0",
            ],
            "--advisor-steps: 1 to 1000000 steps a point, got 0",
        ),
    ] {
        let out = bin(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::read(&keep).expect("read"),
        b"not a picture, and kept"
    );
    assert!(!png.exists());
}

#[test]
fn replay_of_a_stopped_step_names_the_recording_and_the_runs_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let crowd = write(dir.path(), "crowd.ron", CROWD.as_bytes());
    let rec = dir.path().join("r.rec");
    let made = bin(&[
        "run",
        utf8(&crowd),
        "--pair-limit",
        "2",
        "--record",
        utf8(&rec),
    ]);
    assert_eq!(made.status.code(), Some(1), "stopped at step 0");
    let out = bin(&["replay", utf8(&rec), "--at", "0"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "{}: step 0: more than 2 candidate pairs",
            utf8(&rec)
        )) && err
            .trim_end()
            .ends_with("(the recorded run stopped there too; the run's pair limit was 2)"),
        "{err}"
    );
}

#[test]
fn a_scene_given_as_a_box_list_is_named_for_what_it_is() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = write(dir.path(), "level.txt", SCENE.as_bytes());
    let out = bin(&[
        "import-boxes",
        utf8(&scene),
        "--out",
        utf8(&dir.path().join("o.ron")),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with(&format!(
            "{}: not a box list: this looks like a scene (RON or JSON)",
            utf8(&scene)
        )),
        "{}",
        text(&out.stderr)
    );
}
