"""Tests of the public API's arguments of the wrong kind: one InvalidInputError naming
the argument, never ``TypeError: unhashable type: 'list'``, a pathlib TypeError, an
AttributeError from inside, or a value accepted that fails only after measuring
(``TuneSettings(options={"model": "4"})``) or is taken as truthy (``verify="yes"``).
"""

from __future__ import annotations

import pytest

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from search.db import TuningDB, Workload
from search.db.export import export_cache
from search.executors import ExecutorMeasurer, ExecutorOptions, make_executor
from search.kt_cache import KtCache
from search.kt_cache_write import write_cache
from search.measure import make_measurer
from search.measure.base import MeasureRecord, Measurer
from search.selection.select import select_layers
from search.session.choice import choose_algorithms
from search.session.run import tune_layers
from search.session.settings import TuneSettings
from search.grid_space import GridSpace
from search.strategies import make_options, strategy_class
from search.strategies.gga import options_from_db
from search.transfer import transfer_options
from search.tuner import tune

LAYER = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3)
SPACE = GridSpace({"x": [1, 2, 3]})
CACHE = KtCache(tune_params={"x": [1]}, kernel_name="k", entries=[])


class _Times(Measurer):
    name = "times"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=float(c["x"])) for c in configs]


def _tune_layers(tmp_path, **kw):
    kw = {"out_dir": str(tmp_path), **kw}
    return tune_layers([LAYER], "v100", TuneSettings(strategy="random", budget=2), **kw)


@pytest.mark.parametrize("call, needle", [
    (lambda tmp: strategy_class(["random"]), r"unknown strategy \['random'\]"),
    (lambda tmp: make_options(["random"]), r"unknown strategy \['random'\]"),
    (lambda tmp: make_options("random", "batch_size=4"), "options of strategy 'random' must be a mapping"),
    (lambda tmp: make_options("random", 5), "options of strategy 'random' must be a mapping"),
    (lambda tmp: TuneSettings(strategy=["random"]), r"unknown strategy \['random'\]"),
    (lambda tmp: TuneSettings(options={"model": "4"}), "model must be a search.cost_model.XGBOptions"),
    (lambda tmp: TuneSettings(strategy="sa", options={"model": 4}), "model must be a search.cost_model.XGBOptions"),
    (lambda tmp: tune(SPACE, _Times(), strategy=["random"], budget=2), r"unknown strategy \['random'\]"),
    (lambda tmp: make_measurer(["model"]), r"unknown measurer \['model'\]"),
    (lambda tmp: _tune_layers(tmp, verify="yes"), "verify must be True or False, got 'yes'"),
    (lambda tmp: _tune_layers(tmp, verify=None), "verify must be True or False, got None"),
    (lambda tmp: _tune_layers(tmp, verify=2), "verify must be True or False, got 2"),
    (lambda tmp: _tune_layers(tmp, out_dir=None), r"out_dir must be a path \(str or os.PathLike\)"),
    (lambda tmp: _tune_layers(tmp, out_dir=5), r"out_dir must be a path \(str or os.PathLike\)"),
    (lambda tmp: export_cache(TuningDB(":memory:"), None, Workload("k", [1], ("x",)), "d"),
     "path must be a path"),
    (lambda tmp: export_cache(None, str(tmp / "c.json"), Workload("k", [1], ("x",)), "d"), "db must be"),
    (lambda tmp: write_cache(None, CACHE), "path must be a path"),
    (lambda tmp: write_cache(tmp / "c.json", None), "cache must be a search.kt_cache.KtCache"),
    (lambda tmp: make_executor("x"), "measurer must be a search.measure.base.Measurer or"),
    (lambda tmp: make_executor(_Times(), options="x"), "options must be a search.executors.options.ExecutorOptions"),
    (lambda tmp: make_executor(_Times(), bogus=1), "unknown executor option 'bogus'; allowed: executor"),
    (lambda tmp: ExecutorMeasurer(None, None), "measurer must be a search.measure.base.Measurer"),
    (lambda tmp: ExecutorMeasurer(_Times(), "x"), "executor must be an Executor"),
    (lambda tmp: select_layers(None, "v100"), "layers must be a sequence of iobound.layer.ConvLayer"),
    (lambda tmp: select_layers([None], "v100"), r"layers\[0\] must be a iobound.layer.ConvLayer"),
    (lambda tmp: select_layers(["conv1"], "v100"), r"layers\[0\] must be a iobound.layer.ConvLayer"),
    (lambda tmp: select_layers([LAYER], None), "device must be a iobound.device_spec.Device or builtins.str"),
    (lambda tmp: select_layers([LAYER], 5), "device must be a iobound.device_spec.Device or builtins.str"),
    (lambda tmp: select_layers([LAYER], "v100", progress=5), "progress must be callable"),
    (lambda tmp: select_layers([LAYER], "v100", known=5), "known must be a sequence of"),
    (lambda tmp: choose_algorithms(None), "reports must be a sequence of"),
    (lambda tmp: choose_algorithms([None]), r"reports\[0\] must be a search.session.reports.LayerReport"),
    (lambda tmp: options_from_db(TuningDB(":memory:"), None), r"space must be a search space"),
    (lambda tmp: transfer_options(TuningDB(":memory:"), SPACE, options="x"),
     "options must be a search.transfer.prior_options.PriorOptions"),
])
def test_arguments_of_the_wrong_kind_are_named(tmp_path, call, needle):
    with pytest.raises(InvalidInputError, match=needle):
        call(tmp_path)
    assert not (tmp_path / "c.json").exists()


def test_valid_calls_still_work(tmp_path):
    """The same functions with arguments of the right kind (a shared executor's measurer
    wraps a lane, not an Executor; make_executor(None) makes one for SharedExecutor)."""
    from search.executors.shared import SharedExecutor
    assert make_options("random", {"batch_size": 4}).batch_size == 4
    assert write_cache(tmp_path / "c.json", CACHE).is_file()
    with SharedExecutor(make_executor(None, ExecutorOptions(workers=1))) as pool:
        m = _Times()
        res = tune(SPACE, ExecutorMeasurer(m, pool.lane("k", m)), "grid", budget=3)
    assert res.best.config == {"x": 1}
    assert [s.layer for s in select_layers([LAYER], "v100", progress=lambda i, layer: None)] == [LAYER]
