"""check_multistep_partition and step_parts against a brute-force reading of Def. 4.1.

The reference walks every vertex and edge of random labelled DAGs and applies the rules as
the module docstring states them (sources exactly at step 0; an edge between different
steps goes from the previous non-empty step, so backward and skipping edges fail); it
counts every failure. The sub-DAG sizes are recomputed with NetworkX's node boundary.
"""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings, strategies as st

from dataflow.partition import check_multistep_partition, step_parts


def reference_violations(dag: nx.DiGraph) -> list[tuple[str, tuple]]:
    """Every (rule, where) failure of Def. 4.1 for integer labels ``step``."""
    label = nx.get_node_attributes(dag, "step")
    bad = []
    for v in dag:
        src = dag.in_degree(v) == 0
        if src and label[v] != 0:
            bad.append(("source_not_step0", (v,)))
        if not src and label[v] == 0:
            bad.append(("step0_not_source", (v,)))
    steps = sorted({s for s in label.values() if s > 0})
    for u, v in dag.edges:
        su, sv = label[u], label[v]
        if su == sv:
            continue
        earlier = [0] + [s for s in steps if s < sv]
        if sv == 0 or su != max(earlier):
            bad.append(("input_not_previous_output", (u, v)))
    return bad


@st.composite
def labelled_dags(draw, layered: bool = False):
    """Random DAGs on 2..10 vertices with step labels 0..4 (``layered``: labels that follow
    the longest path from the sources, which mostly satisfy the rules)."""
    n = draw(st.integers(2, 10))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for v in range(1, n):
        for u in draw(st.sets(st.integers(0, v - 1), max_size=min(3, v))):
            g.add_edge(u, v)
    if layered:
        depth = {}
        for v in nx.topological_sort(g):
            depth[v] = max((depth[u] + 1 for u in g.predecessors(v)), default=0)
        nx.set_node_attributes(g, depth, "step")
    else:
        nx.set_node_attributes(g, {v: draw(st.integers(0, 4)) for v in g}, "step")
    return g


@settings(deadline=None, max_examples=150)
@given(st.one_of(labelled_dags(), labelled_dags(layered=True)), st.integers(0, 3))
def test_partition_check_matches_brute_force(dag, max_violations):
    """ok, the count and the kept violations agree with the brute-force rules, for any cap."""
    ref = reference_violations(dag)
    res = check_multistep_partition(dag, max_violations=max_violations)
    assert res.ok == (not ref) == bool(res)
    assert res.n_violations == len(ref)
    kept = [(x.rule, x.where) for x in res.violations]
    assert len(kept) == min(max_violations, len(ref))
    assert all(x in ref for x in kept)
    full = check_multistep_partition(dag, max_violations=len(ref) + 1)
    assert sorted(map(repr, ((x.rule, x.where) for x in full.violations))) == sorted(map(repr, ref))


def test_a_cap_of_zero_still_reports_failure():
    """max_violations=0 keeps no violation but the partition is still not ok."""
    g = nx.DiGraph([("a", "b")])
    nx.set_node_attributes(g, {"a": 0, "b": 0}, "step")
    res = check_multistep_partition(g, max_violations=0)
    assert (res.ok, res.n_violations, res.violations) == (False, 1, ())


def test_backward_edge_is_a_violation():
    """An edge from step 2 back into step 1 breaks the partition."""
    g = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "d"), ("c", "b2"), ("a", "b2")])
    nx.set_node_attributes(g, {"a": 0, "b": 1, "b2": 1, "c": 2, "d": 3}, "step")
    res = check_multistep_partition(g)
    assert not res.ok
    assert [(x.rule, x.where) for x in res.violations] == [("input_not_previous_output", ("c", "b2"))]


@settings(deadline=None, max_examples=100)
@given(labelled_dags(layered=True))
def test_step_parts_count_distinct_vertices(dag):
    """Internal, input (distinct outside predecessors) and output vertices of every G_j."""
    label = nx.get_node_attributes(dag, "step")
    rev = dag.reverse(copy=True)
    want = []
    for s in sorted({x for x in label.values() if x > 0}):
        internal = {v for v in dag if label[v] == s}
        outputs = {v for v in internal if dag.out_degree(v) == 0} | set(nx.node_boundary(rev, dag.nodes - internal, internal))
        want.append((s, len(internal), len(nx.node_boundary(rev, internal)), len(outputs)))
    assert [(p.step, p.internal, p.inputs, p.outputs) for p in step_parts(dag)] == want


def test_shared_predecessor_is_one_input():
    """Two step-1 vertices reading one source: the step has one input, not two."""
    g = nx.DiGraph([("a", "b"), ("a", "c")])
    nx.set_node_attributes(g, {"a": 0, "b": 1, "c": 1}, "step")
    assert step_parts(g)[0].inputs == 1
