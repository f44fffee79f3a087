"""The ratchet on ``Any`` in privpub's public signatures (issue 38): the count only goes down.

Counts, per module of python/privpub, the parameters and returns of public functions and
methods (names without a leading underscore, plus ``__init__``/``__call__``-style dunders,
in public classes) whose annotation mentions ``Any`` (``Any``, ``typing.Any``, or inside
``dict[str, Any]`` and the like, also in string annotations). Fails when a module's count
is above its entry in .ci/any-baseline.json; when one is below, says how to lower the
baseline (``python .ci/any_ratchet.py --write``), which only ever lowers entries.

    python .ci/any_ratchet.py            # check (CI)
    python .ci/any_ratchet.py --write    # record the lower counts
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
PACKAGE = CHECKOUT / "python" / "privpub"
BASELINE = CHECKOUT / ".ci" / "any-baseline.json"


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _mentions_any(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Name | ast.Attribute):
        return (annotation.id if isinstance(annotation, ast.Name) else annotation.attr) == "Any"
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value).endswith(
            "Literal"):
        return False  # Literal["Any"] holds values, not types
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:  # a string annotation: "list[Any]"
            return _mentions_any(ast.parse(annotation.value, mode="eval").body)
        except SyntaxError:
            return False
    return any(_mentions_any(child) for child in ast.iter_child_nodes(annotation)
               if isinstance(child, ast.expr))


def _functions(body: list[ast.stmt]):
    """Public functions at this level and public methods of public classes below it."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
            yield node
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            yield from _functions(node.body)


def count_module(source: str) -> tuple[int, int]:
    """(parameters, returns) annotated with ``Any`` in one module's public signatures."""
    params = returns = 0
    for fn in _functions(ast.parse(source).body):
        a = fn.args
        every = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
        params += sum(_mentions_any(p.annotation) for p in every if p is not None)
        returns += _mentions_any(fn.returns)
    return params, returns


def count_package() -> dict[str, tuple[int, int]]:
    """Module name -> (parameters, returns) with ``Any``; modules without any are left out."""
    counts = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found = count_module(path.read_text())
        if any(found):
            rel = path.relative_to(PACKAGE.parent).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            counts[".".join(parts)] = found
    return counts


def compare(counts: dict[str, tuple[int, int]], baseline: dict[str, int]) -> tuple[list, list]:
    """Modules above their baseline entry and modules below it, as (module, count, entry)."""
    above, below = [], []
    for module in sorted(set(counts) | set(baseline)):
        now, entry = sum(counts.get(module, (0, 0))), baseline.get(module, 0)
        if now > entry:
            above.append((module, now, entry))
        elif now < entry:
            below.append((module, now, entry))
    return above, below


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help="lower the baseline to the current counts (never raises one)")
    args = parser.parse_args(argv)
    counts = count_package()
    baseline = json.loads(BASELINE.read_text())
    above, below = compare(counts, baseline)
    params = sum(p for p, _ in counts.values())
    returns = sum(r for _, r in counts.values())
    print(f"Any in public signatures: {params} parameters, {returns} returns "
          f"(baseline {sum(baseline.values())})")
    for module, now, entry in above:
        print(f"  {module}: {now} > baseline {entry}: name the type instead of Any")
    if args.write:
        if above:
            print("not written: the baseline is only ever lowered")
            return 1
        lowered = {m: n for m in sorted(baseline) if (n := sum(counts.get(m, (0, 0))))}
        BASELINE.write_text(json.dumps(lowered, indent=1) + "\n")
        print(f"wrote {BASELINE.relative_to(CHECKOUT)}")
        return 0
    for module, now, entry in below:
        print(f"  {module}: {now} < baseline {entry}")
    if below and not above:
        print("lower the baseline: python .ci/any_ratchet.py --write (and commit it)")
    return 1 if above else 0


if __name__ == "__main__":
    sys.exit(main())
