"""A dataflow for a layer and a fast memory, compared with the best I/O lower bound.

:func:`evaluate_dataflow` picks the optimal tiles (or takes given ones), and reports the
exact I/O, the paper's estimate, the footprint, the optimality condition and the ratio
to :func:`iobound.report.best_lower_bound`. The bound is evaluated at the fast memory one
block may use plus 2 (``S / N_p + 2`` words, :func:`iobound.multi_block.bound_fast_memory`):
a block is a processor of the red-blue pebble game, the dataflow's footprint is at most
``S / N_p``, and the DAG needs two pebbles more for an update the kernel makes in place
(:data:`iobound.multi_block.IN_PLACE_SLACK`).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=(1, 1))
>>> rep = evaluate_dataflow(layer, 1024)
>>> rep.tiling, rep.io.total, rep.ratio_to_bound >= 1
(DirectTiling(x=8, y=8, z=8, alpha=1), 47360, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from iobound import limits
from iobound.algorithms import Algorithm
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer
from iobound.multi_block import bound_fast_memory

from .direct import DirectTiling, relative_gap
from .families import dataflow_family
from .io_volume import DataflowIO, Footprint, check_block_memory
from .optimal_tiles import ContinuousOptimum
from .winograd import WinogradTiling

__all__ = ["OPTIMALITY_TOLERANCE", "OptimalityCondition", "DataflowReport", "evaluate_dataflow",
           "WINOGRAD_ORDERS"]

#: Winograd footprint models: the paper's two arrays per tile and channel, or one accumulator.
WINOGRAD_ORDERS = dataflow_family("winograd").orders

#: Relative gap of x y vs R z below which the optimality condition counts as satisfied.
OPTIMALITY_TOLERANCE = 0.25


@dataclass(frozen=True)
class OptimalityCondition:
    """The condition ``x y = R z`` for a tiling.

    Attributes
    ----------
    reuse : float
        R used (``reuse_max``; ``r^2`` for Winograd).
    xy, rz : float
        Both sides.
    relative_gap : float
        ``(x y - R z) / max(x y, R z)``.
    satisfied : bool
        ``|relative_gap| <= tolerance``.
    tolerance : float
    dataflow_reuse : float
        ``R_df``, the reuse of the dataflow's own continuous optimum (see
        :func:`dataflow.optimal_tiles.dataflow_reuse`).
    dataflow_gap : float
        The relative gap of ``x y`` vs ``R_df z``.

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> c = evaluate_dataflow(layer, 64, tiling=DirectTiling(x=3, y=3, z=1, alpha=1)).optimality
    >>> c.xy, c.rz, c.relative_gap, c.tolerance, c.satisfied  # 3 x 3 = 9 x 1
    (9.0, 9.0, 0.0, 0.25, True)
    """

    reuse: float
    xy: float
    rz: float
    relative_gap: float
    satisfied: bool
    tolerance: float
    dataflow_reuse: float
    dataflow_gap: float

    def to_dict(self) -> dict:
        return {"condition": "x*y = R*z", "reuse": self.reuse, "xy": self.xy, "rz": self.rz,
                "relative_gap": self.relative_gap, "satisfied": self.satisfied,
                "tolerance": self.tolerance, "dataflow_reuse": self.dataflow_reuse,
                "dataflow_gap": self.dataflow_gap}


@dataclass(frozen=True)
class DataflowReport:
    """A dataflow's I/O against the best lower bound.

    Attributes
    ----------
    layer : ConvLayer
    algorithm : str
        ``"direct"`` or ``"winograd"``.
    fast_memory_words : int
        S as given (words).
    processors : int
        N_p blocks sharing S.
    block_memory_words : int
        ``S // N_p``: the footprint limit and the S of the lower bound.
    tiling : DirectTiling or WinogradTiling
    tiles_source : str
        ``"optimal"`` (searched among dividing tiles), ``"optimal-any"`` (searched among
        all sizes) or ``"given"``.
    io : DataflowIO
        Exact I/O.
    io_paper_approx : float
        The paper's estimate for this tiling (Eq. 12 direct, Eq. 14 Winograd, plus writes).
    io_paper_closed_form : float
        The paper's closed form for S / N_p (Eq. 13; the Winograd total after Eq. 14).
    footprint : Footprint
    lower_bound : float
        :func:`iobound.report.best_lower_bound` at ``block_memory_words + 2`` (see the
        module doc; :meth:`to_dict` names it ``lower_bound_fast_memory_words``).
    bound_method : str
    ratio_to_bound : float
        ``io.total / lower_bound`` (``inf`` when the bound is 0, i.e. every window lies in
        the padding; ``None`` in :meth:`to_dict`).
    optimality : OptimalityCondition
    continuous : ContinuousOptimum
        The SymPy (halo-free, real-valued) optimum for ``block_memory_words``, within the
        layer's box (``bound_by`` says whether the memory, c_out, h_out w_out or the whole
        layer fixes it).
    order : str
        Direct: the operand kept on chip (``output``, ``weight``, ``input``); Winograd: the
        footprint model (``paper``, ``accumulate``).
    padding_only_outputs : int
        Outputs whose window lies wholly in the padding: constants, no vertex of the DAG
        the bounds are proven for, so the bound leaves them out while the dataflow (like
        any kernel) stores them (:attr:`io`); 0 for every preset layer.

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> r = evaluate_dataflow(ConvLayer(1, 4, 6, 6, 4, 3, 3, padding=1), 64)  # S = 64 words
    >>> r.io.input_loads, r.io.weight_loads, r.io.output_stores, r.io.total
    (512, 576, 144, 1232)
    >>> r.footprint.total <= r.block_memory_words, r.tiles_source, r.order
    (True, 'optimal', 'output')
    """

    layer: ConvLayer
    algorithm: str
    fast_memory_words: int
    processors: int
    block_memory_words: int
    tiling: DirectTiling | WinogradTiling
    tiles_source: str
    io: DataflowIO
    io_paper_approx: float
    io_paper_closed_form: float
    footprint: Footprint
    lower_bound: float
    bound_method: str
    ratio_to_bound: float
    optimality: OptimalityCondition
    continuous: ContinuousOptimum
    order: str = "output"

    @property
    def padding_only_outputs(self) -> int:
        from iobound.vertex_counts import direct_counts  # the outputs a product reaches
        return self.layer.output_size - direct_counts(self.layer).outputs

    def to_dict(self) -> dict:
        """JSON-ready; the keys of ``iobound dataflow --json``."""
        return {
            "layer": self.layer.to_dict(),
            "algorithm": self.algorithm,
            "fast_memory_words": self.fast_memory_words,
            "processors": self.processors,
            "block_memory_words": self.block_memory_words,
            "tiles": self.tiling.to_dict(),
            "tiles_source": self.tiles_source,
            "order": self.order,
            "io_exact": self.io.total,
            "io_exact_parts": self.io.to_dict(),
            "io_paper_approx": self.io_paper_approx,
            "io_paper_approx_equation": dataflow_family(self.algorithm).paper_equation,
            "io_paper_closed_form": self.io_paper_closed_form,
            "lower_bound": self.lower_bound,
            "lower_bound_method": self.bound_method,
            "lower_bound_fast_memory_words": bound_fast_memory(self.block_memory_words),
            # a layer whose windows all lie in the padding has bound 0: ratio undefined
            "ratio_to_bound": self.ratio_to_bound if math.isfinite(self.ratio_to_bound) else None,
            "padding_only_outputs": self.padding_only_outputs,
            "footprint_words": self.footprint.total,
            "footprint": self.footprint.to_dict(),
            "optimality_condition": self.optimality.to_dict(),
            "continuous_optimum": {"x": self.continuous.x, "y": self.continuous.y,
                                   "z": self.continuous.z, "reuse": self.continuous.reuse,
                                   "io_halo_free": self.continuous.io,
                                   "bound_by": self.continuous.bound_by},
        }


def _bound(layer: ConvLayer, s: int, algorithm: str, e: int | None) -> tuple[float, str]:
    from iobound.report import bound_report

    rep = bound_report(layer, s, algorithm=algorithm, e=e)
    return float(rep.best), str(rep.best_method)


#: S of a dataflow: its bound is taken at a block's words + 2 (bound_fast_memory), which
#: must stay within FAST_MEMORY_WORDS, so the user's S is checked against that, naming S.
_DATAFLOW_FAST_MEMORY = limits.Limit(1, limits.FAST_MEMORY_WORDS.high - 2,
                                     limits.FAST_MEMORY_WORDS.reason + "; the dataflow's bound "
                                     "is taken at S + 2 words")


def _checked(fast_memory, processors, tolerance) -> tuple[int, int, int]:
    """(S, N_p, the words one of the N_p blocks may use): each argument checked against its
    limit (numpy integers taken as ints), ``tolerance`` a finite number >= 0, and at least
    one word per block."""
    s = limits.check_int("fast memory S (words)", fast_memory, _DATAFLOW_FAST_MEMORY)
    n_p = limits.check_int("processors", processors, limits.PROCESSORS)
    limits.check_number("tolerance", tolerance, 0)
    return s, n_p, check_block_memory(s, n_p)


def _optimality(layer: ConvLayer, tiling, reuse: float, r_df: float,
                tolerance: float) -> OptimalityCondition:
    """How far the tiles are from ``x y = R z`` at the bound's R and at the dataflow's own."""
    # the tiling (direct, run or Winograd) was checked against the layer by the caller
    xy = tiling.x * tiling.y
    gap = relative_gap(xy, float(reuse) * tiling.z)
    return OptimalityCondition(reuse=reuse, xy=float(xy), rz=reuse * tiling.z,
                               relative_gap=gap, satisfied=bool(abs(gap) <= tolerance),
                               tolerance=float(tolerance), dataflow_reuse=r_df,
                               dataflow_gap=relative_gap(xy, float(r_df) * tiling.z))


def _tiles(fam, layer: ConvLayer, block: int, e: int | None, divisors: bool, order: str | None,
           tiling):
    """(order, tiles, where the tiles come from): given tiles, or the best searched ones."""
    if tiling is not None:
        return order or fam.default_order(tiling), tiling, "given"
    order, tiling = fam.choose(layer, block, e, divisors, order)
    return order or fam.orders[0], tiling, "optimal" if divisors else "optimal-any"


def evaluate_dataflow(layer: ConvLayer, fast_memory: int, algorithm: "str | Algorithm" = "direct",
                      processors: int = 1, e: int | None = None,
                      tiling: DirectTiling | WinogradTiling | None = None,
                      tolerance: float = OPTIMALITY_TOLERANCE, divisors: bool = True,
                      order: str | None = None) -> DataflowReport:
    """Optimal (or given) tiles of a dataflow, their exact I/O and the ratio to the best bound.

    Parameters
    ----------
    layer : ConvLayer
        Grouped layers run one group's dense dataflow per group (:mod:`dataflow.grouped`).
    fast_memory, processors : int
        S in words, shared by N_p blocks: each may use ``fast_memory // processors``.
    algorithm : {"direct", "winograd"} or Algorithm
    e : int, optional
        Winograd output tile size (default 2); rejected for ``direct``.
    tiling : DirectTiling, RunTiling or WinogradTiling, optional
        Evaluate these tiles instead of searching; their footprint must fit. A
        :class:`dataflow.runs.RunTiling` runs in a ``-runs`` order (default ``"output-runs"``).
    tolerance : float
        Relative gap below which ``x y = R z`` counts as satisfied.
    divisors : bool
        Search only tiles that divide the output (the search domain's Table 1); ``False``
        allows any size (clipped border tiles).
    order : str, optional
        Direct: the operand on chip, ``"output"``, ``"weight"`` or ``"input"``
        (:mod:`dataflow.stationary`). Winograd: ``"paper"`` (two arrays per tile and channel)
        or ``"accumulate"`` (one). Default: the least exact I/O for searched tiles, the
        family's first order for given ones.

    Raises
    ------
    InvalidInputError
        Unknown algorithm, Winograd not applicable, tiles that do not fit or do not match
        the algorithm, or a fast memory too small for any block.

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> r = evaluate_dataflow(layer, 64)  # the best dividing tiles for S = 64 words
    >>> r.tiling, r.io.total, r.lower_bound, r.bound_method
    (DirectTiling(x=3, y=3, z=2, alpha=1), 1232, 432.0, 'compulsory')
    >>> r.optimality.xy, r.optimality.rz, r.optimality.satisfied  # x y = R z?
    (9.0, 18.0, False)
    """
    check_layer(layer)
    fam = dataflow_family(algorithm)
    fast_memory, processors, block = _checked(fast_memory, processors, tolerance)
    divisors = limits.check_flag("divisors", divisors)
    fam.check_order(order)
    e = fam.resolve(layer, e, tiling)
    if layer.groups > 1:   # Winograd refused in resolve; direct: per group (dataflow/grouped.py)
        from .grouped import evaluate_grouped
        return evaluate_grouped(layer, fast_memory, processors, tiling, tolerance, divisors, order)
    order, tiling, source = _tiles(fam, layer, block, e, divisors, order, tiling)
    return _report(fam, layer, fast_memory, processors, block, e, tiling, order, source, tolerance)


def _report(fam, layer: ConvLayer, fast_memory: int, processors: int, block: int, e: int | None,
            tiling, order: str, source: str, tolerance: float) -> DataflowReport:
    """The :class:`DataflowReport` of ``tiling`` run in ``order`` (InvalidInputError when its
    footprint does not fit a block)."""
    io, foot = fam.ordered_io(layer, tiling, order), fam.ordered_footprint(layer, tiling, order)
    if foot.total > block:
        raise InvalidInputError(f"tiles {tiling.to_dict()} need {foot.total} words on chip, more than the "
                                f"{block} words of one block (S={fast_memory}, processors={processors})")
    reuse, r_df = fam.reuse(layer)
    # a dataflow's count is a game with block + 2 pebbles (proofs/test_multi_block.py)
    bound, method = _bound(layer, bound_fast_memory(block), fam.name, e)
    return DataflowReport(layer=layer, algorithm=fam.name, fast_memory_words=fast_memory,
                          processors=processors, block_memory_words=block, tiling=tiling,
                          tiles_source=source, io=io, io_paper_approx=fam.paper_io(layer, tiling),
                          io_paper_closed_form=fam.paper_total(layer, e, fast_memory, processors),
                          footprint=foot, lower_bound=bound, bound_method=method,
                          ratio_to_bound=io.total / bound if bound > 0 else float("inf"),
                          optimality=_optimality(layer, tiling, reuse, r_df, tolerance),
                          continuous=fam.continuous_optimum(layer, block, tiling), order=order)
