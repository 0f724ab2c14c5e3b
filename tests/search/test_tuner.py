"""Tests of the tune() loop: budget, de-duplication, early stop, logging and resume."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from search.measure.base import MeasureRecord, Measurer
from search.records import read_log
from search.grid_space import GridSpace
from search.strategies.base import Strategy
from search.tuner import tune

SPACE = GridSpace({"a": list(range(20))})


class Bowl(Measurer):
    name = "bowl"

    def __init__(self):
        self.measured = []

    def measure(self, configs):
        self.measured += [c["a"] for c in configs]
        return [MeasureRecord.ok(c, time_ms=1.0 + (c["a"] - 13) ** 2) for c in configs]


class Repeater(Strategy):
    """Asks the same few indices again and again (a badly behaved strategy)."""

    name = "repeater"

    def ask(self, n):
        return [0, 1, 2, 0][:n]


def test_only_unique_configs_count_and_none_measured_twice():
    """A strategy repeating itself measures nothing twice and the loop ends as exhausted."""
    m = Bowl()
    res = tune(SPACE, m, Repeater(SPACE, rng=np.random.default_rng(0)), budget=10)
    assert sorted(m.measured) == [0, 1, 2] and res.evaluations == 3
    assert res.stop_reason == "exhausted"


def test_budget_is_exact():
    """The run measures exactly budget unique configurations."""
    m = Bowl()
    res = tune(SPACE, m, "random", budget=7, seed=0)
    assert res.evaluations == 7 == len(set(m.measured)) == len(m.measured)


def test_patience_stops_early():
    """With patience 1 the run stops after the first round without improvement."""
    res = tune(SPACE, Bowl(), "grid", budget=20, seed=0, options={"batch_size": 2, "spread": False},
               patience=1)
    assert res.stop_reason == "patience" and res.evaluations < 20


@pytest.mark.parametrize("kw", [{"seed": 3}, {"options": {"batch_size": 2}}, {"seed": 0}])
def test_strategy_instance_refuses_seed_and_options(kw):
    """An instance has its own rng and options: a seed or options that would go unused raise."""
    m = Bowl()
    with pytest.raises(ValueError, match=f"{next(iter(kw))}=.*would not use"):
        tune(SPACE, m, Repeater(SPACE, rng=np.random.default_rng(0)), budget=5, **kw)
    assert m.measured == []


def test_instance_run_records_no_seed_and_named_run_seed_zero_by_default():
    """The result's seed is the one the strategy was built from: 0 by default, None for an instance."""
    named = tune(SPACE, Bowl(), "random", budget=4)
    assert named.seed == 0 and [t.index for t in named.trials] == \
        [t.index for t in tune(SPACE, Bowl(), "random", budget=4, seed=0).trials]
    assert tune(SPACE, Bowl(), Repeater(SPACE, rng=np.random.default_rng(0)), budget=4).seed is None


def test_stop_reason_is_its_string_in_json(tmp_path):
    """StopReason serialises as the plain string (JSON output and logs keep their values)."""
    import json
    from search.tuner import StopReason
    res = tune(SPACE, Bowl(), "random", budget=4, seed=0)
    assert res.stop_reason is StopReason.BUDGET
    assert json.loads(json.dumps(res.to_dict()))["stop_reason"] == "budget" == f"{res.stop_reason}"
    assert [r.value for r in StopReason] == ["budget", "exhausted", "patience", "interrupted"]


def test_play_round_counts_and_answers_from_the_ledger():
    """One round measures the asked batch once; asking the same again is an idle round (None)."""
    from search.tuner import Ledger, play_round
    m, led = Bowl(), Ledger()
    strat = Repeater(SPACE, rng=np.random.default_rng(0))
    assert play_round(SPACE, m, strat, led, budget=10) is True
    assert sorted(led.seen) == [0, 1, 2] and led.used() == 3 and led.best.index == 2
    assert play_round(SPACE, m, strat, led, budget=10) is None and sorted(m.measured) == [0, 1, 2]


def test_ledger_counts_logged_records_until_reached():
    """A logged record uses budget once: before the replay reaches it and after."""
    from search.tuner import Ledger
    led = Ledger({5: MeasureRecord.ok({"a": 5}, time_ms=9.0)})
    assert led.used() == 1 and led.best is None
    led.add_trial(5, {"a": 5}, led.known[5])
    assert led.used() == 1 and led.best.resumed and led.best_cost == 9.0


def test_best_so_far_is_monotone():
    """The best-so-far curve never increases and ends at the best."""
    res = tune(SPACE, Bowl(), "random", budget=12, seed=3)
    curve = res.best_so_far()
    assert all(b <= a for a, b in zip(curve, curve[1:])) and curve[-1] == res.best.record.cost


def test_log_has_every_measurement(tmp_path):
    """The log holds one record per measured configuration, in order."""
    log = tmp_path / "run.jsonl"
    res = tune(SPACE, Bowl(), "random", budget=9, seed=0, log=log)
    assert [e.index for e in read_log(log).entries] == [t.index for t in res.trials]


def test_existing_log_is_not_overwritten(tmp_path):
    """Passing an existing log without resume is an error, not a silent overwrite."""
    log = tmp_path / "run.jsonl"
    tune(SPACE, Bowl(), "random", budget=3, seed=0, log=log)
    with pytest.raises(ValueError, match="resume"):
        tune(SPACE, Bowl(), "random", budget=3, seed=0, log=log)


def test_resume_of_complete_run_measures_nothing(tmp_path):
    """Resuming a finished run measures nothing and returns the same best."""
    log = tmp_path / "run.jsonl"
    first = tune(SPACE, Bowl(), "explorer", budget=12, seed=2, log=log)
    m = Bowl()
    again = tune(SPACE, m, "explorer", budget=12, seed=2, resume=log)
    assert m.measured == [] and again.best.index == first.best.index and again.resumed == 12


def test_resume_of_partial_log_continues_the_same_run(tmp_path):
    """A run cut after 5 records and resumed ends like the uninterrupted run, nothing twice."""
    full = tune(SPACE, Bowl(), "explorer", budget=14, seed=5, log=tmp_path / "full.jsonl")
    lines = (tmp_path / "full.jsonl").read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:6]) + lines[6][:20])  # header + 5 records + a torn line
    m = Bowl()
    res = tune(SPACE, m, "explorer", budget=14, seed=5, resume=cut)
    assert [t.index for t in res.trials] == [t.index for t in full.trials]
    assert len(m.measured) == 9 and not set(m.measured) & {t.config["a"] for t in full.trials[:5]}
    assert len({e.index for e in read_log(cut).entries}) == 14 == len(read_log(cut).entries)


def test_resume_with_a_larger_budget_measures_only_the_rest(tmp_path):
    """The explorer plans its endgame for the budget, so a resume with a larger budget leaves
    the old path where the old endgame began; the old records still count and none is
    measured twice."""
    log = tmp_path / "run.jsonl"
    first = tune(SPACE, Bowl(), "explorer", budget=10, seed=3, log=log)
    m = Bowl()
    more = tune(SPACE, m, "explorer", budget=18, seed=3, resume=log)
    assert more.evaluations == 18 and len(m.measured) == 8
    assert {t.index for t in first.trials} <= {t.index for t in more.trials}
    assert more.best.record.cost <= first.best.record.cost
    assert len({e.index for e in read_log(log).entries}) == 18 == len(read_log(log).entries)


def test_resume_from_foreign_log_counts_toward_budget(tmp_path):
    """Logged configs another seed measured count toward the budget and are never re-measured."""
    log = tmp_path / "run.jsonl"
    tune(SPACE, Bowl(), "random", budget=6, seed=0, log=log)
    done = {e.record.config["a"] for e in read_log(log).entries}
    m = Bowl()
    res = tune(SPACE, m, "random", budget=10, seed=99, resume=log)
    assert res.evaluations == 10 and len(m.measured) == 4 and not set(m.measured) & done


def test_resume_refuses_a_log_of_another_space(tmp_path):
    """A log written for another space (other values of a) is refused, not reused."""
    log = tmp_path / "run.jsonl"
    tune(SPACE, Bowl(), "random", budget=5, seed=0, log=log)
    other = GridSpace({"a": list(range(21))})
    m = Bowl()
    with pytest.raises(ValueError, match="another space"):
        tune(other, m, "random", budget=5, seed=0, resume=log)
    assert m.measured == [] and len(read_log(log).entries) == 5


def test_resume_refuses_a_log_of_another_measurer(tmp_path):
    """Records of another measurer (e.g. model estimates) are never taken for this one's."""
    log = tmp_path / "run.jsonl"
    tune(SPACE, Bowl(), "random", budget=5, seed=0, log=log)

    class Other(Bowl):
        name = "other"

    with pytest.raises(ValueError, match="'bowl', not 'other'"):
        tune(SPACE, Other(), "random", budget=5, seed=0, resume=log)


def test_resume_accepts_a_conv_log_under_another_layer_name(tmp_path):
    """Same layer, other name: the log is the same run (names are labels, not identity)."""
    from iobound.layer import ConvLayer
    from search.conv_space import ConvSpace

    layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, name="one")
    log = tmp_path / "run.jsonl"

    class Acc(Measurer):
        name = "acc"

        def measure(self, configs):
            return [MeasureRecord.ok(c, time_ms=1.0 + c["x"] * c["y"] / c["z"]) for c in configs]

    tune(ConvSpace(layer, "v100"), Acc(), "random", budget=4, seed=0, log=log)
    res = tune(ConvSpace(layer.replace(name="two"), "v100"), Acc(), "random", budget=4, seed=0,
               resume=log)
    assert res.resumed == 4
    other = ConvSpace(layer.replace(c_out=16), "v100")
    with pytest.raises(ValueError, match="another space \\(layer n1 4x8x8 -> 8x6x6 k3x3 s1x1 "
                                         "p0x0 there, n1 4x8x8 -> 16x6x6 k3x3 s1x1 p0x0 here\\)"):
        tune(other, Acc(), "random", budget=4, seed=0, resume=log)  # shapes, not cut-off JSON


SCRIPT = r"""
import sys, time
sys.path.insert(0, {tests!r})
from conftest import synth_cache_dict
from search.kt_cache import KtCache
from search.replay_space import ReplaySpace
from search.measure.replay import ReplayMeasurer
from search.tuner import tune
d = synth_cache_dict()
cache = KtCache(tune_params=d["tune_params"], entries=list(d["cache"].values()))
class Slow(ReplayMeasurer):
    def measure(self, configs):
        out = []
        for c in configs:
            time.sleep(0.1)
            out += super().measure([c])
        return out
    def measure_iter(self, configs):
        for c in configs:
            yield self.measure([c])[0]
res = tune(ReplaySpace(cache), Slow(cache), sys.argv[1], budget=40, seed=7,
           log=sys.argv[2] if sys.argv[3] == "new" else None,
           resume=sys.argv[2] if sys.argv[3] == "resume" else None)
print(res.evaluations, res.resumed)
"""


@pytest.mark.parametrize("strategy", ["explorer", "random"])
def test_sigkill_then_resume_loses_and_repeats_nothing(tmp_path, strategy):
    """A run killed with SIGKILL mid-way resumes from its log: budget unique configs, none twice."""
    script = tmp_path / "run.py"
    script.write_text(SCRIPT.format(tests=os.path.dirname(__file__)))
    log = tmp_path / "run.jsonl"
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen([sys.executable, str(script), strategy, str(log), "new"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline:
        if log.exists() and len(log.read_bytes().splitlines()) > 12:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = read_log(log).entries
    assert 10 < len(before) < 40
    out = subprocess.run([sys.executable, str(script), strategy, str(log), "resume"], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    after = read_log(log).entries
    keys = [tuple(sorted(e.record.config.items())) for e in after]
    assert len(keys) == 40 == len(set(keys))
    assert [e.index for e in after[: len(before)]] == [e.index for e in before]
    assert out == ["40", str(len(before))]


@pytest.mark.parametrize("space_ok, measurer_ok", [(False, True), (True, False)])
@pytest.mark.parametrize("wrong", [None, {"a": [1, 2]}, lambda configs: configs])
def test_tune_names_an_argument_of_the_wrong_class(space_ok, measurer_ok, wrong):
    """A non-Space or non-Measurer is one InvalidInputError naming the argument and the
    class it must be (was an AttributeError from space.describe())."""
    from iobound.errors import InvalidInputError

    class Flat(Measurer):
        def measure(self, configs):
            return [MeasureRecord.ok(c, time_ms=1.0) for c in configs]

    space = GridSpace({"a": [1, 2]}) if space_ok else wrong
    measurer = Flat() if measurer_ok else wrong
    name = "space must be a search.space.Space" if not space_ok else \
        "measurer must be a search.measure.base.Measurer"
    with pytest.raises(InvalidInputError, match=name):
        tune(space, measurer, "random", budget=2)
