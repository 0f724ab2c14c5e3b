"""How the ``iobound`` process (and a benchmark script that starts Ray) ends once its work
is done: without the interpreter's teardown.

Everything a run writes is written and closed by then. The exit handlers (``atexit``:
logging, multiprocessing's workers, temporary and build folders) run, stdout and stderr
are flushed, and ``os._exit`` ends the process, skipping what is left: freeing every
module and object, which after a tune took 0.28-0.36 s (``benchmarks/exit_time.py``), a window
where SIGTERM or Ctrl-C killed a finished run without its line (exit -15 or -2 in 8 of 30
local runs stopped 0.5-5 s in), and where Ray 2.60's driver threads, which outlive
``ray.shutdown``, used freed memory (a segmentation fault after the run's last line in 7
of 30 Ray runs stopped 2-4 s in; ``benchmarks/early_stop.py``).

Examples
--------
>>> from search.cli.main import main
>>> exit_process(main())  # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn

__all__ = ["exit_process"]


def exit_process(code: int) -> NoReturn:
    """End this process with exit status ``code`` (module doc)."""
    atexit._run_exitfuncs()  # what sys.exit would run first; os._exit runs none
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a full disk, a reader gone, a stream closed
            if stream is sys.stdout and code == 0:
                code = 1  # "1: a write the system refused", as main says of its own
    os._exit(code)
