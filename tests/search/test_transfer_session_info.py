"""What a tuning session gets from :mod:`search.transfer.session`: the ``"history"`` JSON,
a database given by path read as the open one, and the history rounds' own generator.

References: the documented ``as_json`` / ``to_dict`` fields written out here; the same
call on an open :class:`~search.db.TuningDB` (a path must honour every argument as the
open database does); the fit's arguments seen by a spy on
:meth:`~search.transfer.prior.HistoryPrior.fit`; and the inner strategy's generator,
which the history rounds must leave alone (module doc).
"""

from __future__ import annotations

import numpy as np
import pytest

from search.db import TuningDB
from search.measure.base import MeasureRecord
from search.strategies import make_strategy
from search.transfer import HistoryPrior, PriorOptions, transfer_options, with_history
from search.transfer.session import HistoryInfo, own_records
from tests.search.test_transfer import SPACE, _bowl, _hist


def test_history_json_has_the_seconds_to_the_millisecond_when_known_and_the_notice_apart():
    info = HistoryInfo(12, ("a", "b"), True, notice="history: note")
    assert info.as_json() == {"records": 12, "devices": ["a", "b"], "used": True}
    assert info.to_dict() == {"records": 12, "devices": ["a", "b"], "used": True,
                              "notice": "history: note"}
    timed = HistoryInfo(0, (), False, seconds=1.23456)
    assert timed.as_json() == {"records": 0, "devices": [], "used": False, "seconds": 1.235}
    assert timed.to_dict() == timed.as_json()


@pytest.fixture
def db_path(tmp_path):
    path = tmp_path / "h.db"
    with TuningDB(path) as db:
        db.add(_hist("gpu0", _bowl((2, 3, 2))) + _hist("gpu1", _bowl((6, 1, 4)))
               + _hist("gpu2", _bowl((6, 1, 4)), problem=(7, 9)))
    return path


def _spy(monkeypatch):
    seen = []
    fit = HistoryPrior.fit.__func__

    def spy(cls, space, history, target_problem=None, options=None, seed=0):
        seen.append({"devices": sorted({m.device for m in history}), "records": len(history),
                     "options": options, "seed": seed})
        return fit(cls, space, history, target_problem, options, seed)
    monkeypatch.setattr(HistoryPrior, "fit", classmethod(spy))
    return seen


def test_a_path_is_read_as_the_open_database_with_every_argument(db_path, monkeypatch):
    seen = _spy(monkeypatch)
    with TuningDB(db_path) as db:
        rec = db.measurements(db.workloads()[0])[0].record
    own = own_records([rec])
    opts = PriorOptions(min_match=0.9)
    kw = dict(exclude_devices=("gpu1",), exclude=own, options=opts, seed=5)
    by_path = transfer_options(str(db_path), SPACE, [64, 64], **kw)
    with TuningDB(db_path) as db:
        by_db = transfer_options(db, SPACE, [64, 64], **kw)
    assert seen[0] == seen[1]
    assert seen[0]["devices"] == ["gpu0", "gpu2"] and seen[0]["options"] is opts
    assert seen[0]["seed"] == 5 and seen[0]["records"] == 2 * len(SPACE) - 1
    # what the history held for the space, as every strategy reports it; the prior keeps
    # gpu0 alone (gpu2: match too low)
    assert by_path[1] == by_db[1] and by_path[1].devices == ("gpu0", "gpu2")
    assert by_path[1].records == 2 * len(SPACE) - 1 and by_path[0].devices == ("gpu0",)
    assert np.array_equal(by_path[0].order(), by_db[0].order())


def test_the_history_rounds_draw_from_a_generator_of_their_own(db_path):
    """The inner strategy keeps its generator, and the history rounds' one is another
    stream even when both come from the same seed."""
    prior, _ = transfer_options(str(db_path), SPACE, [64, 64])
    rng = np.random.default_rng(7)
    inner = make_strategy("random", SPACE, None, rng)
    guided = with_history(inner, prior, seed=7)
    assert inner.rng is rng and guided.rng is not rng
    assert guided.rng.random(4).tolist() != np.random.default_rng(7).random(4).tolist()
    again = with_history(make_strategy("random", SPACE, None, np.random.default_rng(7)), prior, seed=7)
    assert again.rng.random(4).tolist() == with_history(
        make_strategy("random", SPACE, None, np.random.default_rng(0)), prior, seed=7).rng.random(4).tolist()


def test_own_records_are_config_and_timestamp():
    r = MeasureRecord.ok({"b": 1, "a": 2}, time_ms=1.0)
    assert own_records([r, r]) == {('{"a":2,"b":1}', float(r.timestamp))}


def test_an_empty_database_has_no_notice(tmp_path):
    TuningDB(tmp_path / "empty.db").close()
    prior, info = transfer_options(str(tmp_path / "empty.db"), SPACE, [64, 64])
    assert prior is None and info == HistoryInfo(0, (), False, None)


def test_seed_none_draws_as_seed_0(db_path):
    prior, _ = transfer_options(str(db_path), SPACE, [64, 64])
    inner = lambda: make_strategy("random", SPACE, None, np.random.default_rng(0))  # noqa: E731
    a = with_history(inner(), prior, seed=None).rng.random(4).tolist()
    assert a == with_history(inner(), prior, seed=0).rng.random(4).tolist()
    assert a != with_history(inner(), prior, seed=1).rng.random(4).tolist()


def test_only_the_targets_own_records_are_excluded(tmp_path):
    """A record of another problem with the same config and timestamp as one of the
    target's own is history still."""
    from search.db import Measurement, Workload
    from search.transfer.session import usable_history
    rec = MeasureRecord.ok(SPACE.get(3), time_ms=2.0)
    mine = Measurement(Workload("k", [64, 64], SPACE.params), "gpu0", "t", rec)
    other = Measurement(Workload("k", [32, 64], SPACE.params), "gpu0", "t", rec)
    with TuningDB(tmp_path / "x.db") as db:
        db.add([mine, other])
        kept = usable_history(db, SPACE, [64, 64], exclude=own_records([rec]))
    assert [m.workload.problem for m in kept] == [[32, 64]]
