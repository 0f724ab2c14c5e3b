"""Selector features (search.selection.features) against the layer and device fields.

Each feature is recomputed here from the raw shape (output size from the convolution
formula, MACs and tensor sizes by their definitions), from the device preset's
fields, and the Winograd tile waste from ``ceil(h/e) e ceil(w/e) e / (h w)`` as the
module doc defines it.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from iobound.devices import DEVICES, get_device
from iobound.layer import ConvLayer
from search.selection.features import FEATURE_NAMES, feature_matrix, layer_features


def _reference(n, c_in, h_in, w_in, c_out, k, stride, pad, dev):
    h_out = (h_in + 2 * pad - k) // stride + 1
    w_out = (w_in + 2 * pad - k) // stride + 1
    macs = n * c_out * h_out * w_out * c_in * k * k
    sizes = (n * c_in * h_in * w_in, c_out * c_in * k * k, n * c_out * h_out * w_out)
    ref = {"c_in": c_in, "c_out": c_out, "h_out": h_out, "w_out": w_out, "k": k,
           "padding": pad, "macs": macs, "input_size": sizes[0], "weight_size": sizes[1],
           "output_size": sizes[2], "macs_per_word": macs / sum(sizes),
           "outputs_per_sm": sizes[2] / dev.sm_count, "sm_count": dev.sm_count,
           "dram_gbs": dev.dram_bandwidth_gbs, "peak_gflops": dev.fp32_peak_gflops,
           "flop_per_byte": dev.fp32_peak_gflops / dev.dram_bandwidth_gbs}
    for e in (2, 3, 4):
        ref[f"tile_waste_e{e}"] = (math.ceil(h_out / e) * e * math.ceil(w_out / e) * e
                                   / (h_out * w_out))
    return ref


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 2), st.integers(1, 40), st.integers(3, 30), st.integers(3, 30),
       st.integers(1, 40), st.integers(1, 3), st.integers(1, 2), st.integers(0, 1),
       st.sampled_from(sorted(DEVICES)))
def test_features_match_their_definitions(n, c_in, h_in, w_in, c_out, k, stride, pad, device):
    """Every named feature equals its definition, for a preset given by name or object."""
    layer = ConvLayer(n=n, c_in=c_in, h_in=h_in, w_in=w_in, c_out=c_out, k_h=k, k_w=k,
                      stride=stride, padding=pad)
    dev = get_device(device)
    ref = _reference(n, c_in, h_in, w_in, c_out, k, stride, pad, dev)
    assert set(ref) == set(FEATURE_NAMES)
    for got in (layer_features(layer, device), layer_features(layer, dev)):
        assert dict(zip(FEATURE_NAMES, got.tolist())) == pytest.approx(ref, rel=1e-12)


def test_tile_waste_of_the_module_doc_example():
    """13 x 13 outputs in 4 x 4 tiles compute 16 x 16: a waste of 256 / 169 = 1.51."""
    layer = ConvLayer(n=1, c_in=4, h_in=13, w_in=13, c_out=4, k_h=3, k_w=3, padding=1)
    row = dict(zip(FEATURE_NAMES, layer_features(layer, "v100")))
    assert row["tile_waste_e4"] == pytest.approx(256 / 169)
    assert row["tile_waste_e2"] == pytest.approx(14 * 14 / 169)
    assert row["tile_waste_e3"] == pytest.approx(15 * 15 / 169)


def test_feature_matrix_stacks_rows_in_order():
    """One row per pair, in order; no pairs gives an empty (0, features) matrix."""
    a = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    b = a.replace(c_in=16)
    m = feature_matrix([(a, "v100"), (b, "t4")])
    assert m.tolist() == [layer_features(a, "v100").tolist(), layer_features(b, "t4").tolist()]
    assert feature_matrix([]).shape == (0, len(FEATURE_NAMES))
