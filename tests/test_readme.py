"""The README's usage example and set-up commands stay true."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_usage_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert "column 'sex': value 'X' at row 1" in capsys.readouterr().out


def test_exactly_two_setup_commands_and_ci_runs_the_test_one():
    text = README.read_text()
    commands = re.findall(r"^    (pip install .*)$", text, re.M)
    assert commands == ['pip install . && privpub demo', 'pip install ".[test]" && pytest']
    ci = (README.parent / ".ci" / "run").read_text()
    assert "\n" + commands[1] + "\n" in ci
