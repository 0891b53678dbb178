"""The package as a user gets it: its version is the Rust crate's, the module under test is
the installed one where CI installed it, the README's example runs against a debugger, and
the pymunk example writes a stream that decodes."""

import os
import re
import subprocess
import sys

import aabb_recorder
from aabb_recorder import Recorder

import stream_format as fmt
from support import require

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
CRATE_TOML = os.path.join(PACKAGE, "..", "..", "crates", "aabb-recorder", "Cargo.toml")


def test_the_version_is_the_rust_crates():
    require(os.path.exists(CRATE_TOML), "not in the aabb-debugger's repository (no crate to "
                                        "compare the version with)")
    with open(CRATE_TOML, encoding="utf-8") as f:
        crate = re.search(r'^version = "([^"]+)"$', f.read(), re.M).group(1)
    assert aabb_recorder.__version__ == crate


def test_the_installed_package_is_the_one_under_test():
    """Under CI=true the tests run in a virtual environment where `pip install
    recorders/python` put the module; elsewhere they may run the source tree's."""
    source = os.path.realpath(os.path.join(PACKAGE, "aabb_recorder.py"))
    installed = os.path.realpath(aabb_recorder.__file__) != source
    require(installed, f"testing the source tree's module ({source}), not an installed one: "
                       "pip install recorders/python")
    from importlib import metadata

    assert metadata.version("aabb-recorder") == aabb_recorder.__version__
    meta = metadata.metadata("aabb-recorder")
    assert meta["License-Expression"] == "MIT OR Apache-2.0"
    # The standard library only: what it requires is the tests' extra alone.
    required = metadata.requires("aabb-recorder") or []
    assert [r for r in required if "extra ==" not in r] == []
    with open(source, "rb") as a, open(aabb_recorder.__file__, "rb") as b:
        assert a.read() == b.read(), "the installed module is not this tree's"


def readme_example() -> str:
    with open(os.path.join(PACKAGE, "README.md"), encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert len(blocks) == 1
    return blocks[0]


class Body:
    def __init__(self, id, x):
        self.id, self.min, self.max = id, (x, 0.0), (x + 1.0, 1.0)


def test_the_readme_example_streams_to_a_debugger(tmp_path, debugger, monkeypatch):
    d = debugger()
    monkeypatch.setenv("AABB_DEBUGGER_PORT", str(d.port))
    monkeypatch.chdir(tmp_path)
    exec(readme_example(), {"bodies": [Body(i, i * 2.0) for i in range(5)]})
    s = fmt.decode(d.join())
    assert (s.engine, s.dims) == ("my engine 1.0", 2)
    assert len(s.steps) == 600 and s.bye == (600, 0)
    assert [b[0] for b in s.steps[-1].boxes] == [0, 1, 2, 3, 4]
    assert not (tmp_path / "run.aabbstream").exists()


def test_the_readme_example_writes_the_file_when_no_debugger_listens(tmp_path, monkeypatch):
    from support import free_port

    monkeypatch.setenv("AABB_DEBUGGER_PORT", str(free_port()))
    monkeypatch.chdir(tmp_path)
    exec(readme_example(), {"bodies": [Body(1, 0.0)]})
    s = fmt.decode((tmp_path / "run.aabbstream").read_bytes())
    assert len(s.steps) == 600 and s.bye == (600, 0)


def have_pymunk() -> bool:
    try:
        import pymunk  # noqa: F401
    except ImportError:
        return False
    return True


def test_the_pymunk_example_writes_a_stream_that_decodes(tmp_path):
    require(have_pymunk(), "pymunk is not installed (pip install 'pymunk>=7,<8')")
    path = tmp_path / "pile.aabbstream"
    out = subprocess.run(
        [sys.executable, os.path.join(PACKAGE, "examples", "pymunk_pile.py"), str(path),
         "--file-only", "--steps", "120"],
        capture_output=True, text=True, timeout=60, check=True)
    data = path.read_bytes()
    assert out.stdout == (f"writing {path}\n120 steps, 40 bodies: 120 sent, 0 dropped, "
                          f"{len(data)} bytes\n")
    s = fmt.decode(data)
    assert s.engine.startswith("pymunk 7."), s.engine
    assert (s.dims, s.units, len(s.statics), len(s.steps)) == (2, "px", 3, 120)
    # One body poured every 3 steps, from step 0: ids 1 to 40 at the end.
    for k, u in enumerate(s.steps):
        assert len(u.boxes) == k // 3 + 1, f"step {k}"
    assert [b[0] for b in s.steps[-1].boxes] == list(range(1, 41))
    assert s.bye == (120, 0)


def test_the_module_says_what_it_exports():
    assert sorted(aabb_recorder.__all__) == ["DEFAULT_PORT", "PORT_ENV", "Recorder", "Stats",
                                             "debugger_port"]
    assert aabb_recorder.DEFAULT_PORT == 7616
    assert Recorder.__doc__
