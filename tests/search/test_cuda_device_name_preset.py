"""``iobound tune --measure cuda`` picks the preset of the GPU by the name the driver gives."""

import argparse

import pytest

from iobound.devices import get_device


@pytest.mark.parametrize("driver_name, preset", [
    # cuDeviceGetName / nvidia-smi of an H100 SXM5 board (132 SMs, 80 GB HBM3, 3.35 TB/s):
    # the H100-SXM5-80GB preset's data. It was "no preset; default limits" (V100-SXM2),
    # and the run's history and exported cache labelled the H100's timings V100-SXM2.
    ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"),
    ("Tesla V100-SXM2-16GB", "V100-SXM2"),
    ("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"),
    ("Tesla T4", "T4"),
])
def test_the_gpu_driver_name_finds_its_preset(monkeypatch, driver_name, preset):
    from search.cli.measure_args import device_for

    monkeypatch.setattr("search.measure.cuda.gpu_name", lambda: driver_name)
    device, note = device_for(argparse.Namespace(device=None), "cuda")
    assert device.name == preset and note == " (this GPU)", note
    assert get_device(driver_name).name == preset


def test_a_gpu_without_a_preset_runs_under_its_own_name_and_driver_limits(monkeypatch):
    """A GPU no preset names (here an RTX 4090, compute capability 8.9) is tuned with the
    limits its driver gives and stored under its own name: with the default preset's name
    its timings would join another GPU's records in the history and exported caches."""
    import sys

    from search.cli.measure_args import device_for
    from tests.kernels.test_gpu import _FakeDriver

    drv = _FakeDriver(name="NVIDIA GeForce RTX 4090", cc=(8, 9))
    pkg = type(sys)("pycuda")
    pkg.driver = drv
    monkeypatch.setitem(sys.modules, "pycuda", pkg)
    monkeypatch.setitem(sys.modules, "pycuda.driver", drv)
    device, note = device_for(argparse.Namespace(device=None), "cuda")
    assert device.name == "NVIDIA GeForce RTX 4090" and device.compute_capability == (8, 9)
    assert device.arch == "sm_89" and device.max_threads_per_block == 1024
    assert "no preset" in note and "driver" in note
