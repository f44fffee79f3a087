"""The .pyi stub describes exactly the functions the binary exports."""

import ast
from pathlib import Path

import privpub
from privpub import _core


def test_stub_matches_the_extension():
    stub = Path(privpub.__file__).with_name("_core.pyi")
    tree = ast.parse(stub.read_text())
    stubbed = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    exported = {name for name in dir(_core) if callable(getattr(_core, name))
                and not name.startswith("_")}
    assert stubbed == exported
