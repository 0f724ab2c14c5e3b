"""Speed of single components against their targets (the checks that left the unit tests).

Wall-clock limits do not belong in the default test suite (they flake on a busy
machine), so they are measured here, each the median of ``--repeats`` runs with
caches emptied first:

- ``winograd_f16_3``: building the F(16 x 16, 3 x 3) transforms (an 18-point
  transform) with SymPy; target 5 s;
- ``resnet50_vertex_counts``: the exact vertex counts of every ResNet-50 layer
  (counts cache emptied); target 1 s;
- ``pebble_20k``: playing a random topological order of a ~20,000-vertex direct
  DAG under Belady and LRU at S = 50; target 10 s;
- ``analytic_features_3000``: the analytic features of 3000 sampled ResNet-50
  conv2-shaped configurations (caches emptied); target 1.5 s;
- ``replay_load_a4000``: loading a ~1 MB recorded space into a ``ReplaySpace``;
  target 2 s (skipped when the shared tuning spaces are not found);
- ``explorer_exhausts_a100``: the explorer (default options, seed 0) tuning the
  recorded 4,362-configuration A100 convolution space to exhaustion by replay;
  target 120 s (the model is refitted only as its data grows by a share past 256
  measurements and its predictions are kept between refits; skipped without the
  shared tuning spaces); with ``--baseline`` also ``explorer_exhausts_a100_refit_every_round``,
  the same run refitting on every round as the explorer did before (no target: the
  time the refit rule saves);
- ``emulated_launches_100``: 100 emulated launches of a small built kernel, each in a
  process of its own (``kernels.emulator_launch``; the kernel and the launcher built
  before timing); target 2 s (20 ms a launch).

Run: ``.venv/bin/python benchmarks/component_speed.py [--repeats 3] [--shared-data DIR]
[--baseline] [--out benchmarks/results/component_speed.json]``; exit code 1 when a median misses
its target.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.shared_data import SHARED_DATA


def _winograd_f16_3() -> None:
    from iobound.winograd_transforms import winograd_transforms
    winograd_transforms.cache_clear()
    assert winograd_transforms(16, 3).BT.shape == (18, 18)


def _resnet50_counts() -> None:
    from iobound.networks import network_layers
    from iobound.vertex_counts import direct_counts, direct_vertex_count
    direct_counts.cache_clear()
    for layer in network_layers("resnet50"):
        direct_vertex_count(layer)


def _pebble_setup():
    from dataflow.dag_direct import direct_conv_dag
    from dataflow.schedules import topological_schedule
    from iobound import ConvLayer
    layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)
    dag = direct_conv_dag(layer)
    return dag, topological_schedule(dag, np.random.default_rng(1))


def _pebble_20k(dag, order) -> None:
    from dataflow.pebble import play
    for policy in ("belady", "lru"):
        assert play(dag, order, 50, policy).total > 0


def _features_setup():
    from iobound.devices import get_device
    from iobound.layer import ConvLayer
    from search.conv_space import ConvSpace
    device = get_device("v100")
    layer = ConvLayer(n=1, c_in=64, h_in=56, w_in=56, c_out=64, k_h=3, k_w=3, padding=1)
    space = ConvSpace(layer, device)
    idx = space.sample(3000, np.random.default_rng(3))
    knobs = np.array([[space.get(i)[p] for p in space.params] for i in idx])
    return layer, device, knobs


def _features_3000(layer, device, knobs) -> None:
    from kernels.analytic import analytic_features, flops, io_words
    io_words.cache_clear(), flops.cache_clear()
    analytic_features(layer, device, "direct", knobs)


def _launch_setup():
    from iobound.layer import ConvLayer
    from kernels.config import DirectConfig
    from kernels.emulator import emulate
    from kernels.generate import generate
    layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    source = generate(layer, DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    w = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    emulate(source, x, w)  # the builds, outside the timing
    return source, x, w


def _launches_100(source, x, w) -> None:
    from kernels.emulator import emulate
    for _ in range(100):
        emulate(source, x, w)


def _replay_load(path: Path) -> None:
    from search.replay_space import ReplaySpace
    ReplaySpace(path)


def _explorer_exhausts(path: Path, every_round: bool = False) -> None:
    from search.measure.replay import ReplayMeasurer
    from search.replay_space import ReplaySpace
    from search.tuner import tune
    space = ReplaySpace(path)
    options = {"refit_all_until": len(space)} if every_round else None
    result = tune(space, ReplayMeasurer(space.cache), "explorer", budget=len(space), seed=0,
                  options=options)
    assert result.evaluations == len(space)


def _median_seconds(fn, repeats: int, *args) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--shared-data", default=str(SHARED_DATA))
    ap.add_argument("--baseline", action="store_true",
                    help="also time the explorer refitting every round (minutes; no target)")
    ap.add_argument("--out", default="benchmarks/results/component_speed.json")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        print(f"error: --repeats must be >= 1, got {args.repeats}", file=sys.stderr)
        return 2
    cases = [("winograd_f16_3", 5.0, _winograd_f16_3, ()),
             ("resnet50_vertex_counts", 1.0, _resnet50_counts, ()),
             ("pebble_20k", 10.0, _pebble_20k, _pebble_setup()),
             ("analytic_features_3000", 1.5, _features_3000, _features_setup()),
             ("emulated_launches_100", 2.0, _launches_100, _launch_setup())]
    a4000 = Path(args.shared_data) / "tuning-spaces" / "convolution_A4000.json.gz"
    if a4000.is_file():
        cases.append(("replay_load_a4000", 2.0, _replay_load, (a4000,)))
    else:
        print(f"replay_load_a4000: skipped ({a4000} not found)")
    a100 = a4000.with_name("convolution_A100.json.gz")
    if a100.is_file():
        cases.append(("explorer_exhausts_a100", 120.0, _explorer_exhausts, (a100,)))
        if args.baseline:
            cases.append(("explorer_exhausts_a100_refit_every_round", None, _explorer_exhausts,
                          (a100, True)))
    else:
        print(f"explorer_exhausts_a100: skipped ({a100} not found)")
    rows = []
    for name, target, fn, fn_args in cases:
        seconds = _median_seconds(fn, args.repeats, *fn_args)
        ok = target is None or seconds <= target
        rows.append({"name": name, "seconds_median": round(seconds, 4), "target_seconds": target,
                     "ok": ok})
        aim = "no target" if target is None else f"target {target:g} s"
        print(f"{name:<24} {seconds:8.3f} s  ({aim})  {'ok' if ok else 'MISSED'}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"repeats": args.repeats, "rows": rows}, indent=2) + "\n")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
