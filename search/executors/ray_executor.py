"""The ``ray`` executor: builds as Ray tasks, runs on Ray actors, on one machine or a cluster.

``pip install iobound[distributed]``. Ray is imported when the executor first runs, so
nothing else needs it. Without ``ray_address`` it starts a private Ray on this machine
bound to 127.0.0.1 only (no dashboard; ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, without
which Ray advertised the machine's interface address to its workers) and shuts it down on
:meth:`RayExecutor.close`; with an address (``ray start --head`` on one node,
``ray start --address HEAD:6379`` on the others) it connects to that cluster. A Ray that
is already initialised in this process is used as it is and left running;
:func:`ray_session` keeps one Ray up around several executors (one per layer of a network).

Builds are Ray tasks (``num_cpus=1``) anywhere in the cluster. Runs go to actors that keep
their state between configurations: one per GPU (``num_gpus=1``, Ray pins it to its GPU,
it holds the CUDA context) for the ``cuda`` stages, else ``workers`` CPU actors spread
over the nodes. At most ``workers`` CPU jobs are in flight (default: the cluster's CPUs).
A task past the timeout is cancelled with its worker process killed, an actor past it is
killed and replaced; the configuration is retried (see :mod:`search.executors.dispatch`).
A build's timeout counts from its submission, so it also covers Ray scheduling the task
and, after a kill, starting a new worker process (seconds on a loaded machine): keep
``timeout_s`` well above that (the default is 300 s).

Examples
--------
>>> RayExecutor.name
'ray'
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import threading
import time
from typing import Any

from iobound.errors import ToolchainError

from .base import Executor
from .dispatch import Event, Slot
from .ledger import BUILD, RUN
from .options import ExecutorOptions
from .stages import Stages, stages_for
from .worker import call_stage

__all__ = ["RayExecutor", "import_ray", "start_local_ray", "connect", "ray_session"]



def import_ray():
    """The ``ray`` module, or ToolchainError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ToolchainError(f"the ray executor needs Ray ({exc}); "
                             "pip install 'iobound[distributed]'") from None
    return ray


@contextlib.contextmanager
def _sigterm_kept():
    """Keep this process's SIGTERM handler across ``ray.init``, which replaces it with one
    that exits (``sys.exit``; the process then aborts) instead of the run's clean stop
    (:func:`search.interrupts.signals_interrupt`: SIGTERM stops a run as Ctrl-C does)."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    finally:
        if main and before is not None:
            signal.signal(signal.SIGTERM, before)


def start_local_ray(num_cpus: int | None = None, **kwargs) -> None:
    """Start a private Ray on this machine, reachable on 127.0.0.1 only.

    ``_node_ip_address="127.0.0.1"`` alone is not enough: Ray 2.60's gRPC servers then
    still listen on every interface and its runtime-env agent on the machine's address.
    With ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` everything stays on 127.0.0.1, but Ray
    reads that variable when it is imported, so it is set in the environment (for Ray's
    processes) and, for a Ray already imported here, on its constant as well.
    ``address="local"``: without it ``ray.init`` connects to the cluster named by
    ``RAY_ADDRESS`` or by the last ``ray start`` (``/tmp/ray/ray_current_cluster``)
    instead of starting a private one.
    """
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray = import_ray()
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False
    # Ray's own failures: a TMPDIR whose path holds non-ASCII letters, or one so long
    # that Ray's sockets cannot be named in it
    _init(ray, "could not start a local Ray (its session folder is under TMPDIR or "
               "RAY_TMPDIR)", address="local", num_cpus=num_cpus,
          _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False, **kwargs)


def _init(ray, what: str, **kwargs) -> None:
    """``ray.init(**kwargs)``; a failure of Ray's (not Ctrl-C) is a ToolchainError saying
    ``what`` failed and why, in one line, after shutting down what Ray started."""
    try:
        with _sigterm_kept():
            ray.init(**kwargs)
    except Exception as exc:
        with contextlib.suppress(Exception):
            ray.shutdown()  # what it started before it failed
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise ToolchainError(f"{what}: {type(exc).__name__}: {reason}") from None


#: Seconds to wait for a Ray cluster's port to accept a connection before ``ray.init``.
CONNECT_TIMEOUT_S = 10.0


def _check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """A ToolchainError unless something accepts a TCP connection at ``address``'s host
    and port within ``timeout_s``: ``ray.init`` retries an address where nothing listens
    for minutes (over 300 s for 127.0.0.1:1). ``auto`` is Ray's to look up."""
    import socket

    from .options import ray_address_target
    target = ray_address_target(address)
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=timeout_s).close()
    except OSError as exc:  # refused, no route, an unknown host, timed out
        reason = (f"no answer within {timeout_s:g} s" if isinstance(exc, TimeoutError)
                  else exc.strerror or " ".join(str(exc).split()) or type(exc).__name__)
        raise ToolchainError(f"could not connect to the Ray cluster at {address[:100]!r}: "
                             f"{reason}") from None


def connect(options: ExecutorOptions) -> bool:
    """Connect to ``options.ray_address`` or start a private local Ray, unless Ray is
    already initialised here; whether this call started it (and so should shut it down)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    if options.ray_address:  # ray://... without ray[client], a cluster not there, ...
        _check_reachable(options.ray_address)
        _init(ray, f"could not connect to the Ray cluster at {options.ray_address[:100]!r}",
              address=options.ray_address, log_to_driver=False)
    else:  # its workers are processes on this machine: the local executor's limit
        from .local import check_local_workers
        check_local_workers(options.workers, more="give ray_address of a Ray cluster for more")
        start_local_ray(options.workers or os.cpu_count() or 1)
    return True


@contextlib.contextmanager
def ray_session(options: ExecutorOptions):
    """Ray for a block of several executors (e.g. one per layer of a network): connected
    or started once, shut down at the end if started here; executors inside reuse it."""
    started = connect(options)
    try:
        yield import_ray()
    finally:
        if started:
            import_ray().shutdown()
            # a build its executor cancelled at the timeout could not be swept while Ray
            # kept that worker (the executor's close ran before this shutdown)
            from .local import _remove_orphans
            _remove_orphans()


def _build_task(stages: Stages, config: dict) -> tuple[str, Any]:
    return call_stage(stages, BUILD, config)


class _Runner:
    """A run worker: holds the stages (and the CUDA context they open) between jobs, per
    key (one executor may serve several layers)."""

    def __init__(self, stages: Stages | None):
        self.stages = {None: stages} if stages is not None else {}

    def ready(self) -> int:
        return os.getpid()

    def run(self, stage: str, key: Any, boxed_ref: list, payload: Any) -> tuple[str, Any]:
        # the ref comes in a list so Ray does not fetch the stages again for every job
        if key not in self.stages:
            self.stages[key] = import_ray().get(boxed_ref[0])
        return call_stage(self.stages[key], stage, payload)


@functools.lru_cache(maxsize=None)
def _remotes():
    ray = import_ray()
    return ray.remote(num_cpus=1, max_retries=0)(_build_task), ray.remote(_Runner)


#: Seconds a run actor may sit idle before it is pinged ahead of its next job (it may have
#: died meanwhile: the out-of-memory killer, a user's kill), so that the job is not blamed.
_IDLE_CHECK_S = 0.5


class RaySlot(Slot):
    """Builds as Ray tasks, runs on this slot's actor (created when the slot serves runs)."""

    def __init__(self, refs: dict, serves: set, timeout_s: float, gpu: bool = False):
        super().__init__(timeout_s)
        self.serves, self._refs, self._gpu = set(serves), refs, gpu  # refs: key -> stages ref
        self.ref = self.actor = None
        if RUN in self.serves:
            self._new_actor()

    def _new_actor(self) -> None:
        runner = _remotes()[1]
        opts = ({"num_gpus": 1, "num_cpus": 0} if self._gpu
                else {"num_cpus": 0, "scheduling_strategy": "SPREAD"})
        self.actor = runner.options(max_restarts=0, max_task_retries=0, **opts).remote(
            self._refs.get(None))
        self.ref, self.ready = self.actor.ready.remote(), False
        self._idle_since = time.monotonic()

    def finish(self):
        job = super().finish()
        self._idle_since = time.monotonic()
        return job

    def revive(self) -> None:
        """A new actor in place of one that died while idle (the next job would fail
        with it, and count a failure against a configuration that never ran): an actor
        idle for :data:`_IDLE_CHECK_S` is pinged first; the slot is then not ready until
        the new actor says so."""
        if self.actor is None or self.job is not None or not self.ready or self.ref is not None \
                or time.monotonic() - self._idle_since < _IDLE_CHECK_S:
            return
        ray = import_ray()
        try:
            ray.get(self.actor.ready.remote(), timeout=self.timeout_s)
        except ray.exceptions.RayError:  # dead (or not answering): replace it
            self._replace_actor()
            return
        self._idle_since = time.monotonic()

    def start(self, job) -> None:
        super().start(job)
        ref = self._refs[job.key]
        if job.stage == BUILD:
            self.ref = _remotes()[0].remote(ref, job.payload)
        else:
            self.ref = self.actor.run.remote(job.stage, job.key, [ref], job.payload)

    def event(self, get) -> Event:
        """The event of this slot's finished ref (``get`` is ``ray.get``)."""
        ray = import_ray()
        ref, self.ref, starting = self.ref, None, not self.ready
        try:
            value = get(ref)
        except ray.exceptions.RayError as exc:
            if starting:
                return self, "fatal", f"a Ray worker failed to start: {exc}"
            if self.job is not None and self.job.stage == RUN:
                self._replace_actor()
            return self, "died", f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
        if starting:
            return self, "ready", value
        return self, *value

    def _replace_actor(self) -> None:
        import_ray().kill(self.actor, no_restart=True)
        self._new_actor()

    def kill(self) -> None:
        ray = import_ray()
        if self.job is not None and self.job.stage == BUILD:
            ray.cancel(self.ref, force=True)  # kills the worker process running it
            self.ref = None
        else:
            self._replace_actor()

    def stop(self) -> None:
        if self.actor is not None:
            import_ray().kill(self.actor, no_restart=True)
            self.actor = self.ref = None


def _wait_events(slots: list[Slot], timeout: float) -> list[Event]:
    ray = import_ray()
    by_ref = {s.ref: s for s in slots if s.ref is not None}
    if not by_ref:
        return []
    refs = list(by_ref)
    done, rest = ray.wait(refs, num_returns=1, timeout=timeout)
    if done and rest:
        more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
        done += more
    return [by_ref[r].event(ray.get) for r in done]


class RayExecutor(Executor):
    """Measures on a Ray cluster (see the module doc).

    Parameters
    ----------
    stages : Stages or Measurer
    options : ExecutorOptions
        ``ray_address`` (none: a private local Ray), ``workers``, ``timeout_s``, ``retries``.
    """

    name = "ray"

    def __init__(self, stages: Stages | None,
                 options: ExecutorOptions = ExecutorOptions(executor="ray")):
        super().__init__(None if stages is None else stages_for(stages), options)
        self._slots: list[RaySlot] | None = None
        self._started_ray = False
        self._refs: dict = {}  # key -> the stages in Ray's object store

    def _connect(self):
        self._started_ray = connect(self.options) or self._started_ray
        ray = import_ray()
        for key, stages in ((None, self.stages), *self.keyed.items()):
            if stages is not None and key not in self._refs:
                self._refs[key] = ray.put(stages)
        return ray

    def capacity(self) -> int:
        """The ``workers`` option, else the Ray cluster's CPUs (connecting to it)."""
        if self.options.workers:
            return self.options.workers
        return max(1, int(self._connect().cluster_resources().get("CPU", 1)))

    def register(self, key, stages) -> None:
        super().register(key, stages)
        if import_ray().is_initialized():
            self._refs[key] = import_ray().put(self.keyed[key])

    def _start(self) -> list[RaySlot]:
        if self._slots is not None:
            return self._slots
        ray = self._connect()
        resources = ray.cluster_resources()
        workers = self.capacity()
        timeout = self.options.timeout_s
        if self.needs_gpu:
            gpus = int(resources.get("GPU", 0))
            if gpus < 1:
                raise ToolchainError(f"the {self.stages_name} measurer needs a GPU and the "
                                     "Ray cluster has none")
            slots = [RaySlot(self._refs, {BUILD}, timeout) for _ in range(workers)]
            slots += [RaySlot(self._refs, {RUN}, timeout, gpu=True) for _ in range(gpus)]
        else:
            slots = [RaySlot(self._refs, {BUILD, RUN}, timeout) for _ in range(workers)]
        self._slots = slots
        return slots

    _wait = staticmethod(_wait_events)

    def _stop_slots(self) -> None:
        if self._slots is not None:
            for slot in self._slots:
                if slot.ref is not None and slot.job is not None and slot.job.stage == BUILD:
                    import_ray().cancel(slot.ref, force=True)
                slot.stop()
            self._slots = None

    def close(self) -> None:
        self._stop_slots()
        if self._started_ray:
            import_ray().shutdown()
            self._started_ray = False
        # a build task killed at its timeout (or at the stop) cannot remove its scratch
        # folder: sweep this machine's cache, as the local executor does after a kill
        from .local import _remove_orphans
        _remove_orphans()
