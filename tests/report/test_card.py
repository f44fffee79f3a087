"""Release cards: content, escaping, self-containment, headline figures, errors.

The browser checks (rendering, images, widths, screenshots) are in
test_browser.py; these read the HTML text and run in the quick suite."""

from __future__ import annotations

import html
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub.alphabeta.accounting import alphabeta_posterior
from privpub.graphs import Graph, LaplaceMechanism, triangle
from privpub.report.accuracy import resolution_warnings, sample_queries, true_counts
from privpub.report.protected import claims_table

HOSTILE = "<script>alert(1)</script>"


def headlines(page: str) -> dict[str, str]:
    """data-headline → data-value, as the page states them."""
    return dict(re.findall(r'data-headline="([^"]+)" data-value="([^"]*)"', page))


@pytest.fixture(scope="module")
def small():
    """A small table whose column name and values are HTML, and its αβ release."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({HOSTILE: rng.choice(["<b>bold</b>", "a&b", "plain"], 400),
                       "age": rng.integers(0, 100, 400), "zone": rng.integers(0, 50, 400),
                       "sex": rng.choice(["F", "M"], 400)})
    schema = privpub.Schema([privpub.Categorical(HOSTILE, ["<b>bold</b>", "a&b", "plain"]),
                             privpub.IntRange("age", 0, 99), privpub.IntRange("zone", 0, 49),
                             privpub.Categorical("sex", ["F", "M"])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.UsefulnessWarning)
        mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.5,
                                             k=1)
        view = mech.publish(df, seed=2, duplicates="set")
    return df, view


@pytest.fixture(scope="module")
def card(small):
    df, view = small
    return view.report(df, audit=True, n_targets=16, rounds=2).html


def test_data_strings_are_escaped(card):
    assert "<script" not in card.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in card
    assert "<b>bold</b>" not in card and "&lt;b&gt;bold&lt;/b&gt;" in card


def test_the_page_is_self_contained(card):
    links = re.findall(r'(?:src|href)="([^"]*)"', card)
    assert links and all(link.startswith("data:image/svg+xml;base64,") for link in links)
    assert "<script" not in card and "@import" not in card and "url(" not in card
    assert "<link" not in card


def test_every_section_is_there(card):
    for ident in ("released", "protected", "accuracy", "attacker", "alternatives"):
        assert f'<section id="{ident}">' in card
    assert card.count("<table") >= 6 and card.count("<img") == 3


def test_headline_figures_are_the_apis(small, card):
    df, view = small
    found = headlines(card)
    p, claims = view.parameters, view.guarantee().claims
    assert int(found["rows"]) == len(view)
    assert float(found["error-bound"]) == p["error_bound"]
    assert int(found["claims"]) == len(claims)
    assert int(found["claims-hold"]) == sum(c.holds for c in claims)
    assert float(found["posterior-at-d"]) == alphabeta_posterior(p["d"], p["alpha"], p["beta"],
                                                                 True)
    assert 0 <= int(found["coverage"]) <= 12


def test_verdicts_follow_the_guarantee(small, card):
    """Each claim's verdict is its own: a made-up guarantee with one claim of each
    kind, and the release's (all of whose claims hold)."""
    made = privpub.Guarantee("m", (
        privpub.Claim("a", True, "fine", "Thm 1"), privpub.Claim("b", False, "<i>no</i>", "Thm 2"),
        privpub.Claim("c", True, "weakly", "Thm 3", weak=True)))
    page = claims_table(made)
    assert page.count('class="fails">does NOT hold') == 1
    assert page.count('class="weak">holds only weakly') == 1
    assert page.count('class="holds">holds') == 1 and "&lt;i&gt;no&lt;/i&gt;" in page
    claims = small[1].guarantee().claims
    assert card.count('class="fails">does NOT hold') == sum(not c.holds for c in claims)
    assert card.count('class="holds">holds') == sum(c.holds and not c.weak for c in claims)


def test_truths_and_coverage_are_counted_independently(small, card):
    """The card's sampled queries, true counts recounted with pandas (distinct
    tuples: the release counts them) and coverage recomputed from estimate_many."""
    df, view = small
    schema = view.schema
    seed = privpub.resolve_seed(0)
    queries = sample_queries(schema, schema.digits(schema.encode(df)), [], 12, seed)
    distinct = df.drop_duplicates()
    truths = [int((distinct[list(q)] == pd.Series(q)).all(axis=1).sum()) for q in queries]
    found = true_counts(schema, schema.encode(df), schema.digits(schema.encode(df)), queries,
                        view.counts)
    assert found == truths and max(truths) > 0
    lo, hi = view.estimate_many(queries).interval()
    covered = int(np.sum((lo <= np.array(truths)) & (np.array(truths) <= hi)))
    assert int(headlines(card)["coverage"]) == covered


def test_sums_and_averages_sit_beside_the_counts(small, card):
    """The card sums and averages the first numeric column (age) over every record
    and the first sampled query; its true values, recomputed with pandas over the
    distinct tuples (what the release counts), are the card's."""
    df, view = small
    assert "Sums and averages of age" in card
    distinct = df.drop_duplicates()
    for value in (distinct.age.sum(), distinct.age.mean()):
        assert privpub.report.html.number(float(value)) in card
    estimate = view.estimate('SELECT sum("age") FROM I WHERE TRUE')
    assert privpub.report.html.number(estimate.value) in card


@pytest.mark.slow  # a second card with audits: seconds on a loaded machine
def test_the_card_is_reproducible(small, card):
    df, view = small
    assert view.report(df, audit=True, n_targets=16, rounds=2).html == card


def test_audit_needs_data(small):
    with pytest.raises(privpub.ParameterError, match="audit=True needs data="):
        small[1].report(audit=True)


@pytest.mark.parametrize("name, value, match", [
    ("n_queries", 0, "n_queries"), ("n_targets", 1, "n_targets"), ("rounds", 0, "rounds")])
def test_sizes_are_checked(small, name, value, match):
    with pytest.raises(privpub.ParameterError, match=match):
        small[1].report(**{name: value})


def test_write_is_whole_and_refuses_an_existing_file(small, card, tmp_path):
    card = privpub.report.Card(card)
    path = tmp_path / "card.html"
    card.write(path)
    assert path.read_text(encoding="utf-8") == card.html
    with pytest.raises(privpub.OutputExistsError):
        card.write(path)
    with pytest.raises(privpub.ParameterError, match=".html"):
        card.write(tmp_path / "card.txt")


def test_a_graph_answer_has_a_card():
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), m=10)
    answer = LaplaceMechanism.for_graph(1.0, triangle(), g).answer(g, seed=6)
    page = answer.report(g).html
    found = headlines(page)
    assert float(found["stderr"]) == answer.estimate().stderr
    assert int(found["rows"]) == 1
    assert "<td>6</td>" in page  # the true answer, q(I) = 6 (one triangle, 6 assignments)
    with pytest.raises(privpub.ParameterError, match="Graph"):
        answer.report(pd.DataFrame({"a": [1]}))


def test_a_weak_usefulness_claim_is_a_warning_block(card):
    """The warning block appears exactly for claims that hold only weakly (the
    guarantee's Resolution rule); the small release's bound resolves its counts."""
    weak = privpub.Claim("(ρ, ε)-usefulness", True, "bound ≥ typical count", "Thm 4.3",
                         weak=True)

    class Stub:
        def guarantee(self):
            return privpub.Guarantee("stub", (weak, privpub.Claim("x", True, "ok", "Thm")))

    block = resolution_warnings(Stub())
    assert block.count('class="warning"') == 1
    assert "cannot tell typical counts from zero" in block and "bound ≥ typical count" in block
    assert "cannot tell typical counts from zero" not in card


def test_a_release_of_data_without_repeats_has_its_alternatives():
    """Data that repeat no tuple publish with the record facts' duplicates = "none";
    the alternatives plan them as a set (the same when nothing repeats). plan refused
    "none" and the card with it."""
    schema = privpub.Schema([privpub.IntRange("a", 0, 99), privpub.IntRange("b", 0, 49)])
    df = pd.DataFrame({"a": np.arange(300) % 100, "b": np.arange(300) // 100})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.UsefulnessWarning)
        view = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.5, k=2).publish(df,
                                                                                      seed=1)
    assert view.parameters["records"]["duplicates"] == "none"
    page = view.report(df, n_queries=3).html
    assert "privpub.plan over γ" in page and "Not planned" not in page
    # The grid is at this release's k = d·m/n and marks its own request (its γ and
    # calibration), read from what the mechanism declares (StatesPrivacyRequest).
    assert "k = 2 (this release's)" in page
    assert "αβ (exclusive) — <strong>this release</strong>" in page


def test_the_verdict_states_the_headline_figures_in_its_sentence(small, card):
    """The card opens with one sentence holding the release's own figures: its error
    bound, its ε (and whether it is in force), the (d, γ) it meets. Each figure
    is found in the sentence's text as the page shows it, and is the API's."""
    df, view = small
    sentence = re.search(r'<p class="verdict">(.*?)</p>', card, re.S).group(1)
    found = headlines(sentence)
    mech = view.mechanism_object()
    bound = mech.stated_bound().bound
    request = mech.privacy_request()
    claim = view.guarantee()["ε-indistinguishability (replace one tuple)"]
    shown = privpub.report.html.number
    assert float(found["verdict-bound"]) == bound and f"{shown(bound)}</span>" in sentence
    assert float(found["verdict-d"]) == request.d and float(found["verdict-gamma"]) == 0.5
    assert float(found["verdict-epsilon"]) == claim.epsilon
    plain = re.sub(r"<[^>]+>", "", sentence)
    assert f"Counts above about {shown(bound)} are told from zero with 95% confidence" in plain
    assert f"ε = {shown(claim.epsilon)}" in plain and "γ = 0.5" in plain
    assert ("not in force" in plain) == (not claim.holds)
    assert card.index('class="verdict"') < card.index('class="summary"')


def test_a_verdict_says_what_a_release_does_not_state():
    """A graph answer has no count bound and states its ε; a made-up guarantee
    without an ε is said to have none, never given one."""
    from privpub.report.verdict import verdict

    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), directed=True, m=40)
    answer = LaplaceMechanism.for_graph(1.0, triangle(), g).answer(g, seed=1)
    text = re.sub(r"<[^>]+>", "", verdict(answer))
    assert text.startswith("Its answer's noise law and interval are below; ε = 1 ")

    class NoEpsilon:
        answers_own_query = False

        def guarantee(self):
            return privpub.Guarantee("m", (privpub.Claim("a", True, "fine", "Thm 1"),))

        def mechanism_object(self):
            return object()

    text = re.sub(r"<[^>]+>", "", verdict(NoEpsilon()))
    assert text == ("This release states no error bound for its counts; no finite ε is stated "
                    "(differential privacy, one tuple replaced) (see who is protected).")


def test_the_attribute_audit_has_a_plain_verdict_against_its_prior(card):
    """The verdict follows the recovered share's interval against the prior: above
    it a leak, below it none, across it none found at this size."""
    from privpub.report.attacker import attribute_verdict

    assert attribute_verdict(0.6, 0.8, 0.5).startswith("the release leaks the secret")
    assert attribute_verdict(0.2, 0.4, 0.5).startswith("no leak found: the attack does worse")
    assert attribute_verdict(0.4, 0.6, 0.5).startswith("no leak found at this audit's size")
    recovered = re.search(r"bits recovered</th><td>.*?\((\d+)% interval \[([\d.]+)%, "
                          r"([\d.]+)%\]\)", card, re.S)
    prior = re.search(r"the majority guess without the release: ([\d.]+)%", card)
    low, high, base = (float(recovered.group(2)) / 100, float(recovered.group(3)) / 100,
                       float(prior.group(1)) / 100)
    said = html.unescape(re.search(r"verdict</th><td>([^<]*)</td>", card).group(1))
    assert said.split(":")[0] == attribute_verdict(low, high, base).split(":")[0]
