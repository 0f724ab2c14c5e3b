"""How the ``iobound`` process (and a benchmark script) ends once its work is done.

A process that ran a Ray driver (the ``ray`` executor) ends without the interpreter's
teardown: Ray 2.60's driver threads outlive ``ray.shutdown`` and, while the interpreter
frees Ray's objects at exit, a timer of theirs can use one already freed (a segmentation
fault after the run's last line: 7 of 30 runs stopped 2-4 s in, 0 of 30 ending this way;
``benchmarks/early_stop.py``). Everything the run writes is written and closed before: the exit
handlers (``atexit``: logging, temporary folders, build folders) still run, then stdout
and stderr are flushed and the process ends with ``os._exit``. Any other process ends as
usual (``sys.exit``).

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

__all__ = ["exit_process", "ray_driver_ran"]


def ray_driver_ran() -> bool:
    """Whether this process connected to (or started) a Ray as its driver."""
    cluster = sys.modules.get("search.executors.ray_cluster")  # never imported: no Ray
    return bool(cluster is not None and cluster.driver_started())


def exit_process(code: int) -> NoReturn:
    """End this process with exit status ``code`` (module doc)."""
    if not ray_driver_ran():
        sys.exit(code)
    atexit._run_exitfuncs()  # what sys.exit would run first; os._exit runs none
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone, a stream closed: nothing to keep
            pass
    os._exit(code)
