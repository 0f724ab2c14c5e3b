"""Kendall's tau with an exact p-value on small tied samples (search/transfer/rank_test.py),
against brute force over every pairing, scipy's exact test where it has one, and
scipy's permutation test."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau, permutation_test

from search.transfer.rank_test import EXACT_UP_TO, kendall_greater

from tests.search.test_transfer_match import _line_prior

small = st.integers(3, 6).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 3), min_size=n, max_size=n),
    st.lists(st.integers(0, 3), min_size=n, max_size=n)))


def _brute_p(x, y) -> float:
    """The share of the pairings of x with y whose tau-b is at least the observed one."""
    observed = kendalltau(x, y)[0]
    taus = [kendalltau([x[i] for i in perm], y)[0] for perm in itertools.permutations(range(len(x)))]
    return float(np.mean([t >= observed - 1e-12 for t in taus]))


@settings(max_examples=25, deadline=None)
@given(small)
def test_p_is_the_share_of_pairings_at_least_as_concordant(xy):
    x, y = xy
    tau, p = kendall_greater(x, y)
    if len(set(x)) == 1 or len(set(y)) == 1:
        assert math.isnan(tau)
        return
    assert tau == pytest.approx(kendalltau(x, y)[0])
    assert p == pytest.approx(_brute_p(x, y))
    assert 1 / math.factorial(len(x)) <= p <= 1.0


@settings(max_examples=20, deadline=None)
@given(st.permutations(list(range(8))), st.integers(3, 8))
def test_without_ties_it_is_scipys_exact_test(perm, n):
    x, y = list(range(n)), [v for v in perm if v < n]
    assert kendall_greater(x, y) == pytest.approx(
        tuple(kendalltau(x, y, alternative="greater", method="exact")))


def test_it_is_scipys_permutation_test_on_eight_tied_pairs():
    """The largest sample counted exactly: the same p as scipy.stats.permutation_test."""
    x = [1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5.0, 6.0]
    y = [2.0, 1.0, 3.0, 4.0, 6.0, 5.0, 5.0, 7.0]
    y_sign = np.sign(np.subtract.outer(y, y))

    def concordance(xs, axis=-1):  # vectorized over the pairings scipy enumerates
        xs = np.moveaxis(xs, axis, -1)
        return (np.sign(xs[..., :, None] - xs[..., None, :]) * y_sign).sum(axis=(-2, -1))

    ref = permutation_test((x,), concordance, permutation_type="pairings", vectorized=True,
                           n_resamples=np.inf, alternative="greater")
    assert kendall_greater(x, y)[1] == pytest.approx(ref.pvalue)


def test_larger_tied_samples_keep_the_normal_approximation():
    x = list(range(EXACT_UP_TO + 2)) + [0]
    y = list(range(EXACT_UP_TO + 2)) + [1]
    assert kendall_greater(x, y) == pytest.approx(tuple(kendalltau(x, y, alternative="greater")))


def test_a_source_tied_where_the_target_is_tied_is_significant_over_seven_sources():
    """Seven configurations, three of which the source and the target cannot tell apart,
    the rest in the same order on both sides: 3! of the 7! pairings order them so, p =
    0.0012, within 0.01 / 7 sources (the trusted round's bar); the normal approximation
    scipy takes with ties says 0.0016 and would refuse it."""
    twin = lambda x: 1.0 + max(x, 2)  # noqa: E731 (0, 1 and 2 tie)
    others = {f"gpu{k}": (lambda k: lambda x: 1.0 + abs(x - 5 * k))(k) for k in range(6)}
    prior = _line_prior({"twin": twin, **others})
    known = {x: twin(x) for x in (0, 1, 2, 4, 6, 7, 10)}
    got = dict(zip([g.device for g in prior.groups], prior.agreement(known)))
    tau, p = got["twin"]
    assert tau == pytest.approx(1.0) and p == pytest.approx(6 / 5040)
    assert p <= 0.01 / 7 < kendalltau(list(known.values()), list(known.values()),
                                      alternative="greater")[1]


@pytest.mark.parametrize("n", range(3, 13))
def test_a_perfect_order_has_tau_exactly_one(n):
    """scipy's tau-b of a perfect order is 1 - 2e-16 for some
    sizes (5, 6, 8, 10, 12 without ties), so ``GuidedOptions(trust=1.0)`` (a source must
    order every measurement as the target does) refused a perfect twin, depending on how
    many configurations it was judged on. The reversed order is exactly -1."""
    x = list(range(n))
    tied = [0, 0] + list(range(1, n - 1))
    assert kendall_greater(x, [2.0 * v + 1 for v in x])[0] == 1.0
    assert kendall_greater(tied, tied)[0] == 1.0
    assert kendall_greater(x, [-v for v in x])[0] == -1.0
