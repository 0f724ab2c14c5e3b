"""One layer's selection and its evidence (search.selection.select)."""

from __future__ import annotations

from dataflow.direct import direct_io
from dataflow.winograd import winograd_io
from iobound.report import bound_report
from kernels.config import config_from_dict, onchip_words
from search.selection.dataset import examples_from_records
from search.selection.select import chosen_io, selection_from_example


def test_selection_evidence(tiny_layer, tiny_records):
    """The choice is the fastest candidate; its I/O is the dataflow's exact count for the chosen
    config and the bound is bound_report's best at the block's on-chip words."""
    sel = selection_from_example(examples_from_records(tiny_records)[0])
    fastest = min(tiny_records, key=lambda r: r.time_ms)
    assert sel.choice == fastest.candidate and sel.time_ms == fastest.time_ms
    kc = config_from_dict(sel.config, sel.choice.algorithm)
    io = (winograd_io if sel.choice.algorithm == "winograd" else direct_io)(tiny_layer, kc.tiling)
    assert sel.io_words == io.total
    assert sel.fast_memory_words == onchip_words(tiny_layer, kc)
    assert sel.lower_bound == bound_report(tiny_layer, sel.fast_memory_words + 2,
                                           sel.choice.algorithm, sel.choice.e).best
    assert sel.io_gap >= 1 and not sel.predicted and sel.estimate


def test_every_candidate_respects_its_bound(tiny_layer, tiny_records):
    """No candidate's best kernel moves less data than the lower bound at its on-chip words."""
    for rec in tiny_records:
        io, bound, _, _ = chosen_io(tiny_layer, rec.candidate, rec.config)
        assert io >= bound


def test_json_entry_has_the_issue_schema(tiny_records):
    """The --json entry has the issue's keys with the issue's types."""
    d = selection_from_example(examples_from_records(tiny_records)[0]).to_dict()
    assert d["layer"] == "tiny" and d["algorithm"] in ("direct", "winograd")
    assert d["e"] is None if d["algorithm"] == "direct" else d["e"] in (2, 3, 4)
    assert isinstance(d["config"], dict) and isinstance(d["time_ms"], float)
    assert d["estimate"] is True and d["predicted"] is False
    assert isinstance(d["io_words"], int) and isinstance(d["lower_bound"], float)
    assert [(c["algorithm"], c["e"]) for c in d["candidates"]] == [
        ("direct", None), ("winograd", 2), ("winograd", 3), ("winograd", 4)]
    assert all(isinstance(c["time_ms"], float) for c in d["candidates"])
    assert min(c["time_ms"] for c in d["candidates"]) == d["time_ms"]
