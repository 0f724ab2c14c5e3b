"""``iobound kernel --from-history DB``: the kernel of the fastest configuration a tuning
database holds for a layer on a device (search/db/queries.py's best_for_layer)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from iobound.layer import ConvLayer
from search.cli.main import main
from search.db import CONV_TEMPLATE, Measurement, TuningDB, Workload
from search.db.queries import best_for_layer
from search.measure.base import MeasureRecord
from tests.search.stored_rows import write_config_by_hand

LAYER = "cin=3,hin=8,cout=4,kh=3,pad=1"
DIRECT, WINOGRAD = ("x", "y", "z", "alpha", "tx", "ty", "tz"), ("e", "x", "y", "z", "tx", "ty", "tz")
LAYERS = [ConvLayer(n=1, c_in=c, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3) for c in (3, 4)]


def _config(params, v: int) -> dict:
    """A kernel config of both LAYERS (8x8 -> 6x6, 4 output channels), one per ``v`` in
    1..4 (its z): TuningDB.add stores no other of our conv template."""
    if "e" in params:
        return {"e": 2, "x": 2, "y": 2, "z": v, "tx": 1, "ty": 1, "tz": 1}
    return {"x": 3, "y": 3, "z": v, "alpha": 1, "tx": 3, "ty": 3, "tz": 1}


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_tuned_layer_gives_its_best_kernel_back(capsys, tmp_path):
    """After `tune --history DB`, `kernel --from-history DB` builds the fastest config the
    tune stored (what `history best` names), and it emulates correctly."""
    db = str(tmp_path / "t.db")
    code, _, _ = _run(capsys, "tune", "--layer", LAYER, "--device", "v100", "--measure", "model",
                      "--budget", "6", "--history", db, "--out-dir", str(tmp_path), "--json")
    assert code == 0
    code, out, _ = _run(capsys, "history", "best", "--db", db, "-k", "1", "--json")
    (best,) = json.loads(out)
    code, out, _ = _run(capsys, "kernel", "--layer", LAYER, "--device", "v100", "--from-history",
                        db, "--emulate", "--json", "--emit", str(tmp_path / "k.cu"))
    res = json.loads(out)
    assert code == 0 and res["config"] == best["config"] and res["emulate"]["ok"]
    h = res["from_history"]
    assert (h["records"], h["measured"], h["estimate"], h["time_ms"]) == (6, 0, True,
                                                                          best["time_ms"])


@pytest.mark.parametrize("argv, needle", [
    (["--device", "a100"], "it holds the layer on V100-SXM2 (--device)"),
    (["--device", "v100", "--algorithm", "winograd"], "no timed winograd record"),
    (["--device", "v100", "--config", "x=1"], "not allowed with"),
    (["--algorithm", "winograd"], "no timed winograd record of n1 3x8x8 -> 4x8x8 k3x3 s1x1 p1x1 "
                                  "on any device"),  # no --device: it was "on A100-SXM4-40GB"
])
def test_no_record_there_is_one_line_naming_where_it_is(capsys, tmp_path, argv, needle):
    db = str(tmp_path / "t.db")
    with TuningDB(db) as t:
        t.add([Measurement(Workload(CONV_TEMPLATE, _layer_dict(), ("x", "y", "z", "alpha", "tx",
                                                                   "ty", "tz")),
                           "V100-SXM2", "model", MeasureRecord.ok(
                               {"x": 4, "y": 4, "z": 4, "alpha": 2, "tx": 4, "ty": 2, "tz": 2},
                               time_ms=1.0, estimate=True))])
    code, out, err = _run(capsys, "kernel", "--layer", LAYER, "--from-history", db, *argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1 and out == ""


@pytest.mark.parametrize("content, needle", [(None, "no such database"),
                                             (b"not sqlite", "not an SQLite database")])
def test_a_file_that_is_no_database_is_one_line(capsys, tmp_path, content, needle):
    path = tmp_path / "x.db"
    if content is not None:
        path.write_bytes(content)
    code, _, err = _run(capsys, "kernel", "--layer", LAYER, "--from-history", str(path))
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def _layer_dict() -> dict:
    from iobound.layer_spec import parse_layer_spec
    return parse_layer_spec(LAYER).to_dict()


record = st.tuples(st.integers(0, 1), st.sampled_from(["V100-SXM2", "A100-SXM4-40GB"]),
                   st.sampled_from([DIRECT, WINOGRAD]), st.booleans(),
                   st.floats(0.1, 10.0, allow_nan=False), st.integers(1, 4))


@settings(max_examples=80, deadline=None)
@given(st.lists(record, max_size=20), st.integers(0, 1),
       st.sampled_from(["V100-SXM2", "A100-SXM4-40GB"]), st.sampled_from([None, "direct",
                                                                           "winograd"]))
def test_best_for_layer_is_the_fastest_measured_else_the_fastest_estimate(items, which, device,
                                                                            algorithm):
    """Against brute force: only the layer's records (any name), on the device, of the
    algorithm; the fastest measured one wins over every estimate."""
    db = TuningDB(":memory:")
    ms = [Measurement(Workload(CONV_TEMPLATE, LAYERS[li].replace(name=f"net.l{v}").to_dict(), params), dev,
                      "t", MeasureRecord.ok(_config(params, v), time_ms=t, estimate=est))
          for li, dev, params, est, t, v in items]
    db.add(ms)
    stored = db.measurements()
    mine = [m for m in stored if m.workload.problem["c_in"] == LAYERS[which].c_in
            and m.device == device and (algorithm is None or
                                        (algorithm == "winograd") == ("e" in m.workload.params))]
    got = best_for_layer(db, LAYERS[which].replace(name="mine"), device, algorithm)
    if not mine:
        assert got is None
        return
    measured = [m for m in mine if not m.record.estimate]
    assert (got.records, got.measured) == (len(mine), len(measured))
    assert got.measurement.time_ms == min(m.time_ms for m in (measured or mine))
    assert got.measurement.record.estimate == (not measured)


@pytest.mark.parametrize("config, needle", [
    ({"x": 99, "y": 99, "z": 999, "alpha": 9999, "tx": 4, "ty": 2, "tz": 2}, "must divide"),
    ({"x": 4, "y": 4, "z": "a", "alpha": 2, "tx": 4, "ty": 2, "tz": 2}, "not an integer"),
])
def test_a_stored_best_that_is_no_config_of_the_layer_says_it_came_from_the_database(
        capsys, tmp_path, config, needle):
    """A database written by hand or damaged may hold a best record that is no kernel config
    of its layer: the one line names the database and the stored config, not only the
    config's fault (which read as if the user had given it)."""
    db = str(tmp_path / "t.db")
    with TuningDB(db) as t:
        t.add([Measurement(Workload(CONV_TEMPLATE, _layer_dict(), DIRECT), "V100-SXM2", "model",
                           MeasureRecord.ok(_config(DIRECT, 4), time_ms=1.0, estimate=True))])
    # TuningDB.add refuses such a config: another program (or damage) writes it
    write_config_by_hand(db, "time_ms = 1.0", config)
    code, out, err = _run(capsys, "kernel", "--layer", LAYER, "--device", "v100",
                          "--from-history", db)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"--from-history {db}: the best record of" in err and needle in err


def _held_on(tmp_path, *devices: str) -> str:
    db = str(tmp_path / "held.db")
    w = Workload(CONV_TEMPLATE, _layer_dict(), DIRECT)
    with TuningDB(db) as t:
        t.add([Measurement(w, dev, "nvcc", MeasureRecord.ok(_config(DIRECT, 1 + k), time_ms=1.0 + k))
               for k, dev in enumerate(devices)])
    return db


def test_without_device_the_one_device_holding_the_layer_is_taken(capsys, tmp_path):
    """``kernel --from-history DB`` without --device after ``tune --history DB`` (whose
    default device is the V100): it took the kernel's own default, the A100, and failed
    with "no timed record ... on A100"; it builds the V100's now, also when the V100 is held
    under two names (one device)."""
    db = _held_on(tmp_path, "V100-SXM2", "Tesla V100-SXM2-16GB")
    code, out, err = _run(capsys, "kernel", "--layer", LAYER, "--from-history", db, "--json")
    res = json.loads(out)
    assert code == 0 and res["from_history"]["device"] == "V100-SXM2", err
    assert res["config"] == _config(DIRECT, 1)


def test_without_device_two_devices_holding_the_layer_are_named(capsys, tmp_path):
    db = _held_on(tmp_path, "V100-SXM2", "A100-SXM4-40GB")
    code, out, err = _run(capsys, "kernel", "--layer", LAYER, "--from-history", db)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "on A100-SXM4-40GB, V100-SXM2; choose one with --device" in err
