"""privpub.core.optional: a feature whose optional package is missing names the
extra that installs it; a progress bar is shown only where tqdm is installed."""

from __future__ import annotations

import importlib.abc
import re
import sys
from pathlib import Path

import pytest

from privpub.core import optional
from privpub.core.optional import MissingExtraError, progress_bar, require


class Blocker(importlib.abc.MetaPathFinder):
    """Imports of these top-level packages fail as they do where they are not installed."""

    def __init__(self, *names: str) -> None:
        self.names = set(names)

    def find_spec(self, name, path, target=None):
        top = name.partition(".")[0]
        if top in self.names:
            raise ModuleNotFoundError(f"No module named {top!r}", name=top)
        return None


@pytest.fixture
def without(monkeypatch):
    def block(*names: str) -> None:
        monkeypatch.setattr(sys, "meta_path", [Blocker(*names), *sys.meta_path])
        for module in list(sys.modules):
            if module.partition(".")[0] in names:
                monkeypatch.delitem(sys.modules, module)
    return block


@pytest.mark.parametrize(("module", "extra"), [("matplotlib.pyplot", "report"), ("yaml", "yaml"),
                                               ("tqdm", "progress")])
def test_a_missing_package_names_its_extra(without, module, extra):
    without(module.partition(".")[0])
    with pytest.raises(MissingExtraError, match=rf"the feature needs .*pip install "
                                                rf"'privpub\[{extra}\]'") as info:
        require(module, "the feature")
    assert isinstance(info.value, ModuleNotFoundError)  # what `except ImportError` catches
    assert info.value.name == module.partition(".")[0]


def test_a_wider_extra_can_be_named(without):
    without("tqdm")
    with pytest.raises(MissingExtraError, match=r"privpub\[experiments\]"):
        require("tqdm", "the experiments", extra="experiments")


def test_an_installed_package_is_returned():
    import yaml

    assert require("yaml", "the feature") is yaml


def test_an_error_inside_an_installed_package_is_not_reworded(tmp_path, monkeypatch):
    """Only the optional package's own absence is an extra to install: a package that
    is there but fails to import (a missing dependency of its own) says so itself."""
    (tmp_path / "privpub_fake_optional.py").write_text("import privpub_fake_missing_dep\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(optional.EXTRAS, "privpub_fake_optional", ("fake", "fake"))
    with pytest.raises(ModuleNotFoundError) as info:
        require("privpub_fake_optional", "the feature")
    assert not isinstance(info.value, MissingExtraError)
    assert info.value.name == "privpub_fake_missing_dep"


def test_without_tqdm_a_bar_counts_and_shows_nothing(without, capsys):
    without("tqdm")
    with progress_bar(total=3, desc="work", unit="step") as bar:
        bar.update()
        bar.update(2)
    assert (bar.total, bar.n) == (3, 3)
    assert list(progress_bar(range(4), desc="work", unit="step")) == [0, 1, 2, 3]
    assert capsys.readouterr() == ("", "")


def test_with_tqdm_the_bar_is_tqdm():
    from tqdm import tqdm

    bar = progress_bar(range(2), desc="work", unit="step")
    assert isinstance(bar, tqdm)
    assert list(bar) == [0, 1]
    assert not isinstance(progress_bar(range(2), desc="work", unit="step", show=False), tqdm)


def extras_of(pyproject: str) -> dict[str, str]:
    """Each extra of [project.optional-dependencies] and the text of its list."""
    table = pyproject.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return dict(re.findall(r"(?m)^([\w-]+)\s*=\s*(\[[^\]]*\])", table))


def test_pyproject_extras_install_what_the_messages_name():
    """A message that says `pip install 'privpub[report]'` is true: that extra lists the
    distribution (and `[all]` installs the extra)."""
    extras = extras_of((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    for module, (distribution, extra) in optional.EXTRAS.items():
        assert f'"{distribution}>=' in extras.get(extra, ""), (module, extra, extras)
        assert re.search(rf"privpub\[[^\]]*\b{extra}\b", extras["all"]), (extra, extras["all"])


def test_the_extras_check_reads_the_lists():
    """Power: the reader finds each list, so a dropped distribution is seen."""
    text = '[project.optional-dependencies]\nreport = ["matplotlib>=3.8"]\nyaml = []\n\n[x]\n'
    assert extras_of(text) == {"report": '["matplotlib>=3.8"]', "yaml": "[]"}
    assert '"pyyaml>=' not in extras_of(text)["yaml"]
