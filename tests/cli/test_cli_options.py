"""The CLI's shared options mean the same on every subcommand (issue 23): --output
(with --out kept as the old spelling), --format, --force, '-' for standard input or
output, and each subcommand's --help shows its own examples."""

from __future__ import annotations

import io
import json
import sys
import tempfile

import pytest

import privpub
from privpub import cli


def _help(capsys, *words: str) -> str:
    with pytest.raises(SystemExit):
        cli.main([*words, "--help"])
    return capsys.readouterr().out


@pytest.mark.parametrize("mechanism", ["alphabeta", "frapp", "splu"])
def test_each_publish_help_shows_its_own_examples(capsys, mechanism):
    text = _help(capsys, "publish", mechanism)
    examples = text[text.index("examples:"):text.index("options:")]
    others = {"alphabeta", "frapp", "splu"} - {mechanism}
    assert f"privpub publish {mechanism} " in examples
    assert not any(f"privpub publish {o} " in examples for o in others), examples


def test_attack_help_prints_a_percent_sign_once(capsys):
    text = _help(capsys, "attack")
    assert "95% interval" in " ".join(text.split()) and "%%" not in text


@pytest.mark.parametrize("words", [["experiments", "audit"], ["bench"], ["demo"],
                                   ["estimate"]])
def test_output_is_spelled_alike(capsys, words):
    assert "--output" in _help(capsys, *words)


def test_stdin_feeds_publish_and_estimate_reads_it_back(tmp_path, monkeypatch, capsys):
    """`--input -` reads CSV from standard input: the same release as from the file."""
    df, schema = privpub.datasets.load_adult()
    small = df.head(2000)
    text = small.to_csv(index=False)
    (tmp_path / "t.csv").write_text(text)
    base = ["publish", "splu", "--group-size", "5", "--sensitive", "occupation", "--seed", "1"]
    assert cli.main([*base, "--input", str(tmp_path / "t.csv"), "--output",
                     str(tmp_path / "file.parquet")]) == 0
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert cli.main([*base, "--input", "-", "--output", str(tmp_path / "stdin.parquet")]) == 0
    capsys.readouterr()
    for name in ("file", "stdin"):
        assert cli.main(["estimate", str(tmp_path / f"{name}.parquet"), "age > 50",
                         "--format", "json", "--output", "-"]) == 0
    first, second = capsys.readouterr().out.split("]\n[")
    assert json.loads(first + "]") == json.loads("[" + second)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert cli.main([*base, "--input", "-", "--output", str(tmp_path / "x.parquet")]) == 1
    assert "--input" in capsys.readouterr().err


@pytest.mark.parametrize("mechanism", [
    # The αβ view of Adult through a pipe takes seconds: the slow step runs it.
    pytest.param(["alphabeta", "--duplicates", "records"], marks=pytest.mark.slow),
    ["splu", "--group-size", "5", "--sensitive", "occupation"]])
def test_output_dash_writes_the_release_to_stdout_and_the_rest_to_stderr(
        tmp_path, monkeypatch, capsys, mechanism):
    """`--output -`: the Parquet bytes alone on standard output, the same release
    as written to a file; the guarantee goes to standard error."""
    df, _ = privpub.datasets.load_adult()
    df.head(300).to_csv(tmp_path / "t.csv", index=False)
    base = ["publish", *mechanism, "--input", str(tmp_path / "t.csv"), "--seed", "3"]
    assert cli.main([*base, "--output", str(tmp_path / "file.parquet")]) == 0
    capsys.readouterr()
    piped = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", piped)
    (tmp_path / "work").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "work"))  # where it is built
    assert cli.main([*base, "--output", "-"]) == 0
    (tmp_path / "piped.parquet").write_bytes(piped.buffer.getvalue())
    assert "Guarantee of" in capsys.readouterr().err
    on_file, from_pipe = (privpub.PublishedView.read_parquet(tmp_path / f"{n}.parquet")
                          for n in ("file", "piped"))
    assert (from_pipe.codes == on_file.codes).all()
    assert from_pipe.estimate("age > 50") == on_file.estimate("age > 50")
    assert not list((tmp_path / "work").iterdir())  # and removed


def test_output_dash_refuses_a_terminal(tmp_path, monkeypatch, capsys):
    df, _ = privpub.datasets.load_adult()
    df.head(50).to_csv(tmp_path / "t.csv", index=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert cli.main(["publish", "frapp", "--input", str(tmp_path / "t.csv"), "--output", "-",
                     "--duplicates", "records"]) == 1
    assert "standard output is a terminal" in capsys.readouterr().err


def test_splu_estimate_is_a_deprecated_alias_with_a_notice(tmp_path, capsys):
    df, schema = privpub.datasets.load_adult()
    path = tmp_path / "splu.parquet"
    privpub.splu.SPLUGen(5, "occupation", schema=schema).publish(df.head(1000), seed=1
                                                               ).to_parquet(path)
    assert cli.main(["splu", "estimate", str(path), "--value", "occupation=Sales",
                     "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "`privpub splu estimate` is deprecated; use `privpub estimate" in captured.err
    (row,) = json.loads(captured.out)
    assert cli.main(["estimate", str(path), "occupation = 'Sales'", "--format", "json"]) == 0
    (same,) = json.loads(capsys.readouterr().out)
    # The same estimate; `estimate` shows the query as written, the alias its --value.
    assert same.pop("query") == "occupation = 'Sales'"
    assert row.pop("query") == "count(occupation = 'Sales')"
    assert same == row


def test_an_oserror_naming_no_file_says_where_it_was_raised(monkeypatch, capsys):
    """`OSError: [Errno 9] Bad file descriptor` alone does not say whose
    descriptor: the message names the module, line and function."""
    import os

    from privpub.cli import publish

    def bad(args):
        os.close(-1)

    monkeypatch.setattr(publish, "_splu", bad)
    assert cli.main(["publish", "splu", "--input", "x.csv", "--output", "y.parquet",
                     "--group-size", "2", "--sensitive", "a"]) == 1
    err = capsys.readouterr().err
    assert "Bad file descriptor (at test_cli_options.py:" in err and "in bad)" in err


# 4 records of a 20-tuple domain: the bound is wide, which the release says
# (UsefulnessWarning); this test checks how the command line reads its arguments.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_queries_may_follow_the_options(tmp_path, capsys):
    """`estimate R --format csv "a > 1"` took "a > 1" for an unknown argument."""
    schema = privpub.Schema([privpub.IntRange("a", 0, 9), privpub.Categorical("b", ["x", "y"])])
    frame = __import__("pandas").DataFrame({"a": [1, 2, 3, 1], "b": ["x", "y", "x", "x"]})
    path = tmp_path / "v.parquet"
    privpub.AlphaBeta(schema, 1.0, 0.0).publish(frame, duplicates="records", seed=1
                                                ).to_parquet(path)
    assert cli.main(["estimate", str(path), "a > 1", "--format", "json", "b = 'x'"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["query"], r["value"]) for r in rows] == [("a > 1", 2.0), ("b = 'x'", 3.0)]
    with pytest.raises(SystemExit):
        cli.main(["inspect", str(path), "stray"])
    assert "unrecognized arguments: stray" in capsys.readouterr().err


# A user's default filters (not the suite's `error`): the warning is shown, and what
# is checked is how the command shows it.
@pytest.mark.filterwarnings("default::privpub.UsefulnessWarning")
def test_a_warning_the_command_does_not_say_itself_is_one_line(monkeypatch, capsys):
    """No file path or source line of privpub's reaches a user (a SPLU release's card
    printed '/…/splu/mechanism.py:223: ReconstructionWarning: …' and the line)."""
    def run(args):
        import warnings

        warnings.warn("the EM stopped at\n  the cap", privpub.UsefulnessWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(cli.release, "_inspect", run)
    assert cli.main(["inspect", "x.parquet"]) == 0
    err = capsys.readouterr().err
    assert err == "privpub: warning: the EM stopped at the cap\n"


# A user's default filters (not the suite's `error`): the warning is shown, and what
# is checked is how the command shows it.
@pytest.mark.filterwarnings("default::privpub.UsefulnessWarning")
def test_messages_escape_control_characters(tmp_path, monkeypatch, capsys):
    """Terminal escapes and other control characters read from an input (Arrow
    quotes a bad CSV row as it is) reach the terminal as text: \\x1b, not ESC."""
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n1,2\n3,\x1b[2J\x1b]0;owned\x07,4\n")
    assert cli.main(["publish", "alphabeta", "--input", str(path), "--output",
                     str(tmp_path / "v.parquet"), "--duplicates", "set"]) == 1
    err = capsys.readouterr().err
    assert "got 3: 3,\\x1b[2J\\x1b]0;owned\\x07,4" in err, err
    assert not any(c in err for c in "\x1b\x07") and err.count("\n") == 1

    def run(args):
        import warnings

        warnings.warn("a value \u202ereversed\x1b[0m", privpub.UsefulnessWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(cli.release, "_inspect", run)
    assert cli.main(["inspect", "x.parquet"]) == 0
    assert capsys.readouterr().err == "privpub: warning: a value \\u202ereversed\\x1b[0m\n"
