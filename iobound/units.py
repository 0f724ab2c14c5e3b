"""Fast-memory sizes: words (values) internally, bytes with units at the edges.

Examples
--------
>>> fast_memory_words("48KiB")          # fp32: 4 bytes a word
12288
>>> fast_memory_words("12288")
12288
>>> fast_memory_words("64KB", dtype="fp16")
32000
"""

from __future__ import annotations

import re
from fractions import Fraction

from . import limits
from .errors import InvalidInputError

__all__ = ["DTYPE_BYTES", "WORD_BYTES", "dtype_bytes", "parse_bytes", "fast_memory_words"]

DTYPE_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "int8": 1}
#: Bytes of one word of the generated kernels (fp32): the one definition.
WORD_BYTES = DTYPE_BYTES["fp32"]

#: The byte units a size may name (any letter case), as the error lists them.
UNIT_BYTES = {"B": 1, "KB": 1000, "MB": 1000**2, "GB": 1000**3,
              "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
_UNITS = {unit.lower(): n for unit, n in UNIT_BYTES.items()}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$", re.ASCII)
#: Digits a size may have: 2^40 words of fp64 in bytes has 14; longer text is refused
#: before any arithmetic on it.
_MAX_DIGITS = 24


def dtype_bytes(dtype: str) -> int:
    """Bytes of one value of ``dtype`` (fp32, fp16, bf16, fp64, tf32, int8).

    >>> dtype_bytes("fp32"), dtype_bytes("fp16")
    (4, 2)
    """
    if not isinstance(dtype, str):
        raise InvalidInputError(f"dtype must be a string, one of {', '.join(DTYPE_BYTES)}; "
                                f"got {dtype!r:.40}")
    try:
        return DTYPE_BYTES[dtype.lower()]
    except KeyError:
        raise InvalidInputError(
            f"unknown dtype {str(dtype)[:40]!r}; choose one of {', '.join(DTYPE_BYTES)}"
        ) from None


def parse_bytes(text: str) -> int:
    """Parse ``"48KiB"``, ``"96 KB"``, ``"1MiB"`` or ``"512B"`` into bytes.

    >>> parse_bytes("48KiB"), parse_bytes("96 KB"), parse_bytes("1.5KiB")
    (49152, 96000, 1536)
    >>> parse_bytes("0.5B")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: size '0.5B' is not a whole number of bytes
    """
    if str(text).strip().startswith("-"):  # was "cannot read size '-1'"
        raise InvalidInputError(f"size {str(text)[:40]!r} is negative: a size is a number of "
                                f"words (12288) or bytes with a unit ({', '.join(UNIT_BYTES)})")
    m = _SIZE.match(str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise InvalidInputError(
            f"cannot read size {str(text)[:40]!r}: give words (12288) or bytes with a unit "
            f"({', '.join(UNIT_BYTES)})"
        )
    number = m.group(1)
    if len(number.lstrip("0")) > _MAX_DIGITS:
        raise InvalidInputError(f"size {number[:20]}... ({len(number)} digits) is above the "
                                f"limit of {limits.FAST_MEMORY_WORDS.high} words "
                                f"({limits.FAST_MEMORY_WORDS.reason})")
    value = Fraction(number) * _UNITS[m.group(2).lower()]  # exact: no float rounding
    if value.denominator != 1:
        raise InvalidInputError(f"size {str(text)[:40]!r} is not a whole number of bytes")
    return int(value)


def fast_memory_words(text: str | int, dtype: str = "fp32") -> int:
    """Fast memory S in words from words (a bare integer) or bytes with a unit (rounded
    down to whole words of ``dtype``: ``6B`` of fp32 holds one).

    Raises
    ------
    InvalidInputError
        For unreadable text, a size below one word or above
        :data:`iobound.limits.FAST_MEMORY_WORDS`, or an unknown ``dtype`` (checked
        also when the size is in words, which do not need it).

    Examples
    --------
    >>> fast_memory_words("48KiB"), fast_memory_words("48KiB", "fp16"), fast_memory_words(1024)
    (12288, 24576, 1024)
    """
    size = dtype_bytes(dtype)
    if isinstance(text, int) and not isinstance(text, bool):
        words = text
    else:
        s = str(text).strip()
        if s.isascii() and s.isdigit():
            return limits.parse_int("fast memory (words)", s, limits.FAST_MEMORY_WORDS)
        words = parse_bytes(s) // size
    if words < 1:
        raise InvalidInputError(f"fast memory must be at least one word, got {str(text)[:40]!r}")
    return limits.check_int("fast memory (words)", words, limits.FAST_MEMORY_WORDS)
