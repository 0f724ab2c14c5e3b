"""The largest numbers iobound computes with, in one place, each with its reason.

Every integer a user can type (a layer field, a fast-memory size, a Winograd tile, a
budget, a seed, a batch size) is checked against a :class:`Limit` here before it
reaches numpy, OR-Tools, SymPy or an index: a value outside the range is an
:class:`~iobound.errors.InvalidInputError` naming the field, the value and the limit,
never an overflow, a solver error, a huge allocation or a run that does not end.

The limits are generous for real networks (the largest preset layer is far inside
them) and tight enough that every command finishes in seconds at the limit.

Examples
--------
>>> check_int("cin", 64, CHANNELS)
64
>>> check_int("cin", 10**30, CHANNELS)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: cin=1000000000000000000000000000000 is above the limit 65536 (channels: ...)
>>> parse_int("--seed", "12", SEED)
12
>>> parse_int("--seed", "9" * 5000, SEED)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: --seed: 99999999999999999999... (5000 digits) is above the limit ...
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import InvalidInputError

__all__ = ["Limit", "check_int", "check_number", "check_flag", "parse_int", "SPATIAL", "CHANNELS",
           "BATCH", "KERNEL", "STRIDE", "PADDING", "DILATION", "MACS", "FAST_MEMORY_WORDS",
           "MAX_TILE_EDGE", "WINOGRAD_E", "WINOGRAD_E_COUNT", "check_winograd_e", "PROCESSORS",
           "TILE", "SEED", "BUDGET", "BATCH_SIZE", "PATIENCE", "SEARCH_STEPS",
           "SEARCH_WIDTH", "GA_TRIES", "SPACE_INDEX", "EMULATED_ELEMENTS",
           "DAG_VERTICES", "TUNING_FILE_CHARS", "AXIS", "AXIS_PRODUCT", "AMOUNT_HIGH",
           "check_amounts", "holds_bool"]


@dataclass(frozen=True)
class Limit:
    """An inclusive integer range ``low..high`` and why ``high`` is where it is.

    >>> digit = Limit(0, 9, "one decimal digit")
    >>> str(digit), check_int("d", 7, digit), str(WINOGRAD_E)
    ('0..9', 7, '1..32')
    """

    low: int
    high: int
    reason: str

    def __str__(self) -> str:
        return f"{self.low}..{self.high}"


#: Input height/width. The dataflow search and the domain enumerate divisors and
#: border tiles of the output; above 2^13 a domain build passes a minute on one core.
#: Real CNN inputs are at most a few thousand pixels.
SPATIAL = Limit(1, 1 << 13, "input height/width: larger layers make the domain "
                            "and dataflow searches run for minutes")
#: Input/output channels: the channel tiles are divisors of these.
CHANNELS = Limit(1, 1 << 16, "channels: the domain enumerates channel tiles")
#: Batch size n: only scales the counts, but n * MACs must stay exact in float64.
BATCH = Limit(1, 1 << 16, "batch: counts must stay exact in float64")
#: Kernel height/width; it must also fit the padded input (checked by ConvLayer).
KERNEL = Limit(1, 1 << 10, "kernel size: the emulator and the DAG builders unroll "
                           "the kernel window")
STRIDE = Limit(1, SPATIAL.high, "stride: at most the input size")
PADDING = Limit(0, SPATIAL.high, "padding: at most the input size, so the padded "
                                 "input stays within 3x the spatial limit")
DILATION = Limit(1, SPATIAL.high, "dilation: at most the input size")
#: Multiply-accumulates of one layer: integers are exact in float64 up to 2^53, and
#: every bound is evaluated in float64.
MACS = Limit(1, 1 << 53, "MACs: counts are exact in float64 only up to 2^53")
#: Fast memory S in words: on-chip memories are at most megabytes; 2^40 words keeps
#: S^2 * R and the bounds' sqrt(S) terms exact in 64-bit arithmetic.
FAST_MEMORY_WORDS = Limit(1, 1 << 40, "fast memory: 2^40 words keeps S^2 products "
                                      "within 64-bit integers")
#: Largest Winograd input tile edge n = e + r - 1 served: the transform matrices are
#: built exactly with SymPy, O(n^4) rational work (about 3 s at n = 34), and the
#: interpolation points make larger tiles useless in floating point (practical kernels use
#: n <= 8). :mod:`iobound.winograd_transforms` refuses a larger tile.
MAX_TILE_EDGE = 32
#: Winograd output tile e of F(e x e, r x r): at most :data:`MAX_TILE_EDGE` (r = 1).
WINOGRAD_E = Limit(1, MAX_TILE_EDGE, f"Winograd e: the input tile e + r - 1 is at most "
                                     f"{MAX_TILE_EDGE}")
WINOGRAD_E_COUNT = Limit(1, 8, "number of Winograd e values offered to the domain")
#: N_p processors sharing S in ``iobound dataflow``.
PROCESSORS = Limit(1, 1 << 20, "processors: N_p blocks sharing S")
#: A tile edge typed with --tiles / --config (it must also divide the layer).
TILE = Limit(1, 1 << 16, "tile edge: at most the largest layer dimension")
#: The size of one axis a dataflow counts over (output or input rows, columns or
#: channels): the padded input stays within 3x :data:`SPATIAL`, channels within
#: :data:`CHANNELS`. The per-axis counts allocate O(size) arrays.
AXIS = Limit(1, 1 << 16, "axis size: at most the largest layer dimension")
#: A product of two axes (the output pixels ``h_out * w_out`` of one image).
AXIS_PRODUCT = Limit(1, 1 << 32, "size of two axes: at most the largest layer's output "
                                 "pixels")
#: Seeds are stored in logs and the SQLite history, whose integers are signed 64-bit.
SEED = Limit(0, (1 << 63) - 1, "seed: stored as a signed 64-bit integer")
#: Unique configurations one tuning run may measure.
BUDGET = Limit(1, 1 << 20, "budget: each measurement is a log line and a model update")
BATCH_SIZE = Limit(1, 1 << 12, "batch size: configurations proposed per round")
PATIENCE = Limit(1, 1 << 20, "patience: rounds without improvement")
#: Steps of one model-guided proposal (a walk's ``max_steps`` and ``patience``, annealing's
#: ``n_iter`` and ``early_stop``): each step predicts a batch of neighbours, and 2^12 steps
#: on a 400-configuration space take a few seconds (the defaults are 60 and 500).
SEARCH_STEPS = Limit(1, 1 << 12, "optimizer steps: each step predicts a batch of neighbours")
#: Parallel chains of one proposal (a walk's ``n_walkers``, annealing's ``n_chains``) and
#: neighbours a walker predicts per step: each is a row of every prediction batch.
SEARCH_WIDTH = Limit(1, 1 << 12, "optimizer width: each chain is a row of every prediction")
#: Attempts per new child of the genetic algorithm (``max_tries``, default 30) before a
#: random unasked configuration is taken instead: each attempt is one crossover.
GA_TRIES = Limit(0, 1 << 10, "GA tries per child: each try is one crossover and mutation")
#: Mixed-radix indices of a recorded space are numpy int64 codes.
ROWS = Limit(1, (1 << 63) - 1, "row count: SQLite's LIMIT is a signed 64-bit integer")
SPACE_INDEX = Limit(1, (1 << 63) - 1, "space index: configurations are numbered "
                                      "with signed 64-bit integers")
#: Elements of one tensor the CPU emulator allocates (fp32): 2^28 is 1 GiB.
EMULATED_ELEMENTS = Limit(1, 1 << 28, "emulator tensors: 2^28 fp32 values is 1 GiB")
#: The vertex cap a DAG builder is given (``max_vertices``): NetworkX keeps a dict per
#: vertex, hundreds of bytes each, so 2^32 vertices is beyond any memory.
DAG_VERTICES = Limit(1, 1 << 32, "DAG vertices: NetworkX holds hundreds of bytes per vertex")
#: Bytes one tuning file (a log, a Kernel Tuner cache or T4 results file) may hold,
#: gunzipped: it is read whole and parsed in memory, which takes several times its size,
#: and a small .json.gz can unpack to far more. 2 GiB is past any real cache (millions of
#: entries); a file past it is refused (:mod:`search.file_bytes`).
TUNING_FILE_CHARS = 1 << 31

_DIGITS = re.compile(r"[+-]?\d+", re.ASCII)


def _shown(value) -> str:
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} digits)"


def check_int(field: str, value: int, limit: Limit) -> int:
    """``value`` as an ``int`` when ``limit.low <= value <= limit.high``; else
    InvalidInputError naming ``field``.

    Any integral number but a bool is an integer (``numpy.int64`` included, as numpy
    arrays of sizes give them); it is returned as a Python ``int``, so that no numpy
    integer overflows silently or reaches JSON.

    >>> type(check_int("batch", np.int64(8), BATCH)).__name__
    'int'
    >>> check_int("batch", True, BATCH)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: batch must be an integer, got True
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidInputError(f"{field} must be an integer, got {_shown(repr(value))}")
    value = int(value)
    if value < limit.low:
        raise InvalidInputError(f"{field}={_shown(value)} is below the minimum {limit.low}")
    if value > limit.high:
        raise InvalidInputError(f"{field}={_shown(value)} is above the limit {limit.high} "
                                f"({limit.reason})")
    return value


def check_winograd_e(e) -> int:
    """A Winograd output tile ``e``, checked against :data:`WINOGRAD_E`.

    >>> check_winograd_e(2)
    2
    """
    return check_int("Winograd output tile e", e, WINOGRAD_E)


def parse_int(field: str, text: str, limit: Limit) -> int:
    """The integer written in ``text``, checked against ``limit`` (digits counted first,
    so a 5,000-digit string never reaches ``int()``).

    >>> parse_int("--budget", " 0064 ", BUDGET)
    64
    >>> parse_int("--budget", "1e3", BUDGET)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --budget: '1e3' is not an integer
    """
    s = str(text).strip()
    if not _DIGITS.fullmatch(s):
        raise InvalidInputError(f"{field}: {_shown(repr(s))} is not an integer")
    digits = s.lstrip("+-").lstrip("0") or "0"
    if len(digits) > len(str(limit.high)) + 1:  # certainly too large: do not convert
        if s.startswith("-"):
            raise InvalidInputError(f"{field}: {_shown(s)} is below the minimum {limit.low}")
        raise InvalidInputError(f"{field}: {_shown(s)} is above the limit {limit.high} "
                                f"({limit.reason})")
    return check_int(field, int(s), limit)


def _interval(low: float, high: float, low_open: bool, high_open: bool) -> str:
    """`` in [0, 1)``, `` >= 0``... ('' for the whole line)."""
    if low == -math.inf and high == math.inf:
        return ""
    if high == math.inf:
        return f" {'>' if low_open else '>='} {low:g}"
    if low == -math.inf:
        return f" {'<' if high_open else '<='} {high:g}"
    return f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def check_number(name: str, value: Any, low: float = -math.inf, high: float = math.inf, *,
                 low_open: bool = False, high_open: bool = False) -> float:
    """``value`` (unchanged) when it is a finite real number (not a bool) in the interval
    from ``low`` to ``high`` (each end included unless ``*_open``); else InvalidInputError
    naming ``name``, the interval and the value.

    >>> check_number("omega", math.inf, 0)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: omega must be a finite number >= 0, got inf
    """
    what = f"{name} must be a finite number{_interval(low, high, low_open, high_open)}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidInputError(f"{what}, got {value!r}")
    try:
        x = float(value)
    except OverflowError:  # an int beyond float range
        x = math.inf
    inside = (low < x if low_open else low <= x) and (x < high if high_open else x <= high)
    if not math.isfinite(x) or not inside:
        raise InvalidInputError(f"{what}, got {value!r}")
    return value


#: Largest byte or flop count a time is computed from: 2^80 is past any layer, and a
#: time from it stays finite.
AMOUNT_HIGH = 2.0 ** 80


def holds_bool(value: Any) -> bool:
    """Whether ``value`` (a number, a list or an array) holds a bool: numpy reads
    ``[True, 64]`` as the integers ``[1, 64]``, so a list is looked into itself (a numpy
    array of numbers holds none; a ragged list is left to the caller's own check).

    >>> holds_bool([True, 64]), holds_bool(np.array([1, 64])), holds_bool(np.bool_(False))
    (True, False, True)
    """
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, np.ndarray) and value.dtype != object:
        return value.dtype.kind == "b"
    try:
        items = np.asarray(value, dtype=object).ravel()
    except ValueError:  # ragged
        return False
    return any(isinstance(v, (bool, np.bool_)) for v in items)


def check_amounts(name: str, value: Any) -> np.ndarray:
    """``value`` (a number or an array of them) as a float array of finite numbers in
    0..:data:`AMOUNT_HIGH`; else InvalidInputError naming ``name`` (a string, a bool, a NaN
    or a negative count would give a meaningless time, not an error).

    >>> check_amounts("flops", [2, 3.5]).tolist()
    [2.0, 3.5]
    """
    try:   # np.asarray parses "1" as 1.0: a string (or an array of them) is no count
        arr = (None if np.asarray(value).dtype.kind in "USOb" or holds_bool(value)
               else np.asarray(value, dtype=float))
    except (TypeError, ValueError, OverflowError):
        arr = None
    if arr is None or not np.all(np.isfinite(arr) & (arr >= 0) & (arr <= AMOUNT_HIGH)):
        raise InvalidInputError(f"{name} must be finite numbers >= 0 (a number or an array), "
                                f"got {value!r:.60}")
    return arr


def check_flag(name: str, value: Any) -> bool:
    """``value`` as a ``bool`` when it is ``True`` or ``False`` (numpy's bools too); else
    InvalidInputError naming ``name`` (``None``, ``0``, ``2`` or ``"yes"`` are no flags: a
    truthy stand-in would switch behaviour silently).

    >>> check_flag("divisors", "yes")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: divisors must be True or False, got 'yes'
    """
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidInputError(f"{name} must be True or False, got {value!r:.60}")
    return bool(value)
