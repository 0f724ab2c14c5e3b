"""Review 13 (rv_report): the selection's floors on the device it was given, and a report that
mixes tuned measurements (``--history``) with model estimates.

1. ``select_layers`` takes a device preset name or a ``Device``; the candidates are labelled
   on that device, but the roofline floors were taken from the *preset of the same name*
   (``get_device(example.device)``): a modified device got the preset's DRAM bandwidth and
   FP32 peak, a device of another name was an ``UnknownPresetError`` after every layer was
   labelled. Reference: the floor formulas of the module doc on the given device.
2. A report of a network some of whose layers come from a tuning history (measured times)
   and the others from the model (estimates) said on its HTML page that every time is an
   analytic estimate, and neither table.md nor the page told which rows are estimates.
"""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser

import pytest

from iobound.devices import get_device
from search.selection import report
from search.selection.dataset import Example, examples_from_records
from search.selection.select import WORD_BYTES, min_flops, select_layers, selection_from_example


def _floors(sel, dev):
    io = sel.lower_bound * WORD_BYTES / (dev.dram_bandwidth_gbs * 1e9) * 1e3
    return io, min_flops(sel.layer, sel.choice) / (dev.fp32_peak_gflops * 1e9) * 1e3


@pytest.fixture
def labelled_on(monkeypatch, tiny_records):
    """Label every layer with the tiny layer's records, renamed to the device asked for."""
    import search.selection.labels as labels
    from search.selection.dataset import LabelRecord, candidates

    def fake(layer, device, measure="model"):
        name = device if isinstance(device, str) else device.name
        return [LabelRecord(layer, name, r.algorithm, r.e, r.config, r.time_ms, r.estimate,
                            r.source) for r in tiny_records if r.candidate in candidates(layer)]
    monkeypatch.setattr(labels, "label_layer", fake)


def test_floors_are_taken_on_the_device_given(tiny_layer, labelled_on):
    v100 = get_device("v100")
    slow = dataclasses.replace(v100, dram_bandwidth_gbs=v100.dram_bandwidth_gbs / 100,
                               fp32_peak_gflops=v100.fp32_peak_gflops / 100)
    sel, = select_layers([tiny_layer], slow)
    assert (sel.io_floor_ms, sel.compute_floor_ms) == pytest.approx(_floors(sel, slow))


def test_a_device_of_another_name_is_accepted(tiny_layer, labelled_on):
    mine = dataclasses.replace(get_device("v100"), name="MyGPU", aliases=(),
                               dram_bandwidth_gbs=450.0)
    sel, = select_layers([tiny_layer], mine)
    assert sel.device == "MyGPU"
    assert (sel.io_floor_ms, sel.compute_floor_ms) == pytest.approx(_floors(sel, mine))


class _Table(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append(self._cell)
            self._cell = None


def _md_rows(text):
    lines = [l for l in text.splitlines() if l.startswith("|")]
    return [[c.strip() for c in l.strip("|").split("|")] for l in lines[:1] + lines[2:]]


@pytest.fixture
def mixed(tiny_records):
    """One layer measured (from a history), one estimated (the model)."""
    ex = examples_from_records(tiny_records)[0]
    measured = Example(ex.layer.replace(name="net.tuned"), ex.device, ex.times, ex.configs,
                       estimate=False)
    estimated = Example(ex.layer.replace(name="net.model"), ex.device, ex.times, ex.configs,
                        estimate=True)
    return [selection_from_example(measured, source="history"),
            selection_from_example(estimated, source="model oracle")]


def _flag(text):
    return {"yes": True, "true": True, "no": False, "false": False}[text.strip().lower()]


def test_a_mixed_report_tells_estimates_from_measurements(mixed, tmp_path, monkeypatch):
    def png(sels, path, title):
        path.write_bytes(b"\x89PNG\r\n\x1a\n")
    monkeypatch.setattr(report, "plot_io", png)
    monkeypatch.setattr(report, "plot_time", png)
    files = report.write_report(mixed, tmp_path, "mixed", html_page=True)
    rows = _md_rows(files["table"].read_text())
    page = files["html"].read_text()
    parser = _Table()
    parser.feed(page)
    for table in (rows, parser.rows):
        head, body = table[0], table[1:]
        col = [i for i, h in enumerate(head) if "estimate" in h]
        assert col, f"no column says which times are estimates: {head}"
        assert [_flag(r[col[0]]) for r in body] == [s.estimate for s in mixed]
    # the page may not say that every time is an estimate: net.tuned's is a measurement
    text = re.sub(r"<[^>]+>", "", page)
    assert "Times are analytic estimates" not in text


def test_the_time_plot_does_not_call_a_measurement_an_estimate(mixed, monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(report, "_bars", lambda *a: calls.append(a))
    report.plot_time(mixed, tmp_path / "t.png", "t")
    report.plot_time(mixed[1:], tmp_path / "t.png", "t")
    report.plot_time(mixed[:1], tmp_path / "t.png", "t")
    (mix, only_est, only_meas) = (c[3][0] for c in calls)
    assert "estimate" in only_est and "estimate" not in only_meas
    assert mix != only_est and "measure" in mix  # not labelled as estimates alone
