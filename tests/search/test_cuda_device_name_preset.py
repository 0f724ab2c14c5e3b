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
