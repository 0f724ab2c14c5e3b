"""The transfer options' choices and ranges at their edges
(:class:`~search.transfer.guided_options.GuidedOptions`,
:class:`~search.transfer.prior_options.PriorOptions`).

Reference: the attribute docs. ``escape`` is one of the stall sources or None, ``share``
one of :data:`SHARES`, ``model_picks`` one of :data:`MODEL_PICKS`; ``min_match`` and
``consensus_match`` lie in [0, 1] and ``omega`` is at least 0; every count is an integer
of at least 1; anything else is an InvalidInputError naming the field.
"""

from __future__ import annotations

import math

import pytest

from iobound.errors import InvalidInputError
from search.strategies.stall import SOURCES
from search.transfer.guided_options import MODEL_PICKS, SHARES, GuidedOptions, guided_options
from search.transfer.prior_options import PriorOptions


@pytest.mark.parametrize("field, allowed", [("escape", (*SOURCES, None)), ("share", SHARES),
                                            ("model_picks", MODEL_PICKS)])
def test_each_documented_choice_is_taken_and_nothing_else(field, allowed):
    for value in allowed:
        assert getattr(GuidedOptions(**{field: value}), field) == value
    for bad in ("tabu", "", 1, "ALL" if field == "share" else "Far"):
        with pytest.raises(InvalidInputError, match=field):
            GuidedOptions(**{field: bad})


def test_guided_options_are_taken_as_they_are():
    o = GuidedOptions(decay=0.5, escape=None)
    assert guided_options(o) is o


@pytest.mark.parametrize("field, good, bad", [
    ("min_match", [0, 0.5, 1], [-0.1, 1.01, math.inf]),
    ("consensus_match", [0, 1], [-0.5, 1.5, math.inf]),
    ("omega", [0, 2.0, 1e6], [-1e-9, math.inf]),
])
def test_prior_numbers_keep_to_their_ranges(field, good, bad):
    for v in good:
        assert getattr(PriorOptions(**{field: v}), field) == v
    for v in bad:
        with pytest.raises(InvalidInputError, match=field):
            PriorOptions(**{field: v})


@pytest.mark.parametrize("field", ["max_candidates", "n_estimators", "max_depth",
                                   "max_rows_per_source", "max_rows"])
def test_prior_counts_are_integers_from_one(field):
    assert getattr(PriorOptions(**{field: 1}), field) == 1
    for v in (0, -3, 2.5, True):
        with pytest.raises(InvalidInputError, match=field):
            PriorOptions(**{field: v})
