"""Direct-convolution vertex counts and bounds against brute force and their properties."""

import pytest
from hypothesis import assume, given, strategies as st

from iobound.composite import CompositeAlgorithm, CompositeStep, composite_bound_expr
from iobound.direct_bounds import direct_bound_values, direct_leading_terms
from iobound.layer import ConvLayer
from iobound.networks import get_layer
from iobound.report import best_lower_bound, bound_report
from iobound.symbols import S, V, k
from iobound.vertex_counts import direct_counts, direct_vertex_count, iter_direct_products
from layer_strategies import conv_layers

import sympy as sp


def _brute(layer):
    """Enumerate the direct DAG: (inputs, weights, products per output)."""
    inputs, weights, per_out = set(), set(), {}
    for x, w, o in iter_direct_products(layer):
        inputs.add(x)
        weights.add(w)
        per_out[o] = per_out.get(o, 0) + 1
    return inputs, weights, per_out


small_layers = conv_layers(c_max=3, out_max=6, pad_h_max=3, pad_w_max=2, dilation_max=2)


@given(small_layers)
def test_vertex_count_matches_enumeration(layer):
    """|V| = used inputs + used weights + sum over outputs (2 m - 1), enumerated."""
    inputs, weights, per_out = _brute(layer)
    expected = len(inputs) + len(weights) + sum(2 * m - 1 for m in per_out.values())
    assert direct_vertex_count(layer) == expected


@given(small_layers)
def test_compulsory_is_distinct_used_inputs_weights_outputs(layer):
    """Compulsory I/O is the brute-force count of used inputs, weights and outputs."""
    inputs, weights, per_out = _brute(layer)
    assert direct_bound_values(layer, 8)["compulsory"] == len(inputs) + len(weights) + len(per_out)


@given(small_layers)
def test_products_are_real_macs(layer):
    """Products exclude padding taps and never exceed the dense MAC count."""
    _, _, per_out = _brute(layer)
    assert direct_counts(layer).products == sum(per_out.values()) <= layer.macs


@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 8), st.integers(1, 8),
       st.integers(1, 4), st.integers(1, 4))
def test_lemma_4_7_without_padding(cin, cout, h, w, kh, kw):
    """No padding, stride 1: |V| = (2 K C_in - 1) P C_out + H W C_in + K C_in C_out."""
    layer = ConvLayer(n=1, c_in=cin, h_in=h + kh - 1, w_in=w + kw - 1, c_out=cout,
                      k_h=kh, k_w=kw)
    K = kh * kw
    assert direct_vertex_count(layer) == ((2 * K * cin - 1) * h * w * cout
                                          + layer.input_size + K * cin * cout)


@given(small_layers, st.integers(1, 5000), st.integers(0, 5000))
def test_bounds_non_increasing_in_S(layer, s, ds):
    """Each bound is non-increasing in the fast-memory size."""
    lo, hi = direct_bound_values(layer, s), direct_bound_values(layer, s + ds)
    for m in lo:
        assert hi[m] <= lo[m] + 1e-9 * max(1.0, lo[m])


@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 40), st.integers(1, 4000))
def test_one_by_one_is_matrix_multiply(m, kk, nn, s):
    """1x1 kernel, stride 1: the bound equals the composite matrix-multiply bound."""
    layer = ConvLayer(n=1, c_in=kk, h_in=m, w_in=1, c_out=nn, k_h=1, k_w=1)
    mm = CompositeAlgorithm((CompositeStep("products", 2 * S * sp.sqrt(k)),
                             CompositeStep("sums", k - 1)))
    expr = composite_bound_expr(mm.T_expr("vertex"))
    v_mm = m * kk + kk * nn + (2 * kk - 1) * m * nn
    assert layer.reuse_max == 1
    assert direct_vertex_count(layer) == v_mm
    assert direct_bound_values(layer, s)["hong_kung_composite"] == pytest.approx(
        float(expr.subs({V: v_mm, S: s})), rel=1e-9, abs=1e-9)


@given(st.integers(1, 4), st.integers(1, 3), st.sampled_from([1, 2, 3]))
def test_concrete_over_leading_tends_to_one(kh, stride, scale):
    """Concrete bound / leading term -> 1 as the layer (channels, pixels) and S grow."""
    assume(stride <= kh)
    size = 64 * scale
    layer = ConvLayer(n=1, c_in=2048 * scale, h_in=size, w_in=size, c_out=2048 * scale,
                      k_h=kh, k_w=kh, stride=(stride, stride))
    s = 4096 * scale
    vals, lead = direct_bound_values(layer, s), direct_leading_terms(layer, s)
    assert 0.95 < vals["hong_kung_composite"] / lead["hong_kung_composite"] <= 1.0 + 1e-9
    assert 0.95 < vals["x_partition"] / lead["x_partition"] <= 1.0


@given(st.integers(1, 5), st.integers(1, 3), st.integers(64, 512), st.integers(16, 4096))
def test_x_partition_beats_composite_on_large_layers(kh, stride, c, s):
    """For large layers the X-partition bound is the larger (8x leading term)."""
    assume(stride <= kh)
    layer = ConvLayer(n=1, c_in=c, h_in=56, w_in=56, c_out=c, k_h=kh, k_w=kh,
                      stride=(stride, stride), padding=(kh // 2, kh // 2))
    vals = direct_bound_values(layer, s)
    assume(vals["hong_kung_composite"] > 0)
    assert vals["x_partition"] >= vals["hong_kung_composite"]


@given(small_layers, st.integers(1, 3000))
def test_best_is_max_and_at_least_compulsory(layer, s):
    """best = the largest bound, hence >= compulsory I/O."""
    rep = bound_report(layer, s)
    assert rep.best == max(b.value for b in rep.bounds.values())
    assert rep.best >= rep.bounds["compulsory"].value
    assert rep.bounds[rep.best_method].value == rep.best


@given(st.integers(1, 6), st.integers(1, 4), st.integers(1, 6), st.integers(1, 6))
def test_below_a_blocked_schedule(tp, tc, cin, t):
    """The blocked 1x1 schedule (S = t^2 + 2t + 2, played in proofs/) is >= the best bound."""
    P, cout = tp * t, tc * t
    layer = ConvLayer(n=1, c_in=cin, h_in=P, w_in=1, c_out=cout, k_h=1, k_w=1)
    io = (P // t) * (cout // t) * (2 * t * cin + t * t)
    assert best_lower_bound(layer, t * t + 2 * t + 2) <= io


@given(small_layers, st.integers(5, 200))
def test_below_the_naive_schedule(layer, s):
    """Loading both operands of every product and storing every output is >= the bound."""
    c = direct_counts(layer)
    assert best_lower_bound(layer, s) <= 2 * c.products + c.outputs


def test_alexnet_conv1_uses_r_max():
    """AlexNet conv1's assumptions name R_max = 9 and the paper's 7.5625."""
    rep = bound_report(get_layer("alexnet.conv1"), 12288)
    text = " ".join(rep.bounds["hong_kung_composite"].assumptions)
    assert "R = R_max = 9" in text and "7.5625" in text


@pytest.mark.parametrize("kwargs, field", [(dict(c_in=0), "c_in"), (dict(k_h=9), "k_h"),
                                           (dict(stride=(0, 1)), "stride"),
                                           (dict(padding=(-1, 0)), "padding")])
def test_invalid_layers_rejected(kwargs, field):
    """Invalid layers raise ValueError naming the field."""
    base = dict(n=1, c_in=2, h_in=5, w_in=5, c_out=2, k_h=3, k_w=3)
    base.update(kwargs)
    with pytest.raises(ValueError, match=field):
        ConvLayer(**base)


@pytest.mark.parametrize("s", [0, -3, 1.5, True, "12"])
def test_invalid_fast_memory_rejected(s):
    """S must be an integer number of words >= 1."""
    with pytest.raises(ValueError, match="fast memory"):
        bound_report(get_layer("alexnet.conv2"), s)


def test_unknown_algorithm_rejected():
    """An unknown algorithm name is a ValueError listing the choices."""
    with pytest.raises(ValueError, match="direct, winograd"):
        bound_report(get_layer("alexnet.conv2"), 1024, algorithm="fft")


def test_x_partition_below_played_games():
    """Where the X-partition bounds exceed compulsory I/O, tiled schedules played in the
    pebble game (dataflow's player, Belady eviction) still move at least that many words."""
    from dataflow.dag_direct import direct_conv_dag
    from dataflow.direct import DirectTiling
    from dataflow.pebble import play
    from dataflow.schedules import tiled_schedule

    layer = ConvLayer(n=1, c_in=16, h_in=4, w_in=4, c_out=16, k_h=1, k_w=1)
    s = 16
    rep = bound_report(layer, s)
    assert rep.best_method == "x_partition_chain"
    assert rep.bounds["x_partition"].value > rep.bounds["compulsory"].value
    dag = direct_conv_dag(layer)
    for x, y, z in ((1, 2, 4), (2, 2, 2), (4, 1, 2)):
        order = tiled_schedule(dag, layer, DirectTiling(x=x, y=y, z=z, alpha=1)).order
        assert play(dag, order, s, "belady").total >= rep.best


def test_report_to_dict_is_json_ready():
    """BoundReport.to_dict() serialises with every method's value, expression and assumptions."""
    import json

    rep = bound_report(get_layer("alexnet.conv2"), 4096)
    d = json.loads(json.dumps(rep.to_dict()))
    assert d["best"] == rep.best and d["best_method"] == rep.best_method
    assert set(d["expressions"]) == set(rep.bounds) == set(d["assumptions"])
    assert d["fast_memory_words"] == 4096
