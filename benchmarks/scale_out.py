"""Measurements per second with 1 and 2 workers, local and Ray, on a compile-heavy batch.

The batch: ``--configs`` random configurations of our direct kernel for a small layer
(default 1x8x12x12 -> 8, 3x3, pad 1), measured by the ``emulate`` measurer, whose g++
build of every new kernel takes far longer than running it. Every run gets configurations
no other run measured (one random sample, split), so each one pays its builds; the
emulator's precompiled header is built before any timing. Executor start-up (worker
processes, Ray itself) is timed separately and not in the throughput.

Ray is started once (2 CPUs, loopback only) and its start-up reported on its own.
Also: the overhead an executor adds per configuration, from a batch of the ``model``
measurer (microseconds of work each) with 1 worker, next to one emulated measurement
(``1 / throughput`` with 1 local worker); and a bare Ray task round trip.

Goals (issue 13): 2 workers >= 1.7x the throughput of 1; Ray's overhead per task < 5% of
one emulated measurement. Other work on the machine distorts both: the load average
before and after is part of the result.

Run: ``.venv/bin/python benchmarks/scale_out.py [--configs 12] [--executors local ray]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "scale_out.json"


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _throughput(executor, batch) -> dict:
    t0 = time.perf_counter()
    got = list(executor.submit(batch))
    seconds = time.perf_counter() - t0
    statuses: dict[str, int] = {}
    for _, r in got:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    assert sorted(i for i, _ in got) == sorted(i for i, _ in batch)
    return {"configs": len(batch), "seconds": round(seconds, 3),
            "per_second": round(len(batch) / seconds, 4), "statuses": statuses}


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=12, help="configurations per run (default 12)")
    parser.add_argument("--executors", nargs="+", default=["local", "ray"], choices=["local", "ray"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.configs < 2:
        parser.error(f"--configs must be >= 2, got {args.configs}")
    # one fresh build cache for the whole run, set before any worker starts
    os.environ["IOBOUND_CACHE"] = tempfile.mkdtemp(prefix="iobound-scale-out-")

    import numpy as np

    from iobound.layer import ConvLayer
    from kernels.config import config_from_dict
    from kernels.emulator import build_emulator, compiler_version
    from kernels.generate import generate
    from search.conv_space import ConvSpace
    from search.executors import make_executor
    from search.measure.emulate import EmulateMeasurer

    layer = ConvLayer(n=1, c_in=8, h_in=12, w_in=12, c_out=8, k_h=3, k_w=3, padding=1, name="small")
    space = ConvSpace(layer, "v100")
    runs = [(kind, w) for kind in args.executors for w in (1, 2)]
    idx = space.sample(args.configs * len(runs) + 1, np.random.default_rng(args.seed))
    warm = space.get(int(idx[0]))
    build_emulator(generate(layer, config_from_dict(warm, "direct")).code)  # the PCH, once
    measurer = EmulateMeasurer(layer)
    ray_startup = None
    if "ray" in args.executors:  # one local Ray (2 CPUs, loopback) for every Ray run
        from search.executors.ray_executor import start_local_ray
        t0 = time.perf_counter()
        start_local_ray(2)
        ray_startup = round(time.perf_counter() - t0, 2)
    load_before = _load()
    rows, started = [], {}
    for r, (kind, workers) in enumerate(runs):
        chunk = idx[1 + r * args.configs: 1 + (r + 1) * args.configs]
        batch = [(int(i), space.get(int(i))) for i in chunk]
        t0 = time.perf_counter()
        with make_executor(measurer, executor=kind, workers=workers, timeout_s=600) as ex:
            list(ex.submit([(int(idx[0]), warm)]))  # start the workers (a cached build)
            start_s = time.perf_counter() - t0
            row = {"executor": kind, "workers": workers, "startup_s": round(start_s, 2),
                   **_throughput(ex, batch)}
            if kind == "ray":
                started["bare_task_ms"] = _bare_ray_task_ms()
        rows.append(row)
        print(f"{kind:5s} {workers} worker(s): {row['per_second']:.3f} configs/s "
              f"({row['configs']} in {row['seconds']:.1f} s; start-up {start_s:.1f} s)", flush=True)
    overhead = {kind: _overhead(kind, layer, space, 40) for kind in args.executors}
    load_after = _load()
    one = {r["executor"]: r for r in rows if r["workers"] == 1}
    two = {r["executor"]: r for r in rows if r["workers"] == 2}
    speedup = {k: round(two[k]["per_second"] / one[k]["per_second"], 3) for k in one if k in two}
    emulated_ms = 1e3 / one[args.executors[0]]["per_second"]
    result = {
        "benchmark": "scale_out", "layer": "n1 cin8 12x12 cout8 k3 pad1 (direct)",
        "measurer": "emulate", "compiler": compiler_version(), "cpus": os.cpu_count(),
        "python": platform.python_version(), "load_average_before": load_before,
        "load_average_after": load_after, "runs": rows, "speedup_2_over_1": speedup,
        "one_emulated_measurement_ms": round(emulated_ms, 1),
        "executor_overhead_per_config": overhead, "ray_startup_s": ray_startup,
        "goals": {"speedup_2_over_1": 1.7, "ray_overhead_fraction": 0.05},
    }
    if "ray" in overhead:
        result["ray_overhead_fraction"] = round(overhead["ray"]["overhead_ms"] / emulated_ms, 5)
        result["ray_bare_task_ms"] = started.get("bare_task_ms")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"\nload average (1/5/15 min) before {load_before}, after {load_after}; {os.cpu_count()} CPUs")
    print(f"{'executor':9s}{'workers':>8s}{'configs/s':>11s}{'speedup':>9s}{'start-up s':>12s}")
    for row in rows:
        sp = speedup.get(row["executor"]) if row["workers"] == 2 else None
        print(f"{row['executor']:9s}{row['workers']:>8d}{row['per_second']:>11.3f}"
              f"{(f'{sp:.2f}x' if sp else ''):>9s}{row['startup_s']:>12.1f}")
    print(f"\none emulated measurement (1 local worker): {emulated_ms:.0f} ms")
    for kind, o in overhead.items():
        print(f"{kind} executor overhead per config: {o['overhead_ms']:.1f} ms "
              f"({o['through_executor_ms']:.1f} ms through it vs {o['in_process_ms']:.2f} ms in "
              f"process) = {o['overhead_ms'] / emulated_ms:.2%} of one emulated measurement")
    if "ray_bare_task_ms" in result:
        print(f"bare Ray task round trip: {result['ray_bare_task_ms']:.2f} ms; "
              f"starting the local Ray: {ray_startup:.1f} s")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
