"""The kernel config types, one per algorithm family: tiles, threads and their geometry.

A :class:`DirectConfig` is the direct dataflow's tiling ``(x, y, z, alpha)`` plus a thread
block ``tx * ty * tz``; a :class:`WinogradConfig` is ``(e, x, y, z)`` plus threads over the
block's Winograd tiles and output channels. Each knows its own staged input rectangle,
footprint, on-chip words and divisibility rules, so :mod:`kernels.config` (which
re-exports these names) dispatches by type instead of by the algorithm's name.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=2, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)
>>> WinogradConfig(e=2, x=8, y=8, z=4, tx=4, ty=4, tz=2).input_tile_shape(layer)
(10, 10)
>>> DirectConfig(4, 4, 4, 2, 3, 2, 2).divisibility(layer)
['tx=3 must divide x=4']
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Mapping, TypeVar, Union

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer

__all__ = ["DirectConfig", "WinogradConfig", "KernelConfig", "CONFIG_TYPES",
           "transformed_row_words", "config_type_of"]

_C = TypeVar("_C", bound="_ConfigMixin")


class _ConfigMixin:
    """What both config dataclasses share: field checks, thread count and dict round trip.

    A subclass is a frozen dataclass whose fields are all named in ``params`` and that
    has ``tx``, ``ty`` and ``tz`` among them.
    """

    params: tuple[str, ...]
    tx: int
    ty: int
    tz: int

    def __post_init__(self) -> None:
        # any integral number (numpy's too) in limits.TILE, stored as an int; a float, a
        # bool or a number past the limit is refused naming the knob
        for name in self.params:
            object.__setattr__(self, name, limits.check_int(name, getattr(self, name), limits.TILE))

    @property
    def threads(self) -> int:
        """Threads per block, ``tx * ty * tz``."""
        return self.tx * self.ty * self.tz

    def to_dict(self) -> dict:
        """The fields as a plain dict (keys in ``params`` order)."""
        return asdict(self)

    @classmethod
    def from_dict(cls: type[_C], d: dict) -> _C:
        """Build from a dict holding every key of ``params``: integers (numpy's too) or
        strings of one (``"4"``); a float such as 2.5 is refused, never truncated."""
        config_type_of(d, cls.algorithm)  # no unknown key, no other algorithm (one rule)
        missing = [k for k in cls.params if k not in d]
        if missing:
            raise InvalidInputError(f"{cls.algorithm} config is missing {', '.join(missing)}")
        return cls(**{k: limits.parse_int(k, d[k], limits.TILE) if isinstance(d[k], str) else d[k]
                      for k in cls.params})


@dataclass(frozen=True)
class DirectConfig(_ConfigMixin):
    """Direct-convolution kernel: output tile x*y*z, channel chunk alpha, tx*ty*tz threads.

    A thread computes ``(x/tx) * (y/ty) * (z/tz)`` outputs (strided over the tile) held in
    registers. Divisibility is checked by :func:`check_config`, not here, so a search can
    hold and report invalid points.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=2, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)
    >>> c = DirectConfig(x=4, y=4, z=4, alpha=2, tx=4, ty=4, tz=1)
    >>> c.threads, c.input_tile_shape(layer), c.shared_words(layer), c.onchip_words(layer)
    (16, (6, 6), 144, 208)
    >>> c.tiling
    DirectTiling(x=4, y=4, z=4, alpha=2)
    """

    x: int
    y: int
    z: int
    alpha: int
    tx: int
    ty: int
    tz: int

    algorithm = "direct"
    params = ("x", "y", "z", "alpha", "tx", "ty", "tz")
    #: whether :meth:`onchip_words` depends on the thread block (not here: the tile's)
    onchip_uses_threads = False

    @property
    def tiling(self):
        """The dataflow tiling this kernel implements (``dataflow.direct.DirectTiling``)."""
        from dataflow.direct import DirectTiling
        return DirectTiling(self.x, self.y, self.z, self.alpha)

    def input_tile_shape(self, layer: ConvLayer) -> tuple[int, int]:
        """(rows, cols) of the input rectangle staged for one full tile (one channel)."""
        return ((self.y - 1) * layer.stride[0] + layer.extent_h,
                (self.x - 1) * layer.stride[1] + layer.extent_w)

    def footprint(self, layer: ConvLayer):
        """The dataflow's on-chip footprint of one block (``dataflow.direct.direct_footprint``'s
        formula, :func:`~dataflow.direct.direct_block_words`: defined for tiles larger than
        the layer too, which :func:`kernels.config.check_config` names)."""
        from dataflow.direct import direct_block_words
        return direct_block_words(layer, self.x, self.y, self.z, self.alpha)

    def shared_words(self, layer: ConvLayer) -> int:
        """Floats of shared memory the kernel declares: the dataflow's staged inputs and weights."""
        return self.footprint(layer).shared_words

    def onchip_words(self, layer: ConvLayer) -> int:
        """Words a block holds: the dataflow's footprint (the ``x y z`` accumulators)."""
        return self.footprint(layer).total

    def divisibility(self, layer: ConvLayer) -> list[str]:
        """Why the threads do not split the tile (empty: they do)."""
        pairs = (("tx", self.tx, "x", self.x), ("ty", self.ty, "y", self.y), ("tz", self.tz, "z", self.z))
        return [f"{tn}={tv} must divide {n}={v}" for tn, tv, n, v in pairs if v % tv]

    def group_reasons(self, layer: ConvLayer) -> list[str]:
        """Why the tile does not fit the layer's channel groups (empty: it does).

        A block's ``z`` output channels lie in one group (``z`` divides ``c_out / groups``)
        and its channel chunk in that group's inputs (``alpha <= c_in / groups``).
        """
        if layer.groups == 1:
            return []
        g, reasons = layer.groups, []
        if layer.c_out_per_group % self.z:
            reasons.append(f"z={self.z} must divide c_out/groups={layer.c_out_per_group} "
                           f"(a block's output channels lie in one of the {g} groups)")
        if self.alpha > layer.c_in_per_group:
            reasons.append(f"alpha={self.alpha} is larger than c_in/groups={layer.c_in_per_group}")
        return reasons

@dataclass(frozen=True)
class WinogradConfig(_ConfigMixin):
    """Winograd F(e x e, r x r) kernel: output tile x*y*z (x, y multiples of e), threads.

    ``tx`` threads split the ``x/e`` tile columns, ``ty`` the ``y/e`` tile rows and ``tz``
    the ``z`` output channels; input channels are processed one at a time.

    Examples
    --------
    The kernel holds more words than the dataflow's footprint (per-thread arrays), and
    refuses a strided layer:

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=2, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)
    >>> c = WinogradConfig(e=2, x=8, y=8, z=4, tx=4, ty=4, tz=2)
    >>> c.threads, c.shared_words(layer), c.onchip_words(layer), c.footprint(layer).total
    (32, 440, 3512, 2184)
    >>> c.divisibility(ConvLayer(n=1, c_in=2, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, stride=2))
    ['Winograd needs stride 1, got stride=(2, 2)']
    """

    e: int
    x: int
    y: int
    z: int
    tx: int
    ty: int
    tz: int

    algorithm = "winograd"
    params = ("e", "x", "y", "z", "tx", "ty", "tz")
    #: :meth:`onchip_words` counts every thread's own u, v and partial arrays
    onchip_uses_threads = True

    @property
    def tiling(self):
        """The dataflow tiling (``dataflow.winograd.WinogradTiling``)."""
        from dataflow.winograd import WinogradTiling
        return WinogradTiling(self.e, self.x, self.y, self.z)

    def input_tile_shape(self, layer: ConvLayer) -> tuple[int, int]:
        """(rows, cols) of one channel's input rectangle: ``(y + r - 1, x + r - 1)``."""
        r = layer.k_h
        return self.y + r - 1, self.x + r - 1

    def footprint(self, layer: ConvLayer):
        """The dataflow's footprint (``dataflow.winograd.winograd_block_words``)."""
        from dataflow.winograd import winograd_block_words
        return winograd_block_words(layer, self.e, self.x, self.y, self.z)

    def shared_words(self, layer: ConvLayer) -> int:
        """Floats of shared memory the kernel declares: one channel's input rectangle, its
        ``z`` transformed kernels and the block's ``(x/e) (y/e)`` transformed tiles
        (:func:`transformed_row_words` each: ``(e + r - 1)**2`` at an odd stride). The
        dataflow stages the raw ``r x r`` kernels instead (:meth:`footprint`); the kernel
        transforms each once per block and shares it."""
        rows, cols = self.input_tile_shape(layer)
        row = transformed_row_words(self.e, layer.k_h)
        return rows * cols + (self.z + (self.x // self.e) * (self.y // self.e)) * row

    def onchip_words(self, layer: ConvLayer) -> int:
        """Words a block of the kernel holds: shared, ``acc`` and per thread ``u, v, partial``
        (see :func:`kernels.config.onchip_words`). The transforms' temporaries are not added:
        they live while ``u, v, partial`` are dead and are never more words
        (proofs/test_winograd_kernel_words.py)."""
        n = self.e + layer.k_h - 1
        acc = (self.x // self.e) * (self.y // self.e) * self.z * n * n
        per_thread = (-(-self.z // self.tz) + 2) * n * n  # u, v and partial
        return self.shared_words(layer) + acc + self.threads * per_thread

    def divisibility(self, layer: ConvLayer) -> list[str]:
        """Why Winograd, the tiles or the threads do not fit the layer (empty: they do)."""
        problem = layer.winograd_problem()
        if problem is not None:
            return [problem]
        try:  # the sizes are defined up to the limit only (kernels.config.check_config)
            limits.check_winograd_e(self.e)
        except InvalidInputError as exc:
            return [str(exc)]
        reasons = [f"{axis}={getattr(self, axis)} must be a multiple of e={self.e}"
                   for axis in ("x", "y") if getattr(self, axis) % self.e]
        if reasons:
            return reasons
        pairs = (("tx", self.tx, "x/e", self.x // self.e), ("ty", self.ty, "y/e", self.y // self.e),
                 ("tz", self.tz, "z", self.z))
        return [f"{tn}={tv} must divide {n}={v}" for tn, tv, n, v in pairs if v % tv]

    def group_reasons(self, layer: ConvLayer) -> list[str]:
        """The Winograd kernel computes ungrouped layers only (empty list when groups == 1);
        the reason is the layer's own (:meth:`ConvLayer.winograd_problem`)."""
        return [] if layer.groups == 1 else [layer.winograd_problem()]

KernelConfig = Union[DirectConfig, WinogradConfig]


def transformed_row_words(e: int, r: int) -> int:
    """Words of one transformed kernel or tile in the Winograd kernel's shared memory:
    ``(e + r - 1)**2`` padded to an odd stride (``TSTRIDE`` of the template), so a warp's
    threads touching one element of consecutive rows hit distinct banks.

    >>> transformed_row_words(2, 3), transformed_row_words(3, 3)
    (17, 25)
    >>> transformed_row_words(0, 3)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: e=0 is below the minimum 1
    """
    n = limits.check_int("e", e, limits.TILE) + limits.check_int("r", r, limits.KERNEL) - 1
    return (n * n) | 1


#: The kernel config type of each algorithm family, keyed by its name.
CONFIG_TYPES = {cls.algorithm: cls for cls in (DirectConfig, WinogradConfig)}


def config_type_of(d: Mapping, algorithm=None) -> type:
    """The config class of the mapping ``d``: of ``algorithm`` when given, else of its
    ``"algorithm"`` key, else inferred (``e`` means Winograd). InvalidInputError for a
    ``d`` that is no mapping, an ``"algorithm"`` key that names no algorithm or another
    than ``algorithm``, or a key the class does not take (refused first, so a misspelt
    key is named as such rather than as a missing one).

    >>> config_type_of({"algorithm": "winograd", "x": 4}, "direct")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: config key algorithm='winograd' contradicts the algorithm 'direct'
    """
    from iobound.algorithms import get_algorithm

    if not isinstance(d, Mapping):
        raise InvalidInputError(f"a kernel config must be a mapping of knob names to "
                                f"integers, got {type(d).__name__}")
    if algorithm is not None:
        algorithm = get_algorithm(algorithm).name
    if "algorithm" in d:
        try:
            named = get_algorithm(d["algorithm"]).name
        except InvalidInputError:
            raise InvalidInputError(f"config key algorithm must name an algorithm "
                                    f"({', '.join(CONFIG_TYPES)}), got {d['algorithm']!r:.60}"
                                    ) from None
        if algorithm is not None and named != algorithm:
            raise InvalidInputError(f"config key algorithm={d['algorithm']!r:.40} contradicts "
                                    f"the algorithm {algorithm!r}")
        algorithm = named
    if algorithm is None:
        algorithm = "winograd" if "e" in d else "direct"
    cls = CONFIG_TYPES[algorithm]
    unknown = sorted(str(k)[:40] for k in set(d) - set(cls.params) - {"algorithm"})
    if unknown:
        raise InvalidInputError(f"unknown {algorithm} config key(s) {', '.join(unknown)} "
                                f"(allowed: {', '.join(cls.params)})")
    return cls
