"""winograd_conv_dag takes any integral e (numpy integers included), like every other e consumer.

iobound.limits.check_int, winograd_transforms, winograd_vertex_count and WinogradTiling all
accept ``numpy.int64`` (what ``np.arange`` of tile sizes gives); the builder must build the
same DAG for it, and still refuse bools and non-integers.
"""

from __future__ import annotations

import numpy as np
import pytest

from dataflow.dag_winograd import winograd_conv_dag
from dataflow.schedules import tiled_schedule
from dataflow.winograd import WinogradTiling
from iobound import ConvLayer
from iobound.errors import InvalidInputError
from iobound.winograd_vertex_counts import winograd_vertex_count

LAYER = ConvLayer(n=1, c_in=1, h_in=4, w_in=4, c_out=1, k_h=3, k_w=3)


@pytest.mark.parametrize("e", [np.int64(2), np.int32(2), np.uint8(2)])
def test_numpy_integer_e_builds_the_same_dag(e):
    g = winograd_conv_dag(LAYER, e)
    assert g.number_of_nodes() == winograd_vertex_count(LAYER, e) == winograd_conv_dag(LAYER, 2).number_of_nodes()
    assert type(g.graph["e"]) is int and g.graph["e"] == 2
    tiled_schedule(g, LAYER, WinogradTiling(e=2, x=2, y=2, z=1))   # the DAG's e matches the tiling's


@pytest.mark.parametrize("e", [True, 2.0, "2", 0, -1])
def test_non_integer_e_is_refused(e):
    with pytest.raises(InvalidInputError, match=r"^Winograd e( must be an integer|=-?\d+ is below)"):
        winograd_conv_dag(LAYER, e)
