"""Layer-to-layer transfer on our conv template (a first measurement, issue 12 item 5).

History: the explorer's measurements (``--history-budget`` each) of the distinct
3x3 layers of ResNet-18 on the ``model`` measurer (the analytic estimate of a
device preset, labelled as such). Targets: ResNet-50's 3x3 layers (``b`` of each
stage's first block). Each target is tuned by the explorer without and with that
history (:func:`search.transfer.with_history`, the problem match score weighs the
layers); the score is reference / best found, the reference being the best of a
long explorer run (``--reference-budget``) and of everything any run measured (the
spaces are too large to enumerate with the model measurer here).

Usage::

    nice .venv/bin/python -m benchmarks.transfer_network --seeds 5

Prints a Markdown table; writes nothing.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from iobound.networks import get_layer
from search.conv_space import ConvSpace
from search.db import Measurement, Workload
from search.measure.model import ModelMeasurer
from search.strategies import make_strategy
from search.transfer import HistoryPrior, with_history
from search.tuner import tune

SOURCES = ("resnet18.conv2_1a", "resnet18.conv3_1b", "resnet18.conv4_1b", "resnet18.conv5_1b")
TARGETS = ("resnet50.conv2_1b", "resnet50.conv3_1b", "resnet50.conv4_1b", "resnet50.conv5_1b")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sources", nargs="+", default=list(SOURCES), help="history layers")
    ap.add_argument("--targets", nargs="+", default=list(TARGETS), help="target layers")
    ap.add_argument("--device", default="v100")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budgets", type=int, nargs="+", default=[10, 25, 50])
    ap.add_argument("--history-budget", type=int, default=100)
    ap.add_argument("--reference-budget", type=int, default=300)
    a = ap.parse_args(argv)
    hist = []
    for name in a.sources:
        layer = get_layer(name)
        space = ConvSpace(layer, a.device)
        res = tune(space, ModelMeasurer(layer, a.device), "explorer", budget=a.history_budget, seed=0)
        w = Workload("iobound.conv", layer.to_dict(), space.params)
        hist += [Measurement(w, a.device, "model", t.record) for t in res.trials]
    print(f"history: {len(hist)} records of {', '.join(a.sources)}")
    print("| target | method | " + " | ".join(map(str, a.budgets)) + " |")
    print("|---|---|" + "---|" * len(a.budgets))
    for name in a.targets:
        layer = get_layer(name)
        space, meas = ConvSpace(layer, a.device), ModelMeasurer(layer, a.device)
        prior = HistoryPrior.fit(space, hist, layer.to_dict(), seed=0)
        ref = tune(space, meas, "explorer", budget=a.reference_budget, seed=10_000).best.record.cost
        curves = {}
        for method in ("explorer", "explorer+history"):
            for seed in range(a.seeds):
                s = make_strategy("explorer", space, None, np.random.default_rng(seed))
                if method != "explorer":
                    s = with_history(s, prior, seed=seed)
                bsf = tune(space, meas, s, budget=max(a.budgets)).best_so_far()
                ref = min(ref, bsf[-1])
                curves.setdefault(method, []).append(bsf)
        for method, runs in curves.items():
            cells = [statistics.fmean(ref / r[b - 1] if math.isfinite(r[b - 1]) else 0.0
                                      for r in runs) for b in a.budgets]
            used = "" if prior is None or method == "explorer" else f" ({prior.records} records)"
            print(f"| {name} | {method}{used} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
