"""A local worker that dies while idle is replaced before it gets a job
(search/executors/local.py ProcessSlot.revive, dispatch.step).

Reference: README "Measuring on many workers" (a killed worker is replaced and its job
retried; it never stops the run). A worker killed between batches (the out-of-memory
killer, a user's kill) was noticed only when busy: the next job went to a pipe nobody read
and BrokenPipeError reached the tuner (every lane of a shared pool)."""
import os
import signal
import time

from iobound.layer import ConvLayer
from search.executors import ExecutorOptions, make_executor
from search.measure.model import ModelMeasurer

LAYER = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
CFG = dict(x=8, y=8, z=8, alpha=4, tx=8, ty=8, tz=2)


def test_idle_worker_killed_between_batches():
    with make_executor(ModelMeasurer(LAYER, "v100"), ExecutorOptions(workers=1, timeout_s=30.0,
                                                                     retries=1)) as ex:
        first = dict(ex.submit([(0, CFG)]))
        assert first[0].status.value == "ok"
        (slot,) = ex._slots
        os.kill(slot.process.pid, signal.SIGKILL)
        slot.process.join(5)
        time.sleep(0.2)
        second = dict(ex.submit([(1, CFG)]))  # BrokenPipeError escapes here
        assert second[1].status.value == "ok"


def test_idle_worker_killed_under_a_shared_pool():
    """Same fault under SharedExecutor (network runs): every lane gets BrokenPipeError."""
    from search.executors.shared import SharedExecutor

    with SharedExecutor(make_executor(None, ExecutorOptions(workers=1, timeout_s=30.0))) as pool:
        lane = pool.lane("a", ModelMeasurer(LAYER, "v100"))
        assert dict(lane.submit([(0, CFG)]))[0].status.value == "ok"
        (slot,) = pool.executor._slots
        os.kill(slot.process.pid, signal.SIGKILL)
        slot.process.join(5)
        time.sleep(0.2)
        assert dict(lane.submit([(1, CFG)]))[1].status.value == "ok"
