"""Properties of the tuning database: round trip, idempotent import, devices kept apart."""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobound.layer import ConvLayer
from search.db import CONV_TEMPLATE, Measurement, TuningDB, Workload
from search.db.export import export_cache, workload_cache
from search.db.importer import import_files
from search.db.queries import history_for_space
from search.kt_cache import KtCache, cache_key
from search.kt_cache_write import write_cache
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace

FAILURES = ("InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig")
times = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)
outcome = st.one_of(times.map(lambda t: ("ok", t)), st.sampled_from(FAILURES).map(lambda f: ("fail", f)))


@st.composite
def kt_caches(draw):
    """A random Kernel Tuner cache: 1-3 parameters (numbers or lists), a subset of the grid,
    times or failures."""
    n = draw(st.integers(1, 3))
    values = st.one_of(st.integers(-5, 50),  # Kernel Tuner allows list values (block shapes)
                       st.lists(st.integers(1, 4), min_size=2, max_size=2))
    tune_params = {f"p{k}": draw(st.lists(values, min_size=1, max_size=4, unique_by=repr))
                   for k in range(n)}
    grid = list(itertools.product(*tune_params.values()))
    chosen = draw(st.lists(st.sampled_from(grid), min_size=1, max_size=len(grid), unique_by=repr))
    entries = []
    for values in chosen:
        entry = dict(zip(tune_params, values))
        kind, v = draw(outcome)
        if kind == "ok":
            entry.update(time=v, times=draw(st.lists(times, min_size=1, max_size=3)))
        else:
            entry["time"] = v
        if draw(st.booleans()):
            entry["compile_time"] = draw(times)
        entries.append(entry)
    return KtCache(tune_params=tune_params, entries=entries, device_name=draw(st.sampled_from(
        ["NVIDIA A100-PCIE-40GB", "gpu x", ""])), kernel_name=draw(st.sampled_from(["k", "conv"])),
        problem_size=draw(st.sampled_from([[4096, 4096], 64, None])))


def _by_key(cache: KtCache) -> dict:
    return {cache_key(e, cache.keys): e for e in cache.entries}


def _assert_entries_equal(a: KtCache, b: KtCache) -> None:
    ea, eb = _by_key(a), _by_key(b)
    assert ea.keys() == eb.keys()
    for k in ea:
        x, y = ea[k], eb[k]
        assert x.keys() == y.keys()
        for f in x:
            if isinstance(x[f], float) or (isinstance(x[f], list) and x[f] and isinstance(x[f][0], float)):
                assert y[f] == pytest.approx(x[f], rel=1e-12)
            else:
                assert y[f] == x[f]


@given(kt_caches(), st.sampled_from([".json", ".json.gz"]))
def test_cache_db_cache_round_trip(cache, suffix):
    """A cache file imported and exported again has the same parameters and entries."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write_cache(Path(tmp) / f"mygpu{suffix}", cache)
        with TuningDB(":memory:") as db:
            (f,) = import_files(db, [path])
            out = workload_cache(db, Workload(cache.kernel_name, cache.problem_size, cache.keys),
                                 f.device)
    assert out.device_name == (cache.device_name or "mygpu")
    assert out.tune_params == cache.tune_params and out.problem_size == cache.problem_size
    _assert_entries_equal(cache, out)


@given(kt_caches())
def test_import_is_idempotent(cache):
    """Importing a file again, or twice in one call, adds nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write_cache(Path(tmp) / "c.json", cache)
        with TuningDB(Path(tmp) / "t.db") as db:
            first = import_files(db, [path, path])
            n = db.count()
            again = import_files(db, [path])
            assert n == len(cache.entries) == first[0].added and first[1].added == 0
            assert again[0].added == 0 and db.count() == n


measurement_rows = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 3),
                                      st.integers(0, 3), times), min_size=1, max_size=30,
                         unique=True)


@given(measurement_rows)
def test_records_of_one_device_are_never_returned_for_another(rows):
    """Every query filtered by device returns that device's measurements only, all of them."""
    w = Workload("k", [8], ("x", "y"))
    with TuningDB(":memory:") as db:
        db.add([Measurement(w, d, "t", MeasureRecord.ok({"x": x, "y": y}, time_ms=t))
                for d, x, y, t in rows])
        space = GridSpace({"x": list(range(4)), "y": list(range(4))})
        for dev in "abc":
            expect = sorted(t for d, _, _, t in rows if d == dev)
            got = db.measurements(w, device=dev)
            assert {m.device for m in got} <= {dev}
            assert sorted(m.time_ms for m in got) == expect
            assert sorted(m.time_ms for m in history_for_space(db, space, devices=[dev])) == expect
            rest = history_for_space(db, space, exclude_devices=[dev])
            assert all(m.device != dev for m in rest)


STATUSES = ("ok", "ok", "compile_error", "runtime_error", "timeout", "wrong_result", "invalid")
stored = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.sampled_from(STATUSES), times,
                            st.booleans(), st.sampled_from([0.0, 1.7e9, 1.7e9 + 0.25]),
                            st.sampled_from(["kernel_tuner", "model v2", "nvcc 12.4 on A100",
                                             ""])),
                  min_size=1, max_size=12)


@given(stored, st.sampled_from(["gpu", "G" * 250]), st.sampled_from(["k", "k" * 250]))
def test_export_then_import_adds_nothing(rows, device, template):
    """Whatever toolchains (none too: a log that names no measurer), timestamps, statuses,
    estimate flags and names (any length) the stored measurements have (from tuning logs,
    caches, tune --history), importing their export adds nothing."""
    w = Workload(template, [8], ("x", "y"))
    with tempfile.TemporaryDirectory() as tmp:
        with TuningDB(Path(tmp) / "t.db") as db:
            db.add([Measurement(w, device, tool, MeasureRecord(
                {"x": x, "y": y}, status, time_ms=t if status == "ok" else None, estimate=est,
                timestamp=stamp, error="" if status == "ok" else "failed")) for
                    x, y, status, t, est, stamp, tool in rows])
            n = db.count()
            path = export_cache(db, Path(tmp) / "out.json", w, device)
            (again,) = import_files(db, [path])
            assert again.added == 0 and db.count() == n


conv_layers = st.builds(
    lambda c, h, w, o, k, s, p, g: ConvLayer(
        n=1, c_in=c * g, h_in=h, w_in=w, c_out=o * g, k_h=k, k_w=k, stride=s, padding=p, groups=g),
    st.integers(1, 4), st.integers(3, 9), st.integers(3, 9), st.integers(1, 4), st.integers(1, 3),
    st.integers(1, 2), st.integers(0, 1), st.integers(1, 2))


@given(conv_layers, conv_layers)
def test_unnamed_conv_layers_have_the_same_label_exactly_when_they_have_one_shape(a, b):
    """A stored unnamed layer is labelled by its shape: two layers share a label iff they
    are equal (ConvLayer equality: the shape, the name aside)."""
    wa, wb = (Workload(CONV_TEMPLATE, layer.to_dict(), ("x",)) for layer in (a, b))
    assert (wa.label() == wb.label()) == (a == b)


#: Layers Winograd applies to (stride 1, groups 1): the layers a Winograd run tunes.
winograd_layers = st.builds(
    lambda c, h, w, o, k, p: ConvLayer(n=1, c_in=c, h_in=h, w_in=w, c_out=o, k_h=k, k_w=k,
                                       padding=p),
    st.integers(1, 4), st.integers(3, 9), st.integers(3, 9), st.integers(1, 4), st.integers(1, 3),
    st.integers(0, 1))


def _run_config(layer: ConvLayer, algorithm: str, a: int, b: int) -> dict:
    """A kernel config of ``layer`` (what a run of it stores: TuningDB.add stores no other
    of our conv template), told apart by ``a`` (0..3) and ``b`` (0..2) as far as the
    layer's sizes allow: one thread per output of a direct tile of at most 4 x 3, or a
    Winograd F(2x2) tile of up to 4 channels and ``b + 1`` tile rows (one thread row each:
    at most 128 register words per thread)."""
    if algorithm == "direct":
        return {"x": min(a + 1, layer.w_out), "y": min(b + 1, layer.h_out), "z": 1, "alpha": 1,
                "tx": 1, "ty": 1, "tz": 1}
    rows = min(b + 1, (layer.h_out + 1) // 2)  # y may exceed h_out by less than e
    return {"e": 2, "x": 2, "y": 2 * rows, "z": min(a + 1, layer.c_out), "tx": 1, "ty": rows,
            "tz": 1}


@given(stored, st.one_of(st.tuples(conv_layers, st.just("direct")),
                         st.tuples(winograd_layers, st.just("winograd"))))
def test_a_runs_exported_cache_imports_as_the_measurements_the_run_stored(rows, run):
    """``tune --export-cache`` and ``tune --history`` keep one run twice: importing the
    cache into the database adds nothing, and it is the workload the run stored (our conv
    template, not a second workload named after the file's kernel)."""
    from kernels.config import check_config, config_from_dict
    from search.db.layer_keys import layer_key_workload
    from search.db.conv_template import exported_kernel_name
    from search.kt_cache_write import records_to_cache

    layer, algorithm = run
    configs = [_run_config(layer, algorithm, x, y) for x, y, *_ in rows]
    assert all(check_config(layer, config_from_dict(c)) == [] for c in configs)
    params = tuple(configs[0])
    w = layer_key_workload(json.dumps(layer.to_dict(), sort_keys=True), params)
    tool = rows[0][-1]
    recs = [MeasureRecord(config, status, time_ms=t if status == "ok" else None,
                          estimate=est, timestamp=stamp, error="" if status == "ok" else "failed")
            for config, (_, _, status, t, est, stamp, _) in zip(configs, rows)]
    with tempfile.TemporaryDirectory() as tmp:
        with TuningDB(Path(tmp) / "t.db") as db:
            db.add([Measurement(w, "gpu", tool, r) for r in recs])
            n = db.count()
            values = {p: sorted({c[p] for c in configs}) for p in params}
            cache = records_to_cache(recs, values, device_name="gpu",
                                     kernel_name=exported_kernel_name(algorithm),
                                     problem_size=layer.to_dict(), toolchain=tool)
            (again,) = import_files(db, [write_cache(Path(tmp) / "run.json", cache)])
            assert again.workload == w and again.workload.template == CONV_TEMPLATE
            assert again.added == 0 and db.count() == n
