"""Gaps a mutation pass over the search strategies, the cost model and the tuning domain
found: each test pins a rule that a plausible one-token bug would break and no other test
noticed (small synthetic spaces and layers, offline, a few seconds each)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound.devices import get_device
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from search.conv_space import ConvSpace
from search.cost_model import XGBCostModel, XGBOptions
from search.grid_space import GridSpace
from search.space import sample_excluding
from search.table1 import count_full_model, domain_for

FAST = XGBOptions(n_estimators=5)


# -- cost model: training data ----------------------------------------------------------

@pytest.mark.parametrize("costs", [[0.0, 0.0], [-1.0, np.inf], [0.0, np.inf], [-2.0, -1.0]],
                         ids=["zeros", "negative-and-failure", "zero-and-failure", "negatives"])
def test_costs_without_a_positive_finite_time_are_refused(costs):
    """A zero or negative time is no successful measurement (make_targets scores it as a
    failure): costs holding nothing else would fit a constant model that orders the
    candidates by nothing, so they are refused like all-inf costs."""
    with pytest.raises(InvalidInputError, match="no positive finite time"):
        XGBCostModel(FAST).fit([[1.0], [2.0]], costs)


def test_one_positive_time_among_zeros_and_failures_trains():
    """The rule's other side: a single positive finite time is enough to fit."""
    model = XGBCostModel(FAST).fit([[1.0], [2.0], [3.0]], [0.0, np.inf, 2.5])
    assert model.fitted and model.predict([[1.0]]).shape == (1,)


# -- sample_excluding: the fallback when sampling stops finding new indices -------------

class _StuckSampler(GridSpace):
    """A space whose sampler keeps drawing its first configuration (as a sampler biased
    toward a corner would): sample_excluding must still fill the batch from the rest."""

    def sample(self, n, rng):
        return [0][:n]


@given(st.integers(0, 2**32 - 1), st.sampled_from([set(), {5}, {1, 2, 3}]))
def test_sample_excluding_fills_from_the_rest_with_distinct_indices(seed, exclude):
    """Up to n distinct indices outside ``exclude``: the fallback draws from what is left
    besides those already taken (else a draw that repeats one comes back short)."""
    space = _StuckSampler({"a": list(range(10))})
    got = sample_excluding(space, 4, exclude, np.random.default_rng(seed))
    assert len(got) == 4 and len(set(got)) == 4
    assert not set(got) & exclude and all(0 <= i < 10 for i in got)


# -- the tuning domain ------------------------------------------------------------------

def test_values_are_those_of_members_not_of_tiles_without_a_thread_block():
    """c_out = 131 (prime) with a 1x1 kernel: the tile z = 131 passes CP-SAT's tile model but
    no thread split fits it (tz <= 64, so 131 accumulators a thread, above 128). values()
    and describe() list only values that configurations of the space take."""
    layer = ConvLayer(n=1, c_in=1, h_in=1, w_in=1, c_out=262, k_h=1, k_w=1)
    for pruned in (True, False):
        space = ConvSpace(layer, "v100", pruned=pruned)
        assert 131 in space.tile_solutions.rows[:, 2]  # the CP-SAT tile exists
        members = [space.get(i) for i in range(len(space))]
        for p in space.params:
            assert space.values(p) == sorted({c[p] for c in members}), p
        assert space.describe()["values"]["z"] == [1, 2]


def test_table1_budget_is_the_per_block_limit_when_half_an_sm_is_more():
    """S_b = min(S_sm / 2, per-block limit): on an A100 half an SM's shared memory
    (82 KiB) is above the 48 KiB a block may hold, so S_b is 48 KiB = 12288 words, and a
    1x1 layer's z = 128 breaks z^2 R <= S_b (16384 > 12288): pruned, though the
    template and the hardware allow it."""
    a100 = get_device("a100")
    assert a100.shared_mem_per_sm_bytes // 2 > a100.shared_mem_per_block_bytes  # the case
    layer = ConvLayer(n=1, c_in=1, h_in=1, w_in=1, c_out=128, k_h=1, k_w=1)
    dom = domain_for(layer, a100)
    assert (dom.prune_shared_bytes, dom.s_b_words, dom.reuse) == (49152, 12288, 1)
    assert 128 in ConvSpace(layer, a100, pruned=False).values("z")
    assert max(ConvSpace(layer, a100).values("z")) == 64


def test_full_cp_sat_model_caps_tz_at_cudas_64():
    """The whole-space CP-SAT model keeps CUDA's per-axis block limit (tz <= 64): with 128
    output channels a tz of 128 divides z = 128 and fits 1024 threads, yet no kernel can
    launch it; the model's count equals ConvSpace's, pruned and unpruned."""
    layer = ConvLayer(n=1, c_in=1, h_in=1, w_in=1, c_out=128, k_h=1, k_w=1)
    v100 = get_device("v100")
    dom = domain_for(layer, v100)
    unpruned, pruned = ConvSpace(layer, v100, pruned=False), ConvSpace(layer, v100)
    assert max(unpruned.values("tz")) == 64
    assert count_full_model(dom, pruned=False) == unpruned.unpruned_size
    assert count_full_model(dom, pruned=True) == pruned.pruned_size


# -- the model-based strategy: hints teach the model, never start a walk ----------------

def test_walks_start_from_the_strategys_own_measurements_not_from_hints():
    """Hints (another arm's measurements) are in the model's training set, but the optimizer's
    ``best`` (the walks' starting points and threshold) holds the strategy's own
    observations only, best first."""
    from search.measure.base import MeasureRecord
    from search.strategies.model_based import ModelBasedOptions, ModelBasedStrategy

    line = GridSpace({"a": list(range(30))})
    s = ModelBasedStrategy(line, ModelBasedOptions(init_random=2, epsilon=0.0, endgame=0.0,
                                                   model=FAST), rng=np.random.default_rng(0))
    calls = []
    propose = s.optimizer.propose

    def spy(model, space, n, exclude, rng, best=()):
        calls.append(list(best))
        return propose(model, space, n, exclude, rng, best)

    s.optimizer.propose = spy
    first = s.ask(2)
    s.tell(first, [MeasureRecord.ok(line.get(i), time_ms=5.0 + k) for k, i in enumerate(first)])
    hinted = [i for i in range(10, 16) if i not in first]
    s.hint(hinted, [MeasureRecord.ok(line.get(i), time_ms=9.0 + i) for i in hinted])
    assert set(hinted) <= set(s.training_set().cost)  # the model learns from them
    s.ask(4)
    assert calls == [s.seen.best()] == [first]


# -- the tuner: an idle round still tells the strategy ----------------------------------

def test_an_idle_round_tells_the_strategy_the_stored_records():
    """A round that asks only configurations measured already measures nothing, and tells
    the strategy their stored records (as a round that also asks new ones does)."""
    from search.measure.base import MeasureRecord, Measurer
    from search.strategies.base import Strategy
    from search.tuner import Ledger, play_round

    space = GridSpace({"a": list(range(6))})

    class Same(Strategy):
        name = "same"

        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.told = []

        def ask(self, n):
            return [3, 1][:n]

        def tell(self, indices, records):
            super().tell(indices, records)
            self.told.append((list(indices), [r.time_ms for r in records]))

    class Times(Measurer):
        name = "times"

        def measure(self, configs):
            return [MeasureRecord.ok(c, time_ms=1.0 + c["a"]) for c in configs]

    strat, led = Same(space, rng=np.random.default_rng(0)), Ledger()
    assert play_round(space, Times(), strat, led, budget=6) is True
    assert play_round(space, Times(), strat, led, budget=6) is None  # idle: nothing new
    assert strat.told == [([3, 1], [4.0, 2.0])] * 2
