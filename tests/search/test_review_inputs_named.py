"""Inputs reviews found taken for something else: each is now refused naming what is
wrong, or taken as what it is (a log resumed in place under another spelling, a history
holding estimates and timings of one workload)."""

from __future__ import annotations

import pytest
import sympy as sp

from iobound.composite import CompositeAlgorithm, CompositeStep
from iobound.devices import get_device
from iobound.errors import InvalidInputError
from iobound.symbols import k
from search.cli.main import main
from search.db import Measurement, TuningDB, Workload
from search.db.export import workload_cache
from search.measure.base import MeasureRecord
from search.session.files import continues_in_place
from search.session.settings import TuneSettings

TINY = ["--layer", "cin=4,hin=6,cout=4,kh=3,pad=1", "--measure", "model", "--no-verify"]


def test_a_log_resumed_in_place_under_another_spelling_continues_it(tmp_path, capsys):
    log = tmp_path / "run.jsonl"
    assert main(["tune", *TINY, "--budget", "3", "--log", str(log)]) == 0
    before = len(log.read_text().splitlines())
    spelt = str(tmp_path / "." / "run.jsonl")
    assert main(["tune", *TINY, "--budget", "6", "--resume", str(log), "--log", spelt]) == 0
    assert len(log.read_text().splitlines()) == before + 3
    assert continues_in_place(spelt, str(log)) and not continues_in_place(str(log), None)
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    assert continues_in_place(str(link), str(log))


def test_an_arch_in_other_digits_is_bad_input(capsys):
    """sm_٨٠ ran nvcc and came back as a compile error (exit 1)."""
    assert main(["kernel", "--layer", "cin=4,hin=6,cout=4,kh=3,pad=1",
                 "--config", "x=3,y=3,z=2,alpha=1", "--compile", "--arch", "sm_٨٠"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "arch must look like sm_80" in err


def test_a_budget_of_none_is_refused_where_patience_may_be_none():
    with pytest.raises(InvalidInputError, match="budget must be an integer"):
        TuneSettings(budget=None)
    assert TuneSettings(patience=None).patience is None


def test_a_cache_is_one_device_s():
    """device=None took the latest time of each config over every device."""
    w = Workload("k", [8], ("x",))
    with TuningDB(":memory:") as db:
        for device, t in (("a", 1.0), ("b", 2.0)):
            db.add([Measurement(w, device, "t", MeasureRecord.ok({"x": 1}, time_ms=t))])
        with pytest.raises(InvalidInputError, match="device must be"):
            workload_cache(db, w, None)
        assert workload_cache(db, w, "a").entries[0]["time"] == 1.0
        with pytest.raises(InvalidInputError, match="with toolchain ''"):
            workload_cache(db, w, "a", toolchain="")


def test_opt_in_must_be_a_bool():
    v100 = get_device("v100")
    with pytest.raises(InvalidInputError, match="opt_in must be True or False"):
        v100.shared_mem_per_block_words("fp32", opt_in="no")
    assert v100.shared_mem_per_block_words("fp32") == 12288


def test_exact_t_refuses_true_for_s():
    alg = CompositeAlgorithm((CompositeStep("a", k * (sp.Symbol("S") - k)),))
    with pytest.raises(InvalidInputError, match="s must be an integer"):
        alg.T_exact(True)
    assert alg.T_exact(1) >= 1


def test_an_export_never_replaces_another_database(tmp_path, capsys):
    """history export and tune --export-cache wrote a cache over another tuning database."""
    db, other = tmp_path / "h.db", tmp_path / "other.db"
    assert main(["tune", *TINY, "--budget", "2", "--history", str(db)]) == 0
    assert main(["tune", *TINY, "--budget", "2", "--history", str(other)]) == 0
    before = other.read_bytes()
    capsys.readouterr()
    assert main(["history", "export", "--db", str(db), str(other)]) == 2
    assert "is an SQLite database; writing would replace it" in capsys.readouterr().err
    assert main(["tune", *TINY, "--budget", "2", "--export-cache", str(other)]) == 2
    assert "--export-cache" in capsys.readouterr().err and other.read_bytes() == before


@pytest.mark.parametrize("argv", [
    ["tune", *TINY, "--budget", "４"], ["tune", *TINY, "--budget", "4", "--seed", "1_0"],
    ["tune", *TINY, "--budget", "4", "--patience", "٣"],
    ["tune", *TINY, "--budget", "4", "--workers", "２"]])
def test_integer_options_take_ascii_digits_only(argv, capsys):
    """int() read '４' as 4 and '1_0' as 10, where layer specs refuse both."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "invalid int value" in err


def test_history_keeps_timings_over_estimates_of_the_same_workload_and_device():
    """tune --measure model then --measure cuda on one V100 stored both under V100-SXM2;
    the sources ranked analytic estimates and real times on one scale. A workload measured
    on a device keeps only its timings there; one only estimated keeps its estimates."""
    from search.db.queries import history_for_space
    from search.grid_space import GridSpace
    w, other = Workload("k", [8], ("x",)), Workload("k", [16], ("x",))
    rows = [Measurement(w, "V100-SXM2", "model", MeasureRecord.ok({"x": 0}, time_ms=0.1,
                                                                   estimate=True)),
            Measurement(w, "V100-SXM2", "cuda", MeasureRecord.ok({"x": 5}, time_ms=5.0)),
            Measurement(w, "T4", "model", MeasureRecord.ok({"x": 1}, time_ms=0.2, estimate=True)),
            Measurement(other, "V100-SXM2", "model",
                        MeasureRecord.ok({"x": 2}, time_ms=0.3, estimate=True))]
    with TuningDB(":memory:") as db:
        db.add(rows)
        got = history_for_space(db, GridSpace({"x": list(range(8))}))
    assert sorted((m.workload.problem[0], m.device, m.record.config["x"]) for m in got) == [
        (8, "T4", 1), (8, "V100-SXM2", 5), (16, "V100-SXM2", 2)]
