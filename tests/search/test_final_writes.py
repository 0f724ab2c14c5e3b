"""A write that fails at the end of ``iobound tune`` keeps the log and says where it is."""

from __future__ import annotations

import errno
import json

from search.cli.main import main
from search.records import read_log


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_export_fails_at_the_end_log_kept_history_written(capsys, tmp_path, synth_cache_path,
                                                           monkeypatch):
    """Disk full while exporting: one line naming the export and the log, exit 1; the
    history is still stored and the log holds every measurement."""
    from search.session import storage
    monkeypatch.setattr(storage, "export_cache", _disk_full)
    log, db = tmp_path / "run.jsonl", tmp_path / "h.db"
    code = main(["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "8",
                 "--log", str(log), "--history", str(db), "--export-cache", str(tmp_path / "x.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert err[0] == (f"iobound tune: error: could not write --export-cache {tmp_path / 'x.json'} "
                      f"(No space left on device); the 8 measurements are kept in {log} "
                      f"(resume with --resume {log})")
    assert len(read_log(log).entries) == 8
    from search.history import History
    with History(str(db)) as h:
        assert sum(len(h.records(k)) for k in h.keys()) == 8


def test_export_disk_full_inside_the_cache_writer_is_the_same_end(capsys, tmp_path,
                                                                  synth_cache_path, monkeypatch):
    """The disk filling up inside the real writer (an OutputWriteError of its own) is the
    end-of-run failure above: exit 1, where the log is."""
    import search.kt_cache_write as writer
    monkeypatch.setattr(writer, "write_atomic", _disk_full)
    log = tmp_path / "run.jsonl"
    code = main(["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "8",
                 "--log", str(log), "--export-cache", str(tmp_path / "x.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert "could not write --export-cache" in err[0] and "No space left on device" in err[0]
    assert f"kept in {log}" in err[0] and len(read_log(log).entries) == 8


def test_kernel_write_fails_at_the_end(capsys, tmp_path, monkeypatch):
    """The winner's .cu cannot be written: one line, exit 1, the log kept."""
    import search.winner
    monkeypatch.setattr(search.winner, "write_kernel", _disk_full)
    log = tmp_path / "run.jsonl"
    code = main(["tune", "--layer", "cin=8,hin=8,cout=16,kh=3,pad=1", "--measure", "model",
                 "--strategy", "random", "--budget", "4", "--log", str(log),
                 "--out-dir", str(tmp_path), "--no-verify"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "Traceback" not in err[0], err
    assert err[0].startswith(f"iobound tune: error: could not write the kernel into --out-dir {tmp_path} "
                             f"(No space left on device); the 4 measurements are kept in {log}")
    assert len(read_log(log).entries) == 4


def test_kernel_disk_full_inside_the_writer_is_the_same_end(capsys, tmp_path, monkeypatch):
    """The disk filling up inside the real kernel writer was exit 2 ("cannot write the best
    kernel ...", as if bad input) naming no log; it is the end-of-run failure: exit 1."""
    import search.outputs
    monkeypatch.setattr(search.outputs, "write_atomic", _disk_full)
    log = tmp_path / "run.jsonl"
    code = main(["tune", "--layer", "cin=8,hin=8,cout=16,kh=3,pad=1", "--measure", "model",
                 "--strategy", "random", "--budget", "4", "--log", str(log),
                 "--out-dir", str(tmp_path / "kk"), "--no-verify"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert "could not write the kernel into --out-dir" in err[0] and "No space left" in err[0]
    assert f"kept in {log}" in err[0] and len(read_log(log).entries) == 4


def test_history_that_went_bad_during_the_run_keeps_the_log(capsys, tmp_path, synth_cache_path,
                                                             monkeypatch):
    """The --history file replaced by a folder while the run went on: one line naming the
    history and the log, exit 1; the export is still written."""
    db, log, out = tmp_path / "h.db", tmp_path / "run.jsonl", tmp_path / "x.json"
    from search.session import storage
    real = storage.store_history

    def replaced(path, *args):
        for end in ("", "-wal", "-shm"):
            (tmp_path / f"h.db{end}").unlink(missing_ok=True)
        db.mkdir()
        return real(path, *args)
    monkeypatch.setattr(storage, "store_history", replaced)
    code = main(["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "8",
                 "--log", str(log), "--history", str(db), "--export-cache", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"iobound tune: error: could not write --history {db} (is a folder")
    assert out.is_file() and len(read_log(log).entries) == 8


def test_history_refusing_the_records_keeps_the_log(capsys, tmp_path, monkeypatch):
    """The database refuses the records after the run (here: it raises as a file gone bad
    would): the history is not written, one line says why and where the log is, exit 1."""
    import sqlite3

    from search.db.store import TuningDB
    from tests.search.conftest import synth_cache_dict

    def refuse(self, *args, **kwargs):
        raise sqlite3.DatabaseError("database disk image is malformed")
    monkeypatch.setattr(TuningDB, "add", refuse)
    cache, log, db = tmp_path / "c.json", tmp_path / "run.jsonl", tmp_path / "h.db"
    cache.write_text(json.dumps(synth_cache_dict()))
    code = main(["tune", "--measure", f"replay:{cache}", "--budget", "4", "--log", str(log),
                 "--history", str(db)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"iobound tune: error: could not write --history {db} (")
    assert "malformed" in err[0] and f"kept in {log}" in err[0] and len(read_log(log).entries) == 4


def test_replay_problem_size_holding_nan_is_refused_before_the_run(capsys, tmp_path):
    """A recorded problem size holding NaN (which the database refuses as a workload's
    identity) is refused before anything is measured: one line, exit 2, no log."""
    from tests.search.conftest import synth_cache_dict
    cache, log = tmp_path / "nan.json", tmp_path / "run.jsonl"
    cache.write_text(json.dumps({**synth_cache_dict(), "problem_size": [float("nan"), 64]}))
    code = main(["tune", "--measure", f"replay:{cache}", "--budget", "4", "--log", str(log),
                 "--history", str(tmp_path / "h.db")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "NaN" in err[0], err
    assert not log.exists()


def test_network_json_that_cannot_be_written_whole_leaves_the_old_table(tmp_path):
    """The --network-json write fails part-way (here: a file size limit, as a full disk
    would): the table an earlier run wrote there is kept whole, nothing cut off is left
    (it was opened with "w", so the old table was emptied and a cut-off one left)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    table, old = tmp_path / "net.json", '{"old": true}\n'
    table.write_text(old)
    code = f"""
import resource, signal, sys
from types import SimpleNamespace
from search.cli import tune_network
from search.session.files import OutputWriteError
tune_network._table = lambda *args: {{"layers": [{{"layer": "l%d" % i, "x": "y" * 40}} for i in range(50)]}}
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
resource.setrlimit(resource.RLIMIT_FSIZE, (200, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
try:
    tune_network.write_network_json({str(table)!r}, None, [], [], None, "model")
except OutputWriteError as exc:
    print(exc)
"""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"could not write --network-json {table} (File too large)")
    assert table.read_text() == old and json.loads(old)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net.json"]
