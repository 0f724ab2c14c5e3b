"""The halo-free continuous optimum of a grouped layer (dataflow/continuous_optimum.py).

Reference: the model f = C (a P + K z) / (P z) + outputs with C the input channels one
output reads (``c_in / groups``), as :func:`dataflow.evaluate.evaluate_dataflow` counts a
grouped layer, not all ``c_in`` (which made the optimum's I/O ``groups`` times too large).
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from dataflow.continuous_optimum import dataflow_reuse, direct_continuous_optimum
from iobound.layer import ConvLayer


@given(st.sampled_from([2, 4, 8]), st.integers(1, 3), st.integers(1, 3),
       st.sampled_from([64, 256, 1024]))
@settings(max_examples=15, deadline=None)
def test_grouped_continuous_optimum_reads_one_groups_channels(groups, cg, og, s):
    """f = C (a P + K z)/(P z) with C the input channels an output reads (c_in / groups)."""
    layer = ConvLayer(1, groups * cg, 12, 12, groups * og, 3, 3, padding=1, groups=groups)
    opt = direct_continuous_optimum(layer, s)
    p, z = opt.x * opt.y, opt.z
    a = layer.k_h * layer.k_w / dataflow_reuse(layer)
    hwc = layer.output_size
    want = hwc * layer.c_in_per_group * (a * p + layer.k_h * layer.k_w * z) / (p * z) + hwc
    assert abs(opt.io - want) <= 1e-9 * want
