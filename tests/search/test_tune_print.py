"""What ``iobound tune`` prints (search.cli.tune_print) against the results it prints.

References: the ranked table recomputed here (trials sorted by cost, ties in measurement
order, the first five); the device list's documented shortening; the replay summary's
share of optimal speed (recorded optimum / best found) and its exit code; and which
observer a network run gets (one bar for layers tuned at once, sized to the distinct
shapes it will measure).
"""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, settings, strategies as st

from iobound.layer import ConvLayer
from search.cli.tune_network import NetworkPrinter
from search.cli.tune_print import _devices, _print_table, print_replay, printer
from search.executors import ExecutorOptions
from search.session import TuneSettings, plan_layers, tune_replay
from tests.search.conftest import synth_cache_dict


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 9), shown=st.integers(1, 6))
def test_devices_name_the_first_few_and_count_the_rest(n, shown):
    """'none' for no device; else the first ``shown`` names, and 'and K more' exactly when
    K > 0 are left out."""
    names = [f"d{k}" for k in range(n)]
    text = _devices(names, shown=shown)
    if n == 0:
        assert text == "none"
        return
    listed = ", ".join(names[:shown])
    assert text == (listed + f" and {n - shown} more" if n > shown else listed)


def test_the_table_ranks_the_five_cheapest_in_measurement_order_on_ties(tmp_path, capsys):
    """The ranked rows are the five trials of lowest cost; equal costs keep the order
    they were measured in; failures (infinite cost) come last."""
    d = synth_cache_dict()
    for e in d["cache"].values():  # three distinct times: many ties
        if not isinstance(e["time"], str):
            t = float(1 + (e["bx"] + e["by"]) % 3)
            e["time"], e["times"] = t, [t]
    path = tmp_path / "ties.json"
    path.write_text(json.dumps(d))
    rep = tune_replay(str(path), TuneSettings(strategy="random", budget=20, seed=3))
    _print_table(rep.result)
    rows = capsys.readouterr().out.splitlines()[1:6]
    order = sorted(range(len(rep.result.trials)),
                   key=lambda k: (rep.result.trials[k].record.cost, k))[:5]
    want = [" ".join(f"{k}={v}" for k, v in rep.result.trials[k].config.items()) for k in order]
    assert [row.split(None, 3)[3] for row in rows] == want


def test_the_replay_summary_gives_the_share_of_optimal_speed(synth_cache_path, capsys):
    """best found / optimum as a share of optimal speed (optimum / best), exit 0; a run
    where nothing ran ok exits 1."""
    rep = tune_replay(str(synth_cache_path), TuneSettings(strategy="random", budget=6, seed=1))
    assert print_replay(rep) == 0
    share = rep.recorded_optimum_ms / rep.result.best.record.time_ms
    assert f"(best found is {share:.1%} of optimal speed)" in capsys.readouterr().out
    nothing = dataclasses.replace(rep, result=dataclasses.replace(rep.result, best=None))
    assert print_replay(nothing) == 1


def test_a_network_at_once_gets_one_bar_for_the_shapes_it_measures(tmp_path):
    """Several layers through an executor, more than one at a time: the network printer,
    its bar sized budget x distinct shapes (every layer with --tune-repeats); one layer at a
    time, or a single layer: the per-layer printer."""
    a = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=8, k_h=3, k_w=3, padding=1)
    layers = [dataclasses.replace(a, name="a1"), dataclasses.replace(a, c_out=16, name="b"),
              dataclasses.replace(a, name="a2")]

    def observer(parallel_layers, tune_repeats=False, many=True):
        settings = TuneSettings(strategy="random", budget=5, tune_repeats=tune_repeats,
                                executor=ExecutorOptions(parallel_layers=parallel_layers))
        args = type("Args", (), {"budget": 5, "tune_repeats": tune_repeats})()
        return printer(args, many, plan_layers(layers, "v100", settings,
                                               out_dir=str(tmp_path)))

    assert isinstance(observer(2), NetworkPrinter) and observer(2).total == 10
    assert observer(2, tune_repeats=True).total == 15
    assert isinstance(observer(None), NetworkPrinter)
    assert not isinstance(observer(1), NetworkPrinter)
    assert not isinstance(observer(2, many=False), NetworkPrinter)
