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
from .dag_direct import MAX_VERTICES, direct_chain, direct_conv_dag, evaluate_dag  # noqa: E402  (H2a: DAGs)
from .dag_winograd import winograd_conv_dag  # noqa: E402  (H2a)
from .partition import PartitionCheck, PartitionViolation, check_multistep_partition, step_parts  # noqa: E402  (H2a)
from .pebble import IllegalMoveError, MoveCount, PebbleResult, play, validate_moves, without_unused_moves  # noqa: E402,E501  (H2a: pebble game)
from .schedules import TiledSchedule, tiled_schedule, topological_schedule  # noqa: E402  (H2a)
from .optimal_pebbling import OptimalPebbling, brute_force_pebbling, optimal_pebbling  # noqa: E402  (H2a)
