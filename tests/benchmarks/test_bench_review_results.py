"""The README's benchmark commands write the result file it quotes for them, and the
committed history_network_scale result is what the script writes (regressions of a
review of benchmarks/)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = " ".join((ROOT / "README.md").read_text().split())


class _Parsed(Exception):
    pass


def parsed(monkeypatch, main, argv: list[str]) -> argparse.Namespace:
    """The options ``main(argv)`` parses (it stops right there)."""
    real = argparse.ArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):
        raise _Parsed(real(self, args, namespace))
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_args)
    with pytest.raises(_Parsed) as got:
        main(argv)
    return got.value.args[0]


@pytest.mark.parametrize("module, command, quoted", [
    # history_scale's default --out (history_scale.json) is the 4-device result quoted before
    ("history_scale", r"with `(--devices 41[^`]*)`", "history_scale_many.json"),
    # selection_quality's default --out (selection_quality.json) is the V100 result
    ("selection_quality", r"RTX-A4000 \(`(--device a4000[^`]*)`", "selection_quality_a4000.json"),
])
def test_readme_command_writes_the_file_it_quotes(monkeypatch, module, command, quoted):
    import importlib
    mod = importlib.import_module(f"benchmarks.{module}")
    m = re.search(command, README)
    assert m, "README command not found"
    assert f"`benchmarks/results/{quoted}`" in README[m.end():m.end() + 700]
    args = parsed(monkeypatch, mod.main, m.group(1).split())
    assert args.out == Path("benchmarks/results") / quoted


def test_history_network_scale_result_is_the_script_s():
    """The committed file lacked ``layers_tuned``: it was written by an earlier script."""
    got = json.loads((ROOT / "benchmarks/results/history_network_scale.json").read_text())
    assert set(got) == {
        "history_network", "history_devices", "per_layer", "fill_s", "history_records",
        "network", "device", "budget", "layers", "layers_tuned", "without_history_s",
        "with_history_s", "history_s_per_layer", "machine", "python"}
    assert 0 < got["layers_tuned"] <= got["layers"]
