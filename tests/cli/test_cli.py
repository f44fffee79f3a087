"""The ``privpub`` command (privpub.cli)."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys

import pytest
import yaml

import privpub
from privpub import ParameterError, cli


def test_version(capsys):
    with pytest.raises(SystemExit) as ei:
        cli.main(["--version"])
    assert ei.value.code == 0
    assert capsys.readouterr().out.strip() == f"privpub {privpub.__version__}"


def test_help_lists_demo(capsys):
    with pytest.raises(SystemExit) as ei:
        cli.main(["--help"])
    assert ei.value.code == 0
    out = capsys.readouterr().out
    assert "usage: privpub" in out and "demo" in out


def test_no_command_prints_help_and_fails(capsys):
    assert cli.main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_unknown_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as ei:
        cli.main(["frobnicate"])
    assert ei.value.code == 2
    assert "frobnicate" in capsys.readouterr().err


def test_demo(capsys):
    assert cli.main(["demo", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "m = 648,023,040" in out
    assert "30,162" in out and "2,399" in out
    assert "age" in out and "native-country" in out


def test_demo_error_goes_to_stderr_with_exit_code_1(monkeypatch, capsys):
    def broken(split="train"):
        raise ParameterError(f"no such split {split!r}")

    monkeypatch.setattr(privpub.datasets, "load_adult", broken)
    assert cli.main(["demo"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("privpub: error:") and "'train'" in err


def test_installed_script():
    exe = shutil.which("privpub")
    # Not on PATH (e.g. an unactivated venv): run the entry point's module instead.
    command = [sys.executable, "-m", "privpub.cli"] if exe is None else [exe]
    result = subprocess.run([*command, "demo", "--seed", "7"], capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert "m = 648,023,040" in result.stdout
    version = subprocess.run([*command, "--version"], capture_output=True, text=True,
                             timeout=120, check=True)
    assert version.stdout.strip() == f"privpub {privpub.__version__}"


def test_publish_inspect_estimate_round_trip(tmp_path, capsys):
    df, _ = privpub.datasets.load_adult()
    csv = tmp_path / "adult.csv"
    df.to_csv(csv, index=False)
    view = tmp_path / "view.parquet"
    publish = ["publish", "alphabeta", "--input", str(csv), "--output", str(view)]
    assert cli.main([*publish, "--seed", "4"]) == 1
    assert "--duplicates 'set'" in capsys.readouterr().err  # Adult repeats tuples
    assert cli.main([*publish, "--seed", "4", "--duplicates", "records"]) == 0
    out = capsys.readouterr()
    assert "(d, γ)-privacy, tuples with several records: does NOT hold" in out.out
    assert "(d, γ)-privacy: holds" in out.out and "inferred from the data" in out.err
    assert "not for real releases" in out.err and "about 1,2" in out.err  # ≈1.2M rows
    # The CLI's release is the library's, byte for byte.
    with pytest.warns(privpub.PrivacyWarning, match="derived from the data"):
        schema = privpub.Schema.from_frame(df)
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    same = mech.publish(df, seed=4, duplicates="records")
    assert (privpub.PublishedView.read_parquet(view).codes == same.codes).all()

    assert cli.main(["inspect", str(view), "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["mechanism"] == "alphabeta" and info["rows"] == len(same)
    assert info["seed_policy"].startswith("seeded")
    claims = {c["name"]: c["holds"] for c in info["guarantee"]["claims"]}
    assert claims["(d, γ)-privacy"] and not claims["(d, γ)-privacy, tuples with several records"]
    assert cli.main(["inspect", str(view)]) == 0
    text = capsys.readouterr().out
    assert "alphabeta release, " in text and "Guarantee of" in text and "seeded" in text

    queries = ["age > 50", "\"marital-status\" = 'Divorced'"]
    assert cli.main(["estimate", str(view), *queries, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["query"] for r in rows] == queries
    expected = same.estimate("age > 50")
    assert rows[0]["value"] == expected.value and rows[0]["lo"] == expected.lo
    assert rows[0]["n_view"] == expected.n_view
    assert cli.main(["estimate", str(view), *queries, "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("value,stderr,counts,method") and len(lines) == 3
    assert cli.main(["estimate", str(view), "age > 50"]) == 0
    assert "age > 50" in capsys.readouterr().out
    assert cli.main(["estimate", str(view), "agee > 3"]) == 1
    assert "unknown column 'agee'" in capsys.readouterr().err
    assert cli.main(["estimate", str(tmp_path / "missing.parquet"), "age > 3"]) == 1
    assert "No such file" in capsys.readouterr().err


def test_publish_frapp_tsv_and_yaml_schema(tmp_path, capsys):
    df, schema = privpub.datasets.load_adult()
    tsv = tmp_path / "adult.tsv"
    df.to_csv(tsv, index=False, sep="\t")
    spec = tmp_path / "schema.yaml"
    spec.write_text(yaml.safe_dump(schema.to_dict()))
    out = tmp_path / "frapp.parquet"
    assert cli.main(["publish", "frapp", "--input", str(tsv), "--schema", str(spec),
                     "--output", str(out), "--duplicates", "records"]) == 0
    captured = capsys.readouterr()
    assert "published 30,162 rows" in captured.out
    assert "inferred" not in captured.err and "warning" not in captured.err  # unseeded
    release = privpub.PublishedView.open(out)
    assert release.mechanism == "frapp" and release.schema.size == schema.size
    # The same file read with the wrong separator is one column: refused, named. (--force:
    # each run below may replace the release above.)
    assert cli.main(["publish", "frapp", "--input", str(tsv), "--sep", ",", "--schema",
                     str(spec), "--output", str(out), "--force"]) == 1
    assert "does not list" in capsys.readouterr().err
    # A shell's '\t' (two characters) means a tab; other multi-character separators are refused.
    renamed = tmp_path / "adult-tabs.csv"  # tabs in a .csv: the separator must be said
    df.to_csv(renamed, index=False, sep="\t")
    assert cli.main(["publish", "frapp", "--input", str(renamed), "--sep", "\\t", "--schema",
                     str(spec), "--output", str(out), "--force", "--duplicates", "records"]) == 0
    capsys.readouterr()
    assert cli.main(["publish", "frapp", "--input", str(renamed), "--sep", ";;",
                     "--output", str(out), "--force"]) == 1
    assert "--sep must be one character, got ';;'" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("attributes: [unclosed")
    assert cli.main(["publish", "frapp", "--input", str(tsv), "--schema", str(bad),
                     "--output", str(out), "--force"]) == 1
    assert "is not YAML" in capsys.readouterr().err


def test_large_views_need_a_yes(tmp_path, capsys, monkeypatch):
    """Past the threshold and off a terminal (as here), nothing is written without --yes."""
    from privpub.cli import publish

    monkeypatch.setattr(publish, "CONFIRM_ROWS", 100_000)
    df, _ = privpub.datasets.load_adult()
    csv = tmp_path / "adult.csv"
    df.to_csv(csv, index=False)
    out = tmp_path / "v.parquet"
    args = ["publish", "alphabeta", "--input", str(csv), "--output", str(out),
            "--duplicates", "set"]
    assert cli.main(args) == 1
    err = capsys.readouterr().err
    assert "pass --yes" in err and "rows" in err and not out.exists()
    assert cli.main([*args, "--yes"]) == 0 and out.exists()


def test_every_subcommand_has_examples_in_its_help(capsys):
    parser = cli.build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        assert "examples:" in sub.format_help(), name
        inner = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        for action in inner:
            for kind, leaf in action.choices.items():
                assert "examples:" in leaf.format_help(), f"{name} {kind}"


@pytest.mark.slow
def test_bench_writes_the_table(tmp_path, capsys):
    """`privpub bench` runs the suites beside the package and writes their
    medians and ratios (small suites, at small sizes). The encode suite builds
    its schema from the data, which warns: a warning is shown, not a failure
    (the test run's filterwarnings=error must not reach the suites)."""
    out = tmp_path / "bench.md"
    assert cli.main(["bench", "--quick", "--only", "cond,encode", "--out", str(out)]) == 0
    table = out.read_text().splitlines()
    assert table[0].startswith("| operation | privpub (median) | baseline (median)")
    assert any(line.startswith("| ConD") and line.endswith("× |") for line in table)
    assert any(line.startswith("| encode+decode") for line in table)
    capsys.readouterr()
    assert cli.main(["bench", "--only", "nosuch", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "['nosuch']" in err and "cond" in err


def test_plan_explains_a_dense_table_from_the_command_line(tmp_path, capsys):
    """The issue's case: 98,000 rows over 6 small columns (n/m = 0.35)."""
    from dense import dense_table

    dense = dense_table()
    csv = tmp_path / "dense.csv"
    dense.to_csv(csv, index=False)
    assert cli.main(["plan", "--input", str(csv), "--mechanism", "alphabeta,frapp"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the text is wrapped for a terminal
    assert "n/m = 0.35: this table is too dense for αβ to hide a tuple" in out
    assert "k = 1 needs m ≥" in out
    assert cli.main(["plan", "--input", str(csv), "--mechanism", "alphabeta",
                     "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["n"] == 98_000 and plan["m"] == 280_000
    # From a schema and n alone (no table): the same verdicts for αβ.
    spec = tmp_path / "schema.json"
    spec.write_text(json.dumps(privpub.Schema.from_frame(dense).to_dict()))
    assert cli.main(["plan", "--schema", str(spec), "--n", "98000", "--mechanism",
                     "alphabeta", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("mechanism,") and len(lines) > 10
    assert cli.main(["plan", "--n", "98000"]) == 1
    assert "give --input FILE, or --n N with --schema FILE" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "message"), [
    (["--output", "{tmp}/no/such/dir/v.parquet"], "does not exist"),
    (["--output", "{tmp}"], "is a directory; name the file"),
    (["--input", "{tmp}"], "is a directory, not a table file"),
    (["--input", "{tmp}/missing.csv"], "no such file"),
    (["--schema", "{tmp}/list.yaml"], "must hold a mapping with 'attributes', got list"),
    (["--columns", "age,,sex"], "--columns names ['']"),
    (["--gamma", "2"], "gamma must be in (0, 1)"),
])
def test_publish_errors_are_one_line_and_named(tmp_path, capsys, args, message):
    df, _ = privpub.datasets.load_adult()
    csv = tmp_path / "adult.csv"
    df.head(500).to_csv(csv, index=False)
    (tmp_path / "list.yaml").write_text("- a\n")
    base = {"--input": str(csv), "--output": str(tmp_path / "v.parquet")}
    given = dict(zip(args[::2], (a.format(tmp=tmp_path) for a in args[1::2]), strict=True))
    argv = ["publish", "alphabeta", "--duplicates", "set"]
    for option, value in {**base, **given}.items():
        argv += [option, value]
    assert cli.main(argv) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1].startswith("privpub: error: ") and message in lines[-1]
    assert not any(line.startswith("privpub: error") for line in lines[:-1])
