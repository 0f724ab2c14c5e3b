"""``iobound tune`` with history: what it refuses, what it notices, what it says.

- zero-shot (``--zero-shot K`` or ``--strategy zero_shot``) without history records of
  the space to rank with is one line, exit 2, nothing measured; ``gga`` without them runs
  as plain GA and says so in one stderr line;
- ``--zero-shot K`` refuses an explicit ``--strategy`` or ``--budget`` it would override,
  and a ``--resume`` log that already holds more than K measurements (or any of another strategy);
- a database holding workloads of other parameters gives every strategy the same notice.
"""

from __future__ import annotations

import gzip
import json

import pytest

from search.cli.main import main
from search.db import TuningDB
from search.db.importer import import_files
from search.records import read_log
from search.session import TuneSettings, history_options
from tests.search.conftest import synth_cache_dict

OTHER_PARAMS = "workload(s) in {db} have other parameters: not used"


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _cache(tmp_path, name: str, edit=None):
    """The synthetic space as recorded on another device, changed by ``edit(dict)``."""
    d = synth_cache_dict()
    d["device_name"] = name
    if edit is not None:
        edit(d)
    path = tmp_path / f"{name.replace(' ', '_')}.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump(d, fh)
    return path


def _two_params(d):
    """A workload of other parameter names (bx, by only)."""
    d["tune_params_keys"] = ["bx", "by"]
    d["tune_params"] = {"bx": d["tune_params"]["bx"], "by": d["tune_params"]["by"]}
    d["cache"] = {f"{bx},{by}": {"bx": bx, "by": by, "time": 1.0 + bx / 100}
                  for bx in d["tune_params"]["bx"] for by in d["tune_params"]["by"]}


def _outside(d):
    """The same parameter names, but no configuration of the synthetic space."""
    d["tune_params"] = {**d["tune_params"], "bx": [1024, 2048]}  # a copy: it is conftest's
    d["cache"] = {f"{bx},1,1,0": {"bx": bx, "by": 1, "tile": 1, "shm": 0, "time": bx / 1000}
                  for bx in (1024, 2048)}


def _db(tmp_path, *caches):
    db = tmp_path / "h.db"
    with TuningDB(db) as handle:
        import_files(handle, list(caches))
    return db


def _replay(cache):
    return ["tune", "--measure", f"replay:{cache}"]


@pytest.mark.parametrize("history", ["new", "empty", "other_params", "outside"])
@pytest.mark.parametrize("how", [["--zero-shot", "3"], ["--strategy", "zero_shot"]])
def test_zero_shot_without_usable_history_is_refused(capsys, tmp_path, synth_cache_path,
                                                     history, how):
    """No record of this space to rank with (a new or empty database, other parameters only,
    no configuration of this space): one line naming the database, exit 2, no log."""
    if history == "new":
        db = tmp_path / "new.db"
    elif history == "empty":
        db = _db(tmp_path)
    else:
        db = _db(tmp_path, _cache(tmp_path, "Other GPU",
                                  _two_params if history == "other_params" else _outside))
    log = tmp_path / "run.jsonl"
    code, out, err = _run(capsys, *_replay(synth_cache_path), *how, "--history", db,
                          "--log", log)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert "zero-shot tuning needs history records of this parameter space" in lines[0]
    assert str(db) in lines[0] and not log.exists()
    assert history != "new" or not db.exists()  # refused before a database is created


def test_zero_shot_strategy_without_history_is_refused(capsys, synth_cache_path):
    """--strategy zero_shot without --history: one line asking for it, exit 2."""
    code, _, err = _run(capsys, *_replay(synth_cache_path), "--strategy", "zero_shot")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--history" in err


@pytest.mark.parametrize("with_db", [True, False])
def test_gga_without_usable_history_runs_plain_ga_with_a_notice(capsys, tmp_path,
                                                                synth_cache_path, with_db):
    """gga falls back to plain GA, and one stderr line says so (not only the JSON)."""
    extra = ["--history", _db(tmp_path)] if with_db else []
    code, out, err = _run(capsys, *_replay(synth_cache_path), "--strategy", "gga",
                          "--budget", 8, *extra)
    lines = err.strip().splitlines()
    assert code == 0 and len(lines) == 1, err
    assert lines[0].startswith("notice: gga: ") and lines[0].endswith("running as plain ga")


@pytest.mark.parametrize("extra, message", [
    (["--strategy", "explorer"],
     "--zero-shot K runs strategy zero_shot; do not give --strategy explorer"),
    (["--budget", "20"], "--zero-shot K measures K configurations; do not give --budget 20"),
])
def test_zero_shot_refuses_an_option_it_would_override(capsys, tmp_path, synth_cache_path,
                                                      extra, message):
    db = _db(tmp_path, _cache(tmp_path, "Other GPU"))
    code, _, err = _run(capsys, *_replay(synth_cache_path), "--history", db, "--zero-shot", 5,
                        *extra)
    assert code == 2 and err.strip() == f"iobound tune: error: {message}"


def test_zero_shot_with_the_same_strategy_and_budget_runs(capsys, tmp_path, synth_cache_path):
    """Giving what --zero-shot implies is no conflict."""
    db = _db(tmp_path, _cache(tmp_path, "Other GPU"))
    code, out, _ = _run(capsys, *_replay(synth_cache_path), "--history", db, "--zero-shot", 5,
                        "--strategy", "zero_shot", "--budget", 5, "--json")
    assert code == 0 and json.loads(out)["evaluations"] == 5


def test_zero_shot_resume_of_a_longer_log_is_refused(capsys, tmp_path, synth_cache_path):
    """A log of 13 measurements cannot be the top 5: refused, the log untouched; a log
    shorter than K is continued up to K."""
    db, log = _db(tmp_path, _cache(tmp_path, "Other GPU")), tmp_path / "run.jsonl"
    assert _run(capsys, *_replay(synth_cache_path), "--budget", 13, "--log", log)[0] == 0
    code, _, err = _run(capsys, *_replay(synth_cache_path), "--history", db, "--zero-shot", 5,
                        "--resume", log)
    assert code == 2 and err.strip() == (f"iobound tune: error: --resume {log} already holds "
                                         f"13 measurements, more than --zero-shot 5")
    assert len(read_log(log).entries) == 13
    short = tmp_path / "short.jsonl"
    assert _run(capsys, *_replay(synth_cache_path), "--history", db, "--budget", 3,
                "--strategy", "zero_shot", "--log", short)[0] == 0
    code, out, _ = _run(capsys, *_replay(synth_cache_path), "--history", db, "--zero-shot", 5,
                        "--resume", short, "--json")
    assert code == 0 and json.loads(out)["evaluations"] == 5 and json.loads(out)["resumed"] == 3


@pytest.mark.parametrize("strategy", ["explorer", "sa", "ga", "gga", "zero_shot", "random",
                                      "grid"])
def test_other_parameters_notice_is_the_same_for_every_strategy(tmp_path, synth_space,
                                                                strategy):
    """Matching and other-parameter workloads: every strategy names the ones left out."""
    db = _db(tmp_path, _cache(tmp_path, "Other GPU"), _cache(tmp_path, "Two", _two_params))
    _, use, _ = history_options(TuneSettings(strategy=strategy, history=str(db)), synth_space,
                                None)
    assert use.records > 0
    assert use.notice.split("; ")[0] == "1 " + OTHER_PARAMS.format(db=db)


def test_explorer_prints_the_other_parameters_notice(capsys, tmp_path, synth_cache_path):
    db = _db(tmp_path, _cache(tmp_path, "Other GPU"), _cache(tmp_path, "Two", _two_params))
    code, out, _ = _run(capsys, *_replay(synth_cache_path), "--history", db, "--budget", 4)
    assert code == 0 and f"(1 {OTHER_PARAMS.format(db=db)})" in out


def test_history_is_every_record_of_the_space_but_the_resumed_log(capsys, tmp_path,
                                                                  synth_cache_path):
    """What --history's help says: an earlier run of the same space on the same device is
    history; the records of the log a run resumes are not."""
    with pytest.raises(SystemExit):
        main(["tune", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert ("earlier runs of this layer on this device included" in text
            and "not those of the log --resume continues" in text)
    db, log = tmp_path / "h.db", tmp_path / "run.jsonl"
    first = ["--strategy", "random", "--history", db, "--json"]
    assert _run(capsys, *_replay(synth_cache_path), *first, "--budget", 10, "--log", log)[0] == 0
    code, out, _ = _run(capsys, *_replay(synth_cache_path), *first, "--budget", 12,
                        "--resume", log)
    assert code == 0 and json.loads(out)["history"]["records"] == 0  # its own, not history
    timed = sum(e.record.is_ok and e.record.time_ms is not None for e in read_log(log).entries)
    code, out, _ = _run(capsys, *_replay(synth_cache_path), "--history", db, "--budget", 4,
                        "--json")
    history = json.loads(out)["history"]
    assert code == 0 and history["used"] is True and history["devices"] == ["Synthetic GPU"]
    assert history["records"] == timed  # every timed record of the earlier run on this device


def test_a_cache_naming_no_device_is_stored_under_its_file_name(capsys, tmp_path):
    """Tuning a recorded file that names no device stores its measurements under the file's
    name, the device ``history import`` gives the same file, instead of failing to write."""
    def unnamed(d):
        d["device_name"] = ""
    cache = _cache(tmp_path, "conv_unnamed", unnamed)
    db = tmp_path / "h.db"
    code, _, err = _run(capsys, *_replay(cache), "--history", db, "--budget", 4)
    assert code == 0, err
    with TuningDB(db) as handle:
        import_files(handle, [cache])
        devices = {m.device for w in handle.workloads() for m in handle.measurements(w)}
    assert devices == {"conv_unnamed"}


def test_zero_shot_resume_of_another_strategys_log_is_refused(capsys, tmp_path, synth_cache_path):
    """Measurements of another strategy are not the history's top K, however few: refused
    (one line, exit 2, the log untouched) rather than counted toward K in place of the
    ranking's own; the NDCG a zero-shot run reports is at the K its ranking measured."""
    db, log = _db(tmp_path, _cache(tmp_path, "Other GPU")), tmp_path / "run.jsonl"
    assert _run(capsys, *_replay(synth_cache_path), "--strategy", "random", "--budget", 2,
                "--log", log)[0] == 0
    code, _, err = _run(capsys, *_replay(synth_cache_path), "--history", db, "--zero-shot", 5,
                        "--resume", log)
    assert code == 2 and err.strip() == (
        f"iobound tune: error: --resume {log} holds 2 measurements of strategy 'random', not "
        f"of a zero-shot run; --zero-shot resumes only a zero-shot log")
    assert len(read_log(log).entries) == 2
    code, out, _ = _run(capsys, *_replay(synth_cache_path), "--history", db, "--zero-shot", 4,
                        "--json")
    stats = json.loads(out)["strategy_stats"]
    assert code == 0 and stats["ndcg_k"] == 4 and 0 <= stats["ndcg_at_k"] <= 1
    code, out, _ = _run(capsys, *_replay(synth_cache_path), "--history", db, "--zero-shot", 4)
    assert code == 0 and "zero-shot ranking: NDCG@4 = " in out
