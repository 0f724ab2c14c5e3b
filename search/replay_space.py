"""A search space recorded in a Kernel Tuner cache file.

The space is exactly what the file records: every entry, valid or failed (a
failed entry is a real outcome; measuring it gives its failure status). A
configuration the file lacks is not a member (``index`` gives ``None``; the
replay measurer calls it ``invalid``). Parameters and value lists are the file's
own (``tune_params``), in ``tune_params_keys`` order.

Neighbours
----------
``neighbourhood="hamming"`` (default): every recorded configuration that differs
from ``i`` in exactly one parameter, by any amount (Hamming distance 1).
``neighbourhood="adjacent"``: those that differ in exactly one parameter by one
step in that parameter's value list (e.g. ``block_size_x`` 32 -> 16 or 48); when
a configuration has no such neighbour (it is isolated) its Hamming-1 neighbours
are used instead.

Why Hamming by default: recorded value lists are short (here at most 16 values),
so Hamming-1 stays a modest neighbourhood (about 22 configurations in the shipped
files against 8 adjacent ones), and a walk can cross a parameter's whole range in
one step. On the three recorded convolution spaces (10 seeds, budgets 25..200) it
raised the explorer's mean score (optimum / best found) at every budget, most at
200 (0.961 -> 0.985).

Lookups are vectorised: each configuration is encoded as a mixed-radix integer
of its value positions; the codes are kept sorted for ``searchsorted``.

Examples
--------
>>> from search.kt_cache import KtCache
>>> cache = KtCache(tune_params={"a": [1, 2, 3], "b": [0, 1]}, entries=[
...     {"a": a, "b": b, "time": float(a + b)} for a in (1, 2, 3) for b in (0, 1) if (a, b) != (2, 1)])
>>> s = ReplaySpace(cache)
>>> len(s), s.get(0), s.index({"a": 2, "b": 1})
(5, {'a': 1, 'b': 0}, None)
>>> [s.get(j) for j in s.neighbours(s.index({"a": 1, "b": 1}))]
[{'a': 3, 'b': 1}, {'a': 1, 'b': 0}]
>>> [s.get(j) for j in ReplaySpace(cache, "adjacent").neighbours(s.index({"a": 1, "b": 1}))]
[{'a': 1, 'b': 0}]
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError
from kernels.status import Status

from .kt_cache import KtCache, entry_status, load_cache, value_key
from .space import Space, knob_value, only_params

__all__ = ["ReplaySpace", "NEIGHBOURHOODS"]

NEIGHBOURHOODS = ("hamming", "adjacent")


class ReplaySpace(Space):
    """The configurations recorded in a Kernel Tuner cache (see module doc).

    Parameters
    ----------
    cache : KtCache or path
        The loaded cache, or the path of a ``.json``/``.json.gz`` cache file.
    neighbourhood : {"hamming", "adjacent"}
        Which configurations count as neighbours (see module doc).

    Examples
    --------
    >>> import os, tempfile
    >>> from search.kt_cache import KtCache
    >>> from search.kt_cache_write import write_cache
    >>> path = write_cache(os.path.join(tempfile.mkdtemp(), "conv.json"), KtCache(
    ...     {"a": [1, 2, 4]}, [{"a": a, "time": 4.0 / a} for a in (1, 2, 4)], device_name="A100"))
    >>> s = ReplaySpace(path)
    >>> len(s), s.params, s.get(2), s.describe()["device"]
    (3, ('a',), {'a': 4}, 'A100')
    """

    def __init__(self, cache: KtCache | str | os.PathLike, neighbourhood: str = "hamming"):
        if not isinstance(cache, KtCache):
            cache = load_cache(cache)
        if neighbourhood not in NEIGHBOURHOODS:
            raise InvalidInputError(f"neighbourhood must be one of {', '.join(NEIGHBOURHOODS)}; "
                             f"got {neighbourhood!r}")
        if not cache.entries:
            raise InvalidInputError(f"cache {cache.path or '(in memory)'} records no configurations")
        self.cache = cache
        self.neighbourhood = neighbourhood
        self._params = cache.keys
        self._values = [list(cache.tune_params[p]) for p in self._params]
        pos_maps = [{value_key(v): k for k, v in enumerate(vals)} for vals in self._values]
        pos = np.empty((len(cache.entries), len(self._params)), dtype=np.int64)
        for row, entry in enumerate(cache.entries):
            for col, p in enumerate(self._params):
                v = value_key(entry[p])
                k = pos_maps[col].get(v)
                if k is None:  # a value missing from tune_params: extend the list
                    k = len(self._values[col])
                    self._values[col].append(entry[p])
                    pos_maps[col][v] = k
                pos[row, col] = k
        self._pos_maps = pos_maps
        total = 1
        for vals in self._values:  # Python ints: the product itself cannot overflow
            total *= len(vals)
        if total > limits.SPACE_INDEX.high:
            raise InvalidInputError(
                f"cache {cache.path or '(in memory)'}: the product of the parameters' value "
                f"counts is {total:.3g}, past {limits.SPACE_INDEX.reason} (2^63 - 1)")
        self._radix = np.array([len(v) for v in self._values], dtype=np.int64)
        self._stride = np.ones(len(self._params), dtype=np.int64)
        for k in range(len(self._params) - 2, -1, -1):
            self._stride[k] = self._stride[k + 1] * self._radix[k + 1]
        codes = pos @ self._stride
        # Index i is the i-th configuration in the order of its value positions (as Kernel
        # Tuner enumerates tune_params), not the file's i-th entry: a cache is a JSON
        # object, whose key order means nothing (a space exported from a tuning database
        # or rewritten by another tool lists it in another order), and a seeded run of the
        # same recorded space must take the same path.
        order = np.argsort(codes, kind="stable")
        pos, codes = pos[order], codes[order]
        entries = [cache.entries[int(k)] for k in order]
        self._pos = pos
        if len(np.unique(codes)) != len(codes):
            raise InvalidInputError(f"cache {cache.path or '(in memory)'} records a configuration twice")
        self._codes = codes
        self._knobs = np.column_stack([
            np.array([knob_value(v, vals) for v in vals], dtype=float)[pos[:, c]]
            for c, vals in enumerate(self._values)])
        self._status = [entry_status(e) for e in entries]

    @property
    def params(self) -> tuple[str, ...]:
        return self._params

    def __len__(self) -> int:
        return len(self._codes)

    def get(self, i: int) -> dict:
        i = self.checked_index(i)
        return {p: _copied(self._values[c][self._pos[i, c]]) for c, p in enumerate(self._params)}

    def _lookup(self, codes: np.ndarray) -> np.ndarray:
        """Indices of the given codes, -1 where absent."""
        at = np.searchsorted(self._codes, codes)  # the codes are sorted: index order
        at_c = np.minimum(at, len(self._codes) - 1)
        found = self._codes[at_c] == codes
        return np.where(found, at_c, -1)

    def index(self, config: Mapping[str, Any]) -> int | None:
        try:
            code = sum(int(self._pos_maps[c][value_key(config[p])]) * int(self._stride[c])
                       for c, p in enumerate(self._params))
        except (KeyError, TypeError):
            return None
        if not only_params(config, self._params):  # another key: no member
            return None
        found = int(self._lookup(np.array([code], dtype=np.int64))[0])
        return None if found < 0 else found

    def _candidate_codes(self, i: int, hamming: bool) -> np.ndarray:
        pos, code = self._pos[i], self._codes[i]
        out = []
        for c in range(len(self._params)):
            if hamming:
                others = np.arange(self._radix[c])
                others = others[others != pos[c]]
            else:
                others = np.array([pos[c] - 1, pos[c] + 1])
                others = others[(others >= 0) & (others < self._radix[c])]
            out.append(code + (others - pos[c]) * self._stride[c])
        return np.concatenate(out) if out else np.empty(0, dtype=np.int64)

    def neighbours(self, i: int) -> list[int]:
        i = self.checked_index(i)
        found = self._lookup(self._candidate_codes(i, self.neighbourhood == "hamming"))
        found = found[found >= 0]
        if len(found) == 0 and self.neighbourhood == "adjacent":
            found = self._lookup(self._candidate_codes(i, True))
            found = found[found >= 0]
        return [int(j) for j in found]

    def values(self, param: str) -> list:
        return list(self._values[self.param_position(param)])

    def features(self, indices: Sequence[int]) -> np.ndarray:
        # checked: numpy would truncate 2.7 to row 2 and read -1 as the last row
        return self._knobs[self.checked_indices(indices)]

    def status(self, i: int) -> Status:
        """The recorded status of configuration ``i`` (``OK`` or a failure); ``i`` checked
        as every index is (:meth:`~search.space.Space.checked_index`)."""
        return self._status[self.checked_index(i)]

    def describe(self) -> dict:
        """The space's summary; its identity (what a resumed log must match,
        :mod:`search.resume`) includes the recorded kernel and ``problem_size``."""
        counts: dict[str, int] = {}
        for s in self._status:
            counts[s.value] = counts.get(s.value, 0) + 1
        return {"kind": "replay", "size": len(self), "params": list(self._params),
                "device": self.cache.device, "kernel": self.cache.kernel_name,
                "problem_size": self.cache.problem_size, "file": self.cache.path,
                "neighbourhood": self.neighbourhood, "statuses": counts,
                "bad_times": self.cache.bad_times}


def _copied(v: Any) -> Any:
    """A list value as a new list: a caller editing a config must not edit the space."""
    return list(v) if isinstance(v, list) else v
