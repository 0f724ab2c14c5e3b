"""An interrupt after a run's last measurement (its final bookkeeping) loses nothing.

A ``KeyboardInterrupt`` raised from a stubbed ``stats()``, ``describe()`` or observer
hook stands for Ctrl-C landing there: deterministic, no timing. The run must end as an
interrupted run does: the result holds every measurement, the history database and the
export get them, and the CLI prints the one ``N measurements kept`` line, exit 130.
"""

from __future__ import annotations

import json

import pytest

from iobound.layer_spec import parse_layer_spec
from search.cli.main import main
from search.history import History
from search.interrupts import Interrupted
from search.records import read_log
from search.strategies import strategy_class
from search.tuner import StopReason, tune

SMALL = "cin=8,hin=8,cout=16,kh=3,pad=1"


def _stored(db) -> int:
    with History(str(db)) as h:
        return sum(len(h.records(k)) for k in h.keys())


def _raise_interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def _caught(call, *args, **kwargs):
    """``call(...)``; an escaping KeyboardInterrupt fails the test (it would stop pytest)."""
    try:
        return call(*args, **kwargs)
    except KeyboardInterrupt as exc:
        if isinstance(exc, Interrupted):
            raise
        pytest.fail("a KeyboardInterrupt escaped: the run was lost")


def test_tune_interrupted_in_stats_keeps_every_measurement(tmp_path, synth_space, synth_measurer):
    """Ctrl-C in strategy.stats() after the budget is spent: the result is the whole run,
    stopped as interrupted, not lost."""
    from search.strategies import make_strategy

    def build(name, space, options, rng):
        strat = make_strategy(name, space, options, rng)
        strat.stats = _raise_interrupt
        return strat

    log = tmp_path / "run.jsonl"
    res = _caught(tune, synth_space, synth_measurer, "random", budget=10, seed=0, log=log,
                  build_strategy=build)
    assert res.stop_reason is StopReason.INTERRUPTED and res.evaluations == 10
    assert [t.index for t in res.trials] == [e.index for e in read_log(log).entries]
    assert res.best is not None and res.strategy_stats == {}


def test_tune_interrupted_in_describe_after_the_loop(tmp_path, synth_space, synth_measurer):
    """Ctrl-C while the space is described once the budget is spent: nothing is lost."""
    real, calls = synth_space.describe, []

    def describe():
        calls.append(1)
        if len(calls) > 1:  # the header's description was taken; the run is over
            raise KeyboardInterrupt
        return real()

    synth_space.describe = describe
    res = _caught(tune, synth_space, synth_measurer, "random", budget=10, seed=0)
    assert res.evaluations == 10 and res.space == real()


@pytest.mark.parametrize("what", ["layer", "replay"])
def test_cli_interrupt_after_the_last_measurement(tmp_path, capsys, monkeypatch, what,
                                                  synth_cache_path):
    """The reviewer's case: the budget measured, Ctrl-C in stats(): history and export hold
    all 12 records, one line says how many are kept, exit 130."""
    monkeypatch.setattr(strategy_class("explorer"), "stats", _raise_interrupt)
    log, db, ex = tmp_path / "run.jsonl", tmp_path / "n.db", tmp_path / "ex.json"
    space = (["--layer", SMALL, "--measure", "model", "--no-verify", "--out-dir",
              str(tmp_path / "k")] if what == "layer"
             else ["--measure", f"replay:{synth_cache_path}"])  # a replay writes no kernel
    code = main(["tune", *space, "--budget", "12", "--history", str(db), "--export-cache", str(ex),
                 "--log", str(log)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and err == [f"iobound tune: interrupted: 12 measurements kept in {log}; "
                                   f"resume with --resume {log}"]
    assert len(read_log(log).entries) == 12 and _stored(db) == 12
    assert len(json.loads(ex.read_text())["cache"]) == 12


def test_cli_network_interrupt_after_a_layer_stores_it(tmp_path, capsys, monkeypatch):
    """One layer after another: Ctrl-C in the second layer's stats() keeps both layers in
    the database and the exports; the line counts every layer's measurements."""
    real, calls = strategy_class("random").stats, []

    def stats(self):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self)

    monkeypatch.setattr(strategy_class("random"), "stats", stats)
    log, db = tmp_path / "run.jsonl", tmp_path / "n.db"
    code = main(["tune", "--network", "alexnet", "--measure", "model", "--strategy", "random",
                 "--budget", "4", "--no-verify", "--history", str(db), "--log", str(log),
                 "--export-cache", str(tmp_path / "ex.json"), "--out-dir", str(tmp_path / "k")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and len(err) == 1, err
    assert err[0] == (f"iobound tune: interrupted: 8 measurements kept in "
                      f"{tmp_path / 'run.<layer>.jsonl'}; resume with --resume {log}")
    logs = sorted(tmp_path.glob("run.*.jsonl"))
    assert len(logs) == 2 and sum(len(read_log(p).entries) for p in logs) == 8
    assert _stored(db) == 8 and len(list(tmp_path.glob("ex.*.json"))) == 2


@pytest.mark.parametrize("hook", ["tuning_done", "progress_last"])
def test_session_interrupt_in_an_observer_hook_still_stores(tmp_path, hook):
    """Ctrl-C in the observer after the loop (closing the progress bar) or at the last
    progress call: the session writes the history, then raises Interrupted with the count."""
    from search.session import Observer, TuneSettings, tune_layers

    class Hooked(Observer):
        def progress(self, done, budget, best):
            if hook == "progress_last" and done == budget:
                raise KeyboardInterrupt

        def tuning_done(self):
            if hook == "tuning_done":
                raise KeyboardInterrupt

    db = tmp_path / "h.db"
    settings = TuneSettings(strategy="random", budget=6, history=str(db),
                            log=str(tmp_path / "run.jsonl"))
    with pytest.raises(Interrupted) as info:
        _caught(tune_layers, [parse_layer_spec(SMALL)], "v100", settings,
                out_dir=str(tmp_path), verify=False, observer=Hooked())
    assert info.value.measurements == _stored(db) == 6


def _network_args(tmp_path, *extra):
    return ["tune", "--network", "alexnet", "--measure", "model", "--strategy", "random",
            "--budget", "4", "--no-verify", "--log", str(tmp_path / "run.jsonl"),
            "--out-dir", str(tmp_path / "k"), *extra]


def test_cli_network_interrupt_in_the_network_table(tmp_path, capsys, monkeypatch):
    """Every layer tuned and stored, Ctrl-C while the table is made: the one line counts
    every layer's measurements and names the logs, exit 130."""
    import search.session.network as network

    monkeypatch.setattr(network, "network_table", _raise_interrupt)
    code = main(_network_args(tmp_path))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and err == [
        f"iobound tune: interrupted: 20 measurements kept in {tmp_path / 'run.<layer>.jsonl'}; "
        f"resume with --resume {tmp_path / 'run.jsonl'}"]
    assert sum(len(read_log(p).entries) for p in tmp_path.glob("run.*.jsonl")) == 20


def test_cli_network_interrupt_while_the_workers_close(tmp_path, capsys, monkeypatch):
    """Layers at once over local workers: Ctrl-C while the pool closes after the last layer
    is the same one line (it used to be a bare 'interrupted')."""
    from search.executors.shared import SharedExecutor

    real = SharedExecutor.close

    def close(self):
        real(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(SharedExecutor, "close", close)
    code = main(_network_args(tmp_path, "--executor", "local", "--workers", "1",
                              "--parallel-layers", "2"))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and len(err) == 1 and err[0].startswith(
        "iobound tune: interrupted: 20 measurements kept in "), err
    assert sum(len(read_log(p).entries) for p in tmp_path.glob("run.*.jsonl")) == 20


def test_cli_single_layer_interrupt_while_printing_json(tmp_path, capsys, monkeypatch):
    """One layer, Ctrl-C after it was stored (while its JSON is written): its own log."""
    from search.session.reports import LayerReport

    monkeypatch.setattr(LayerReport, "to_dict", _raise_interrupt)
    log = tmp_path / "run.jsonl"
    code = main(["tune", "--layer", SMALL, "--measure", "model", "--no-verify", "--budget", "6",
                 "--json", "--log", str(log), "--out-dir", str(tmp_path / "k")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and err == [f"iobound tune: interrupted: 6 measurements kept in {log}; "
                                   f"resume with --resume {log}"]
