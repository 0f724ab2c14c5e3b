"""Leave-network-out on our conv template: history from some networks, targets in another.

History: the explorer's measurements (``history_budget`` each, the ``model``
measurer: the analytic estimate of a device preset, not a GPU) of every distinct
layer shape of the history networks (ResNet-18 and VGG-16 by default), stored as
the tuning database stores a tune run's records (workload = our template and the
layer). Targets: the distinct layer shapes of the target network (ResNet-50),
each tuned by the explorer without and with that history
(:func:`search.transfer.with_history`; the prior's rows are the cross-layer
features of :mod:`search.transfer.layer_features`), or (method ``zero-shot``, not run
by default) the history model's top K measured, K = the budget
(:func:`search.zero_shot.zero_shot`, on the same rows). The history never holds a
record of the target network (asserted); a history layer of the same shape as a
target (another network's layer) is history like any other, and is reported.

A run scores ``reference / best found`` after each budget; the reference is the
best of a long explorer run (``reference_budget``) and of everything any run on
that target measured (these spaces are too large to enumerate with the model
measurer on a shared machine).

Examples
--------
>>> [layer.name for layer in distinct_layers(["resnet18"])][:3]
['resnet18.conv1', 'resnet18.conv2_1a', 'resnet18.conv3_1a']
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from iobound.layer_spec import parse_layer_spec
from iobound.networks import network_layers
from search.conv_space import ConvSpace
from search.db import Measurement, Workload
from search.db.conv_template import CONV_TEMPLATE
from search.measure.model import ModelMeasurer
from search.strategies import make_strategy
from search.transfer import GuidedOptions, HistoryPrior, with_history
from search.tuner import tune
from search.zero_shot import ZeroShotOptions, measure_top
from search.zero_shot_order import choose_orders, zero_shot_rankings

from benchmarks.score import speed_score

__all__ = ["NETWORK_METHODS", "DEFAULT_NETWORK_METHODS", "distinct_layers", "target_layers",
           "shape", "network_history", "run_network_target"]

NETWORK_METHODS = ("explorer", "explorer+history", "zero-shot")
DEFAULT_NETWORK_METHODS = ("explorer", "explorer+history")


def shape(layer) -> tuple:
    """A layer's shape: its dict without the name."""
    return tuple(sorted((k, str(v)) for k, v in layer.to_dict().items() if k != "name"))


def distinct_layers(networks: Sequence[str]) -> list:
    """The first layer of each distinct shape of the networks, in network order."""
    seen, out = set(), []
    for net in networks:
        for layer in network_layers(net):
            if shape(layer) not in seen:
                seen.add(shape(layer))
                out.append(layer)
    return out


def target_layers(specs: list[str]) -> list:
    """The layers of ``--target-layers``: preset names as they are, a spec of no preset
    network named by its shape (what the runs and tables call it).

    >>> [layer.name for layer in target_layers(["resnet50.conv1", "cin=64,hin=56,cout=64,kh=3"])]
    ['resnet50.conv1', 'n1 64x56x56 -> 64x54x54 k3x3 s1x1 p0x0']
    """
    layers = [parse_layer_spec(spec) for spec in specs]
    return [layer if "=" not in spec else replace(layer, name=layer.short())
            for spec, layer in zip(specs, layers)]


def network_history(networks: Sequence[str], device: str, budget: int, seed: int = 0) -> list:
    """The explorer's ``budget`` measurements of each distinct layer of ``networks``."""
    hist = []
    for layer in distinct_layers(networks):
        space, meas = ConvSpace(layer, device), ModelMeasurer(layer, device)
        res = tune(space, meas, "explorer", budget=budget, seed=seed)
        w = Workload(CONV_TEMPLATE, layer.to_dict(), space.params)
        hist += [Measurement(w, space.device.name, meas.toolchain(), t.record, source="bench")
                 for t in res.trials]
    return hist


@dataclass(frozen=True)
class NetworkRun:
    """One method on one target layer with one seed: the score after each budget."""

    target: str
    method: str
    seed: int
    scores: dict


def run_network_target(layer, device: str, history: list, methods: Sequence[str], seeds: int,
                       budgets: Sequence[int], reference_budget: int,
                       target_network: str) -> tuple[list[NetworkRun], dict]:
    """Every method and seed on one target layer; (runs, facts about the target)."""
    leaked = [m for m in history if str(m.workload.problem.get("name", "")).lower().startswith(
        target_network.lower() + ".")]  # preset names are case-insensitive
    assert not leaked, f"{len(leaked)} records of {target_network} in the history"
    space, meas = ConvSpace(layer, device), ModelMeasurer(layer, device)
    prior = HistoryPrior.fit(space, history, layer.to_dict(), seed=0)
    ref = tune(space, meas, "explorer", budget=reference_budget, seed=10_000).best.record.cost
    found = {}  # (method, seed) -> {budget: best time}; a run per budget (the explorer plans for it)
    rankings = {}  # seed -> zero-shot's ranking for each K
    orders = None  # zero-shot's order for each K
    for method in methods:
        name, _, opts = method.partition(":")
        for seed, b in itertools.product(range(seeds), budgets):
            if name == "zero-shot":  # the history's top K measured, K = the budget
                if seed not in rankings:
                    if orders is None:  # one choice for every seed
                        orders = choose_orders(space, history, budgets, layer.to_dict())
                    rankings[seed] = zero_shot_rankings(space, history, budgets,
                                                        ZeroShotOptions(), seed, layer.to_dict(),
                                                        orders)
                r = measure_top(space, meas, rankings[seed][b], b)
                found.setdefault((method, seed), {})[b] = r.best[1].cost if r.best else math.inf
                ref = min(ref, found[method, seed][b])
                continue
            s = make_strategy("explorer", space, None, np.random.default_rng(seed))
            if name == "explorer+history":
                s = with_history(s, prior, GuidedOptions(**_opts(opts)), seed=seed)
            best = tune(space, meas, s, budget=b).best_so_far()[-1]
            ref = min(ref, best)
            found.setdefault((method, seed), {})[b] = best
    runs = [NetworkRun(layer.name, m, s, {b: speed_score(ref, t) for b, t in times.items()})
            for (m, s), times in found.items()]
    same = sorted({m.workload.problem["name"] for m in history
                   if shape_of(m.workload.problem) == shape(layer)})
    facts = {"target": layer.name, "space": len(space), "reference_ms": ref,
             "history_records": prior.records if prior else 0, "same_shape_in_history": same}
    return runs, facts


def shape_of(problem: dict) -> tuple:
    """:func:`shape` of a stored layer dict."""
    from iobound.layer import ConvLayer
    return shape(ConvLayer.from_dict(problem))


def _opts(text: str) -> dict:
    from .runner import parse_method
    return parse_method("explorer+history:" + text)[1] if text else {}
