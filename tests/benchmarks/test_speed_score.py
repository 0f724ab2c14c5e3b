"""The benchmarks' one score (``benchmarks.score.speed_score``)."""

import math

from hypothesis import given, strategies as st

from benchmarks.score import speed_score

TIMES = st.floats(min_value=1e-6, max_value=1e6)


@given(TIMES, TIMES)
def test_a_found_time_scores_reference_over_it(reference, best):
    assert math.isclose(speed_score(reference, best), reference / best)
    assert speed_score(best, best) == 1.0


@given(TIMES, st.sampled_from([None, math.inf, math.nan, 0.0, -1.0]))
def test_nothing_found_scores_zero(reference, best):
    assert speed_score(reference, best) == 0.0
