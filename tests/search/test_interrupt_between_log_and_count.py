"""A signal right after a record is logged, before the run counts it: the record is both
logged and counted (the "N measurements kept" line, --history) or neither.

Before, the tuner appended the record to the log, then counted it; SIGINT between the two
left a record in the log that the interrupt line did not count and that --history did not
store (a resume still read it from the log).
"""

from __future__ import annotations

import os
import signal

import pytest

from search.cli.main import main
from search.records import read_log
from search.log_writer import LogWriter
from tests.search.stored_rows import stored_measurements


@pytest.mark.usefixtures("python_sigint")
@pytest.mark.parametrize("at", [1, 3])
def test_a_signal_after_a_logged_record_keeps_it_counted(tmp_path, capsys, monkeypatch, at):
    append = LogWriter.append
    calls = []

    def append_then_signal(self, *args, **kwargs):
        append(self, *args, **kwargs)
        calls.append(1)
        if len(calls) == at:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(LogWriter, "append", append_then_signal)
    log, db = tmp_path / "run.jsonl", tmp_path / "h.db"
    code = main(["tune", "--layer", "cin=8,hin=8,cout=16,kh=3,pad=1", "--measure", "model",
                 "--strategy", "random", "--budget", "8", "--no-verify", "--out-dir",
                 str(tmp_path / "k"), "--log", str(log), "--history", str(db)])
    err = capsys.readouterr().err
    logged = len(read_log(log).entries)
    assert code == 130 and logged == at
    noun = "measurement" if logged == 1 else "measurements"
    assert f"interrupted: {logged} {noun} kept in {log}" in err
    assert stored_measurements(db) == logged
