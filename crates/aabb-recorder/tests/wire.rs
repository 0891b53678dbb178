//! The stream format's encoder, decoder and stream state: every frame round-trips, and every
//! refusal of the format's list is refused with its exact message and byte offset.

use aabb_recorder::wire::{
    KIND_STEP, MAGIC, encode_bye, encode_frame, encode_hello, encode_magic, encode_static,
    encode_step,
};
use aabb_recorder::{
    Bye, Decoder, Frame, Hello, Limits, Section, StepFrame, StepUpdate, StreamState, WireBox,
    WireError,
};

fn b2(id: u32, min: [f32; 2], max: [f32; 2]) -> WireBox {
    WireBox {
        id,
        min: [min[0], min[1], 0.0],
        max: [max[0], max[1], 0.0],
    }
}

fn hello2() -> Hello {
    Hello::new("e", 2, 0.5)
}

/// A stream built frame by frame, with each frame's byte offset.
struct Built {
    bytes: Vec<u8>,
    offsets: Vec<u64>,
    dims: u8,
}

impl Built {
    fn new(hello: &Hello) -> Self {
        let mut bytes = Vec::new();
        encode_magic(&mut bytes);
        let mut b = Built {
            bytes,
            offsets: Vec::new(),
            dims: hello.dimensions,
        };
        b.offsets.push(b.bytes.len() as u64);
        encode_hello(&mut b.bytes, hello).expect("encodes");
        b
    }

    fn frame(mut self, f: &Frame) -> Self {
        self.offsets.push(self.bytes.len() as u64);
        encode_frame(&mut self.bytes, self.dims, f).expect("encodes");
        self
    }

    fn raw(mut self, frame: &[u8]) -> Self {
        self.offsets.push(self.bytes.len() as u64);
        self.bytes.extend_from_slice(frame);
        self
    }

    fn step(
        self,
        step: u64,
        keyframe: bool,
        appeared: &[WireBox],
        moved: &[WireBox],
        gone: &[u32],
    ) -> Self {
        self.frame(&Frame::Step(StepFrame {
            step,
            keyframe,
            appeared: appeared.to_vec(),
            moved: moved.to_vec(),
            gone: gone.to_vec(),
            sections: Vec::new(),
        }))
    }
}

/// Every frame of `bytes`, or the first error.
fn frames(bytes: &[u8]) -> Result<Vec<Frame>, WireError> {
    let mut d = Decoder::new(bytes, Limits::default());
    let mut out = Vec::new();
    while let Some(f) = d.next_frame()? {
        out.push(f);
    }
    Ok(out)
}

/// Every step of `bytes` through a stream state, and the first error if any.
fn steps_with(bytes: &[u8], limits: Limits) -> (Vec<StepUpdate>, Option<WireError>) {
    let mut d = Decoder::new(bytes, limits);
    let mut s = StreamState::new(limits);
    let mut out = Vec::new();
    loop {
        match s.next_step(&mut d) {
            Ok(Some(u)) => out.push(u),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

fn error_of(bytes: &[u8]) -> String {
    match steps_with(bytes, Limits::default()).1 {
        Some(e) => e.to_string(),
        None => "no error".to_owned(),
    }
}

#[test]
fn every_frame_round_trips() {
    for dims in [2u8, 3] {
        let z = if dims == 3 { 4.5 } else { 0.0 };
        let hello = Hello::new("rapier2d 0.36 – ünïcode", dims, 1.0 / 60.0).with_units("cm");
        let bx = |id, x: f32| WireBox {
            id,
            min: [x, -1.0, -z],
            max: [x + 1.0, 2.0, z],
        };
        let frames_in = vec![
            Frame::Hello(hello.clone()),
            Frame::Static(vec![bx(100, 0.0), bx(7, -3.0)]),
            Frame::Skipped { kind: 0x80, len: 1 },
            Frame::Step(StepFrame {
                step: 0,
                keyframe: true,
                appeared: vec![bx(1, 0.5), bx(2, 1.5)],
                ..StepFrame::default()
            }),
            Frame::Step(StepFrame {
                step: 5,
                keyframe: false,
                appeared: vec![bx(3, 9.0)],
                moved: vec![bx(2, 1.75)],
                gone: vec![1],
                sections: vec![
                    Section {
                        tag: 100,
                        bytes: vec![1, 2, 3],
                    },
                    Section {
                        tag: 200,
                        bytes: Vec::new(),
                    },
                ],
            }),
            Frame::Skipped {
                kind: 0xff,
                len: 10,
            },
            Frame::Bye(Bye {
                steps_sent: 2,
                steps_dropped: 4,
            }),
        ];
        let mut bytes = Vec::new();
        encode_magic(&mut bytes);
        for f in &frames_in {
            encode_frame(&mut bytes, dims, f).expect("encodes");
        }
        assert_eq!(frames(&bytes), Ok(frames_in));

        let (updates, err) = steps_with(&bytes, Limits::default());
        assert_eq!(err, None);
        assert_eq!(
            updates,
            vec![
                StepUpdate {
                    step: 0,
                    dropped_before: 0,
                    keyframe: true,
                    appeared: 2,
                    moved: 0,
                    gone: 0,
                    boxes: vec![bx(1, 0.5), bx(2, 1.5)].into(),
                    engine: Default::default(),
                },
                StepUpdate {
                    step: 5,
                    dropped_before: 4,
                    keyframe: false,
                    appeared: 1,
                    moved: 1,
                    gone: 1,
                    boxes: vec![bx(2, 1.75), bx(3, 9.0)].into(),
                    engine: Default::default(),
                },
            ]
        );
    }
}

#[test]
fn the_bytes_are_the_formats() {
    let mut bytes = Vec::new();
    encode_magic(&mut bytes);
    encode_hello(&mut bytes, &Hello::new("ab", 2, 0.5)).expect("encodes");
    encode_static(&mut bytes, 2, &[b2(9, [1.0, 2.0], [3.0, 4.0])]).expect("encodes");
    encode_step(
        &mut bytes,
        2,
        &StepFrame {
            step: 3,
            keyframe: true,
            appeared: vec![b2(1, [0.0, 0.0], [1.0, 1.0])],
            ..StepFrame::default()
        },
    )
    .expect("encodes");
    encode_bye(
        &mut bytes,
        &Bye {
            steps_sent: 1,
            steps_dropped: 3,
        },
    );
    #[rustfmt::skip]
    let expected: Vec<u8> = [
        &b"AABBSTRM"[..],
        // HELLO: length 16, kind 1, version 1, dims 2, flags 0, dt 0.5, "ab", "m"
        &[16, 0, 0, 0, 1, 1, 0, 2, 0, 0, 0, 0, 0x3f, 2, 0, b'a', b'b', 1, 0, b'm'],
        // STATIC: length 25, kind 2, count 1, id 9, 1 2 3 4
        &[25, 0, 0, 0, 2, 1, 0, 0, 0, 9, 0, 0, 0,
          0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40],
        // STEP: length 42, kind 3, step 3, keyframe, 1 appeared (id 1, 0 0 1 1), 0 moved, 0 gone
        &[42, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0,
          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f,
          0, 0, 0, 0, 0, 0, 0, 0],
        // BYE: length 17, kind 4, 1, 3
        &[17, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0],
    ]
    .concat();
    assert_eq!(bytes, expected);
}

#[test]
fn a_clean_end_between_frames_is_the_end_and_a_cut_one_is_an_error() {
    let s = Built::new(&hello2()).step(0, true, &[b2(1, [0.0, 0.0], [1.0, 1.0])], &[], &[]);
    let mut d = Decoder::new(&s.bytes[..], Limits::default());
    assert!(matches!(d.next_frame(), Ok(Some(Frame::Hello(_)))));
    assert!(matches!(d.next_frame(), Ok(Some(Frame::Step(_)))));
    assert_eq!(d.next_frame(), Ok(None));
    assert_eq!(d.offset(), s.bytes.len() as u64);

    // Just the magic: a stream of no frames.
    assert_eq!(frames(&MAGIC), Ok(Vec::new()));

    let step_at = s.offsets[1];
    let cut = &s.bytes[..s.bytes.len() - 3];
    assert_eq!(
        error_of(cut),
        format!("byte {step_at}: the stream ends inside a STEP frame (39 of 42 bytes)")
    );
    let cut = &s.bytes[..step_at as usize + 2];
    assert_eq!(
        error_of(cut),
        format!("byte {step_at}: the stream ends inside a frame's length (2 of 4 bytes)")
    );
    let cut = &s.bytes[..step_at as usize + 4];
    assert_eq!(
        error_of(cut),
        format!("byte {step_at}: the stream ends inside a frame (0 of 42 bytes)")
    );
}

#[test]
fn what_is_not_a_stream_is_told_for_what_it_looks_like() {
    assert_eq!(
        error_of(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        "byte 0: not an aabb stream: it starts with \"GET / HT\" (an HTTP request)"
    );
    assert_eq!(
        error_of(b"POST /x HTTP/1.1\r\n"),
        "byte 0: not an aabb stream: it starts with \"POST /x \" (an HTTP request)"
    );
    assert_eq!(
        error_of(b"hello, world\n"),
        "byte 0: not an aabb stream: it starts with \"hello, w\" (printable text)"
    );
    assert_eq!(
        error_of(&[0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4]),
        "byte 0: not an aabb stream: it starts with \"\\xde\\xad\\xbe\\xef\\x00\\x01\\x02\\x03\" (random bytes)"
    );
    assert_eq!(
        error_of(b"AAB"),
        "byte 0: the stream ends inside its magic (3 of 8 bytes)"
    );
    assert_eq!(error_of(b""), "byte 0: the stream is empty (no magic)");
    assert_eq!(
        error_of(b"AABX"),
        "byte 0: not an aabb stream: it starts with \"AABX\" (printable text)"
    );
}

#[test]
fn a_bad_handshake_is_refused() {
    let mut h = hello2();
    h.version = 2;
    assert_eq!(
        error_of(&Built::new(&h).bytes),
        "byte 8: stream version 2, this reader knows version 1"
    );
    let mut h = hello2();
    h.dimensions = 4;
    assert_eq!(
        error_of(&Built::new(&h).bytes),
        "byte 8: 4 dimensions (a stream is 2D or 3D)"
    );
    for (dt, shown) in [
        (0.0, "0"),
        (-1.0, "-1"),
        (1.5, "1.5"),
        (f32::NAN, "NaN"),
        (f32::INFINITY, "inf"),
    ] {
        let mut h = hello2();
        h.dt_secs = dt;
        assert_eq!(
            error_of(&Built::new(&h).bytes),
            format!("byte 8: dt {shown} s (it must be finite, > 0 and <= 1)")
        );
    }
    let mut h = hello2();
    h.dt_secs = 1.0;
    assert_eq!(error_of(&Built::new(&h).bytes), "no error");

    let mut h = hello2();
    h.engine = "x".repeat(256);
    assert_eq!(
        error_of(&Built::new(&h).bytes),
        "byte 8: the engine name is 256 bytes long (at most 255)"
    );
    h.engine = "x".repeat(255);
    assert_eq!(error_of(&Built::new(&h).bytes), "no error");

    // Units "\xff": not UTF-8.
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[
        15, 0, 0, 0, 1, 1, 0, 2, 0, 0, 0, 0, 0x3f, 1, 0, b'e', 1, 0, 0xff,
    ]);
    assert_eq!(error_of(&bytes), "byte 8: the units is not UTF-8");
    // The same HELLO cut inside its units.
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[14, 0, 0, 0, 1, 1, 0, 2, 0, 0, 0, 0, 0x3f, 1, 0, b'e', 1, 0]);
    assert_eq!(
        error_of(&bytes),
        "byte 8: the HELLO frame ends inside its units"
    );
    // A byte after the units.
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[
        16, 0, 0, 0, 1, 1, 0, 2, 0, 0, 0, 0, 0x3f, 1, 0, b'e', 1, 0, b'm', 7,
    ]);
    assert_eq!(
        error_of(&bytes),
        "byte 8: 1 byte left over after the HELLO frame's body"
    );
}

#[test]
fn frame_lengths_and_kinds_are_checked() {
    let s = Built::new(&hello2()).raw(&[0, 0, 0, 0]);
    assert_eq!(
        error_of(&s.bytes),
        format!("byte {}: a frame of length 0", s.offsets[1])
    );
    let s = Built::new(&hello2()).raw(&((64u32 << 20) + 1).to_le_bytes());
    assert_eq!(
        error_of(&s.bytes),
        format!(
            "byte {}: a frame of 67108865 bytes, over the limit of 67108864",
            s.offsets[1]
        )
    );
    let s = Built::new(&hello2()).raw(&[0xff, 0xff, 0xff, 0xff, 3]);
    assert_eq!(
        error_of(&s.bytes),
        format!(
            "byte {}: a frame of 4294967295 bytes, over the limit of 67108864",
            s.offsets[1]
        )
    );
    let small = Limits {
        max_frame_bytes: 30,
        ..Limits::default()
    };
    let s = Built::new(&hello2()).raw(&[31, 0, 0, 0, 3]);
    assert_eq!(
        steps_with(&s.bytes, small).1.map(|e| e.to_string()),
        Some(format!(
            "byte {}: a frame of 31 bytes, over the limit of 30",
            s.offsets[1]
        ))
    );
    let s = Built::new(&hello2()).raw(&[1, 0, 0, 0, 5]);
    assert_eq!(
        error_of(&s.bytes),
        format!("byte {}: a frame of unknown kind 0x05", s.offsets[1])
    );
    let s = Built::new(&hello2()).raw(&[1, 0, 0, 0, 0x7f]);
    assert_eq!(
        error_of(&s.bytes),
        format!("byte {}: a frame of unknown kind 0x7f", s.offsets[1])
    );
    // A length far beyond the bytes sent: refused as truncated, without reserving it.
    let s = Built::new(&hello2()).raw(&[0, 0, 0, 4, 3, 1, 2]);
    assert_eq!(
        error_of(&s.bytes),
        format!(
            "byte {}: the stream ends inside a STEP frame (3 of 67108864 bytes)",
            s.offsets[1]
        )
    );
}

#[test]
fn counts_that_cannot_fit_are_refused_before_allocating() {
    let mut f = vec![0, 0, 0, 0, KIND_STEP];
    f.extend_from_slice(&7u64.to_le_bytes());
    f.push(1);
    f.extend_from_slice(&u32::MAX.to_le_bytes());
    let len = (f.len() - 4) as u32;
    f[..4].copy_from_slice(&len.to_le_bytes());
    let s = Built::new(&hello2()).raw(&f);
    assert_eq!(
        error_of(&s.bytes),
        format!(
            "byte {}, step 7: a count of 4294967295 appeared boxes does not fit in the rest of the frame (room for 0)",
            s.offsets[1]
        )
    );

    // A STATIC claiming 2^32 - 1 boxes with room for one.
    let mut f = vec![0, 0, 0, 0, 2];
    f.extend_from_slice(&u32::MAX.to_le_bytes());
    f.extend_from_slice(&[0; 20]);
    let len = (f.len() - 4) as u32;
    f[..4].copy_from_slice(&len.to_le_bytes());
    let s = Built::new(&hello2()).raw(&f);
    assert_eq!(
        error_of(&s.bytes),
        format!(
            "byte {}: a count of 4294967295 static boxes does not fit in the rest of the frame (room for 1)",
            s.offsets[1]
        )
    );

    // Gone ids: 3 claimed, room for 2.
    let mut f = vec![0, 0, 0, 0, KIND_STEP];
    f.extend_from_slice(&0u64.to_le_bytes());
    f.push(1);
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&3u32.to_le_bytes());
    f.extend_from_slice(&[0; 8]);
    let len = (f.len() - 4) as u32;
    f[..4].copy_from_slice(&len.to_le_bytes());
    let s = Built::new(&hello2()).raw(&f);
    assert_eq!(
        error_of(&s.bytes),
        format!(
            "byte {}, step 0: a count of 3 gone ids does not fit in the rest of the frame (room for 2)",
            s.offsets[1]
        )
    );

    // Within the frame but over the limits.
    let limits = Limits {
        max_step_boxes: 2,
        max_static_boxes: 1,
        ..Limits::default()
    };
    let bx = |id| b2(id, [0.0, 0.0], [1.0, 1.0]);
    let s = Built::new(&hello2()).step(0, false, &[bx(1), bx(2)], &[bx(3)], &[]);
    assert_eq!(
        steps_with(&s.bytes, limits).1.map(|e| e.to_string()),
        Some(format!(
            "byte {}, step 0: 3 boxes in a step, over the limit of 2",
            s.offsets[1]
        ))
    );
    let s = Built::new(&hello2()).step(0, false, &[bx(1), bx(2)], &[], &[3]);
    assert_eq!(
        steps_with(&s.bytes, limits).1.map(|e| e.to_string()),
        Some(format!(
            "byte {}, step 0: 3 boxes in a step, over the limit of 2",
            s.offsets[1]
        ))
    );
    let s = Built::new(&hello2()).frame(&Frame::Static(vec![bx(1), bx(2)]));
    assert_eq!(
        steps_with(&s.bytes, limits).1.map(|e| e.to_string()),
        Some(format!(
            "byte {}: 2 static boxes, over the limit of 1",
            s.offsets[1]
        ))
    );
    // The set grows past the limit by appearing two steps in a row.
    let s = Built::new(&hello2())
        .step(0, true, &[bx(1), bx(2)], &[], &[])
        .step(1, false, &[bx(3)], &[], &[]);
    let (ok, err) = steps_with(&s.bytes, limits);
    assert_eq!(ok.len(), 1);
    assert_eq!(
        err.map(|e| e.to_string()),
        Some(format!(
            "byte {}, step 1: 3 moving boxes, over the limit of 2",
            s.offsets[2]
        ))
    );
}

#[test]
fn bytes_after_the_lists_must_be_whole_sections() {
    let bx = b2(1, [0.0, 0.0], [1.0, 1.0]);
    let good = Built::new(&hello2()).frame(&Frame::Step(StepFrame {
        step: 0,
        keyframe: true,
        appeared: vec![bx],
        sections: vec![Section {
            tag: 9,
            bytes: vec![1, 2],
        }],
        ..StepFrame::default()
    }));
    assert_eq!(error_of(&good.bytes), "no error");
    // Grow the frame by one byte: the section's bytes no longer end the frame.
    let mut bytes = good.bytes.clone();
    let at = good.offsets[1] as usize;
    let len = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) + 1;
    bytes[at..at + 4].copy_from_slice(&len.to_le_bytes());
    bytes.push(0);
    assert_eq!(
        error_of(&bytes),
        format!("byte {at}, step 0: 1 byte after the step's lists that are not whole sections")
    );
    // A section claiming more bytes than there are.
    let mut bytes = good.bytes.clone();
    let tag_len_at = bytes.len() - 6;
    bytes[tag_len_at..tag_len_at + 4].copy_from_slice(&3u32.to_le_bytes());
    assert_eq!(
        error_of(&bytes),
        format!("byte {at}, step 0: 7 bytes after the step's lists that are not whole sections")
    );
}

#[test]
fn bad_numbers_in_boxes_are_refused() {
    let s = Built::new(&hello2())
        .step(0, true, &[b2(1, [0.0, 0.0], [1.0, 1.0])], &[], &[])
        .step(7, false, &[], &[b2(5, [0.0, 2.0], [1.0, 1.0])], &[]);
    assert_eq!(
        error_of(&s.bytes),
        format!(
            "byte {}, step 7: a box with min > max (id 5, axis y: 2 > 1)",
            s.offsets[2]
        )
    );
    let s = Built::new(&hello2()).step(3, true, &[b2(5, [f32::NAN, 0.0], [1.0, 1.0])], &[], &[]);
    assert_eq!(
        error_of(&s.bytes),
        format!(
            "byte {}, step 3: a box with a non-finite min (id 5, axis x: NaN)",
            s.offsets[1]
        )
    );
    let s = Built::new(&hello2()).step(
        3,
        true,
        &[b2(5, [0.0, 0.0], [1.0, f32::INFINITY])],
        &[],
        &[],
    );
    assert_eq!(
        error_of(&s.bytes),
        format!(
            "byte {}, step 3: a box with a non-finite max (id 5, axis y: inf)",
            s.offsets[1]
        )
    );
    let h3 = Hello::new("e", 3, 0.5);
    let s = Built::new(&h3).frame(&Frame::Static(vec![WireBox {
        id: 4,
        min: [0.0, 0.0, 3.0],
        max: [1.0, 1.0, -3.0],
    }]));
    assert_eq!(
        error_of(&s.bytes),
        format!(
            "byte {}: a box with min > max (id 4, axis z: 3 > -3)",
            s.offsets[1]
        )
    );
}

#[test]
fn ids_follow_the_rules() {
    let bx = |id, x: f32| b2(id, [x, 0.0], [x + 1.0, 1.0]);
    let base = || {
        Built::new(&hello2())
            .frame(&Frame::Static(vec![bx(100, 0.0), bx(101, 5.0)]))
            .step(0, true, &[bx(1, 0.0), bx(2, 0.0), bx(3, 0.0)], &[], &[])
    };
    let cases: Vec<(Built, &str)> = vec![
        (
            base().step(1, false, &[bx(4, 0.0), bx(4, 1.0)], &[], &[]),
            "id 4 twice in one step",
        ),
        (
            base().step(1, false, &[], &[bx(2, 1.0), bx(2, 2.0)], &[]),
            "id 2 twice in one step",
        ),
        (
            base().step(1, false, &[], &[bx(2, 1.0)], &[2]),
            "id 2 twice in one step",
        ),
        (
            base().step(1, false, &[], &[], &[3, 3]),
            "id 3 twice in one step",
        ),
        (
            base().step(1, false, &[bx(3, 1.0)], &[], &[3]),
            "id 3 twice in one step",
        ),
        (
            base().step(1, true, &[bx(4, 0.0), bx(4, 1.0)], &[], &[]),
            "id 4 twice in one step",
        ),
        (
            base().step(1, false, &[bx(2, 1.0)], &[], &[]),
            "appeared id 2 is already present",
        ),
        (
            base().step(1, false, &[], &[bx(9, 1.0)], &[]),
            "moved id 9 is not present",
        ),
        (
            base().step(1, false, &[], &[], &[9]),
            "gone id 9 is not present",
        ),
        (
            base().step(1, false, &[bx(100, 1.0)], &[], &[]),
            "moving id 100 is a static box's id",
        ),
        (
            base().step(1, true, &[bx(101, 1.0)], &[], &[]),
            "moving id 101 is a static box's id",
        ),
        (
            base().step(1, true, &[bx(1, 1.0)], &[bx(2, 1.0)], &[]),
            "a keyframe with moved or gone boxes",
        ),
        (
            base().step(1, true, &[bx(1, 1.0)], &[], &[2]),
            "a keyframe with moved or gone boxes",
        ),
        (
            base().step(0, false, &[], &[], &[]),
            "the step number is not greater than the one before (0)",
        ),
    ];
    for (s, why) in cases {
        let (ok, err) = steps_with(&s.bytes, Limits::default());
        assert_eq!(ok.len(), 1, "{why}");
        let at = s.offsets[3];
        let step = if why.starts_with("the step") { 0 } else { 1 };
        assert_eq!(
            err.map(|e| e.to_string()),
            Some(format!("byte {at}, step {step}: {why}"))
        );
    }
    let s = Built::new(&hello2()).frame(&Frame::Static(vec![bx(100, 0.0), bx(100, 5.0)]));
    assert_eq!(
        error_of(&s.bytes),
        format!("byte {}: id 100 twice in STATIC", s.offsets[1])
    );
    let s = Built::new(&hello2()).step(4, false, &[bx(1, 0.0)], &[], &[]);
    assert_eq!(
        error_of(&s.bytes),
        format!(
            "byte {}, step 4: the first step is not a keyframe",
            s.offsets[1]
        )
    );

    // The rules allow: an id gone and appearing again later, a keyframe dropping ids.
    let s = base()
        .step(1, false, &[], &[], &[2])
        .step(2, false, &[bx(2, 7.0)], &[bx(1, 1.0)], &[3])
        .step(9, true, &[bx(5, 0.0)], &[], &[]);
    let (ok, err) = steps_with(&s.bytes, Limits::default());
    assert_eq!(err, None);
    let sets: Vec<Vec<u32>> = ok
        .iter()
        .map(|u| u.boxes.iter().map(|b| b.id).collect())
        .collect();
    assert_eq!(sets, vec![vec![1, 2, 3], vec![1, 3], vec![1, 2], vec![5]]);
    assert_eq!(*ok[2].boxes, vec![bx(1, 1.0), bx(2, 7.0)]);
    assert_eq!(
        ok.iter()
            .map(|u| (u.dropped_before, u.appeared, u.moved, u.gone))
            .collect::<Vec<_>>(),
        vec![(0, 3, 0, 0), (0, 0, 0, 1), (0, 1, 1, 1), (6, 1, 0, 2)]
    );
}

#[test]
fn frames_come_in_order() {
    let bx = b2(1, [0.0, 0.0], [1.0, 1.0]);
    let key = Frame::Step(StepFrame {
        step: 0,
        keyframe: true,
        appeared: vec![bx],
        ..StepFrame::default()
    });
    let stat = Frame::Static(vec![b2(50, [0.0, 0.0], [1.0, 1.0])]);
    let bye = Frame::Bye(Bye {
        steps_sent: 1,
        steps_dropped: 0,
    });

    let s = Built::new(&hello2()).frame(&Frame::Hello(hello2()));
    assert_eq!(
        error_of(&s.bytes),
        format!("byte {}: a second HELLO", s.offsets[1])
    );
    let s = Built::new(&hello2()).frame(&stat).frame(&stat);
    assert_eq!(
        error_of(&s.bytes),
        format!("byte {}: a second STATIC", s.offsets[2])
    );
    let s = Built::new(&hello2()).frame(&key).frame(&stat);
    assert_eq!(
        error_of(&s.bytes),
        format!("byte {}: STATIC after a STEP", s.offsets[2])
    );
    for after in [&key, &stat, &bye, &Frame::Skipped { kind: 0x90, len: 3 }] {
        let s = Built::new(&hello2()).frame(&bye).frame(after);
        let name = match after {
            Frame::Step(_) => "a STEP frame",
            Frame::Static(_) => "a STATIC frame",
            Frame::Bye(_) => "a BYE frame",
            _ => "an optional frame",
        };
        let step = if name == "a STEP frame" {
            ", step 0"
        } else {
            ""
        };
        assert_eq!(
            error_of(&s.bytes),
            format!("byte {}{step}: {name} after BYE", s.offsets[2])
        );
    }
    // Before HELLO: the decoder refuses (it needs the dimensions).
    let mut bytes = MAGIC.to_vec();
    encode_bye(
        &mut bytes,
        &Bye {
            steps_sent: 0,
            steps_dropped: 0,
        },
    );
    assert_eq!(error_of(&bytes), "byte 8: a BYE frame before HELLO");
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[1, 0, 0, 0, 0x80]);
    assert_eq!(error_of(&bytes), "byte 8: an optional frame before HELLO");
    // And so does the state, for frames that do not come through a decoder.
    let mut state = StreamState::new(Limits::default());
    assert_eq!(
        state.apply(key.clone(), 8).map_err(|e| e.to_string()),
        Err("byte 8, step 0: a STEP frame before HELLO".to_owned())
    );
    assert_eq!(state.apply(Frame::Hello(hello2()), 8), Ok(None));
    assert_eq!(
        state
            .apply(Frame::Hello(hello2()), 27)
            .map_err(|e| e.to_string()),
        Err("byte 27: a second HELLO".to_owned())
    );
    let mut bad = hello2();
    bad.dimensions = 1;
    let mut fresh = StreamState::new(Limits::default());
    assert_eq!(
        fresh.apply(Frame::Hello(bad), 8).map_err(|e| e.to_string()),
        Err("byte 8: 1 dimensions (a stream is 2D or 3D)".to_owned())
    );
    // The state checks boxes that did not come through a decoder too.
    let nan = Frame::Step(StepFrame {
        step: 0,
        keyframe: true,
        appeared: vec![b2(3, [0.0, f32::NAN], [1.0, 1.0])],
        ..StepFrame::default()
    });
    assert_eq!(
        state.apply(nan, 40).map_err(|e| e.to_string()),
        Err("byte 40, step 0: a box with a non-finite min (id 3, axis y: NaN)".to_owned())
    );
    assert_eq!(state.apply(bye.clone(), 60), Ok(None));
    assert_eq!(
        state.bye(),
        Some(&Bye {
            steps_sent: 1,
            steps_dropped: 0
        })
    );
}

#[test]
fn a_refused_step_leaves_the_state_as_it_was() {
    let bx = |id, x: f32| b2(id, [x, 0.0], [x + 1.0, 1.0]);
    let mut state = StreamState::new(Limits::default());
    state.apply(Frame::Hello(hello2()), 8).expect("a hello");
    let step = |n, appeared: Vec<WireBox>, moved: Vec<WireBox>, gone: Vec<u32>| {
        Frame::Step(StepFrame {
            step: n,
            keyframe: n == 0,
            appeared,
            moved,
            gone,
            sections: Vec::new(),
        })
    };
    state
        .apply(step(0, vec![bx(1, 0.0), bx(2, 0.0)], vec![], vec![]), 30)
        .expect("a keyframe");
    // Moves 1, removes 2, then refers to a missing id: nothing of it may stay.
    let err = state.apply(step(1, vec![bx(3, 0.0)], vec![bx(1, 5.0)], vec![2, 9]), 60);
    assert_eq!(
        err.map_err(|e| e.to_string()),
        Err("byte 60, step 1: gone id 9 is not present".to_owned())
    );
    assert_eq!(state.boxes(), &[bx(1, 0.0), bx(2, 0.0)]);
    assert_eq!(state.last_step(), Some(0));
    // The same step number, done right, is accepted after it (no stale marks).
    let ok = state
        .apply(step(1, vec![bx(3, 0.0)], vec![bx(1, 5.0)], vec![2]), 90)
        .expect("a valid delta");
    assert_eq!(
        ok.map(|u| u.boxes.to_vec()),
        Some(vec![bx(1, 5.0), bx(3, 0.0)])
    );
}

#[test]
fn moved_ids_in_any_order_are_found() {
    // Moves listed descending, ascending with gaps and mixed, against a large set.
    let n = 1000u32;
    let bx = |id: u32, x: f32| b2(id * 3, [x, 0.0], [x + 1.0, 1.0]);
    let all: Vec<WireBox> = (0..n).map(|i| bx(i, 0.0)).collect();
    let orders: Vec<Vec<u32>> = vec![
        (0..n).rev().collect(),
        (0..n).step_by(7).collect(),
        (0..n).map(|i| (i * 389) % n).collect(),
    ];
    for order in orders {
        let moved: Vec<WireBox> = order.iter().map(|&i| bx(i, 1.0)).collect();
        let s =
            Built::new(&hello2())
                .step(0, true, &all, &[], &[])
                .step(1, false, &[], &moved, &[]);
        let (ok, err) = steps_with(&s.bytes, Limits::default());
        assert_eq!(err, None);
        let mut expected = all.clone();
        for &i in &order {
            expected[i as usize] = bx(i, 1.0);
        }
        assert_eq!(*ok[1].boxes, expected);
        assert_eq!(ok[1].moved, order.len() as u32);
    }
}
