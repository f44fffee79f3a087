"""The API reference (mkdocs.yml, docs/reference/) documents every public name.

`.ci/run` builds the site with ``mkdocs build --strict``, which fails on a broken link,
a cross-reference to nothing or a docstring section it cannot read; what the build
cannot see is a public name that no page renders. Here: every name of ``privpub.__all__``
and of each public subpackage's ``__all__`` is rendered by a ``::: target`` directive of
a page in the nav (no mkdocs needed to check it).
"""

from __future__ import annotations

import importlib
import inspect
import re
import types
from pathlib import Path

import pytest

import privpub

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "docs" / "reference"
#: ``::: privpub.x`` and the indented options after it.
DIRECTIVE = re.compile(r"^::: ([\w.]+)[ \t]*\n((?:[ \t]+\S.*\n)*)", re.M)


def directives(text: str) -> list[tuple[str, bool]]:
    """(target, renders its members?) of each ``:::`` directive of a page."""
    return [(m.group(1), not re.search(r"^\s+members:\s*false\s*$", m.group(2), re.M))
            for m in DIRECTIVE.finditer(text)]


def rendered(target: str, members: bool) -> list[object]:
    """The objects a directive renders: the target, and with members a module's
    ``__all__`` but its submodules (or, without one, what the module itself defines)."""
    module_name, _, rest = target.partition(".")
    obj: object = importlib.import_module(module_name)
    for part in rest.split(".") if rest else []:
        obj = (importlib.import_module(f"{obj.__name__}.{part}")
               if isinstance(obj, types.ModuleType) and not hasattr(obj, part)
               else getattr(obj, part))
    found = [obj]
    if members and isinstance(obj, types.ModuleType):
        names = getattr(obj, "__all__", None) or [
            n for n, v in vars(obj).items() if not n.startswith("_")
            and getattr(v, "__module__", None) == obj.__name__
            and (inspect.isclass(v) or inspect.isfunction(v))]
        # a submodule in __all__ is not rendered with its parent (show_submodules: false)
        found += [v for v in (getattr(obj, n) for n in names)
                  if not isinstance(v, types.ModuleType)]
    return found


def documented(pages: dict[str, str]) -> list[object]:
    return [o for text in pages.values() for t, m in directives(text) for o in rendered(t, m)]


def undocumented(pages: dict[str, str]) -> list[str]:
    """Public names (``privpub.X``, ``privpub.sub.X``) that no page renders."""
    done = documented(pages)
    public = [("privpub", n) for n in privpub.__all__ if n != "__version__"]
    public += [(sub.__name__, n) for sub in vars(privpub).values()
               if isinstance(sub, types.ModuleType) and sub.__name__.startswith("privpub.")
               and not sub.__name__.split(".")[1].startswith("_")  # the extension is private
               for n in getattr(sub, "__all__", [])]
    return sorted(f"{mod}.{n}" for mod, n in public
                  if not any(getattr(importlib.import_module(mod), n) is o for o in done))


def reference_pages() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(PAGES.glob("*.md"))}


def test_every_public_name_is_on_a_reference_page():
    pages = reference_pages()
    assert len(documented(pages)) > 100  # the pages are read (a broken reader checks nothing)
    assert not undocumented(pages)


def test_every_reference_page_is_in_the_nav():
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    guides = sorted(p.name for p in (REPO / "docs").glob("*.md"))
    listed = set(re.findall(r":\s*((?:reference/)?[\w-]+\.md)\s*$", nav, re.M))
    missing = [g for g in guides if g not in listed]
    missing += [f"reference/{p}" for p in reference_pages() if f"reference/{p}" not in listed]
    assert not missing, missing


@pytest.mark.parametrize(("drop", "expected"), [
    ("::: privpub.Schema\n", ["privpub.Schema"]),
    ("::: privpub.graphs\n", ["privpub.LaplaceMechanism", "privpub.graphs.CQ"]),
    ("::: privpub.alphabeta.accounting\n", ["privpub.accounting",
                                             "privpub.alphabeta.accounting"]),
])
def test_the_check_sees_a_name_left_out(drop, expected):
    """Power: a page without one class, a subpackage or a submodule leaves its names out."""
    pages = reference_pages()
    name = next(n for n, text in pages.items() if drop in text)
    pages[name] = pages[name].replace(drop, "")
    missing = undocumented(pages)
    assert set(expected) <= set(missing), missing


def test_members_false_renders_the_target_alone():
    assert directives("::: privpub\n    options:\n      members: false\n\n::: privpub.col\n") == [
        ("privpub", False), ("privpub.col", True)]
