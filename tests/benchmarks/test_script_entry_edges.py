"""search/cli/script_entry.run_script edges found by mutation testing: the arguments reach
the script's ``main``, and a ``SystemExit`` message with line breaks is one stderr line
(module doc: bad input is one line and exit code 2)."""

from search.cli.script_entry import run_script


def test_argv_reaches_main():
    seen = []
    assert run_script(lambda argv=None: seen.append(argv) or 3, ["--seeds", "2"]) == 3
    assert seen == [["--seeds", "2"]]


def test_a_multi_line_exit_message_is_one_line(capsys):
    def main(argv=None):
        raise SystemExit("error: --seeds must be >= 1,\n   got 0")
    assert run_script(main) == 2
    assert capsys.readouterr().err == "error: --seeds must be >= 1, got 0\n"
