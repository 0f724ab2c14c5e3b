"""One layer's selection (search.selection.select): floors, FLOPs, evidence and sources.

References: the module doc's formulas — I/O floor = bound words x 4 bytes / DRAM
bandwidth, compute floor = multiplication FLOPs / FP32 peak, direct FLOPs = 2 MACs,
Winograd F(e) FLOPs = 2 n c_out c_in (e+r-1)^2 per output tile, tiles counted here by
enumerating tile origins — and, for ``select_layers``, which layers a history covers.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from iobound.devices import get_device
from iobound.layer import ConvLayer
from search.selection.dataset import (CLASSES, DIRECT, Candidate, Example, LabelRecord,
                                      candidates, examples_from_records)
from search.selection.select import min_flops, select_layers, selection_from_example


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 2), st.integers(1, 5), st.integers(1, 5), st.integers(3, 11),
       st.integers(3, 11), st.sampled_from([2, 3]), st.sampled_from([2, 3, 4]))
def test_min_flops_counts_the_multiplications(n, c_in, c_out, h, w, k, e):
    """Direct: 2 n c_out h_out w_out c_in k^2; Winograd: 2 (e+k-1)^2 per tile and channel
    pair, one tile per origin (0, e, 2e, ...) along each output axis."""
    layer = ConvLayer(n=n, c_in=c_in, h_in=h, w_in=w, c_out=c_out, k_h=k, k_w=k)
    h_out, w_out = h - k + 1, w - k + 1
    assert min_flops(layer, DIRECT) == 2 * n * c_out * h_out * w_out * c_in * k * k
    tiles = len(range(0, h_out, e)) * len(range(0, w_out, e))
    assert min_flops(layer, Candidate("winograd", e)) == 2 * n * c_out * c_in * tiles * (e + k - 1) ** 2


def test_floors_follow_the_roofline_formulas(tiny_records):
    """io_floor = bound x 4 B / bandwidth and compute_floor = FLOPs / peak, in ms, for every
    candidate made the choice."""
    ex = examples_from_records(tiny_records)[0]
    dev = get_device(ex.device)
    for c in CLASSES:
        only = Example(ex.layer, ex.device, {c: ex.times[c]}, {c: ex.configs[c]})
        sel = selection_from_example(only)
        assert sel.choice == c
        assert sel.io_floor_ms == pytest.approx(
            sel.lower_bound * 4 / (dev.dram_bandwidth_gbs * 1e9) * 1e3, rel=1e-12)
        assert sel.compute_floor_ms == pytest.approx(
            min_flops(ex.layer, c) / (dev.fp32_peak_gflops * 1e9) * 1e3, rel=1e-12)


def test_untimed_candidates_are_listed_as_unavailable(tiny_records):
    ex = examples_from_records(tiny_records)[0]
    e4 = Candidate("winograd", 4)
    times = {**ex.times, e4: None}
    d = selection_from_example(Example(ex.layer, ex.device, times, ex.configs)).to_dict()
    assert d["unavailable"] == ["winograd-e4"]
    assert [(c["algorithm"], c["e"]) for c in d["candidates"]] == [
        ("direct", None), ("winograd", 2), ("winograd", 3)]


def test_history_covers_its_layers_and_the_rest_are_labelled(tiny_layer, tiny_records,
                                                             monkeypatch):
    """A layer the known records cover is not labelled and is selected from them under the
    requested layer's name (source "history"); another shape is labelled (source
    "model oracle") with its own records, whatever the order."""
    import search.selection.labels as labels

    other = tiny_layer.replace(c_out=8, name="other")
    labelled = []

    def fake(layer, device, measure="model"):
        labelled.append(layer.name)
        return [LabelRecord(layer, r.device, r.algorithm, r.e, r.config, 2 * r.time_ms,
                            r.estimate, r.source) for r in tiny_records
                if r.candidate in candidates(layer)]
    monkeypatch.setattr(labels, "label_layer", fake)
    known = [LabelRecord(tiny_layer.replace(name="stored"), r.device, r.algorithm, r.e,
                         r.config, r.time_ms, False) for r in tiny_records]
    sels = select_layers([tiny_layer, other], "v100", known=known)
    assert labelled == ["other"]
    first, second = sels
    assert (first.layer.name, first.source, first.estimate) == ("tiny", "history", False)
    assert first.time_ms == min(r.time_ms for r in tiny_records)
    assert (second.layer.name, second.source) == ("other", "model oracle")
    assert second.time_ms == 2 * min(r.time_ms for r in tiny_records)


def test_bound_is_taken_at_the_block_words_plus_two():
    """A layer whose bound depends on S: the bound is bound_report's best at the block's
    on-chip words + 2 (blocks share nothing on chip; proofs/test_multi_block.py), the I/O
    the dataflow's exact count."""
    from dataflow.direct import direct_io
    from iobound.report import bound_report
    from kernels.config import config_from_dict, onchip_words
    from search.conv_space import ConvSpace
    from search.selection.select import chosen_io

    layer = ConvLayer(n=1, c_in=32, h_in=28, w_in=28, c_out=64, k_h=3, k_w=3, padding=1)
    space = ConvSpace(layer, "v100", "direct")
    cfg = space.get(len(space) // 2)
    io, bound, method, s = chosen_io(layer, DIRECT, cfg)
    kc = config_from_dict(cfg, "direct")
    assert s == onchip_words(layer, kc) and io == direct_io(layer, kc.tiling).total
    rep = bound_report(layer, s + 2, "direct")
    assert (bound, method) == (rep.best, rep.best_method)
    assert bound != bound_report(layer, s, "direct").best


def test_known_records_of_another_device_do_not_count(tiny_layer, tiny_records, monkeypatch):
    import search.selection.labels as labels

    labelled = []
    monkeypatch.setattr(labels, "label_layer",
                        lambda layer, device, measure="model": labelled.append(layer) or
                        [r for r in tiny_records])
    known = [LabelRecord(tiny_layer, "T4", r.algorithm, r.e, r.config, 0.001, False)
             for r in tiny_records]
    sel, = select_layers([tiny_layer], "v100", known=known)
    assert labelled == [tiny_layer] and sel.source == "model oracle"
