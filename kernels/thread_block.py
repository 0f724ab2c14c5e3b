"""The default thread block of a kernel config given only its tiles.

``iobound dataflow`` gives tiles (direct: x, y, z, alpha; Winograd: e, x, y, z) but no
threads. When a config names none of ``tx``, ``ty``, ``tz``, the block is chosen by one
rule, greedily along x, then y, then z (x first: neighbouring threads in x read
neighbouring addresses, so loads coalesce):

* the thread axes span ``(x, y, z)`` (direct) or ``(x/e, y/e, z)`` (Winograd: threads
  over the block's Winograd tiles and output channels), as :func:`kernels.config.check_config`
  requires (each thread count divides its span);
* ``tx`` is the largest divisor of its span that is at most :data:`DEFAULT_MAX_THREADS`,
  ``ty`` the largest divisor of its span that keeps ``tx * ty`` within it, then ``tz``.

:data:`DEFAULT_MAX_THREADS` is 256: eight warps, enough for latency hiding and small
enough for a direct block's registers on every listed device. The chosen block is
checked like any other (:func:`kernels.config.check_config`).

Examples
--------
>>> default_thread_block({"x": 8, "y": 8, "z": 8, "alpha": 2})
{'tx': 8, 'ty': 8, 'tz': 4}
>>> default_thread_block({"e": 2, "x": 8, "y": 4, "z": 16})
{'tx': 4, 'ty': 2, 'tz': 16}
>>> default_thread_block({"x": 7, "y": 1, "z": 3}, "direct")
{'tx': 7, 'ty': 1, 'tz': 3}
>>> default_thread_block({"x": 1, "y": 1, "z": 128}, "direct")
{'tx': 1, 'ty': 1, 'tz': 64}
"""

from __future__ import annotations

import numbers
from typing import Mapping

from iobound.algorithms import get_algorithm
from iobound.errors import InvalidInputError

from .limits import MAX_BLOCK_DIM

__all__ = ["DEFAULT_MAX_THREADS", "THREAD_KEYS", "default_thread_block"]

#: Most threads a default block gets.
DEFAULT_MAX_THREADS = 256
#: The config keys of the thread block.
THREAD_KEYS = ("tx", "ty", "tz")


def _largest_divisor_at_most(n: int, cap: int) -> int:
    return max(d for d in range(1, min(n, cap) + 1) if n % d == 0)


def default_thread_block(tiles: Mapping[str, int], algorithm: str | None = None) -> dict[str, int]:
    """``{"tx", "ty", "tz"}`` for a config's tiles by the rule of the module docstring.

    ``algorithm`` defaults as in :func:`kernels.config.config_from_dict` (``e`` means
    Winograd). Raises InvalidInputError when a tile it needs is missing or not positive.

    >>> default_thread_block({"x": 8, "y": 8})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: a default thread block needs ... not positive: z
    """
    if not isinstance(tiles, Mapping):
        raise InvalidInputError(f"tiles must be a mapping of tile names to integers, "
                                f"got {type(tiles).__name__}")
    if algorithm is None:  # only None is "guess": 0 or "" is a wrong name, refused
        algorithm = "winograd" if "e" in tiles else "direct"
    alg = get_algorithm(algorithm)
    needed = tuple(p for p in alg.tile_params if p != "alpha")  # threads never split alpha
    bad = [k for k in needed if isinstance(tiles.get(k), bool)
           or not isinstance(tiles.get(k), numbers.Integral) or tiles[k] < 1]
    if bad:
        raise InvalidInputError(f"a default thread block needs positive tiles {', '.join(needed)}; "
                                f"missing or not positive: {', '.join(bad)}")
    e = int(tiles["e"]) if "e" in needed else 1
    spans = (-(-int(tiles["x"]) // e), -(-int(tiles["y"]) // e), int(tiles["z"]))
    block, room = {}, DEFAULT_MAX_THREADS
    for key, span, axis_cap in zip(THREAD_KEYS, spans, MAX_BLOCK_DIM):
        block[key] = _largest_divisor_at_most(span, min(room, axis_cap))
        room //= block[key]
    return block
