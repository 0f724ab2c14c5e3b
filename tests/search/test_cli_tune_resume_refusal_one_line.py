"""Bad input is one line on stderr and exit 2 (README, "Hostile input"). ``iobound tune``
without ``--measure`` on a machine without a GPU prints a "notice: no GPU ..." line before
the run; a ``--resume`` log of another layer (or of another measurer) was refused only
inside the run, after that notice: exit 2 with two stderr lines. It is now refused when
the run is planned, before anything is built or printed."""

import pytest

import search.measure.cuda as cuda
from iobound.errors import InvalidInputError
from iobound.layer_spec import parse_layer_spec
from search.cli.main import main
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
