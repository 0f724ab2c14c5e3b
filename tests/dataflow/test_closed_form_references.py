"""Closed forms of the dataflow package against brute-force ground truth.

- ``dataflow_reuse``: the halo-free model's staged inputs per output position,
  ``a = k_h k_w / R_df``, is the density of the inputs that ``direct_io`` counts for a long
  run of outputs (one tile, one channel, no padding): the exact count minus ``a M`` stays
  within the window extents.
- ``channel_group_spans``: the groups a tile of ``z`` output channels touches, summed over
  the tiles, against enumeration.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from dataflow.continuous_optimum import dataflow_reuse
from dataflow.direct import DirectTiling, direct_io
from dataflow.io_volume import channel_group_spans
from iobound.layer import ConvLayer


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 5), mu=st.integers(1, 5), d=st.integers(1, 4), m=st.integers(40, 80))
def test_dataflow_reuse_is_the_input_density_of_direct_io(k, mu, d, m):
    ext = (k - 1) * d + 1
    h_in = (m - 1) * mu + ext
    layer = ConvLayer(1, 1, h_in, 1, 1, k, 1, stride=(mu, 1), dilation=(d, 1))
    assert layer.h_out == m and layer.w_out == 1
    exact = direct_io(layer, DirectTiling(1, m, 1)).input_loads   # inputs one block reads
    brute = len({o * mu + j * d for o in range(m) for j in range(k)})
    assert exact == brute
    a = k / dataflow_reuse(layer)                                  # rho_h (rho_w = 1)
    assert abs(exact - a * m) <= ext + mu


@settings(max_examples=80, deadline=None)
@given(groups=st.integers(1, 6), per_group=st.integers(1, 6), data=st.data())
def test_channel_group_spans_enumerated(groups, per_group, data):
    c_out = groups * per_group
    z = data.draw(st.integers(1, c_out))
    brute = sum(len({c // per_group for c in range(s, min(s + z, c_out))})
                for s in range(0, c_out, z))
    assert channel_group_spans(c_out, per_group, z) == brute
