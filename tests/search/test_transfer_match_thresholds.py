"""The match thresholds of the history prior compare the match score itself, whatever
``omega`` (search/transfer/sources.py, prior.py; PriorOptions' documentation).

Reference: Mu et al.'s match score (search/strategies/gga_history.match_score); ``omega``
is only the exponent of a source's weight. Before, the thresholds were raised to ``omega``
too, and with ``omega = 0`` both sides were 1: no source was ever dropped and every one
entered the consensus.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from search.strategies.gga_history import match_score
from search.transfer import HistoryPrior, PriorOptions
from search.transfer.prior import source_groups
from tests.search.test_transfer import SPACE, _bowl, _hist

PROBLEMS = [(64, 64), (64, 48), (32, 64), (7, 9), (60, 60)]
TARGET = [64, 64]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([0.0, 0.5, 1.0, 2.0, 4.0]), st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]))
def test_a_source_is_kept_exactly_when_its_match_reaches_min_match(omega, min_match):
    hist = [r for k, p in enumerate(PROBLEMS) for r in _hist(f"d{k}", _bowl((1, 1, 1)), problem=p)]
    groups = source_groups(SPACE, hist, TARGET, PriorOptions(omega=omega, min_match=min_match))
    want = {f"d{k}" for k, p in enumerate(PROBLEMS) if match_score(list(p), TARGET) >= min_match}
    assert {g.device for g in groups} == want
    for g in groups:
        assert g.match == match_score(list(PROBLEMS[int(g.device[1:])]), TARGET)
        assert g.weight == g.match ** omega


def test_omega_zero_keeps_a_near_source_out_of_a_consensus_of_exact_matches():
    """``consensus_match=1``: only sources of the target's own problem enter the
    consensus, also when every source weighs the same (``omega=0``)."""
    hist = _hist("same", _bowl((1, 1, 1))) + _hist("near", _bowl((6, 4, 2)), problem=(64, 48))
    assert match_score([64, 48], TARGET) < 1.0
    theirs = SPACE.index({"a": 6, "b": 4, "c": 2})
    at = [HistoryPrior.fit(SPACE, hist, TARGET, PriorOptions(consensus_match=1.0, omega=w),
                           seed=0).consensus.tolist().index(theirs) for w in (2.0, 0.0)]
    assert at[0] == at[1]
