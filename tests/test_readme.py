"""The README's set-up commands stay true. (Its examples and command lines, and
docs/'s, are checked by test_docs_examples.py.)"""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_exactly_two_setup_commands_and_ci_runs_the_test_one():
    text = README.read_text()
    commands = re.findall(r"^    (pip install .*)$", text, re.M)
    assert commands == ['pip install . && privpub demo', 'pip install ".[test]" && pytest']
    ci = (README.parent / ".ci" / "run").read_text()
    assert "\n" + commands[1] + "\n" in ci
