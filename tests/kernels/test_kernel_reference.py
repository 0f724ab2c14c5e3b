"""NumPy reference convolution and the fp32 tolerances."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from kernels.reference import (
    UNIT_ROUNDOFF, compare, conv2d_naive, conv2d_reference, direct_tolerance, random_problem,
    winograd_tolerance,
)


@st.composite
def tiny_layers(draw):
    k_h, k_w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dil = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    ext_h, ext_w = (k_h - 1) * dil[0] + 1, (k_w - 1) * dil[1] + 1
    return ConvLayer(n=draw(st.integers(1, 2)), c_in=draw(st.integers(1, 3)),
                     h_in=draw(st.integers(max(1, ext_h - 2 * pad[0]), 7)),
                     w_in=draw(st.integers(max(1, ext_w - 2 * pad[1]), 7)),
                     c_out=draw(st.integers(1, 3)), k_h=k_h, k_w=k_w,
                     stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
                     padding=pad, dilation=dil)


@given(tiny_layers(), st.integers(0, 2**32 - 1))
def test_reference_equals_naive_loops(layer, seed):
    """The einsum reference equals the 7-loop definition (stride, padding, dilation)."""
    x, w = random_problem(layer, np.random.default_rng(seed))
    np.testing.assert_allclose(conv2d_reference(x, w, layer), conv2d_naive(x, w, layer),
                               rtol=1e-12, atol=1e-12)


def test_reference_rejects_wrong_shapes():
    """Arrays must have the layer's shapes."""
    layer = ConvLayer(1, 2, 4, 4, 2, 3, 3)
    with pytest.raises(ValueError, match="weight shape"):
        conv2d_reference(np.zeros((1, 2, 4, 4)), np.zeros((2, 2, 2, 2)), layer)


def test_fp32_direct_computation_is_within_direct_tolerance():
    """A plain fp32 computation of the convolution stays within the direct bound."""
    layer = ConvLayer(n=1, c_in=16, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)
    x, w = random_problem(layer, np.random.default_rng(1))
    y32 = np.einsum("ncpqij,kcij->nkpq",
                    np.lib.stride_tricks.sliding_window_view(
                        np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), axis=(2, 3)),
                    w).astype(np.float32)
    cmp = compare(y32, conv2d_reference(x, w, layer), direct_tolerance(x, w, layer))
    assert cmp.ok and cmp.worst_ratio < 1


def test_tolerance_is_tight_enough_to_catch_a_one_ulp_scale_error():
    """Scaling the result by (1 + 64 * m * u) is caught: the bound is not arbitrarily loose."""
    layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3)
    x, w = random_problem(layer, np.random.default_rng(2))
    ref = conv2d_reference(x, w, layer)
    tol = direct_tolerance(x, w, layer)
    m = 2 * 9
    assert not compare(ref * (1 + 64 * m * UNIT_ROUNDOFF) + tol, ref, tol).ok


@pytest.mark.parametrize("e", [2, 3, 4])
def test_winograd_tolerance_grows_with_e_and_covers_direct(e):
    """The Winograd bound is positive, grows with e (larger transform entries), and exceeds the direct one."""
    layer = ConvLayer(n=1, c_in=3, h_in=10, w_in=10, c_out=2, k_h=3, k_w=3, padding=1)
    x, w = random_problem(layer, np.random.default_rng(3))
    tol = winograd_tolerance(x, w, layer, e)
    assert tol.shape == (1, 2, 10, 10) and (tol > 0).all()
    assert (tol >= direct_tolerance(x, w, layer)).all()
    if e > 2:
        assert tol.mean() > winograd_tolerance(x, w, layer, e - 1).mean()


def test_compare_flags_nan_outputs():
    """An output never written (NaN) fails the comparison."""
    cmp = compare(np.array([1.0, np.nan]), np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    assert not cmp.ok and cmp.nan_count == 1


LAYER8 = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)


@pytest.mark.parametrize("call, said", [
    (lambda: winograd_tolerance(np.ones((1, 4, 8, 8)), np.ones((8, 8, 3, 3)), LAYER8, 2),
     r"input shape must be \(1, 8, 8, 8\)"),
    (lambda: direct_tolerance(np.ones((1, 8, 8, 8)), np.ones((8, 8, 3, 3)), "alexnet.conv1"),
     "layer must be a ConvLayer, got str"),
    (lambda: random_problem("alexnet.conv1", np.random.default_rng(0)), "layer must be a ConvLayer"),
    (lambda: compare(np.ones(2), np.ones(2), "abc"), "compare needs arrays of real numbers"),
])
def test_the_reference_checks_its_operands(call, said):
    """One InvalidInputError naming what is wrong, not numpy's broadcast error or an
    AttributeError of a str."""
    with pytest.raises(InvalidInputError, match=said):
        call()


def test_expected_io_takes_a_config_only():
    from kernels.verify import expected_io
    with pytest.raises(InvalidInputError, match="config must be a DirectConfig or WinogradConfig"):
        expected_io(LAYER8, "x=4,y=4,z=4,alpha=2,tx=2,ty=2,tz=2")
