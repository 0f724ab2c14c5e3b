"""Options the ``iobound`` help ties to another option or run kind, checked against what
the run does with them.

README ("Hostile input", "Options that would be ignored"): "an option that means
nothing in its run is exit 2 naming what it needs ..., never silently dropped". Each
test gives an option in a run where, by its own ``--help`` text, it means nothing (the
nvcc target without ``--compile``, the emulator's data seed without ``--emulate``, a
worker's timeout or retries where no worker runs, the kernel folder and the emulator
check of a replay, which writes and checks no kernel) and expects one stderr line
naming it and exit 2, nothing written. Also: documented choices only (``--measure``),
and an out-of-range ``--zero-shot K`` named as the option typed.
"""

from __future__ import annotations

import json

import pytest

from search.cli.main import main

LAYER = "cin=3,hin=8,cout=4,kh=3,pad=1"
DIRECT = "x=4,y=4,z=4,alpha=2,tx=4,ty=2,tz=2"


def _one_line_exit_2(capsys, code: int, needle: str) -> None:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, f"exit {code}; stdout {out[-300:]!r}"
    assert len(lines) == 1 and needle in lines[0], err
    assert out == ""


# -- iobound kernel ---------------------------------------------------------------------

@pytest.mark.parametrize("option, value", [
    # --arch: "nvcc target for --compile". Without --compile nothing is compiled: the
    # target was checked and dropped (exit 0, the source written)
    ("--arch", "sm_75"),
    # --seed: "random data seed for --emulate". Without --emulate no data is drawn
    ("--seed", "7"),
])
def test_kernel_option_of_a_step_not_asked_for_is_refused(capsys, tmp_path, option, value):
    emit = tmp_path / "k.cu"
    code = main(["kernel", "--layer", LAYER, "--config", DIRECT, option, value,
                 "--emit", str(emit)])
    _one_line_exit_2(capsys, code, option)
    assert not emit.exists()


def test_kernel_seed_default_is_still_zero(monkeypatch, tmp_path):
    """Refusing a lone --seed keeps the emulation's default seed 0 (the help's default)."""
    import kernels.verify

    seen = {}

    class Stop(Exception):
        pass

    def spy(layer, config, seed=None, **kwargs):
        seen["seed"] = seed
        raise Stop

    monkeypatch.setattr(kernels.verify, "emulate_and_check", spy)
    with pytest.raises(Stop):
        main(["kernel", "--layer", LAYER, "--config", DIRECT, "--emulate",
              "--emit", str(tmp_path / "k.cu")])
    assert seen == {"seed": 0}


# -- iobound tune: executor options where no worker runs ---------------------------------

@pytest.mark.parametrize("extra, flag", [
    (["--timeout", "30"], "--timeout"),
    (["--retries", "3"], "--retries"),
])
def test_tune_worker_options_in_process_are_refused(capsys, tmp_path, extra, flag):
    """--timeout ("before its worker is killed") and --retries ("on a fresh worker") name
    workers; the model measurer runs in process without --executor, where --workers and
    --ray-address are refused: these two were taken and dropped (a 0.001 s timeout
    killed nothing)."""
    code = main(["tune", "--layer", LAYER, "--measure", "model", "--budget", "2",
                 "--no-verify", "--out-dir", str(tmp_path / "k"), *extra])
    _one_line_exit_2(capsys, code, flag)
    assert not (tmp_path / "k").exists()


def test_tune_worker_options_with_an_executor_still_apply(monkeypatch, tmp_path):
    """With --executor the same options reach the executor, and their defaults (300 s,
    1 retry: the help's) still do when they are not given."""
    from search.session import plan as plan_module

    seen = []

    class Stop(Exception):
        pass

    def spy(layers, device, settings, **kwargs):
        seen.append(settings.executor)
        raise Stop

    monkeypatch.setattr(plan_module, "plan_layers", spy)
    import search.session
    monkeypatch.setattr(search.session, "plan_layers", spy)
    for extra in ([], ["--timeout", "30", "--retries", "2"]):
        with pytest.raises(Stop):
            main(["tune", "--layer", LAYER, "--measure", "model", "--budget", "2",
                  "--executor", "local", "--workers", "1", "--out-dir", str(tmp_path / "k"),
                  *extra])
    assert [(e.timeout_s, e.retries) for e in seen] == [(300.0, 1), (30.0, 2)]


# -- iobound tune: a replay writes and checks no kernel ---------------------------------

@pytest.fixture()
def replay_cache(tmp_path):
    from search.kt_cache import KtCache
    from search.kt_cache_write import write_cache
    return write_cache(str(tmp_path / "space.json"), KtCache(
        tune_params={"x": [1, 2, 3]},
        entries=[{"x": 1, "time": 2.0}, {"x": 2, "time": 1.5}, {"x": 3, "time": 1.8}],
        device_name="gpu", kernel_name="k"))


def test_tune_replay_runs_without_out_dir(capsys, replay_cache):
    """The reference run: a replay, no kernel options, exit 0."""
    code = main(["tune", "--measure", f"replay:{replay_cache}", "--budget", "2", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["best"] is not None


@pytest.mark.parametrize("extra, flag", [
    (["--out-dir", "KDIR"], "--out-dir"),
    (["--no-verify"], "--no-verify"),
    (["--network-json", "NJ"], "--network-json"),
])
def test_tune_replay_refuses_kernel_options(capsys, tmp_path, replay_cache, extra, flag):
    """--out-dir ("where the best kernel's .cu is written"), --no-verify ("skip the
    emulator check of the winner") and --network-json ("write the network table"): a
    replay writes no kernel, checks none and has no network table (the file was not
    written, exit 0), and already refuses --layer/--device/--algorithm, which it would
    not use either."""
    extra = [{"KDIR": str(tmp_path / "k"), "NJ": str(tmp_path / "t.json")}.get(a, a)
             for a in extra]
    code = main(["tune", "--measure", f"replay:{replay_cache}", "--budget", "2", *extra])
    _one_line_exit_2(capsys, code, flag)


# -- iobound tune: documented choices, and errors naming the option typed ----------------

@pytest.mark.parametrize("measure", ["model:", "cuda:"])
def test_tune_measure_accepts_only_the_documented_forms(capsys, tmp_path, measure):
    """--measure: "cuda | emulate | model | replay:FILE"; 'model:' is none of them."""
    code = main(["tune", "--layer", LAYER, "--measure", measure, "--budget", "2",
                 "--no-verify", "--out-dir", str(tmp_path / "k")])
    _one_line_exit_2(capsys, code, "--measure")


def test_tune_zero_shot_past_the_budget_limit_names_zero_shot(capsys, tmp_path):
    """--zero-shot K past the budget limit: the error named 'budget=', an option not given."""
    code = main(["tune", "--layer", LAYER, "--measure", "model", "--zero-shot", "99999999999",
                 "--history", str(tmp_path / "h.db"), "--out-dir", str(tmp_path / "k")])
    _one_line_exit_2(capsys, code, "--zero-shot")
