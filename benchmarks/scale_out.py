"""Measurements per second with 1 and 2 workers, local and Ray, on a compile-heavy batch.

The batch: ``--configs`` random configurations of our direct kernel for a small layer
(default 1x8x12x12 -> 8, 3x3, pad 1), measured by the ``emulate`` measurer, whose g++
build of every new kernel takes far longer than running it. Each (executor, workers) cell
runs ``--repeats`` times, interleaved with the others (the load of a shared machine
drifts), and reports the median. Every run gets configurations no other run measured
(one random sample, split), so each one pays its builds; the emulator's precompiled
header is built before any timing. Executor start-up (worker processes, Ray itself, and
each worker's first build: it pays one-time costs such as checking the 46 MB precompiled
header) is timed separately and not in the throughput: each run first builds one
configuration per worker, not timed. Each row also gives the driver's CPU time per configuration
(the serial work of handing out jobs and collecting records). The default batch is 24:
the last build of a batch leaves the other worker idle for part of a build, which costs
a 2-worker run about 1.9% of its time at 12 configurations and 1.3% at 24 (simulated
list scheduling with builds of 630-840 ms, the spread measured here).

Ray is started once (2 CPUs, loopback only) and its start-up reported on its own.
Also: the overhead an executor adds per configuration, from a batch of the ``model``
measurer (microseconds of work each) with 1 worker, next to one emulated measurement
(``1 / median throughput`` with 1 worker); a bare Ray task round trip; and a control
whose builds only sleep (0.5 s), which shows the executors' parallelism where the CPUs
are busy with other work, and one of pure-CPU work in 2 processes against 1, which shows
what speed-up the machine's free cores allowed at all while the benchmark ran.

Goals (issue 13): 2 workers >= 1.7x the throughput of 1; Ray's overhead per task < 5% of
one emulated measurement. Other work on the machine distorts both: the load average
before and after is part of the result.

Run: ``.venv/bin/python benchmarks/scale_out.py [--configs 24] [--repeats 3] [--executors local ray]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from search.executors.stages import Artifact, Stages  # noqa: E402
from search.measure.base import MeasureRecord  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "scale_out.json"


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _throughput(executor, batch) -> dict:
    t0, cpu = time.perf_counter(), time.process_time()
    got = list(executor.submit(batch))
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - cpu
    statuses: dict[str, int] = {}
    for _, r in got:
        statuses[r.status.value] = statuses.get(r.status.value, 0) + 1
    assert sorted(i for i, _ in got) == sorted(i for i, _ in batch)
    return {"configs": len(batch), "seconds": round(seconds, 3),
            "per_second": round(len(batch) / seconds, 4), "statuses": statuses,
            "driver_cpu_ms_per_config": round(cpu / len(batch) * 1e3, 3)}


def _overhead(kind: str, layer, space, n: int) -> dict:
    """Seconds per config through the executor for the model measurer, 1 worker."""
    import numpy as np

    from search.executors import make_executor
    from search.measure.model import ModelMeasurer

    measurer = ModelMeasurer(layer, "v100")
    idx = space.sample(n, np.random.default_rng(1))
    batch = [(int(i), space.get(int(i))) for i in idx]
    measurer.measure([c for _, c in batch])  # warm: imports, caches
    t0 = time.perf_counter()
    measurer.measure([c for _, c in batch])
    in_process = (time.perf_counter() - t0) / n
    with make_executor(measurer, executor=kind, workers=1, timeout_s=600) as ex:
        list(ex.submit(batch[:2]))  # start the workers
        t0 = time.perf_counter()
        list(ex.submit(batch))
        through = (time.perf_counter() - t0) / n
    return {"configs": n, "in_process_ms": round(in_process * 1e3, 3),
            "through_executor_ms": round(through * 1e3, 3),
            "overhead_ms": round((through - in_process) * 1e3, 3)}


class SleepStages(Stages):
    """A control that needs no CPU: every build sleeps ``seconds``; the run returns at once."""

    name, needs_gpu = "sleep", False

    def __init__(self, seconds: float):
        self.seconds = seconds

    def build(self, config):
        time.sleep(self.seconds)
        return Artifact(config=dict(config))

    def run(self, artifact):
        return MeasureRecord.ok(artifact.config, time_ms=1.0)


def _sleep_control(kinds, n: int = 8, seconds: float = 0.5) -> dict:
    """Configs per second of ``SleepStages`` with 1 and 2 workers: the executors' own
    parallelism, which CPU contention from other work cannot hide."""
    from search.executors import make_executor

    out = {}
    for kind in kinds:
        for workers in (1, 2):
            with make_executor(SleepStages(seconds), executor=kind, workers=workers) as ex:
                list(ex.submit([(-1, {"n": -1})]))
                t0 = time.perf_counter()
                list(ex.submit([(i, {"n": i}) for i in range(n)]))
                out[f"{kind} x{workers}"] = round(n / (time.perf_counter() - t0), 3)
    return out


def _busy(_) -> float:
    """A fixed amount of pure-CPU work (no I/O, no compiler)."""
    x = 0
    for i in range(15_000_000):
        x += i
    return float(x)


def _cpu_control(repeats: int = 3) -> float:
    """How much faster 2 processes do 2 units of pure-CPU work than 1 process does 1 unit,
    right now (median): what the machine's free cores allow any executor."""
    import multiprocessing as mp

    ratios = []
    with mp.get_context("forkserver").Pool(2) as pool:
        pool.map(_busy, range(2), chunksize=1)  # start both
        for _ in range(repeats):
            t0 = time.perf_counter()
            pool.map(_busy, range(1), chunksize=1)
            one = time.perf_counter() - t0
            t0 = time.perf_counter()
            pool.map(_busy, range(2), chunksize=1)
            ratios.append(2 * one / (time.perf_counter() - t0))
    return round(statistics.median(ratios), 3)


def _bare_ray_task_ms(n: int = 100) -> float:
    import ray

    @ray.remote(num_cpus=1)
    def noop(x):
        return x

    ray.get(noop.remote(0))
    t0 = time.perf_counter()
    for i in range(n):
        ray.get(noop.remote(i))
    return round((time.perf_counter() - t0) / n * 1e3, 3)


def _run_cells(measurer, space, idx, runs, n: int) -> tuple[list[dict], float | None]:
    """One throughput row per run, each on its own ``n`` configurations after a warm-up
    build per worker (configurations of its own, not timed); and a bare Ray task."""
    from search.executors import make_executor

    rows, started = [], {}
    per_run = n + 2  # the batch, and a warm-up build for each of (at most) 2 workers
    for r, (kind, workers) in enumerate(runs):
        chunk = [(int(i), space.get(int(i))) for i in idx[r * per_run: (r + 1) * per_run]]
        warm, batch = chunk[:workers], chunk[2:]
        t0 = time.perf_counter()
        with make_executor(measurer, executor=kind, workers=workers, timeout_s=600) as ex:
            list(ex.submit(warm))  # start the workers; each builds one configuration
            start_s = time.perf_counter() - t0
            row = {"executor": kind, "workers": workers, "startup_s": round(start_s, 2),
                   "load_average_1min": _load()[0], **_throughput(ex, batch)}
            if kind == "ray" and "bare_task_ms" not in started:
                started["bare_task_ms"] = _bare_ray_task_ms()
        rows.append(row)
        print(f"{kind:5s} {workers} worker(s): {row['per_second']:.3f} configs/s "
              f"({row['configs']} in {row['seconds']:.1f} s; start-up {start_s:.1f} s; "
              f"driver CPU {row['driver_cpu_ms_per_config']:.1f} ms/config; "
              f"load {row['load_average_1min']})", flush=True)
    return rows, started.get("bare_task_ms")


def _print_report(result: dict, cells, median, speedup, repeats: int) -> None:
    overhead, emulated_ms = result["executor_overhead_per_config"], result["one_emulated_measurement_ms"]
    load_before, load_after = result["load_average_before"], result["load_average_after"]
    ray_startup = result["ray_startup_s"]
    print(f"\nload average (1/5/15 min) before {load_before}, after {load_after}; {os.cpu_count()} CPUs")
    print(f"{'executor':9s}{'workers':>8s}{'median configs/s':>18s}{'speedup':>9s}{'runs':>6s}")
    for kind, workers in cells:
        sp = f"{speedup[kind]:.2f}x" if workers == 2 else ""
        print(f"{kind:9s}{workers:>8d}{median[(kind, workers)]:>18.3f}{sp:>9s}{repeats:>6d}")
    print(f"\none emulated measurement (1 local worker): {emulated_ms:.0f} ms")
    for kind, o in overhead.items():
        print(f"{kind} executor overhead per config: {o['overhead_ms']:.1f} ms "
              f"({o['through_executor_ms']:.1f} ms through it vs {o['in_process_ms']:.2f} ms in "
              f"process) = {o['overhead_ms'] / emulated_ms:.2%} of one emulated measurement")
    print("control, 8 builds sleeping 0.5 s (configs/s): "
          + ", ".join(f"{k} {v:.2f}" for k, v in result["sleep_control_per_second"].items()))
    print(f"control, pure-CPU work in 2 processes over 1 (what the free cores allowed): "
          f"{result['cpu_control_speedup_2_over_1']:.2f}x")
    if "ray_bare_task_ms" in result:
        print(f"bare Ray task round trip: {result['ray_bare_task_ms']:.2f} ms; "
              f"starting the local Ray: {ray_startup:.1f} s")


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=24, help="configurations per run (default 24)")
    parser.add_argument("--executors", nargs="+", default=["local", "ray"], choices=["local", "ray"])
    parser.add_argument("--repeats", type=int, default=2,
                        help="runs per (executor, workers), interleaved; the median is reported")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.configs < 2:
        parser.error(f"--configs must be >= 2, got {args.configs}")
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    return args


def _start_ray() -> float:
    """Start one local Ray (2 CPUs, loopback) for every Ray run; its start-up in seconds."""
    from search.executors.ray_cluster import start_local_ray
    t0 = time.perf_counter()
    start_local_ray(2)
    return round(time.perf_counter() - t0, 2)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    # one fresh build cache for the whole run, set before any worker starts; scratch,
    # removed at the end
    with tempfile.TemporaryDirectory(prefix="iobound-scale-out-") as cache:
        os.environ["IOBOUND_CACHE"] = cache
        return _measure(args)


def _measure(args) -> int:
    import numpy as np

    from iobound.layer import ConvLayer
    from kernels.config import config_from_dict
    from kernels.emulator import build_emulator, compiler_version
    from kernels.generate import generate
    from search.conv_space import ConvSpace
    from search.measure.emulate import EmulateMeasurer

    layer = ConvLayer(n=1, c_in=8, h_in=12, w_in=12, c_out=8, k_h=3, k_w=3, padding=1, name="small")
    space = ConvSpace(layer, "v100")
    cells = [(kind, w) for kind in args.executors for w in (1, 2)]
    runs = [cell for _ in range(args.repeats) for cell in cells]  # interleaved against drift
    idx = space.sample((args.configs + 2) * len(runs) + 1, np.random.default_rng(args.seed))
    pch = space.get(int(idx[-1]))
    build_emulator(generate(layer, config_from_dict(pch, "direct")).code)  # the PCH, once
    measurer = EmulateMeasurer(layer)
    ray_startup = _start_ray() if "ray" in args.executors else None
    load_before = _load()
    rows, bare_task_ms = _run_cells(measurer, space, idx, runs, args.configs)
    overhead = {kind: _overhead(kind, layer, space, 40) for kind in args.executors}
    control = _sleep_control(args.executors)
    cpu_control = _cpu_control()
    load_after = _load()
    median = {cell: statistics.median(r["per_second"] for r in rows
                                      if (r["executor"], r["workers"]) == cell) for cell in cells}
    speedup = {k: round(median[(k, 2)] / median[(k, 1)], 3) for k in args.executors}
    emulated_ms = 1e3 / median[(args.executors[0], 1)]
    result = {
        "benchmark": "scale_out", "layer": "n1 cin8 12x12 cout8 k3 pad1 (direct)",
        "measurer": "emulate", "compiler": compiler_version(), "cpus": os.cpu_count(),
        "python": platform.python_version(), "load_average_before": load_before,
        "load_average_after": load_after, "runs": rows,
        "median_per_second": {f"{k} x{w}": round(v, 4) for (k, w), v in median.items()},
        "speedup_2_over_1": speedup,
        "one_emulated_measurement_ms": round(emulated_ms, 1),
        "executor_overhead_per_config": overhead, "ray_startup_s": ray_startup,
        "sleep_control_per_second": control, "cpu_control_speedup_2_over_1": cpu_control,
        "goals": {"speedup_2_over_1": 1.7, "ray_overhead_fraction": 0.05},
    }
    if "ray" in overhead:
        result["ray_overhead_fraction"] = round(overhead["ray"]["overhead_ms"] / emulated_ms, 5)
        result["ray_bare_task_ms"] = bare_task_ms
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    _print_report(result, cells, median, speedup, args.repeats)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    from search.cli.process_exit import exit_process
    from search.cli.script_entry import run_script
    exit_process(run_script(main))
