"""`privpub experiments reconstruction --quick`: the √n threshold end to end."""

import json

import pytest

from privpub.cli import main


@pytest.mark.slow
def test_reconstruction_quick_from_the_cli(tmp_path, capsys):
    out = tmp_path / "rec"
    assert main(["experiments", "reconstruction", "--out", str(out), "--seed", "3",
                 "--quick"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sizes"] == [32, 64] and summary["seed_policy"].startswith("seeded")
    by = {(r["mechanism"], r["n"], r["E_over_sqrt_n"]): r for r in summary["sweep"]}
    for mech in ("bounded", "bounded-adversarial", "rounding", "laplace"):
        small, large = by[(mech, 64, 0.125)], by[(mech, 64, 8.0)]
        # far below √n every decoder recovers the database; far above, none does
        for decoder in ("lstsq", "lp", "first-order"):
            assert small[decoder] >= 0.99 and large[decoder] <= 0.75, (decoder, small, large)
    for row in summary["paper_settings"]:
        assert max(row["lstsq"], row["lp"], row["first-order"]) <= 0.75, row
    walk = summary["theorem5_walk"]["fraction_private_by_R_over_T"]
    assert walk["0.1"] == 0.0 and walk["1000.0"] == 1.0  # R ≪ T leaks, R ≫ T protects
    for name in ("reconstruction.png", "walk.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "reconstruction.png" in capsys.readouterr().out
