"""Hostile arguments to the strategies (probe42 #1, #7, #8, #12, #16, #29): a hint, a tell
or an ``Observations.add`` of a bad index, of lists of two lengths, of a record of another
configuration or of one index twice; a strategy built on no space or with no Generator; a
GA ``max_tries`` that makes one ask run for minutes; a cost-model fit given the wrong
arguments or a seed that leaves the limit mid-run. Each is one InvalidInputError naming
the argument, never a dropped or cut value, a wrong answer or a raw error at a later call;
valid input behaves as before."""

from __future__ import annotations

import numpy as np
import pytest

from iobound import limits
from iobound.errors import InvalidInputError
from search.cost_model import XGBOptions
from search.grid_space import GridSpace
from search.measure.base import MeasureRecord
from search.strategies import make_strategy
from search.strategies.base import Observations, check_told
from search.strategies.ga import GAOptions, GeneticStrategy
from search.strategies.gga import GuidedGAOptions
from search.strategies.model_based import ModelBasedOptions
from search.strategies.model_refit import ModelRefit, train_model

SPACE = GridSpace({"a": list(range(10))})
FAST = XGBOptions(n_estimators=3)


def _rec(a, t=1.0):
    return MeasureRecord.ok({"a": a}, time_ms=t)


def _explorer(space=SPACE):
    return make_strategy("explorer", space, None, np.random.default_rng(0))


# -- #1: ModelBasedStrategy.hint is checked as tell is -------------------------------------

@pytest.mark.parametrize("indices, records, what", [
    ([1, 2, 3], [_rec(1)], "3 indices but 1 record"),
    ([1.7], [_rec(1)], "index must be an integer"),
    ("12", [_rec(1), _rec(2)], "indices must be a sequence"),
    ([999, 998], [_rec(1), _rec(2)], "index=999 is above"),
    ([-1], [_rec(1)], "index=-1 is below"),
    (None, None, "indices must be a sequence"),
    ([1], [1.0], "records must be MeasureRecords"),
    ([1], [_rec(2)], r"records\[0\] is a record of"),
    ([1, 1], [_rec(1), _rec(1, 2.0)], "both 1"),
])
def test_hint_refuses_what_tell_refuses(indices, records, what):
    """Hints were dropped (lists of two lengths), cut (1.7 as 1), read as characters ("12"),
    or stored out of the space (999, -1: a raw IndexError at a later ask); None and a float
    record were raw errors. Nothing is stored when the hint is refused."""
    s = _explorer()
    with pytest.raises(InvalidInputError, match=f"hint: .*{what}"):
        s.hint(indices, records)
    assert dict(s.hints.cost) == {}


def test_valid_hints_are_kept_as_before():
    s = _explorer()
    s.hint([np.int64(4), 5], [_rec(4, 4.0), _rec(5, 5.0)])
    s.tell([0], [_rec(0, 4.5)])
    assert sorted(s.training_set().cost) == [0, 5] and dict(s.hints.cost) == {4: 4.0, 5: 5.0}


# -- #7: the strategies refuse a space that is no Space and an rng that is no Generator -----

NAMES = ["explorer", "ga", "gga", "grid", "random", "sa", "zero_shot"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("space", [None, {"a": [1, 2]}, [0, 1]], ids=["None", "dict", "list"])
def test_a_space_that_is_no_space_is_refused_naming_space(name, space):
    """grid and zero_shot took len(dict) as the space size (ask(2) gave [0]); the others
    failed with raw TypeError or AttributeError."""
    with pytest.raises(InvalidInputError, match="space must be a search.space.Space"):
        make_strategy(name, space, rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", ["explorer", "ga", "gga", "grid", "sa", "zero_shot"])
@pytest.mark.parametrize("rng", [5, 0, np.random.RandomState(0), "seed"],
                         ids=["5", "0", "RandomState", "str"])
def test_an_rng_that_is_no_generator_is_refused_at_construction(name, rng):
    """explorer, sa and zero_shot failed with a raw AttributeError ('integers'), grid
    accepted any rng silently; ga and gga only refused it at the first ask."""
    with pytest.raises(InvalidInputError, match="rng must be a numpy.random"):
        make_strategy(name, GridSpace({"a": [1, 2]}), rng=rng)


@pytest.mark.parametrize("name", NAMES)
def test_valid_space_and_rng_still_build_every_strategy(name):
    s = make_strategy(name, GridSpace({"a": [1, 2, 3]}), rng=np.random.default_rng(0))
    assert sorted(s.ask(3)) == [0, 1, 2]


# -- #8: tell refuses a record of another configuration and a repeated index ----------------

@pytest.mark.parametrize("name", ["explorer", "ga", "gga", "random", "sa", "grid"])
def test_tell_refuses_a_record_of_another_configuration(name):
    """The time of a=9 was learnt as the cost of index 0 (a=0)."""
    s = make_strategy(name, SPACE, rng=np.random.default_rng(0))
    s.ask(1)
    with pytest.raises(InvalidInputError, match=r"tell: records\[0\] is a record of \{'a': 9\}, "
                                                r"not of configuration 0 \{'a': 0\}"):
        s.tell([0], [_rec(9, 0.001)])
    assert dict(s.seen.cost) == {}


@pytest.mark.parametrize("name", ["explorer", "ga", "random"])
def test_tell_refuses_an_index_told_twice(name):
    """The second record replaced the first: 1.0 ms was lost, 9.0 ms kept."""
    s = make_strategy(name, SPACE, rng=np.random.default_rng(0))
    with pytest.raises(InvalidInputError, match=r"indices\[0\] and indices\[1\] are both 5"):
        s.tell([5, 5], [_rec(5, 1.0), _rec(5, 9.0)])
    assert dict(s.seen.cost) == {}


def test_a_record_of_the_same_configuration_in_another_numeric_type_is_accepted():
    """The space's own equality: numpy values and 1.0 for 1 are the same configuration (as
    the tuner's check of reusable records takes them)."""
    s = _explorer()
    s.tell([5, 6], [_rec(np.int64(5), 1.0), _rec(6.0, 2.0)])
    assert dict(s.seen.cost) == {5: 1.0, 6: 2.0}
    assert check_told(SPACE, np.array([1]), [_rec(1.0)])[0] == [1]


def test_check_told_refuses_a_space_that_is_no_space():
    with pytest.raises(InvalidInputError, match="space must be"):
        check_told({"a": [1]}, [0], [_rec(1)])


# -- #12: Observations.add and best(k) ------------------------------------------------------

def _obs():
    o = Observations()
    o.add([1, 2, 3], [_rec(1, 3.0), _rec(2, 2.0), _rec(3, 1.0)])
    return o


@pytest.mark.parametrize("k, what", [(-1, "k=-1 is below"), (1.5, "k must be an integer"),
                                     ("2", "k must be an integer"), (True, "k must be")])
def test_best_refuses_a_k_that_is_no_count(k, what):
    """-1 dropped the last index ([3, 2]); 1.5 was a raw TypeError."""
    with pytest.raises(InvalidInputError, match=what):
        _obs().best(k)


def test_best_of_a_count_is_as_before():
    o = _obs()
    assert o.best() == [3, 2, 1] and o.best(2) == [3, 2] and o.best(0) == []
    assert o.best(np.int64(1)) == [3] and o.best(10) == [3, 2, 1]


@pytest.mark.parametrize("indices, records, what", [
    ([1, 2], [_rec(1)], "2 indices but 1 record"),
    ([1.9], [_rec(1)], "index must be an integer"),
    ("12", [_rec(1)] * 2, "indices must be a sequence"),
    ([-1], [_rec(1)], "index=-1 is below"),
    ([1], [1.0], "records must be MeasureRecords"),
    ([4, 4], [_rec(4), _rec(4)], "both 4"),
])
def test_observations_add_refuses_bad_pairs(indices, records, what):
    """Lists of two lengths were cut, 1.9 was index 1, "12" was read as characters."""
    o = Observations()
    with pytest.raises(InvalidInputError, match=f"Observations.add: .*{what}"):
        o.add(indices, records)
    assert o.cost == {}


def test_observations_add_of_valid_pairs_is_as_before():
    o = Observations()
    o.add(range(2), [_rec(0, 2.0), _rec(1, 1.0)])
    o.add(np.array([0]), [_rec(0, 5.0)])  # told again later: the new cost, as before
    assert o.cost == {0: 5.0, 1: 1.0} and all(type(i) is int for i in o.cost)


# -- #16: GAOptions.max_tries is bounded by GA_TRIES -----------------------------------------

@pytest.mark.parametrize("cls", [GAOptions, GuidedGAOptions])
@pytest.mark.parametrize("value", [10 ** 7, 2 ** 62, limits.GA_TRIES.high + 1])
def test_max_tries_past_the_limit_is_refused(cls, value):
    """max_tries=10**7 made one ask run for minutes when no new child could appear."""
    with pytest.raises(InvalidInputError, match="max_tries=.* is above the limit 1024"):
        cls(max_tries=value)


def test_max_tries_within_the_limit_is_kept_and_asks_finish():
    """The limit itself, and the values below 0 accepted before (no tries), still are."""
    assert GAOptions(max_tries=limits.GA_TRIES.high).max_tries == 1024
    assert GAOptions(max_tries=-3).max_tries == -3
    sp3 = GridSpace({"a": [0, 1, 2], "b": [0]})
    s = GeneticStrategy(sp3, GAOptions(mutation=0.0, max_tries=limits.GA_TRIES.high),
                        np.random.default_rng(0))
    s.tell([0, 1], [MeasureRecord.ok(sp3.get(i), time_ms=1.0 + i) for i in (0, 1)])
    s._asked.update([0, 1])
    assert s.ask(1) == [2]


# -- #29: learn_on, train_model and ModelRefit ----------------------------------------------

SIX = GridSpace({"a": list(range(6))})


def _seen():
    o = Observations()
    o.add([0, 3, 5], [MeasureRecord.ok(SIX.get(i), time_ms=1.0 + i) for i in (0, 3, 5)])
    return o


@pytest.mark.parametrize("space", [None, {"a": [1]}])
def test_learn_on_refuses_a_space_that_is_no_space(space):
    with pytest.raises(InvalidInputError, match="space must be"):
        _explorer(SIX).learn_on(space)


@pytest.mark.parametrize("args, what", [
    ((SIX, {0: 1.0}, FAST, 0), "seen must be a search.strategies.base.Observations"),
    ((None, "seen", FAST, 0), "space must be"),
    ((GridSpace({"a": [1, 2]}), "seen", FAST, 0), "seen holds index 5, outside the space"),
    ((SIX, "seen", None, 0), "options must be a search.cost_model.XGBOptions"),
    ((SIX, "seen", {"n_estimators": 3}, 0), "options must be"),
    ((SIX, "seen", FAST, -1), "seed=-1 is below"),
    ((SIX, "seen", FAST, 2 ** 63), "seed=.* is above the limit"),
    ((SIX, "seen", FAST, 0.5), "seed must be an integer"),
])
def test_train_model_refuses_bad_arguments(args, what):
    """Raw AttributeError ('arrays', 'features'), IndexError (index 5 outside 0..1)."""
    args = tuple(_seen() if a == "seen" else a for a in args)
    with pytest.raises(InvalidInputError, match=what):
        train_model(*args)


def test_train_model_refuses_a_min_ok_below_one():
    with pytest.raises(InvalidInputError, match="min_ok"):
        train_model(SIX, _seen(), FAST, 0, min_ok=0)


@pytest.mark.parametrize("args, what", [
    ((SIX, "seen", None), "options must be a search.strategies.model_based.ModelBasedOptions"),
    ((SIX, "seen", FAST), "options must be"),
    ((None, "seen", "opts"), "space must be"),
    ((SIX, {0: 1.0}, "opts"), "training must be"),
])
def test_model_refit_refuses_bad_arguments(args, what):
    """ModelRefit(0).model(sp, o, None) was a raw AttributeError ('plan_size')."""
    args = tuple(_seen() if a == "seen" else ModelBasedOptions() if a == "opts" else a
                 for a in args)
    with pytest.raises(InvalidInputError, match=what):
        ModelRefit(0).model(*args)


@pytest.mark.parametrize("seed, what", [(-1, "below"), (2 ** 63, "above"), (1.5, "integer"),
                                        (None, "integer")])
def test_model_refit_checks_its_seed_at_construction(seed, what):
    with pytest.raises(InvalidInputError, match=f"seed.*{what}"):
        ModelRefit(seed)


def test_a_seed_at_the_limit_wraps_instead_of_failing_the_second_fit():
    """ModelRefit(2**63 - 1) fitted once, then failed mid-run: seed + 1 passed SEED."""
    seen = _seen()
    r = ModelRefit(limits.SEED.high)
    opts = ModelBasedOptions(refit_all_until=0, refit_growth=0, model=FAST)
    assert r.model(SIX, seen, opts) is not None
    seen.add([1], [MeasureRecord.ok(SIX.get(1), time_ms=9.0)])
    assert r.model(SIX, seen, opts) is not None and r.fits == 2


def test_ordinary_seeds_fit_with_seed_plus_fits_as_before(monkeypatch):
    """The wrap is the identity inside the limit: fits are seeded seed, seed + 1, ..."""
    import search.strategies.model_refit as mr
    seeds = []
    fit = mr.train_model

    def spy(space, seen, options, seed, min_ok=2):
        seeds.append(seed)
        return fit(space, seen, options, seed, min_ok)
    monkeypatch.setattr(mr, "train_model", spy)
    seen = _seen()
    r = ModelRefit(7)
    opts = ModelBasedOptions(refit_all_until=0, refit_growth=0, model=FAST)
    for i in (1, 2):
        r.model(SIX, seen, opts)
        seen.add([i], [MeasureRecord.ok(SIX.get(i), time_ms=9.0)])
    r.model(SIX, seen, opts)
    assert seeds == [7, 8, 9]
