"""The ratchet on ``Any`` in the public signatures (.ci/any_ratchet.py, issue 38): the
checkout's counts are within .ci/any-baseline.json, and the count sees what it must.

mypy itself runs in .ci/run (``python -m mypy``, configured in pyproject.toml).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

#: The checkout, found from this file (CI installs the package into site-packages).
CHECKOUT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("any_ratchet", CHECKOUT / ".ci" / "any_ratchet.py")
ratchet = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ratchet)


def test_no_module_has_more_any_than_its_baseline():
    baseline = json.loads(ratchet.BASELINE.read_text())
    above, _ = ratchet.compare(ratchet.count_package(), baseline)
    assert not above, f"(module, count, baseline): {above}; name the type instead of Any"


@pytest.mark.parametrize(("source", "expected"), [
    ("def f(x: Any) -> Any: ...", (1, 1)),
    ("def f(x: dict[str, Any], *a: Any, k: 'list[Any]', **kw: typing.Any) -> None: ...",
     (4, 0)),
    ("class C:\n    def __init__(self, x: Any) -> None: ...\n    def m(self) -> Any: ...",
     (1, 1)),
    ("def f(x: int, y: Literal['Any'] = 'Any') -> Iterator[int]: ...", (0, 0)),
    # private names are not the public API
    ("def _f(x: Any) -> Any: ...\nclass _C:\n    def m(self, x: Any) -> None: ...", (0, 0)),
    ("class C:\n    def _m(self, x: Any) -> None: ...", (0, 0)),
])
def test_the_count_sees_any_where_it_is(source, expected):
    assert ratchet.count_module(source) == expected


def test_the_ratchet_fails_on_one_more_any(tmp_path, capsys, monkeypatch):
    package = tmp_path / "privpub"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("def f(x: int) -> Any: ...\n")
    (package / "sub" / "mod.py").write_text("def g(x: Any) -> None: ...\n")
    baseline = tmp_path / "any-baseline.json"
    baseline.write_text(json.dumps({"privpub": 1, "privpub.sub.mod": 1}))
    monkeypatch.setattr(ratchet, "PACKAGE", package)
    monkeypatch.setattr(ratchet, "BASELINE", baseline)
    monkeypatch.setattr(ratchet, "CHECKOUT", tmp_path)
    assert ratchet.main([]) == 0

    (package / "sub" / "mod.py").write_text("def g(x: Any, y: Any) -> None: ...\n")
    assert ratchet.main([]) == 1
    assert "privpub.sub.mod: 2 > baseline 1" in capsys.readouterr().out
    assert ratchet.main(["--write"]) == 1, "the baseline is never raised"
    assert json.loads(baseline.read_text()) == {"privpub": 1, "privpub.sub.mod": 1}

    (package / "sub" / "mod.py").write_text("def g(x: int) -> None: ...\n")
    assert ratchet.main([]) == 0
    assert "python .ci/any_ratchet.py --write" in capsys.readouterr().out
    assert ratchet.main(["--write"]) == 0
    assert json.loads(baseline.read_text()) == {"privpub": 1}
