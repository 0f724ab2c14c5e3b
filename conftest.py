"""Test-wide settings: hypothesis profiles and the skips for GPU, nvcc and shared data.

The skip decisions live here, once; tests only carry the markers
``gpu``, ``nvcc`` and ``shared_data``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough", max_examples=300, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

REPO = Path(__file__).resolve().parent

# The tests build thousands of emulator libraries and cubins: they go to a cache of the
# tests' own (kept between runs, so a second run is fast), never the user's
# ~/.cache/iobound or $IOBOUND_CACHE. Set here, at import, so doctests and the processes
# tests start (CLI runs, executor workers) use it too.
os.environ["IOBOUND_CACHE"] = str(Path(tempfile.gettempdir()) / f"iobound-test-cache-{os.getuid()}")

# $IOBOUND_SHARED_DATA, else ../shared/data beside the checkout: the benchmarks' rule
from benchmarks.shared_data import SHARED_DATA  # noqa: E402


def _has_gpu() -> str | None:
    """None when a GPU with pycuda is usable, else the reason why not."""
    try:
        import pycuda.driver as drv  # noqa: F401
    except Exception as exc:  # ImportError, or a driver library missing
        return f"pycuda is not usable ({type(exc).__name__}: {exc}); install the 'cuda' extra on a GPU machine"
    try:
        drv.init()
        if drv.Device.count() < 1:
            return "no CUDA device found"
    except Exception as exc:
        return f"CUDA driver not usable: {exc}"
    return None


def _find_nvcc() -> str | None:
    try:
        from kernels.nvcc import find_nvcc  # the project's own lookup, once it exists
        return find_nvcc()
    except Exception:
        return shutil.which("nvcc")


def pytest_ignore_collect(collection_path, config):
    """The tests folders' conftest.py files are not collected as modules (they hold no
    doctests): not packages, each is a module named ``conftest``, and collecting one after
    another folder's was loaded (``pytest tests/search tests/benchmarks``) is an
    import-file mismatch. Loading them as conftests is not collection: it is unchanged."""
    if collection_path.name == "conftest.py" and collection_path.parent != REPO:
        return True
    return None


def pytest_collection_modifyitems(config, items):
    gpu_reason = nvcc_missing = shared_missing = None
    checked = set()
    for item in items:
        if "gpu" in item.keywords:
            if "gpu" not in checked:
                gpu_reason, _ = _has_gpu(), checked.add("gpu")
            if gpu_reason:
                item.add_marker(pytest.mark.skip(reason=f"GPU test: {gpu_reason}"))
        if "nvcc" in item.keywords:
            if "nvcc" not in checked:
                nvcc_missing = _find_nvcc() is None
                checked.add("nvcc")
            if nvcc_missing:
                item.add_marker(pytest.mark.skip(
                    reason="nvcc not found on PATH, in CUDA_HOME or the nvidia-cuda-nvcc wheel"))
        if "shared_data" in item.keywords:
            if "shared" not in checked:
                shared_missing = not (SHARED_DATA / "tuning-spaces").is_dir()
                checked.add("shared")
            if shared_missing:
                item.add_marker(pytest.mark.skip(
                    reason=f"recorded tuning spaces not found at {SHARED_DATA} "
                           "(set IOBOUND_SHARED_DATA to their folder)"))


@pytest.fixture(autouse=True)
def _doctest_temp_folders(request, tmp_path_factory, monkeypatch):
    """A doctest's ``tempfile.mkdtemp()`` folders go under pytest's own temporary folder
    (old runs' are removed), not $TMPDIR: every run left dozens behind there (kernels,
    databases, logs). Tests proper use ``tmp_path``."""
    if isinstance(request.node, pytest.DoctestItem):
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("doctest")))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder of the recorded data (../shared/data beside the checkout)."""
    return SHARED_DATA
