"""pytest's set-up for the recorder's tests: the module under test is the installed package
aabb_recorder when there is one (CI installs it in a fresh virtual environment first), else
the source tree's aabb_recorder.py beside this folder; `debugger` makes fake debuggers
(support.Debugger) and closes them after the test."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)

try:
    import aabb_recorder  # noqa: F401 - the installed package, when there is one
except ImportError:
    sys.path.insert(0, SOURCE)

from support import Debugger  # noqa: E402


@pytest.fixture
def debugger():
    """Makes fake debuggers and closes them after the test."""
    made = []

    def make(script=None, **kw):
        d = Debugger(script, **kw)
        made.append(d)
        return d

    yield make
    for d in made:
        d.close()
