"""The history models must not depend on a tuning database's row order.

The same files imported into a database in another order give the same records with other
row ids; ``TuningDB.timings`` returns them fastest first with ties broken by row id, so
records of equal time (common: two runs of a layer, a timer's resolution, the analytic
model's estimates) come in import order. The prior's ranking model (XGBoost
``rank:pairwise``) samples its pairs by row position, and a capped source samples its rows
after a stable sort: fed in another order, they learn another model and the tuning run takes
another path (``iobound tune --history DB`` with the same seed measured other
configurations after ``history import --db DB a b`` than after ``... b a``).

Reference: the records themselves (a permutation among equal times is the same history).
"""

import dataclasses

import numpy as np

from search.db import Measurement, TuningDB, Workload
from search.db.queries import history_for_space
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace
from search.transfer.prior import HistoryPrior
from search.zero_shot import ZeroShotOptions, history_ranking

SPACE = GridSpace({"x": list(range(1, 9)), "y": list(range(1, 9))})
# another problem's records, mostly outside the target's space (x up to 16): the prior
# learns from their rows (SpaceRows' feature rows of the knobs)
OTHER = Workload("k", [16], ("x", "y"))


def _runs():
    """Two runs of one source (same workload and device) with many tied times."""
    rng = np.random.default_rng(7)
    runs = []
    for run in range(2):
        recs = []
        for x, y in rng.permutation([(x, y) for x in range(1, 17) for y in range(1, 9)])[:60]:
            t = float(1 + (int(x) * int(y)) % 5)  # five distinct times: many ties
            rec = MeasureRecord.ok({"x": int(x), "y": int(y)}, time_ms=t)
            recs.append(Measurement(OTHER, "gpu0", "t",
                                    dataclasses.replace(rec, timestamp=1000.0 + run)))
        runs.append(recs)
    return runs


def _history(order):
    runs = _runs()
    db = TuningDB(":memory:")
    for k in order:  # "history import" of the two runs' files in this order
        db.add(runs[k])
    return history_for_space(db, SPACE)


def test_same_records_imported_in_another_order_give_the_same_prior_ranking():
    a, b = _history([0, 1]), _history([1, 0])
    key = lambda m: (m.time_ms, str(m.record.config), m.record.timestamp)  # noqa: E731
    assert sorted(map(key, a)) == sorted(map(key, b))  # the same history, other row order
    pa = HistoryPrior.fit(SPACE, a, [8], seed=0)
    pb = HistoryPrior.fit(SPACE, b, [8], seed=0)
    assert pa.ranking.tolist() == pb.ranking.tolist()
    assert pa.order().tolist() == pb.order().tolist()


def test_zero_shot_ranking_ignores_the_row_order_of_a_capped_source():
    a, b = _history([0, 1]), _history([1, 0])
    o = ZeroShotOptions(max_rows_per_source=16)  # the source is sampled: rows past the cap
    ra, sa, _ = history_ranking(SPACE, a, o, seed=0)
    rb, sb, _ = history_ranking(SPACE, b, o, seed=0)
    assert ra.tolist() == rb.tolist()
    np.testing.assert_array_equal(sa, sb)
