"""A network run whose end-of-layer write fails (a full disk) names the resume that works
(search/session/loop.py, run.py; search/session/storage.kept_where).

Reference: the interrupt's message (search/interrupts.Interrupted: a layer's records are
in its own log, the run resumes from the run's name). The write failure named the layer's
own log as the --resume to give, which --network cannot resume from."""
from __future__ import annotations

import errno
import re

from search.cli.main import main


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_failed_write_in_a_network_names_a_resumable_log(tmp_path, capsys, monkeypatch):
    from search.session import storage
    monkeypatch.setattr(storage, "export_cache", _disk_full)
    argv = ["tune", "--network", "alexnet", "--measure", "model", "--budget", "4", "--no-verify",
            "--out-dir", str(tmp_path / "k")]
    log = tmp_path / "run.jsonl"
    assert main([*argv, "--log", str(log), "--export-cache", str(tmp_path / "c.json")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    advice = re.search(r"resume with --resume (\S+?)\)?$", err[0]).group(1)
    monkeypatch.undo()
    # follow the advice
    assert advice == str(log) and "kept in " + str(tmp_path / "run.alexnet.conv1.jsonl") in err[0]
    code = main([*argv, "--resume", advice])
    capsys.readouterr()
    assert code == 0, (err[0], code)
