"""The select table, the report files and plots: each column and series is the selection's own
number (``LayerSelection``'s fields and its documented ratios), estimate marks only on
estimates, HTML text escaped, and progress only where the CLI doc says."""

from __future__ import annotations

import json
import sys

import pytest

from search.cli.main import main
from search.cli.select_cmd import format_table
from search.selection import report
from search.selection.dataset import Candidate, Example, examples_from_records
from search.selection.select import selection_from_example

TINY = "cin=2,hin=6,cout=4,kh=3,pad=1"


@pytest.fixture(scope="module")
def sels(tiny_records):
    """The tiny layer's selection as an estimate, and as a measurement under an odd name."""
    ex = examples_from_records(tiny_records)[0]
    measured = Example(ex.layer.replace(name="a<b>&c"), ex.device, ex.times, ex.configs,
                       estimate=False)
    return [selection_from_example(ex), selection_from_example(measured)]


def test_table_rows_are_the_selection_fields(sels):
    rows = report.table_rows(sels)
    for s, row in zip(sels, rows[1:]):
        cell = dict(zip(rows[0], row))
        assert cell["algorithm"] == s.choice.label and cell["bound_method"] == s.bound_method
        assert int(cell["S_words"]) == s.fast_memory_words
        assert float(cell["time_gap"]) == pytest.approx(s.time_ms / s.time_floor_ms, abs=5e-4)
        assert float(cell["io_gap"]) == pytest.approx(s.io_words / s.lower_bound, abs=5e-4)


def test_select_table_columns(sels):
    """Choice label, every candidate's time (starred only for estimates), I/O gap; the
    estimate note only when some time is an estimate."""
    import dataclasses

    three = [*sels, dataclasses.replace(sels[0], choice=Candidate("winograd", 3))]
    lines = format_table(three).splitlines()
    head = lines[0].split()
    for s, line in zip(three, lines[1:4]):
        cell = dict(zip(head, line.split()))
        assert cell["choice"] == s.choice.label
        assert cell["io_gap"] == f"{s.io_words / s.lower_bound:.2f}"
        star = "*" if s.estimate else ""
        times = {c.candidate.label: c.time_ms for c in s.candidates}
        assert cell["direct"] == f"{times['direct']:.4g}{star}"
        assert cell["time_ms"] == f"{s.time_ms:.4g}{star}"
    assert lines[-1].startswith("* analytic estimate")
    measured = format_table(sels[1:])
    assert "*" not in measured and len(measured.splitlines()) == 2


def test_plots_draw_the_documented_series(sels, tmp_path, monkeypatch):
    """io.png: achieved I/O over the best bound and their ratio; time.png: time over the
    roofline floor (here the compute floor), labelled an estimate only when one is."""
    import dataclasses

    import matplotlib
    sels = [dataclasses.replace(s, io_words=1000 * (i + 1), lower_bound=250.0, time_ms=0.01,
                                io_floor_ms=0.002, compute_floor_ms=0.003 + i)
            for i, s in enumerate(sels)]
    matplotlib.use("Agg")
    from matplotlib.axes import Axes

    from matplotlib.figure import Figure

    monkeypatch.setattr(Figure, "savefig", lambda self, path, **kw: None)
    monkeypatch.setattr(Figure, "tight_layout", lambda self, **kw: None)
    bars, real_bar = [], Axes.bar
    monkeypatch.setattr(Axes, "bar", lambda self, x, h, *a, **k: bars.append(list(h))
                        or real_bar(self, x, h, *a, **k))
    calls, real = [], report._bars
    monkeypatch.setattr(report, "_bars", lambda *a: calls.append(a) or real(*a))
    report.plot_io(sels, tmp_path / "io.png", "t")
    report.plot_time(sels, tmp_path / "time.png", "t")
    report.plot_time(sels[1:], tmp_path / "time2.png", "t")
    (_, io_a, io_b, *_), (_, t_a, t_b, names, *_), (*_, names2, _, _, _, _) = calls
    assert io_a == [s.io_words for s in sels] and io_b == [s.lower_bound for s in sels]
    assert t_a == [s.time_ms for s in sels] and t_b == [s.time_floor_ms for s in sels]
    assert "estimate" in names[0] and "estimate" not in names2[0]
    assert bars[1] == pytest.approx([s.io_words / s.lower_bound for s in sels])
    assert bars[3] == pytest.approx([s.time_ms / s.time_floor_ms for s in sels])


def test_report_files(sels, tmp_path, monkeypatch):
    """Titled table; JSON of every selection; HTML only when asked, escaped, with the
    estimate note only for estimates (plots stubbed: tested above)."""
    def png(sels, path, title):
        path.write_bytes(b"\x89PNG\r\n\x1a\n")
    monkeypatch.setattr(report, "plot_io", png)
    monkeypatch.setattr(report, "plot_time", png)
    files = report.write_report(sels[1:], tmp_path / "a", "Net <1>")
    assert "html" not in files and not (tmp_path / "a" / "report.html").exists()
    assert files["table"].read_text().startswith("# Net <1>\n")
    assert json.loads(files["json"].read_text())["layers"] == [sels[1].to_dict()]
    page = report.write_report(sels[1:], tmp_path / "b", "Net <1>", html_page=True)["html"]
    text = page.read_text()
    assert "a&lt;b&gt;&amp;c" in text and "a<b>" not in text and "Net &lt;1&gt;" in text
    assert "analytic estimates" not in text
    assert "analytic estimates" in report.write_report(
        sels, tmp_path / "c", "n", html_page=True)["html"].read_text()
    with pytest.raises(ValueError, match="at least one layer"):
        report.write_report([], tmp_path / "d", "n")


@pytest.mark.parametrize("argv, progress", [
    (["select", "--layer", TINY], False),
    (["select", "--network", "alexnet", "--json"], False),
    (["select", "--network", "alexnet"], True),
])
@pytest.mark.parametrize("terminal", [True, False])
def test_progress_only_for_several_layers_without_json(capsys, monkeypatch, cached_labels, argv,
                                                       progress, terminal):
    """A bar on stderr for a network's layers, drawn only on a terminal (as tune's): logs
    and pipes get none."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    assert main(argv) == 0
    err = capsys.readouterr().err
    shown = progress and terminal
    assert ("select alexnet.conv1 [" in err and "] 5/5\n" in err) == shown
    assert (err == "") == (not shown), err
