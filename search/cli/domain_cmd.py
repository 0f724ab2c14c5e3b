"""``iobound domain``: unpruned and Table 1 pruned sizes of a layer's tile/thread domain.

Examples
--------
>>> from search.cli.main import main
>>> main(["domain", "--layer", "cin=4,hin=8,cout=64,kh=3", "--device", "v100",
...       "--json"])  # doctest: +ELLIPSIS
{"unpruned_size": 6270, "pruned_size": 4878, "ratio": 0.77...
0
"""

from __future__ import annotations

import argparse
import time

from iobound import limits
from iobound.algorithms import OFFERED_WINOGRAD_ES
from iobound.errors import InvalidInputError
from search.cli.common import (
    DEFAULT_DEVICE, add_algorithm_argument, add_device_argument, add_json_argument, add_layer_argument,
    format_rows, print_result, resolve_layer,
)

HELP = "unpruned and pruned sizes of the tile/thread search domain (paper's Table 1, CP-SAT)"
DESCRIPTION = (
    "Build the search domain of our direct or Winograd kernel for a layer on a device preset "
    "with OR-Tools CP-SAT and print its exact sizes. Unpruned: every knob combination with "
    "tiles dividing the output dims (x|w_out, y|h_out, z|c_out, alpha|c_in; Winograd x/e | "
    "ceil(w_out/e)), threads dividing the tiles, and the device's limits (static shared "
    "memory per block, threads per block, register words per thread, register file). "
    "Pruned: additionally the paper's Table 1 optimality constraints with S_b = "
    "min(S_sm/2, the static shared memory of one block) in fp32 words and R = reuse_max: "
    "shared memory <= S_sm/2, x*y*z <= S_b, z <= sqrt(S_b/R), "
    "x*y <= sqrt(S_b*R). The ratio is pruned/unpruned (the paper's Table 2 'ATE/TVM')."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``iobound domain``'s options to ``parser`` (:func:`search.cli.main.build_parser`).

    Run by the README's `iobound domain` examples (tests/test_readme_examples.py).
    """
    add_layer_argument(parser)
    add_device_argument(parser, DEFAULT_DEVICE, "whose limits bound the domain")
    add_algorithm_argument(parser)
    parser.add_argument("--winograd-e", default=None, metavar="E[,E...]",
                        help="Winograd output tile edges to offer, each >= 2 (F(1 x 1, r x r) "
                             "is direct convolution with transforms) and with e + r - 1 at most "
                             f"{limits.WINOGRAD_E.high} (default "
                             f"{','.join(map(str, OFFERED_WINOGRAD_ES))})")
    add_json_argument(parser)


def _parse_e(text: str | None, algorithm: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    if algorithm != "winograd":
        raise InvalidInputError("--winograd-e is only meaningful with --algorithm winograd")
    parts = [p.strip() for p in text.split(",")]
    if "" in parts:  # "2,,3", "3,": an item left out is a typo, not to be passed over
        raise InvalidInputError(f"--winograd-e {text[:40]!r}: an item is empty; give integers "
                                ">= 2, e.g. 2,4")
    if not all(p.isascii() and p.isdigit() for p in parts):
        raise InvalidInputError(f"--winograd-e {text[:40]!r}: give integers >= 2, e.g. 2,4")
    if any(len(p.lstrip("0")) <= 1 and int(p) < 2 for p in parts):  # before the limit's minimum, 1
        raise InvalidInputError(f"--winograd-e {text[:40]!r}: give integers >= 2, e.g. 2,4")
    es = sorted({limits.parse_int("--winograd-e", p, limits.WINOGRAD_E) for p in parts})
    limits.check_int("--winograd-e (number of values)", len(es), limits.WINOGRAD_E_COUNT)
    return tuple(es)


def _values_text(vals: list[int]) -> str:
    shown = ", ".join(str(v) for v in vals) if len(vals) <= 12 else (
        ", ".join(str(v) for v in vals[:5]) + ", ..., " + ", ".join(str(v) for v in vals[-3:]))
    return f"{vals[0]}..{vals[-1]} ({len(vals)} values: {shown})"


def _text(d: dict) -> str:
    lay = d["layer"]
    rows = [
        ("layer", f"{lay['name'] or 'custom'}: {d['layer_short']}"),
        ("device", f"{d['device']} (S_b = min(S_sm/2, shared per block) = {d['S_b_words']} "
                   f"fp32 words; R = reuse_max = {d['reuse_R']})"),
        ("algorithm", d["algorithm"]),
        ("unpruned size", f"{d['unpruned_size']:,} configs (template + hardware limits; "
                          f"{d['tile_combinations']['unpruned']:,} tile combinations)"),
        ("pruned size", f"{d['pruned_size']:,} configs (+ Table 1: x*y*z <= S_b, z^2*R <= S_b, "
                        f"(x*y)^2 <= S_b*R, shared <= S_sm/2; "
                        f"{d['tile_combinations']['pruned']:,} tile combinations)"),
        ("ratio", f"{d['ratio']:.2%} (pruned / unpruned)"),
    ]
    lines = [format_rows(rows)]
    if d["pruned_size"]:
        lines.append("knobs (values taken in the pruned space):")
        lines += [f"  {p:<6} {_values_text(d['values'][p])}" for p in d["params"]]
    else:
        lines.append("knobs: none (the pruned space is empty)")
    lines.append(f"built in {d['build_seconds']:.2f} s (OR-Tools CP-SAT)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``iobound domain`` with the parsed ``args``; the exit code (bad input raises,
    and :func:`search.cli.main.main` makes it one line and exit 2).

    Run by the README's `iobound domain` examples (tests/test_readme_examples.py).
    """
    from iobound.devices import get_device
    from search.conv_space import ConvSpace

    layer = resolve_layer(args)
    device = get_device(args.device)
    es = _parse_e(args.winograd_e, args.algorithm)
    t0 = time.perf_counter()
    space = ConvSpace(layer, device, args.algorithm, winograd_e=es, empty_ok=True)
    if not space.unpruned_size:  # an empty pruned space is a size to report; no space is not
        raise InvalidInputError(space.empty_reason())
    elapsed = time.perf_counter() - t0
    desc = space.describe()
    d = {"unpruned_size": space.unpruned_size, "pruned_size": space.pruned_size,
         "ratio": space.ratio, **{k: v for k, v in desc.items() if k not in ("size", "kind")},
         "layer_short": layer.short(), "build_seconds": round(elapsed, 4)}
    if args.algorithm == "winograd":
        d["winograd_e"] = list(space.domain.values["e"])
    print_result(args, d, lambda: _text(d))
    return 0
