"""The Adult experiment (αβ paper, Sec. 5) end to end, and its pieces."""

import json

import numpy as np
import pytest

from privpub.cli import main
from privpub.experiments.adult_alphabeta import _density, cumulative_error


def test_cumulative_error_averages_over_queries_at_or_above_x():
    truth = np.array([5, 1, 5, 3, 0])
    error = np.array([2.0, 4.0, 4.0, 1.0, 9.0])
    x, y = cumulative_error(truth, error)
    assert x.tolist() == [5, 3, 1, 0]
    assert y.tolist() == pytest.approx([3.0, 7 / 3, 11 / 4, 20 / 5])


def test_density_bins_as_histogram2d_does():
    """Fig. 2's density: the same counts as np.histogram2d, upper edges in the
    last bin, points outside the ranges left out."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2000, 50_000).astype(float)
    y = x + rng.normal(0, 300, len(x))
    x[:4], y[:4] = 1500.0, [-200.0, 2400.0, 2400.0, 3000.0]  # edges, and one outside
    expected, _, _ = np.histogram2d(x, y, bins=37, range=[[0, 1500.0], [-200.0, 2400.0]])
    assert (_density(x, y, (0, 1500.0), (-200.0, 2400.0), 37) == expected.T).all()


def test_adult_alphabeta_from_the_cli(tmp_path, capsys):
    out = tmp_path / "exp"
    assert main(["experiments", "adult-alphabeta", "--out", str(out), "--seed", "3"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n"] == 30162 and summary["m"] == 648023040
    assert summary["queries"] == 304364
    assert summary["theoretical_ratio"] == pytest.approx(1 / np.sqrt(20))
    assert summary["frapp"]["max_posterior"] == pytest.approx(0.2)
    for key in ("alphabeta_sec42", "alphabeta_half", "alphabeta_exclusive",
                "alphabeta_independent"):
        entry = summary[key]
        assert entry["max_posterior"] <= 0.2 + 1e-9  # every calibration meets Def. 2.3
        assert 0 < entry["ratio_to_frapp"] < 1       # and beats FRAPP at equal privacy
    assert summary["alphabeta_exclusive"]["max_posterior_exclusive"] <= 0.2 + 1e-9
    assert summary["alphabeta_independent"]["max_posterior_exclusive"] > 0.9
    assert summary["error_ratio"] == summary["alphabeta_exclusive"]["ratio_to_frapp"]
    # less noise where the calibration allows it: independent < exclusive < sec4.2
    errs = {k: summary[k]["mean_abs_error"] for k in ("alphabeta_independent",
                                                      "alphabeta_exclusive", "alphabeta_sec42")}
    assert list(errs.values()) == sorted(errs.values())
    for name in ("fig2.png", "fig3.png"):
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    assert "summary.json" in capsys.readouterr().out


@pytest.mark.slow
def test_relationship_table1_from_the_cli(tmp_path, capsys):
    out = tmp_path / "rel"
    args = ["experiments", "relationship", "--out", str(out), "--seed", "2", "--runs", "200",
            "--graphs", "ca-grqc", "--privacy-epsilon", "1", "--gamma", "0.2"]
    assert main(args) == 0
    summary = json.loads((out / "relationship.json").read_text())
    rows = {r["query"].split(" (")[0]: r for r in summary["rows"]}
    assert rows["Δ"]["count"] == 6 * 48260  # ca-GrQc's 48,260 triangles
    assert rows["Δ"]["gs"] == 3 * (5241 - 2)
    # Laplace beats Algorithm 2.1 on Δ at this m, and the table says so.
    assert rows["Δ"]["better"] == "Laplace"
    assert rows["Δ"]["laplace_median"] < rows["Δ"]["alg21_median"]
    assert rows["Δ"]["crossover_m"] > 5241
    # ∨ and d_{2,v}: λ < GS, and Algorithm 2.1's measured error is the smaller.
    for q in ("∨", "d_2,v"):
        assert rows[q]["better"] == "Algorithm 2.1"
        assert rows[q]["alg21_median"] < rows[q]["laplace_median"]
    # median |DLap(b)| ≈ b ln 2 for Laplace on Δ (b = GS/ε), within 15% at 200 runs.
    assert abs(rows["Δ"]["laplace_median"] / (rows["Δ"]["gs"] * np.log(2)) - 1) < 0.15
    # Exact LS for the patterns (Δ: 3·61 assignments through one tuple), none for d_{i,v};
    # the min(λ, GS) form takes GS for Δ and its error is Laplace's, not Alg. 2.1's.
    assert rows["Δ"]["ls"] == 183 and rows["d_2,v"]["ls"] is None
    assert rows["Δ"]["min_branch"] == "global sensitivity"
    assert rows["Δ"]["alg21_min_median"] < rows["Δ"]["alg21_median"] / 10
    assert rows["∨"]["min_branch"] == "lambda"
    # Smooth sensitivity for Δ at δ = 1/m²: S* = LS = 61 triangles on one edge of ca-GrQc,
    # so the noise on Δ = 6T is round(12·61/ε · L), median ≈ 732 ln 2 (within 15% at 200
    # runs); far below Laplace's GS-scaled noise. The other queries have no such column.
    assert rows["Δ"]["smooth_delta"] == pytest.approx(1 / 5241**2)
    assert abs(rows["Δ"]["smooth_median"] / (12 * 61 * np.log(2)) - 1) < 0.15
    assert rows["Δ"]["smooth_p95"] < rows["Δ"]["laplace_median"]
    assert all(r["smooth_median"] is None for q, r in rows.items() if q != "Δ")
    table = (out / "table1.md").read_text()
    assert "| ca-grqc | 5,241 | Δ |" in table and "(δ = 3.6e-08)" in table
    assert (out / "relationship.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "table1.md" in capsys.readouterr().out
