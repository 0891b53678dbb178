//! Property tests of the stream format: random valid streams round-trip frame for frame and
//! set for set; mutated streams (bytes flipped, inserted, deleted, cut) never panic, and
//! their errors point inside the input.

use std::collections::BTreeMap;

use aabb_recorder::wire::{encode_frame, encode_magic};
use aabb_recorder::{Bye, Decoder, Frame, Hello, Limits, Section, StepFrame, StreamState, WireBox};
use proptest::prelude::*;

/// One step of a generated stream: its number, whether it is sent as a keyframe, its set.
type Steps = Vec<(u64, bool, BTreeMap<u32, WireBox>)>;

fn a_box(dims: u8) -> impl Strategy<Value = (u32, WireBox)> {
    (
        0u32..40,
        prop::array::uniform3(-400i16..400),
        prop::array::uniform3(0u8..40),
    )
        .prop_map(move |(id, lo, size)| {
            let mut min = lo.map(|v| f32::from(v) / 8.0);
            let mut max = [0.0; 3];
            for k in 0..3 {
                max[k] = min[k] + f32::from(size[k]) / 4.0;
            }
            if dims == 2 {
                min[2] = 0.0;
                max[2] = 0.0;
            }
            (id, WireBox { id, min, max })
        })
}

fn a_stream() -> impl Strategy<Value = (u8, Vec<WireBox>, Steps, Option<Bye>)> {
    (2u8..=3).prop_flat_map(|dims| {
        let statics = prop::collection::btree_map(100u32..110, a_box(dims).prop_map(|b| b.1), 0..4)
            .prop_map(|m| {
                m.into_iter()
                    .map(|(id, mut b)| {
                        b.id = id;
                        b
                    })
                    .collect::<Vec<_>>()
            });
        let step = (
            0u64..4,
            prop::bool::weighted(0.2),
            prop::collection::btree_map(0u32..40, a_box(dims).prop_map(|b| b.1), 0..12),
        );
        let steps = prop::collection::vec(step, 1..12).prop_map(|v| {
            let mut n = 0;
            v.into_iter()
                .enumerate()
                .map(|(i, (gap, key, set))| {
                    n += if i == 0 { gap } else { gap + 1 };
                    let set = set
                        .into_iter()
                        .map(|(id, mut b)| {
                            b.id = id;
                            (id, b)
                        })
                        .collect();
                    (n, key || i == 0, set)
                })
                .collect::<Steps>()
        });
        let bye = prop::option::of((0u64..100, 0u64..100).prop_map(|(a, b)| Bye {
            steps_sent: a,
            steps_dropped: b,
        }));
        (Just(dims), statics, steps, bye)
    })
}

/// The frames of a stream: HELLO, STATIC (when any), one STEP a step (a delta against the
/// set before unless a keyframe), an optional frame, and the BYE.
fn frames_of(dims: u8, statics: &[WireBox], steps: &Steps, bye: Option<Bye>) -> Vec<Frame> {
    let mut frames = vec![Frame::Hello(Hello::new("prop", dims, 0.25))];
    if !statics.is_empty() {
        frames.push(Frame::Static(statics.to_vec()));
    }
    let mut prev: BTreeMap<u32, WireBox> = BTreeMap::new();
    for (i, (n, key, set)) in steps.iter().enumerate() {
        let mut f = StepFrame {
            step: *n,
            keyframe: *key,
            sections: if i % 3 == 1 {
                vec![Section {
                    // Tags the reader does not know (the engine's parts are 1 to 4): skipped.
                    tag: 5 + (i % 5) as u8,
                    bytes: vec![i as u8; i],
                }]
            } else {
                Vec::new()
            },
            ..StepFrame::default()
        };
        if *key {
            f.appeared = set.values().copied().collect();
        } else {
            for (id, b) in set {
                match prev.get(id) {
                    None => f.appeared.push(*b),
                    Some(p) if p != b => f.moved.push(*b),
                    Some(_) => {}
                }
            }
            f.gone = prev
                .keys()
                .filter(|id| !set.contains_key(id))
                .copied()
                .collect();
            // Lists in an order other than the ids'.
            f.moved.reverse();
        }
        frames.push(Frame::Step(f));
        if i == 1 {
            frames.push(Frame::Skipped {
                kind: 0x80 + i as u8,
                len: 4,
            });
        }
        prev = set.clone();
    }
    if let Some(b) = bye {
        frames.push(Frame::Bye(b));
    }
    frames
}

fn encode(dims: u8, frames: &[Frame]) -> Vec<u8> {
    let mut bytes = Vec::new();
    encode_magic(&mut bytes);
    for f in frames {
        encode_frame(&mut bytes, dims, f).expect("encodes");
    }
    bytes
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
    /// A u32 written over 4 bytes (a count or a length gone wild).
    Word(usize, u32),
}

fn mutate(bytes: &mut Vec<u8>, m: &Mutation) {
    let n = bytes.len().max(1);
    match *m {
        Mutation::Flip(i, x) => {
            if let Some(b) = bytes.get_mut(i % n) {
                *b ^= x.max(1);
            }
        }
        Mutation::Insert(i, x) => bytes.insert(i % (bytes.len() + 1), x),
        Mutation::Delete(i) => {
            if !bytes.is_empty() {
                bytes.remove(i % n);
            }
        }
        Mutation::Truncate(i) => bytes.truncate(i % n),
        Mutation::Word(i, w) => {
            let at = i % n;
            for (k, b) in w.to_le_bytes().into_iter().enumerate() {
                if let Some(slot) = bytes.get_mut(at + k) {
                    *slot = b;
                }
            }
        }
    }
}

fn a_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, x)| Mutation::Flip(i, x)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, x)| Mutation::Insert(i, x)),
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Truncate),
        (
            any::<usize>(),
            prop_oneof![Just(u32::MAX), Just(1u32 << 31), any::<u32>()]
        )
            .prop_map(|(i, w)| Mutation::Word(i, w)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn valid_streams_round_trip((dims, statics, steps, bye) in a_stream()) {
        let frames = frames_of(dims, &statics, &steps, bye);
        let bytes = encode(dims, &frames);

        let mut d = Decoder::new(&bytes[..], Limits::default());
        let mut decoded = Vec::new();
        while let Some(f) = d.next_frame().expect("a valid stream") {
            decoded.push(f);
        }
        prop_assert_eq!(&decoded, &frames);
        prop_assert_eq!(d.offset(), bytes.len() as u64);

        let mut d = Decoder::new(&bytes[..], Limits::default());
        let mut state = StreamState::new(Limits::default());
        let mut previous: Option<u64> = None;
        for (n, key, set) in &steps {
            let u = state.next_step(&mut d).expect("a valid stream").expect("a step");
            prop_assert_eq!(u.step, *n);
            prop_assert_eq!(u.keyframe, *key);
            prop_assert_eq!(u.dropped_before, previous.map_or(*n, |p| n - p - 1));
            let expected: Vec<WireBox> = set.values().copied().collect();
            prop_assert_eq!(&*u.boxes, &expected);
            previous = Some(*n);
        }
        prop_assert_eq!(state.next_step(&mut d).expect("a valid stream"), None);
        let mut sorted = statics.clone();
        sorted.sort_by_key(|b| b.id);
        prop_assert_eq!(state.statics(), &sorted[..]);
        prop_assert_eq!(state.bye(), bye.as_ref());
        prop_assert_eq!(state.steps_received(), steps.len() as u64);
    }

    #[test]
    fn mutated_streams_never_panic_and_point_inside(
        (dims, statics, steps, bye) in a_stream(),
        mutations in prop::collection::vec(a_mutation(), 1..4),
    ) {
        let frames = frames_of(dims, &statics, &steps, bye);
        let mut bytes = encode(dims, &frames);
        for m in &mutations {
            mutate(&mut bytes, m);
        }
        let len = bytes.len() as u64;
        let limits = Limits { max_step_boxes: 64, max_static_boxes: 64, max_frame_bytes: 1 << 16, ..Limits::default() };
        let mut d = Decoder::new(&bytes[..], limits);
        let mut state = StreamState::new(limits);
        let mut last_offset = 0;
        loop {
            match state.next_step(&mut d) {
                Ok(Some(u)) => {
                    prop_assert!(u.boxes.len() <= 64);
                    prop_assert!(u.boxes.windows(2).all(|w| w[0].id < w[1].id));
                    prop_assert!(d.frame_offset() >= last_offset);
                    last_offset = d.frame_offset();
                }
                Ok(None) => break,
                Err(e) => {
                    prop_assert!(e.offset <= len, "offset {} past {} bytes", e.offset, len);
                    prop_assert!(e.offset >= last_offset);
                    prop_assert!(!e.to_string().is_empty());
                    break;
                }
            }
            prop_assert!(d.offset() <= len);
        }
        prop_assert!(d.offset() <= len);
    }
}
