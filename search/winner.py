"""What we report about a tuned kernel configuration: its I/O against the bound, its
CUDA source, and an emulator check on a reduced-size copy of the layer.

Examples
--------
>>> from iobound.networks import get_layer
>>> reduced_layer(get_layer("resnet50.conv3_1"), {"x": 14, "y": 2, "z": 16, "alpha": 4,
...               "tx": 7, "ty": 2, "tz": 8}, "direct").short()
'n1 8x7x55 -> 32x4x28 k3x3 s2x2 p1x1'
"""

from __future__ import annotations

from pathlib import Path

from iobound.errors import InvalidInputError

__all__ = ["reduced_layer", "bound_info", "write_kernel", "emulator_check"]


def reduced_layer(layer, config: dict, algorithm: str):
    """A small copy of ``layer`` on which ``config`` still fits: at most 2 tiles per axis,
    2 channel chunks; same kernel, stride, padding and dilation; batch 1."""
    y, x, z = config["y"], config["x"], config["z"]
    h_out = y * max(1, min(2, layer.h_out // y))
    w_out = x * max(1, min(2, layer.w_out // x))
    c_out = z * max(1, min(2, layer.c_out // z))
    c_in = min(layer.c_in, 2 * config["alpha"]) if algorithm == "direct" else min(layer.c_in, 4)
    h_in = (h_out - 1) * layer.stride[0] + layer.extent_h - 2 * layer.padding[0]
    w_in = (w_out - 1) * layer.stride[1] + layer.extent_w - 2 * layer.padding[1]
    return layer.replace(n=1, c_in=c_in, c_out=c_out, h_in=max(h_in, 1), w_in=max(w_in, 1),
                         name=f"{layer.name or 'layer'} (reduced)")


def bound_info(layer, cfg: dict, algorithm: str) -> dict:
    """The dataflow's exact I/O for ``cfg`` and the best lower bound at its on-chip words."""
    from iobound.report import bound_report
    from kernels.config import config_from_dict, onchip_words
    from kernels.verify import expected_io

    kc = config_from_dict(dict(cfg), algorithm)
    s = onchip_words(layer, kc)
    rep = bound_report(layer, s, algorithm, getattr(kc, "e", None))
    io = expected_io(layer, kc).total
    return {"fast_memory_words": s, "lower_bound_words": rep.best, "method": rep.best_method,
            "dataflow_io_words": io, "ratio_to_bound": io / rep.best if rep.best else None}


def write_kernel(layer, cfg: dict, algorithm: str, out_dir: str) -> str:
    """Write the CUDA source of ``cfg`` to ``out_dir/<layer>_<algorithm>_best.cu``; its path."""
    from kernels.config import config_from_dict
    from kernels.generate import generate

    src = generate(layer, config_from_dict(dict(cfg), algorithm))
    folder = Path(out_dir)
    name = (layer.name or "layer").replace("/", "_").replace(" ", "_")
    path = folder / f"{name}_{algorithm}_best.cu"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(src.code)
    except OSError as exc:  # a file where the folder should be, no space left, ...
        raise InvalidInputError(f"cannot write the best kernel to {str(path)!r}: "
                                f"{exc.strerror or exc}") from None
    return str(path)


def emulator_check(layer, cfg: dict, algorithm: str) -> dict:
    """Emulate ``cfg`` on :func:`reduced_layer`; numerics vs numpy and traffic vs formula."""
    from kernels.config import check_config, config_from_dict
    from kernels.verify import emulate_and_check

    small = reduced_layer(layer, cfg, algorithm)
    kc = config_from_dict(dict(cfg), algorithm)
    reasons = check_config(small, kc)
    if reasons:
        return {"checked": False, "reason": "; ".join(reasons), "layer": small.short()}
    try:
        chk = emulate_and_check(small, kc, with_bound=False)
    except Exception as exc:  # build/run failures are reported, not raised
        return {"checked": False, "reason": f"{type(exc).__name__}: {exc}", "layer": small.short()}
    return {"checked": True, "layer": small.short(), "matches_numpy": chk.numerics_ok,
            "max_rel_err": chk.max_rel_err, "traffic_words": chk.global_loads + chk.global_stores,
            "formula_words": chk.expected_loads + chk.expected_stores,
            "traffic_matches": chk.traffic_matches}
