"""The stubs in privpub/_core/ describe exactly what the binary exports: per
submodule the same public names, each function's parameters (names, kinds,
defaults) as its ``__text_signature__`` gives them, each class's bases and each
constant's type. (Which submodules there are, and that each binding file
registers its own, is tests/test_layout.py's mirror rule.)"""

from __future__ import annotations

import ast
import importlib
import inspect
import shutil
import types
from pathlib import Path

import pytest

import privpub
from privpub import _core

STUBS = Path(privpub.__file__).parent / "_core"
SUBMODULES = sorted(name for name, value in vars(_core).items()
                    if isinstance(value, types.ModuleType))


def stubbed(path: Path) -> dict[str, ast.stmt]:
    """The public top-level names of a stub file: functions, classes and
    annotated constants (``_``-names are the stub's own type aliases)."""
    found: dict[str, ast.stmt] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            name = node.name
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
        else:
            continue
        if not name.startswith("_"):
            found[name] = node
    return found


def stub_parameters(fn: ast.FunctionDef) -> list[tuple[str, str, str | None]]:
    """(name, kind, default as source) of each parameter of a stubbed function."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + a.defaults
    found = [(p.arg, "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD",
              None if d is None else ast.unparse(d))
             for i, (p, d) in enumerate(zip(positional, defaults, strict=True))]
    if a.vararg:
        found.append((a.vararg.arg, "VAR_POSITIONAL", None))
    found += [(p.arg, "KEYWORD_ONLY", None if d is None else ast.unparse(d))
              for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    if a.kwarg:
        found.append((a.kwarg.arg, "VAR_KEYWORD", None))
    return found


def runtime_parameters(fn: types.BuiltinFunctionType) -> list[tuple[str, str, str | None]]:
    """The same, read from the function's ``__text_signature__`` (which PyO3
    writes from the Rust signature); a function without one fails."""
    assert fn.__text_signature__, f"{fn.__module__}.{fn.__name__} has no text signature"
    return [(p.name, p.kind.name, None if p.default is p.empty else repr(p.default))
            for p in inspect.signature(fn).parameters.values()]


def stub_mismatches(module: types.ModuleType, stub: Path) -> list[str]:
    """Where ``stub`` and the submodule ``module`` disagree."""
    where = module.__name__
    names = stubbed(stub)
    exported = {n: v for n, v in vars(module).items() if not n.startswith("_")}
    found = [f"{where}.{n} is not stubbed" for n in sorted(exported.keys() - names.keys())]
    found += [f"{where}.{n} is stubbed but not exported" for n in sorted(names.keys()
                                                                         - exported.keys())]
    for name in sorted(names.keys() & exported.keys()):
        node, value = names[name], exported[name]
        if isinstance(node, ast.FunctionDef):
            if not isinstance(value, types.BuiltinFunctionType):
                found.append(f"{where}.{name} is stubbed as a function, is {type(value)}")
            elif (want := runtime_parameters(value)) != (have := stub_parameters(node)):
                found.append(f"{where}.{name}: the stub says {have}, the binary {want}")
        elif isinstance(node, ast.ClassDef):
            bases = [b.__name__ for b in getattr(value, "__bases__", ())]
            if [ast.unparse(b) for b in node.bases] != bases:
                found.append(f"{where}.{name}: the stub's bases are "
                             f"{[ast.unparse(b) for b in node.bases]}, the binary's {bases}")
        elif ast.unparse(node.annotation) != type(value).__name__:
            found.append(f"{where}.{name}: stubbed as {ast.unparse(node.annotation)}, "
                         f"is {type(value).__name__}")
    return found


def test_the_extension_is_its_submodules():
    """Nothing at the top of ``privpub._core`` but its submodules (no flat
    aliases), each importable by its dotted name and naming itself so."""
    assert SUBMODULES
    flat = [n for n, v in vars(_core).items()
            if not n.startswith("__") and not isinstance(v, types.ModuleType)]
    assert flat == []
    for name in SUBMODULES:
        module = importlib.import_module(f"privpub._core.{name}")
        assert module is getattr(_core, name)
        assert module.__name__ == f"privpub._core.{name}"
        assert all(f.__module__ == module.__name__ for f in vars(module).values()
                   if isinstance(f, types.BuiltinFunctionType))


def test_the_stub_package_declares_every_submodule():
    init = ast.parse((STUBS / "__init__.pyi").read_text())
    imported = sorted(a.name for node in init.body if isinstance(node, ast.ImportFrom)
                      and node.module is None and node.level == 1 for a in node.names
                      if a.asname == a.name)  # `as` itself: re-exported, for type checkers
    assert imported == SUBMODULES


@pytest.mark.parametrize("name", SUBMODULES)
def test_each_stub_matches_its_submodule(name):
    assert stub_mismatches(getattr(_core, name), STUBS / f"{name}.pyi") == []


def test_the_stub_check_sees_each_kind_of_mismatch(tmp_path):
    """Power: a changed default, a renamed parameter, a keyword-only one, a
    missing and an extra function, a wrong base and a wrong constant type
    are each reported."""
    copy = tmp_path / "sampling.pyi"
    shutil.copy(STUBS / "sampling.pyi", copy)
    assert stub_mismatches(_core.sampling, copy) == []
    text = copy.read_text()
    for old, new in [("p_rest: float, start: int = 0)", "p_rest: float, start: int = 1)"),
                     ("def uniform(key: bytes, n: int,", "def uniform(key: bytes, count: int,"),
                     ("def merge_sorted(a:", "def merge_sorted(*, a:"),
                     ("def beta_step_layout(", "def beta_step_plan("),
                     ("BLOCK: int", "BLOCK: float")]:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    copy.write_text(text + "\ndef extra() -> None: ...\n")
    found = stub_mismatches(_core.sampling, copy)
    assert [f.split(":")[0].split(" ")[0] for f in found] == [
        "privpub._core.sampling.beta_step_layout", "privpub._core.sampling.beta_step_plan",
        "privpub._core.sampling.extra", "privpub._core.sampling.BLOCK",
        "privpub._core.sampling.keep_records", "privpub._core.sampling.merge_sorted",
        "privpub._core.sampling.uniform"], found
    query = tmp_path / "query.pyi"
    query.write_text((STUBS / "query.pyi").read_text().replace(
        "class QueryTextError(ValueError):", "class QueryTextError(Exception):"))
    assert [f.split(":")[0] for f in stub_mismatches(_core.query, query)] == [
        "privpub._core.query.QueryTextError"]
