"""The convolution layer record shared by every package.

Conventions (DESIGN.md): NCHW, one image batch of ``n``; ``stride``, ``padding``
and ``dilation`` are given per axis as ``(h, w)``. Sizes are element counts.

Examples
--------
>>> conv1 = ConvLayer(n=1, c_in=3, h_in=227, w_in=227, c_out=96, k_h=11, k_w=11, stride=(4, 4))
>>> conv1.h_out, conv1.w_out
(55, 55)
>>> conv1.reuse_paper, conv1.reuse_max
(7.5625, 9)
>>> dw = ConvLayer(n=1, c_in=32, h_in=112, w_in=112, c_out=32, k_h=3, k_w=3, padding=1, groups=32)
>>> dw.c_in_per_group, dw.c_out_per_group, dw.macs
(1, 1, 3612672)
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from . import limits
from .errors import InvalidInputError

__all__ = ["ConvLayer", "check_layer", "takes_layer"]


def _whole(value) -> bool:
    """An integral number (numpy's included), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _pair(name: str, value) -> tuple[int, int]:
    if _whole(value):
        return (int(value), int(value))
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(_whole(v) for v in value):
        return (int(value[0]), int(value[1]))
    raise InvalidInputError(f"{name} must be an int or a pair of ints (h, w), got {value!r}")


#: The longest layer name, in UTF-8 bytes: with its algorithm and "_best.cu" it stays
#: within a file name (255 bytes on Linux filesystems).
LAYER_NAME_BYTES = 200

_FIELD_LIMITS = {"n": limits.BATCH, "c_in": limits.CHANNELS, "h_in": limits.SPATIAL,
                 "w_in": limits.SPATIAL, "c_out": limits.CHANNELS, "k_h": limits.KERNEL,
                 "k_w": limits.KERNEL}
_PAIR_LIMITS = {"stride": limits.STRIDE, "padding": limits.PADDING, "dilation": limits.DILATION}


@dataclass(frozen=True)
class ConvLayer:
    """A 2-D convolution layer (cross-correlation, as in CNN frameworks).

    Parameters
    ----------
    n, c_in, h_in, w_in : int
        Batch size, input channels, input height and width (all >= 1).
    c_out, k_h, k_w : int
        Output channels and kernel height and width (all >= 1).
    stride, padding, dilation : int or (int, int)
        Per-axis stride (>= 1), zero padding (>= 0) and dilation (>= 1).
    groups : int
        Channel groups (>= 1, dividing ``c_in`` and ``c_out``): output channel
        ``k`` reads only the ``c_in / groups`` input channels of its group.
        ``groups == c_in`` is a depthwise convolution.
    name : str
        Optional label, e.g. ``"alexnet.conv1"``; not part of equality.

    Raises
    ------
    InvalidInputError
        Naming the field, for non-positive sizes, sizes past :mod:`iobound.limits`
        or a dilated kernel larger than the padded input.

    Examples
    --------
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> layer.short(), layer.h_out, layer.macs, layer.reuse_max
    ('n1 4x6x6 -> 4x6x6 k3x3 s1x1 p1x1', 6, 5184, 9)
    """

    n: int
    c_in: int
    h_in: int
    w_in: int
    c_out: int
    k_h: int
    k_w: int
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.name is None:  # no name, as the default ""
            object.__setattr__(self, "name", "")
        if not isinstance(self.name, str):  # kernel files and logs are named after it
            raise InvalidInputError(f"name must be a string, got {self.name!r}")
        size = len(self.name.encode("utf-8", "surrogatepass"))
        if not self.name.isprintable() or size > LAYER_NAME_BYTES:  # a file's name
            raise InvalidInputError(f"name must be printable and at most {LAYER_NAME_BYTES} "
                                    f"bytes (kernel files and logs are named after it), "
                                    f"got {self.name[:40]!r}{'...' if len(self.name) > 40 else ''}")
        for fname, limit in _FIELD_LIMITS.items():
            v = getattr(self, fname)
            if not _whole(v):
                raise InvalidInputError(f"{fname} must be an integer, got {v!r}")
            if v < 1:
                raise InvalidInputError(f"{fname} must be >= 1, got {v}")
            object.__setattr__(self, fname, limits.check_int(fname, v, limit))  # numpy -> int
        for fname, limit in _PAIR_LIMITS.items():
            pair = _pair(fname, getattr(self, fname))
            for axis, v in zip("hw", pair):
                if v < limit.low:
                    raise InvalidInputError(f"{fname} ({axis}) must be >= {limit.low}, got {v}")
                limits.check_int(f"{fname} ({axis})", v, limit)
            object.__setattr__(self, fname, pair)
        self._check_groups()
        if self.extent_h > self.h_in + 2 * self.padding[0]:
            raise InvalidInputError(
                f"k_h={self.k_h} (dilated extent {self.extent_h}) is larger than the "
                f"padded input height {self.h_in + 2 * self.padding[0]}"
            )
        if self.extent_w > self.w_in + 2 * self.padding[1]:
            raise InvalidInputError(
                f"k_w={self.k_w} (dilated extent {self.extent_w}) is larger than the "
                f"padded input width {self.w_in + 2 * self.padding[1]}"
            )
        limits.check_int("MACs (n*c_out*h_out*w_out*c_in*k_h*k_w)", self.macs, limits.MACS)

    def _check_groups(self) -> None:
        g = self.groups
        if not _whole(g):
            raise InvalidInputError(f"groups must be an integer, got {g!r}")
        if g < 1:
            raise InvalidInputError(f"groups must be >= 1, got {g}")
        object.__setattr__(self, "groups", g := int(g))
        if self.c_in % g or self.c_out % g:
            raise InvalidInputError(
                f"groups={g} must divide c_in={self.c_in} and c_out={self.c_out}")

    # -- derived sizes -------------------------------------------------------
    @property
    def c_in_per_group(self) -> int:
        """Input channels each output channel reads (``c_in / groups``)."""
        return self.c_in // self.groups

    @property
    def c_out_per_group(self) -> int:
        """Output channels of one group (``c_out / groups``)."""
        return self.c_out // self.groups

    @property
    def depthwise(self) -> bool:
        """One input channel per group (``groups == c_in``)."""
        return self.groups > 1 and self.groups == self.c_in

    @property
    def extent_h(self) -> int:
        """Height of the dilated kernel window."""
        return (self.k_h - 1) * self.dilation[0] + 1

    @property
    def extent_w(self) -> int:
        """Width of the dilated kernel window."""
        return (self.k_w - 1) * self.dilation[1] + 1

    @property
    def h_out(self) -> int:
        return (self.h_in + 2 * self.padding[0] - self.extent_h) // self.stride[0] + 1

    @property
    def w_out(self) -> int:
        return (self.w_in + 2 * self.padding[1] - self.extent_w) // self.stride[1] + 1

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the computation, padding taps included.

        This is the paper's ``W_ker H_ker C_in W_out H_out C_out`` (times n), with
        ``C_in`` the input channels of one group.
        """
        return (self.n * self.c_out * self.h_out * self.w_out * self.c_in_per_group
                * self.k_h * self.k_w)

    @property
    def input_size(self) -> int:
        return self.n * self.c_in * self.h_in * self.w_in

    @property
    def weight_size(self) -> int:
        return self.c_out * self.c_in_per_group * self.k_h * self.k_w

    @property
    def output_size(self) -> int:
        return self.n * self.c_out * self.h_out * self.w_out

    # -- reuse factors (DESIGN.md, Units and conventions) --------------------
    @property
    def reuse_paper(self) -> float:
        """The paper's R = k_h k_w / (mu_h mu_w): the *average* window reuse.

        Not a valid bound parameter when stride > kernel or stride does not
        divide the kernel; see :attr:`reuse_max` and proofs/README.md.

        >>> strided = ConvLayer(1, 1, 9, 9, 1, 3, 3, stride=2)   # stride 2 does not divide 3
        >>> strided.reuse_paper, strided.reuse_max
        (2.25, 4)
        """
        return self.k_h * self.k_w / (self.stride[0] * self.stride[1])

    @property
    def reuse_max(self) -> int:
        """Maximum number of sliding windows that share one input element.

        Per axis, taps ``i`` with ``i*d = t (mod mu)`` hit the same input; their
        count is at most ``ceil(k / (mu / gcd(d, mu)))``.

        >>> ConvLayer(1, 1, 9, 9, 1, 3, 3, stride=2, dilation=2).reuse_max  # all taps on one phase
        9
        """
        def axis(k: int, mu: int, d: int) -> int:
            period = mu // math.gcd(d, mu)
            return -(-k // period)

        return axis(self.k_h, self.stride[0], self.dilation[0]) * axis(
            self.k_w, self.stride[1], self.dilation[1]
        )

    # -- Winograd applicability ---------------------------------------------
    def winograd_tiles(self, e: int) -> tuple[int, int]:
        """Output tiles ``(rows, columns)`` of F(e x e, r x r) per image and channel, the
        last of each clipped when e does not divide the output.

        >>> ConvLayer(1, 1, 9, 9, 1, 3, 3).winograd_tiles(2)   # 7 x 7 outputs
        (4, 4)
        """
        e = limits.check_winograd_e(e)
        return -(-self.h_out // e), -(-self.w_out // e)

    def winograd_problem(self) -> str | None:
        """Why Winograd F(e x e, r x r) does not apply, or None when it does.

        >>> ConvLayer(1, 1, 8, 8, 1, 3, 3, stride=2).winograd_problem()
        'Winograd needs stride 1, got stride=(2, 2)'
        >>> ConvLayer(1, 1, 8, 8, 1, 3, 3, padding=1).winograd_problem() is None
        True
        """
        if self.stride != (1, 1):
            return f"Winograd needs stride 1, got stride={self.stride}"
        if self.k_h != self.k_w:
            return f"Winograd needs a square kernel, got k_h={self.k_h}, k_w={self.k_w}"
        if self.dilation != (1, 1):
            return f"Winograd needs dilation 1, got dilation={self.dilation}"
        if self.groups != 1:
            # the Winograd DAG, bounds, dataflows and kernels are built for dense layers only
            return (f"Winograd is implemented for dense layers only (groups=1), got "
                    f"groups={self.groups}; use the direct algorithm")
        return None

    @property
    def winograd_applicable(self) -> bool:
        return self.winograd_problem() is None

    def check_winograd(self) -> None:
        """Raise ValueError naming the field when Winograd does not apply.

        >>> ConvLayer(1, 1, 8, 8, 1, 3, 1).check_winograd()
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: Winograd needs a square kernel, got k_h=3, k_w=1
        """
        problem = self.winograd_problem()
        if problem is not None:
            raise InvalidInputError(problem)

    # -- serialisation -------------------------------------------------------
    def to_dict(self) -> dict:
        """All fields plus the derived output sizes, JSON-ready.

        >>> layer = ConvLayer(1, 4, 6, 6, 4, 3, 3, stride=2, name="toy")
        >>> d = layer.to_dict()
        >>> d["name"], d["stride"], d["h_out"], ConvLayer.from_dict(d) == layer
        ('toy', [2, 2], 2, True)
        """
        return {
            "name": self.name,
            "n": self.n, "c_in": self.c_in, "h_in": self.h_in, "w_in": self.w_in,
            "c_out": self.c_out, "k_h": self.k_h, "k_w": self.k_w,
            "stride": list(self.stride), "padding": list(self.padding),
            "dilation": list(self.dilation), "groups": self.groups,
            "h_out": self.h_out, "w_out": self.w_out,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "ConvLayer":
        """The layer of :meth:`to_dict` (derived keys such as ``h_out`` are ignored); a
        stride, padding or dilation may be an int or a pair, as in the constructor.

        >>> ConvLayer.from_dict({"n": 1, "c_in": 3, "h_in": 8, "w_in": 8, "c_out": 4, "k_h": 3})
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: layer dict is missing k_w
        """
        if not isinstance(d, Mapping):
            raise InvalidInputError(f"a layer dict must be a mapping, got {type(d).__name__}")
        missing = [k for k in _FIELD_LIMITS if k not in d]
        if missing:
            raise InvalidInputError(f"layer dict is missing {', '.join(missing)}")
        return cls(
            **{k: d[k] for k in _FIELD_LIMITS},
            stride=d.get("stride", (1, 1)),
            padding=d.get("padding", (0, 0)),
            dilation=d.get("dilation", (1, 1)),
            groups=d.get("groups", 1),
            name=d.get("name", ""),
        )

    def replace(self, **changes) -> "ConvLayer":
        """A copy with some fields changed (validated again); an unknown field is an
        InvalidInputError naming it.

        >>> layer = ConvLayer(1, 4, 6, 6, 4, 3, 3)
        >>> layer.replace(c_out=8, stride=2).short()
        'n1 4x6x6 -> 8x2x2 k3x3 s2x2 p0x0'
        >>> layer.replace(cout=8)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: ConvLayer has no field cout; fields: n, c_in, ...
        """
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        unknown = sorted(set(changes) - set(d))
        if unknown:
            raise InvalidInputError(f"ConvLayer has no field {', '.join(unknown)}; fields: "
                                    f"{', '.join(d)}")
        d.update(changes)
        return ConvLayer(**d)

    def short(self) -> str:
        """A one-line description, e.g. for tables.

        >>> ConvLayer(1, 4, 6, 6, 4, 3, 3, dilation=2, groups=4).short()  # d, g when not 1
        'n1 4x6x6 -> 4x2x2 k3x3 s1x1 p0x0 d2x2 g4'
        """
        s = (f"n{self.n} {self.c_in}x{self.h_in}x{self.w_in} -> {self.c_out}x{self.h_out}x{self.w_out}"
             f" k{self.k_h}x{self.k_w} s{self.stride[0]}x{self.stride[1]} p{self.padding[0]}x{self.padding[1]}")
        if self.dilation != (1, 1):
            s += f" d{self.dilation[0]}x{self.dilation[1]}"
        if self.groups != 1:
            s += f" g{self.groups}"
        return s


def check_layer(layer) -> ConvLayer:
    """``layer`` when it is a :class:`ConvLayer`; else InvalidInputError naming its type
    (a dict or a name given where a layer is taken fails here, not deep inside).

    >>> check_layer({"c_in": 3})
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: layer must be a ConvLayer, got dict
    """
    if not isinstance(layer, ConvLayer):
        raise InvalidInputError(f"layer must be a ConvLayer, got {type(layer).__name__}")
    return layer


def takes_layer(func):
    """Decorate a public function whose first argument is ``layer``: anything but a
    :class:`ConvLayer` there is an InvalidInputError naming it, before any work (not an
    AttributeError from the first field the function reads).

    >>> @takes_layer
    ... def outputs(layer):
    ...     return layer.output_size
    >>> outputs(None)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: layer must be a ConvLayer, got NoneType
    """
    @functools.wraps(func)
    def wrapper(layer, *args, **kwargs):
        check_layer(layer)
        return func(layer, *args, **kwargs)
    return wrapper
