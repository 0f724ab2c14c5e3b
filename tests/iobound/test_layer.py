"""ConvLayer: derived sizes, reuse factors and validation."""

import math

import pytest
from iobound.errors import InvalidInputError
from hypothesis import given, strategies as st

from iobound import ConvLayer, parse_layer_spec, fast_memory_words


def _brute_reuse_max(layer: ConvLayer) -> int:
    """Largest number of (window, tap) pairs that read one padded-input position."""
    def axis(k, mu, d, n_out, size):
        counts = {}
        for o in range(n_out):
            for i in range(k):
                p = o * mu + i * d
                counts[p] = counts.get(p, 0) + 1
        return max(counts.values())
    return axis(layer.k_h, layer.stride[0], layer.dilation[0], layer.h_out, layer.h_in) * axis(
        layer.k_w, layer.stride[1], layer.dilation[1], layer.w_out, layer.w_in)


@st.composite
def layers(draw):
    k_h, k_w = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    d = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    s = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    p = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    ext_h, ext_w = (k_h - 1) * d[0] + 1, (k_w - 1) * d[1] + 1
    h = draw(st.integers(max(1, ext_h - 2 * p[0]), 40))
    w = draw(st.integers(max(1, ext_w - 2 * p[1]), 40))
    return ConvLayer(n=1, c_in=2, h_in=h, w_in=w, c_out=3, k_h=k_h, k_w=k_w,
                     stride=s, padding=p, dilation=d)


@given(layers())
def test_output_size_matches_window_count(layer):
    """h_out counts the windows that fit in the padded input."""
    ph = layer.h_in + 2 * layer.padding[0]
    assert layer.h_out == sum(
        1 for o in range(ph) if o % layer.stride[0] == 0 and o + layer.extent_h <= ph)


@given(layers())
def test_reuse_max_is_at_least_the_brute_force_count(layer):
    """reuse_max bounds the real maximum sharing, and equals it once enough windows exist."""
    brute = _brute_reuse_max(layer)
    assert brute <= layer.reuse_max
    big = layer.replace(h_in=layer.h_in + 60, w_in=layer.w_in + 60)
    assert _brute_reuse_max(big) == big.reuse_max


def test_alexnet_conv1_reuse_factors():
    """Stride 4 does not divide 11: average 7.56 < maximum 9 (DESIGN.md erratum)."""
    l = parse_layer_spec("alexnet.conv1")
    assert math.isclose(l.reuse_paper, 121 / 16)
    assert l.reuse_max == 9


@pytest.mark.parametrize("field,kwargs", [
    ("c_in", dict(c_in=0)), ("h_in", dict(h_in=-1)), ("stride", dict(stride=0)),
    ("padding", dict(padding=(-1, 0))), ("k_h", dict(k_h=9)), ("n", dict(n=True)),
])
def test_invalid_layers_name_the_field(field, kwargs):
    base = dict(n=1, c_in=2, h_in=5, w_in=5, c_out=2, k_h=3, k_w=3)
    base.update(kwargs)
    with pytest.raises(ValueError, match=field):
        ConvLayer(**base)


def test_winograd_applicability_names_the_reason():
    with pytest.raises(ValueError, match="stride"):
        parse_layer_spec("alexnet.conv1").check_winograd()
    with pytest.raises(ValueError, match="square"):
        parse_layer_spec("cin=2,hin=8,cout=2,kh=3,kw=5").check_winograd()
    assert parse_layer_spec("alexnet.conv3").winograd_applicable


def test_layer_spec_pairs_and_defaults():
    l = parse_layer_spec("cin=3 hin=10 win=12 cout=4 kh=3 kw=1 stride=2x1 pad=1x0")
    assert (l.n, l.w_in, l.k_w, l.stride, l.padding) == (1, 12, 1, (2, 1), (1, 0))


@given(st.lists(st.sampled_from(["", " ", "  ", "\t"]), min_size=12, max_size=12))
def test_layer_spec_allows_blanks_around_equals(blanks):
    """"cin = 3, hin = 10" is the layer "cin=3,hin=10" (it was refused as "'cin' is not
    key=value", though the user wrote cin = 3)."""
    pairs = [("cin", "3"), ("hin", "10"), ("cout", "4"), ("kh", "3"), ("stride", "2x1"),
             ("pad", "1")]
    spec = ", ".join(f"{k}{blanks[2 * i]}={blanks[2 * i + 1]}{v}" for i, (k, v) in enumerate(pairs))
    assert parse_layer_spec(spec) == parse_layer_spec(",".join(f"{k}={v}" for k, v in pairs))


@pytest.mark.parametrize("spec,msg", [
    ("cin=3,hin=10,cout=4", "missing kh"), ("cin=3,hin=10,cout=4,kh=3,foo=1", "unknown key 'foo'"),
    ("cin=x,hin=10,cout=4,kh=3", "cin='x'"), ("cin=3,hin=10,cout=4,kh=3,stride=1x2x3", "stride"),
])
def test_layer_spec_errors(spec, msg):
    with pytest.raises(ValueError, match=msg):
        parse_layer_spec(spec)


def test_round_trip_dict():
    l = parse_layer_spec("alexnet.conv2")
    assert ConvLayer.from_dict(l.to_dict()) == l


@pytest.mark.parametrize("text,dtype,words", [
    ("48KiB", "fp32", 12288), ("12288", "fp32", 12288), ("96KiB", "fp16", 49152), ("1MB", "fp64", 125000),
])
def test_fast_memory_units(text, dtype, words):
    assert fast_memory_words(text, dtype) == words


@pytest.mark.parametrize("text", ["48 parsecs", "0", "1B", "-3KiB"])
def test_fast_memory_rejects(text):
    with pytest.raises(ValueError):
        fast_memory_words(text)


_SIZE_FIELDS = ("n", "c_in", "h_in", "w_in", "c_out", "k_h", "k_w")


@st.composite
def invalid_layer_kwargs(draw):
    """A valid layer's fields with one of them made invalid; returns (kwargs, field)."""
    kwargs = dict(n=draw(st.integers(1, 3)), c_in=draw(st.integers(1, 8)),
                  h_in=draw(st.integers(5, 30)), w_in=draw(st.integers(5, 30)),
                  c_out=draw(st.integers(1, 8)), k_h=draw(st.integers(1, 5)),
                  k_w=draw(st.integers(1, 5)), stride=(1, 1), padding=(0, 0), dilation=(1, 1))
    kind = draw(st.sampled_from(("size", "type", "pair", "kernel")))
    if kind == "size":
        field = draw(st.sampled_from(_SIZE_FIELDS))
        kwargs[field] = draw(st.integers(-5, 0))
    elif kind == "type":
        field = draw(st.sampled_from(_SIZE_FIELDS))
        kwargs[field] = draw(st.sampled_from((True, 2.0, "3", None)))
    elif kind == "pair":
        field = draw(st.sampled_from(("stride", "padding", "dilation")))
        low = -1 if field == "padding" else 0
        bad = draw(st.integers(-4, low))
        kwargs[field] = draw(st.sampled_from(((bad, 1), (1, bad), bad, (1, 2, 3), 1.5)))
    else:
        field = draw(st.sampled_from(("k_h", "k_w")))
        axis_in = kwargs["h_in"] if field == "k_h" else kwargs["w_in"]
        kwargs[field] = axis_in + draw(st.integers(1, 5))   # larger than the (unpadded) input
    return kwargs, field


@given(invalid_layer_kwargs())
def test_any_invalid_layer_is_rejected_naming_the_field(case):
    """Property: one invalid field (size <= 0, wrong type, bad stride/padding/dilation,
    kernel larger than the padded input) is a ValueError whose message names that field."""
    kwargs, field = case
    with pytest.raises(ValueError, match=rf"^{field}\b"):
        ConvLayer(**kwargs)


@given(layers(), st.sampled_from(("stride", "square", "dilation")))
def test_winograd_inapplicable_layers_rejected(layer, why):
    """Property: stride != 1, k_h != k_w or dilation != 1 makes check_winograd raise,
    naming the reason; a stride-1, square, undilated layer passes."""
    base = layer.replace(stride=(1, 1), dilation=(1, 1), k_w=layer.k_h,
                         w_in=max(layer.w_in, layer.k_h))
    base.check_winograd()
    if why == "stride":
        bad = base.replace(stride=(1, 2))
    elif why == "square":
        bad = base.replace(k_w=base.k_h + 1, w_in=base.w_in + 1)
    else:
        bad = base.replace(dilation=(2, 1), h_in=base.h_in + base.k_h)
    with pytest.raises(ValueError, match=why):
        bad.check_winograd()
    assert not bad.winograd_applicable


def test_groups_divide_channels_and_scale_macs_and_weights():
    dense = ConvLayer(n=1, c_in=8, h_in=6, w_in=6, c_out=12, k_h=3, k_w=3)
    grouped = dense.replace(groups=4)
    assert (grouped.c_in_per_group, grouped.c_out_per_group) == (2, 3)
    assert grouped.macs * 4 == dense.macs
    assert grouped.weight_size * 4 == dense.weight_size
    assert grouped.input_size == dense.input_size and grouped.output_size == dense.output_size
    assert ConvLayer.from_dict(grouped.to_dict()) == grouped != dense
    assert not grouped.depthwise and dense.replace(c_out=8, groups=8).depthwise


@pytest.mark.parametrize("groups, fragment", [(0, "groups must be >= 1"), (3, "groups=3 must divide"),
                                              (True, "groups must be an integer")])
def test_bad_groups_are_named(groups, fragment):
    with pytest.raises(InvalidInputError, match=fragment):
        ConvLayer(n=1, c_in=8, h_in=6, w_in=6, c_out=12, k_h=3, k_w=3, groups=groups)


@pytest.mark.parametrize("name", ["a\x00b", "a\nb", "x" * 201, "\u00fc" * 101])
def test_a_name_no_file_can_carry_is_refused(name):
    """Kernel files and logs are named after a layer: a control character or a name past
    LAYER_NAME_BYTES (UTF-8) failed only after the whole budget was measured."""
    from iobound.errors import InvalidInputError
    with pytest.raises(InvalidInputError, match="name must be printable and at most 200 bytes"):
        ConvLayer(n=1, c_in=2, h_in=5, w_in=5, c_out=2, k_h=3, k_w=3, name=name)
    ConvLayer(n=1, c_in=2, h_in=5, w_in=5, c_out=2, k_h=3, k_w=3, name="ok \u00fc")
