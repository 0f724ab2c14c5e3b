"""iobound.limits: every typed integer is range-checked before it is used."""

import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.layer_spec import parse_layer_spec
from iobound.units import fast_memory_words
from iobound.winograd_transforms import winograd_transforms
from iobound.winograd_vertex_counts import winograd_counts, winograd_vertex_count

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


INT_KINDS = [np.int64, np.int32, np.int16, np.uint8, np.intp]


@given(st.sampled_from(INT_KINDS), st.integers(1, 100), st.integers(1, 3), st.integers(0, 2))
def test_a_layer_of_numpy_integers_is_the_layer_of_their_ints(kind, cin, k, pad):
    """Property: numpy integers (sizes read from an array) make the same layer as the ints,
    stored as ints (JSON-ready); they were refused as 'must be an integer'."""
    plain = ConvLayer(n=1, c_in=cin, h_in=8, w_in=8, c_out=2, k_h=k, k_w=k, padding=pad, groups=1)
    made = ConvLayer(n=kind(1), c_in=kind(cin), h_in=kind(8), w_in=8, c_out=kind(2), k_h=kind(k),
                     k_w=k, stride=kind(1), padding=(kind(pad), pad), groups=kind(1))
    assert made == plain and made.to_dict() == plain.to_dict()
    assert all(type(v) is int for v in (made.n, made.c_in, made.k_h, made.groups, *made.stride,
                                         *made.padding))
    json.dumps(made.to_dict())


@pytest.mark.parametrize("value", [np.float64(4.0), np.bool_(True), True, 4.0])
def test_numpy_floats_and_bools_are_no_layer_sizes(value):
    """A float (numpy's too) or a bool is no integer, numpy or not."""
    with pytest.raises(InvalidInputError, match="c_in"):
        ConvLayer(n=1, c_in=value, h_in=8, w_in=8, c_out=2, k_h=3, k_w=3)


@pytest.mark.parametrize("bad", [True, 2.0, np.float64(2.0), [2]])
def test_winograd_arguments_are_checked_behind_no_cache(bad):
    """The caches compared keys by equality: after F(2, 3) or e=1 was cached, ``e=True``
    was answered with e=1 and ``e=2.0`` with e=2 (a list was 'unhashable type')."""
    layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3)
    winograd_transforms(1, 3), winograd_transforms(2, 3)
    winograd_vertex_count(layer, 1), winograd_vertex_count(layer, 2)
    winograd_counts(layer, 1), winograd_counts(layer, 2)
    calls = [lambda: winograd_transforms(bad, 3), lambda: winograd_transforms(2, bad),
             lambda: winograd_vertex_count(layer, bad)]
    if not isinstance(bad, list):  # the internal per-tile counts are cached typed only
        calls.append(lambda: winograd_counts(layer, bad))
    for call in calls:
        with pytest.raises(InvalidInputError, match="must be an integer"):
            call()
    assert winograd_vertex_count(layer, np.int64(2)) == winograd_vertex_count(layer, 2)


LAYER_DICT = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1).to_dict()


def test_layer_from_dict_missing_keys_and_single_int_pairs():
    """from_dict names the missing fields (was KeyError) and takes an int for a pair field
    as the constructor does (stride=2 was a TypeError); a non-mapping is named too."""
    with pytest.raises(InvalidInputError, match="layer dict is missing k_h, k_w"):
        ConvLayer.from_dict({k: v for k, v in LAYER_DICT.items() if k not in ("k_h", "k_w")})
    with pytest.raises(InvalidInputError, match="must be a mapping"):
        ConvLayer.from_dict(None)
    layer = ConvLayer.from_dict({**LAYER_DICT, "stride": 2, "padding": 1, "dilation": 1})
    assert layer == ConvLayer(1, 4, 8, 8, 8, 3, 3, stride=(2, 2), padding=(1, 1))
    assert ConvLayer.from_dict(json.loads(json.dumps(LAYER_DICT))) == ConvLayer.from_dict(LAYER_DICT)


def test_layer_replace_of_an_unknown_field_is_named():
    """replace(foo=1) was a TypeError from __init__."""
    with pytest.raises(InvalidInputError, match="ConvLayer has no field foo"):
        ConvLayer(1, 4, 8, 8, 8, 3, 3).replace(foo=1)


@given(st.integers(min_value=limits.FAST_MEMORY_WORDS.high + 1),
       st.integers(min_value=limits.WINOGRAD_E.high + 1))
def test_bound_report_s_and_e_have_upper_limits(s, e):
    """S above FAST_MEMORY_WORDS and e above WINOGRAD_E are refused by name (e=10**30 was
    an OverflowError; S had no upper limit)."""
    from iobound.report import bound_report

    layer = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1)
    with pytest.raises(InvalidInputError, match="fast memory S"):
        bound_report(layer, s)
    with pytest.raises(InvalidInputError, match="Winograd output tile e"):
        bound_report(layer, 1024, "winograd", e=e)


@pytest.mark.parametrize("value", [None, 5, b"fp32", ["fp32"], 2.5])
def test_names_must_be_strings(value):
    """Preset names, layer specs, dtypes and device names that are not strings are an
    InvalidInputError (were AttributeError/TypeError, or returned unchanged)."""
    from iobound.devices import canonical_device_name, get_device
    from iobound.networks import get_layer, network_layers
    from iobound.units import dtype_bytes

    for call in (get_layer, network_layers, parse_layer_spec, dtype_bytes, canonical_device_name,
                 lambda v: get_device("v100").shared_mem_per_block_words(dtype=v),
                 lambda v: fast_memory_words(1024, dtype=v)):
        with pytest.raises(InvalidInputError, match="must be a string"):
            call(value)


def test_fast_memory_in_words_still_checks_the_dtype():
    """fast_memory_words(1024, dtype='garbage') ignored the dtype."""
    for size in (1024, "1024"):
        with pytest.raises(InvalidInputError, match="unknown dtype 'garbage'"):
            fast_memory_words(size, dtype="garbage")
    assert fast_memory_words(1024, dtype="fp16") == 1024
