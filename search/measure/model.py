"""The ``model`` measurer: an analytic ESTIMATE of kernel time, not a measurement.

Every record it returns has ``estimate=True`` and ``extra["label"] ==
"analytic estimate"``; :meth:`ModelMeasurer.toolchain` says so too.

The model (version :data:`MODEL_VERSION`), per configuration, from the features of
:mod:`search.analytic` and the device preset:

- memory time ``t_mem = io_words * 4 B / dram_bandwidth``, where ``io_words`` is the
  dataflow's exact global traffic;
- compute time ``t_fp = flops / fp32_peak``;
- resident blocks per SM ``b = min(blocks_per_sm, ceil(blocks / sm_count))`` and
  active warps per SM ``W = b * ceil(threads / 32)``;
- compute efficiency ``min(1, W * min(ilp, ILP_CAP) / FMA_PARALLELISM)``: the SM
  reaches its FMA peak only with ``FMA_PARALLELISM`` independent warp instructions
  in flight, from warps (occupancy) times independent accumulators per thread (ILP);
- memory efficiency ``min(1, W / MEMORY_WARPS)``: enough warps to cover DRAM latency;
- SM utilisation ``u = v / ceil(v)`` with ``v = blocks / (sm_count * b)`` (wave
  quantisation; a grid smaller than the GPU leaves SMs idle);
- loop latency ``t_loop = steps * ITERATION_CYCLES / clock``: every channel chunk a
  block processes (``ceil(c_in / alpha)``; ``c_in`` for Winograd) costs two barriers
  and a load round trip that resident blocks overlap only with each other, so
  ``steps = blocks * chunks / (sm_count * b)`` per SM;
- ``time = max(t_mem / mem_eff, t_fp / fp_eff) / u + t_loop + LAUNCH_OVERHEAD_MS``.

It is deterministic and monotone: more traffic or more FLOPs never make it
faster, more active warps, more ILP, better utilisation or fewer loop steps never
make it slower (tested). It ignores caches, shared-memory bank conflicts and instruction overheads,
so absolute numbers are rough; rankings are what a tuner uses it for.

Configs that fail ``kernels.config.check_config`` (or that fit no block on an SM)
get status ``INVALID`` with the reasons.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
>>> m = ModelMeasurer(layer, "v100")
>>> ok, bad = m.measure([dict(x=8, y=8, z=8, alpha=4, tx=8, ty=8, tz=2),
...                      dict(x=8, y=8, z=8, alpha=4, tx=3, ty=8, tz=2)])
>>> ok.status, ok.estimate, ok.extra["label"], ok.time_ms > 0
(<Status.OK: 'ok'>, True, 'analytic estimate', True)
>>> bad.status.value, bad.error
('invalid', 'tx=3 must divide x=8')
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from iobound.errors import InvalidInputError
from search.measure.base import MeasureRecord, Measurer, Status

__all__ = ["ModelMeasurer", "estimate_ms", "MODEL_VERSION", "FMA_PARALLELISM", "ILP_CAP",
           "MEMORY_WARPS", "ITERATION_CYCLES", "LAUNCH_OVERHEAD_MS"]

MODEL_VERSION = "2"
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
LABEL = "analytic estimate"
WORD_BYTES = 4


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
    io_bytes, flops, warps, ilp, util, steps = (
        np.asarray(a, dtype=float) for a in (io_bytes, flops, active_warps, ilp, utilisation,
                                             loop_steps))
    t_mem = io_bytes / (device.dram_bandwidth_gbs * 1e9) * 1e3
    t_fp = flops / (device.fp32_peak_gflops * 1e9) * 1e3
    fp_eff = np.clip(warps * np.minimum(ilp, ILP_CAP) / FMA_PARALLELISM, 1e-9, 1.0)
    mem_eff = np.clip(warps / MEMORY_WARPS, 1e-9, 1.0)
    util = np.clip(util, 1e-9, 1.0)
    t_loop = steps * ITERATION_CYCLES / (device.clock_mhz * 1e3)
    return np.maximum(t_mem / mem_eff, t_fp / fp_eff) / util + t_loop + LAUNCH_OVERHEAD_MS


class ModelMeasurer(Measurer):
    """Analytic time estimates for our kernels on a device preset (``estimate=True``).

    Parameters
    ----------
    layer : ConvLayer
    device : Device or str
        A preset or its name.
    algorithm : {"direct", "winograd"}
    """

    name = "model"
    estimate = True

    def __init__(self, layer, device, algorithm: str = "direct"):
        if isinstance(device, str):
            from iobound.devices import get_device
            device = get_device(device)
        if algorithm not in ("direct", "winograd"):
            raise InvalidInputError(f"algorithm must be 'direct' or 'winograd', got {algorithm!r}")
        self.layer, self.device, self.algorithm = layer, device, algorithm

    def toolchain(self) -> str:
        return f"analytic model v{MODEL_VERSION} for {self.device.name} (estimate, not measured)"

    def describe(self) -> dict:
        return {**super().describe(), "label": LABEL, "device": self.device.name,
                "algorithm": self.algorithm, "model_version": MODEL_VERSION}

    def measure(self, configs: Sequence[Mapping[str, Any]]) -> list[MeasureRecord]:
        from kernels.config import check_config, config_from_dict
        from search.analytic import FEATURE_NAMES, analytic_features

        records: list[MeasureRecord | None] = [None] * len(configs)
        good, rows = [], []
        for i, cfg in enumerate(configs):
            try:
                kc = config_from_dict(dict(cfg), self.algorithm)
                reasons = check_config(self.layer, kc, self.device)
            except (ValueError, TypeError) as exc:
                reasons = [str(exc)]
            if reasons:
                records[i] = MeasureRecord.failed(cfg, Status.INVALID, "; ".join(reasons),
                                                  extra={"label": LABEL})
                continue
            good.append(i)
            rows.append([getattr(kc, p) for p in kc.params])
        if good:
            feats = analytic_features(self.layer, self.device, self.algorithm, np.array(rows))
            f = {name: feats[:, c] for c, name in enumerate(FEATURE_NAMES)}
            warps_per_block = np.ceil(f["threads"] / self.device.warp_size)
            resident = np.minimum(f["blocks_per_sm"], np.ceil(f["blocks"] / self.device.sm_count))
            v = f["blocks"] / (self.device.sm_count * np.maximum(resident, 1.0))
            util = v / np.ceil(v)
            chunk = (np.ones(len(rows)) if self.algorithm == "winograd"
                     else np.array([r[3] for r in rows], dtype=float))
            steps = (f["blocks"] * np.ceil(self.layer.c_in / chunk)
                     / (self.device.sm_count * np.maximum(resident, 1.0)))
            times = estimate_ms(f["io_words"] * WORD_BYTES, f["flops"], resident * warps_per_block,
                                f["ilp"], util, self.device, steps)
            for k, i in enumerate(good):
                if f["blocks_per_sm"][k] < 1:
                    records[i] = MeasureRecord.failed(
                        configs[i], Status.INVALID, "no block of this config fits on an SM",
                        extra={"label": LABEL})
                    continue
                extra = {"label": LABEL, "model_version": MODEL_VERSION,
                         "device": self.device.name, "io_words": int(f["io_words"][k]),
                         "flops": float(f["flops"][k]), "occupancy": float(f["occupancy"][k]),
                         "waves": float(f["waves"][k]), "sm_utilisation": float(util[k]),
                         "loop_steps_per_sm": float(steps[k])}
                records[i] = MeasureRecord.ok(configs[i], time_ms=float(times[k]), estimate=True,
                                              extra=extra)
        return records  # type: ignore[return-value]
