"""Kernel Tuner's own cache code (the installed ``kernel_tuner`` package, the ``bench``
extra) as the reference for reading, importing, replaying and exporting its caches.

Kernel Tuner 1.x stores a failed configuration as ``"__error__": "CompilationFailedConfig"``
(``util.store_cache`` of the runner's ``result["__error__"] = util.CompilationFailedConfig()``)
and no ``time``; its ``read_cache`` takes any field holding a failure string for the
failure. Older versions put the string in ``time`` (the shipped recorded spaces).
"""

from __future__ import annotations

import itertools
import json
import shutil
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from search.cli.main import main
from search.kt_cache import entry_status, load_cache, recorded_time
from search.measure.replay import ReplayMeasurer

kt_util = pytest.importorskip("kernel_tuner.util")

KT_STATUS = {"InvalidConfig": "invalid", "CompilationFailedConfig": "compile_error",
             "RuntimeFailedConfig": "runtime_error", "ErrorConfig": "runtime_error"}


def _kt_cache(path, tune_params, outcomes, new_format=True):
    """A cache file written by Kernel Tuner's own code: the header by ``process_cache``,
    each entry by ``store_cache`` (what its sequential runner calls), left open as a run
    leaves it until it ends; closed by ``close_cache`` when it ends."""
    kernel_options = types.SimpleNamespace(kernel_name="k", problem_size=(64, 64))
    tuning_options = types.SimpleNamespace(tune_params=tune_params, objective="time",
                                           simulation_mode=False)
    runner = types.SimpleNamespace(get_device_info=lambda: types.SimpleNamespace(name="GPU X"))
    cache = kt_util.process_cache(str(path), kernel_options, tuning_options, runner)
    for config, outcome in outcomes:
        key = ",".join(str(config[k]) for k in tune_params)
        params = dict(config)
        if isinstance(outcome, str):
            error = getattr(kt_util, outcome)()
            params["__error__" if new_format else "time"] = error
            params.update(compile_time=2.0, verification_time=0, benchmark_time=0)
        else:
            params.update(time=outcome, times=[outcome, outcome], compile_time=2.0)
        params["timestamp"] = "2024-01-01 00:00:00+00:00"
        kt_util.store_cache(key, params, str(path), cache)
    return path


def _kt_view(path):
    """Configuration (as JSON) -> (status, time) as Kernel Tuner's read_cache gives them."""
    data = kt_util.read_cache(str(path), open_cache=False)
    keys = data["tune_params_keys"]
    out = {}
    for e in data["cache"].values():
        status = KT_STATUS[type(e["__error__"]).__name__] if "__error__" in e else "ok"
        out[json.dumps([e[k] for k in keys])] = (status, e["time"] if status == "ok" else None)
    return out


def _our_view(path):
    cache = load_cache(path)
    return {json.dumps([e[k] for k in cache.keys]): (entry_status(e).value, recorded_time(e))
            for e in cache.entries}


TP = {"block_size_x": [16, 32], "tile": [1, 2]}
OUTCOMES = list(zip([dict(zip(TP, v)) for v in itertools.product(*TP.values())],
                    [1.5, "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig"]))


@pytest.mark.parametrize("closed", [True, False])
def test_kernel_tuner_1x_failures_read_as_kernel_tuner_reads_them(tmp_path, closed):
    path = _kt_cache(tmp_path / "kt.json", TP, OUTCOMES)
    if closed:
        kt_util.close_cache(str(path))
    expected = _kt_view(path)
    assert sorted(s for s, _ in expected.values()) == ["compile_error", "invalid", "ok",
                                                      "runtime_error"]
    assert _our_view(path) == expected
    assert load_cache(path).bad_times == 0
    replayed = ReplayMeasurer(path).measure([c for c, _ in OUTCOMES])
    assert [r.status.value for r in replayed] == [
        expected[json.dumps([c[k] for k in TP])][0] for c, _ in OUTCOMES]


def test_kernel_tuner_1x_failures_survive_import_and_export(tmp_path, capsys):
    path = _kt_cache(tmp_path / "kt.json", TP, OUTCOMES)
    kt_util.close_cache(str(path))
    db, out = str(tmp_path / "h.db"), tmp_path / "out.json"
    assert main(["history", "import", str(path), "--db", db]) == 0
    assert "skipped" not in capsys.readouterr().out  # none is a bad time
    assert main(["history", "export", str(out), "--db", db]) == 0
    assert _kt_view(out) == _kt_view(path)  # Kernel Tuner reads back what it wrote


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ for Kernel Tuner's C backend")
@pytest.mark.filterwarnings("ignore:None of the tunable parameters specify thread block")  # C: no blocks
def test_a_real_kernel_tuner_run_reads_alike(tmp_path, monkeypatch):
    """A real tune_kernel run (C backend on the CPU): a configuration whose compile fails
    the way Kernel Tuner skips ("local memory limit exceeded") is CompilationFailedConfig."""
    np = pytest.importorskip("numpy")
    kernel_tuner = pytest.importorskip("kernel_tuner")
    monkeypatch.chdir(tmp_path)
    src = r"""
    #if tile > 1
    #error local memory limit exceeded
    #endif
    extern "C" float f(float *a, int n) { for (int i = 0; i < n; i++) a[i] *= tile; return 0.5f; }
    """
    n = np.int32(16)
    path = tmp_path / "run.json"
    kernel_tuner.tune_kernel("f", src, n, [np.ones(16, np.float32), n], {"tile": [1, 2]},
                             lang="C", cache=str(path), quiet=True, iterations=1)
    expected = _kt_view(path)
    assert sorted(s for s, _ in expected.values()) == ["compile_error", "ok"]
    assert _our_view(path) == expected


def test_a_failed_entrys_times_survive_import_and_export(tmp_path):
    """The export's promise (search.db.export): "cache -> database -> cache gives the same
    entries". The shipped A6000 space has 392 RuntimeFailedConfig entries with ``times``
    (a failed verification is timed first)."""
    entries = {"1": {"a": 1, "time": 2.0, "times": [2.0, 2.0], "compile_time": 3.0},
               "2": {"a": 2, "time": "RuntimeFailedConfig", "times": [3.25, 3.5],
                     "compile_time": 3.0, "GFLOP/s": 2302.9}}
    src = tmp_path / "c.json"
    src.write_text(json.dumps({"device_name": "GPU X", "kernel_name": "k", "problem_size": [8],
                               "tune_params_keys": ["a"], "tune_params": {"a": [1, 2]},
                               "objective": "time", "cache": entries}))
    db, out = str(tmp_path / "h.db"), tmp_path / "out.json"
    assert main(["history", "import", str(src), "--db", db]) == 0
    assert main(["history", "export", str(out), "--db", db]) == 0
    back = {e["a"]: e for e in load_cache(out).entries}
    for e in entries.values():
        assert {k: back[e["a"]].get(k) for k in e} == e


def test_a_key_naming_another_integer_is_refused(tmp_path):
    """An integer prints exactly in a key: key "1000000" does not name the value 1000001
    (Kernel Tuner looks configuration 1000000 up under it); load_cache promises to refuse
    "a key naming other values than its entry's"."""
    from iobound.errors import InvalidInputError
    src = tmp_path / "c.json"
    src.write_text(json.dumps({"tune_params_keys": ["n"], "tune_params": {"n": [1000000, 1000001]},
                               "cache": {"1000000": {"n": 1000001, "time": 1.0}}}))
    with pytest.raises(InvalidInputError, match="which the key does not name"):
        load_cache(src)


ODD = st.sampled_from([1, -3, 0, 2.5, -0.5, 1e-07, 1e16, True, "a", "a,b", "x y", "", None])


@st.composite
def _kt_caches(draw):
    tune_params = {}
    for p in range(draw(st.integers(1, 2))):
        vals = draw(st.lists(ODD, min_size=1, max_size=3, unique_by=lambda v: json.dumps(v)))
        # one key each (Kernel Tuner's keys are str(value)), one value key each (1 == True)
        if len({str(v) for v in vals}) < len(vals) or len({json.dumps(v) if isinstance(v, str)
                                                          else v for v in vals}) < len(vals):
            vals = vals[:1]
        tune_params[f"p{p}"] = vals
    configs = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]
    outcomes = [(c, draw(st.sampled_from([0.75, 4.0, *KT_STATUS]))) for c in configs]
    return tune_params, outcomes, draw(st.booleans()), draw(st.booleans())


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_kt_caches())
def test_kernel_tuner_caches_of_odd_values_read_and_round_trip_alike(tmp_path_factory, case):
    tune_params, outcomes, new_format, closed = case
    d = tmp_path_factory.mktemp("kt")
    path = _kt_cache(d / "kt.json", tune_params, outcomes, new_format)
    if closed:
        kt_util.close_cache(str(path))
    expected = _kt_view(path)
    assert _our_view(path) == expected
    db, out = str(d / "h.db"), d / "out.json"
    assert main(["history", "import", str(path), "--db", db]) == 0
    assert main(["history", "export", str(out), "--db", db]) == 0
    assert _kt_view(out) == expected and _our_view(out) == expected
