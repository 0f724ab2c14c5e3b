"""search.option_checks at its documented edges: ``shown`` keeps a repr of at most 60
characters whole, and ``check_records`` refuses strings and mappings (iterable, but not
sequences of records) by name."""

from __future__ import annotations

import pytest

from iobound.errors import InvalidInputError
from search.option_checks import check_records, shown


def test_shown_keeps_a_repr_of_exactly_60_characters():
    text = "x" * 58  # its repr has 60 characters
    assert shown(text) == repr(text) and len(shown(text + "y")) == 60


@pytest.mark.parametrize("value", ["12", b"12", {1: 2}])
def test_check_records_refuses_strings_and_mappings(value):
    with pytest.raises(InvalidInputError, match="sizes must be a sequence of builtins.int records"):
        check_records("sizes", value, int)


def test_a_count_is_a_signed_64_bit_integer():
    from search.option_checks import check_count
    assert check_count("n", 2 ** 63 - 1) == 2 ** 63 - 1
    with pytest.raises(InvalidInputError, match=r"^n=9223372036854775808 is above the limit"):
        check_count("n", 2 ** 63)
