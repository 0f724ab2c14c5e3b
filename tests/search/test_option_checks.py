"""Option dataclasses of the history strategies refuse NaN, infinities, non-integers and
non-bools when they are made, naming the field.

Before, ``<`` comparisons let NaN through and nothing checked types: ``match=inf`` gave
NaN weights, ``source_features=2.5`` a TypeError rounds later, ``doubt=nan`` silently
stopped history after one round, ``lottery="no"`` was truthy, ``omega=nan`` emptied the
consensus, ``max_depth=nan`` was an XGBoostError.
"""

from __future__ import annotations

import math

import pytest

from iobound.errors import InvalidInputError
from search.option_checks import check_count, check_flag, check_number
from search.strategies.gga import GuidedGAOptions
from search.strategies.zero_shot import ZeroShotStrategyOptions
from search.transfer import GuidedOptions, PriorOptions
from search.zero_shot import ZeroShotOptions

NAN, INF = math.nan, math.inf

BAD = [
    (GuidedOptions, "decay", [NAN, INF, -0.1, 1.0, "0.5", True]),
    (GuidedOptions, "doubt", [NAN, 2.5, -1, True, "1"]),
    (GuidedOptions, "source_features", [NAN, 2.5, -1, False]),
    (GuidedOptions, "first_rounds", [NAN, 1.5, 0, True]),
    (GuidedOptions, "match", [NAN, INF, -1.0]),
    (GuidedOptions, "trust", [NAN, INF, -INF, "high"]),
    (GuidedOptions, "trust_alpha", [NAN, 0.0, 1.5]),
    (GuidedOptions, "feature_alpha", [NAN, 0.0, -0.1, 1.5, "0.05"]),
    (GuidedOptions, "lottery", ["no", 1, 0, None]),
    (GuidedOptions, "prior_feature", ["yes", 1]),
    (GuidedOptions, "follow_model", ["yes", 1]),
    (GuidedOptions, "model_picks", ["sometimes", 1, None]),
    (PriorOptions, "omega", [NAN, INF, -1.0]),
    (PriorOptions, "min_match", [NAN, 1.5]),
    (PriorOptions, "consensus_match", [NAN, -0.5]),
    (PriorOptions, "max_candidates", [2.5, NAN, 0, True]),
    (PriorOptions, "n_estimators", [2.5, NAN, 0]),
    (PriorOptions, "max_depth", [NAN, 2.5, 0, True]),
    (ZeroShotOptions, "k", [NAN, 2.5, 0, True]),
    (ZeroShotOptions, "candidates", [NAN, 20.5, 5, True]),
    (ZeroShotStrategyOptions, "candidates", [NAN, 2.5, 0, True]),
    (GuidedGAOptions, "omega", [NAN, INF, -1.0]),
    (GuidedGAOptions, "min_match", [NAN, 1.5]),
    (GuidedGAOptions, "elite", [NAN, 2.5, 0, True]),
    (GuidedGAOptions, "crossover", [NAN, INF, 1.5]),
    (GuidedGAOptions, "elite_mutation", [NAN, -0.1]),
    (GuidedGAOptions, "explore", [NAN, 2]),
    (GuidedGAOptions, "seed_share", [NAN, INF]),
]


@pytest.mark.parametrize("cls, field, value", [(c, f, v) for c, f, vals in BAD for v in vals],
                         ids=lambda x: x.__name__ if isinstance(x, type) else repr(x))
def test_bad_values_are_refused_naming_the_field(cls, field, value):
    """Each bad value: InvalidInputError at construction, its message naming the field."""
    kw = {"k": 10} if cls is ZeroShotOptions and field == "candidates" else {}
    with pytest.raises(InvalidInputError, match=field):
        cls(**kw, **{field: value})


@pytest.mark.parametrize("cls, kw", [
    (GuidedOptions, {"decay": 0, "doubt": 0, "match": 0, "trust": 1.5, "trust_alpha": 1,
                     "lottery": True, "prior_feature": False, "source_features": 0}),
    (PriorOptions, {"omega": 0, "min_match": 1, "consensus_match": 0.0, "max_depth": 1}),
    (ZeroShotOptions, {"k": 1, "candidates": 1}),
    (ZeroShotStrategyOptions, {"candidates": None}),
    (GuidedGAOptions, {"omega": 3, "min_match": 0, "elite": 1, "crossover": 1, "explore": 0}),
])
def test_valid_values_are_kept_as_given(cls, kw):
    """Edges of each range, ints for float fields: accepted and stored unchanged."""
    opts = cls(**kw)
    assert all(getattr(opts, k) == v and type(getattr(opts, k)) is type(v) for k, v in kw.items())


def test_helpers_name_the_field_and_the_value():
    """The shared checks: counts are ints (not bools), numbers finite and in range, flags bools."""
    assert check_count("n", 3, low=1) == 3 and check_number("x", 1, 0, 1) == 1
    assert check_flag("f", False) is False
    refused = [(lambda: check_count("n", True), "n must be an integer, got True"),
               (lambda: check_number("x", 10**400, 0), "x must be a finite number >= 0"),
               (lambda: check_number("x", 1.0, 0, 1, high_open=True), r"in \[0, 1\), got 1.0"),
               (lambda: check_number("x", 0, 0, 1, low_open=True), r"in \(0, 1\], got 0"),
               (lambda: check_flag("f", 1), "f must be True or False, got 1")]
    for call, text in refused:
        with pytest.raises(InvalidInputError, match=text):
            call()
