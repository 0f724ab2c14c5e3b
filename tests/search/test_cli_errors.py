"""The CLI turns our errors (and only ours) into one line and exit code 2."""

import pytest

from dataflow.pebble import IllegalMoveError
from iobound.errors import InvalidInputError, IoboundError, SolverError
from kernels.gpu import KernelTimeoutError
from kernels.nvrtc import NvrtcError
from kernels.source import InvalidConfigError
from search.cli import main as cli_main
from search.measure.base import MeasurerError


@pytest.mark.parametrize("cls", [IllegalMoveError, InvalidConfigError, NvrtcError, SolverError,
                                 MeasurerError, KernelTimeoutError, cli_main.CliError])
def test_every_error_of_ours_is_an_iobound_error(cls):
    """Each error class we raise derives from the one base."""
    assert issubclass(cls, IoboundError)


@pytest.mark.parametrize("cls", [IllegalMoveError, InvalidConfigError, cli_main.CliError])
def test_bad_input_errors_are_also_value_errors(cls):
    """Bad-input errors stay ValueErrors for callers that catch those."""
    assert issubclass(cls, InvalidInputError) and issubclass(cls, ValueError)


def _fake_command(monkeypatch, exc):
    def run(args):
        raise exc
    monkeypatch.setattr(cli_main, "_modules", lambda: {"boom": type(
        "M", (), {"HELP": "h", "add_arguments": staticmethod(lambda p: None), "run": staticmethod(run)})})


def test_our_error_is_one_line_and_exit_2(monkeypatch, capsys):
    """An IoboundError prints 'iobound CMD: error: ...' on one line and returns 2."""
    _fake_command(monkeypatch, InvalidInputError("x must be >= 1,\n got 0"))
    assert cli_main.main(["boom"]) == 2
    err = capsys.readouterr().err
    assert err == "iobound boom: error: x must be >= 1, got 0\n"


def test_a_plain_value_error_is_a_bug_and_keeps_its_traceback(monkeypatch):
    """A ValueError that is not ours is not hidden behind exit code 2."""
    _fake_command(monkeypatch, ValueError("a bug"))
    with pytest.raises(ValueError, match="a bug"):
        cli_main.main(["boom"])


@pytest.mark.parametrize("argv", [["--seed=-1"], ["--seed", "99999999999999999999999"],
                                  ["--seed", "x"]])
def test_an_integer_option_is_named_once(capsys, argv):
    """argparse names the flag ("argument --seed:"); the reason after it does not again."""
    code = cli_main.main(["kernel", "--layer", "cin=2,hin=6,cout=2,kh=3", "--config", "x=1", *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("iobound kernel: error: argument --seed: ")
    assert err.count("--seed") == 1 and len(err.splitlines()) == 1
