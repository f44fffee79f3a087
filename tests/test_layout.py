"""The package's layering: core ← domain ← counting ← viewfile ← tables ← mechanism
families ← experiments/cli, no cycles; what a value means is decided in domain/ alone; no
shared floor names a family (it calls the capabilities core declares); the Rust extension's
submodules mirror its binding files, one stub file each. (The files and docs cited in the
repo are checked by test_cited_files.py.)

Imports are read from the source (every import statement, including ones
inside functions, which is where a cycle hides; ``if TYPE_CHECKING:`` blocks
never run, so they make no cycle, but they point down too, or say why not in
TYPE_ONLY_UP).
"""

from __future__ import annotations

import ast
import functools
import re
import shutil
import types
from pathlib import Path

import pytest

import privpub
from privpub import _core

ROOT = Path(privpub.__file__).parent
#: Which top-level parts of privpub each part may import (besides itself).
ALLOWED = {
    "core": set(),
    "domain": {"core"},
    "counting": {"core", "domain"},
    # the release file (format, digests, reader, writer, scan) below the releases
    "viewfile": {"core", "domain", "counting"},
    "tables": {"core", "domain", "counting", "viewfile"},
    "alphabeta": {"core", "domain", "counting", "viewfile", "tables"},
    "frapp": {"core", "domain", "counting", "tables"},
    "graphs": {"core"},
    "attacks": {"core", "domain", "counting", "tables"},
    "splu": {"core", "domain", "counting", "viewfile", "tables"},
    "datasets": {"core", "domain", "tables"},
    # planning and report sit above the families but reach them only through the
    # capabilities core declares (test_no_shared_floor_names_a_family below).
    "planning": {"core", "domain", "tables"},
    "experiments": {"core", "domain", "counting", "tables", "alphabeta", "frapp", "graphs",
                    "attacks", "splu", "datasets"},
    "report": {"core", "domain", "counting", "tables", "attacks", "planning"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, type_only: bool = False) -> set[str]:
    """privpub modules imported by ``path`` at run time (``type_only``: in its
    ``if TYPE_CHECKING:`` blocks instead)."""
    tree = ast.parse(path.read_text())
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    found = set()
    for node in ast.walk(tree):
        if (id(node) in skip) != type_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("privpub"):
            if node.module != "privpub":  # `from privpub import _core` is not the root
                found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("privpub"))
    return found


MODULES = {module_name(p): p for p in ROOT.rglob("*.py")}


def graph() -> dict[str, set[str]]:
    return {name: {m for m in imports(path) if m in MODULES and m != name}
            for name, path in MODULES.items()}


def test_no_import_cycles():
    edges, state, stack = graph(), {}, []

    def visit(u: str) -> None:
        state[u] = "open"
        stack.append(u)
        for v in edges[u]:
            if v.startswith(u + ".") or u.startswith(v + "."):
                continue  # a package and its own modules
            if state.get(v) == "open":
                cycle = stack[stack.index(v):] + [v]
                pytest.fail(f"import cycle: {' -> '.join(cycle)}")
            if v not in state:
                visit(v)
        stack.pop()
        state[u] = "done"

    for name in sorted(edges):
        if name not in state:
            visit(name)


def test_layers_point_down():
    for name, targets in graph().items():
        part = name.split(".")[1] if name.count(".") else None
        if part not in ALLOWED:
            continue  # the package root and cli may import anything
        for target in targets:
            other = target.split(".")[1] if target.count(".") else "privpub"
            assert other == part or other in ALLOWED[part] or other == "_core", \
                f"{name} imports {target}: {part}/ may only use {sorted(ALLOWED[part])}"


#: Type-only imports that reach up the layers, and why. They name a type in a signature
#: (mypy checks it, tests/test_typing.py) and never run.
TYPE_ONLY_UP = {
    ("privpub.core.release", "privpub.domain.schema"):
        "Release(schema=...) takes the table's Schema (None for a graph answer)",
}


def type_only_up() -> set[tuple[str, str]]:
    """(module, module it imports for types only) pairs that reach up the layers."""
    found = set()
    for name, path in MODULES.items():
        part = name.split(".")[1] if name.count(".") else None
        if part not in ALLOWED:
            continue
        for target in imports(path, type_only=True) & set(MODULES):
            other = target.split(".")[1] if target.count(".") else "privpub"
            if other != part and other not in ALLOWED[part] | {"_core"}:
                found.add((name, target))
    return found


def test_type_only_imports_point_down_or_say_why():
    found, allowed = type_only_up(), set(TYPE_ONLY_UP)
    assert found <= allowed, f"type-only imports up the layers: {found - allowed}"
    assert allowed <= found, f"allowed but no longer made: {allowed - found}"


def test_the_type_only_check_sees_one(tmp_path):
    """Power: an import inside ``if TYPE_CHECKING:`` is read as type-only, not as run."""
    copy = tmp_path / "seeding.py"
    copy.write_text((ROOT / "core" / "seeding.py").read_text()
                    + "\nif TYPE_CHECKING:\n"
                    "    from privpub.tables.published import PublishedView\n")
    assert "privpub.tables.published" in imports(copy, type_only=True)
    assert "privpub.tables.published" not in imports(copy)


def test_the_schema_does_not_load_the_counting_engine():
    # The data model sits below the query language: a Schema never needs the
    # engine to exist (Q(D) is privpub.count_domain).
    for path in (ROOT / "domain").glob("*.py"):
        assert not any(m.startswith("privpub.counting") for m in imports(path)), path


#: An attribute's kind sniffed by the fields it happens to have (``hasattr(attr, "lo")``)
#: instead of asked by its type: how one value came to mean two things on two paths.
SNIFFED = re.compile(r"(has|get)attr\((\w*attr\w*|a|[\w.]*schema\[[^]]+\]),\s*"
                     r"[\"'](lo|hi|values|ordered|missing|offset)[\"']")


def lines_matching(path: Path, pattern: re.Pattern) -> list[str]:
    """``file:line`` of each line of ``path`` that ``pattern`` finds."""
    return [f"{path.name}:{i}" for i, line in enumerate(path.read_text().splitlines(), 1)
            if pattern.search(line)]


def test_no_attribute_kind_is_sniffed():
    """An IntRange or a Categorical is told by isinstance (or asked by a method),
    never by hasattr on its fields, outside domain/ as inside."""
    found = [s for path in ROOT.rglob("*.py") for s in lines_matching(path, SNIFFED)]
    assert not found, found


def test_the_sniffing_check_sees_one(tmp_path):
    copy = tmp_path / "truthtable.py"
    copy.write_text((ROOT / "counting" / "truthtable.py").read_text()
                    + "\n\ndef _old(attr):\n    return hasattr(attr, 'lo')\n")
    assert lines_matching(copy, SNIFFED) == [
        f"truthtable.py:{len(copy.read_text().splitlines())}"]


#: sqlglot reading text: a second parser of query text (or of SQL at all).
SECOND_PARSER = re.compile(r"\b(sqlglot\.(parse_one|parse|tokenize|transpile)|parse_one|"
                           r"Tokenizer|Dialect\.get_or_raise)\b|from sqlglot import (parse|tok)"
                           r"|DataType\.build\(")


def test_one_query_parser():
    """Query text is read by one parser, querytext's (Rust, sqlparser): sqlglot
    is the tree and the SQL generator and reads no text (issue 33)."""
    found = [s for path in ROOT.rglob("*.py") for s in lines_matching(path, SECOND_PARSER)]
    assert not found, found


def test_the_parser_check_sees_a_second_one(tmp_path):
    copy = tmp_path / "intervals.py"
    copy.write_text((ROOT / "counting" / "intervals.py").read_text()
                    + "\n\ndef _old(text):\n    return sqlglot.parse_one(text)\n")
    assert lines_matching(copy, SECOND_PARSER) == [
        f"intervals.py:{len(copy.read_text().splitlines())}"]


#: A directory removed by shutil.rmtree where an interrupt can land between its close of a
#: descriptor and its note of it (Python 3.11): EBADF, or another thread's file closed.
UNHELD_REMOVAL = re.compile(r"\bTemporaryDirectory\(|\bshutil\.rmtree\(|\bmkdtemp\(")


def test_temporary_directories_are_removed_with_signals_held():
    """Temporary directories are core.temporaries' (made and removed there, the
    removal with SIGINT and SIGTERM held), nowhere else in the package."""
    found = [s for path in ROOT.rglob("*.py") if path != ROOT / "core" / "temporaries.py"
             for s in lines_matching(path, UNHELD_REMOVAL)
             if not path.read_text().splitlines()[int(s.split(":")[1]) - 1].lstrip()
             .startswith(">>>")]  # (docstring examples show a user's own temporary file)
    assert not found, found


def test_the_removal_check_sees_one(tmp_path):
    copy = tmp_path / "viewsize.py"
    copy.write_text((ROOT / "tables" / "viewsize.py").read_text()
                    + "\n\ndef _old():\n    return tempfile.TemporaryDirectory()\n")
    assert lines_matching(copy, UNHELD_REMOVAL) == [
        f"viewsize.py:{len(copy.read_text().splitlines())}"]


def private_imports(path: Path, this: str) -> list[str]:
    """``from privpub.x import _name`` in ``path`` where x is another module: a
    name shared across modules is public, or it lives with its one user.
    (``from privpub import _core``, the Rust extension, is the package's own.)"""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.ImportFrom) and node.module
                and node.module.startswith("privpub") and node.module != this):
            continue
        found += [f"{node.module}.{a.name}" for a in node.names
                  if a.name.startswith("_") and not a.name.startswith("__")
                  and (node.module, a.name) != ("privpub", "_core")]
    return found


def root_imports(path: Path) -> list[int]:
    """Lines of ``path`` that import from the package root (``from privpub
    import …``, ``import privpub``), at any depth: the root's __init__.py
    imports every family, so such a line closes a circle through it."""
    return [node.lineno for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and node.module == "privpub"
            or isinstance(node, ast.Import) and any(a.name == "privpub" for a in node.names)]


def test_only_the_commands_import_the_package_root():
    """Inside the package, names come from their own modules and the Rust
    extension by ``import privpub._core as _core``; only the commands (cli/,
    __main__) take names from the root, above which nothing is built."""
    found = {name: lines for name, path in MODULES.items()
             if not name.startswith(("privpub.cli", "privpub.__main__"))
             and name != "privpub" and (lines := root_imports(path))}
    assert not found, f"imports from the package root (lines): {found}"


def test_the_root_import_check_sees_one(tmp_path):
    """Power: a planted ``from privpub import _core`` in a function is reported."""
    copy = tmp_path / "columns.py"
    copy.write_text((ROOT / "viewfile" / "columns.py").read_text()
                    + "\n\ndef _late():\n    from privpub import _core\n")
    assert root_imports(ROOT / "viewfile" / "columns.py") == []
    assert len(root_imports(copy)) == 1


def test_no_module_imports_a_private_name_from_another():
    found = {name: private for name, path in MODULES.items()
             if (private := private_imports(path, name))}
    assert not found, f"private names imported across modules: {found}"


def test_the_check_sees_a_private_import(tmp_path):
    """Power: a planted import of another module's private name is reported, a
    function-local one too; the Rust extension is not."""
    path = ROOT / "viewfile" / "columns.py"
    assert private_imports(path, "privpub.viewfile.columns") == []
    copy = tmp_path / "columns.py"
    copy.write_text(path.read_text() + "\n\ndef _late():\n"
                    "    from privpub.domain.schema import _missing_error\n"
                    "    from privpub import _core\n")
    assert private_imports(copy, "privpub.viewfile.columns") == [
        "privpub.domain.schema._missing_error"]


def test_the_check_sees_a_cycle(tmp_path):
    """Power: a function-local import back up is an edge the check reports."""
    source = (ROOT / "core" / "seeding.py").read_text()
    assert "privpub.domain.schema" not in imports(ROOT / "core" / "seeding.py")
    hidden = source + "\n\ndef _late():\n    from privpub.domain.schema import Schema\n"
    copy = tmp_path / "seeding.py"
    copy.write_text(hidden)
    assert "privpub.domain.schema" in imports(copy)


def classes_by_name(root: Path) -> dict[str, list[str]]:
    """Each class name defined under ``root`` and the modules defining it."""
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(str(path.relative_to(root)))
    return found


def test_each_class_name_means_one_thing():
    """One name, one class (issue 33: ``Atom`` was a condition's atomic
    predicate in counting and a conjunctive query's relation atom in graphs)."""
    shared = {name: where for name, where in classes_by_name(ROOT).items() if len(where) > 1}
    assert not shared, shared


def test_the_class_name_check_sees_a_second_one(tmp_path):
    (tmp_path / "a.py").write_text("class Atom:\n    pass\n")
    (tmp_path / "b.py").write_text("def f():\n    class Atom:\n        pass\n")
    assert classes_by_name(tmp_path)["Atom"] == ["a.py", "b.py"]


def test_typed_package():
    assert (ROOT / "py.typed").exists()


def test_tests_mirror_the_package():
    """tests/<part>/ holds the tests of privpub/<part>; tests/ itself, what spans
    the package."""
    tests = Path(__file__).parent
    parts = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    dirs = {d.name for d in tests.iterdir() if d.is_dir() and any(d.glob("test_*.py"))}
    assert dirs and dirs <= parts, sorted(dirs - parts)


# ---- no shared floor names a family ---------------------------------------------------------

#: The mechanism families: each owns its package, and only its package names it.
FAMILIES = ("alphabeta", "frapp", "splu", "graphs")
#: Modules outside the families that name a family on purpose, and why. Everything else
#: (core, domain, counting, tables, attacks, report, planning, the rest of cli) dispatches
#: on the capabilities of privpub.core.capabilities and the registries.
NAMES_FAMILIES = {
    "privpub": "the public API re-exports each family's classes",
    "privpub.experiments": "the papers' experiments compare the mechanisms they name",
    "privpub.cli.publish": "`privpub publish alphabeta|frapp|splu`: the user names the family",
    "privpub.cli.splu": "the deprecated `privpub splu` command is SPLU-Gen's reconstruction",
    "privpub.cli.demo": "the demo publishes Adult with αβ",
    "privpub.cli.experiments": "`privpub experiments NAME` names the papers' experiments",
}


def _family_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FAMILIES else None


@functools.cache
def family_vocabulary() -> tuple[dict[str, str], dict[str, str]]:
    """(mechanism and planner names → family, public class names → family), read from
    the families' sources: every ``name = "..."`` of a top-level class, every
    top-level public class not also defined outside the families (counting's Atom
    is not graphs')."""
    names: dict[str, str] = {}
    classes: dict[str, str] = {}
    elsewhere: set[str] = set()
    for module, path in MODULES.items():
        family = _family_of(module)
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.ClassDef):
                continue
            if family is None:
                elsewhere.add(node.name)
                continue
            if not node.name.startswith("_"):
                classes[node.name] = family
            for item in node.body:
                targets = (item.targets if isinstance(item, ast.Assign) else
                           [item.target] if isinstance(item, ast.AnnAssign) else [])
                if any(isinstance(t, ast.Name) and t.id == "name" for t in targets) and \
                        isinstance(item.value, ast.Constant) and isinstance(item.value.value, str):
                    names[item.value.value] = family
    return names, {c: f for c, f in classes.items() if c not in elsewhere}


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def family_mentions(path: Path, module: str) -> list[str]:
    """Where ``path`` (module ``module``) names a family it does not belong to: an import
    from a family's package, a family class (``from privpub import AlphaBeta``,
    ``privpub.FRAPP``, ``privpub.splu.SPLUGen``), or a family's mechanism name as a
    string (``release.mechanism == "splu"``, ``mechanisms=["alphabeta", "frapp"]``;
    docstrings may name them)."""
    names, classes = family_vocabulary()
    own = _family_of(module)
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        hit = None
        if isinstance(node, ast.ImportFrom) and node.module:
            family = _family_of(node.module)
            if family is not None and family != own:
                hit = f"imports from {node.module}"
            elif node.module == "privpub":
                hit = next((f"imports {a.name}" for a in node.names
                            if classes.get(a.name, own) != own or a.name in FAMILIES
                            and a.name != own), None)
        elif isinstance(node, ast.Import):
            hit = next((f"imports {a.name}" for a in node.names
                        if _family_of(a.name) not in (None, own)), None)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            dotted = _dotted(node) or ""
            if dotted.startswith("privpub.") and (
                    _family_of(dotted) not in (None, own)
                    or classes.get(node.attr, own) != own):
                hit = f"uses {dotted}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and names.get(node.value, own) != own and id(node) not in docstrings:
            hit = f"names the mechanism {node.value!r}"
        if hit:
            found.append((node.lineno, f"{module}:{node.lineno}: {hit}"))
    return [text for _, text in sorted(found)]


def _names_families_on_purpose(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") and m != "privpub"
               for m in NAMES_FAMILIES)


def test_no_shared_floor_names_a_family():
    """Tables, attacks, report, planning and the CLI (but for the commands that name a
    family on purpose, :data:`NAMES_FAMILIES`) dispatch on declared capabilities: no
    family import, class or mechanism name outside the family's own package."""
    found = [hit for module, path in sorted(MODULES.items())
             if not _names_families_on_purpose(module)
             for hit in family_mentions(path, module)]
    assert not found, "\n".join(found)


def test_the_family_check_sees_each_kind_of_mention(tmp_path):
    """Power: a planted name comparison, family import, class use and name list in a
    shared floor are each reported; the family's own package and a docstring may name it."""
    card = ROOT / "report" / "card.py"
    assert family_mentions(card, "privpub.report.card") == []
    copy = tmp_path / "card.py"
    planted = ['    same = release.mechanism == "splu"', "    from privpub.splu import SPLUGen",
               "    isinstance(release, privpub.FRAPP)", '    return ["alphabeta", "frapp"]',
               "    from privpub import GraphAnswer"]
    copy.write_text(card.read_text() + '\n\ndef _late(release):\n    """Not "splu"."""\n'
                    + "\n".join(planted) + "\n")
    start = len(card.read_text().splitlines()) + 5

    def lines(module: str) -> list[int]:
        return [int(f.split(": ", 1)[0].rsplit(":", 1)[1]) - start
                for f in family_mentions(copy, module)]

    assert lines("privpub.report.card") == [0, 1, 2, 3, 3, 4]
    # Inside its own package a family names itself freely, but no other family.
    assert lines("privpub.splu.card") == [2, 3, 3, 4]


# ---- no shared floor reads a family's parameters by key ------------------------------------

# Every key of a release's parameters is its family's (what "d", "n" or "records" mean
# is the family's to say): the floors ask the capabilities of privpub.core.capabilities
# instead (StatesErrorBound for the bound and its ε, PublishesRecords for how repeated
# tuples were published, StatesPrivacyRequest for d, γ, the calibration and the records
# given), so no key is read outside the families.
#: Where the parameters are a family's own business: the families and the papers'
#: experiments, which publish with them.
READS_OWN_PARAMETERS = (*FAMILIES, "experiments")


def parameter_key_reads(path: Path, module: str) -> list[str]:
    """Where ``path`` reads a key from a release's or a mechanism's parameters:
    ``X.parameters[key]``, ``X.parameters.get(key)``, ``X.parameters()[key]``, and the
    same through a name bound to them (``p = release.parameters; p[key]``) or called
    ``parameters``. A plan's row (``row["error_bound"]``) is not parameters."""
    tree = ast.parse(path.read_text())

    def is_parameters(node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            node = node.func
        return (isinstance(node, ast.Attribute) and node.attr == "parameters"
                or isinstance(node, ast.Name) and node.id in aliases)

    aliases = {"parameters"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and is_parameters(node.value):
            aliases.update(t.id for t in node.targets if isinstance(t, ast.Name))
    found = []
    for node in ast.walk(tree):
        source = key = None
        if isinstance(node, ast.Subscript):
            source, key = node.value, node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("get", "pop", "setdefault") and node.args:
            source, key = node.func.value, node.args[0]
        if source is not None and is_parameters(source) and isinstance(key, ast.Constant):
            found.append((node.lineno, f"{module}:{node.lineno}: reads parameters[{key.value!r}]"))
    return [text for _, text in sorted(found)]


def test_no_shared_floor_reads_a_family_parameter_by_key():
    """Tables, counting, attacks, report, planning, the CLI (and core, domain, datasets)
    ask a mechanism's declared capabilities for its bound, its ε, its record facts and
    its privacy request; only the families and the experiments read parameters by key."""
    found = [hit for module, path in sorted(MODULES.items())
             if module.split(".")[1:2] and module.split(".")[1] not in READS_OWN_PARAMETERS
             for hit in parameter_key_reads(path, module)]
    assert not found, "\n".join(found)


def test_the_key_check_sees_each_kind_of_read(tmp_path):
    """Power: each planted read is reported (the request's keys as the bound's); a plan
    row's key and the parameters as a whole are not."""
    card = ROOT / "report" / "card.py"
    assert parameter_key_reads(card, "privpub.report.card") == []
    copy = tmp_path / "card.py"
    planted = ['    bound = release.parameters.get("error_bound")',
               '    eps = release.parameters["failure_probability"]',
               "    p = release.parameters",
               '    facts = p.get("records") or {}',
               '    mech = release.mechanism_object().parameters()["error_bound"]',
               '    row = {}; row["error_bound"]',
               '    d = release.parameters.get("d")',
               '    shown = dict(release.parameters)',
               '    k = p["gamma"], p.get("n"), p.get("calibration")']
    copy.write_text(card.read_text() + "\n\ndef _late(release):\n" + "\n".join(planted) + "\n")
    start = len(card.read_text().splitlines()) + 4
    lines = [int(f.split(": ", 1)[0].rsplit(":", 1)[1]) - start
             for f in parameter_key_reads(copy, "privpub.report.card")]
    assert lines == [0, 1, 3, 4, 6, 8, 8, 8]


#: The checkout (from this file: the package may be installed elsewhere, as CI installs it).
REPO = Path(__file__).resolve().parents[1]


# ---- the extension's submodules mirror the binding files ------------------------------------

#: The binding files: each rust/src/bindings/X.rs is the submodule privpub._core.X.
BINDINGS = REPO / "rust" / "src" / "bindings"
#: A Rust function exported to Python, by its (Python) name.
PYFUNCTION = re.compile(r"#\[pyfunction\]\s*(?:(?://[^\n]*|#\[[^\]]*\])\s*)*"
                        r"pub(?:\(crate\))? fn (\w+)")


def binding_mismatches(bindings: Path, core: types.ModuleType, stubs: Path) -> list[str]:
    """Where the binding files, the extension's submodules and the stub files disagree:
    each ``bindings/X.rs`` registers its own submodule ``_core.X`` (named for the file:
    ``submodule(parent, module_path!())``) holding exactly the file's ``#[pyfunction]``s,
    ``_core/X.pyi`` stubs it, and ``_core`` holds nothing but its submodules."""
    files = {p.stem: p for p in bindings.glob("*.rs") if p.stem != "mod"}
    modules = {n for n, v in vars(core).items() if isinstance(v, types.ModuleType)}
    stubbed = {p.stem for p in stubs.glob("*.pyi") if p.stem != "__init__"}
    found = [f"bindings/{x}.rs has no submodule _core.{x}" for x in sorted(files.keys() - modules)]
    found += [f"_core.{x} has no binding file bindings/{x}.rs"
              for x in sorted(modules - files.keys())]
    found += [f"_core.{x} has no stub _core/{x}.pyi" for x in sorted(modules - stubbed)]
    found += [f"_core/{x}.pyi stubs no submodule" for x in sorted(stubbed - modules)]
    found += [f"_core.{n} is not a submodule" for n, v in sorted(vars(core).items())
              if not n.startswith("__") and not isinstance(v, types.ModuleType)]
    for x in sorted(files.keys() & modules):
        text = files[x].read_text()
        if "submodule(parent, module_path!())" not in text:
            found.append(f"bindings/{x}.rs does not register its own submodule")
        defined = set(PYFUNCTION.findall(text))
        registered = {n for n, v in vars(getattr(core, x)).items()
                      if isinstance(v, types.BuiltinFunctionType)}
        if defined != registered:
            found.append(f"_core.{x} holds {sorted(registered - defined)} not of bindings/{x}.rs "
                         f"and lacks {sorted(defined - registered)}")
    return found


def test_the_extension_mirrors_the_binding_files():
    assert binding_mismatches(BINDINGS, _core, ROOT / "_core") == []


def test_the_mirror_check_sees_each_mismatch(tmp_path, monkeypatch):
    """Power: a binding file without its submodule, one that registers into another,
    a function registered elsewhere, a missing stub, a stray stub and a flat alias
    on ``_core`` are each reported."""
    bindings, stubs = tmp_path / "bindings", tmp_path / "stubs"
    shutil.copytree(BINDINGS, bindings)
    shutil.copytree(ROOT / "_core", stubs)
    assert binding_mismatches(bindings, _core, stubs) == []
    (bindings / "extra.rs").write_text("#[pyfunction]\npub(crate) fn stray() {}\n")
    splu = bindings / "splu.rs"
    splu.write_text(splu.read_text().replace("super::submodule(parent, module_path!())",
                                             'super::submodule(parent, "codes")'))
    codes = bindings / "codes.rs"
    codes.write_text(codes.read_text() + "\n#[pyfunction]\n#[pyo3(signature = (a))]\n"
                     "pub(crate) fn moved(a: u8) -> u8 {\n    a\n}\n")
    (stubs / "attacks.pyi").rename(stubs / "weeding.pyi")
    monkeypatch.setattr(_core, "encode_u64", _core.codes.encode_u64, raising=False)
    assert binding_mismatches(bindings, _core, stubs) == [
        "bindings/extra.rs has no submodule _core.extra",
        "_core.attacks has no stub _core/attacks.pyi",
        "_core/weeding.pyi stubs no submodule",
        "_core.encode_u64 is not a submodule",
        "_core.codes holds [] not of bindings/codes.rs and lacks ['moved']",
        "bindings/splu.rs does not register its own submodule",
    ]
