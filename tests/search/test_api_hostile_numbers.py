"""Hostile numbers and types given to the search API (README "Hostile input", DESIGN.md):
a value the code cannot use is one InvalidInputError naming the argument when it is given,
never a silently wrong size, an XGBoostError or an hour-long fit mid-run, or a TypeError from
open() that names no field."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iobound.errors import InvalidInputError


# -- GridSpace: the size of a large product ----------------------------------------------

@pytest.mark.parametrize("dims", [[100] * 10, [2] * 63, [2] * 64, [3] * 41])
def test_grid_space_size_is_exact_or_refused(dims):
    """len(GridSpace) is the exact product of the value counts (a Python int), or the space
    is refused when that product is past the signed 64-bit indices (as ReplaySpace does);
    np.prod wrapped around: 100^10 gave 7766279631452241920, 2^64 gave an empty space."""
    from search import GridSpace
    exact = math.prod(dims)
    try:
        space = GridSpace({f"p{k}": list(range(d)) for k, d in enumerate(dims)})
    except InvalidInputError:
        assert exact > (1 << 63) - 1
        return
    assert len(space) == exact
    assert space.get(exact - 1) == {f"p{k}": d - 1 for k, d in enumerate(dims)}


def test_grid_space_below_the_index_limit_still_works():
    from search import GridSpace
    space = GridSpace({f"p{k}": [0, 1] for k in range(62)})
    assert len(space) == 1 << 62
    [i] = space.sample(1, np.random.default_rng(0))
    assert 0 <= i < 1 << 62


# -- XGBOptions: what XGBoost refuses is refused at construction ---------------------------

@pytest.mark.parametrize("field,value", [
    ("max_depth", 1 << 31), ("n_jobs", 1 << 31), ("n_jobs", -(1 << 31) - 1),
    ("learning_rate", 1e39), ("min_child_weight", 1e39),     # beyond float32
    ("learning_rate", 1e-40), ("subsample", 1e-40),          # float32 subnormals
    ("colsample_bynode", 1e-300), ("min_child_weight", 1e-300),
])
def test_xgb_options_xgboost_refuses_are_refused_at_construction(field, value):
    """XGBOptions' docstring: values XGBoost would refuse mid-run are refused at
    construction naming the field. These were accepted and then stopped the fit with an
    XGBoostError ("expect int", "Out of range value")."""
    from search.cost_model import XGBCostModel, XGBOptions
    try:
        opts = XGBOptions(**{field: value})
    except InvalidInputError as exc:
        assert field in str(exc)
        return
    X = np.arange(24, dtype=float).reshape(-1, 2)
    XGBCostModel(opts).fit(X, 1.0 + X[:, 0])  # accepted: then XGBoost must take it


@pytest.mark.parametrize("field", ["n_estimators", "pairs_per_sample"])
def test_xgb_options_huge_counts_are_refused(field):
    """2^40 boosting rounds (or ranking pairs per row) never finishes a fit: refused when
    given, not a tuning run that hangs in XGBoost (where no alarm interrupts it)."""
    from search.cost_model import XGBOptions
    with pytest.raises(InvalidInputError, match=field):
        XGBOptions(**{field: 1 << 40})


def test_xgb_options_numpy_and_normal_values_still_work():
    from search.cost_model import XGBCostModel, XGBOptions
    opts = XGBOptions(n_estimators=np.int64(10), max_depth=np.int32(4),
                      learning_rate=np.float64(0.3), subsample=np.float32(0.5))
    X = np.arange(40, dtype=float).reshape(-1, 2)
    pred = XGBCostModel(opts, seed=np.int64(3)).fit(X, 1.0 + (X[:, 0] - 10) ** 2).predict(X)
    assert pred.shape == (20,) and np.isfinite(pred).all()


# -- XGBCostModel: the seed and the options -------------------------------------------------

@pytest.mark.parametrize("seed", [2.5, "4", True, None, math.nan, 1 << 63])
def test_xgb_cost_model_seed_is_checked(seed):
    """A seed that is no integer (2.5 was truncated to 2, "4" and True taken as 4 and 1) or
    past a C long (an XGBoostError at the first fit) is refused naming the seed."""
    from search.cost_model import XGBCostModel
    with pytest.raises(InvalidInputError, match="seed"):
        XGBCostModel(seed=seed)


def test_xgb_cost_model_options_must_be_options():
    from search.cost_model import XGBCostModel
    with pytest.raises(InvalidInputError, match="options"):
        XGBCostModel({"n_estimators": 5})


# -- TuneSettings: file fields and the executor ----------------------------------------------

@pytest.mark.parametrize("field,value", [("log", True), ("log", 2.5), ("history", 0),
                                         ("export_cache", 1), ("resume", -1), ("log", ["a"])])
def test_tune_settings_file_fields_must_be_paths(field, value):
    """A file field that is no path is refused naming the field when the settings are made,
    not a bare "expected str, bytes or os.PathLike object, not bool" from inside tune_layers."""
    from search import TuneSettings
    with pytest.raises(InvalidInputError, match=field):
        TuneSettings(**{field: value})


@pytest.mark.parametrize("value", ["workers=2", 2, {"workers": 2}])
def test_tune_settings_executor_must_be_executor_options(value):
    """executor='x' was accepted and failed in tune_layers with "replace() should be called
    on dataclass instances"."""
    from search import TuneSettings
    with pytest.raises(InvalidInputError, match="executor"):
        TuneSettings(executor=value)


def test_tune_settings_valid_paths_and_executor_still_work(tmp_path):
    from search import TuneSettings
    from search.executors import ExecutorOptions
    s = TuneSettings(log=tmp_path / "run.jsonl", history=str(tmp_path / "h.db"),
                     executor=ExecutorOptions(workers=1))
    assert s.executor.workers == 1


# -- Space indices: features, knobs and neighbours of a non-integer -------------------------

def _spaces():
    from iobound import ConvLayer
    from search.conv_space import ConvSpace
    from search.kt_cache import KtCache
    from search.replay_space import ReplaySpace
    layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    cache = KtCache({"x": list(range(12)), "y": [1, 2]},
                    [{"x": x, "y": y, "time": 1.0 + x} for x in range(12) for y in (1, 2)])
    return {"conv": ConvSpace(layer, "v100", "direct"), "replay": ReplaySpace(cache)}


@pytest.mark.parametrize("kind", ["conv", "replay"])
@pytest.mark.parametrize("bad", [[2.7], ["2"], [True], np.array([2.5])])
def test_space_features_refuse_non_integer_indices(kind, bad):
    """Space contract: an index that is no integer is an InvalidInputError (get(2.7) is);
    features/knobs took 2.7 as index 2, "2" as 2 and True as 1 (rows of another config)."""
    space = _spaces()[kind]
    for method in (space.features, space.knobs):
        with pytest.raises(InvalidInputError, match="integer"):
            method(bad)


@pytest.mark.parametrize("kind", ["conv", "replay"])
def test_space_features_refuse_negative_indices(kind):
    """-1 is outside 0..len-1 (IndexError, as get(-1)); numpy read it as the last row."""
    space = _spaces()[kind]
    with pytest.raises(IndexError):
        space.features([-1])


@pytest.mark.parametrize("bad", [2.7, "2", True])
def test_conv_space_neighbours_refuse_non_integer_index(bad):
    """neighbours(2.7) were the neighbours of 2 (int(i)); the space's index check refuses it."""
    space = _spaces()["conv"]
    with pytest.raises(InvalidInputError, match="integer"):
        space.neighbours(bad)


@pytest.mark.parametrize("kind", ["conv", "replay"])
def test_space_features_take_numpy_indices(kind):
    space = _spaces()[kind]
    a = space.features(np.array([0, 3], dtype=np.int32))
    b = space.features([0, 3])
    assert np.array_equal(a, b) and space.features([]).shape[0] == 0
    assert space.neighbours(np.int64(3)) == space.neighbours(3)


def test_values_of_an_unknown_parameter_name_the_space_parameters():
    from search.grid_space import GridSpace
    space = GridSpace({"a": [1, 2], "b": [3]})
    with pytest.raises(InvalidInputError, match=r"unknown parameter 'q'.*a, b"):
        space.values("q")
    assert space.values("b") == [3]


def test_stall_options_of_another_type_are_named():
    from search.strategies.model_based import ModelBasedOptions
    with pytest.raises(InvalidInputError, match="stall must be"):
        ModelBasedOptions(stall=5)


# -- numpy integers where ints are asked, and the batch size's limit everywhere -----------

def test_numpy_integers_are_taken_as_ints_by_executor_and_strategy_options():
    """README: numpy integers work wherever ints do. ExecutorOptions refused them
    ("workers must be an integer >= 1, got np.int64(2)"); they are kept as Python ints."""
    from search.executors import ExecutorOptions
    from search.strategies import make_options
    o = ExecutorOptions(workers=np.int64(2), retries=np.int32(1), parallel_layers=np.int64(3))
    assert (o.workers, o.retries, o.parallel_layers) == (2, 1, 3)
    assert all(type(v) is int for v in (o.workers, o.retries, o.parallel_layers))
    assert type(make_options("random", {"batch_size": np.int64(16)}).batch_size) is int


@pytest.mark.parametrize("batch", [1 << 20, np.int64(1 << 20)])
def test_a_batch_past_the_limit_is_refused_by_every_way_in(batch):
    """iobound.limits.BATCH_SIZE held only for a Python int given to TuneSettings: a numpy
    one passed, and make_options (so tune(options=...)) never checked it."""
    from search.session import TuneSettings
    from search.strategies import make_options
    for make in (lambda: TuneSettings(strategy="random", options={"batch_size": batch}),
                 lambda: make_options("random", {"batch_size": batch})):
        with pytest.raises(InvalidInputError, match="batch_size=1048576 is above the limit"):
            make()
