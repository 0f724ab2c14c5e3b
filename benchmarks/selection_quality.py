"""How well do the algorithm selectors choose direct or Winograd F(e) on unseen preset layers?

Dataset: ``--synthetic`` random layer shapes per seed spanning the ranges of the
network presets' Winograd-candidate layers (``search.selection.synthetic.synthetic_layers``),
plus the presets' own such layers (unique shapes). Labels: for every candidate
(direct, Winograd e = 2, 3, 4) the ``model`` measurer's minimum over the whole Table 1
pruned space (``search.selection.labels``): analytic ESTIMATES on the device preset,
the oracle of that measurer. Labels are cached in ``--labels`` (JSON lines of
``LabelRecord``); only missing ones are computed.

Protocol, leave one network out: for each preset network, train on the synthetic
layers plus the other networks' layers, minus every shape of the held-out network;
predict the held-out network's layers (so each preset layer is scored by a model that
never saw its shape; a shape found in two networks is scored once). Scores over the
held-out layers: accuracy,
balanced accuracy (mean recall over the oracle's classes), mean and minimum speedup
over the oracle (SO = t_oracle / t_chosen), for the gradient-boosted trees, the SO
decision tree (<= 15 leaves), and the heuristics "always direct" and "Winograd F(e x e,
3 x 3) for every 3 x 3 stride-1 layer" (e = 2, 3, 4). A second protocol trains on the
synthetic layers only. The configuration to measure first
(``search.selection.first_config``: the best configuration of the nearest training
layer that fits) is scored as ``t_best / t_first`` for the oracle's candidate. Layers
with one candidate (1 x 1, strided, asymmetric) are left out: every selector gets SO 1
there.

Run: ``.venv/bin/python benchmarks/selection_quality.py [--device v100] [--synthetic 200]
[--seeds 1 2] [--labels FILE] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def _key(rec_or_layer, device: str, cand=None) -> tuple:
    from search.selection.dataset import shape_key
    if cand is None:
        return (shape_key(rec_or_layer.layer), rec_or_layer.device, rec_or_layer.candidate)
    return (shape_key(rec_or_layer), device, cand)


def labelled(layers, device, path: Path) -> list:
    """Records of every candidate of ``layers`` on ``device``, from the cache or labelled."""
    from search.selection.dataset import LabelRecord, candidates
    from search.selection.record_file import read_records
    from search.selection.labels import label_layer

    records = list(read_records(path)) if path.exists() else []
    current = [r for r in records if _current(r)]
    if len(current) < len(records):  # an older model's labels leave the file, not only the cache
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps({"schema": 1, **r.to_dict()}) + "\n" for r in current))
        tmp.replace(path)
    cache = {_key(r, None): r for r in current}
    out = []
    with open(path, "a") as f:
        for i, layer in enumerate(layers):
            keys = [_key(layer, device, c) for c in candidates(layer)]
            if not all(k in cache for k in keys):
                t0 = time.perf_counter()
                for rec in label_layer(layer, device):
                    cache[_key(rec, None)] = rec
                    f.write(json.dumps({"schema": 1, **rec.to_dict()}) + "\n")
                f.flush()
                print(f"  labelled {i + 1}/{len(layers)} {layer.short()} "
                      f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
            out += [LabelRecord(layer, *_fields(cache[k])) for k in keys]
    return out


def _current(rec) -> bool:
    """Whether a cached label is of the model as it is now (labels of an older
    MODEL_VERSION are stale: labelled again, never reused; a space that could not be
    built is no model's)."""
    from search.measure.model import stale_model_toolchain
    return not stale_model_toolchain(rec.source)


def _fields(r) -> tuple:
    return (r.device, r.algorithm, r.e, r.config, r.time_ms, r.estimate, r.source)


def preset_layers() -> dict:
    """network -> its layers with Winograd candidates, one per shape."""
    from iobound.networks import network_layers, network_names
    from iobound.algorithms import winograd_offered
    from search.selection.dataset import shape_key

    out = {}
    for net in network_names():
        seen, layers = set(), []
        for layer in network_layers(net):
            if winograd_offered(layer) and shape_key(layer) not in seen:
                seen.add(shape_key(layer))
                layers.append(layer)
        out[net] = layers
    return out


def selectors(max_leaves: int = 15) -> dict:
    from search.selection.predictor import AlwaysDirect, GbtSelector, TreeSelector, Winograd3x3
    return {"gbt": GbtSelector(), "tree": TreeSelector(max_leaves=max_leaves),
            "always_direct": AlwaysDirect(), "winograd3x3_e2": Winograd3x3(2),
            "winograd3x3_e3": Winograd3x3(3), "winograd3x3_e4": Winograd3x3(4)}


def evaluate(synthetic: list, by_net: dict, max_leaves: int = 15,
             first_configs: bool = False) -> dict:
    """Both protocols (see the module doc): name -> score dict, plus tree leaves per fold,
    and with ``first_configs`` the quality of the nearest-layer first configuration."""
    from search.selection.dataset import shape_key
    from search.selection.first_config import first_config_quality
    from search.selection.predictor import score

    held, choices, leaves, scored, first = [], {n: [] for n in selectors()}, [], set(), []
    for net, exs in by_net.items():
        shapes = {shape_key(ex.layer) for ex in exs}
        # a shape of two networks (resnet18 and resnet50 share theirs) is scored once
        test = [ex for ex in exs if shape_key(ex.layer) not in scored]
        if not test:
            continue
        scored |= shapes
        train = [ex for ex in synthetic if shape_key(ex.layer) not in shapes] + [
            ex for other, oexs in by_net.items() if other != net
            for ex in oexs if shape_key(ex.layer) not in shapes]
        for name, sel in selectors(max_leaves).items():
            choices[name] += sel.fit(train).predict(test)
            if name == "tree":
                leaves.append(sel.tree.n_leaves)
        if first_configs:
            first += [first_config_quality(ex, ex.best, train) for ex in test]
        held += test
    lono = {name: score(held, c) for name, c in choices.items()}
    presets = held
    synthetic = [ex for ex in synthetic if shape_key(ex.layer) not in scored]
    synth_only = {name: score(presets, sel.fit(synthetic).predict(presets))
                  for name, sel in selectors(max_leaves).items()}
    out = {"leave_one_network_out": lono, "synthetic_only": synth_only,
           "tree_leaves_per_fold": leaves}
    if first_configs:
        out["first_config"] = {
            "n": len(first), "found": sum(q > 0 for q in first),
            "mean_t_best_over_t_first": sum(first) / len(first) if first else 0.0,
            "per_layer": {ex.layer.name: q for ex, q in zip(held, first)}}
    return out


def _table(title: str, scores: dict) -> str:
    lines = [f"{title}", f"{'selector':<16} {'n':>4} {'accuracy':>9} {'bal.acc':>8} "
                         f"{'mean SO':>8} {'min SO':>7}"]
    for name, s in scores.items():
        lines.append(f"{name:<16} {s['n']:>4} {s['accuracy']:>9.3f} {s['balanced_accuracy']:>8.3f} "
                     f"{s['mean_so']:>8.3f} {s['min_so']:>7.3f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    import numpy as np

    from iobound.devices import get_device
    from search.selection.dataset import examples_from_records
    from search.selection.synthetic import synthetic_layers
    from search.selection.predictor import TreeSelector

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="v100")
    p.add_argument("--synthetic", type=int, default=200, help="synthetic layers per seed")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    p.add_argument("--max-leaves", type=int, default=15)
    p.add_argument("--labels", type=Path,
                   help="label cache (default results/selection_labels_<device>.jsonl)")
    p.add_argument("--out", type=Path, default=RESULTS / "selection_quality.json")
    args = p.parse_args(argv)
    device = get_device(args.device).name
    if args.max_leaves < 1:
        raise SystemExit(f"error: --max-leaves must be >= 1, got {args.max_leaves}")
    if args.synthetic < 0 or min(args.seeds) < 0:
        raise SystemExit("error: --synthetic and --seeds must be >= 0")
    if args.out.is_dir():
        raise SystemExit(f"error: --out {args.out} is a folder; name the JSON file")
    args.seeds = list(dict.fromkeys(args.seeds))  # a seed named twice adds no layers twice
    labels = args.labels or RESULTS / f"selection_labels_{args.device}.jsonl"
    t0 = time.perf_counter()
    by_net_layers = preset_layers()
    everything = [l for ls in by_net_layers.values() for l in ls]
    synth = [l for seed in args.seeds
             for l in synthetic_layers(args.synthetic, np.random.default_rng(seed), everything)]
    synthetic = examples_from_records(labelled(synth, device, labels))
    by_net = {net: examples_from_records(labelled(ls, device, labels))
              for net, ls in by_net_layers.items()}
    result = evaluate(synthetic, by_net, args.max_leaves, first_configs=True)
    final = TreeSelector(max_leaves=args.max_leaves).fit(
        synthetic + [ex for exs in by_net.values() for ex in exs])
    result.update(device=device, synthetic_layers=len(synthetic),
                  preset_layers={n: len(e) for n, e in by_net.items()},
                  labels="model measurer (analytic estimate): oracle over each pruned space",
                  estimate=True, final_tree_leaves=final.tree.n_leaves,
                  final_tree_rules=final.rules(), seconds=round(time.perf_counter() - t0, 1))
    print(_table(f"leave one network out, {device}, held-out preset layers with a choice:",
                 result["leave_one_network_out"]))
    print()
    print(_table("trained on synthetic layers only:", result["synthetic_only"]))
    fc = result["first_config"]
    print(f"\nfirst config (nearest training layer's best, oracle candidate): found for "
          f"{fc['found']}/{fc['n']} layers, mean t_best / t_first "
          f"{fc['mean_t_best_over_t_first']:.3f} (0 counted where none was found)")
    print(f"\ntree leaves per fold: {result['tree_leaves_per_fold']}; the tree on all data "
          f"({final.tree.n_leaves} leaves):\n{final.rules()}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
