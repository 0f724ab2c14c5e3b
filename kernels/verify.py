"""Emulate a configuration and check it three ways: numerics, exact traffic, lower bound.

:func:`emulate_and_check` generates the kernel, runs it in the CPU emulator on random
data and compares

* the output with the float64 numpy reference, within the fp32 error bound of
  :mod:`kernels.reference`;
* the counted global loads and stores with the dataflow's exact I/O formula
  (``dataflow.direct.direct_io`` / ``dataflow.winograd.winograd_io``);
* the counted total with the best I/O lower bound at the on-chip words the kernel
  really uses (shared memory plus register words, :func:`kernels.config.onchip_words`).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from kernels.config import DirectConfig
>>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
>>> chk = emulate_and_check(layer, DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1))
>>> chk.ok, chk.traffic_matches, chk.global_loads == chk.expected_loads
(True, True, True)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from iobound.layer import ConvLayer

from .config import KernelConfig, onchip_words
from .emulator import check_problem_size, emulate
from .generate import generate
from .reference import compare, conv2d_reference, direct_tolerance, random_problem, winograd_tolerance

__all__ = ["EmulationCheck", "expected_io", "emulate_and_check"]


@dataclass(frozen=True)
class EmulationCheck:
    """Outcome of one emulated run against the reference, the formula and the bound."""

    ok: bool                 # numerics_ok and traffic_matches and above_lower_bound
    numerics_ok: bool
    max_abs_err: float
    max_rel_err: float
    worst_ratio: float       # max |error| / tolerance
    global_loads: int
    global_stores: int
    expected_loads: int      # the dataflow formula's input + weight loads
    expected_stores: int
    traffic_matches: bool
    onchip_words: int
    lower_bound: float | None
    above_lower_bound: bool
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def expected_io(layer: ConvLayer, config: KernelConfig):
    """The dataflow's exact ``DataflowIO`` for the tiling ``config`` implements."""
    if config.algorithm == "winograd":
        from dataflow.winograd import winograd_io
        return winograd_io(layer, config.tiling)
    from dataflow.direct import direct_io
    return direct_io(layer, config.tiling)


def emulate_and_check(layer: ConvLayer, config: KernelConfig, seed: int = 0,
                      cache_root: str | Path | None = None, with_bound: bool = True) -> EmulationCheck:
    """Generate, emulate on uniform [-1, 1) data from ``seed``, and check (see module doc).

    Raises
    ------
    InvalidConfigError
        (a ValueError) when the config cannot run.
    EmulatorBuildError, EmulatorRunError, ToolchainError
        When the emulator cannot build or run the kernel.
    """
    check_problem_size(layer)  # before the random tensors are allocated
    source = generate(layer, config)
    x, w = random_problem(layer, np.random.default_rng(seed))
    run = emulate(source, x, w, cache_root=cache_root)
    ref = conv2d_reference(x, w, layer)
    if config.algorithm == "winograd":
        tol = winograd_tolerance(x, w, layer, config.e)
    else:
        tol = direct_tolerance(x, w, layer)
    cmp = compare(run.output, ref, tol)
    io = expected_io(layer, config)
    expected_loads = io.input_loads + io.weight_loads
    matches = run.global_loads == expected_loads and run.global_stores == io.output_stores
    s_words = onchip_words(layer, config)
    bound = None
    above = True
    if with_bound:
        from iobound.report import best_lower_bound
        e = config.e if config.algorithm == "winograd" else None
        bound = float(best_lower_bound(layer, s_words, config.algorithm, e))
        above = run.global_loads + run.global_stores >= bound
    return EmulationCheck(
        ok=cmp.ok and matches and above, numerics_ok=cmp.ok, max_abs_err=cmp.max_abs_err,
        max_rel_err=cmp.max_rel_err, worst_ratio=cmp.worst_ratio, global_loads=run.global_loads,
        global_stores=run.global_stores, expected_loads=expected_loads,
        expected_stores=io.output_stores, traffic_matches=matches, onchip_words=s_words,
        lower_bound=bound, above_lower_bound=above, seconds=run.seconds + run.build_seconds)
