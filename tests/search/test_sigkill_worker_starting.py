"""A local worker process killed with SIGKILL (the out-of-memory killer, a user's
``kill -9``) before it has said it is ready.

``--retries`` (README, --help): "retries of a configuration whose worker died or timed
out, on a fresh worker, before it is recorded as failed". A worker killed as it starts
(the pool's start, or the fresh worker that replaces a dead one) instead stopped the
whole run: ``ProcessSlot.poll`` takes any death before ``ready`` for a worker that
cannot start ("a new one would fail the same way") and the run ends with
ToolchainError, exit 2, "a worker process failed to start (killed by signal SIGKILL)".
A signal from outside says nothing about the next worker: it must be replaced, and the
batch measured. (Seen at random in `kill -9` trials of `iobound tune --executor local`.)
"""

from __future__ import annotations

import os
import signal

from iobound.layer import ConvLayer
from search.executors.local import LocalExecutor
from search.executors.options import ExecutorOptions
from search.executors.stages import stages_for
from search.measure.model import ModelMeasurer

LAYER = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
CONFIG = dict(x=8, y=8, z=8, alpha=4, tx=8, ty=8, tz=2)


def test_a_worker_killed_while_starting_is_replaced_not_fatal():
    with LocalExecutor(stages_for(ModelMeasurer(LAYER, "v100")),
                       ExecutorOptions(workers=1, retries=1, timeout_s=60)) as ex:
        slots = ex._start()
        os.kill(slots[0].process.pid, signal.SIGKILL)  # before it could say "ready"
        slots[0].process.join(10)
        got = dict(ex.submit([(0, CONFIG)]))
    assert got[0].status.value == "ok"


def test_a_worker_that_cannot_start_still_stops_the_run():
    """The reference on the other side: a worker dying by itself at every start (here its
    stages cannot be unpickled) is still a set-up error, never retried forever."""
    import pytest

    from iobound.errors import ToolchainError
    ex = LocalExecutor(stages_for(ModelMeasurer(LAYER, "v100")), ExecutorOptions(workers=1))
    ex._pickles[None] = b"not a pickle"
    with ex, pytest.raises(ToolchainError, match="failed to start"):
        dict(ex.submit([(0, CONFIG)]))
