"""Entry point of the ``iobound`` console script.

Examples
--------
>>> main(["bound", "--layer", "nonsense=1", "--fast-memory", "1KiB"])  # doctest: +SKIP
iobound bound: error: layer spec: unknown key 'nonsense'; ...
2
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import re
import sys

# nothing heavy here: the console script imports this module before ``main`` can set the
# signal handlers, so iobound (SymPy, ~0.5 s) and the subcommands are imported inside main
from search.interrupts import EXIT_INTERRUPTED, Interrupted, signals_interrupt

from .printable import printable_stdout

__all__ = ["main", "console_main", "build_parser", "SUBCOMMANDS"]

# name -> module under search.cli; order is the order shown in --help.
SUBCOMMANDS = ("bound", "dataflow", "domain", "kernel", "tune", "history", "select", "report")

EXIT_USAGE = 2
EXIT_NOT_WRITTEN = 1  # README: "1 no result (or a result that could not be written)"
#: errno values of a write the system could not complete: not the user's input. A copy of
#: iobound.errors.SYSTEM_WRITE_ERRNOS (tests/search/test_cli_main_errors.py holds them
#: equal): this module may not import iobound, whose import ``main`` guards.
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def __getattr__(name: str):
    """``CliError`` (a usage problem found while parsing; one line, exit 2), made on first
    use: its base class is iobound's, whose import is what ``main`` must guard."""
    if name == "CliError":
        from .usage_error import CliError
        return CliError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit code 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        from .usage_error import CliError
        raise CliError(f"{self.prog}: error: {message}")


def _modules() -> dict[str, object]:
    mods = {}
    for name in SUBCOMMANDS:
        try:
            mods[name] = importlib.import_module(f"search.cli.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name != f"search.cli.{name}_cmd":
                raise
    return mods


def build_parser() -> argparse.ArgumentParser:
    """The ``iobound`` parser: one subcommand per module of :func:`_modules`, each adding its
    options (``add_arguments``) and run by its ``run``.

    >>> args = build_parser().parse_args(["domain", "--layer", "alexnet.conv1"])
    >>> args.command, args.device, args.algorithm
    ('domain', 'v100', 'direct')
    """
    parser = _Parser(
        prog="iobound",
        description=(
            "I/O lower bounds, near I/O-optimal dataflows and a bound-guided auto-tuner "
            "for convolutions on GPUs. Fast memory is counted in words (values); sizes "
            "with a unit (48KiB) are converted with --dtype."
        ),
    )
    # required: `iobound` alone is a usage error, one line naming what is missing (as
    # `iobound history` without its action), not the help on stdout and a silent exit 2
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                                required=True)
    parser.add_argument("--version", action="version", version=_version())
    for name, mod in _modules().items():
        p = sub.add_parser(name, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def _version() -> str:
    """``iobound --version``'s line: the installed distribution's version (pyproject's)."""
    from iobound import __version__
    return f"iobound {__version__}"


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 no result, 2 bad input or an unusable
    set-up, 130 interrupted).

    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     code = main(["bound", "--layer", "cin=2,hin=6,cout=2,kh=9", "--fast-memory", "64"])
    >>> code
    2
    >>> print(err.getvalue(), end="")
    iobound bound: error: k_h=9 (dilated extent 9) is larger than the padded input height 6
    """
    args = None
    try:
        # SIGTERM stops a run as Ctrl-C does (search.interrupts), from the start: iobound's
        # import (SymPy) and building the parser (every subcommand) take most of a second,
        # and either signal may land there too
        with signals_interrupt():
            importlib.import_module("iobound")  # here, under the handlers (see the imports)
            with printable_stdout():
                parser = build_parser()
                args, unknown = parser.parse_known_args(_dash_values_attached(argv))
                if unknown:  # named by the subcommand's prog, as its own errors are
                    from .usage_error import CliError
                    raise CliError(f"iobound {_command(args)}: error: unrecognized arguments: "
                                   + " ".join(unknown))
                return int(args._run(args) or 0)
    except KeyboardInterrupt as exc:
        cmd = _command(args)
        what = exc if isinstance(exc, Interrupted) else "interrupted"  # Interrupted: where the log is
        print(f"iobound {cmd}: {what}" if cmd else "iobound: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        return _failed(exc, _command(args))


def _dash_values_attached(argv: list[str] | None) -> list[str]:
    """``--opt VALUE`` as ``--opt=VALUE`` where VALUE starts with a minus and a digit (or is
    minus infinity) but is no plain number (``--tiles -1,2,3``, ``--fast-memory -inf``):
    argparse takes such a VALUE for an option and says only "expected one argument";
    attached, the option's own check names what is wrong.

    >>> _dash_values_attached(["dataflow", "--tiles", "-1,2,3", "--seed", "-3", "--json"])
    ['dataflow', '--tiles=-1,2,3', '--seed', '-3', '--json']
    >>> _dash_values_attached(["bound", "--fast-memory", "-inf"])
    ['bound', '--fast-memory=-inf']
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            return out + argv[i:]
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if (tok.startswith("--") and "=" not in tok and re.match(r"-(\d|inf)", nxt, re.I)
                and not re.fullmatch(r"-\d+|-\d*\.\d+", nxt)):  # argparse's own numbers
            out.append(f"{tok}={nxt}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def _command(args) -> str | None:
    """The subcommand its errors are named by, with its action (``history best``), as
    argparse names its own; None before the command line was read."""
    words = [getattr(args, "command", None), getattr(args, "action", None)]
    return " ".join(w for w in words if w) or None


def _failed(exc: Exception, cmd: str | None) -> int:
    """Say why the run ``cmd`` failed with ``exc``, in one line; the exit code for it (an
    exception that is not ours, a bug, is raised again with its traceback)."""
    from iobound.errors import IoboundError

    from .usage_error import CliError
    if isinstance(exc, CliError):
        print(str(exc).splitlines()[0], file=sys.stderr)
        return EXIT_USAGE
    if isinstance(exc, IoboundError):
        prefix = f"iobound {cmd}" if cmd else "iobound"
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"{prefix}: error: {msg}", file=sys.stderr)
        return getattr(exc, "exit_code", EXIT_USAGE)  # not bad input: e.g. a write at the end
    if isinstance(exc, BrokenPipeError):
        # the reader went away (``iobound ... | head``): stop quietly; point stdout at
        # devnull so the interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    if _from_interrupt(exc):
        # e.g. Ctrl-C while a C extension initialises: ImportError "initialization failed"
        return _interrupted(cmd)
    if isinstance(exc, OSError):  # a path the system refuses (name too long, a device...)
        print(f"iobound {cmd}: error: {_os_error_line(exc)}" if cmd
              else f"iobound: error: {_os_error_line(exc)}", file=sys.stderr)
        # a full disk (stdout on /dev/full, a log that cannot grow) is no bad input
        return EXIT_NOT_WRITTEN if exc.errno in _FULL else EXIT_USAGE
    raise exc


def _interrupted(cmd: str | None) -> int:
    """Say that the run ``cmd`` was interrupted; the exit code for it."""
    print(f"iobound {cmd}: interrupted" if cmd else "iobound: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _os_error_line(exc: OSError) -> str:
    """One line for ``exc``: the system's reason and the file it names (shortened).

    >>> _os_error_line(OSError(36, "File name too long", "x" * 100))
    "File name too long: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"
    """
    reason = exc.strerror or " ".join(str(exc).split()) or type(exc).__name__
    if exc.filename is None:
        return reason
    name = str(exc.filename)
    return f"{reason}: {name[:38] + '...' if len(name) > 40 else name!r}"


def _from_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` was raised because of a KeyboardInterrupt (its cause or context)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def console_main() -> None:
    """The ``iobound`` console script: :func:`main` on ``sys.argv``, then the process ends
    with its exit code (:func:`~search.cli.process_exit.exit_process`)."""
    from .process_exit import exit_process
    exit_process(main())


if __name__ == "__main__":  # pragma: no cover
    console_main()
