"""``Space.checked_indices`` (search/space.py), used by ``ConvSpace.knobs``/``features``
and ``ReplaySpace.features``: integers are indices and an out-of-range one is an
IndexError, as its docstring says and as ``checked_index`` does for one index.

An object array of Python ints (``np.array([0, 1], dtype=object)``, what pandas and
``np.array`` of mixed big ints give) holds integers; ``knobs`` read it before the check
was added and must still. An integer past int64 (``2**64``) is outside the range: an
IndexError, not "indices must be integers".
"""

from __future__ import annotations

import numpy as np
import pytest

from iobound.devices import get_device
from iobound.layer_spec import parse_layer_spec
from search.grid_space import GridSpace
from search.conv_space import ConvSpace


def _space():
    return ConvSpace(parse_layer_spec("cin=4,hin=6,cout=4,kh=3"), get_device("v100"))


def test_an_object_array_of_ints_reads_the_same_rows():
    space = _space()
    want = np.array([[space.get(i)[p] for p in space.params] for i in (0, 5, 3)])
    got = space.knobs(np.array([0, 5, 3], dtype=object))
    assert np.array_equal(got, want)
    assert np.array_equal(space.features(np.array([0, 5, 3], dtype=object)),
                          space.features([0, 5, 3]))


@pytest.mark.parametrize("big", [2 ** 64, -(2 ** 63) - 1])
def test_an_integer_past_int64_is_out_of_range(big):
    space = GridSpace({"a": [1, 2]})
    with pytest.raises(IndexError):
        space.checked_index(big)
    with pytest.raises(IndexError):
        space.checked_indices([big])
    with pytest.raises(IndexError):
        space.checked_indices([0, big])
