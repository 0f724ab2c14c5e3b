"""``iobound select`` and ``iobound report``: JSON schema, table content, plots, errors."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys

import pytest

from search.cli.main import main

TINY = "cin=2,hin=6,cout=4,kh=3,pad=1"


def test_select_json_in_a_real_process():
    """`iobound select --layer SPEC --json` prints the issue's schema with estimate flags."""
    proc = subprocess.run([sys.executable, "-m", "search.cli.main", "select", "--layer", TINY,
                           "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["measure"] == "model" and out["device"] == "V100-SXM2"
    (layer,) = out["layers"]
    assert {"layer", "algorithm", "e", "config", "time_ms", "estimate", "predicted", "candidates",
            "io_words", "lower_bound"} <= set(layer)
    assert layer["estimate"] is True and len(layer["candidates"]) == 4


def test_select_network_table(capsys, cached_labels):
    """--network gives one row per layer; 1x1 layers show n/a for Winograd; estimates starred."""
    assert main(["select", "--network", "squeezenet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["layer", "choice", "time_ms"]
    rows = {line.split()[0]: line for line in out[1:-2]}
    assert len(rows) == 26
    assert "n/a" in rows["squeezenet.fire2_squeeze1x1"]
    assert "n/a" not in rows["squeezenet.fire2_expand3x3"]
    assert out[-2].startswith("* analytic estimate") and out[-1].startswith("n/a: ")


@pytest.mark.parametrize("argv, message", [
    (["select", "--layer", TINY, "--measure", "cuda"], "--measure must be one of model"),
    (["select", "--network", "nonet"], "unknown network 'nonet'"),
    (["select", "--layer", TINY, "--device", "tpu"], "unknown device 'tpu'"),
    (["select"], "one of the arguments --layer --network is required"),
    (["report", "--network", "alexnet", "--layer", TINY], "not allowed with argument"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    """Bad input: exit 2 and one stderr line naming the problem."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def _md_rows(text: str) -> list[list[str]]:
    lines = [l for l in text.splitlines() if l.startswith("|")]
    return [[c.strip() for c in l.strip("|").split("|")] for l in lines[:1] + lines[2:]]


def test_report_numbers_equal_the_selection(tmp_path, capsys, cached_labels):
    """table.md and selection.json carry exactly the numbers `select --json` computes; the PNGs
    are PNGs; the HTML page inlines both."""
    assert main(["select", "--network", "alexnet", "--json"]) == 0
    selected = json.loads(capsys.readouterr().out)["layers"]
    assert main(["report", "--network", "alexnet", "--out-dir", str(tmp_path), "--html"]) == 0
    table = _md_rows((tmp_path / "table.md").read_text())
    head, rows = table[0], table[1:]
    assert [r[0] for r in rows] == [s["layer"] for s in selected]
    for row, sel in zip(rows, selected):
        cell = dict(zip(head, row))
        label = sel["algorithm"] + (f"-e{sel['e']}" if sel["e"] else "")
        assert cell["algorithm"] == label
        assert float(cell["time_ms"]) == sel["time_ms"]
        assert int(cell["io_words"]) == sel["io_words"]
        assert float(cell["lower_bound"]) == sel["lower_bound"]
        assert float(cell["time_floor_ms"]) == sel["time_floor_ms"] == max(
            sel["io_floor_ms"], sel["compute_floor_ms"])
        assert float(cell["io_gap"]) == pytest.approx(sel["io_words"] / sel["lower_bound"],
                                                      abs=5e-4)
    assert json.loads((tmp_path / "selection.json").read_text())["layers"] == selected
    for name in ("io.png", "time.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "report.html").read_text()
    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(imgs) == 2 and all(base64.b64decode(i)[:4] == b"\x89PNG" for i in imgs)
    assert "alexnet.conv3" in page and "analytic estimates" in page


def test_report_on_a_full_disk_names_the_file(capsys, tmp_path, monkeypatch):
    """`report --out-dir` on a full disk said "error: No space left on device" naming no
    file; one line names the file, exit 1 (a write that failed at the end, not bad input)."""
    import errno

    import search.selection.report as report

    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(report, "write_atomic", full)
    out = tmp_path / "rep"
    code = main(["report", "--layer", "cin=4,hin=8,cout=8,kh=3,pad=1", "--out-dir", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1, err
    assert "No space left on device" in err and str(out) in err
