"""How many rows a history model fits on, and which: a tuning database of many devices or
layers would cost minutes of fitting if every measurement were a row. Each source (one
device's or layer's records) keeps its fastest rows and a sample of the rest
(:func:`training_rows`), at most ``per_source`` of one and about ``total`` in all
(:func:`source_caps`).

Examples
--------
>>> source_caps([10, 20], per_source=15, total=100)
[10, 15]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from iobound.errors import InvalidInputError

from .option_checks import check_count, check_type, shown

__all__ = ["training_rows", "source_caps"]


def training_rows(rel: np.ndarray, cap: int, rng: np.random.Generator) -> np.ndarray:
    """Positions of the rows a history model learns from, of one source's: all when there
    are at most ``cap``, else the fastest ``cap // 2`` (by relative time ``rel``) and a
    uniform sample of the others, in their order (a source that measured a whole large
    space costs minutes of fitting otherwise; its best and a sample of its bulk give the
    order).

    >>> training_rows(np.array([3.0, 1.0, 2.0, 4.0]), 4, np.random.default_rng(0)).tolist()
    [0, 1, 2, 3]
    >>> training_rows(np.array([3.0, 1.0, 2.0, 4.0, 5.0]), 2, np.random.default_rng(0))[:1].tolist()
    [1]
    """
    cap = check_count("cap", cap)
    check_type("rng", rng, np.random.Generator)
    rel = np.asarray(rel, dtype=float) if not isinstance(rel, (str, bytes)) else None
    if rel is None or rel.ndim != 1 or not np.all(np.isfinite(rel)):
        raise InvalidInputError("rel must be a 1-d array of finite relative times")
    if len(rel) <= cap:
        return np.arange(len(rel))
    order = np.argsort(rel, kind="stable")
    top, rest = order[:cap // 2], order[cap // 2:]
    return np.sort(np.concatenate([top, rng.choice(rest, cap - len(top), replace=False)]))


def source_caps(sizes: Sequence[int], per_source: int, total: int) -> list[int]:
    """How many rows a history model takes of each source, of ``sizes`` rows: at most
    ``per_source`` of one and ``total`` in all, except that every source with rows keeps
    at least one. Below ``total`` each keeps ``min(size, per_source)``; above it the
    budget is shared as water fills vessels: sources smaller than the common cap keep
    all their rows, the larger ones get the largest cap that keeps the sum within
    ``total``, but never below 1: when ``total`` is below the number of non-empty sources
    (``total=0`` included), each of them keeps one row and the sum is that number, above
    ``total``. No source is dropped from a history model (its ``max_rows`` option is a
    size budget, valid whatever the number of sources). A database of many devices or
    layers then costs seconds, not minutes, of fitting; each source still gives its
    fastest rows (:func:`training_rows`).

    >>> source_caps([100, 5000, 300], 4096, 10_000)
    [100, 4096, 300]
    >>> source_caps([100, 5000, 300, 5000], 4096, 1000)
    [100, 300, 300, 300]
    >>> source_caps([5, 0, 5], 4, 1)  # below one row per source: one each
    [1, 0, 1]
    """
    per_source, total = check_count("per_source", per_source, 1), check_count("total", total)
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence | np.ndarray):
        raise InvalidInputError(f"sizes must be a sequence of row counts, got {shown(sizes)}")
    caps = [min(check_count("a source's size", n), per_source) for n in sizes]
    if sum(caps) <= total:
        return caps
    low, high = 1, max(caps)  # the largest common cap c with sum(min(n, c)) <= total
    while low < high:
        mid = (low + high + 1) // 2
        if sum(min(n, mid) for n in caps) <= total:
            low = mid
        else:
            high = mid - 1
    return [min(n, low) for n in caps]

