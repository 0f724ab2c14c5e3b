"""The measured choice of algorithm (``tune --algorithm all``) against the oracle.

For every layer of a network, on one device preset, with the analytic model as the
measurer (the only one whose whole space can be evaluated, so the oracle is known):

- the tuner's choice: each algorithm tuned with ``--budget`` evaluations (the explorer,
  each seed), the fastest kept (:func:`search.session.choose_algorithms`);
- the oracle: ``iobound select``'s choice, every candidate's whole pruned space evaluated
  (:func:`search.selection.select.select_layers`).

Per seed it reports how many layers choose the oracle's algorithm, the chosen times summed
over the layers against the oracle's sum, and against tuning direct alone with the same
budget (the direct candidate of the same run). Writes JSON.

Run: ``.venv/bin/python benchmarks/algorithm_choice.py --network vgg16 [--budget 48]
[--seeds 0 1 2] [--device v100]``
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

RESULTS = Path(__file__).resolve().parent / "results"


def oracle(layers, device) -> dict:
    """Layer name -> (algorithm, time_ms) of ``select`` over whole spaces."""
    from search.selection.select import select_layers
    return {s.layer.name: (s.choice.algorithm, s.time_ms)
            for s in select_layers(layers, device, "model")}


def tuned(layers, device, budget: int, seed: int) -> dict:
    """Layer name -> (chosen algorithm, its time, direct's time, evaluations)."""
    from search.session import TuneSettings, choose_algorithms, tune_layers
    with tempfile.TemporaryDirectory() as out_dir:  # the winners' kernels: not kept
        reports = tune_layers(layers, device, TuneSettings(budget=budget, seed=seed),
                              measure="model", algorithm="all", out_dir=out_dir,
                              verify=False)
    out = {}
    for choice in choose_algorithms(reports):
        direct = next(r for r in choice.candidates if r.algorithm == "direct")
        out[choice.layer.name] = (choice.chosen.algorithm,
                                  choice.chosen.result.best.record.time_ms,
                                  direct.result.best.record.time_ms,
                                  sum(r.evaluations for r in choice.candidates))
    return out


def summary(best: dict, tune: dict) -> dict:
    """One seed's agreement with the oracle and its sums."""
    names = list(best)
    chosen = sum(tune[n][1] for n in names)
    return {"layers": len(names),
            "same_algorithm": sum(tune[n][0] == best[n][0] for n in names),
            "chosen_sum_ms": chosen, "oracle_sum_ms": sum(best[n][1] for n in names),
            "direct_only_sum_ms": sum(tune[n][2] for n in names),
            "chosen_over_oracle": chosen / sum(best[n][1] for n in names),
            "direct_only_over_chosen": sum(tune[n][2] for n in names) / chosen}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", default="vgg16")
    parser.add_argument("--device", default="v100")
    parser.add_argument("--budget", type=int, default=48)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    from iobound.devices import get_device
    from iobound.networks import network_layers
    layers, device = network_layers(args.network), get_device(args.device)
    t0 = time.perf_counter()
    best = oracle(layers, device)
    print(f"oracle (select, whole spaces): {sum(a == 'winograd' for a, _ in best.values())} of "
          f"{len(best)} layers Winograd, summed {sum(t for _, t in best.values()):.4f} ms "
          f"({time.perf_counter() - t0:.0f} s)")
    runs = []
    for seed in args.seeds:
        tune = tuned(layers, device, args.budget, seed)
        s = summary(best, tune)
        runs.append({"seed": seed, **s, "layers_detail": {
            n: {"oracle": best[n], "tuned": tune[n]} for n in best}})
        print(f"seed {seed}: {s['same_algorithm']} of {s['layers']} layers choose the oracle's "
              f"algorithm; chosen summed {s['chosen_sum_ms']:.4f} ms = "
              f"{s['chosen_over_oracle']:.3f}x the oracle's; direct alone "
              f"{s['direct_only_sum_ms']:.4f} ms = {s['direct_only_over_chosen']:.3f}x the chosen")
    out = args.out or RESULTS / f"algorithm_choice_{args.network}_{args.device}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"benchmark": "algorithm_choice", "network": args.network,
                               "device": device.name, "budget": args.budget,
                               "measure": "model (analytic estimates)", "runs": runs},
                              indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
