"""The simplified Winograd counts (winograd_counts) keep exactly the tiles whose input window
holds an in-bounds element, also when the padding is as wide as the input tile.

Brute force per axis: tile t reads the window [t e - pad, t e - pad + n) with n = e + r - 1.
"""

from hypothesis import given, settings, strategies as st

from iobound.layer import ConvLayer
from iobound.winograd_vertex_counts import winograd_counts


def _tiles(size, out, e, n, pad):
    return [t for t in range(-(-out // e)) if any(0 <= t * e - pad + k < size for k in range(n))]


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 6), st.integers(1, 6),
       st.integers(1, 3), st.integers(1, 3), st.integers(0, 6), st.integers(0, 6))
def test_tiles_and_outputs_are_those_of_windows_touching_the_input(nb, ci, co, h, w, r, e, ph, pw):
    """tiles, transformed inputs and products follow the brute-force tile sets of both axes."""
    layer = ConvLayer(n=nb, c_in=ci, h_in=h + r - 1, w_in=w + r - 1, c_out=co, k_h=r, k_w=r,
                      padding=(ph, pw))
    n = e + r - 1
    th = _tiles(layer.h_in, layer.h_out, e, n, ph)
    tw = _tiles(layer.w_in, layer.w_out, e, n, pw)
    c = winograd_counts(layer, e)
    assert c.tiles == nb * len(th) * len(tw)
    assert c.transformed_inputs == c.tiles * ci * n * n
    assert c.products == c.tiles * co * ci * n * n
    outs_h = sum(min(t * e + e, layer.h_out) - t * e for t in th)
    outs_w = sum(min(t * e + e, layer.w_out) - t * e for t in tw)
    assert c.outputs == nb * co * outs_h * outs_w
