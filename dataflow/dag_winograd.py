"""The computation DAG of Winograd convolution F(e x e, r x r), built with NetworkX.

The four sub-computations of the paper (Fig. 3) are steps 1-4; step 0 holds the sources.
Output tiles ``(th, tw)`` cover output rows ``th*e .. th*e+e-1`` (likewise columns); the
input tile of ``(th, tw)`` starts at input row ``th*e - p_h``. Transforms are separable and
done rows first: ``T1 = B^T d``, ``P = T1 B``; ``U1 = G g``, ``J = U1 G^T``;
``Z = A^T Pi``, ``Y = Z A``. Matrices come from :func:`iobound.winograd_transforms`.

==============================================  =========  ====  =============================
key                                             kind       step  meaning
==============================================  =========  ====  =============================
``("in", b, c, h, w)``                          input      0     an in-bounds input element
``("w", co, ci, k, l)``                         weight     0     a raw kernel weight (r x r)
``("bt1", b, ci, th, tw, i, l)``                transform  1     ``(B^T d)[i, l]``
``("bt", b, ci, th, tw, i, j)``                 transform  1     ``P[i, j] = (B^T d B)[i, j]``
``("g1", co, ci, i, l)``                        transform  1     ``(G g)[i, l]``
``("g", co, ci, i, j)``                         transform  1     ``J[i, j] = (G g G^T)[i, j]``
``("wprod", b, co, th, tw, i, j, ci)``          product    2     ``P[i, j] * J[i, j]`` (channel ci)
``("wsum", b, co, th, tw, i, j, k)``            sum        3     channels ``0..k`` summed
``("pi", b, co, th, tw, i, j)``                 sum        3     ``Pi[i, j]``, all channels
``("at1", b, co, th, tw, a, j)``                transform  4     ``(A^T Pi)[a, j]``
``("out", b, co, oh, ow)``                      output     4     ``Y = A^T Pi A`` entry
==============================================  =========  ====  =============================

Conventions (the count :func:`iobound.winograd_vertex_counts.winograd_vertex_count` follows them):

* Transform entries. Each entry of a transform pass is ONE vertex, a linear combination
  whose predecessors are the entries with a nonzero coefficient. Coefficients (0, +-1 or
  any other constant) are not vertices: the matrices are constants held on chip, as the
  paper assumes. A zero coefficient is no edge; a single-term entry (a copy or a scaling,
  e.g. the rows of ``B^T`` for the points 0 and infinity after padding) is still a vertex.
* Zeros are not vertices: padding inputs and positions beyond the input are the constant
  0, and so is every entry all of whose terms are zero (it has no vertex, and terms with it
  have no edge).
* Only what an output needs: outputs beyond ``h_out``/``w_out`` in border tiles are not
  computed, and every vertex without a path to a computed output is removed (an unused
  ``Pi`` row, its products, transforms, kernel transforms and raw weights).
* Every non-source vertex has ``op``: ``"lin"`` (sum of ``coef * pred`` over its in-edges,
  the edge attribute ``coef`` being the transform coefficient), ``"mul"`` or ``"add"``; the
  DAG evaluates to the convolution (tested against numpy).
* The channel sum of ``Pi[i, j]`` is the chain over ``ci`` ascending; with ``c_in == 1``
  the product itself is ``Pi`` (key ``("pi", ...)``, kind product, step 2, and step 3 is
  empty).

Examples
--------
>>> from iobound import ConvLayer
>>> layer = ConvLayer(n=1, c_in=1, h_in=4, w_in=4, c_out=1, k_h=3, k_w=3)
>>> g = winograd_conv_dag(layer, 2)
>>> sorted({d["kind"] for _, d in g.nodes(data=True)})
['input', 'output', 'product', 'transform', 'weight']
>>> g.number_of_nodes()  # 16+9 sources, 16+16 and 12+16 transforms, 16 products, 8+4
113
"""

from __future__ import annotations

from collections import deque

import networkx as nx

from iobound import limits
from iobound.layer import ConvLayer, takes_layer
from iobound.winograd_transforms import winograd_transforms

from .dag_direct import MAX_VERTICES, check_dag_size

__all__ = ["winograd_conv_dag", "winograd_supports"]


def winograd_supports(e: int, r: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Nonzero columns per row of ``(A^T, G, B^T)``: ``supports[m][row]`` is a tuple of columns.

    Examples
    --------
    >>> a_t, g, b_t = winograd_supports(2, 3)   # F(2x2, 3x3)
    >>> a_t
    ((0, 1, 2), (1, 2, 3))
    >>> b_t
    ((0, 2), (1, 2), (1, 2), (1, 3))
    """
    t = winograd_transforms(e, r)
    return tuple(tuple(tuple(c for c in range(m.cols) if m[row, c] != 0) for row in range(m.rows))
                 for m in (t.AT, t.G, t.BT))


def _coefs(e: int, r: int) -> tuple[list[list[float]], ...]:
    """``(A^T, G, B^T)`` as nested lists of floats."""
    return tuple(m.tolist() for m in winograd_transforms(e, r).as_numpy())


def _size_estimate(layer: ConvLayer, e: int) -> int:
    r, nn = layer.k_h, e + layer.k_h - 1
    th, tw = layer.winograd_tiles(e)
    tiles = layer.n * th * tw
    per_out = e * e + e * nn + (2 * layer.c_in - 1) * nn * nn
    return (layer.input_size + layer.weight_size + tiles * layer.c_out * per_out
            + tiles * layer.c_in * 2 * nn * nn + layer.c_out * layer.c_in * (nn * nn + nn * r))


class _Builder:
    """Vertices and edges of one layer's Winograd DAG, added step by step (insertion order
    is the vertex order of the graph)."""

    def __init__(self, layer: ConvLayer, e: int) -> None:
        self.nodes: dict[tuple, dict] = {}
        self.edges: list[tuple[tuple, tuple]] = []
        self.layer, self.e, self.r, self.nn = layer, e, layer.k_h, e + layer.k_h - 1
        self.sup_at, self.sup_g, self.sup_bt = winograd_supports(e, self.r)
        self.c_at, self.c_g, self.c_bt = _coefs(e, self.r)

    def source(self, key: tuple, attrs: dict) -> tuple:
        self.nodes[key] = attrs
        return key

    def combine(self, key: tuple, preds: list, attrs: dict, coefs: list | None = None) -> tuple | None:
        """Add ``key`` with the non-None ``preds``; None (the constant 0) when there are none.

        ``coefs`` (one per pred) become the edges' ``coef`` of a linear combination.
        """
        coefs = coefs if coefs is not None else [1.0] * len(preds)
        terms = [(p, c) for p, c in zip(preds, coefs) if p is not None]
        if not terms:
            return None
        self.nodes[key] = attrs
        self.edges.extend((p, key, {"coef": c}) for p, c in terms)
        return key

    def kernel_transform(self, co: int, ci: int) -> list[list]:
        """Step 1 for one (co, ci): G g G^T, two separable passes; the nn x nn vertices."""
        r, nn, sup, c = self.r, self.nn, self.sup_g, self.c_g
        gw = [[self.source(("w", co, ci, k, l), dict(kind="weight", step=0, co=co, ci=ci, i=k, j=l))
               for l in range(r)] for k in range(r)]
        u1 = [[self.combine(("g1", co, ci, i, l), [gw[k][l] for k in sup[i]],
                            dict(kind="transform", step=1, op="lin", transform="kernel",
                                 stage=1, co=co, ci=ci, i=i, j=l), [c[i][k] for k in sup[i]])
               for l in range(r)] for i in range(nn)]
        return [[self.combine(("g", co, ci, i, j), [u1[i][l] for l in sup[j]],
                              dict(kind="transform", step=1, op="lin", transform="kernel",
                                   stage=2, co=co, ci=ci, i=i, j=j), [c[j][l] for l in sup[j]])
                 for j in range(nn)] for i in range(nn)]

    def input_transform(self, ci: int, coords: dict) -> list[list]:
        """Step 1 for one input channel of one tile: B^T d B over its in-bounds inputs."""
        layer, e, nn, sup, c = self.layer, self.e, self.nn, self.sup_bt, self.c_bt
        b, th, tw = coords["b"], coords["th"], coords["tw"]
        ph, pw = layer.padding
        d = [[None] * nn for _ in range(nn)]
        for k in range(nn):
            h = th * e + k - ph
            for l in range(nn):
                w = tw * e + l - pw
                if 0 <= h < layer.h_in and 0 <= w < layer.w_in:
                    d[k][l] = self.source(("in", b, ci, h, w),
                                          dict(kind="input", step=0, b=b, c=ci, h=h, w=w))
        t1 = [[self.combine(("bt1", b, ci, th, tw, i, l), [d[k][l] for k in sup[i]],
                            dict(kind="transform", step=1, op="lin", transform="input",
                                 stage=1, ci=ci, i=i, j=l, **coords), [c[i][k] for k in sup[i]])
               for l in range(nn)] for i in range(nn)]
        return [[self.combine(("bt", b, ci, th, tw, i, j), [t1[i][l] for l in sup[j]],
                              dict(kind="transform", step=1, op="lin", transform="input",
                                   stage=2, ci=ci, i=i, j=j, **coords), [c[j][l] for l in sup[j]])
                 for j in range(nn)] for i in range(nn)]

    def channel_chains(self, co: int, pt: list, jt: list, coords: dict) -> list[list]:
        """Steps 2 and 3 for one output channel of one tile: per frequency (i, j) the
        element products over the input channels, summed as one chain; its root Pi."""
        b, th, tw = coords["b"], coords["th"], coords["tw"]
        pi = [[None] * self.nn for _ in range(self.nn)]
        for i in range(self.nn):
            for j in range(self.nn):
                terms = [(ci, pt[ci][i][j], jt[ci][i][j]) for ci in range(len(pt))
                         if pt[ci][i][j] is not None and jt[ci][i][j] is not None]
                root = ("pi", b, co, th, tw, i, j)
                prev = None
                for k, (ci, p, jv) in enumerate(terms):
                    key = root if len(terms) == 1 else ("wprod", b, co, th, tw, i, j, ci)
                    prod = self.combine(key, [p, jv], dict(
                        kind="product", step=2, op="mul", co=co, ci=ci, i=i, j=j, **coords))
                    if k == 0:
                        prev = prod
                        continue
                    key = root if k == len(terms) - 1 else ("wsum", b, co, th, tw, i, j, k)
                    prev = self.combine(key, [prev, prod], dict(
                        kind="sum", step=3, op="add", co=co, i=i, j=j, k=k, **coords))
                pi[i][j] = prev
        return pi

    def output_transform(self, co: int, pi: list, coords: dict) -> None:
        """Step 4 for one output channel of one tile: A^T Pi A, only in-range outputs."""
        e, nn, sup, c = self.e, self.nn, self.sup_at, self.c_at
        b, th, tw = coords["b"], coords["th"], coords["tw"]
        z = [[self.combine(("at1", b, co, th, tw, a, j), [pi[i][j] for i in sup[a]],
                           dict(kind="transform", step=4, op="lin", transform="output",
                                stage=1, co=co, i=a, j=j, **coords), [c[a][i] for i in sup[a]])
              for j in range(nn)] for a in range(e)]
        for a in range(e):
            oh = th * e + a
            for bb in range(e):
                ow = tw * e + bb
                if oh < self.layer.h_out and ow < self.layer.w_out:
                    self.combine(("out", b, co, oh, ow), [z[a][j] for j in sup[bb]],
                                 dict(kind="output", step=4, op="lin", b=b, co=co, oh=oh, ow=ow),
                                 [c[bb][j] for j in sup[bb]])


@takes_layer
def winograd_conv_dag(layer: ConvLayer, e: int, max_vertices: int = MAX_VERTICES) -> nx.DiGraph:
    """Build the computation DAG of Winograd F(e x e, r x r) convolution of ``layer``.

    Parameters
    ----------
    layer : ConvLayer
        Stride 1, dilation 1, square kernel ``r = k_h = k_w``; any padding and input shape.
    e : int
        Output tile edge (>= 1).
    max_vertices : int
        Refuse layers whose DAG could exceed this many vertices.

    Returns
    -------
    networkx.DiGraph
        Vertices as in the module docstring; ``graph.graph`` holds ``layer``, ``e``,
        ``algorithm="winograd"`` and ``steps=4``.

    Raises
    ------
    InvalidInputError
        When Winograd does not apply to the layer, ``e < 1``, or the DAG is too large.

    Examples
    --------
    The size :func:`iobound.winograd_vertex_count` counts without building (a padded
    layer here); the presets' DAGs are refused:

    >>> from iobound import ConvLayer, get_layer, winograd_vertex_count
    >>> layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=3, k_h=3, k_w=3, padding=1)
    >>> winograd_conv_dag(layer, 2).number_of_nodes(), winograd_vertex_count(layer, 2)
    (1198, 1198)
    >>> winograd_conv_dag(get_layer("vgg16.conv3_2"), 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the ... DAG would have up to ... vertices, more than ...
    """
    layer.check_winograd()
    # any integral e but a bool (numpy integers included, as everywhere else), as an int
    e = limits.check_int("Winograd e", e, limits.WINOGRAD_E)
    check_dag_size(_size_estimate(layer, e), f"Winograd F({e}x{e},{layer.k_h}x{layer.k_h})",
                   max_vertices)
    bld = _Builder(layer, e)
    jt = {(co, ci): bld.kernel_transform(co, ci)
          for co in range(layer.c_out) for ci in range(layer.c_in)}     # step 1, kernels
    tiles_h, tiles_w = layer.winograd_tiles(e)
    for b in range(layer.n):
        for th in range(tiles_h):
            for tw in range(tiles_w):
                coords = dict(b=b, th=th, tw=tw)
                pt = [bld.input_transform(ci, coords) for ci in range(layer.c_in)]  # step 1
                for co in range(layer.c_out):
                    pi = bld.channel_chains(co, pt, [jt[co, ci] for ci in range(layer.c_in)],
                                            coords)                     # steps 2 and 3
                    bld.output_transform(co, pi, coords)                # step 4
    g = nx.DiGraph(layer=layer, algorithm="winograd", e=e, steps=4)
    g.add_nodes_from(bld.nodes.items())
    g.add_edges_from(bld.edges)
    _prune_to_outputs(g)
    return g


def _prune_to_outputs(g: nx.DiGraph) -> None:
    """Remove every vertex that has no path to an output vertex."""
    keep = {v for v, kind in g.nodes(data="kind") if kind == "output"}
    queue = deque(keep)
    while queue:
        v = queue.popleft()
        for u in g.predecessors(v):
            if u not in keep:
                keep.add(u)
                queue.append(u)
    g.remove_nodes_from([v for v in list(g.nodes) if v not in keep])
