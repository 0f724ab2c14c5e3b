"""``iobound tune``: every option reaches the session it configures. Found by mutation
testing (a flag dropped on its way to :class:`~search.session.TuneSettings` or to
:func:`~search.session.plan_layers` went unnoticed). Spies stand in for ``plan_layers``
and ``tune_replay`` and stop the run once called; the reference is each option's
``--help`` text and the defaults it states."""

from __future__ import annotations

import pytest

from iobound.devices import get_device
from search.cli.main import main

SMALL = "cin=8,hin=8,cout=16,kh=3,pad=1"


class _Stop(Exception):
    """Raised by a spy once it has seen its call."""


@pytest.fixture
def planned(monkeypatch):
    """Run ``iobound tune ARGV`` up to ``plan_layers``; return what it was given."""
    import search.session

    def run(*argv):
        seen = {}

        def spy(layers, device, settings, **kwargs):
            seen.update(kwargs, layers=layers, device=device, settings=settings)
            raise _Stop

        monkeypatch.setattr(search.session, "plan_layers", spy)
        with pytest.raises(_Stop):
            main(["tune", *argv])
        return seen
    return run


def test_search_options_reach_the_settings(planned, tmp_path):
    p = {k: str(tmp_path / f"{k}") for k in ("log", "history", "export", "out")}
    seen = planned("--layer", SMALL, "--measure", "model", "--device", "a100", "--strategy", "random",
                   "--budget", "9", "--seed", "5", "--batch-size", "2", "--patience", "3",
                   "--log", p["log"], "--history", p["history"], "--reuse",
                   "--export-cache", p["export"] + ".json", "--out-dir", p["out"], "--no-verify")
    s = seen["settings"]
    assert (s.strategy, s.budget, s.seed, s.options, s.patience) == ("random", 9, 5,
                                                                    {"batch_size": 2}, 3)
    assert (s.log, s.resume, s.history, s.reuse, s.export_cache) == (
        p["log"], None, p["history"], True, p["export"] + ".json")
    assert s.executor is None and s.tune_repeats is False  # model measures in process
    assert (seen["measure"], seen["algorithm"], seen["out_dir"], seen["verify"]) == (
        "model", "direct", p["out"], False)
    assert seen["device"].name == get_device("a100").name
    assert [layer.c_out for layer in seen["layers"]] == [16]


def test_default_device_is_v100_without_a_gpu(planned):
    """--help: default v100 (the paper's GPU) when nothing is measured on this GPU."""
    assert planned("--layer", SMALL, "--measure", "model")["device"].name == get_device("v100").name


@pytest.mark.parametrize("gpu, device", [("Tesla V100-SXM2-16GB", "v100"), ("NVIDIA T4", "t4"),
                                         ("Mystery GPU", "v100")])
def test_without_measure_a_gpu_here_is_measured_with_cuda_on_its_preset(planned, monkeypatch,
                                                                          gpu, device):
    """--help: without --measure, cuda when a GPU and pycuda are present, on this GPU's
    preset (the default preset for a GPU without one)."""
    import search.measure.cuda

    monkeypatch.setattr(search.measure.cuda, "cuda_available", lambda: True)
    monkeypatch.setattr(search.measure.cuda, "gpu_name", lambda: gpu)
    seen = planned("--layer", SMALL)
    assert seen["measure"] == "cuda" and seen["device"].name == get_device(device).name


def test_defaults_reach_the_settings(planned):
    """Without options: explorer, budget 48, seed 0, the strategy's own batch size,
    no patience, verify on, kernels in ./iobound-kernels, the direct template."""
    seen = planned("--layer", SMALL, "--measure", "model")
    s = seen["settings"]
    assert (s.strategy, s.budget, s.seed, s.options, s.patience, s.reuse) == (
        "explorer", 48, 0, None, None, False)
    assert (seen["algorithm"], seen["out_dir"], seen["verify"]) == ("direct", "iobound-kernels", True)


def test_resume_and_winograd_reach_the_plan(planned, tmp_path):
    log = tmp_path / "run.jsonl"
    seen = planned("--layer", SMALL, "--measure", "model", "--algorithm", "winograd",
                   "--resume", str(log))
    assert seen["settings"].resume == str(log) and seen["algorithm"] == "winograd"


@pytest.mark.parametrize("measure", ["emulate", "cuda"])
def test_compile_heavy_measurers_default_to_local_workers(planned, measure):
    """emulate and cuda measure through local workers without --executor (--help)."""
    ex = planned("--layer", SMALL, "--measure", measure, "--device", "v100")["settings"].executor
    assert ex is not None and ex.executor == "local"


def test_executor_options_reach_the_settings(planned):
    seen = planned("--layer", SMALL, "--measure", "model", "--executor", "local", "--workers", "2",
                   "--timeout", "30", "--retries", "2")
    ex = seen["settings"].executor
    assert (ex.executor, ex.workers, ex.timeout_s, ex.retries, ex.ray_address) == (
        "local", 2, 30.0, 2, None)


def test_ray_options_reach_the_settings(planned):
    seen = planned("--network", "alexnet", "--measure", "model", "--executor", "ray",
                   "--ray-address", "127.0.0.1:6379", "--parallel-layers", "3")
    ex = seen["settings"].executor
    assert (ex.executor, ex.ray_address, ex.parallel_layers) == ("ray", "127.0.0.1:6379", 3)


def test_tune_repeats_reaches_the_settings(planned):
    seen = planned("--network", "alexnet", "--measure", "model", "--tune-repeats")
    assert seen["settings"].tune_repeats is True and len(seen["layers"]) == 5


def test_zero_shot_sets_strategy_and_budget(planned, tmp_path):
    s = planned("--layer", SMALL, "--measure", "model", "--zero-shot", "3", "--budget", "3",
                "--history", str(tmp_path / "h.db"))["settings"]
    assert (s.strategy, s.budget) == ("zero_shot", 3)


def test_replay_settings_reach_tune_replay(monkeypatch, tmp_path, synth_cache_path):
    import search.session

    seen = {}

    def spy(file, settings, **kwargs):
        seen.update(file=file, settings=settings)
        raise _Stop

    monkeypatch.setattr(search.session, "tune_replay", spy)
    with pytest.raises(_Stop):
        main(["tune", "--measure", f"replay:{synth_cache_path}", "--strategy", "sa", "--budget",
              "7", "--seed", "3", "--patience", "2", "--log", str(tmp_path / "r.jsonl")])
    s = seen["settings"]
    assert seen["file"] == str(synth_cache_path)
    assert (s.strategy, s.budget, s.seed, s.patience, s.log, s.executor) == (
        "sa", 7, 3, 2, str(tmp_path / "r.jsonl"), None)


@pytest.mark.parametrize("argv, needle", [
    (["--layer", SMALL, "--tune-repeats"], "--tune-repeats needs --network"),
    (["--layer", "cin=4,hin=9,cout=4,kh=3,stride=2", "--algorithm", "winograd"], "stride"),
    (["--network", "alexnet", "--parallel-layers", "2"], "--parallel-layers needs --executor"),
    (["--layer", SMALL, "--ray-address", "127.0.0.1:6379"], "--ray-address needs --executor ray"),
    (["--layer", SMALL, "--workers", "2"], "--workers needs --executor local|ray"),
    (["--layer", SMALL, "--zero-shot", "0", "--history", "h.db"], "--zero-shot must be >= 1, got 0"),
    (["--layer", SMALL, "--measure", "model:x"], "--measure must be one of cuda, emulate, model, "
                                                 "replay:FILE; got 'model:x'"),
    (["--layer", SMALL, "--strategy", "zero_shot"], "--strategy zero_shot ranks the space with the "
                                                    "records of --history DB"),
])
def test_option_without_what_it_needs_is_one_line_exit_2(capsys, tmp_path, argv, needle):
    """An option that means nothing without another is refused before anything runs."""
    measure = [] if any(a.startswith("model:") for a in argv) else ["--measure", "model"]
    code = main(["tune", *measure, "--budget", "2", "--out-dir", str(tmp_path), *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and needle in err
    assert not any(tmp_path.iterdir())


def test_replay_without_a_timed_record_is_exit_1(capsys, tmp_path):
    """README exit codes: 1 when there is no result (every replayed record failed)."""
    import json

    from tests.search.conftest import synth_cache_dict

    raw = synth_cache_dict()
    for e in raw["cache"].values():
        e["time"] = "RuntimeFailedConfig"
        e.pop("times", None)
    (tmp_path / "failed.json").write_text(json.dumps(raw))
    code = main(["tune", "--measure", f"replay:{tmp_path / 'failed.json'}", "--budget", "3",
                 "--strategy", "random", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["best"] is None and out["evaluations"] == 3


@pytest.mark.parametrize("entries, argv, refused", [
    (4, ["--zero-shot", "2"], "more than --zero-shot 2"),
    (4, ["--strategy", "zero_shot", "--budget", "2"], "more than --budget 2"),
    (2, ["--zero-shot", "2"], None),  # exactly K: the top K, continued
])
def test_zero_shot_resume_of_a_longer_layer_log_is_refused(capsys, monkeypatch, tmp_path,
                                                            entries, argv, refused):
    """A zero-shot run of K with a --resume log of more than K measurements is refused for a
    layer too, not only for a replay, naming the option that set K (zero_shot_args doc).
    The plan is one job with the run's settings, the log a stand-in with ``entries``."""
    import types

    import search.records
    import search.session

    from search.session.plan import LayerJob
    monkeypatch.setattr(search.session, "plan_layers",
                        lambda layers, device, settings, **kw: [LayerJob(
                            settings=settings, layer=layers[0], device=device,
                            algorithm="direct", measure="model", out_dir=str(tmp_path / "k"),
                            verify=False)])
    _fake_reports(monkeypatch, [1.0])
    logs = []

    def read_log(path):
        logs.append(path)
        return types.SimpleNamespace(entries=[None] * entries, header={"strategy": "zero_shot"})

    monkeypatch.setattr(search.records, "read_log", read_log)
    log = str(tmp_path / "run.jsonl")
    code = main(["tune", "--layer", SMALL, "--measure", "model", *argv, "--history",
                 str(tmp_path / "h.db"), "--resume", log, "--out-dir", str(tmp_path / "k"), "--json"])
    out, err = capsys.readouterr()
    assert set(logs) == {log}  # the run's log is read (by the zero-shot check too)
    if refused:
        assert code == 2 and out == "" and err.strip() == (
            f"iobound tune: error: --resume {log} already holds {entries} measurements, {refused}")
    else:
        assert code == 0 and err == ""


def _fake_reports(monkeypatch, bests):
    """Make ``run_layers`` return one stand-in report per job, the i-th with best
    ``bests[i]`` (None: nothing timed) and ``i + 1`` evaluations."""
    import types

    import search.session

    def run_layers(jobs, observer):
        return [types.SimpleNamespace(
            to_dict=lambda i=i: {"layer": i}, evaluations=i + 1,
            result=types.SimpleNamespace(best=bests[i % len(bests)])) for i in range(len(jobs))]

    monkeypatch.setattr(search.session, "run_layers", run_layers)
    monkeypatch.setattr("search.cli.tune_network.finish_network", lambda *a, **k: None)


@pytest.mark.parametrize("measure, notice", [(["--measure", "model"], False), ([], True)])
def test_layer_json_names_the_measurer_and_the_notice(capsys, monkeypatch, tmp_path, measure,
                                                      notice):
    """--json of a layer run carries "measure", and the notice when --measure was chosen
    for the user (no GPU here: the analytic model)."""
    import json

    import search.measure.cuda

    monkeypatch.setattr(search.measure.cuda, "cuda_available", lambda: False)
    _fake_reports(monkeypatch, [1.0])
    assert main(["tune", "--layer", SMALL, *measure, "--out-dir", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["measure"] == "model" and ("notice" in out) == notice
    if notice:
        assert "analytic model" in out["notice"]


@pytest.mark.parametrize("bests, code", [([1.0], 0), ([1.0, None], 1), ([None], 1)])
def test_network_json_and_exit_code(capsys, monkeypatch, tmp_path, bests, code):
    """--network --json: the strategy, the evaluations summed over the layers, one entry
    per layer; exit 1 unless every layer has a best (README exit codes)."""
    import json

    from iobound.networks import network_layers

    _fake_reports(monkeypatch, bests)
    n = len(network_layers("alexnet"))
    assert main(["tune", "--network", "alexnet", "--measure", "model", "--strategy", "random",
                 "--out-dir", str(tmp_path), "--json"]) == code
    out = json.loads(capsys.readouterr().out)
    assert (out["network"], out["strategy"], out["measure"]) == ("alexnet", "random", "model")
    assert out["evaluations"] == sum(range(1, n + 1)) and out["layers"] == [
        {"layer": i} for i in range(n)]


def test_the_cli_default_out_dir_is_the_sessions():
    """tune's --out-dir default is spelt in the CLI module (no session import to build the
    parser); it must be the one tune_layers and plan_layers default to."""
    import inspect

    from search.cli.tune_cmd import DEFAULT_OUT_DIR
    from search.session import plan, run
    assert DEFAULT_OUT_DIR == plan.DEFAULT_OUT_DIR
    for fn in (plan.plan_layers, run.tune_layers):
        assert inspect.signature(fn).parameters["out_dir"].default == DEFAULT_OUT_DIR


@pytest.mark.parametrize("given, said", [
    (["--network", ""], "unknown network ''"),
    (["--network", "", "--tune-repeats"], "unknown network ''"),
    (["--network", "", "--network-json", "t.json"], "unknown network ''"),
    (["--layer", ""], "layer spec is empty"),
])
def test_an_empty_layer_or_network_is_named_as_select_names_it(capsys, tmp_path, monkeypatch, given, said):
    """An empty --layer or --network is that option's own error (as in ``select``), not
    "give --layer or --network" nor another option's "needs --network"."""
    monkeypatch.chdir(tmp_path)
    assert main(["tune", *given]) == 2
    assert said in capsys.readouterr().err


def test_replay_refuses_an_empty_layer_as_it_refuses_any(capsys):
    """``--measure replay:FILE`` defines the space: ``--layer ""`` given is still given."""
    assert main(["tune", "--measure", "replay:x.json", "--layer", ""]) == 2
    assert "do not give --layer/--network/--device/--algorithm" in capsys.readouterr().err
