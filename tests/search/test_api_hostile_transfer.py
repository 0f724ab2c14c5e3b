"""Hostile input to the history prior, its picker, the guided strategy, the transfer
session and gga's options from a database.

Each test is one finding of a probe: bad input to a public function is one
InvalidInputError naming the argument (and the value), never a raw TypeError or
AttributeError, and never a silent partial result (a ``zip`` that drops the sources past
a shorter list, a slice by -1 that drops the last source, NaN taken as a weight). The
controls check that valid input gives exactly what it gave before the checks (the
values were computed with the unchecked code).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.db import Measurement, TuningDB, Workload
from search.grid_space import GridSpace
from search.measure.base import MeasureRecord
from search.strategies import make_options
from search.strategies.gga import GuidedGAOptions, options_from_db
from search.strategies.random import RandomStrategy
from search.transfer.guided import HistoryGuided, history_picker
from search.transfer.picker import Picker
from search.transfer.prior import HistoryPrior
from search.transfer.prior_feature import PriorFeatureSpace
from search.transfer.rank_test import kendall_greater
from search.transfer.session import own_records, transfer_options, usable_history
from search.transfer.sources import consensus, source_groups

SPACE = GridSpace({"x": list(range(12))})
W = Workload("k", [12], ("x",))
HIST = [Measurement(W, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - b)))
        for d, b in (("gpu0", 3), ("gpu1", 8), ("gpu2", 6)) for x in range(12)]
PRIOR = HistoryPrior.fit(SPACE, HIST, seed=0)
KNOWN = {3: 1.0, 8: 3.0, 6: 2.0, 0: 4.0}

#: bad ``known`` maps (index -> cost) and what the message names
BAD_KNOWN = [("abc", "known must be a mapping"), ([1.0, 2.0], "known must be a mapping"),
             ({99: 1.0}, "known: index 99"), ({-1: 1.0}, "known: index -1"),
             ({1.5: 1.0}, "known: index 1.5"), ({True: 1.0}, "known: index True"),
             ({0: math.nan}, r"known\[0\] must be a finite number.*nan"),
             ({0: math.inf}, r"known\[0\] must be a finite number.*inf"),
             ({0: "1"}, r"known\[0\] must be a finite number.*'1'"),
             ({0: None}, r"known\[0\] must be a finite number.*None")]
#: sharpness values outside the finite numbers >= 0
BAD_SHARPNESS = [-1e308, -1.0, math.nan, math.inf, True, "1", None]


def _db() -> TuningDB:
    db = TuningDB(":memory:")
    db.add(HIST)
    return db


# -- 1. HistoryPrior.weighted_order --------------------------------------------------------

@pytest.mark.parametrize("likeness", [[0.5], [0.5, 0.1], [0.5, 0.1, 0.2, 0.3], []])
def test_weighted_order_refuses_a_likeness_not_one_per_source(likeness):
    with pytest.raises(InvalidInputError, match=r"likeness must hold 3 numbers.*got "
                                                 f"{len(likeness)}"):
        PRIOR.weighted_order(likeness, 15.0)


@pytest.mark.parametrize("likeness", [[0.5, math.nan, 0.1], [math.inf, 0.0, 0.1], "abc",
                                      [True, False, True], ["a", "b", "c"], 0.5, None])
def test_weighted_order_refuses_a_likeness_of_non_finite_numbers(likeness):
    with pytest.raises(InvalidInputError, match="likeness must be"):
        PRIOR.weighted_order(likeness, 15.0)


@pytest.mark.parametrize("sharpness", BAD_SHARPNESS)
def test_weighted_order_refuses_a_sharpness_not_finite_and_at_least_0(sharpness):
    with pytest.raises(InvalidInputError, match="sharpness must be a finite number >= 0"):
        PRIOR.weighted_order([0.2, 0.9, -0.5], sharpness)


def test_weighted_order_of_valid_input_is_unchanged():
    assert [g.device for g in PRIOR.groups] == ["gpu0", "gpu1", "gpu2"]
    assert PRIOR.weighted_order([0.2, 0.9, -0.5], 15.0).tolist() == \
        [8, 7, 9, 6, 10, 5, 11, 4, 3, 2, 1, 0]
    assert PRIOR.weighted_order(np.array([0.2, 0.9, -0.5]), 0).tolist() == \
        [6, 8, 3, 7, 5, 4, 9, 2, 10, 1, 11, 0]


def test_weighted_order_of_a_likeness_spread_past_float_range_is_its_limit():
    """Finite likenesses whose spread overflows: the far source's weight is 0 (its limit),
    or every weight 1 with sharpness 0; never NaN weights (0 * inf) or an overflow."""
    with np.errstate(over="raise", invalid="raise"):
        assert PRIOR.weighted_order([1e308, -1e308, 0.0], 1e308).tolist() == \
            PRIOR.weighted_order([1.0, -1.0, 0.0], 1e3).tolist()
        assert PRIOR.weighted_order([1e308, -1e308, 0.0], 0).tolist() == \
            PRIOR.weighted_order([0.0, 0.0, 0.0], 15.0).tolist()


# -- 2. HistoryPrior.matched_order ---------------------------------------------------------

@pytest.mark.parametrize("known, message", BAD_KNOWN)
def test_matched_order_refuses_known_not_costs_of_the_spaces_configurations(known, message):
    with pytest.raises(InvalidInputError, match=message):
        PRIOR.matched_order(known, 15.0)


@pytest.mark.parametrize("sharpness", BAD_SHARPNESS)
def test_matched_order_refuses_a_sharpness_not_finite_and_at_least_0(sharpness):
    with pytest.raises(InvalidInputError, match="sharpness must be a finite number >= 0"):
        PRIOR.matched_order(KNOWN, sharpness)


def test_matched_order_of_valid_input_is_unchanged():
    assert PRIOR.matched_order(KNOWN, 15.0).tolist() == [3, 4, 2, 5, 1, 6, 0, 7, 8, 9, 10, 11]
    numpy_known = {np.int64(i): np.float32(c) for i, c in KNOWN.items()}
    assert PRIOR.matched_order(numpy_known, 15).tolist() == \
        PRIOR.matched_order(KNOWN, 15.0).tolist()


# -- 3. HistoryPrior.source_orders ---------------------------------------------------------

@pytest.mark.parametrize("limit", [-1, -3, 1.5, True, "1", math.nan])
def test_source_orders_refuses_a_limit_that_is_no_count(limit):
    with pytest.raises(InvalidInputError, match="limit"):
        PRIOR.source_orders(limit)


@pytest.mark.parametrize("min_size", [-1, 1.5, False, "2", None])
def test_source_orders_refuses_a_min_size_that_is_no_count(min_size):
    with pytest.raises(InvalidInputError, match="min_size"):
        PRIOR.source_orders(None, min_size)


def test_source_orders_of_valid_input_is_unchanged():
    names = ["k [12]@gpu0", "k [12]@gpu1", "k [12]@gpu2"]
    assert [n for n, _ in PRIOR.source_orders()] == names
    assert [n for n, _ in PRIOR.source_orders(2)] == names[:2]
    assert [n for n, _ in PRIOR.source_orders(np.int64(1), min_size=2)] == names[:1]
    assert PRIOR.source_orders(0) == [] and PRIOR.source_orders(10, min_size=13) == []


# -- 4. HistoryPrior.agreement -------------------------------------------------------------

@pytest.mark.parametrize("known, message", BAD_KNOWN)
def test_agreement_refuses_known_not_costs_of_the_spaces_configurations(known, message):
    with pytest.raises(InvalidInputError, match=message):
        PRIOR.agreement(known)


def test_agreement_of_valid_input_is_unchanged():
    assert PRIOR.agreement(KNOWN) == [(0.5477225575051662, 0.25), (0.0, 0.625),
                                      (0.3333333333333334, 0.375)]
    assert PRIOR.agreement({}) == [(0.0, 1.0)] * 3


# -- 5. HistoryPrior.picker ----------------------------------------------------------------

@pytest.mark.parametrize("flags", [{"model": "no"}, {"alone": 1}, {"model": None},
                                   {"model": True, "alone": "yes"}])
def test_picker_refuses_flags_that_are_not_bools(flags):
    (name,) = [k for k, v in flags.items() if v is not True]
    with pytest.raises(InvalidInputError, match=f"{name} must be True or False"):
        PRIOR.picker(**flags)


def test_picker_of_valid_flags_is_unchanged():
    p = PRIOR.picker(model=np.bool_(True))
    assert p.names == ["order", "ranking", "regression", "k [12]@gpu0", "k [12]@gpu1",
                       "k [12]@gpu2"]
    assert p.picks(5, [3]) == [6, 7, 8, 2, 9]
    assert PRIOR.picker(True, True).names == ["ranking", "regression"]


# -- 6. Picker -----------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1.5, -1, True, "2", None, math.inf])
def test_picks_refuses_an_n_that_is_no_count(n):
    with pytest.raises(InvalidInputError, match=r"\bn\b"):
        Picker([np.array([1, 2])]).picks(n, set())


@pytest.mark.parametrize("asked", [None, "ab", 5, {1.5}, {True}, [None]])
def test_picks_refuses_asked_not_a_collection_of_indices(asked):
    with pytest.raises(InvalidInputError, match="asked"):
        Picker([np.array([1, 2])]).picks(1, asked)


@pytest.mark.parametrize("lists, names, message", [
    ("ab", None, "lists must be a sequence"), (5, None, "lists must be a sequence"),
    ([[1.5, 2.0]], None, r"lists\[0\] must be a sequence of configuration indices"),
    ([[1, -1]], None, r"lists\[0\]: index -1"), (["ab"], None, r"lists\[0\]"),
    ([[1], [2]], "ab", "names must be a sequence"), ([[1], [2]], ["a", 2], r"names\[1\]"),
    ([[1], [2]], ["a"], "names: 1 names for 2 lists")])
def test_picker_refuses_lists_and_names_of_the_wrong_kind(lists, names, message):
    with pytest.raises(InvalidInputError, match=message):
        Picker(lists, names)


def test_picks_of_valid_input_is_unchanged():
    assert Picker([[2, 0, 1], [2, 5], []]).picks(4, frozenset({0})) == [2, 5, 1]
    p = Picker([np.array([2, 0, 1]), np.array([2, 5]), np.array([7])])
    assert p.picks(np.int64(3), asked=[]) == [2, 5, 7] and p.picks(0, set()) == []
    assert p.picks(2, asked=np.array([0])) == [1]
    assert Picker([np.array([3])], names=("ranking",)).names == ["ranking"]


# -- 7. HistoryGuided without an rng -------------------------------------------------------

def test_history_guided_without_rng_names_the_inner_strategy():
    inner = RandomStrategy(SPACE, rng=np.random.default_rng(0))
    with pytest.raises(InvalidInputError, match="strategy 'random' needs an explicit rng"):
        HistoryGuided(inner, PRIOR)


def test_history_guided_with_rng_is_named_as_its_inner_strategy():
    inner = RandomStrategy(SPACE, rng=np.random.default_rng(0))
    s = HistoryGuided(inner, PRIOR, rng=np.random.default_rng(1))
    assert s.name == "random" and len(s.ask(3)) == 3


@pytest.mark.parametrize("prior, options, message", [
    ("x", None, "prior must be a search.transfer.prior.HistoryPrior"),
    (PRIOR, "alone", "options must be GuidedOptions"),
    (PRIOR, {"decai": 0.5}, "unknown option 'decai'")])
def test_history_picker_refuses_a_prior_or_options_of_the_wrong_kind(prior, options, message):
    with pytest.raises(InvalidInputError, match=message):
        history_picker(prior, options)


def test_history_picker_takes_options_as_a_mapping_as_history_guided_does():
    assert history_picker(PRIOR, {"model_picks": "never"}).names == \
        ["order", "k [12]@gpu0", "k [12]@gpu1", "k [12]@gpu2"]


# -- 8. transfer_options, usable_history, own_records --------------------------------------

@pytest.mark.parametrize("exclude, shown", [("abc", "'abc'"), (5, "5"), (b"ab", "b'ab'"),
                                            ({"a": 1.0}, "{'a': 1.0}"), ([1], "the item 1"),
                                            ([("a",)], r"the item \('a',\)"),
                                            ([("a", "1")], r"the item \('a', '1'\)"),
                                            ([(1, 1.0)], r"the item \(1, 1.0\)"),
                                            ([("a", True)], r"the item \('a', True\)")])
def test_transfer_options_refuses_exclude_not_a_set_of_record_identities(exclude, shown):
    with pytest.raises(InvalidInputError, match=f"exclude must be a set of .* got {shown}"):
        transfer_options(_db(), SPACE, exclude=exclude)
    with pytest.raises(InvalidInputError, match="exclude must be a set of"):
        usable_history(_db(), SPACE, exclude=exclude)


@pytest.mark.parametrize("exclude_devices", ["gpu0", 5, [1]])
def test_transfer_options_refuses_exclude_devices_of_the_wrong_kind(exclude_devices):
    with pytest.raises(InvalidInputError, match="exclude_devices"):
        transfer_options(_db(), SPACE, exclude_devices=exclude_devices)


@pytest.mark.parametrize("records, message", [("ab", "records must be a sequence"),
                                              ([1], r"records\[0\] must be"),
                                              (None, "records must be a sequence")])
def test_own_records_refuses_what_is_no_records(records, message):
    with pytest.raises(InvalidInputError, match=message):
        own_records(records)


def test_transfer_options_of_valid_exclude_is_unchanged():
    db = _db()
    own = own_records(m.record for m in HIST[:12])  # gpu0's, as a generator
    assert len(usable_history(db, SPACE, exclude=own)) == 24
    as_list = usable_history(db, SPACE, exclude=sorted(own))
    assert as_list == usable_history(db, SPACE, exclude=own)
    prior, info = transfer_options(db, SPACE, exclude=own, exclude_devices=["gpu2"])
    assert info.devices == ("gpu1",) and info.records == 12 and prior.devices == ("gpu1",)
    prior, info = transfer_options(db, SPACE, exclude=frozenset(), exclude_devices=("gpu2",))
    assert info.devices == ("gpu0", "gpu1") and info.records == 24


# -- 9. gga's options_from_db --------------------------------------------------------------

def test_options_from_db_names_an_unknown_option_and_the_allowed_ones():
    with pytest.raises(InvalidInputError, match="unknown option 'bogus' for strategy 'gga'; "
                                                 "allowed: batch_size, population"):
        options_from_db(_db(), SPACE, bogus=1)


def test_options_from_db_refuses_a_history_option():
    with pytest.raises(InvalidInputError, match="history is not an option here"):
        options_from_db(_db(), SPACE, history=())


@pytest.mark.parametrize("name, value", [("population", 1.5), ("omega", math.nan),
                                         ("crossover", 2.0), ("batch_size", True)])
def test_options_from_db_refuses_a_bad_option_value_naming_it(name, value):
    with pytest.raises(InvalidInputError, match=name):
        options_from_db(_db(), SPACE, **{name: value})


def test_options_from_db_of_valid_options_is_unchanged():
    got = options_from_db(_db(), SPACE, [12], exclude_devices=["gpu1"], population=4,
                          crossover=0.25)
    hist = tuple(m for m in HIST if m.device != "gpu1")
    assert got == GuidedGAOptions(history=got.history, target_problem=[12], population=4,
                                  crossover=0.25)
    assert sorted(m.record.config["x"] for m in got.history) == \
        sorted(m.record.config["x"] for m in hist)
    assert make_options("gga", {"population": 4}).population == 4


# -- more of the transfer package: consensus, source_groups, the feature space, tau --------

@pytest.mark.parametrize("scale, message", [([1.0], "scale must hold 3 numbers"),
                                            ([1.0, math.nan, 1.0], "scale must be finite"),
                                            ([1.0, -1.0, 1.0], "scale must be numbers >= 0"),
                                            ("abc", "scale must be a sequence")])
def test_consensus_refuses_a_scale_not_one_weight_per_group(scale, message):
    with pytest.raises(InvalidInputError, match=message):
        consensus(PRIOR.groups, scale)


def test_consensus_refuses_groups_that_are_no_source_groups():
    with pytest.raises(InvalidInputError, match="groups"):
        consensus("ab")


def test_consensus_of_valid_input_is_unchanged():
    assert consensus(PRIOR.groups).tolist() == PRIOR.consensus.tolist()
    assert consensus(PRIOR.groups, [1, 0, 0]).tolist()[:3] == [3, 2, 4]


@pytest.mark.parametrize("args, message", [(("s", HIST), "space must be"),
                                           ((SPACE, [1, 2]), r"history\[0\] must be"),
                                           ((SPACE, "ab"), "history must be"),
                                           ((SPACE, HIST, None, {"omega": 1}), "options must be")])
def test_source_groups_refuses_arguments_of_the_wrong_kind(args, message):
    with pytest.raises(InvalidInputError, match=message):
        source_groups(*args)


@pytest.mark.parametrize("order, sources, message", [
    ([1, -1], (), "order: index -1"), ([12], (), "order: index 12"),
    ([1.5], (), "order must be a sequence"), ("ab", (), "order must be a sequence"),
    ([1], "ab", "sources must be a sequence"), ([1], [("a",)], r"sources\[0\] must be"),
    ([1], [(5, [1])], r"sources\[0\] name must be"),
    ([1], [("a", [40])], r"sources\[0\] order: index 40")])
def test_prior_feature_space_refuses_orders_outside_the_space(order, sources, message):
    with pytest.raises(InvalidInputError, match=message):
        PriorFeatureSpace(SPACE, order, sources)


@pytest.mark.parametrize("known, alpha, message", [
    ({i: float(i) for i in range(8)}, math.nan, "alpha"),
    ({i: float(i) for i in range(8)}, 0, "alpha"), ({i: float(i) for i in range(8)}, 1.5, "alpha"),
    ([1.0, 2.0], 0.5, "known must be a mapping"),
    ({i: float(i) for i in range(5, 14)}, 0.5, "known: index 12"),
    ({-1: 1.0, **{i: float(i) for i in range(5)}}, 0.5, "known: index -1"),
    ({i: "1" for i in range(5)}, 0.5, r"known\[0\] must be a number")])
def test_the_gate_refuses_known_costs_or_alpha_of_the_wrong_kind(known, alpha, message):
    s = PriorFeatureSpace(SPACE, np.arange(12), [("k@gpu0", np.arange(12))])
    with pytest.raises(InvalidInputError, match=message):
        s.gate(known, alpha)


def test_the_gate_of_valid_input_is_unchanged():
    s = PriorFeatureSpace(SPACE, np.arange(12), [("k@gpu0", list(range(12)))])
    s.gate({i: (np.inf if i % 2 else float(10 - i)) for i in range(12)} | {50: np.inf}, 0.05)
    assert s.active.tolist() == [True, False]  # a failed configuration's index is not read
    s.gate({i: float(i) for i in range(12)}, 0.05)
    assert s.active.tolist() == [True, True]


@pytest.mark.parametrize("x, y, message", [([1, 2, 3], [1, 2], "y must hold 3 numbers"),
                                           ([1, 2, math.nan], [1, 2, 3], "x must be finite"),
                                           ("abc", [1, 2, 3], "x must be a sequence"),
                                           ([1, 2, 3], [[1], [2], [3]], "y must be a sequence")])
def test_kendall_greater_refuses_samples_that_do_not_pair(x, y, message):
    with pytest.raises(InvalidInputError, match=message):
        kendall_greater(x, y)


def test_kendall_greater_of_valid_input_is_unchanged():
    assert round(kendall_greater([1, 2, 3, 4], [10, 20, 30, 40])[1], 4) == 0.0417
    assert kendall_greater((1.0, 2.0, 3.0), np.array([3, 1, 2]))[0] == pytest.approx(-1 / 3)
