"""``iobound bound``: I/O lower bounds of one convolution layer.

Examples
--------
>>> from search.cli.main import main
>>> main(["bound", "--layer", "cin=2,hin=6,cout=2,kh=3", "--fast-memory", "16", "--json"])  # doctest: +ELLIPSIS
{"layer": {...}, "fast_memory_words": 16, "results": [...]}
0
"""

from __future__ import annotations

import argparse
import json

from iobound.errors import InvalidInputError
from iobound.algorithms import ALGORITHMS, DEFAULT_WINOGRAD_E, get_algorithm
from search.cli.common import (
    add_algorithm_argument, add_json_argument, add_layer_argument, add_memory_arguments,
    add_winograd_e_argument, check_winograd_e, json_safe, resolve_fast_memory, resolve_layer,
)

HELP = "I/O lower bounds (Hong-Kung composite, X-partition, chain X-partition, compulsory) of a layer"
DESCRIPTION = (
    "Red-blue pebble I/O lower bounds of one convolution layer for a fast memory of S "
    "words, with the best (largest valid) one. Methods: hong_kung_composite (the paper's "
    "Thm 4.6/4.9, 4.12), x_partition (sqrt(2) MACs/sqrt(R S) - 4S), x_partition_chain "
    "(direct: the larger of 2 W/sqrt(S) - O/2 - 2S and 2 W/sqrt(S) - O/8 - 17S/8 for chain "
    "summation, W the products weighted by "
    "per-class reuse; Winograd: 2 MACs/(kappa sqrt(S)) - N + O - 2S, N the channel-sum "
    "chains, kappa = 1 for F(2x2, 3x3) on large images) and compulsory. I/O counts loads plus stores of words. Derivations "
    "and errata: proofs/README.md."
)

BOUND_METHODS = ("hong_kung_composite", "x_partition", "x_partition_chain", "compulsory")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``iobound bound``'s options to ``parser`` (:func:`search.cli.main.build_parser`).

    Run by the README's `iobound bound` examples (tests/test_readme_examples.py).
    """
    add_layer_argument(parser)
    add_memory_arguments(parser)
    add_algorithm_argument(
        parser, extra=("all",),
        help="direct convolution (default), Winograd F(e x e, r x r), or all that apply "
             "(Winograd is left out, with a note, where it does not apply; --json lists "
             "it in \"omitted\" with the reason)")
    add_winograd_e_argument(parser)
    add_json_argument(parser)


def _result(rep) -> dict:
    bounds = {m: rep.bounds[m].value for m in BOUND_METHODS if m in rep.bounds}
    return {
        "algorithm": rep.algorithm, "e": rep.e, "bounds": bounds,
        "leading_terms": dict(rep.leading_terms or {}),
        "best": rep.best, "best_method": rep.best_method,
    }


def _fmt(x) -> str:
    return "-" if x is None else f"{x:,.0f}"


def run(args: argparse.Namespace) -> int:
    """Run ``iobound bound`` with the parsed ``args``; the exit code (bad input raises,
    and :func:`search.cli.main.main` makes it one line and exit 2).

    Run by the README's `iobound bound` examples (tests/test_readme_examples.py).
    """
    from iobound.report import bound_report

    layer = resolve_layer(args)
    s = resolve_fast_memory(args)
    if args.winograd_e is not None and args.algorithm == "direct":
        raise InvalidInputError("--winograd-e is only meaningful with --algorithm winograd "
                                "or all")
    e = DEFAULT_WINOGRAD_E if args.winograd_e is None else args.winograd_e
    check_winograd_e(e)
    notes = []
    reports = []
    for alg in map(get_algorithm, ALGORITHMS if args.algorithm == "all" else (args.algorithm,)):
        if args.algorithm != "all":
            alg.check(layer)  # InvalidInputError naming why -> exit 2
        problem = alg.problem(layer)
        if problem is None and args.algorithm == "all" and alg.name == "winograd":
            from iobound.winograd_transforms import MAX_TILE_EDGE
            tile = e + layer.k_h - 1
            if tile > MAX_TILE_EDGE:
                problem = f"input tile e + r - 1 = {tile} is above {MAX_TILE_EDGE}"
        if problem is None:
            reports.append(bound_report(layer, s, alg, e if "e" in alg.tile_params else None))
        else:
            notes.append((alg.name, problem))
    if args.json:
        ld = layer.to_dict()
        ld.update(hout=layer.h_out, wout=layer.w_out)
        data = {"layer": ld, "fast_memory_words": s, "results": [_result(r) for r in reports]}
        if args.algorithm == "all":  # what it left out, and why (the text's notes)
            data["omitted"] = [{"algorithm": a, "reason": why} for a, why in notes]
        print(json.dumps(json_safe(data), allow_nan=False))
        return 0
    print(f"layer   {layer.name or '(custom)'}: {layer.short()}")
    print(f"S       {s} words ({args.fast_memory}, {args.dtype});  R_max = {layer.reuse_max}, "
          f"paper R = {layer.reuse_paper:g}")
    for rep in reports:
        title = get_algorithm(rep.algorithm).label(layer, rep.e)
        print(f"\n{title}")
        print(f"  {'method':<28}{'lower bound (words)':>22}{'leading term':>18}")
        for m in (m for m in BOUND_METHODS if m in rep.bounds):
            b = rep.bounds[m]
            mark = "  <- best" if m == rep.best_method else ""
            print(f"  {m:<28}{_fmt(b.value):>22}{_fmt(b.leading_term):>18}{mark}")
        for m, v in (rep.leading_terms or {}).items():
            if m not in rep.bounds:
                print(f"  {m + ' (reference)':<28}{'(not a bound)':>22}{_fmt(v):>18}")
        print(f"  best: {_fmt(rep.best)} words ({rep.best_method})")
    for name, why in notes:
        print(f"\nnote: {name} omitted: {why}")
    return 0
