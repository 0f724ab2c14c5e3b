"""Smoke test of the layer-to-layer transfer script on two small layers."""

from __future__ import annotations

from benchmarks import transfer_network


def test_prints_a_row_per_method_with_scores_in_0_1(capsys):
    """One source, one target, tiny budgets: both methods get a row of scores in (0, 1]."""
    rc = transfer_network.main(["--sources", "alexnet.conv5", "--targets", "alexnet.conv4",
                                "--seeds", "1", "--budgets", "4", "8", "--history-budget", "8",
                                "--reference-budget", "8"])
    assert rc == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| alexnet")]
    assert [r.split("|")[2].split(" (")[0].strip() for r in rows] == ["explorer", "explorer+history"]
    for r in rows:
        assert all(0.0 < float(c) <= 1.0 for c in r.strip("|").split("|")[2:])
