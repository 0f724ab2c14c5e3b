"""Several iobound processes sharing one machine's state at once: one log written by two
runs, and a tuning database whose measurements are removed and added while a run's mark
of it (the history it read, kept in its log for a resume) is outstanding.

The interleavings are forced (a measurer that waits for a file, a second writer opened
while the first is open), not hoped for."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iobound.errors import InvalidInputError
from search.measure.base import MeasureRecord
from search.records import read_log
from search.log_writer import LogWriter

REPO = Path(__file__).resolve().parents[2]
LAYER = "cin=4,hin=8,cout=8,kh=3,pad=1"

# The CLI with the model measurer waiting, before its PAUSE_AT-th call, until the file GO
# exists (it says so by creating GO.waiting): a long measurement, stopped at a known point.
_PAUSING_CLI = """
import os, sys, time
from search.measure import model
orig, calls = model.ModelMeasurer.measure, [0]
def measure(self, configs):
    calls[0] += 1
    if calls[0] == int(os.environ["PAUSE_AT"]):
        open(os.environ["GO"] + ".waiting", "w").close()
        while not os.path.exists(os.environ["GO"]):
            time.sleep(0.02)
    return orig(self, configs)
model.ModelMeasurer.measure = measure
from search.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _tune_args(*extra: str) -> list[str]:
    return ["tune", "--layer", LAYER, "--measure", "model", "--strategy", "random",
            "--batch-size", "2", "--budget", "12", "--no-verify", *extra]


def _main(args: list[str]) -> tuple[int, str]:
    from search.cli.main import main
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main(args)
    return rc, err.getvalue()


@pytest.mark.parametrize("new_log", [False, True])
def test_resuming_a_log_a_live_run_still_writes_is_refused(tmp_path, new_log):
    """Run A logs to run.jsonl and is stopped mid-way (its measurer waits); run B is given
    ``--resume run.jsonl`` meanwhile. B must be refused (one line, exit 2): resumed, it
    appends its own records to the file A still writes, A's later lines land over them
    (A's log is not opened to append) and the log ends in a broken line, which no resume
    reads again; resumed into a new log (``--log``), it measures what A measures too.
    Once A ends, its log holds its 12 measurements, whole."""
    script = tmp_path / "pausing_cli.py"
    script.write_text(_PAUSING_CLI)
    log, go = tmp_path / "run.jsonl", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO), "PAUSE_AT": "4", "GO": str(go)}
    a = subprocess.Popen([sys.executable, str(script), *_tune_args(
        "--log", str(log), "--out-dir", str(tmp_path / "ka"))], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not Path(str(go) + ".waiting").exists():
            assert a.poll() is None, a.stderr.read()
            assert time.monotonic() < deadline, "run A never reached its pause"
            time.sleep(0.05)
        into = ["--log", str(tmp_path / "new.jsonl")] if new_log else []
        rc, err = _main(_tune_args("--seed", "1", "--resume", str(log), *into,
                                   "--out-dir", str(tmp_path / "kb")))
    finally:
        go.touch()
        _, a_err = a.communicate(timeout=120)
    assert a.returncode == 0, a_err
    assert rc == 2 and len(err.strip().splitlines()) == 1, (rc, err)
    assert "still going" in err and not (tmp_path / "new.jsonl").exists()
    entries = read_log(log).entries  # whole: no broken line
    assert len(entries) == 12 and len({e.index for e in entries}) == 12


def test_a_second_writer_of_an_open_log_is_refused(tmp_path):
    """Two writers of one log at once (two processes, or two runs of one process) are
    refused: the second one's lines would interleave with the first one's."""
    path = tmp_path / "run.jsonl"
    with LogWriter(path, {"run": "a"}) as first:
        first.append(0, MeasureRecord.ok({"x": 0}, time_ms=1.0))
        with pytest.raises(InvalidInputError):
            LogWriter(path, {"run": "b"})
        first.append(1, MeasureRecord.ok({"x": 1}, time_ms=1.0))
    assert [e.index for e in read_log(path).entries] == [0, 1]
    with LogWriter(path) as again:  # closed (or its process ended): free to resume
        again.append(2, MeasureRecord.ok({"x": 2}, time_ms=1.0))
    assert [e.index for e in read_log(path).entries] == [0, 1, 2]


def test_writers_without_file_locks_never_write_over_each_others_lines(tmp_path, monkeypatch):
    """On a file system without locks (flock fails, as on some network mounts) two writers
    of one log are not refused; every line they write must still arrive whole: the first
    writer's next line must not land over the second one's (a new log opened to write at
    its own offset, not to append, does that)."""
    import fcntl

    def no_locks(fd, op):
        raise OSError(37, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    path = tmp_path / "run.jsonl"
    first = LogWriter(path, {"run": "a"})
    first.append(0, MeasureRecord.ok({"x": 0}, time_ms=1.0))
    second = LogWriter(path, {"run": "b"})
    second.append(1, MeasureRecord.ok({"x": 1, "pad": "a longer line than the next"}, time_ms=2.0))
    first.append(2, MeasureRecord.ok({"x": 2}, time_ms=3.0))
    first.close(), second.close()
    assert sorted(e.index for e in read_log(path).entries) == [0, 1, 2]


def test_a_mark_of_the_database_excludes_measurements_stored_after_it_across_a_remove(tmp_path):
    """``timings(up_to=mark)`` gives only the measurements stored by the time ``last_id()``
    gave the mark (a run's log keeps it so that its resume reads the history as the run
    first did). Another process removing the newest measurements and a third importing
    new ones meanwhile must not slip the new ones under the mark: SQLite gives a new row
    the largest id present + 1, i.e. the removed rows' ids again."""
    from search.db import Measurement, TuningDB, Workload
    from search.db.remove import Selection, remove

    path = tmp_path / "t.db"
    w = Workload("k", [8], ("x",))

    def ms(xs, source):
        return [Measurement(w, "v100", "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + x),
                            source=source) for x in xs]

    with TuningDB(path) as db:
        db.add(ms(range(3), "a.json"))
        db.add(ms(range(3, 6), "b.json"))
        mark = db.last_id()  # the run starts: it reads a.json's and b.json's
    with TuningDB(path) as other:  # `iobound history remove --source b.json`
        remove(other, Selection(source="b.json"))
    with TuningDB(path) as third:  # `iobound history import c.json`
        third.add(ms(range(6, 9), "c.json"))
    with TuningDB(path) as db:  # the run resumed: what it read, less what was removed
        got = sorted(m.record.config["x"] for m in db.timings(["x"], up_to=mark))
    assert got == [0, 1, 2]


def test_a_run_continuing_a_log_into_a_new_one_holds_the_old_one(tmp_path):
    """While a run resumes old.jsonl into new.jsonl, old.jsonl is held as its writer holds
    it: another run resuming it meanwhile (into any log) is refused. Once the run ends,
    both are free."""
    from search.log_writer import check_not_written
    from search.measure.base import Measurer
    from search.grid_space import GridSpace
    from search.tuner import tune
    space = GridSpace({"a": list(range(8))})
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"

    class Probe(Measurer):
        name = "probe"
        refused: list = []

        def measure(self, configs):
            try:
                check_not_written(old)
                self.refused.append(False)
            except InvalidInputError:
                self.refused.append(True)
            return [MeasureRecord.ok(c, time_ms=1.0 + c["a"]) for c in configs]

    tune(space, Probe(), "random", budget=3, seed=0, log=old)
    Probe.refused.clear()
    res = tune(space, Probe(), "random", budget=6, seed=0, resume=old, log=new)
    assert res.evaluations == 6 and Probe.refused and all(Probe.refused)
    check_not_written(old)
    check_not_written(new)
    assert len(read_log(new).entries) == 6 and len(read_log(old).entries) == 3
