"""Grouped and depthwise convolution: every direct bound holds with the grouped DAG's counts.

A layer with ``groups = G`` has the DAG of :func:`dataflow.dag_direct.direct_conv_dag`: output
channel ``co`` of group ``g`` sums over the ``c_in / G`` input channels of its group only, so
the DAG is the disjoint union of G dense DAGs ``c_in/G -> c_out/G`` (same spatial shape).

Claim. Every direct bound (``hong_kung_composite``, ``x_partition``, ``x_partition_chain``,
``compulsory``) holds for the grouped DAG with its own counts: |V|, MACs (= products), W (the
per-class weighted products), O, used inputs and weights of the grouped DAG
(:func:`iobound.vertex_counts.direct_counts`, :func:`iobound.reuse_classes.weighted_products`).

Argument. The bounds' proofs use the DAG in two ways only.

1. Per-output statements (every output one accumulation chain over its products; a product
   reads one input and one weight; sources start blue): they hold vertex by vertex, so for
   the grouped DAG as for a dense one (steps 1-4 of proofs/test_x_partition_chain.py;
   the summation-tree count of the composite bound).
2. One Loomis-Whitney inequality per segment (or subcomputation): the products whose input
   lies in B, weight in A and output in C satisfy ``sum_c N_c / sqrt(T_c) <= sqrt(|A||B||C|)``
   (per-class form) and ``N <= sqrt(R_max |A||B||C|)``. For the grouped DAG split A, B, C by
   group; each group is a dense DAG, so ``sum_c N_(g,c) / sqrt(T_c) <= sqrt(a_g b_g c_g)``,
   and the groups add up by Cauchy-Schwarz and ``sum_g b_g c_g <= (sum_g b_g)(sum_g c_g)``:

       sum_g sqrt(a_g b_g c_g) <= sqrt(sum_g a_g) sqrt(sum_g b_g c_g) <= sqrt(|A| |B| |C|).

   (:func:`test_groups_add_up_under_one_square_root`, brute-forced on built grouped DAGs in
   :func:`test_grouped_loomis_whitney_on_built_dags`.) So the segment inequality is the
   dense one, with one fast memory S shared by all groups, and the summation over segments
   gives the same expression in the grouped DAG's totals. The segment quantities (budgets,
   fresh runs, the per-segment maximum) are measured on games played on grouped DAGs by
   ``test_x_partition_chain.py::test_segment_claims_on_played_games`` (its layers include
   grouped and depthwise ones), which also checks every reported bound against them.

Which form holds. One could instead bound each group on its own: the moves of a game on one
group's vertices form a legal game of that group with at most S red pebbles, so
``Q >= sum_g max(0, B_g(S))`` with ``B_g = 2 W_g / sqrt(S) - O_g / 2 - 2 S``. All groups have
the same shape (W_g = W/G, O_g = O/G), so this is ``max(0, 2 W/sqrt(S) - O/2 - 2 G S)``:
never above the joint form ``max(0, 2 W/sqrt(S) - O/2 - 2 S)`` (the joint segment charges one
``-2S`` for the whole game; per group each pays it, :func:`test_joint_form_dominates_per_group_sum`).
The toolkit reports the joint form.

What grouping does not change: R_max and the per-class reuse T_c are spatial (the same in
every group). What it changes: MACs and weights count ``c_in / G`` channels per output; the
bounds get weaker relative to compulsory I/O (for MobileNet's depthwise layers compulsory I/O is
the best bound at 48 KiB and at 1 MiB, :func:`test_depthwise_bound_is_compulsory`). Winograd is not built
for groups > 1 (``ConvLayer.winograd_problem`` names it), so no Winograd bound is claimed.
"""

import math

import numpy as np
import sympy as sp
from hypothesis import given, strategies as st

from dataflow.dag_direct import direct_conv_dag
from iobound.direct_bounds import chain_bound_expr
from iobound.layer import ConvLayer
from iobound.networks import get_layer
from iobound.report import bound_report
from iobound.reuse_classes import axis_tap_classes, weighted_products
from iobound.symbols import OUTPUTS, S, W_CLASS
from iobound.vertex_counts import direct_counts, iter_direct_products
from test_x_partition_chain import random_subset_sums


def test_groups_add_up_under_one_square_root():
    """Cauchy-Schwarz (Lagrange's identity) and the cross terms, for G = 2 and 3 groups."""
    for g in (2, 3):
        x = sp.symbols(f"x0:{g}", nonnegative=True)        # x_g = sqrt(a_g)
        y = sp.symbols(f"y0:{g}", nonnegative=True)        # y_g = sqrt(b_g c_g)
        lagrange = sum((x[i] * y[j] - x[j] * y[i]) ** 2 for i in range(g) for j in range(i + 1, g))
        lhs = sum(xi ** 2 for xi in x) * sum(yi ** 2 for yi in y) - sum(a * b for a, b in zip(x, y)) ** 2
        assert sp.expand(lhs - lagrange) == 0
        b = sp.symbols(f"b0:{g}", nonnegative=True)
        c = sp.symbols(f"c0:{g}", nonnegative=True)
        cross = sum(b[i] * c[j] for i in range(g) for j in range(g) if i != j)
        assert sp.expand(sum(b) * sum(c) - sum(p * q for p, q in zip(b, c)) - cross) == 0
    rng = np.random.default_rng(3)
    for _ in range(2000):                                   # and numerically, up to 8 groups
        a, b, c = rng.uniform(0, 10, (3, int(rng.integers(1, 9))))
        assert np.sqrt(a * b * c).sum() <= math.sqrt(a.sum() * b.sum() * c.sum()) + 1e-9


def test_joint_form_dominates_per_group_sum():
    """sum over G equal groups of B_g = 2W/sqrt(S) - O/2 - 2GS: the joint form minus it is 2(G-1)S."""
    g = sp.Symbol("G", positive=True, integer=True)
    per_group = chain_bound_expr().subs({W_CLASS: W_CLASS / g, OUTPUTS: OUTPUTS / g}, simultaneous=True)
    assert sp.simplify(chain_bound_expr() - g * per_group - 2 * (g - 1) * S) == 0


def _classes(layer, i, j):
    return (axis_tap_classes(layer.k_h, layer.stride[0], layer.dilation[0])[i]
            * axis_tap_classes(layer.k_w, layer.stride[1], layer.dilation[1])[j])


@st.composite
def grouped_layers(draw, max_hw=6):
    """A small grouped layer (depthwise included), any stride, padding, dilation."""
    while True:
        g = draw(st.integers(1, 4))
        try:
            return ConvLayer(
                n=1, c_in=g * draw(st.integers(1, 2)), h_in=draw(st.integers(2, max_hw)),
                w_in=draw(st.integers(2, max_hw)), c_out=g * draw(st.integers(1, 2)),
                k_h=draw(st.integers(1, 3)), k_w=draw(st.integers(1, 3)),
                stride=(draw(st.integers(1, 2)), draw(st.integers(1, 2))),
                padding=(draw(st.integers(0, 1)), draw(st.integers(0, 1))),
                dilation=(draw(st.integers(1, 2)), 1), groups=g)
        except ValueError:
            continue


@given(grouped_layers(), st.integers(0, 2**32 - 1))
def test_grouped_loomis_whitney_on_built_dags(layer, seed):
    """On the built grouped DAG: products read their group only, the counts match, and on random
    operand/output subsets sum_c N_c/sqrt(T_c) <= sqrt(|A||B||C|) and N <= sqrt(R_max |A||B||C|)."""
    dag = direct_conv_dag(layer)
    og, cg = layer.c_out_per_group, layer.c_in_per_group
    prods = []
    for v, d in dag.nodes(data=True):
        if d.get("op") != "mul":                             # products and one-term outputs
            continue
        x, = (u for u in dag.predecessors(v) if dag.nodes[u]["kind"] == "input")
        w, = (u for u in dag.predecessors(v) if dag.nodes[u]["kind"] == "weight")
        assert x[2] // cg == w[1] // og == w[2] // cg        # a product stays in its group
        prods.append((x, w, ("out",) + v[1:5]))
    assert len(prods) == direct_counts(layer).products == len(list(iter_direct_products(layer)))
    weights = [1 / math.sqrt(_classes(layer, w[3], w[4])) for _, w, _ in prods]
    assert math.isclose(sum(weights), weighted_products(layer), rel_tol=1e-12)
    for weighted, count, abc in random_subset_sums(prods, weights, np.random.default_rng(seed), 20):
        assert weighted <= math.sqrt(abc) + 1e-9
        assert count <= math.sqrt(layer.reuse_max * abc) + 1e-9


def test_depthwise_bound_is_compulsory():
    """MobileNet's depthwise layers: every bound is at most compulsory I/O at 48 KiB (and 1 MiB)."""
    for name in ("mobilenet.conv_dw_1", "mobilenet.conv_dw_2", "mobilenet.conv_dw_13"):
        for s in (12288, 262144):
            rep = bound_report(get_layer(name), s)
            assert rep.best_method == "compulsory", (name, s)


def test_resnext_grouped_layer_counts():
    """ResNeXt-50 conv2_1b (128 -> 128, 32 groups of 4): MACs 1/32 of the dense layer's, used
    weights 128*4*9, inputs all 128 channels."""
    layer = get_layer("resnext50.conv2_1b")
    dense = layer.replace(groups=1)
    c, d = direct_counts(layer), direct_counts(dense)
    assert c.products * 32 == d.products and c.used_weights == 128 * 4 * 9
    assert c.used_inputs == d.used_inputs == 128 * 56 * 56 and c.outputs == d.outputs
    assert math.isclose(weighted_products(layer) * 32, weighted_products(dense), rel_tol=1e-12)


def test_grouped_reports_say_what_they_rest_on():
    """A grouped layer's Loomis-Whitney-based bounds name the grouped argument; a dense one's do not."""
    grouped = bound_report(get_layer("resnext50.conv2_1b"), 12288).bounds
    dense = bound_report(get_layer("resnet50.conv2_1b"), 12288).bounds
    for method in ("hong_kung_composite", "x_partition", "x_partition_chain"):
        assert any("test_grouped_bounds.py" in a for a in grouped[method].assumptions), method
        assert not any("groups" in a for a in dense[method].assumptions), method
