"""tune() against a brute-force reference of the loop its docs describe.

A scripted strategy asks arbitrary lists of indices (repeats, already measured ones,
more than asked for are cut to ``n``); the reference replays the documented rules:
the tuner asks ``min(batch_size, budget left)``, only unique unseen configurations are
measured and counted, a round asking nothing new is idle (3 in a row: exhausted),
``patience`` rounds without a strictly better cost stop the run, and the best is the
lowest finite cost. Failures are records (``compile_error``), never the best.
"""

import math

import numpy as np
from hypothesis import HealthCheck, example, given, settings, strategies as st

from search.measure.base import MeasureRecord, Measurer, Status
from search.records import read_log
from search.grid_space import GridSpace
from search.strategies.base import Strategy, StrategyOptions
from search.tuner import MAX_IDLE_ROUNDS, tune

SIZE = 12
SPACE = GridSpace({"a": list(range(SIZE))})


class Table(Measurer):
    """Cost per index from a table; ``inf`` is a compile error (a recorded failure)."""

    name = "table"

    def __init__(self, costs, stop_after=None):
        self.costs, self.measured, self.stop_after = costs, [], stop_after

    def measure_iter(self, configs):
        for c in configs:
            if self.stop_after is not None and len(self.measured) >= self.stop_after:
                raise KeyboardInterrupt
            self.measured.append(c["a"])
            cost = self.costs[c["a"]]
            yield (MeasureRecord.failed(c, Status.COMPILE_ERROR, "boom") if math.isinf(cost)
                   else MeasureRecord.ok(c, time_ms=cost))

    def measure(self, configs):
        return list(self.measure_iter(configs))


class Scripted(Strategy):
    """Round k asks ``script[k][:n]`` (then nothing); records every ``n`` asked."""

    name = "scripted"

    def __init__(self, script, batch):
        super().__init__(SPACE, StrategyOptions(batch_size=batch), np.random.default_rng(0))
        self.script, self.k, self.ns = script, 0, []

    def ask(self, n):
        self.ns.append(n)
        out = self.script[self.k][:n] if self.k < len(self.script) else []
        self.k += 1
        return list(out)


def reference(script, costs, batch, budget, patience):
    """(measured indices in order, stop reason, ns asked, best index or None)."""
    seen, order, ns, k = {}, [], [], 0
    best, best_i, idle, stale = math.inf, None, 0, 0
    while True:
        if len(seen) >= budget:
            return order, "budget", ns, best_i
        if len(seen) >= SIZE:
            return order, "exhausted", ns, best_i
        n = min(batch, budget - len(seen))
        ns.append(n)
        asked = list(dict.fromkeys(script[k][:n] if k < len(script) else []))
        k += 1
        new = [i for i in asked if i not in seen][: budget - len(seen)]
        if not new:
            idle += 1
            if idle >= MAX_IDLE_ROUNDS:
                return order, "exhausted", ns, best_i
            continue
        before = best
        for i in new:
            seen[i] = costs[i]
            order.append(i)
            if costs[i] < best:
                best, best_i = costs[i], i
        idle = 0
        stale = 0 if best < before else stale + 1
        if patience is not None and stale >= patience:
            return order, "patience", ns, best_i


costs_st = st.lists(st.one_of(st.sampled_from([1.0, 2.0, 3.0, 5.0]), st.just(math.inf)),
                    min_size=SIZE, max_size=SIZE)
script_st = st.lists(st.lists(st.integers(0, SIZE - 1), max_size=6), min_size=1, max_size=12)
ALL = [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11]]
FLAT = [1.0] * SIZE


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=script_st, costs=costs_st, batch=st.integers(1, 5), budget=st.integers(1, 14),
       patience=st.one_of(st.none(), st.integers(1, 3)))
@example(script=ALL, costs=FLAT, batch=5, budget=14, patience=None)  # the space runs out
@example(script=[[0], [], [1], [], [], [2]], costs=FLAT, batch=2, budget=9, patience=None)
@example(script=[[3], [2], [2, 1], [0], [5]], costs=[4.0, 3.0, 2.0, 1.0] + FLAT[4:], batch=1,
         budget=9, patience=2)  # ties and worse rounds count toward patience
def test_tune_matches_the_reference_loop(script, costs, batch, budget, patience):
    m = Table(costs)
    strat = Scripted(script, batch)
    res = tune(SPACE, m, strat, budget=budget, patience=patience)
    order, stop, ns, best_i = reference(script, costs, batch, budget, patience)
    assert strat.ns == ns  # the tuner asks min(batch_size, budget left), round by round
    assert m.measured == order and len(set(m.measured)) == len(m.measured) <= budget
    assert [t.index for t in res.trials] == order
    assert res.stop_reason == stop
    assert (res.best.index if res.best is not None else None) == best_i
    if res.best is not None:
        assert res.best.record.cost == min(costs[i] for i in order)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=script_st, costs=costs_st, batch=st.integers(1, 5), budget=st.integers(1, 14),
       cut=st.integers(0, 13))
@example(script=ALL, costs=FLAT, batch=5, budget=12, cut=3)  # cut inside a round
@example(script=ALL, costs=[math.inf] * 3 + FLAT[3:], batch=5, budget=12, cut=4)
@example(script=ALL, costs=[math.inf] * 3 + FLAT[3:], batch=5, budget=12, cut=2)  # failures only
def test_interrupt_then_resume_measures_each_configuration_once(tmp_path_factory, script, costs,
                                                                batch, budget, cut):
    """An interrupt keeps and logs every finished measurement; the resumed run measures
    only the rest and ends like the uninterrupted run."""
    log = tmp_path_factory.mktemp("run") / "run.jsonl"
    full = tune(SPACE, Table(costs), Scripted(script, batch), budget=budget)
    first_m = Table(costs, stop_after=cut)
    first = tune(SPACE, first_m, Scripted(script, batch), budget=budget, log=log)
    logged = [e.index for e in read_log(log).entries]
    assert logged == first_m.measured == [t.index for t in first.trials]
    if first.stop_reason == "interrupted":
        best = [t for t in first.trials if math.isfinite(t.record.cost)]
        assert (first.best is None) == (not best)
        if best:
            assert first.best.record.cost == min(t.record.cost for t in best)
    second_m = Table(costs)
    second = tune(SPACE, second_m, Scripted(script, batch), budget=budget, resume=log)
    assert not set(second_m.measured) & set(first_m.measured)
    assert sorted(first_m.measured + second_m.measured) == sorted(t.index for t in full.trials)
    assert [t.index for t in second.trials] == [t.index for t in full.trials]
    assert second.stop_reason == full.stop_reason
    entries = [e.index for e in read_log(log).entries]
    assert len(entries) == len(set(entries)) == len(full.trials)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old=script_st, new=script_st, costs=costs_st, batch=st.integers(1, 5),
       old_budget=st.integers(1, 12), budget=st.integers(1, 14))
@example(old=[[5, 6, 7]], new=[[0, 1, 2, 3, 4]], costs=FLAT, batch=5, old_budget=3, budget=5)
def test_resume_of_a_foreign_log_never_exceeds_the_budget(tmp_path_factory, old, new, costs,
                                                         batch, old_budget, budget):
    """Resuming another strategy's log: its records count toward the budget whether or not
    the replay reaches them, none is measured again, and the budget is never exceeded."""
    log = tmp_path_factory.mktemp("run") / "run.jsonl"
    tune(SPACE, Table(costs), Scripted(old, batch), budget=old_budget, log=log)
    done = [e.index for e in read_log(log).entries]
    m = Table(costs)
    res = tune(SPACE, m, Scripted(new, batch), budget=budget, resume=log)
    assert not set(m.measured) & set(done) and len(set(m.measured)) == len(m.measured)
    assert len(done) + len(m.measured) == res.evaluations
    assert res.evaluations <= max(budget, len(done))
    if res.stop_reason == "budget":
        assert res.evaluations == max(budget, len(done))
    entries = [e.index for e in read_log(log).entries]
    assert len(entries) == len(set(entries)) == res.evaluations
    finite = [t.record.cost for t in res.trials if math.isfinite(t.record.cost)]
    assert (res.best.record.cost if res.best else None) == (min(finite) if finite else None)
