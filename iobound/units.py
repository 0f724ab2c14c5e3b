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

from .errors import InvalidInputError

__all__ = ["DTYPE_BYTES", "WORD_BYTES", "dtype_bytes", "parse_bytes", "fast_memory_words"]

DTYPE_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "int8": 1}
#: Bytes of one word of the generated kernels (fp32): the one definition.
WORD_BYTES = DTYPE_BYTES["fp32"]

_UNITS = {
    "b": 1,
    "kb": 1000, "mb": 1000**2, "gb": 1000**3,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def dtype_bytes(dtype: str) -> int:
    """Bytes of one value of ``dtype`` (fp32, fp16, bf16, fp64, tf32, int8)."""
    try:
        return DTYPE_BYTES[dtype.lower()]
    except KeyError:
        raise InvalidInputError(
            f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPE_BYTES)}"
        ) from None


def parse_bytes(text: str) -> int:
    """Parse ``"48KiB"``, ``"96 KB"``, ``"1MiB"`` or ``"512B"`` into bytes."""
    m = _SIZE.match(str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise InvalidInputError(
            f"cannot read size {text!r}: give words (12288) or bytes with a unit "
            f"({', '.join(u for u in ('B', 'KiB', 'MiB', 'KB', 'MB'))})"
        )
    value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if value != int(value):
        raise InvalidInputError(f"size {text!r} is not a whole number of bytes")
    return int(value)


def fast_memory_words(text: str | int, dtype: str = "fp32") -> int:
    """Fast memory S in words from words (a bare integer) or bytes with a unit.

    Raises
    ------
    ValueError
        For unreadable text or a size below one word.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        words = text
    else:
        s = str(text).strip()
        if s.isdigit():
            words = int(s)
        else:
            words = parse_bytes(s) // dtype_bytes(dtype)
    if words < 1:
        raise InvalidInputError(f"fast memory must be at least one word, got {text!r}")
    return words
