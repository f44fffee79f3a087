"""The core install (``pip install privpub``, no extras) publishes, estimates and
runs the demo; each feature that needs an extra says which, as one line on the
command line. Run in a fresh interpreter where the optional packages cannot be
imported, as where they are not installed (.ci/run also installs the wheel alone
into an empty venv and runs the same paths there)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

OPTIONAL = ("matplotlib", "yaml", "tqdm", "dask", "distributed")

SCRIPT = textwrap.dedent('''
    import contextlib, importlib.abc, io, json, os, sys, tempfile

    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            top = name.partition(".")[0]
            if top in OPTIONAL:
                raise ModuleNotFoundError(f"No module named {top!r}", name=top)

    OPTIONAL = set(json.loads(sys.argv[1]))
    sys.meta_path.insert(0, Blocker())

    import numpy as np
    import pandas as pd
    import privpub
    from privpub.cli import main
    from privpub.core.optional import MissingExtraError
    from privpub.graphs import Graph, count, triangle

    out = tempfile.mkdtemp()

    def cli(*argv):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()) as std, contextlib.redirect_stderr(err):
            code = main(list(argv))
        return code, std.getvalue(), err.getvalue()

    # the core paths: publish, estimate, write and reopen, a graph count with progress
    df, schema = privpub.datasets.load_adult()
    view = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(
        df, seed=1, duplicates="records")
    est = view.estimate({"sex": "Female", "salary": ">50K"})
    view.to_parquet(f"{out}/view.parquet")
    assert privpub.PublishedView.read_parquet(f"{out}/view.parquet").estimate(
        {"sex": "Female", "salary": ">50K"}) == est
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]))
    assert count(g, triangle(), method="join", progress=True) == 6
    schema.write(f"{out}/schema.json")
    assert privpub.Schema.read(f"{out}/schema.json") == schema
    code, stdout, stderr = cli("demo", "--seed", "1")
    assert code == 0 and "estimate" in stdout, (code, stderr)

    # each feature that needs an extra names it
    try:
        schema.write(f"{out}/schema.yaml")
    except MissingExtraError as exc:
        assert "pip install 'privpub[yaml]'" in str(exc), exc
    else:
        raise AssertionError("a YAML schema was written without pyyaml")
    with open(f"{out}/people.yaml", "w") as fh:
        fh.write("attributes: []\\n")
    code, _, stderr = cli("plan", "--n", "1000", "--schema", f"{out}/people.yaml")
    assert code == 1 and stderr.count("\\n") == 1 and "privpub[yaml]" in stderr, stderr
    code, _, stderr = cli("experiments", "audit", "--output", f"{out}/exp", "--quick")
    assert code == 1 and stderr.count("\\n") == 1 and "privpub[experiments]" in stderr, stderr
    try:
        view.report().write(f"{out}/card.html")
    except MissingExtraError as exc:
        assert "pip install 'privpub[report]'" in str(exc), exc
    else:
        raise AssertionError("a card was drawn without matplotlib")

    loaded = sorted(m for m in sys.modules if m.partition(".")[0] in OPTIONAL)
    assert not loaded, loaded
    print("core paths ok")
''')


def test_core_paths_run_without_the_optional_packages(tmp_path):
    import json

    out = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(OPTIONAL)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)  # a hang guard
    assert out.returncode == 0, out.stderr[-4000:]
    assert out.stdout.strip().endswith("core paths ok")
