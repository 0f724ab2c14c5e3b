"""The direct-convolution DAG: structure, values, vertex count and the multi-step partition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from dataflow.dag_direct import direct_chain, direct_conv_dag, evaluate_dag
from dataflow.partition import check_multistep_partition
from iobound import ConvLayer
from iobound.vertex_counts import direct_vertex_count
from kernels.reference import conv2d_reference


@st.composite
def small_layers(draw):
    """Small direct layers with stride, padding, dilation and non-square shapes."""
    while True:
        try:
            return ConvLayer(
                n=draw(st.integers(1, 2)), c_in=draw(st.integers(1, 3)),
                h_in=draw(st.integers(1, 7)), w_in=draw(st.integers(1, 7)),
                c_out=draw(st.integers(1, 2)), k_h=draw(st.integers(1, 3)),
                k_w=draw(st.integers(1, 3)),
                stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
                padding=(draw(st.integers(0, 3)), draw(st.integers(0, 3))),
                dilation=(draw(st.integers(1, 2)), draw(st.integers(1, 2))))
        except ValueError:
            continue


@given(small_layers())
def test_vertex_count_matches_iobound(layer):
    """iobound's direct_vertex_count equals the builder's number of vertices."""
    assert direct_conv_dag(layer).number_of_nodes() == direct_vertex_count(layer)


@given(small_layers(), st.integers(0, 2**32 - 1))
def test_dag_evaluates_to_the_convolution(layer, seed):
    """Evaluating the DAG from random inputs and weights gives the numpy convolution."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((layer.n, layer.c_in, layer.h_in, layer.w_in))
    w = rng.standard_normal((layer.c_out, layer.c_in, layer.k_h, layer.k_w))
    g = direct_conv_dag(layer)
    src = {v: (x[v[1:]] if v[0] == "in" else w[v[1:]]) for v in g if g.in_degree(v) == 0}
    val = evaluate_dag(g, src)
    y = conv2d_reference(x, w, layer)
    for v, kind in g.nodes(data="kind"):
        if kind == "output":
            assert val[v] == pytest.approx(y[v[1:]], abs=1e-9)
    outs = {v[1:] for v, k in g.nodes(data="kind") if k == "output"}
    zero = [idx for idx in np.ndindex(y.shape) if idx not in outs]
    assert all(y[idx] == 0 for idx in zero)  # only all-padding windows have no vertex


@given(small_layers())
def test_structure_and_partition(layer):
    """Sources are inputs/weights at step 0, sums have in-degree 2, sinks are outputs, Def. 4.1 holds."""
    g = direct_conv_dag(layer)
    for v, d in g.nodes(data=True):
        if g.in_degree(v) == 0:
            assert d["kind"] in ("input", "weight") and d["step"] == 0
        else:
            assert g.in_degree(v) == 2
        if d["kind"] == "input":
            assert 0 <= d["h"] < layer.h_in and 0 <= d["w"] < layer.w_in
        assert (g.out_degree(v) == 0) == (d["kind"] == "output")
    assert check_multistep_partition(g).ok


def test_lemma_4_7_without_padding():
    """Without padding the count is the paper's (2 k_h k_w c_in - 1) outputs + inputs + weights."""
    layer = ConvLayer(n=1, c_in=3, h_in=6, w_in=5, c_out=2, k_h=3, k_w=2)
    lemma = (2 * 3 * 2 * 3 - 1) * layer.output_size + layer.input_size + layer.weight_size
    assert direct_conv_dag(layer).number_of_nodes() == lemma


def test_single_term_output_is_the_product():
    """With one term per output, the output vertex multiplies an input and a weight."""
    g = direct_conv_dag(ConvLayer(n=1, c_in=1, h_in=2, w_in=2, c_out=1, k_h=1, k_w=1))
    out = ("out", 0, 0, 1, 0)
    assert g.nodes[out]["op"] == "mul" and set(g.predecessors(out)) == {("in", 0, 0, 1, 0), ("w", 0, 0, 0, 0)}


def test_chain_order_covers_the_tree():
    """direct_chain lists exactly an output's products and sums, each after its predecessors."""
    layer = ConvLayer(n=1, c_in=2, h_in=3, w_in=3, c_out=1, k_h=2, k_w=2, padding=1)
    g = direct_conv_dag(layer)
    chain = [v for _, v in direct_chain(layer, 0, 0, 0, 0)]
    tree = {("out", 0, 0, 0, 0)} | {u for u in g if u in set(chain)}
    assert len(chain) == 2 * 2 * 1 * 1 - 1 and set(chain) <= set(g) and chain[-1] == ("out", 0, 0, 0, 0)
    assert tree == set(chain)
    seen = set()
    for v in chain:
        assert all(u in seen or g.in_degree(u) == 0 for u in g.predecessors(v))
        seen.add(v)


def test_too_large_layer_is_rejected_with_its_size():
    """A layer far beyond the vertex limit raises ValueError giving the size."""
    with pytest.raises(ValueError, match="vertices"):
        direct_conv_dag(ConvLayer(n=1, c_in=64, h_in=56, w_in=56, c_out=64, k_h=3, k_w=3))


@pytest.mark.parametrize("cap", [float("nan"), float("inf"), 2.5, "100", None, True, 0, 10**30])
def test_vertex_cap_must_be_a_limited_integer(cap):
    """max_vertices=nan switched the cap off (estimate > nan is False), so a large layer
    would build for ever; a non-integer or out-of-range cap is refused by name."""
    from dataflow.dag_winograd import winograd_conv_dag
    from iobound.errors import InvalidInputError

    layer = ConvLayer(1, 1, 4, 4, 1, 3, 3)
    with pytest.raises(InvalidInputError, match="max_vertices"):
        direct_conv_dag(layer, max_vertices=cap)
    with pytest.raises(InvalidInputError, match="max_vertices"):
        winograd_conv_dag(layer, 2, max_vertices=cap)
