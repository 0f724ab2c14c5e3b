"""The dataflow part of each algorithm family: tiling type, exact I/O, footprint, tiles.

One :class:`DataflowFamily` per :class:`iobound.algorithms.Algorithm`, registered in
:data:`DATAFLOWS` under the algorithm's name; :func:`dataflow_family` looks one up by
name or by the algorithm object. Callers dispatch on the family instead of branching
on ``"direct"``/``"winograd"``.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=1, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3)
>>> fam = dataflow_family("winograd")
>>> fam.tiling_type.__name__, fam.io(layer, fam.tiling_type(2, 4, 4, 2)).total
('WinogradTiling', 86)
>>> dataflow_family("direct").tiling_from((4, 4, 2, 1))
DirectTiling(x=4, y=4, z=2, alpha=1)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from iobound import limits
from iobound.algorithms import DEFAULT_WINOGRAD_E, DIRECT, WINOGRAD, Algorithm, Registry
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer

from . import direct as _direct
from . import stationary as _stationary
from . import flops as _flops
from . import runs as _runs
from . import winograd as _winograd
from .io_volume import DataflowIO, Footprint

__all__ = ["DataflowFamily", "DirectDataflow", "WinogradDataflow", "DATAFLOWS", "dataflow_family"]


class DataflowFamily(ABC):
    """What the dataflow layer knows of one algorithm: tiles, I/O, footprint, flops.

    Examples
    --------
    >>> fam = dataflow_family("direct")
    >>> isinstance(fam, DataflowFamily), fam.name, fam.paper_equation
    (True, 'direct', 'Eq. 12 + output writes')
    """

    algorithm: ClassVar[Algorithm]
    tiling_type: ClassVar[type]
    #: The paper's equation the per-tiling estimate follows (``iobound dataflow --json``).
    paper_equation: ClassVar[str]
    #: The paper's closed form for S / N_p, as the text report names it.
    closed_form_name: ClassVar[str]

    @property
    def name(self) -> str:
        return self.algorithm.name

    def tiling_from(self, values) -> object:
        """A tiling of ``values``, a tuple of integers in :attr:`Algorithm.tile_params` order
        (the tiling type checks each: 7.5, ``"7"`` and ``True`` are refused, never converted).

        >>> dataflow_family("direct").tiling_from((4, 4, 2))
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: a direct tile must be a tuple of 4 integers (x, y, z, alpha), got (4, 4, 2)
        """
        params = self.algorithm.tile_params
        if not isinstance(values, tuple) or len(values) != len(params):
            raise InvalidInputError(f"a {self.name} tile must be a tuple of {len(params)} integers "
                                    f"({', '.join(params)}), got {values!r:.80}")
        return self.tiling_type(*values)

    @abstractmethod
    def check_tiling(self, layer: ConvLayer, tiling) -> None:
        """Raise ValueError when ``tiling`` does not fit ``layer``."""

    @abstractmethod
    def io(self, layer: ConvLayer, tiling) -> DataflowIO:
        """Exact global traffic of the dataflow with ``tiling``."""

    @abstractmethod
    def footprint(self, layer: ConvLayer, tiling) -> Footprint:
        """On-chip words of one block."""

    @abstractmethod
    def paper_io(self, layer: ConvLayer, tiling) -> float:
        """The paper's estimate for this tiling (plus output writes)."""

    @abstractmethod
    def paper_total(self, layer: ConvLayer, e, fast_memory: int, processors: int) -> float:
        """The paper's closed form for ``fast_memory / processors`` words."""

    @abstractmethod
    def flops(self, layer: ConvLayer, tiling) -> int:
        """Floating-point operations executed (FMA = 2)."""

    @abstractmethod
    def reuse(self, layer: ConvLayer) -> tuple[float, float]:
        """(R of the optimality condition, the dataflow's own reuse R_df)."""

    @abstractmethod
    def continuous_optimum(self, layer: ConvLayer, fast_memory: int, tiling):
        """The halo-free SymPy optimum for ``fast_memory`` words (and the tiling's alpha/e)."""

    #: The loop orders (which operand stays on chip) the family can run, the first the default.
    orders: ClassVar[tuple[str, ...]]

    def check_order(self, order: str | None) -> None:
        """InvalidInputError for an order the family does not have (None: choose)."""
        if order is not None and order not in self.orders:
            raise InvalidInputError(f"unknown {self.name} dataflow order {order!r}; "
                                    f"choose one of {', '.join(self.orders)}")

    @abstractmethod
    def ordered_io(self, layer: ConvLayer, tiling, order: str) -> DataflowIO:
        """Exact global traffic of ``tiling`` run in ``order``."""

    @abstractmethod
    def ordered_footprint(self, layer: ConvLayer, tiling, order: str) -> Footprint:
        """On-chip words of ``tiling`` run in ``order``."""

    @abstractmethod
    def choose(self, layer: ConvLayer, fast_memory: int, e, divisors: bool,
               order: str | None) -> tuple[str, object]:
        """(order, tiling) of least exact I/O in ``fast_memory`` words (``order`` given: that one)."""

    def default_order(self, tiling) -> str:
        """The order given tiles run in when none is named: the family's first."""
        return self.orders[0]

    def resolve(self, layer: ConvLayer, e, tiling):
        """Check ``e`` and a given ``tiling`` against the algorithm and the layer; return e."""
        if tiling is not None and not isinstance(tiling, self.tiling_type):
            params = ", ".join(self.algorithm.tile_params)
            raise InvalidInputError(f"{self.name} needs a {self.tiling_type.__name__} ({params}), "
                                    f"got {tiling!r}")
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class DirectDataflow(DataflowFamily):
    """Direct convolution's dataflow (Sec. 5.2).

    Examples
    --------
    The orders it can run, and its choice for a small padded layer in 300 words:

    >>> from iobound.layer import ConvLayer
    >>> DirectDataflow().orders
    ('output', 'weight', 'input', 'output-runs', 'weight-runs', 'input-runs')
    >>> DirectDataflow().choose(ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1), 300, None, True, None)
    ('input', DirectTiling(x=4, y=8, z=1, alpha=1))
    """

    algorithm = DIRECT
    tiling_type = _direct.DirectTiling
    paper_equation = "Eq. 12 + output writes"
    closed_form_name = "Eq. 13"

    def check_tiling(self, layer, tiling):
        _direct.check_direct_tiling(layer, tiling)

    def io(self, layer, tiling):
        return _direct.direct_io(layer, tiling)

    def footprint(self, layer, tiling):
        return _direct.direct_footprint(layer, tiling)

    def paper_io(self, layer, tiling):
        return _direct.direct_paper_io(layer, tiling)

    def paper_total(self, layer, e, fast_memory, processors):
        return _direct.direct_paper_total(layer, fast_memory, processors)

    def flops(self, layer, tiling):
        return _flops.direct_flops(layer)

    def reuse(self, layer):
        from .optimal_tiles import dataflow_reuse
        return float(layer.reuse_max), dataflow_reuse(layer)

    def continuous_optimum(self, layer, fast_memory, tiling):
        from .optimal_tiles import direct_continuous_optimum
        return direct_continuous_optimum(layer, fast_memory, tiling.alpha)

    #: rectangles (dataflow.stationary), then raster runs for non-overlapping windows (dataflow.runs)
    orders = _stationary.ORDERS + _runs.RUN_ORDERS

    @staticmethod
    def _check_run_tiling(tiling, order):
        runs = order in _runs.RUN_ORDERS
        if runs != isinstance(tiling, _runs.RunTiling):
            raise InvalidInputError(f"order {order!r} needs {'run' if runs else 'rectangular'} "
                                    f"tiles, got {tiling!r}")
        return runs

    def ordered_io(self, layer, tiling, order):
        if self._check_run_tiling(tiling, order):
            return _runs.run_io(layer, tiling, order)
        return _stationary.stationary_io(layer, tiling, order)

    def ordered_footprint(self, layer, tiling, order):
        if self._check_run_tiling(tiling, order):
            return _runs.run_footprint(layer, tiling, order)
        return _stationary.stationary_footprint(layer, tiling, order)

    def choose(self, layer, fast_memory, e, divisors, order):
        """Least exact I/O over the rectangles and, with any tile sizes, the runs (ties: rectangles)."""
        wanted = self.orders if order is None else (order,)
        rect = tuple(o for o in wanted if o in _stationary.ORDERS)
        runs = tuple(o for o in wanted if o in _runs.RUN_ORDERS)
        if runs and divisors and not rect:
            raise InvalidInputError(f"order {order!r} uses run tiles, which are not rectangles "
                                    "dividing the output: search any tile sizes")
        found = []
        if runs and not divisors:
            best = _runs.best_run_dataflow(layer, fast_memory, runs)
            found += [] if best is None else [(best.io.total, 1, best.order, best.tiling)]
        if rect:
            try:
                choice = _stationary.best_direct_dataflow(layer, fast_memory, divisors, rect)
                found.append((choice.io.total, 0, choice.order, choice.tiling))
            except InvalidInputError:
                if not found:
                    raise
        if not found:
            refusal = _runs.runs_refusal(layer)
            if refusal:
                raise InvalidInputError(refusal)
            raise InvalidInputError(f"fast memory of {fast_memory} words is too small for any run "
                                    f"block of the orders {', '.join(runs)}")
        _, _, best_order, tiling = min(found, key=lambda f: f[:2])
        return best_order, tiling

    def resolve(self, layer, e, tiling):
        self.algorithm.parameter(e)   # refuses an e
        if isinstance(tiling, _runs.RunTiling):   # the run orders' tiles (dataflow.runs)
            return None
        return super().resolve(layer, e, tiling)

    def default_order(self, tiling) -> str:
        """Run tiles: the first run order; rectangles: output-stationary."""
        return _runs.RUN_ORDERS[0] if isinstance(tiling, _runs.RunTiling) else self.orders[0]


class WinogradDataflow(DataflowFamily):
    """Winograd F(e x e, r x r)'s dataflow (Sec. 5.3).

    Examples
    --------
    Its two footprint models of one tiling (same I/O), and the ``e`` it takes when none is given:

    >>> from iobound.layer import ConvLayer
    >>> from dataflow.winograd import WinogradTiling
    >>> layer, t = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1), WinogradTiling(2, 4, 4, 4)
    >>> [WinogradDataflow().ordered_footprint(layer, t, o).total for o in ("paper", "accumulate")]
    [584, 417]
    >>> WinogradDataflow().resolve(layer, None, None)
    2
    """

    algorithm = WINOGRAD
    tiling_type = _winograd.WinogradTiling
    paper_equation = "Eq. 14 + output writes"
    closed_form_name = "total after Eq. 14"

    def check_tiling(self, layer, tiling):
        _winograd.check_winograd_tiling(layer, tiling)

    def io(self, layer, tiling):
        return _winograd.winograd_io(layer, tiling)

    def footprint(self, layer, tiling):
        return _winograd.winograd_footprint(layer, tiling)

    def paper_io(self, layer, tiling):
        return _winograd.winograd_paper_io(layer, tiling)

    def paper_total(self, layer, e, fast_memory, processors):
        return _winograd.winograd_paper_total(layer, e, fast_memory, processors)

    def flops(self, layer, tiling):
        return _flops.winograd_flops(layer, tiling)

    def reuse(self, layer):
        r = float(layer.k_h * layer.k_w)
        return r, r

    def continuous_optimum(self, layer, fast_memory, tiling):
        from .optimal_tiles import winograd_continuous_optimum
        return winograd_continuous_optimum(layer, tiling.e, fast_memory)

    #: the paper's two arrays per tile and channel, or one accumulator (winograd_accumulate)
    orders = ("paper", "accumulate")

    def ordered_io(self, layer, tiling, order):
        return _winograd.winograd_io(layer, tiling)  # the same traffic in both

    def ordered_footprint(self, layer, tiling, order):
        if order == "paper":
            return _winograd.winograd_footprint(layer, tiling)
        from .winograd_accumulate import winograd_accumulate_footprint
        return winograd_accumulate_footprint(layer, tiling)

    def choose(self, layer, fast_memory, e, divisors, order):
        """The footprint model and tiling of least exact I/O (ties: the paper's).

        Unasked, the paper's tiling is taken only where its footprint holds its schedule's
        words (the one accumulator model's, played in tests/dataflow/test_winograd_accumulate.py):
        with one tile or one channel a block, the paper's two arrays leave out the
        channel's transforms, and a game with its footprint moves more than its formula.
        """
        from .optimal_tiles import optimal_winograd_tiles
        from .winograd_accumulate import (optimal_winograd_accumulate_tiles,
                                          winograd_accumulate_footprint)
        found = []
        if order in (None, "accumulate"):
            acc = optimal_winograd_accumulate_tiles(layer, fast_memory, e, divisors)
            found += [(acc.io.total, 1, "accumulate", acc.tiling)] if acc is not None else []
        if order in (None, "paper"):
            try:
                paper = optimal_winograd_tiles(layer, fast_memory, e, divisors=divisors)
                if order or (_winograd.winograd_footprint(layer, paper.tiling).total
                             >= winograd_accumulate_footprint(layer, paper.tiling).total):
                    found.append((paper.io.total, 0, "paper", paper.tiling))
            except ValueError:
                if not found:
                    raise
        if not found:
            raise InvalidInputError(f"fast memory of {fast_memory} words is too small for a "
                                    f"Winograd block (e={e})")
        _, _, order, tiling = min(found)
        return order, tiling

    def resolve(self, layer, e, tiling):
        self.algorithm.check(layer)
        super().resolve(layer, e, tiling)
        if tiling is not None and e is not None and tiling.e != e:
            raise InvalidInputError(f"winograd e={e} does not match the tiling's e={tiling.e}")
        if tiling is not None:
            self.check_tiling(layer, tiling)
            return tiling.e
        if e is None:
            return DEFAULT_WINOGRAD_E
        return limits.check_int("winograd e", self.algorithm.parameter(e), limits.WINOGRAD_E)


#: The dataflow families, keyed by algorithm name.
DATAFLOWS: Registry[DataflowFamily] = Registry("algorithm")
for _fam in (DirectDataflow(), WinogradDataflow()):
    DATAFLOWS.register(_fam.name, _fam)


def dataflow_family(algorithm: "str | Algorithm") -> DataflowFamily:
    """The :class:`DataflowFamily` of an algorithm name or object (unknown: InvalidInputError).

    Examples
    --------
    >>> from iobound.algorithms import WINOGRAD
    >>> dataflow_family(WINOGRAD)
    WinogradDataflow()
    >>> dataflow_family("fft")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: unknown algorithm 'fft'; choose one of direct, winograd
    """
    return DATAFLOWS.get(algorithm)
