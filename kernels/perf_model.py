"""The kernel performance model: an analytic ESTIMATE of our kernels' time on a device.

The model (version :data:`MODEL_VERSION`), per configuration, from the features of
:mod:`kernels.analytic` and the device preset:

- memory time ``t_mem = io_words * 4 B / dram_bandwidth``, where ``io_words`` is the
  dataflow's exact global traffic;
- compute time ``t_fp = flops / fp32_peak`` (``flops``: what the kernel executes,
  :mod:`kernels.kernel_flops`);
- resident blocks per SM ``b = min(blocks_per_sm, ceil(blocks / sm_count))`` and
  active warps per SM ``W = b * ceil(threads / 32)``;
- compute efficiency ``min(1, W * min(ilp, ILP_CAP) / FMA_PARALLELISM)``: the SM
  reaches its FMA peak only with ``FMA_PARALLELISM`` independent warp instructions
  in flight, from warps (occupancy) times independent accumulators per thread (ILP);
- memory efficiency ``min(1, W / MEMORY_WARPS)``: enough warps to cover DRAM latency;
- SM utilisation ``u = v / ceil(v)`` with ``v = blocks / (sm_count * b)`` (wave
  quantisation; a grid smaller than the GPU leaves SMs idle);
- loop latency ``t_loop = steps * ITERATION_CYCLES / clock``: every channel chunk a
  block processes (``ceil((c_in / groups) / alpha)``: a block reads one group's input
  channels; ``c_in`` for Winograd, whose step has a third barrier, between its
  transforms, that the model does not charge apart) costs two barriers
  and a load round trip that resident blocks overlap only with each other, so
  ``steps = blocks * chunks / (sm_count * b)`` per SM;
- ``time = max(t_mem / mem_eff, t_fp / fp_eff) / u + t_loop + LAUNCH_OVERHEAD_MS``.

It is deterministic and monotone: more traffic or more FLOPs never make it
faster, more active warps, more ILP, better utilisation or fewer loop steps never
make it slower (tested). It ignores caches, shared-memory bank conflicts and instruction overheads,
so absolute numbers are rough; rankings are what a tuner uses it for.

Examples
--------
>>> import numpy as np
>>> from iobound.devices import get_device
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
>>> est = estimate_configs(layer, get_device("v100"), "direct", np.array([[8, 8, 8, 4, 8, 8, 2]]))
>>> bool(est["time_ms"][0] > 0), int(est["blocks_per_sm"][0]) >= 1
(True, True)
"""

from __future__ import annotations

import numpy as np

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.limits import check_amounts

from .analytic import FEATURE_NAMES, WORD_BYTES, analytic_features, knob_matrix
from .config import _device
from .families import kernel_family
from .limits import check_broadcast

__all__ = ["estimate_ms", "estimate_configs", "MODEL_VERSION", "FMA_PARALLELISM", "ILP_CAP",
           "MEMORY_WARPS", "ITERATION_CYCLES", "LAUNCH_OVERHEAD_MS"]

#: 3: a kernel's flops are what it executes (kernels.kernel_flops): Winograd's transforms as
#: their straight-line code (then repeated by the threads of a block); a direct tile that
#: does not divide the output computes all its accumulators (the domain's tiles all divide
#: it, so no estimate of a direct space changed).
#: 4: the Winograd kernel transforms each kernel and tile once per block, into shared memory
#: (kernels/templates/winograd.cu): fewer flops, more shared memory; direct unchanged.
#: 5: resident blocks per SM follow the CUDA Occupancy Calculator's allocation units, from
#: registers estimated by a fit to ptxas' counts (kernels.limits.compiled_registers) instead
#: of register words plus a flat overhead: every estimate may change.
#: 6: a direct kernel of one input channel a group (depthwise) has its own register fit
#: (kernels.limits.register_kind): only such layers' estimates may change.
MODEL_VERSION = "6"
#: Independent warp instructions in flight per SM needed for the FMA peak.
FMA_PARALLELISM = 64
#: Accumulators per thread beyond which ILP no longer helps.
ILP_CAP = 8
#: Active warps per SM needed to saturate DRAM bandwidth.
MEMORY_WARPS = 16
#: Exposed cycles per channel-chunk iteration of a block (two barriers, a load round trip).
ITERATION_CYCLES = 400
#: Kernel launch overhead added to every estimate.
LAUNCH_OVERHEAD_MS = 0.005

def estimate_ms(io_bytes, flops, active_warps, ilp, utilisation, device,
                loop_steps=0.0) -> np.ndarray:
    """Estimated milliseconds (vectorised over all array arguments); see the module doc.

    Examples
    --------
    >>> from iobound.devices import get_device
    >>> v100 = get_device("v100")
    >>> t = estimate_ms(9e8, 0.0, 64, 8, 1.0, v100)   # 0.9 GB at 900 GB/s
    >>> round(float(t), 3)
    1.005
    """
    device = _device(device)
    if device is None:
        raise InvalidInputError("estimate_ms needs a device (a Device or a preset name)")
    io_bytes, flops, warps, ilp, util, steps = (
        check_amounts(name, a) for name, a in (("io_bytes", io_bytes), ("flops", flops),
                                               ("active_warps", active_warps), ("ilp", ilp),
                                               ("utilisation", utilisation),
                                               ("loop_steps", loop_steps)))
    check_broadcast(io_bytes=io_bytes, flops=flops, active_warps=warps, ilp=ilp,
                    utilisation=util, loop_steps=steps)
    if not np.all((util > 0) & (util <= 1)):  # a share of the SMs: 5.0 was taken as 1, 0 as 1e-9
        raise InvalidInputError(f"utilisation must be in (0, 1] (the share of the SMs busy), "
                                f"got {utilisation!r:.60}")
    t_mem, t_fp = device.memory_time_ms(io_bytes), device.compute_time_ms(flops)
    fp_eff = np.clip(warps * np.minimum(ilp, ILP_CAP) / FMA_PARALLELISM, 1e-9, 1.0)
    mem_eff = np.clip(warps / MEMORY_WARPS, 1e-9, 1.0)
    util = np.clip(util, 1e-9, 1.0)
    t_loop = steps * ITERATION_CYCLES / (device.clock_mhz * 1e3)
    return np.maximum(t_mem / mem_eff, t_fp / fp_eff) / util + t_loop + LAUNCH_OVERHEAD_MS


def estimate_configs(layer: ConvLayer, device, algorithm: str, knobs: np.ndarray) -> dict[str, np.ndarray]:
    """The model's columns for each row of ``knobs`` (as :func:`kernels.analytic.analytic_features`).

    Returns the :data:`~kernels.analytic.FEATURE_NAMES` columns plus ``sm_utilisation``,
    ``loop_steps_per_sm`` and ``time_ms`` (meaningless where ``blocks_per_sm < 1``: no
    block fits on an SM).

    Examples
    --------
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> est = estimate_configs(layer, "v100", "direct",
    ...                        np.array([[3, 3, 2, 1, 3, 3, 1], [6, 6, 4, 2, 6, 6, 1]]))
    >>> sorted(set(est) - set(FEATURE_NAMES))
    ['loop_steps_per_sm', 'sm_utilisation', 'time_ms']
    >>> est["blocks"].tolist(), int(est["time_ms"].argmin())  # 8 blocks beat one
    ([8.0, 1.0], 0)
    """
    device = _device(device)
    feats = analytic_features(layer, device, algorithm, knobs)
    f = {name: feats[:, c] for c, name in enumerate(FEATURE_NAMES)}
    warps_per_block = np.ceil(f["threads"] / device.warp_size)
    resident = np.minimum(f["blocks_per_sm"], np.ceil(f["blocks"] / device.sm_count))
    v = f["blocks"] / (device.sm_count * np.maximum(resident, 1.0))
    util = v / np.ceil(v)
    fam = kernel_family(algorithm)
    chunk = (np.ones(len(feats)) if fam.chunk_param is None
             else knob_matrix(knobs)[:, fam.tile_columns((fam.chunk_param,))[0]].astype(float))
    steps = (f["blocks"] * np.ceil(layer.c_in_per_group / chunk)
             / (device.sm_count * np.maximum(resident, 1.0)))
    times = estimate_ms(f["io_words"] * WORD_BYTES, f["flops"], resident * warps_per_block,
                        f["ilp"], util, device, steps)
    return {**f, "sm_utilisation": util, "loop_steps_per_sm": steps, "time_ms": times}
