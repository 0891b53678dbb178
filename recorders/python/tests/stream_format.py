"""The stream format (docs/formats.md, "Stream (the live link)"), written again from the
spec for the tests: encoders that build the bytes a frame must have, and a decoder that
checks a stream the way the debugger's reader does and gives each step's whole set of boxes.
It shares no code with aabb_recorder, so a test that compares the two checks the recorder
against the format, not against itself."""

import math
import struct
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

MAGIC = b"AABBSTRM"
HELLO, STATIC, STEP, BYE = 1, 2, 3, 4
KEYFRAME = 1
FAT_BOXES, PAIRS, TREE, TIMINGS = 1, 2, 3, 4
NONE = 0xFFFFFFFF
MAX_FRAME = 64 << 20


def f32(x: float) -> float:
    """x rounded to binary32, as the wire holds it."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


# -- encoders: the bytes each frame must be -----------------------------------------------


def frame(kind: int, body: bytes) -> bytes:
    """frame := length:u32 kind:u8 body (length counts the kind byte and the body)."""
    return struct.pack("<IB", 1 + len(body), kind) + body


def string(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack("<H", len(b)) + b


def box(id: int, lo, hi) -> bytes:
    return struct.pack(f"<I{len(lo)}f{len(hi)}f", id, *lo, *hi)


def hello(engine: str, dims: int, dt: float, units: str = "m") -> bytes:
    return frame(HELLO, struct.pack("<HBBf", 1, dims, 0, dt) + string(engine) + string(units))


def static(boxes) -> bytes:
    return frame(STATIC, struct.pack("<I", len(boxes)) + b"".join(box(*b) for b in boxes))


def section(tag: int, body: bytes) -> bytes:
    return struct.pack("<BI", tag, len(body)) + body


def step(n: int, *, keyframe: bool = False, appeared=(), moved=(), gone=(),
         sections: bytes = b"") -> bytes:
    body = struct.pack("<QBI", n, KEYFRAME if keyframe else 0, len(appeared))
    body += b"".join(box(*b) for b in appeared)
    body += struct.pack("<I", len(moved)) + b"".join(box(*b) for b in moved)
    body += struct.pack(f"<I{len(gone)}I", len(gone), *gone)
    return frame(STEP, body + sections)


def bye(sent: int, dropped: int) -> bytes:
    return frame(BYE, struct.pack("<QQ", sent, dropped))


def fat_boxes(boxes) -> bytes:
    return section(FAT_BOXES, struct.pack("<I", len(boxes)) + b"".join(box(*b) for b in boxes))


def pairs(ps) -> bytes:
    return section(PAIRS, struct.pack("<I", len(ps)) + b"".join(struct.pack("<II", *p) for p in ps))


def tree(root: int, nodes, partial: bool = False) -> bytes:
    """nodes: (id, parent, first, second, height, nflags, min, max)."""
    body = struct.pack("<BII", 1 if partial else 0, root, len(nodes))
    for id, parent, first, second, height, nflags, lo, hi in nodes:
        body += struct.pack("<IIIIIB", id, parent, first, second, height, nflags)
        body += struct.pack(f"<{len(lo)}f{len(hi)}f", *lo, *hi)
    return section(TREE, body)


def timings(entries) -> bytes:
    body = struct.pack("<B", len(entries))
    for k, v in entries:
        body += struct.pack("<B", len(k)) + k.encode("ascii") + struct.pack("<d", v)
    return section(TIMINGS, body)


def repeat(tag: int) -> bytes:
    """A section of length 0: the same as the previous STEP frame's."""
    return struct.pack("<BI", tag, 0)


# -- the decoder ----------------------------------------------------------------------------


class Refused(Exception):
    """The stream breaks the format."""


@dataclass
class Step:
    step: int
    keyframe: bool
    dropped_before: int
    """The steps numbered between the STEP frame before and this one (from 0 for the first):
    the steps the recorder dropped."""
    boxes: List[Tuple[int, Tuple[float, ...], Tuple[float, ...]]]
    """The whole set of moving boxes after the step, sorted by id."""
    appeared: int
    moved: int
    gone: int
    sections: Dict[int, bytes]
    """The sections as sent, by tag (b"" for a repeat)."""
    parts: Dict[int, object]
    """The engine's parts, decoded, repeats resolved."""


@dataclass
class Stream:
    engine: str = ""
    units: str = ""
    dims: int = 0
    dt: float = 0.0
    statics: List[tuple] = field(default_factory=list)
    steps: List[Step] = field(default_factory=list)
    bye: Optional[Tuple[int, int]] = None


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int, what: str) -> bytes:
        if self.pos + n > len(self.data):
            raise Refused(f"ends inside {what}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt: str, what: str):
        s = struct.Struct("<" + fmt)
        return s.unpack(self.take(s.size, what))

    def done(self) -> bool:
        return self.pos == len(self.data)


def frames(data: bytes) -> List[Tuple[int, bytes]]:
    """The stream's frames as (kind, body); every frame whole."""
    if data[:8] != MAGIC:
        raise Refused(f"no magic: {data[:8]!r}")
    out, pos = [], 8
    while pos < len(data):
        if pos + 4 > len(data):
            raise Refused("ends inside a frame's length")
        (length,) = struct.unpack_from("<I", data, pos)
        if not 1 <= length <= MAX_FRAME:
            raise Refused(f"a frame of length {length}")
        if pos + 4 + length > len(data):
            raise Refused("ends inside a frame")
        out.append((data[pos + 4], data[pos + 5:pos + 4 + length]))
        pos += 4 + length
    return out


def _box(r: _Reader, dims: int):
    id, *c = r.unpack(f"I{2 * dims}f", "a box")
    lo, hi = tuple(c[:dims]), tuple(c[dims:])
    if not all(math.isfinite(v) for v in c):
        raise Refused(f"a box with a non-finite coordinate (id {id})")
    if any(a > b for a, b in zip(lo, hi)):
        raise Refused(f"a box with min > max (id {id})")
    return id, lo, hi


def _part(tag: int, body: bytes, dims: int, proxies) -> object:
    r = _Reader(body)
    if tag == FAT_BOXES:
        (n,) = r.unpack("I", "its count")
        out = {}
        for _ in range(n):
            id, lo, hi = _box(r, dims)
            if id not in proxies or id in out:
                raise Refused(f"fat box {id}: not a proxy, or twice")
            out[id] = (lo, hi)
    elif tag == PAIRS:
        (n,) = r.unpack("I", "its count")
        out = []
        for _ in range(n):
            a, b = r.unpack("II", "a pair")
            if a == b or a not in proxies or b not in proxies:
                raise Refused(f"pair ({a}, {b})")
            out.append((min(a, b), max(a, b)))
        if len(set(out)) != len(out):
            raise Refused("a pair twice")
    elif tag == TREE:
        flags, root, n = r.unpack("BII", "the tree's head")
        if flags & ~1:
            raise Refused(f"tree flags {flags:#x}")
        nodes = []
        for _ in range(n):
            id, parent, first, second, height, nflags = r.unpack("IIIIIB", "a node")
            c = r.unpack(f"{2 * dims}f", "a node's box")
            if nflags & ~3 or id == NONE:
                raise Refused(f"node {id}")
            nodes.append((id, parent, first, second, height, nflags, c[:dims], c[dims:]))
        out = {"partial": bool(flags & 1), "root": root, "nodes": nodes}
    elif tag == TIMINGS:
        (n,) = r.unpack("B", "its count")
        out = {}
        for _ in range(n):
            (k,) = r.unpack("B", "a key's length")
            key = r.take(k, "a key").decode("ascii")
            (v,) = r.unpack("d", "a value")
            ok = 1 <= k <= 32 and all(ch in "abcdefghijklmnopqrstuvwxyz0123456789_" for ch in key)
            if not ok or not math.isfinite(v) or key in out:
                raise Refused(f"timing {key!r} = {v}")
            out[key] = v
    else:
        return body  # a tag this reader does not know: skipped
    if not r.done():
        raise Refused(f"section {tag}: bytes left over")
    return out


def decode(data: bytes) -> Stream:
    """Decodes a whole stream, checking it as the format says a reader does."""
    s = Stream()
    cur: Dict[int, tuple] = {}
    last_step = None
    last_parts: Dict[int, object] = {}
    for i, (kind, body) in enumerate(frames(data)):
        r = _Reader(body)
        if i == 0 and kind != HELLO:
            raise Refused("the first frame is not HELLO")
        if s.bye is not None:
            raise Refused("a frame after BYE")
        if kind == HELLO:
            if i != 0:
                raise Refused("a second HELLO")
            version, s.dims, flags, s.dt = r.unpack("HBBf", "HELLO")
            if version != 1 or s.dims not in (2, 3) or flags != 0:
                raise Refused(f"HELLO {version} {s.dims} {flags}")
            if not (math.isfinite(s.dt) and 0 < s.dt <= 1):
                raise Refused(f"dt {s.dt}")
            for name in ("engine", "units"):
                (n,) = r.unpack("H", name)
                if n > 255:
                    raise Refused(f"{name} of {n} bytes")
                setattr(s, name, r.take(n, name).decode("utf-8"))
        elif kind == STATIC:
            if s.statics or s.steps or i != 1:
                raise Refused("STATIC out of place")
            (n,) = r.unpack("I", "STATIC's count")
            s.statics = [_box(r, s.dims) for _ in range(n)]
            if len({b[0] for b in s.statics}) != n:
                raise Refused("an id twice in STATIC")
        elif kind == STEP:
            n, flags, na = r.unpack("QBI", "STEP's head")
            key = bool(flags & KEYFRAME)
            if flags & ~KEYFRAME:
                raise Refused(f"step flags {flags:#x}")
            if last_step is None and not key:
                raise Refused("the first step is not a keyframe")
            if last_step is not None and n <= last_step:
                raise Refused(f"step {n} after {last_step}")
            appeared = [_box(r, s.dims) for _ in range(na)]
            (nm,) = r.unpack("I", "moved's count")
            moved = [_box(r, s.dims) for _ in range(nm)]
            (ng,) = r.unpack("I", "gone's count")
            gone = list(r.unpack(f"{ng}I", "gone ids"))
            ids = [b[0] for b in appeared + moved] + gone
            if len(set(ids)) != len(ids):
                raise Refused(f"step {n}: an id twice")
            statics = {b[0] for b in s.statics}
            if statics & set(ids):
                raise Refused(f"step {n}: a moving box with a static id")
            if key:
                if moved or gone:
                    raise Refused("a keyframe with moved or gone boxes")
                cur = {}
            for b in appeared:
                if b[0] in cur:
                    raise Refused(f"appeared id {b[0]} is already present")
                cur[b[0]] = b
            for b in moved:
                if b[0] not in cur:
                    raise Refused(f"moved id {b[0]} is not present")
                cur[b[0]] = b
            for g in gone:
                if g not in cur:
                    raise Refused(f"gone id {g} is not present")
                del cur[g]
            proxies = set(cur) | statics
            sections, parts = {}, {}
            while not r.done():
                tag, length = r.unpack("BI", "a section's head")
                sb = r.take(length, "a section")
                if tag in sections:
                    raise Refused(f"section {tag} twice")
                sections[tag] = sb
                if length == 0 and tag in (FAT_BOXES, PAIRS, TREE, TIMINGS):
                    if tag not in last_parts:
                        raise Refused(f"section {tag}: a repeat of nothing")
                    parts[tag] = last_parts[tag]
                else:
                    parts[tag] = _part(tag, sb, s.dims, proxies)
            dropped = n if last_step is None else n - last_step - 1
            s.steps.append(Step(n, key, dropped, sorted(cur.values()), na, nm, ng, sections,
                                parts))
            last_step, last_parts = n, parts
        elif kind == BYE:
            s.bye = r.unpack("QQ", "BYE")
        elif kind < 0x80:
            raise Refused(f"a frame of unknown kind {kind:#04x}")
        if kind < 0x80 and not r.done():
            raise Refused(f"bytes left over after a frame of kind {kind}")
    if not s.engine and not s.dims:
        raise Refused("no HELLO")
    return s
