"""The computation DAG of a direct convolution (the paper's Fig. 4), built with NetworkX.

Vertices (hashable tuple keys; every vertex carries ``kind``, ``step`` and coordinates):

========================================  =========  ====  ==========================
key                                       kind       step  meaning
========================================  =========  ====  ==========================
``("in", b, c, h, w)``                    input      0     an in-bounds input element
``("w", co, ci, i, j)``                   weight     0     a kernel weight
``("prod", b, co, oh, ow, ci, i, j)``     product    1     ``w[co,ci,i,j] * in[b,ci,h,w]``
``("sum", b, co, oh, ow, k)``             sum        2     partial sum of terms ``0..k``
``("out", b, co, oh, ow)``                output     2     the root of the summation tree
========================================  =========  ====  ==========================

Conventions (the vertex count of :func:`iobound.vertex_counts.direct_vertex_count` follows
them exactly):

* Padding zeros are not vertices, and neither are products with them: an output whose
  window holds ``t`` in-bounds taps over all channels has ``t`` product vertices and a
  binary summation tree of ``t - 1`` addition vertices whose root is the output, i.e.
  ``2 t - 1`` vertices (Lemma 4.7 when there is no padding: ``t = c_in k_h k_w``).
* The tree is the accumulation chain in the order (ci, i, j): ``sum_1 = p_0 + p_1``,
  ``sum_k = sum_{k-1} + p_k``, and the last one is the output ``("out", ...)``. With a single
  term (``t == 1``) the product itself is the output (key ``("out", ...)``, kind output,
  step 1). An output with ``t == 0`` (its window lies entirely in the padding) is the
  constant zero and is not a vertex.
* Only used inputs and weights are vertices (an input skipped by a stride larger than the
  kernel extent, or a weight that only ever meets padding, is not part of the computation).
* Groups (``layer.groups = G``): output channel ``co`` of group ``g = co // (c_out/G)``
  reads only the input channels ``g c_in/G .. (g+1) c_in/G - 1`` (global indices in the
  keys); the DAG is the disjoint union of G dense DAGs (:func:`group_channels`).

Every non-source vertex has ``op``: ``"mul"`` (product of its two predecessors) or
``"add"`` (their sum), so the DAG can be evaluated numerically (see the tests).

Step 0 holds the sources (they start with blue pebbles); steps 1 and 2 are the paper's two
sub-computations (products; summation trees), see :mod:`dataflow.partition`.

Examples
--------
>>> from iobound import ConvLayer
>>> layer = ConvLayer(n=1, c_in=2, h_in=3, w_in=3, c_out=1, k_h=2, k_w=2)
>>> g = direct_conv_dag(layer)
>>> g.number_of_nodes()  # 18 inputs + 8 weights + 4 outputs * (2*8 - 1)
86
>>> g.nodes[("out", 0, 0, 1, 1)]["kind"], g.in_degree(("out", 0, 0, 1, 1))
('output', 2)
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import networkx as nx

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, takes_layer

from .pebble_moves import check_dag

__all__ = ["MAX_VERTICES", "check_dag_size", "direct_chain", "direct_conv_dag", "direct_taps",
           "evaluate_dag", "group_channels"]

#: Builders refuse layers whose DAG would exceed this many vertices.
MAX_VERTICES = 2_000_000


def check_dag_size(estimate: int, what: str, limit: int = MAX_VERTICES) -> None:
    """Raise ValueError when a DAG of about ``estimate`` vertices exceeds ``limit`` (an
    integer in :data:`iobound.limits.DAG_VERTICES`: NaN or an infinity must not switch
    the cap off).

    Examples
    --------
    >>> check_dag_size(86, "direct convolution")   # within the cap: nothing happens
    >>> check_dag_size(10, "direct convolution", limit=float("nan"))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: max_vertices must be an integer, got nan
    """
    limit = limits.check_int("max_vertices", limit, limits.DAG_VERTICES)
    if isinstance(estimate, bool) or not isinstance(estimate, numbers.Integral):
        raise InvalidInputError(f"the vertex estimate must be an integer, got {estimate!r:.60}")
    if estimate > limit:
        raise InvalidInputError(
            f"the {what} DAG would have up to {estimate:,} vertices, more than the limit "
            f"{limit:,}; use a smaller layer (DAGs are for tests and tiny examples)")


@takes_layer
def direct_taps(layer: ConvLayer, oh: int, ow: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """In-bounds kernel taps of output ``(oh, ow)``: ``([(i, h), ...], [(j, w), ...])``.

    >>> from iobound import ConvLayer
    >>> direct_taps(ConvLayer(1, 1, 3, 3, 1, 3, 3, padding=1), 0, 2)
    ([(1, 0), (2, 1)], [(0, 1), (1, 2)])
    """
    oh = limits.check_int("oh", oh, limits.Limit(0, layer.h_out - 1, "an output row"))
    ow = limits.check_int("ow", ow, limits.Limit(0, layer.w_out - 1, "an output column"))
    rows = [(i, oh * layer.stride[0] + i * layer.dilation[0] - layer.padding[0])
            for i in range(layer.k_h)]
    cols = [(j, ow * layer.stride[1] + j * layer.dilation[1] - layer.padding[1])
            for j in range(layer.k_w)]
    return ([(i, h) for i, h in rows if 0 <= h < layer.h_in],
            [(j, w) for j, w in cols if 0 <= w < layer.w_in])


@takes_layer
def group_channels(layer: ConvLayer, co: int) -> range:
    """The input channels output channel ``co`` reads (all of them when ``groups == 1``).

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> group_channels(ConvLayer(1, 4, 3, 3, 6, 1, 1, groups=2), 4)
    range(2, 4)
    """
    co = limits.check_int("co", co, limits.Limit(0, layer.c_out - 1, "an output channel"))
    cg = layer.c_in_per_group
    start = co // layer.c_out_per_group * cg
    return range(start, start + cg)


def _index(name: str, value, size: int, dim: str) -> int:
    """``value`` as an index ``0..size - 1`` along ``dim`` (InvalidInputError naming ``name``)."""
    return limits.check_int(name, value, limits.Limit(0, size - 1, f"{dim}={size}"))


@takes_layer
def direct_chain(layer: ConvLayer, b: int, co: int, oh: int, ow: int) -> list[tuple[int, tuple]]:
    """The computation order of one output's product/sum chain as ``[(ci, vertex), ...]``.

    Products and partial sums interleave (``p_0, p_1, sum_1, p_2, sum_2, ..., out``); ``ci``
    is the input channel of the term the vertex adds, so the entries of a channel chunk are
    contiguous. Empty when the output's window lies in the padding.

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=2, h_in=1, w_in=1, c_out=1, k_h=1, k_w=1)
    >>> direct_chain(layer, 0, 0, 0, 0)
    [(0, ('prod', 0, 0, 0, 0, 0, 0, 0)), (1, ('prod', 0, 0, 0, 0, 1, 0, 0)), (1, ('out', 0, 0, 0, 0))]
    >>> direct_chain(layer, 0, 0, 0, -1)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: ow=-1 is below the minimum 0
    """
    b, co = _index("b", b, layer.n, "n"), _index("co", co, layer.c_out, "c_out")
    oh, ow = _index("oh", oh, layer.h_out, "h_out"), _index("ow", ow, layer.w_out, "w_out")
    rows, cols = direct_taps(layer, oh, ow)
    terms = [(ci, ("prod", b, co, oh, ow, ci, i, j))
             for ci in group_channels(layer, co) for i, _ in rows for j, _ in cols]
    t = len(terms)
    if t == 0:
        return []
    if t == 1:
        return [(terms[0][0], ("out", b, co, oh, ow))]
    order = [terms[0]]
    for k in range(1, t):
        order.append(terms[k])
        key = ("out", b, co, oh, ow) if k == t - 1 else ("sum", b, co, oh, ow, k)
        order.append((terms[k][0], key))
    return order


def _size_estimate(layer: ConvLayer) -> int:
    return layer.input_size + layer.weight_size + 2 * layer.macs


@takes_layer
def direct_conv_dag(layer: ConvLayer, max_vertices: int = MAX_VERTICES) -> nx.DiGraph:
    """Build the computation DAG of the direct convolution of ``layer``.

    Parameters
    ----------
    layer : ConvLayer
        Any layer (stride, padding, dilation and non-square shapes are supported).
    max_vertices : int
        Refuse layers whose DAG could exceed this many vertices.

    Returns
    -------
    networkx.DiGraph
        Vertices as in the module docstring; ``graph.graph`` holds ``layer``,
        ``algorithm="direct"`` and ``steps=2``.

    Raises
    ------
    InvalidInputError
        When the DAG would be larger than ``max_vertices`` (the message gives the size).

    Examples
    --------
    The size :func:`iobound.direct_vertex_count` counts without building (a padded layer here); the
    presets' DAGs are refused:

    >>> from iobound import ConvLayer, get_layer, direct_vertex_count
    >>> layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=3, k_h=3, k_w=3, padding=1)
    >>> direct_conv_dag(layer).number_of_nodes(), direct_vertex_count(layer)
    (1238, 1238)
    >>> direct_conv_dag(get_layer("vgg16.conv3_2"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the ... DAG would have up to ... vertices, more than ...
    """
    check_dag_size(_size_estimate(layer), "direct convolution", max_vertices)
    g = nx.DiGraph(layer=layer, algorithm="direct", steps=2)
    nodes: dict[tuple, dict] = {}
    edges: list[tuple[tuple, tuple]] = []
    for oh in range(layer.h_out):
        for ow in range(layer.w_out):
            rows, cols = direct_taps(layer, oh, ow)
            t = layer.c_in_per_group * len(rows) * len(cols)
            if t == 0:
                continue
            for b in range(layer.n):
                for co in range(layer.c_out):
                    _output_chain(layer, nodes, edges, (b, co, oh, ow), rows, cols, t)
    g.add_nodes_from(nodes.items())
    g.add_edges_from(edges)
    return g


def _output_chain(layer: ConvLayer, nodes: dict, edges: list, at: tuple, rows, cols,
                  t: int) -> None:
    """Add output ``at = (b, co, oh, ow)``, its ``t`` products and their summation chain
    (with its inputs and weights) to ``nodes`` and ``edges``."""
    b, co, oh, ow = at
    out = ("out", b, co, oh, ow)
    nodes[out] = dict(kind="output", step=1 if t == 1 else 2, op="mul" if t == 1 else "add",
                      b=b, co=co, oh=oh, ow=ow)
    k = 0
    prev = None
    for ci in group_channels(layer, co):
        for i, h in rows:
            for j, w in cols:
                x, wt = ("in", b, ci, h, w), ("w", co, ci, i, j)
                nodes[x] = dict(kind="input", step=0, b=b, c=ci, h=h, w=w)
                nodes[wt] = dict(kind="weight", step=0, co=co, ci=ci, i=i, j=j)
                if t == 1:
                    edges += [(x, out), (wt, out)]
                    continue
                p = ("prod", b, co, oh, ow, ci, i, j)
                nodes[p] = dict(kind="product", step=1, op="mul", b=b, co=co, oh=oh,
                                ow=ow, ci=ci, i=i, j=j)
                edges += [(x, p), (wt, p)]
                if k > 0:
                    s = out if k == t - 1 else ("sum", b, co, oh, ow, k)
                    if s is not out:
                        nodes[s] = dict(kind="sum", step=2, op="add", b=b, co=co, oh=oh, ow=ow, k=k)
                    edges += [(prev, s), (p, s)]
                    prev = s
                else:
                    prev = p
                k += 1


def evaluate_dag(dag: nx.DiGraph, sources: dict) -> dict:
    """Evaluate every vertex of a conv DAG from the values of its sources.

    Each non-source vertex's ``op`` says how: ``"mul"`` multiplies its predecessors,
    ``"add"`` adds them, ``"lin"`` sums ``coef * value`` over its in-edges. ``sources`` maps
    every source (at least) to its value; a source without one, or a vertex without a
    known ``op``, is an InvalidInputError.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([("a", "c"), ("b", "c")])
    >>> g.nodes["c"]["op"] = "mul"
    >>> evaluate_dag(g, {"a": 2.0, "b": 3.0})["c"]
    6.0
    """
    check_dag(dag)
    if not isinstance(sources, Mapping):
        raise InvalidInputError(f"sources must be a mapping of source vertices to values, "
                                f"got {type(sources).__name__}")
    val = dict(sources)
    for v in nx.topological_sort(dag):
        if v in val:
            continue
        op = dag.nodes[v].get("op")
        preds = list(dag.predecessors(v))
        if not preds:
            raise InvalidInputError(f"source {v!r} has no value in sources")
        if op == "mul":
            x = 1.0
            for u in preds:
                x *= val[u]
        elif op == "add":
            x = sum(val[u] for u in preds)
        elif op == "lin":
            x = sum(d["coef"] * val[u] for u, _, d in dag.in_edges(v, data=True))
        else:
            raise InvalidInputError(f"vertex {v!r} has no known op (got {op!r})")
        val[v] = x
    return val
