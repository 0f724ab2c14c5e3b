"""GPU measurement: everything short of the driver here; the real run on a GPU (marker gpu)."""

import sys

import pytest

from iobound.errors import ToolchainError
from iobound.layer import ConvLayer
from kernels import gpu
from kernels.config import DirectConfig, WinogradConfig


def test_median_of_timings():
    """The reported time is the median of the repeats."""
    assert gpu.median_ms([5.0, 1.0, 3.0]) == 3.0
    with pytest.raises(ValueError):
        gpu.median_ms([])


@pytest.mark.parametrize("exc,status", [
    (TimeoutError("kernel did not finish within 1 s"), "timeout"),
    (type("LaunchError", (Exception,), {})("cuCtxSynchronize failed: launch timeout"), "timeout"),
    (type("LaunchError", (Exception,), {})("cuLaunchKernel failed: too many resources requested"), "runtime_error"),
    (type("LogicError", (Exception,), {})("cuModuleLoad failed: invalid device image"), "runtime_error"),
    (type("CompileError", (Exception,), {})("nvcc failed"), "compile_error"),
    (MemoryError("cuMemAlloc failed: out of memory"), "runtime_error"),
])
def test_exception_classification(exc, status):
    """Driver exceptions map to the measurement statuses by type and message."""
    assert gpu.classify_exception(exc) == status


def test_options_are_validated():
    """Repeats, warm-up and timeout must make sense."""
    assert gpu.GpuOptions().repeats >= 10
    with pytest.raises(ValueError, match="repeats"):
        gpu.GpuOptions(repeats=0)
    with pytest.raises(ValueError, match="timeout_s"):
        gpu.GpuOptions(timeout_s=0)


def test_result_status_is_validated():
    """A MeasureResult only carries a known status."""
    assert gpu.MeasureResult(status="ok", costs=(1.0,), time_ms=1.0).status == "ok"
    with pytest.raises(ValueError, match="status"):
        gpu.MeasureResult(status="crashed")


def test_arch_from_compute_capability():
    """Compute capability (9, 0) is sm_90."""
    assert gpu.arch_of((9, 0)) == "sm_90"


def test_watchdog_raises_timeout_on_an_event_that_never_completes():
    """_wait gives up after the timeout instead of blocking forever."""
    class Never:
        def query(self):
            return False
    with pytest.raises(TimeoutError):
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
    assert res.status == "ok", res.error
    assert len(res.costs) == 10 and res.time_ms > 0 and res.max_abs_err < 1e-3


@pytest.mark.gpu
def test_real_gpu_invalid_config_is_reported(tmp_path):
    """A config over the device's limits is 'invalid', not a crash."""
    big = ConvLayer(n=1, c_in=64, h_in=64, w_in=64, c_out=64, k_h=3, k_w=3, padding=1)
    res = gpu.measure_config(big, DirectConfig(32, 32, 4, 64, 32, 8, 1), cache_root=tmp_path)
    assert res.status == "invalid" and "shared memory" in res.error
