"""Check the multi-step partition property (paper Def. 4.1) of a DAG's step labels.

A DAG decomposed into sub-DAGs ``G_1 .. G_n`` is a *multi-step partition* when every input
vertex of ``G_j`` is an output vertex of ``G_{j-1}`` and the internal vertex sets are
disjoint. Here the decomposition is given by an integer vertex attribute (``step``):

* step 0 holds exactly the DAG's sources (the inputs of ``G_1``, which start blue);
* ``G_j``'s internal vertices are those labelled ``j`` (one label each, so the internal
  sets are disjoint by construction); its input vertices are the predecessors of its
  internal vertices that carry another label; its output vertices are its internal vertices
  with a successor outside ``G_j`` or with no successor at all.

So the property is: for every edge ``u -> v`` with ``step(u) != step(v)``, ``step(u)`` is
the step right before ``step(v)``. Steps are the labels present, in increasing order, so an
empty sub-computation (e.g. Winograd's channel sum when ``c_in == 1``) is skipped and "the
previous step" is the previous non-empty one.

Examples
--------
>>> import networkx as nx
>>> g = nx.DiGraph()
>>> g.add_nodes_from([("a", {"step": 0}), ("b", {"step": 1}), ("c", {"step": 2})])
>>> g.add_edges_from([("a", "b"), ("b", "c")])
>>> check_multistep_partition(g).ok
True
>>> g.add_edge("a", "c")
>>> res = check_multistep_partition(g)
>>> res.ok, res.violations[0].rule
(False, 'input_not_previous_output')
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import networkx as nx

from iobound import limits
from iobound.errors import InvalidInputError

from .pebble_moves import check_dag

__all__ = ["PartitionViolation", "PartitionCheck", "StepPart", "check_multistep_partition",
           "step_parts"]


@dataclass(frozen=True)
class PartitionViolation:
    """One failure of Def. 4.1.

    Attributes
    ----------
    rule : str
        ``"missing_step"`` (no integer label), ``"source_not_step0"`` (a source labelled
        otherwise), ``"step0_not_source"`` (a non-source labelled 0), or
        ``"input_not_previous_output"`` (an edge into step ``j`` from a step other than the
        previous one, which includes edges going backwards).
    where : tuple
        The vertex ``(v,)`` or the edge ``(u, v)``.
    detail : str
        A readable explanation with the steps involved.

    Examples
    --------
    >>> import networkx as nx
    >>> v = check_multistep_partition(nx.DiGraph([("a", "b")])).violations[0]  # no labels
    >>> v.rule, v.where, v.detail
    ('missing_step', ('a',), 'vertex has step=None, not an integer >= 0')
    """

    rule: str
    where: tuple
    detail: str


@dataclass(frozen=True)
class StepPart:
    """Sub-DAG ``G_j`` of a partition: internal, input and output vertex counts.

    Examples
    --------
    The direct DAG's two steps (products, then summation trees) of a 2x2 kernel, 2 channels:

    >>> from iobound import ConvLayer
    >>> from dataflow.dag_direct import direct_conv_dag
    >>> products, sums = step_parts(direct_conv_dag(ConvLayer(1, 2, 3, 3, 1, 2, 2)))
    >>> products
    StepPart(step=1, internal=32, inputs=26, outputs=32)
    >>> sums.internal, sums.inputs, sums.outputs
    (28, 32, 4)
    """

    step: int
    internal: int
    inputs: int
    outputs: int


@dataclass(frozen=True)
class PartitionCheck:
    """Result of :func:`check_multistep_partition`.

    Attributes
    ----------
    ok : bool
        True when the labels form a multi-step partition.
    steps : tuple[int, ...]
        The non-zero step labels present, in order.
    violations : tuple[PartitionViolation, ...]
        Up to ``max_violations`` failures (empty when ``ok``).
    n_violations : int
        How many failures there are in all.

    Examples
    --------
    >>> import networkx as nx
    >>> res = check_multistep_partition(nx.DiGraph([("a", "b")]), max_violations=1)
    >>> bool(res), res.steps, len(res.violations), res.n_violations  # both vertices unlabelled
    (False, (), 1, 2)
    >>> res.summary()
    "2 violation(s); first: missing_step at ('a',): vertex has step=None, not an integer >= 0"
    """

    ok: bool
    steps: tuple[int, ...]
    violations: tuple[PartitionViolation, ...]
    n_violations: int

    def __bool__(self) -> bool:
        return self.ok

    def summary(self) -> str:
        """One line: OK, or the count and the first failure."""
        if self.ok:
            return f"multi-step partition OK (steps {list(self.steps)})"
        v = self.violations[0]
        return f"{self.n_violations} violation(s); first: {v.rule} at {v.where}: {v.detail}"


def _step(label) -> int | None:
    """A vertex's step label as an int (numpy's integers too), None unless an integer >= 0
    (a bool is no step)."""
    if isinstance(label, numbers.Integral) and not isinstance(label, bool) and label >= 0:
        return int(label)
    return None


def _check_attr(attr) -> None:
    if not isinstance(attr, str) or not attr:
        raise InvalidInputError(f"attr must be a vertex attribute's name (a non-empty str), "
                                f"got {attr!r}")


def check_multistep_partition(dag: nx.DiGraph, attr: str = "step",
                              max_violations: int = 20) -> PartitionCheck:
    """Check Def. 4.1 for the sub-DAGs given by the vertex attribute ``attr``.

    Parameters
    ----------
    dag : networkx.DiGraph
        The computation DAG.
    attr : str
        Name of the integer step label.
    max_violations : int
        Keep at most this many violations in the result (all are counted).

    Returns
    -------
    PartitionCheck
        ``ok`` and which rule failed where.

    Raises
    ------
    InvalidInputError
        When ``dag`` is no ``networkx.DiGraph`` without a cycle, or ``max_violations`` is
        no integer >= 0.

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> from dataflow import direct_conv_dag
    >>> check_multistep_partition(direct_conv_dag(ConvLayer(1, 4, 6, 6, 4, 3, 3, padding=1)))
    PartitionCheck(ok=True, steps=(1, 2), violations=(), n_violations=0)
    """
    check_dag(dag)
    _check_attr(attr)
    max_violations = limits.check_int("max_violations", max_violations,
                                      limits.Limit(0, limits.DAG_VERTICES.high, "violations kept"))
    found: list[PartitionViolation] = []
    count = 0

    def fail(rule: str, where: tuple, detail: str) -> None:
        nonlocal count
        count += 1
        if len(found) < max_violations:
            found.append(PartitionViolation(rule, where, detail))

    label: dict = {}
    for v, given in dag.nodes(data=attr):
        s = _step(given)
        if s is None:
            fail("missing_step", (v,), f"vertex has {attr}={given!r}, not an integer >= 0")
            continue
        label[v] = s
        is_source = dag.in_degree(v) == 0
        if is_source and s != 0:
            fail("source_not_step0", (v,), f"a source must be step 0, got {s}")
        elif not is_source and s == 0:
            fail("step0_not_source", (v,), "step 0 is for sources only, but it has predecessors")
    steps = tuple(sorted({s for s in label.values() if s > 0}))
    previous = {s: p for p, s in zip((0,) + steps, steps)}
    for u, v in dag.edges:
        su, sv = label.get(u), label.get(v)
        if su is None or sv is None or su == sv:
            continue
        if sv not in previous or previous[sv] != su:
            want = previous.get(sv, "none")
            fail("input_not_previous_output", (u, v),
                 f"an input of step {sv} comes from step {su}; it must be an output of step {want}")
    return PartitionCheck(ok=count == 0, steps=steps, violations=tuple(found), n_violations=count)


def step_parts(dag: nx.DiGraph, attr: str = "step") -> tuple[StepPart, ...]:
    """Sizes of the sub-DAGs ``G_j`` (internal, input and output vertices) per step ``j > 0``.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([("a", "b"), ("b", "c")])
    >>> nx.set_node_attributes(g, {"a": 0, "b": 1, "c": 2}, "step")
    >>> step_parts(g)
    (StepPart(step=1, internal=1, inputs=1, outputs=1), StepPart(step=2, internal=1, inputs=1, outputs=1))
    """
    check_dag(dag)
    _check_attr(attr)
    label = {v: _step(x) for v, x in dag.nodes(data=attr)}
    if dag.number_of_nodes() and all(x is None for _, x in dag.nodes(data=attr)):
        raise InvalidInputError(f"no vertex has the step attribute {attr!r}")
    parts = []
    for s in sorted({x for x in label.values() if x is not None and x > 0}):
        internal = [v for v, x in label.items() if x == s]
        inputs = {u for v in internal for u in dag.predecessors(v) if label[u] != s}
        outputs = [v for v in internal
                   if dag.out_degree(v) == 0 or any(label[w] != s for w in dag.successors(v))]
        parts.append(StepPart(s, len(internal), len(inputs), len(outputs)))
    return tuple(parts)
