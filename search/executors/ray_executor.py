"""The ``ray`` executor: builds as Ray tasks, runs on Ray actors, on one machine or a cluster.

``pip install iobound[distributed]``. Ray is imported when the executor first runs, so
nothing else needs it. Without ``ray_address`` it starts a private Ray on this machine
bound to 127.0.0.1 only (no dashboard; ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, without
which Ray advertised the machine's interface address to its workers) and shuts it down on
:meth:`RayExecutor.close`; with an address (``ray start --head`` on one node,
``ray start --address HEAD:6379`` on the others) it connects to that cluster. A Ray that
is already initialised in this process is used as it is and left running;
:func:`~search.executors.ray_cluster.ray_session` keeps one Ray up around several executors
(one per layer of a network); connecting and starting are :mod:`search.executors.ray_cluster`'s.

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

import functools
import os
import time
from typing import Any

from iobound.errors import ToolchainError

from .base import Executor
from .dispatch import Event, Slot
from .ledger import BUILD, RUN
from .options import ExecutorOptions
from .ray_cluster import connect, import_ray, shutdown
from .stages import Stages, stages_for
from .worker import call_stage

__all__ = ["RayExecutor"]



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
        if job.stage == RUN:  # a build runs as a task: the actor sat idle through it
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

    def event(self, get) -> Event | None:
        """The event of this slot's finished ref (``get`` is ``ray.get``); ``None`` for an
        actor killed while starting, replaced (up to ``KILLED_STARTING_LIMIT`` in a row)."""
        ray = import_ray()
        ref, self.ref, starting = self.ref, None, not self.ready
        try:
            value = get(ref)
        except ray.exceptions.RayError as exc:
            if starting:  # killed from outside, unless its __init__ raised
                killed = isinstance(exc, ray.exceptions.RayActorError) and not exc.actor_init_failed
                if not self.replaces_starting_worker(killed):
                    return self, "fatal", f"a Ray worker failed to start: {exc}"
                self._replace_actor()
                return None
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
    events = (by_ref[r].event(ray.get) for r in done)
    return [e for e in events if e is not None]  # None: an actor replaced while starting


def _check_cluster_workers(workers: int, resources: dict) -> None:
    """Refuse more workers than :data:`~.local.WORKERS_PER_CORE` per CPU of the cluster:
    each is an actor process that asks Ray for no CPU (so that builds and runs share the
    CPUs as local workers do), so Ray would start every one of them.

    >>> _check_cluster_workers(8, {"CPU": 2.0})
    >>> _check_cluster_workers(100, {"CPU": 2.0})
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --workers 100: the Ray cluster has 2 CPUs, so at most 8 workers (each is a process)
    """
    from .local import check_workers_per_cpu
    cpus = max(1, int(resources.get("CPU", 1)))
    check_workers_per_cpu(workers, cpus, f"the Ray cluster has {cpus} CPUs")


class RayExecutor(Executor):
    """Measures on a Ray cluster (see the module doc).

    Parameters
    ----------
    stages : Stages or Measurer
    options : ExecutorOptions
        ``ray_address`` (none: a private local Ray), ``workers``, ``timeout_s``, ``retries``.

    >>> from iobound.layer import ConvLayer
    >>> from search.measure.model import ModelMeasurer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> ex = RayExecutor(ModelMeasurer(layer, "v100"), ExecutorOptions(executor="ray", workers=2))
    >>> ex.capacity(), ex.needs_gpu, ex.describe()["name"]  # Ray starts at the first batch
    (2, False, 'ray')
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
        _check_cluster_workers(workers, resources)
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
        self.closed = True  # as Executor.close: nothing measures after it
        self._stop_slots()
        if self._started_ray:
            shutdown()
            self._started_ray = False
        # a build task killed at its timeout (or at the stop) cannot remove its scratch
        # folder: sweep this machine's cache, as the local executor does after a kill
        from .local import _remove_orphans
        _remove_orphans()
