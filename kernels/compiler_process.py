"""Run a compiler (g++, nvcc, ptxas) so that a timeout or an interrupt ends all of it.

``subprocess.run(..., timeout=...)`` kills only the process it started: the driver (g++,
nvcc) dies and the programs it runs (cc1plus, cicc, ptxas) go on compiling as orphans.
:func:`run_compiler` kills the whole tree (the driver is stopped first, so it starts
nothing new while its descendants are collected). The compiler stays in the caller's
process group, so an executor that kills a worker's group still ends it. Its output is
decoded leniently (a compiler may print bytes that are not UTF-8).

>>> run_compiler(["sh", "-c", "printf 'a\\\\377'"]).stdout
'a\\ufffd'
"""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Mapping, Sequence

from iobound.errors import InvalidInputError

__all__ = ["run_compiler", "check_compiler_text"]


def check_compiler_text(what: str, text: str) -> None:
    """Refuse text a compiler cannot be given (a source, a flag): a NUL, which no command
    line can carry and no CUDA source has, or a lone surrogate, which has no UTF-8 bytes.

    >>> check_compiler_text("extra_flags", "-DN=1\\x00")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: extra_flags: '-DN=1\\x00' holds a NUL character, which no command line can carry and no CUDA source has
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"{what} must be text (str), got {type(text).__name__} "
                                f"{text!r:.60}")
    if "\x00" in text:
        raise InvalidInputError(f"{what}: {text!r:.80} holds a NUL character, which no command "
                                "line can carry and no CUDA source has")
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{what}: the character at {exc.start} is a lone surrogate "
                                f"({text[exc.start]!r}), which has no UTF-8 bytes") from None


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids, from /proc (empty where there is none)."""
    kids: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return kids
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def _kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every process descended from it."""
    try:
        os.kill(pid, signal.SIGSTOP)  # no new children while we look
    except OSError:
        return
    doomed: list[int] = []
    for _ in range(3):  # a child forking as we looked: look again
        kids, todo, found = _children(), [pid], []
        while todo:
            for child in kids.get(todo.pop(), ()):
                found.append(child)
                todo.append(child)
        new = [p for p in found if p not in doomed]
        for p in new:
            try:
                os.kill(p, signal.SIGSTOP)
            except OSError:
                pass
        doomed += new
        if not new:
            break
    for p in [pid, *doomed]:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def run_compiler(cmd: Sequence[str], *, timeout: float | None = None,
                 env: Mapping[str, str] | None = None, cwd=None) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)`` that, on a
    timeout or an interrupt, kills the compiler and everything it started, and decodes
    its output with replacement characters. Raises what ``subprocess.run`` raises, and
    InvalidInputError for a ``cmd`` that is no non-empty sequence of strings or paths (each
    :func:`check_compiler_text`) or a ``timeout`` that is not
    :func:`kernels.limits.check_timeout`'s.

    Examples
    --------
    A command line as one string is refused (nothing is run):

    >>> run_compiler("g++ -O2 kernel.cu")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: cmd must be a non-empty sequence ... got 'g++ -O2 kernel.cu'
    """
    from .limits import check_timeout

    if isinstance(cmd, (str, bytes)) or not isinstance(cmd, Sequence) or not cmd:
        raise InvalidInputError(f"cmd must be a non-empty sequence of a program and its "
                                f"arguments, got {cmd!r:.60}")
    for arg in cmd:
        check_compiler_text("cmd", os.fspath(arg) if isinstance(arg, os.PathLike) else arg)
    check_timeout("timeout", timeout)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=cwd)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:  # TimeoutExpired, KeyboardInterrupt, ...
        if proc.returncode is None:  # communicate reaps a child that exits on an interrupt:
            _kill_tree(proc.pid)     # its pid is free then, maybe another process's
        proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode,
                                       out.decode("utf-8", "replace"),
                                       err.decode("utf-8", "replace"))
