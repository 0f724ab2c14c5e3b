"""The genetic algorithm's moves and grid search's order (:mod:`search.strategies.ga`,
:mod:`search.strategies.grid`), against what their module docs define.

References, each a set computed from the configurations told:

- GA, no mutation: every child is a uniform crossover of two of the ``population`` best,
  so its value for each parameter is one of theirs (a brute-force set of such mixes);
- GA, tournament as large as the population and mutation 1: both parents are the best
  configuration, so every child is one of its neighbours;
- sa: the defaults its module doc names as AutoTVM's (batches of 8, a plan of 64 after 64
  random, 5% random, 128 annealing chains of 500 steps, no endgame);
- grid, ``spread``: index ``i`` of the visit is ``i * step mod size`` with ``step`` the
  first integer from ``round(0.618 * size)`` up coprime to ``size`` (plain order for
  sizes 1 and 2), so the visit is a permutation; ``spread=False`` is index order.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from search.measure.base import MeasureRecord
from search.grid_space import GridSpace
from search.strategies.ga import GAOptions, GeneticStrategy
from search.strategies.grid import GridOptions, GridStrategy
from search.optimizers import AnnealOptions
from search.strategies.random import RandomStrategy
from search.strategies.sa import SAOptions, SAStrategy

SPACE = GridSpace({"a": list(range(3)), "b": list(range(3)), "c": list(range(3)),
                   "d": list(range(3))})


def _cost(i: int) -> float:
    """A fixed cost per configuration, all distinct."""
    return 1.0 + ((i * 37) % len(SPACE)) / len(SPACE)


def _tell(s, got):
    s.tell(got, [MeasureRecord.ok(SPACE.get(i), time_ms=_cost(i)) for i in got])


def _first_generation(options, want_distinct: int):
    """A GA whose random first generation of 6 has its two best differing in at least
    ``want_distinct`` parameters (the first seed that gives it)."""
    for seed in range(200):
        s = GeneticStrategy(SPACE, options, rng=np.random.default_rng(seed))
        first = s.ask(6)
        _tell(s, first)
        a, b = (SPACE.get(i) for i in sorted(first, key=_cost)[:2])
        if sum(a[p] != b[p] for p in SPACE.params) >= want_distinct:
            return s, first, a, b
    raise AssertionError("no seed gives two distinct parents")


def test_without_mutation_children_mix_the_population_best_two():
    """``population=2`` (tournaments of 1: either parent): every child takes each parameter
    from one of the two best told."""
    s, first, a, b = _first_generation(GAOptions(population=2, tournament=1, mutation=0.0),
                                       want_distinct=4)
    mixes = {SPACE.index({p: (a[p] if m else b[p]) for p, m in zip(SPACE.params, mask)})
             for mask in np.ndindex(*(2,) * len(SPACE.params))}
    got = s.ask(4)
    assert len(got) == 4 and set(got) <= mixes - set(first)


def test_a_tournament_over_the_whole_population_breeds_the_best_neighbours():
    """``tournament >= population`` and ``mutation=1``: each child is a neighbour of the best."""
    s, first, _, _ = _first_generation(GAOptions(population=6, tournament=6, mutation=1.0),
                                       want_distinct=1)
    best = min(first, key=_cost)
    free = set(SPACE.neighbours(best)) - set(first)
    got = s.ask(min(4, len(free)))
    assert len(set(got)) == len(got) and set(got) <= free


def grid_step(size: int) -> int:
    if size <= 2:
        return 1
    step = round(size * 0.6180339887)
    while math.gcd(step, size) != 1:
        step += 1
    return step


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.lists(st.integers(0, 9), min_size=1, max_size=12))
def test_spread_grid_visits_every_index_once_by_the_golden_stride(size, batches):
    space = GridSpace({"a": list(range(size))})
    s = GridStrategy(space, rng=np.random.default_rng(0))  # spread is the default
    got = []
    for n in batches + [size]:
        got += s.ask(n)
    step = grid_step(size)
    assert got == [(i * step) % size for i in range(size)]
    assert sorted(got) == list(range(size)) and s.ask(1) == []
    plain = GridStrategy(space, GridOptions(spread=False), rng=np.random.default_rng(0))
    assert plain.ask(size + 3) == list(range(size))


def test_the_golden_stride_is_near_0_618_of_the_space():
    """Sizes 3, 10 and 100: strides 2, 7 and 63 (round(6.18) = 6 shares 2 with 10)."""
    assert [grid_step(n) for n in (3, 10, 100)] == [2, 7, 63]
    for n in (3, 10, 100):
        s = GridStrategy(GridSpace({"a": list(range(n))}), rng=np.random.default_rng(0))
        assert s.ask(2)[1] == grid_step(n)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=8), st.integers(0, 2**32 - 1))
def test_random_search_never_asks_twice(batches, seed):
    s = RandomStrategy(SPACE, rng=np.random.default_rng(seed))
    got = []
    for n in batches:
        got += s.ask(n)
    assert len(set(got)) == len(got) == min(sum(batches), len(SPACE))


def test_sa_defaults_are_autotvms():
    o = SAOptions()
    assert (o.batch_size, o.init_random, o.plan_size, o.epsilon, o.endgame) == (8, 64, 64, 0.05, 0.0)
    assert isinstance(o.optimizer, AnnealOptions)
    assert (o.optimizer.n_chains, o.optimizer.n_iter) == (128, 500)
    assert SAStrategy(SPACE, rng=np.random.default_rng(0)).options == o


def test_each_registered_strategy_is_made_under_its_own_name():
    from search.strategies import make_strategy, strategy_names
    for name in strategy_names():
        assert make_strategy(name, SPACE, None, np.random.default_rng(0)).name == name
