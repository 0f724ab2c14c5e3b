"""Tests of the abstract Space contract through GridSpace, and sample_excluding."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound.errors import InvalidInputError
from search.grid_space import GridSpace
from search.space import sample_excluding

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


@pytest.mark.parametrize("tune_params, names", [
    (None, "tune_params"), ([("a", [1])], "tune_params"), ({}, "tune_params"),
    ({"a": 3}, "'a'"), ({"a": "abc"}, "'a'"), ({"a": {1, 2}}, "'a'"), ({"a": []}, "'a'"),
    ({"a": [[1], [2]]}, "'a'"), ({1: [1, 2]}, "1"),
])
def test_bad_grid_is_named(tune_params, names):
    """A non-mapping, a non-list of values, an empty list, an unhashable value or a
    non-string name is an InvalidInputError naming it, not an AttributeError/TypeError."""
    with pytest.raises(InvalidInputError, match=names):
        GridSpace(tune_params)


@given(st.lists(st.integers(-3, 3) | st.sampled_from([True, 1.0, "x"]), min_size=2, max_size=6)
       .filter(lambda v: len(set(v)) < len(v)))
def test_repeated_grid_value_is_refused(values):
    """A value listed twice (1 and 1.0 and True are the same key) would repeat
    configurations: refused, naming the parameter and the value."""
    with pytest.raises(InvalidInputError, match="'a': value .* appears twice"):
        GridSpace({"a": values, "b": [0]})


@given(st.one_of(st.floats(), st.text(max_size=3), st.binary(max_size=3), st.none(),
                 st.booleans(), st.decimals(allow_nan=False)))
def test_non_integer_index_is_refused(i):
    """get/neighbours take integers only: '4', 2.5, 4.0, b'4', None, NaN, True are an
    InvalidInputError, not an int() of them."""
    for call in (GRID.get, GRID.neighbours):
        with pytest.raises(InvalidInputError, match="index must be an integer"):
            call(i)


def test_numpy_integer_index_is_an_integer():
    """numpy integers are integers; outside the range stays an IndexError."""
    assert GRID.get(np.int64(5)) == GRID.get(5)
    with pytest.raises(IndexError):
        GRID.get(np.int32(len(GRID)))
    with pytest.raises(InvalidInputError, match="n must be an integer"):
        GRID.sample(2.5, np.random.default_rng(0))
