"""The network report: a table and PNG plots of per-layer selections, optionally one HTML page.

From a list of :class:`~search.selection.select.LayerSelection` (one network on one
device) :func:`write_report` writes into a directory:

- ``table.md``: per layer the algorithm chosen, its time, the roofline floor's time
  (the larger of the I/O floor and the compute floor), the achieved I/O (exact dataflow
  words), the best lower bound and both gaps, the on-chip words of one block
  (``S_words``), the S the bound is taken at (``bound_S_words``: a block's + 2) and
  whether the time is an analytic estimate (``estimate``: yes or no; a report may mix
  measurements from a tuning history with estimates);
- ``selection.json``: the same numbers as ``iobound select --json``;
- ``io.png``: achieved I/O against the best bound per layer (log scale), bars coloured
  by the algorithm chosen, and the gap;
- ``time.png``: time against the roofline floor per layer, and the gap;
- ``report.html`` (``html=True``): one self-contained page, the table and both plots
  inlined as base64 PNG.

matplotlib (the ``report`` extra) is imported only when plotting, with the Agg backend.
Every file is checked first (:func:`report_paths`, :func:`search.outputs.check_output_file`)
and made whole in memory before any is written, each with
:func:`search.outputs.write_atomic`: a refused or failed report leaves the folder as it was
(up to the files written before a failure of the disk itself).

Examples
--------
>>> rows = table_rows([])
>>> rows[0][:4]
('layer', 'algorithm', 'time_ms', 'time_floor_ms')
"""

from __future__ import annotations

import base64
import html
import json
import tempfile
from pathlib import Path
from typing import Sequence

from iobound.errors import InvalidInputError
from search.outputs import check_not_tuning_data, check_output_file, json_safe, write_atomic

__all__ = ["TABLE_HEAD", "table_rows", "markdown_table", "plot_io", "plot_time", "report_paths",
           "check_report_paths", "write_report"]

TABLE_HEAD = ("layer", "algorithm", "time_ms", "time_floor_ms", "time_gap", "io_words",
              "lower_bound", "io_gap", "bound_method", "S_words", "bound_S_words", "estimate")
_COLOURS = {"direct": "#4c72b0", "winograd-e2": "#dd8452", "winograd-e3": "#55a868",
            "winograd-e4": "#c44e52"}
#: the largest value a plot draws (see :func:`_bars`)
_PLOT_MAX = 1e200


def table_rows(sels: Sequence) -> list[tuple[str, ...]]:
    """The header and one row of strings per selection (numbers as ``repr``-exact text).

    >>> from iobound.layer import ConvLayer
    >>> from search.selection.dataset import DIRECT, Example
    >>> from search.selection.select import selection_from_example
    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="pw")
    >>> cfg = {"x": 1, "y": 3, "z": 2, "alpha": 4, "tx": 1, "ty": 1, "tz": 1}
    >>> sel = selection_from_example(Example(pw, "v100", {DIRECT: 0.5}, {DIRECT: cfg}, False))
    >>> head, row = table_rows([sel])
    >>> [row[head.index(c)] for c in ("layer", "io_words", "lower_bound", "io_gap", "estimate")]
    ['pw', '624', '304.0', '2.053', 'no']
    """
    rows = [TABLE_HEAD]
    for s in sels:
        rows.append((s.layer.name or s.layer.short(), s.choice.label, repr(s.time_ms),
                     repr(s.time_floor_ms), f"{s.time_gap:.3f}", str(s.io_words),
                     repr(s.lower_bound), "-" if s.io_gap is None else f"{s.io_gap:.3f}", s.bound_method,
                     str(s.fast_memory_words), str(s.lower_bound_fast_memory_words),
                     "yes" if s.estimate else "no"))
    return rows


def markdown_table(sels: Sequence) -> str:
    """:func:`table_rows` as a Markdown table.

    >>> lines = markdown_table([]).splitlines()  # the header; a row per selection follows
    >>> lines[0].startswith("| layer | algorithm | time_ms |"), lines[1].count("---|"), len(lines)
    (True, 12, 2)
    """
    rows = table_rows(sels)
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def _axes_pair(title: str, n: int):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(8.0, 0.28 * n + 2), 7.5), sharex=True,
                                      gridspec_kw={"height_ratios": [2.2, 1]})
    fig.suptitle(title)
    return plt, fig, top, bottom


def _bars(sels, achieved, bound, names, ylabel, gap_label, title, path) -> None:
    import numpy as np
    from matplotlib.patches import Patch

    n = len(sels)
    plt, fig, top, bottom = _axes_pair(title, n)
    x = np.arange(n)
    colours = [_COLOURS[s.choice.label] for s in sels]
    # the exact numbers are the table's; drawn, each is at most _PLOT_MAX (matplotlib's
    # log-scale ticks overflow near the largest float: a recorded time of 1e305 ms)
    drawn_a = np.minimum(np.asarray(achieved, float), _PLOT_MAX)
    drawn_b = np.minimum(np.asarray(bound, float), _PLOT_MAX)
    top.bar(x, drawn_a, color=colours, width=0.8, label=names[0])
    top.scatter(x, drawn_b, marker="_", s=220, color="black", zorder=3, label=names[1])
    top.set_yscale("log")
    top.set_ylim(top=max(drawn_a.max(), drawn_b.max()) * 3)  # room for the legend
    top.set_ylabel(ylabel)
    handles = [Patch(color=_COLOURS[k], label=f"{names[0]}: {k}")
               for k in _COLOURS if any(s.choice.label == k for s in sels)]
    handles.append(top.scatter([], [], marker="_", s=220, color="black", label=names[1]))
    top.legend(handles=handles, fontsize=8, loc="upper right")
    top.grid(axis="y", alpha=0.3)
    num, den = np.asarray(achieved, float), np.asarray(bound, float)
    with np.errstate(over="ignore"):  # a ratio past the largest float is drawn at _PLOT_MAX
        gaps = np.divide(num, den, out=np.full(n, np.nan), where=den > 0)  # no ratio to a 0
    gaps = np.minimum(gaps, _PLOT_MAX)
    bottom.bar(x, gaps, color=colours, width=0.8)
    bottom.axhline(1.0, color="black", lw=0.8)
    bottom.set_ylabel(gap_label)
    bottom.grid(axis="y", alpha=0.3)
    bottom.set_xticks(x)
    bottom.set_xticklabels([(s.layer.name or s.layer.short()).split(".")[-1] for s in sels],
                           rotation=90, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_io(sels: Sequence, path, title: str) -> None:
    """``io.png``: achieved I/O (words) and the best lower bound per layer, and their ratio."""
    _bars(sels, [s.io_words for s in sels], [s.lower_bound for s in sels],
          ("achieved I/O", "best lower bound"), "global I/O (words)", "I/O / bound", title, path)


def plot_time(sels: Sequence, path, title: str) -> None:
    """``time.png``: time per layer and the roofline floor, and their ratio."""
    est = _estimates(sels)
    est = {"all": " (analytic estimate)", "some": " (analytic estimates and measurements)"}.get(est, "")
    _bars(sels, [s.time_ms for s in sels], [s.time_floor_ms for s in sels],
          (f"time{est}", "floor: max(bound / DRAM bandwidth, multiplies / FP32 peak)"),
          "time (ms)", "time / floor",
          title, path)


def _estimates(sels: Sequence) -> str:
    """Which times are estimates: "all", "some" or "none"."""
    flags = [bool(s.estimate) for s in sels]
    return "all" if all(flags) else "some" if any(flags) else "none"


def _html(title: str, sels: Sequence, pngs: dict[str, bytes]) -> str:
    rows = table_rows(sels)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
                   for r in rows[1:])
    imgs = "".join(
        f'<h2>{html.escape(name)}</h2><img alt="{html.escape(name)}" src="data:image/png;base64,'
        f'{base64.b64encode(data).decode()}">' for name, data in pngs.items())
    note = {"all": "<p>Times are analytic estimates of the <code>model</code> measurer, not "
                   "measurements.</p>",
            "some": "<p>Times with estimate <code>yes</code> are analytic estimates of the "
                    "<code>model</code> measurer, not measurements; the others are "
                    "measurements.</p>"}.get(_estimates(sels), "")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            "</title><style>body{font-family:sans-serif;margin:2em}table{border-collapse:"
            "collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:"
            "right}img{max-width:100%}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>{note}<table><tr>{head}</tr>{body}</table>{imgs}"
            "</body></html>")


def report_paths(out_dir, html_page: bool = False) -> dict[str, Path]:
    """name -> path of every file :func:`write_report` writes into ``out_dir``.

    >>> sorted(p.name for p in report_paths("r", html_page=True).values())
    ['io.png', 'report.html', 'selection.json', 'table.md', 'time.png']
    """
    out = Path(out_dir)
    files = {"table": out / "table.md", "json": out / "selection.json",
             "io": out / "io.png", "time": out / "time.png"}
    if html_page:
        files["html"] = out / "report.html"
    return files


def check_report_paths(out_dir, html_page: bool = False) -> dict[str, Path]:
    """:func:`report_paths`, each refused (:class:`~iobound.errors.InvalidInputError`)
    when it cannot be written: a folder of that name, an unwritable file... A folder
    still to be created holds nothing in the way; ``out_dir`` itself (or the first of its
    parents that exists) a file is refused too.

    >>> import tempfile
    >>> f = tempfile.mkstemp()[1]
    >>> check_report_paths(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: out_dir '...' is a file; give a folder
    """
    from ..option_checks import check_flag, check_path
    out = Path(check_path("out_dir", out_dir))
    check_flag("html_page", html_page)
    # the folder, or the first of its parents that exists (the others are made): a file
    # there is refused here, not mkdir's FileExistsError after the plots are drawn
    existing = next((p for p in (out, *out.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        where = "" if existing == out else f" (its parent {str(existing)[:80]!r})"
        raise InvalidInputError(f"out_dir {str(out)[:80]!r}{where} is a file; give a folder")
    files = report_paths(out_dir, html_page)
    if out.is_dir():
        for path in files.values():
            if path.is_dir():  # check_output_file's "give a file name" fits no folder option
                raise InvalidInputError(f"cannot write {path.name} in --out-dir "
                                        f"{str(out_dir)[:80]!r}: {path.name} there is a folder")
            check_output_file("--out-dir", path)
            check_not_tuning_data(f"--out-dir's {path.name}", path)
    return files


def _render(plot, sels: Sequence, title: str) -> bytes:
    """The PNG ``plot`` draws, as bytes (drawn in a scratch folder, not in the output)."""
    with tempfile.TemporaryDirectory(prefix="iobound-report-") as tmp:
        path = Path(tmp) / "plot.png"
        plot(sels, path, title)
        return path.read_bytes()


def write_report(sels: Sequence, out_dir, title: str, html_page: bool = False) -> dict[str, Path]:
    """Write the report files (see the module doc); returns name -> path.

    Every path is checked and every file made before the first is written, each
    atomically: a path that cannot be written (a folder named ``io.png``, say) is an
    :class:`~iobound.errors.InvalidInputError` with nothing written.

    >>> import tempfile
    >>> write_report([], tempfile.mkdtemp(), "empty")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the report needs at least one layer
    """
    from ..option_checks import check_type
    if not sels:
        raise InvalidInputError("the report needs at least one layer")
    check_type("title", title, str)
    files = check_report_paths(out_dir, html_page)
    data = {"table": f"# {title}\n\n{markdown_table(sels)}\n".encode(),
            "json": (json.dumps(json_safe({"title": title,
                                            "layers": [s.to_dict() for s in sels]}),
                                indent=1, allow_nan=False) + "\n").encode(),
            "io": _render(plot_io, sels, f"{title}: achieved I/O vs the best lower bound"),
            "time": _render(plot_time, sels, f"{title}: time vs the roofline floor")}
    if html_page:
        data["html"] = _html(title, sels, {"I/O": data["io"], "time": data["time"]}).encode()
    for name, path in files.items():
        try:
            Path(out_dir).mkdir(parents=True, exist_ok=True)
            write_atomic(path, data[name])
        except OSError as exc:  # a full disk: say which file (the error named none)
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    return files
