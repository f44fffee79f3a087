"""Every ``>>>`` example in privpub's docstrings runs and prints what it shows
(doctest), so an example cannot go stale as the library changes. The modules are
found by reading the source, so a new module's examples are run without a list
to keep. A warning an example raises fails it (pytest's filterwarnings): an example
that warns on purpose shows the warning."""

from __future__ import annotations

import doctest
import importlib
import io
import os
import re
from pathlib import Path

import pytest

import privpub

ROOT = Path(privpub.__file__).parent
MODULES = sorted(
    ".".join(path.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
    for path in ROOT.rglob("*.py") if ">>>" in path.read_text(encoding="utf-8"))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_the_examples_are_found():
    """A broken finder checks nothing: modules known to hold examples are listed."""
    assert {"privpub.domain.schema", "privpub.alphabeta.mechanism", "privpub.planning"} <= set(
        MODULES), MODULES
    assert len(MODULES) >= 15


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    module = importlib.import_module(name)
    tests = [t for t in doctest.DocTestFinder().find(module) if t.examples]
    shown = len(re.findall(r"(?m)^\s*>>>", Path(module.__file__).read_text(encoding="utf-8")))
    # an example doctest does not find (in a comment, a nested function's docstring) never runs
    assert sum(len(t.examples) for t in tests) == shown, \
        f"{name} shows {shown} '>>>' lines, doctest finds {sum(len(t.examples) for t in tests)}"
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples " \
                               f"failed{os.linesep}{out.getvalue()[-6000:]}"
