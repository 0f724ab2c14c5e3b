"""The executor contract, for ``local`` and ``ray``: every configuration exactly once.

Faults are injected with :mod:`executor_faults`: a worker killed mid-batch (from outside,
and by the measurement itself), a measurement that segfaults, a run and a build that
hang past the timeout. After each, every index comes back exactly once with the right
status. The Ray tests share one local Ray per module (2 CPUs, bound to 127.0.0.1) and
skip with the reason where Ray is not installed.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

import executor_faults
from executor_faults import FaultStages
from iobound.errors import ToolchainError
from search.executors import ExecutorOptions, make_executor

EXECUTORS = ["local", "ray"]


#: Test helpers the Ray workers get by value (they cannot import tests/): see conftest.ray_session.
RAY_BY_VALUE = (executor_faults,)


@pytest.fixture(params=EXECUTORS)
def make(request, tmp_path):
    """``make(**options)``: an executor of the parametrised kind over FaultStages."""
    if request.param == "ray":
        request.getfixturevalue("ray_session")
    made = []

    def factory(delay=1.0, **options):
        ex = make_executor(FaultStages(tmp_path, delay), ExecutorOptions(executor=request.param),
                           **{"workers": 2, "timeout_s": 30.0, **options})
        made.append(ex)
        return ex

    # A Ray task's timeout also covers Ray scheduling it and starting a worker process
    # (seconds on a loaded machine, after a timeout killed the previous one).
    factory.hang_timeout = 10.0 if request.param == "ray" else 3.0
    factory.kind = request.param
    yield factory
    for ex in made:
        ex.close()


def cfgs(*faults):
    return [(10 + n, {"n": n, "fault": f}) for n, f in enumerate(faults)]


def measure(ex, batch):
    got = list(ex.submit(batch))
    indices = [i for i, _ in got]
    assert sorted(indices) == sorted(i for i, _ in batch), "every index exactly once"
    return dict(got)


def test_every_config_once_with_its_record(make):
    """A healthy batch: one ok record per index, the run saw the build's artifact."""
    batch = cfgs(*["ok"] * 5)
    got = measure(make(), batch)
    for i, cfg in batch:
        assert got[i].status.value == "ok" and got[i].config == cfg
        assert got[i].time_ms == cfg["n"] and got[i].extra["payload"] == "built"
        assert "attempts" not in got[i].extra


def test_workers_are_kept_between_batches(make):
    """Two batches on one executor run in the same worker processes."""
    ex = make(workers=1)
    first = measure(ex, cfgs("ok"))
    second = measure(ex, cfgs("ok", "ok"))
    assert {r.extra["pid"] for r in second.values()} == {r.extra["pid"] for r in first.values()}


def test_segfault_in_the_run_is_a_runtime_error(make):
    """A measurement that crashes its worker every time: runtime_error after the retries."""
    got = measure(make(retries=2), cfgs("ok", "segfault", "ok"))
    bad = got[11]
    assert bad.status.value == "runtime_error" and bad.extra["attempts"] == 3
    assert bad.extra["failed_stage"] == "run" and "died" in bad.error
    assert got[10].status.value == got[12].status.value == "ok"


def test_segfault_in_the_build_is_a_runtime_error(make):
    """A build that crashes its worker: runtime_error, the others still measured."""
    got = measure(make(retries=1), cfgs("build_segfault", "ok"))
    assert got[10].status.value == "runtime_error" and got[10].extra["failed_stage"] == "build"
    assert got[11].status.value == "ok"


def test_a_worker_that_dies_once_is_retried(make):
    """Killed on its first attempt, measured on the retry: ok, with two attempts."""
    got = measure(make(retries=1), cfgs("die_once", "ok"))
    assert got[10].status.value == "ok" and got[10].extra["attempts"] == 2
    assert got[11].status.value == "ok"


def test_no_retries_records_the_first_death(make):
    """retries=0: a death is recorded at once."""
    got = measure(make(retries=0), cfgs("die_once"))
    assert got[10].status.value == "runtime_error" and got[10].extra["attempts"] == 1


def test_a_hanging_run_times_out(make):
    """A run that sleeps past the timeout: timeout after the retries; the rest is measured."""
    start = time.monotonic()
    got = measure(make(timeout_s=make.hang_timeout, retries=1), cfgs("hang", "ok", "ok"))
    assert got[10].status.value == "timeout" and got[10].extra == {"attempts": 2, "failed_stage": "run"}
    assert got[11].status.value == got[12].status.value == "ok"
    assert time.monotonic() - start < 2 * 2 * make.hang_timeout + 60  # not hung: minutes


def test_a_hanging_build_times_out(make):
    """A build that sleeps past the timeout: timeout, recorded as a failed build."""
    got = measure(make(timeout_s=make.hang_timeout, retries=0), cfgs("build_hang", "ok"))
    assert got[10].status.value == "timeout" and got[10].extra["failed_stage"] == "build"
    assert got[11].status.value == "ok"


def test_a_worker_killed_from_outside_mid_batch(make, tmp_path):
    """SIGKILL to the worker running a slow measurement: retried, nothing lost or doubled."""
    ex = make(delay=6.0, retries=1)  # the kill lands well inside the run, under load too
    pid_file = tmp_path / "pid-1"

    def killer():
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        os.kill(int(pid_file.read_text()), signal.SIGKILL)

    thread = threading.Thread(target=killer)
    thread.start()
    got = measure(ex, cfgs("ok", "slow", "ok", "ok"))
    thread.join()
    assert all(r.status.value == "ok" for r in got.values())
    assert got[11].extra["attempts"] == 2 and got[11].extra["pid"] != int(pid_file.read_text())


def test_an_exception_in_a_stage_is_a_runtime_error(make):
    """A stage that raises: runtime_error naming the exception, after the retries."""
    got = measure(make(retries=1), cfgs("raise", "ok"))
    assert got[10].status.value == "runtime_error" and "RuntimeError: boom" in got[10].error


def test_a_setup_error_is_raised(make):
    """A missing toolchain is not a property of the configuration: it is raised."""
    with pytest.raises(ToolchainError, match="no such compiler"):
        list(make().submit(cfgs("toolchain")))


def test_workers_that_cannot_start_are_a_setup_error(make, tmp_path):
    """Stages a worker cannot load: a ToolchainError, not an endless restart."""
    from executor_faults import BrokenStages

    with make_executor(BrokenStages(tmp_path), ExecutorOptions(executor=make.kind), workers=1) as ex:
        with pytest.raises(ToolchainError, match="failed to start"):
            list(ex.submit(cfgs("ok")))


def test_records_come_as_they_complete(make):
    """A fast configuration is yielded before a slow one submitted first."""
    # longer than Ray may take to start the fast one's worker on a loaded machine
    got = list(make(delay=8.0 if make.kind == "ray" else 2.0).submit(cfgs("slow", "ok")))
    assert [i for i, _ in got] == [11, 10]


def test_a_repeated_index_is_refused(make):
    """The same index twice in one batch would be measured twice: ValueError."""
    with pytest.raises(ValueError, match="twice"):
        list(make().submit([(1, {"n": 1}), (1, {"n": 1})]))


@pytest.mark.parametrize("index", [1.7, "3", True, None])
def test_an_index_that_is_no_integer_is_refused(make, index):
    """Every index comes back as given: one that is no integer (1.7 came back as 1, and
    beside a 1 was "twice") is refused before anything runs."""
    from iobound.errors import InvalidInputError
    with pytest.raises(InvalidInputError, match="a batch index must be an integer"):
        list(make().submit([(index, {"n": 1})]))


# -- Ray specifics ----------------------------------------------------------------------

def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _listening_addresses(pids: set[int]) -> list:
    """The local addresses of the TCP sockets that ``pids`` listen on (from /proc)."""
    import ipaddress

    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(fields[1].split(":")[0])
            words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            found.append(ipaddress.ip_address(words))
    return found


def test_local_ray_listens_on_loopback_only(ray_session):
    """Every socket the test's Ray (head, raylet, workers) listens on is 127.0.0.1 or ::1."""
    from search.executors.ray_executor import RayExecutor

    with RayExecutor(FaultStages("/tmp"), ExecutorOptions(executor="ray", workers=2)) as ex:
        assert dict(ex.submit(cfgs("ok")))[10].status.value == "ok"
        addresses = _listening_addresses(_descendants(os.getpid()))
    assert addresses, "found no listening socket of Ray's processes"
    assert all(a.is_loopback or (a.version == 6 and a.ipv4_mapped and a.ipv4_mapped.is_loopback)
               for a in addresses), addresses
    assert {n["NodeManagerAddress"] for n in ray_session.nodes()} == {"127.0.0.1"}


def test_a_ray_started_elsewhere_is_reused_and_left_running(ray_session, tmp_path):
    """Executors and ray_session inside an initialised Ray neither restart nor stop it."""
    from search.executors.ray_cluster import connect, ray_session as session
    from search.executors.ray_executor import RayExecutor

    options = ExecutorOptions(executor="ray", workers=1)
    assert connect(options) is False
    with session(options) as ray:
        for _ in range(2):  # one executor per layer, say
            with RayExecutor(FaultStages(tmp_path), options) as ex:
                assert dict(ex.submit(cfgs("ok")))[10].status.value == "ok"
    assert ray.is_initialized()


def test_more_workers_than_4_per_cpu_of_the_cluster_are_refused(ray_session, tmp_path):
    """Each Ray worker is an actor process asking for no CPU, so Ray started all that were
    asked (12 on the 2 CPUs here): past 4 per CPU they are refused before any starts."""
    from iobound.errors import InvalidInputError
    from search.executors.ray_executor import RayExecutor

    with RayExecutor(FaultStages(tmp_path), ExecutorOptions(executor="ray", workers=9)) as ex:
        with pytest.raises(InvalidInputError, match="--workers 9: the Ray cluster has 2 CPUs"):
            list(ex.submit(cfgs("ok")))
        assert ex._slots is None
    with RayExecutor(FaultStages(tmp_path), ExecutorOptions(executor="ray", workers=8)) as ex:
        assert dict(ex.submit(cfgs("ok")))[10].status.value == "ok"


@pytest.mark.parametrize("executor", EXECUTORS)
def test_emulate_records_equal_the_measurer(executor, request):
    """A real measurer through each executor: the records of measuring in process."""
    from iobound.layer import ConvLayer
    from search.measure.emulate import EmulateMeasurer

    if executor == "ray":
        request.getfixturevalue("ray_session")
    layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    batch = [(0, dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)),
             (1, dict(x=3, y=3, z=2, alpha=1, tx=2, ty=3, tz=1)),
             (2, dict(x=6, y=6, z=1, alpha=2, tx=3, ty=3, tz=1))]
    measurer = EmulateMeasurer(layer)
    with make_executor(measurer, ExecutorOptions(executor=executor), workers=2, timeout_s=120) as ex:
        got = dict(ex.submit(batch))
    expected = measurer.measure([c for _, c in batch])

    def strip(r):
        return r.status, r.config, r.error, {k: v for k, v in r.extra.items() if k != "seconds"}

    assert [strip(got[i]) for i, _ in batch] == [strip(r) for r in expected]
