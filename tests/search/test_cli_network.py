"""``iobound tune --network`` with an executor: layers at once, the table, --network-json.

The model measurer through the local executor (2 workers, 2 layers at once) on AlexNet:
the JSON table holds one row per layer in the network's order with what the logs and
the kernels say; bad --network-json and --parallel-layers values are one line, exit 2;
SIGINT mid-run exits 130 with one line and --resume finishes every layer with each
configuration logged once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iobound.networks import network_layers
from search.cli.main import main
from search.records import read_log

REPO = Path(__file__).resolve().parents[2]
NETWORK = [l.name for l in network_layers("alexnet")]


def _argv(tmp_path: Path, budget: int, *more: str) -> list[str]:
    return ["tune", "--network", "alexnet", "--measure", "model", "--executor", "local",
            "--workers", "2", "--parallel-layers", "2", "--budget", str(budget),
            "--out-dir", str(tmp_path / "k"), "--no-verify", *more]


def _entries(path: Path):
    return read_log(path).entries


def test_network_json_table_matches_the_logs_and_kernels(tmp_path, capsys):
    """One row per layer in network order: evaluations, best time (the log's minimum), the
    ratio io/bound, the kernel file and the log path; the printed table ends the output."""
    table = tmp_path / "table.json"
    code = main(_argv(tmp_path, 4, "--log", str(tmp_path / "run.jsonl"), "--network-json", str(table)))
    assert code == 0
    out = capsys.readouterr().out
    tuned, total = out.rstrip().splitlines()[-2:]
    assert tuned == f"{len(NETWORK)} of {len(NETWORK)} layers tuned; {4 * len(NETWORK)} evaluations"
    data = json.loads(table.read_text())
    assert total == (f"every layer's best, one after another: {data['total_time_ms']:.4g} ms, "
                     f"estimated (analytic model)")
    assert data["total_time_ms"] == pytest.approx(sum(r["best_time_ms"] for r in data["layers"]))
    assert (data["network"], data["measure"], data["executor"], data["workers"]) == \
        ("alexnet", "model", "local", 2)
    assert [row["layer"] for row in data["layers"]] == NETWORK
    assert data["evaluations"] == 4 * len(NETWORK) and data["tuned"] == len(NETWORK)
    for row in data["layers"]:
        log = Path(row["log"])
        assert log == tmp_path / f"run.{row['layer']}.jsonl"
        times = [e.record.time_ms for e in _entries(log) if e.record.time_ms is not None]
        assert row["evaluations"] == len(_entries(log)) == 4
        assert row["best_time_ms"] == min(times) and row["estimate"] is True
        assert row["ratio_to_bound"] == pytest.approx(row["dataflow_io_words"] / row["lower_bound_words"])
        assert row["ratio_to_bound"] >= 1
        assert Path(row["kernel"]).is_file()


@pytest.mark.parametrize("extra, message", [
    (["--network-json", "/no/such/folder/t.json"], "--network-json '/no/such/folder/t.json': the folder"),
    (["--network-json", ""], "--network-json: the path is empty"),
    (["--parallel-layers", "0"], "--parallel-layers must be an integer from 1 to"),
])
def test_bad_network_options_are_one_line_exit_2(tmp_path, capsys, extra, message):
    """Checked before anything runs: nothing is written."""
    assert main(_argv(tmp_path, 4, *extra)) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err
    assert not (tmp_path / "k").exists()


def test_network_json_needs_a_network(tmp_path, capsys):
    assert main(["tune", "--layer", "alexnet.conv1", "--network-json", str(tmp_path / "t.json")]) == 2
    assert "--network-json needs --network" in capsys.readouterr().err


def test_sigint_mid_network_then_resume_logs_each_configuration_once(tmp_path):
    """SIGINT once the first layers have logged: exit 130, one line naming the per-layer
    logs; --resume then completes every layer to the budget, nothing logged twice."""
    log, budget = tmp_path / "run.jsonl", 16
    argv = [sys.executable, "-m", "search.cli.main", *_argv(tmp_path, budget, "--log", str(log))]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    first = tmp_path / f"run.{NETWORK[0]}.jsonl"
    while time.monotonic() < deadline and proc.poll() is None:
        if first.exists() and len(first.read_text().splitlines()) >= 4:  # header + 3 records
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"resume with --resume {log}" in lines[0], err
    assert "run.<layer>.jsonl" in lines[0]
    kept = sum(len(_entries(p)) for p in tmp_path.glob("run.*.jsonl"))
    assert 0 < kept < budget * len(NETWORK)
    assert f"{kept} measurements kept" in lines[0]

    assert main(_argv(tmp_path, budget, "--resume", str(log))) == 0
    for name in NETWORK:
        indices = [e.index for e in _entries(tmp_path / f"run.{name}.jsonl")]
        assert len(indices) == budget and len(set(indices)) == budget


def test_parallel_layers_without_an_executor_is_refused(tmp_path, capsys):
    """The model measurer runs in process unless --executor is given: nothing to parallelise."""
    argv = ["tune", "--network", "alexnet", "--measure", "model", "--parallel-layers", "2",
            "--budget", "2", "--out-dir", str(tmp_path / "k")]
    assert main(argv) == 2
    assert "--parallel-layers needs --executor" in capsys.readouterr().err
