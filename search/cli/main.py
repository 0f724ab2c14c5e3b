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
import sys

from iobound.errors import InvalidInputError, IoboundError
from search.interrupts import EXIT_INTERRUPTED, Interrupted, signals_interrupt

from .printable import printable_stdout

__all__ = ["main", "build_parser", "SUBCOMMANDS"]

# name -> module under search.cli; order is the order shown in --help.
SUBCOMMANDS = ("bound", "dataflow", "domain", "kernel", "tune", "history", "select", "report")

EXIT_USAGE = 2
EXIT_NOT_WRITTEN = 1  # README: "1 no result (or a result that could not be written)"
#: errno values of a write the system could not complete: not the user's input.
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


class CliError(InvalidInputError):
    """A usage problem found while parsing; printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit code 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
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
    parser = _Parser(
        prog="iobound",
        description=(
            "I/O lower bounds, near I/O-optimal dataflows and a bound-guided auto-tuner "
            "for convolutions on GPUs. Fast memory is counted in words (values); sizes "
            "with a unit (48KiB) are converted with --dtype."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, mod in _modules().items():
        p = sub.add_parser(name, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 no result, 2 bad input, 130 interrupted)."""
    try:
        # SIGTERM stops a run as Ctrl-C does (search.interrupts), from the start: building
        # the parser imports every subcommand, and either signal may land there too
        with signals_interrupt(), printable_stdout():
            parser = build_parser()
            args = parser.parse_args(argv)
            if getattr(args, "_run", None) is None:
                parser.print_help()
                return EXIT_USAGE
            return int(args._run(args) or 0)
    except CliError as exc:
        print(str(exc).splitlines()[0], file=sys.stderr)
        return EXIT_USAGE
    except IoboundError as exc:
        cmd = getattr(locals().get("args"), "command", None)
        prefix = f"iobound {cmd}" if cmd else "iobound"
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"{prefix}: error: {msg}", file=sys.stderr)
        return getattr(exc, "exit_code", EXIT_USAGE)  # not bad input: e.g. a write at the end
    except KeyboardInterrupt as exc:
        cmd = getattr(locals().get("args"), "command", None)
        what = exc if isinstance(exc, Interrupted) else "interrupted"  # Interrupted: where the log is
        print(f"iobound {cmd}: {what}" if cmd else "iobound: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (``iobound ... | head``): stop quietly; point stdout at
        # devnull so the interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # a path the system refuses (name too long, a device...)
        cmd = getattr(locals().get("args"), "command", None)
        if _from_interrupt(exc):
            return _interrupted(cmd)
        print(f"iobound {cmd}: error: {_os_error_line(exc)}" if cmd
              else f"iobound: error: {_os_error_line(exc)}", file=sys.stderr)
        # a full disk (stdout on /dev/full, a log that cannot grow) is no bad input
        return EXIT_NOT_WRITTEN if exc.errno in _FULL else EXIT_USAGE
    except Exception as exc:
        if not _from_interrupt(exc):
            raise
        # e.g. Ctrl-C while a C extension initialises: ImportError "initialization failed"
        return _interrupted(getattr(locals().get("args"), "command", None))


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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
