"""iobound.limits at the edges: bools, open interval ends, huge negative numbers.

Reference: the docstrings of check_int ("any integral number but a bool"), parse_int (a
number past the limit is refused before conversion, below or above by its sign) and
check_number (each end included unless ``*_open``), checked on the boundary values.
"""

import math

import pytest

from iobound.errors import InvalidInputError
from iobound.limits import SEED, check_int, check_number, parse_int


@pytest.mark.parametrize("value", [True, False])
def test_check_int_refuses_bools(value):
    with pytest.raises(InvalidInputError, match="must be an integer"):
        check_int("seed", value, SEED)


def test_parse_int_of_a_huge_negative_number_is_below_the_minimum():
    with pytest.raises(InvalidInputError, match="below the minimum 0"):
        parse_int("--seed", "-" + "9" * 5000, SEED)
    with pytest.raises(InvalidInputError, match="above the limit"):
        parse_int("--seed", "9" * 5000, SEED)


@pytest.mark.parametrize("value, low, high, low_open, high_open, ok", [
    (0, 0, 1, False, False, True), (1, 0, 1, False, False, True),
    (0, 0, 1, True, False, False), (1, 0, 1, False, True, False),
    (0.5, 0, 1, True, True, True), (0, 0, math.inf, True, False, False),
    (1, -math.inf, 1, False, True, False),
])
def test_check_number_includes_an_end_unless_it_is_open(value, low, high, low_open, high_open, ok):
    if ok:
        assert check_number("x", value, low, high, low_open=low_open, high_open=high_open) == value
    else:
        with pytest.raises(InvalidInputError, match="x must be a finite number"):
            check_number("x", value, low, high, low_open=low_open, high_open=high_open)


@pytest.mark.parametrize("value", [True, 10 ** 400, -(10 ** 400), math.nan])
def test_check_number_refuses_bools_and_numbers_past_float_range(value):
    """A bool is not a number here; an int too large for a float is not finite."""
    with pytest.raises(InvalidInputError, match="x must be a finite number"):
        check_number("x", value)


def test_seed_limit_is_the_largest_signed_64_bit_integer():
    """Seeds go to SQLite's signed 64-bit integers: int64 max is accepted, one more is not."""
    import numpy as np
    top = int(np.iinfo(np.int64).max)
    assert check_int("seed", top, SEED) == top
    with pytest.raises(InvalidInputError, match="above the limit"):
        check_int("seed", top + 1, SEED)


def test_parse_int_ignores_leading_zeros_when_counting_digits():
    """A long run of leading zeros is still a small number (no early 'too large')."""
    assert parse_int("--seed", "0" * 200 + "7", SEED) == 7
    assert parse_int("--seed", "+" + "0" * 200 + "7", SEED) == 7


@pytest.mark.parametrize("text", ["\u0661\u0662", "\uff11\uff12", "1\u0662"])
def test_parse_int_accepts_ascii_digits_only(text):
    """Arabic-Indic or full-width digits (which int() would take) are not an integer here."""
    with pytest.raises(InvalidInputError, match="is not an integer"):
        parse_int("--seed", text, SEED)
