"""What a strategy review found taken through the API: reused records skipping the
checks measured ones get, a model gate counting a 0 ms record as a success, and another
strategy's options accepted and ignored."""

from __future__ import annotations

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.measure.base import MeasureRecord, Measurer, Status
from search.grid_space import GridSpace
from search.strategies import make_strategy
from search.strategies.ga import GAOptions
from search.strategies.model_based import ModelBasedOptions
from search.strategies.sa import SAOptions
from search.tuner import tune

SPACE = GridSpace({"a": list(range(6))})


class Parabola(Measurer):
    name = "parabola"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + (c["a"] - 4) ** 2) for c in configs]


def test_a_reused_zero_or_negative_time_is_invalid_as_a_measured_one_is():
    reusable = {2: MeasureRecord.ok({"a": 2}, time_ms=0.0),
                3: MeasureRecord.ok({"a": 3}, time_ms=-5.0)}
    got = tune(SPACE, Parabola(), "grid", budget=6, seed=0, reusable=reusable)
    assert got.best.config == {"a": 4} and got.best.record.time_ms == 1.0
    assert {t.index: t.record.status for t in got.trials if t.index in (2, 3)} == {
        2: Status.INVALID, 3: Status.INVALID}


def test_a_reused_record_of_another_configuration_is_refused():
    with pytest.raises(InvalidInputError, match=r"reusable\[2\] is a record of"):
        tune(SPACE, Parabola(), "grid", budget=6, seed=0,
             reusable={2: MeasureRecord.ok({"a": 5}, time_ms=0.01)})


def test_the_model_waits_for_positive_times_told_directly():
    """Two 0 ms records told straight to the explorer: no model yet, no crash."""
    strat = make_strategy("explorer", SPACE, {"init_random": 2}, np.random.default_rng(0))
    asked = strat.ask(2)
    strat.tell(asked, [MeasureRecord.ok(SPACE.get(i), time_ms=0.0) for i in asked])
    again = strat.ask(2)
    assert len(again) == 2 and not set(again) & set(asked)


@pytest.mark.parametrize("strategy, options", [("random", GAOptions(population=3)),
                                               ("random", ModelBasedOptions(epsilon=0.5))])
def test_another_strategys_options_are_refused(strategy, options):
    with pytest.raises(InvalidInputError, match=f"strategy '{strategy}' takes"):
        tune(SPACE, Parabola(), strategy, budget=3, seed=0, options=options)


def test_options_with_the_same_fields_are_taken():
    """SAOptions has the explorer's fields (a subclass adding none): still accepted."""
    assert tune(SPACE, Parabola(), "explorer", budget=3, seed=0, options=SAOptions()).evaluations == 3


def test_a_negative_annealing_temperature_is_refused():
    """temp=(-1, -2) took every worse move as the better one."""
    from search.optimizers.anneal import AnnealOptions
    with pytest.raises(InvalidInputError, match=r"temp\[0\] must be a finite number >= 0"):
        AnnealOptions(temp=(-1, -2))
    assert AnnealOptions(temp=(1, 0)).temp == (1, 0)
