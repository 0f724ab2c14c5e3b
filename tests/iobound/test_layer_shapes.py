"""ConvLayer validation and derived sizes against brute force and DESIGN.md.

References: window counting by enumeration (output width), DESIGN.md's rule that an invalid
layer raises naming the field, and the docstrings of ``groups`` (divides c_in and c_out) and
``depthwise`` (more than one group, one input channel each).
"""

import pytest
from hypothesis import given, settings, strategies as st

from iobound import ConvLayer
from iobound.errors import InvalidInputError


@pytest.mark.parametrize("kwargs, field", [
    (dict(h_in=4, w_in=8, k_h=5, k_w=3), "k_h"), (dict(h_in=8, w_in=4, k_h=3, k_w=5), "k_w"),
    (dict(h_in=4, w_in=8, k_h=7, k_w=3, padding=(1, 0)), "k_h"),
])
def test_kernel_one_past_the_padded_input_is_refused_naming_it(kwargs, field):
    """DESIGN.md: a kernel larger than the padded input raises naming the field (even when
    it is larger by just one, where h_out would be 0)."""
    with pytest.raises(InvalidInputError, match=rf"{field}=\d+ \(dilated extent"):
        ConvLayer(n=1, c_in=1, c_out=1, **kwargs)


@settings(max_examples=40, deadline=None)
@given(w=st.integers(1, 12), k=st.integers(1, 4), d=st.integers(1, 2), p=st.integers(0, 2),
       sh=st.integers(1, 3), sw=st.integers(1, 3))
def test_output_width_counts_the_windows_with_the_width_stride(w, k, d, p, sh, sw):
    """w_out is the number of windows that fit across the padded width, stepping by stride[1]."""
    ext = (k - 1) * d + 1
    if ext > w + 2 * p:
        return
    layer = ConvLayer(n=1, c_in=1, h_in=ext, w_in=w, c_out=1, k_h=1, k_w=k, stride=(sh, sw),
                      padding=(0, p), dilation=(1, d))
    assert layer.w_out == sum(1 for o in range(0, w + 2 * p, sw) if o + ext <= w + 2 * p)


def test_groups_must_divide_the_output_channels_too():
    with pytest.raises(InvalidInputError, match="groups=4 must divide"):
        ConvLayer(n=1, c_in=4, h_in=4, w_in=4, c_out=6, k_h=1, k_w=1, groups=4)


def test_a_single_channel_dense_layer_is_not_depthwise():
    dense = ConvLayer(n=1, c_in=1, h_in=4, w_in=4, c_out=3, k_h=3, k_w=3)
    assert not dense.depthwise
    assert ConvLayer(n=1, c_in=3, h_in=4, w_in=4, c_out=3, k_h=3, k_w=3, groups=3).depthwise


@pytest.mark.parametrize("layer", [
    ConvLayer(n=3, c_in=4, h_in=6, w_in=5, c_out=6, k_h=3, k_w=2, stride=(2, 1), padding=1, groups=2),
    ConvLayer(n=2, c_in=3, h_in=5, w_in=5, c_out=2, k_h=3, k_w=3),
])
def test_tensor_sizes_are_those_of_the_numpy_convolution(layer):
    """input/weight/output sizes (batch included) are the element counts of the tensors of
    the naive numpy convolution (kernels.reference.conv2d_naive)."""
    import numpy as np
    from kernels.reference import conv2d_naive
    x = np.zeros((layer.n, layer.c_in, layer.h_in, layer.w_in))
    w = np.zeros((layer.c_out, layer.c_in_per_group, layer.k_h, layer.k_w))
    y = conv2d_naive(x, w, layer)
    assert (layer.input_size, layer.weight_size, layer.output_size) == (x.size, w.size, y.size)


def test_dict_round_trip_keeps_every_field():
    """from_dict(to_dict()) is the same layer for non-default stride, padding, dilation, groups."""
    import json
    layer = ConvLayer(n=2, c_in=4, h_in=9, w_in=8, c_out=6, k_h=3, k_w=2, stride=(2, 1),
                      padding=(1, 0), dilation=(2, 1), groups=2, name="t")
    back = ConvLayer.from_dict(json.loads(json.dumps(layer.to_dict())))
    assert back == layer and back.dilation == (2, 1) and back.groups == 2 and back.name == "t"


def test_winograd_does_not_apply_to_grouped_layers():
    grouped = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, groups=2)
    assert not grouped.winograd_applicable and "groups" in grouped.winograd_problem()
    with pytest.raises(InvalidInputError, match="groups"):
        grouped.check_winograd()


@pytest.mark.parametrize("groups", [2, 4])
def test_short_names_the_groups(groups):
    layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, groups=groups)
    assert layer.short().endswith(f" g{groups}")
    assert " g" not in layer.replace(groups=1).short()
