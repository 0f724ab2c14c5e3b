"""What runs inside one worker, local process or Ray actor: a stage call turned into an event.

:func:`call_stage` runs ``stages.build`` or ``stages.run`` and returns ``("ok", result)``,
``("fatal", message)`` for set-up errors that no retry can fix (no compiler, no GPU,
pycuda missing: the run stops with :class:`~iobound.errors.ToolchainError`), or
``("error", message)`` for any other exception (the job is retried, then recorded as
``runtime_error``). :func:`process_main` is the loop of a local worker process.

Examples
--------
>>> from search.executors.stages import MeasurerStages
>>> from search.executors.ledger import BUILD
>>> from search.measure.model import ModelMeasurer
>>> from iobound.layer import ConvLayer
>>> stages = MeasurerStages(ModelMeasurer(ConvLayer(n=1, c_in=1, h_in=4, w_in=4, c_out=1,
...                                                 k_h=3, k_w=3), "v100"))
>>> call_stage(stages, BUILD, {"x": 1})[0]
'ok'
>>> call_stage(stages, "compile", {})
('error', "ValueError: unknown stage 'compile'")
"""

from __future__ import annotations

import os
import pickle
import signal
from typing import Any

from iobound.errors import ToolchainError

from .ledger import BUILD, RUN
from .stages import Stages

__all__ = ["call_stage", "process_main", "describe_exit"]


def call_stage(stages: Stages, stage: str, payload: Any) -> tuple[str, Any]:
    """Run one stage; never raises (see the module doc).

    >>> class Broken(Stages):
    ...     def build(self, config): raise ToolchainError("nvcc not found")
    ...     def run(self, artifact): raise MemoryError("out of memory")
    >>> call_stage(Broken(), BUILD, {})  # no retry can fix it: the run stops
    ('fatal', 'ToolchainError: nvcc not found')
    >>> call_stage(Broken(), RUN, None)  # retried, then a runtime_error record
    ('error', 'MemoryError: out of memory')
    """
    try:
        if stage == BUILD:
            return "ok", stages.build(payload)
        if stage == RUN:
            return "ok", stages.run(payload)
        raise ValueError(f"unknown stage {stage!r}")
    except (ToolchainError, ImportError) as exc:
        return "fatal", f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # a bug or an out-of-memory in one stage: retried, then recorded
        return "error", f"{type(exc).__name__}: {exc}"


def describe_exit(exitcode: int | None) -> str:
    """Words for a worker process's exit code (negative: killed by that signal).

    >>> describe_exit(-11), describe_exit(3)
    ('killed by signal SIGSEGV', 'exit code 3')
    """
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


def _load_stages(data: bytes | None) -> Stages | None:
    return None if data is None else pickle.loads(data)


def process_main(conn, stages_pickle: bytes | None, env: dict[str, str]) -> None:
    """A local worker process: set ``env`` (e.g. ``CUDA_VISIBLE_DEVICES``), then serve jobs.

    The worker leads its own process group, so killing the group on a timeout also ends
    the compiler it may be waiting for. It says ``ready`` once set up, then answers each
    ``(stage, key, payload)`` with :func:`call_stage`'s event, run by the stages of
    ``key`` (``None``: the ones it started with; ``("stages", key, pickle)`` adds more, for
    an executor that serves several layers), until it receives ``None`` or the driver
    goes away.
    """
    os.setpgrp()
    os.environ.update(env)
    stages: dict[Any, Stages] = {}
    try:
        _serve(conn, stages, stages_pickle)
    except (BrokenPipeError, ConnectionResetError):  # the driver went away (killed): quietly
        pass
    finally:
        for own in stages.values():
            if isinstance(own, Stages):
                own.close()


def _serve(conn, stages: dict, stages_pickle: bytes | None) -> None:
    """:func:`process_main`'s work: load the first stages, then answer jobs."""
    try:
        first = _load_stages(stages_pickle)
        if first is not None:
            stages[None] = first
    except Exception as exc:  # e.g. a module the stages need is missing here
        conn.send(("fatal", f"a worker process failed to start ({type(exc).__name__}: {exc})"))
        return
    conn.send(("ready", None))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        if msg[0] == "stages":
            try:
                stages[msg[1]] = _load_stages(msg[2])
            except Exception as exc:  # answered at the first job of that key
                stages[msg[1]] = exc
            continue
        stage, key, payload = msg
        own = stages.get(key)
        if not isinstance(own, Stages):
            conn.send(("fatal", f"a worker process has no stages for {key!r} ({own})"))
            continue
        conn.send(call_stage(own, stage, payload))
