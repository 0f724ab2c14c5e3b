"""The default thread block chosen from a config's tiles."""

import pytest
from hypothesis import example, given, strategies as st

from iobound.errors import InvalidInputError
from kernels.config import parse_config
from kernels.thread_block import DEFAULT_MAX_THREADS, MAX_BLOCK_DIM, default_thread_block

tile = st.integers(1, 96)


def _divisors(n, cap):
    return [d for d in range(1, min(n, cap) + 1) if n % d == 0]


@example(1, 1, 65, None)  # z above its axis' limit of 64 (a run of CI drew it)
@given(tile, tile, tile, st.sampled_from([None, 2, 3, 4]))
def test_block_divides_its_spans_and_is_greedy_along_x_y_z(x, y, z, e):
    """Each count divides its span, the block has at most 256 threads, and no axis could
    take more threads given the ones before it and its axis' limit (z at most 64)."""
    tiles = {"x": x, "y": y, "z": z} if e is None else {"e": e, "x": e * x, "y": e * y, "z": z}
    b = default_thread_block(tiles)
    spans = (x, y, z)  # Winograd spans are x/e, y/e: the tiles above are e times these
    room = DEFAULT_MAX_THREADS
    for key, span, axis_cap in zip(("tx", "ty", "tz"), spans, MAX_BLOCK_DIM):
        assert span % b[key] == 0 and b[key] == max(_divisors(span, min(room, axis_cap)))
        room //= b[key]
    assert b["tx"] * b["ty"] * b["tz"] <= DEFAULT_MAX_THREADS


def test_examples():
    """8x8x8 tiles get 8x8x4 = 256 threads; a prime tile gets one thread per row."""
    assert default_thread_block({"x": 8, "y": 8, "z": 8}) == {"tx": 8, "ty": 8, "tz": 4}
    assert default_thread_block({"x": 512, "y": 3, "z": 5}) == {"tx": 256, "ty": 1, "tz": 1}
    assert default_thread_block({"e": 4, "x": 16, "y": 8, "z": 3}) == {"tx": 4, "ty": 2, "tz": 3}


def test_missing_tiles_are_named():
    """Without the tiles it needs there is no default, and the error says which."""
    with pytest.raises(InvalidInputError, match="missing or not positive: z"):
        default_thread_block({"x": 4, "y": 4})
    with pytest.raises(InvalidInputError, match="e, x, y, z"):
        default_thread_block({"x": 4, "y": 4, "z": 4}, "winograd")


def test_parse_config_fills_threads_only_when_none_is_given():
    """default_threads fills a config without threads; a partial block stays an error."""
    assert parse_config("e=2,x=8,y=8,z=4", default_threads=True).threads == 4 * 4 * 4
    with pytest.raises(ValueError, match="missing"):
        parse_config("x=8,y=8,z=8,alpha=2")
    with pytest.raises(ValueError, match="missing ty, tz"):
        parse_config("x=8,y=8,z=8,alpha=2,tx=2", default_threads=True)
