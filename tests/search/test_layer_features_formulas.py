"""The cross-layer features (:mod:`search.transfer.layer_features`) against their definitions.

Reference: the module doc's definition of each column, recomputed row by row in plain
Python (``math.ceil``, ``math.log2``) from the layer's and device's own fields and from the
analytic features (:func:`kernels.analytic.analytic_features`), which the module takes as
its input. The layers are not square and have distinct channel counts, so that a column
computed on the wrong axis (width for height, ``c_in`` for ``c_out``) is seen; the tiles
need not divide the output, so the fills are below 1. Also :func:`measurement_layer` on
records that are not of our template or not of a known device.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.devices import get_device
from iobound.layer import ConvLayer
from iobound.units import WORD_BYTES
from kernels.analytic import FEATURE_NAMES, analytic_features
from search.transfer.layer_features import (CROSS_LAYER_FEATURES, cross_layer_features,
                                            measurement_layer)

#: Output 10 high, 14 wide, 12 -> 20 channels; and 9 high, 5 wide, 6 -> 7 channels.
LAYERS = (ConvLayer(n=1, c_in=12, h_in=10, w_in=14, c_out=20, k_h=3, k_w=3, padding=1),
          ConvLayer(n=1, c_in=6, h_in=9, w_in=5, c_out=7, k_h=3, k_w=3, padding=1))
DEVICES = ("v100", "t4")


def reference_row(layer, device, algorithm, knob_row, analytic_row) -> dict:
    """The module doc's definition of every column of one knob row."""
    a = dict(zip(FEATURE_NAMES, (float(v) for v in analytic_row)))
    if algorithm == "direct":
        x, y, z, alpha, tx, ty, tz = (int(v) for v in knob_row)
        e, depth = 1, alpha / layer.c_in
    else:
        e, x, y, z, tx, ty, tz = (int(v) for v in knob_row)
        depth = e
    waves = a["waves"]
    fill = lambda out, t: out / (math.ceil(out / t) * t)  # noqa: E731
    on_chip_words = device.shared_mem_per_sm_bytes / WORD_BYTES + device.registers_per_sm
    row = {n: a[n] for n in ("io_over_bound", "io_over_compulsory", "intensity", "occupancy",
                             "blocks_per_sm", "threads", "regs_per_thread", "ilp")}
    row.update(log2_waves=math.log2(waves), wave_fill=waves / math.ceil(waves),
               shared_frac=a["shared_bytes"] / device.shared_mem_per_sm_bytes,
               footprint_frac=a["footprint_words"] / on_chip_words,
               x_rel=x / layer.w_out, y_rel=y / layer.h_out, z_rel=z / layer.c_out,
               x_fill=fill(layer.w_out, x), y_fill=fill(layer.h_out, y), z_fill=fill(layer.c_out, z),
               depth_rel=depth, x_per_thread=x / (e * tx), y_per_thread=y / (e * ty),
               z_per_thread=z / tz)
    return row


def direct_rows(layer):
    """Knob rows of the direct kernel (x, y, z, alpha, tx, ty, tz) within the layer."""
    return st.tuples(st.integers(1, layer.w_out), st.integers(1, layer.h_out),
                     st.integers(1, layer.c_out), st.integers(1, layer.c_in),
                     st.sampled_from([1, 2]), st.sampled_from([1, 2]), st.sampled_from([1, 2]))


def winograd_rows(layer):
    """Knob rows of the Winograd kernel (e, x, y, z, tx, ty, tz): x, y multiples of e,
    below the output rounded up to e."""
    def tile(e, out):
        return st.integers(1, -(-out // e)).map(lambda k: k * e)
    return st.sampled_from([2, 3]).flatmap(lambda e: st.tuples(
        st.just(e), tile(e, layer.w_out), tile(e, layer.h_out),
        st.integers(1, layer.c_out), st.sampled_from([1, 2]), st.sampled_from([1, 2]),
        st.sampled_from([1, 3])))


@st.composite
def cases(draw):
    layer = draw(st.sampled_from(LAYERS))
    algorithm = draw(st.sampled_from(["direct", "winograd"]))
    rows = direct_rows(layer) if algorithm == "direct" else winograd_rows(layer)
    return layer, draw(st.sampled_from(DEVICES)), algorithm, draw(st.lists(rows, min_size=1,
                                                                           max_size=6))


@settings(max_examples=40, deadline=None)
@given(cases())
def test_every_column_is_its_definition_on_the_rows_own_layer_and_device(case):
    layer, name, algorithm, rows = case
    device = get_device(name)
    knobs = np.array(rows, dtype=np.int64)
    got = cross_layer_features(layer, device, algorithm, knobs)
    analytic = analytic_features(layer, device, algorithm, knobs)
    assert got.shape == (len(rows), len(CROSS_LAYER_FEATURES))
    for g, k, a in zip(got, knobs, analytic):
        if not np.all(np.isfinite(a)):
            continue
        want = reference_row(layer, device, algorithm, k, a)
        for col, n in enumerate(CROSS_LAYER_FEATURES):
            assert g[col] == pytest.approx(want[n], rel=1e-12), n
        for n in ("x_fill", "y_fill", "z_fill", "wave_fill"):
            assert 0 < want[n] <= 1


def test_a_tile_that_leaves_a_partial_last_tile_fills_less_than_one_per_axis():
    """14 wide, 10 high, 20 channels cut in tiles of 6, 4, 8: three tiles cover 18, 12, 24."""
    layer, device = LAYERS[0], get_device("v100")
    (row,) = cross_layer_features(layer, device, "direct", np.array([[6, 4, 8, 3, 1, 1, 1]]))
    got = dict(zip(CROSS_LAYER_FEATURES, row))
    assert (got["x_fill"], got["y_fill"], got["z_fill"]) == pytest.approx((14 / 18, 10 / 12, 20 / 24))
    assert (got["x_rel"], got["y_rel"], got["z_rel"]) == pytest.approx((6 / 14, 4 / 10, 8 / 20))
    assert got["depth_rel"] == pytest.approx(3 / 12)


def test_measurement_layer_reads_the_layer_the_device_and_the_family():
    layer = LAYERS[1]
    got = measurement_layer(layer.to_dict(), "t4", ("e", "x", "y", "z", "tx", "ty", "tz"))
    assert got is not None
    assert got[0] == layer and got[1] == get_device("t4") and got[2] == "winograd"
    assert measurement_layer(layer.to_dict(), "v100", ("x", "y", "z", "alpha"))[2] == "direct"


@pytest.mark.parametrize("problem, device", [
    ([4096, 4096], "v100"),           # a recorded problem size, not a layer
    ({"n": 1, "c_in": 8}, "v100"),    # a damaged layer
    (None, "v100"),
    (LAYERS[0].to_dict(), "Synthetic GPU"),  # not a device preset
    (LAYERS[0].to_dict(), None),
    (LAYERS[0].to_dict(), 3),
])
def test_measurement_layer_is_none_for_records_no_row_can_be_computed_for(problem, device):
    assert measurement_layer(problem, device, ("x", "y", "z", "alpha")) is None
