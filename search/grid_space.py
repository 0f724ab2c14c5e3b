"""The full Cartesian product of value lists: the simplest :class:`~search.space.Space`.

Examples
--------
>>> s = GridSpace({"a": [1, 2, 3], "b": [0, 1]})
>>> len(s), s.get(4), sorted(s.neighbours(0))
(6, {'a': 3, 'b': 0}, [1, 2])
>>> s.index({"a": 3, "b": 0, "c": 1}) is None  # another key: no member
True
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Mapping, Sequence

from iobound import limits
from iobound.errors import InvalidInputError
from search.option_checks import shown

from .space import Space, only_params

__all__ = ["GridSpace"]


class GridSpace(Space):
    """The full Cartesian product of value lists (no constraints); small and exact.

    Neighbours of a config are those that change one parameter to the adjacent
    value in its list. Used by tests and as the simplest example of the contract.

    Parameters
    ----------
    tune_params : mapping
        Parameter name (a string) -> list of distinct hashable values (order kept).
        Anything else (a non-mapping, an empty or unordered value list, an unhashable
        or repeated value, which would repeat configurations) is an InvalidInputError.

    Examples
    --------
    >>> space = GridSpace({"x": [1, 2], "y": [1, 2, 4]})
    >>> len(space), space.get(4), space.index({"x": 2, "y": 2})
    (6, {'x': 2, 'y': 2}, 4)
    """

    def __init__(self, tune_params: Mapping[str, Sequence[Any]]):
        if not isinstance(tune_params, Mapping) or not tune_params:
            raise InvalidInputError("tune_params must be a mapping naming at least one "
                                    f"parameter, got {shown(tune_params)}")
        self._params = tuple(tune_params)
        self._values, self._pos = [], []
        for name, vals in tune_params.items():
            if not isinstance(name, str):
                raise InvalidInputError(f"parameter names must be strings, got {name!r}")
            if (isinstance(vals, (str, bytes, Mapping, set, frozenset))
                    or not hasattr(vals, "__iter__") or getattr(vals, "ndim", 1) == 0):
                raise InvalidInputError(f"parameter {name!r}: the values must be a list, "
                                        f"got {shown(vals)}")
            vals = list(vals)
            if not vals:
                raise InvalidInputError(f"parameter {name!r} has no values")
            pos: dict = {}
            for k, v in enumerate(vals):
                try:
                    if v in pos:
                        raise InvalidInputError(f"parameter {name!r}: value {shown(v)} appears "
                                                "twice (configurations would repeat)")
                except TypeError:
                    raise InvalidInputError(f"parameter {name!r}: value {shown(v)} is not "
                                            "hashable") from None
                pos[v] = k
            self._values.append(vals)
            self._pos.append(pos)
        self._sizes = [len(v) for v in self._values]
        self._len = math.prod(self._sizes)  # Python ints: np.prod wraps past 2^63 silently
        if self._len > limits.SPACE_INDEX.high:
            raise InvalidInputError(
                f"tune_params: the product of the parameters' value counts is "
                f"{self._len:.3g}, past {limits.SPACE_INDEX.reason} (2^63 - 1)")

    @property
    def params(self) -> tuple[str, ...]:
        return self._params

    def __len__(self) -> int:
        return self._len

    def _digits(self, i: int) -> list[int]:
        i = self.checked_index(i)
        digits = []
        for size in reversed(self._sizes):
            i, d = divmod(i, size)
            digits.append(d)
        return digits[::-1]

    def _number(self, digits: Sequence[int]) -> int:
        i = 0
        for d, size in zip(digits, self._sizes):
            i = i * size + d
        return i

    def get(self, i: int) -> dict:
        return {p: vals[d] for p, vals, d in zip(self._params, self._values, self._digits(i))}

    def index(self, config: Mapping[str, Any]) -> int | None:
        try:
            digits = [pos[config[p]] for p, pos in zip(self._params, self._pos)]
        except (KeyError, TypeError):
            return None
        return self._number(digits) if only_params(config, self._params) else None

    def values(self, param: str) -> list:
        return list(self._values[self.param_position(param)])

    def neighbours(self, i: int) -> list[int]:
        digits = self._digits(i)
        out = []
        for k, size in enumerate(self._sizes):
            for step in (-1, 1):
                d = digits[k] + step
                if 0 <= d < size:
                    nd = list(digits)
                    nd[k] = d
                    out.append(self._number(nd))
        return out

    def configs(self):
        """Iterate over all configurations in index order."""
        for combo in itertools.product(*self._values):
            yield dict(zip(self._params, combo))
