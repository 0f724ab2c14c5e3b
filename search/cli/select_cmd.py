"""``iobound select``: per layer, direct or Winograd F(e), with the evidence.

Examples
--------
>>> from search.cli.main import main
>>> main(["select", "--layer", "cin=4,hin=8,cout=8,kh=3,pad=1", "--json"])  # doctest: +SKIP
{"device": "V100-SXM2", "measure": "model", "layers": [{"layer": ...
0
"""

from __future__ import annotations

import argparse

from iobound.errors import InvalidInputError

from .common import (DEFAULT_DEVICE, ESTIMATE_LEGEND, LAYER_HELP, add_device_argument, add_json_argument,
                     aligned_table, ms_text, nonempty, print_result)

HELP = "choose direct or Winograd F(e) per layer, with each candidate's time, I/O and bound"
DESCRIPTION = (
    "For each layer, every candidate (direct; Winograd e = 2, 3, 4 on ungrouped layers of "
    "stride 1 and dilation 1 with a square kernel of 2x2 or more) is evaluated over its whole Table 1 pruned space "
    "with the measurer, and the fastest wins. With --measure model (the only measurer "
    "cheap enough to evaluate a whole space) the times are analytic ESTIMATES: marked * "
    "and \"estimate\": true. The chosen kernel's exact dataflow I/O is compared with the "
    "best lower bound at S = the on-chip words one block holds + 2 (blocks share nothing "
    "on chip; JSON: fast_memory_words and lower_bound_fast_memory_words). With --history DB, "
    "layers the "
    "database holds are selected from their tuned results instead (measured ones preferred "
    "to estimates), each layer's \"source\" says which."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``iobound select``'s options to ``parser`` (:func:`search.cli.main.build_parser`).

    Run by the README's `iobound select` examples (tests/test_readme_examples.py).
    """
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--layer", metavar="SPEC", help=LAYER_HELP)
    what.add_argument("--network", metavar="NAME", help="every layer of a network preset")
    add_device_argument(parser, DEFAULT_DEVICE)
    parser.add_argument("--measure", default="model", metavar="KIND",
                        help="measurer of the candidates: model, the only one taken (the "
                             "analytic estimate; cuda and emulate would need a tuner run per "
                             "candidate: tune --algorithm all measures the choice)")
    add_history_argument(parser)
    add_json_argument(parser)


def add_history_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--history DB`` (read with :func:`history_records`).

    >>> p = argparse.ArgumentParser()
    >>> add_history_argument(p)
    >>> p.parse_args([]).history, p.parse_args(["--history", "tuning.db"]).history
    (None, 'tuning.db')
    """
    parser.add_argument("--history", metavar="DB", type=nonempty("path"),
                        help="tuning history database (iobound tune --history): layers it holds "
                             "are selected from their tuned results, the others evaluated with "
                             "--measure (the analytic model's estimates)")


def history_records(args: argparse.Namespace, device_name: str) -> list:
    """The label records ``--history`` holds for ``device_name`` (none without the flag).

    >>> import tempfile
    >>> history_records(argparse.Namespace(history=None), "V100-SXM2")
    []
    >>> history_records(argparse.Namespace(history=tempfile.mkdtemp()), "V100-SXM2")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --history '...' is a folder; give a tuning database file ...
    """
    if not getattr(args, "history", None):
        return []
    import sqlite3

    from search.db.opening import open_database
    from search.history import History
    from search.selection.history_source import records_from_history

    from search.path_kind import path_kind
    if path_kind(args.history, "--history") == "dir":
        raise InvalidInputError(f"--history {args.history[:80]!r} is a folder; give a tuning "
                                "database file (iobound tune --history DB creates one)")
    db = open_database(args.history, "--history", readonly=True)  # reading changes nothing
    try:
        with History(args.history, db=db) as h:
            return list(records_from_history(h, device=device_name))
    except sqlite3.Error as exc:  # damage found while reading
        raise InvalidInputError(f"--history {args.history}: cannot read the database: "
                                f"{' '.join(str(exc).split())}") from None


def resolve_layers(args: argparse.Namespace) -> list:
    """The layers of ``--layer`` or ``--network``.

    >>> [layer.name for layer in resolve_layers(argparse.Namespace(network="alexnet", layer=None))]
    ['alexnet.conv1', 'alexnet.conv2', 'alexnet.conv3', 'alexnet.conv4', 'alexnet.conv5']
    """
    if args.network is not None:
        from iobound.networks import network_layers
        return network_layers(args.network)
    from .common import resolve_layer
    return [resolve_layer(args)]


def run_selection(args: argparse.Namespace) -> list:
    """Select for the layers of ``args`` (progress on stderr for more than one layer).

    >>> args = argparse.Namespace(layer="cin=4,hin=8,cout=8,kh=1", network=None, device="v100",
    ...                           measure="model", history=None, json=False)
    >>> [(s.choice.label, s.estimate, s.io_gap) for s in run_selection(args)]
    [('direct', True, 1.0)]
    >>> run_selection(argparse.Namespace(**{**vars(args), "measure": "cuda"}))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --measure must be one of model, got 'cuda' (cuda and ...
    """
    from iobound.devices import get_device
    from search.selection.labels import ORACLE_MEASURES
    from search.selection.select import select_layers

    if args.measure not in ORACLE_MEASURES:
        raise InvalidInputError(f"--measure must be one of {', '.join(ORACLE_MEASURES)}, got "
                         f"{args.measure!r} (cuda and emulate need a tuner run per candidate)")
    layers = resolve_layers(args)
    device = get_device(args.device)
    from search.progress import ProgressBar
    # drawn on a terminal only, as tune's bar
    bar = ProgressBar(len(layers), unit="") if len(layers) > 1 and not args.json else None

    def progress(i, layer):
        bar.label = f"select {layer.name}"
        bar(i)
    known = history_records(args, device.name)
    sels = select_layers(layers, device, args.measure, None if bar is None else progress,
                         known=known)
    if bar is not None:
        bar.label = "select"
        bar(len(layers))
        bar.close()
    return sels


def _ms(t, estimate: bool) -> str:
    return "none" if t is None else ms_text(t, estimate)


def format_table(sels: list) -> str:
    """The human table of :func:`run_selection`'s result.

    >>> args = argparse.Namespace(layer="cin=4,hin=8,cout=8,kh=1", network=None, device="v100",
    ...                           measure="model", history=None, json=False)
    >>> table = format_table(run_selection(args)).splitlines()
    >>> table[1].split()[-6:]
    ['n/a', 'n/a', 'n/a', '800', '800', '1.00']
    >>> for line in table[2:]:
    ...     print(line)
    * analytic estimate, not a measurement
    n/a: not a candidate for this layer
    """
    from search.selection.dataset import CLASSES
    labels = [c.label for c in CLASSES]   # direct, winograd-e2, ...: one column each
    head = ("layer", "choice", "time_ms", *(k.replace("winograd", "wino") for k in labels),
            "io_words", "bound", "io_gap")
    rows = [head]
    for s in sels:
        times = {c.candidate.label: c.time_ms for c in s.candidates}
        rows.append((s.layer.name or s.layer.short(), s.choice.label, _ms(s.time_ms, s.estimate),
                     *(_ms(times.get(k), s.estimate) if k in times else
                       "untuned" if k in s.untuned else "n/a" for k in labels),
                     str(s.io_words), f"{s.lower_bound:.4g}",
                     "-" if s.io_gap is None else f"{s.io_gap:.2f}"))
    lines = aligned_table(rows).split("\n")
    cells = {cell for row in rows[1:] for cell in row[3:3 + len(labels)]}
    if any(s.estimate for s in sels):
        lines.append(ESTIMATE_LEGEND)
    if "n/a" in cells:
        lines.append("n/a: not a candidate for this layer")
    if "none" in cells:
        lines.append("none: a candidate with no valid configuration on this device "
                     "(its pruned space is empty)")
    if any(s.io_gap is None for s in sels):
        lines.append("io_gap -: a bound of 0 (every output in the padding: no word must move)")
    if any(s.untuned for s in sels):
        lines.append("untuned: a candidate the history holds no record of, or only estimates "
                     "of where the layer has measurements (not evaluated; tune it with "
                     "--algorithm to compare)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``iobound select`` with the parsed ``args``; the exit code (bad input raises,
    and :func:`search.cli.main.main` makes it one line and exit 2).

    Run by the README's `iobound select` examples (tests/test_readme_examples.py).
    """
    sels = run_selection(args)
    data = {"device": sels[0].device if sels else args.device, "measure": args.measure,
            "layers": [s.to_dict() for s in sels]}
    print_result(args, data, lambda: format_table(sels))
    return 0
