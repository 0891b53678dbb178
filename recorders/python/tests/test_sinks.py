"""Where the bytes go, and what a debugger or a file that is absent, refuses, closes or stops
reading does to the engine: never an exception after the recorder is made, never a wait
past the timeout; connect_or_file goes on in the file."""

import errno
import os
import socket
import struct
import sys
import time

import pytest

from aabb_recorder import Recorder

import stream_format as fmt
from support import Within, count_steps, free_port, require


def crowd(rec, start, steps, n):
    """Steps of n boxes, all moving."""
    for s in range(start, start + steps):
        rec.begin_step()
        for i in range(n):
            x = i + s * 0.5
            rec.add_box(i, (x, 0.0), (x + 1.0, 0.5))
        rec.end_step()


def crowd_boxes(s, n):
    return [(i, (f32(i + s * 0.5), 0.0), (f32(i + s * 0.5 + 1.0), 0.5)) for i in range(n)]


f32 = fmt.f32

HELLO = dict(engine="sinks", dimensions=2, dt=0.5)


def test_connect_raises_os_error_at_once_when_nothing_listens():
    with Within(2, "connect to a closed port"):
        with pytest.raises(OSError):
            Recorder.connect("127.0.0.1", free_port(), **HELLO)


def test_connect_or_file_writes_the_file_when_nothing_listens(tmp_path):
    path = tmp_path / "absent.aabbstream"
    with Within(2, "connect_or_file with no debugger"):
        rec = Recorder.connect_or_file(str(path), port=free_port(), **HELLO)
        assert rec.target == f"file {path}"
        crowd(rec, 0, 20, 10)
        st = rec.close()
    assert (st.steps, st.steps_sent, st.steps_dropped, st.error, st.fallback) == (
        20, 20, 0, None, None)
    s = fmt.decode(path.read_bytes())
    assert [u.boxes for u in s.steps] == [crowd_boxes(k, 10) for k in range(20)]


def test_the_port_comes_from_the_environment(debugger, monkeypatch):
    d = debugger()
    monkeypatch.setenv("AABB_DEBUGGER_PORT", str(d.port))
    rec = Recorder.connect(**HELLO)
    assert rec.target == f"socket 127.0.0.1:{d.port}"
    rec.close()
    assert fmt.decode(d.join()).bye == (0, 0)


def test_a_debugger_gets_the_bytes_a_file_gets(tmp_path, debugger):
    d = debugger()
    path = tmp_path / "file.aabbstream"
    with Recorder.connect_or_file(str(tmp_path / "unused"), port=d.port, **HELLO) as live:
        assert live.target == f"socket 127.0.0.1:{d.port}"
        live.static_box(77, (-5, -5), (5, -4))
        crowd(live, 0, 30, 50)
    with Recorder.open_file(str(path), **HELLO) as offline:
        offline.static_box(77, (-5, -5), (5, -4))
        crowd(offline, 0, 30, 50)
    assert d.join() == path.read_bytes()
    assert live.stats().bytes_sent == len(path.read_bytes())
    assert not (tmp_path / "unused").exists()


def paced(rec, start, steps):
    """Steps of 50 boxes, each once the writer took the last (none dropped for a full
    queue)."""
    for s in range(start, start + steps):
        before = rec.stats().bytes_sent
        crowd(rec, s, 1, 50)
        deadline = time.monotonic() + 10
        while rec.stats().bytes_sent == before:
            assert time.monotonic() < deadline, "the writer took nothing in 10 s"
            time.sleep(0.001)


def refused_after_four(tmp_path, debugger, **options):
    """connect_or_file to a debugger that reads 4 steps, then refuses; 10 steps in all."""
    def script(d):
        d.read_steps(4)
        d.refuse()

    d = debugger(script)
    path = tmp_path / "refused.aabbstream"
    rec = Recorder.connect_or_file(str(path), port=d.port, **HELLO, **options)
    assert rec.target == f"socket 127.0.0.1:{d.port}"
    rec.static_box(77, (-5, -5), (5, -4))
    paced(rec, 0, 4)
    d.join()
    deadline = time.monotonic() + 10
    while rec.stats().fallback is None:
        assert time.monotonic() < deadline, "no fallback 10 s after the refusal"
        time.sleep(0.005)
    paced(rec, 4, 6)
    st = rec.close()
    assert st.target == f"file {path}"
    assert st.fallback == (f"socket 127.0.0.1:{d.port} refused the stream: another engine is "
                           f"live; the stream goes on in {path}")
    assert st.error is None
    data = path.read_bytes()
    assert st.bytes_sent == len(data)
    s = fmt.decode(data)
    assert s.statics == [(77, (-5.0, -5.0), (5.0, -4.0))]
    for u in s.steps:
        assert u.boxes == crowd_boxes(u.step, 50)
    return st, s


def test_a_refusing_debugger_sends_the_whole_stream_to_the_file(tmp_path, debugger):
    st, s = refused_after_four(tmp_path, debugger)
    # What the debugger was sent is replayed into the file: nothing is lost.
    assert (st.steps, st.steps_sent, st.steps_dropped, st.steps_refused) == (10, 10, 0, 0)
    assert [(u.step, u.keyframe) for u in s.steps] == [(k, k == 0) for k in range(10)]
    assert s.bye == (10, 0)


def test_a_refusal_past_the_replay_budget_loses_the_steps_sent_and_says_so(tmp_path, debugger):
    # 3,000 bytes kept to replay: the steps (1 kB each) are past it at step 2.
    st, s = refused_after_four(tmp_path, debugger, buffer_bytes=3000)
    assert (st.steps, st.steps_sent, st.steps_dropped, st.steps_refused) == (10, 6, 4, 4)
    assert [(u.step, u.keyframe, u.dropped_before) for u in s.steps] == [
        (4, True, 4), (5, False, 0), (6, False, 0), (7, False, 0), (8, False, 0),
        (9, False, 0)]
    assert s.bye == (6, 4)


def test_a_fast_engine_refused_after_its_end_still_writes_its_file(tmp_path, debugger):
    d = debugger(lambda d: d.refuse())  # at once, reading nothing
    path = tmp_path / "fast.aabbstream"
    with Within(5, "70 steps and close against a refusing debugger"):
        rec = Recorder.connect_or_file(str(path), port=d.port, **HELLO)
        crowd(rec, 0, 70, 5)
        st = rec.close()
    d.join()
    assert (st.steps, st.steps_sent, st.steps_dropped, st.error) == (70, 70, 0, None)
    assert st.target == f"file {path}"
    s = fmt.decode(path.read_bytes())
    assert len(s.steps) == 70
    assert s.bye == (70, 0)


def test_a_debugger_that_closes_without_a_word_sends_the_stream_to_the_file(tmp_path,
                                                                            debugger):
    def script(d):
        d.read_steps(2)
        d.conn.close()

    d = debugger(script)
    path = tmp_path / "closed.aabbstream"
    rec = Recorder.connect_or_file(str(path), port=d.port, **HELLO)
    paced(rec, 0, 2)
    d.join()
    deadline = time.monotonic() + 10
    while rec.stats().fallback is None:
        assert time.monotonic() < deadline, "no fallback 10 s after the close"
        crowd(rec, 2, 1, 50)  # a write finds the socket closed
        time.sleep(0.01)
    paced(rec, 100, 3)
    st = rec.close()
    assert st.target == f"file {path}"
    assert f"socket 127.0.0.1:{d.port}" in st.fallback and "closed" in st.fallback, st.fallback
    assert st.error is None
    s = fmt.decode(path.read_bytes())
    # Replayed from its start; the steps written to the closed socket before the recorder
    # saw it closed are lost, and counted.
    assert s.steps[0].step == 0 and s.steps[-1].step == st.steps - 1
    assert len(s.steps) == st.steps_sent
    assert s.bye == (st.steps_sent, st.steps_dropped)
    assert st.steps_sent + st.steps_dropped == st.steps


def test_close_leaves_a_debugger_that_reads_nothing_within_the_timeout(debugger):
    d = debugger(lambda d: None, rcvbuf=4096)  # accepts, then reads nothing
    rec = Recorder.connect("127.0.0.1", d.port, **HELLO, timeout=0.3)
    slowest = 0.0
    for s in range(40):
        rec.begin_step()
        for i in range(5000):
            x = i + s * 0.5
            rec.add_box(i, (x, 0.0), (x + 1.0, 0.5))
        t = time.monotonic()
        rec.end_step()
        slowest = max(slowest, time.monotonic() - t)
    with Within(0.3 + 1.0, "close against a debugger that reads nothing"):
        st = rec.close()
    d.join()
    # The engine's thread never waited on the socket (that would be the timeout, 0.3 s):
    # end_step only builds the frame and queues it, or drops it.
    assert slowest < 0.2, f"an end_step took {slowest:.3f} s"
    assert (st.steps, st.steps_sent + st.steps_dropped) == (40, 40)
    assert st.steps_dropped > 0
    assert st.connected is False
    port = d.port
    assert st.error in (
        f"writing to socket 127.0.0.1:{port}: no progress within the timeout (it stopped "
        "reading)",
    ) or (st.error.startswith(f"closing: socket 127.0.0.1:{port} took nothing more within "
                              "the timeout (0.3 s); ")
          and st.error.endswith(" steps not written were cut")), st.error


fifo_ok = hasattr(os, "mkfifo") and sys.platform.startswith("linux")


def drain(fd: int) -> bytes:
    out = b""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return out
        if not chunk:
            return out
        out += chunk


def test_a_fifo_that_no_process_reads_raises_at_once(tmp_path):
    require(fifo_ok, "FIFOs as the tests use them are Linux's")
    path = tmp_path / "none.fifo"
    os.mkfifo(str(path))
    with Within(2, "opening a FIFO with no reader"):
        with pytest.raises(OSError) as e:
            Recorder.open_file(str(path), **HELLO)
    assert e.value.errno == errno.ENXIO
    assert e.value.strerror == f"{path}: a FIFO that no process reads (opened without waiting)"
    with Within(2, "connect_or_file with no debugger and a FIFO with no reader"):
        with pytest.raises(OSError):
            Recorder.connect_or_file(str(path), port=free_port(), **HELLO)


def test_a_fifo_whose_reader_stops_costs_steps_not_the_loop(tmp_path):
    require(fifo_ok, "FIFOs as the tests use them are Linux's")
    path = tmp_path / "stalled.fifo"
    os.mkfifo(str(path))
    r = os.open(str(path), os.O_RDONLY | os.O_NONBLOCK)
    try:
        rec = Recorder.open_file(str(path), timeout=0.3, **HELLO)
        crowd(rec, 0, 30, 2000)
        with Within(0.3 + 1.0, "close against a FIFO nobody reads"):
            st = rec.close()
        delivered = count_steps(drain(r))
    finally:
        os.close(r)
    assert st.steps == 30
    assert st.steps_sent + st.steps_dropped == 30
    assert st.steps_sent == delivered, "the steps counted sent are the steps delivered"
    assert st.connected is False and st.error is not None


def test_a_fifo_whose_reader_exits_costs_steps_not_the_process(tmp_path):
    require(fifo_ok, "FIFOs as the tests use them are Linux's")
    path = tmp_path / "exits.fifo"
    os.mkfifo(str(path))
    r = os.open(str(path), os.O_RDONLY | os.O_NONBLOCK)
    rec = Recorder.open_file(str(path), **HELLO)
    os.close(r)
    crowd(rec, 0, 10, 100)
    st = rec.close()
    assert (st.steps, st.steps_sent, st.steps_dropped, st.connected) == (10, 0, 10, False)
    assert st.error == (f"writing to file {path}: its reader went away ([Errno 32] Broken "
                        "pipe)")


def test_a_full_disk_costs_steps_not_the_loop():
    require(os.path.exists("/dev/full"), "no /dev/full on this system")
    rec = Recorder.open_file("/dev/full", **HELLO)
    crowd(rec, 0, 5, 10)
    st = rec.close()
    assert (st.steps, st.steps_sent, st.steps_dropped) == (5, 0, 5)
    assert st.error == "writing to file /dev/full: [Errno 28] No space left on device"


def test_a_socket_reset_mid_stream_is_counted_not_raised(debugger):
    def script(d):
        d.read_steps(1)
        d.conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        d.conn.close()  # a reset

    d = debugger(script)
    rec = Recorder.connect("127.0.0.1", d.port, **HELLO, timeout=1.0)
    paced(rec, 0, 1)
    d.join()
    with Within(3, "steps and close after a reset"):
        crowd(rec, 1, 50, 200)
        st = rec.close()
    assert st.steps == 51
    assert st.steps_sent + st.steps_dropped == 51
    assert st.steps_dropped > 0
    assert st.connected is False and st.error is not None
