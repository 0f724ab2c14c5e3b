"""The analytic features stay exact when per-tile quantities are remembered across calls.

The explorer asks for the features of the same tiles round after round (and a network
run for several layers whose tiles coincide), so the per-tile quantities (io words,
flops, shared bytes, register words, the lower bound) are remembered. These tests check
the remembered values against the dataflow and kernel-config functions computed afresh,
for calls that interleave layers and algorithms sharing tile values, and that a row's
features never depend on what else was asked before or with it.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import given, settings, strategies as st

from dataflow.direct import DirectTiling, direct_io
from dataflow.winograd import WinogradTiling, winograd_io
from iobound.devices import get_device
from iobound.layer import ConvLayer
from iobound.report import best_lower_bound
from kernels.analytic import FEATURE_NAMES, analytic_features
from kernels.config import config_from_dict, onchip_words, shared_memory_bytes
from kernels.kernel_flops import tile_flops
from search.conv_space import ConvSpace

V100, A100 = get_device("v100"), get_device("a100")
# same tile values are valid on all of these: the memo must key on the layer
DIRECT = (ConvLayer(n=1, c_in=8, h_in=12, w_in=12, c_out=16, k_h=3, k_w=3, padding=1),
          ConvLayer(n=1, c_in=8, h_in=12, w_in=12, c_out=16, k_h=1, k_w=1),
          ConvLayer(n=2, c_in=16, h_in=12, w_in=12, c_out=16, k_h=3, k_w=3, padding=1))
WINO = (ConvLayer(n=1, c_in=4, h_in=12, w_in=12, c_out=8, k_h=3, k_w=3, padding=1),
        ConvLayer(n=1, c_in=8, h_in=12, w_in=12, c_out=8, k_h=3, k_w=3, padding=1))
COL = {n: c for c, n in enumerate(FEATURE_NAMES)}


def _reference(layer, algorithm, row):
    """io words, flops, shared bytes, on-chip words and io over the bound of one row, from
    the dataflow and kernel-config functions, computed afresh."""
    row = [int(v) for v in row]
    if algorithm == "direct":
        io = direct_io(layer, DirectTiling(*row[:4])).total
        names, e = ("x", "y", "z", "alpha"), None
    else:
        io = winograd_io(layer, WinogradTiling(*row[:4])).total
        names, e = ("e", "x", "y", "z"), row[0]
    cfg = config_from_dict(dict(zip(names + ("tx", "ty", "tz"), row)), algorithm)
    words = onchip_words(layer, cfg)  # a Winograd block's depend on its threads
    return {"io_words": float(io), "flops": float(tile_flops(layer, algorithm, tuple(row[:4]))),
            "shared_bytes": float(shared_memory_bytes(layer, cfg)),
            "footprint_words": float(words),
            "io_over_bound": io / float(best_lower_bound(layer, words, algorithm, e))}


@functools.lru_cache(maxsize=None)
def _space(layer, algorithm):
    return ConvSpace(layer, V100, algorithm)


def _rows(layer, algorithm, n, seed):
    space = _space(layer, algorithm)
    return space.knobs(space.sample(min(n, len(space)), np.random.default_rng(seed)))


def _check(layer, algorithm, device, knobs):
    f = analytic_features(layer, device, algorithm, knobs)
    for row, got in zip(knobs, f):
        for name, want in _reference(layer, algorithm, row).items():
            assert got[COL[name]] == want, (layer.short(), algorithm, row.tolist(), name)


@settings(max_examples=8, deadline=None)
@given(order=st.permutations(range(5)), seed=st.integers(0, 2**16), dev=st.sampled_from([V100, A100]))
def test_interleaved_layers_match_reference(order, seed, dev):
    """Calls on layers sharing tile values, in any order and on either device, each give
    their own layer's values (no tile's value leaks from one layer to another)."""
    jobs = [(layer, "direct") for layer in DIRECT] + [(layer, "winograd") for layer in WINO]
    for k in order:
        layer, algorithm = jobs[k]
        _check(layer, algorithm, dev, _rows(layer, algorithm, 12, seed + k))


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), split=st.integers(1, 30), algorithm=st.sampled_from(["direct", "winograd"]))
def test_rows_do_not_depend_on_their_batch(seed, split, algorithm):
    """A row's features are the same asked alone, in a batch, or after other batches."""
    layer = DIRECT[0] if algorithm == "direct" else WINO[0]
    knobs = _rows(layer, algorithm, 40, seed)
    whole = analytic_features(layer, V100, algorithm, knobs)
    parts = np.vstack([analytic_features(layer, V100, algorithm, knobs[split:]),
                       analytic_features(layer, V100, algorithm, knobs[:split])])
    parts = np.vstack([parts[len(knobs) - split:], parts[:len(knobs) - split]])
    single = np.vstack([analytic_features(layer, V100, algorithm, knobs[i:i + 1])
                        for i in range(len(knobs))])
    np.testing.assert_array_equal(whole, parts)
    np.testing.assert_array_equal(whole, single)
