"""Ray for the ``ray`` executor: imported when first needed, a private Ray on this machine
bound to 127.0.0.1 only, or a cluster at an address checked before ``ray.init`` (which
retries an address where nothing listens for minutes); :func:`ray_session` keeps one Ray
up around several executors.

Examples
--------
>>> CONNECT_TIMEOUT_S  # seconds a cluster's port has to accept a connection
10.0
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

from iobound.errors import ToolchainError
from search.interrupts import STOP_SIGNALS

from .options import ExecutorOptions

__all__ = ["import_ray", "start_local_ray", "connect", "shutdown", "ray_session",
           "CONNECT_TIMEOUT_S"]


def import_ray():
    """The ``ray`` module, or ToolchainError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ToolchainError(f"the ray executor needs Ray ({exc}); "
                             "pip install 'iobound[distributed]'") from None
    return ray


@contextlib.contextmanager
def _handlers_kept():
    """Keep this process's SIGINT and SIGTERM handlers across a Ray call: ``ray.init``
    replaces SIGTERM's with one that exits (``sys.exit(15)``) instead of the run's clean
    stop (:func:`search.interrupts.signals_interrupt`: SIGTERM stops a run as Ctrl-C does),
    and ``ray.shutdown`` resets SIGTERM to the default action in the kernel while Python
    still names its handler (a later SIGTERM killed the run): setting each handler again
    puts it back in both."""
    main = threading.current_thread() is threading.main_thread()
    before = {s: signal.getsignal(s) for s in STOP_SIGNALS} if main else {}
    try:
        yield
    finally:
        for s, handler in before.items():
            if handler is not None:  # None: set outside Python, left as it is
                signal.signal(s, handler)


def shutdown() -> None:
    """``ray.shutdown()``, this process's signal handlers kept (:func:`_handlers_kept`).
    A SIGTERM within the call itself (about a second) is the run's too: a Ray started
    here runs without its failure signal handlers (:func:`_without_failure_signal_handlers`),
    whose removal would reset SIGTERM's action to the default."""
    with _handlers_kept():
        import_ray().shutdown()


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


@contextlib.contextmanager
def _without_failure_signal_handlers():
    """``ray.init`` without Ray's C++ failure signal handlers (which print a stack trace on
    a crash): ``RAY_DISABLE_FAILURE_SIGNAL_HANDLER`` set in the environment (read by the
    driver's C++ code and by the processes a private Ray starts, whose crashes Ray still
    reports) and on Ray's constant of that name (read when Ray is imported), both as they
    were afterwards. With those handlers, a SIGTERM late in ``ray.init`` was theirs (a stack
    trace, then the process aborted), and ``ray.shutdown`` reset SIGTERM's action to the
    default (twice: a few and some 250 milliseconds in), then waited about a second for
    Ray's threads and processes: a SIGTERM then ended the run without its last line."""
    from ray._private import ray_constants
    name = "RAY_DISABLE_FAILURE_SIGNAL_HANDLER"
    env, constant = os.environ.get(name), getattr(ray_constants, name, False)
    os.environ[name] = "1"
    setattr(ray_constants, name, True)
    try:
        yield
    finally:
        setattr(ray_constants, name, constant)
        if env is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = env


def _init(ray, what: str, **kwargs) -> None:
    """``ray.init(**kwargs)``; a failure of Ray's (not Ctrl-C) is a ToolchainError saying
    ``what`` failed and why, in one line, after shutting down what Ray started."""
    try:
        with _handlers_kept(), _without_failure_signal_handlers():
            ray.init(**kwargs)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            shutdown()  # what it started before it failed (or before Ctrl-C)
        if isinstance(exc, SystemExit) and exc.code == signal.SIGTERM:
            # Ray's handler, in force for the call: the run's clean stop instead of exit 15
            raise KeyboardInterrupt("SIGTERM") from None
        if not isinstance(exc, Exception):
            raise
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise ToolchainError(f"{what}: {type(exc).__name__}: {reason}") from None


#: Seconds to wait for a Ray cluster's port to accept a connection before ``ray.init``.
CONNECT_TIMEOUT_S = 10.0


def _dialled(address: str) -> str:
    """The ``HOST:PORT`` ``ray.init(address=address)`` dials: Ray's own reading of it
    (``ray._private.services.canonicalize_bootstrap_address``, what ``ray.init`` calls),
    which looks ``auto`` up (``$RAY_ADDRESS``, the last ``ray start`` here) and rewrites
    a loopback host to this machine's address (unless Ray runs as the private one does:
    :func:`start_local_ray`). A ``ray://`` client address is dialled as given. A
    ToolchainError when Ray finds none."""
    if address.startswith("ray://"):
        return address
    from ray._private import services
    try:
        dialled = services.canonicalize_bootstrap_address(address)
    except Exception as exc:  # auto with no cluster: ConnectionError
        raise ToolchainError(f"could not connect to the Ray cluster at {address[:100]!r}: "
                             f"{' '.join(str(exc).split())[:200]}") from None
    if dialled is None:
        raise ToolchainError(f"could not connect to the Ray cluster at {address[:100]!r}: "
                             "Ray found no cluster to connect to")
    return dialled


def _check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """A ToolchainError unless something accepts a TCP connection, within ``timeout_s``,
    at the host and port ``ray.init`` will dial for ``address`` (:func:`_dialled`): it
    retries one where nothing listens for minutes (over 300 s for 127.0.0.1:1)."""
    import socket

    from .options import ray_address_target
    given = ray_address_target(address)  # the form given (None: auto)
    dialled = _dialled(address)
    target = ray_address_target(dialled)
    try:
        socket.create_connection(target, timeout=timeout_s).close()
    except OSError as exc:  # refused, no route, an unknown host, timed out
        reason = (f"no answer within {timeout_s:g} s" if isinstance(exc, TimeoutError)
                  else exc.strerror or " ".join(str(exc).split()) or type(exc).__name__)
        via = "" if dialled == address else f" (Ray dials it as {dialled[:100]!r})"
        if given and given[0] in _LOOPBACK and target[0] not in _LOOPBACK:
            reason += ("; Ray dials a loopback host as this machine's address, so a cluster "
                       "listening on 127.0.0.1 only cannot be reached (start it on this "
                       "machine's address)")
        raise ToolchainError(f"could not connect to the Ray cluster at {address[:100]!r}{via}: "
                             f"{reason}") from None


#: Host names Ray reads as this machine's loopback (and rewrites: :func:`_dialled`).
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def check_cluster(options: ExecutorOptions) -> None:
    """Before a run prints or writes anything: a ToolchainError when ``options`` names the
    ray executor and Ray is not installed, or names a ``ray_address`` where nothing answers
    (:func:`_check_reachable`; :func:`connect` dials it again). Other executors pass.

    >>> check_cluster(ExecutorOptions(executor="local"))  # nothing to reach
    """
    if options.executor != "ray":
        return
    import_ray()
    if options.ray_address:
        _check_reachable(options.ray_address)


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
        start_local_ray(options.worker_count)
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
            shutdown()
            # a build its executor cancelled at the timeout could not be swept while Ray
            # kept that worker (the executor's close ran before this shutdown)
            from .local import _remove_orphans
            _remove_orphans()
