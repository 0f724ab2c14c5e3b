"""The paper's I/O estimates (direct Eq. 12/13, Winograd Eq. 14) against their derivations.

``direct_paper_io`` stages ``x' = mu x`` input columns and ``y' = mu y`` rows per channel
(no halo) and uses the fractional tile count; ``direct_paper_total`` is that estimate at
the paper's optimum ``x y z = S / N_p``, ``x y = R z`` with the paper's ``R = k_h k_w /
(mu_h mu_w)``. ``winograd_paper_total`` is the printed closed form, whose read term is
``1/sqrt(2)`` of Eq. 14 at the paper's own choices ``2 (e+r-1)^2 x y z / e^2 = S / N_p``
and ``x y = r^2 z`` (winograd module docstring). Splitting S over N_p blocks is the same
as a fast memory of S / N_p.
"""

import math

import pytest
from hypothesis import given, settings, strategies as st

from dataflow.direct import DirectTiling, direct_paper_io, direct_paper_total
from dataflow.winograd import WinogradTiling, winograd_paper_io, winograd_paper_total
from iobound.layer import ConvLayer


@settings(deadline=None, max_examples=40)
@given(st.integers(1, 2), st.integers(1, 6), st.integers(1, 8), st.integers(1, 4),
       st.integers(1, 3), st.integers(0, 2), st.data())
def test_direct_paper_io_stages_mu_x_by_mu_y_inputs(nb, ci, co, k, mu, pad, data):
    """Eq. 12: tiles (fractional) x c_in x (mu_h x mu_w y staged inputs + z k_h k_w weights) + outputs."""
    layer = ConvLayer(n=nb, c_in=ci, h_in=10, w_in=9, c_out=co, k_h=k, k_w=k,
                      stride=(mu, mu), padding=(pad, pad))
    t = DirectTiling(data.draw(st.integers(1, layer.w_out)), data.draw(st.integers(1, layer.h_out)),
                     data.draw(st.integers(1, co)))
    hwc = nb * layer.h_out * layer.w_out * co
    want = hwc / (t.x * t.y * t.z) * ci * ((mu * t.x) * (mu * t.y) + t.z * k * k) + hwc
    assert direct_paper_io(layer, t) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("k, mu, x, y, z, s", [
    (3, 2, 3, 6, 8, 144),    # paper R = 9/4 (reuse_max is 4): x y = 18 = R z, x y z = 144
    (3, 1, 6, 6, 4, 144),    # R = 9
    (4, 2, 4, 4, 4, 64),     # R = 4
])
@pytest.mark.parametrize("processors", [1, 2, 3])
def test_direct_paper_total_is_eq12_at_the_paper_optimum(k, mu, x, y, z, s, processors):
    """Eq. 13 = Eq. 12 at a tiling with x y z = S / N_p and x y = (k_h k_w / mu^2) z."""
    layer = ConvLayer(n=2, c_in=3, h_in=24, w_in=24, c_out=8, k_h=k, k_w=k, stride=(mu, mu))
    assert x * y * mu * mu == k * k * z and x * y * z == s
    total = direct_paper_total(layer, s * processors, processors)
    assert total == pytest.approx(direct_paper_io(layer, DirectTiling(x, y, z)), rel=1e-12)


@pytest.mark.parametrize("e, x, y, z", [(2, 6, 6, 4), (2, 6, 12, 8), (3, 6, 6, 4)])
@pytest.mark.parametrize("processors", [1, 2, 4])
def test_winograd_paper_total_is_eq14_over_sqrt2_at_the_paper_choices(e, x, y, z, processors):
    """Read term of the printed total = read term of Eq. 14 / sqrt(2) at 2 n^2 x y z / e^2 = S / N_p
    and x y = r^2 z (r = 3); the output writes are the same."""
    r, n = 3, e + 2
    assert x * y == r * r * z
    s_block = 2 * n * n * x * y * z // (e * e)
    assert 2 * n * n * x * y * z == s_block * e * e
    layer = ConvLayer(n=2, c_in=5, h_in=16, w_in=16, c_out=8, k_h=3, k_w=3, padding=(1, 1))
    hwc = layer.n * layer.h_out * layer.w_out * layer.c_out
    io = winograd_paper_io(layer, WinogradTiling(e, x, y, z))
    total = winograd_paper_total(layer, e, s_block * processors, processors)
    assert total - hwc == pytest.approx((io - hwc) / math.sqrt(2), rel=1e-12)
