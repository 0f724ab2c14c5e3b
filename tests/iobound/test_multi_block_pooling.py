"""The fast memory a single-processor bound is taken at for a many-block kernel.

:func:`iobound.multi_block.bound_fast_memory` pools the on-chip words that are one fast
memory in the red-blue game (a cluster of g blocks sharing on-chip memory; a shared cache
with every block resident at once) and adds the two pebbles of an in-place
multiply-accumulate. Checked: the pooled words are never fewer than any set of words
that act as one fast memory, and the formula of the module docstring.
"""

from hypothesis import given, settings, strategies as st

from iobound.multi_block import IN_PLACE_SLACK, bound_fast_memory


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 10_000), st.integers(1, 16), st.integers(1, 200),
       st.one_of(st.just(0), st.integers(1, 10**6)))
def test_pooled_fast_memory_covers_every_shared_pool(s_b, g, n, cache):
    """S covers the cluster (g S_b), and with a cache the cache plus every resident block."""
    s = bound_fast_memory(s_b, cluster_blocks=g, resident_blocks=n, shared_cache_words=cache)
    assert s >= g * s_b + IN_PLACE_SLACK
    if cache:
        assert s >= cache + n * s_b + IN_PLACE_SLACK
        assert s == cache + max(g, n) * s_b + IN_PLACE_SLACK
    else:
        assert s == g * s_b + IN_PLACE_SLACK   # residency does not matter without a cache


@settings(deadline=None, max_examples=40)
@given(st.integers(1, 10_000), st.integers(1, 16), st.integers(1, 200),
       st.one_of(st.just(0), st.integers(1, 10**6)))
def test_more_sharing_never_lowers_the_fast_memory(s_b, g, n, cache):
    """bound_fast_memory is non-decreasing in every argument."""
    s = bound_fast_memory(s_b, g, n, cache)
    assert bound_fast_memory(s_b + 1, g, n, cache) >= s
    assert bound_fast_memory(s_b, g + 1, n, cache) >= s
    assert bound_fast_memory(s_b, g, n + 1, cache) >= s
    assert bound_fast_memory(s_b, g, n, cache + 1) >= s
