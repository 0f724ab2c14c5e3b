"""Kernel configurations (tiles and threads) and the checks that run before code generation.

A :class:`DirectConfig` is the direct dataflow's tiling ``(x, y, z, alpha)`` plus a thread
block ``tx * ty * tz``; a :class:`WinogradConfig` is ``(e, x, y, z)`` plus threads over
the block's Winograd tiles and output channels (both in :mod:`kernels.config_types`,
re-exported here, each with its own geometry). The on-chip sizes start from the dataflow's
(:func:`dataflow.direct.direct_footprint`, :func:`dataflow.winograd.winograd_block_words`):

* direct: shared = ``alpha * in_rows * in_cols + z * alpha * k_h * k_w`` floats with
  ``in_rows = (y - 1) * mu_h + extent_h``; registers = ``x * y * z`` accumulators;
* Winograd: the dataflow's shared = ``(y + r - 1) * (x + r - 1) + z * r * r`` floats (one
  channel); registers = ``2 * (x / e) * (y / e) * z * (e + r - 1)**2`` (the paper's two
  temporary arrays per tile and output channel). The kernel declares more shared memory
  (:func:`shared_memory_words`: the transformed kernels and tiles, ``(z + (x/e)(y/e)) *
  ((e + r - 1)**2 | 1)`` floats (rows padded to an odd stride against bank conflicts), in
  place of the raw kernels, so each transform runs once per block) and holds a different
  amount in all (:func:`onchip_words`, the S its traffic is checked against).

:func:`check_config` lists every reason a config cannot run on a device (empty when it
can); the generators refuse configs with reasons.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
>>> cfg = DirectConfig(x=4, y=4, z=4, alpha=2, tx=4, ty=2, tz=2)
>>> cfg.threads, shared_memory_words(layer, cfg), grid_shape(layer, cfg)
(16, 144, (2, 2, 2))
>>> check_config(layer, cfg, "a100")
[]
>>> check_config(layer, DirectConfig(4, 4, 4, 2, 3, 2, 2), "a100")
['tx=3 must divide x=4']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer
from iobound.units import WORD_BYTES

from .config_types import CONFIG_TYPES, DirectConfig, KernelConfig, WinogradConfig, config_type_of
from .limits import (GRID_X_LIMIT, GRID_YZ_LIMIT, MAX_ACCUMULATORS_PER_THREAD, MAX_BLOCK_DIM,
                     block_fits, fits_register_file, grid_fits, thread_registers)
from .thread_block import THREAD_KEYS, default_thread_block

if TYPE_CHECKING:  # pragma: no cover
    from iobound.device_spec import Device

__all__ = [
    "DirectConfig", "WinogradConfig", "KernelConfig", "config_from_dict", "parse_config",
    "parse_config_items", "input_tile_shape", "shared_memory_words", "shared_memory_bytes",
    "register_words", "onchip_words", "accumulators_per_thread", "grid_shape", "grid_of",
    "check_config", "check_operands",
]

FP32_BYTES = WORD_BYTES  # the generated kernels compute in fp32
def config_from_dict(d: dict, algorithm: str | None = None) -> KernelConfig:
    """Build a config from a dict; the algorithm is given or inferred (``e`` means Winograd).

    >>> config_from_dict({"e": 2, "x": 4, "y": 4, "z": 2, "tx": 2, "ty": 2, "tz": 1}).algorithm
    'winograd'
    """
    cls = _config_type(d, algorithm)
    missing = [k for k in cls.params if k not in d]
    if missing:
        raise InvalidInputError(f"{cls.algorithm} config is missing {', '.join(missing)} "
                         f"(needs {', '.join(cls.params)})")
    return cls.from_dict(d)


def _config_type(d: Mapping, algorithm: str | None) -> type:
    """The config class of ``d`` (given or inferred algorithm); keys it does not take are
    refused first, so a misspelt key is named as such rather than as a missing one."""
    return config_type_of(d, algorithm)


def parse_config(text: str, algorithm: str | None = None, *,
                 default_threads: bool = False) -> KernelConfig:
    """Parse ``"x=4,y=4,z=8,alpha=2,tx=4,ty=4,tz=2"`` into a config.

    Without ``algorithm``, a config with ``e`` is Winograd, else direct. With ``default_threads``,
    one naming none of tx, ty, tz gets :func:`~kernels.thread_block.default_thread_block`'s.

    >>> parse_config("x=4,y=2,z=2,alpha=1,tx=2,ty=2,tz=1")
    DirectConfig(x=4, y=2, z=2, alpha=1, tx=2, ty=2, tz=1)
    >>> parse_config("x=8,y=8,z=8,alpha=2", default_threads=True)
    DirectConfig(x=8, y=8, z=8, alpha=2, tx=8, ty=8, tz=4)
    """
    from iobound.limits import check_flag
    check_flag("default_threads", default_threads)
    d = parse_config_items(text)
    _config_type(d, algorithm)  # an unknown key is named before any default is added
    if default_threads and not any(k in d for k in THREAD_KEYS):
        d.update(default_thread_block(d, algorithm))
    return config_from_dict(d, algorithm)


def parse_config_items(text: str) -> dict[str, int]:
    """``"k=v,..."`` as a dict of integers, in the order given; a key given twice is
    refused (which value was meant?), as the layer spec does.

    >>> parse_config_items("x=4, e=2")
    {'x': 4, 'e': 2}
    >>> parse_config_items("x=4,x=2")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: config: x given twice
    """
    from iobound import limits

    if not isinstance(text, str):
        raise InvalidInputError(f"a config must be a string such as 'x=4,y=4,...', "
                                f"got {type(text).__name__}")
    if not text.replace(",", "").strip():  # was "a default thread block needs positive tiles"
        raise InvalidInputError("the config is empty; give key=value items such as "
                                "'x=4,y=4,z=8,alpha=2'")
    d: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidInputError(f"config item {item[:40]!r} is not key=value")
        field = f"config value of {key.strip()[:40]!r}"
        if not value.strip().lstrip("+-").isascii() or not value.strip().lstrip("+-").isdigit():
            raise InvalidInputError(f"{field} must be an integer, got {value[:40]!r}")
        if key.strip() in d:
            raise InvalidInputError(f"config: {key.strip()[:40]} given twice")
        # the sign passes through, so config_from_dict names a non-positive knob itself
        d[key.strip()] = limits.parse_int(field, value, limits.Limit(
            -limits.TILE.high, limits.TILE.high, limits.TILE.reason))
    return d


# -- sizes -------------------------------------------------------------------------

# Each public size checks its operands (check_operands): a None or a dict is an
# InvalidInputError naming it, not an AttributeError. Sizes are defined for any config,
# also one whose tiles exceed the layer (check_config names that), so a search can rank it.

def input_tile_shape(layer: ConvLayer, config: KernelConfig) -> tuple[int, int]:
    """(rows, cols) of the input rectangle staged for one full output tile (one channel).

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> cfg = DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)
    >>> input_tile_shape(layer, cfg)  # (3 - 1) + 3 rows and columns
    (5, 5)
    """
    check_operands(layer, config)
    return config.input_tile_shape(layer)


def _footprint(layer: ConvLayer, config: KernelConfig):
    """The dataflow's on-chip footprint of one block (the one definition of the sizes)."""
    return config.footprint(layer)


def shared_memory_words(layer: ConvLayer, config: KernelConfig) -> int:
    """Floats of static shared memory the generated kernel declares.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> cfg = DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)
    >>> shared_memory_words(layer, cfg)
    43
    """
    check_operands(layer, config)
    return config.shared_words(layer)


def shared_memory_bytes(layer: ConvLayer, config: KernelConfig) -> int:
    """Bytes of static shared memory the generated kernel declares (fp32).

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> cfg = DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)
    >>> shared_memory_bytes(layer, cfg)  # 4 bytes per word
    172
    """
    return FP32_BYTES * shared_memory_words(layer, config)


def register_words(layer: ConvLayer, config: KernelConfig) -> int:
    """Register words of a whole block: accumulators (direct) or the two temporaries (Winograd).

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> cfg = DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)
    >>> register_words(layer, cfg)  # 3 * 3 * 2 accumulators
    18
    """
    check_operands(layer, config)
    return _footprint(layer, config).register_words


def onchip_words(layer: ConvLayer, config: KernelConfig) -> int:
    """On-chip words a block of the generated kernel really holds: shared memory plus the
    register arrays it declares.

    This is the S at which the kernel's counted traffic must respect the lower bound.
    Direct: the ``x * y * z`` accumulators (the dataflow's footprint; a thread's ``wv`` and
    ``iv`` are copies of values in shared memory, which the pebble game counts once, not
    more values). Winograd: the
    accumulators ``acc`` of every (output channel, tile), ``(x/e) * (y/e) * z * n**2``
    with ``n = e + r - 1``, plus per thread the transformed kernels ``u`` of its
    ``ceil(z / tz)`` channels, the transformed input tile ``v`` and the product
    ``partial`` (``n**2`` each). That is not the dataflow's model (two full temporary
    arrays, :func:`register_words`): the kernel keeps the second temporary per thread,
    one tile at a time, so it can hold fewer or more words than the model says.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=2, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)
    >>> cfg = WinogradConfig(e=2, x=8, y=8, z=4, tx=4, ty=4, tz=2)
    >>> shared_memory_words(layer, cfg), onchip_words(layer, cfg)  # 440 + 4*4*4*16 + 32*(2+2)*16
    (440, 3512)
    """
    check_operands(layer, config)
    return config.onchip_words(layer)


def accumulators_per_thread(layer: ConvLayer, config: KernelConfig) -> int:
    """Register words one thread holds (block register words / threads, rounded up).

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> cfg = DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)
    >>> accumulators_per_thread(layer, cfg)  # 18 words over 9 threads
    2
    """
    return -(-register_words(layer, config) // config.threads)


def grid_shape(layer: ConvLayer, config: KernelConfig) -> tuple[int, int, int]:
    """CUDA grid (x, y, z): images * tile columns, tile rows, output-channel blocks.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> cfg = DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)
    >>> grid_shape(layer, cfg)
    (2, 2, 2)
    """
    check_operands(layer, config)
    return grid_of(layer, config.x, config.y, config.z)


def grid_of(layer: ConvLayer, x: int, y: int, z: int) -> tuple[int, int, int]:
    """:func:`grid_shape` of output tiles ``x * y * z`` (unchecked: for callers holding a
    checked tiling rather than a config, such as :mod:`kernels.kernel_flops`).

    >>> grid_of(ConvLayer(n=2, c_in=1, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3), 4, 4, 3)
    (4, 2, 3)
    """
    return layer.n * -(-layer.w_out // x), -(-layer.h_out // y), -(-layer.c_out // z)


# -- validity ----------------------------------------------------------------------

def _device(device):
    """None, a :class:`~iobound.device_spec.Device`, or the preset a name names."""
    from iobound.device_spec import Device
    from iobound.devices import get_device
    if device is None or isinstance(device, Device):
        return device
    if not isinstance(device, str):
        raise InvalidInputError(f"device must be a Device or a preset name, "
                                f"got {type(device).__name__} {device!r:.60}")
    return get_device(device)


def check_operands(layer, config) -> None:
    """InvalidInputError unless ``layer`` is a ConvLayer and ``config`` a kernel config.

    >>> from iobound.layer import ConvLayer
    >>> check_operands(ConvLayer(1, 4, 6, 6, 4, 3, 3), {"x": 3})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: config must be a DirectConfig or WinogradConfig, got dict ...
    """
    check_layer(layer)
    if not isinstance(config, tuple(CONFIG_TYPES.values())):
        hint = ("; kernels.config.config_from_dict makes one of a dict"
                if isinstance(config, Mapping) else "")
        raise InvalidInputError(f"config must be a DirectConfig or WinogradConfig, got "
                                f"{type(config).__name__} {config!r:.60}{hint}")


def check_config(layer: ConvLayer, config: KernelConfig, device: "Device | str | None" = None) -> list[str]:
    """Every reason ``config`` cannot run for ``layer`` on ``device`` (empty list: it can).

    Checks channel groups (:meth:`DirectConfig.group_reasons`), tile/thread divisibility,
    Winograd applicability, tiles no larger than the
    layer (the dataflow's ``check_*_tiling``), registers per thread
    (at most :data:`kernels.limits.MAX_ACCUMULATORS_PER_THREAD` accumulator words), grid
    and block-dimension limits and, with
    a device (a :class:`~iobound.device_spec.Device` or a preset name), static shared memory,
    threads per block and an estimate of the block's register file use (the rules of
    :mod:`kernels.limits`).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> check_config(layer, DirectConfig(8, 8, 8, 4, 1, 1, 1))   # one thread, 512 outputs
    ['512 register words per thread exceed the cap of 128']
    >>> check_config(layer, DirectConfig(16, 8, 8, 4, 16, 8, 8))
    ['tile x=16 is larger than w_out=8']
    """
    check_operands(layer, config)
    dev = _device(device)
    reasons = config.group_reasons(layer) or config.divisibility(layer)
    if reasons:
        return reasons
    try:  # the dataflow's own rule for tiles larger than the layer (one source of truth)
        from dataflow.families import dataflow_family
        dataflow_family(config.algorithm).check_tiling(layer, config.tiling)
    except ValueError as exc:
        reasons.append(str(exc))
    acc = accumulators_per_thread(layer, config)
    if acc > MAX_ACCUMULATORS_PER_THREAD:
        reasons.append(f"{acc} register words per thread exceed the cap of "
                       f"{MAX_ACCUMULATORS_PER_THREAD}")
    gx, gy, gz = grid_shape(layer, config)
    if not grid_fits((gx, gy, gz)):
        reasons.append(f"grid {gx}x{gy}x{gz} exceeds CUDA's limits ({GRID_X_LIMIT} blocks "
                       f"along x, {GRID_YZ_LIMIT} along y and z)")
    if not block_fits((config.tx, config.ty, config.tz)):
        reasons.append(f"block {config.tx}x{config.ty}x{config.tz} exceeds CUDA's "
                       f"{'x'.join(map(str, MAX_BLOCK_DIM))} limit of block x/y/z")
    if dev is not None:
        smem = shared_memory_bytes(layer, config)
        if smem > dev.shared_mem_per_block_bytes:
            reasons.append(f"shared memory {smem} B exceeds {dev.shared_mem_per_block_bytes} B "
                           f"per block on {dev.name}")
        if config.threads > dev.max_threads_per_block:
            reasons.append(f"{config.threads} threads exceed {dev.max_threads_per_block} "
                           f"per block on {dev.name}")
        # the domain's rule (search/conv_space.py): a thread's need capped at ptxas' 255
        # only, not at the device's maximum (that would count a larger need as fitting)
        regs = int(thread_registers(acc, config.algorithm))
        if not fits_register_file(acc, config.threads, config.algorithm, dev.registers_per_sm):
            reasons.append(f"about {regs} registers x {config.threads} threads exceed the "
                           f"{dev.registers_per_sm} registers of an SM on {dev.name} (estimate)")
    return reasons
