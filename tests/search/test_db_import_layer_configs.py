"""history import of a tuning log refuses records of our conv template whose config is no
valid kernel config of the header's layer, a header whose layer is no layer, and a file
whose device name is not a string (search/db/log_reader.py, search/kt_cache.py).

Found by a sweep: a log record x=99,y=99,z=999,alpha=9999 with time 0.0001 ms (outside
the layer: tiles larger than it) was stored, then shown by history best as the fastest,
printed by tune --history as "best ever for this key", and refused by kernel
--from-history without saying it came from the database; z:"a", alpha:null, x:-3 were
stored too; a header layer "zzz" became a workload, a cache's device_name 5 the device
"5". Refused now in one line naming the file and the record; nothing is imported.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from iobound.networks import get_layer
from search.cli.main import main
from search.db import TuningDB
from search.db.importer import import_files
from search.kt_cache import KtCache
from search.kt_cache_write import write_cache
from search.log_writer import LogWriter
from search.measure.base import MeasureRecord
from tests.search.stored_rows import write_config_by_hand

PARAMS = ["x", "y", "z", "alpha", "tx", "ty", "tz"]
GOOD = dict(zip(PARAMS, (2, 2, 2, 1, 1, 1, 1)))
LAYER = get_layer("resnet18.conv4_1b")  # 14x14 output, 256 channels


def _log(path, records, **header):
    h = {"layer": LAYER.to_dict(), "device": "V100-SXM2", "algorithm": "direct",
         "space": {"kind": "ConvSpace", "params": PARAMS}, "measurer": {"name": "model"},
         **header}
    with LogWriter(path, h) as log:
        for i, r in enumerate(records):
            log.append(i, r)
    return path


def _count(db_path) -> int:
    with TuningDB(db_path, readonly=True) as db:
        return db.count()


BAD_CONFIGS = [
    ({"x": 14, "y": 14, "z": 999, "alpha": 9999, "tx": 1, "ty": 1, "tz": 1}, "larger than"),
    ({**GOOD, "x": 99, "y": 99}, "larger than"),
    ({**GOOD, "z": "a"}, "not an integer"),
    ({**GOOD, "alpha": None}, "alpha"),
    ({**GOOD, "x": -3}, "below the minimum"),
    ({**GOOD, "x": 2.5}, "integer"),
]


@pytest.mark.parametrize("config, why", BAD_CONFIGS)
def test_a_record_outside_the_layer_is_refused_and_nothing_imported(tmp_path, capsys,
                                                                     config, why):
    good = _log(tmp_path / "good.jsonl", [MeasureRecord.ok(GOOD, time_ms=1.0)])
    bad = _log(tmp_path / "bad.jsonl", [MeasureRecord.ok(GOOD, time_ms=1.0),
                                        MeasureRecord.ok(config, time_ms=0.0001)])
    db = tmp_path / "t.db"
    TuningDB(db).close()
    assert main(["history", "import", str(good), str(bad), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "bad.jsonl" in err and "record at index 1" in err and why in err, err
    assert _count(db) == 0  # not the good file either: one transaction


def test_an_invalid_record_may_hold_a_config_the_tuner_found_invalid(tmp_path):
    """A failed/invalid record of integers is what the tuner logs for a config that
    cannot run (the model measurer's INVALID records): imported, never a best."""
    path = _log(tmp_path / "run.jsonl", [MeasureRecord.ok(GOOD, time_ms=1.0),
                                         MeasureRecord.failed({**GOOD, "x": 99}, "invalid", "too big")])
    with TuningDB(":memory:") as db:
        (f,) = import_files(db, [path])
        assert f.added == 2 and len(db.measurements(counted_only=True)) == 1


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.sampled_from(PARAMS),
                       st.one_of(st.integers(-5, 10_000), st.text(max_size=3), st.none(),
                                 st.floats(allow_nan=False, allow_infinity=False)),
                       min_size=len(PARAMS), max_size=len(PARAMS)))
def test_an_imported_ok_record_is_always_a_valid_kernel_config(tmp_path_factory, config):
    """Property: whatever an ok record's config, import either refuses the file or stores
    a config that kernels.config.check_config accepts for the layer."""
    from kernels.config import check_config, config_from_dict
    path = _log(tmp_path_factory.mktemp("l") / "run.jsonl",
                [MeasureRecord.ok(config, time_ms=0.5)])
    with TuningDB(":memory:") as db:
        try:
            import_files(db, [path])
        except InvalidInputError as exc:
            assert "record at index 0" in str(exc)
            assert db.count() == 0
            return
        (m,) = db.measurements()
        assert check_config(LAYER, config_from_dict(m.record.config, "direct")) == []


def test_a_header_layer_that_is_no_layer_is_refused(tmp_path):
    path = _log(tmp_path / "run.jsonl", [MeasureRecord.ok(GOOD, time_ms=1.0)], layer="zzz")
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match="run.jsonl: the header's layer 'zzz' is "
                                                    "not a convolution layer"):
            import_files(db, [path])
        assert db.count() == 0 and db.workloads() == []


def test_a_log_device_that_is_no_string_is_refused(tmp_path):
    path = _log(tmp_path / "run.jsonl", [MeasureRecord.ok(GOOD, time_ms=1.0)], device=5)
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match="device '5' is not a device name"):
            import_files(db, [path])
        assert db.devices() == {}


def test_a_cache_device_name_that_is_no_string_is_refused(tmp_path):
    path = tmp_path / "k.json"
    write_cache(path, KtCache(tune_params={"x": [1]}, kernel_name="k", device_name="gpu",
                              entries=[{"x": 1, "time": 2.0, "times": [2.0]}]))
    raw = json.loads(path.read_text())
    raw["device_name"] = 5
    path.write_text(json.dumps(raw))
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match="device_name '5' is not a device name"):
            import_files(db, [path])
        assert db.devices() == {}


def test_importing_a_database_holding_a_config_outside_its_layer_is_refused(tmp_path):
    """A database (merged from another machine, written by hand) whose conv measurement
    is no valid config of its layer is refused as a log's record is; nothing imported."""
    from search.db import Measurement, Workload
    other = tmp_path / "other.db"
    w = Workload("iobound.conv", LAYER.to_dict(), tuple(PARAMS))
    with TuningDB(other) as db:
        db.add([Measurement(w, "V100-SXM2", "t", MeasureRecord.ok(GOOD, time_ms=1.0)),
                Measurement(w, "V100-SXM2", "t",
                            MeasureRecord.ok({**GOOD, "x": 1}, time_ms=0.0001))])
    # TuningDB.add refuses x=99 (larger than the layer): written by hand, as another program would
    write_config_by_hand(other, "time_ms = 0.0001", {**GOOD, "x": 99})
    target = tmp_path / "t.db"
    TuningDB(target).close()
    with TuningDB(target) as db:
        with pytest.raises(InvalidInputError, match=r"other.db: a measurement of .* config "
                                                    r"x=99.* is not a valid kernel config"):
            import_files(db, [other])
        assert db.count() == 0


@pytest.mark.parametrize("config, why", BAD_CONFIGS[:2])
def test_a_cache_of_our_template_holding_a_config_outside_its_layer_is_refused(tmp_path, config,
                                                                              why):
    """A Kernel Tuner cache of our conv template (as ``tune --export-cache`` writes it) is
    checked against its layer as a log is: its entry x=99 with 0.0001 ms was stored as the
    layer's fastest, though ``TuningDB.add`` refuses it."""
    from search.db import Measurement, Workload
    from search.db.export import export_cache
    w = Workload("iobound.conv", LAYER.to_dict(), tuple(PARAMS))
    with TuningDB(tmp_path / "src.db") as db:
        db.add([Measurement(w, "V100-SXM2", "t", MeasureRecord.ok(GOOD, time_ms=1.0))])
        export_cache(db, tmp_path / "run.json", w, "V100-SXM2")
    raw = json.loads((tmp_path / "run.json").read_text())
    (key, entry), = raw["cache"].items()
    bad = {**entry, **config, "time": 0.0001, "times": [0.0001]}
    raw["cache"][",".join(str(config[p]) for p in raw["tune_params_keys"])] = bad
    (tmp_path / "run.json").write_text(json.dumps(raw))
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match=rf"run.json: .*is not a valid kernel config"
                                                    rf".*{why}"):
            import_files(db, [tmp_path / "run.json"])
        assert db.count() == 0
