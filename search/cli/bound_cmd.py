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

from iobound.algorithms import ALGORITHMS, get_algorithm
from search.cli.common import (
    add_algorithm_argument, add_json_argument, add_layer_argument, add_memory_arguments,
    check_winograd_e, resolve_fast_memory, resolve_layer,
)

HELP = "I/O lower bounds (Hong-Kung composite, X-partition, compulsory) of a layer"
DESCRIPTION = (
    "Red-blue pebble I/O lower bounds of one convolution layer for a fast memory of S "
    "words: the paper's composite bound (Thm 4.6/4.9, 4.12), the X-partition bound "
    "(direct only) and compulsory I/O, with the best (largest valid) one. I/O counts "
    "loads plus stores of words. Derivations and errata: proofs/README.md."
)

BOUND_METHODS = ("hong_kung_composite", "x_partition", "compulsory")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_layer_argument(parser)
    add_memory_arguments(parser)
    add_algorithm_argument(
        parser, extra=("all",),
        help="direct convolution (default), Winograd F(e x e, r x r), or all that apply "
             "(Winograd is left out, with a note, where it does not apply)")
    parser.add_argument(
        "--winograd-e", type=int, default=2, metavar="E",
        help="Winograd output tile edge e of F(e x e, r x r) (default 2; the input tile "
             "e + r - 1 must be at most 32)")
    add_json_argument(parser)


def _result(rep) -> dict:
    bounds = {m: (rep.bounds[m].value if m in rep.bounds else None) for m in BOUND_METHODS}
    return {
        "algorithm": rep.algorithm, "e": rep.e, "bounds": bounds,
        "leading_terms": dict(rep.leading_terms or {}),
        "best": rep.best, "best_method": rep.best_method,
    }


def _fmt(x) -> str:
    return "-" if x is None else f"{x:,.0f}"


def run(args: argparse.Namespace) -> int:
    from iobound.report import bound_report

    layer = resolve_layer(args)
    s = resolve_fast_memory(args)
    check_winograd_e(args.winograd_e)
    notes = []
    reports = []
    for alg in map(get_algorithm, ALGORITHMS if args.algorithm == "all" else (args.algorithm,)):
        if args.algorithm != "all":
            alg.check(layer)  # InvalidInputError naming why -> exit 2
        problem = alg.problem(layer)
        if problem is None:
            reports.append(bound_report(layer, s, alg, args.winograd_e))
        else:
            notes.append(f"{alg.name} omitted: {problem}")
    if args.json:
        ld = layer.to_dict()
        ld.update(hout=layer.h_out, wout=layer.w_out)
        print(json.dumps({"layer": ld, "fast_memory_words": s,
                          "results": [_result(r) for r in reports]}))
        return 0
    print(f"layer   {layer.name or '(custom)'}: {layer.short()}")
    print(f"S       {s} words ({args.fast_memory}, {args.dtype});  R_max = {layer.reuse_max}, "
          f"paper R = {layer.reuse_paper:g}")
    for rep in reports:
        title = get_algorithm(rep.algorithm).label(layer, rep.e)
        print(f"\n{title}")
        print(f"  {'method':<28}{'lower bound (words)':>22}{'leading term':>18}")
        for m in BOUND_METHODS:
            b = rep.bounds.get(m)
            mark = "  <- best" if m == rep.best_method else ""
            print(f"  {m:<28}{_fmt(b.value if b else None):>22}"
                  f"{_fmt(b.leading_term if b else None):>18}{mark}")
        for m, v in (rep.leading_terms or {}).items():
            if m not in rep.bounds:
                print(f"  {m + ' (reference)':<28}{'(not a bound)':>22}{_fmt(v):>18}")
        print(f"  best: {_fmt(rep.best)} words ({rep.best_method})")
    for note in notes:
        print(f"\nnote: {note}")
    return 0
