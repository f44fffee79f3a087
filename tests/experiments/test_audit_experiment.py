"""`privpub experiments audit --quick`: both sides of Theorem 2.6 on Adult, end to end."""

import json

import pytest

from privpub.cli import main


@pytest.mark.slow
def test_audit_experiment_shows_both_sides(tmp_path, capsys):
    out = tmp_path / "audit"
    assert main(["experiments", "audit", "--out", str(out), "--seed", "2", "--quick"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    rows = summary["releases"]
    assert [r["beta_factor"] for r in rows] == [1.0, 0.1, 0.01, 0.001, 0.0]
    paper, exact = rows[0]["presence"], rows[-1]["presence"]
    # at the paper's calibration the posterior of a named candidate stays near its
    # Bayes value (0.111) and below γ = 0.2; with β = 0 every named candidate is present
    assert paper["interval"][1] < summary["gamma"] + 0.05 and not paper["breach"]
    assert exact["posterior"] == 1.0 and exact["above_two_thirds"] and exact["named"] >= 12
    # ... at prior d = 10·n/m, outside Theorem 2.6's range (≤ n/m): not called its breach
    assert summary["theorem_prior"] < summary["d"] / 10
    assert not exact["within_theorem_range"] and not exact["breach"]
    assert exact["verdict"] == "above-2/3-outside-range"
    assert all(r["error_bound"] > s["error_bound"] for r, s in zip(rows, rows[1:], strict=False))
    assert (out / "audit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = capsys.readouterr().out
    assert "posterior (95%)" in out and "above 2/3, prior outside n/m" in out
