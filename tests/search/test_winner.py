"""Tests of the winner report helpers (reduced layer, bound info)."""

import numpy as np
from hypothesis import given, settings, strategies as st

from iobound.layer import ConvLayer
from kernels.config import check_config, config_from_dict
from search.conv_space import ConvSpace
from search.winner import bound_info, emulator_check, reduced_layer


@settings(max_examples=15)
@given(st.integers(1, 16), st.sampled_from([7, 8, 12, 14]), st.sampled_from([8, 16, 32]),
       st.sampled_from([(1, 1, 0), (3, 1, 1), (3, 2, 1), (5, 1, 2)]), st.integers(0, 10**6))
def test_reduced_layer_still_fits_the_config(c_in, hw, c_out, ksp, seed):
    """The reduced copy keeps kernel/stride/padding and the config still passes check_config."""
    k, stride, pad = ksp
    layer = ConvLayer(n=1, c_in=c_in, h_in=hw, w_in=hw, c_out=c_out, k_h=k, k_w=k,
                      stride=stride, padding=pad)
    space = ConvSpace(layer, "v100", "direct")
    cfg = space.get(space.sample(1, np.random.default_rng(seed))[0])
    small = reduced_layer(layer, cfg, "direct")
    assert (small.k_h, small.stride, small.padding) == (layer.k_h, layer.stride, layer.padding)
    assert small.h_out <= layer.h_out and small.c_out <= layer.c_out and small.c_in <= layer.c_in
    assert check_config(small, config_from_dict(cfg, "direct")) == []


def test_bound_below_dataflow_io():
    """The reported lower bound never exceeds the dataflow's exact I/O."""
    layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=16, k_h=3, k_w=3, padding=1)
    info = bound_info(layer, dict(x=4, y=4, z=8, alpha=4, tx=4, ty=4, tz=2), "direct")
    assert 0 < info["lower_bound_words"] <= info["dataflow_io_words"]


def test_emulator_check_passes_for_a_good_config():
    """A valid config's reduced copy matches numpy and the traffic formula."""
    layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=16, k_h=3, k_w=3, padding=1)
    chk = emulator_check(layer, dict(x=4, y=4, z=8, alpha=4, tx=4, ty=4, tz=2), "direct")
    assert chk["checked"] and chk["matches_numpy"] and chk["traffic_matches"]
