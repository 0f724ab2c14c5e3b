"""The ``model`` measurer: an analytic ESTIMATE of kernel time, not a measurement.

Every record it returns has ``estimate=True`` and ``extra["label"] ==
"analytic estimate"``; :meth:`ModelMeasurer.toolchain` says so too.

The model is :mod:`kernels.perf_model` (version :data:`~kernels.perf_model.MODEL_VERSION`).

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

from iobound.algorithms import algorithm_name
from kernels.perf_model import MODEL_VERSION, estimate_configs
from search.measure.base import MeasureRecord, Measurer, Status, check_configs, invalid_config

__all__ = ["ModelMeasurer", "stale_model_toolchain"]

LABEL = "analytic estimate"


def stale_model_toolchain(toolchain: str) -> bool:
    """Whether ``toolchain`` names the analytic model of another version than
    :data:`~kernels.perf_model.MODEL_VERSION` (:meth:`ModelMeasurer.toolchain`'s words):
    its estimates are not the model's as it is now.

    >>> stale_model_toolchain("analytic model v1 for V100-SXM2 (estimate, not measured)")
    True
    >>> stale_model_toolchain(f"analytic model v{MODEL_VERSION} for A100 (estimate, not measured)")
    False
    >>> stale_model_toolchain("nvcc 12.9")
    False
    """
    import re
    m = re.match(r"analytic model v(\S+) for ", toolchain)
    return m is not None and m.group(1) != MODEL_VERSION


class ModelMeasurer(Measurer):
    """Analytic time estimates for our kernels on a device preset (``estimate=True``).

    Parameters
    ----------
    layer : ConvLayer
    device : Device or str
        A preset or its name.
    algorithm : {"direct", "winograd"}

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> m = ModelMeasurer(layer, "a100", algorithm="winograd")
    >>> m.device.name, m.algorithm, m.estimate
    ('A100-SXM4-40GB', 'winograd', True)
    """

    name = "model"
    estimate = True

    def __init__(self, layer, device, algorithm: str = "direct"):
        from iobound.device_spec import Device
        from iobound.layer import ConvLayer
        from search.option_checks import check_type
        check_type("layer", layer, ConvLayer)
        check_type("device", device, (Device, str))
        if isinstance(device, str):
            from iobound.devices import get_device
            device = get_device(device)
        algorithm = algorithm_name(algorithm)
        self.layer, self.device, self.algorithm = layer, device, algorithm

    def toolchain(self) -> str:
        return f"analytic model v{MODEL_VERSION} for {self.device.name} (estimate, not measured)"

    def describe(self) -> dict:
        return {**super().describe(), "label": LABEL, "device": self.device.name,
                "algorithm": self.algorithm, "model_version": MODEL_VERSION}

    def measure(self, configs: Sequence[Mapping[str, Any]]) -> list[MeasureRecord]:
        from kernels.config import check_config, config_from_dict

        configs = check_configs(configs)
        records: list[MeasureRecord | None] = [None] * len(configs)
        good, rows = [], []
        for i, cfg in enumerate(configs):
            records[i] = invalid_config(cfg)
            if records[i] is not None:
                continue
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
            est = estimate_configs(self.layer, self.device, self.algorithm, np.array(rows))
            for k, i in enumerate(good):
                if est["blocks_per_sm"][k] < 1:
                    records[i] = MeasureRecord.failed(
                        configs[i], Status.INVALID, "no block of this config fits on an SM",
                        extra={"label": LABEL})
                    continue
                extra = {"label": LABEL, "model_version": MODEL_VERSION,
                         "device": self.device.name, "io_words": int(est["io_words"][k]),
                         "flops": float(est["flops"][k]), "occupancy": float(est["occupancy"][k]),
                         "waves": float(est["waves"][k]),
                         "sm_utilisation": float(est["sm_utilisation"][k]),
                         "loop_steps_per_sm": float(est["loop_steps_per_sm"][k])}
                records[i] = MeasureRecord.ok(configs[i], time_ms=float(est["time_ms"][k]),
                                              estimate=True, extra=extra)
        return records  # type: ignore[return-value]
