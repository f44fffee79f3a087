"""`privpub experiments splu` (privpub.experiments.splu), in its --quick form."""

from __future__ import annotations

import json

import pytest

from privpub.cli import main
from privpub.datasets import load_adult
from privpub.experiments.splu import eligible_group_sizes, query_pool, with_age_bands


def test_adult_occupation_is_eligible_for_group_size_2_to_7():
    df, _ = load_adult()
    assert eligible_group_sizes(df, "occupation") == [2, 3, 4, 5, 6, 7]  # Prof-specialty: 4,038


@pytest.mark.slow
def test_quick_run_writes_every_figure_and_the_summary(tmp_path, capsys):
    out = tmp_path / "splu"
    assert main(["experiments", "splu", "--out", str(out), "--seed", "1", "--quick"]) == 0
    assert "Small counts (1..10)" in capsys.readouterr().out
    for name in ("fig7_small_counts.png", "fig8_large_counts.png", "fig12_two_sensitive.png",
                 "publish_time.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["census_is_synthetic"] and "SYNTHETIC" in (out / "summary.md").read_text()
    census = summary["data"]["census"]
    assert census["eligible_group_sizes"] == [2, 5, 9]
    small = census["small_counts"]
    assert set(small["2"]) == {"queries", "residue", "SPLU-Gen", "Anatomy", "DBR",
                               "Laplace ε=ln 2", "Laplace ε=ln 3"}
    assert small["2"]["queries"] > 20 and small["2"]["residue"] == 5000 % 2
    # SPLU-Gen's small counts get less accurate as γ grows (the privacy it is for).
    assert small["9"]["SPLU-Gen"] > small["2"]["SPLU-Gen"]
    large = summary["data"]["adult"]["large_counts"]
    assert set(large["all"]) == {"SPLU-Gen paper", "SPLU-Gen exact-rate",
                                 "SPLU-Gen partition", "Anatomy", "DBR"}
    assert sum(b["queries"] for b in large["bands"].values()) == large["queries"] > 0
    two = summary["data"]["adult"]["two_sensitive"]
    assert two["residue"] == 3000 % 3 and two["queries"] > 0
    assert list(summary["publish_seconds"]) == ["5000", "10000"]


def test_query_pool_keeps_the_counts_in_range_and_age_bands_are_ten():
    import numpy as np
    df, schema = load_adult()
    banded, bschema = with_age_bands(df, schema)
    assert bschema["ageband"].size == 10 and "age" not in banded
    assert banded.ageband.min() == 0 and banded.ageband.max() == 9
    pool = query_pool(df, ["occupation"], ["sex", "race"], 1, 11, 10_000,
                      np.random.default_rng(0))
    assert pool.truth.between(1, 10).all()
    row = pool.iloc[0]
    from privpub.counting.query import Condition
    cond = Condition(schema, row["where"])
    brute = (cond.mask(df[list(cond.attributes)])
             & (df.occupation == row["values"]["occupation"]).to_numpy()).sum()
    assert brute == row["truth"]
