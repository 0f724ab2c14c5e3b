"""Small fabricated examples for the selection tests (no labelling: fast)."""

from __future__ import annotations

import numpy as np
import pytest

from iobound.layer import ConvLayer
from search.selection.dataset import CLASSES, Example

TINY = "cin=2,hin=6,cout=4,kh=3,pad=1"


def fabricated(n: int, seed: int = 0) -> list[Example]:
    """Examples whose best class follows a known rule: Winograd e=2 when c_in >= 64 and the
    output is at least 14x14, e=4 when c_in >= 256 as well, direct otherwise; 1x1 layers
    (direct only) mixed in."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        c_in = int(rng.choice([8, 16, 32, 64, 128, 256, 512]))
        hw = int(rng.choice([7, 14, 28, 56]))
        k = 1 if i % 5 == 0 else 3
        layer = ConvLayer(n=1, c_in=c_in, h_in=hw, w_in=hw, c_out=64, k_h=k, k_w=k,
                          padding=k // 2, name=f"fab.{i}")
        if k == 1:
            out.append(Example(layer, "V100-SXM2", {CLASSES[0]: 1.0}, {CLASSES[0]: {}}))
            continue
        times = {c: 1.0 + 0.1 * j for j, c in enumerate(CLASSES)}
        if c_in >= 64 and hw >= 14:
            times[CLASSES[1]] = 0.6
            if c_in >= 256:
                times[CLASSES[3]] = 0.5
        out.append(Example(layer, "V100-SXM2", times, {c: {} for c in CLASSES}))
    return out


@pytest.fixture
def examples():
    return fabricated(120)


@pytest.fixture
def fabricate():
    return fabricated


@pytest.fixture(scope="session")
def tiny_layer():
    from iobound.layer_spec import parse_layer_spec
    return parse_layer_spec(TINY).replace(name="tiny")


@pytest.fixture(scope="session")
def tiny_records(tiny_layer):
    """The model measurer's oracle records of the tiny layer (labelled once per session)."""
    from search.selection.labels import label_layer
    return label_layer(tiny_layer, "v100")


@pytest.fixture
def cached_labels(monkeypatch, tiny_records):
    """Label every layer with the tiny layer's records (renamed): no measuring in these tests."""
    import search.selection.labels as labels
    from search.selection.dataset import LabelRecord, candidates

    def fake(layer, device, measure="model"):
        return [LabelRecord(layer, r.device, r.algorithm, r.e, r.config, r.time_ms, r.estimate,
                            r.source) for r in tiny_records if r.candidate in candidates(layer)]
    monkeypatch.setattr(labels, "label_layer", fake)
