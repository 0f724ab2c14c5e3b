"""The multi-step partition check (paper Def. 4.1) reports which rule fails and where."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, strategies as st

from dataflow.dag_direct import direct_conv_dag
from dataflow.partition import check_multistep_partition, step_parts
from iobound.errors import InvalidInputError
from iobound import ConvLayer


def _chain() -> nx.DiGraph:
    g = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "d")])
    nx.set_node_attributes(g, {"a": 0, "b": 1, "c": 2, "d": 3}, "step")
    return g


def test_valid_chain_passes():
    """A chain labelled 0,1,2,3 is a multi-step partition."""
    res = check_multistep_partition(_chain())
    assert res.ok and res.steps == (1, 2, 3) and res.n_violations == 0


def test_skipping_edge_fails_with_the_edge():
    """An edge from step 1 into step 3 fails, naming the edge."""
    g = _chain()
    g.add_edge("b", "d")
    res = check_multistep_partition(g)
    assert not res.ok and res.violations[0].rule == "input_not_previous_output"
    assert res.violations[0].where == ("b", "d")


def test_backward_edge_fails():
    """An edge from a later step into an earlier one fails."""
    g = _chain()
    g.add_node("x", step=3)
    g.add_edge("a", "x")
    g.add_edge("x", "c")
    rules = {v.rule for v in check_multistep_partition(g).violations}
    assert "input_not_previous_output" in rules


def test_source_with_nonzero_step_fails():
    """A source must be step 0."""
    g = _chain()
    g.nodes["a"]["step"] = 1
    res = check_multistep_partition(g)
    assert [v.rule for v in res.violations][:1] == ["source_not_step0"] and res.violations[0].where == ("a",)


def test_missing_label_fails():
    """A vertex without a step label is reported."""
    g = _chain()
    del g.nodes["c"]["step"]
    assert check_multistep_partition(g).violations[0].rule == "missing_step"


def test_relabelled_direct_dag_fails():
    """Labelling one product of a direct DAG as a sum breaks the partition there."""
    g = direct_conv_dag(ConvLayer(n=1, c_in=2, h_in=2, w_in=2, c_out=1, k_h=1, k_w=1))
    assert check_multistep_partition(g).ok
    g.nodes[("prod", 0, 0, 0, 0, 0, 0, 0)]["step"] = 2
    res = check_multistep_partition(g)
    assert not res.ok and all(v.rule == "input_not_previous_output" for v in res.violations)
    assert res.n_violations == 2  # the input and the weight edges into it


@given(st.sampled_from([int, np.int64, np.int32, np.uint8]))
def test_step_labels_of_any_integer_type_are_steps(kind):
    """numpy's integers label steps as ints do (the project's rule); a bool does not."""
    g = nx.DiGraph([("a", "b"), ("b", "c")])
    nx.set_node_attributes(g, {"a": kind(0), "b": kind(1), "c": kind(2)}, "step")
    plain = nx.DiGraph(g)
    nx.set_node_attributes(plain, {"a": 0, "b": 1, "c": 2}, "step")
    assert check_multistep_partition(g) == check_multistep_partition(plain)
    assert check_multistep_partition(g).ok and step_parts(g) == step_parts(plain)
    nx.set_node_attributes(g, {"b": True}, "step")
    assert not check_multistep_partition(g).ok
    assert [p.step for p in step_parts(g)] == [2]


@pytest.mark.parametrize("attr", [False, [1], "", None])
def test_the_step_attribute_is_a_name(attr):
    g = nx.DiGraph([("a", "b")])
    for check in (check_multistep_partition, step_parts):
        with pytest.raises(InvalidInputError, match="attr must be a vertex attribute's name"):
            check(g, attr=attr)


def test_an_attribute_no_vertex_has_is_named():
    g = nx.DiGraph([("a", "b")])
    nx.set_node_attributes(g, {"a": 0, "b": 1}, "step")
    with pytest.raises(InvalidInputError, match="no vertex has the step attribute 'stpe'"):
        step_parts(g, attr="stpe")
