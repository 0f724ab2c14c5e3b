"""How long tuning with a large history takes before its first measurement.

Users keep whole recorded spaces in the tuning database: a brute-forced gemm space of
one GPU is tens of thousands of configurations (CLBlast's, in Kernel Tuner's
benchmarks), and a database holds a dozen GPUs. This writes gemm-shaped Kernel Tuner
caches (CLBlast's ``Xgemm`` parameters and restrictions: 241,600 configurations with
the value lists below; ``--size small`` halves four of them, 41,248, for a quick run),
one per made-up device, imports all but the last into a database and times,
with the last as the target:

- ``import``: ``iobound history import`` of the sources;
- ``read``: reading the space's history back (``usable_history``);
- ``prior``: fitting the history prior (``HistoryPrior.fit``), with the default cap of
  rows per source, and with ``--uncapped`` also without it;
- ``zero_shot``: ranking the space with zero-shot's regression (``history_ranking``);
- ``zero_shot_choice``: choosing zero-shot's order at K = 10 (``choose_order``: the
  model fitted again with each history device left out, 8 at most), and the order chosen;
- ``tune``: ``iobound tune --measure replay:TARGET --history DB --budget 50`` end to
  end, and its score (optimum / best found).

The times are made up (``exp`` of a sum of per-parameter-value effects, shared by every
device plus each device's own, and noise, as ``benchmarks/synthetic_devices.py`` does):
the scores are not a GPU's; the seconds are this machine's. Writes JSON (``--out``).

Run: ``.venv/bin/python -m benchmarks.history_scale [--devices 4] [--size small] [--uncapped]``

>>> len(gemm_configs("small")), len(gemm_configs("tiny"))
(41248, 3712)
>>> all(c["KWG"] % c["KWI"] == 0 for c in gemm_configs("small"))
True
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import itertools
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from iobound.errors import IoboundError

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.score import speed_score  # noqa: E402 (after the path, when run as a script)

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "history_scale.json"

GEMM_PARAMS = {
    "MWG": [16, 32, 64, 128], "NWG": [16, 32, 64, 128], "KWG": [16, 32],
    "MDIMC": [8, 16, 32], "NDIMC": [8, 16, 32], "MDIMA": [8, 16, 32], "NDIMB": [8, 16, 32],
    "KWI": [2, 8], "VWM": [1, 2, 4, 8], "VWN": [1, 2, 4, 8],
    "STRM": [0, 1], "STRN": [0, 1], "SA": [0, 1], "SB": [0, 1], "PRECISION": [32],
}
SIZES = {  # value lists replaced, per size
    "full": {},
    "small": {"MWG": [32, 64], "NWG": [32, 64], "VWM": [1, 2], "VWN": [1, 2]},
    "tiny": {"MWG": [32, 64], "NWG": [32, 64], "MDIMC": [8, 16], "NDIMC": [8, 16],
             "MDIMA": [8, 16], "NDIMB": [8, 16], "VWM": [1, 2], "VWN": [1, 2], "STRM": [0],
             "STRN": [0]},
}
DEVICES = ("NVIDIA GeForce RTX 3090", "NVIDIA RTX A6000", "AMD Instinct MI250X",
           "AMD Radeon PRO W6600", "NVIDIA A100-PCIE-40GB", "NVIDIA GeForce RTX 2080 Ti")

MAX_DEVICES = 100


def device_names(devices: int) -> list[str]:
    """``devices`` names: real GPUs' first, then made-up ones.

    >>> device_names(8)[-2:]
    ['made-up GPU 7', 'made-up GPU 8']
    """
    return [*DEVICES, *(f"made-up GPU {n}" for n in range(len(DEVICES) + 1, devices + 1))][:devices]


def gemm_params(size: str = "full") -> dict:
    return {**GEMM_PARAMS, **SIZES[size]}


def _valid(c: dict) -> bool:
    """CLBlast Xgemm's restrictions (as Kernel Tuner's gemm example states them)."""
    return (c["KWG"] % c["KWI"] == 0
            and c["MWG"] % (c["MDIMC"] * c["VWM"]) == 0 and c["NWG"] % (c["NDIMC"] * c["VWN"]) == 0
            and c["MWG"] % (c["MDIMA"] * c["VWM"]) == 0 and c["NWG"] % (c["NDIMB"] * c["VWN"]) == 0
            and c["KWG"] % ((c["MDIMC"] * c["NDIMC"]) // c["MDIMA"]) == 0
            and c["KWG"] % ((c["MDIMC"] * c["NDIMC"]) // c["NDIMB"]) == 0)


def gemm_configs(size: str = "full") -> list[dict]:
    params = gemm_params(size)
    configs = (dict(zip(params, v)) for v in itertools.product(*params.values()))
    return [c for c in configs if _valid(c)]


def write_caches(out: Path, devices: int, size: str = "full", seed: int = 0) -> list[Path]:
    """One gemm-shaped cache per device (see module doc); their paths."""
    params, configs = gemm_params(size), gemm_configs(size)
    keys = list(params)
    base = np.random.default_rng(seed)
    shared = {(k, v): base.normal(0, 0.25) for k in keys for v in params[k]}
    paths = []
    for n, device in enumerate(device_names(devices)):
        rng = np.random.default_rng([seed, n + 1])
        own = {(k, v): rng.normal(0, 0.15) for k in keys for v in params[k]}
        cache = {}
        for c in configs:
            key = ",".join(str(c[k]) for k in keys)
            if c["MDIMC"] * c["NDIMC"] > 1024 or rng.random() < 0.03:
                cache[key] = {**c, "time": "CompilationFailedConfig"}
                continue
            t = float(np.exp(sum(shared[k, c[k]] + own[k, c[k]] for k in keys)
                             + rng.normal(0, 0.03)))
            cache[key] = {**c, "time": t, "times": [t]}
        path = out / f"gemm_{n}.json.gz"
        with gzip.open(path, "wt") as f:
            json.dump({"device_name": device, "kernel_name": "Xgemm", "problem_size": [4096, 4096],
                       "tune_params_keys": keys, "tune_params": params, "objective": "time",
                       "cache": cache}, f)
        paths.append(path)
    return paths


class IoboundFailed(IoboundError):
    """An ``iobound`` command run by a benchmark exited non-zero; ``exit_code`` is its code
    (``search.cli.script_entry.run_script`` prints the message as one line)."""

    def __init__(self, argv: list[str], code: int, stderr: str):
        lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
        said = next((ln for ln in reversed(lines) if "error:" in ln), lines[-1] if lines else "")
        said = said.split("error:", 1)[-1].strip()
        super().__init__(f"iobound {' '.join(argv[:1])} exited {code}"
                         + (f": {said}" if said else ""))
        self.exit_code = code


def run_iobound(argv: list[str], stdout) -> None:
    """``iobound argv`` in this process, its stdout into ``stdout``; :class:`IoboundFailed`
    (one line, with the command's own error) when it exits non-zero."""
    from search.cli.main import main as iobound

    err = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(err):
        code = iobound(argv)
    if code:
        raise IoboundFailed(argv, int(code), err.getvalue())


def checked_out(out: Path) -> Path:
    """``--out`` refused (``SystemExit``) before any work when it names a folder."""
    if out.is_dir():
        raise SystemExit(f"error: --out {out} is a folder; name the JSON file")
    return out


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, round(time.perf_counter() - start, 2)


def measure(paths: list[Path], work: Path, uncapped: bool, budget: int) -> dict:
    from search.db import TuningDB
    from search.db.importer import import_files
    from search.replay_space import ReplaySpace
    from search.transfer import HistoryPrior, PriorOptions
    from search.transfer.session import usable_history
    from search.zero_shot import history_ranking
    from search.zero_shot_order import choose_order

    sources, target = paths[:-1], paths[-1]
    db_path = work / "history.db"
    out: dict = {}
    with TuningDB(db_path) as db:
        _, out["import_s"] = _timed(lambda: import_files(db, [str(p) for p in sources]))
        space = ReplaySpace(target)
        problem = space.cache.problem_size
        hist, out["read_s"] = _timed(lambda: usable_history(db, space, problem))
    out["history_records"] = len(hist)
    out["space_size"] = len(space)
    _, out["prior_s"] = _timed(lambda: HistoryPrior.fit(space, hist, problem, seed=0))
    if uncapped:
        o = PriorOptions(max_rows_per_source=10**9, max_rows=10**12)
        _, out["prior_uncapped_s"] = _timed(lambda: HistoryPrior.fit(space, hist, problem, o, 0))
    _, out["zero_shot_s"] = _timed(lambda: history_ranking(space, hist, seed=0))
    order, out["zero_shot_choice_s"] = _timed(lambda: choose_order(space, hist, problem))
    out["zero_shot_order"] = order
    result = work / "tune.json"
    argv = ["tune", "--measure", f"replay:{target}", "--history", str(db_path),
            "--budget", str(budget), "--json"]
    with open(result, "w") as f:
        _, out["tune_s"] = _timed(lambda: run_iobound(argv, f))
    report = json.loads(result.read_text())
    best = report["best"]["time_ms"] if report.get("best") else None
    out["tune_score"] = round(speed_score(report["recorded_optimum_ms"], best), 3)
    out["tune_budget"] = budget
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", type=int, default=4,
                    help=f"sources + 1 target (2-{MAX_DEVICES}; real GPUs' names for the first "
                         f"{len(DEVICES)}, made-up ones after)")
    ap.add_argument("--size", choices=list(SIZES), default="full",
                    help="full: 241,600 configurations; small: 41,248; tiny: a smoke test")
    ap.add_argument("--uncapped", action="store_true",
                    help="also fit the prior without the cap of rows per source (slow)")
    ap.add_argument("--budget", type=int, default=50)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if not 2 <= args.devices <= MAX_DEVICES:
        ap.error(f"--devices must be 2-{MAX_DEVICES}")
    if args.budget < 1:
        raise SystemExit(f"error: --budget must be >= 1, got {args.budget}")
    checked_out(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        paths, write_s = _timed(lambda: write_caches(Path(tmp), args.devices, args.size))
        got = measure(paths, Path(tmp), args.uncapped, args.budget)
    write_report({"devices": args.devices, "size": args.size, "write_s": write_s, **got},
                 args.out)
    return 0


def write_report(got: dict, out: Path) -> None:
    """Print ``got`` with the machine, one line each, and write it as JSON to ``out``."""
    got = {**got, "machine": platform.platform(), "python": platform.python_version()}
    for k, v in got.items():
        print(f"{k:22s} {v}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(got, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
