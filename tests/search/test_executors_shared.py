"""SharedExecutor: one local pool serving lanes in several threads (the network runs' seam).

Records go back to the lane (and layer) that submitted them, built and run by that
layer's stages; stop() ends a lane's wait with KeyboardInterrupt; a set-up error reaches
every lane; a lane that stops reading leaves the pool serving the others.
"""

from __future__ import annotations

import threading
import time

import pytest

from executor_faults import FaultStages
from iobound.errors import ToolchainError
from network_standin import StandInStages, standin_time
from search.executors import make_executor
from search.executors.shared import SharedExecutor


def test_records_go_back_to_their_lane_built_by_its_stages(tmp_path):
    """Two threads submit the same indices with different keys at the same time; each gets
    exactly its batch, measured by its own layer's stages."""
    got = {}
    with SharedExecutor(make_executor(None, workers=2)) as pool:
        def layer(name):
            lane = pool.lane(name, StandInStages(name, str(tmp_path), 0.05))
            got[name] = dict(lane.submit([(i, {"n": i}) for i in range(6)]))

        threads = [threading.Thread(target=layer, args=(n,)) for n in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    for name in ("a", "b"):
        assert sorted(got[name]) == list(range(6))
        assert all(r.time_ms == standin_time(name, {"n": i}) for i, r in got[name].items())


def test_stop_ends_a_waiting_lane_with_keyboard_interrupt(tmp_path):
    raised = []
    with SharedExecutor(make_executor(None, workers=1)) as pool:
        lane = pool.lane("slow", FaultStages(tmp_path, delay=30.0))

        def wait():
            try:
                list(lane.submit([(0, {"n": 0, "fault": "slow"})]))
            except KeyboardInterrupt:
                raised.append(time.monotonic())

        t = threading.Thread(target=wait)
        t.start()
        while not (tmp_path / "pid-0").exists():  # the job is running on the worker
            time.sleep(0.02)
        stopped = time.monotonic()
        pool.stop()
        t.join(timeout=10)
        assert raised and raised[0] - stopped < 5
        with pytest.raises(KeyboardInterrupt):
            list(lane.submit([(1, {"n": 1})]))


def test_a_set_up_error_reaches_the_lane_and_later_submits(tmp_path):
    with SharedExecutor(make_executor(None, workers=1)) as pool:
        lane = pool.lane("bad", FaultStages(tmp_path))
        with pytest.raises(ToolchainError, match="no such compiler"):
            list(lane.submit([(0, {"n": 0, "fault": "toolchain"})]))
        with pytest.raises(ToolchainError):
            list(lane.submit([(1, {"n": 1})]))


def test_a_lane_that_stops_reading_leaves_the_pool_serving(tmp_path):
    """The first lane takes one record and closes; its other jobs are dropped and the next
    lane's batch comes back whole."""
    with SharedExecutor(make_executor(None, workers=1)) as pool:
        first = pool.lane("a", FaultStages(tmp_path, delay=0.2))
        it = first.submit([(i, {"n": i, "fault": "slow"}) for i in range(4)])
        next(it)
        it.close()
        second = pool.lane("b", StandInStages("b", str(tmp_path), 0.0))
        assert sorted(i for i, _ in second.submit([(i, {"n": i}) for i in range(3)])) == [0, 1, 2]
