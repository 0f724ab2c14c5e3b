"""One GPU held under several names, and one configuration measured several times.

A tuning database holds a device under the name a Kernel Tuner cache gives it
(``NVIDIA RTX A4000``) and under the preset's name ``tune --device`` and
``import --device`` store (``RTX-A4000``). Every question about a device answers for all
the names held of it (search/db/device_names.py): the API's best, history_for_space,
best_for_layer and remove's plan answered only for the preset's name (and let the target
device's own cache rows into its history), ``kernel --from-history`` built an analytic
estimate while a measurement of the layer was held under the cache's name, and
``history list``/``best --device`` split the records of one GPU by the name given.

``best`` ranks configurations: each once, at its fastest timed measurement (it listed a
configuration measured twice twice), and tune's best ever is the same fastest
measurement (it took each configuration's latest, so a later failure hid an earlier
time). References: brute force over the rows stored.
"""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from iobound.devices import DEVICES, canonical_device_name
from iobound.layer import ConvLayer
from search.cli.main import main
from search.db import CONV_TEMPLATE, Measurement, TuningDB, Workload, queries, remove
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace

LAYER = ConvLayer(n=1, c_in=8, h_in=10, w_in=10, c_out=8, k_h=3, k_w=3)
SPEC = "cin=8,hin=10,cout=8,kh=3"
PARAMS = ("x", "y", "z", "alpha", "tx", "ty", "tz")


def _config(z: int) -> dict:
    return {"x": 8, "y": 1, "z": z, "alpha": 4, "tx": 2, "ty": 1, "tz": z}


CONV = Workload(CONV_TEMPLATE, LAYER.to_dict(), PARAMS)
SPACE = GridSpace({p: sorted({_config(z)[p] for z in (1, 2, 4)}) for p in PARAMS})


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


names = st.sampled_from(sorted(DEVICES)).flatmap(
    lambda p: st.sampled_from([p, *DEVICES[p].aliases, f"NVIDIA {p}"]))
rows = st.lists(st.tuples(st.one_of(names, st.just("my lab GPU")), st.sampled_from([1, 2, 4]),
                          st.integers(1, 9)), min_size=1, max_size=10)


@settings(max_examples=40, deadline=None)
@given(rows, names)
def test_a_device_is_every_name_held_of_it(stored, asked):
    """Rows stored under random names of presets: best (k all), history_for_space's
    exclusion and remove's plan of any name of a preset answer with exactly the rows whose
    name is of that preset, brute force over what was stored."""
    db = TuningDB(":memory:")
    db.add([Measurement(CONV, name, "t", MeasureRecord.ok(_config(z), time_ms=float(t)))
            for name, z, t in stored])
    preset = canonical_device_name(asked)
    mine = [(name, z, t) for name, z, t in stored if canonical_device_name(name) == preset]
    fastest: dict = {}
    for k, (_, z, t) in enumerate(mine):
        fastest[z] = min((t, k), fastest.get(z, (t, k)))
    got = queries.best(db, CONV, asked, k=len(stored))
    assert [(m.record.config["z"], m.time_ms) for m in got] == \
        [(z, float(t)) for z, (t, _) in sorted(fastest.items(), key=lambda item: item[1])]
    kept = queries.history_for_space(db, SPACE, exclude_devices=[asked])
    assert sorted(m.device for m in kept) == sorted(
        name for name, _, _ in stored if canonical_device_name(name) != preset)
    if mine:
        planned = remove.plan(db, remove.Selection(device=asked))
        assert sum(g.measurements for g in planned) == len(mine)
        best = queries.best_for_layer(db, LAYER, asked)
        assert best.records == len(mine) and best.measurement.time_ms == min(t for *_, t in mine)
    else:
        assert got == [] and queries.best_for_layer(db, LAYER, asked) is None


def _cache(path, device: str, times: dict) -> None:
    """A Kernel Tuner cache of LAYER's direct kernel measured on ``device``: z -> time."""
    entries = {",".join(str(v) for v in _config(z).values()): {**_config(z), "time": t}
               for z, t in times.items()}
    path.write_text(json.dumps({
        "device_name": device, "kernel_name": "iobound_direct", "problem_size": LAYER.to_dict(),
        "tune_params_keys": list(PARAMS),
        "tune_params": {p: sorted({_config(z)[p] for z in times}) for p in PARAMS},
        "objective": "time", "cache": entries}))


def test_kernel_from_history_takes_the_measurement_held_under_a_cache_name(capsys, tmp_path):
    """An estimate stored by tune under V100-SXM2 and a measurement imported from a cache
    of ``Tesla V100-SXM2-16GB``: --from-history --device v100 builds the measured one (it
    built the estimate)."""
    db = str(tmp_path / "k.db")
    with TuningDB(db) as d:
        d.add([Measurement(CONV, "V100-SXM2", "analytic model", MeasureRecord.ok(
            _config(1), time_ms=0.001, estimate=True))])
    _cache(tmp_path / "v100.json", "Tesla V100-SXM2-16GB", {4: 0.02, 2: 0.03})
    assert _run(capsys, "history", "import", str(tmp_path / "v100.json"), "--db", db)[0] == 0
    code, out, err = _run(capsys, "kernel", "--from-history", db, "--layer", SPEC,
                          "--device", "v100", "--json")
    res = json.loads(out)
    assert code == 0 and res["config"] == _config(4), err
    assert (res["from_history"]["measured"], res["from_history"]["estimate"]) == (2, False)


def test_list_and_best_answer_for_both_names_of_a_gpu(capsys, tmp_path):
    """A cache of ``NVIDIA RTX A4000`` and a file imported with --device a4000 (stored as
    RTX-A4000): list and best of either name count both files' rows; export, which writes
    one name, asks which when given neither."""
    db = str(tmp_path / "t.db")
    _cache(tmp_path / "own.json", "NVIDIA RTX A4000", {1: 0.5, 2: 0.7})
    _cache(tmp_path / "other.json", "", {1: 0.9, 4: 0.3})
    assert _run(capsys, "history", "import", str(tmp_path / "own.json"), "--db", db)[0] == 0
    assert _run(capsys, "history", "import", str(tmp_path / "other.json"), "--db", db,
                "--device", "a4000")[0] == 0
    for name in ("NVIDIA RTX A4000", "RTX-A4000", "a4000"):
        code, out, _ = _run(capsys, "history", "list", "--db", db, "--device", name, "--json")
        assert code == 0 and sum(r["measurements"] for r in json.loads(out)) == 4
        code, out, _ = _run(capsys, "history", "best", "--db", db, "--device", name, "-k", "5",
                            "--json")
        assert [(b["config"]["z"], b["time_ms"]) for b in json.loads(out)] == \
            [(4, 0.3), (1, 0.5), (2, 0.7)]
    code, _, err = _run(capsys, "history", "export", str(tmp_path / "o.json"), "--db", db,
                        "--device", "a4000")
    assert code == 2 and "held under 2 names" in err and len(err.strip().splitlines()) == 1
    code, out, _ = _run(capsys, "history", "export", str(tmp_path / "o.json"), "--db", db,
                        "--device", "RTX-A4000", "--json")
    assert code == 0 and json.loads(out)["entries"] == 2


def test_a_later_failure_does_not_undo_the_best_ever(capsys, tmp_path):
    """One configuration timed, timed slower, then failed (three runs): best -k lists it
    once at its fastest, and tune's best ever agrees (it was the other configuration's,
    since this one's latest record failed)."""
    from search.history import History, HistoryKey
    db = str(tmp_path / "h.db")
    key = HistoryKey(layer=json.dumps(LAYER.to_dict()), device="V100-SXM2", toolchain="nvcc")
    with History(db) as h:
        for i, rec in enumerate([MeasureRecord.ok(_config(1), time_ms=0.5),
                                 MeasureRecord.ok(_config(1), time_ms=0.9),
                                 MeasureRecord.failed(_config(1), "runtime_error"),
                                 MeasureRecord.ok(_config(2), time_ms=0.7)]):
            h.add(key, [rec.__class__(**{**rec.__dict__, "timestamp": float(i)})])
        assert h.best(key).time_ms == 0.5
        assert [r.time_ms for r in h.records(key)] == [0.7, None]  # the latest of each
    code, out, _ = _run(capsys, "history", "best", "--db", db, "-k", "3", "--json")
    assert code == 0 and [(b["config"]["z"], b["time_ms"]) for b in json.loads(out)] == \
        [(1, 0.5), (2, 0.7)]


def test_one_gpu_under_two_names_is_one_source_of_history(monkeypatch):
    """A history holding one GPU under a cache's name and the preset's is one source (it
    was two that agree: twice the weight in the consensus), and zero-shot's leave-one-
    device-out leaves out both names."""
    from search.transfer.sources import source_groups, timed_by_source
    db = TuningDB(":memory:")
    db.add([Measurement(CONV, name, "t", MeasureRecord.ok(_config(z), time_ms=float(t)))
            for name, z, t in (("NVIDIA RTX A4000", 1, 2.0), ("RTX-A4000", 2, 1.0),
                               ("T4", 4, 3.0))])
    history = queries.history_for_space(db, SPACE)
    assert sorted(d for _, d in timed_by_source(history)) == ["RTX-A4000", "T4"]
    assert sorted(g.device for g in source_groups(SPACE, history, LAYER.to_dict())) == \
        ["RTX-A4000", "T4"]
    import search.zero_shot_order as order
    left: list = []

    def ranking(space, rest, options, seed):  # what each left-one-out model is fitted on
        left.append(sorted({m.device for m in rest}))
        raise order.InvalidInputError("stop here")
    monkeypatch.setattr(order, "history_ranking", ranking)
    order._loso_means(SPACE, history, LAYER.to_dict(), order.ZeroShotOptions(), 0, [1])
    assert sorted(left) == [["NVIDIA RTX A4000", "RTX-A4000"], ["T4"]]


def test_guided_ga_normalises_one_gpu_by_its_best_under_either_name():
    """Mu et al.'s filtering metric divides a source's best time by each of its times:
    one GPU under two names was two sources, each normalised by its own best (the slower
    name's best scored 1.0 as if it were the GPU's optimum)."""
    from search.strategies.gga_history import filter_history
    db = TuningDB(":memory:")
    db.add([Measurement(CONV, name, "t", MeasureRecord.ok(_config(z), time_ms=t))
            for name, z, t in (("NVIDIA RTX A4000", 1, 1.0), ("RTX-A4000", 2, 2.0))])
    f = filter_history(SPACE, queries.history_for_space(db, SPACE), LAYER.to_dict())
    assert f.devices == ("RTX-A4000",)
    assert sorted(round(m, 9) for _, m in f.seeds) == [0.5, 1.0]


def test_estimates_of_a_gpu_measured_under_its_other_name_are_left_out_of_history():
    """Timings under a cache's name and estimates under the preset's are one source: the
    estimates (another scale, 1000x faster here) must not rank in it beside the timings,
    as they do not where a device has one name."""
    from kernels.perf_model import MODEL_VERSION

    w = Workload("k", [8], ("x",))
    est = f"analytic model v{MODEL_VERSION} for RTX-A4000 (estimate, not measured)"
    db = TuningDB(":memory:")
    db.add([Measurement(w, "NVIDIA RTX A4000", "nvcc 12", MeasureRecord.ok({"x": x}, time_ms=10.0 + x))
            for x in range(3)]
           + [Measurement(w, "RTX-A4000", est, MeasureRecord.ok({"x": x}, time_ms=0.01, estimate=True))
              for x in range(3, 6)]
           + [Measurement(Workload("k", [16], ("x",)), "RTX-A4000", est,  # nothing measured: kept
                          MeasureRecord.ok({"x": 1}, time_ms=0.02, estimate=True))])
    history = queries.history_for_space(db, GridSpace({"x": list(range(6))}))
    assert sorted((m.device, m.record.config["x"], m.record.estimate) for m in history) == [
        ("NVIDIA RTX A4000", 0, False), ("NVIDIA RTX A4000", 1, False),
        ("NVIDIA RTX A4000", 2, False), ("RTX-A4000", 1, True)]


def test_a_lone_name_of_a_preset_is_the_sources_name():
    """Only where the history holds several names of one preset are they the preset's: a
    lone ``Tesla T4`` stays ``Tesla T4`` in the source's name (``label@device``)."""
    from search.transfer.sources import source_groups

    space, w = GridSpace({"x": list(range(4))}), Workload("k", [4], ("x",))
    hist = [Measurement(w, "Tesla T4", "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + x))
            for x in range(4)]
    assert canonical_device_name("Tesla T4") == "T4"  # an alias, which is the point
    (g,) = source_groups(space, hist, target_problem=[4])
    assert g.device == "Tesla T4" and g.name == "k [4]@Tesla T4"
