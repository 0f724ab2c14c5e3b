"""A run that reused database records (``--history DB --reuse``) resumes exactly.

References: search/tuner.py ("a resumed run follows the interrupted run's path exactly")
and search/session/history_use.py (a resumed log's records are the run's own, left out of
its history; those it reused from the database are earlier runs', history as before).
The log marks a reused record (``"reused": true``); before it did, a resume took them
for the run's own, its history shrank and its path changed."""

from __future__ import annotations

import json
import shutil

import pytest

from search.cli.main import main
from search.interrupts import Interrupted
from search.records import read_log
from search.session import Observer, TuneSettings, tune_replay
from tests.search.conftest import synth_cache_dict


class StopAfter(Observer):
    def __init__(self, n):
        self.n = n

    def progress(self, done, budget, best):
        self.n -= 1
        if self.n == 0:
            raise KeyboardInterrupt


def _other_device(tmp_path):
    other = synth_cache_dict()
    other["device_name"] = "Second GPU"
    for e in other["cache"].values():
        if not isinstance(e["time"], str):
            e["time"] = round(e["time"] * (1.0 + 0.3 * ((e["bx"] * 13 + e["tile"] * 7 + e["by"]) % 4)), 6)
            e.pop("times", None)
    path = tmp_path / "other.json"
    path.write_text(json.dumps(other))
    return path


def test_resumed_guided_run_with_reuse_follows_the_uninterrupted_path(tmp_path):
    target = tmp_path / "target.json"
    target.write_text(json.dumps(synth_cache_dict()))
    db, ref_db = str(tmp_path / "h.db"), str(tmp_path / "ref.db")
    assert main(["history", "import", str(_other_device(tmp_path)), "--db", db]) == 0
    # an earlier run of this very space on this device: reusable, and history
    tune_replay(str(target), TuneSettings(strategy="random", budget=25, seed=9, history=db))
    shutil.copy(db, ref_db)
    kw = dict(strategy="explorer", budget=30, seed=3, reuse=True)

    ref = tune_replay(str(target), TuneSettings(history=ref_db, **kw))
    assert any(t.reused for t in ref.result.trials)

    log = str(tmp_path / "run.jsonl")
    with pytest.raises(Interrupted):
        tune_replay(str(target), TuneSettings(history=db, log=log, **kw), observer=StopAfter(9))
    res = tune_replay(str(target), TuneSettings(history=db, resume=log, **kw))

    # the history the resumed run learns from is the one the run started with
    assert res.history_use.records == ref.history_use.records
    assert [t.index for t in res.result.trials] == [t.index for t in ref.result.trials]
    logged = read_log(log).entries
    assert any(e.reused for e in logged) and not all(e.reused for e in logged)
    assert {e.index for e in logged if e.reused} <= {t.index for t in ref.result.trials if t.reused}


def test_the_reused_mark_reads_back_and_old_lines_are_measured(tmp_path):
    """Property of the log format: the mark is written only on reused records, read back
    as written; a line without it (every log before the mark) is the run's own."""
    from search.measure.base import MeasureRecord
    from search.log_writer import LogWriter
    path = tmp_path / "run.jsonl"
    with LogWriter(path, header={"strategy": "random"}) as w:
        w.append(0, MeasureRecord.ok({"a": 0}, time_ms=1.0))
        w.append(1, MeasureRecord.ok({"a": 1}, time_ms=2.0), reused=True)
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert ["reused" in line for line in lines] == [False, True]
    assert [e.reused for e in read_log(path).entries] == [False, True]


@pytest.mark.parametrize("strategy", ["explorer", "gga"])
def test_a_resume_naming_the_layer_otherwise_takes_none_of_its_own_records_as_history(
        tmp_path, strategy):
    """--resume takes a log of the same layer under another name (the name is no part of
    the space); its records, stored when it was interrupted, are still the run's own, never
    its history (they were left out only where the stored layer, name included, was equal)."""
    from iobound.layer_spec import parse_layer_spec
    from iobound.networks import get_layer
    from search.session import tune_layers
    named, spec = get_layer("resnet18.conv2_1a"), parse_layer_spec("cin=64,hin=56,cout=64,kh=3,pad=1")
    kw = dict(strategy=strategy, budget=12, seed=0, options={"batch_size": 2})
    db, log = str(tmp_path / "h.db"), str(tmp_path / "run.jsonl")

    def run(layer, settings, observer=None):
        return tune_layers([layer], "v100", settings, out_dir=str(tmp_path / "k"), verify=False,
                           observer=observer)
    with pytest.raises(Interrupted):
        run(named, TuneSettings(history=db, log=log, **kw), StopAfter(5))
    [res] = run(spec, TuneSettings(history=db, resume=log, **kw))
    assert res.history_use.records == 0  # the database holds only the run's own records


def test_a_new_log_beside_a_resumed_one_holds_the_whole_run(tmp_path):
    """``--log NEW --resume OLD``: NEW starts with OLD's records, so when the run is
    interrupted again the log its message names holds every measurement and a resume from
    it alone measures nothing twice (NEW held only the new records: the rest were measured
    again)."""
    from iobound.networks import get_layer
    from search.session import tune_layers
    layer = get_layer("resnet18.conv2_1a")
    old, new = str(tmp_path / "old.jsonl"), str(tmp_path / "new.jsonl")
    kw = dict(strategy="random", budget=12, seed=0, options={"batch_size": 2})

    def run(settings, observer=None):
        return tune_layers([layer], "v100", settings, out_dir=str(tmp_path / "k"), verify=False,
                           observer=observer)
    with pytest.raises(Interrupted):
        run(TuneSettings(log=old, **kw), StopAfter(4))
    first = read_log(old).entries
    with pytest.raises(Interrupted) as info:
        run(TuneSettings(log=new, resume=old, **kw), StopAfter(3))
    assert info.value.resume_as == new
    got = read_log(new).entries
    assert len(got) == info.value.measurements == len(first) + 3
    assert [(e.index, e.record) for e in got[:len(first)]] == [(e.index, e.record) for e in first]
    [res] = run(TuneSettings(resume=new, **kw))
    assert sum(not t.resumed for t in res.result.trials) == 12 - len(got)
