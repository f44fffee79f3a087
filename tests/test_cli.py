"""The ``privpub`` command (privpub.cli)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

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


def test_publish_and_estimate_commands(tmp_path, capsys):
    df, _ = privpub.datasets.load_adult()
    csv = tmp_path / "adult.csv"
    df.to_csv(csv, index=False)
    view = tmp_path / "view.parquet"
    assert cli.main(["publish", str(csv), "--out", str(view), "--seed", "4"]) == 1
    assert "--duplicates 'set'" in capsys.readouterr().err  # Adult repeats tuples
    assert cli.main(["publish", str(csv), "--out", str(view), "--seed", "4",
                     "--duplicates", "records"]) == 0
    out = capsys.readouterr()
    assert "(d, γ)-privacy, tuples with several records: does NOT hold" in out.out
    assert "(d, γ)-privacy: holds" in out.out and "inferred from the data" in out.err
    assert cli.main(["estimate", str(view), "age > 50", "\"marital-status\" = 'Divorced'"]) == 0
    printed = capsys.readouterr().out
    assert "age > 50" in printed and "estimate" in printed
    assert cli.main(["estimate", str(view), "agee > 3"]) == 1
    assert "unknown column 'agee'" in capsys.readouterr().err
    assert cli.main(["estimate", str(tmp_path / "missing.parquet"), "age > 3"]) == 1
    assert "No such file" in capsys.readouterr().err
