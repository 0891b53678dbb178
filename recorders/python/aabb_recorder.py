"""aabb_recorder: streams a physics engine's boxes, step by step, to the aabb-debugger over
TCP (the live link) or to a stream file. One module, standard library only.

    from aabb_recorder import Recorder

    with Recorder.connect_or_file("run.aabbstream", engine="my engine 1.0", dimensions=2,
                                  dt=1 / 60) as rec:
        rec.static_box(1000, (-50, -1), (50, 0))     # before the first step
        for step in range(600):
            rec.begin_step()
            for body in bodies:
                rec.add_box(body.id, body.min, body.max)
            rec.end_step()
    print(rec.stats())

Add every box every step: the recorder sends what appeared, moved or went. A writer thread
does the socket or file writes; the engine's thread only encodes. Nothing a debugger or a
box does raises into the frame loop: steps wait in a queue bounded in bytes (64 MiB by
default); when it is full the whole step is dropped and counted, and the next step sent is
a keyframe (the debugger shows the gap), or, with exact=True, end_step waits for room (at
most `timeout` seconds). A debugger or a FIFO's reader that closes, or takes nothing for
`timeout` seconds, ends the stream: stats() says why and later steps are counted dropped;
close() returns within `timeout`, counting what it cut as dropped. A file is opened without
waiting (a FIFO that no process reads raises OSError at once). connect_or_file goes on in
the file when the debugger refuses the stream (it writes "AABB refused: REASON") or closes
it before its end. No method raises into the frame loop, whatever its arguments: NaN or
infinite boxes, min > max, ids added twice in a step, moving boxes with a static box's id,
wrong types and numbers too large are left out and counted.

The engine's own broad phase may go with each step (optional, between begin_step and
end_step; docs/formats.md, "The engine's broad phase"): fat_box (one per box, by the box's
id), pair (candidate pairs, either order: sent once each, sorted, lower id first; begin_pairs
when there are none), tree_root / tree_node (the tree), timing (timings and counts by key).
Fat boxes and pairs of ids that are not boxes of the step, repeats, NaN and bad keys are
left out and counted in parts_rejected.

The format is docs/formats.md ("Stream") of the aabb-debugger. License: MIT OR Apache-2.0.
Install it with `pip install recorders/python` (from the aabb-debugger's repository), or copy
this one file next to your script.
"""

import collections
import errno
import functools
import math
import operator
import os
import socket
import struct
import threading
import time
from dataclasses import dataclass
from typing import Optional

__version__ = "0.1.0"
"""The recorder's version: the Rust crate aabb-recorder's, whose stream format it writes."""

DEFAULT_PORT = 7616
"""The debugger's default port (on 127.0.0.1)."""

PORT_ENV = "AABB_DEBUGGER_PORT"
"""The environment variable that names another port."""

MAGIC = b"AABBSTRM"
VERSION = 1
MAX_FRAME_BYTES = 64 << 20
_HELLO, _STATIC, _STEP, _BYE = 1, 2, 3, 4
_KEYFRAME = 1
_FAT_BOXES, _PAIRS, _TREE, _TIMINGS = 1, 2, 3, 4
NONE_ID = 0xFFFFFFFF
"""The id that stands for "none" in the tree: the root's parent, an empty tree's root."""
MAX_TIMINGS = 64


def debugger_port() -> int:
    """The port in AABB_DEBUGGER_PORT, or DEFAULT_PORT when it is unset or not a port."""
    try:
        port = int(os.environ.get(PORT_ENV, ""))
        if 0 < port < 65536:
            return port
    except ValueError:
        pass
    return DEFAULT_PORT


@dataclass
class Stats:
    """What a recorder did so far."""

    steps: int = 0
    """Steps ended."""
    steps_sent: int = 0
    """Steps handed to the writer and not lost by it (written to `target`, or waiting)."""
    steps_dropped: int = 0
    """Steps not sent: the queue was full, the socket or file failed, close() cut them, or
    the debugger refused them."""
    steps_refused: int = 0
    """Of steps_dropped, those written to a debugger that then refused the stream."""
    bytes_sent: int = 0
    """Bytes written to `target`."""
    boxes_rejected: int = 0
    """Boxes left out (NaN, min > max, twice in a step, a static id, ...)."""
    parts_rejected: int = 0
    """Fat boxes, pairs, tree nodes and timings left out."""
    last_rejection: Optional[str] = None
    """Why the last box or part was left out."""
    error: Optional[str] = None
    """Why the socket or file stopped taking bytes, if it did."""
    connected: bool = True
    """Whether the socket or file still takes bytes."""
    target: str = ""
    """Where the bytes go in the end: "socket HOST:PORT", "file PATH" or "writer"."""
    fallback: Optional[str] = None
    """Why the recorder left the debugger for the file, if it did."""


def _check_options(dimensions, dt, buffer_bytes, timeout):
    """Raises ValueError on a handshake or option the recorder cannot use."""
    if isinstance(dimensions, bool) or dimensions not in (2, 3):
        raise ValueError(f"{_show(dimensions)} dimensions (a stream is 2D or 3D)")
    try:
        dt = float(dt)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"dt {_show(dt)} (a number of seconds)") from None
    if not (math.isfinite(dt) and 0.0 < dt <= 1.0):
        raise ValueError(f"dt {dt} s (it must be finite, > 0 and <= 1)")
    if isinstance(buffer_bytes, bool) or not isinstance(buffer_bytes, int) or buffer_bytes < 1:
        raise ValueError(f"buffer_bytes {_show(buffer_bytes)} (a positive int)")
    try:
        timeout = float(timeout)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"timeout {_show(timeout)} (a number of seconds)") from None
    if not (math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout {timeout} s (it must be finite and > 0)")


def _cut(s) -> bytes:
    """s in UTF-8, cut to 255 bytes at a character boundary."""
    if not isinstance(s, str):
        raise ValueError(f"{type(s).__name__} where a string goes")
    b = s[:255].encode("utf-8", "replace")
    if len(b) <= 255:
        return b
    return b[:255].decode("utf-8", "ignore").encode("utf-8")


def _show(x) -> str:
    """A short, safe text of any value (for messages)."""
    try:
        if isinstance(x, int) and not isinstance(x, bool) and not -10**30 < x < 10**30:
            return f"an int of {x.bit_length()} bits"
        text = repr(x)
    except Exception:  # noqa: BLE001 - a value whose repr fails
        text = f"a {type(x).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _as_u32(x) -> Optional[int]:
    """x as a u32 id (an int, or anything with __index__ such as numpy's), or None."""
    if isinstance(x, bool):
        return int(x)
    try:
        i = operator.index(x)
    except Exception:  # noqa: BLE001 - not an integer
        return None
    return i if 0 <= i <= NONE_ID else None


def _u32(x) -> bool:
    return _as_u32(x) is not None


def _num(v) -> float:
    """v as a float; a string is not a number here (TypeError)."""
    if isinstance(v, (str, bytes, bytearray)):
        raise TypeError(f"a {type(v).__name__} where a number goes")
    return float(v)


def _never_raises(part: bool):
    """Makes a public method count what it raises as a rejected box (or part) instead."""
    def wrap(method):
        @functools.wraps(method)
        def safe(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except Exception as e:  # noqa: BLE001 - nothing raises into the frame loop
                why = f"{method.__name__}: {type(e).__name__}"
                if part:
                    self._parts_rejected += 1
                else:
                    self._rejected += 1
                self._last_rejection = why
                return False if method.__name__ == "end_step" else None
        return safe
    return wrap


_REFUSED = b"AABB refused: "
_MAX_RETAINED = 16 << 20
"""The most bytes of a stream the writer keeps to replay into the fallback file."""
_REFUSAL_GRACE = 0.5
"""The longest the writer waits, after the stream's end, for a debugger's refusal."""
_HEADER, _STATICS, _DELTA, _KEY, _END = range(5)
"""What a queued frame is, for the writer: the magic and HELLO, STATIC, a STEP (a delta or
a keyframe), the end (its BYE encoded by the writer)."""


def _open_nowait(path) -> int:
    """Creates or empties the file at path without waiting: a FIFO that no process reads
    raises OSError at once."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NONBLOCK", 0)
    try:
        return os.open(path, flags, 0o666)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise OSError(e.errno, f"{path}: a FIFO that no process reads (opened without "
                                   f"waiting)") from None
        raise


class _FileSink:
    """A file or FIFO opened without waiting; a write that makes no progress for `timeout`
    seconds (or that close() gave up on) raises TimeoutError."""

    def __init__(self, fd: int, rec):
        self.fd = fd
        self.rec = rec

    def write(self, data: bytes):
        view = memoryview(data)
        last = time.monotonic()
        pause = 0.0001
        while len(view):
            try:
                n = os.write(self.fd, view)
            except BlockingIOError:
                rec = self.rec
                timeout = rec._timeout if rec is not None else 5.0
                if (rec is not None and rec._cut) or time.monotonic() - last >= timeout:
                    raise TimeoutError("no progress") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.01)
                continue
            except InterruptedError:
                continue
            if n <= 0:
                raise OSError("the file took no bytes")
            view = view[n:]
            last = time.monotonic()
            pause = 0.0001

    def close(self):
        os.close(self.fd)


class Recorder:
    """Streams boxes to the debugger or a stream file; see the module's documentation.

    Make one with Recorder.connect, Recorder.open_file, Recorder.connect_or_file or
    Recorder.to_writer; use it as a context manager, or call close()."""

    def __init__(self, sink, target: str, engine: str, dimensions: int, dt: float,
                 units: str = "m", buffer_bytes: int = 64 << 20, exact: bool = False,
                 timeout: float = 5.0, sock=None, fallback=None):
        """Starts the writer thread on `sink` (an object with write(bytes) and flush()).
        Prefer the class methods. Raises ValueError on a bad handshake or option."""
        _check_options(dimensions, dt, buffer_bytes, timeout)
        engine_b, units_b = _cut(engine), _cut(units)
        self._target = target
        self.dimensions = dimensions
        self._box = struct.Struct("<I4f" if dimensions == 2 else "<I6f")
        self._buffer_bytes = int(buffer_bytes)
        self._exact = bool(exact)
        self._timeout = float(timeout)
        self._sock = sock
        self._fallback_path = fallback
        self._cond = threading.Condition()
        self._frames = collections.deque()
        self._queued = 0
        self._closing = False
        self._done = False
        self._error = None
        self._bytes_sent = 0
        self._steps_lost = 0
        self._steps_refused = 0
        self._writing_step = False
        self._cut = False
        self._keyframe_wanted = False
        self._refused = None
        self._ended = False
        self._fallback = None
        self._finished = False
        self._dead = False
        self._bye_steps = 0

        self._step = 0
        self._next_step = 0
        self._in_step = False
        self._started = False
        self._keyframe_next = True
        self._statics = {}
        self._prev = {}
        self._cur = {}
        self._steps = 0
        self._steps_queued = 0
        self._steps_dropped = 0
        self._rejected = 0
        self._parts_rejected = 0
        self._last_rejection = None
        self._fat = {}
        self._pairs = None
        self._tree = None
        self._timings = None
        self._last_sections = {}

        body = (struct.pack("<BHBBf", _HELLO, VERSION, dimensions, 0, dt)
                + struct.pack("<H", len(engine_b)) + engine_b
                + struct.pack("<H", len(units_b)) + units_b)
        self._thread = threading.Thread(target=self._write_frames, args=(sink,),
                                        name="aabb-recorder", daemon=True)
        self._thread.start()
        self._queue(MAGIC + struct.pack("<I", len(body)) + body, _HEADER, True)
        if sock is not None:
            threading.Thread(target=self._read_refusal, args=(sock,),
                             name="aabb-recorder-refusal", daemon=True).start()

    @property
    def target(self) -> str:
        """Where the bytes go now: "socket HOST:PORT", "file PATH" or "writer"."""
        with self._cond:
            return self._target

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def connect(cls, host: str = "127.0.0.1", port: Optional[int] = None, *, engine: str,
                dimensions: int = 2, dt: float = 1 / 60, units: str = "m", **options):
        """Connects to a debugger at host:port (port: debugger_port()) and sends the
        handshake. Raises OSError when nothing listens. options: buffer_bytes, exact,
        timeout."""
        port = debugger_port() if port is None else port
        timeout = options.get("timeout", 5.0)
        _check_options(dimensions, dt, options.get("buffer_bytes", 1), timeout)
        if not _u32(port) or not 0 < port < 65536:
            raise ValueError(f"port {_show(port)} (1 to 65535)")
        if not isinstance(host, str):
            raise ValueError(f"host {_show(host)} (a string)")
        sock = socket.create_connection((host, port), timeout=timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(timeout)
            return cls(_SocketSink(sock), f"socket {host}:{port}", engine, dimensions, dt,
                       units, sock=sock, **options)
        except BaseException:
            sock.close()
            raise

    @classmethod
    def open_file(cls, path, *, engine: str, dimensions: int = 2, dt: float = 1 / 60,
                  units: str = "m", **options):
        """Writes a stream file at path (created or emptied), opened without waiting: a
        FIFO that no process reads raises OSError at once."""
        _check_options(dimensions, dt, options.get("buffer_bytes", 1),
                       options.get("timeout", 5.0))
        fd = _open_nowait(path)
        sink = _FileSink(fd, None)
        try:
            rec = cls(sink, f"file {path}", engine, dimensions, dt, units, **options)
        except BaseException:
            os.close(fd)
            raise
        sink.rec = rec
        return rec

    @classmethod
    def connect_or_file(cls, path, host: str = "127.0.0.1", port: Optional[int] = None, *,
                        engine: str, dimensions: int = 2, dt: float = 1 / 60,
                        units: str = "m", **options):
        """Connects to the debugger, or writes the stream file at path when none listens;
        `target` tells which. When the debugger refuses the stream later, or closes it
        before its end, the writer thread goes on in the file: a valid stream from the next
        step on, the steps lost in between counted dropped."""
        try:
            return cls.connect(host, port, engine=engine, dimensions=dimensions, dt=dt,
                               units=units, fallback=path, **options)
        except OSError:
            return cls.open_file(path, engine=engine, dimensions=dimensions, dt=dt,
                                 units=units, **options)

    @classmethod
    def to_writer(cls, writer, *, engine: str, dimensions: int = 2, dt: float = 1 / 60,
                  units: str = "m", **options):
        """Writes the stream to `writer` (write(bytes), and flush() if it has one)."""
        return cls(writer, "writer", engine, dimensions, dt, units, **options)

    # -- boxes and steps --------------------------------------------------------------------

    def _reject(self, why: str):
        self._rejected += 1
        self._last_rejection = why

    def _pack(self, id, min, max) -> Optional[bytes]:
        """The box's bytes, or None (counted) when it cannot go on the wire."""
        d = self.dimensions
        if not _u32(id):
            self._reject(f"box {_show(id)}: not a u32 id")
            return None
        id = _as_u32(id)
        try:
            if len(min) != d or len(max) != d:
                self._reject(f"box {_show(id)}: {len(min)} and {len(max)} coordinates in a {d}D stream")
                return None
            lo = [_num(v) for v in min]
            hi = [_num(v) for v in max]
            if not all(math.isfinite(v) for v in lo + hi):
                self._reject(f"box {_show(id)} is not finite")
                return None
            packed = self._box.pack(id, *lo, *hi)
        except (TypeError, ValueError, OverflowError, struct.error) as e:
            self._reject(f"box {_show(id)}: {str(e)[:100]}")
            return None
        f = self._box.unpack(packed)
        if any(f[1 + k] > f[1 + d + k] for k in range(d)):
            self._reject(f"box {_show(id)} has min > max")
            return None
        return packed

    @_never_raises(False)
    def static_box(self, id: int, min, max):
        """Adds a box that never moves (a wall, the ground); only before the first step."""
        if self._started:
            self._reject(f"static box {_show(id)} added after the first step")
            return
        packed = self._pack(id, min, max)
        if packed is None:
            return
        id = _as_u32(id)
        if id in self._statics:
            self._reject(f"static box {_show(id)} added twice")
            return
        self._statics[id] = packed

    @_never_raises(False)
    def begin_step(self):
        """Begins a step (ending the open one, if any)."""
        if self._in_step:
            self.end_step()
        if not self._started:
            self._started = True
            if self._statics:
                body = (struct.pack("<BI", _STATIC, len(self._statics))
                        + b"".join(self._statics.values()))
                if len(body) <= MAX_FRAME_BYTES:
                    self._queue(struct.pack("<I", len(body)) + body, _STATICS, True)
                else:
                    self._reject("the static boxes do not fit in a frame")
        self._in_step = True
        self._step = self._next_step
        self._next_step += 1
        self._cur = {}
        self._fat = {}
        self._pairs = None
        self._tree = None
        self._timings = None

    @_never_raises(False)
    def add_box(self, id: int, min, max):
        """Adds a box to the open step: min and max have `dimensions` numbers each."""
        if not self._in_step:
            self._reject(f"box {_show(id)} added outside a step")
            return
        if self._dead:
            return
        packed = self._pack(id, min, max)
        if packed is None:
            return
        id = _as_u32(id)
        if id in self._cur:
            self._reject(f"box {_show(id)} added twice in step {self._step}")
            return
        if id in self._statics:
            self._reject(f"box {_show(id)} has a static box's id")
            return
        self._cur[id] = packed

    # -- the engine's broad phase -----------------------------------------------------------

    def _reject_part(self, why: str):
        self._parts_rejected += 1
        self._last_rejection = why

    def _part_ok(self, what: str) -> bool:
        if not self._in_step:
            self._reject_part(f"{what} added outside a step")
            return False
        return not self._dead

    def _corners(self, what: str, min, max) -> Optional[bytes]:
        """The corners' bytes (min then max, float32), or None (counted) when bad."""
        d = self.dimensions
        try:
            if len(min) != d or len(max) != d:
                self._reject_part(f"{what}: not {d} coordinates")
                return None
            packed = struct.pack(f"<{2 * d}f", *[_num(v) for v in min],
                                 *[_num(v) for v in max])
        except (TypeError, ValueError, OverflowError, struct.error) as e:
            self._reject_part(f"{what}: {str(e)[:100]}")
            return None
        f = struct.unpack(f"<{2 * d}f", packed)
        if not all(math.isfinite(v) for v in f) or any(f[k] > f[d + k] for k in range(d)):
            self._reject_part(f"{what} is not finite or has min > max")
            return None
        return packed

    @_never_raises(True)
    def fat_box(self, id: int, min, max):
        """Adds the engine's fat box of the box `id` (a box of this step, moving or static)."""
        if not self._part_ok("a fat box"):
            return
        if not _u32(id):
            self._reject_part(f"fat box {_show(id)}: not a u32 id")
            return
        id = _as_u32(id)
        packed = self._corners(f"fat box {_show(id)}", min, max)
        if packed is None:
            return
        if id in self._fat:
            self._reject_part(f"fat box {_show(id)} added twice in step {self._step}")
            return
        try:
            self._fat[id] = struct.pack("<I", id) + packed
        except struct.error as e:
            self._reject_part(f"fat box {_show(id)}: {e}")

    @_never_raises(True)
    def begin_pairs(self):
        """Says that this step sends its candidate pairs, even if pair() is not called."""
        if self._part_ok("the pairs") and self._pairs is None:
            self._pairs = set()

    @_never_raises(True)
    def pair(self, a: int, b: int):
        """Adds one of the engine's candidate pairs, in either order."""
        if not self._part_ok("a pair"):
            return
        a2, b2 = _as_u32(a), _as_u32(b)
        if a2 is None or b2 is None or a2 == b2:
            self._reject_part(f"pair ({_show(a)}, {_show(b)}): not two different u32 ids")
            return
        if self._pairs is None:
            self._pairs = set()
        key = (a2, b2) if a2 < b2 else (b2, a2)
        if key in self._pairs:
            self._reject_part(f"pair {key} added twice in step {self._step}")
            return
        self._pairs.add(key)

    def _tree_part(self) -> dict:
        if self._tree is None:
            self._tree = {"root": NONE_ID, "partial": False, "nodes": []}
        return self._tree

    @_never_raises(True)
    def tree_root(self, root: Optional[int]):
        """Sets the root of this step's tree (None: an empty tree)."""
        if not self._part_ok("the tree's root"):
            return
        if root is not None and not (_u32(root) and _as_u32(root) < NONE_ID):
            self._reject_part(f"tree root {_show(root)}: not a node id")
            return
        self._tree_part()["root"] = NONE_ID if root is None else _as_u32(root)

    @_never_raises(True)
    def tree_partial(self):
        """Says that this step's tree holds only some of the step's boxes."""
        if self._part_ok("the tree's flags"):
            self._tree_part()["partial"] = True

    @_never_raises(True)
    def tree_node(self, id: int, parent: Optional[int], min, max, *, children=None,
                  proxy: Optional[int] = None, height: int = 0, enlarged: bool = False):
        """Adds a node of this step's tree: a branch (children=(a, b), its node ids) or a
        leaf (proxy=the id of the box it holds); parent None for the root."""
        if not self._part_ok("a tree node"):
            return
        if not _u32(id):
            self._reject_part(f"tree node {_show(id)}: not a u32 id")
            return
        packed = self._corners(f"tree node {_show(id)}", min, max)
        if packed is None:
            return
        if (children is None) == (proxy is None):
            self._reject_part(f"tree node {_show(id)}: give children or proxy, not both")
            return
        flags = (2 if children is None else 0) | (1 if enlarged else 0)
        try:
            first, second = (proxy, NONE_ID) if children is None else children
            if id == NONE_ID:
                raise ValueError(f"the id {NONE_ID} is none")
            head = struct.pack("<IIIIIB", id, NONE_ID if parent is None else parent, first,
                               second, height, flags)
        except (TypeError, ValueError, OverflowError, struct.error) as e:
            self._reject_part(f"tree node {_show(id)}: {type(e).__name__}")
            return
        self._tree_part()["nodes"].append(head + packed)

    @_never_raises(True)
    def timing(self, key: str, value: float):
        """Adds a timing or count of this step: key 1 to 32 bytes of a-z, 0-9 and _
        ("broad_phase_ns", "narrow_phase_ns", "pairs_tested", "reinserts", "margin", or your
        own), value finite; a key at most once a step, at most 64 a step."""
        if not self._part_ok("a timing"):
            return
        if self._timings is None:
            self._timings = {}
        ok_key = (isinstance(key, str) and 1 <= len(key) <= 32
                  and all(c in "abcdefghijklmnopqrstuvwxyz0123456789_" for c in key))
        try:
            value = _num(value)
        except (TypeError, ValueError, OverflowError):
            value = math.nan
        if not ok_key:
            self._reject_part(f"timing key {_show(key)} is not 1 to 32 bytes of a-z, 0-9, _")
        elif not math.isfinite(value):
            self._reject_part(f"timing {_show(key)} is {value}")
        elif key in self._timings:
            self._reject_part(f"timing {_show(key)} added twice in step {self._step}")
        elif len(self._timings) >= MAX_TIMINGS:
            self._reject_part(f"timing {_show(key)}: over {MAX_TIMINGS} timings")
        else:
            self._timings[key] = value

    def _sections(self, cur) -> list:
        """The open step's parts as (tag, bytes); fat boxes and pairs of ids that are not
        boxes of the step are left out (counted), the rest sorted by id."""
        def present(i):
            return i in cur or i in self._statics

        out = []
        if self._fat:
            kept = []
            for i in sorted(self._fat):
                if present(i):
                    kept.append(self._fat[i])
                else:
                    self._reject_part(f"fat box {i}: not a box of step {self._step}")
            body = struct.pack("<I", len(kept)) + b"".join(kept)
            out.append((_FAT_BOXES, body))
        if self._pairs is not None:
            kept = []
            for a, b in sorted(self._pairs):
                if present(a) and present(b):
                    kept.append(struct.pack("<II", a, b))
                else:
                    self._reject_part(f"pair ({a}, {b}): not boxes of step {self._step}")
            body = struct.pack("<I", len(kept)) + b"".join(kept)
            out.append((_PAIRS, body))
        if self._tree is not None:
            t = self._tree
            body = (struct.pack("<BII", 1 if t["partial"] else 0, t["root"], len(t["nodes"]))
                    + b"".join(t["nodes"]))
            out.append((_TREE, body))
        if self._timings:
            entries = [struct.pack("<B", len(k)) + k.encode("ascii") + struct.pack("<d", v)
                       for k, v in self._timings.items()]
            body = struct.pack("<B", len(entries)) + b"".join(entries)
            out.append((_TIMINGS, body))
        return out

    @_never_raises(False)
    def end_step(self) -> bool:
        """Ends the open step and sends it; False when it was dropped (the queue was full or
        the connection is gone; the next step sent is then a keyframe). Never raises."""
        if not self._in_step:
            return False
        self._in_step = False
        self._steps += 1
        if self._dead:
            self._steps_dropped += 1
            return False
        cur, prev = self._cur, self._prev
        with self._cond:
            if self._keyframe_wanted:
                # The writer changed target: the new one starts from a whole step.
                self._keyframe_wanted = False
                self._keyframe_next = True
        if self._keyframe_next:
            parts = [struct.pack("<BQBI", _STEP, self._step, _KEYFRAME, len(cur))]
            parts.extend(cur.values())
            parts.append(struct.pack("<II", 0, 0))
        else:
            appeared = [b for i, b in cur.items() if i not in prev]
            moved = [b for i, b in cur.items() if i in prev and prev[i] != b]
            gone = [i for i in prev if i not in cur]
            parts = [struct.pack("<BQBI", _STEP, self._step, 0, len(appeared))]
            parts.extend(appeared)
            parts.append(struct.pack("<I", len(moved)))
            parts.extend(moved)
            parts.append(struct.pack(f"<I{len(gone)}I", len(gone), *gone))
        # Each part whole, or empty when it is the same as in the last step sent.
        sections = dict(self._sections(cur))
        for tag, section in sections.items():
            same = not self._keyframe_next and self._last_sections.get(tag) == section
            parts.append(struct.pack("<BI", tag, 0) if same
                         else struct.pack("<BI", tag, len(section)) + section)
        body = b"".join(parts)
        self._prev = cur
        self._cur = {}
        if len(body) > MAX_FRAME_BYTES:
            self._last_rejection = f"step {self._step}: over the frame limit"
            sent = False
        else:
            sent = self._queue(struct.pack("<I", len(body)) + body,
                               _KEY if self._keyframe_next else _DELTA, False)
        if sent:
            self._steps_queued += 1
            self._keyframe_next = False
            self._last_sections = sections
        else:
            self._steps_dropped += 1
            self._keyframe_next = True
            self._last_sections = {}
        return sent

    # -- the queue and the writer -------------------------------------------------------------

    def _queue(self, frame: bytes, kind: int, force: bool) -> bool:
        n = len(frame)
        with self._cond:
            def full():
                return self._queued > 0 and self._queued + n > self._buffer_bytes
            if not force and self._exact:
                deadline = time.monotonic() + self._timeout
                while not self._done and full():
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._last_rejection = (f"step {self._step}: no room in the queue "
                                                f"within the timeout ({self._timeout} s)")
                        break
                    self._cond.wait(left)
            if self._done:
                self._dead = True
                return False
            if not force and full():
                return False
            self._queued += n
            self._frames.append((frame, kind))
            self._cond.notify_all()
            return True

    def _write_frames(self, sink):
        """The writer thread: writes queued frames until the queue closes or the sink fails;
        goes on in the fallback file when the debugger refuses the stream."""
        w = _Writer(self, sink)
        try:
            w.run()
        except Exception as e:  # noqa: BLE001 - the writer never dies silently
            with self._cond:
                if not self._cut:
                    self._steps_lost += sum(1 for f in self._frames if f[1] in (_DELTA, _KEY))
                    self._steps_lost += int(self._writing_step)
                    self._frames.clear()
                    self._queued = 0
                    self._error = f"the writer stopped: {type(e).__name__}: {_show(str(e))}"
                self._done = True
                self._cond.notify_all()
            self._close_sink(w.sink)

    def _read_refusal(self, sock):
        """A debugger writes only to refuse a stream ("AABB refused: REASON\n", then it
        closes): any byte, a close or a reset before the stream's end is told to the
        writer."""
        got = b""
        error = None
        try:
            r = sock.dup()
            r.settimeout(0.05)
        except OSError:
            return
        try:
            while True:
                try:
                    chunk = r.recv(256 - len(got))
                except socket.timeout:
                    # Past the BYE too: the writer waits a little for a late refusal.
                    with self._cond:
                        if self._done:
                            return
                    continue
                except OSError as e:
                    error = e
                    break
                if not chunk:
                    break
                got += chunk
                if b"\n" in got or len(got) >= 256:
                    break
        finally:
            r.close()
        if got.startswith(_REFUSED):
            line = got[len(_REFUSED):].split(b"\n")[0]
            reason = "".join(chr(c) if 0x20 <= c < 0x7F else "?" for c in line).strip()
            refusal = (reason, True, False)
        elif got:
            refusal = (f"it wrote {len(got)} bytes that are not a refusal line", True, False)
        elif error is not None:
            refusal = (f"reset the connection ({error})", False, True)
        else:
            refusal = ("closed the connection", False, False)
        # Also after the stream's end: the writer waits a little for it then.
        with self._cond:
            if not self._done:
                self._refused = refusal
                self._cond.notify_all()

    @staticmethod
    def _close_sink(sink):
        close = getattr(sink, "close", None)
        if close is not None:
            try:
                close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass

    # -- stats and closing --------------------------------------------------------------------

    def stats(self) -> Stats:
        """What the recorder did so far."""
        with self._cond:
            return Stats(
                steps=self._steps,
                steps_sent=max(self._steps_queued - self._steps_lost, 0),
                steps_dropped=self._steps_dropped + self._steps_lost,
                steps_refused=self._steps_refused,
                bytes_sent=self._bytes_sent,
                boxes_rejected=self._rejected,
                parts_rejected=self._parts_rejected,
                last_rejection=self._last_rejection,
                error=self._error,
                connected=not self._done,
                target=self._target,
                fallback=self._fallback,
            )

    def close(self) -> Stats:
        """Ends the open step, sends the end of the stream, waits for the writer at most
        `timeout` seconds (then cuts the socket or leaves the file, counting the steps not
        written as dropped) and returns the final counts. Later calls return the same
        counts. Never raises."""
        if self._finished:
            return self.stats()
        if self._in_step:
            self.end_step()
        self._finished = True
        self._bye_steps = self._steps
        self._queue(b"", _END, True)
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(self._timeout)
        with self._cond:
            if not self._done and self._ended:
                # All written; the writer only waits for a late refusal: stop it.
                self._cut = True
                self._done = True
                self._cond.notify_all()
            if not self._done:
                # A sink that stopped taking bytes: what it holds is lost.
                lost = (sum(1 for f in self._frames if f[1] in (_DELTA, _KEY))
                        + int(self._writing_step))
                self._steps_lost += lost
                self._frames.clear()
                self._queued = 0
                self._cut = True
                self._done = True
                self._error = (f"closing: {self._target} took nothing more within the timeout "
                               f"({self._timeout} s); {lost} steps not written were cut")
                self._cond.notify_all()
                if self._sock is not None:
                    try:
                        self._sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
        return self.stats()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            if not self._finished and self._thread.is_alive():
                self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass


class _Writer:
    """The writer thread's state: the sink, and what it needs to go on in the fallback
    file."""

    def __init__(self, rec, sink):
        self.rec = rec
        self.sink = sink
        self.name = rec._target
        self.fallback = rec._fallback_path
        self.header = None
        self.statics = None
        self.steps_here = 0
        self.need_keyframe = False
        # Every frame written to the debugger while they fit in the budget: a refusal then
        # replays them into the file and nothing is lost.
        self.retained = bytearray() if self.fallback is not None else None
        self.retain_budget = min(rec._buffer_bytes, _MAX_RETAINED)

    def on_socket(self) -> bool:
        return isinstance(self.sink, _SocketSink)

    def retain(self, frame: bytes):
        if self.retained is None or not self.on_socket():
            return
        if len(self.retained) + len(frame) <= self.retain_budget:
            self.retained += frame
        else:
            self.retained = None

    def after_the_end(self):
        """After the BYE: waits a little (this thread only) for the debugger to close (its
        end of a stream it took) or refuse (a fast engine can end before a refusal
        arrives); a refusal or a reset sends the stream to the file, with its BYE."""
        rec = self.rec
        deadline = time.monotonic() + min(rec._timeout, _REFUSAL_GRACE)
        with rec._cond:
            while rec._refused is None and not rec._cut:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                rec._cond.wait(left)
            verdict, rec._refused = rec._refused, None
        if verdict is None or not (verdict[1] or verdict[2]):
            return
        if not self.leave_socket(verdict[0], verdict[1]):
            self.stop(_HEADER)
            return
        try:
            self.write(b"", _END)
        except Exception as e:  # noqa: BLE001
            self.fail(_HEADER, e)
            return
        with rec._cond:
            rec._bytes_sent += 21

    def run(self):
        rec = self.rec
        while True:
            with rec._cond:
                while True:
                    if rec._cut:
                        return
                    # After the BYE, the debugger closing is the stream's end.
                    if rec._refused is not None and not rec._ended and self.on_socket():
                        item = ("refused", rec._refused)
                        rec._refused = None
                        break
                    if rec._frames:
                        item = rec._frames.popleft()
                        rec._writing_step = item[1] in (_DELTA, _KEY)
                        break
                    if rec._closing:
                        item = None
                        break
                    rec._cond.wait()
            if item is None:
                break
            if item[0] == "refused":
                reason, said, _ = item[1]
                # Without a fallback, a close shows as the write that fails; a refusal
                # line stops the stream at once.
                if (said or self.fallback is not None) and not self.leave_socket(reason, said):
                    self.stop(_HEADER)
                    return
                continue
            frame, kind = item
            try:
                written = self.write(frame, kind)
            except Exception as e:  # noqa: BLE001 - any failure of the sink
                if self.on_socket() and self.fallback is not None:
                    reason, said, _ = self.await_refusal()
                    if self.leave_socket(reason, said, e):
                        try:
                            written = self.write(frame, kind)
                        except Exception as e2:  # noqa: BLE001
                            self.fail(kind, e2)
                            return
                        self.written(frame, kind, written)
                        continue
                    self.stop(kind)
                    return
                with rec._cond:
                    refused = rec._refused
                if refused is not None and refused[1]:
                    with rec._cond:
                        rec._error = f"{self.name} refused the stream: {refused[0]}"
                    self.stop(kind)
                else:
                    self.fail(kind, e)
                return
            self.written(frame, kind, written)
            if kind == _END and self.on_socket() and self.fallback is not None:
                self.after_the_end()
        try:
            if hasattr(self.sink, "flush"):
                self.sink.flush()
            error = None
        except Exception as e:  # noqa: BLE001
            error = _describe(self.name, e)
        self.rec._close_sink(self.sink)
        with rec._cond:
            if error and not rec._error and not rec._cut:
                rec._error = error
            rec._done = True
            rec._cond.notify_all()

    def write(self, frame: bytes, kind: int) -> bool:
        """Writes one frame (a BYE encoded here); False when it was left out."""
        if kind in (_HEADER, _STATICS):
            self.sink.write(frame)
            self.retain(frame)
            if self.fallback is not None:
                if kind == _HEADER:
                    self.header = frame
                else:
                    self.statics = frame
        elif kind in (_DELTA, _KEY):
            if self.need_keyframe and kind == _DELTA:
                return False
            self.need_keyframe = False
            self.sink.write(frame)
            self.retain(frame)
        else:
            steps = self.rec._bye_steps
            self.sink.write(struct.pack("<IBQQ", 17, _BYE, self.steps_here,
                                        max(steps - self.steps_here, 0)))
        if hasattr(self.sink, "flush") and not self.rec._frames:
            self.sink.flush()
        return True

    def written(self, frame: bytes, kind: int, written: bool):
        rec = self.rec
        with rec._cond:
            rec._writing_step = False
            if rec._cut:
                return
            rec._queued -= len(frame)
            if written:
                rec._bytes_sent += 21 if kind == _END else len(frame)
                if kind in (_DELTA, _KEY):
                    self.steps_here += 1
                if kind == _END:
                    rec._ended = True
            elif kind in (_DELTA, _KEY):
                rec._steps_lost += 1
            rec._cond.notify_all()

    def await_refusal(self):
        """Waits (this thread only, a bounded time) for the reader's verdict."""
        rec = self.rec
        deadline = time.monotonic() + min(rec._timeout, 0.5)
        with rec._cond:
            while rec._refused is None and not rec._cut:
                left = deadline - time.monotonic()
                if left <= 0:
                    return ("closed the connection", False, False)
                rec._cond.wait(left)
            r = rec._refused or ("closed the connection", False, False)
            rec._refused = None
            return r

    def leave_socket(self, reason: str, said: bool, e=None) -> bool:
        """Leaves the debugger for the fallback file: its magic, HELLO and STATIC first,
        then the steps from the next keyframe. False when there is none or it cannot be
        opened (the error is set)."""
        rec = self.rec
        if said:
            why = f"{self.name} refused the stream: {reason}"
        elif e is not None:
            why = f"{self.name} closed the connection before the stream's end ({e})"
        else:
            why = f"{self.name} {reason} before the stream's end"
        path, self.fallback = self.fallback, None
        if path is None:
            with rec._cond:
                rec._error = why
            return False
        try:
            sink = _FileSink(_open_nowait(path), rec)
        except Exception as e2:  # noqa: BLE001
            with rec._cond:
                rec._error = f"{why}; the fallback file: {e2}"
            return False
        rec._close_sink(self.sink)
        self.sink = sink
        if self.retained is not None:
            # Everything written to the debugger is here: the file gets the stream from its
            # start and nothing is lost.
            stream, self.retained = bytes(self.retained), None
            with rec._cond:
                rec._bytes_sent = 0
                rec._target = f"file {path}"
                rec._fallback = f"{why}; the stream goes on in {path}"
            self.name = f"file {path}"
            self.header = self.statics = None
            try:
                sink.write(stream)
            except Exception as e3:  # noqa: BLE001
                with rec._cond:
                    rec._error = _describe(self.name, e3)
                    rec._steps_lost += self.steps_here
                return False
            with rec._cond:
                rec._bytes_sent += len(stream)
            return True
        with rec._cond:
            # What the debugger got is lost with it.
            rec._steps_lost += self.steps_here
            rec._steps_refused += self.steps_here
            rec._bytes_sent = 0
            rec._target = f"file {path}"
            rec._fallback = f"{why}; the stream goes on in {path}"
            rec._keyframe_wanted = True
        self.name = f"file {path}"
        self.steps_here = 0
        self.need_keyframe = True
        for frame in (self.header, self.statics):
            if frame is None:
                continue
            try:
                sink.write(frame)
            except Exception as e3:  # noqa: BLE001
                with rec._cond:
                    rec._error = _describe(self.name, e3)
                return False
            with rec._cond:
                rec._bytes_sent += len(frame)
        self.header = self.statics = None
        return True

    def fail(self, kind: int, e: Exception):
        with self.rec._cond:
            if not self.rec._cut:
                self.rec._error = _describe(self.name, e)
        self.stop(kind)

    def stop(self, kind: int):
        """Stops: the frame in hand and every queued step are lost."""
        rec = self.rec
        with rec._cond:
            rec._writing_step = False
            if not rec._cut:
                rec._steps_lost += (sum(1 for f in rec._frames if f[1] in (_DELTA, _KEY))
                                    + int(kind in (_DELTA, _KEY)))
                rec._frames.clear()
                rec._queued = 0
            rec._done = True
            rec._cond.notify_all()
        rec._close_sink(self.sink)


class _SocketSink:
    """A socket as the writer's sink, shut down for writing once the stream ends."""

    def __init__(self, sock):
        self.sock = sock

    def write(self, data: bytes):
        self.sock.sendall(data)

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.sock.close()


def _describe(target: str, e: Exception) -> str:
    if isinstance(e, BrokenPipeError) and target.startswith("file "):
        return f"writing to {target}: its reader went away ({e})"
    if isinstance(e, (socket.timeout, TimeoutError, BlockingIOError)):
        return f"writing to {target}: no progress within the timeout (it stopped reading)"
    if isinstance(e, (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
        return f"writing to {target}: the connection was closed ({e})"
    return f"writing to {target}: {e}"


__all__ = ["DEFAULT_PORT", "PORT_ENV", "Recorder", "Stats", "debugger_port"]
