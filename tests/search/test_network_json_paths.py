"""``--network-json`` never names a file a layer of the run writes or resumes
(search/cli/tune_network.py).

Reference: the rule every output flag follows (search/session/files.check_outputs: one
file named by two flags is refused, each write would destroy what the other keeps). The
table was compared with ``--history`` only, so naming a layer's log overwrote its
measurements at the end of the run, and its resume failed.
"""

from __future__ import annotations

import pytest

from search.cli.main import main


def _argv(tmp_path, *more):
    return ["tune", "--network", "alexnet", "--measure", "model", "--budget", "4",
            "--no-verify", "--out-dir", str(tmp_path / "k"), *more]


@pytest.mark.parametrize("flag, base, layer_file", [
    ("--log", "run.jsonl", "run.alexnet.conv1.jsonl"),
    ("--export-cache", "cache.json", "cache.alexnet.conv1.json"),
])
def test_a_layers_own_file_is_refused_as_the_table(tmp_path, capsys, flag, base, layer_file):
    code = main(_argv(tmp_path, flag, str(tmp_path / base),
                      "--network-json", str(tmp_path / layer_file)))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--network-json" in err[0], err
    assert not (tmp_path / layer_file).exists()


def test_a_layers_resumed_log_is_refused_as_the_table(tmp_path, capsys):
    log = tmp_path / "run.jsonl"
    assert main(_argv(tmp_path, "--log", str(log))) == 0
    kept = (tmp_path / "run.alexnet.conv2.jsonl").read_bytes()
    capsys.readouterr()
    code = main(_argv(tmp_path, "--resume", str(log),
                      "--network-json", str(tmp_path / "run.alexnet.conv2.jsonl")))
    assert code == 2 and "--network-json" in capsys.readouterr().err
    assert (tmp_path / "run.alexnet.conv2.jsonl").read_bytes() == kept
