"""Each kind of release card, opened in a real headless browser (Debian's
``chromium``, driven by playwright with the system binary: nothing is
downloaded). From the rendered page: no console error, every image loaded,
nothing wider than an A4 page, the headline figures equal to the API's, the
papers' wording closed until a reader clicks it open; a
full-page screenshot of each is written (to ``PRIVPUB_SCREENSHOTS`` if set,
e.g. docs/cards for the README's pictures, else a temporary directory).

CI's script installs chromium (.ci/run); without it these tests fail under CI
(``PRIVPUB_REQUIRE_BROWSER`` set, as .ci/run sets it) and are skipped elsewhere
with how to install it.
"""

from __future__ import annotations

import os
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import privpub
from privpub.graphs import Graph, LaplaceMechanism, MultipleQueryMechanism, triangle, two_path

pytestmark = pytest.mark.slow
#: A4's width at 96 px per inch (210 mm); the card must fit it.
A4_WIDTH, A4_HEIGHT = 794, 1123
CHROMIUM = os.environ.get("PRIVPUB_CHROMIUM", "/usr/bin/chromium")
INSTALL = ("install it with `apt-get install -y chromium` (.ci/run does) and "
           "`pip install playwright`")


@pytest.fixture(scope="module")
def browser():
    missing = None
    if not (shutil.which(CHROMIUM) or os.path.exists(CHROMIUM)):
        missing = f"no chromium at {CHROMIUM}"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "playwright is not installed"
    if missing:
        if os.environ.get("PRIVPUB_REQUIRE_BROWSER"):
            pytest.fail(f"{missing}: the browser tests need it; {INSTALL}")
        pytest.skip(f"{missing}; {INSTALL}")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    out = os.environ.get("PRIVPUB_SCREENSHOTS")
    path = Path(out) if out else tmp_path_factory.mktemp("cards")
    path.mkdir(parents=True, exist_ok=True)
    return path


def render(browser, html_path: Path, png_path: Path) -> dict:
    """Open the card; return what the checks read from the rendered page."""
    page = browser.new_page(viewport={"width": A4_WIDTH, "height": A4_HEIGHT})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning")
            else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: errors.append(f"request {r.url[:60]}")
            if not r.url.startswith(("file:", "data:")) else None)
    page.goto(html_path.as_uri(), wait_until="load")
    found = page.evaluate("""() => ({
        images: [...document.images].map(i => ({complete: i.complete, width: i.naturalWidth,
                                                 shown: i.getBoundingClientRect().width})),
        scrollWidth: document.documentElement.scrollWidth,
        widest: Math.max(...[...document.querySelectorAll('body *')].map(
            e => e.getBoundingClientRect().right)),
        headlines: Object.fromEntries([...document.querySelectorAll('[data-headline]')].map(
            e => [e.dataset.headline, e.dataset.value])),
        sections: [...document.querySelectorAll('section')].map(s => s.id),
        details: document.querySelectorAll('details').length,
        open: document.querySelectorAll('details[open]').length,
        text: document.body.innerText,
    })""")
    page.screenshot(path=str(png_path), full_page=True)
    page.emulate_media(media="print")
    found["printWidth"] = page.evaluate("document.documentElement.scrollWidth")
    # The papers' wording is one click deeper: closed, then shown when each summary is
    # clicked (after the screenshot, which shows the page as it opens).
    for summary in page.query_selector_all("details summary"):
        summary.click()
    found["opened"] = page.evaluate("document.body.innerText")
    page.close()
    found["errors"] = errors
    return found


def check(found: dict, png: Path, images: int) -> None:
    assert found["errors"] == []
    assert len(found["images"]) == images
    assert all(i["complete"] and i["width"] > 0 and i["shown"] > 0 for i in found["images"])
    assert found["scrollWidth"] <= A4_WIDTH and found["printWidth"] <= A4_WIDTH
    assert found["widest"] <= A4_WIDTH
    assert png.stat().st_size > 10_000
    assert found["open"] == 0  # every details element starts closed
    # What only the papers' wording says is hidden until a reader opens it.
    for word in ("Bernstein's inequality", "d-exclusive", "Theorem 4.3"):
        assert word not in found["text"]
    if found["details"]:
        assert len(found["opened"]) > len(found["text"])


def table_headlines(found: dict, release) -> None:
    """The figures every table card shows, against the API."""
    claims = release.guarantee().claims
    heads = found["headlines"]
    assert int(heads["rows"]) == len(release)
    assert int(heads["claims"]) == len(claims)
    assert int(heads["claims-hold"]) == sum(c.holds for c in claims)
    bound = release.parameters.get("error_bound")
    assert ("error-bound" in heads) == (bound is not None)
    if bound is not None:
        assert float(heads["error-bound"]) == bound


@pytest.fixture(scope="module")
def adult():
    return privpub.datasets.load_adult()


def quiet(build):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.UsefulnessWarning)
        return build()


def card_of(release, path: Path, **kwargs) -> Path:
    release.report(**kwargs).write(path, overwrite=True)
    return path


def test_adult_alphabeta_default(browser, shots, adult, tmp_path):
    """The README's card: Adult at the default calibration, with data and audits."""
    df, schema = adult
    view = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(
        df, seed=1, duplicates="set")
    png = shots / "adult-alphabeta.png"
    found = render(browser, card_of(view, tmp_path / "ab.html", data=df, audit=True), png)
    check(found, png, images=3)
    table_headlines(found, view)
    p = view.parameters
    heads = found["headlines"]
    assert float(heads["posterior-at-d"]) == privpub.accounting.alphabeta_posterior(
        p["d"], p["alpha"], p["beta"], True)
    assert 0 <= int(heads["coverage"]) <= 12 and 0 <= float(heads["audit-recovered"]) <= 1
    assert found["sections"] == ["released", "protected", "accuracy", "attacker",
                                 "alternatives"]
    assert found["details"] >= len(view.guarantee().claims)
    assert "Link attacks" in found["text"]
    assert "d-exclusive" in found["opened"] and "Bernstein's inequality" in found["opened"]


def test_adult_splu(browser, shots, adult, tmp_path):
    df, schema = adult
    with pytest.warns(UserWarning, match="no decoy group"):  # 30,162 = 5·6,032 + 2
        view = privpub.SPLUGen(5, "occupation").publish(df, schema=schema, seed=1)
    png = shots / "adult-splu.png"
    written = card_of(view, tmp_path / "splu.html", data=df, audit=True)  # notes, no warnings
    found = render(browser, written, png)
    check(found, png, images=2)  # accuracy and alternatives: no posterior curve for SPLU
    table_headlines(found, view)


def test_adult_frapp(browser, shots, adult, tmp_path):
    df, schema = adult
    view = quiet(lambda: privpub.FRAPP.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(
        df, seed=1, duplicates="records"))
    png = shots / "adult-frapp.png"
    found = render(browser, card_of(view, tmp_path / "frapp.html", data=df), png)
    check(found, png, images=3)
    table_headlines(found, view)


def test_multiview_second_view(browser, shots, adult, tmp_path):
    df, schema = adult
    pub = privpub.MultiViewPublisher(
        privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10), max_views=3)
    pub.publish(df, seed=1, duplicates="set")
    view = quiet(lambda: pub.publish(df, seed=2, duplicates="set"))
    png = shots / "adult-multiview.png"
    found = render(browser, card_of(view, tmp_path / "mv.html", data=df), png)
    check(found, png, images=2)
    table_headlines(found, view)


def test_dask_release_and_its_directory(browser, shots, adult, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    df, schema = adult
    release = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(
        dd.from_pandas(df, npartitions=2), seed=1, duplicates="set")
    lazy = render(browser, card_of(release, tmp_path / "lazy.html"), shots / "adult-dask.png")
    check(lazy, shots / "adult-dask.png", images=3)
    table_headlines(lazy, release.view())
    opened = release.to_parquet(tmp_path / "release")
    png = shots / "adult-dask-directory.png"
    found = render(browser, card_of(opened, tmp_path / "dask.html"), png)
    check(found, png, images=3)
    table_headlines(found, opened)
    assert found["headlines"] == lazy["headlines"]  # the same release, computed or reopened


EDGES = np.array([[0, 1], [1, 2], [2, 0], [2, 3]])


def test_graph_answers(browser, shots, tmp_path):
    g = Graph.from_edges(EDGES, m=10)
    answer = LaplaceMechanism.for_graph(1.0, triangle(), g).answer(g, seed=6)
    png = shots / "graph-answer.png"
    found = render(browser, card_of(answer, tmp_path / "graph.html", data=g), png)
    check(found, png, images=0)
    assert float(found["headlines"]["stderr"]) == answer.estimate().stderr
    assert int(found["headlines"]["rows"]) == 1
    wide = Graph.from_edges(EDGES, m=100)  # the uniform branch needs Σ g_i/m ≤ γ
    answers = MultipleQueryMechanism.for_graph(1.0, 0.1, [triangle(), two_path()],
                                               wide).answer(wide, seed=3)
    png = shots / "graph-answers.png"
    found = render(browser, card_of(answers, tmp_path / "graphs.html"), png)
    check(found, png, images=0)
    assert float(found["headlines"]["stderr"]) == answers.estimate(0).stderr
    assert int(found["headlines"]["rows"]) == 2
    assert int(found["headlines"]["claims-hold"]) == sum(
        c.holds for c in answers.guarantee().claims)


def test_penguins(browser, shots, tmp_path):
    """A real table that is not Adult, with missing cells (tests/corpus.py)."""
    from corpus import penguins

    table = penguins()
    k, gamma = table.request
    view = quiet(lambda: privpub.AlphaBeta.for_privacy(
        table.schema, n=len(table.frame), gamma=gamma, k=k).publish(
            table.frame, seed=1, duplicates="set"))
    png = shots / "penguins-alphabeta.png"
    found = render(browser, card_of(view, tmp_path / "penguins.html", data=table.frame,
                                    audit=True), png)
    check(found, png, images=3)
    table_headlines(found, view)


#: A condition as the card writes it: "name" = 'text' or "name" = number.
SHOWN_CONDITION = re.compile(r'"((?:[^"]|"")+)" = (\'(?:[^\']|\'\')*\'|-?[\d.]+)')


def labels_shown(text: str, schema) -> None:
    """Every value the card's text puts in a condition is a label of its attribute's
    domain (a category's text, a band's label, a year), never a domain index."""
    found = SHOWN_CONDITION.findall(text)
    assert found
    for name, literal in found:
        name = name.replace('""', '"')
        if name not in schema.names:
            continue  # (a claim's statement may quote other text)
        value = (literal[1:-1].replace("''", "'") if literal.startswith("'") else
                 float(literal) if "." in literal else int(literal))
        assert schema.index_of(name, value) is not None, (name, literal)


@pytest.mark.parametrize("name, family", [
    ("co2", "alphabeta"),            # dates as year/month/day, an ordered band, missing cells
    ("airports", "splu"),            # 3,376 and 2,675 values, missing cells, bands
    ("fair", "alphabeta-records"),   # float codes, repeated tuples published as records
])
def test_corpus_tables(browser, shots, tmp_path, name, family):
    """Real tables that are not Adult (tests/corpus.py), each with a family's card:
    rendered as the others, and every value shown by its label."""
    import corpus

    table = getattr(corpus, name)()
    k, gamma = table.request
    if family == "splu":
        with pytest.warns(UserWarning, match="no decoy group"):  # 3,376 = 5·675 + 1
            view = privpub.SPLUGen(5, table.sensitive).publish(table.frame,
                                                               schema=table.schema, seed=1)
    else:
        view = quiet(lambda: privpub.AlphaBeta.for_privacy(
            table.schema, n=len(table.frame), gamma=gamma, k=k).publish(
                table.frame, seed=1,
                duplicates="records" if family.endswith("records") else "set"))
    png = shots / f"{name}-{family}.png"
    written = card_of(view, tmp_path / f"{name}.html", data=table.frame, audit=True)
    found = render(browser, written, png)
    check(found, png, images=2 if family == "splu" else 3)
    table_headlines(found, view)
    labels_shown(found["text"], table.schema)
