"""Steps 2 to 4 of the Winograd composite (phi_2, phi_3, phi_4 of test_winograd.py's
docstring), checked on the builder's DAGs instead of only argued.

Each phi rests on a fact about the DAG; each fact is checked here on built DAGs of several
F(e x e, r x r), with padding and partial border tiles, so that a builder change that
breaks one fails:

* phi_2 = psi_2 = k sqrt(S) / 2 (element products). (a) Following successors from a
  product stays in its group (b, tile, c_out): products, channel sums, A^T Pi entries and
  outputs of that group only, so the groups a set V_i touches are at most its minimum
  set, <= S. (b) Per frequency nu the products are a matrix multiply over (b, tile) x
  c_in x c_out: with their P operands in A, J operands in B and group in C there are at
  most sqrt(|A| |B| |C|) of them (Loomis-Whitney; brute force on random subsets). (c) Every
  P and J entry feeds products of its own frequency only, so the A_nu and B_nu of the
  frequencies are disjoint and sum_nu (|A_nu| + |B_nu|) <= k. With Cauchy-Schwarz over nu
  (test_frequency_cauchy_schwarz) and |C| <= S: <= sqrt(|A||B| S) <= k sqrt(S) / 2.
* phi_3 = psi_3 = k (channel sums). The sums form binary in-trees (every sum has two
  predecessors, at most one successor that is a sum), so any set U of sums has at most as
  many vertices as predecessors outside U, its leaves: sums not in D <= generated leaves
  (brute force on random subsets).
* phi_4 = e n S + S (output transform). Following successors from an A^T Pi entry reaches
  only outputs of its group, outputs have no successors, and a group has at most e n A^T
  Pi entries: at most S groups (the minimum set), e n entries each, plus the outputs of V_i,
  which are all in the minimum set (<= S).
"""

import math
from collections import defaultdict
from itertools import combinations

import networkx as nx
import numpy as np

from dataflow.dag_winograd import winograd_conv_dag
from iobound.layer import ConvLayer

#: (e, r, h_in, padding, c_in, c_out, n): full tiles, borders, padding, a batch of two,
#: F(2), F(3), F(4), 2x2 and 5x5 kernels
CASES = ((2, 3, 6, 0, 2, 2, 1), (2, 3, 7, 1, 2, 3, 2), (3, 2, 8, 0, 3, 2, 1),
         (4, 3, 9, 1, 1, 2, 1), (2, 5, 8, 2, 2, 2, 2))


def _dag(case):
    e, r, h, p, ci, co, n = case
    layer = ConvLayer(n=n, c_in=ci, h_in=h, w_in=h, c_out=co, k_h=r, k_w=r, padding=(p, p))
    return e, r, winograd_conv_dag(layer, e)


def _group(d: dict, e: int):
    """(b, tile row, tile column, c_out) of a step-2..4 vertex."""
    if d["kind"] == "output":
        return d["b"], d["oh"] // e, d["ow"] // e, d["co"]
    return d["b"], d["th"], d["tw"], d["co"]


def _kind(dag, v) -> str:
    d = dag.nodes[v]
    return d["kind"] if d["kind"] != "transform" else d["transform"] + "_transform"


def test_products_and_their_successors_stay_in_one_group():
    """phi_2's and phi_4's following-successors claim."""
    for case in CASES:
        e, _, dag = _dag(case)
        checked = 0
        for v, d in dag.nodes(data=True):
            if d["kind"] == "product" or _kind(dag, v) == "output_transform":
                below = nx.descendants(dag, v)
                allowed = (("product", "sum", "output_transform", "output")
                           if d["kind"] == "product" else ("output_transform", "output"))
                assert below and all(_kind(dag, u) in allowed for u in below), (case, v)
                assert {_group(dag.nodes[u], e) for u in below} == {_group(d, e)}, (case, v)
                assert any(dag.nodes[u]["kind"] == "output" for u in below)
                checked += 1
        assert checked


def test_a_group_has_at_most_e_n_output_transform_entries_and_outputs_are_sinks():
    """phi_4's e n entries a group; outputs end every path."""
    for case in CASES:
        e, r, dag = _dag(case)
        n = e + r - 1
        per_group = defaultdict(int)
        for v, d in dag.nodes(data=True):
            if _kind(dag, v) == "output_transform":
                per_group[_group(d, e)] += 1
            if d["kind"] == "output":
                assert dag.out_degree(v) == 0
        assert per_group and max(per_group.values()) <= e * n
        assert e * n in per_group.values()  # reached by a full tile


def test_products_of_a_frequency_obey_loomis_whitney():
    """Products of one frequency with their P operand in A, J operand in B and group in C
    number at most sqrt(|A| |B| |C|), on random subsets and on the whole frequency."""
    rng = np.random.default_rng(7)
    for case in CASES:
        e, _, dag = _dag(case)
        by_freq = defaultdict(list)  # nu -> (P operand, J operand, group) of each product
        for v, d in dag.nodes(data=True):
            if d["kind"] == "product":
                preds = list(dag.predecessors(v))
                p = next(u for u in preds if _kind(dag, u) == "input_transform")
                j = next(u for u in preds if _kind(dag, u) == "kernel_transform")
                by_freq[(d["i"], d["j"])].append((p, j, _group(d, e)))
        for triples in by_freq.values():
            ps, js, gs = (sorted({t[k] for t in triples}) for k in range(3))
            for _ in range(60):
                a = {ps[i] for i in rng.choice(len(ps), rng.integers(1, len(ps) + 1), replace=False)}
                b = {js[i] for i in rng.choice(len(js), rng.integers(1, len(js) + 1), replace=False)}
                c = {gs[i] for i in rng.choice(len(gs), rng.integers(1, len(gs) + 1), replace=False)}
                count = sum(1 for p, j, g in triples if p in a and j in b and g in c)
                assert count <= math.sqrt(len(a) * len(b) * len(c)) + 1e-9
            assert len(triples) <= math.sqrt(len(ps) * len(js) * len(gs)) + 1e-9


def test_channel_sums_are_binary_in_trees():
    """phi_3's forest count: every sum has two predecessors and at most one sum successor,
    so a set U of sums has at most as many vertices as predecessors outside U (random
    subsets, and every subset of one small tree)."""
    rng = np.random.default_rng(3)
    for case in CASES:
        _, _, dag = _dag(case)
        sums = [v for v, d in dag.nodes(data=True) if d["kind"] == "sum"]
        if case[4] == 1:  # one input channel: no channel sums at all
            assert not sums
            continue
        for v in sums:
            assert dag.in_degree(v) == 2
            assert sum(1 for u in dag.successors(v) if dag.nodes[u]["kind"] == "sum") <= 1

        def leaves(u_set):
            return {p for u in u_set for p in dag.predecessors(u)} - u_set

        for _ in range(300):
            u_set = {sums[i] for i in rng.choice(len(sums), rng.integers(1, min(len(sums), 40) + 1),
                                                 replace=False)}
            assert len(u_set) <= len(leaves(u_set))
        root = next(v for v in sums
                    if not any(dag.nodes[u]["kind"] == "sum" for u in dag.successors(v)))
        tree = [root] + [u for u in nx.ancestors(dag, root) if dag.nodes[u]["kind"] == "sum"]
        for size in range(1, len(tree) + 1):
            for u_set in combinations(tree, size):
                assert size <= len(leaves(set(u_set)))


def test_each_transformed_entry_feeds_one_frequency():
    """phi_2's sum over frequencies: a P entry (input transform, second pass) and a J entry
    (kernel transform, second pass) feed products of their own frequency (i, j) only."""
    for case in CASES:
        _, _, dag = _dag(case)
        fed = 0
        for v, d in dag.nodes(data=True):
            if d["kind"] == "transform" and d.get("stage") == 2 and d["transform"] != "output":
                freqs = {(dag.nodes[u]["i"], dag.nodes[u]["j"]) for u in dag.successors(v)
                         if dag.nodes[u]["kind"] == "product"}
                assert freqs <= {(d["i"], d["j"])}, (case, v, freqs)
                fed += bool(freqs)
        assert fed
