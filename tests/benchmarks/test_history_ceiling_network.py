"""The leave-network-out history ceiling (benchmarks/history_ceiling.py --leave-network-out,
benchmarks/tq/network_ceiling.py) on a tiny run, checked against the lists measured again."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, strategies as st

from benchmarks import history_ceiling as hc
from benchmarks import transfer_quality as tq_cli
from benchmarks.tq.network import network_history
from benchmarks.tq.network_ceiling import LISTS, best_within, history_lists
from iobound.networks import get_layer
from search.conv_space import ConvSpace
from search.measure.model import ModelMeasurer
from search.transfer import HistoryPrior

KS = [1, 3, 8]


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    """A leave-network-out summary: history from AlexNet, one VGG-16 target, tiny budgets."""
    out = tmp_path_factory.mktemp("lno")
    assert tq_cli.main(["--leave-network-out", "--history-networks", "alexnet",
                        "--target-network", "vgg16", "--target-layers", "vgg16.conv5_1",
                        "--seeds", "1", "--budgets", "4", "--history-budget", "8",
                        "--reference-budget", "8", "--out", str(out), "--no-plot"]) == 0
    return out / "transfer_network_summary.json"


@given(st.lists(st.floats(0, 2), max_size=12), st.lists(st.integers(1, 15), min_size=1))
def test_best_within_is_the_best_of_each_prefix(scores, ks):
    got = best_within(scores, ks)
    assert got == {k: max(scores[:k], default=0.0) for k in ks}
    assert all(got[a] <= got[b] for a in ks for b in ks if a <= b)


def test_ceilings_are_the_lists_measured_against_the_runs_reference(summary, tmp_path, capsys):
    """Each list's ceiling at K is the run's reference over the best time among its first K,
    measured again here; for a layer no source measured, the first picks are the two
    models' bests in turn (the default history rounds)."""
    assert hc.main(["--leave-network-out", str(summary), "--ks", *map(str, KS),
                    "--out", str(tmp_path), "--tag", "n"]) == 0
    (got,) = json.loads((tmp_path / "n.json").read_text())["sets"]
    (row,) = got["rows"]
    assert got["set"] == "vgg16/v100 (transfer_network)" and row["target"] == "vgg16.conv5_1"
    assert "| vgg16/v100 (transfer_network) | vgg16.conv5_1 (new) |" in capsys.readouterr().out

    layer = get_layer("vgg16.conv5_1")
    space, meas = ConvSpace(layer, "v100"), ModelMeasurer(layer, "v100")
    prior = HistoryPrior.fit(space, network_history(["alexnet"], "v100", 8), layer.to_dict(),
                             seed=0)
    ref = json.loads(summary.read_text())["meta"]["targets"][0]["reference_ms"]
    lists = history_lists(prior, max(KS))
    assert not row["same_problem"] and not prior.has_target_problem
    assert lists["picks"][:2] == [lists["ranking"][0], next(
        i for i in lists["regression"] if i != lists["ranking"][0])]
    for name in LISTS:
        times = [r.cost for r in meas.measure([space.get(i) for i in lists[name]])]
        for k in KS:
            best = min(times[:k])
            assert row[name][str(k)] == pytest.approx(ref / best if math.isfinite(best) else 0.0)
        assert 0.0 < row[name]["1"] <= row[name]["3"] <= row[name]["8"]
    assert got["mean"] == {name: {str(k): row[name][str(k)] for k in KS} for name in LISTS}


def test_a_file_that_is_not_a_summary_is_one_error(tmp_path):
    bad = tmp_path / "runs.json"
    bad.write_text(json.dumps({"meta": {"spaces": []}}))
    with pytest.raises(SystemExit, match="not a leave-network-out summary"):
        hc.main(["--leave-network-out", str(bad), "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="not a leave-network-out summary"):
        hc.main(["--leave-network-out", str(tmp_path / "missing.json"), "--out", str(tmp_path)])


def test_another_methods_run_on_the_same_set_is_counted_once(summary, tmp_path, capsys):
    """``*_reopen`` beside its plain run: one set, named after the plain run, wherever the
    variant came; a summary of other targets stays."""
    reopen = tmp_path / "transfer_network_reopen_summary.json"
    meta = json.loads(summary.read_text())
    reopen.write_text(json.dumps({**meta, "note": "another method"}))
    other = tmp_path / "transfer_network_other_summary.json"
    meta["meta"]["targets"][0]["reference_ms"] *= 2
    other.write_text(json.dumps(meta))
    assert hc.distinct_summaries([reopen, other, summary]) == [summary, other]
    assert f"skipped {reopen}: the same history and targets as {summary}" in capsys.readouterr().out
