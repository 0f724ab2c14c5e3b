"""Per-class reuse (iobound.reuse_classes) and the reuse count of the direct DAG, by brute force.

The chain X-partition bound charges each product ``1 / sqrt(T_c)``, ``T_c`` the number of
taps reading the residue class of its input. These tests rebuild ``T`` from the sliding
window itself (the taps that read one input position of a long axis), ``W`` by summing
over the enumerated product vertices, and ``max_input_reuse`` by counting the products
that read each input vertex, and compare with the factorised formulas.
"""

import math
from collections import Counter

from hypothesis import given, settings, strategies as st

from iobound.reuse_classes import axis_tap_classes, effective_reuse, weighted_products
from iobound.vertex_counts import direct_counts, iter_direct_products
from layer_strategies import conv_layers


def _taps_per_class_brute(k: int, stride: int, dilation: int) -> tuple[int, ...]:
    """Per tap, the most taps that read one input position tap i reads (a long 1-D axis)."""
    out = 4 * (k * dilation + stride) + 8
    readers: dict[int, set] = {}
    for o in range(out):
        for i in range(k):
            readers.setdefault(o * stride + i * dilation, set()).add(i)
    return tuple(max(len(r) for r in readers.values() if i in r) for i in range(k))


small_layers = conv_layers(c_max=2, out_max=5, pad_h_max=2, pad_w_max=2, dilation_max=3)


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 7), st.integers(1, 4), st.integers(1, 3))
def test_tap_classes_are_the_taps_sharing_an_input(k, stride, dilation):
    """T of a tap = most taps that read one input it reads, on a long axis (dilation included)."""
    assert axis_tap_classes(k, stride, dilation) == _taps_per_class_brute(k, stride, dilation)


@settings(deadline=None, max_examples=40)
@given(small_layers)
def test_weighted_products_is_the_sum_over_enumerated_products(layer):
    """W = sum over the real product vertices of 1 / sqrt(T_h(i) T_w(j)); W >= MACs / sqrt(R_max)."""
    th = _taps_per_class_brute(layer.k_h, layer.stride[0], layer.dilation[0])
    tw = _taps_per_class_brute(layer.k_w, layer.stride[1], layer.dilation[1])
    w = sum(1 / math.sqrt(th[i] * tw[j]) for _, (_, _, i, j), _ in iter_direct_products(layer))
    assert math.isclose(weighted_products(layer), w, rel_tol=1e-12, abs_tol=1e-12)
    macs = direct_counts(layer).products
    assert weighted_products(layer) >= macs / math.sqrt(layer.reuse_max) * (1 - 1e-12)


@settings(deadline=None, max_examples=40)
@given(small_layers)
def test_effective_reuse_is_macs_over_w_squared(layer):
    """R_eff = (MACs / W)^2 lies in [1, R_max]; it is R_max for stride 1 (any padding, dilation)."""
    macs = direct_counts(layer).products
    r_eff = effective_reuse(layer)
    if macs == 0:
        return
    assert math.isclose(r_eff, (macs / weighted_products(layer)) ** 2, rel_tol=1e-12)
    assert 1 - 1e-9 <= r_eff <= layer.reuse_max * (1 + 1e-9)
    if layer.stride == (1, 1):
        assert math.isclose(r_eff, layer.reuse_max, rel_tol=1e-9)


@settings(deadline=None, max_examples=40)
@given(small_layers)
def test_max_input_reuse_counts_the_products_of_one_input(layer):
    """max_input_reuse = most products reading one input vertex, per output channel of a group."""
    per_input = Counter(x for x, _, _ in iter_direct_products(layer))
    most = max(per_input.values(), default=0)
    assert direct_counts(layer).max_input_reuse * layer.c_out_per_group == most
