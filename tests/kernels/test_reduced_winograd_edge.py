"""The reduced copy a tuned Winograd winner is checked on (kernels.verify.reduced_layer):
Winograd tiles x, y need not divide the output (the domain offers x = 16 for a 15-wide
output), so the layer's edge blocks are clipped. The copy must be no larger than the layer
and keep that clipped edge block, else the winner's check never runs the path every edge
block of the real layer runs (the stores and loads guarded by the clipped extent)."""

import numpy as np
from hypothesis import given, settings, strategies as st

from iobound.layer import ConvLayer
from iobound.networks import get_layer
from kernels.config import WinogradConfig, check_config, config_from_dict
from kernels.verify import emulator_check, reduced_layer
from search.conv_space import ConvSpace


def _last_block(n: int, tile: int) -> int:
    """Outputs of the axis's last block (the clipped one when ``tile`` does not divide)."""
    return (n - 1) % tile + 1


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([(13, 3, 1), (15, 5, 0), (27, 5, 2), (14, 3, 1), (7, 3, 1)]),
       st.sampled_from([8, 16, 24]), st.integers(0, 10**6))
def test_winograd_reduced_copy_is_no_larger_and_keeps_the_edge_block(hkp, c_out, seed):
    h_in, k, pad = hkp
    layer = ConvLayer(n=1, c_in=8, h_in=h_in, w_in=h_in, c_out=c_out, k_h=k, k_w=k, padding=pad)
    space = ConvSpace(layer, "v100", "winograd")
    cfg = config_from_dict(space.get(space.sample(1, np.random.default_rng(seed))[0]), "winograd")
    small = reduced_layer(layer, cfg)
    assert small.h_out <= layer.h_out and small.w_out <= layer.w_out and small.c_out <= layer.c_out
    assert _last_block(small.h_out, cfg.y) == _last_block(layer.h_out, cfg.y)
    assert _last_block(small.w_out, cfg.x) == _last_block(layer.w_out, cfg.x)
    assert small.h_out <= 2 * cfg.y and small.w_out <= 2 * cfg.x
    assert check_config(small, cfg) == []


def test_alexnet_conv5_winner_is_checked_on_its_13x13_edge():
    """`iobound tune --network alexnet --algorithm winograd` picks e=3 x=y=15 for the 13x13
    conv5: every block of the layer is clipped; the check ran on a 15x15 copy (no clip)."""
    layer = get_layer("alexnet.conv5")
    cfg = WinogradConfig(e=3, x=15, y=15, z=16, tx=5, ty=5, tz=16)
    small = reduced_layer(layer, cfg)
    assert (small.h_out, small.w_out) == (13, 13)
    chk = emulator_check(layer.replace(c_out=32), cfg)
    assert chk.checked and chk.matches_numpy and chk.traffic_matches
    assert "13x13" in chk.layer
