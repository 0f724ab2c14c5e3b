"""How a script of ours (``benchmarks/*.py``) ends: its exit code, and bad input as one line.

Every benchmark's ``__main__`` block is ``sys.exit(run_script(main))``, so the scripts
answer as ``iobound`` does (this lives in an installed package because the scripts are
also run by path, where ``benchmarks`` is no package): what ``main`` returns is the exit
code; an error of ours (:class:`~iobound.errors.IoboundError`: an unknown device, a
layer out of range) or a ``SystemExit("error: ...")`` a script raises after checking its
arguments is one line on stderr and exit code 2 (bad input; an error that says
otherwise, e.g. a write that failed at the end, keeps its own ``exit_code``); Ctrl-C is
exit 130 without a traceback.

Examples
--------
>>> import contextlib, io
>>> def main(argv=None):
...     raise SystemExit("error: --seeds must be >= 1")
>>> err = io.StringIO()
>>> with contextlib.redirect_stderr(err):
...     code = run_script(main)
>>> code, err.getvalue().strip()
(2, 'error: --seeds must be >= 1')
"""

from __future__ import annotations

import sys
from typing import Callable, Sequence

__all__ = ["run_script"]

# main's and search.interrupts' codes, copied: importing either imports iobound (SymPy),
# which run_script guards (tests/search/test_cli_main_errors.py holds them equal)
EXIT_USAGE, EXIT_INTERRUPTED = 2, 130


def run_script(main: Callable[[Sequence[str] | None], int | None],
               argv: Sequence[str] | None = None) -> int:
    """``main(argv)``'s exit code, with bad input and Ctrl-C as one line (module doc).

    >>> import contextlib, io
    >>> from iobound.errors import OutputWriteError
    >>> def main(argv=None):
    ...     raise OutputWriteError("could not write t.json (No space left on device)")
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     code = run_script(main)
    >>> code, err.getvalue().strip(), run_script(lambda argv: None)
    (1, 'error: could not write t.json (No space left on device)', 0)
    """
    from iobound.errors import IoboundError

    from search.cli.printable import printable_stdout
    try:
        with printable_stdout():  # a table's ± under LANG=C: escaped, not a traceback
            return int(main(argv) or 0)
    except IoboundError as exc:
        print(f"error: {' '.join(str(exc).split()) or type(exc).__name__}", file=sys.stderr)
        return getattr(exc, "exit_code", EXIT_USAGE)
    except SystemExit as exc:
        if not isinstance(exc.code, str):  # argparse's own exit (2), or sys.exit(n)
            raise
        text = " ".join(exc.code.split())
        print(text if text.startswith("error:") else f"error: {text}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
