"""History rounds again after the inner strategy stalls (``GuidedOptions.reopen``).

Where no source measured the target's problem (the history rounds walk the models' orders),
``reopen=n`` gives the history a round after ``n`` inner rounds in a row that did not improve
the best; where a source measured it, the option does nothing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.strategies import make_strategy
from search.transfer import GuidedOptions, HistoryGuided

from tests.search.test_transfer import SPACE, Bowl, ask_until
from tests.search.test_transfer_model_picks import _Table, _prior


def _history_rounds_by_round(problem, reopen, rounds=7):
    """The count of history rounds after each of ``rounds`` rounds of 4, on a target whose
    best is the first history round's first pick (nothing later improves it)."""
    prior = _prior(problem)
    inner = make_strategy("random", SPACE, {"batch_size": 4}, np.random.default_rng(0))
    s = HistoryGuided(inner, prior, GuidedOptions(decay=0.0, trust=1.5, follow_model=False,
                                                  reopen=reopen), np.random.default_rng(1))
    first = s.ask(4)
    meas = _Table(first[0])
    s.tell(first, meas.measure([SPACE.get(i) for i in first]))
    counts = [s.stats()["history"]["history_rounds"]]
    for _ in range(rounds - 1):
        got = s.ask(4)
        s.tell(got, meas.measure([SPACE.get(i) for i in got]))
        counts.append(s.stats()["history"]["history_rounds"])
    return counts


def test_after_n_stalled_inner_rounds_the_models_get_a_round_again():
    """Another problem: a history round, then two inner rounds that do not improve, a history
    round (a miss, so the inner asks again), two inner rounds, a history round."""
    assert _history_rounds_by_round([64, 48], reopen=2) == [1, 1, 1, 2, 2, 2, 3]
    assert _history_rounds_by_round([64, 48], reopen=3) == [1, 1, 1, 1, 2, 2, 2]


@pytest.mark.parametrize("problem, reopen", [([64, 48], 0), ([64, 64], 2)])
def test_never_reopened_when_off_or_where_a_source_measured_the_targets_problem(problem, reopen):
    assert _history_rounds_by_round(problem, reopen) == [1] * 7


@given(st.integers(0, 2**16), st.integers(0, 3), st.sampled_from([[64, 64], [64, 48]]),
       st.integers(1, 6), st.integers(5, 60))
def test_never_an_invalid_or_repeated_index_with_reopen(seed, reopen, problem, batch, budget):
    """Property: whatever ``reopen`` and the sources, every ask is distinct, new and valid,
    and the run does not end before the space or the budget does."""
    inner = make_strategy("explorer", SPACE, {"batch_size": batch}, np.random.default_rng(seed))
    s = HistoryGuided(inner, _prior(problem), GuidedOptions(reopen=reopen),
                      np.random.default_rng(seed + 1))
    assert len(ask_until(s, Bowl((1, 4, 1)), batch, budget)) >= min(budget, len(SPACE))


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_reopen_must_be_a_count(bad):
    with pytest.raises(InvalidInputError, match="reopen"):
        GuidedOptions(reopen=bad)
