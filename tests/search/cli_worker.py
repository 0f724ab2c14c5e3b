"""A long-lived process that runs ``iobound`` command lines for the CLI fuzz test.

Python start-up and the imports of numpy, SymPy and OR-Tools cost about a second a
process, so the fuzz test sends many command lines to one worker: one JSON request a
line on stdin (``{"argv": [...]}``), one JSON answer a line on the protocol stream
(exit code, captured stdout/stderr, seconds, and the exception a subcommand raised, if
any). Anything a command writes straight to file descriptors 1 or 2 goes to
/dev/null, so it cannot corrupt the protocol. The parent enforces a time limit per
command line by killing the worker (:class:`Worker`).

Examples
--------
>>> with Worker() as w:  # doctest: +SKIP
...     w.run(["bound", "--layer", "cin=0"])["rc"]
2
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _raise_site(exc: BaseException) -> str:
    """``path:line`` of the frame that raised ``exc`` (relative to the repository)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return ""
    path = Path(tb.tb_frame.f_code.co_filename)
    try:
        path = path.relative_to(REPO)
    except ValueError:
        pass
    return f"{path}:{tb.tb_lineno}"


def serve(requests, answer) -> None:
    """Run each request's command line; write one JSON answer line per request."""
    from iobound.errors import IoboundError
    from search.cli import main as cli

    raised: dict = {}

    def watch(run):
        def wrapped(args):
            try:
                return run(args)
            except BaseException as exc:
                raised["exc"] = exc
                raise
        return wrapped

    for mod in cli._modules().values():  # build_parser() picks up the wrapped run
        mod.run = watch(mod.run)
    for line in requests:
        argv = json.loads(line)["argv"]
        raised.clear()
        out, err = io.StringIO(), io.StringIO()
        rc, tb = None, None
        start = time.perf_counter()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = cli.main(argv)
        except SystemExit as exc:  # --help
            rc = exc.code if isinstance(exc.code, int) else 0
        except BaseException:  # a traceback the user would see
            tb = traceback.format_exc()
        exc = raised.get("exc")
        answer.write(json.dumps({
            "rc": rc, "out": out.getvalue(), "err": err.getvalue(), "traceback": tb,
            "seconds": time.perf_counter() - start,
            "raised": type(exc).__name__ if exc is not None else None,
            "raised_ours": isinstance(exc, IoboundError),
            "raised_at": _raise_site(exc) if exc is not None else None,
        }) + "\n")
        answer.flush()


class Worker:
    """The parent's handle on a worker process; restarts it after a time-out."""

    def __init__(self, cwd: str | os.PathLike | None = None, env: dict | None = None):
        self.cwd, self.env = cwd, env
        self.proc: subprocess.Popen | None = None

    def _start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, cwd=self.cwd, env=self.env)

    def run(self, argv: list[str], timeout: float) -> dict:
        """Run one command line; ``{"timeout": True}`` when it took longer than ``timeout``."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.proc.stdin.write(json.dumps({"argv": argv}) + "\n")
        self.proc.stdin.flush()
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        ready = sel.select(timeout)
        sel.close()
        if not ready:
            self.close()
            return {"timeout": True, "seconds": timeout}
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            self.proc = None
            return {"died": code}
        return json.loads(line)

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


if __name__ == "__main__":
    protocol = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    serve(sys.stdin, protocol)
