"""Tests of the inner strategy's escape from the history's region (GuidedOptions.escape)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.strategies import make_strategy
from search.strategies.stall import StallOptions
from search.transfer import GuidedOptions, HistoryPrior, with_history
from search.tuner import tune

from tests.search.test_transfer import SPACE, Bowl, _bowl, _hist, ask_until

PRIOR = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((0, 0, 1))), seed=0)


def _guided(name: str, options=None, **guided):
    inner = make_strategy(name, SPACE, options, np.random.default_rng(0))
    return inner, with_history(inner, PRIOR, GuidedOptions(**guided), seed=0)


def test_escape_gives_a_model_based_inner_stall_exploration_of_that_source():
    """With the rank features, an explorer without stall options explores from the
    escape's source when its rounds stop improving; one with its own keeps them; without
    the rank features, or for a strategy planning ahead (sa), nothing changes."""
    inner, _ = _guided("explorer", escape="far")
    assert inner.options.stall == StallOptions(source="far")
    inner, _ = _guided("explorer", {"stall": {"source": "sweep", "rate": 0.5}}, escape="far")
    assert inner.options.stall == StallOptions(source="sweep", rate=0.5)
    inner, _ = _guided("explorer", escape="far", prior_feature=False)
    assert inner.options.stall is None
    inner, _ = _guided("sa", escape="far")
    assert inner.options.stall is None
    inner, _ = _guided("explorer", escape=None)
    assert inner.options.stall is None


def test_escape_must_name_a_stall_source():
    with pytest.raises(InvalidInputError, match="escape"):
        GuidedOptions(escape="nowhere")


def test_with_escape_every_ask_is_new_and_the_stall_share_is_used():
    """History pointing at the target's local optimum: the explorer with escape asks only
    new members of the space and, stalled there, takes configurations from the source."""
    inner, s = _guided("explorer", escape="far")
    res = tune(SPACE, Bowl((7, 5, 4), local=(0, 0, 1)), s, budget=80)
    idx = [t.index for t in res.trials]
    assert len(set(idx)) == len(idx) == 80 and all(0 <= i < len(SPACE) for i in idx)
    assert inner.stats()["explored"] > 0


@given(st.integers(0, 2**16), st.sampled_from(["far", "elite", "sweep"]),
       st.integers(1, 6), st.integers(10, 70))
@settings(max_examples=12, deadline=None)
def test_with_any_escape_every_ask_is_a_new_member_of_the_space(seed, source, batch, budget):
    """Whatever the source, batch and budget, the explorer guided by misleading history
    asks distinct, new, valid indices until the budget or the space is exhausted."""
    inner = make_strategy("explorer", SPACE, {"batch_size": batch}, np.random.default_rng(seed))
    s = with_history(inner, PRIOR, GuidedOptions(escape=source), seed=seed)
    asked = ask_until(s, Bowl((7, 5, 4), local=(0, 0, 1)), batch, budget)
    assert len(asked) == min(budget, len(SPACE))
