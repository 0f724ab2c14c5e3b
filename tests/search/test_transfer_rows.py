"""How history records become rows of the history model (:mod:`search.transfer.rows`).

References: a record inside the target space takes the space's own row
(:meth:`~search.space.Space.features` of its index) and one outside takes its config's knob
values with the other columns from its stored features, encoded as the space encodes them
(:func:`search.space.knob_value`: numbers, bools included, as themselves, other values by
position), None when a value is unknown; a cross-layer row is
:func:`~search.transfer.layer_features.cross_layer_features` of the record's *own* layer
and device, None for knobs that are not positive integers or a row that is not finite;
the row memory computes each knob row of a source once, and drops the oldest other
sources only once it holds *more* than ``max_rows`` rows (counted by a test double of the
computation).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from iobound.devices import get_device
from iobound.layer import ConvLayer
from search.db import CONV_TEMPLATE, Measurement, Workload
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace
from search.space import knob_value
from search.transfer import rows as rows_module
from search.transfer.layer_features import cross_layer_features
from search.transfer.rows import LayerRows, SpaceRows, feature_row

KNOBS = ("x", "y", "z", "alpha", "tx", "ty", "tz")
LAYER = ConvLayer(n=1, c_in=8, h_in=12, w_in=10, c_out=16, k_h=3, k_w=3, padding=1)


class SquaredGrid(GridSpace):
    """A grid whose rows add a column ``sq`` (x squared) to the knobs."""

    def feature_names(self):
        return [*self.params, "sq"]

    def features(self, indices):
        k = super().features(indices)
        return np.column_stack([k, k[:, 0] ** 2])


SQ = SquaredGrid({"x": [1, 2, 3], "mode": ["a", "b"]})


def _m(config, features=None, problem=(8,), device="gpu0", params=("x", "mode")):
    w = Workload("k", list(problem) if not isinstance(problem, dict) else problem, params)
    return Measurement(w, device, "t", MeasureRecord.ok(config, time_ms=1.0), features=features)


def test_a_bool_knob_is_encoded_as_the_space_encodes_it():
    """The space's rows take a bool as the number it is (knob_value); a record outside the
    space must get the same encoding, whatever the order of the value list."""
    space = GridSpace({"flag": [True, False], "x": [1, 2]})
    inside = space.features([space.index({"flag": True, "x": 1})])[0]
    assert feature_row(space, {"flag": True, "x": 1}, None).tolist() == inside.tolist()
    assert feature_row(space, {"flag": False, "x": 7}, None).tolist() == [
        knob_value(False, [True, False]), 7.0]


@pytest.mark.parametrize("config, features, want", [
    ({"x": 5, "mode": "b"}, {"sq": 30.0}, [5.0, 1.0, 30.0]),
    ({"x": 2.5, "mode": "a"}, {"sq": 6.25, "other": 1.0}, [2.5, 0.0, 6.25]),
    ({"x": 5, "mode": "c"}, {"sq": 30.0}, None),     # a value the space does not know
    ({"mode": "a"}, {"sq": 1.0}, None),               # a knob missing
    ({"x": 5, "mode": "a"}, None, None),              # no stored features
    ({"x": 5, "mode": "a"}, {"io": 1.0}, None),       # the column not among them
    ({"x": 5, "mode": "a"}, {"sq": "many"}, None),    # not a number
])
def test_feature_row_is_the_knobs_then_the_stored_columns_or_none(config, features, want):
    got = feature_row(SQ, config, features)
    assert (None if got is None else got.tolist()) == want


def test_space_rows_take_the_space_row_inside_and_the_stored_features_outside():
    inside = [{"x": 3, "mode": "a"}, {"x": 1, "mode": "b"}, {"x": 2, "mode": "b"}]
    ms = [_m(inside[0]), _m({"x": 9, "mode": "a"}, {"sq": 5.0}), _m(inside[1]),
          _m({"x": 9, "mode": "z"}, {"sq": 5.0}), _m(inside[2])]
    idx = [SQ.index(inside[0]), None, SQ.index(inside[1]), None, SQ.index(inside[2])]
    got = SpaceRows(SQ).record_rows(ms, idx)
    assert got[0].tolist() == [3.0, 0.0, 9.0]
    assert got[1].tolist() == [9.0, 0.0, 5.0]  # the stored sq, not 81
    assert got[2].tolist() == [1.0, 1.0, 1.0]
    assert got[3] is None
    assert got[4].tolist() == [2.0, 1.0, 4.0]


def _conv(knobs, device="v100", problem=None):
    problem = LAYER.to_dict() if problem is None else problem
    return Measurement(Workload(CONV_TEMPLATE, problem, KNOBS), device, "t",
                       MeasureRecord.ok(dict(zip(KNOBS, knobs)), time_ms=1.0))


@pytest.fixture
def fresh_memo(monkeypatch):
    memo = rows_module._RecordRowMemo()
    monkeypatch.setattr(rows_module, "_MEMO", memo)
    return memo


def test_layer_rows_are_those_of_each_records_own_device(fresh_memo):
    """The same knobs of the same layer on two devices: each record gets its device's row."""
    rows = LayerRows(SimpleNamespace(params=KNOBS))
    knobs = (5, 4, 8, 4, 5, 2, 2)
    for dev in ("v100", "t4", "v100"):
        (row,) = rows.record_rows([_conv(knobs, dev)], [None])
        want = cross_layer_features(LAYER, get_device(dev), "direct", np.array([knobs]))[0]
        assert row.tolist() == want.tolist()


def test_layer_rows_skip_knobs_that_are_not_positive_integers_in_place(fresh_memo):
    rows = LayerRows(SimpleNamespace(params=KNOBS))
    good = (5, 4, 8, 4, 5, 2, 2)
    bad = [(0, 4, 8, 4, 5, 2, 2), (True, 4, 8, 4, 5, 2, 2), (5.0, 4, 8, 4, 5, 2, 2),
           (5, -4, 8, 4, 5, 2, 2)]
    ms = [_conv(b) for b in bad] + [_conv(good)]
    got = rows.record_rows(ms, [None] * len(ms))
    assert got[:4] == [None] * 4
    want = cross_layer_features(LAYER, get_device("v100"), "direct", np.array([good]))[0]
    assert got[4].tolist() == want.tolist()
    assert rows.record_rows([], []) == []
    assert rows.record_rows([_conv(good, problem=[8, 8])], [None]) == [None]  # not a layer


def test_a_remembered_row_cannot_be_changed_by_a_reader(fresh_memo):
    rows = LayerRows(SimpleNamespace(params=KNOBS))
    (row,) = rows.record_rows([_conv((5, 4, 8, 4, 5, 2, 2))], [None])
    with pytest.raises(ValueError):
        row[0] = -1.0


class Counted:
    """A row computation that counts the knob rows it is asked for; rows of ``inf`` for
    knobs starting with 0."""

    def __init__(self):
        self.asked = []

    def __call__(self, knobs):
        self.asked += [tuple(k) for k in knobs.tolist()]
        return np.array([[np.inf if k[0] == 0 else float(sum(k))] for k in knobs])


def test_the_memory_computes_each_knob_row_of_a_source_once():
    memo, f = rows_module._RecordRowMemo(max_rows=100), Counted()
    got = memo.rows(("a",), [(1, 2), (3, 4), (1, 2), (0, 1)], f)
    assert f.asked == [(1, 2), (3, 4), (0, 1)]
    assert [None if r is None else r.tolist() for r in got] == [[3.0], [7.0], [3.0], None]
    memo.rows(("a",), [(3, 4), (5, 6)], f)
    memo.rows(("b",), [(3, 4)], f)
    assert f.asked == [(1, 2), (3, 4), (0, 1), (5, 6), (3, 4)]


def _kept(memo, key, knobs):
    """Whether reading ``key`` again computes nothing."""
    f = Counted()
    memo.rows(key, knobs, f)
    return not f.asked


def test_the_memory_drops_the_oldest_other_sources_only_past_max_rows():
    memo, f = rows_module._RecordRowMemo(max_rows=4), Counted()
    a, b, c = [(1, 1), (1, 2)], [(2, 1), (2, 2)], [(3, 1), (3, 2)]
    memo.rows(("a",), a, f)
    memo.rows(("b",), b, f)  # 4 rows: not past the bound
    assert _kept(memo, ("a",), a) and _kept(memo, ("b",), b)
    memo.rows(("c",), c, f)  # 6 rows: the oldest (a) goes, b and c stay
    assert _kept(memo, ("b",), b) and _kept(memo, ("c",), c)
    assert not _kept(memo, ("a",), a)  # computed again (and b, the oldest, dropped)
    assert _kept(memo, ("a",), a) and _kept(memo, ("c",), c)


def test_one_source_larger_than_the_bound_is_kept():
    memo = rows_module._RecordRowMemo(max_rows=2)
    knobs = [(1, k) for k in range(5)]
    memo.rows(("a",), knobs, Counted())
    assert _kept(memo, ("a",), knobs)
