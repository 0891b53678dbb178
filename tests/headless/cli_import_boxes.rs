//! The built binary's `import-boxes` command: a box list becomes a scene of static boxes that
//! `check` and `run` accept; a malformed list, a FIFO, a directory or an empty file is refused
//! with `FILE:LINE: what` (or `FILE: what`), exit code 1, no panic, and `--out` is neither
//! created nor touched.

use std::path::Path;

use crate::common::cli;
use cli::{bin, text, utf8, write};

#[test]
fn a_good_list_makes_a_scene_that_check_and_run_accept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = write(
        dir.path(),
        "level.txt",
        b"# a floor and two platforms\n0 0 0 40 1 10\n\n4 6 2 12 7 8 # platform\n10 3 1 14 4 9\n",
    );
    for (name, extra) in [
        ("level.ron", &[][..]),
        (
            "level.json",
            &["--spheres", "50", "--name", "Level one"][..],
        ),
    ] {
        let out_path = dir.path().join(name);
        let mut args = vec![
            "import-boxes",
            utf8(&list),
            "--out",
            utf8(&out_path),
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = bin(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(v["boxes"], 3);
        assert_eq!(v["dimensions"], 3);
        assert_eq!(v["spheres"], if extra.is_empty() { 0 } else { 50 });
        // 5% of the largest extent (40) on every side.
        assert_eq!(v["world_min"], serde_json::json!([-2.0, -2.0, -2.0]));
        assert_eq!(v["world_max"], serde_json::json!([42.0, 9.0, 12.0]));
        let scene = text(&std::fs::read(&out_path).expect("the scene was written"));
        assert!(scene.contains("boxes"), "{scene}");

        let out = bin(&["check", utf8(&out_path)]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).ends_with(", 3 static boxes\n"),
            "{}",
            text(&out.stdout)
        );
        for broadphase in ["tree", "brute", "sap"] {
            let out = bin(&[
                "run",
                utf8(&out_path),
                "--steps",
                "30",
                "--broadphase",
                broadphase,
                "--json",
            ]);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            assert_eq!(v["steps"], 30, "{v}");
        }
    }
    // Without --json: one sentence naming the file.
    let out_path = dir.path().join("plain.ron");
    let out = bin(&["import-boxes", utf8(&list), "--out", utf8(&out_path)]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        format!(
            "{}: 3 static boxes, 0 spheres, 3D, world min [-2.0, -2.0, -2.0] max [42.0, 9.0, \
             12.0]\n",
            utf8(&out_path)
        )
    );
}

/// A list in corner lines (Catto's level sets: `v minx miny minz`, then `v maxx maxy maxz`)
/// makes the same scene, byte for byte, as the same boxes one a line.
#[test]
fn corner_pairs_import_as_the_same_scene() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lines = write(
        dir.path(),
        "lines.txt",
        b"0 0 0 40 1 10\n4 6 2 12 7 8\n10 3 1 14 4 9\n",
    );
    let corners = write(
        dir.path(),
        "corners.txt",
        b"v 0 0 0\nv 40 1 10\n# a platform\nv 4 6 2\nv 12 7 8\n\nv 10 3 1\r\nv 14 4 9\r\n",
    );
    let mut scenes = Vec::new();
    for (list, name) in [(&lines, "a.ron"), (&corners, "b.ron")] {
        let out_path = dir.path().join(name);
        let out = bin(&[
            "import-boxes",
            utf8(list),
            "--out",
            utf8(&out_path),
            "--name",
            "Level",
            "--spheres",
            "5",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        scenes.push(std::fs::read(&out_path).expect("the scene was written"));
    }
    assert!(text(&scenes[0]).contains("boxes"));
    assert_eq!(text(&scenes[0]), text(&scenes[1]));
}

/// A box list given where a scene goes is said to be one, with what takes it.
#[test]
fn a_box_list_given_as_a_scene_says_what_takes_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, contents) in [
        ("level.txt", &b"# level\n0 0 0 1 1 1\n"[..]),
        ("level.ron", &b"v 0 0 0\nv 1 1 1\n"[..]),
    ] {
        let path = write(dir.path(), name, contents);
        for command in ["check", "run"] {
            let out = bin(&[command, utf8(&path)]);
            assert_eq!(out.status.code(), Some(1), "{command} {name}");
            assert_eq!(
                text(&out.stderr),
                format!(
                    "{}: not a scene: this is a box list (level geometry, one box a line or in \
                     `v` corner pairs); `aabb-debugger import-boxes FILE --out SCENE` makes a \
                     scene of it, `quality` measures its trees, and the window's Open imports \
                     it\n",
                    utf8(&path)
                ),
                "{command} {name}"
            );
        }
    }
}

/// Runs `import-boxes FILE --out OUT` where OUT holds `old` (or does not exist when `None`):
/// exit 1, `want` on stderr, nothing on stdout, OUT unchanged.
fn assert_refused(file: &str, out_path: &Path, old: Option<&str>, want: &str) {
    match old {
        Some(old) => std::fs::write(out_path, old).expect("write"),
        None => {
            let _ = std::fs::remove_file(out_path);
        }
    }
    let out = bin(&["import-boxes", file, "--out", utf8(out_path)]);
    assert_eq!(out.status.code(), Some(1), "{file}");
    assert_eq!(text(&out.stderr), want, "{file}");
    assert_eq!(text(&out.stdout), "", "{file}");
    match old {
        Some(old) => assert_eq!(
            std::fs::read_to_string(out_path).expect("still there"),
            old,
            "{file}"
        ),
        None => assert!(!out_path.exists(), "{file}: --out was created"),
    }
}

#[test]
fn malformed_lists_are_refused_with_the_line_and_out_is_untouched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out_path = dir.path().join("scene.ron");
    let huge_line = format!("0 0 1 1\n0 0 1 {}\n", "9".repeat(5_000_000));
    let many_words = format!("0 0 1 1\n{}\n", "1 ".repeat(1_000_000));
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "number.txt",
            b"0 0 1 1\n0 0 1 one\n".to_vec(),
            ":2: `one` is not a number".to_owned(),
        ),
        (
            "columns.txt",
            b"# boxes\n0 0 1 1\n\n0 0 1 1 2\n".to_vec(),
            ":4: expected 4 numbers (2D: minx miny maxx maxy) or 6 (3D: minx miny minz maxx \
             maxy maxz), found 5"
                .to_owned(),
        ),
        (
            "nan.txt",
            b"0 0 NaN 1\n".to_vec(),
            ":1: `NaN` is not a finite number (or is too large for f32)".to_owned(),
        ),
        (
            "inverted.txt",
            b"0 0 0 1 1 1\n0 5 0 1 4 1\n".to_vec(),
            ":2: min > max on y (5 > 4)".to_owned(),
        ),
        (
            "mixed.txt",
            b"0 0 0 1 1 1\n0 0 1 1\n".to_vec(),
            ":2: a 2D box (4 numbers) in a list of 3D boxes (from line 1)".to_owned(),
        ),
        (
            "binary.txt",
            b"0 0 1 1\n\xff\n".to_vec(),
            ":2: not UTF-8 text".to_owned(),
        ),
        (
            "huge-line.txt",
            huge_line.into_bytes(),
            format!(
                ":2: `{}…` is not a finite number (or is too large for f32)",
                "9".repeat(60)
            ),
        ),
        (
            "many-words.txt",
            many_words.into_bytes(),
            ":2: expected 4 numbers (2D: minx miny maxx maxy) or 6 (3D: minx miny minz maxx \
             maxy maxz), found 1000000"
                .to_owned(),
        ),
        (
            "empty.txt",
            Vec::new(),
            ": no boxes (no line holds a box)".to_owned(),
        ),
        (
            "comments.txt",
            b"# nothing\n\n   \n".to_vec(),
            ": no boxes (no line holds a box)".to_owned(),
        ),
    ];
    for (name, contents, want) in &cases {
        let path = write(dir.path(), name, contents);
        let file = utf8(&path);
        let want = format!("{file}{want}\n");
        assert_refused(file, &out_path, None, &want);
        assert_refused(file, &out_path, Some("the old scene\n"), &want);
    }

    // A directory and a FIFO are refused at once (no read that blocks).
    let d = utf8(dir.path());
    assert_refused(
        d,
        &out_path,
        None,
        &format!("{d}: is a directory, not a regular file\n"),
    );
    let fifo = dir.path().join("pipe.txt");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let f = utf8(&fifo);
    assert_refused(
        f,
        &out_path,
        Some("old"),
        &format!("{f}: is a FIFO, not a regular file\n"),
    );
    // Nothing but the inputs and the old scene was left in the folder (no temporary file).
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want: Vec<String> = cases.iter().map(|c| c.0.to_owned()).collect();
    want.extend(["pipe.txt".to_owned(), "scene.ron".to_owned()]);
    want.sort();
    assert_eq!(names, want);
}

#[test]
fn a_missing_file_and_a_bad_out_are_refused_without_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out_path = dir.path().join("scene.ron");
    let out = bin(&["import-boxes", "no/such/list.txt", "--out", utf8(&out_path)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with("no/such/list.txt: "),
        "{}",
        text(&out.stderr)
    );
    assert!(!out_path.exists());
    // A good list, but --out in a folder that does not exist: the save's message.
    let list = write(dir.path(), "ok.txt", b"0 0 1 1\n");
    let bad_out = dir.path().join("missing").join("scene.ron");
    let out = bin(&["import-boxes", utf8(&list), "--out", utf8(&bad_out)]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with(utf8(&bad_out)), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
