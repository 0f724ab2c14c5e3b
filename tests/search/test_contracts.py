"""Contract tests run over every registered strategy and every registered measurer.

Each registered name must have an entry here (a new strategy or measurer without one
fails :func:`test_every_registered_name_is_covered`), so the contracts hold for all:

- a strategy never returns an invalid, out-of-range or repeated index, never more
  than it was asked for, is deterministic for a seed, and the tuner never measures
  more than ``batch_size`` configurations at once;
- a measurer returns one record per configuration, in order; a bad configuration
  is an ``invalid`` record, not an exception; records round-trip through JSON.
"""

import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound.errors import InvalidInputError
from kernels.status import Status
from iobound.layer import ConvLayer
from search.measure import MEASURERS, make_measurer
from search.measure.base import MeasureRecord, Measurer
from search.grid_space import GridSpace
from search.strategies import STRATEGIES, make_options, make_strategy, strategy_names
from search.tuner import tune

#: Small models and short searches, so a property example costs milliseconds.
CHEAP = {"explorer": {"init_random": 2, "optimizer": {"n_walkers": 4, "max_steps": 4},
                      "model": {"n_estimators": 5}},
         "sa": {"init_random": 4, "plan_size": 4, "optimizer": {"n_iter": 8, "n_chains": 4},
                "model": {"n_estimators": 5}}}
ROUNDS = 5

LAYER = ConvLayer(n=1, c_in=3, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
GOOD = [dict(x=3, y=3, z=2, alpha=2, tx=3, ty=1, tz=2), dict(x=6, y=2, z=4, alpha=1, tx=3, ty=2, tz=2)]
BAD = [dict(GOOD[0], tx=2), {"block_size_x": 32}, dict(GOOD[0], x="three")]


def _cost(config: dict) -> MeasureRecord:
    """A deterministic landscape over a grid's values, with some configurations failing."""
    v = list(config.values())
    if sum(v) % 5 == 4:
        return MeasureRecord.failed(config, "runtime_error", "synthetic failure")
    return MeasureRecord.ok(config, time_ms=1.0 + sum((x - 1) ** 2 for x in v))


class _Batches(Measurer):
    """Records the size of every batch the tuner hands over."""

    name = "batches"

    def __init__(self):
        self.sizes = []

    def measure(self, configs):
        self.sizes.append(len(configs))
        return [_cost(c) for c in configs]


def _drive(name: str, space: GridSpace, options, seed: int) -> list[tuple[int, list[int]]]:
    """Ask/tell for a few rounds as the tuner does; [(n asked for, indices returned)]."""
    strat = make_strategy(name, space, options, np.random.default_rng(seed))
    rounds = []
    for _ in range(ROUNDS):
        got = strat.ask(strat.batch_size)
        rounds.append((strat.batch_size, [int(i) for i in got]))
        if not got:
            break
        strat.tell(got, [_cost(space.get(i)) for i in got])
    return rounds


grids = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(
    lambda dims: GridSpace({f"p{k}": list(range(d)) for k, d in enumerate(dims)}))


@pytest.mark.parametrize("name", strategy_names())
@given(space=grids, seed=st.integers(0, 2**32 - 1), batch=st.integers(1, 5))
def test_strategy_contract(name, space, seed, batch):
    """Valid, distinct, new, at most n indices per ask; the same asks again for the same seed."""
    options = make_options(name, {**CHEAP.get(name, {}), "batch_size": batch})
    run = _drive(name, space, options, seed)
    asked = set()
    for n, got in run:
        assert len(got) <= n and len(set(got)) == len(got)
        assert all(0 <= i < len(space) for i in got) and not set(got) & asked
        asked.update(got)
    assert _drive(name, space, options, seed) == run


@pytest.mark.parametrize("name", strategy_names())
@given(space=grids, seed=st.integers(0, 2**32 - 1), batch=st.integers(1, 5))
def test_tuner_measures_at_most_batch_size_at_once(name, space, seed, batch):
    """Driven by the tuner, no batch exceeds batch_size and nothing is measured twice."""
    m = _Batches()
    budget = min(len(space), 3 * batch)
    res = tune(space, m, name, budget=budget, seed=seed,
               options={**CHEAP.get(name, {}), "batch_size": batch})
    assert all(1 <= s <= batch for s in m.sizes) and sum(m.sizes) == res.evaluations <= budget


def _replay(cache_path):
    from search.kt_cache import load_cache
    return make_measurer("replay", load_cache(cache_path))


#: name -> (build(cache_path), good configs, bad configs); the cuda one needs a GPU.
MEASURER_CASES = {
    "model": (lambda _: make_measurer("model", LAYER, "v100"), GOOD, BAD),
    "emulate": (lambda _: make_measurer("emulate", LAYER), GOOD, BAD),
    "cuda": (lambda _: make_measurer("cuda", LAYER), GOOD, BAD),
    "replay": (_replay, [{"bx": 64, "by": 2, "tile": 2, "shm": 1}, {"bx": 256, "by": 2, "tile": 3, "shm": 0}],
               [{"bx": 512, "by": 1, "tile": 1, "shm": 0}, {"bx": 64}, {"bx": [64], "by": 2, "tile": 2, "shm": 1}]),
}


def test_every_registered_name_is_covered():
    """Every registered strategy and measurer is under these contracts."""
    assert set(MEASURER_CASES) == set(MEASURERS)
    assert set(strategy_names()) == set(STRATEGIES) and all(
        make_options(n, CHEAP.get(n)) is not None for n in strategy_names())


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.gpu) if n == "cuda" else n
                                  for n in sorted(MEASURER_CASES)])
def test_measurer_contract(name, synth_cache_path):
    """One record per config in order; bad configs are invalid records; JSON round trip."""
    build, good, bad = MEASURER_CASES[name]
    configs = [good[0], *bad, *good[1:]]
    with build(synth_cache_path) as m:
        records = m.measure(configs)
        assert list(m.measure_iter(configs[::-1])) and len(records) == len(configs)
    assert [r.config for r in records] == configs
    assert [r.status for r in records[1:1 + len(bad)]] == [Status.INVALID] * len(bad)
    assert records[0].is_ok and records[-1].status is not Status.INVALID
    for r in records:
        assert MeasureRecord.from_dict(json.loads(json.dumps(r.to_dict()))) == r


NOT_CONFIGS = [None, 5, "x=3", ["x", 3]]


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.gpu) if n == "cuda" else n
                                  for n in sorted(MEASURER_CASES)])
def test_measurer_non_mapping_config_is_an_invalid_record(name, synth_cache_path):
    """A configuration that is not a mapping is an invalid record in its place (config {},
    the error naming the value), not a TypeError; configs that is not a list of
    configurations is an InvalidInputError."""
    build, good, _ = MEASURER_CASES[name]
    with build(synth_cache_path) as m:
        records = m.measure([good[0], *NOT_CONFIGS])
        assert [r.status for r in records[1:]] == [Status.INVALID] * len(NOT_CONFIGS)
        assert records[0].is_ok and all(r.config == {} for r in records[1:])
        assert [r.error.rsplit("got ", 1)[1] for r in records[1:]] == [repr(c) for c in NOT_CONFIGS]
        for configs in (None, 5, "abc", good[0]):
            with pytest.raises(InvalidInputError, match="configs must be a list"):
                m.measure(configs)
            with pytest.raises(InvalidInputError, match="configs must be a list"):
                list(m.measure_iter(configs))
