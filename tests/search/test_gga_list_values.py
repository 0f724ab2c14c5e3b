"""``gga`` with history on a space whose parameter values are lists (Kernel Tuner block shapes).

Flat lists are parameter values like any other (:func:`search.kt_cache.is_param_value`);
the guided GA's history weights used to take them as dict keys and failed with
``TypeError: unhashable type: 'list'``.
"""

from __future__ import annotations

import json

import numpy as np

from search.cli.main import main
from search.db import TuningDB
from search.db.importer import import_files
from search.measure.replay import ReplayMeasurer
from search.replay_space import ReplaySpace
from search.session import TuneSettings
from search.session.replay import tune_replay
from search.strategies.gga import GuidedGAStrategy, options_from_db
from search.strategies.gga_history import filter_history
from search.tuner import tune

BLOCKS = [[1, 1], [2, 1], [4, 2], [8, 2]]
PARAMS = {"blk": BLOCKS, "t": list(range(8))}


def _cache(tmp_path, device: str, best_block: int) -> str:
    """A recorded space over ``PARAMS`` on ``device``, fastest at ``BLOCKS[best_block]``, t=2."""
    cache = {}
    for k, blk in enumerate(BLOCKS):
        for t in PARAMS["t"]:
            cache[f"{blk},{t}"] = {"blk": blk, "t": t,
                                   "time": 1.0 + abs(k - best_block) + 0.5 * abs(t - 2)}
    path = tmp_path / f"list_{device}.json"
    path.write_text(json.dumps({"device_name": device, "kernel_name": "k", "problem_size": [64],
                                "tune_params_keys": list(PARAMS), "tune_params": PARAMS,
                                "objective": "time", "cache": cache}))
    return str(path)


def _db(tmp_path) -> tuple[str, str]:
    """(a database holding gpuA's records, the path of gpuB's recorded space)."""
    db = str(tmp_path / "list.db")
    with TuningDB(db) as handle:
        import_files(handle, [_cache(tmp_path, "gpuA", 1)])
    return db, _cache(tmp_path, "gpuB", 2)


def test_history_weights_keep_list_values(tmp_path):
    """Each parameter's history weights hold the recorded values themselves, lists included."""
    db, target = _db(tmp_path)
    space = ReplaySpace(target)
    f = filter_history(space, options_from_db(db, space, [64]).history, [64])
    blocks = [v for v, _ in f.value_weights["blk"]]
    assert sorted(blocks) == sorted(BLOCKS) and f.usable == len(space)


def test_gga_with_history_tunes_a_list_valued_space(tmp_path):
    """Seeding, crossover and experience mutation all run on list values; asks stay valid."""
    db, target = _db(tmp_path)
    space = ReplaySpace(target)
    opts = options_from_db(db, space, [64], exclude_devices=["gpuB"], population=4,
                           batch_size=4)
    s = GuidedGAStrategy(space, opts, rng=np.random.default_rng(0))
    res = tune(space, ReplayMeasurer(space.cache), s, budget=24)
    assert len({t.index for t in res.trials}) == 24
    st = s.stats()
    assert st["history"]["used"] and st["experience_mutation"] > 0


def test_tune_replay_gga_with_a_list_valued_history(tmp_path):
    """A session tuning a list-valued recorded space with ``gga`` and ``history`` finishes."""
    db, target = _db(tmp_path)
    report = tune_replay(target, TuneSettings(strategy="gga", budget=6, history=db))
    assert len(report.result.trials) == 6


def test_cli_tune_gga_with_a_list_valued_history(tmp_path, capsys):
    """``iobound tune --strategy gga --history`` on a list-valued space: exit 0, no traceback."""
    db, target = _db(tmp_path)
    code = main(["tune", "--measure", f"replay:{target}", "--strategy", "gga", "--history", db,
                 "--budget", "6"])
    assert code == 0, capsys.readouterr().err
