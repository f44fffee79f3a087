"""Optional dependencies: the core install (``pip install privpub``) publishes and
estimates; the release card's figures, YAML schema files, progress bars and the
papers' experiments each need a package that an extra of privpub brings. A
feature whose package is missing says which extra to install, instead of a bare
``ModuleNotFoundError`` from deep inside the library."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from types import ModuleType
from typing import Any

#: module → (distribution that provides it, the privpub extra that installs it);
#: pyproject.toml's [project.optional-dependencies] lists the same (tests/core/test_optional.py).
EXTRAS = {
    "matplotlib": ("matplotlib", "report"),
    "yaml": ("pyyaml", "yaml"),
    "tqdm": ("tqdm", "progress"),
    "statsmodels": ("statsmodels", "datasets"),
    "opendp": ("opendp", "yardstick"),
}


class MissingExtraError(ModuleNotFoundError):
    """A feature needs a package that the core install leaves out; the message
    names the extra of privpub that brings it (the CLI prints it as one line)."""


def require(module: str, feature: str, extra: str | None = None) -> ModuleType:
    """``module`` imported, or a ModuleNotFoundError saying that ``feature`` needs
    it and which extra installs it (``pip install 'privpub[report]'``; ``extra``
    names a wider one, such as ``experiments``). Only the optional package's own
    absence is reworded: an import error from inside an installed package
    propagates as it is."""
    top = module.partition(".")[0]
    distribution, default = EXTRAS[top]
    extra = extra or default
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != top:
            raise
        raise MissingExtraError(
            f"{feature} needs {distribution}, which the core install leaves out: "
            f"pip install 'privpub[{extra}]' (or 'privpub[all]')", name=top) from None


class _NoBar:
    """A progress bar that shows nothing, with the parts of tqdm's that privpub uses."""

    def __init__(self, iterable: Iterable | None, total: int | None) -> None:
        self.iterable, self.total, self.n = iterable, total, 0

    def __iter__(self) -> Any:
        return iter(self.iterable if self.iterable is not None else ())

    def update(self, n: int = 1) -> None:
        self.n += n

    def close(self) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_bar(iterable: Iterable | None = None, *, desc: str, unit: str,
                 total: int | None = None, show: bool = True) -> Any:
    """A tqdm bar on stderr (silent when stderr is not a terminal) where tqdm is
    installed (``privpub[progress]``), else one that shows nothing: a bar never
    changes a result, so its absence is no error. Iterate it, or ``update`` it."""
    if show:
        try:
            from tqdm import tqdm
        except ModuleNotFoundError as exc:
            if exc.name != "tqdm":
                raise
        else:
            return tqdm(iterable, desc=desc, unit=unit, total=total, disable=None,
                        file=sys.stderr)
    return _NoBar(iterable, total)
