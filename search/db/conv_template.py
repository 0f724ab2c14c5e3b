"""Our convolution template in the tuning database: its workloads' template name, which
kernel family a stored configuration is, the layer a stored problem describes (written by
an earlier ``ConvLayer.to_dict`` too) and which records may be stored for it.

Examples
--------
>>> conv_algorithm(("e", "x", "y", "z")), exported_kernel_name("direct")
('winograd', 'iobound_direct')
>>> stored_layer({"n": 1, "c_in": 8, "h_in": 8, "w_in": 8, "c_out": 8, "k_h": 3, "k_w": 3}).c_in
8
"""

from __future__ import annotations

from typing import Any

from iobound.errors import InvalidInputError

from ..measure.base import MeasureRecord

__all__ = ["CONV_TEMPLATE", "conv_algorithm", "exported_kernel_name", "current_layer_problem",
           "stored_layer", "conv_config_fault"]

#: The template name of our convolution kernels (the parameter names tell direct from Winograd).
CONV_TEMPLATE = "iobound.conv"


def conv_algorithm(params) -> str:
    """The kernel family of our conv template's parameter names: a Winograd configuration
    has ``e``.

    >>> conv_algorithm(("e", "x", "y", "z")), conv_algorithm(("x", "y", "z", "alpha"))
    ('winograd', 'direct')
    """
    if isinstance(params, (str, bytes)) or not hasattr(params, "__iter__"):
        raise InvalidInputError(f"params must be a list of parameter names, got {params!r:.60}")
    return "winograd" if "e" in params else "direct"


def exported_kernel_name(algorithm: str) -> str:
    """The ``kernel_name`` a Kernel Tuner cache of our conv template is written with
    (``iobound tune --export-cache``): ``iobound_direct`` or ``iobound_winograd``.

    >>> exported_kernel_name(conv_algorithm(("e", "x", "y", "z")))
    'iobound_winograd'
    """
    return f"iobound_{algorithm}"


def current_layer_problem(problem: Any) -> Any:
    """A layer written by an earlier :meth:`~iobound.layer.ConvLayer.to_dict` (one without
    ``groups``, added later) as today's writes it, so that a file of an earlier run and a
    run today store one workload; any other problem as it is (one with fields that
    ``to_dict`` does not write, or other values, is not that layer's dict).

    >>> old = {"n": 1, "c_in": 8, "h_in": 8, "w_in": 8, "c_out": 8, "k_h": 3, "k_w": 3}
    >>> current_layer_problem(old)["groups"], current_layer_problem([8])
    (1, [8])
    """
    layer = stored_layer(problem)
    if layer is None:
        return problem
    full = layer.to_dict()
    return full if set(problem) <= set(full) and all(
        full[k] == problem[k] for k in problem) else problem


def stored_layer(problem: Any):
    """The :class:`~iobound.layer.ConvLayer` a stored problem of our conv template describes
    (layers compare by shape, their names aside); None for a damaged or foreign one.

    >>> stored_layer({"n": 1, "c_in": 8, "h_in": 8, "w_in": 8, "c_out": 8, "k_h": 3, "k_w": 3}).short()
    'n1 8x8x8 -> 8x6x6 k3x3 s1x1 p0x0'
    >>> stored_layer([4096, 4096]) is None
    True
    """
    from iobound.errors import IoboundError
    from iobound.layer import ConvLayer
    try:
        return ConvLayer.from_dict(problem) if isinstance(problem, dict) else None
    except (IoboundError, KeyError, TypeError, ValueError):
        return None


def conv_config_fault(r: MeasureRecord, layer, algorithm: str | None) -> str:
    """Why a record of our conv template cannot be stored for ``layer`` ("" when it can):
    its config is no kernel config (integers of its algorithm's knobs:
    :func:`kernels.config.config_from_dict`) or, timed ``ok``, one that cannot run for the
    layer (:func:`kernels.config.check_config`, device aside): stored, it would be the
    layer's fastest, and ``kernel --from-history`` could not build it. A failed or
    invalid record may hold a config the tuner found invalid: that is what it records.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3)
    >>> cfg = {"x": 3, "y": 3, "z": 2, "alpha": 1, "tx": 3, "ty": 3, "tz": 1}
    >>> conv_config_fault(MeasureRecord.ok(cfg, time_ms=1.0), layer, "direct")
    ''
    >>> conv_config_fault(MeasureRecord.ok({**cfg, "x": 4}, time_ms=1.0), layer, "direct")[-20:]
    'tx=3 must divide x=4'
    """
    from kernels.config import check_config, config_from_dict
    try:
        reasons, typed = check_config(layer, config_from_dict(r.config, algorithm)), True
    except InvalidInputError as exc:  # not a kernel config at all: refused whatever its status
        reasons, typed = [str(exc)], False
    if reasons and (not typed or r.is_ok):
        shown = ", ".join(f"{k}={v!r}" for k, v in r.config.items())[:100]
        return (f"config {shown} is not a valid kernel config of the layer: "
                f"{'; '.join(reasons)[:160]}")
    return ""

