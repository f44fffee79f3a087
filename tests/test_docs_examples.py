"""Every example in README.md and docs/*.md works as shown.

- Each fenced ```python block runs verbatim as a script: written alone into a fresh
  directory, run by this interpreter in a subprocess from that directory, exit code 0.
  A block needs nothing from another block or from the test: what it reads ships with
  privpub or is made by the block, and what it writes goes into a new directory of its
  own (tempfile.mkdtemp(); TMPDIR points into pytest's tmp_path, so no run sees another's
  files).
- Each `privpub …` command line (indented or fenced shell blocks, inline `privpub …`
  code in the prose, and every --help's examples) names real subcommands and real
  options of the parser in privpub.cli, spelled out in full: a renamed subcommand or
  option fails here. Complete command lines (code blocks, --help examples) must also
  parse; nothing is run.
- Each fenced ```yaml schema block is read by the CLI's --schema loader.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON_LANGS = {"python", "py", "python3"}
SHELL_LANGS = {"sh", "bash", "shell", "console", "shell-session", ""}
TIMEOUT = 600  # a hang guard, not a speed assertion: the slowest block takes about 10 s

# What an example promises in a comment about its own output, checked on its stdout.
EXPECTED_STDOUT = {
    ("README.md", 0): ["column 'sex': value 'X' at row 1 is outside the domain"],
}


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def fenced_blocks(path: Path) -> list[tuple[str, int, str]]:
    """(language, line number of the first code line, code) of each fenced block."""
    blocks, lang, start, body = [], None, 0, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = re.match(r"^\s*(```+|~~~+)\s*([\w+-]*)", line)
        if lang is None and fence:
            lang, start, body = fence.group(2).lower(), number + 1, []
        elif lang is not None and fence and not fence.group(2):
            blocks.append((lang, start, "\n".join(body) + "\n"))
            lang = None
        elif lang is not None:
            body.append(line)
    assert lang is None, f"{_rel(path)}: unclosed code fence opened before line {start}"
    return blocks


def python_blocks() -> list:
    params = []
    for path in DOCS:
        blocks = [b for b in fenced_blocks(path) if b[0] in PYTHON_LANGS]
        for index, (_, line, code) in enumerate(blocks):
            name = _rel(path)
            # A LocalCluster starts worker processes (seconds): such a block runs
            # in the slow step (CI runs it).
            marks = [pytest.mark.slow] if "LocalCluster(" in code else []
            params.append(pytest.param(name, index, line, code, marks=marks,
                                       id=f"{name}:block{index}:L{line}"))
    return params


def test_the_docs_have_the_examples_this_file_checks():
    """Extraction found what is known to be there (a broken extractor checks nothing)."""
    ids = [p.id for p in python_blocks()]
    assert any(i.startswith("README.md:block1:") for i in ids), ids
    assert any(i.startswith("docs/scaling.md:block0:") for i in ids), ids
    assert len(documented_commands()) > 40
    assert all(key[0] in {p.values[0] for p in python_blocks()} for key in EXPECTED_STDOUT)


def test_examples_run_the_package_under_test(tmp_path):
    out = subprocess.run([sys.executable, "-c", "import privpub; print(privpub.__file__)"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT)
    import privpub

    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve() == Path(privpub.__file__).resolve()


@pytest.mark.parametrize(("doc", "index", "line", "code"), python_blocks())
def test_python_block_runs_as_a_script(doc, index, line, code, tmp_path):
    work = tmp_path / "cwd"
    temp = tmp_path / "tmp"
    work.mkdir()
    temp.mkdir()
    script = work / f"example_{re.sub(r'[^A-Za-z0-9]', '_', doc)}_{index}.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "TMPDIR": str(temp)}
    try:
        out = subprocess.run([sys.executable, script.name], cwd=work, env=env,
                             capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{doc} python block {index} did not finish in {TIMEOUT} s "
                    f"(hang guard); stderr:\n{exc.stderr}")
    if out.returncode != 0:
        pytest.fail(f"{doc} python block {index} exited with {out.returncode} (line N of the "
                    f"script is line {line - 1} + N of {doc})\n"
                    f"--- stderr (end) ---\n{out.stderr[-6000:]}\n"
                    f"--- stdout (end) ---\n{out.stdout[-2000:]}", pytrace=False)
    for expected in EXPECTED_STDOUT.get((doc, index), []):
        assert expected in out.stdout, f"{doc} python block {index} did not print {expected!r}"


@pytest.mark.parametrize(
    ("doc", "line", "code"),
    [pytest.param(_rel(p), line, code, id=f"{_rel(p)}:L{line}")
     for p in DOCS for lang, line, code in fenced_blocks(p) if lang in {"yaml", "yml"}])
def test_yaml_schema_block_is_read_by_the_cli(doc, line, code, tmp_path):
    from privpub.cli.common import read_schema

    path = tmp_path / "schema.yaml"
    path.write_text(code, encoding="utf-8")
    assert read_schema(str(path)).names


# ---- command lines ---------------------------------------------------------------------


def split_commands(line: str) -> list[list[str]]:
    """The words of each simple command of a shell line: split at ``&&``, ``||``, ``;``
    and ``|``; a redirection ends its command; ``#`` starts a comment."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands, words, redirected = [], [], False
    for token in lexer:
        if token in {"&&", "||", ";", "|", "&"}:
            commands.append(words)
            words, redirected = [], False
        elif set(token) <= set("<>&|();"):
            redirected = True
        elif not redirected:
            words.append(token)
    commands.append(words)
    return [c for c in commands if c]


COMMAND_START = r"(^|[;&|]\s*)privpub\s"  # a shell command (not prose) that runs privpub


def _command_lines(path: Path) -> list[tuple[int, str, bool]]:
    """(line number, text, complete?) of each `privpub …` command in a markdown file:
    lines of indented and shell-fenced code blocks (complete commands) and inline code
    spans in the prose (possibly partial: `privpub publish alphabeta`)."""
    found, fence_lang = [], None
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        fence = re.match(r"^\s*(```+|~~~+)\s*([\w+-]*)", line)
        if fence:
            fence_lang = fence.group(2).lower() if fence_lang is None else None
            continue
        if fence_lang is not None:
            if fence_lang in SHELL_LANGS:
                code = re.sub(r"^\s*\$\s+", "", line)
                if re.search(COMMAND_START, code.strip()):
                    found.append((number, code.strip(), True))
            continue
        if re.match(r"^( {4,}|\t)\S", line) and re.search(COMMAND_START, line.strip()):
            found.append((number, line.strip(), True))  # an indented code line
            continue
        for span in re.findall(r"`(privpub\s[^`]+)`", line):
            found.append((number, span, False))
    return found


def _help_examples() -> list[tuple[str, str]]:
    """(parser, line) for each `privpub …` line of every parser's examples (in its
    description or epilog; backslash continuations joined)."""
    from privpub.cli import build_parser

    found, stack = [], [build_parser()]
    while stack:
        parser = stack.pop()
        text = re.sub(r"\\\n\s*", " ", f"{parser.description or ''}\n{parser.epilog or ''}")
        for line in text.splitlines():
            if re.match(r"^\s+privpub\s", line):
                found.append((parser.prog, line.strip()))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
    return found


def documented_commands() -> list:
    params = []
    for path in DOCS:
        for number, text, complete in _command_lines(path):
            for words in split_commands(text):
                if words[0] == "privpub":
                    params.append(pytest.param(words, complete, text,
                                               id=f"{_rel(path)}:L{number}:{' '.join(words[1:3])}"))
    return params


def _strict_parser() -> argparse.ArgumentParser:
    """The CLI's parser with abbreviations refused everywhere, so that an option the code
    renamed to a longer name (--gamma → --gamma-max) is not accepted as a prefix."""
    from privpub.cli import build_parser

    root = build_parser()
    stack = [root]
    while stack:
        parser = stack.pop()
        parser.allow_abbrev = False
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
    return root


def check_command(words: list[str], complete: bool) -> None:
    """Fail unless every subcommand and option in ``privpub WORDS…`` exists (exact
    spelling); if the command is complete, it must also parse."""
    assert words[0] == "privpub", words
    parser, args = _strict_parser(), words[1:]
    current, path, i = parser, ["privpub"], 0
    while i < len(args):
        word = args[i]
        subparsers = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if word == "--":
            break
        if word.startswith("-") and len(word) > 1:
            name = word.split("=", 1)[0]
            action = current._option_string_actions.get(name)
            if action is None:
                raise AssertionError(
                    f"{' '.join(path)} has no option {name!r} "
                    f"(it has {', '.join(sorted(current._option_string_actions))})")
            if "=" not in word:  # skip its values
                if action.nargs is None:
                    i += 1
                elif action.nargs == "?":
                    i += i + 1 < len(args) and not args[i + 1].startswith("-")
                elif isinstance(action.nargs, int):
                    i += action.nargs
                else:  # "*" or "+"
                    while i + 1 < len(args) and not args[i + 1].startswith("-"):
                        i += 1
        elif subparsers:
            choices = subparsers[0].choices
            if word not in choices:
                raise AssertionError(
                    f"{' '.join(path)} has no subcommand {word!r} (it has {', '.join(choices)})")
            current = choices[word]
            path.append(word)
        i += 1
    if complete:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                parser.parse_args(args)
            except SystemExit:
                raise AssertionError(f"does not parse ({err.getvalue().strip()})") from None


@pytest.mark.parametrize(("words", "complete", "line"), documented_commands())
def test_documented_command_names_real_subcommands_and_options(words, complete, line):
    check_command(words, complete)


def test_help_examples_name_real_subcommands_and_options():
    examples = _help_examples()
    assert len(examples) > 20
    failures = []
    for prog, line in examples:
        for words in split_commands(line):
            if words[0] != "privpub":  # `privpub inspect … | jq .guarantee`
                continue
            try:
                check_command(words, complete=True)
            except AssertionError as exc:
                failures.append(f"{prog} --help: {line}: {exc}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(("line", "message"), [
    ("privpub publish alphabeta --input t.csv --output v.parquet --gama 0.2",
     "no option '--gama'"),
    ("privpub publish alphabeta --input t.csv --output v.parquet --gam 0.2",
     "no option '--gam'"),  # a prefix of --gamma: abbreviations are refused
    ("privpub pubish alphabeta --input t.csv", "no subcommand 'pubish'"),
    ("privpub publish alphabeta --input t.csv", "does not parse"),  # --output is required
    ("pip install . && privpub inspect", "does not parse"),
    ("privpub estimate v.parquet 'age > 50' --format yaml > out.txt", "does not parse"),
])
def test_the_command_check_rejects_what_it_should(line, message):
    commands = [w for w in split_commands(line) if w[0] == "privpub"]
    assert len(commands) == 1
    with pytest.raises(AssertionError, match=re.escape(message)):
        check_command(commands[0], complete=True)


@pytest.mark.parametrize("line", [
    "privpub plan --input adult.csv --format json > plan.json",  # a redirect ends the command
    "privpub inspect v.parquet --format json | jq .guarantee",
    "privpub estimate v.parquet \"\\\"marital-status\\\" = 'Divorced'\" 'age > 50'  # a comment",
])
def test_the_command_check_accepts_the_shell_around_a_command(line):
    commands = [w for w in split_commands(line) if w[0] == "privpub"]
    assert len(commands) == 1
    check_command(commands[0], complete=True)
