"""The Winograd DAG: values, vertex count against iobound, transforms and the partition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from dataflow.dag_direct import evaluate_dag
from dataflow.dag_winograd import winograd_conv_dag
from dataflow.partition import check_multistep_partition, step_parts
from iobound import ConvLayer
from iobound.winograd_vertex_counts import winograd_vertex_count
from kernels.reference import conv2d_reference


@st.composite
def winograd_cases(draw):
    """(layer, e): stride 1, square kernel, any padding, non-square inputs."""
    while True:
        r = draw(st.integers(1, 3))
        try:
            layer = ConvLayer(
                n=draw(st.integers(1, 2)), c_in=draw(st.integers(1, 3)),
                h_in=draw(st.integers(1, 7)), w_in=draw(st.integers(1, 7)),
                c_out=draw(st.integers(1, 2)), k_h=r, k_w=r,
                padding=(draw(st.integers(0, 3)), draw(st.integers(0, 3))))
        except ValueError:
            continue
        return layer, draw(st.integers(1, 4))


@given(winograd_cases())
def test_vertex_count_matches_iobound(case):
    """iobound's winograd_vertex_count equals the builder's number of vertices."""
    layer, e = case
    assert winograd_conv_dag(layer, e).number_of_nodes() == winograd_vertex_count(layer, e)


@given(winograd_cases(), st.integers(0, 2**32 - 1))
def test_dag_evaluates_to_the_convolution(case, seed):
    """Evaluating the DAG (transform coefficients on the edges) gives the numpy convolution."""
    layer, e = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((layer.n, layer.c_in, layer.h_in, layer.w_in))
    w = rng.standard_normal((layer.c_out, layer.c_in, layer.k_h, layer.k_w))
    g = winograd_conv_dag(layer, e)
    src = {v: (x[v[1:]] if v[0] == "in" else w[v[1:]]) for v in g if g.in_degree(v) == 0}
    val = evaluate_dag(g, src)
    y = conv2d_reference(x, w, layer)
    outs = {v for v, k in g.nodes(data="kind") if k == "output"}
    for v in outs:
        assert val[v] == pytest.approx(y[v[1:]], abs=1e-8)
    missing = [i for i in np.ndindex(y.shape) if ("out", *i) not in outs]
    assert all(abs(y[i]) < 1e-12 for i in missing)


@given(winograd_cases())
def test_structure_and_partition(case):
    """Sources are step 0, sinks are exactly the outputs, and Def. 4.1 holds for steps 1-4."""
    layer, e = case
    g = winograd_conv_dag(layer, e)
    for v, d in g.nodes(data=True):
        assert (g.in_degree(v) == 0) == (d["kind"] in ("input", "weight"))
        assert (g.out_degree(v) == 0) == (d["kind"] == "output")
    res = check_multistep_partition(g)
    assert res.ok, res.summary()
    assert res.steps == ((1, 2, 4) if layer.c_in == 1 else (1, 2, 3, 4))


def test_f2x3_tile_counts():
    """One F(2x2, 3x3) tile: 16 element products per channel pair, 8+4 output-transform vertices."""
    layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=1, k_h=3, k_w=3)
    g = winograd_conv_dag(layer, 2)
    kinds = [d["kind"] for _, d in g.nodes(data=True)]
    assert kinds.count("product") == 2 * 16 and kinds.count("output") == 4
    assert [p.internal for p in step_parts(g)] == [2 * (16 + 16) + 2 * (12 + 16), 32, 16, 8 + 4]


def test_padding_inputs_are_not_vertices():
    """With padding, every input vertex lies inside the image."""
    layer = ConvLayer(n=1, c_in=1, h_in=3, w_in=5, c_out=1, k_h=3, k_w=3, padding=(2, 1))
    g = winograd_conv_dag(layer, 3)
    ins = [d for _, d in g.nodes(data=True) if d["kind"] == "input"]
    assert len(ins) == 15 and all(0 <= d["h"] < 3 and 0 <= d["w"] < 5 for d in ins)


def test_rejects_strided_layer():
    """Winograd on a strided layer raises ValueError naming the stride."""
    with pytest.raises(ValueError, match="stride"):
        winograd_conv_dag(ConvLayer(n=1, c_in=1, h_in=5, w_in=5, c_out=1, k_h=3, k_w=3, stride=2), 2)
