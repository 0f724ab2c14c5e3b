"""dataflow package."""

from .direct import (  # noqa: E402  (H2b: direct dataflow)
    DirectTiling, direct_footprint, direct_io, direct_optimality_gap, direct_paper_io,
    direct_paper_total, satisfies_optimality,
)
from .io_volume import DataflowIO, Footprint  # noqa: E402  (H2b)
from .winograd import (  # noqa: E402  (H2b: Winograd dataflow)
    WinogradTiling, winograd_footprint, winograd_io, winograd_optimality_gap,
    winograd_paper_io, winograd_paper_total, winograd_satisfies_optimality,
)
from .optimal_tiles import (  # noqa: E402  (H2b: optimal tiles)
    ContinuousOptimum, TileChoice, dataflow_reuse, optimal_direct_tiles, optimal_winograd_tiles,
)
from .evaluate import DataflowReport, OptimalityCondition, evaluate_dataflow  # noqa: E402  (H2b)
