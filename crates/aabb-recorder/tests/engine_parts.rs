//! The engine's broad phase in a STEP (fat boxes, candidate pairs, tree nodes, timings): each
//! part round-trips through the encoder and decoder and through the Rust recorder exactly,
//! and every refusal of a section says what and where.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use aabb_recorder::wire::{
    self, EngineParts, EngineTree, NodeKind, SECTION_FAT_BOXES, SECTION_PAIRS, SECTION_TIMINGS,
    SECTION_TREE_NODES, Section, StepFrame, Timing, TreeNode,
};
use aabb_recorder::{Decoder, Hello, Limits, Recorder, StepUpdate, StreamState, WireBox};

#[derive(Clone, Default)]
struct SharedVec(Arc<Mutex<Vec<u8>>>);

impl Write for SharedVec {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("not poisoned").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn decode(bytes: &[u8]) -> (Vec<StepUpdate>, Option<String>) {
    let mut d = Decoder::new(bytes, Limits::default());
    let mut s = StreamState::new(Limits::default());
    let mut out = Vec::new();
    loop {
        match s.next_step(&mut d) {
            Ok(Some(u)) => out.push(u),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

fn bx(id: u32, x: f32) -> WireBox {
    WireBox {
        id,
        min: [x, 0.0, 0.0],
        max: [x + 1.0, 1.0, 0.0],
    }
}

fn node(id: u32, parent: Option<u32>, kind: NodeKind, x0: f32, x1: f32, height: u32) -> TreeNode {
    TreeNode {
        id,
        parent,
        kind,
        min: [x0, -0.5, 0.0],
        max: [x1, 1.5, 0.0],
        height,
        enlarged: height == 1,
    }
}

/// A tree over the boxes 1 and 2 (node ids 10, 11, 12).
fn small_tree() -> EngineTree {
    EngineTree {
        root: Some(10),
        partial: false,
        nodes: vec![
            node(10, None, NodeKind::Branch([11, 12]), -0.5, 3.5, 1),
            node(11, Some(10), NodeKind::Leaf(1), -0.5, 1.5, 0),
            node(12, Some(10), NodeKind::Leaf(2), 1.5, 3.5, 0),
        ],
    }
}

fn all_parts() -> EngineParts {
    EngineParts {
        fat_boxes: Some(vec![
            WireBox {
                id: 1,
                min: [-0.5, -0.5, 0.0],
                max: [1.5, 1.5, 0.0],
            },
            WireBox {
                id: 2,
                min: [1.5, -0.5, 0.0],
                max: [3.5, 1.5, 0.0],
            },
        ]),
        pairs: Some(vec![[1, 2]]),
        tree: Some(small_tree()),
        timings: Some(vec![
            Timing {
                key: "broad_phase_ns".to_owned(),
                value: 1250.0,
            },
            Timing {
                key: "margin".to_owned(),
                value: 0.5,
            },
        ]),
    }
}

/// A stream of HELLO (2D) and one keyframe of the boxes 1 (x 0..1) and 2 (x 2..3) with
/// `sections`.
fn stream_with(sections: Vec<Section>) -> Vec<u8> {
    let mut out = Vec::new();
    wire::encode_magic(&mut out);
    wire::encode_hello(&mut out, &Hello::new("test", 2, 0.01)).expect("valid");
    let step = StepFrame {
        step: 7,
        keyframe: true,
        appeared: vec![bx(1, 0.0), bx(2, 2.0)],
        sections,
        ..StepFrame::default()
    };
    wire::encode_step(&mut out, 2, &step).expect("fits");
    out
}

/// The error of a stream whose one step carries a section `tag` of `bytes`.
fn refusal(tag: u8, bytes: Vec<u8>) -> String {
    let (steps, error) = decode(&stream_with(vec![Section { tag, bytes }]));
    assert!(steps.is_empty());
    error.expect("refused")
}

#[test]
fn every_part_round_trips_through_the_codec() {
    let parts = all_parts();
    let (steps, error) = decode(&stream_with(parts.to_sections(2)));
    assert_eq!(error, None);
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].engine, parts);
    assert_eq!(steps[0].engine.timing("margin"), Some(0.5));
}

#[test]
fn a_step_without_sections_has_no_parts() {
    let (steps, error) = decode(&stream_with(Vec::new()));
    assert_eq!(error, None);
    assert_eq!(steps[0].engine, EngineParts::default());
    assert!(steps[0].engine.is_empty());
}

#[test]
fn pairs_in_any_order_are_read_canonical_and_sorted() {
    let mut out = Vec::new();
    wire::encode_magic(&mut out);
    wire::encode_hello(&mut out, &Hello::new("test", 2, 0.01)).expect("valid");
    let step = StepFrame {
        step: 0,
        keyframe: true,
        appeared: vec![bx(1, 0.0), bx(2, 2.0), bx(3, 4.0)],
        sections: vec![Section {
            tag: SECTION_PAIRS,
            bytes: wire::encode_pairs(&[[3, 2], [1, 3], [2, 1]]),
        }],
        ..StepFrame::default()
    };
    wire::encode_step(&mut out, 2, &step).expect("fits");
    let (steps, error) = decode(&out);
    assert_eq!(error, None);
    assert_eq!(steps[0].engine.pairs, Some(vec![[1, 2], [1, 3], [2, 3]]));
}

#[test]
fn refusals_name_the_section_the_entry_and_the_ids() {
    // The STEP frame is at byte 30: after the magic (8) and HELLO (22).
    let at = "byte 30, step 7: ";
    let cases: Vec<(u8, Vec<u8>, String)> = vec![
        (
            SECTION_PAIRS,
            wire::encode_pairs(&[[1, 2], [2, 1]]),
            "the candidate pairs section: pair (1, 2) twice".to_owned(),
        ),
        (
            SECTION_PAIRS,
            wire::encode_pairs(&[[1, 9]]),
            "the candidate pairs section: pair (1, 9): id 9 is not a box of the step".to_owned(),
        ),
        (
            SECTION_PAIRS,
            wire::encode_pairs(&[[4, 4]]),
            "the candidate pairs section: pair (4, 4) of one id with itself".to_owned(),
        ),
        (
            SECTION_PAIRS,
            u32::MAX.to_le_bytes().to_vec(),
            "the candidate pairs section: a count of 4294967295 pairs does not fit in the rest \
             of the section (room for 0)"
                .to_owned(),
        ),
        (
            SECTION_FAT_BOXES,
            wire::encode_fat_boxes(2, &[bx(1, 0.0), bx(1, 0.0)]),
            "the fat boxes section: id 1 twice".to_owned(),
        ),
        (
            SECTION_FAT_BOXES,
            wire::encode_fat_boxes(2, &[bx(5, 0.0)]),
            "the fat boxes section: the fat box of id 5: id 5 is not a box of the step".to_owned(),
        ),
        (
            SECTION_FAT_BOXES,
            wire::encode_fat_boxes(
                2,
                &[WireBox {
                    id: 1,
                    min: [f32::NAN, 0.0, 0.0],
                    max: [1.0, 1.0, 0.0],
                }],
            ),
            "the fat boxes section: the fat box of id 1 has a non-finite min (axis x: NaN)"
                .to_owned(),
        ),
        (
            SECTION_FAT_BOXES,
            vec![1, 0, 0, 0, 1, 0],
            "the fat boxes section: a count of 1 fat boxes does not fit in the rest of the \
             section (room for 0)"
                .to_owned(),
        ),
        (
            SECTION_TREE_NODES,
            {
                let mut t = small_tree();
                t.nodes[1].max[0] = -1.0;
                wire::encode_tree(2, &t)
            },
            "the tree section: node 11 (entry 1) has min > max (axis x: -0.5 > -1)".to_owned(),
        ),
        (
            SECTION_TREE_NODES,
            {
                let mut b = wire::encode_tree(2, &small_tree());
                b[0] = 0x80;
                b
            },
            "the tree section: flags 0x80 set reserved bits".to_owned(),
        ),
        (
            SECTION_TREE_NODES,
            {
                let mut b = wire::encode_tree(2, &small_tree());
                b.push(0);
                b
            },
            "the tree section: 1 byte left over after its last entry".to_owned(),
        ),
        (
            SECTION_TIMINGS,
            wire::encode_timings(&[Timing {
                key: "margin".to_owned(),
                value: f64::INFINITY,
            }]),
            "the timings section: margin is inf (values are finite)".to_owned(),
        ),
        (
            SECTION_TIMINGS,
            wire::encode_timings(&[Timing {
                key: "Bad-Key".to_owned(),
                value: 1.0,
            }]),
            "the timings section: entry 0 has the key \"Bad-Key\" (1 to 32 bytes of a-z, 0-9 \
             and _)"
                .to_owned(),
        ),
        (
            SECTION_TIMINGS,
            vec![3, 1, b'a'],
            "the timings section: it ends inside its value (byte 3 of the section)".to_owned(),
        ),
    ];
    for (tag, bytes, message) in cases {
        assert_eq!(refusal(tag, bytes), format!("{at}{message}"));
    }
    // An empty section repeats the previous step's part: the first step has none.
    let (_, error) = decode(&stream_with(vec![Section {
        tag: SECTION_PAIRS,
        bytes: Vec::new(),
    }]));
    assert_eq!(
        error.as_deref(),
        Some(
            "byte 30, step 7: the candidate pairs section: empty (the same as the previous \
             step's), but the previous step had none"
        )
    );
    // A reserved section twice in one step.
    let pairs = Section {
        tag: SECTION_PAIRS,
        bytes: wire::encode_pairs(&[]),
    };
    let (_, error) = decode(&stream_with(vec![pairs.clone(), pairs]));
    assert_eq!(
        error.as_deref(),
        Some("byte 30, step 7: the candidate pairs section: twice in one step")
    );
}

#[test]
fn a_section_over_the_limits_is_refused_before_allocation() {
    let limits = Limits {
        max_pairs: 1,
        max_tree_nodes: 2,
        ..Limits::default()
    };
    let pairs = wire::encode_pairs(&[[1, 2], [1, 3]]);
    assert_eq!(
        wire::decode_pairs(&pairs, &limits)
            .expect_err("over")
            .to_string(),
        "the candidate pairs section: 2 pairs, over the limit of 1"
    );
    let tree = wire::encode_tree(2, &small_tree());
    assert_eq!(
        wire::decode_tree(&tree, 2, &limits)
            .expect_err("over")
            .to_string(),
        "the tree section: 3 nodes, over the limit of 2"
    );
}

/// Adds every part of `parts` to the open step of `rec`.
fn add_parts(rec: &mut Recorder, parts: &EngineParts) {
    for b in parts.fat_boxes.iter().flatten() {
        rec.fat_box(b.id, &b.min[..2], &b.max[..2]);
    }
    if let Some(pairs) = &parts.pairs {
        rec.begin_pairs();
        // Reversed and in reverse order: the recorder sends them canonical and sorted.
        for &[a, b] in pairs.iter().rev() {
            rec.pair(b, a);
        }
    }
    if let Some(tree) = &parts.tree {
        rec.tree_root(tree.root);
        if tree.partial {
            rec.tree_partial();
        }
        for n in &tree.nodes {
            rec.tree_node(n);
        }
    }
    for t in parts.timings.iter().flatten() {
        rec.timing(&t.key, t.value);
    }
}

#[test]
fn every_part_round_trips_through_the_recorder() {
    let out = SharedVec::default();
    let mut rec = Recorder::to_writer(out.clone(), Hello::new("test", 2, 0.01)).expect("valid");
    let parts = all_parts();
    // Step 0: every part; step 1: pairs only, none of them; step 2: nothing.
    rec.begin_step();
    rec.add_box_2d(1, [0.0, 0.0], [1.0, 1.0]);
    rec.add_box_2d(2, [2.0, 0.0], [3.0, 1.0]);
    add_parts(&mut rec, &parts);
    rec.end_step();
    rec.begin_step();
    rec.add_box_2d(1, [0.0, 0.0], [1.0, 1.0]);
    rec.add_box_2d(2, [2.0, 0.0], [3.0, 1.0]);
    rec.begin_pairs();
    rec.end_step();
    rec.begin_step();
    rec.add_box_2d(1, [0.0, 0.0], [1.0, 1.0]);
    rec.end_step();
    let stats = rec.finish();
    assert_eq!(stats.parts_rejected, 0);
    let bytes = out.0.lock().expect("not poisoned").clone();
    let (steps, error) = decode(&bytes);
    assert_eq!(error, None);
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[0].engine, parts);
    assert_eq!(
        steps[1].engine,
        EngineParts {
            pairs: Some(Vec::new()),
            ..EngineParts::default()
        }
    );
    assert_eq!(steps[2].engine, EngineParts::default());
}

#[test]
fn the_recorder_leaves_out_bad_parts_and_counts_them() {
    let out = SharedVec::default();
    let mut rec = Recorder::to_writer(out.clone(), Hello::new("test", 2, 0.01)).expect("valid");
    rec.fat_box(1, &[0.0, 0.0], &[1.0, 1.0]); // outside a step
    rec.begin_step();
    rec.add_box_2d(1, [0.0, 0.0], [1.0, 1.0]);
    rec.add_box_2d(2, [2.0, 0.0], [3.0, 1.0]);
    rec.fat_box(1, &[0.0, 0.0], &[1.0, 1.0]);
    rec.fat_box(1, &[0.0, 0.0], &[1.0, 1.0]); // twice
    rec.fat_box(9, &[0.0, 0.0], &[1.0, 1.0]); // not a box of the step
    rec.fat_box(2, &[f32::NAN, 0.0], &[1.0, 1.0]); // NaN
    rec.pair(1, 1); // one id
    rec.pair(1, 2);
    rec.pair(2, 1); // twice
    rec.pair(1, 9); // not a box of the step
    rec.timing("reinserts", 3.0);
    rec.timing("reinserts", 4.0); // twice
    rec.timing("x y", 1.0); // bad key
    rec.timing("narrow_phase_ns", f64::NAN); // NaN
    rec.end_step();
    let stats = rec.finish();
    assert_eq!(stats.parts_rejected, 10);
    assert_eq!(stats.boxes_rejected, 0);
    let bytes = out.0.lock().expect("not poisoned").clone();
    let (steps, error) = decode(&bytes);
    assert_eq!(error, None);
    assert_eq!(
        steps[0].engine,
        EngineParts {
            fat_boxes: Some(vec![bx(1, 0.0)]),
            pairs: Some(vec![[1, 2]]),
            tree: None,
            timings: Some(vec![Timing {
                key: "reinserts".to_owned(),
                value: 3.0
            }]),
        }
    );
}

#[test]
fn a_part_the_same_as_the_step_befores_goes_as_an_empty_section() {
    let out = SharedVec::default();
    let mut rec = Recorder::to_writer(out.clone(), Hello::new("test", 2, 0.01)).expect("valid");
    let parts = all_parts();
    for _ in 0..3 {
        rec.begin_step();
        rec.add_box_2d(1, [0.0, 0.0], [1.0, 1.0]);
        rec.add_box_2d(2, [2.0, 0.0], [3.0, 1.0]);
        add_parts(&mut rec, &parts);
        rec.end_step();
    }
    // Step 3 changes the timings only; step 4 sends no tree, so step 5's goes whole (its
    // other parts, the same as step 4's, go empty).
    let mut changed = parts.clone();
    changed.timings = Some(vec![Timing {
        key: "reinserts".to_owned(),
        value: 2.0,
    }]);
    let mut no_tree = changed.clone();
    no_tree.tree = None;
    for p in [&changed, &no_tree, &changed] {
        rec.begin_step();
        rec.add_box_2d(1, [0.0, 0.0], [1.0, 1.0]);
        rec.add_box_2d(2, [2.0, 0.0], [3.0, 1.0]);
        add_parts(&mut rec, p);
        rec.end_step();
    }
    rec.finish();
    let bytes = out.0.lock().expect("not poisoned").clone();
    let (steps, error) = decode(&bytes);
    assert_eq!(error, None);
    let decoded: Vec<EngineParts> = steps.into_iter().map(|u| u.engine).collect();
    assert_eq!(
        decoded,
        vec![
            parts.clone(),
            parts.clone(),
            parts,
            changed.clone(),
            no_tree,
            changed
        ]
    );
    // The tags sent empty at each step.
    let mut d = Decoder::new(&bytes[..], Limits::default());
    let mut empty = Vec::new();
    while let Some(frame) = d.next_frame().expect("valid") {
        if let aabb_recorder::Frame::Step(s) = frame {
            let tags: Vec<u8> = s
                .sections
                .iter()
                .filter(|x| x.bytes.is_empty())
                .map(|x| x.tag)
                .collect();
            empty.push(tags);
        }
    }
    assert_eq!(
        empty,
        vec![
            vec![],
            vec![1, 2, 3, 4],
            vec![1, 2, 3, 4],
            vec![1, 2, 3],
            vec![1, 2, 4],
            vec![1, 2, 4],
        ]
    );
}

#[test]
fn mutated_sections_are_refused_with_their_name_never_a_panic() {
    let parts = all_parts();
    let sections = parts.to_sections(2);
    let limits = Limits::default();
    let previous = EngineParts::default();
    // A small deterministic generator (xorshift).
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut accepted, mut refused) = (0, 0);
    for round in 0..4000 {
        let mut s = sections[round % sections.len()].clone();
        match next() % 3 {
            0 => {
                let k = (next() as usize) % s.bytes.len();
                s.bytes[k] = next() as u8;
            }
            1 => {
                let cut = (next() as usize) % s.bytes.len();
                s.bytes.truncate(cut.max(1));
            }
            _ => {
                let extra = (next() % 9) as usize;
                s.bytes.extend((0..extra).map(|_| next() as u8));
            }
        }
        match EngineParts::from_sections(&[s.clone()], 2, &limits, &previous) {
            Ok(_) => accepted += 1,
            Err(e) => {
                let name = wire::section_name(s.tag);
                assert!(
                    e.to_string().starts_with(&format!("the {name} section: ")),
                    "{e}"
                );
                refused += 1;
            }
        }
    }
    assert_eq!(accepted + refused, 4000);
    // The generator is fixed, so are the counts: some mutations still decode (a changed
    // coordinate that stays valid), the rest are refused, each naming its section.
    assert_eq!((accepted, refused), (1088, 2912));
}
