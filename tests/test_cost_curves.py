"""benches/cost_curves.py, the cost-curve script (issue 36): its exponent fit and one
run end to end at tiny n (the measured curves are in README, made by the same script)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHES = Path(__file__).resolve().parents[1] / "benches"
sys.path.insert(0, str(BENCHES))
import cost_curves  # noqa: E402 (benches/ is not a package)


@pytest.mark.parametrize("slope", [0.5, 1.0, 1.3])
def test_growth_exponent_recovers_a_known_slope(slope):
    ns = np.array([1e5, 1e6, 1e7, 1e8])
    noise = np.random.default_rng(7).uniform(0.95, 1.05, size=len(ns))  # ±5% timing noise
    seconds = 3e-7 * ns**slope * noise
    # ln(1.05/0.95) / ln(10^3) over the span: the noise moves the slope by < 0.02
    assert cost_curves.growth_exponent(ns, seconds) == pytest.approx(slope, abs=0.02)
    # a constant overhead (imports, a fixed setup) flattens the slope: not hidden
    assert cost_curves.growth_exponent(ns, seconds + 10.0) < slope - 0.1


def test_growth_exponent_needs_two_sizes():
    with pytest.raises(ValueError, match="two distinct n"):
        cost_curves.growth_exponent([1e5, 1e5], [1.0, 2.0])


def test_the_script_measures_plots_and_rewrites_the_readme_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{cost_curves.BEGIN}\nold\n{cost_curves.END}\n\ntail\n")
    saved, png = tmp_path / "curves.json", tmp_path / "curves.png"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    subprocess.run([sys.executable, str(BENCHES / "cost_curves.py"), "--sizes", "1e3,3e3",
                    "--calls", "estimate trailing", "--json", str(saved), "--plot", str(png),
                    "--readme", str(readme)], check=True, capture_output=True, env=env,
                   timeout=600)  # a hang guard, not a limit on the time
    result = json.loads(saved.read_text())
    assert sorted(result["sizes"]) == ["1000", "3000"]
    for found in result["sizes"].values():
        assert set(found) >= {"publish", "estimate trailing", "uptime", "commit"}
        for side in ("privpub", "baseline"):
            assert found["estimate trailing"][side]["seconds"] > 0
            assert found["estimate trailing"][side]["peak_mib"] >= \
                found["estimate trailing"][side]["floor_mib"] > 0
    assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"
    text = readme.read_text()
    assert "old" not in text and text.endswith("\n\ntail\n")
    assert "| estimate trailing | 10^3–3.0e+03 |" in text
    assert "| publish |" in text and "| batch |" not in text
