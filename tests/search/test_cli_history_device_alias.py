"""``history list/best/export/remove --device NAME`` must find the device that ``history
import --device NAME`` accepted as the file's own device.

A Kernel Tuner cache names its device as the GPU reports it (``NVIDIA RTX A4000``); the
database keeps that name. ``import --device RTX-A4000`` (or ``rtx a4000``) accepts the
file because both name one preset. The reading actions then refused the very same
``--device`` ("no device 'RTX-A4000'"), although the database holds that device under
the file's name. Checked against an independent sqlite3 query of the file.
"""

from __future__ import annotations

import json

import pytest

from search.cli.main import main
from search.kt_cache import load_cache
from tests.search.stored_rows import query_rows


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def a4000_db(tmp_path, capsys):
    raw = {"device_name": "NVIDIA RTX A4000", "kernel_name": "k", "problem_size": [8],
           "tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3]}, "objective": "time",
           "cache": {"1": {"x": 1, "time": 3.0}, "2": {"x": 2, "time": 1.5},
                     "3": {"x": 3, "time": "RuntimeFailedConfig"}}}
    src, db = tmp_path / "c.json", str(tmp_path / "t.db")
    src.write_text(json.dumps(raw))
    code, _, err = _run(capsys, "history", "import", str(src), "--device", "RTX-A4000", "--db", db)
    assert code == 0, err
    return db


@pytest.mark.parametrize("given", ["RTX-A4000", "rtx a4000"])
def test_list_and_best_find_the_device_import_accepted(capsys, a4000_db, given):
    (name, best_ms, n), = query_rows(a4000_db, "SELECT d.name, MIN(CASE WHEN m.status='ok' THEN "
                                         "m.time_ms END), COUNT(*) FROM measurements m JOIN "
                                         "devices d ON d.id=m.device GROUP BY d.id")
    code, out, err = _run(capsys, "history", "list", "--db", a4000_db, "--device", given, "--json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["device"], row["best_ms"], row["measurements"]) == (name, best_ms, n)
    code, out, err = _run(capsys, "history", "best", "--db", a4000_db, "--device", given,
                          "-k", "1", "--json")
    assert code == 0, err
    assert [(m["device"], m["time_ms"]) for m in json.loads(out)] == [(name, best_ms)]


def test_export_and_remove_find_the_device_import_accepted(capsys, tmp_path, a4000_db):
    code, _, err = _run(capsys, "history", "export", "--db", a4000_db, "--device", "RTX-A4000",
                        str(tmp_path / "o.json"))
    assert code == 0, err
    assert load_cache(tmp_path / "o.json").device_name == "NVIDIA RTX A4000"
    code, _, err = _run(capsys, "history", "remove", "--db", a4000_db, "--device", "RTX-A4000")
    assert code == 0, err
    assert query_rows(a4000_db, "SELECT COUNT(*) FROM measurements") == [(0,)]
