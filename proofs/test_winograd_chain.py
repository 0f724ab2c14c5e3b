"""The Winograd chain X-partition bound: Q >= 2 MACs / (kappa sqrt(S)) - N + O - 2S (S >= 9).

Covers the builder's DAG (dataflow/dag_winograd.py): every ``Pi[nu]`` of a (batch, tile,
c_out) is one accumulation chain over the input channels, in any channel order; the
transforms are separable two-pass linear combinations with zeros dropped. Any schedule,
recomputation allowed. Not covered: other DAGs of the same convolution (transforms
merged into one pass, channel sums as trees, output transforms per channel block); for
those only `compulsory` is proven here.

The argument is written out in :mod:`iobound.winograd_chain`. Checked here:

* the algebra (SymPy): the per-segment maximum ``sqrt(c) (3S - c)/2 <= S^(3/2)`` as a
  sum of squares, the incoming-product case, and the summation over segments;
* the routing caps (step 3), exhaustively on built DAGs: every routed share goes to a
  real predecessor, and every vertex's routed load (all frequencies; one frequency at a
  time; kernels) is at most the cap the bound uses, and so is every input-kernel pair's
  cross load ``sum_nu load_nu(v) kload_nu(w)`` (step 4's ``cross``);
* the dominator claim (step 3) on random start budgets: the transformed entries that can
  be computed from a set D are at most the routed loads of D;
* Loomis-Whitney per frequency (step 4) on random product sets;
* every combinatorial step on played games (random topological orders, with
  recomputations, tiled orders; Belady and LRU) with
  :func:`dataflow.winograd_segments.winograd_segments`, and the bound against their I/O.
"""

import math

import numpy as np
import sympy as sp
from hypothesis import assume, given, strategies as st

from dataflow.dag_winograd import winograd_conv_dag
from dataflow.pebble import play
from dataflow.schedules import tiled_schedule, topological_schedule, with_recomputation
from dataflow.winograd import WinogradTiling
from dataflow.winograd_segments import is_input_side, is_kernel_side, winograd_segments
from iobound.layer import ConvLayer
from iobound.vertex_counts import direct_counts
from iobound.winograd_vertex_counts import winograd_chain_count
from iobound.winograd_bounds import winograd_bound_values
from iobound.winograd_chain import C_IN, KAPPA, N_CHAINS, winograd_chain_bound, winograd_chain_expr, \
    winograd_layer_caps
from iobound.winograd_routing import axis_routing, cross_routing, kernel_routing
from iobound.symbols import OUTPUTS, S

u_, v_, m_, l_, n_, k_ = sp.symbols("u v M L N kappa", positive=True)


def test_segment_maximum():
    """v^3 - u (3 v^2 - u^2)/2 = (v - u)^2 (2 v + u)/2 >= 0 (u = sqrt(c), v = sqrt(S))."""
    gap = v_ ** 3 - u_ * (3 * v_ ** 2 - u_ ** 2) / 2
    assert sp.expand(gap - (v_ - u_) ** 2 * (2 * v_ + u_) / 2) == 0


def test_incoming_products():
    """When kappa sqrt(c)/2 < 1 a segment charges <= 3S <= kappa S^(3/2), for S >= 9, kappa >= 1."""
    from iobound.winograd_chain import CHAIN_MIN_S
    s = sp.Symbol("s", positive=True)
    assert sp.solve(sp.Eq(3 * s, s ** sp.Rational(3, 2)), s) == [9]
    assert all(3 * x <= x ** 1.5 for x in range(9, 2000))
    assert CHAIN_MIN_S == 9  # the toolkit reports the chain bound from there on


def test_summation_over_segments():
    """MACs <= kappa S^(3/2) ((L + N)/(2S) + 1) solved for L, plus St >= O, is the reported form."""
    lhs = sp.solve(sp.Eq(m_, k_ * S ** sp.Rational(3, 2) * ((l_ + n_) / (2 * S) + 1)), l_)[0]
    q = lhs + OUTPUTS                                                # Q = L + St >= L + O
    expr = winograd_chain_expr().subs({C_IN * N_CHAINS: m_, KAPPA: k_, N_CHAINS: n_})
    reported = (2 * C_IN * N_CHAINS / (KAPPA * sp.sqrt(S)) - N_CHAINS + OUTPUTS - 2 * S)
    assert sp.simplify(winograd_chain_expr() - reported) == 0
    assert sp.simplify(q - (2 * m_ / (k_ * sp.sqrt(S)) - n_ + OUTPUTS - 2 * S)) == 0
    assert expr.free_symbols >= {OUTPUTS, S}


# --- routing loads on built DAGs -----------------------------------------------------------

def _input_loads(dag, rows: dict, cols: dict, nu=None) -> dict:
    """Routed load of every input-side vertex (P entries of frequency ``nu``, or all)."""
    layer, e = dag.graph["layer"], dag.graph["e"]
    ph, pw = layer.padding
    load = {}
    for v, d in dag.nodes(data=True):
        if d["kind"] == "transform" and d.get("transform") == "input" and d["stage"] == 2:
            if nu is None or (d["i"], d["j"]) == nu:
                load[v] = 1.0
                share = cols[(d["tw"], d["j"])]
                got = 0.0
                for u in dag.predecessors(v):
                    w = share.get(d["tw"] * e + dag.nodes[u]["j"] - pw, 0.0)
                    load[u] = load.get(u, 0.0) + w
                    got += w
                assert abs(got - 1) < 1e-9, f"{v}: shares {got} do not reach its predecessors"
    for v in [v for v in load if dag.nodes[v].get("stage") == 1]:
        d = dag.nodes[v]
        share, got = rows[(d["th"], d["i"])], 0.0
        for u in dag.predecessors(v):
            w = share.get(dag.nodes[u]["h"], 0.0)
            load[u] = load.get(u, 0.0) + w * load[v]
            got += w
        assert abs(got - 1) < 1e-9, f"{v}: row shares {got} do not reach its predecessors"
    return load


def _kernel_loads(dag, share: dict) -> dict:
    load = {}
    for v, d in dag.nodes(data=True):
        if d["kind"] == "transform" and d.get("transform") == "kernel" and d["stage"] == 2:
            load[v] = 1.0
            for u in dag.predecessors(v):
                load[u] = load.get(u, 0.0) + share[(0, d["j"])].get(dag.nodes[u]["j"], 0.0)
    for v in [v for v in load if dag.nodes[v].get("stage") == 1]:
        d = dag.nodes[v]
        for u in dag.predecessors(v):
            load[u] = load.get(u, 0.0) + share[(0, d["i"])].get(dag.nodes[u]["i"], 0.0) * load[v]
    return load


def _routings(layer: ConvLayer, e: int):
    th, tw = layer.winograd_tiles(e)
    rows = axis_routing(e, layer.k_h, layer.padding[0], layer.h_in, th)
    cols = axis_routing(e, layer.k_h, layer.padding[1], layer.w_in, tw)
    return rows, cols, kernel_routing(e, layer.k_h)


SMALL = [ConvLayer(1, 2, h, w, 2, r, r, padding=p) for r in (2, 3) for p in range(r)
         for h, w in ((r + 3, r + 4), (r + 6, r + 1))]


def test_routed_loads_within_caps():
    """Exhaustively on built DAGs: every vertex's routed load is at most the cap used."""
    for layer in SMALL:
        for e in (1, 2, 3):
            dag = winograd_conv_dag(layer, e)
            caps = winograd_layer_caps(layer, e)
            rows, cols, ker = _routings(layer, e)
            assert max(_input_loads(dag, rows.share, cols.share).values()) <= caps.cap_in
            n = e + layer.k_h - 1
            for i in range(n):
                for j in range(n):
                    got = _input_loads(dag, rows.row_share[i], cols.row_share[j], (i, j))
                    assert not got or max(got.values()) <= caps.cap_in1
            assert max(_kernel_loads(dag, ker.share).values()) <= caps.cap_w


def _kernel_loads_nu(dag, kernel_rows: tuple, kernel_cols: tuple, nu) -> dict:
    """Routed load of frequency ``nu``'s J entries on kernel-side vertices (per-axis shares)."""
    load = {}
    for v, d in dag.nodes(data=True):
        if d["kind"] == "transform" and d.get("transform") == "kernel" and d["stage"] == 2 \
                and (d["i"], d["j"]) == nu:
            load[v] = 1.0
            for u in dag.predecessors(v):
                w = kernel_cols[d["j"]].get(dag.nodes[u]["j"], 0.0)
                load[u] = load.get(u, 0.0) + w
                for x in dag.predecessors(u):
                    load[x] = load.get(x, 0.0) + w * kernel_rows[d["i"]].get(dag.nodes[x]["i"], 0.0)
    return load


def test_cross_loads_within_cap():
    """Exhaustively on built DAGs: sum_nu load_nu(v) kload_nu(w) <= cross for every input-side v
    and kernel-side w (the step that gives kappa = 1 for F(2x2, 3x3))."""
    for layer in SMALL:
        for e in (1, 2, 3):
            dag = winograd_conv_dag(layer, e)
            th, tw = layer.winograd_tiles(e)
            rows = cross_routing(e, layer.k_h, layer.padding[0], layer.h_in, th)
            cols = cross_routing(e, layer.k_h, layer.padding[1], layer.w_in, tw)
            n = e + layer.k_h - 1
            ins = sorted((v for v, d in dag.nodes(data=True) if is_input_side(d)), key=repr)
            ker = sorted((v for v, d in dag.nodes(data=True) if is_kernel_side(d)), key=repr)
            li, lk = np.zeros((len(ins), n * n)), np.zeros((len(ker), n * n))
            for i in range(n):
                for j in range(n):
                    a = _input_loads(dag, rows.share, cols.share, (i, j))
                    b = _kernel_loads_nu(dag, rows.kernel, cols.kernel, (i, j))
                    li[:, i * n + j] = [a.get(v, 0.0) for v in ins]
                    lk[:, i * n + j] = [b.get(v, 0.0) for v in ker]
            assert (li @ lk.T).max() <= winograd_layer_caps(layer, e).cross


def _closure(dag, d_set: set, side) -> set:
    """Vertices of one side computable from ``d_set`` (in it, or all predecessors computable)."""
    have = set(d_set)
    for v in sorted((v for v, d in dag.nodes(data=True) if side(d) and d["kind"] == "transform"),
                    key=lambda v: dag.nodes[v]["stage"]):
        if v not in have and all(u in have for u in dag.predecessors(v)):
            have.add(v)
    return have


@given(st.sampled_from(SMALL), st.integers(1, 3), st.floats(0.05, 0.6), st.integers(0, 2**32 - 1))
def test_dominated_entries_at_most_routed_loads(layer, e, frac, seed):
    """For a random start budget D, the P (J) entries computable from it, per frequency and in
    all, are at most the routed loads of D (step 3)."""
    dag = winograd_conv_dag(layer, e)
    rng = np.random.default_rng(seed)
    rows, cols, ker = _routings(layer, e)
    for side, stage2 in ((is_input_side, "input"), (is_kernel_side, "kernel")):
        pool = [v for v, d in dag.nodes(data=True) if side(d)]
        d_set = {v for v in pool if rng.random() < frac}
        got = [v for v in _closure(dag, d_set, side)
               if dag.nodes[v]["kind"] == "transform" and dag.nodes[v]["stage"] == 2]
        if stage2 == "input":
            total = _input_loads(dag, rows.share, cols.share)
            assert len(got) <= sum(total.get(v, 0.0) for v in d_set) + 1e-9
            for i, j in {(dag.nodes[v]["i"], dag.nodes[v]["j"]) for v in got}:
                one = _input_loads(dag, rows.row_share[i], cols.row_share[j], (i, j))
                mine = [v for v in got if (dag.nodes[v]["i"], dag.nodes[v]["j"]) == (i, j)]
                assert len(mine) <= sum(one.get(v, 0.0) for v in d_set) + 1e-9
        else:
            total = _kernel_loads(dag, ker.share)
            assert len(got) <= sum(total.get(v, 0.0) for v in d_set) + 1e-9
            for nu in {(dag.nodes[v]["i"], dag.nodes[v]["j"]) for v in got}:
                mine = [v for v in got if (dag.nodes[v]["i"], dag.nodes[v]["j"]) == nu]
                assert len(mine) <= len(d_set)                   # one J_nu per kernel


@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), st.floats(0.1, 0.9),
       st.integers(0, 2**32 - 1))
def test_loomis_whitney_per_frequency(ci, tiles, co, frac, seed):
    """|X| <= sqrt(|A| |B| |C|) for products X of one frequency over (ci, tile, co)."""
    rng = np.random.default_rng(seed)
    x = [(a, t, c) for a in range(ci) for t in range(tiles) for c in range(co) if rng.random() < frac]
    a = {(p[0], p[1]) for p in x}
    b = {(p[2], p[0]) for p in x}
    c = {(p[1], p[2]) for p in x}
    assert len(x) <= math.sqrt(len(a) * len(b) * len(c)) + 1e-9


# --- every step on played games ------------------------------------------------------------

@st.composite
def played(draw):
    """A small Winograd layer, e, S in 9..40, a schedule kind, a policy and a seed."""
    r, e = draw(st.integers(2, 3)), draw(st.integers(1, 3))
    layer = ConvLayer(n=1, c_in=draw(st.integers(1, 4)), h_in=draw(st.integers(r, r + 4)),
                      w_in=draw(st.integers(r, r + 3)), c_out=draw(st.integers(1, 3)), k_h=r, k_w=r,
                      padding=draw(st.integers(0, r - 1)))
    return (layer, e, draw(st.integers(9, 40)), draw(st.sampled_from(["random", "recompute", "tiled"])),
            draw(st.sampled_from(["belady", "lru"])), draw(st.integers(0, 2**32 - 1)))


def _schedule(dag, layer, e, kind, rng):
    if kind == "tiled":
        return tiled_schedule(dag, layer, WinogradTiling(e, e, e, 1)).order
    order = topological_schedule(dag, rng)
    return with_recomputation(dag, order, rng) if kind == "recompute" else order


def _check_segment(seg, s: int, kappa: float, caps) -> None:
    assert seg.needed <= seg.budget, "an incoming product or chain predecessor was not available"
    assert len(seg.d_in) + len(seg.d_w) + len(seg.needed) <= len(seg.budget) <= s + seg.loads
    c_cont = sum(1 for v in seg.needed if v[0] in ("wsum", "pi"))
    assert len(seg.chains) <= c_cont + seg.fresh                      # continued or fresh
    assert seg.loads + seg.fresh <= 2 * s                             # a segment's virtual loads
    lw = sum(math.sqrt(len(seg.a.get(nu, ())) * len(seg.b.get(nu, ())) * len(cs))
             for nu, cs in seg.c.items())
    assert seg.computed <= lw + 1e-9                                 # Loomis-Whitney per nu
    assert all(len(a) <= caps.cap_in1 * len(seg.d_in) + 1e-9 for a in seg.a.values())
    assert sum(len(a) for a in seg.a.values()) <= caps.cap_in * len(seg.d_in) + 1e-9
    assert all(len(b) <= len(seg.d_w) for b in seg.b.values())
    assert sum(len(b) for b in seg.b.values()) <= caps.cap_w * len(seg.d_w) + 1e-9
    cross = sum(len(seg.a.get(nu, ())) * len(seg.b.get(nu, ())) for nu in seg.c)
    assert cross <= caps.cross * len(seg.d_in) * len(seg.d_w) + 1e-9
    assert lw <= kappa * math.sqrt(len(seg.d_in) * len(seg.d_w) * len(seg.chains)) + 1e-9
    assert seg.charged <= kappa * s ** 1.5 + 1e-9                    # step 5


@given(played())
def test_segment_claims_on_played_games(case):
    """Steps 1-6 on played games, and the bound below their I/O."""
    layer, e, s, kind, policy, seed = case
    dag = winograd_conv_dag(layer, e)
    order = _schedule(dag, layer, e, kind, np.random.default_rng(seed))
    assume(s > max(d for _, d in dag.in_degree()))
    res = play(dag, order, s, policy, record_moves=True)
    segs = winograd_segments(dag, res.moves, 2 * s)
    caps = winograd_layer_caps(layer, e)
    for seg in segs:
        _check_segment(seg, s, caps.kappa, caps)
    n = winograd_chain_count(layer, e)
    assert sum(seg.fresh for seg in segs) == n
    assert sum(seg.charged for seg in segs) == layer.c_in * n
    assert res.stores >= direct_counts(layer).outputs
    assert res.total >= winograd_chain_bound(layer, e, s) - 1e-9
    assert res.total >= winograd_bound_values(layer, e, s)["x_partition_chain"] - 1e-9


def test_binding_on_a_deep_layer():
    """A layer where the chain bound exceeds compulsory I/O (814 > 640 words at S = 9): it
    still holds against tiled and random orders, and so does every segment claim."""
    layer = ConvLayer(1, 8, 6, 6, 4, 3, 3)
    dag = winograd_conv_dag(layer, 2)
    rng = np.random.default_rng(3)
    for s in (9, 10):
        bound = winograd_chain_bound(layer, 2, s)
        assert bound > direct_counts(layer).compulsory
        for order in (tiled_schedule(dag, layer, WinogradTiling(2, 2, 2, 1)).order,
                      topological_schedule(dag, rng)):
            res = play(dag, order, s, "belady", record_moves=True)
            assert res.total >= bound
            for seg in winograd_segments(dag, res.moves, 2 * s):
                _check_segment(seg, s, winograd_layer_caps(layer, 2).kappa, winograd_layer_caps(layer, 2))


@given(st.integers(6, 10), st.integers(5, 7), st.integers(5, 7), st.integers(3, 4), st.integers(9, 12),
       st.sampled_from(["random", "tiled"]), st.sampled_from(["belady", "lru"]), st.integers(0, 2**32 - 1))
def test_long_chains_played_above_the_bound(c_in, h, w, c_out, s, kind, policy, seed):
    """Long chains at small S, where the chain bound is near or above compulsory I/O: played
    games (random topological or tiled orders, Belady or LRU) move at least the bound."""
    layer = ConvLayer(1, c_in, h, w, c_out, 3, 3)
    dag = winograd_conv_dag(layer, 2)
    order = _schedule(dag, layer, 2, kind, np.random.default_rng(seed))
    assert play(dag, order, s, policy).total >= winograd_chain_bound(layer, 2, s)
