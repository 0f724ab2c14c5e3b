"""Walking a prior's ranked lists in turn: the history rounds' picks.

:class:`Picker` holds one cursor per list (the prior's order, then each source's own,
fastest first, :meth:`search.transfer.prior.HistoryPrior.picker`) and gives the next
unasked candidate of each list round robin, so that every device's opinion is heard before
any is heard twice; the turn carries over between calls, so a run's rounds continue one
cycle.

Examples
--------
>>> import numpy as np
>>> p = Picker([np.array([2, 0, 1]), np.array([2, 5]), np.array([7])])
>>> p.picks(3, asked=set())  # list 0's best, list 1's best not yet taken, list 2's
[2, 5, 7]
>>> p.picks(2, asked={0})
[1]
>>> Picker([np.array([3])], names=["ranking"]).picks(1, set())
[3]
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from iobound.errors import InvalidInputError

from ..option_checks import check_count, check_records, shown
from .checks import check_index_set, check_order

__all__ = ["Picker"]


class Picker:
    """Walks the prior's ranked lists round robin, skipping what was asked (see module doc).
    The turn carries over between calls: a run's rounds continue one cycle. ``origin``
    maps each pick to the position of the list it came from; ``names`` says what each list
    is (its position by default).

    >>> p = Picker([np.array([2, 0]), np.array([5, 2])], names=["consensus", "gpu0"])
    >>> p.picks(4, asked=set()), p.name_of(5), p.name_of(9), len(p)  # 9: never picked
    ([2, 5, 0], 'gpu0', None, 2)
    """

    def __init__(self, lists: list[np.ndarray], names: list[str] | None = None):
        if (isinstance(lists, (str, bytes, Mapping))
                or not isinstance(lists, (Sequence, np.ndarray))):
            raise InvalidInputError(f"lists must be a sequence of orders (configuration "
                                    f"indices), got {shown(lists)}")
        lists = [check_order(f"lists[{k}]", lst) for k, lst in enumerate(lists)]
        if names is not None:
            names = list(check_records("names", names, str))
            if len(names) != len(lists):
                raise InvalidInputError(f"names: {len(names)} names for {len(lists)} lists")
        self.lists = lists
        self.names = names if names is not None else [str(k) for k in range(len(lists))]
        self._pos = [0] * len(lists)
        self._turn = 0
        self.origin: dict[int, int] = {}

    def __len__(self) -> int:
        """The number of lists walked."""
        return len(self.lists)

    def name_of(self, index: int) -> str | None:
        """The name of the list ``index`` was picked from; ``None`` if it was not picked."""
        k = self.origin.get(index)
        return None if k is None else self.names[k]

    def picks(self, n: int, asked: set[int]) -> list[int]:
        """Up to ``n`` (a count) candidates not in ``asked`` (a collection of indices): each
        list's next best in turn.

        >>> Picker([np.array([1, 2])]).picks(1.5, set())
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: n must be an integer, got 1.5
        """
        check_count("n", n)
        out: list[int] = []
        taken = check_index_set("asked", asked)
        idle = 0  # lists in a row with nothing left
        while len(out) < n and idle < len(self.lists):
            k, lst = self._turn, self.lists[self._turn]
            self._turn = (k + 1) % len(self.lists)
            while self._pos[k] < len(lst) and int(lst[self._pos[k]]) in taken:
                self._pos[k] += 1
            if self._pos[k] == len(lst):
                idle += 1
                continue
            idle = 0
            out.append(int(lst[self._pos[k]]))
            self.origin[out[-1]] = k
            taken.add(out[-1])
            self._pos[k] += 1
        return out
