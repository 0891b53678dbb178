"""Arguments of every wrong kind: after the recorder is made nothing raises into the frame
loop, each bad call is counted; a bad handshake or option raises ValueError when the
recorder is made, as documented."""

import pytest

from aabb_recorder import Recorder

import stream_format as fmt


def test_hostile_arguments_are_counted_never_raised(tmp_path):
    path = tmp_path / "hostile.aabbstream"
    rec = Recorder.open_file(str(path), engine="hostile", dimensions=2, dt=0.5)
    huge = 10**400
    nan = float("nan")
    text = "x" * 1_000_000
    raised = []

    def call(f, *args, **kwargs):
        try:
            f(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - what is checked is that none is raised
            raised.append((f.__name__, args[:1], e))

    call(rec.static_box, huge, (0, 0), (1, 1))
    call(rec.static_box, None, None, None)
    for t in range(3):
        rec.begin_step()
        rec.add_box(1, (t, 0), (t + 1, 1))
        for args in [(huge, (0, 0), (1, 1)), (text, (0, 0), (1, 1)), (None, None, None),
                     (3, (nan, 0), (1, 1)), (4, [1], (1, 1)), (5, ("a", "b"), (1, 1)),
                     (6, (huge, 0), (1, 1)), (7, 5, 6), (-1, (0, 0), (1, 1)),
                     (1.5, (0, 0), (1, 1)), (8, ("0", "0"), ("1", "1"))]:
            call(rec.add_box, *args)
        call(rec.timing, "k", huge)
        call(rec.timing, "k2", None)
        call(rec.timing, None, 1.0)
        call(rec.timing, text, 1.0)
        call(rec.timing, "nan_key", nan)
        call(rec.timing, "text", "1.5")
        call(rec.fat_box, [1], (0, 0), (1, 1))
        call(rec.fat_box, 1, [1], (1, 1))
        call(rec.fat_box, 1, (0, 0), (huge, 1))
        call(rec.fat_box, None, None, None)
        call(rec.pair, None, 1)
        call(rec.pair, 1, huge)
        call(rec.pair, "a", "b")
        call(rec.tree_root, "root")
        call(rec.tree_root, huge)
        call(rec.tree_node, None, None, None, None)
        call(rec.tree_node, 1, "p", (0, 0), (1, 1), proxy=1)
        call(rec.tree_node, 2, None, (0, 0), (1, 1), children=(1,))
        call(rec.tree_node, 3, None, (0, 0), (1, 1), proxy=1, height=huge)
        call(rec.end_step)
    call(rec.add_box, 1, (0, 0), (1, 1))  # outside a step
    call(rec.end_step)  # no step open: False, not an error
    st = rec.close()
    assert raised == []
    # 2 statics, 11 boxes a step and 1 outside a step; 19 parts a step.
    assert (st.steps, st.steps_sent, st.boxes_rejected, st.parts_rejected) == (3, 3, 36, 57)
    assert st.error is None
    s = fmt.decode(path.read_bytes())
    assert [u.boxes for u in s.steps] == [[(1, (float(t), 0.0), (t + 1.0, 1.0))]
                                          for t in range(3)]
    assert s.bye == (3, 0)


def test_close_twice_and_a_context_manager_are_safe(tmp_path):
    path = tmp_path / "twice.aabbstream"
    with Recorder.open_file(str(path), engine="twice", dimensions=2, dt=0.5) as rec:
        rec.begin_step()
        rec.add_box(1, (0, 0), (1, 1))
        # the open step is ended by close()
    first = rec.close()
    assert rec.close() == first
    assert (first.steps, first.steps_sent) == (1, 1)
    rec.begin_step()  # after close: counted, nothing raised, nothing written
    rec.add_box(1, (0, 0), (1, 1))
    assert rec.end_step() is False
    assert fmt.decode(path.read_bytes()).bye == (1, 0)


@pytest.mark.parametrize("options, message", [
    (dict(dimensions=4), "4 dimensions"),
    (dict(dimensions=True), "True dimensions"),
    (dict(dt=0), "dt 0.0 s"),
    (dict(dt=float("nan")), "dt nan s"),
    (dict(dt="fast"), "dt 'fast'"),
    (dict(buffer_bytes=0), "buffer_bytes 0"),
    (dict(timeout=-1), "timeout -1.0 s"),
    (dict(engine=None), "NoneType where a string goes"),
])
def test_a_bad_handshake_or_option_raises_value_error_at_once(tmp_path, options, message):
    args = dict(engine="bad", dimensions=2, dt=0.5)
    args.update(options)
    with pytest.raises(ValueError, match=message):
        Recorder.open_file(str(tmp_path / "bad.aabbstream"), **args)


def test_a_bad_port_raises_value_error(tmp_path):
    with pytest.raises(ValueError, match="port 70000"):
        Recorder.connect("127.0.0.1", 70000, engine="bad")


def test_a_writer_that_raises_ends_the_stream_without_raising():
    class Broken:
        def write(self, data):
            raise RuntimeError("the disk caught fire")

    rec = Recorder.to_writer(Broken(), engine="broken", dimensions=2, dt=0.5)
    for t in range(5):
        rec.begin_step()
        rec.add_box(1, (t, 0), (t + 1, 1))
        rec.end_step()
    st = rec.close()
    assert (st.steps, st.steps_sent + st.steps_dropped) == (5, 5)
    assert st.steps_sent == 0
    assert st.connected is False
    assert "the disk caught fire" in st.error
