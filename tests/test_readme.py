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


def command_lines(text: str) -> list[str]:
    """`privpub …` lines of a text (indented code or help examples), with
    backslash continuations joined."""
    text = re.sub(r"\\\n\s*", " ", text)
    lines = re.findall(r"^\s+(privpub (?:[a-z].*))$", text, re.M)
    return lines


def test_every_documented_command_line_parses():
    """The command lines in README.md, docs/ and every --help's examples are
    accepted by the parser (so a renamed option breaks this test, not a user)."""
    import argparse
    import shlex

    from privpub.cli import build_parser

    parser = build_parser()
    texts = [README.read_text(), *(p.read_text() for p in (README.parent / "docs").glob("*.md"))]
    stack = [parser]
    while stack:
        p = stack.pop()
        texts.append(p.format_help())
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
    commands = parser._subparsers._group_actions[0].choices
    # Prose that starts a line with "privpub …" is not a command line.
    lines = [line for text in texts for line in command_lines(text)
             if line.split()[1] in commands or line.split()[1].startswith("-")]
    assert len(lines) > 30
    for line in lines:
        words = shlex.split(line, comments=True)
        for end in ("|", ">"):  # a shell pipe or redirect ends the command
            words = words[:words.index(end)] if end in words else words
        try:
            parser.parse_args(words[1:])
        except SystemExit as exc:
            raise AssertionError(f"documented command does not parse: {line}") from exc
