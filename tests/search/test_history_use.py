"""What `tune --history` hands the strategies: gga and zero_shot learn from the database."""

from __future__ import annotations

import gzip
import json

import numpy as np

from search.cli.main import main
from search.db import TuningDB
from search.db.importer import import_files
from search.session import TuneSettings, history_options
from search.strategies.zero_shot import ZeroShotStrategy
from tests.search.conftest import synth_cache_dict


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _other_device_cache(tmp_path, scale=1.5, name="Other GPU"):
    """The synthetic space recorded on another device: every time scaled (same order)."""
    d = synth_cache_dict()
    d["device_name"] = name
    for e in d["cache"].values():
        if not isinstance(e["time"], str):
            e["time"] = round(e["time"] * scale, 6)
            e["times"] = [e["time"]]
    path = tmp_path / f"{name.replace(' ', '_')}.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump(d, fh)
    return path


def test_zero_shot_measures_the_history_top_first(capsys, tmp_path, synth_cache_path, synth_optimum):
    """History of another device with the same order: zero-shot K=3 finds the optimum, and
    the JSON says which history was used and how good the ranking is (NDCG@3)."""
    db = tmp_path / "h.db"
    assert _run(capsys, "history", "import", _other_device_cache(tmp_path), "--db", db)[0] == 0
    code, out, _ = _run(capsys, "tune", "--measure", f"replay:{synth_cache_path}", "--history", db,
                        "--zero-shot", 3, "--json")
    d = json.loads(out)
    assert code == 0 and d["evaluations"] == 3 and d["strategy"] == "zero_shot"
    assert d["history"]["used"] is True and d["history"]["devices"] == ["Other GPU"]
    assert d["best"]["time_ms"] <= synth_optimum * 1.2
    assert 0.0 < d["strategy_stats"]["ndcg_at_k"] <= 1.0
    assert d["strategy_stats"]["order"] == "model"  # one device: nothing to leave out
    code, out, _ = _run(capsys, "tune", "--measure", f"replay:{synth_cache_path}", "--history", db,
                        "--zero-shot", 3)
    assert code == 0 and "zero-shot order: the history model's" in out


def test_zero_shot_needs_history(capsys, synth_cache_path):
    """--zero-shot without --history is one line and exit 2."""
    code, out, err = _run(capsys, "tune", "--measure", f"replay:{synth_cache_path}", "--zero-shot", 3)
    assert code == 2 and "--history" in err and len(err.strip().splitlines()) == 1


def test_history_of_other_parameters_is_not_used(other_params_db, synth_space):
    """A workload with other parameter names is left out, with a notice; gga gets nothing."""
    db = other_params_db
    options, use, prior = history_options(TuneSettings(strategy="gga", history=str(db)),
                                          synth_space, None)
    assert use.records == 0 and not use.used and "other parameters" in use.notice
    assert options.history == () and prior is None


def test_random_search_does_not_use_history(tmp_path, synth_space):
    """Random search does not learn from history: the records are counted, not used."""
    db = tmp_path / "h.db"
    with TuningDB(db) as handle:
        import_files(handle, [_other_device_cache(tmp_path)])
    _, use, prior = history_options(TuneSettings(strategy="random", history=str(db)),
                                    synth_space, None)
    assert use.records > 0 and not use.used and "does not learn from history" in use.notice
    assert prior is None


def test_explorer_with_history_starts_from_it(capsys, tmp_path, synth_cache_path, synth_optimum):
    """The explorer under history guidance: another device with the same order puts the
    first round on the optimum; the JSON reports the history as used."""
    db = tmp_path / "h.db"
    assert _run(capsys, "history", "import", _other_device_cache(tmp_path), "--db", db)[0] == 0
    code, out, _ = _run(capsys, "tune", "--measure", f"replay:{synth_cache_path}", "--history", db,
                        "--budget", 4, "--json")
    d = json.loads(out)
    assert code == 0 and d["history"]["used"] is True and d["history"]["records"] > 0
    assert d["best"]["time_ms"] == synth_optimum


def test_zero_shot_strategy_never_repeats(synth_space):
    """Without history the order is a random permutation: every index once."""
    s = ZeroShotStrategy(synth_space, rng=np.random.default_rng(1))
    asked = s.ask(len(synth_space) + 5)
    assert sorted(asked) == list(range(len(synth_space))) and s.ask(3) == []



def test_every_strategy_reports_the_same_history_records(capsys, tmp_path):
    """"records" is what the database held for this space, whichever strategy reads it: on
    our conv template a device with no preset has no features, so the guided explorer's
    prior keeps none of its records, yet it reports them as gga and random do (it
    reported its prior's count: 5 where gga said 8)."""
    log = tmp_path / "l.jsonl"
    assert _run(capsys, "tune", "--layer", "resnet18.conv2_1", "--measure", "model", "--budget", 8,
                "--log", log, "--no-verify", "--out-dir", tmp_path / "k")[0] == 0
    lines = log.read_text().splitlines()
    header = json.loads(lines[0])
    header["device"] = header["measurer"]["device"] = "Imaginary GPU"
    (tmp_path / "imag.jsonl").write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    db = tmp_path / "h.db"
    assert _run(capsys, "history", "import", tmp_path / "imag.jsonl", "--db", db)[0] == 0
    timed = sum(json.loads(line)["record"]["status"] == "ok" for line in lines[1:])
    got = {}
    for strategy in ("explorer", "gga", "random"):
        copy = tmp_path / f"{strategy}.db"
        copy.write_bytes(db.read_bytes())
        code, out, _ = _run(capsys, "tune", "--layer", "resnet18.conv3_1a", "--measure", "model",
                            "--budget", 4, "--no-verify", "--out-dir", tmp_path / "k",
                            "--history", copy, "--strategy", strategy, "--json")
        h = json.loads(out)["history"]
        got[strategy] = (h["records"], tuple(h["devices"]))
    assert set(got.values()) == {(timed, ("Imaginary GPU",))}, got
