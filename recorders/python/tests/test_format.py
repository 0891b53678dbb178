"""The recorder's bytes against the format (docs/formats.md, "Stream"): whole streams compared
byte for byte with what tests/stream_format.py builds from the spec, and scenes decoded box
for box (the numbers rounded to float32 as the wire holds them; bad boxes left out and
counted)."""

import struct
import threading
import time

from aabb_recorder import Recorder

import stream_format as fmt
from stream_format import f32
from support import GatedFile


def record(tmp_path, body, **hello):
    """Runs body(rec) on a recorder writing a file; gives the file's bytes and the stats."""
    path = tmp_path / "out.aabbstream"
    args = dict(engine="test", dimensions=2, dt=0.5)
    args.update(hello)
    rec = Recorder.open_file(str(path), **args)
    body(rec)
    st = rec.close()
    return path.read_bytes(), st


def test_the_handshake_and_the_end_are_byte_exact(tmp_path):
    data, st = record(tmp_path, lambda rec: None, engine="pytest engine 1.0", dt=1 / 60,
                      units="px")
    assert data == (fmt.MAGIC + fmt.hello("pytest engine 1.0", 2, 1 / 60, "px")
                    + fmt.bye(0, 0))
    assert st.bytes_sent == len(data)
    assert (st.steps, st.steps_sent, st.steps_dropped, st.error) == (0, 0, 0, None)


def test_a_long_engine_name_is_cut_to_255_bytes_at_a_character(tmp_path):
    name = "é" * 200  # 400 bytes of UTF-8
    data, _ = record(tmp_path, lambda rec: None, engine=name)
    assert data.startswith(fmt.MAGIC + fmt.hello("é" * 127, 2, 0.5))


def test_keyframe_and_deltas_are_byte_exact(tmp_path):
    def body(rec):
        rec.static_box(900, (-1, -1), (100, 0))
        rec.static_box(901, (-1, 0), (0, 10))
        rec.begin_step()  # step 0: a keyframe, the boxes in the order added
        rec.add_box(3, (5, 0), (6, 1))
        rec.add_box(1, (0.1, 0), (1.1, 1))
        rec.add_box(2, (2, 0), (3, 1))
        rec.end_step()
        rec.begin_step()  # step 1: 2 moved, 4 appeared, 3 gone, 1 still
        rec.add_box(1, (0.1, 0), (1.1, 1))
        rec.add_box(2, (2.5, 0), (3.5, 1))
        rec.add_box(4, (8, 8), (9, 9))
        rec.end_step()
        rec.begin_step()  # step 2: nothing changed
        rec.add_box(4, (8, 8), (9, 9))
        rec.add_box(2, (2.5, 0), (3.5, 1))
        rec.add_box(1, (0.1, 0), (1.1, 1))
        rec.end_step()

    data, st = record(tmp_path, body)
    b1, b2, b3 = (1, (0.1, 0), (1.1, 1)), (2, (2, 0), (3, 1)), (3, (5, 0), (6, 1))
    expected = (fmt.MAGIC + fmt.hello("test", 2, 0.5)
                + fmt.static([(900, (-1, -1), (100, 0)), (901, (-1, 0), (0, 10))])
                + fmt.step(0, keyframe=True, appeared=[b3, b1, b2])
                + fmt.step(1, appeared=[(4, (8, 8), (9, 9))], moved=[(2, (2.5, 0), (3.5, 1))],
                           gone=[3])
                + fmt.step(2)
                + fmt.bye(3, 0))
    assert data == expected
    assert (st.steps, st.steps_sent, st.steps_dropped, st.boxes_rejected) == (3, 3, 0, 0)
    assert st.bytes_sent == len(data)
    s = fmt.decode(data)
    assert [b[0] for b in s.steps[2].boxes] == [1, 2, 4]
    assert s.steps[0].boxes[0][1] == (f32(0.1), 0.0)


def test_3d_boxes_are_byte_exact(tmp_path):
    def body(rec):
        rec.begin_step()
        rec.add_box(7, (0, 1, 2), (3, 4, 5))
        rec.end_step()

    data, _ = record(tmp_path, body, dimensions=3, dt=0.25, units="cm")
    assert data == (fmt.MAGIC + fmt.hello("test", 3, 0.25, "cm")
                    + fmt.step(0, keyframe=True, appeared=[(7, (0, 1, 2), (3, 4, 5))])
                    + fmt.bye(1, 0))
    assert len(fmt.box(7, (0, 1, 2), (3, 4, 5))) == 28


def three(rec):
    rec.add_box(1, (0, 0), (1, 1))
    rec.add_box(2, (1.5, 0), (2.5, 1))
    rec.add_box(3, (5, 0), (6, 1))


def tree_and_timings(rec):
    rec.tree_root(100)
    rec.tree_partial()
    rec.tree_node(100, None, (-0.25, -0.25), (2.75, 1.25), children=(11, 12), height=1,
                  enlarged=True)
    rec.tree_node(11, 100, (-0.25, -0.25), (1.25, 1.25), proxy=1)
    rec.tree_node(12, 100, (1.25, -0.25), (2.75, 1.25), proxy=2)
    rec.timing("broad_phase_ns", 1500)
    rec.timing("pairs_tested", 6)
    rec.timing("margin", 0.25)


def test_the_engine_parts_are_byte_exact_and_repeats_are_empty(tmp_path):
    def body(rec):
        rec.static_box(50, (-10, -1), (10, 0))
        rec.begin_step()  # every part, out of order, with bad ones
        three(rec)
        rec.fat_box(3, (4.75, -0.25), (6.25, 1.25))
        rec.fat_box(1, (-0.25, -0.25), (1.25, 1.25))
        rec.fat_box(2, (1.25, -0.25), (2.75, 1.25))
        rec.fat_box(2, (1.25, -0.25), (2.75, 1.25))  # twice
        rec.fat_box(50, (-10, -1), (10, 0))
        rec.fat_box(9, (0, 0), (1, 1))  # not a box of the step
        rec.fat_box(1, (float("nan"), 0), (1, 1))  # NaN
        rec.pair(3, 50)
        rec.pair(2, 1)
        rec.pair(1, 2)  # twice
        rec.pair(50, 1)
        rec.pair(2, 50)
        rec.pair(1, 9)  # not a box of the step
        rec.pair(4, 4)  # one id
        tree_and_timings(rec)
        rec.timing("Bad", 1.0)  # not a key
        rec.timing("narrow_phase_ns", float("nan"))
        rec.timing("margin", 0.5)  # twice
        rec.end_step()
        rec.begin_step()  # no pairs, the same tree and timings
        three(rec)
        rec.begin_pairs()
        tree_and_timings(rec)
        rec.end_step()
        rec.begin_step()  # no parts
        three(rec)
        rec.end_step()

    data, st = record(tmp_path, body)
    boxes = [(1, (0, 0), (1, 1)), (2, (1.5, 0), (2.5, 1)), (3, (5, 0), (6, 1))]
    tree = fmt.tree(100, [
        (100, fmt.NONE, 11, 12, 1, 1, (-0.25, -0.25), (2.75, 1.25)),
        (11, 100, 1, fmt.NONE, 0, 2, (-0.25, -0.25), (1.25, 1.25)),
        (12, 100, 2, fmt.NONE, 0, 2, (1.25, -0.25), (2.75, 1.25)),
    ], partial=True)
    timings = fmt.timings([("broad_phase_ns", 1500.0), ("pairs_tested", 6.0), ("margin", 0.25)])
    expected = (fmt.MAGIC + fmt.hello("test", 2, 0.5)
                + fmt.static([(50, (-10, -1), (10, 0))])
                + fmt.step(0, keyframe=True, appeared=boxes, sections=(
                    fmt.fat_boxes([(1, (-0.25, -0.25), (1.25, 1.25)),
                                   (2, (1.25, -0.25), (2.75, 1.25)),
                                   (3, (4.75, -0.25), (6.25, 1.25)),
                                   (50, (-10, -1), (10, 0))])
                    + fmt.pairs([(1, 2), (1, 50), (2, 50), (3, 50)])
                    + tree + timings))
                + fmt.step(1, sections=fmt.pairs([]) + fmt.repeat(fmt.TREE)
                           + fmt.repeat(fmt.TIMINGS))
                + fmt.step(2)
                + fmt.bye(3, 0))
    assert data == expected
    # Twice, NaN and the one-id pair at once; the fat box and pair of id 9 at end_step;
    # the bad key, the NaN timing and the timing twice.
    assert (st.boxes_rejected, st.parts_rejected) == (0, 9)
    s = fmt.decode(data)
    assert s.steps[1].parts[fmt.TIMINGS] == {"broad_phase_ns": 1500.0, "pairs_tested": 6.0,
                                             "margin": 0.25}
    assert s.steps[1].parts[fmt.PAIRS] == []
    assert fmt.TREE not in s.steps[2].parts


def scene(rec, steps=40):
    """Boxes that move, stand still, come, go and change order, with bad boxes each step;
    gives what each step should hold (as float32)."""
    rec.add_box(1, (0, 0), (1, 1))  # outside a step
    rec.static_box(900, (-1.0, -1.0), (100.0, 0.0))
    rec.static_box(901, (-1.0, 0.0), (0.0, 10.0))
    rec.static_box(901, (-1.0, 0.0), (0.0, 11.0))  # twice
    expected = []
    for s in range(steps):
        boxes = []
        for i in range(30):
            if (s + i * 3) % 11 == 0:
                continue  # away this step
            t = s // 3 if i % 4 == 0 else s  # some boxes stand still some steps
            x = i * 1.5 + t * 0.1
            y = (i % 5) * 0.3
            boxes.append((i * 7 + 2, (x, y), (x + 0.5, y + 0.25)))
        if s % 7 == 3:
            boxes.reverse()
        elif s % 5 == 2:
            boxes = boxes[s % len(boxes):] + boxes[:s % len(boxes)]
        rec.begin_step()
        for id, lo, hi in boxes:
            rec.add_box(id, lo, hi)
        rec.add_box(boxes[0][0], (5.0, 5.0), (6.0, 6.0))  # twice: the first stays
        rec.add_box(777, (float("nan"), 0.0), (1.0, 1.0))
        rec.add_box(778, (2.0, 0.0), (1.0, 1.0))  # min > max
        rec.add_box(900, (0.0, 0.0), (1.0, 1.0))  # a static box's id
        rec.add_box(779, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))  # 3D in 2D
        rec.add_box(780, (0.0, 0.0), (1e39, 1.0))  # too large for a float32
        rec.end_step()
        expected.append(sorted((id, tuple(map(f32, lo)), tuple(map(f32, hi)))
                               for id, lo, hi in boxes))
    return expected


def check_scene(data, st, expected):
    s = fmt.decode(data)
    assert (s.engine, s.dims, s.dt, s.units) == ("scene", 2, 0.5, "m")
    assert s.statics == [(900, (-1.0, -1.0), (100.0, 0.0)), (901, (-1.0, 0.0), (0.0, 10.0))]
    assert [u.step for u in s.steps] == list(range(40))
    assert [u.keyframe for u in s.steps] == [True] + [False] * 39
    for u, e in zip(s.steps, expected):
        assert u.boxes == e, f"step {u.step}"
    assert s.bye == (40, 0)
    # 1 outside a step, 1 static twice, 6 bad boxes a step for 40 steps.
    assert (st.steps, st.steps_sent, st.steps_dropped, st.boxes_rejected) == (40, 40, 0, 242)
    assert st.last_rejection == "box 780: float too large to pack with f format"
    assert st.error is None
    return s


def test_a_scene_decodes_box_for_box_and_bad_boxes_are_counted(tmp_path):
    path = tmp_path / "scene.aabbstream"
    rec = Recorder.open_file(str(path), engine="scene", dimensions=2, dt=0.5)
    expected = scene(rec)
    st = rec.close()
    s = check_scene(path.read_bytes(), st, expected)
    # Boxes standing still are not sent again (every fourth box moves every third step).
    assert s.steps[1].moved < len(s.steps[1].boxes)


def four(t):
    return [(id, (float(t), 0.0), (float(t) + 1.0, 0.5)) for id in range(1, 5)]


def step(rec, t):
    rec.begin_step()
    for id, lo, hi in four(t):
        rec.add_box(id, lo, hi)
    return rec.end_step()


def test_a_full_queue_drops_whole_steps_and_the_next_is_a_keyframe(tmp_path):
    path = tmp_path / "drops.aabbstream"
    out = GatedFile(str(path))
    header = len(fmt.MAGIC + fmt.hello("drops", 2, 0.5))
    a_step = len(fmt.step(0, keyframe=True, appeared=four(0)))
    assert (header, a_step) == (31, 106)
    # The handshake waits in the blocked writer; step 0 fits beside it in 220 bytes, steps 1
    # and 2 do not; once the writer took those, steps 3 and 4 fit together.
    rec = Recorder.to_writer(out, engine="drops", dimensions=2, dt=0.5, buffer_bytes=220)
    statuses = [step(rec, t) for t in range(3)]
    out.gate.set()
    deadline = time.monotonic() + 10
    while rec.stats().bytes_sent < header + a_step:
        assert time.monotonic() < deadline, "the writer took nothing in 10 s"
        time.sleep(0.002)
    statuses += [step(rec, t) for t in range(3, 5)]
    st = rec.close()
    data = path.read_bytes()
    assert statuses == [True, False, False, True, True]
    assert (st.steps, st.steps_sent, st.steps_dropped, st.bytes_sent) == (5, 3, 2, len(data))
    # Step 3 is sent whole (a keyframe) after the gap; step 4 a delta against it.
    assert data == (fmt.MAGIC + fmt.hello("drops", 2, 0.5)
                    + fmt.step(0, keyframe=True, appeared=four(0))
                    + fmt.step(3, keyframe=True, appeared=four(3))
                    + fmt.step(4, moved=four(4))
                    + fmt.bye(3, 2))
    s = fmt.decode(data)
    assert [(u.step, u.keyframe, u.dropped_before) for u in s.steps] == [
        (0, True, 0), (3, True, 2), (4, False, 0)]


def test_exact_mode_waits_for_room_and_loses_nothing(tmp_path):
    path = tmp_path / "exact.aabbstream"
    out = GatedFile(str(path))
    rec = Recorder.to_writer(out, engine="exact", dimensions=2, dt=0.5, buffer_bytes=200,
                             exact=True)
    threading.Timer(0.1, out.gate.set).start()
    statuses = [step(rec, t) for t in range(30)]
    st = rec.close()
    assert all(statuses)
    assert (st.steps, st.steps_sent, st.steps_dropped) == (30, 30, 0)
    s = fmt.decode(path.read_bytes())
    assert [u.step for u in s.steps] == list(range(30))
    for u in s.steps:
        assert u.boxes == four(u.step)
    assert s.bye == (30, 0)


def test_the_bye_frame_counts_what_the_writer_wrote(tmp_path):
    data, _ = record(tmp_path, lambda rec: [step(rec, t) for t in range(2)])
    kind, body = fmt.frames(data)[-1]
    assert (kind, struct.unpack("<QQ", body)) == (fmt.BYE, (2, 0))
