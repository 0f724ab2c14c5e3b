"""``iobound tune --algorithm all`` against what its help, README and sibling outputs say.

- ``--zero-shot K`` with a history of only one algorithm's space: refused before anything
  is measured or stored (as ``check_zero_shot_db`` promises for a single algorithm), not
  after the other algorithm was measured and stored in the database.
- A layer only one algorithm computes (stride 4): its files are still named
  ``run.<layer>.<algorithm>.jsonl`` (``--help``: "its own log, resume and export files:
  run.<layer>.<algorithm>.jsonl"), and the text names the algorithm kept.
- ``--measure emulate`` times nothing: the choice line does not call a kernel "fastest".
- A network row where no algorithm ran a configuration names no algorithm (the run's
  ``--json`` ``choices`` say ``algorithm: null`` for it).
- ``iobound select --history`` reads an 'all' run to the run's choice (README), also on a
  1x1 layer.
"""

from __future__ import annotations

import json

from iobound.layer import ConvLayer
from iobound.networks import get_layer
from kernels.status import Status
from search.cli.main import main
from search.cli.tune_print import print_choice
from search.measure.base import MeasureRecord
from search.session import Builders, TuneSettings, choose_algorithms, tune_layers
from search.session.network import network_table
from search.session.settings import default_measurer
from tests.search.stored_rows import stored_measurements

BASE = ["tune", "--measure", "model", "--no-verify"]


def test_zero_shot_all_with_one_algorithms_history_is_refused_before_measuring(
        tmp_path, capsys):
    db, k = str(tmp_path / "h.db"), str(tmp_path / "k")
    assert main(BASE + ["--layer", "alexnet.conv4", "--strategy", "random", "--budget", "4",
                        "--history", db, "--out-dir", k]) == 0  # direct records only
    before = stored_measurements(db)
    rc = main(BASE + ["--layer", "alexnet.conv5", "--algorithm", "all", "--zero-shot", "3",
                      "--history", db, "--log", str(tmp_path / "z.jsonl"), "--out-dir", k])
    capsys.readouterr()
    if rc != 0:  # refused: then nothing measured, logged or stored
        assert stored_measurements(db) == before
        assert not list(tmp_path.glob("z.*jsonl"))


def test_all_on_a_layer_one_algorithm_computes_keeps_the_per_algorithm_names(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(BASE + ["--layer", "alexnet.conv1", "--algorithm", "all", "--strategy",
                        "random", "--budget", "3", "--log", "run.jsonl",
                        "--export-cache", "c.json"]) == 0  # stride 4: direct only
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert (tmp_path / "run.alexnet.conv1.direct.jsonl").is_file()
    assert (tmp_path / "c.alexnet.conv1.direct.json").is_file()
    assert last.startswith("algorithm: direct"), last


def test_emulated_words_are_not_called_the_fastest(tmp_path, capsys):
    layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1, name="t")
    reports = tune_layers([layer], "v100", TuneSettings(strategy="random", budget=1),
                          measure="emulate", algorithm="all", out_dir=str(tmp_path))
    [choice] = choose_algorithms(reports)
    assert choice.chosen.result.best.record.time_ms is None  # the emulator times nothing
    print_choice(choice)
    line = capsys.readouterr().out
    assert "fastest" not in line and "words" in line, line


def failing_measurer(kind, layer, device, algorithm):
    """The measurer of ``kind`` with every configuration failing (runtime_error)."""
    measurer = default_measurer(kind, layer, device, algorithm)
    measurer.measure = lambda configs: [
        MeasureRecord.failed(c, Status.RUNTIME_ERROR, "boom") for c in configs]
    return measurer


def test_network_row_where_no_algorithm_ran_names_none(tmp_path):
    reports = tune_layers([get_layer("alexnet.conv5")], "v100",
                          TuneSettings(strategy="random", budget=2), algorithm="all",
                          out_dir=str(tmp_path), verify=False,
                          builders=Builders(measurer=failing_measurer))
    assert [r.algorithm for r in reports] == ["direct", "winograd"]
    assert all(r.result.best is None for r in reports)
    [row] = network_table(reports)["layers"]
    assert row["algorithm"] is None
    assert row["algorithm"] == choose_algorithms(reports)[0].to_dict()["algorithm"]


def test_select_history_reads_an_all_run_on_a_1x1_layer_to_its_choice(tmp_path, capsys):
    db = str(tmp_path / "h.db")
    assert main(BASE + ["--layer", "resnet50.conv2_1a", "--algorithm", "all", "--strategy",
                        "random", "--budget", "2", "--seed", "1", "--history", db,
                        "--out-dir", str(tmp_path / "k"), "--json"]) == 0
    [choice] = json.loads(capsys.readouterr().out)["choices"]
    assert main(["select", "--layer", "resnet50.conv2_1a", "--history", db, "--json"]) == 0
    [picked] = json.loads(capsys.readouterr().out)["layers"]
    assert picked["source"] == "history"
    assert (picked["algorithm"], picked["time_ms"]) == (choice["algorithm"], choice["best_cost"])


def test_winograd_with_an_empty_space_is_not_said_not_to_compute_the_layer(tmp_path, capsys):
    """A 9x9 kernel at stride 1: Winograd computes it, but its Table 1 pruned space on the
    V100 is empty, so --algorithm all tunes direct alone; the line said direct was "the
    only one whose kernel computes the layer", which is false."""
    assert main(BASE + ["--layer", "cin=8,hin=20,cout=16,kh=9,pad=4", "--algorithm", "all",
                        "--budget", "3", "--out-dir", str(tmp_path)]) == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith("algorithm: direct (the only one with a configuration of the "
                           "layer on this device)"), last
