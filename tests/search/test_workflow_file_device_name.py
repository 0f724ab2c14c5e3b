"""A Kernel Tuner cache of our conv template that names its GPU as the GPU reports it
(``Tesla V100-SXM2-16GB``: what Kernel Tuner writes on a V100), imported into a tuning
database, then read back by the commands that take ``--device``.

README: ``history import`` keeps a file's own device name; ``list``/``best`` take
``--device`` and find that device by its preset (tests/search/test_cli_history_device_alias.py);
``kernel --from-history DB`` takes "the configuration a tuning database holds as the
fastest for the layer ... on --device", and "a layer the database does not hold there is
one error line naming the devices it holds it on" (so that one of them can be given);
``select --history DB``: "a layer the database holds is selected from its tuned results".

Before: ``kernel --from-history --device v100`` said "no timed record ... on V100-SXM2;
it holds the layer on Tesla V100-SXM2-16GB (--device)", and ``--device "Tesla
V100-SXM2-16GB"`` (what it asks for) said exactly the same, so the stored kernel could
not be built at all; ``select --history`` ignored the records (``model oracle``) while
``history best --device v100`` showed them. The reference is the cache file itself: its
fastest entry.
"""

from __future__ import annotations

import json

import pytest

from search.cli.main import main

SPEC = "cin=8,hin=16,cout=16,kh=3,pad=1"
FILE_DEVICE = "Tesla V100-SXM2-16GB"
KEYS = ["x", "y", "z", "alpha", "tx", "ty", "tz"]


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("filedev")
    cache = tmp / "run.json"
    assert main(["tune", "--layer", SPEC, "--device", "v100", "--budget", "6", "--strategy",
                 "random", "--seed", "3", "--no-verify", "--out-dir", str(tmp / "k"),
                 "--export-cache", str(cache)]) == 0
    raw = json.loads(cache.read_text())
    raw["device_name"] = FILE_DEVICE  # as Kernel Tuner names a V100
    cache.write_text(json.dumps(raw))
    db = str(tmp / "t.db")
    assert main(["history", "import", str(cache), "--db", db]) == 0
    timed = [e for e in raw["cache"].values() if isinstance(e["time"], (int, float))]
    fastest = min(timed, key=lambda e: e["time"])
    return db, {k: fastest[k] for k in KEYS}, fastest["time"], tmp


def test_history_best_finds_the_device_by_its_preset(stored, capsys):
    db, config, time_ms, _ = stored
    code, out, err = _run(capsys, "history", "best", "--db", db, "--device", "v100",
                          "--layer", SPEC, "-k", "1", "--json")
    assert code == 0, err
    assert FILE_DEVICE in out


@pytest.mark.parametrize("device", ["v100", FILE_DEVICE])
def test_kernel_from_history_builds_the_stored_fastest(stored, capsys, device):
    db, config, time_ms, tmp = stored
    code, out, err = _run(capsys, "kernel", "--layer", SPEC, "--device", device,
                          "--from-history", db, "--emit", str(tmp / "k.cu"), "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["config"] == config
    assert res["from_history"]["time_ms"] == pytest.approx(time_ms)


def test_select_history_reads_the_devices_records(stored, capsys):
    db, config, time_ms, _ = stored
    code, out, err = _run(capsys, "select", "--layer", SPEC, "--device", "v100",
                          "--history", db, "--json")
    assert code == 0, err
    layer = json.loads(out)["layers"][0]
    assert layer["source"] == "history"
    direct = [c for c in layer["candidates"] if c["algorithm"] == "direct"][0]
    assert direct["time_ms"] == pytest.approx(time_ms) and direct["config"] == config
