"""Helpers shared by the recorder's tests: `require`, which skips a test saying why, or,
under CI=true, fails it (nothing is skipped silently in CI); a fake debugger on a loopback
port; a writer that blocks until told; a time bound on a block."""

import os
import socket
import threading
import time

import pytest


def require(ok: bool, why: str):
    """Skips the test (saying why) when ok is false; fails it instead under CI=true."""
    __tracebackhide__ = True
    if ok:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why} (CI=true: a test that cannot run fails)")
    pytest.skip(why)


def free_port() -> int:
    """A loopback port where nothing listens (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Debugger:
    """A fake debugger on 127.0.0.1: accepts one connection and does what `script` says with
    it in a thread; `received` is every byte it read."""

    def __init__(self, script=None, rcvbuf=None):
        self.sock = socket.socket()
        if rcvbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.sock.settimeout(10)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.conn = None
        self.error = None
        self.script = script or Debugger.read_all
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            self.conn, _ = self.sock.accept()
            self.conn.settimeout(10)
            self.script(self)
        except Exception as e:  # noqa: BLE001 - said by join()
            self.error = e

    def read_all(self):
        """Reads until the engine closes."""
        while True:
            chunk = self.conn.recv(1 << 16)
            if not chunk:
                return
            self.received += chunk

    def read_steps(self, n: int):
        """Reads until n STEP frames have arrived whole."""
        while count_steps(self.received) < n:
            chunk = self.conn.recv(1 << 16)
            if not chunk:
                raise EOFError(f"closed after {count_steps(self.received)} steps")
            self.received += chunk

    def refuse(self, reason="another engine is live"):
        self.conn.sendall(f"AABB refused: {reason}\n".encode())
        self.conn.close()

    def join(self, timeout=10):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the fake debugger is still running"
        if self.error is not None:
            raise self.error
        return self.received

    def close(self):
        for s in (self.conn, self.sock):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass


def count_steps(data: bytes) -> int:
    """The STEP frames that arrived whole."""
    pos, n = 8, 0
    while pos + 5 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "little")
        if pos + 4 + length > len(data):
            break
        n += data[pos + 4] == 3
        pos += 4 + length
    return n


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


class Within:
    """Asserts that the block took at most `seconds`."""

    def __init__(self, seconds: float, what: str):
        self.seconds, self.what = seconds, what

    def __enter__(self):
        self.start = time.monotonic()
        return self

    def __exit__(self, *exc):
        self.took = time.monotonic() - self.start
        if exc[0] is None:
            assert self.took <= self.seconds, f"{self.what} took {self.took:.2f} s"
        return False
