"""Zero-shot as a strategy (:class:`search.strategies.zero_shot.ZeroShotStrategy`): what its
asks are, what its NDCG is, how it falls back and which options it refuses.

References: the asks concatenated are the ranking of the candidates drawn by
:func:`search.zero_shot.history_ranking` (each configuration once, however the asks are
sized, a negative or zero ask taking nothing); the NDCG@K is the textbook formula
(gains ``2**rel - 1`` of the configurations asked, in the order asked, discounted by
``log2(position + 1)``, over the same for the K best relevances of the whole space),
recomputed here from the recorded times; without usable history the order is a random
permutation (module doc).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.strategies.zero_shot import ZeroShotStrategy, ZeroShotStrategyOptions
from tests.search.test_zero_shot import _history


def textbook_ndcg(space, asked) -> float:
    """NDCG@len(asked) from the recorded times: relevance optimum / time, 0 for a failure."""
    times = [e["time"] if not isinstance(e["time"], str) else math.inf for e in space.cache.entries]
    best = min(times)
    rel = {space.index({p: e[p] for p in space.params}): best / t
           for e, t in zip(space.cache.entries, times)}
    gain = lambda r: 2.0**r - 1.0  # noqa: E731
    k = len(asked)
    dcg = sum(gain(rel[i]) / math.log2(p + 2) for p, i in enumerate(asked))
    ideal = sum(gain(r) / math.log2(p + 2) for p, r in enumerate(sorted(rel.values(), reverse=True)[:k]))
    return dcg / ideal


def _strategy(space, seed=0, **options):
    hist = tuple(_history(space, "other", 2.0))
    return ZeroShotStrategy(space, ZeroShotStrategyOptions(history=hist, **options),
                            rng=np.random.default_rng(seed))


def test_asks_walk_the_ranking_once_whatever_their_sizes(synth_space):
    s = _strategy(synth_space)
    asked = []
    for n in (-2, 3, 0, -2, 5, 1, -1, 4, 10**6, 7):
        got = s.ask(n)
        assert len(got) == (min(max(n, 0), len(synth_space) - len(asked)))
        asked += got
    assert sorted(asked) == list(range(len(synth_space)))
    assert asked == s._order and s.ask(3) == []


def test_ndcg_is_the_textbook_ndcg_of_the_configurations_asked(synth_space):
    s = _strategy(synth_space)
    assert s.ndcg() is None  # nothing asked yet
    asked = []
    for n in (1, 4, 10):
        asked += s.ask(n)
        assert s.ndcg() == pytest.approx(textbook_ndcg(synth_space, asked), rel=1e-12)
        assert s.stats()["ndcg_at_k"] == round(s.ndcg(), 4)
    assert s.stats()["used"] is True and "fallback" not in s.stats()


def test_candidates_limit_the_configurations_ranked(synth_space):
    """``candidates=7`` ranks (and so asks) 7 configurations of the space at most, a sample
    drawn with the strategy's generator (another seed, another sample)."""
    drawn = set()
    for seed in range(3):
        s = _strategy(synth_space, seed=seed, candidates=7)
        got = s.ask(len(synth_space))
        assert len(got) == 7 and len(set(got)) == 7 and s.ask(1) == []
        drawn.add(frozenset(got))
    assert len(drawn) > 1


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_a_count_of_candidates_below_one_is_refused(bad):
    with pytest.raises(InvalidInputError, match="candidates"):
        ZeroShotStrategyOptions(candidates=bad)


def test_without_usable_history_the_order_is_a_random_permutation(synth_space):
    orders = []
    for seed in range(4):
        s = ZeroShotStrategy(synth_space, rng=np.random.default_rng(seed))
        order = s.ask(len(synth_space))
        assert sorted(order) == list(range(len(synth_space)))
        assert s.stats()["used"] is False and s.stats()["fallback"] == "random order"
        orders.append(order)
    assert any(o != sorted(o) for o in orders) and len({tuple(o) for o in orders}) == 4
