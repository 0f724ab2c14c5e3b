"""The network table (search.session.network) against the layer reports it is made of.

Reference: each row and total recomputed here straight from the reports (their best
record, winner, evaluations, ``same_as``), as the module doc defines them: the best time or,
for a measurer that does not time, the cost in words; a layer where nothing ran ok has no
cost; totals count evaluations once, ``total_time_ms`` only when every layer has a time,
``estimate`` when any does; a repeat has its first layer's log. The printed table
(search.cli.tune_network) against the same reports and the marks its doc names; the
network progress bar against the per-thread counts it is given. Which layers repeat an
earlier one (search.session.repeats) against a direct search; how many layers run at once
and what an interrupted network keeps (search.session.parallel) against their documented
rules; an interrupt of a network run against what its per-layer logs hold.
"""

from __future__ import annotations

import dataclasses
import io
import math
import threading
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from iobound.layer import ConvLayer
from search.interrupts import Interrupted
from search.measure.base import MeasureRecord, Measurer
from search.records import read_log
from search.session import Builders, Observer, TuneSettings, tune_layers
from search.session.network import network_table
from search.session.repeats import repeats

SHAPE = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=8, k_h=3, k_w=3, padding=1)


class Timed(Measurer):
    """Analytic-style estimates: a time per configuration, each an estimate."""

    name = "timed"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + sum(c.values()) / 100, estimate=True)
                for c in configs]


class Untimed(Measurer):
    """Runs ok without a time (as the emulator): its cost is in words."""

    name = "untimed"

    def measure(self, configs):
        return [MeasureRecord.ok(c, surrogate_cost=float(100 + sum(c.values()))) for c in configs]


class Failing(Measurer):
    """Nothing runs."""

    name = "failing"

    def measure(self, configs):
        return [MeasureRecord.failed(c, "runtime_error", "no") for c in configs]


MEASURERS = {"t": Timed, "u": Untimed, "f": Failing}


def _reports(tmp_path, names, settings=None):
    """Reports of layers named ``<measurer key><n>``, all of one shape unless the name says
    otherwise: a name ending in 'b' or 'c' is a second or third shape. Repeats are not tuned
    again."""
    layers = [dataclasses.replace(SHAPE, c_out={"b": 16, "c": 24}.get(n[-1], 8), name=n)
              for n in names]
    builders = Builders(measurer=lambda kind, layer, device, algorithm: MEASURERS[layer.name[0]]())
    settings = settings or TuneSettings(strategy="random", budget=3)
    return tune_layers(layers, "v100", settings, out_dir=str(tmp_path), verify=False,
                       builders=builders)


def _expected_row(rep):
    best = rep.result.best
    rec = best.record if best is not None else None
    return {
        "layer": rep.layer.name,
        "best_time_ms": rec.time_ms if rec is not None else None,
        "best_cost": rec.cost if rec is not None else None,
        "cost_unit": None if rec is None else ("ms" if rec.time_ms is not None else "words"),
        "estimate": bool(rec is not None and rec.estimate),
        "best_config": best.config if best is not None else None,
        "evaluations": 0 if rep.same_as else len(rep.result.trials),
        "same_as": rep.same_as,
        "stop_reason": rep.result.stop_reason.value,
        "dataflow_io_words": rep.winner.bound.dataflow_io_words if rep.winner else None,
        "ratio_to_bound": rep.winner.bound.ratio_to_bound if rep.winner else None,
        "kernel": rep.winner.kernel_path if rep.winner else None,
    }


def test_rows_and_totals_follow_the_reports(tmp_path):
    """A timed layer, an untimed one (cost in words), one where nothing ran, and a repeat
    of the first: each row and the totals as recomputed from the reports."""
    reports = _reports(tmp_path, ["t1", "ub", "fc", "t2"])
    assert [r.same_as for r in reports] == [None, None, None, "t1"]
    logs = ["t1.jsonl", "ub.jsonl", "fc.jsonl", "t2.jsonl"]
    table = network_table(reports, logs, network="toy")
    assert table["network"] == "toy"
    for rep, row in zip(reports, table["layers"]):
        assert {k: row[k] for k in _expected_row(rep)} == _expected_row(rep)
    assert [row["log"] for row in table["layers"]] == ["t1.jsonl", "ub.jsonl", "fc.jsonl",
                                                       "t1.jsonl"]
    assert table["layers"][0]["cost_unit"] == "ms" and table["layers"][1]["cost_unit"] == "words"
    assert table["layers"][2]["best_cost"] is None and table["layers"][2]["kernel"] is None
    assert table["evaluations"] == 9 and table["tuned"] == 3
    assert table["total_time_ms"] is None and table["estimate"] is True


def test_total_time_sums_every_layers_best_when_all_are_timed(tmp_path):
    """All layers timed: the total is the sum of the rows' best times (a repeat's too: the
    network runs it again); no estimate among them means not an estimate."""
    reports = _reports(tmp_path, ["t1", "tb", "t2"])
    table = network_table(reports)
    assert table["total_time_ms"] == pytest.approx(
        sum(r.result.best.record.time_ms for r in reports))
    assert table["layers"][2]["same_as"] == "t1" and table["tuned"] == 3
    assert all(row["log"] is None for row in table["layers"])
    untimed = network_table(_reports(tmp_path, ["u1", "ub"]))
    assert untimed["estimate"] is False and untimed["total_time_ms"] is None


def test_an_empty_table_has_no_total():
    """No layers: nothing evaluated, nothing tuned, no total time."""
    table = network_table([])
    assert (table["layers"], table["evaluations"], table["tuned"], table["total_time_ms"],
            table["estimate"]) == ([], 0, 0, None, False)


def _print_table(capsys, reports):
    from search.cli.tune_network import print_network
    args = SimpleNamespace(network="toy", algorithm="direct", strategy="random", budget=3, seed=0)
    jobs = [SimpleNamespace(settings=TuneSettings(strategy="random", budget=3))] * len(reports)
    print_network(args, jobs, reports, SimpleNamespace(name="V100-SXM2"), "model")
    return capsys.readouterr().out.splitlines()


def test_the_printed_table_marks_estimates_words_and_repeats(tmp_path, capsys):
    """One line per layer: an estimate's cost marked '*', an untimed cost 'w', a layer
    where nothing ran '-', a repeat naming its first layer; then the counts."""
    reports = _reports(tmp_path, ["t1", "ub", "fc", "t2"])
    head, *rows, totals = _print_table(capsys, reports)
    best = {r.layer.name: r.result.best for r in reports}
    fields = {row.split()[0]: row.split() for row in rows}
    assert fields["t1"][1] == f"{best['t1'].record.cost:.4g}*"
    assert fields["ub"][1] == f"{best['ub'].record.cost:.4g}w"
    assert fields["fc"][1] == "-" and rows[3].endswith("(same shape as t1)")
    assert totals == ("3 of 4 layers tuned; 9 evaluations; 1 with the shape of an earlier "
                      "layer took its result (--tune-repeats to tune them too)")


def test_the_printed_total_says_estimated_or_measured(tmp_path, capsys):
    """Every layer timed: the sum of the best times is printed, called estimated when the
    times are estimates and measured otherwise."""
    reports = _reports(tmp_path, ["t1", "tb"])
    total = sum(r.result.best.record.time_ms for r in reports)
    assert _print_table(capsys, reports)[-1] == (
        f"every layer's best, one after another: {total:.4g} ms, estimated (analytic model)")
    measured = [dataclasses.replace(r, result=dataclasses.replace(r.result, best=dataclasses.replace(
        r.result.best, record=dataclasses.replace(r.result.best.record, estimate=False))))
        for r in reports]
    assert _print_table(capsys, measured)[-1].endswith(f"{total:.4g} ms, measured")


def test_the_network_bar_counts_finished_and_running_layers():
    """Layers tuned at once: the bar shows the evaluations of the finished layers plus what
    each running layer has done so far (one count per driver thread)."""
    from search.cli.tune_network import NetworkPrinter
    from search.progress import ProgressBar
    printer = NetworkPrinter(12, print_layer=lambda report: None)
    out = io.StringIO()
    printer.bar = ProgressBar(12, label="network", stream=out, force=True, width=12,
                              min_interval=0.0)

    def shown():
        return int(out.getvalue().rsplit("\r", 1)[-1].split()[2].split("/")[0])

    ready, go = threading.Event(), threading.Event()

    def first():
        printer.progress(3, 6, math.inf)
        ready.set()
        go.wait(10)
        printer.tuning_done()

    a = threading.Thread(target=first)
    a.start()
    assert ready.wait(10)
    b = threading.Thread(target=lambda: (printer.progress(2, 6, math.inf), printer.tuning_done()))
    b.start()
    b.join()
    assert shown() == 5  # b's 2 running when drawn, then finished; a's 3 still running
    go.set()
    a.join()
    c = threading.Thread(target=lambda: printer.progress(1, 6, math.inf))
    c.start()
    c.join()
    assert shown() == 6


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([8, 16]), st.sampled_from(["v100", "t4"]),
                          st.sampled_from(["direct", "winograd"]),
                          st.sampled_from(["model", "emulate"])), max_size=7))
def test_a_repeat_has_the_shape_device_algorithm_and_measurer_of_an_earlier_job(specs):
    """repeats() against a direct search: the first earlier job equal in all four (the
    layer's name plays no part)."""
    jobs = [SimpleNamespace(layer=dataclasses.replace(SHAPE, c_out=c, name=f"l{k}"), device=d,
                            algorithm=a, measure=m) for k, (c, d, a, m) in enumerate(specs)]
    want = [next((j for j in range(k) if specs[j] == specs[k]), None) for k in range(len(specs))]
    assert repeats(jobs) == want


def test_a_repeats_report_is_the_firsts_with_nothing_stored_for_it(tmp_path):
    """A repeat takes its first layer's result and winner, under its own layer, with no
    time, history or export of its own."""
    settings = TuneSettings(strategy="random", budget=3, history=str(tmp_path / "h.db"),
                            export_cache=str(tmp_path / "c.json"))
    first, again = _reports(tmp_path, ["t1", "t2"], settings)
    assert again.layer.name == "t2" and again.same_as == "t1"
    assert again.result is first.result and again.winner is first.winner
    assert first.history is not None and first.export is not None
    assert (again.seconds, again.history, again.export) == (0.0, None, None)
    d, first_d = again.to_dict(), first.to_dict()
    assert d["same_as"] == "t1" and d["evaluations"] == 0 and d["layer"] == "t2"
    assert "same_as" not in first_d and first_d["evaluations"] == 3


def test_a_layer_report_gives_the_spaces_two_sizes(tmp_path):
    """space_size and unpruned_size are the layer's Table 1 space's (a layer that Table 1
    prunes: pruned < unpruned)."""
    from search.conv_space import ConvSpace
    layer = ConvLayer(n=1, c_in=64, h_in=14, w_in=14, c_out=64, k_h=3, k_w=3, padding=1)
    [rep] = tune_layers([layer], "v100", TuneSettings(strategy="random", budget=2),
                        out_dir=str(tmp_path), verify=False,
                        builders=Builders(measurer=lambda *a: Timed()))
    space = ConvSpace(layer, "v100", "direct")
    d = rep.to_dict()
    assert (d["space_size"], d["unpruned_size"]) == (len(space), space.unpruned_size)
    assert len(space) < space.unpruned_size


@settings(max_examples=50, deadline=None)
@given(kind=st.sampled_from(["local", "ray"]), asked=st.none() | st.integers(1, 9),
       capacity=st.integers(1, 6), layers=st.integers(1, 12))
def test_layers_at_once_follow_the_documented_rule(kind, asked, capacity, layers):
    """parallel_layers when given, else two per worker on Ray and one locally; never more
    than the layers, never fewer than one."""
    from search.executors import ExecutorOptions
    from search.session.parallel import layers_at_once
    want = asked if asked is not None else (2 * capacity if kind == "ray" else 1)
    got = layers_at_once(ExecutorOptions(executor=kind, parallel_layers=asked), capacity, layers)
    assert got == max(1, min(layers, want))


def test_an_interrupted_network_counts_each_kept_measurement_once():
    """The measurements kept: every finished layer's trials (a repeat's are its first
    layer's, counted there), plus what each stopped layer kept; the failed writes of the
    stopped layers; the logs named by their per-layer pattern."""
    from search.session.parallel import interrupted_run

    def rep(n, same_as=None):
        return SimpleNamespace(result=SimpleNamespace(trials=[None] * n), same_as=same_as)

    jobs = [SimpleNamespace(resume_as="out/run.jsonl", per_algorithm=False)] * 5
    reports = [rep(4), rep(4, same_as="a"), None, rep(2), None]
    errors = {2: Interrupted(3, "out/run.c.jsonl", "--history h.db (full)"),
              4: Interrupted(1, "out/run.e.jsonl"), 1: RuntimeError("not a stop")}
    exc = interrupted_run(jobs, reports, errors)
    assert (exc.measurements, exc.failed) == (4 + 2 + 3 + 1, "--history h.db (full)")
    assert (exc.log, exc.resume_as) == ("out/run.<layer>.jsonl", "out/run.jsonl")
    one = interrupted_run([SimpleNamespace(resume_as=None, settings=TuneSettings(
        strategy="random", resume="r.jsonl"))], [], {0: Interrupted(2, "r.jsonl")})
    assert (one.measurements, one.log) == (2, "r.jsonl")
    unlogged = interrupted_run([SimpleNamespace(resume_as=None, per_algorithm=False)] * 2, [rep(1)], {})
    assert (unlogged.measurements, unlogged.log) == (1, None)


def test_a_ctrl_c_before_a_layer_kept_anything_is_a_plain_interrupt(tmp_path):
    """Ctrl-C as the first layer starts, nothing measured nor logged: the interrupt goes
    on as it is, not as a run that kept measurements to resume."""
    class Stop(Observer):
        def layer_started(self, job, space):
            raise KeyboardInterrupt

    layers = [dataclasses.replace(SHAPE, name="t1"), dataclasses.replace(SHAPE, c_out=16,
                                                                         name="tb")]
    with pytest.raises(KeyboardInterrupt) as caught:
        tune_layers(layers, "v100", TuneSettings(strategy="random", budget=3), verify=False,
                    out_dir=str(tmp_path), observer=Stop(),
                    builders=Builders(measurer=lambda *a: Timed()))
    assert type(caught.value) is KeyboardInterrupt


def test_a_ctrl_c_while_the_last_layer_is_reported_counts_every_logged_measurement(tmp_path):
    """Ctrl-C while the second of two layers is reported (both stored): the Interrupted
    counts the measurements the per-layer logs hold, and names their pattern."""
    class StopAtSecond(Observer):
        def finished(self, report):
            if report.layer.name == "tb":
                raise KeyboardInterrupt

    layers = [dataclasses.replace(SHAPE, name="t1"), dataclasses.replace(SHAPE, c_out=16,
                                                                         name="tb")]
    log = tmp_path / "net.jsonl"
    with pytest.raises(Interrupted) as caught:
        tune_layers(layers, "v100", TuneSettings(strategy="random", budget=3, log=str(log)),
                    verify=False, out_dir=str(tmp_path), observer=StopAtSecond(),
                    builders=Builders(measurer=lambda *a: Timed()))
    logged = sum(len(read_log(tmp_path / f"net.{n}.jsonl").entries) for n in ("t1", "tb"))
    assert caught.value.measurements == logged == 6
    assert caught.value.log == str(tmp_path / "net.<layer>.jsonl")
