"""The abstract search space: configurations addressed by integer index.

A :class:`Space` is a finite set of *valid* configurations (dicts from parameter
name to value) numbered ``0 .. len(space) - 1``. Strategies, the explorer and the
tuner loop only ever handle indices; they turn them into configs with
:meth:`Space.get` when a measurer needs them. Two implementations exist:
``search.conv_space.ConvSpace`` (our kernels, Table 1 constraints) and
``search.replay_space.ReplaySpace`` (a recorded Kernel Tuner cache file);
``search.grid_space.GridSpace`` is the simplest, for tests and examples.

Contract
--------
- ``params``: the parameter names, in a fixed order (the feature/knob order).
- ``len(space)``: the number of valid configurations (>= 1).
- ``get(i)``: the config of index ``i`` (``IndexError`` outside the range,
  ``InvalidInputError`` when ``i`` is not an integer: see :meth:`Space.checked_index`).
- ``index(config)``: its index, or ``None`` when the config is not in the space.
- ``sample(n, rng)``: ``min(n, len)`` distinct indices, uniform without replacement.
- ``neighbours(i)``: indices one small step away (documented per implementation);
  never contains ``i``; symmetric is not required.
- ``is_valid(config)``: ``index(config) is not None``.
- ``features(indices)``: a float matrix, one row per index; the first
  ``len(params)`` columns are the knob values (numbers; non-numeric values are
  replaced by their position in the parameter's value list), analytic features may
  follow. ``feature_names()`` names the columns; ``knobs(indices)`` is those first
  columns alone (what a Hamming distance between configurations counts).
- ``describe()``: a JSON-able summary (kind, size, params, ...).

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> s = GridSpace({"a": [1, 2, 3], "b": [0, 1]})
>>> len(s), s.get(4), s.index({"a": 3, "b": 0})
(6, {'a': 3, 'b': 0}, 4)
>>> sorted(s.neighbours(0))
[1, 2]
>>> len(set(s.sample(4, np.random.default_rng(0))))
4
"""

from __future__ import annotations

import abc
import math
import numbers
from typing import Any, Mapping, Sequence

import numpy as np

from iobound.errors import InvalidInputError
from search.option_checks import INT64_LOW, check_count, check_type, shown

__all__ = ["Space", "knob_value", "numeric_knob", "sample_excluding", "only_params"]


def knob_value(value: Any, choices: Sequence[Any]) -> float:
    """A number for a knob value: itself when every choice is numeric, else its position in
    ``choices`` (in a list mixing numbers and other values a number and a position could
    be one knob: ``[1, 2, "max"]`` gave "max" 2.0, as 2).

    Examples
    --------
    >>> knob_value(4, [1, 4]), knob_value("b", ["a", "b"]), knob_value(True, [False, True])
    (4.0, 1.0, 1.0)
    >>> [knob_value(v, [1, 2, "max"]) for v in (1, 2, "max")]
    [0.0, 1.0, 2.0]
    """
    choices = list(choices)
    if numeric_knob(value, choices):
        try:
            return float(value)
        except OverflowError:  # an int beyond float64: the largest value, in order
            return math.inf if value > 0 else -math.inf
    try:
        return float(choices.index(value))
    except ValueError:
        raise InvalidInputError(f"knob value {shown(value)} is none of the choices "
                                f"{shown(choices)}") from None


def numeric_knob(value: Any, choices: Sequence[Any]) -> bool:
    """Whether :func:`knob_value` takes ``value`` as the number it is (it and every choice
    are numbers), not as its position in ``choices``; a value that is neither this nor one
    of ``choices`` has no knob value.

    >>> numeric_knob(3, [1, 2]), numeric_knob(3, [1, 2, "max"])
    (True, False)
    """
    numeric = (int, float, np.integer, np.floating)
    return isinstance(value, numeric) and all(isinstance(c, numeric) for c in choices)


def sample_excluding(space: "Space", n: int, exclude, rng: np.random.Generator) -> list[int]:
    """Up to ``n`` distinct random indices outside ``exclude`` (all the rest when fewer remain).

    Examples
    --------
    >>> from search.grid_space import GridSpace
    >>> sorted(sample_excluding(GridSpace({"a": [1, 2, 3, 4]}), 5, {0, 2}, np.random.default_rng(0)))
    [1, 3]

    ``exclude`` is a collection of indices; those outside the space exclude nothing, one
    given twice counts once. ``n`` is a count (an ``int`` >= 0):

    >>> grid = GridSpace({"a": [1, 2, 3, 4]})
    >>> len(sample_excluding(grid, 5, [0, 0, 100], np.random.default_rng(0)))
    3
    """
    n = check_count("n", n)
    check_type("rng", rng, np.random.Generator)
    exclude = _excluded(exclude, len(space))
    n = min(n, len(space) - len(exclude))
    out: dict[int, None] = {}
    for _ in range(8):
        if len(out) >= n:
            break
        for i in space.sample(min(len(space), 2 * n + len(exclude)), rng):
            if i not in exclude and i not in out:
                out[i] = None
                if len(out) == n:
                    break
    if len(out) < n:  # nearly used up: draw from what is left
        rest = [i for i in range(len(space)) if i not in exclude and i not in out]
        out.update(dict.fromkeys(int(i) for i in rng.permutation(rest)[: n - len(out)]))
    return list(out)


def _excluded(exclude: Any, size: int) -> set:
    """The indices of ``exclude`` (a collection of integers) inside ``0 .. size - 1``, as a
    set of ints; InvalidInputError when it is no collection or holds a non-integer."""
    if isinstance(exclude, (str, bytes, Mapping)) or not hasattr(exclude, "__iter__"):
        raise InvalidInputError(f"exclude must be a collection of indices, got {shown(exclude)}")
    out = set()
    for i in exclude:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Integral):
            raise InvalidInputError(f"exclude must hold indices (integers), got {shown(i)}")
        if 0 <= i < size:
            out.add(int(i))
    return out


def only_params(config: Mapping[str, Any], params: Sequence[str]) -> bool:
    """Whether ``config``, which holds every one of ``params``, holds nothing else: a
    configuration with another key is no member of a space (a measurer refuses it).

    >>> only_params({"a": 1}, ("a",)), only_params({"a": 1, "b": 2}, ("a",))
    (True, False)
    """
    return len(config) == len(params)


class Space(abc.ABC):
    """A finite set of valid configurations addressed by integer index (see module doc).

    >>> from search.grid_space import GridSpace
    >>> s = GridSpace({"a": [1, 2, 3], "b": ["x", "y"]})
    >>> isinstance(s, Space), s.params, s.features([5]).tolist()
    (True, ('a', 'b'), [[3.0, 1.0]])
    >>> s.is_valid({"a": 3, "b": "z"}), s.describe()["size"]
    (False, 6)
    """

    @property
    @abc.abstractmethod
    def params(self) -> tuple[str, ...]:
        """The parameter names, in order."""

    @abc.abstractmethod
    def __len__(self) -> int:
        """The number of valid configurations."""

    @abc.abstractmethod
    def get(self, i: int) -> dict:
        """The configuration of index ``i`` (a fresh dict)."""

    @abc.abstractmethod
    def index(self, config: Mapping[str, Any]) -> int | None:
        """The index of ``config``, or ``None`` when it is not a valid member (a config with
        a key that is no parameter is none: :func:`only_params`)."""

    @abc.abstractmethod
    def neighbours(self, i: int) -> list[int]:
        """Indices of the configurations one step from ``i`` (never ``i`` itself)."""

    def checked_index(self, i: Any) -> int:
        """``i`` as an ``int`` when it is an integer (numpy's included) inside
        ``0 .. len(self) - 1``: InvalidInputError when it is not an integer (``"4"``,
        ``2.5``, ``None``), IndexError when it is outside the range.

        >>> from search.grid_space import GridSpace
        >>> GridSpace({"a": [1, 2]}).checked_index(2.0)
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: index must be an integer, got 2.0
        """
        if type(i) is not int:  # the common case (a plain int) skips the full check
            i = check_count("index", i, low=INT64_LOW)
        if not 0 <= i < len(self):
            raise IndexError(f"index {i} outside 0..{len(self) - 1}")
        return i

    def param_position(self, param: str) -> int:
        """The position of ``param`` in :attr:`params`; InvalidInputError naming the
        space's parameters when it has no such one.

        >>> from search.grid_space import GridSpace
        >>> GridSpace({"a": [1, 2]}).param_position("q")
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: unknown parameter 'q'; the space's: a
        """
        try:
            return self.params.index(param)
        except ValueError:
            raise InvalidInputError(f"unknown parameter {param!r:.60}; the space's: "
                                    f"{', '.join(self.params)}") from None

    def checked_indices(self, indices: Sequence[int]) -> np.ndarray:
        """``indices`` as a flat int64 array when every one is an integer (numpy's
        included) inside ``0 .. len(self) - 1``: InvalidInputError when they are not
        integers (``2.7`` is not index 2, ``"2"`` not 2, ``True`` not 1), IndexError
        when one is outside the range (``-1`` is not the last).

        >>> from search.grid_space import GridSpace
        >>> GridSpace({"a": [1, 2]}).checked_indices([2.7])
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: indices must be integers, got [2.7]
        """
        idx = np.asarray(indices)
        if idx.size == 0:
            return np.zeros(0, dtype=np.int64)
        if idx.dtype == object:  # Python ints (past int64, or an object array): integers too
            if not all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
                       for v in idx.flat):
                raise InvalidInputError(f"indices must be integers, got {shown(indices)}")
            low, high = min(int(v) for v in idx.flat), max(int(v) for v in idx.flat)
        elif idx.dtype == bool or not np.issubdtype(idx.dtype, np.integer):
            raise InvalidInputError(f"indices must be integers, got {shown(indices)}")
        else:
            low, high = int(idx.min()), int(idx.max())  # Python ints: no uint64 wrap
        idx = idx.reshape(-1)
        if low < 0 or high >= len(self):
            raise IndexError(f"index {low if low < 0 else high} outside 0..{len(self) - 1}")
        return idx.astype(np.int64)

    def is_valid(self, config: Mapping[str, Any]) -> bool:
        """Whether ``config`` is a member of the space."""
        return self.index(config) is not None

    def sample(self, n: int, rng: np.random.Generator) -> list[int]:
        """``min(n, len(self))`` distinct indices drawn uniformly without replacement."""
        n = check_count("n", n)
        check_type("rng", rng, np.random.Generator)
        size = len(self)
        n = min(n, size)
        if n == 0:
            return []
        if n * 4 < size:  # sparse draw: avoid a permutation of a huge range
            seen: dict[int, None] = {}
            while len(seen) < n:
                for v in rng.integers(0, size, size=2 * (n - len(seen))):
                    seen.setdefault(int(v), None)
                    if len(seen) == n:
                        break
            return list(seen)
        return [int(v) for v in rng.choice(size, size=n, replace=False)]

    def values(self, param: str) -> list:
        """The distinct values ``param`` takes in the space, sorted when comparable.

        The default scans the space; implementations with a value table override it.
        """
        self.param_position(param)
        seen = {self.get(i)[param] for i in range(len(self))}
        try:
            return sorted(seen)
        except TypeError:
            return list(seen)

    def feature_names(self) -> list[str]:
        """Names of the columns of :meth:`features` (the knobs by default)."""
        return list(self.params)

    def features(self, indices: Sequence[int]) -> np.ndarray:
        """A ``(len(indices), n_features)`` float matrix (the knob values by default)."""
        indices = self.checked_indices(indices)  # a scalar or None is no list of indices
        choices = {p: self.values(p) for p in self.params}
        out = np.empty((len(indices), len(self.params)), dtype=float)
        for row, i in enumerate(indices):
            cfg = self.get(i)
            for col, p in enumerate(self.params):
                out[row, col] = knob_value(cfg[p], choices[p])
        return out

    def knobs(self, indices: Sequence[int]) -> np.ndarray:
        """The knob columns of :meth:`features` alone: one row per index, a column per
        parameter, without the analytic features a space may add after them.

        Examples
        --------
        >>> from search.grid_space import GridSpace
        >>> GridSpace({"a": [1, 2], "b": ["x", "y"]}).knobs([3]).tolist()
        [[2.0, 1.0]]
        """
        return self.features(indices)[:, :len(self.params)]

    def describe(self) -> dict:
        """A JSON-able summary of the space."""
        return {"kind": type(self).__name__, "size": len(self), "params": list(self.params)}
