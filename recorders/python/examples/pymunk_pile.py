"""pymunk_pile.py: pymunk (Chipmunk2D, whose broad phase is a dynamic AABB tree) pours a pile
of circles and boxes into a container, and streams every shape's own AABB (`shape.bb`) each
step to the aabb-debugger through aabb_recorder.py, or to a stream file when no debugger
listens.

    pip install pymunk            # pymunk 7
    python3 recorders/python/examples/pymunk_pile.py [FILE] [--port N] [--steps N]
                                                     [--bodies N] [--file-only] [--fast]

It connects to 127.0.0.1:PORT (--port, else AABB_DEBUGGER_PORT, else 7616) and runs at 60
steps a second; when nothing listens it writes FILE (default pymunk_pile.aabbstream) as fast
as it can, and says so. Deterministic: the same run gives the same boxes.
"""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import pymunk  # noqa: E402

from aabb_recorder import Recorder, debugger_port  # noqa: E402

WIDTH, HEIGHT = 600.0, 500.0
STATIC_IDS = 1_000_000


def build(space):
    """The container: a floor and two walls, as static segments."""
    walls = [((0, 0), (WIDTH, 0)), ((0, 0), (0, HEIGHT)), ((WIDTH, 0), (WIDTH, HEIGHT))]
    shapes = []
    for a, b in walls:
        seg = pymunk.Segment(space.static_body, a, b, 10.0)
        seg.friction = 0.8
        space.add(seg)
        shapes.append(seg)
    return shapes


def pour(space, rng, n):
    """One new body above the container: a circle or a box, of a random size."""
    mass = 1.0
    x = rng.uniform(60.0, WIDTH - 60.0)
    if n % 2 == 0:
        r = rng.uniform(6.0, 12.0)
        body = pymunk.Body(mass, pymunk.moment_for_circle(mass, 0, r))
        shape = pymunk.Circle(body, r)
    else:
        size = (rng.uniform(10.0, 22.0), rng.uniform(10.0, 22.0))
        body = pymunk.Body(mass, pymunk.moment_for_box(mass, size))
        shape = pymunk.Poly.create_box(body, size)
    body.position = (x, HEIGHT - 20.0)
    body.angle = rng.uniform(0.0, 3.14159)
    shape.friction = 0.6
    shape.elasticity = 0.1
    space.add(body, shape)
    return shape


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", default="pymunk_pile.aabbstream")
    ap.add_argument("--port", type=int, default=None)
    ap.add_argument("--steps", type=int, default=900)
    ap.add_argument("--bodies", type=int, default=300)
    ap.add_argument("--file-only", action="store_true")
    ap.add_argument("--fast", action="store_true")
    args = ap.parse_args()

    port = args.port if args.port is not None else debugger_port()
    engine = f"pymunk {pymunk.version} (Chipmunk2D)"
    hello = dict(engine=engine, dimensions=2, dt=1 / 60, units="px")
    rec = None
    if not args.file_only:
        try:
            rec = Recorder.connect("127.0.0.1", port, **hello)
            print(f"streaming to the debugger at 127.0.0.1:{port}")
        except OSError as e:
            print(f"no debugger listens on 127.0.0.1:{port} ({e.strerror or e}); "
                  f"writing {args.file}")
    if rec is None:
        rec = Recorder.open_file(args.file, **hello)
        if args.file_only:
            print(f"writing {args.file}")
    live = rec.target.startswith("socket") and not args.fast

    space = pymunk.Space()
    space.gravity = (0.0, -900.0)
    rng = random.Random(7)
    with rec:
        for k, seg in enumerate(build(space)):
            bb = seg.bb
            rec.static_box(STATIC_IDS + k, (bb.left, bb.bottom), (bb.right, bb.top))
        shapes = []
        for step in range(args.steps):
            if step % 3 == 0 and len(shapes) < args.bodies:
                shapes.append(pour(space, rng, len(shapes)))
            t = time.monotonic()
            space.step(1 / 60)
            rec.begin_step()
            # A shape's id is its place in the pouring order, from 1: stable over its life.
            for k, shape in enumerate(shapes):
                bb = shape.bb
                rec.add_box(k + 1, (bb.left, bb.bottom), (bb.right, bb.top))
            rec.end_step()
            if live:
                time.sleep(max(0.0, 1 / 60 - (time.monotonic() - t)))
    st = rec.stats()
    print(f"{st.steps} steps, {len(shapes)} bodies: {st.steps_sent} sent, "
          f"{st.steps_dropped} dropped, {st.bytes_sent} bytes"
          + (f"; {st.error}" if st.error else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
