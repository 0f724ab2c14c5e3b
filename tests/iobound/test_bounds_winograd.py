"""Winograd bounds: vertex counts, monotonicity, validity checks and rejections."""

import math

import pytest
from hypothesis import assume, given, strategies as st

from iobound.layer import ConvLayer
from iobound.networks import get_layer
from iobound.report import bound_report
from iobound.vertex_counts import direct_counts
from iobound.winograd_vertex_counts import winograd_counts, winograd_gamma, winograd_vertex_count, winograd_vertex_count_lower
from iobound.winograd_bounds import winograd_bound_values, winograd_leading_terms

wino_layers = st.builds(
    lambda nb, ci, co, h, w, r, p: ConvLayer(n=nb, c_in=ci, c_out=co, h_in=h + r - 1,
                                             w_in=w + r - 1, k_h=r, k_w=r, padding=(p, p)),
    st.integers(1, 2), st.integers(1, 4), st.integers(1, 4), st.integers(1, 9),
    st.integers(1, 9), st.integers(1, 5), st.integers(0, 2))


@given(wino_layers, st.integers(1, 4))
def test_lower_count_is_below_exact(layer, e):
    """The full-tile count never exceeds the builder's exact |V|."""
    assert winograd_vertex_count_lower(layer, e) <= winograd_vertex_count(layer, e)


@given(wino_layers, st.integers(1, 4), st.integers(1, 3000), st.integers(0, 3000))
def test_non_increasing_in_S(layer, e, s, ds):
    """Each Winograd bound is non-increasing in S."""
    lo, hi = winograd_bound_values(layer, e, s), winograd_bound_values(layer, e, s + ds)
    for m in lo:
        assert hi[m] <= lo[m] + 1e-9 * max(1.0, lo[m])


@given(wino_layers, st.integers(1, 4), st.integers(1, 3000))
def test_best_at_least_compulsory(layer, e, s):
    """best is the max of the reported bounds, so >= compulsory."""
    rep = bound_report(layer, s, "winograd", e)
    assert rep.best >= rep.bounds["compulsory"].value
    assert set(rep.bounds) == {"hong_kung_composite", "x_partition", "x_partition_chain",
                               "compulsory"}


@given(wino_layers, st.integers(1, 4))
def test_compulsory_same_as_direct(layer, e):
    """Compulsory I/O depends on the convolution, not on the algorithm."""
    assert winograd_bound_values(layer, e, 64)["compulsory"] == direct_counts(layer).compulsory


def test_gamma_formula():
    """gamma = n^2 ceil(n/e)^2 for F(2x2, 3x3): 16 * 4."""
    layer = get_layer("alexnet.conv3")
    assert winograd_gamma(layer, 2) == 64
    assert winograd_gamma(layer, 4) == 36 * math.ceil(6 / 4) ** 2


def test_leading_term_ratio_large_layer():
    """The concrete bound approaches its leading term on a large layer at large S."""
    layer = ConvLayer(n=1, c_in=4096, h_in=130, w_in=130, c_out=4096, k_h=3, k_w=3)
    s = 2 ** 20
    v, lead = winograd_bound_values(layer, 2, s), winograd_leading_terms(layer, 2, s)
    assert 0.9 < v["hong_kung_composite"] / lead["hong_kung_composite"] <= 1.0 + 1e-9


@given(st.integers(1, 5), st.integers(1, 4), st.sampled_from([1, 2]))
def test_concrete_over_leading_tends_to_one(r, e, scale):
    """Property: on a large layer (full tiles, many channels) at large S both concrete
    Winograd bounds are within 5% of (and never above) their leading terms."""
    c, h_out = 2048 * scale, 120 * scale     # 120 is a multiple of every e: full tiles
    layer = ConvLayer(n=1, c_in=c, h_in=h_out + r - 1, w_in=h_out + r - 1, c_out=c,
                      k_h=r, k_w=r)
    s = 2 ** 16
    v, lead = winograd_bound_values(layer, e, s), winograd_leading_terms(layer, e, s)
    for m in ("hong_kung_composite", "x_partition"):
        assert 0.95 < v[m] / lead[m] <= 1.0 + 1e-9


@given(st.integers(1, 5), st.integers(1, 4), st.integers(256, 1024), st.integers(16, 4096))
def test_x_partition_beats_composite_on_large_layers(r, e, c, s):
    """Property: for large layers the Winograd X-partition bound is the larger one
    (leading terms: ratio 2 (1 + gamma) / (n sqrt(gamma)) >= 2 ceil(n/e))."""
    layer = ConvLayer(n=1, c_in=c, h_in=56, w_in=56, c_out=c, k_h=r, k_w=r,
                      padding=(r // 2, r // 2))
    v = winograd_bound_values(layer, e, s)
    assume(v["hong_kung_composite"] > 0)
    assert v["x_partition"] >= v["hong_kung_composite"]


def test_element_products_per_tile():
    """n^2 element products per (tile, c_out, c_in) in the simplified count."""
    layer = ConvLayer(n=1, c_in=3, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3)
    c = winograd_counts(layer, 2)
    assert c.tiles == 4 and c.products == 4 * 2 * 3 * 16


@pytest.mark.parametrize("spec, why", [
    ("alexnet.conv1", "stride"),
])
def test_inapplicable_layer_rejected(spec, why):
    """Winograd on a strided layer is a ValueError naming the reason."""
    with pytest.raises(ValueError, match=why):
        bound_report(get_layer(spec), 1024, "winograd")


def test_non_square_kernel_rejected():
    """A non-square kernel cannot use F(e x e, r x r)."""
    layer = ConvLayer(n=1, c_in=2, h_in=8, w_in=8, c_out=2, k_h=3, k_w=1)
    with pytest.raises(ValueError, match="square"):
        bound_report(layer, 1024, "winograd")


@pytest.mark.parametrize("e, msg", [(0, "e must be"), (-1, "e must be"), (1.5, "e must be"),
                                    (31, r"e \+ r - 1 must be <= 32")])
def test_bad_e_rejected(e, msg):
    """e must be an integer >= 1 with an input tile e + r - 1 of at most 32."""
    with pytest.raises(ValueError, match=msg):
        bound_report(get_layer("alexnet.conv3"), 1024, "winograd", e)


def test_lower_count_without_full_tiles():
    """A layer smaller than one output tile has no full tile: the lower count claims no
    transformed weights (hypothesis found 10 > 9 for a 1x1 layer, 1x1 kernel, e = 3)."""
    layer = ConvLayer(n=1, c_in=1, c_out=1, h_in=1, w_in=1, k_h=1, k_w=1)
    assert winograd_vertex_count_lower(layer, 3) <= winograd_vertex_count(layer, 3)


@given(st.integers(1, 2), st.integers(1, 3), st.integers(1, 2), st.integers(2, 3), st.integers(0, 2),
       st.integers(0, 4), st.integers(0, 4), st.integers(1, 3))
def test_chain_count_matches_the_dag(nb, ci, co, r, pad, dh, dw, e):
    """winograd_chain_count is the DAG's Pi count; its products are c_in per chain."""
    from dataflow.dag_winograd import winograd_conv_dag
    from iobound.winograd_vertex_counts import winograd_chain_count

    layer = ConvLayer(nb, ci, r + dh, r + dw, co, r, r, padding=min(pad, r - 1))
    dag = winograd_conv_dag(layer, e)
    chains = sum(1 for v in dag if v[0] == "pi")
    products = sum(1 for _, d in dag.nodes(data=True) if d["kind"] == "product")
    assert chains == winograd_chain_count(layer, e) and products == ci * chains
