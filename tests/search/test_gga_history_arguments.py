"""Guided GA's history filter (search/strategies/gga_history.py) with hostile numbers.

References: Python's equality of numbers (a numpy integer or 64.0 is the problem 64, as
the tuning database keys problems), and the option checks of ``GuidedGAOptions``
(omega a finite number >= 0, min_match in [0, 1]).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.grid_space import GridSpace
from search.strategies.gga_history import filter_history, match_score


@pytest.mark.parametrize("problem", [[np.int64(64), np.int64(32)], [64.0, 32.0],
                                     (np.int32(64), 32)])
def test_a_problem_written_with_other_number_types_scores_as_the_same(problem):
    assert match_score(problem, [64, 16]) == match_score([64, 32], [64, 16]) > 0
    assert match_score(problem, [64, 32]) == 1.0


@pytest.mark.parametrize("name, value", [("min_match", math.nan), ("min_match", 1.5),
                                         ("min_match", -0.1), ("omega", math.nan),
                                         ("omega", -1.0), ("omega", math.inf)])
def test_filter_options_are_checked_as_the_guided_ga_options(name, value):
    with pytest.raises(InvalidInputError, match=name):
        filter_history(GridSpace({"a": [1, 2]}), [], [8], **{name: value})
