"""``iobound report``: the per-layer selection of a network as a table, PNG plots and HTML.

Examples
--------
>>> from search.cli.main import main
>>> main(["report", "--network", "alexnet", "--out-dir", "/tmp/r"])  # doctest: +SKIP
wrote /tmp/r/table.md
...
0
"""

from __future__ import annotations

import argparse

from iobound.errors import InvalidInputError

from .common import DEFAULT_DEVICE, LAYER_HELP, add_device_argument, check_distinct_files, check_output_dir
from .select_cmd import add_history_argument, run_selection

HELP = "write a network's per-layer selection as a table and PNG plots (and HTML)"
DESCRIPTION = (
    "Select per layer as `iobound select` does, then write table.md, selection.json, "
    "io.png (achieved I/O vs the best lower bound) and time.png (time vs the roofline "
    "floor: the larger of the bound's traffic at DRAM bandwidth and the algorithm's "
    "multiplies at FP32 peak) to --out-dir; --html adds report.html, one "
    "self-contained page. Needs matplotlib (pip install 'iobound[report]')."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``iobound report``'s options to ``parser`` (:func:`search.cli.main.build_parser`).

    Run by the README's `iobound report` examples (tests/test_readme_examples.py).
    """
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--network", metavar="NAME", help="a network preset (resnet50, vgg16, ...)")
    what.add_argument("--layer", metavar="SPEC", help=LAYER_HELP)
    add_device_argument(parser, DEFAULT_DEVICE)
    parser.add_argument("--measure", default="model", metavar="KIND",
                        help="measurer of the candidates: model, the only one taken (the "
                             "analytic estimate, as select's)")
    add_history_argument(parser)
    parser.add_argument("--out-dir", default="iobound-report", metavar="DIR",
                        help="directory for the files (default ./iobound-report)")
    parser.add_argument("--html", action="store_true",
                        help="also write report.html with the plots inlined")


def run(args: argparse.Namespace) -> int:
    """Run ``iobound report`` with the parsed ``args``; the exit code (bad input raises,
    and :func:`search.cli.main.main` makes it one line and exit 2).

    Run by the README's `iobound report` examples (tests/test_readme_examples.py).
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InvalidInputError("iobound report needs matplotlib: pip install 'iobound[report]'") from None
    from search.selection.report import check_report_paths, write_report

    args.json = False
    # every path before the selection, not after it: the folder, each file in it, and none
    # of them the --history database the selection reads (a write would replace it)
    check_output_dir("--out-dir", args.out_dir)
    files = check_report_paths(args.out_dir, html_page=args.html)
    check_distinct_files([("--history", args.history),
                          *((f"--out-dir's {p.name}", p) for p in files.values())])
    sels = run_selection(args)
    title = f"{args.network or sels[0].layer.name or sels[0].layer.short()} on {sels[0].device}"
    try:
        written = write_report(sels, args.out_dir, title, html_page=args.html)
    except OSError as exc:  # the paths were checked: a full disk, not bad input (exit 1)
        from iobound.errors import OutputWriteError
        # a plot drawn in a temporary folder fails with no file name
        where = (f"the report file {exc.filename!r}" if exc.filename
                 else f"the report into {str(args.out_dir)!r}")
        raise OutputWriteError(f"cannot write {where}: {exc.strerror or exc}") from None
    for path in written.values():
        print(f"wrote {path}")
    return 0
