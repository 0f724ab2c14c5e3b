"""iobound.limits: every typed integer is range-checked before it is used."""

import pytest
from hypothesis import given, strategies as st

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.layer_spec import parse_layer_spec
from iobound.units import fast_memory_words

ALL_LIMITS = [v for v in vars(limits).values() if isinstance(v, limits.Limit)]


def test_every_limit_states_its_reason():
    """Each limit is a non-empty range with a reason (the one place they are written)."""
    assert len(ALL_LIMITS) >= 15
    for lim in ALL_LIMITS:
        assert lim.low <= lim.high and len(lim.reason) > 10


@given(st.one_of(st.integers(-(2 ** 80), 2 ** 80).map(str), st.text(max_size=30)),
       st.sampled_from(ALL_LIMITS))
def test_parse_int_returns_in_range_or_refuses(text, limit):
    """parse_int gives a value inside the limit or an InvalidInputError naming the field."""
    try:
        value = limits.parse_int("--field", text, limit)
    except InvalidInputError as exc:
        assert "--field" in str(exc) and "\n" not in str(exc)
    else:
        assert limit.low <= value <= limit.high


def test_parse_int_does_not_convert_thousands_of_digits():
    """A 100,000-digit number is refused by its length (Python's int() would refuse it
    with an unrelated message)."""
    with pytest.raises(InvalidInputError, match="above the limit"):
        limits.parse_int("--seed", "9" * 100_000, limits.SEED)


@pytest.mark.parametrize("field,limit", [("c_in", limits.CHANNELS), ("h_in", limits.SPATIAL),
                                         ("n", limits.BATCH), ("k_h", limits.KERNEL)])
def test_layer_field_past_its_limit_is_refused(field, limit):
    """A layer field one past its limit names the field and the limit."""
    base = dict(n=1, c_in=2, h_in=8, w_in=8, c_out=2, k_h=3, k_w=3)
    base[field] = limit.high + 1
    if field == "k_h":
        base.update(h_in=limit.high + 1)
    with pytest.raises(InvalidInputError, match=f"{field}=.*limit {limit.high}"):
        ConvLayer(**base)


def test_macs_past_float_exactness_are_refused():
    """Fields each within range whose MAC count passes 2^53 are refused."""
    with pytest.raises(InvalidInputError, match="MACs"):
        ConvLayer(n=1 << 16, c_in=1 << 16, h_in=64, w_in=64, c_out=1 << 16, k_h=1, k_w=1)


@pytest.mark.parametrize("spec,needle", [
    ("cin=99999999999999999999999,hin=6,cout=2,kh=3", "cin"),
    ("cin=2,hin=6,cout=2,kh=3,stride=1x" + "9" * 5000, "stride"),
    ("cin=2,hin=6,cout=2,kh=3,pad=2147483648", "pad"),
    ("cin=2,hin=\u0663,cout=2,kh=3", "hin"),
])
def test_layer_spec_numbers_of_any_size(spec, needle):
    """Huge, thousands-of-digits and non-ASCII numbers in a layer spec: one line naming the key."""
    with pytest.raises(InvalidInputError, match=needle):
        parse_layer_spec(spec)


@given(st.one_of(st.integers(0, 10 ** 30).map(str),
                 st.tuples(st.integers(0, 10 ** 30), st.sampled_from(["KiB", "MB", "B", "GiB"]))
                 .map(lambda t: f"{t[0]}{t[1]}"),
                 st.text(max_size=12)))
def test_fast_memory_is_in_range_or_refused(text):
    """Any text: a word count within FAST_MEMORY_WORDS, or InvalidInputError (never an
    OverflowError from float arithmetic)."""
    try:
        words = fast_memory_words(text)
    except InvalidInputError:
        return
    assert limits.FAST_MEMORY_WORDS.low <= words <= limits.FAST_MEMORY_WORDS.high
