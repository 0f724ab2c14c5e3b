"""optimal_pebbling's heuristic upper bound and its place in the result.

Reference: the pebble game player (:func:`dataflow.pebble.play`) run with the Belady and the
LRU policy on the topological schedule; the documented result fields
(``heuristic_io`` = the best of them, ``lower_bound <= io <= heuristic_io``, the default
horizon of one compute step per non-source plus a quarter of them, at least 2).
"""

import pytest

from dataflow.optimal_pebbling import optimal_pebbling
from dataflow.pebble import play
from dataflow.schedules import topological_schedule
from test_optimal_pebbling import matmul_dag


@pytest.mark.parametrize("dims, S", [((1, 2, 2), 4), ((2, 2, 1), 4)])
def test_heuristic_io_is_the_better_of_belady_and_lru(dims, S):
    """Belady beats LRU on these games; the reported heuristic is the smaller count."""
    dag = matmul_dag(*dims)
    order = topological_schedule(dag)
    belady, lru = (play(dag, order, S, p).total for p in ("belady", "lru"))
    assert belady < lru                     # the case separates the two policies
    res = optimal_pebbling(dag, S, time_limit=20, workers=1)
    assert res.heuristic_io == belady
    assert res.lower_bound <= res.io <= res.heuristic_io
    # default horizon: one step per non-source plus a quarter of them, at least 2
    non_sources = sum(1 for v in dag if dag.in_degree(v) > 0)
    assert res.horizon == non_sources + max(2, non_sources // 4)
