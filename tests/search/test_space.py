"""Tests of the abstract Space contract through GridSpace, and sample_excluding."""

import numpy as np
from hypothesis import given, strategies as st

from search.space import GridSpace, sample_excluding

GRID = GridSpace({"a": [1, 2, 3, 4], "b": ["x", "y", "z"], "c": [0, 1]})


def test_get_index_round_trip():
    """index(get(i)) == i for every index."""
    assert [GRID.index(GRID.get(i)) for i in range(len(GRID))] == list(range(len(GRID)))


def test_index_of_non_member_is_none():
    """A config with an unknown value or a missing parameter is not a member."""
    assert GRID.index({"a": 5, "b": "x", "c": 0}) is None
    assert GRID.index({"a": 1, "b": "x"}) is None
    assert not GRID.is_valid({"a": 9, "b": "x", "c": 0})


@given(st.integers(0, 30), st.integers(0, 2**32 - 1))
def test_sample_distinct_and_in_range(n, seed):
    """sample gives min(n, len) distinct indices inside the space."""
    got = GRID.sample(n, np.random.default_rng(seed))
    assert len(got) == min(n, len(GRID)) and len(set(got)) == len(got)
    assert all(0 <= i < len(GRID) for i in got)


def test_sample_is_uniform():
    """Every index is drawn about equally often (chi-square-like bound)."""
    rng = np.random.default_rng(0)
    counts = np.zeros(len(GRID))
    for _ in range(2000):
        for i in GRID.sample(3, rng):
            counts[i] += 1
    expected = 2000 * 3 / len(GRID)
    assert np.all(np.abs(counts - expected) < 0.25 * expected)


def test_neighbours_differ_in_one_adjacent_value():
    """GridSpace neighbours change exactly one parameter by one position."""
    for i in range(len(GRID)):
        a = GRID.get(i)
        for j in GRID.neighbours(i):
            b = GRID.get(j)
            diff = [p for p in GRID.params if a[p] != b[p]]
            assert len(diff) == 1
            vals = GRID.values(diff[0])
            assert abs(vals.index(a[diff[0]]) - vals.index(b[diff[0]])) == 1


def test_features_map_strings_to_positions():
    """Non-numeric knobs become their position in the value list."""
    i = GRID.index({"a": 3, "b": "z", "c": 1})
    assert GRID.features([i]).tolist() == [[3.0, 2.0, 1.0]]


@given(st.sets(st.integers(0, len(GRID) - 1)), st.integers(0, 30), st.integers(0, 1000))
def test_sample_excluding_avoids_excluded(exclude, n, seed):
    """sample_excluding never returns an excluded index and returns as many as possible."""
    got = sample_excluding(GRID, n, exclude, np.random.default_rng(seed))
    assert not set(got) & exclude and len(set(got)) == len(got)
    assert len(got) == min(n, len(GRID) - len(exclude))


def test_knobs_are_the_first_feature_columns_on_every_space():
    """knobs() is the knob part of features(): the whole of it on a grid, the part before
    the analytic features on the conv template's space."""
    from iobound.devices import get_device
    from iobound.networks import get_layer
    from search.conv_space import ConvSpace

    grid = GridSpace({"a": [1, 2, 3], "b": ["x", "y"]})
    assert np.array_equal(grid.knobs([5, 0]), grid.features([5, 0]))
    conv = ConvSpace(get_layer("alexnet.conv1"), get_device("v100"))
    idx = [0, len(conv) // 2, len(conv) - 1]
    assert conv.features(idx).shape[1] > len(conv.params)
    assert np.array_equal(conv.knobs(idx), conv.features(idx)[:, :len(conv.params)])
