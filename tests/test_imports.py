"""`import privpub` stays light: DuckDB, SciPy, Dask and matplotlib are imported
where they are used, not at import (each CLI call and test process pays the
import; SciPy's stats alone took ~1 s of a ~1.8 s import)."""

import subprocess
import sys

import pytest

HEAVY = ["duckdb", "scipy", "dask", "matplotlib"]


def loaded_after(statement: str) -> set[str]:
    probe = f"import sys\n{statement}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize("statement", ["import privpub", "import privpub.cli"])
def test_import_loads_no_heavy_dependency(statement):
    assert loaded_after(statement) == set()


def test_the_probe_sees_an_import():
    """Power: the probe reports a heavy module once something imports it."""
    assert loaded_after("import privpub\nprivpub.count_domain(privpub.Schema([privpub.IntRange("
                        "'a', 0, 3)]), 'a IN (SELECT 1)')") >= {"duckdb"}
