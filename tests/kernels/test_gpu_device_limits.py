"""kernels.gpu.device_limits without a GPU: which preset fills the fields the driver lacks.

Reference: the documented rule (a GPU whose name is a preset takes that preset's fields; any
other takes those of the preset of the nearest compute capability, major first, then minor),
checked by a brute-force search over iobound.devices.DEVICES, with the fake driver of
tests/kernels/test_gpu.py.
"""

import re

import pytest

from iobound.devices import DEVICES, get_device
from kernels import gpu
from test_gpu import _FakeDriver


def _device(drv, name, cc):
    dev = drv.Device(0)
    dev.name = lambda: name
    dev.compute_capability = lambda: cc
    return dev


def test_a_preset_name_takes_the_preset_and_the_driver_limits():
    drv = _FakeDriver()
    dev = gpu.device_limits(drv, _device(drv, "Tesla V100-SXM2-16GB", (7, 0)))
    v100 = get_device("v100")
    assert (dev.sm_count, dev.dram_bandwidth_gbs, dev.source) == (v100.sm_count, v100.dram_bandwidth_gbs,
                                                                   v100.source)
    assert dev.name == "Tesla V100-SXM2-16GB"
    assert (dev.shared_mem_per_block_bytes, dev.max_threads_per_block) == (49152, 1024)


@pytest.mark.parametrize("cc", [(8, 9), (6, 0), (7, 2), (9, 0)])
def test_an_unknown_gpu_takes_the_preset_of_the_nearest_compute_capability(cc):
    drv = _FakeDriver()
    dev = gpu.device_limits(drv, _device(drv, "Some Future GPU", cc))
    base = get_device(re.search(r"from the (\S+) preset", dev.source).group(1))
    nearest = min(abs(d.compute_capability[0] - cc[0]) * 100 + abs(d.compute_capability[1] - cc[1])
                  for d in DEVICES.values())
    assert abs(base.compute_capability[0] - cc[0]) * 100 + abs(base.compute_capability[1] - cc[1]) == nearest
    assert (dev.sm_count, dev.l2_bytes) == (base.sm_count, base.l2_bytes)
    assert dev.compute_capability == cc and dev.arch == "sm_%d%d" % cc and dev.aliases == ()
