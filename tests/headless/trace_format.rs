//! The trace format: round trips through the writer and the reader (in memory, streamed a
//! byte at a time, from a file), every kind of malformed input refused with its line, the
//! limits, random byte mutations that never panic; and how a trace drives the broad phase
//! (velocities from the centres' motion, appear and disappear, contacts of tight boxes).

use aabb_debugger::broadphase::{BroadphaseKind, DEFAULT_PAIR_LIMIT};
use aabb_debugger::trace::{
    Stepper, Trace, TraceBox, TraceError, TraceHeader, TraceLimits, TraceReader, TraceSimulation,
    TraceWriter, is_trace_path,
};
use aabb_debugger::tree::{Aabb, TreeConfig};
use glam::Vec3;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use std::sync::Arc;

fn bx(id: u32, min: [f32; 3], max: [f32; 3]) -> TraceBox {
    TraceBox {
        id,
        aabb: Aabb::new(Vec3::from_array(min), Vec3::from_array(max)),
    }
}

/// A random trace: boxes that come, go and move, ids in random order, some empty steps,
/// numbers of every size.
fn random_steps(rng: &mut Pcg64, dims: u8, steps: usize) -> (Vec<TraceBox>, Vec<Vec<TraceBox>>) {
    random_steps_within(rng, dims, steps, 1e6)
}

/// [`random_steps`] with coordinates within `±big` (Box2D's tree takes boxes under 100,000).
fn random_steps_within(
    rng: &mut Pcg64,
    dims: u8,
    steps: usize,
    big: f32,
) -> (Vec<TraceBox>, Vec<Vec<TraceBox>>) {
    let number = |rng: &mut Pcg64| -> f32 {
        match rng.random_range(0..4) {
            0 => rng.random_range(-10.0..10.0),
            1 => rng.random_range(-big..big),
            2 => rng.random_range(-1e-6..1e-6),
            _ => (rng.random_range(-100..100) as f32) * 0.25,
        }
    };
    let one = |rng: &mut Pcg64, id: u32| {
        let mut min = [0.0; 3];
        let mut max = [0.0; 3];
        for a in 0..usize::from(dims) {
            let (x, y) = (number(rng), number(rng));
            (min[a], max[a]) = (x.min(y), x.max(y));
        }
        bx(id, min, max)
    };
    let statics: Vec<TraceBox> = (0..rng.random_range(0..3))
        .map(|k| one(rng, 1000 + k))
        .collect();
    let out = (0..steps)
        .map(|_| {
            let mut ids: Vec<u32> = (0..40).filter(|_| rng.random_range(0..4) != 0).collect();
            if rng.random_range(0..8) == 0 {
                ids.clear();
            }
            // Shuffled: a writer may list them in any order.
            for i in (1..ids.len()).rev() {
                ids.swap(i, rng.random_range(0..=i));
            }
            ids.into_iter().map(|id| one(rng, id)).collect()
        })
        .collect();
    (statics, out)
}

fn written(header: TraceHeader, statics: &[TraceBox], steps: &[Vec<TraceBox>]) -> Vec<u8> {
    let mut text = Vec::new();
    let mut w = TraceWriter::new(&mut text, header, statics).expect("header written");
    for s in steps {
        w.step(s).expect("step written");
    }
    assert_eq!(w.steps_written(), steps.len() as u64);
    w.finish().expect("flushed");
    text
}

fn sorted(mut boxes: Vec<TraceBox>) -> Vec<TraceBox> {
    boxes.sort_by_key(|b| b.id);
    boxes
}

#[test]
fn written_traces_read_back_exactly_in_memory_streamed_and_from_a_file() {
    let mut rng = Pcg64::seed_from_u64(5);
    for (case, dims) in [2u8, 3, 2, 3, 2].into_iter().enumerate() {
        let header = TraceHeader {
            dimensions: dims,
            dt: [1.0 / 60.0, 0.001, 1.0, 0.25, 1.0 / 30.0][case],
        };
        let (statics, steps) = random_steps(&mut rng, dims, 30);
        let text = written(header, &statics, &steps);
        let trace = Trace::parse(&text, "t.trace").expect("reads back");
        assert_eq!(trace.header(), header);
        assert_eq!(trace.statics(), sorted(statics.clone()).as_slice());
        assert_eq!(trace.step_count(), steps.len());
        for (k, s) in steps.iter().enumerate() {
            assert_eq!(
                trace.step(k),
                sorted(s.clone()).as_slice(),
                "case {case} step {k}"
            );
        }
        assert!(trace.step(steps.len()).is_empty());
        // Written again: the same trace (ids now sorted).
        let mut again = Vec::new();
        trace.write(&mut again).expect("written");
        assert_eq!(Trace::parse(&again, "t.trace").expect("reads"), trace);
        // Streamed one byte at a time: the same steps.
        let mut reader = TraceReader::new(
            std::io::BufReader::with_capacity(1, text.as_slice()),
            "t.trace",
            TraceLimits::default(),
        )
        .expect("header");
        assert_eq!(reader.header(), header);
        assert_eq!(reader.statics(), trace.statics());
        let mut step = Vec::new();
        let mut k = 0;
        while reader.next_step(&mut step).expect("a step") {
            assert_eq!(reader.step_number(), k as u64);
            assert_eq!(step.as_slice(), trace.step(k));
            k += 1;
        }
        assert_eq!(k, steps.len());
        // From a file: named after its stem, the same content.
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("case.trace");
        std::fs::write(&path, &text).expect("written");
        let loaded = Trace::load(&path).expect("loads");
        assert_eq!(loaded.name(), "case");
        assert_eq!(loaded.step_count(), trace.step_count());
        assert_eq!(loaded.step(7), trace.step(7));
        // Built from boxes in memory: the same again.
        let built = Trace::from_steps("t.trace", header, statics, steps).expect("valid");
        assert_eq!(built, trace);
    }
}

#[test]
fn comments_blank_lines_crlf_and_spacing_are_accepted() {
    let text = "aabb-trace 1 dims=2\r\n# a comment\r\n\r\nstatic\r\n  9 0 0 1 1  \r\n\
                step 0\r\n\t1   0.5 0.5\t1 1\r\n# between\r\nstep 1\r\nstep 2\r\n0 -1 -1 -0.5 -0.5";
    let trace = Trace::parse(text.as_bytes(), "t").expect("valid");
    assert_eq!(trace.dt(), 1.0 / 60.0);
    assert_eq!(trace.statics(), &[bx(9, [0.0; 3], [1.0, 1.0, 0.0])]);
    assert_eq!(trace.step(0), &[bx(1, [0.5, 0.5, 0.0], [1.0, 1.0, 0.0])]);
    assert!(trace.step(1).is_empty());
    assert_eq!(
        trace.step(2),
        &[bx(0, [-1.0, -1.0, 0.0], [-0.5, -0.5, 0.0])]
    );
    assert_eq!(trace.max_boxes(), 2);
}

/// Every class of malformed input, with the message it gets (line included).
#[test]
fn malformed_traces_are_refused_with_their_line() {
    let h2 = "aabb-trace 1 dims=2 dt=0.5\n";
    let h3 = "aabb-trace 1 dims=3\n";
    let cases: Vec<(String, &str)> = vec![
        (
            String::new(),
            "t:1: empty: a trace starts with the header `aabb-trace 1 dims=2 dt=0.016666668`",
        ),
        (
            "scene: (x: 1)\n".into(),
            "t:1: not a trace: the first line must be the header `aabb-trace 1 dims=2 dt=0.016666668`",
        ),
        (
            "aabb-trace 2 dims=2\nstep 0\n".into(),
            "t:1: trace format version 2 is newer than this build reads (1)",
        ),
        (
            "aabb-trace one dims=2\n".into(),
            "t:1: `one` is not a trace format version (this build reads 1)",
        ),
        (
            "aabb-trace 1\nstep 0\n".into(),
            "t:1: the header must give dims=2 or dims=3",
        ),
        (
            "aabb-trace 1 dims=4\n".into(),
            "t:1: dims must be 2 or 3, got `4`",
        ),
        (
            "aabb-trace 1 dims=2 dims=3\n".into(),
            "t:1: the header gives `dims` twice",
        ),
        (
            "aabb-trace 1 dims=2 dt=0\n".into(),
            "t:1: dt must be a number of seconds > 0 and <= 1, got `0`",
        ),
        (
            "aabb-trace 1 dims=2 dt=NaN\n".into(),
            "t:1: dt must be a number of seconds > 0 and <= 1, got `NaN`",
        ),
        (
            "aabb-trace 1 dims=2 speed=3\n".into(),
            "t:1: unknown header field `speed=3` (the fields are dims=2|3 and dt=SECONDS)",
        ),
        (
            h2.to_string(),
            "t:1: the trace has no step: it needs at least `step 0`",
        ),
        (
            format!("{h2}# only a comment\n"),
            "t:2: the trace has no step: it needs at least `step 0`",
        ),
        (
            format!("{h2}0 0 0 1 1\n"),
            "t:2: a box before `static` or `step 0`: boxes belong to a step",
        ),
        (
            format!("{h2}step 1\n"),
            "t:2: steps out of order: expected `step 0`, got `step 1` (steps are numbered 0, 1, 2, ... with none left out)",
        ),
        (
            format!("{h2}step 0\nstep 2\n"),
            "t:3: steps out of order: expected `step 1`, got `step 2` (steps are numbered 0, 1, 2, ... with none left out)",
        ),
        (
            format!("{h2}step 0\nstep 0\n"),
            "t:3: steps out of order: expected `step 1`, got `step 0` (steps are numbered 0, 1, 2, ... with none left out)",
        ),
        (
            format!("{h2}step x\n"),
            "t:2: `step x`: the step number must be a whole number (expected `step 0`)",
        ),
        (
            format!("{h2}step -1\n"),
            "t:2: `step -1`: the step number must be a whole number (expected `step 0`)",
        ),
        (
            format!("{h2}step 0\n0 0 0 1\n"),
            "t:3: a box line is an id and 4 numbers (`id minx miny maxx maxy`), got 4 values",
        ),
        (
            format!("{h2}step 0\n0 0 0 1 1 1\n"),
            "t:3: a box line is an id and 4 numbers (`id minx miny maxx maxy`), got 6 values",
        ),
        (
            format!("{h3}step 0\n0 0 0 1 1\n"),
            "t:3: a box line is an id and 6 numbers (`id minx miny minz maxx maxy maxz`), got 5 values",
        ),
        (
            format!("{h2}step 0\n-1 0 0 1 1\n"),
            "t:3: `-1` is not a box id (a whole number from 0 to 4294967295)",
        ),
        (
            format!("{h2}step 0\n4294967296 0 0 1 1\n"),
            "t:3: `4294967296` is not a box id (a whole number from 0 to 4294967295)",
        ),
        (
            format!("{h2}step 0\n1.5 0 0 1 1\n"),
            "t:3: `1.5` is not a box id (a whole number from 0 to 4294967295)",
        ),
        (
            format!("{h2}step 0\n3 0 0 1 1,5\n"),
            "t:3: box 3: max y `1,5` is not a number",
        ),
        (
            format!("{h2}step 0\n3 NaN 0 1 1\n"),
            "t:3: box 3: min x `NaN` is not finite (or is beyond f32's range)",
        ),
        (
            format!("{h2}step 0\n3 0 -inf 1 1\n"),
            "t:3: box 3: min y `-inf` is not finite (or is beyond f32's range)",
        ),
        (
            format!("{h2}step 0\n3 0 0 1e39 1\n"),
            "t:3: box 3: max x `1e39` is not finite (or is beyond f32's range)",
        ),
        (
            format!("{h2}step 0\n3 2 0 1 1\n"),
            "t:3: box 3: min x 2 > max x 1",
        ),
        (
            format!("{h3}step 0\n3 0 0 5 1 1 4\n"),
            "t:3: box 3: min z 5 > max z 4",
        ),
        (
            format!("{h2}step 0\n3 0 0 1 1\n4 0 0 1 1\n\n3 0 0 2 2\n"),
            "t:6: id 3 appears twice in step 0 (also on line 3)",
        ),
        (
            format!("{h2}step 0\nstep 1\n3 0 0 1 1\n3 0 0 2 2\nstep 2\n"),
            "t:5: id 3 appears twice in step 1 (also on line 4)",
        ),
        (
            format!("{h2}static\n7 0 0 1 1\n7 0 0 1 1\nstep 0\n"),
            "t:4: id 7 appears twice in the static section (also on line 3)",
        ),
        (
            format!("{h2}static\n7 0 0 1 1\nstep 0\n7 0 0 1 1\n"),
            "t:5: id 7 is a static box's; a step may not list it",
        ),
        (
            format!("{h2}step 0\nstatic\n"),
            "t:3: `static` must come once, before `step 0`",
        ),
        (
            format!("{h2}static\nstatic\n"),
            "t:3: `static` must come once, before `step 0`",
        ),
        (
            format!("{h2}step 0\n\u{1b}[31m 0 0 1 1\n"),
            "t:3: `\\u{1b}[31m` is not a box id (a whole number from 0 to 4294967295)",
        ),
    ];
    for (text, expected) in &cases {
        let err = Trace::parse(text.as_bytes(), "t").expect_err(text);
        assert!(
            matches!(err, TraceError::Syntax { .. }),
            "{text:?}: {err:?}"
        );
        assert_eq!(err.to_string(), *expected, "{text:?}");
    }
    // Bytes that are not UTF-8, in the header and in a step.
    let err =
        Trace::parse(b"aabb-trace 1 dims=2\nstep 0\n1 0 0 \xff 1\n", "t").expect_err("refused");
    assert_eq!(err.to_string(), "t:3: the line is not UTF-8 text");
    let err = Trace::parse(b"\xfe\xff", "t").expect_err("refused");
    assert!(err.to_string().starts_with("t:1: not a trace"), "{err}");
}

#[test]
fn the_reader_stops_at_each_limit_with_the_line() {
    let limits = TraceLimits {
        max_line_bytes: 40,
        max_boxes_per_step: 3,
        max_steps: 4,
        max_total_boxes: 7,
        max_bytes: 200,
    };
    let read = |text: &str| {
        Trace::read(text.as_bytes(), "t", limits)
            .map(|t| t.step_count())
            .map_err(|e| e.to_string())
    };
    let h = "aabb-trace 1 dims=2\n";
    let boxes = |n: usize| -> String { (0..n).map(|i| format!("{i} 0 0 1 1\n")).collect() };
    assert_eq!(read(&format!("{h}step 0\n{}", boxes(3))), Ok(1));
    assert_eq!(
        read(&format!("{h}step 0\n{}", boxes(4))),
        Err("t:6: more than 3 boxes in one step".to_owned())
    );
    assert_eq!(
        read(&format!("{h}step 0\n# {}\n", "x".repeat(40))),
        Err("t:3: the line is longer than 40 bytes".to_owned())
    );
    assert_eq!(
        read(&format!("{h}step 0\nstep 1\nstep 2\nstep 3\nstep 4\n")),
        Err("t:6: more than 4 steps".to_owned())
    );
    assert_eq!(
        read(&format!(
            "{h}step 0\n{}step 1\n{}step 2\n{}",
            boxes(3),
            boxes(3),
            boxes(3)
        )),
        Err("t:12: more than 7 boxes in the whole trace".to_owned())
    );
    assert_eq!(
        read(&format!("{h}step 0\n{}", "#\n".repeat(100))),
        Err("t:89: the trace is longer than 200 bytes".to_owned())
    );
    // A file past the byte limit is refused before it is read.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.trace");
    std::fs::write(&path, format!("{h}step 0\n{}", "#\n".repeat(100))).expect("written");
    let err = Trace::load_with(&path, limits).expect_err("too large");
    assert!(
        err.to_string().contains("more than the limit of 200 bytes"),
        "{err}"
    );
}

/// Random edits of a valid trace (bytes changed, inserted, removed, lines cut) never make
/// the reader panic; every refusal names a line of the input.
#[test]
fn random_byte_mutations_never_panic() {
    let mut rng = Pcg64::seed_from_u64(11);
    let (statics, steps) = random_steps(&mut rng, 3, 6);
    let header = TraceHeader {
        dimensions: 3,
        dt: 0.02,
    };
    let base = written(header, &statics, &steps);
    let alphabet = b"0123456789.-+eE \n\r#stepaicnfNIx\x00\xff\xc3";
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..3000 {
        let mut text = base.clone();
        for _ in 0..rng.random_range(1..4) {
            let at = rng.random_range(0..text.len());
            let byte = alphabet[rng.random_range(0..alphabet.len())];
            match rng.random_range(0..4) {
                0 => text[at] = byte,
                1 => text.insert(at, byte),
                2 => {
                    text.remove(at);
                }
                _ => text.truncate(at),
            }
            if text.is_empty() {
                break;
            }
        }
        match Trace::parse(&text, "t") {
            Ok(trace) => {
                ok += 1;
                assert!(trace.step_count() >= 1);
            }
            Err(TraceError::Syntax { line, message, .. }) => {
                refused += 1;
                let lines = text.split(|&c| c == b'\n').count() as u64;
                assert!(
                    line >= 1 && line <= lines.max(1),
                    "line {line} of {lines}: {message}"
                );
            }
            Err(other) => panic!("not a syntax error: {other}"),
        }
    }
    assert!(ok > 100 && refused > 1000, "{ok} read, {refused} refused");
}

#[test]
fn the_writer_refuses_boxes_a_reader_would_refuse() {
    let header = TraceHeader {
        dimensions: 2,
        dt: 0.5,
    };
    let mut out = Vec::new();
    let mut w = TraceWriter::new(&mut out, header, &[bx(9, [0.0; 3], [1.0; 3])]).expect("ok");
    let cases = [
        (
            vec![bx(1, [f32::NAN, 0.0, 0.0], [1.0; 3])],
            "trace step 0: box 1: not finite",
        ),
        (
            vec![bx(1, [2.0, 0.0, 0.0], [1.0; 3])],
            "trace step 0: box 1: min [2, 0, 0] > max",
        ),
        (
            vec![bx(1, [0.0; 3], [1.0; 3]), bx(1, [0.0; 3], [1.0; 3])],
            "trace step 0: id 1 appears twice",
        ),
        (
            vec![bx(9, [0.0; 3], [1.0; 3])],
            "trace step 0: id 9 is a static box's",
        ),
    ];
    for (boxes, expected) in cases {
        let err = w.step(&boxes).expect_err("refused");
        assert!(err.to_string().starts_with(expected), "{err}");
    }
    w.step(&[bx(1, [0.0; 3], [1.0; 3])]).expect("a good step");
    w.finish().expect("flushed");
    let text = String::from_utf8(out).expect("text");
    assert_eq!(
        text,
        "aabb-trace 1 dims=2 dt=0.5\nstatic\n9 0 0 1 1\nstep 0\n1 0 0 1 1\n"
    );
    let bad = TraceHeader {
        dimensions: 4,
        dt: 0.5,
    };
    assert!(TraceWriter::new(Vec::new(), bad, &[]).is_err());
}

#[test]
fn traces_are_told_by_extension_or_header() {
    let dir = tempfile::tempdir().expect("temp dir");
    let by_name = dir.path().join("a.TRACE");
    let by_header = dir.path().join("a.txt");
    let scene = dir.path().join("a.ron");
    std::fs::write(&by_header, "aabb-trace 1 dims=2\nstep 0\n").expect("written");
    std::fs::write(&scene, "(format_version: 1)").expect("written");
    assert!(is_trace_path(&by_name), "no such file, but named .trace");
    assert!(is_trace_path(&by_header));
    assert!(!is_trace_path(&scene));
    assert!(!is_trace_path(dir.path()));
    assert!(!is_trace_path(&dir.path().join("missing.ron")));
}

/// A box moving right one unit a step (dt 0.5 s: velocity 2), one that appears at step 1
/// and one gone at step 2, on every broad phase: the velocities, the fat boxes, the
/// events and the contacts (tight boxes that overlap) are as the format says.
#[test]
fn a_trace_drives_the_broad_phase_with_velocities_from_the_centres() {
    let header = TraceHeader {
        dimensions: 2,
        dt: 0.5,
    };
    let mover = |x: f32| bx(1, [x, 0.0, 0.0], [x + 1.0, 1.0, 0.0]);
    let steps = vec![
        vec![mover(0.0), bx(2, [5.0, 0.0, 0.0], [6.0, 1.0, 0.0])],
        vec![
            mover(1.0),
            bx(2, [5.0, 0.0, 0.0], [6.0, 1.0, 0.0]),
            bx(3, [1.5, 0.5, 0.0], [1.8, 0.8, 0.0]),
        ],
        vec![mover(2.0), bx(3, [1.5, 0.5, 0.0], [1.8, 0.8, 0.0])],
        vec![mover(3.0), bx(3, [1.5, 0.5, 0.0], [1.8, 0.8, 0.0])],
    ];
    let wall = bx(7, [-1.0, -1.0, 0.0], [10.0, 0.0, 0.0]);
    let trace = Arc::new(Trace::from_steps("t", header, vec![wall], steps).expect("valid"));
    let config = TreeConfig {
        margin: 0.25,
        velocity_lookahead: 1.0,
        ..TreeConfig::default()
    };
    for kind in BroadphaseKind::ALL {
        let mut sim =
            TraceSimulation::new(Arc::clone(&trace), kind, config, DEFAULT_PAIR_LIMIT).expect("ok");
        let r = sim.report();
        assert_eq!((r.step, r.appeared.clone()), (0, vec![1, 2, 7]), "{kind}");
        // Step 0: no velocity yet; the wall touches boxes 1 and 2.
        assert_eq!(sim.bodies()[0].velocity, Vec3::ZERO);
        assert_eq!(r.contacts, vec![(1, 7), (2, 7)], "{kind}");
        let r = sim.step().expect("step 1").clone();
        assert_eq!(r.appeared, vec![3], "{kind}");
        let body = |sim: &TraceSimulation, id: u32| {
            *sim.bodies().iter().find(|b| b.id == id).expect("present")
        };
        assert_eq!(body(&sim, 1).velocity, Vec3::new(2.0, 0.0, 0.0), "{kind}");
        assert_eq!(body(&sim, 3).velocity, Vec3::ZERO, "{kind}");
        assert_eq!(body(&sim, 7).velocity, Vec3::ZERO, "{kind}");
        // Box 1 left its fat box (max x 1.25) and was fattened by the margin and 2 x 1 s
        // ahead.
        assert_eq!(r.reinserted, vec![1], "{kind}");
        let fat = sim.broadphase().fat_aabb(1).expect("present");
        assert_eq!((fat.min.x, fat.max.x), (0.75, 4.25), "{kind}");
        // Box 3 lies inside box 1's tight box: a contact; box 2 is near nothing.
        assert!(r.contacts.contains(&(1, 3)), "{kind}: {:?}", r.contacts);
        let r = sim.step().expect("step 2").clone();
        assert_eq!(
            (r.appeared.clone(), r.disappeared.clone()),
            (vec![], vec![2]),
            "{kind}"
        );
        assert!(!r.contacts.contains(&(1, 3)), "{kind}: box 1 has moved on");
        assert_eq!(sim.steps_left(), Some(1));
        sim.step().expect("step 3");
        assert!(sim.is_at_end());
        assert_eq!(sim.steps_left(), Some(0));
        let err = sim.step().expect_err("past the end");
        assert_eq!(
            err.to_string(),
            "<trace>: the trace ends at step 3; there is no next step"
        );
    }
    // Started part-way, velocities come from the step before.
    let sim = TraceSimulation::starting_at(
        Arc::clone(&trace),
        2,
        BroadphaseKind::Tree,
        config,
        DEFAULT_PAIR_LIMIT,
    )
    .expect("ok");
    assert_eq!(sim.step_index(), 2);
    assert_eq!(sim.bodies()[0].velocity, Vec3::new(2.0, 0.0, 0.0));
    assert!(sim.broadphase().tree_view().is_some());
    let err = TraceSimulation::starting_at(trace, 4, BroadphaseKind::Tree, config, 10)
        .err()
        .expect("no step 4");
    assert_eq!(
        err.to_string(),
        "<trace>: the trace has no step 4: its steps are 0 to 3"
    );
}

/// Random traces in 2D and 3D (boxes that come, go and jump about, static boxes) give the
/// same report on the tree, brute force, sweep-and-prune and (2D) Box2D's tree at every step.
/// Box2D's tree takes boxes under 100,000 (`B2_HUGE`): it refuses the traces with numbers up
/// to a million, saying so, and runs a 2D trace with numbers up to 40,000.
#[test]
fn random_traces_give_the_same_reports_on_every_broad_phase() {
    let mut rng = Pcg64::seed_from_u64(23);
    let mut pairs = 0;
    for (dims, big) in [(2u8, 1e6), (3, 1e6), (2, 4e4)] {
        let (statics, steps) = random_steps_within(&mut rng, dims, 25, big);
        let header = TraceHeader {
            dimensions: dims,
            dt: 0.1,
        };
        let trace = Arc::new(Trace::from_steps("r", header, statics, steps).expect("valid"));
        let config = TreeConfig {
            margin: 0.5,
            velocity_lookahead: 0.05,
            ..TreeConfig::default()
        };
        let mut kinds = BroadphaseKind::for_dimensions(dims).to_vec();
        if big > 1e5 && dims == 2 {
            let refused = TraceSimulation::new(
                Arc::clone(&trace),
                BroadphaseKind::Box2d,
                config,
                DEFAULT_PAIR_LIMIT,
            )
            .err()
            .expect("a box past B2_HUGE");
            assert!(refused.to_string().contains("(B2_HUGE)"), "{refused}");
            kinds.retain(|&k| k != BroadphaseKind::Box2d);
        }
        let mut sims: Vec<TraceSimulation> = kinds
            .iter()
            .map(|&k| TraceSimulation::new(Arc::clone(&trace), k, config, DEFAULT_PAIR_LIMIT))
            .collect::<Result<_, _>>()
            .expect("step 0");
        assert_eq!(sims.len(), if big < 1e5 { 4 } else { 3 });
        loop {
            let first = sims[0].report().clone();
            pairs += first.candidate_pairs.len();
            for sim in &sims[1..] {
                let r = sim.report();
                let kind = sim.broadphase_kind();
                assert_eq!(
                    r.candidate_pairs, first.candidate_pairs,
                    "{dims}D {kind} {}",
                    r.step
                );
                assert_eq!(r.contacts, first.contacts, "{dims}D {kind} {}", r.step);
                assert_eq!(r.reinserted, first.reinserted, "{dims}D {kind} {}", r.step);
                assert_eq!(r.appeared, first.appeared, "{dims}D {kind} {}", r.step);
                assert_eq!(
                    r.disappeared, first.disappeared,
                    "{dims}D {kind} {}",
                    r.step
                );
            }
            if sims[0].is_at_end() {
                break;
            }
            for sim in &mut sims {
                sim.step().expect("a step");
            }
        }
    }
    assert!(pairs > 200, "{pairs} pairs: the case has pairs to find");
}

/// A sweep of a trace counts what `run` counts at the same margin and look-ahead, from the
/// first step or from a later one (the window's "from now"), and refuses more steps than the
/// trace has left.
#[test]
fn a_sweep_of_a_trace_counts_what_run_counts() {
    use aabb_debugger::cli::run::summarize_trace;
    use aabb_debugger::sweep::{SweepControl, SweepOutcome, SweepPlan, SweepSpec};
    let mut rng = Pcg64::seed_from_u64(29);
    let (statics, steps) = random_steps(&mut rng, 2, 40);
    let header = TraceHeader {
        dimensions: 2,
        dt: 0.1,
    };
    let trace = Arc::new(Trace::from_steps("r", header, statics, steps).expect("valid"));
    let spec = SweepSpec {
        threads: 2,
        ..SweepSpec::new(vec![0.0, 0.5, 2.0], vec![0.0, 0.1], 39)
    };
    let plan = SweepPlan::for_trace(Arc::clone(&trace), 0, TreeConfig::default(), spec.clone())
        .expect("valid");
    let SweepOutcome::Finished(report) = plan.run(&SweepControl::new()).expect("runs") else {
        panic!("not cancelled");
    };
    assert_eq!(report.points.len(), 6);
    for p in &report.points {
        assert_eq!(p.steps, 39);
        assert!(p.stopped.is_none());
        let run = summarize_trace(
            &trace,
            "r",
            39,
            BroadphaseKind::Tree,
            p.point.config,
            DEFAULT_PAIR_LIMIT,
        )
        .expect("runs");
        assert_eq!(p.reinserts_total, run.reinserts_total, "{:?}", p.point);
    }
    // From step 30 of a simulation: 9 steps are left.
    let mut sim = TraceSimulation::new(
        Arc::clone(&trace),
        BroadphaseKind::Tree,
        TreeConfig::default(),
        DEFAULT_PAIR_LIMIT,
    )
    .expect("ok");
    for _ in 0..30 {
        sim.step().expect("a step");
    }
    let sim = aabb_debugger::source::Sim::Trace(sim);
    let short = SweepSpec::new(vec![0.1], vec![0.0], 9);
    let plan = SweepPlan::from_sim(&sim, short.clone()).expect("valid");
    let SweepOutcome::Finished(report) = plan.run(&SweepControl::new()).expect("runs") else {
        panic!("not cancelled");
    };
    assert_eq!(report.points[0].steps, 9);
    let err =
        SweepPlan::from_sim(&sim, SweepSpec { steps: 10, ..short }).expect_err("past the end");
    assert_eq!(
        err.to_string(),
        "steps: the trace has 9 steps after step 30; got 10"
    );
}
