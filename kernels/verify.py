"""Emulate a configuration and check it four ways: numerics, exact traffic, flops, lower bound.

:func:`emulate_and_check` generates the kernel, runs it in the CPU emulator on random
data and compares

* the output with the float64 numpy reference, within the fp32 error bound of
  :mod:`kernels.reference`;
* the counted global loads and stores with the dataflow's exact I/O formula
  (``dataflow.direct.direct_io`` / ``dataflow.winograd.winograd_io``; grouped layers:
  ``groups`` times one group's, :func:`kernels.grouping.kernel_io`);
* the flops the kernel executed (the emulator counts every binary float operation) with
  the model's count, :func:`kernels.kernel_flops.kernel_flops`;
* the counted total with the best I/O lower bound at S = the on-chip words the kernel
  really uses (shared memory plus register words, :func:`kernels.config.onchip_words`;
  ``onchip_words``) + 2: blocks share nothing on chip, so the single-processor bound
  holds at a block's words + 2 (:func:`iobound.multi_block.bound_fast_memory`;
  ``lower_bound_fast_memory_words``).

:func:`emulator_check` does the first three on :func:`reduced_layer`, a small copy of a
layer on which the configuration still fits (how a tuned winner is checked quickly).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from kernels.config import DirectConfig
>>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
>>> chk = emulate_and_check(layer, DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1))
>>> chk.ok, chk.traffic_matches, chk.global_loads == chk.expected_loads, chk.flops_matches
(True, True, True, True)
>>> from iobound.networks import get_layer
>>> reduced_layer(get_layer("resnet50.conv3_1"), DirectConfig(x=14, y=2, z=16, alpha=4,
...               tx=7, ty=2, tz=8)).short()
'n1 8x7x55 -> 32x4x28 k3x3 s2x2 p1x1'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from iobound import limits
from iobound.layer import ConvLayer

from .cache import check_cache_root
from .config import KernelConfig, check_operands, check_config, onchip_words
from . import emulator
from .emulator import check_problem_size, emulate
from .families import kernel_family
from .generate import generate
from .grouping import kernel_io
from .kernel_flops import kernel_flops
from .reference import compare, conv2d_reference, random_problem

__all__ = ["EmulationCheck", "expected_io", "emulate_and_check", "ReducedCheck",
           "reduced_layer", "emulator_check"]


@dataclass(frozen=True)
class EmulationCheck:
    """Outcome of one emulated run against the reference, the formula and the bound."""

    ok: bool                 # numerics_ok, traffic_matches, flops_matches, above_lower_bound
    numerics_ok: bool
    max_abs_err: float
    max_rel_err: float
    worst_ratio: float       # max |error| / tolerance
    global_loads: int
    global_stores: int
    expected_loads: int      # the dataflow formula's input + weight loads
    expected_stores: int
    traffic_matches: bool
    flops: int               # floating-point operations executed (FMA = 2)
    expected_flops: int      # the model's, kernels.kernel_flops.kernel_flops
    flops_matches: bool
    onchip_words: int        # a block's shared plus register words
    lower_bound: float | None
    above_lower_bound: bool
    seconds: float
    #: the S the lower bound is taken at: ``onchip_words`` + 2 (None without the bound)
    lower_bound_fast_memory_words: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def expected_io(layer: ConvLayer, config: KernelConfig):
    """The exact ``DataflowIO`` of the tiling ``config`` implements (grouped: ``groups``
    times one group's, :func:`kernels.grouping.kernel_io`).

    >>> from kernels.config import DirectConfig
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> io = expected_io(layer, DirectConfig(x=3, y=3, z=2, alpha=2, tx=3, ty=3, tz=1))
    >>> io.input_loads, io.weight_loads, io.output_stores
    (512, 576, 144)
    """
    check_operands(layer, config)
    return kernel_io(layer, config, config.tiling)


def emulate_and_check(layer: ConvLayer, config: KernelConfig, seed: int = 0,
                      cache_root: str | Path | None = None, with_bound: bool = True,
                      timeout: float | None = None) -> EmulationCheck:
    """Generate, emulate on uniform [-1, 1) data from ``seed``, and check (see module doc);
    ``timeout``: seconds the launch may run (:func:`kernels.emulator.emulate`).

    Raises
    ------
    InvalidConfigError
        (a ValueError) when the config cannot run.
    InvalidInputError
        (a ValueError) ``seed`` is no integer in :data:`iobound.limits.SEED`, the layer's
        tensors are past :data:`iobound.limits.EMULATED_ELEMENTS`, ``cache_root``'s parent
        folder does not exist (:func:`kernels.cache.check_cache_root`), or an argument is of
        the wrong type.
    EmulatorBuildError, EmulatorRunError, ToolchainError
        When the emulator cannot build or run the kernel.
    """
    seed = limits.check_int("seed", seed, limits.SEED)
    with_bound = limits.check_flag("with_bound", with_bound)
    check_operands(layer, config)
    if cache_root is not None:
        check_cache_root(cache_root)
    check_problem_size(layer)  # before the random tensors are allocated
    source = generate(layer, config)
    x, w = random_problem(layer, np.random.default_rng(seed))
    run = emulate(source, x, w, cache_root=cache_root, timeout=timeout)
    ref = conv2d_reference(x, w, layer)
    cmp = compare(run.output, ref, kernel_family(config).tolerance(x, w, layer, config))
    io = expected_io(layer, config)
    expected_loads = io.input_loads + io.weight_loads
    matches = run.global_loads == expected_loads and run.global_stores == io.output_stores
    expected_flops = kernel_flops(layer, config)
    flops_match = run.flops == expected_flops
    s_words = onchip_words(layer, config)
    bound = bound_s = None
    above = True
    if with_bound:
        from iobound.multi_block import bound_fast_memory
        from iobound.report import best_lower_bound
        # blocks share nothing on chip: the single-processor bound at S_b + 2 (proofs/multi_block)
        bound_s = bound_fast_memory(s_words)
        bound = float(best_lower_bound(layer, bound_s, config.algorithm,
                                       getattr(config, "e", None)))
        above = run.global_loads + run.global_stores >= bound
    return EmulationCheck(
        ok=cmp.ok and matches and flops_match and above, numerics_ok=cmp.ok, max_abs_err=cmp.max_abs_err,
        max_rel_err=cmp.max_rel_err, worst_ratio=cmp.worst_ratio, global_loads=run.global_loads,
        global_stores=run.global_stores, expected_loads=expected_loads,
        expected_stores=io.output_stores, traffic_matches=matches, flops=run.flops,
        expected_flops=expected_flops, flops_matches=flops_match, onchip_words=s_words,
        lower_bound=bound, above_lower_bound=above, seconds=run.seconds + run.build_seconds,
        lower_bound_fast_memory_words=bound_s)


@dataclass(frozen=True)
class ReducedCheck:
    """The emulator check of a configuration on :func:`reduced_layer` of its layer.

    ``checked`` is false (with the ``reason``) when the configuration does not fit the
    reduced copy or the emulator cannot build or run it; the other fields are then
    ``None``.

    >>> ReducedCheck(checked=False, layer="n1 4x6x6 -> 4x6x6 k3x3", reason="no g++").to_dict()
    {'checked': False, 'reason': 'no g++', 'layer': 'n1 4x6x6 -> 4x6x6 k3x3'}
    """

    checked: bool
    layer: str                        # the reduced layer, ``ConvLayer.short()``
    reason: str = ""
    matches_numpy: bool | None = None
    max_rel_err: float | None = None
    traffic_words: int | None = None  # counted global loads + stores
    formula_words: int | None = None  # the dataflow formula's loads + stores
    traffic_matches: bool | None = None
    flops: int | None = None          # floating-point operations executed (FMA = 2)
    model_flops: int | None = None    # the model's count, kernels.kernel_flops
    flops_matches: bool | None = None

    def to_dict(self) -> dict:
        """JSON-able: ``checked``, ``reason`` and ``layer`` when not checked, else the outcome."""
        if not self.checked:
            return {"checked": False, "reason": self.reason, "layer": self.layer}
        return {"checked": True, "layer": self.layer, "matches_numpy": self.matches_numpy,
                "max_rel_err": self.max_rel_err, "traffic_words": self.traffic_words,
                "formula_words": self.formula_words, "traffic_matches": self.traffic_matches,
                "flops": self.flops, "model_flops": self.model_flops,
                "flops_matches": self.flops_matches}


def _reduced_extent(n: int, tile: int) -> int:
    """At most 2 tiles of an axis of ``n`` and never more than ``n``: the whole axis when
    it spans 2 tiles or fewer, else one full tile and the axis's last (clipped) one, so
    the edge block of the layer (a tile that overhangs it: Winograd's ``x``, ``y`` need
    not divide the output) is the one checked."""
    return n if n <= 2 * tile else tile + (n - 1) % tile + 1


def _reduced_axis(n_out: int, tile: int, stride: int, extent: int, pad: int) -> tuple[int, int]:
    """(output, input) extents of one axis of the reduced copy: :func:`_reduced_extent`'s
    output, unless a padding wider than the kernel's window makes even a 1-pixel input's
    output longer; then the fewest more whole tiles reach it, so the last tile still
    overhangs as the layer's does.

    >>> _reduced_axis(13, 4, 1, 1, 5)  # a 1-pixel input has 11 outputs: 13, not 5
    (13, 3)
    >>> _reduced_axis(56, 8, 1, 3, 1)
    (16, 16)
    """
    out = _reduced_extent(n_out, tile)
    shortest = max((1 + 2 * pad - extent) // stride + 1, 1)  # a 1-pixel input's output
    if out < shortest:
        out += tile * -(-(shortest - out) // tile)  # never past n_out: n_out = out mod tile
    # inputs from this value up to stride - 1 more have the same output; the lowest is at
    # least 2 - stride once out >= shortest, so at least 1 of them is positive
    return out, max((out - 1) * stride + extent - 2 * pad, 1)


def reduced_layer(layer: ConvLayer, config: KernelConfig) -> ConvLayer:
    """A small copy of ``layer`` on which ``config`` still fits: at most 2 tiles per axis
    (more only where the padding is wider than the kernel's window: :func:`_reduced_axis`),
    2 channel chunks (direct; 4 input channels for Winograd), at most 2 channel groups,
    each with at most 2 output-channel tiles; same kernel, stride, padding and dilation;
    at most 2 images (a batch's images share grid x with the tile columns, so a batched
    layer's copy keeps that indexing checked). No axis is larger than the layer's, and a tile that overhangs the layer's
    edge overhangs the copy's by as much (the clipped edge block is checked too).

    >>> from kernels.config import WinogradConfig
    >>> from iobound.networks import get_layer
    >>> reduced_layer(get_layer("vgg16.conv1_2"), WinogradConfig(e=2, x=8, y=8, z=16,
    ...               tx=4, ty=4, tz=4)).short()  # 4 input channels, 2 tiles of each axis
    'n1 4x16x16 -> 32x16x16 k3x3 s1x1 p1x1'
    """
    check_operands(layer, config)
    y, x, z = config.y, config.x, config.z
    _, h_in = _reduced_axis(layer.h_out, y, layer.stride[0], layer.extent_h, layer.padding[0])
    _, w_in = _reduced_axis(layer.w_out, x, layer.stride[1], layer.extent_w, layer.padding[1])
    groups = min(layer.groups, 2)
    c_out = groups * _reduced_extent(layer.c_out_per_group, z)
    chunk = kernel_family(config).chunk_param  # Winograd stages one channel a step
    c_in_g = layer.c_in_per_group
    # a last chunk shorter than alpha stays short, as the layer's does
    c_in = groups * (_reduced_extent(c_in_g, getattr(config, chunk)) if chunk else min(c_in_g, 4))
    return layer.replace(n=min(layer.n, 2), c_in=c_in, c_out=c_out, h_in=h_in, w_in=w_in,
                         groups=groups, name=f"{layer.name or 'layer'} (reduced)")


def emulator_check(layer: ConvLayer, config: KernelConfig) -> ReducedCheck:
    """Emulate ``config`` on :func:`reduced_layer`: numerics vs numpy, traffic vs formula,
    flops vs model.

    A configuration that does not fit the reduced copy, or that the emulator cannot
    build or run (within :data:`kernels.emulator.LAUNCH_TIMEOUT_S`), gives an unchecked
    result with the reason; nothing is raised.

    >>> from kernels.config import DirectConfig
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> chk = emulator_check(layer, DirectConfig(x=3, y=3, z=2, alpha=2, tx=2, ty=3, tz=1))
    >>> chk.checked, chk.reason, chk.matches_numpy  # refused before any build
    (False, 'tx=2 must divide x=3', None)
    """
    check_operands(layer, config)
    small = reduced_layer(layer, config)
    reasons = check_config(small, config)
    if reasons:
        return ReducedCheck(checked=False, layer=small.short(), reason="; ".join(reasons))
    try:
        chk = emulate_and_check(small, config, with_bound=False,
                                timeout=emulator.LAUNCH_TIMEOUT_S)
    except Exception as exc:  # build/run failures are reported, not raised
        return ReducedCheck(checked=False, layer=small.short(),
                            reason=f"{type(exc).__name__}: {exc}")
    return ReducedCheck(checked=True, layer=small.short(), matches_numpy=chk.numerics_ok,
                        max_rel_err=chk.max_rel_err,
                        traffic_words=chk.global_loads + chk.global_stores,
                        formula_words=chk.expected_loads + chk.expected_stores,
                        traffic_matches=chk.traffic_matches, flops=chk.flops,
                        model_flops=chk.expected_flops, flops_matches=chk.flops_matches)
