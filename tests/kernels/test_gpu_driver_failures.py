"""The GPU path against a stand-in pycuda.driver: driver failures end as records.

No GPU is needed: a fake ``pycuda.driver`` (in ``sys.modules``) whose kernel computes the
convolution with numpy, and a fake compiler, drive ``kernels.gpu`` and the ``cuda``
measurer through the failures a real GPU produces.
"""

import sys
import time

import pytest

from iobound.layer import ConvLayer
from kernels import gpu
from kernels.config import DirectConfig
from kernels.status import Status

LAYER = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)
GOOD = DirectConfig(8, 8, 4, 2, 8, 4, 2)
GOOD_DICT = dict(x=8, y=8, z=4, alpha=2, tx=8, ty=4, tz=2)


class FakeDriver:
    """Just enough of pycuda.driver, with a GPU queue: each launch takes ``launch_s`` of
    device time; an event is complete once the work enqueued before it is done."""

    class device_attribute:
        MAX_SHARED_MEMORY_PER_BLOCK, MAX_THREADS_PER_BLOCK, MAX_REGISTERS_PER_MULTIPROCESSOR = range(3)

    class Error(Exception):
        pass

    class LogicError(Error):
        pass

    class LaunchError(Error):
        pass

    def __init__(self, *, launch_s=0.0, fail_first_launch=False, contexts_allowed=None):
        self.launch_s, self.fail_first_launch = launch_s, fail_first_launch
        self.contexts_allowed = contexts_allowed  # None: unlimited
        self.launches, self.live_contexts, self.made = 0, 0, 0
        self.busy_until = 0.0
        drv = self

        class Ctx:
            def pop(self):
                drv.live_contexts -= 1

            def detach(self):
                pass

        class Device:
            def __init__(self, i):
                pass

            @staticmethod
            def count():
                return 1

            def name(self):
                return "Fake A100"

            def compute_capability(self):
                return (8, 0)

            def get_attribute(self, attr):
                return (49152, 1024, 65536)[attr]

            def make_context(self):
                if drv.contexts_allowed is not None and drv.made >= drv.contexts_allowed:
                    raise drv.LogicError("cuCtxCreate failed: out of memory")
                drv.made += 1
                drv.live_contexts += 1
                return Ctx()

        class Event:
            def __init__(self):
                self.ready = 0.0

            def record(self, stream=None):
                self.ready = drv.busy_until

            def query(self):
                return time.monotonic() >= self.ready

            def time_till(self, other):
                return 1.5

        self.Device, self.Event = Device, Event

    def init(self):
        pass

    def to_device(self, a):
        return a.copy()

    def memcpy_dtoh(self, dest, src):
        dest[...] = src

    def module_from_file(self, path):
        drv = self

        class Module:
            def get_function(self, name):
                def fn(x, w, y, block, grid):
                    from kernels.reference import conv2d_reference
                    drv.launches += 1
                    if drv.fail_first_launch and drv.launches == 1:
                        raise drv.LaunchError("cuLaunchKernel failed: an illegal memory access "
                                              "was encountered")
                    drv.busy_until = max(time.monotonic(), drv.busy_until) + drv.launch_s
                    y[...] = conv2d_reference(x, w, LAYER)
                return fn
        return Module()


@pytest.fixture
def fake_gpu(monkeypatch):
    """Install a fake pycuda.driver (returned by the factory) and a fake compiler."""
    from kernels import nvcc
    from kernels.nvcc import CompileResult

    monkeypatch.setattr(nvcc, "compile_many", lambda sources, arch, **kw: [
        CompileResult(status="ok", arch=arch, log="", seconds=0.1, cubin_path="fake.cubin",
                      registers=40) for _ in sources])

    def install(**kw):
        drv = FakeDriver(**kw)
        pkg = type(sys)("pycuda")
        pkg.driver = drv
        monkeypatch.setitem(sys.modules, "pycuda", pkg)
        monkeypatch.setitem(sys.modules, "pycuda.driver", drv)
        return drv
    return install


def test_a_context_that_cannot_be_created_is_a_runtime_error_record(fake_gpu):
    """The cuda measurer returns one record per config and never raises for a failure
    (search.measure.base); the same measurer run through the executors (iobound tune)
    records a context the driver refuses as runtime_error. Through the measurer itself the
    driver's LogicError escaped from measure()."""
    from search.measure.cuda import CudaMeasurer

    drv = fake_gpu(contexts_allowed=0)
    records = CudaMeasurer(LAYER).measure([GOOD_DICT, GOOD_DICT])
    assert [r.status for r in records] == [Status.RUNTIME_ERROR] * 2
    assert all("cuCtxCreate" in r.error for r in records)
    assert drv.live_contexts == 0


def test_a_failed_launch_keeps_its_record_when_no_new_context_can_be_made(fake_gpu):
    """A launch fails (runtime_error, the context is dropped) and the driver then refuses
    a new context: the failed config's record was lost (measure_configs raised LogicError,
    even for a single config, which needs no further context); each config must still get
    its record."""
    drv = fake_gpu(fail_first_launch=True, contexts_allowed=1)
    res = gpu.measure_config(LAYER, GOOD, gpu.GpuOptions(repeats=3, warmup=0))
    assert res.status is Status.RUNTIME_ERROR and "illegal memory access" in res.error
    assert drv.live_contexts == 0

    drv = fake_gpu(fail_first_launch=True, contexts_allowed=1)
    both = gpu.measure_configs(LAYER, [GOOD, GOOD], gpu.GpuOptions(repeats=3, warmup=0))
    assert [r.status for r in both] == [Status.RUNTIME_ERROR, Status.RUNTIME_ERROR]
    assert "illegal memory access" in both[0].error and "cuCtxCreate" in both[1].error
    assert drv.live_contexts == 0


def test_gpu_session_keeps_the_result_when_no_new_context_can_be_made():
    """GpuSession (the executors' GPU worker) drops its context after a timeout and makes
    a new one; when the driver refuses it, the timed-out config's result was lost (the run
    raised, the executor retried the config: another full watchdog wait)."""
    from search.executors.cuda_stages import GpuSession

    drv = FakeDriver(contexts_allowed=1)
    session = GpuSession(drv, measure=lambda d, s, p, o: gpu.MeasureResult(status=Status.TIMEOUT))
    assert session.measure(None, "k.cubin", None).status is Status.TIMEOUT
    with pytest.raises(FakeDriver.LogicError):  # the next run has no context to run in
        session.measure(None, "k.cubin", None)
    session.close()
    assert drv.live_contexts == 0


def test_the_watchdog_is_per_launch_during_the_warm_up(fake_gpu):
    """GpuOptions / CudaMeasurer: ``timeout_s`` is the watchdog *per launch*. The warm-up
    launches were enqueued together and waited for once, so a kernel well within the
    per-launch watchdog was a 'timeout' when warmup + 1 launches took longer."""
    fake_gpu(launch_s=0.15)
    res = gpu.measure_config(LAYER, GOOD, gpu.GpuOptions(repeats=2, warmup=3, timeout_s=0.4))
    assert res.status is Status.OK, res.error
    assert len(res.costs) == 2 and res.time_ms == 1.5
