"""The ``local`` executor: worker processes on this machine, no extra dependency.

CPU workers (``workers``, default: the cores) build; for stages that do not need a GPU
(``emulate``, ``model``, ``replay``) they also run. For the ``cuda`` stages, one more
worker per visible GPU runs, with ``CUDA_VISIBLE_DEVICES`` set to its GPU, and keeps its
CUDA context for the whole run. Workers are started once (forked from a clean
``forkserver``, so no parent state is inherited) and kept between batches; a worker that
dies or overruns the timeout is replaced by a fresh process, and its configuration is
retried there (see :mod:`search.executors.dispatch`). As with the ``spawn`` start method,
each worker imports the main module: a script that starts an executor keeps that code
under ``if __name__ == "__main__":``.

Examples
--------
>>> from search.measure.model import ModelMeasurer
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
>>> with LocalExecutor(stages_for(ModelMeasurer(layer, "v100")), ExecutorOptions(workers=2)) as ex:
...     got = dict(ex.submit([(0, dict(x=8, y=8, z=8, alpha=4, tx=8, ty=8, tz=2)),
...                           (1, dict(x=8, y=8, z=8, alpha=4, tx=3, ty=8, tz=2))]))
>>> got[0].status.value, got[1].status.value
('ok', 'invalid')
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import signal
import time
from multiprocessing.connection import wait as mp_wait
from typing import Mapping

from iobound.errors import InvalidInputError, ToolchainError

from .base import Executor
from .dispatch import Event, Slot
from .ledger import BUILD, RUN
from .options import ExecutorOptions
from .stages import Stages, stages_for
from .worker import describe_exit, process_main

__all__ = ["LocalExecutor", "visible_gpus"]



def visible_gpus() -> list[str]:
    """The GPUs a worker may be pinned to (``CUDA_VISIBLE_DEVICES`` values); [] without pycuda."""
    from kernels.gpu import import_pycuda

    try:
        drv = import_pycuda()
        drv.init()
        count = drv.Device.count()
    except Exception:  # no pycuda, no driver: no GPU
        return []
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [s.strip() for s in listed.split(",") if s.strip()] if listed else []
    return ids[:count] if ids else [str(i) for i in range(count)]


def _context(preload: tuple[str, ...] = ()):
    """``forkserver``: workers fork from a clean single-threaded server that has imported
    the worker module and the stages' ``preload`` modules once, so a worker starts in
    milliseconds, not seconds, its first job pays no imports (a second of numpy, SymPy
    and the kernel modules on a loaded machine), and it inherits no threads or CUDA state
    from the driver. (The list counts when the server starts: the first worker here.)"""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["search.executors.worker", *preload])
    return ctx


#: Tries to start one worker process: the forkserver every worker is forked from may have
#: died (the out-of-memory killer, a user's kill); multiprocessing starts a new one when a
#: start finds it gone, which a start that lost the race to its death does not.
START_TRIES = 3


class ProcessSlot(Slot):
    """A worker process and the pipe to it."""

    def __init__(self, pickles: dict, serves: set, timeout_s: float,
                 env: Mapping[str, str] | None = None, preload: tuple[str, ...] = ()):
        super().__init__(timeout_s)
        self.serves = set(serves)
        self._pickles, self._env = pickles, dict(env or {})  # key -> pickled stages (shared)
        self._preload = preload
        self._spawn()

    def _spawn(self) -> None:
        ctx = _context(self._preload)
        for attempt in range(1, START_TRIES + 1):
            conn, child = ctx.Pipe()
            process = ctx.Process(target=process_main, daemon=True,
                                  args=(child, self._pickles.get(None), self._env))
            try:
                process.start()
                break
            except (EOFError, OSError) as exc:  # the forkserver died; the next start makes one
                conn.close()
                if attempt == START_TRIES:  # the slot keeps its last (ended) process
                    raise ToolchainError(f"could not start a worker process: "
                                         f"{type(exc).__name__}: {exc}") from None
                time.sleep(0.2 * attempt)
            finally:
                child.close()
        self.conn, self.process = conn, process
        self.ready = False
        self.known = {None}  # the keys whose stages this process holds

    def start(self, job) -> None:
        super().start(job)
        if job.key not in self.known:  # a layer this process has not served yet
            self.conn.send(("stages", job.key, self._pickles[job.key]))
            self.known.add(job.key)
        self.conn.send((job.stage, job.key, job.payload))

    def poll(self) -> Event | None:
        """The event waiting on the pipe, or the worker's death; ``None`` if neither yet."""
        try:
            if self.conn.poll():
                kind, value = self.conn.recv()
                return self, kind, value
        except (EOFError, OSError):
            pass
        if self.process.is_alive():
            return None
        self.process.join()
        why = describe_exit(self.process.exitcode)
        if not self.ready:  # it never got as far as serving (killed from outside: SIGKILL)
            if not self.replaces_starting_worker(self.process.exitcode == -signal.SIGKILL):
                hint = ("; a script that starts workers keeps that code under `if __name__ == "
                        "\"__main__\":` (each worker imports the main module)"
                        if (self.process.exitcode or 0) > 0 else "")
                return self, "fatal", f"a worker process failed to start ({why}){hint}"
            self._respawn()
            return None
        self._respawn()
        return self, "died", why

    def _respawn(self) -> None:
        self.conn.close()
        _remove_orphans()  # a worker that died mid-build (a crash, a user's kill) left its scratch folder
        self._spawn()

    def revive(self) -> None:
        """A new worker in place of one that died while idle (the out-of-memory killer, a
        user's kill): the next job went to a pipe nobody read (BrokenPipeError)."""
        if self.job is None and not self.process.is_alive():
            self.process.join()
            self._respawn()

    def kill(self) -> None:
        self._end(graceful=False)
        self._spawn()

    def stop(self) -> None:
        """End the worker: ask an idle one to finish, kill a busy one."""
        self._end(graceful=self.job is None)

    def _end(self, graceful: bool) -> None:
        if graceful:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                pass
            self.process.join(timeout=5)
        if self.process.is_alive():
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # the worker and its compiler
            except (ProcessLookupError, PermissionError):
                self.process.kill()
            self.process.join()
            _remove_orphans()  # the scratch folder of the build it was killed in
        self.conn.close()


def _remove_orphans() -> None:
    """Remove the scratch folders of killed builds (``kernels.cache.remove_all_orphans``);
    a worker killed outright cannot remove its own. Never raises."""
    from kernels.cache import remove_all_orphans

    try:
        remove_all_orphans()
    except Exception:  # a cleanup: never the reason a run fails
        pass


def _wait_events(slots: list[Slot], timeout: float) -> list[Event]:
    handles = {}
    for slot in slots:
        handles[slot.conn] = slot
        handles[slot.process.sentinel] = slot
    ready = mp_wait(list(handles), timeout)
    events, seen = [], set()
    for handle in ready:
        slot = handles[handle]
        if id(slot) in seen:
            continue
        seen.add(id(slot))
        event = slot.poll()
        if event is not None:
            events.append(event)
    return events


#: Local CPU workers per core at most: each is a process, and past the cores they only
#: share them (a thousand asked on a laptop start a thousand processes).
WORKERS_PER_CORE = 4


def check_local_workers(workers: int | None, cores: int | None = None,
                        more: str = "use --executor ray for more") -> None:
    """Refuse more local workers than :data:`WORKERS_PER_CORE` per core of this machine
    (``more`` says what to do instead: a private local Ray runs its workers here too).

    >>> check_local_workers(8, cores=2)
    >>> check_local_workers(1000, cores=2)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --workers 1000: this machine has 2 CPU cores, so at most 8 local workers (each is a process); use --executor ray for more
    """
    cores = cores or os.cpu_count() or 1
    check_workers_per_cpu(workers, cores, f"this machine has {cores} CPU cores", "local workers",
                          more)


def check_workers_per_cpu(workers: int | None, cpus: int, has: str, noun: str = "workers",
                          more: str | None = None) -> None:
    """The one rule of local workers and Ray's: each is a process, so at most
    :data:`WORKERS_PER_CORE` per CPU of where they run (``has`` says it, ``more`` what to
    do instead).

    >>> check_workers_per_cpu(9, 2, "the Ray cluster has 2 CPUs")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --workers 9: the Ray cluster has 2 CPUs, so at most 8 workers (each is a process)
    """
    most = WORKERS_PER_CORE * cpus
    if workers is not None and workers > most:
        raise InvalidInputError(f"--workers {workers}: {has}, so at most {most} {noun} (each is "
                                f"a process)" + (f"; {more}" if more else ""))


def _pickled(stages: Stages) -> bytes:
    """``stages`` as the bytes sent to each worker, or a clear error when pickle cannot
    carry them (a class defined inside a function, a lambda, an open file or lock).

    >>> from search.measure.base import Measurer
    >>> class Held(Measurer):     # inside a function or a doctest: pickle cannot find it again
    ...     name = "held"
    ...     def measure(self, configs): return []
    >>> _pickled(stages_for(Held()))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the measurer 'held' cannot be sent to the local executor's worker processes (PicklingError: ...); its class must be importable (defined at a module's top level) and hold only plain data
    """
    try:
        return pickle.dumps(stages)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise InvalidInputError(
            f"the measurer {stages.name!r} cannot be sent to the local executor's worker "
            f"processes ({type(exc).__name__}: {exc}); its class must be importable (defined "
            "at a module's top level) and hold only plain data") from None


class LocalExecutor(Executor):
    """Worker processes on this machine (see the module doc).

    Parameters
    ----------
    stages : Stages or Measurer
        What to build and run (a measurer is adapted with :func:`stages_for`).
    options : ExecutorOptions
        ``workers``, ``timeout_s``, ``retries`` (``ray_address`` is not used).

    >>> from iobound.layer import ConvLayer
    >>> from search.measure.model import ModelMeasurer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> ex = LocalExecutor(None, ExecutorOptions(workers=2))  # workers start at the first batch
    >>> ex.register("conv1", ModelMeasurer(layer, "v100"))  # a layer served through a lane
    >>> ex.workers, sorted(ex.keyed), ex.stages_name, ex.describe()["name"]
    (2, ['conv1'], 'model', 'local')
    >>> ex.close()
    """

    name = "local"

    def __init__(self, stages: Stages | None, options: ExecutorOptions = ExecutorOptions()):
        check_local_workers(options.workers)
        super().__init__(None if stages is None else stages_for(stages), options)
        self._slots: list[ProcessSlot] | None = None
        self._pickles: dict = {} if stages is None else {None: _pickled(self.stages)}

    @property
    def workers(self) -> int:
        """CPU workers (the option, else the cores)."""
        return self.capacity()

    def register(self, key, stages) -> None:
        super().register(key, stages)
        self._pickles[key] = _pickled(self.keyed[key])  # sent to a worker before its first job

    def _start(self) -> list[ProcessSlot]:
        if self._slots is None:
            gpus = visible_gpus() if self.needs_gpu else []
            if self.needs_gpu and not gpus:
                raise ToolchainError(f"the {self.stages_name} measurer needs a GPU and "
                                     "pycuda sees none")
            cpu_serves = {BUILD} if gpus else {BUILD, RUN}
            stages = [s for s in (self.stages, *self.keyed.values()) if s is not None]
            preload = tuple(sorted({m for s in stages for m in s.preload}))
            slots = [ProcessSlot(self._pickles, cpu_serves, self.options.timeout_s, None, preload)
                     for _ in range(self.workers)]
            slots += [ProcessSlot(self._pickles, {RUN}, self.options.timeout_s,
                                  {"CUDA_VISIBLE_DEVICES": g}, preload) for g in gpus]
            self._slots = slots
        return self._slots

    _wait = staticmethod(_wait_events)

    def _stop_slots(self) -> None:
        if self._slots is not None:
            for slot in self._slots:
                slot.stop()
            self._slots = None
