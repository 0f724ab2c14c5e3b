"""What every generated kernel shares: the source record, the prelude and the C helpers.

The prelude makes one ``.cu`` file serve two builds. Under nvcc, ``LDG`` is ``__ldg``,
``STG`` a plain store and ``SHARED_DECL`` a ``__shared__`` struct. With
``-DIOBOUND_EMULATOR`` (g++, see :mod:`kernels.emulator`) the header ``cuda_emu.h``
maps them to counting, bounds-checked accesses and a per-block shared buffer.

Examples
--------
>>> c_sum([1, 0, -1, 0.5], ["a", "b", "c", "d"])
'a - c + 0.5f * d'
>>> c_float(-1/6)
'-0.166666667f'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer

__all__ = ["KernelSource", "PRELUDE", "BLOCK_PROLOGUE", "c_float", "c_sum", "layer_constants", "InvalidConfigError"]


class InvalidConfigError(InvalidInputError):
    """A config that cannot run; ``reasons`` lists why (from ``check_config``).

    >>> from kernels.config import DirectConfig
    >>> from kernels.generate import generate
    >>> config = DirectConfig(x=3, y=3, z=2, alpha=2, tx=2, ty=3, tz=1)
    >>> generate(ConvLayer(1, 4, 6, 6, 4, 3, 3), config)  # 2 threads cannot span 3 columns
    Traceback (most recent call last):
    ...
    kernels.source.InvalidConfigError: invalid kernel config: tx=2 must divide x=3
    """

    def __init__(self, reasons: Sequence[str]):
        if isinstance(reasons, str) or not isinstance(reasons, Sequence) or not all(
                isinstance(r, str) for r in reasons):
            raise InvalidInputError(f"InvalidConfigError needs a list of reasons (str), got "
                                    f"{reasons!r:.60}")
        self.reasons = list(reasons)
        super().__init__("invalid kernel config: " + "; ".join(self.reasons))


@dataclass(frozen=True)
class KernelSource:
    """A generated kernel: CUDA C source plus its launch geometry.

    ``grid`` and ``block`` are CUDA (x, y, z) triples; the kernel takes
    ``(const float* input, const float* weight, float* output)`` in NCHW / KCRS / NKPQ.

    >>> from kernels.config import DirectConfig
    >>> from kernels.generate import generate
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> src = generate(layer, DirectConfig(x=3, y=3, z=2, alpha=2, tx=3, ty=3, tz=1))
    >>> src.name, src.grid, src.block, src.threads, src.blocks
    ('iobound_direct', (2, 2, 2), (3, 3, 1), 9, 8)
    """

    name: str
    code: str
    layer: ConvLayer
    config: object
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    meta: dict = field(default_factory=dict, compare=False)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


PRELUDE = r"""
#ifdef IOBOUND_EMULATOR
#include "cuda_emu.h"
#else
// One global load / store each; the emulator counts these same macros.
#define LDG(p) __ldg(p)
#define STG(p, v) (*(p) = (v))
#define SHARED_DECL(T, name) __shared__ T name##_storage; T* name = &name##_storage
#endif
""".strip("\n")


#: The first lines of every kernel body: shared memory, thread and block coordinates, and
#: the clipped tile extents (borders). Needs N_IMG, TX, TY, X, Y, Z, X_BLOCKS, H_OUT,
#: W_OUT. Images share grid x with the tile columns (x allows 2**31 - 1 blocks; y and z
#: only 65,535); with one image the division and remainder fold away at compile time.
BLOCK_PROLOGUE = """\
  SHARED_DECL(SharedMem, sm);
  const int tix = threadIdx.x, tiy = threadIdx.y, tiz = threadIdx.z;
  const int tid = tix + TX * (tiy + TY * tiz);
  const int img = N_IMG == 1 ? 0 : blockIdx.x / X_BLOCKS;  // folded for one image
  const int ox0 = (N_IMG == 1 ? blockIdx.x : blockIdx.x % X_BLOCKS) * X;
  const int oy0 = blockIdx.y * Y, oz0 = blockIdx.z * Z;
  const int x_eff = W_OUT - ox0 < X ? W_OUT - ox0 : X;
  const int y_eff = H_OUT - oy0 < Y ? H_OUT - oy0 : Y;"""


def _finite(what: str, value) -> float:
    """``value`` (a number, SymPy's and Fraction's too, not a bool) as a finite float; else
    InvalidInputError naming ``what`` (NaN or inf has no C literal, a bool is no
    coefficient)."""
    from iobound.limits import check_number

    try:
        v = None if isinstance(value, (bool, str, bytes)) else float(value)
    except (TypeError, ValueError, OverflowError):
        v = None
    if v is None:
        raise InvalidInputError(f"{what} must be a finite number, got {value!r:.60}")
    return check_number(what, v)


def c_float(value) -> str:
    """A C float literal for an exact (SymPy/Fraction) or float coefficient (finite).

    >>> c_float(float("nan"))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: value must be a finite number, got nan
    """
    v = _finite("value", value)
    if v == int(v) and abs(v) < 2**24:
        return f"{int(v)}.0f"
    return f"{v:.9g}f"  # 9 significant digits round-trip any float32


def c_sum(coeffs: Sequence, terms: Sequence[str]) -> str:
    """C expression of sum(coeff * term), skipping zeros and writing +-1 as signs: one
    finite coefficient per term (InvalidInputError otherwise, never a shorter sum).

    >>> c_sum([1, 2, 3], ["a"])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: c_sum needs one coefficient per term, got 3 coefficients and 1 terms
    """
    coeffs, terms = list(coeffs), list(terms)
    if len(coeffs) != len(terms):
        raise InvalidInputError(f"c_sum needs one coefficient per term, got {len(coeffs)} "
                                f"coefficients and {len(terms)} terms")
    parts: list[str] = []
    for coef, term in zip(coeffs, terms):
        if not isinstance(term, str):
            raise InvalidInputError(f"c_sum terms must be C expressions (str), got {term!r:.60}")
        _finite("coefficient", coef)
        q = Fraction(str(coef)) if not isinstance(coef, float) else Fraction(coef)
        if q == 0:
            continue
        sign = "-" if q < 0 else "+"
        mag = abs(q)
        body = term if mag == 1 else f"{c_float(mag)} * {term}"
        parts.append(f"{sign} {body}")
    if not parts:
        return "0.0f"
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


#: The largest element count an ``int`` index reaches.
INT_INDEX_MAX = 2**31 - 1


def index_type(layer: ConvLayer) -> str:
    """The C type of a global-memory index: ``int`` while every tensor holds at most
    :data:`INT_INDEX_MAX` elements (fewer registers than 64-bit arithmetic), else
    ``long long`` (an ``int`` index would overflow: batch 1024 of a 64-channel 224x224
    layer holds 3.29e9 inputs).

    >>> from iobound.layer import ConvLayer
    >>> index_type(ConvLayer(1, 64, 224, 224, 64, 3, 3)), index_type(ConvLayer(1024, 64, 224, 224, 64, 3, 3))
    ('int', 'long long')
    """
    weights = layer.c_out * layer.c_in_per_group * layer.k_h * layer.k_w
    largest = max(layer.n * layer.c_in * layer.h_in * layer.w_in,
                  layer.n * layer.c_out * layer.h_out * layer.w_out, weights)
    return "int" if largest <= INT_INDEX_MAX else "long long"


def layer_constants(layer: ConvLayer) -> str:
    """``constexpr int`` lines for the layer's sizes (compile-time constants), and the
    type ``idx_t`` of the kernel's global-memory indices (:func:`index_type`).

    >>> lines = layer_constants(ConvLayer(1, 4, 6, 6, 4, 3, 3, padding=1)).splitlines()
    >>> len(lines), lines[0], lines[-1]
    (16, 'constexpr int N_IMG = 1;', 'typedef int idx_t;')
    """
    from iobound.layer import check_layer

    check_layer(layer)
    vals = {
        "N_IMG": layer.n, "C_IN": layer.c_in, "H_IN": layer.h_in, "W_IN": layer.w_in,
        "C_OUT": layer.c_out, "H_OUT": layer.h_out, "W_OUT": layer.w_out,
        "KH": layer.k_h, "KW": layer.k_w, "MU_H": layer.stride[0], "MU_W": layer.stride[1],
        "P_H": layer.padding[0], "P_W": layer.padding[1],
        "D_H": layer.dilation[0], "D_W": layer.dilation[1],
    }
    return "\n".join([*(f"constexpr int {k} = {v};" for k, v in vals.items()),
                      f"typedef {index_type(layer)} idx_t;"])


def emulator_entry(kernel: str, grid, block, weight_channels: str = "C_IN") -> str:
    """The ``iobound_emulate`` C entry point (compiled only with -DIOBOUND_EMULATOR).

    ``weight_channels`` is the C expression of the weights' input channels (``C_IN_G``
    for a grouped layer, whose weight tensor holds one group's input channels).

    >>> [line.strip() for line in emulator_entry("k", (2, 2, 2), (3, 3, 1)).splitlines()
    ...  if "dim3" in line]
    ['return emu::launch(dim3(2, 2, 2), dim3(3, 3, 1), sizeof(SharedMem), buffers,']
    """
    gx, gy, gz = grid
    bx, by, bz = block
    return f"""
#ifdef IOBOUND_EMULATOR
extern "C" int iobound_emulate(const float* input, const float* weight, float* output,
                               unsigned long long* counts) {{
  std::vector<emu::Buffer> buffers = {{
      {{input, (size_t)N_IMG * C_IN * H_IN * W_IN, false}},
      {{weight, (size_t)C_OUT * {weight_channels} * KH * KW, false}},
      {{output, (size_t)N_IMG * C_OUT * H_OUT * W_OUT, true}}}};
  return emu::launch(dim3({gx}, {gy}, {gz}), dim3({bx}, {by}, {bz}), sizeof(SharedMem), buffers,
                     [=]() {{ {kernel}(input, weight, output); }}, counts);
}}
#endif
"""
