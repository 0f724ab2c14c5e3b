"""Bad input is one line on stderr and exit 2 (README, "Hostile input"). ``iobound tune``
without ``--measure`` on a machine without a GPU prints a "notice: no GPU ..." line before
the run, and a ``--resume`` alone one saying what it took from the log; a ``--resume`` log
of another layer (or of another measurer), a log a live run still writes and a Ray cluster
that does not answer were refused only inside the run, after that notice: exit 2 with two
stderr lines. They are now refused when the run is planned, before anything is built or
printed. Loopback only."""

import socket

import pytest

import search.measure.cuda as cuda
from iobound.errors import InvalidInputError
from iobound.layer_spec import parse_layer_spec
from search.cli.main import main
from search.log_writer import hold_log
from search.session import TuneSettings, plan_layers


@pytest.fixture
def model_log(tmp_path, capsys):
    log = tmp_path / "run.jsonl"
    assert main(["tune", "--layer", "cin=2,hin=6,cout=2,kh=3,pad=1", "--measure", "model",
                 "--budget", "2", "--no-verify", "--json", "--log", str(log),
                 "--out-dir", str(tmp_path / "k")]) == 0
    capsys.readouterr()
    return log


@pytest.mark.parametrize("argv, needle", [
    (["--layer", "cin=4,hin=8,cout=4,kh=3"], "another space (layer"),
    (["--layer", "cin=2,hin=6,cout=2,kh=3,pad=1", "--algorithm", "winograd"],
     "another space (algorithm"),
    (["--layer", "cin=2,hin=6,cout=2,kh=3,pad=1", "--measure", "emulate"],
     "was measured with 'model', not 'emulate'"),
])
def test_resume_of_another_run_is_one_stderr_line(capsys, tmp_path, monkeypatch, model_log,
                                                  argv, needle):
    monkeypatch.setattr(cuda, "cuda_available", lambda: False)  # the default measure: model
    code = main(["tune", *argv, "--budget", "2", "--no-verify", "--resume", str(model_log),
                 "--out-dir", str(tmp_path / "k")])
    out, err = capsys.readouterr()
    assert code == 2 and needle in err
    assert len(err.splitlines()) == 1 and out == "", err


def test_plan_refuses_another_layers_log_before_building(model_log):
    with pytest.raises(InvalidInputError, match="another space"):
        plan_layers([parse_layer_spec("cin=4,hin=8,cout=4,kh=3")], "v100",
                    TuneSettings(resume=str(model_log)))
    plan_layers([parse_layer_spec("cin=2,hin=6,cout=2,kh=3,pad=1")], "v100",
                TuneSettings(resume=str(model_log)))  # its own layer: planned


@pytest.mark.parametrize("new_log", [False, True])
def test_a_live_runs_log_resumed_alone_is_one_line(model_log, tmp_path, capsys, new_log):
    more = ["--log", str(tmp_path / "next.jsonl")] if new_log else []
    held = hold_log(model_log)  # locked as a run writing it locks it
    try:
        code = main(["tune", "--resume", str(model_log), "--budget", "4", "--no-verify",
                     "--out-dir", str(tmp_path / "k"), *more])
    finally:
        held.close()
    out, err = capsys.readouterr()
    assert code == 2 and "is being written by another run" in err
    assert len(err.splitlines()) == 1 and "notice" not in err, err
    assert out == ""


def test_the_same_log_resumed_once_that_run_ended_goes_on(model_log, tmp_path, capsys):
    assert main(["tune", "--resume", str(model_log), "--budget", "4", "--no-verify",
                 "--out-dir", str(tmp_path / "k")]) == 0
    assert "notice: resuming as" in capsys.readouterr().err


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_ray_cluster_after_the_no_gpu_notice_is_one_line(tmp_path, capsys,
                                                                       monkeypatch):
    pytest.importorskip("ray")
    from ray._private import ray_constants
    monkeypatch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)  # loopback stays loopback
    monkeypatch.setattr(cuda, "cuda_available", lambda: False)  # the no-GPU notice is due
    code = main(["tune", "--layer", "cin=2,hin=6,cout=2,kh=3,pad=1", "--budget", "2",
                 "--no-verify", "--out-dir", str(tmp_path / "k"), "--executor", "ray",
                 "--ray-address", f"127.0.0.1:{_closed_port()}"])
    out, err = capsys.readouterr()
    assert code == 2 and "could not connect to the Ray cluster" in err
    assert len(err.splitlines()) == 1 and "notice" not in err, err
    assert out == ""
