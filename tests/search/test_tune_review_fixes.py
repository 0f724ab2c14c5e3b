"""Regressions from a review of `iobound tune` option combinations.

1. ``--resume`` refuses the log of another replayed problem size (older logs that record
   none still resume); 2. a refused ``--resume`` creates no ``--history`` database;
3. ``--reuse`` answers a layer from records of its shape under another name; 4. a signal
while the winner's module is imported says where the log is; 5. database export writes our
conv template under the kernel name ``--export-cache`` wrote; 6. a repeated layer's JSON
counts no measuring.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from types import SimpleNamespace

import pytest

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from search.db import TuningDB
from search.db.export import workload_cache
from search.db.importer import import_files
from search.interrupts import Interrupted
from search.kt_cache import KtCache
from search.kt_cache_write import write_cache
from search.session import TuneSettings, tune_layers
from search.session.network import network_table
from search.session.replay import tune_replay
from search.session.run import _winner
from search.tune_result import Trial

SMALL = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1, name="a")


def _cache(path, problem, scale=1.0):
    grid = [(x, y) for x in range(1, 6) for y in range(1, 4)]
    return str(write_cache(str(path), KtCache(
        tune_params={"x": [1, 2, 3, 4, 5], "y": [1, 2, 3]}, device_name="gpu", kernel_name="k",
        problem_size=problem,
        entries=[{"x": x, "y": y, "time": scale * (1.0 + abs(x - 3) + abs(y - 2))}
                 for x, y in grid])))


def _strip_problem_size(log, top_level: bool) -> None:
    """The log as an older iobound wrote it: no problem size in its space (nor, with
    ``top_level``, in its header)."""
    lines = log.read_text().splitlines()
    header = json.loads(lines[0])
    header["space"].pop("problem_size", None)
    if top_level:
        header.pop("problem_size", None)
    log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")


def test_resume_refuses_a_log_of_another_replayed_problem_size(tmp_path):
    big, small = _cache(tmp_path / "big.json", [4096, 4096]), _cache(tmp_path / "s.json", [2048, 2048])
    log, db = tmp_path / "run.jsonl", tmp_path / "h.db"
    tune_replay(big, TuneSettings(strategy="random", budget=4, seed=0, log=str(log)))
    resume = TuneSettings(strategy="random", budget=6, seed=0, resume=str(log), history=str(db))
    with pytest.raises(InvalidInputError, match="problem_size"):
        tune_replay(small, resume)
    assert not db.exists()
    _strip_problem_size(log, top_level=False)  # before the space recorded it: the header's
    with pytest.raises(InvalidInputError, match="problem_size"):
        tune_replay(small, resume)
    assert tune_replay(big, resume).result.resumed == 4  # its own problem resumes (to 6)
    _strip_problem_size(log, top_level=True)  # older still: taken as before
    assert tune_replay(small, dataclasses.replace(resume, history=None)).result.resumed == 6


def test_a_refused_resume_creates_no_history_database(tmp_path):
    log, db = tmp_path / "run.jsonl", tmp_path / "new.db"
    tune_layers([SMALL], "v100", TuneSettings(strategy="random", budget=2, log=str(log)),
                out_dir=str(tmp_path / "k"), verify=False)
    other = dataclasses.replace(SMALL, h_in=10, w_in=10)
    with pytest.raises(InvalidInputError, match="another space"):
        tune_layers([other], "v100", TuneSettings(strategy="random", budget=2, resume=str(log),
                                                  history=str(db)),
                    out_dir=str(tmp_path / "k"), verify=False)
    assert not db.exists()


def test_reuse_answers_the_same_shape_under_another_name(tmp_path):
    db = str(tmp_path / "h.db")
    run = TuneSettings(strategy="grid", budget=4, seed=0, history=db)
    tune_layers([SMALL], "v100", run, out_dir=str(tmp_path / "k"), verify=False)
    [rep] = tune_layers([dataclasses.replace(SMALL, name="b")], "v100",
                        dataclasses.replace(run, reuse=True), out_dir=str(tmp_path / "k"),
                        verify=False)
    assert rep.result.reused == rep.result.evaluations == 4


def test_a_signal_while_the_winner_module_is_imported_names_the_log(monkeypatch):
    class Boom:
        def find_spec(self, name, path=None, target=None):
            if name == "search.winner":
                raise KeyboardInterrupt("SIGINT")
    monkeypatch.delitem(sys.modules, "search.winner", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Boom(), *sys.meta_path])
    trial = Trial(0, {"x": 1}, None)
    result = SimpleNamespace(best=trial, trials=(trial, trial))
    job = SimpleNamespace(settings=TuneSettings(log="run.jsonl"), resume_as=None)
    with pytest.raises(KeyboardInterrupt) as exc:  # caught as such: a bare one fails, not stops, pytest
        _winner(job, result)
    assert isinstance(exc.value, Interrupted)
    assert "2 measurements kept in run.jsonl; resume with --resume run.jsonl" in str(exc.value)


def test_database_export_of_a_tuned_layer_keeps_the_exported_kernel_name(tmp_path):
    exported = tmp_path / "e.json"
    tune_layers([SMALL], "v100", TuneSettings(strategy="random", budget=3,
                                              export_cache=str(exported)),
                out_dir=str(tmp_path / "k"), verify=False)
    with TuningDB(str(tmp_path / "x.db")) as db:
        import_files(db, str(exported))
        [w] = db.workloads()
        back = workload_cache(db, w, "V100-SXM2")
    assert back.kernel_name == json.loads(exported.read_text())["kernel_name"] == "iobound_direct"


def test_a_repeated_layers_counts_describe_no_measuring(tmp_path):
    reports = tune_layers([SMALL, dataclasses.replace(SMALL, name="b")], "v100",
                          TuneSettings(strategy="random", budget=2, seed=0),
                          out_dir=str(tmp_path / "k"), verify=False)
    first, repeat = (r.to_dict() for r in reports)
    assert repeat["same_as"] == "a" and repeat["best"] == first["best"]
    assert (repeat["evaluations"], repeat["statuses"], repeat["rounds"], repeat["resumed"],
            repeat["reused"]) == (0, {}, 0, 0, 0) and "history" not in repeat
    for d in (first, repeat):
        assert sum(d["statuses"].values()) == d["evaluations"]
    table = network_table(reports)
    assert [r["evaluations"] for r in table["layers"]] == [2, 0] and table["evaluations"] == 2
    assert table["layers"][1]["best_config"] == first["best"]["config"]
