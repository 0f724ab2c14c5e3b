"""Documented behaviour of the session modules (plan, choice, files, tune_args, run, replay
and the ``--algorithm all`` printing) that a small change of the code could break unnoticed
before: each test names the change it catches ("Mutant: ...").
"""

from __future__ import annotations

import dataclasses

import pytest

from iobound.networks import get_layer
from search.interrupts import Interrupted
from search.records import read_log
from search.session import TuneSettings, choose_algorithms, plan_layers, run_layers, tune_layers
from search.session.parallel import interrupted_run
from search.session.settings import Observer


class _StopAfterFirst(Observer):
    """Ctrl-C landing as the first layer's report is complete (deterministic)."""

    def finished(self, report):
        raise KeyboardInterrupt


def test_a_network_resumed_into_new_logs_says_resume_the_new_logs(tmp_path):
    """``--resume old --log new`` for several layers: every old log is copied into its new
    one before anything runs, so the run continues from ``--resume new`` (LayerJob.resume_as:
    "the --resume name of the run"); naming the old logs would measure again what the new
    ones got. (Mutant: resume_as = settings.resume or settings.log.)"""
    layers = [get_layer("alexnet.conv3"), get_layer("alexnet.conv4")]
    old, new = str(tmp_path / "old.jsonl"), str(tmp_path / "new.jsonl")
    tune_layers(layers, "v100", TuneSettings(strategy="random", budget=2, seed=0, log=old),
                out_dir=str(tmp_path / "k"), verify=False)
    jobs = plan_layers(layers, "v100", TuneSettings(strategy="random", budget=3, seed=0,
                                                    log=new, resume=old),
                       out_dir=str(tmp_path / "k"), verify=False)
    assert {j.resume_as for j in jobs} == {new}
    with pytest.raises(Interrupted) as info:
        run_layers(jobs, _StopAfterFirst())
    assert info.value.resume_as == new, str(info.value)
    assert str(info.value).endswith(f"resume with --resume {new}")
    # _into_new_logs: every old log copied into its new one before any layer ran, so the
    # layer not reached keeps its 2 records in its new log too: 3 + 2 kept
    logs = [tmp_path / f"new.{layer.name}.jsonl" for layer in layers]
    assert [len(read_log(p).entries) for p in logs] == [3, 2]
    assert info.value.measurements == 5


def test_an_all_network_interrupt_names_the_per_algorithm_logs(tmp_path):
    """``--algorithm all`` names each job's files per layer and algorithm, and so does the
    one line of an interrupted run (search.session.parallel.interrupted_run's doctest);
    the planned jobs must say so (LayerJob.per_algorithm). (Mutant: per_algorithm=False.)"""
    layers = [get_layer("alexnet.conv2"), get_layer("alexnet.conv3")]
    jobs = plan_layers(layers, "v100", TuneSettings(log=str(tmp_path / "run.jsonl")),
                       algorithm="all", out_dir=str(tmp_path / "k"))
    assert all(j.per_algorithm for j in jobs)
    line = str(interrupted_run(jobs, [], {0: Interrupted(3, jobs[0].settings.log)}))
    assert f"kept in {tmp_path / 'run'}.<layer>.<algorithm>.jsonl;" in line, line
    direct = plan_layers(layers, "v100", TuneSettings(log=str(tmp_path / "d.jsonl")),
                         out_dir=str(tmp_path / "k"))
    assert not any(j.per_algorithm for j in direct)


def test_equal_shapes_of_other_names_are_other_layers(tmp_path):
    """choose_algorithms: "a layer's group is a run of reports of that layer (equal name
    and shape)": a direct report of layer ``a`` and a Winograd report of an equally shaped
    layer ``b`` are two layers, each with its own choice, not one layer with two
    candidates. (Mutant: the name dropped from the grouping.)"""
    conv2 = get_layer("alexnet.conv2")
    a, b = (dataclasses.replace(conv2, name=n) for n in ("a", "b"))
    assert a == b and a.name != b.name  # a layer's equality is its shape
    [ra] = tune_layers([a], "v100", TuneSettings(strategy="random", budget=2, seed=0),
                       algorithm="direct", out_dir=str(tmp_path), verify=False)
    [rb] = tune_layers([b], "v100", TuneSettings(strategy="random", budget=2, seed=0),
                       algorithm="winograd", out_dir=str(tmp_path), verify=False)
    choices = choose_algorithms([ra, rb])
    assert [(c.layer.name, c.chosen.algorithm, len(c.candidates)) for c in choices] == [
        ("a", "direct", 1), ("b", "winograd", 1)]


@pytest.mark.parametrize("measure", ["model", "emulate"])
def test_a_choice_as_json_says_what_its_cost_is(tmp_path, measure):
    """AlgorithmChoice.to_dict: the cost is the model's estimated ms (``estimate``) or,
    for the emulator, which times nothing, the words it moved ("cost_unit": "words"); each
    candidate with its own best and evaluations. Checked against the reports' records.
    (Mutants: cost_unit always "ms", estimate always False, candidates' best_cost/evaluations.)"""
    from iobound.layer import ConvLayer
    layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1, name="t")
    reports = tune_layers([layer], "v100", TuneSettings(strategy="random", budget=1, seed=1),
                          measure=measure, algorithm="all", out_dir=str(tmp_path), verify=False)
    [choice] = choose_algorithms(reports)
    d = choice.to_dict()
    rec = choice.chosen.result.best.record
    timed = measure == "model"
    assert (rec.time_ms is not None) == timed  # the emulator times nothing
    assert d["cost_unit"] == ("ms" if timed else "words")
    assert d["estimate"] is timed  # the model's times are analytic estimates
    assert d["layer"] == "t" and d["algorithm"] == choice.chosen.algorithm
    assert d["best_config"] == dict(choice.chosen.result.best.config)
    # the lowest cost, whichever candidate comes first
    [back] = choose_algorithms(reports[::-1])
    assert {k: back.to_dict()[k] for k in ("algorithm", "best_cost", "best_config")} == {
        k: d[k] for k in ("algorithm", "best_cost", "best_config")}
    assert d["best_cost"] == min(r.result.best.record.cost for r in reports)
    if not timed:
        assert d["best_cost"] == rec.extra["traffic_words"]
    assert [(c["algorithm"], c["best_cost"], c["best_config"], c["evaluations"])
            for c in d["candidates"]] == [
        (r.algorithm, r.result.best.record.cost, dict(r.result.best.config), 1) for r in reports]


def _replay_cache(**kw):
    from search.kt_cache import KtCache
    grid = [(x, y) for x in range(1, 4) for y in range(1, 3)]
    fields = dict(tune_params={"x": [1, 2, 3], "y": [1, 2]}, device_name="gpu", kernel_name="k",
                  problem_size=[8, 8],
                  entries=[{"x": x, "y": y, "time": 1.0 + x + y} for x, y in grid])
    fields.update(kw)
    return KtCache(**fields)


@pytest.mark.parametrize("bad", ["device", "problem", "history", "resume", "log", "zero_shot"])
def test_a_replay_refuses_bad_input_before_anything_runs(tmp_path, bad):
    """tune_replay refuses, before anything is measured or written: a recorded device name
    or problem size that cannot be stored ("refused now, not when the run's measurements are
    stored (or logged)"), a history database that cannot be opened (check_history) or, for
    zero-shot tuning, is missing (check_zero_shot_db: "before a new database is created"), a
    ``resume`` log that does not exist and a ``log`` that does (check_log_paths: "log must be
    new and resume must exist before anything runs"). (Mutants: each check dropped.)"""
    from iobound.errors import InvalidInputError
    from search.session import tune_replay
    log = tmp_path / "run.jsonl"
    cache = _replay_cache(**{"device": {"device_name": "gpu\nA100"},
                             "problem": {"problem_size": [8, float("nan")]}}.get(bad, {}))
    settings = TuneSettings(strategy="random", budget=3, seed=0, log=str(log))
    if bad == "history":
        (tmp_path / "h.db").write_text("not a database\n")
        settings = dataclasses.replace(settings, history=str(tmp_path / "h.db"))
    elif bad == "zero_shot":
        settings = dataclasses.replace(settings, strategy="zero_shot",
                                       history=str(tmp_path / "h.db"))  # no such database
    elif bad == "resume":
        settings = dataclasses.replace(settings, log=None, resume=str(log))  # no such log
    elif bad == "log":
        tune_replay(cache, dataclasses.replace(settings, budget=2))
        before = log.read_bytes()
    with pytest.raises(InvalidInputError):
        tune_replay(cache, settings)
    if bad == "log":
        assert log.read_bytes() == before  # the earlier run's log untouched
    else:
        assert not log.exists()  # nothing ran, nothing was logged
    if bad == "zero_shot":
        assert not (tmp_path / "h.db").exists()


def test_logged_count_reads_the_log_else_the_resume(tmp_path):
    """logged_count: "how many records the log of settings (its log, else its resume)
    holds". A run resumed into a new log, stopped before its loop, keeps nothing in that new
    log: counting the old one would report measurements "kept in" a log that does not exist.
    (Mutant: the resume read first.)"""
    from search.session.files import logged_count
    old = str(tmp_path / "old.jsonl")
    tune_layers([get_layer("alexnet.conv3")], "v100",
                TuneSettings(strategy="random", budget=3, seed=0, log=old),
                out_dir=str(tmp_path / "k"), verify=False)
    assert logged_count(TuneSettings(resume=old)) == 3
    assert logged_count(TuneSettings(log=old)) == 3
    assert logged_count(TuneSettings(log=str(tmp_path / "new.jsonl"), resume=old)) == 0


@pytest.mark.parametrize("flag", ["resume", "out_dir"])
def test_plan_refuses_a_database_resume_and_a_file_out_dir(tmp_path, flag):
    """check_log_paths: a tuning database given as ``resume`` is refused as one ("a database
    is read with --history"); check_outputs: an ``--out-dir`` that cannot be used (a file)
    is refused before anything runs, not when the winner's kernel is written at the end.
    (Mutants: the database check dropped; check_output_dir dropped.)"""
    from iobound.errors import InvalidInputError
    layer = get_layer("alexnet.conv3")
    db = str(tmp_path / "h.db")
    tune_layers([layer], "v100", TuneSettings(strategy="random", budget=2, seed=0, history=db),
                out_dir=str(tmp_path / "k"), verify=False)
    if flag == "resume":
        with pytest.raises(InvalidInputError, match="tuning database"):
            plan_layers([layer], "v100", TuneSettings(resume=db), out_dir=str(tmp_path / "k"))
    else:
        with pytest.raises(InvalidInputError, match="--out-dir"):
            plan_layers([layer], "v100", TuneSettings(), out_dir=db)


def test_a_history_store_refused_at_the_end_still_writes_the_export(tmp_path, monkeypatch):
    """write_outcomes: "a write that fails ... does not stop the other", the history
    refusing the run's records included (InvalidInputError, e.g. a problem holding NaN);
    the run ends with an OutputWriteError (exit 1) saying where the measurements are, not
    as bad input. (Mutant: InvalidInputError no longer caught.)"""
    from iobound.errors import InvalidInputError
    from search.session import storage
    from search.session.files import OutputWriteError

    def refuse(*args, **kwargs):
        raise InvalidInputError("a recorded problem holds NaN")

    monkeypatch.setattr(storage, "store_history", refuse)
    export, log = tmp_path / "c.json", tmp_path / "run.jsonl"
    with pytest.raises(OutputWriteError, match="--history") as info:
        tune_layers([get_layer("alexnet.conv3")], "v100",
                    TuneSettings(strategy="random", budget=2, seed=0, log=str(log),
                                 history=str(tmp_path / "h.db"), export_cache=str(export)),
                    out_dir=str(tmp_path / "k"), verify=False)
    assert info.value.exit_code == 1 and str(log) in str(info.value)
    assert export.is_file()


def test_the_history_best_ever_is_of_the_runs_own_algorithm(tmp_path):
    """store_history: "the best ever under its key of this space's parameter names (a
    Winograd run's best is never the direct kernel's)": a layer's direct and Winograd runs
    share a history key; each report's best ever is the best of its own algorithm's
    records. (Mutant: the best over every record of the key.)"""
    layer, db = get_layer("alexnet.conv2"), str(tmp_path / "h.db")
    first = tune_layers([layer], "v100", TuneSettings(strategy="random", budget=3, seed=0,
                                                      history=db),
                        algorithm="all", out_dir=str(tmp_path / "k"), verify=False)
    own = {r.algorithm: [t.record.time_ms for t in r.result.trials if t.record.is_ok]
           for r in first}
    for r in first:
        assert r.history.best_ever_ms == pytest.approx(min(own[r.algorithm]))
    worse = max(own, key=lambda a: min(own[a]))  # runs again: the other's best is lower
    [again] = tune_layers([layer], "v100", TuneSettings(strategy="random", budget=3, seed=1,
                                                        history=db),
                          algorithm=worse, out_dir=str(tmp_path / "k"), verify=False)
    mine = own[worse] + [t.record.time_ms for t in again.result.trials if t.record.is_ok]
    assert again.history.best_ever_ms == pytest.approx(min(mine))


def test_the_choice_line_claims_no_comparison_it_did_not_make(tmp_path, capsys):
    """print_choice: a layer only one algorithm computes (a 1x1 kernel: no Winograd) is not
    called "the fastest"; the emulator's costs are words, never printed as ms; the line
    ends with the chosen kernel (README's example). (Mutants: the single-candidate wording
    dropped; " ms" printed whatever the unit; the kernel dropped.)"""
    from iobound.layer import ConvLayer
    from search.cli.tune_print import print_choice
    one = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="p")
    three = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1, name="t")
    for layer, measure in ((one, "model"), (three, "emulate")):
        reports = tune_layers([layer], "v100", TuneSettings(strategy="random", budget=1),
                              measure=measure, algorithm="all", out_dir=str(tmp_path),
                              verify=False)
        [choice] = choose_algorithms(reports)
        print_choice(choice)
        line = capsys.readouterr().out
        assert line.startswith(f"algorithm: {choice.chosen.algorithm} "), line
        assert line.rstrip().endswith(f"; kernel {choice.chosen.winner.kernel_path}"), line
        if layer is one:
            assert len(reports) == 1 and "fastest" not in line, line
        else:
            assert len(reports) == 2 and " ms" not in line and "words" in line, line


@pytest.mark.parametrize("field", ["budget", "patience"])
def test_tune_refuses_a_budget_or_patience_of_zero(tmp_path, field):
    """tune_args: "Refuse a budget or patience that is no int of at least 1", 0 included
    (InvalidInputError naming it, before anything is measured or logged); and reusable
    records keyed by an index past the space's last ("each index in space"). (Mutants:
    < 0; 0 <= i <= size.)"""
    from iobound.errors import InvalidInputError
    from search.measure.base import Measurer, MeasureRecord
    from search.grid_space import GridSpace
    from search.tuner import tune

    class Counting(Measurer):
        name, calls = "counting", 0

        def measure(self, configs):
            self.calls += len(configs)
            return [MeasureRecord.ok(c, time_ms=1.0 + c["a"]) for c in configs]

    meas, log = Counting(), tmp_path / "run.jsonl"
    kw = {"budget": 4, field: 0}
    if field == "budget":  # and a reusable index one past the space's last (0 to 5)
        with pytest.raises(InvalidInputError, match="reusable"):
            tune(GridSpace({"a": list(range(6))}), meas, strategy="grid", seed=0, budget=4,
                 log=str(log), reusable={6: MeasureRecord.ok({"a": 5}, time_ms=1.0)})
    with pytest.raises(InvalidInputError, match=f"{field} must be >= 1, got 0"):
        tune(GridSpace({"a": list(range(6))}), meas, strategy="grid", seed=0, log=str(log), **kw)
    assert meas.calls == 0 and not log.exists()


def test_the_choice_line_without_a_winner_gives_each_candidates_outcome(tmp_path, capsys):
    """print_choice: "the fastest, and the others' best"; when no algorithm ran a
    configuration the line still names each candidate and its outcome. (Mutant: the
    candidates dropped from that line.)"""
    from search.cli.tune_print import print_choice
    from search.session.settings import Builders
    from tests.search.test_tune_all_algorithms_edges import failing_measurer as failing
    reports = tune_layers([get_layer("alexnet.conv5")], "v100",
                          TuneSettings(strategy="random", budget=1), algorithm="all",
                          out_dir=str(tmp_path), verify=False, builders=Builders(measurer=failing))
    [choice] = choose_algorithms(reports)
    assert choice.chosen is None
    print_choice(choice)
    line = capsys.readouterr().out.strip()
    assert line.startswith("algorithm: none"), line
    assert [r.algorithm for r in reports] == ["direct", "winograd"]
    assert all(r.algorithm in line for r in reports), line


def test_a_failed_kernel_write_of_a_resumed_run_names_its_log(tmp_path, monkeypatch):
    """A run continued in place (``resume`` only) whose kernel file cannot be written at the
    end: the OutputWriteError says where the measurements are, the resumed log (kept_where;
    "the measurements are kept in ..."), not "not logged (no --log)". (Mutant: the job's
    ``log`` only, without its ``resume``.)"""
    import errno

    from search import winner
    from search.session.files import OutputWriteError
    layer, run = get_layer("alexnet.conv3"), str(tmp_path / "run.jsonl")
    tune_layers([layer], "v100", TuneSettings(strategy="random", budget=2, seed=0, log=run),
                out_dir=str(tmp_path / "k"), verify=False)

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(winner, "report_winner", disk_full)
    with pytest.raises(OutputWriteError) as info:
        tune_layers([layer], "v100", TuneSettings(strategy="random", budget=3, seed=0, resume=run),
                    out_dir=str(tmp_path / "k"), verify=False)
    assert f"the 3 measurements are kept in {run} (resume with --resume {run})" in str(info.value)


def test_a_layer_report_gives_the_unpruned_size_of_its_space(tmp_path):
    """LayerReport: ``space_size`` is the Table 1 pruned space, ``unpruned_size`` the space
    without that pruning (as ``iobound tune`` prints: "N configurations (Table 1 pruned; M
    unpruned)"), counted here by the unpruned ConvSpace itself. (Mutant: the pruned size.)"""
    from iobound.layer import ConvLayer
    from search.conv_space import ConvSpace
    layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=64, k_h=3, k_w=3, name="u")
    [rep] = tune_layers([layer], "v100", TuneSettings(strategy="random", budget=1),
                        out_dir=str(tmp_path), verify=False)
    assert rep.space_size == len(ConvSpace(layer, "v100"))
    assert rep.unpruned_size == len(ConvSpace(layer, "v100", pruned=False)) > rep.space_size
    assert rep.to_dict()["unpruned_size"] == rep.unpruned_size


def test_an_all_run_of_one_job_interrupted_says_resume_the_runs_name(tmp_path):
    """``algorithm="all"`` on a layer only direct computes: one job, whose log is named per
    layer and algorithm (run.<layer>.direct.jsonl); interrupted, the run is resumed with the
    run's name (LayerJob.resume_as, read back per algorithm), not the per-algorithm log,
    which a resumed ``all`` run would name again. (Mutant: KeptRun without resume_as.)"""
    from iobound.layer import ConvLayer
    layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="p")
    run = str(tmp_path / "run.jsonl")
    jobs = plan_layers([layer], "v100", TuneSettings(strategy="random", budget=2, log=run),
                       algorithm="all", out_dir=str(tmp_path / "k"), verify=False)
    assert [j.algorithm for j in jobs] == ["direct"]
    with pytest.raises(Interrupted) as info:
        run_layers(jobs, _StopAfterFirst())
    line = str(info.value)
    assert f"kept in {tmp_path / 'run.p.direct.jsonl'};" in line, line
    assert line.endswith(f"resume with --resume {run}"), line
    # and that resume continues the run
    [rep] = tune_layers([layer], "v100", TuneSettings(strategy="random", budget=3, resume=run),
                        algorithm="all", out_dir=str(tmp_path / "k"), verify=False)
    assert rep.result.resumed == 2 and rep.result.evaluations == 3


def test_plan_refuses_any_layers_export_that_cannot_be_written(tmp_path):
    """check_outputs: an ``--export-cache`` that cannot be written is refused before anything
    runs, per layer for several: the second layer's export a folder is refused too, not
    found when that layer ends. (Mutant: only the first layer's checked.)"""
    from iobound.errors import InvalidInputError
    layers = [get_layer("alexnet.conv3"), get_layer("alexnet.conv4")]
    (tmp_path / "c.alexnet.conv4.json").mkdir()
    with pytest.raises(InvalidInputError, match="--export-cache"):
        plan_layers(layers, "v100", TuneSettings(export_cache=str(tmp_path / "c.json")),
                    out_dir=str(tmp_path / "k"))
