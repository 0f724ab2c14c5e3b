"""Replay returns the recorded outcome of exactly the configuration asked
(search/measure/replay.py), as the replayed space tells configurations apart.

Reference: search/replay_space.ReplaySpace (the space tuned with it) compares values (lists
as tuples; 1 and 1.0 one value, 1 and "1" two). The measurer looked entries up by Kernel
Tuner's printed key (values joined by commas), so configurations printing alike shared one
entry (one replayed the other's time), and a value spelled 1.0 in ``tune_params`` but 1 in
the entries was "not recorded"."""
from search.kt_cache import KtCache
from search.measure.replay import ReplayMeasurer
from search.replay_space import ReplaySpace


def _check(cache):
    space = ReplaySpace(cache)
    m = ReplayMeasurer(cache)
    assert len(space) == len(cache.entries)
    for i in range(len(space)):
        cfg = space.get(i)
        (rec,) = m.measure([cfg])
        entry = cache.entries[i]
        assert rec.time_ms == entry["time"], (cfg, rec.time_ms, entry["time"])


def test_int_and_string_values():
    _check(KtCache(tune_params={"x": [1, "1"]},
                   entries=[{"x": 1, "time": 1.0}, {"x": "1", "time": 2.0}]))


def test_values_with_commas():
    _check(KtCache(tune_params={"x": ["a,b", "a"], "y": ["c", "b,c"]},
                   entries=[{"x": "a,b", "y": "c", "time": 1.0},
                            {"x": "a", "y": "b,c", "time": 2.0}]))


def test_list_values_vs_strings():
    _check(KtCache(tune_params={"x": [[1, 2], "[1, 2]"]},
                   entries=[{"x": [1, 2], "time": 1.0}, {"x": "[1, 2]", "time": 2.0}]))


def test_unrecorded_string_does_not_replay_int_time():
    """{"x": "1"} is not recorded (only x=1 is): its record must not be the time of x=1."""
    cache = KtCache(tune_params={"x": [1, 2]}, entries=[{"x": 1, "time": 1.0}, {"x": 2, "time": 2.0}])
    assert ReplaySpace(cache).index({"x": "1"}) is None
    (rec,) = ReplayMeasurer(cache).measure([{"x": "1"}])
    assert rec.status.value == "invalid", rec


def test_float_spelling_of_a_recorded_value_is_found():
    """The space (and Python) say {"x": 1.0} is the recorded x=1; replay calls it unrecorded."""
    cache = KtCache(tune_params={"x": [1.0, 2.0]}, entries=[{"x": 1, "time": 1.0}, {"x": 2, "time": 2.0}])
    space = ReplaySpace(cache)
    cfg = space.get(0)
    (rec,) = ReplayMeasurer(cache).measure([cfg])
    assert rec.status.value == "ok" and rec.time_ms == 1.0, (cfg, rec)


def test_file_declaring_floats_for_int_entries_replays_every_entry(tmp_path):
    """A cache file whose tune_params list 1.0, 2.0 while its entries hold 1, 2 (JSON numbers
    that are equal): ReplaySpace counts 4 recorded ok configurations, the replay of each of
    them must be its recorded time, not 'configuration not recorded'."""
    import json
    from search.session import TuneSettings
    from search.session.replay import tune_replay

    d = {"device_name": "G", "kernel_name": "k", "problem_size": [8], "tune_params_keys": ["x", "y"],
         "tune_params": {"x": [1.0, 2.0], "y": [4, 8]}, "objective": "time",
         "cache": {f"{x},{y}": {"x": x, "y": y, "time": 1.0 + x + y / 10}
                   for x in (1, 2) for y in (4, 8)}}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(d))
    report = tune_replay(str(path), TuneSettings(strategy="grid", budget=4, seed=0))
    assert [t.record.status.value for t in report.result.trials] == ["ok"] * 4
