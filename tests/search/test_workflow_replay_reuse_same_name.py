"""``tune --measure replay:FILE --history DB --reuse`` after replaying another cache file
of the same base name (``v1/cache.json`` then ``v2/cache.json``: the same GPU, kernel and
problem, re-measured).

A replayed "measurement" is the file's own entry (search/measure/replay.py). README:
``--reuse`` answers "a configuration of this layer the database holds a measurement of
on this device with this toolchain" instead of measuring it again: for a replay that must
be what *this* file records. The replay's toolchain names the file by its base name only
(``replay:cache.json:<device>``), so before, the second run was answered entirely from the
first file: it reported v1's times as v2's best and "best found is 200.0% of optimal
speed". The reference is the second file's own entries.
"""

from __future__ import annotations

import json

from search.cli.main import main
from tests.search.conftest import synth_cache_dict


def _write(path, factor):
    raw = synth_cache_dict()
    for e in raw["cache"].values():
        if not isinstance(e["time"], str):
            e["time"] = e["time"] * factor
            e["times"] = [t * factor for t in e["times"]]
    path.parent.mkdir()
    path.write_text(json.dumps(raw))
    return raw


def _tune(capsys, *argv):
    code = main(["tune", *argv, "--budget", "12", "--strategy", "random", "--seed", "0",
                 "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_reuse_answers_a_replay_only_with_this_files_entries(tmp_path, capsys):
    v1, v2 = tmp_path / "v1" / "cache.json", tmp_path / "v2" / "cache.json"
    _write(v1, 1.0)
    raw2 = _write(v2, 2.0)
    db = str(tmp_path / "h.db")
    _tune(capsys, "--measure", f"replay:{v1}", "--history", db)
    res = _tune(capsys, "--measure", f"replay:{v2}", "--history", db, "--reuse")
    keys = raw2["tune_params_keys"]
    recorded = {tuple(e[k] for k in keys): e["time"] for e in raw2["cache"].values()}
    best = res["best"]
    assert best["time_ms"] == recorded[tuple(best["config"][k] for k in keys)]
    # the recorded optimum bounds what any search of this file can find
    optimum = min(t for t in recorded.values() if not isinstance(t, str))
    assert best["time_ms"] >= optimum
