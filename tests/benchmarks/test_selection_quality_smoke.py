"""Smoke test of benchmarks/selection_quality.py on fabricated examples (no labelling)."""

from __future__ import annotations

import numpy as np

from benchmarks import selection_quality as sq
from iobound.layer import ConvLayer
from search.selection.dataset import CLASSES, Example, shape_key


def _examples(seed: int, n: int, prefix: str, c_out: int) -> list[Example]:
    """Winograd e=4 wins (by 30%) on layers with c_in >= 128, direct elsewhere; the shapes
    differ (c_out counts up)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        c_in = int(rng.choice([16, 32, 64, 128, 256, 512]))
        layer = ConvLayer(n=1, c_in=c_in, h_in=14, w_in=14, c_out=c_out + i,
                          k_h=3, k_w=3, padding=1, name=f"{prefix}.{i}")
        times = dict(zip(CLASSES, (1.0, 1.2, 1.3, 0.7 if c_in >= 128 else 1.4)))
        out.append(Example(layer, "V100-SXM2", times))
    return out


def test_evaluate_scores_every_held_out_shape_once():
    """Leave one network out scores each preset shape once, trees stay within their leaves,
    and the learned selectors beat always-direct on a learnable rule."""
    synthetic = _examples(0, 80, "syn", 100)
    a, b = _examples(1, 6, "a", 16), _examples(2, 6, "b", 32)
    b.append(a[0])                                   # a shape both networks have
    result = sq.evaluate(synthetic, {"a": a, "b": b}, max_leaves=5)
    lono = result["leave_one_network_out"]
    unique = len({shape_key(ex.layer) for ex in a + b})
    assert all(s["n"] == unique for s in lono.values())
    assert all(leaves <= 5 for leaves in result["tree_leaves_per_fold"])
    for name in ("gbt", "tree"):
        assert lono[name]["mean_so"] > lono["always_direct"]["mean_so"]
    table = sq._table("t", lono)
    assert table.splitlines()[2].startswith("gbt") and "mean SO" in table


def test_labels_of_another_model_version_are_labelled_again(tmp_path, monkeypatch):
    """A cached label of an older analytic model is stale: the layer is labelled again
    (a model change must not reuse labels its times no longer give); a current one is
    reused as it is."""
    import json

    from kernels.perf_model import MODEL_VERSION
    from search.selection import labels as labels_mod
    from search.selection.dataset import LabelRecord

    layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="t.c")
    calls = []

    def fake_label(lay, device):
        calls.append(lay.name)
        return [LabelRecord(lay, "V100-SXM2", "direct", None, {"x": 1}, 2.0, True,
                            f"analytic model v{MODEL_VERSION} for V100-SXM2 (estimate)")]
    monkeypatch.setattr(labels_mod, "label_layer", fake_label)
    path = tmp_path / "labels.jsonl"
    old = LabelRecord(layer, "V100-SXM2", "direct", None, {"x": 1}, 1.0, True,
                      "analytic model v0 for V100-SXM2 (estimate)")
    path.write_text(json.dumps({"schema": 1, **old.to_dict()}) + "\n")
    first = sq.labelled([layer], "V100-SXM2", path)
    assert calls == ["t.c"] and [r.time_ms for r in first] == [2.0]
    again = sq.labelled([layer], "V100-SXM2", path)
    assert calls == ["t.c"] and [r.time_ms for r in again] == [2.0]
    # the stale label left the file too (a committed cache holds one model's labels)
    sources = [json.loads(line)["source"] for line in path.read_text().splitlines()]
    assert sources == [f"analytic model v{MODEL_VERSION} for V100-SXM2 (estimate)"]


def test_committed_selection_labels_are_of_the_current_model():
    """The committed label caches (the README's selection results) are the analytic model's
    as it is: labels of an older MODEL_VERSION are relabelled by the benchmark, so results
    drawn from them would no longer be what its command prints."""
    import json
    import re
    from pathlib import Path

    from kernels.perf_model import MODEL_VERSION

    results = Path(sq.__file__).resolve().parent / "results"
    for device in ("v100", "a4000"):
        versions = {m.group(1) for line in (results / f"selection_labels_{device}.jsonl").read_text().splitlines()
                    if (m := re.match(r"analytic model v(\S+) for ", json.loads(line)["source"]))}
        assert versions == {MODEL_VERSION}, (device, sorted(versions))
