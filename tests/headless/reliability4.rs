//! Hostile stream files, round 4: streams built to defeat the engine's pair check (identical
//! fat boxes, a column, a column beside a row, many steps of repeated parts) are checked in
//! bounded time and memory, and `convert` does not check them; streams a listener wrote past
//! the readers' limits (steps, a velocity past f32, a tiny dt) open with the steps before the
//! limit, as [`OpenCheck`] told the writer; a stream cut at any byte of its first frames opens
//! with its whole steps; messages say the stream's step and byte; a recording whose step 0
//! stopped is checked as any; a killed save's temporary file goes at the next save.

use crate::common::cli::{bin, text, utf8, write};
use aabb_debugger::stream::{self, OpenCheck, StreamError};
use aabb_debugger::trace::TraceLimits;
use aabb_recorder::wire::{
    self, Bye, Hello, SECTION_FAT_BOXES, SECTION_PAIRS, Section, StepFrame, WireBox,
};

// ---- building streams -----------------------------------------------------------------------

fn bx(id: u32, min: [f32; 2], max: [f32; 2]) -> WireBox {
    WireBox {
        id,
        min: [min[0], min[1], 0.0],
        max: [max[0], max[1], 0.0],
    }
}

/// A keyframe of `boxes` at engine step `step`, with those boxes as their own fat boxes and
/// no candidate pair.
fn keyframe_with_parts(step: u64, boxes: &[WireBox]) -> StepFrame {
    StepFrame {
        step,
        keyframe: true,
        appeared: boxes.to_vec(),
        sections: vec![
            Section {
                tag: SECTION_FAT_BOXES,
                bytes: wire::encode_fat_boxes(2, boxes),
            },
            Section {
                tag: SECTION_PAIRS,
                bytes: wire::encode_pairs(&[]),
            },
        ],
        ..StepFrame::default()
    }
}

/// A step that changes nothing and repeats the parts of the step before (sections of length
/// 0).
fn unchanged(step: u64) -> StepFrame {
    StepFrame {
        step,
        sections: vec![
            Section {
                tag: SECTION_FAT_BOXES,
                bytes: Vec::new(),
            },
            Section {
                tag: SECTION_PAIRS,
                bytes: Vec::new(),
            },
        ],
        ..StepFrame::default()
    }
}

/// The bytes of a 2D stream: magic, HELLO (`dt`), the steps, BYE when `bye`.
fn stream_bytes(hello: &Hello, steps: &[StepFrame], bye: bool) -> Vec<u8> {
    let mut out = Vec::new();
    wire::encode_magic(&mut out);
    wire::encode_hello(&mut out, hello).expect("hello");
    for s in steps {
        wire::encode_step(&mut out, 2, s).expect("step");
    }
    if bye {
        wire::encode_bye(
            &mut out,
            &Bye {
                steps_sent: steps.len() as u64,
                steps_dropped: 0,
            },
        );
    }
    out
}

fn hello() -> Hello {
    Hello::new("hostile", 2, 1.0 / 60.0)
}

/// `n` identical boxes (ids 0..n).
fn identical(n: u32) -> Vec<WireBox> {
    (0..n).map(|k| bx(k, [0.0, 0.0], [1.0, 1.0])).collect()
}

/// `n` boxes in one column along y (x 0..1), apart along y.
fn column(n: u32) -> Vec<WireBox> {
    (0..n)
        .map(|k| bx(k, [0.0, 2.0 * k as f32], [1.0, 2.0 * k as f32 + 1.0]))
        .collect()
}

/// The most a command on a hostile stream may take: 120 s (a debug build; a hang bound, not
/// a measure) within 1 GiB of address space.
const CASE_SECS: u64 = 120;
const CASE_KIB: u64 = 1024 * 1024;

/// Runs the binary with `args` under the memory bound, killed past the time bound: exit
/// code, stdout, stderr.
fn bounded(args: &[&str]) -> (Option<i32>, String, String) {
    let run = crate::common::cli::bin_bounded(args, CASE_KIB, CASE_SECS);
    (run.code, run.stdout, run.stderr)
}

// ---- 1. the pair check, bounded -------------------------------------------------------------

/// 3,000 identical boxes and fat boxes, no pair reported: every one of the 4,498,500 pairs is
/// missed; they are counted, 10 printed, and the check stays within 1 GiB (materialised, the
/// pairs alone took 36 MB and their growth twice that; at 20,000 boxes, 2.6 GB).
#[test]
fn identical_fat_boxes_are_counted_not_listed() {
    let dir = tempfile::tempdir().expect("dir");
    let path = write(
        dir.path(),
        "same.aabbstream",
        &stream_bytes(&hello(), &[keyframe_with_parts(0, &identical(3000))], true),
    );
    let (code, stdout, stderr) = bounded(&["check", utf8(&path)]);
    assert_eq!(code, Some(1), "{stderr}");
    let mut listed = String::from("missed pairs: 4498500\n");
    for b in 1..=10 {
        listed.push_str(&format!("  step 0: (0, {b})\n"));
    }
    listed.push_str("  (10 of 4498500 listed)\n");
    assert!(stdout.contains(&listed), "{stdout}");
    assert_eq!(
        stderr,
        format!(
            "{}: the engine's broad phase has errors: 4498500 missed pairs, 0 reported pairs \
             with fat boxes apart, 0 trees refused\n",
            path.display()
        )
    );
}

/// 20,000 identical fat boxes (199,990,000 pairs, more than a step's check may test): the step
/// is not checked, and `check` says so in its first line of the engine's part; `convert`
/// does not check at all; `run --steps 1` steps it. All within the bounds.
#[test]
fn a_step_past_the_checks_work_is_said_and_not_checked() {
    let dir = tempfile::tempdir().expect("dir");
    let path = write(
        dir.path(),
        "same.aabbstream",
        &stream_bytes(
            &hello(),
            &[keyframe_with_parts(0, &identical(20_000)), unchanged(1)],
            true,
        ),
    );
    let (code, stdout, stderr) = bounded(&["check", utf8(&path)]);
    assert_eq!(code, Some(0), "{stderr}");
    let line = "engine's broad phase: 2 steps carried it; pairs checked at 0 steps (2 not \
                checked; the first: too many overlapping fat boxes to check at step 0 (more \
                than 8000000 pairs: 199990000 overlap along the axis with fewest))\n";
    assert!(stdout.contains(line), "{stdout}");
    let out = dir.path().join("same.trace");
    let (code, _, stderr) = bounded(&["convert", utf8(&path), utf8(&out)]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "{0}: note: the engine's own broad phase (2 steps of fat boxes, pairs, tree or \
             timings) is not converted: a trace holds boxes only (`check` reports it)\n\
             {0}: note: the engine's name (\"hostile\") and its units (\"m\") not converted: \
             a trace has no place for them\n",
            path.display()
        )
    );
    // Our own broad phase finds the pairs too, and stops at its pair limit.
    let (code, _, stderr) = bounded(&["run", utf8(&path), "--steps", "1"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.ends_with(
            "step 0: more than 5000000 candidate pairs (fat boxes that overlap): the fat boxes \
             are too big for the spheres' spacing. Lower the margin or look-ahead, use fewer \
             spheres or a larger world, or raise the pair limit (the limit is --pair-limit \
             5000000)\n"
        ),
        "{stderr}"
    );
}

/// A column of 20,000 fat boxes (every pair overlaps along x, none along y) then 199 steps
/// that repeat it: swept along y, no pair is tested; `check` and `run --steps 20` end.
#[test]
fn a_column_is_checked_along_its_length() {
    let dir = tempfile::tempdir().expect("dir");
    let mut steps = vec![keyframe_with_parts(0, &column(20_000))];
    steps.extend((1..200).map(unchanged));
    let path = write(
        dir.path(),
        "column.aabbstream",
        &stream_bytes(&hello(), &steps, true),
    );
    let (code, stdout, stderr) = bounded(&["check", utf8(&path)]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(
            "engine's broad phase: 200 steps carried it; pairs checked at 200 steps\n\
             missed pairs: 0\n"
        ),
        "{stdout}"
    );
    let (code, _, stderr) = bounded(&["run", utf8(&path), "--steps", "20"]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// A column beside a row (10,000 boxes each: 49,995,000 pairs overlap along x, as many along
/// y, none in the plane): no axis makes the sweep cheap, so no step is checked, each for its
/// count made without testing a pair; 100 steps end within the bounds.
#[test]
fn a_column_beside_a_row_is_refused_by_its_count() {
    let dir = tempfile::tempdir().expect("dir");
    let mut boxes = column(10_000);
    boxes.extend((0..10_000u32).map(|k| {
        bx(
            10_000 + k,
            [2.0 * k as f32 + 10.0, -10.0],
            [2.0 * k as f32 + 11.0, -9.0],
        )
    }));
    let mut steps = vec![keyframe_with_parts(0, &boxes)];
    steps.extend((1..100).map(unchanged));
    let path = write(
        dir.path(),
        "cross.aabbstream",
        &stream_bytes(&hello(), &steps, true),
    );
    let (code, stdout, stderr) = bounded(&["check", utf8(&path)]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(
            "pairs checked at 0 steps (100 not checked; the first: too many overlapping fat \
             boxes to check at step 0 (more than 8000000 pairs: 49995000 overlap along the \
             axis with fewest))\n"
        ),
        "{stdout}"
    );
}

/// A step that moves box 0's tight box a little and repeats the fat boxes and pairs.
fn nudged(step: u64) -> StepFrame {
    StepFrame {
        moved: vec![bx(0, [step as f32 / 64.0, 0.0], [1.0, 1.0])],
        ..unchanged(step)
    }
}

/// Steps each within a step's work (4,498,500 tests, 9,000 boxes and fat boxes read), each
/// different from the step before, but more of them than a stream's work (64,000,000): 14
/// are checked, then the check stops and says where and why.
#[test]
fn the_streams_pair_work_is_bounded() {
    let dir = tempfile::tempdir().expect("dir");
    let mut steps = vec![keyframe_with_parts(0, &identical(3000))];
    steps.extend((1..20).map(nudged));
    let path = write(
        dir.path(),
        "many.aabbstream",
        &stream_bytes(&hello(), &steps, true),
    );
    let (_, info) = stream::load(&path, TraceLimits::default()).expect("opens");
    let s = &info.engine_parts.summary;
    assert_eq!((s.pair_steps, s.pair_steps_unchecked), (14, 6));
    assert_eq!(s.missed_total, 14 * 4_498_500);
    assert_eq!(
        s.pairs_stopped.as_deref(),
        Some(
            "stopped checking pairs and trees at step 14: the check has done 63114000 units \
             of work over the stream (a pair tested, a box or tree node read), the most it may \
             (64000000)"
        )
    );
    assert_eq!(info.engine_parts.summary.missed.len(), 1000);
}

// ---- 4. files a listener wrote past the readers' limits -------------------------------------

/// A stream of steps 0, 1, then 100 (98 dropped) where box 1 jumps past what f32 holds as a
/// velocity: readers keep steps 0 and 1 with a warning naming the byte, the stream's step and
/// the gap; [`OpenCheck`] told the writer the same step.
#[test]
fn a_velocity_past_f32_keeps_the_steps_before() {
    let at = |step: u64, x: f32| StepFrame {
        step,
        keyframe: true,
        appeared: vec![bx(1, [x, 0.0], [x + 1.0, 1.0])],
        ..StepFrame::default()
    };
    let steps = [at(0, 0.0), at(1, 1.0), at(100, 3.0e38)];
    let bytes = stream_bytes(&hello(), &steps, true);
    let offset = {
        let mut head = Vec::new();
        wire::encode_magic(&mut head);
        wire::encode_hello(&mut head, &hello()).expect("hello");
        for s in &steps[..2] {
            wire::encode_step(&mut head, 2, s).expect("step");
        }
        head.len()
    };
    let (trace, info) = stream::read_stream(
        &bytes[..],
        "jump",
        "jump.aabbstream",
        TraceLimits::default(),
    )
    .expect("the steps before open");
    assert_eq!(trace.step_count(), 2);
    let why = format!(
        "byte {offset}, step 100: box 1 moves from centre [1.5, 0.5, 0] to [300000000000000000000000000000000000000, 0.5, 0] in one step of the trace: its velocity is past what f32 \
         holds, and the look-ahead cannot use it (the trace's step 2; the engine dropped the \
         98 steps before it, so the trace takes the move of 99 steps as one)"
    );
    assert_eq!(info.stopped.as_deref(), Some(why.as_str()));

    let mut check = OpenCheck::new(TraceLimits::default());
    check.hello(&hello()).expect("a trace's header");
    check.step(0, &steps[0].appeared).expect("opens");
    check.step(1, &steps[1].appeared).expect("opens");
    let refused = check
        .step(100, &steps[2].appeared)
        .expect_err("will not open");
    assert!(
        refused.starts_with("step 100 (the trace's step 2) will not open: box 1 moves"),
        "{refused}"
    );
    assert!(
        refused.ends_with("; readers keep the 2 steps before it"),
        "{refused}"
    );
    assert_eq!(check.steps(), 2);
}

/// A dt of 1e-45 passes the format (finite, > 0) but makes any motion a velocity past f32:
/// `check` opens step 0 and warns; [`OpenCheck`] refuses step 1.
#[test]
fn a_tiny_dt_keeps_step_0() {
    let hello = Hello::new("tiny dt", 2, 1e-45);
    let at = |step: u64, x: f32| StepFrame {
        step,
        keyframe: true,
        appeared: vec![bx(1, [x, 0.0], [x + 1.0, 1.0])],
        ..StepFrame::default()
    };
    let steps = [at(0, 0.0), at(1, 1.0)];
    let dir = tempfile::tempdir().expect("dir");
    let path = write(
        dir.path(),
        "tiny.aabbstream",
        &stream_bytes(&hello, &steps, true),
    );
    let out = bin(&["check", utf8(&path)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "{}: ok: stream from \"tiny dt\", 2D, 1 step, no engine broad phase (fat boxes, \
             pairs, tree)\n",
            path.display()
        )
    );
    assert!(
        text(&out.stderr).starts_with(&format!(
            "{}: warning: the stream stops early (byte 79, step 1: box 1 moves from centre",
            path.display()
        )),
        "{}",
        text(&out.stderr)
    );
    let mut check = OpenCheck::new(TraceLimits::default());
    check.hello(&hello).expect("a trace's header");
    check.step(0, &steps[0].appeared).expect("opens");
    assert!(check.step(1, &steps[1].appeared).is_err());
}

/// More steps, or more boxes in all, than a trace holds: readers keep the steps before the
/// limit, and [`OpenCheck`] stops at the same step.
#[test]
fn steps_and_boxes_past_the_limits_keep_the_steps_before() {
    let limits = TraceLimits {
        max_steps: 5,
        max_total_boxes: 1_000,
        ..TraceLimits::default()
    };
    let frames: Vec<StepFrame> = (0..8u64)
        .map(|s| StepFrame {
            step: s,
            keyframe: true,
            appeared: vec![bx(1, [0.0, 0.0], [1.0, 1.0])],
            ..StepFrame::default()
        })
        .collect();
    let bytes = stream_bytes(&hello(), &frames, true);
    let (trace, info) =
        stream::read_stream(&bytes[..], "long", "long.aabbstream", limits).expect("opens");
    assert_eq!(trace.step_count(), 5);
    let why = info.stopped.expect("stopped");
    assert!(
        why.ends_with(
            ", step 5: more than 5 steps, the most a trace may hold (the trace's step 5)"
        ),
        "{why}"
    );
    let mut check = OpenCheck::new(limits);
    check.hello(&hello()).expect("header");
    for f in &frames[..5] {
        check.step(f.step, &f.appeared).expect("opens");
    }
    assert_eq!(
        check.step(5, &frames[5].appeared),
        Err(
            "step 5 (the trace's step 5) will not open: more than 5 steps, the most a trace \
             may hold; readers keep the 5 steps before it"
                .to_owned()
        )
    );

    // 300 boxes a step, at most 1,000 in all: step 3 passes it.
    let many: Vec<WireBox> = (0..300).map(|k| bx(k, [0.0, 0.0], [1.0, 1.0])).collect();
    let frames: Vec<StepFrame> = (0..4u64)
        .map(|s| StepFrame {
            step: s,
            keyframe: true,
            appeared: many.clone(),
            ..StepFrame::default()
        })
        .collect();
    let bytes = stream_bytes(&hello(), &frames, true);
    let (trace, info) =
        stream::read_stream(&bytes[..], "wide", "wide.aabbstream", limits).expect("opens");
    assert_eq!(trace.step_count(), 3);
    let why = info.stopped.expect("stopped");
    assert!(
        why.ends_with(
            ", step 3: 1200 boxes over all steps, more than the 1000 a trace may hold in \
             memory (the trace's step 3)"
        ),
        "{why}"
    );
}

// ---- 5. cuts at every byte --------------------------------------------------------------------

/// A stream cut at every byte of its first frames opens with its whole steps (and says where
/// it stops) once a step is whole, and is refused with the cut named before.
#[test]
fn a_stream_cut_at_every_byte_opens_with_its_whole_steps() {
    let frames: Vec<StepFrame> = (0..4u64)
        .map(|s| StepFrame {
            step: s,
            keyframe: s == 0,
            appeared: if s == 0 {
                vec![bx(1, [0.0, 0.0], [1.0, 1.0]), bx(2, [3.0, 0.0], [4.0, 1.0])]
            } else {
                Vec::new()
            },
            moved: if s == 0 {
                Vec::new()
            } else {
                vec![bx(1, [s as f32, 0.0], [s as f32 + 1.0, 1.0])]
            },
            ..StepFrame::default()
        })
        .collect();
    let bytes = stream_bytes(&hello(), &frames, true);
    // Where each STEP frame ends.
    let mut ends = Vec::new();
    let mut at = 8;
    while at < bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4")) as usize;
        at += 4 + len;
        ends.push(at);
    }
    // HELLO, 4 STEPs, BYE.
    assert_eq!(ends.len(), 6);
    for cut in 0..bytes.len() {
        let result = stream::read_stream(&bytes[..cut], "cut", "cut", TraceLimits::default());
        let whole = ends[1..5].iter().filter(|&&e| e <= cut).count();
        match result {
            Ok((trace, info)) => {
                assert_eq!(trace.step_count(), whole, "cut at {cut}");
                assert!(whole > 0, "cut at {cut}");
                let at_boundary = ends.contains(&cut);
                assert_eq!(info.stopped.is_some(), !at_boundary, "cut at {cut}");
            }
            Err(e) => assert_eq!(whole, 0, "cut at {cut}: {e}"),
        }
    }
    // Cut 1, 2 and 3 bytes into the length of the frame after step 0.
    for extra in 1..4 {
        let cut = ends[1] + extra;
        let (trace, info) =
            stream::read_stream(&bytes[..cut], "cut", "cut", TraceLimits::default())
                .expect("step 0 opens");
        assert_eq!(trace.step_count(), 1);
        assert_eq!(
            info.stopped,
            Some(format!(
                "byte {}: the stream ends inside a frame's length ({extra} of 4 bytes)",
                ends[1]
            ))
        );
    }
}

/// A file cut inside the stream's magic is a stream cut there, not a scene or a trace.
#[test]
fn a_stream_cut_inside_its_magic_says_so() {
    let dir = tempfile::tempdir().expect("dir");
    for (len, name) in [(5, "cut.aabbstream"), (7, "cut.ron"), (6, "cut")] {
        let path = write(dir.path(), name, &wire::MAGIC[..len]);
        let out = bin(&["check", utf8(&path)]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            text(&out.stderr),
            format!(
                "{}: byte 0: the stream ends inside its magic ({len} of 8 bytes)\n",
                path.display()
            )
        );
        let out = bin(&["run", utf8(&path)]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            text(&out.stderr).contains(&format!(
                "byte 0: the stream ends inside its magic ({len} of 8 bytes)"
            )),
            "{}",
            text(&out.stderr)
        );
    }
}

// ---- 6. what convert leaves out is said --------------------------------------------------------

/// `convert` says that a trace keeps neither the engine's name, its units, nor its gaps.
#[test]
fn convert_says_what_a_trace_does_not_keep() {
    let at = |step: u64| StepFrame {
        step,
        keyframe: true,
        appeared: vec![bx(1, [0.0, 0.0], [1.0, 1.0])],
        ..StepFrame::default()
    };
    let dir = tempfile::tempdir().expect("dir");
    let path = write(
        dir.path(),
        "gaps.aabbstream",
        &stream_bytes(
            &Hello::new("gappy", 2, 0.01).with_units("px"),
            &[at(0), at(3), at(4), at(9)],
            true,
        ),
    );
    let out_path = dir.path().join("gaps.trace");
    let out = bin(&["convert", utf8(&path), utf8(&out_path)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{}: note: the engine's name (\"gappy\"), its units (\"px\") and its 2 gaps (6 \
             steps dropped by the engine: the steps on either side of a gap become \
             consecutive steps) not converted: a trace has no place for them\n",
            path.display()
        )
    );
    assert_eq!(
        text(&out.stdout),
        format!(
            "{}: 4 steps, 0 static boxes, 2D, {} bytes\n",
            out_path.display(),
            std::fs::metadata(&out_path).expect("written").len()
        )
    );
}

/// One step is "1 step", in `check`, `run` and `convert` alike.
#[test]
fn one_step_is_said_in_the_singular() {
    let dir = tempfile::tempdir().expect("dir");
    let at = |step: u64| StepFrame {
        step,
        keyframe: true,
        appeared: vec![bx(1, [0.0, 0.0], [1.0, 1.0])],
        ..StepFrame::default()
    };
    let path = write(
        dir.path(),
        "two.aabbstream",
        &stream_bytes(&hello(), &[at(0), at(1)], true),
    );
    let out = bin(&["run", utf8(&path), "--steps", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(&format!(
            "scene: \"two\" ({}), 2D, 1 sphere\nbroad phase: tree, 1 step\n",
            path.display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("; pairs recomputed on 0 of 1 step\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("tree: height 0 (least possible 0), 1 node, 1 leaf, area ratio"),
        "{stdout}"
    );
    let path = write(
        dir.path(),
        "one.aabbstream",
        &stream_bytes(&hello(), &[at(0)], true),
    );
    let out = bin(&["check", utf8(&path)]);
    assert_eq!(
        text(&out.stdout),
        format!(
            "{}: ok: stream from \"hostile\", 2D, 1 step, no engine broad phase (fat boxes, \
             pairs, tree)\n",
            path.display()
        )
    );
}

// ---- 1 (the end). a recording whose step 0 stopped ----------------------------------------------

/// A recording whose step 0 stopped (its pairs passed the limit) is checked against its header
/// as any: a header ordering a million spheres over the records of 30 is refused at once.
#[test]
fn a_recording_whose_step_0_stopped_is_checked_too() {
    use aabb_debugger::broadphase::BroadphaseKind;
    use aabb_debugger::replay::Recording;
    use aabb_debugger::replay::file::{self, checksum};
    use aabb_debugger::scene::Scene;
    let scene = Scene::parse(
        "(format_version: 1, name: \"packed\", dimensions: 2, \
         world: (min: (0.0, 0.0), max: (10.0, 10.0)), dt: 0.016666668, \
         tree: (margin: 0.3, velocity_lookahead: 0.1), spheres: [], \
         generate: Some((count: 30, radius: (1.0, 1.2), speed: (1.0, 5.0), seed: 7)))",
        "packed.ron",
        false,
    )
    .expect("scene");
    let (rec, _sim) =
        Recording::start(&scene, "packed.ron", BroadphaseKind::Tree, 1).expect("started");
    assert!(
        rec.history().steps[0].stopped,
        "step 0 passes a pair limit of 1"
    );
    let bytes = file::to_bytes(rec.history()).expect("bytes");
    let len = u32::from_le_bytes(bytes[20..24].try_into().expect("4")) as usize;
    let mut header: serde_json::Value =
        serde_json::from_slice(&bytes[24..24 + len]).expect("header JSON");
    let scene_text = header["scene"]
        .as_str()
        .expect("scene text")
        .replace("\"count\":30,", "\"count\":1000000,");
    assert!(scene_text.contains("\"count\":1000000,"), "{scene_text}");
    header["scene"] = serde_json::Value::String(scene_text);
    let json = serde_json::to_vec(&header).expect("JSON");
    let mut out = bytes[..20].to_vec();
    out.extend_from_slice(&u32::try_from(json.len()).expect("fits").to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&bytes[24 + len..]);
    let sum = checksum(&out[20..]);
    out[12..20].copy_from_slice(&sum.to_le_bytes());
    let dir = tempfile::tempdir().expect("dir");
    let path = write(dir.path(), "stopped.rec", &out);
    let (code, _, stderr) = bounded(&["replay", utf8(&path)]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains(
            "the header's scene has 1000000 spheres at step 0, but step 0's record says 30 \
             appeared: the header does not belong to these records (nothing was rebuilt)"
        ),
        "{stderr}"
    );
}

// ---- 5 (the end). a killed save's temporary file -----------------------------------------------

/// A save killed mid-write leaves its temporary file, which no process holds locked: the next
/// save to the folder removes it at once, however fresh; a save under way (its file locked)
/// keeps its own.
#[test]
fn the_next_save_removes_a_killed_saves_file_at_once() {
    let dir = tempfile::tempdir().expect("dir");
    let list = write(dir.path(), "level.txt", b"0 0 1 1\n2 2 3 3\n");
    write(dir.path(), ".aabb-save-k1LLed.tmp", &[0u8; 4096]);
    let saving = write(dir.path(), ".aabb-save-Saving.tmp", b"a save under way");
    let held = std::fs::File::open(&saving).expect("open");
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
    drop(held);
}

/// A frame kind in a message takes its article: "an optional frame".
#[test]
fn a_frame_kind_is_named_with_its_article() {
    let mut bytes = Vec::new();
    wire::encode_magic(&mut bytes);
    // An optional frame (kind 0x80) before HELLO.
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.push(0x80);
    let e = match stream::read_stream(&bytes[..], "s", "s", TraceLimits::default()) {
        Err(e @ StreamError::Wire { .. }) => e.to_string(),
        other => panic!("{other:?}"),
    };
    assert_eq!(e, "s: byte 8: an optional frame before HELLO");
}
