"""Network presets against the published architectures.

References: the PPoPP'21 I/O-bound paper's Table 2 (AlexNet conv rows: C_in, H_in/W_in,
C_out, kernel, stride, padding; its "conv4" row is AlexNet's conv5 shape) and Krizhevsky
et al. 2012 (conv4 is 384 -> 384 3x3; output maps 55, 27, 13, 13, 13).
"""

import pytest

from iobound.networks import get_layer, network_layers

#: (C_in, H_in = W_in, C_out, kernel, stride, padding), Table 2 of the I/O-bound paper.
TABLE2_ALEXNET = {
    "conv1": (3, 227, 96, 11, 4, 0),
    "conv2": (96, 27, 256, 5, 1, 2),
    "conv3": (256, 13, 384, 3, 1, 1),
    "conv5": (384, 13, 256, 3, 1, 1),    # the paper's "conv4" row
}


def _row(layer):
    assert layer.h_in == layer.w_in and layer.k_h == layer.k_w
    assert layer.stride[0] == layer.stride[1] and layer.padding[0] == layer.padding[1]
    return (layer.c_in, layer.h_in, layer.c_out, layer.k_h, layer.stride[0], layer.padding[0])


@pytest.mark.parametrize("name", sorted(TABLE2_ALEXNET))
def test_alexnet_layers_match_the_papers_table2(name):
    assert _row(get_layer(f"alexnet.{name}")) == TABLE2_ALEXNET[name]


def test_alexnet_conv4_is_krizhevskys_384_to_384_and_maps_chain():
    """conv4 is 384 -> 384 3x3 pad 1; output maps are 55, 27, 13, 13, 13 (pools after 1, 2)."""
    assert _row(get_layer("alexnet.conv4")) == (384, 13, 384, 3, 1, 1)
    layers = network_layers("alexnet")
    assert [l.h_out for l in layers] == [55, 27, 13, 13, 13]
    for prev, cur in zip(layers, layers[1:]):
        assert cur.c_in == prev.c_out


#: SqueezeNet v1.0, Iandola et al. 2016, Table 1: fire module -> (s1x1, e1x1, e3x3).
SQUEEZENET_TABLE1 = {2: (16, 64, 64), 3: (16, 64, 64), 4: (32, 128, 128), 5: (32, 128, 128),
                     6: (48, 192, 192), 7: (48, 192, 192), 8: (64, 256, 256), 9: (64, 256, 256)}


@pytest.mark.parametrize("fire", sorted(SQUEEZENET_TABLE1))
def test_squeezenet_fire_filters_follow_table1(fire):
    """Squeeze, expand 1x1 and expand 3x3 filter counts of every fire module (Table 1)."""
    got = tuple(get_layer(f"squeezenet.fire{fire}_{part}").c_out
                for part in ("squeeze1x1", "expand1x1", "expand3x3"))
    assert got == SQUEEZENET_TABLE1[fire]


def _pool(h):  # 3x3 max pool, stride 2, no padding
    return (h - 3) // 2 + 1


def test_inception_v3_stem_sizes_follow_the_paper():
    """Szegedy et al. 2016 (Table 1 / the reference model): 299 -> 149 -> 147 -> 147,
    pool -> 73 -> 73 -> 71, pool -> 35 (the input of Mixed_5b); convs chain."""
    names = ("conv1a", "conv2a", "conv2b", "conv3b", "conv4a")
    stem = [get_layer(f"inception_v3.{n}") for n in names]
    assert [l.h_out for l in stem] == [149, 147, 147, 73, 71]
    pools_after = {"conv2b", "conv4a"}
    for prev, cur in zip(stem, stem[1:]):
        h = _pool(prev.h_out) if prev.name.split(".")[1] in pools_after else prev.h_out
        assert (cur.c_in, cur.h_in, cur.w_in) == (prev.c_out, h, h)
    assert _pool(stem[-1].h_out) == get_layer("inception_v3.mixed_5b_branch1x1").h_in == 35


def test_network_names_are_sorted():
    """network_names() is documented as sorted (the CLI lists it)."""
    from iobound.networks import NETWORKS, network_names
    assert network_names() == sorted(NETWORKS) and len(network_names()) == len(NETWORKS)
