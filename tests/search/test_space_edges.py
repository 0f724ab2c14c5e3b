"""The Space defaults of search/space.py against their documented contract: knob values that
are numpy numbers are numbers in ``features`` (not positions), and the default ``values``
(a scan of the space) is sorted when the values compare and a list of them when not."""

from __future__ import annotations

import numpy as np

from search.grid_space import GridSpace
from search.space import Space, knob_value


def test_numpy_numbers_are_numbers_in_the_features():
    grid = GridSpace({"a": list(np.arange(10, 40, 10)), "b": [np.float32(0.5), np.float32(2.0)]})
    assert grid.features(range(len(grid))).tolist() == [
        [10.0, 0.5], [10.0, 2.0], [20.0, 0.5], [20.0, 2.0], [30.0, 0.5], [30.0, 2.0]]
    assert knob_value(np.int64(7), [np.int64(7)]) == 7.0


def test_the_default_values_scan_is_sorted_or_a_list_of_what_does_not_compare():
    grid = GridSpace({"a": [30, 1, 200, 7], "b": ["x", 2]})
    assert Space.values(grid, "a") == [1, 7, 30, 200]
    assert sorted(Space.values(grid, "b"), key=str) == [2, "x"]
