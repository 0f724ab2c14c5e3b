"""Measured times kept as measured: timestamps and times of T4 results, compiler timeouts.

References: Kernel Tuner's ``store_output_file`` (kernel_tuner/file_utils.py) writes each
T4 result with its ``timestamp`` (the cache entry's ISO time) and ``times.runtimes`` (the
cache entry's per-launch ``times`` list, ms); a compiler that runs past its timeout did
not reject the source (DESIGN.md's statuses include ``timeout``; the ``cuda`` stages record
an nvcc timeout as ``timeout``).
"""

import json
import subprocess
from datetime import datetime, timezone


from kernels.status import Status

STAMP = "2024-05-01 10:00:00.250000+00:00"
RUNTIMES = [1.4, 1.5, 1.6, 2.5]


def _t4_file(tmp_path):
    path = tmp_path / "a-results.json"
    path.write_text(json.dumps({"schema_version": "1.0.0", "results": [
        {"timestamp": STAMP, "configuration": {"bx": 32},
         "times": {"compilation": 900.0, "benchmark": 50.0, "framework": 1.0,
                   "search_algorithm": 0, "validation": 0, "runtimes": RUNTIMES},
         "invalidity": "correct", "correctness": 1,
         "measurements": [{"name": "time", "value": 1.75, "unit": "ms"},
                          {"name": "GFLOP/s", "value": 10.0, "unit": ""}],
         "objectives": ["time"]},
        {"timestamp": STAMP, "configuration": {"bx": 16},
         "times": {"compilation": 900.0, "benchmark": 0, "framework": 1.0,
                   "search_algorithm": 0, "validation": 0, "runtimes": []},
         "invalidity": "compile", "correctness": 1, "measurements": [],
         "objectives": ["time"]}]}))
    return path


def test_t4_results_keep_their_timestamp_in_the_tuning_database(tmp_path):
    """A T4 result's timestamp was dropped: imported, every measurement had timestamp 0.0
    (1970), so the database's "latest measurement of a configuration" (history export,
    History.records) took any other record of it for newer; the same result imported from
    Kernel Tuner's cache file carries its time."""
    from search.db.importer import read_paths
    path = _t4_file(tmp_path)
    files, _ = read_paths([str(path)], "A100", str(tmp_path / "x.db"))
    [f] = files
    want = datetime(2024, 5, 1, 10, 0, 0, 250000, tzinfo=timezone.utc).timestamp()
    assert [m.record.timestamp for m in f.measurements] == [want, want]


def test_t4_results_replay_their_per_launch_runtimes(tmp_path):
    """``times.runtimes`` are the result's timed launches (ms), a cache entry's ``times``:
    replayed, the record's costs were just [time]."""
    from search.kt_cache import load_cache
    from search.measure.replay import ReplayMeasurer
    rec = ReplayMeasurer(load_cache(_t4_file(tmp_path))).measure([{"bx": 32}])[0]
    assert rec.time_ms == 1.75 and rec.costs == tuple(RUNTIMES)


def test_a_g_plus_plus_timeout_is_a_timeout_not_a_compile_error(tmp_path, monkeypatch):
    """The emulate measurer recorded a g++ that ran past its timeout as ``compile_error``
    ("g++ rejected the source", its doc says), although nothing was rejected; the cuda
    stages record an nvcc timeout as ``timeout``."""
    from iobound.layer import ConvLayer
    from kernels import emulator_build
    from search.measure.emulate import EmulateMeasurer

    monkeypatch.setenv("IOBOUND_CACHE", str(tmp_path / "cache"))
    real = emulator_build.run_compiler

    def slow(cmd, timeout=None, **kw):
        if "--version" in cmd:
            return real(cmd, timeout=timeout, **kw)
        raise subprocess.TimeoutExpired(cmd, timeout)

    monkeypatch.setattr(emulator_build, "run_compiler", slow)
    layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    [rec] = EmulateMeasurer(layer).measure([dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)])
    assert rec.status is Status.TIMEOUT, (rec.status, rec.error)
    assert "timed out" in rec.error
