"""Tests of the reduced-copy emulator check (kernels.verify.reduced_layer / emulator_check)."""

import numpy as np
from hypothesis import given, strategies as st

from iobound.layer import ConvLayer
from kernels.config import DirectConfig, check_config, config_from_dict
from kernels.verify import emulator_check, reduced_layer
from search.conv_space import ConvSpace

SMALL = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=16, k_h=3, k_w=3, padding=1)


@given(st.integers(1, 16), st.sampled_from([7, 8, 12, 14]), st.sampled_from([8, 16, 32]),
       st.sampled_from([(1, 1, 0), (3, 1, 1), (3, 2, 1), (5, 1, 2)]), st.integers(0, 10**6))
def test_reduced_layer_still_fits_the_config(c_in, hw, c_out, ksp, seed):
    """The reduced copy keeps kernel/stride/padding and the config still passes check_config."""
    k, stride, pad = ksp
    layer = ConvLayer(n=1, c_in=c_in, h_in=hw, w_in=hw, c_out=c_out, k_h=k, k_w=k,
                      stride=stride, padding=pad)
    space = ConvSpace(layer, "v100", "direct")
    cfg = config_from_dict(space.get(space.sample(1, np.random.default_rng(seed))[0]), "direct")
    small = reduced_layer(layer, cfg)
    assert (small.k_h, small.stride, small.padding) == (layer.k_h, layer.stride, layer.padding)
    assert small.h_out <= layer.h_out and small.c_out <= layer.c_out and small.c_in <= layer.c_in
    assert check_config(small, cfg) == []


def test_emulator_check_passes_for_a_good_config():
    """A valid config's reduced copy matches numpy and the traffic formula."""
    chk = emulator_check(SMALL, DirectConfig(x=4, y=4, z=8, alpha=4, tx=4, ty=4, tz=2))
    assert chk.checked and chk.matches_numpy and chk.traffic_matches
    assert chk.traffic_words == chk.formula_words > 0
    assert list(chk.to_dict()) == ["checked", "layer", "matches_numpy", "max_rel_err",
                                   "traffic_words", "formula_words", "traffic_matches"]


def test_config_that_does_not_fit_is_reported_not_raised():
    """A config that cannot run on the reduced copy gives checked=False with the reason."""
    chk = emulator_check(SMALL, DirectConfig(x=4, y=4, z=8, alpha=4, tx=3, ty=4, tz=2))
    assert not chk.checked and "tx" in chk.reason and chk.matches_numpy is None
    assert chk.to_dict() == {"checked": False, "reason": chk.reason, "layer": chk.layer}
