"""Hostile-but-plausible calls of the public Python API (README "Hostile input", DESIGN.md):
a wrong type, a float where an int is meant or a value at a documented limit is one
InvalidInputError (a ValueError) naming what is wrong, never an AttributeError/TypeError
from inside, a silent truncation or a file created under a wrong name."""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pytest

from iobound import ConvLayer, Device, direct_vertex_count, get_device, limits
from iobound.errors import InvalidInputError

LAYER = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
SMALL = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)


# -- iobound / dataflow: a layer that is no ConvLayer -----------------------------------

@pytest.mark.parametrize("bad", ["vgg16.conv1_1", None, {"n": 1}])
@pytest.mark.parametrize("call", ["evaluate_dataflow", "evaluate_dataflow_winograd",
                                  "optimal_direct_tiles", "optimal_winograd_tiles",
                                  "direct_vertex_count"])
def test_a_non_layer_is_named(call, bad):
    from dataflow import evaluate_dataflow, optimal_direct_tiles, optimal_winograd_tiles
    calls = {
        "evaluate_dataflow": lambda: evaluate_dataflow(bad, 64),
        "evaluate_dataflow_winograd": lambda: evaluate_dataflow(bad, 600, "winograd"),
        "optimal_direct_tiles": lambda: optimal_direct_tiles(bad, 64),
        "optimal_winograd_tiles": lambda: optimal_winograd_tiles(bad, 600),
        "direct_vertex_count": lambda: direct_vertex_count(bad),
    }
    with pytest.raises(InvalidInputError, match="layer"):
        calls[call]()


# -- evaluate_dataflow at the fast-memory limit -----------------------------------------

@pytest.mark.parametrize("s", [limits.FAST_MEMORY_WORDS.high - 1, limits.FAST_MEMORY_WORDS.high])
def test_dataflow_at_the_memory_limit_names_the_value_given(s):
    """S within FAST_MEMORY_WORDS either works or is refused naming the S the caller gave
    (not S + 2, the words of the bound's game, which the caller never typed)."""
    from dataflow import evaluate_dataflow
    try:
        rep = evaluate_dataflow(LAYER, s)
    except InvalidInputError as exc:
        assert f"={s} " in str(exc) or f"got {s}" in str(exc), str(exc)
    else:
        assert rep.fast_memory_words == s and rep.lower_bound > 0


def test_dataflow_report_json_with_numpy_tolerance():
    """``to_dict`` is JSON-ready (``iobound dataflow --json``) for a numpy tolerance too."""
    from dataflow import evaluate_dataflow
    rep = evaluate_dataflow(LAYER, 128, tolerance=np.float32(0.1))
    back = json.loads(json.dumps(rep.to_dict()))
    assert back["optimality_condition"]["tolerance"] == pytest.approx(0.1)
    assert back["optimality_condition"]["satisfied"] == (abs(rep.optimality.relative_gap) <= 0.1)


# -- search: the lazy exports ----------------------------------------------------------

def test_every_name_in_search_all_imports():
    import search
    for name in search.__all__:
        assert getattr(search, name) is not None, name


def test_search_write_cache_is_the_writer():
    import search
    from search.kt_cache_write import write_cache
    assert search.write_cache is write_cache


# -- ConvSpace: Winograd tile sizes ----------------------------------------------------

@pytest.mark.parametrize("es", [(2.5,), (2.0,), "2", 2])
def test_conv_space_refuses_non_integer_winograd_e(es):
    """A float e is refused, never truncated to another tile size (2.5 -> e=2)."""
    from search.conv_space import ConvSpace
    with pytest.raises(InvalidInputError, match="winograd"):
        ConvSpace(SMALL, "v100", "winograd", winograd_e=es)


def test_conv_space_winograd_e_is_winograds_only():
    """None is the offered tiles; e given with direct is refused, not passed over (it was
    ignored: a user asking for e = 3 got the direct space with no word)."""
    from iobound.algorithms import OFFERED_WINOGRAD_ES
    from search.conv_space import ConvSpace
    assert tuple(ConvSpace(SMALL, "v100", "winograd", winograd_e=None).values("e")) \
        == OFFERED_WINOGRAD_ES == tuple(ConvSpace(SMALL, "v100", "winograd").values("e"))
    with pytest.raises(InvalidInputError, match="winograd_e=.*is for the winograd algorithm"):
        ConvSpace(SMALL, "v100", "direct", winograd_e=(3,))
    assert len(ConvSpace(SMALL, "v100", "direct", winograd_e=None)) > 0


def test_conv_space_takes_numpy_winograd_e():
    from search.conv_space import ConvSpace
    a = ConvSpace(SMALL, "v100", "winograd", winograd_e=(np.int64(2),))
    b = ConvSpace(SMALL, "v100", "winograd", winograd_e=(2,))
    assert len(a) == len(b) and a.values("e") == [2]


# -- a Device with odd fields ----------------------------------------------------------

@pytest.mark.parametrize("field,value", [("shared_mem_per_block_bytes", None),
                                         ("shared_mem_per_block_bytes", "48K"),
                                         ("max_threads_per_block", 2.5),
                                         ("registers_per_thread_max", 0),
                                         ("sm_count", "80")])
def test_device_with_an_odd_field_is_refused_naming_it(field, value):
    """Every kernel check uses these fields as numbers: an odd one is named when the
    Device is made, not a TypeError inside check_config / generate / ConvSpace (or a
    silent [] for a device with no registers)."""
    from kernels.config import DirectConfig, check_config
    dev = get_device("v100")
    with pytest.raises(InvalidInputError, match=field):
        odd = dataclasses.replace(dev, **{field: value})
        check_config(SMALL, DirectConfig(4, 4, 4, 2, 4, 2, 2), odd)


def test_device_from_dict_refuses_bad_dicts():
    d = get_device("a100").to_dict()
    assert Device.from_dict(d) == get_device("a100")
    for bad in ({}, None, {**d, "colour": 1}):
        with pytest.raises(InvalidInputError):
            Device.from_dict(bad)


def test_device_numpy_fields_work():
    dev = dataclasses.replace(get_device("v100"), sm_count=np.int64(80))
    assert dev == get_device("v100") and type(dev.sm_count) is int


# -- measurers -------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("vgg16.conv1_1", "v100"), (SMALL, None), (SMALL, 100)])
def test_model_measurer_refuses_bad_layer_or_device(args):
    from search.measure import make_measurer
    with pytest.raises(InvalidInputError):
        make_measurer("model", *args)


@pytest.mark.parametrize("bad", [None, 5, {"x": [1]}])
def test_replay_refuses_a_cache_that_is_no_path(bad):
    from search.measure import make_measurer
    from search.replay_space import ReplaySpace
    with pytest.raises(InvalidInputError, match="cache"):
        ReplaySpace(bad)
    with pytest.raises(InvalidInputError, match="cache"):
        make_measurer("replay", bad)


# -- zero_shot -------------------------------------------------------------------------

def _replay():
    from search.db import Measurement, Workload
    from search.kt_cache import KtCache
    from search.measure.base import MeasureRecord
    from search.measure.replay import ReplayMeasurer
    from search.replay_space import ReplaySpace
    cache = KtCache({"x": list(range(12))}, [{"x": x, "time": 1.0 + abs(x - 3)} for x in range(12)])
    w = Workload("k", [1], ("x",))
    hist = [Measurement(w, "other", "t", MeasureRecord.ok({"x": x}, time_ms=2.0 + abs(x - 4)))
            for x in range(12)]
    return ReplaySpace(cache), ReplayMeasurer(cache), hist


@pytest.mark.parametrize("which", ["space", "measurer", "history-none", "history-strs",
                                   "options-dict", "seed-float", "seed-none", "seed-neg"])
def test_zero_shot_checks_its_arguments(which):
    from search.zero_shot import ZeroShotOptions, zero_shot
    space, meas, hist = _replay()
    kw = dict(space=space, measurer=meas, history=hist, options=ZeroShotOptions(k=3), seed=0)
    kw.update({"space": {"space": "x"}, "measurer": {"measurer": None},
               "history-none": {"history": None}, "history-strs": {"history": ["a"]},
               "options-dict": {"options": {"k": 3}}, "seed-float": {"seed": 1.5},
               "seed-none": {"seed": None}, "seed-neg": {"seed": -1}}[which])
    with pytest.raises(InvalidInputError):
        zero_shot(**kw)


def test_zero_shot_numpy_seed():
    from search.zero_shot import ZeroShotOptions, zero_shot
    space, meas, hist = _replay()
    a = zero_shot(space, meas, hist, ZeroShotOptions(k=3), seed=np.int64(1))
    b = zero_shot(space, meas, hist, ZeroShotOptions(k=3), seed=1)
    assert a.best[0] == b.best[0] == 3


# -- History ---------------------------------------------------------------------------

def test_history_of_no_path_creates_no_file(tmp_path, monkeypatch):
    """History(None) is refused, not a database file called 'None' in the folder."""
    from search.history import History
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInputError):
        History(None)
    assert os.listdir(tmp_path) == []


def test_history_add_checks_key_and_records():
    from search.history import History, HistoryKey
    h = History(":memory:")
    with pytest.raises(InvalidInputError):
        h.add(HistoryKey("alexnet.conv1", "V100-SXM2", "t"), [1])
    with pytest.raises(InvalidInputError):
        h.add("alexnet.conv1", [])


# -- flags, counts and generators the search API was handed wrongly -----------------------

def test_conv_space_flags_are_bools():
    """ConvSpace(pruned="no") was taken as True and recorded "no" in describe()."""
    from search.conv_space import ConvSpace
    for kw in ({"pruned": "no"}, {"empty_ok": 1}):
        with pytest.raises(InvalidInputError, match=f"{next(iter(kw))} must be"):
            ConvSpace(SMALL, "v100", **kw)


@pytest.mark.parametrize("n, rng, said", [(2.5, None, "n must be an integer"),
                                          (2, 0, "rng must be a numpy.random")])
def test_propose_and_sample_name_a_bad_count_or_generator(n, rng, said):
    """A float count was a TypeError from a slice and an int seed for the generator an
    AttributeError ('int' object has no attribute 'choice'), from inside."""
    from search.cost_model import XGBCostModel
    from search.optimizers import WalkOptimizer
    from search.grid_space import GridSpace
    space = GridSpace({"a": list(range(8)), "b": list(range(4))})
    rng = np.random.default_rng(0) if rng is None else rng
    model = XGBCostModel()
    idx = list(range(8))
    model.fit(space.features(idx), np.arange(8, dtype=float))
    with pytest.raises(InvalidInputError, match=said):
        WalkOptimizer().propose(model, space, n, set(), rng)
    with pytest.raises(InvalidInputError, match=said):
        space.sample(n, rng)


@pytest.mark.parametrize("field", ["log", "resume", "history", "export_cache"])
def test_a_path_with_a_nul_is_named_by_its_field(field):
    from search.session import TuneSettings
    with pytest.raises(InvalidInputError, match=f"^{field} 'a\\\\x00b': not a valid path"):
        TuneSettings(**{field: "a\x00b"})


def test_a_resumed_log_whose_name_the_system_refuses_is_one_error(synth_cache_path):
    from search import ReplayMeasurer, ReplaySpace, tune
    with pytest.raises(InvalidInputError, match="File name too long"):
        tune(ReplaySpace(synth_cache_path), ReplayMeasurer(synth_cache_path), strategy="random",
             budget=2, resume="x" * 300)


@pytest.mark.parametrize("given", [dict(observer="quiet"), dict(observer=False),
                                   dict(builders={"space": None}), dict(builders=0)])
def test_an_observer_or_builders_of_another_kind_is_named(given, tmp_path):
    """Not an AttributeError at the first hook, and a falsy wrong value not taken for None."""
    from search.session import TuneSettings, tune_layers
    with pytest.raises(InvalidInputError, match=f"^{next(iter(given))} must be a search"):
        tune_layers([ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)],
                    "v100", TuneSettings(strategy="random", budget=2), out_dir=str(tmp_path),
                    verify=False, **given)


@pytest.mark.parametrize("db", [None, 0, 10**30, b"t.db"])
def test_a_history_database_that_is_no_path_is_named(db):
    """An int went to os.stat as a file descriptor (0: stdin; 10**30: OverflowError)."""
    from search.transfer import transfer_options
    with pytest.raises(InvalidInputError, match="^db must be a path"):
        transfer_options(db, None)


_LAYER = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1, name="conv1")


@pytest.mark.parametrize("helper, args, said", [
    ("layer_algorithms", (["alexnet.conv3"], "all"), r"layers\[0\] must be a iobound.layer.ConvLayer"),
    ("per_layer_path", ("", _LAYER, True), "names no file to write per layer"),
    ("per_layer_path", ("r.jsonl", "conv1", True), "layer must be a iobound.layer.ConvLayer or"),
    ("per_layer_path", (5, _LAYER, True), "path must be a path"),
])
def test_the_session_helpers_check_their_arguments(helper, args, said):
    import search.session
    with pytest.raises(InvalidInputError, match=said):
        getattr(search.session, helper)(*args)


@pytest.mark.parametrize("time_ms", [float("nan"), -1.0, 0.0, float("inf"), "fast", True])
def test_a_label_time_that_is_no_time_is_refused(time_ms):
    """A NaN or negative time compared below every real one and won the selection."""
    from search.selection.dataset import LabelRecord
    with pytest.raises(InvalidInputError, match="time_ms must be a finite number > 0 or None"):
        LabelRecord(_LAYER, "V100-SXM2", "direct", None, {"x": 1}, time_ms, True)
    with pytest.raises(InvalidInputError, match="layer must be a ConvLayer"):
        LabelRecord(None, "V100-SXM2", "direct", None, {"x": 1}, 1.0, True)
    with pytest.raises(InvalidInputError, match="estimate must be True or False"):
        LabelRecord(_LAYER, "V100-SXM2", "direct", None, {"x": 1}, 1.0, "no")


@pytest.mark.parametrize("timeout", [3e6, 1e300])
def test_a_timeout_past_what_the_system_waits_is_refused(timeout):
    """subprocess and selectors raised OverflowError past ~2.1e6 s."""
    from kernels.limits import check_timeout
    from search.executors import ExecutorOptions
    with pytest.raises(InvalidInputError, match=r"timeout must be a finite number in \(0, 1e\+06\]"):
        check_timeout("timeout", timeout)
    with pytest.raises(InvalidInputError, match=r"at most 1e\+06"):
        ExecutorOptions(timeout_s=timeout)
    assert ExecutorOptions(timeout_s=np.int64(5)).timeout_s == 5  # numpy's ints are numbers


@pytest.mark.parametrize("root", ["", "   ", "/tmp/a\x00b"])
def test_an_empty_cache_root_is_not_the_working_folder(root):
    from kernels.cache import check_cache_root
    with pytest.raises(InvalidInputError, match="give a folder"):
        check_cache_root(root)


@pytest.mark.parametrize("batch, said", [
    ([(0, 5)], "the config of index 0 must be a mapping"), ([(0,)], "must be an .index, config. pair"),
    ([3], "must be an .index, config. pair"), ("ab", "a batch must be an iterable"),
    (None, "a batch must be an iterable"), ([(0, {"a": 1}), (0, {"a": 1})], "appears twice"),
])
def test_an_executor_batch_of_another_shape_is_named(batch, said):
    """Unpacking a bad batch raised TypeError / ValueError from inside submit."""
    from search.executors.base import check_batch
    with pytest.raises(InvalidInputError, match=said):
        check_batch(batch)


def test_a_prior_of_another_space_is_not_read_as_this_ones_indices():
    """The history's best indices of x were asked as configurations of tile."""
    from search.db import Measurement, Workload
    from search.grid_space import GridSpace
    from search.measure.base import MeasureRecord
    from search.strategies import make_strategy
    from search.transfer import HistoryPrior, with_history
    w = Workload("k", [8], ("x",))
    prior = HistoryPrior.fit(GridSpace({"x": list(range(8))}),
                             [Measurement(w, "d", "t", MeasureRecord.ok({"x": x}, time_ms=8.0 - x))
                              for x in range(8)])
    other = GridSpace({"tile": [1, 2, 4, 8, 16, 32, 64, 128]})
    with pytest.raises(InvalidInputError, match="the prior was fitted on another space"):
        with_history(make_strategy("random", other, rng=np.random.default_rng(0)), prior)
    same = GridSpace({"x": list(range(8))})
    with_history(make_strategy("random", same, rng=np.random.default_rng(0)), prior).ask(2)


@pytest.mark.parametrize("given, said", [
    (dict(options={"omega": 1}), "^options must be a"), (dict(seed="x"), "^seed"),
    (dict(history=None), "^history must be"), (dict(space=None), "^space must be a"),
])
def test_the_history_models_check_their_arguments(given, said):
    """HistoryPrior.fit and zero_shot.history_ranking took any options (AttributeError when
    first read), seed, history or space."""
    from search.db import Measurement, Workload
    from search.grid_space import GridSpace
    from search.measure.base import MeasureRecord
    from search.transfer import HistoryPrior
    from search.zero_shot import history_ranking
    args = dict(space=GridSpace({"x": [1, 2]}),
                history=[Measurement(Workload("k", [2], ("x",)), "d", "t",
                                     MeasureRecord.ok({"x": 1}, time_ms=1.0))]) | given
    rest = {k: v for k, v in given.items() if k not in ("space", "history")}
    for fit in (HistoryPrior.fit, history_ranking):
        with pytest.raises(InvalidInputError, match=said):
            fit(args["space"], args["history"], **rest)


@pytest.mark.parametrize("ranking, said", [
    ((np.array([5]), np.array([0.1]), 1), "made for another space"),
    (None, "ranking must be history_ranking's"), ((1,), "ranking must be history_ranking's"),
])
def test_zero_shot_measures_only_a_ranking_of_its_space(ranking, said):
    from search.grid_space import GridSpace
    from search.kt_cache import KtCache
    from search.measure.replay import ReplayMeasurer
    from search.zero_shot import measure_top
    cache = KtCache({"x": [1, 2]}, [{"x": 1, "time": 1.0}])
    with pytest.raises(InvalidInputError, match=said):
        measure_top(GridSpace({"x": [1, 2]}), ReplayMeasurer(cache), ranking, 1)
