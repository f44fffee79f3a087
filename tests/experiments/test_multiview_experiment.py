"""`privpub experiments multiview --quick`: Algorithm 7 on Adult, end to end."""

import itertools
import json

import pytest

from privpub.cli import main
from privpub.experiments import multiview


@pytest.mark.slow
def test_multiview_experiment(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(multiview, "MAX_VIEWS", 6)  # the exact curves to v = 6 (20 by default)
    out = tmp_path / "mv"
    assert main(["experiments", "multiview", "--out", str(out), "--seed", "3", "--quick"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    exact = summary["exact"]
    # The numbers: the default one-view calibration passes γ from v = 5 on.
    default = exact["exclusive, one-view α, β"]
    assert [round(r["independent_posterior"], 3) for r in default[1:5]] == \
        [0.171, 0.196, 0.207, 0.218]
    assert default[3]["independent_private"] and not default[4]["independent_private"]
    for label in ("exclusive, calibrated for v", "independent, calibrated for v"):
        assert all(r["independent_private"] for r in exact[label])
    assert all(r["exclusive_private"] for r in exact["exclusive, calibrated for v"])
    # Measured on published views: within 4 standard errors of the exact posterior.
    for rows in summary["simulated"].values():
        for r in rows:
            assert abs(r["posterior"] - r["exact"]) < 4 * r["stderr"], r
    # The error cost: 1 at one view, growing with v.
    cost = [r for r in summary["cost"] if r["calibration"] == "exclusive"]
    assert cost[0]["first_view_ratio"] == pytest.approx(1)
    assert all(a["first_view_ratio"] < b["first_view_ratio"] for a, b in itertools.pairwise(cost))
    # The audit: 5 independent views break the promise (interval above γ), 5 calibrated
    # views do not.
    audit = summary["audit"]
    assert audit["independent views, one-view calibration"]["breaks_promise"]
    calibrated = audit["Algorithm 7, calibrated for 5 views"]
    assert not calibrated["breaks_promise"] and calibrated["interval"][0] < summary["gamma"]
    for name in ("posterior.png", "cost.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "× one view" in capsys.readouterr().out
