"""What counts as a measured time read back from a file (search.times).

Reference: the module's rule written out independently: a real number that is no bool,
finite and > 0 (compared exactly, as a Fraction where it is an integer too large for a
float); the message about a refused time shows the value whole up to 40 characters and
cut to 37 plus '...' past that.
"""

from __future__ import annotations

import math

from hypothesis import given, settings, strategies as st

from search.times import as_time, bad_time_reason


def _is_time(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, int):
        return 0 < value <= 1.7976931348623157e308
    return math.isfinite(value) and value > 0


values = (st.integers(-10, 10) | st.integers(min_value=1 << 1023, max_value=1 << 1100)
          | st.floats(allow_nan=True, allow_infinity=True) | st.booleans() | st.text(max_size=3)
          | st.none())


@settings(max_examples=60, deadline=None)
@given(values)
def test_a_time_is_a_positive_finite_number(value):
    """as_time gives the value as a float exactly when the rule holds."""
    got = as_time(value)
    if _is_time(value):
        assert got == float(value) and isinstance(got, float)
    else:
        assert got is None


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=0, max_size=60))
def test_the_refused_value_is_shown_whole_up_to_40_characters(text):
    """repr of the value, whole when at most 40 characters, else its first 37 and '...'."""
    shown = repr(text)
    want = shown if len(shown) <= 40 else shown[:37] + "..."
    assert bad_time_reason(text) == f"time {want} is not a positive finite number"
    assert bad_time_reason(-3.5, "cost") == "cost -3.5 is not a positive finite number"
