"""search/cli/main.py: a usage error is one stderr line even when what the user typed
holds a line break (argparse joins unrecognized arguments verbatim). Found by mutation
testing; the reference is the CLI contract in DESIGN.md (one line, exit 2)."""

import pytest

from iobound.errors import IoboundError
from search.cli import main as cli_main
from search.cli.main import main


def test_unrecognized_argument_with_a_line_break_is_one_line(capsys):
    code = main(["bound", "--layer", "alexnet.conv1", "--fast-memory", "1KiB", "stray\nargument"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("iobound bound: error: unrecognized arguments: stray")


@pytest.mark.parametrize("argv", [["tune", "--layer", "alexnet.conv1", "--bogus"],
                                  ["history", "list", "--db", "x.db", "--bogus"],
                                  ["bound", "--layer", "alexnet.conv1", "--fast-memory", "1", "x"]])
def test_an_unknown_option_is_named_by_its_subcommand(capsys, argv):
    """README: every error is "iobound <command>: error: ..."; an unknown option was
    "iobound: error: unrecognized arguments" (argparse reports them from the top parser)."""
    code = main(argv)
    out, err = capsys.readouterr()
    # as the command's other errors are named (history's with its action, as argparse's)
    prefix = "iobound " + " ".join(argv[:2] if argv[0] == "history" else argv[:1])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"{prefix}: error: unrecognized arguments: "), err


@pytest.mark.parametrize("argv", [["-k", "x"], ["-k", "0"]])
def test_a_history_actions_errors_name_the_action(capsys, tmp_path, argv):
    """argparse's own error (-k x) and ours (-k 0) name one command: "iobound history best"
    (ours said "iobound history")."""
    from search.db import TuningDB
    with TuningDB(str(tmp_path / "t.db")):
        pass
    code = main(["history", "best", "--db", str(tmp_path / "t.db"), *argv])
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith(("iobound history best: error: -k",
                                         "iobound history best: error: argument -k")), err


class _WriteFailed(IoboundError):
    """An error of ours that is not bad input: it carries its own exit code."""
    exit_code = 1


@pytest.mark.parametrize("exc, code", [(_WriteFailed("cannot write out.json"), 1),
                                       (IoboundError("bad"), 2)])
def test_an_error_keeps_its_own_exit_code(monkeypatch, capsys, exc, code):
    """main's doc: 2 for bad input; an error that says otherwise keeps its exit_code."""
    def run(args):
        raise exc
    monkeypatch.setattr(cli_main, "_modules", lambda: {"boom": type(
        "M", (), {"HELP": "h", "add_arguments": staticmethod(lambda p: None), "run": staticmethod(run)})})
    assert main(["boom"]) == code
    assert capsys.readouterr().err == f"iobound boom: error: {exc}\n"


def test_no_subcommand_is_one_error_line_and_exit_2(capsys):
    """`iobound` alone is a usage error as `iobound history` alone is: one stderr line
    naming the missing command, exit 2 (it was the help on stdout and nothing on stderr)."""
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert err == "iobound: error: the following arguments are required: COMMAND\n"
    assert out == ""


def test_the_help_names_every_subcommand(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: iobound") and all(name in out for name in cli_main.SUBCOMMANDS)


def test_version_is_the_installed_distributions(capsys):
    """`iobound --version` prints pyproject's version on stdout and exits 0 (as --help)."""
    import pathlib
    import tomllib
    pyproject = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"
    version = tomllib.loads(pyproject.read_text())["project"]["version"]
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr() == (f"iobound {version}\n", "")


def test_an_error_raised_while_handling_ctrl_c_is_the_interrupt(monkeypatch, capsys):
    """An exception whose context (not cause) is a KeyboardInterrupt, as when a library
    fails while Ctrl-C unwinds it, is exit 130, not a traceback."""
    def run(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ImportError("initialization failed")  # implicit __context__, no "from"
    monkeypatch.setattr(cli_main, "_modules", lambda: {"boom": type(
        "M", (), {"HELP": "h", "add_arguments": staticmethod(lambda p: None), "run": staticmethod(run)})})
    assert main(["boom"]) == 130
    assert capsys.readouterr().err == "iobound boom: interrupted\n"


def test_the_exit_codes_copied_to_avoid_importing_iobound_agree():
    """main.py and script_entry.py keep copies of codes whose homes import iobound (their
    own imports are guarded): the copies must not drift from the originals."""
    from iobound.errors import SYSTEM_WRITE_ERRNOS
    from search.cli import script_entry
    from search.interrupts import EXIT_INTERRUPTED
    assert cli_main._FULL == SYSTEM_WRITE_ERRNOS
    assert (script_entry.EXIT_USAGE, script_entry.EXIT_INTERRUPTED) == (cli_main.EXIT_USAGE,
                                                                         EXIT_INTERRUPTED)
