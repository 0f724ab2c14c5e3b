"""GPU measurement: everything short of the driver here; the real run on a GPU (marker gpu)."""

import sys
import time

import numpy as np
import pytest

from iobound.device_spec import Device
from iobound.errors import ToolchainError
from iobound.layer import ConvLayer
from kernels import gpu
from kernels.config import DirectConfig, WinogradConfig
from kernels.status import Status


def test_median_of_timings():
    """The reported time is the median of the repeats."""
    assert gpu.median_ms([5.0, 1.0, 3.0]) == 3.0
    with pytest.raises(ValueError):
        gpu.median_ms([])


class _Drv:
    """The exception classes of pycuda.driver (their hierarchy, not their behaviour)."""

    class Error(Exception):
        pass

    class LaunchError(Error):
        pass

    class LogicError(Error):
        pass

    class CompileError(Error):
        pass


@pytest.mark.parametrize("exc,status", [
    (gpu.KernelTimeoutError("kernel did not finish within 1 s"), Status.TIMEOUT),
    # a message that mentions a timeout does not make one: the type decides
    (_Drv.LaunchError("cuCtxSynchronize failed: launch timeout"), Status.RUNTIME_ERROR),
    (TimeoutError("some other library timed out"), Status.RUNTIME_ERROR),
    (_Drv.LaunchError("cuLaunchKernel failed: too many resources requested"), Status.RUNTIME_ERROR),
    (_Drv.LogicError("cuModuleLoad failed: invalid device image"), Status.RUNTIME_ERROR),
    (_Drv.CompileError("nvcc failed"), Status.COMPILE_ERROR),
    (MemoryError("cuMemAlloc failed: out of memory"), Status.RUNTIME_ERROR),
])
def test_exception_classification(exc, status):
    """Driver exceptions map to the measurement statuses by their type."""
    assert gpu.classify_exception(exc, _Drv) is status


def test_classification_without_a_driver():
    """Without pycuda's classes, only our watchdog's timeout is special."""
    assert gpu.classify_exception(gpu.KernelTimeoutError("late")) is Status.TIMEOUT
    assert gpu.classify_exception(_Drv.CompileError("x")) is Status.RUNTIME_ERROR


def test_driver_limits_make_a_device():
    """The driver's limits override a preset: a Device, named as the driver names it."""
    drv = _FakeDriver()
    dev = gpu.device_limits(drv, drv.Device(0))
    assert isinstance(dev, Device) and dev.name == "Fake A100"
    assert (dev.shared_mem_per_block_bytes, dev.max_threads_per_block, dev.registers_per_sm) == \
        (49152, 1024, 65536)
    assert dev.compute_capability == (8, 0) and "driver" in dev.source


def test_options_are_validated():
    """Repeats, warm-up and timeout must make sense."""
    assert gpu.GpuOptions().repeats >= 10
    with pytest.raises(ValueError, match="repeats"):
        gpu.GpuOptions(repeats=0)
    with pytest.raises(ValueError, match="timeout_s"):
        gpu.GpuOptions(timeout_s=0)


@pytest.mark.parametrize("field, value", [
    ("timeout_s", float("nan")), ("timeout_s", float("inf")), ("timeout_s", "5"),
    ("repeats", 2.5), ("repeats", "10"), ("repeats", True), ("warmup", -1), ("warmup", None),
    ("seed", -1), ("seed", 1.5), ("check", "no"),
])
def test_options_of_the_wrong_type_or_nan_are_input_errors(field, value):
    """A NaN watchdog never fired (nan <= 0 is false: a hung kernel hung the tuner), "5" or
    None were TypeErrors, 2.5 repeats a TypeError in range() at measurement time."""
    from iobound.errors import InvalidInputError
    with pytest.raises(InvalidInputError, match=field):
        gpu.GpuOptions(**{field: value})


def test_numpy_integer_options_are_integers():
    """numpy integers are integers (stored as int)."""
    opts = gpu.GpuOptions(repeats=np.int64(5), warmup=np.int32(1), seed=np.uint8(3))
    assert (opts.repeats, opts.warmup, opts.seed) == (5, 1, 3) and type(opts.repeats) is int


def test_result_status_is_validated():
    """A MeasureResult only carries a known status."""
    assert gpu.MeasureResult(status="ok", costs=(1.0,), time_ms=1.0).status is Status.OK
    with pytest.raises(ValueError, match="status"):
        gpu.MeasureResult(status="crashed")


def test_arch_from_compute_capability():
    """Compute capability (9, 0) is sm_90."""
    from iobound.device_checks import arch_of
    assert arch_of((9, 0)) == "sm_90"


def test_watchdog_raises_timeout_on_an_event_that_never_completes():
    """_wait gives up after the timeout instead of blocking forever."""
    class Never:
        def query(self):
            return False
    with pytest.raises(gpu.KernelTimeoutError):
        gpu._wait(Never(), 0.01)


def test_no_pycuda_is_a_toolchain_error(monkeypatch):
    """Without pycuda, measuring raises ToolchainError naming the 'cuda' extra."""
    monkeypatch.setitem(sys.modules, "pycuda", None)
    monkeypatch.setitem(sys.modules, "pycuda.driver", None)
    with pytest.raises(ToolchainError, match="cuda' extra"):
        gpu.import_pycuda()


LAYER = ConvLayer(n=1, c_in=8, h_in=16, w_in=16, c_out=8, k_h=3, k_w=3, padding=1)


@pytest.mark.gpu
@pytest.mark.nvcc
@pytest.mark.parametrize("config", [DirectConfig(8, 8, 4, 2, 8, 4, 2), WinogradConfig(2, 8, 8, 4, 4, 4, 2)])
def test_real_gpu_measurement(config, tmp_path):
    """On a GPU: the kernel runs, matches numpy, and is timed over the repeats."""
    res = gpu.measure_config(LAYER, config, gpu.GpuOptions(repeats=10), cache_root=tmp_path)
    assert res.status is Status.OK, res.error
    assert len(res.costs) == 10 and res.time_ms > 0 and res.max_abs_err < 1e-3


@pytest.mark.gpu
def test_real_gpu_invalid_config_is_reported(tmp_path):
    """A config over the device's limits is 'invalid', not a crash."""
    big = ConvLayer(n=1, c_in=64, h_in=64, w_in=64, c_out=64, k_h=3, k_w=3, padding=1)
    res = gpu.measure_config(big, DirectConfig(32, 32, 4, 64, 32, 8, 1), cache_root=tmp_path)
    assert res.status is Status.INVALID and "shared memory" in res.error


# -- the whole measure_configs flow against a fake driver (no GPU needed) ------------

class _FakeDriver:
    """Just enough of pycuda.driver: the 'kernel' computes the convolution with numpy.

    ``launch_s``: device time of a launch (an event is complete once the work queued before
    it is done); ``contexts_allowed``: contexts the driver makes before refusing
    (``LogicError``, as cuCtxCreate out of memory; None: no limit); ``name`` and ``cc``:
    what the device reports.
    """

    class device_attribute:
        MAX_SHARED_MEMORY_PER_BLOCK, MAX_THREADS_PER_BLOCK, MAX_REGISTERS_PER_MULTIPROCESSOR = range(3)

    class Error(Exception):
        pass

    class LogicError(Error):
        pass

    class LaunchError(Error):
        pass

    def __init__(self, behaviour="ok", *, launch_s=0.0, contexts_allowed=None,
                 name="Fake A100", cc=(8, 0)):
        self.behaviour, self.launches, self.contexts = behaviour, [], 0
        self.made_contexts, self.sticky_error = 0, False
        self.launch_s, self.contexts_allowed, self.busy_until = launch_s, contexts_allowed, 0.0
        drv = self

        class Ctx:
            def pop(self):
                drv.contexts -= 1

            def detach(self):
                pass

        class Device:
            def __init__(self, i):
                pass

            def name(self):
                return name

            def compute_capability(self):
                return cc

            def get_attribute(self, attr):
                return (49152, 1024, 65536)[attr]

            def make_context(self):
                if drv.contexts_allowed is not None and drv.made_contexts >= drv.contexts_allowed:
                    raise drv.LogicError("cuCtxCreate failed: out of memory")
                drv.contexts += 1
                drv.made_contexts += 1
                drv.sticky_error = False  # a new context has no sticky launch error
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
                    drv.launches.append((name, block, grid))
                    if drv.behaviour == "launch_error":
                        raise drv.LaunchError("cuLaunchKernel failed: too many resources requested")
                    if drv.sticky_error:  # as CUDA: after an illegal access, every call fails
                        raise drv.LaunchError("cuLaunchKernel failed: an illegal memory access "
                                              "was encountered")
                    if drv.behaviour == "first_illegal_access" and len(drv.launches) == 1:
                        drv.sticky_error = True
                        raise drv.LaunchError("cuLaunchKernel failed: an illegal memory access "
                                              "was encountered")
                    drv.busy_until = max(time.monotonic(), drv.busy_until) + drv.launch_s
                    layer = LAYER_FOR_FAKE
                    y[...] = 0.0 if drv.behaviour == "wrong" else conv2d_reference(x, w, layer)
                return fn
        return Module()


LAYER_FOR_FAKE = LAYER


@pytest.fixture
def fake_gpu(monkeypatch):
    """Install a fake pycuda.driver and a fake compiler; return a factory setting the behaviour."""
    from kernels import nvcc
    from kernels.nvcc import CompileResult

    def fake_compile_many(sources, arch, **kw):
        return [CompileResult(status="compile_error" if s.config.z == 3 else "ok", arch=arch,
                              log="fake log", seconds=0.1, cubin_path="fake.cubin", registers=40)
                for s in sources]

    monkeypatch.setattr(nvcc, "compile_many", fake_compile_many)

    def install(behaviour="ok", **options):
        drv = _FakeDriver(behaviour, **options)
        pkg = type(sys)("pycuda")
        pkg.driver = drv
        monkeypatch.setitem(sys.modules, "pycuda", pkg)
        monkeypatch.setitem(sys.modules, "pycuda.driver", drv)
        return drv
    return install


def test_measure_configs_flow_times_checks_and_orders(fake_gpu):
    """Valid configs are compiled, launched with their grid/block, checked and timed, in order."""
    drv = fake_gpu("ok")
    cfgs = [DirectConfig(8, 8, 4, 2, 8, 4, 2), DirectConfig(16, 16, 8, 8, 1, 1, 1),
            DirectConfig(8, 8, 3, 1, 8, 8, 1)]  # 2nd: register cap -> invalid; 3rd: fake compile error
    res = gpu.measure_configs(LAYER, cfgs, gpu.GpuOptions(repeats=10, warmup=2))
    assert [r.status.value for r in res] == ["ok", "invalid", "compile_error"]
    assert res[0].costs == (1.5,) * 10 and res[0].time_ms == 1.5 and res[0].registers == 40
    assert drv.launches[0] == ("iobound_direct", (8, 4, 2), (2, 2, 2))
    assert len(drv.launches) == 3 + 10 and drv.contexts == 0


def test_measure_configs_reports_wrong_result(fake_gpu):
    """A kernel whose output differs from numpy is 'wrong_result' and is not timed."""
    fake_gpu("wrong")
    res = gpu.measure_config(LAYER, DirectConfig(8, 8, 4, 2, 8, 4, 2))
    assert res.status is Status.WRONG_RESULT and res.costs == () and "tolerance" in res.error


def test_measure_configs_classifies_launch_errors(fake_gpu):
    """A driver LaunchError becomes 'runtime_error' with the message."""
    fake_gpu("launch_error")
    res = gpu.measure_config(LAYER, WinogradConfig(2, 8, 8, 4, 4, 4, 2))
    assert res.status is Status.RUNTIME_ERROR and "too many resources" in res.error


def test_measure_configs_uses_a_fresh_context_after_a_runtime_error(fake_gpu):
    """A failed launch poisons its CUDA context; the next config is timed in a new one."""
    drv = fake_gpu("first_illegal_access")
    cfgs = [DirectConfig(8, 8, 4, 2, 8, 4, 2), WinogradConfig(2, 8, 8, 4, 4, 4, 2)]
    res = gpu.measure_configs(LAYER, cfgs, gpu.GpuOptions(repeats=10, warmup=1))
    assert [r.status.value for r in res] == ["runtime_error", "ok"], [r.error for r in res]
    assert "illegal memory access" in res[0].error and len(res[1].costs) == 10
    assert drv.made_contexts == 2 and drv.contexts == 0


# -- driver failures end as records ------------------------------------------------

GOOD = DirectConfig(8, 8, 4, 2, 8, 4, 2)


def test_a_context_that_cannot_be_created_is_a_runtime_error_record(fake_gpu):
    """The cuda measurer returns one record per config and never raises for a failure
    (search.measure.base); the same measurer run through the executors (iobound tune)
    records a context the driver refuses as runtime_error. Through the measurer itself the
    driver's LogicError escaped from measure()."""
    from search.measure.cuda import CudaMeasurer

    drv = fake_gpu(contexts_allowed=0)
    records = CudaMeasurer(LAYER).measure([GOOD.to_dict(), GOOD.to_dict()])
    assert [r.status for r in records] == [Status.RUNTIME_ERROR] * 2
    assert all("cuCtxCreate" in r.error for r in records)
    assert drv.contexts == 0


def test_a_failed_launch_keeps_its_record_when_no_new_context_can_be_made(fake_gpu):
    """A launch fails (runtime_error, the context is dropped) and the driver then refuses
    a new context: the failed config's record was lost (measure_configs raised LogicError,
    even for a single config, which needs no further context); each config must still get
    its record."""
    drv = fake_gpu("first_illegal_access", contexts_allowed=1)
    res = gpu.measure_config(LAYER, GOOD, gpu.GpuOptions(repeats=3, warmup=0))
    assert res.status is Status.RUNTIME_ERROR and "illegal memory access" in res.error
    assert drv.contexts == 0

    drv = fake_gpu("first_illegal_access", contexts_allowed=1)
    both = gpu.measure_configs(LAYER, [GOOD, GOOD], gpu.GpuOptions(repeats=3, warmup=0))
    assert [r.status for r in both] == [Status.RUNTIME_ERROR, Status.RUNTIME_ERROR]
    assert "illegal memory access" in both[0].error and "cuCtxCreate" in both[1].error
    assert drv.contexts == 0


def test_gpu_session_keeps_the_result_when_no_new_context_can_be_made():
    """GpuSession (the executors' GPU worker) drops its context after a timeout and makes
    a new one; when the driver refuses it, the timed-out config's result was lost (the run
    raised, the executor retried the config: another full watchdog wait)."""
    from search.executors.cuda_stages import GpuSession

    drv = _FakeDriver(contexts_allowed=1)
    session = GpuSession(drv, measure=lambda d, s, p, o: gpu.MeasureResult(status=Status.TIMEOUT))
    assert session.measure(None, "k.cubin", None).status is Status.TIMEOUT
    with pytest.raises(_FakeDriver.LogicError):  # the next run has no context to run in
        session.measure(None, "k.cubin", None)
    session.close()
    assert drv.contexts == 0


def test_the_watchdog_is_per_launch_during_the_warm_up(fake_gpu):
    """GpuOptions / CudaMeasurer: ``timeout_s`` is the watchdog *per launch*. The warm-up
    launches were enqueued together and waited for once, so a kernel well within the
    per-launch watchdog was a 'timeout' when warmup + 1 launches took longer."""
    fake_gpu(launch_s=0.15)
    res = gpu.measure_config(LAYER, GOOD, gpu.GpuOptions(repeats=2, warmup=3, timeout_s=0.4))
    assert res.status is Status.OK, res.error
    assert len(res.costs) == 2 and res.time_ms == 1.5
