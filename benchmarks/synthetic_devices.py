"""Many devices from a few: perturbed copies of recorded tuning spaces, for transfer checks.

The recorded convolution spaces hold three GPUs, so leave one device out gives each
target two sources; the issue's held-out check has a dozen devices per kernel. This
writes, for every Kernel Tuner cache given, ``--copies`` new caches of the same
configurations on a made-up device ``Synthetic <device> #k``: every timed entry's
time (and its ``times``) multiplied by

    exp(sum over the parameters p of e[p, value of p] + noise)

with one effect ``e[p, v] ~ N(0, effect**2)`` per parameter value and device (a device
favours some block sizes, tile shapes and memory options more than another) and
independent ``noise ~ N(0, noise**2)`` per configuration. Failed entries stay failed.
With the defaults two copies of one GPU rank its space with a Spearman correlation of
about 0.7-0.9, as two real GPUs do (``benchmarks/results/transfer_experiments.md``); the
optimum moves. These are not measurements: use them to see how a transfer method
behaves with many sources, never as a score of a GPU.

Usage (from the repository root)::

    .venv/bin/python -m benchmarks.synthetic_devices ../shared/data/tuning-spaces/*.json.gz \\
        --copies 4 --out /tmp/synthetic
    .venv/bin/python -m benchmarks.transfer_quality --spaces /tmp/synthetic/*.json.gz

The same arguments write the same files (the effects come from ``--seed``, the file's
device name and the copy's number).

>>> import numpy as np
>>> entry = {"a": 1, "b": 2, "time": 2.0, "times": [2.0, 2.0]}
>>> out = perturbed(entry, ("a", "b"), {("a", "1"): 0.0, ("b", "2"): np.log(2)}, 0.0)
>>> out["time"], out["times"]
(4.0, [4.0, 4.0])
>>> perturbed({"a": 1, "time": "RuntimeFailedConfig"}, ("a",), {}, 0.0)["time"]
'RuntimeFailedConfig'
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np


def _timed(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def perturbed(entry: dict, keys, effects: dict, noise: float) -> dict:
    """``entry`` with its time scaled by ``exp(sum of its values' effects + noise)``
    (see the module doc); an entry without a finite time is returned unchanged."""
    if not _timed(entry.get("time")):
        return entry
    factor = math.exp(sum(effects.get((k, json.dumps(entry[k])), 0.0) for k in keys) + noise)
    out = dict(entry, time=entry["time"] * factor)
    if isinstance(entry.get("times"), list):
        out["times"] = [t * factor if _timed(t) else t for t in entry["times"]]
    if _timed(entry.get("GFLOP/s")):
        out["GFLOP/s"] = entry["GFLOP/s"] / factor
    return out


def _rng(seed: int, device: str, copy: int) -> np.random.Generator:
    """A generator fixed by the arguments alone (not by Python's salted ``hash``)."""
    digest = hashlib.sha256(f"{seed}|{device}|{copy}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def synthetic_cache(cache: dict, copy: int, effect: float, noise: float, seed: int) -> dict:
    """Copy number ``copy`` of a Kernel Tuner cache (a dict) on a made-up device."""
    keys = tuple(cache["tune_params_keys"])
    rng = _rng(seed, str(cache.get("device_name")), copy)
    effects = {(k, json.dumps(v)): float(rng.normal(0.0, effect))
               for k in keys for v in cache["tune_params"][k]}
    entries = {key: perturbed(e, keys, effects, float(rng.normal(0.0, noise)))
               for key, e in cache["cache"].items()}
    return {**cache, "device_name": f"Synthetic {cache.get('device_name')} #{copy}",
            "cache": entries}


def _read(path: Path) -> dict:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as fh:
        return json.load(fh)


def _stem(path: Path) -> str:
    """The name the outputs of ``path`` start with (``conv.json.gz`` -> ``conv``)."""
    return path.name.split(".")[0]


def _checked_inputs(paths: list[Path]) -> list[str]:
    """Each input's output stem; refused (``SystemExit``, before anything is written) when
    an input is no file or two inputs would write the same outputs."""
    for path in paths:
        if not path.is_file():
            raise SystemExit(f"error: cache file {path} does not exist or is not a file")
    stems: dict[str, Path] = {}
    for path in paths:
        other = stems.setdefault(_stem(path), path)
        if other is not path:
            raise SystemExit(f"error: {other} and {path} would both write "
                             f"{_stem(path)}_s*.json.gz; rename one file")
    return [_stem(p) for p in paths]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("caches", nargs="+", type=Path, help="Kernel Tuner cache files")
    ap.add_argument("--copies", type=int, default=4, help="devices made from each file")
    ap.add_argument("--effect", type=float, default=0.12,
                    help="standard deviation of a parameter value's log effect")
    ap.add_argument("--noise", type=float, default=0.03,
                    help="standard deviation of a configuration's own log noise")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True, help="folder to write into")
    a = ap.parse_args(argv)
    if a.copies < 1 or a.effect < 0 or a.noise < 0:
        ap.error("--copies must be >= 1, --effect and --noise >= 0")
    stems = _checked_inputs(a.caches)
    a.out.mkdir(parents=True, exist_ok=True)
    for path, stem in zip(a.caches, stems):
        try:
            cache = _read(path)
        except (OSError, EOFError, ValueError) as exc:
            raise SystemExit(f"error: cannot read {path}: {exc}") from None
        for k in range(a.copies):
            target = a.out / f"{stem}_s{k}.json.gz"
            with gzip.open(target, "wt") as fh:
                json.dump(synthetic_cache(cache, k, a.effect, a.noise, a.seed), fh)
            print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
