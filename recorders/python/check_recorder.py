"""check_recorder.py: drives aabb_recorder.py through the cases that
crates/aabb-recorder/tests/python_recorder.rs checks against the Rust decoder (the stream
decoded by the debugger's own reader). The same cases, checked in Python against the format
byte for byte, are the pytest tests in tests/ (`pytest recorders/python`).

    python3 check_recorder.py sets FILE     a scene whose boxes move, come, go and change
                                            order, with bad boxes; prints every step's
                                            expected boxes and the final counts
    python3 check_recorder.py socket PORT   the same scene to a debugger at 127.0.0.1:PORT
    python3 check_recorder.py drops FILE    a writer that blocks: a full queue drops whole
                                            steps; prints what end_step returned
    python3 check_recorder.py exact FILE    the same with exact=True: nothing is dropped
    python3 check_recorder.py parts FILE    the engine's broad phase (fat boxes, pairs, tree,
                                            timings) over 3 steps, with bad parts left out;
                                            prints the counts
    python3 check_recorder.py hostile FILE  every entry point with arguments of the wrong
                                            type, length or size, None and NaN: nothing
                                            raises, each call is counted rejected
    python3 check_recorder.py fifo DIR      FIFOs made in DIR: with no reader (an error at
                                            once), a reader that stops reading (close within
                                            the timeout, the steps not delivered counted
                                            dropped) and a reader that exits; /dev/full
    python3 check_recorder.py stall PORT    a debugger that reads nothing: close returns within
                                            the timeout, the steps it cut counted dropped
    python3 check_recorder.py refused PORT FILE [BUFFER]
                                            connect_or_file to a debugger that refuses the
                                            stream after 4 steps: the stream goes to FILE
                                            (replayed from its start, or with BUFFER bytes
                                            too few to replay it, from the next step)
    python3 check_recorder.py fast PORT FILE
                                            70 steps at once to a debugger that refuses
                                            before reading anything: all of them in FILE
"""

import os
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aabb_recorder import Recorder  # noqa: E402


def scene(rec, steps=40):
    """Adds the scene's steps to rec and prints what each step should hold."""
    rec.add_box(1, (0, 0), (1, 1))  # outside a step
    rec.static_box(900, (-1.0, -1.0), (100.0, 0.0))
    rec.static_box(901, (-1.0, 0.0), (0.0, 10.0))
    rec.static_box(901, (-1.0, 0.0), (0.0, 11.0))  # twice
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
        rec.add_box(780, (0.0, 0.0), (1e39, 1.0))  # too large for a float
        rec.end_step()
        print(f"step {s}")
        for id, lo, hi in sorted(boxes):
            print(f"box {id} {lo[0]!r} {lo[1]!r} {hi[0]!r} {hi[1]!r}")
    st = rec.close()
    print(f"stats: steps {st.steps} sent {st.steps_sent} dropped {st.steps_dropped} "
          f"rejected {st.boxes_rejected} error {st.error} last {st.last_rejection}")


class GatedFile:
    """A file whose writes wait until the gate opens."""

    def __init__(self, path):
        self.f = open(path, "wb")
        self.gate = threading.Event()

    def write(self, data):
        self.gate.wait()
        self.f.write(data)

    def flush(self):
        self.f.flush()

    def close(self):
        self.f.close()


def four(t):
    return [(id, (float(t), 0.0), (float(t) + 1.0, 0.5)) for id in range(1, 5)]


def step(rec, t):
    rec.begin_step()
    for id, lo, hi in four(t):
        rec.add_box(id, lo, hi)
    return rec.end_step()


def drops(path):
    out = GatedFile(path)
    # The handshake (37 bytes) waits in the blocked writer; step 0 (106 bytes) fits beside
    # it, steps 1 and 2 do not; steps 3 and 4 fit together.
    rec = Recorder.to_writer(out, engine="check drops", dimensions=2, dt=0.5,
                             buffer_bytes=220)
    statuses = [step(rec, t) for t in range(3)]
    out.gate.set()
    deadline = time.monotonic() + 10
    while rec.stats().bytes_sent < 37 + 106 and time.monotonic() < deadline:
        time.sleep(0.002)
    statuses += [step(rec, t) for t in range(3, 5)]
    st = rec.close()
    print("statuses", *statuses)
    print(f"stats: steps {st.steps} sent {st.steps_sent} dropped {st.steps_dropped} "
          f"bytes {st.bytes_sent}")


def exact(path):
    out = GatedFile(path)
    rec = Recorder.to_writer(out, engine="check exact", dimensions=2, dt=0.5,
                             buffer_bytes=200, exact=True)
    threading.Timer(0.1, out.gate.set).start()
    statuses = [step(rec, t) for t in range(30)]
    st = rec.close()
    print("all sent" if all(statuses) else "some dropped")
    print(f"stats: steps {st.steps} sent {st.steps_sent} dropped {st.steps_dropped}")


def tree_and_timings(rec):
    """The tree and the timings of the parts case (steps 0 and 1)."""
    rec.tree_root(100)
    rec.tree_partial()
    rec.tree_node(100, None, (-0.25, -0.25), (2.75, 1.25), children=(11, 12),
                  height=1, enlarged=True)
    rec.tree_node(11, 100, (-0.25, -0.25), (1.25, 1.25), proxy=1)
    rec.tree_node(12, 100, (1.25, -0.25), (2.75, 1.25), proxy=2)
    rec.timing("broad_phase_ns", 1500)
    rec.timing("pairs_tested", 6)
    rec.timing("margin", 0.25)


def parts(path):
    """The case crates/aabb-recorder/tests/common/mod.rs (parts_case) decodes: boxes 1, 2, 3
    and the static 50; step 0 with every part (and bad ones), step 1 with no pairs and the
    same tree and timings (sent as empty sections), step 2 with nothing (the same case as
    check_recorder.c's)."""
    rec = Recorder.open_file(path, engine="check parts", dimensions=2, dt=0.5)
    rec.static_box(50, (-10, -1), (10, 0))
    for t in range(3):
        rec.begin_step()
        rec.add_box(1, (0, 0), (1, 1))
        rec.add_box(2, (1.5, 0), (2.5, 1))
        rec.add_box(3, (5, 0), (6, 1))
        if t == 0:
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
            rec.timing("narrow_phase_ns", float("nan"))  # NaN
            rec.timing("margin", 0.5)  # twice
        elif t == 1:
            rec.begin_pairs()
            tree_and_timings(rec)
        rec.end_step()
    st = rec.close()
    print(f"parts: steps {st.steps} sent {st.steps_sent} rejected {st.boxes_rejected} "
          f"parts rejected {st.parts_rejected}")


def hostile(path):
    """Bad arguments to every entry point: counted, never raised."""
    rec = Recorder.open_file(path, engine="check hostile", dimensions=2, dt=0.5)
    huge = 10**400
    nan = float("nan")
    text = "x" * 1_000_000
    raised = 0

    def call(f, *args, **kwargs):
        nonlocal raised
        try:
            f(*args, **kwargs)
        except BaseException:  # noqa: BLE001 - the count is what is checked
            raised += 1

    boxes = [  # 2 bad statics
        (rec.static_box, (huge, (0, 0), (1, 1))),
        (rec.static_box, (None, None, None)),
    ]
    for f, args in boxes:
        call(f, *args)
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
    st = rec.close()
    print(f"hostile: steps {st.steps} sent {st.steps_sent} rejected {st.boxes_rejected} "
          f"parts rejected {st.parts_rejected} raised {raised}")


def whole_steps(data: bytes) -> int:
    """The STEP frames that arrived whole."""
    pos, n = 8, 0
    while pos + 5 <= len(data):
        (length,) = struct.unpack_from("<I", data, pos)
        if pos + 4 + length > len(data):
            break
        n += data[pos + 4] == 3
        pos += 4 + length
    return n


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


def crowd(rec, start, steps, n):
    for s in range(start, start + steps):
        rec.begin_step()
        for i in range(n):
            x = i + s * 0.5
            rec.add_box(i, (x, 0.0), (x + 1.0, 0.5))
        rec.end_step()


def fifo(d):
    """A FIFO with no reader, one whose reader stops reading, one whose reader exits."""
    hello = dict(engine="check fifo", dimensions=2, dt=0.5)
    path = os.path.join(d, "none.fifo")
    os.mkfifo(path)
    t = time.monotonic()
    try:
        Recorder.open_file(path, **hello)
        print("no reader: opened")
    except OSError as e:
        print(f"no reader: {e.strerror}; at once {time.monotonic() - t < 2}")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = time.monotonic()
    try:
        Recorder.connect_or_file(path, port=port, **hello)
        print("no debugger, no reader: opened")
    except OSError as e:
        print(f"no debugger, no reader: {e.strerror}; at once {time.monotonic() - t < 2}")

    path = os.path.join(d, "stalled.fifo")
    os.mkfifo(path)
    r = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    rec = Recorder.open_file(path, timeout=0.3, **hello)
    crowd(rec, 0, 30, 2000)
    t = time.monotonic()
    st = rec.close()
    took = time.monotonic() - t
    delivered = whole_steps(drain(r))
    os.close(r)
    print(f"stalled: steps {st.steps} sent {st.steps_sent} dropped {st.steps_dropped} "
          f"delivered {delivered} closed within the timeout {took < 0.3 + 1.0}")
    print(f"stalled error: {st.error}")

    path = os.path.join(d, "exits.fifo")
    os.mkfifo(path)
    r = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    rec = Recorder.open_file(path, **hello)
    os.close(r)
    crowd(rec, 0, 10, 100)
    st = rec.close()
    print(f"exits: steps {st.steps} sent {st.steps_sent} dropped {st.steps_dropped} "
          f"connected {st.connected}")
    print(f"exits error: {st.error}")

    rec = Recorder.open_file("/dev/full", **hello)
    crowd(rec, 0, 5, 10)
    st = rec.close()
    print(f"full: steps {st.steps} sent {st.steps_sent} dropped {st.steps_dropped} "
          f"error {st.error}")


def stall(port):
    """A debugger that reads nothing: close() returns within the timeout."""
    rec = Recorder.connect("127.0.0.1", port, engine="check stall", dimensions=2, dt=0.5,
                           timeout=0.3)
    crowd(rec, 0, 40, 20000)
    t = time.monotonic()
    st = rec.close()
    took = time.monotonic() - t
    print(f"stall: steps {st.steps} sent and dropped {st.steps_sent + st.steps_dropped} "
          f"some dropped {st.steps_dropped > 0} closed within the timeout {took < 0.3 + 1.0}")
    print(f"stall error: {st.error}")


def fast(port, path):
    """70 steps at once to a debugger that refuses before reading anything."""
    rec = Recorder.connect_or_file(path, port=port, engine="check fast", dimensions=2,
                                   dt=0.5)
    crowd(rec, 0, 70, 5)
    st = rec.close()
    print(f"fast: steps {st.steps} sent {st.steps_sent} dropped {st.steps_dropped} "
          f"target {st.target.split(' ')[0]} error {st.error}")


def paced(rec, start, steps):
    """Steps of 50 boxes, each once the writer took the last (none dropped for a full
    queue)."""
    for s in range(start, start + steps):
        before = rec.stats().bytes_sent
        crowd(rec, s, 1, 50)
        deadline = time.monotonic() + 10
        while rec.stats().bytes_sent == before and time.monotonic() < deadline:
            time.sleep(0.001)


def refused(port, path, buffer_bytes=64 << 20):
    """connect_or_file to a debugger that refuses after 4 steps: the stream goes on in the
    file (replayed from its start, or with a buffer too small to replay it, from the next
    step)."""
    rec = Recorder.connect_or_file(path, port=port, engine="check refused", dimensions=2,
                                   dt=0.5, buffer_bytes=buffer_bytes)
    print(f"first target: {rec.target}")
    rec.static_box(77, (-5, -5), (5, -4))
    paced(rec, 0, 4)
    deadline = time.monotonic() + 10
    while rec.stats().fallback is None and time.monotonic() < deadline:
        time.sleep(0.005)
    paced(rec, 4, 6)
    st = rec.close()
    print(f"refused: steps {st.steps} sent {st.steps_sent} dropped {st.steps_dropped} "
          f"refused {st.steps_refused} bytes {st.bytes_sent} error {st.error}")
    print(f"target: {st.target}")
    print(f"fallback: {st.fallback}")


def main():
    if len(sys.argv) in (4, 5) and sys.argv[1] == "refused":
        refused(int(sys.argv[2]), sys.argv[3], *[int(a) for a in sys.argv[4:]])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "fast":
        fast(int(sys.argv[2]), sys.argv[3])
        return 0
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    mode, arg = sys.argv[1], sys.argv[2]
    if mode == "sets":
        scene(Recorder.open_file(arg, engine="check sets", dimensions=2, dt=0.5))
    elif mode == "socket":
        scene(Recorder.connect("127.0.0.1", int(arg), engine="check sets", dimensions=2,
                               dt=0.5))
    elif mode == "drops":
        drops(arg)
    elif mode == "exact":
        exact(arg)
    elif mode == "parts":
        parts(arg)
    elif mode == "hostile":
        hostile(arg)
    elif mode == "fifo":
        fifo(arg)
    elif mode == "stall":
        stall(int(arg))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
