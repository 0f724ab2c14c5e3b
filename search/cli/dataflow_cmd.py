"""``iobound dataflow``: near I/O-optimal tiles of a layer, their exact I/O and the ratio to the bound.

Examples
--------
>>> from search.cli.main import main
>>> main(["dataflow", "--layer", "cin=16,hin=16,cout=32,kh=3,pad=1", "--fast-memory", "1024",
...       "--json"])  # doctest: +ELLIPSIS
{"layer": ...
0
"""

from __future__ import annotations

import argparse

from iobound import limits
from iobound.algorithms import DEFAULT_WINOGRAD_E
from iobound.errors import InvalidInputError
from search.cli.common import (
    add_algorithm_argument, add_json_argument, add_layer_argument, add_memory_arguments,
    add_winograd_e_argument, check_winograd_e, format_rows, int_option, nonempty, print_result, resolve_fast_memory,
    resolve_layer,
)

HELP = "near I/O-optimal dataflow tiles, their exact I/O and the ratio to the best lower bound"
DESCRIPTION = (
    "Choose the output tiles x*y*z (and, for direct convolution, the channel chunk alpha; "
    f"Winograd's e is not searched: --winograd-e's, default {DEFAULT_WINOGRAD_E}) and, for direct "
    "convolution, which operand stays on chip (output-, weight- or input-stationary) that "
    "minimise the exact global I/O within S/N_p words per block, or evaluate given "
    "--tiles. Tiles of any size are searched (border tiles clipped; the exact I/O counts "
    "them, and the kernels guard them); --dividing-tiles keeps the search domain's "
    "rectangles dividing the output. Where windows do not overlap (1x1 kernels, kernel = "
    "stride) tiles may also be runs of consecutive output positions. Reports the exact I/O (halos and borders included), the paper's estimate "
    "(Eq. 12/13 direct, Eq. 14 Winograd), the on-chip footprint, the optimality condition "
    "x*y = R*z (R = reuse_max; r^2 for Winograd) and the ratio to the best lower bound, "
    "evaluated at the S/N_p words one block may use + 2 (the DAG's two pebbles for an "
    "update the kernel makes in place)."
)


#: every dataflow order of every algorithm family, in registry order (spelt here so that
#: building the parser imports no dataflow module; tests/search/test_cli_dataflow.py holds
#: it equal to the registry's)
_ORDERS = ("output", "weight", "input", "output-runs", "weight-runs", "input-runs", "paper", "accumulate")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``iobound dataflow``'s options to ``parser`` (:func:`search.cli.main.build_parser`).

    Run by the README's `iobound dataflow` examples (tests/test_readme_examples.py).
    """
    add_layer_argument(parser)
    add_memory_arguments(parser)
    parser.add_argument("--processors", type=int_option("--processors", limits.PROCESSORS), default=1, metavar="N",
                        help="N_p blocks sharing S; each may use S/N_p words (default 1)")
    add_algorithm_argument(parser)
    add_winograd_e_argument(parser)
    parser.add_argument("--tiles", default=None, metavar="x,y,z[,alpha]", type=nonempty("tile list"),
                        help="evaluate these tiles instead of searching (Winograd: x,y,z, e from "
                             "--winograd-e; with a -runs --order: m,z, runs of m consecutive "
                             "output positions times z channels)")
    parser.add_argument("--order", choices=_ORDERS, default=None,
                        help="direct: which operand a block keeps on chip (output, weight, input; "
                             "the -runs forms tile runs of consecutive output positions, for "
                             "windows that do not overlap); winograd: the paper's two arrays per "
                             "tile or one accumulator array (default: the least exact I/O when "
                             "tiles are searched; output or paper with --tiles)")
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument("--any-tiles", action="store_true",
                       help="search tiles of any size, border tiles clipped (the default)")
    sizes.add_argument("--dividing-tiles", action="store_true",
                       help="search only rectangles dividing the output, as the search domain (Table 1) does")
    add_json_argument(parser)


def _parse_tiles(text: str, algorithm: str, e: int | None, order: str | None = None):
    from dataflow.direct import DirectTiling
    from dataflow.runs import RUN_LENGTH, RUN_ORDERS, RunTiling
    from dataflow.winograd import WinogradTiling

    parts = [p.strip() for p in text.split(",")]
    runs = algorithm == "direct" and order in RUN_ORDERS
    if not all(p.isascii() and p.isdigit() for p in parts):
        what = "m,z" if runs else "x,y,z[,alpha]"
        raise InvalidInputError(f"--tiles {text[:40]!r}: give positive integers {what}")
    if runs:   # m consecutive output positions times z channels (dataflow.runs)
        if len(parts) != 2:
            raise InvalidInputError(f"--tiles {text[:40]!r}: --order {order} needs run tiles m,z "
                                    "(m consecutive output positions, z output channels)")
        return RunTiling(limits.parse_int("--tiles m", parts[0], RUN_LENGTH),
                         limits.parse_int("--tiles z", parts[1], limits.TILE))
    vals = [limits.parse_int("--tiles", p, limits.TILE) for p in parts]
    if algorithm == "direct":
        if len(vals) not in (3, 4):
            raise InvalidInputError(f"--tiles {text[:40]!r}: direct needs x,y,z or x,y,z,alpha "
                                    f"(or m,z with --order {'/'.join(RUN_ORDERS)})")
        return DirectTiling(*vals)
    if len(vals) != 3:
        raise InvalidInputError(f"--tiles {text[:40]!r}: winograd needs x,y,z (set e with --winograd-e)")
    return WinogradTiling(DEFAULT_WINOGRAD_E if e is None else e, *vals)


def _order_text(rep) -> str:
    if rep.algorithm != "direct":
        return f"{rep.order} (Winograd footprint model)"
    if rep.order.endswith("-runs"):
        return (f"{rep.order.removesuffix('-runs')}-stationary, runs of {rep.tiling.m} consecutive "
                "output positions (windows do not overlap)")
    return f"{rep.order}-stationary"


def _size(v: float) -> str:
    """A continuous tile size: whole numbers (a cap) as integers, else two decimals."""
    return f"{v:.0f}" if abs(v - round(v)) < 1e-9 else f"{v:.2f}"


def _continuous_text(rep) -> str:
    """The halo-free optimum and what fixes it; ``x*y = R*z`` only where it holds."""
    c = rep.continuous
    xy = f"x=y={_size(c.x)}" if c.x == c.y else f"x={_size(c.x)}, y={_size(c.y)}"
    c_out = "c_out/groups" if rep.layer.groups > 1 else "c_out"
    why = {"memory": f": x*y = {c.reuse:g}*z",
           "c_out": f", z capped at {c_out}:",
           "spatial": ", x*y capped at h_out*w_out:",
           "layer": ", the whole layer fits:",
           "one channel": ", z held at 1 channel:",
           "one position": ", x*y held at 1 output position:",
           "smallest tile": ", not even one output of one channel fits S in this model:"}[c.bound_by]
    sep = "," if c.bound_by == "memory" else ""
    return f"{xy}, z={_size(c.z)} (SymPy, halo-free{why}{sep} I/O {c.io:,.0f} words)"


def _table(rep) -> str:
    from dataflow.families import dataflow_family

    d = rep.to_dict()
    t, fp, io, cond = d["tiles"], d["footprint"], d["io_exact_parts"], d["optimality_condition"]
    tiles = " ".join(f"{k}={v}" for k, v in t.items())
    closed = dataflow_family(rep.algorithm).closed_form_name
    rows = [
        ("layer", f"{rep.layer.name or 'custom'}: {rep.layer.short()}"),
        ("algorithm", rep.algorithm),
        ("fast memory", f"{rep.fast_memory_words} words, {rep.processors} processor(s): "
                        f"{rep.block_memory_words} words per block"),
        (f"tiles ({rep.tiles_source})", tiles),
        ("order", _order_text(rep)),
        ("continuous optimum", _continuous_text(rep)),
        ("footprint", f"{fp['total']} words (shared {fp['shared_words']}, registers {fp['register_words']})"),
        ("I/O exact", f"{io['total']:,} words (inputs {io['input_loads']:,}, weights "
                      f"{io['weight_loads']:,}, outputs {io['output_stores']:,})"),
        ("I/O paper approx", f"{rep.io_paper_approx:,.0f} words ({d['io_paper_approx_equation']})"),
        ("paper closed form", f"{rep.io_paper_closed_form:,.0f} words ({closed}, S/N_p words)"),
        ("lower bound", f"{rep.lower_bound:,.0f} words ({rep.bound_method}, S = "
                        f"{d['lower_bound_fast_memory_words']} words: a block's + 2)"),
        ("ratio to bound", f"{rep.ratio_to_bound:.3f}" if d["ratio_to_bound"] is not None
                           else "undefined (the bound is 0)"),
        ("optimality x*y=R*z", f"x*y={cond['xy']:g}, R*z={cond['rz']:g} (R={cond['reuse']:g}), "
                               f"gap {cond['relative_gap']:+.3f}: "
                               f"{'satisfied' if cond['satisfied'] else 'not satisfied'} "
                               f"(tol {cond['tolerance']:g}); vs the dataflow's own "
                               f"R_df={cond['dataflow_reuse']:g}: gap {cond['dataflow_gap']:+.3f}"),
    ]
    if d["padding_only_outputs"]:
        rows.append(("note", f"{d['padding_only_outputs']:,} outputs see only padding: constants, "
                             f"stored by the dataflow, not vertices of the DAG the bound is for"))
    return format_rows(rows)


def run(args: argparse.Namespace) -> int:
    """Run ``iobound dataflow`` with the parsed ``args``; the exit code (bad input raises,
    and :func:`search.cli.main.main` makes it one line and exit 2).

    Run by the README's `iobound dataflow` examples (tests/test_readme_examples.py).
    """
    from dataflow.evaluate import evaluate_dataflow

    layer = resolve_layer(args)
    s = resolve_fast_memory(args)
    if args.winograd_e is not None and args.algorithm != "winograd":
        raise InvalidInputError("--winograd-e is only meaningful with --algorithm winograd")
    check_winograd_e(args.winograd_e)
    if args.tiles and (args.any_tiles or args.dividing_tiles):
        raise InvalidInputError("--any-tiles/--dividing-tiles search tiles; they cannot be combined with --tiles")
    tiling = _parse_tiles(args.tiles, args.algorithm, args.winograd_e, args.order) if args.tiles else None
    rep = evaluate_dataflow(layer, s, algorithm=args.algorithm, processors=args.processors,
                            e=args.winograd_e, tiling=tiling, divisors=args.dividing_tiles,
                            order=args.order)
    print_result(args, rep.to_dict(), lambda: _table(rep))
    return 0
