"""Per-round overhead of the model-guided strategies against the cost of measuring a batch.

For each layer (default: ResNet-50 conv2_1, conv3_1, conv4_1 on a V100 preset, direct
kernel) runs ``tune(..., strategy=S, budget=N)`` with the analytic ``model`` measurer
(which costs ~nothing, so the wall time is the strategy's), and reports the mean
strategy time per round (model training + exploration) next to what measuring one
batch of ``batch_size`` configurations on a GPU costs at least: compiling them with
nvcc here (``kernels.nvcc.compile_cubin``, no cache, serially; the GPU timing itself
would add warm-up and repeats on top). It also reports the seconds per model fit
(training plus exploration or annealing): ``sa`` retrains only every ``plan_size`` (64)
measurements, so its per-round mean hides the round that pays for a fit, and a budget
below 64 trains no model at all (a warning says so). Writes JSON (``--out``).

Run: ``.venv/bin/python benchmarks/tuner_overhead.py [--budget 96] [--strategies explorer sa]``
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from iobound.devices import get_device  # noqa: E402
from iobound.networks import get_layer  # noqa: E402
from search.conv_space import ConvSpace  # noqa: E402
from search.measure.model import ModelMeasurer  # noqa: E402
from search.tuner import tune  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "tuner_overhead.json"
DEFAULT_LAYERS = ("resnet50.conv2_1", "resnet50.conv3_1", "resnet50.conv4_1")


def _compile_batch_seconds(layer, space, n: int, seed: int) -> float | None:
    """Seconds nvcc needs for ``n`` random configs of ``space`` (None without nvcc)."""
    import numpy as np

    from kernels.config import config_from_dict
    from kernels.generate import generate
    from kernels.nvcc import compile_cubin, find_nvcc

    if find_nvcc("sm_80") is None:
        return None
    idx = space.sample(n, np.random.default_rng(seed))
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        for i in idx:
            src = generate(layer, config_from_dict(space.get(i), space.algorithm))
            compile_cubin(src, "sm_80", cache_root=tmp)
        return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", nargs="+", default=list(DEFAULT_LAYERS))
    p.add_argument("--device", default="v100")
    p.add_argument("--budget", type=int, default=96)
    p.add_argument("--strategies", nargs="+", default=["explorer", "sa"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = p.parse_args(argv)
    device = get_device(args.device)
    rows = []
    for name in args.layers:
        layer = get_layer(name)
        space = ConvSpace(layer, device, "direct")
        measurer = ModelMeasurer(layer, device)
        tune(space, measurer, "random", budget=2, seed=0)  # warm imports (xgboost) and caches
        for strat in args.strategies:
            res = tune(space, measurer, strat, budget=args.budget, seed=args.seed)
            per_round = res.strategy_seconds / max(res.rounds, 1)
            stats = res.strategy_stats
            fits = stats.get("fits", 0)
            fit_s = stats.get("model_seconds", 0.0) + stats.get("explore_seconds", 0.0)
            per_fit = fit_s / fits if fits else None
            if not fits:
                print(f"warning: {strat} trained no model within budget {args.budget} (sa retrains "
                      f"every plan_size=64 measurements): its model overhead is not measured",
                      file=sys.stderr)
            batch = 8
            compile_s = _compile_batch_seconds(layer, space, batch, args.seed)
            row = {"layer": name, "space_size": len(space), "strategy": strat,
                   "budget": args.budget, "rounds": res.rounds,
                   "strategy_seconds_per_round": round(per_round, 4),
                   "fits": fits,
                   "seconds_per_fit": None if per_fit is None else round(per_fit, 4),
                   "model_measure_seconds": round(res.measure_seconds, 4),
                   "nvcc_seconds_per_batch_of_8": None if compile_s is None else round(compile_s, 3),
                   "stats": res.strategy_stats}
            rows.append(row)
            ratio = "" if compile_s is None else f"  ({per_round / compile_s:.1%} of compiling a batch: {compile_s:.2f} s)"
            fit_txt = "no fit" if per_fit is None else f"{fits} fits, {per_fit:.3f} s each"
            print(f"{name:<20} {len(space):>7} {strat:<9} {per_round:7.3f} s/round, {fit_txt}{ratio}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": platform.platform(), "device": device.name,
                                    "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
