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
a keyframe (the debugger shows the gap), or, with exact=True, end_step waits for room. A
debugger that closes, or takes nothing for `timeout` seconds, ends the connection: stats()
says why and later steps are counted dropped. NaN or infinite boxes, min > max, ids added
twice in a step and moving boxes with a static box's id are left out and counted.

The engine's own broad phase may go with each step (optional, between begin_step and
end_step; docs/formats.md, "The engine's broad phase"): fat_box (one per box, by the box's
id), pair (candidate pairs, either order: sent once each, sorted, lower id first; begin_pairs
when there are none), tree_root / tree_node (the tree), timing (timings and counts by key).
Fat boxes and pairs of ids that are not boxes of the step, repeats, NaN and bad keys are
left out and counted in parts_rejected.

The format is docs/formats.md ("Stream") of the aabb-debugger. License: MIT OR Apache-2.0.
"""

import collections
import math
import os
import socket
import struct
import threading
from dataclasses import dataclass
from typing import Optional

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
    """Steps handed to the writer and not lost by it."""
    steps_dropped: int = 0
    """Steps not sent: the queue was full, or the socket or file failed."""
    bytes_sent: int = 0
    """Bytes written to the socket or file."""
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


def _cut(s: str) -> bytes:
    """s in UTF-8, cut to 255 bytes at a character boundary."""
    b = s.encode("utf-8")
    if len(b) <= 255:
        return b
    return b[:255].decode("utf-8", "ignore").encode("utf-8")


class Recorder:
    """Streams boxes to the debugger or a stream file; see the module's documentation.

    Make one with Recorder.connect, Recorder.open_file, Recorder.connect_or_file or
    Recorder.to_writer; use it as a context manager, or call close()."""

    def __init__(self, sink, target: str, engine: str, dimensions: int, dt: float,
                 units: str = "m", buffer_bytes: int = 64 << 20, exact: bool = False,
                 timeout: float = 5.0, sock=None):
        """Starts the writer thread on `sink` (an object with write(bytes) and flush()).
        Prefer the class methods."""
        if dimensions not in (2, 3):
            raise ValueError(f"{dimensions} dimensions (a stream is 2D or 3D)")
        if not (math.isfinite(dt) and 0.0 < dt <= 1.0):
            raise ValueError(f"dt {dt} s (it must be finite, > 0 and <= 1)")
        self.target = target
        """Where the bytes go: "socket HOST:PORT", "file PATH" or "writer"."""
        self.dimensions = dimensions
        self._box = struct.Struct("<I4f" if dimensions == 2 else "<I6f")
        self._buffer_bytes = buffer_bytes
        self._exact = exact
        self._timeout = timeout
        self._sock = sock
        self._cond = threading.Condition()
        self._frames = collections.deque()
        self._queued = 0
        self._closing = False
        self._done = False
        self._error = None
        self._bytes_sent = 0
        self._steps_lost = 0
        self._finished = False
        self._dead = False

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

        engine_b, units_b = _cut(engine), _cut(units)
        body = (struct.pack("<BHBBf", _HELLO, VERSION, dimensions, 0, dt)
                + struct.pack("<H", len(engine_b)) + engine_b
                + struct.pack("<H", len(units_b)) + units_b)
        self._thread = threading.Thread(target=self._write_frames, args=(sink,),
                                        name="aabb-recorder", daemon=True)
        self._thread.start()
        self._queue(MAGIC + struct.pack("<I", len(body)) + body, False, True)

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def connect(cls, host: str = "127.0.0.1", port: Optional[int] = None, *, engine: str,
                dimensions: int = 2, dt: float = 1 / 60, units: str = "m", **options):
        """Connects to a debugger at host:port (port: debugger_port()) and sends the
        handshake. Raises OSError when nothing listens. options: buffer_bytes, exact,
        timeout."""
        port = debugger_port() if port is None else port
        timeout = options.get("timeout", 5.0)
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
        """Writes a stream file at path (created or emptied)."""
        f = open(path, "wb")
        try:
            return cls(f, f"file {path}", engine, dimensions, dt, units, **options)
        except BaseException:
            f.close()
            raise

    @classmethod
    def connect_or_file(cls, path, host: str = "127.0.0.1", port: Optional[int] = None, *,
                        engine: str, dimensions: int = 2, dt: float = 1 / 60,
                        units: str = "m", **options):
        """Connects to the debugger, or writes the stream file at path when none listens;
        `target` tells which."""
        try:
            return cls.connect(host, port, engine=engine, dimensions=dimensions, dt=dt,
                               units=units, **options)
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
        try:
            if len(min) != d or len(max) != d:
                self._reject(f"box {id}: {len(min)} and {len(max)} coordinates in a {d}D stream")
                return None
            lo = [float(v) for v in min]
            hi = [float(v) for v in max]
            if not all(math.isfinite(v) for v in lo + hi):
                self._reject(f"box {id} is not finite")
                return None
            packed = self._box.pack(id, *lo, *hi)
        except (TypeError, ValueError, OverflowError, struct.error) as e:
            self._reject(f"box {id!r}: {e}")
            return None
        f = self._box.unpack(packed)
        if any(f[1 + k] > f[1 + d + k] for k in range(d)):
            self._reject(f"box {id} has min > max")
            return None
        return packed

    def static_box(self, id: int, min, max):
        """Adds a box that never moves (a wall, the ground); only before the first step."""
        if self._started:
            self._reject(f"static box {id} added after the first step")
            return
        packed = self._pack(id, min, max)
        if packed is None:
            return
        if id in self._statics:
            self._reject(f"static box {id} added twice")
            return
        self._statics[id] = packed

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
                    self._queue(struct.pack("<I", len(body)) + body, False, True)
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

    def add_box(self, id: int, min, max):
        """Adds a box to the open step: min and max have `dimensions` numbers each."""
        if not self._in_step:
            self._reject(f"box {id} added outside a step")
            return
        if self._dead:
            return
        packed = self._pack(id, min, max)
        if packed is None:
            return
        if id in self._cur:
            self._reject(f"box {id} added twice in step {self._step}")
            return
        if id in self._statics:
            self._reject(f"box {id} has a static box's id")
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
            packed = struct.pack(f"<{2 * d}f", *[float(v) for v in min],
                                 *[float(v) for v in max])
        except (TypeError, ValueError, OverflowError, struct.error) as e:
            self._reject_part(f"{what}: {e}")
            return None
        f = struct.unpack(f"<{2 * d}f", packed)
        if not all(math.isfinite(v) for v in f) or any(f[k] > f[d + k] for k in range(d)):
            self._reject_part(f"{what} is not finite or has min > max")
            return None
        return packed

    def fat_box(self, id: int, min, max):
        """Adds the engine's fat box of the box `id` (a box of this step, moving or static)."""
        if not self._part_ok("a fat box"):
            return
        packed = self._corners(f"fat box {id}", min, max)
        if packed is None:
            return
        if id in self._fat:
            self._reject_part(f"fat box {id} added twice in step {self._step}")
            return
        try:
            self._fat[id] = struct.pack("<I", id) + packed
        except struct.error as e:
            self._reject_part(f"fat box {id!r}: {e}")

    def begin_pairs(self):
        """Says that this step sends its candidate pairs, even if pair() is not called."""
        if self._part_ok("the pairs") and self._pairs is None:
            self._pairs = set()

    def pair(self, a: int, b: int):
        """Adds one of the engine's candidate pairs, in either order."""
        if not self._part_ok("a pair"):
            return
        if not (isinstance(a, int) and isinstance(b, int) and 0 <= a < NONE_ID + 1
                and 0 <= b < NONE_ID + 1) or a == b:
            self._reject_part(f"pair ({a!r}, {b!r}): not two different u32 ids")
            return
        if self._pairs is None:
            self._pairs = set()
        key = (a, b) if a < b else (b, a)
        if key in self._pairs:
            self._reject_part(f"pair {key} added twice in step {self._step}")
            return
        self._pairs.add(key)

    def _tree_part(self) -> dict:
        if self._tree is None:
            self._tree = {"root": NONE_ID, "partial": False, "nodes": []}
        return self._tree

    def tree_root(self, root: Optional[int]):
        """Sets the root of this step's tree (None: an empty tree)."""
        if not self._part_ok("the tree's root"):
            return
        if root is not None and not (isinstance(root, int) and 0 <= root < NONE_ID):
            self._reject_part(f"tree root {root!r}: not a node id")
            return
        self._tree_part()["root"] = NONE_ID if root is None else root

    def tree_partial(self):
        """Says that this step's tree holds only some of the step's boxes."""
        if self._part_ok("the tree's flags"):
            self._tree_part()["partial"] = True

    def tree_node(self, id: int, parent: Optional[int], min, max, *, children=None,
                  proxy: Optional[int] = None, height: int = 0, enlarged: bool = False):
        """Adds a node of this step's tree: a branch (children=(a, b), its node ids) or a
        leaf (proxy=the id of the box it holds); parent None for the root."""
        if not self._part_ok("a tree node"):
            return
        packed = self._corners(f"tree node {id}", min, max)
        if packed is None:
            return
        if (children is None) == (proxy is None):
            self._reject_part(f"tree node {id}: give children or proxy, not both")
            return
        flags = (2 if children is None else 0) | (1 if enlarged else 0)
        try:
            first, second = (proxy, NONE_ID) if children is None else children
            if id == NONE_ID:
                raise ValueError(f"the id {NONE_ID} is none")
            head = struct.pack("<IIIIIB", id, NONE_ID if parent is None else parent, first,
                               second, height, flags)
        except (TypeError, ValueError, struct.error) as e:
            self._reject_part(f"tree node {id!r}: {e}")
            return
        self._tree_part()["nodes"].append(head + packed)

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
            value = float(value)
        except (TypeError, ValueError):
            value = math.nan
        if not ok_key:
            self._reject_part(f"timing key {key!r} is not 1 to 32 bytes of a-z, 0-9, _")
        elif not math.isfinite(value):
            self._reject_part(f"timing {key} is {value}")
        elif key in self._timings:
            self._reject_part(f"timing {key} added twice in step {self._step}")
        elif len(self._timings) >= MAX_TIMINGS:
            self._reject_part(f"timing {key}: over {MAX_TIMINGS} timings")
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
            sent = self._queue(struct.pack("<I", len(body)) + body, True, False)
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

    def _queue(self, frame: bytes, is_step: bool, force: bool) -> bool:
        n = len(frame)
        with self._cond:
            def full():
                return self._queued > 0 and self._queued + n > self._buffer_bytes
            if not force and self._exact:
                while not self._done and full():
                    self._cond.wait()
            if self._done:
                self._dead = True
                return False
            if not force and full():
                return False
            self._queued += n
            self._frames.append((frame, is_step))
            self._cond.notify_all()
            return True

    def _write_frames(self, sink):
        error = None
        while True:
            with self._cond:
                while not self._frames and not self._closing:
                    self._cond.wait()
                if not self._frames:
                    break
                frame, is_step = self._frames.popleft()
            try:
                sink.write(frame)
                if not self._frames and hasattr(sink, "flush"):
                    sink.flush()
            except Exception as e:  # noqa: BLE001 - any failure of the sink ends the stream
                with self._cond:
                    self._steps_lost += sum(1 for f in self._frames if f[1]) + int(is_step)
                    self._frames.clear()
                    self._queued = 0
                    self._error = _describe(self.target, e)
                    self._done = True
                    self._cond.notify_all()
                self._close_sink(sink)
                return
            with self._cond:
                self._queued -= len(frame)
                self._bytes_sent += len(frame)
                self._cond.notify_all()
        try:
            if hasattr(sink, "flush"):
                sink.flush()
        except Exception as e:  # noqa: BLE001
            error = _describe(self.target, e)
        self._close_sink(sink)
        with self._cond:
            if error and not self._error:
                self._error = error
            self._done = True
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
                steps_sent=self._steps_queued - self._steps_lost,
                steps_dropped=self._steps_dropped + self._steps_lost,
                bytes_sent=self._bytes_sent,
                boxes_rejected=self._rejected,
                parts_rejected=self._parts_rejected,
                last_rejection=self._last_rejection,
                error=self._error,
                connected=not self._done,
            )

    def close(self) -> Stats:
        """Ends the open step, sends the end of the stream, waits for the writer (at most
        `timeout` seconds for a socket, then cuts it) and returns the final counts. Later
        calls return the same counts."""
        if self._finished:
            return self.stats()
        if self._in_step:
            self.end_step()
        self._finished = True
        s = self.stats()
        self._queue(struct.pack("<IBQQ", 17, _BYE, s.steps_sent, s.steps_dropped), False, True)
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(self._timeout if self._sock is not None else None)
        if self._thread.is_alive() and self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._thread.join()
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
    if isinstance(e, (socket.timeout, TimeoutError, BlockingIOError)):
        return f"writing to {target}: no progress within the timeout (it stopped reading)"
    if isinstance(e, (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
        return f"writing to {target}: the connection was closed ({e})"
    return f"writing to {target}: {e}"


__all__ = ["DEFAULT_PORT", "PORT_ENV", "Recorder", "Stats", "debugger_port"]
