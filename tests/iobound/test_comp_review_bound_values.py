"""Review regression: direct/winograd_bound_values apply the fast-memory limit to S."""
import pytest

from iobound.direct_bounds import direct_bound_values, direct_leading_terms
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.limits import FAST_MEMORY_WORDS
from iobound.winograd_bounds import winograd_bound_values

L = ConvLayer(1, 8, 8, 8, 8, 3, 3, padding=1)
FNS = [lambda s: direct_bound_values(L, s), lambda s: direct_leading_terms(L, s),
       lambda s: winograd_bound_values(L, 2, s)]


@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("s", [1e300, float("inf"), FAST_MEMORY_WORDS.high + 1, 0.5])
def test_s_outside_the_limit_is_named(fn, s):
    with pytest.raises(InvalidInputError, match="fast memory S"):
        fn(s)


@pytest.mark.parametrize("fn", FNS)
def test_s_at_the_limit_works(fn):
    assert all(v == v for v in fn(FAST_MEMORY_WORDS.high).values())
