"""Seed None in a tuning session, with and without history (search/session/history_use.py).

Reference: TuneSettings accepts ``seed=None``, which tune() and with_history() read as
seed 0; a guided strategy with history passed the None on to the prior, which refused it,
so the same settings that ran without history failed with it."""

from __future__ import annotations

import json

from search.cli.main import main
from search.session import TuneSettings, tune_replay
from tests.search.conftest import synth_cache_dict


def _files(tmp_path):
    target = tmp_path / "t.json"
    target.write_text(json.dumps(synth_cache_dict()))
    other = synth_cache_dict()
    other["device_name"] = "Other GPU"
    (tmp_path / "o.json").write_text(json.dumps(other))
    db = str(tmp_path / "h.db")
    assert main(["history", "import", str(tmp_path / "o.json"), "--db", db]) == 0
    return str(target), db


def test_seed_none_runs_without_history_and_with_gga(tmp_path):
    target, db = _files(tmp_path)
    assert tune_replay(target, TuneSettings(strategy="explorer", budget=6, seed=None)).result
    assert tune_replay(target, TuneSettings(strategy="gga", budget=6, seed=None, history=db)).result


def test_seed_none_runs_a_guided_strategy_with_history(tmp_path):
    target, db = _files(tmp_path)
    rep = tune_replay(target, TuneSettings(strategy="explorer", budget=6, seed=None, history=db))
    assert rep.history_use.used
    zero = tune_replay(target, TuneSettings(strategy="explorer", budget=6, seed=0, history=db))
    assert [t.index for t in rep.result.trials] == [t.index for t in zero.result.trials]
