"""Every file, folder and doc that a comment, a docstring or a text of the repo cites is in
the repo, and every part of a doc cited in quotes is in that doc: a reader who follows a
reference finds what it names, and a renamed or deleted file cannot leave its citations
dangling.
"""

from __future__ import annotations

import re
from pathlib import Path

#: The checkout (from this file: the package may be installed elsewhere, as CI installs it).
REPO = Path(__file__).resolve().parents[1]
#: What the references are read in: the package, the Rust kernels, tests, benches, docs, CI.
CITING = ("python", "rust/src", "tests", "benches", "docs", ".ci", "README.md", "mkdocs.yml",
          "pyproject.toml")
#: Names of docs that are not this repo's, and what they are.
NOT_OURS = {"doc/specs/thrift-compact-protocol.md": "the Thrift spec (rust/src/pages.rs)",
            "FILE.md": "the metavar of `privpub bench --output`"}
#: Paths that name no file of the repo on purpose, and why.
PLANTED = {"bindings/extra.rs": "test_layout's mirror check plants it in a copy",
           "_core/weeding.pyi": "test_layout's mirror check plants it in a copy"}
#: A doc of this repo: a path with a folder (docs/design.md) or a capitalised name
#: (README.md); a bare lower-case name (bench.md) is a file the code writes.
DOC_REF = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+[\w.-]+\.md|[A-Z][A-Z_]*\.md)\b")
#: A path with a folder (docs/, tests/viewfile/test_tampering.py); which ones are this
#: repo's is decided by their first folder (`cited_path`).
PATH_REF = re.compile(r"(?<![\w./<-])(\.?[\w-]+(?:/[\w.-]+)*/[\w.-]*)")
#: Folders that start a path from the checkout's top: such a path names a file or folder.
TOPS = (".ci", "python", "rust", "tests", "benches", "docs")
#: Folders that start a path from inside the package or the Rust sources
#: (alphabeta/planning.py, bindings/X.rs): such a path names a file when it ends in an
#: extension, a folder when it ends in a slash; else it is prose (experiments/cli).
INSIDE = ("privpub", "src", *sorted(p.name for p in (REPO / "python" / "privpub").iterdir()
                                    if p.is_dir() and not p.name.startswith("__")),
          *sorted(p.name for p in (REPO / "rust" / "src").iterdir() if p.is_dir()))
#: Where a path may start: the checkout, the citing file's folder, the package, the sources.
BASES = ("", "python", "python/privpub", "rust", "rust/src")
#: Files whose paths start elsewhere: mkdocs.yml's pages are in its docs_dir.
RELATIVE_TO = {"mkdocs.yml": "docs"}


def _plain(text: str) -> str:
    """Text as read: comment marks at line starts, markup and line breaks gone."""
    text = re.sub(r"(?m)^\s*(?://[/!]?|#:?)", " ", text)
    return " ".join(re.sub(r"[`*]", "", text).split()).lower()


def cited_path(token: str) -> str | None:
    """The repo path a token cites, or None where it is not one (a URL's tail, prose).
    A sentence's full stop is not part of it."""
    token = token.rstrip(".")
    head, _, _ = token.partition("/")
    if head in TOPS:
        return token
    if head in INSIDE and (token.endswith("/") or re.search(r"\.\w+$", token)):
        return token
    return None


def path_exists(path: Path, name: str) -> bool:
    """``name`` from the checkout, the citing file's folder, the package or the Rust
    sources; a folder called ``X`` stands for any name (rust/src/bindings/X.rs)."""
    pattern = "/".join("*" if part == "X" else part for part in name.rstrip("/").split("/"))
    pattern = re.sub(r"(^|/)X\.", r"\1*.", pattern)
    roots = [REPO / b for b in BASES] + [path.parent, REPO / RELATIVE_TO.get(path.name, "")]
    return any(next(root.glob(pattern), None) is not None for root in roots)


def doc_reference_faults(path: Path, text: str | None = None) -> list[str]:
    """Each cited file or doc that does not exist, and each cited part of a doc that it
    does not hold. A part is cited in quotes after the file (``docs/design.md,
    "Conventions"``): the first words of a heading, a list item or a paragraph; an
    unquoted heading after the file is refused, as nothing could check it. ``text``
    stands in for the file's own."""
    text = path.read_text() if text is None else text
    faults = []

    def where(m: re.Match) -> str:
        return f"{path.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}"

    for m in PATH_REF.finditer(text):
        name = cited_path(m.group(1))
        if name and not name.endswith(".md") and name not in PLANTED \
                and not path_exists(path, name):
            faults.append(f"{where(m)}: {name} does not exist")
    for m in DOC_REF.finditer(text):
        name = m.group(1)
        if name in NOT_OURS:
            continue
        doc = next((p for p in (REPO / name, path.parent / name,
                                REPO / RELATIVE_TO.get(path.name, "") / name) if p.is_file()), None)
        if doc is None:
            faults.append(f"{where(m)}: {name} does not exist")
            continue
        after, body = text[m.end():m.end() + 300], doc.read_text()
        quoted = re.match(r'\s*[,(;]\s*"([^"]+)"', after)
        bare = re.match(r"\s*[,(]\s*([^\"]+)", after)
        headings = [_plain(re.split(r"[(:]", h)[0]) for h in re.findall(r"(?m)^#+ (.+)$", body)]
        parts = [_plain(re.sub(r"^\s*(#+|[-*]|\d+\.)\s", "", block))
                 for block in re.split(r"\n(?=\s*(?:#|[-*] |\d+\. |\n))", body)]
        if quoted and not any(part.startswith(_plain(quoted.group(1))) for part in parts):
            faults.append(f"{where(m)}: {name} holds no {quoted.group(1)!r}")
        elif not quoted and bare and any(_plain(bare.group(1)).startswith(h) for h in headings):
            faults.append(f"{where(m)}: quote the part of {name} cited: {bare.group(1)[:40]!r}")
    return faults


def citing_files() -> list[Path]:
    found = []
    for top in CITING:
        path = REPO / top
        found += [path] if path.is_file() else [
            p for p in sorted(path.rglob("*")) if p.is_file()
            and (p.suffix in (".py", ".pyi", ".rs", ".md") or path.name == ".ci")]
    return found


def test_every_cited_file_doc_and_part_exists():
    files = citing_files()
    assert len(files) > 100
    assert REPO / ".ci" / "run" in files
    found = [fault for path in files for fault in doc_reference_faults(path)]
    assert not found, "\n".join(found)


def test_the_check_sees_each_kind_of_fault():
    """Power: a missing doc, a missing part, an unquoted heading, a missing file from the
    checkout's top, from the package and from the Rust sources, and a missing folder are
    each reported; a quoted passage across comment lines, a file the code writes, another
    project's doc, a URL, prose with a slash and a placeholder folder are not."""
    design = "docs/" + "design.md"
    planted = ["# DESIGN" ".md says so", f'# {design}, "No such section"',
               f"# {design}, Notes on the papers", "# tests/tables/" "test_gone.py",
               "# see alphabeta/" "gone.py.", "# bindings/" "gone.rs", "# tests/" "gone/",
               f'# ({design}, "Notes on\n#: the papers")', "# writes bench" ".md",
               f"# {sorted(NOT_OURS)[0]}", "# https://docs.pytest.org/en/stable/x.py",
               "# experiments/cli and report/planning", "# each rust/src/bindings/X.rs",
               "# tests/test_layout.py, tests/data/", "# see tables/."]
    faults = doc_reference_faults(Path(__file__), "\n".join(planted) + "\n")
    lines = [f.split(": ", 1)[0].rsplit(":", 1)[1] for f in faults]
    assert sorted(lines, key=int) == ["1", "2", "3", "4", "5", "6", "7"], faults
