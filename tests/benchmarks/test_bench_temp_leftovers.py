"""The benchmark scripts leave nothing in the temporary folder.

``benchmarks/network_overlap.py`` gives every (layers at once, seed) cell a fresh build
cache and an output folder for the winners' kernels, and ``benchmarks/algorithm_choice.py``
an output folder per seed: scratch of one measurement, never a result (the results are
the JSON files they write). Each was a ``tempfile.mkdtemp`` nobody removed: a 45 MB cache
of emulator libraries and a precompiled header per cell (four cells a default run) and a
folder of kernel files per seed piled up in /tmp run after run.

The temporary folder is a fresh one here (``tempfile.tempdir``); the tuning itself is the
real one for algorithm_choice (the analytic model, tiny layers), and for network_overlap
(an emulated network, a minute of builds) a stand-in that writes what the real run does:
a library in ``$IOBOUND_CACHE`` and kernel files in ``out_dir``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

from benchmarks import algorithm_choice as ac
from benchmarks import network_overlap as no
from iobound.layer import ConvLayer


def _fresh_tempdir(tmp_path, monkeypatch) -> Path:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return scratch


def test_network_overlap_cell_leaves_no_cache_or_kernel_folder(tmp_path, monkeypatch):
    scratch = _fresh_tempdir(tmp_path, monkeypatch)
    monkeypatch.setenv("IOBOUND_CACHE", str(tmp_path / "user-cache"))  # restored afterwards

    def fake_build(code, cache_root=None):  # the PCH build: a library in the cache
        emu = Path(os.environ["IOBOUND_CACHE"]) / "emu"
        emu.mkdir(parents=True, exist_ok=True)
        (emu / "lib.so").write_bytes(b"\0" * 64)

    def fake_tune(layers, device, settings, *, measure, out_dir, verify):
        fake_build("")
        reports = []
        for layer in layers:
            (Path(out_dir) / f"{layer.name}_direct_best.cu").write_text("// kernel\n")
            best = SimpleNamespace(config={"x": 1})
            reports.append(SimpleNamespace(result=SimpleNamespace(evaluations=12, best=best)))
        return reports

    monkeypatch.setattr("kernels.emulator.build_emulator", fake_build)
    monkeypatch.setattr("search.session.tune_layers", fake_tune)
    row = no.one(3, 1)
    assert row["evaluations"] == 36
    assert sorted(p.name for p in scratch.iterdir()) == []


def test_algorithm_choice_seed_leaves_no_kernel_folder(tmp_path, monkeypatch):
    from iobound.devices import get_device
    scratch = _fresh_tempdir(tmp_path, monkeypatch)
    layers = [ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1,
                        name="a.c1")]
    tune = ac.tuned(layers, get_device("v100"), 3, 0)  # one seed of main's loop
    assert set(tune) == {"a.c1"}
    assert sorted(p.name for p in scratch.iterdir()) == []
