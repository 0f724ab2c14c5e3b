"""Network presets: layer counts, shape chaining, spot shapes and MAC totals."""

import re
from collections import defaultdict

import pytest

from iobound.errors import UnknownPresetError
from iobound.networks import get_layer, network_layers, network_names

ALL = ["alexnet", "vgg16", "resnet18", "resnet50", "resnext50", "squeezenet", "inception_v3",
       "mobilenet"]


def _shape(layer):
    return (layer.c_in, layer.h_in, layer.w_in, layer.c_out, layer.k_h, layer.k_w,
            layer.stride, layer.padding)


def test_all_networks_registered():
    """Every promised network is a preset."""
    assert set(ALL) <= set(network_names())


@pytest.mark.parametrize("net", ALL)
def test_names_unique_prefixed_and_resolvable(net):
    """Layer names are unique, start with '<net>.' and get_layer returns each."""
    layers = network_layers(net)
    names = [l.name for l in layers]
    assert len(names) == len(set(names))
    for layer in layers:
        assert layer.name.startswith(net + ".")
        assert get_layer(layer.name) == layer and layer.n == 1


@pytest.mark.parametrize("net, count", [
    ("alexnet", 5), ("vgg16", 13), ("resnet18", 20), ("resnet50", 53), ("resnext50", 53),
    ("squeezenet", 26), ("inception_v3", 94), ("mobilenet", 27),
])
def test_layer_counts(net, count):
    """Convolution counts: ResNets include the stem and the projections."""
    assert len(network_layers(net)) == count


def test_vgg16_chains_with_pools():
    """Each VGG conv consumes the previous output; hw halves exactly at stage changes."""
    layers = network_layers("vgg16")
    assert _shape(layers[0])[:3] == (3, 224, 224)
    for prev, cur in zip(layers, layers[1:]):
        assert cur.c_in == prev.c_out
        same_stage = prev.name.split("_")[0] == cur.name.split("_")[0]
        assert cur.h_in == (prev.h_out if same_stage else prev.h_out // 2)
        assert (cur.k_h, cur.stride, cur.padding) == (3, (1, 1), (1, 1))
    assert (layers[-1].c_out, layers[-1].h_out) == (512, 14)     # 7x7x512 after pool5


def _resnet_blocks(net):
    blocks = defaultdict(dict)
    for layer in network_layers(net)[1:]:
        m = re.fullmatch(rf"{net}\.conv(\d)_(\d+)([a-z]+)", layer.name)
        blocks[(int(m.group(1)), int(m.group(2)))][m.group(3)] = layer
    return dict(sorted(blocks.items()))


@pytest.mark.parametrize("net, main, width_mult", [
    ("resnet18", "ab", 1), ("resnet50", "abc", 4), ("resnext50", "abc", 4),
])
def test_resnet_blocks_chain_and_residuals_match(net, main, width_mult):
    """Within a block convs chain; the residual branch matches the shortcut; blocks chain."""
    stem = network_layers(net)[0]
    assert _shape(stem) == (3, 224, 224, 64, 7, 7, (2, 2), (3, 3)) and stem.h_out == 112
    c, hw = 64, 56                                   # after the 3x3/2 max pool
    for (stage, b), convs in _resnet_blocks(net).items():
        assert "".join(k for k in convs if k != "ds") == main
        first, last = convs[main[0]], convs[main[-1]]
        assert (first.c_in, first.h_in) == (c, hw)
        for x, y in zip(main, main[1:]):
            assert (convs[y].c_in, convs[y].h_in) == (convs[x].c_out, convs[x].h_out)
        shortcut = convs.get("ds")
        assert (shortcut is not None) == (b == 1 and (stage > 2 or width_mult > 1))
        out = (shortcut.c_out, shortcut.h_out) if shortcut else (c, hw)
        assert (last.c_out, last.h_out) == out
        assert last.c_out == 64 * 2 ** (stage - 2) * width_mult
        c, hw = last.c_out, last.h_out
    assert (c, hw) == (512 * width_mult, 7)


@pytest.mark.parametrize("spec, shape", [
    ("resnet50.conv3_1", (128, 56, 56, 128, 3, 3, (2, 2), (1, 1))),
    ("resnet50.conv3_1a", (256, 56, 56, 128, 1, 1, (1, 1), (0, 0))),
    ("resnet50.conv3_1c", (128, 28, 28, 512, 1, 1, (1, 1), (0, 0))),
    ("resnet50.conv3_1ds", (256, 56, 56, 512, 1, 1, (2, 2), (0, 0))),
    ("resnet50.conv2_1ds", (64, 56, 56, 256, 1, 1, (1, 1), (0, 0))),
    ("resnet50.conv5_3", (512, 7, 7, 512, 3, 3, (1, 1), (1, 1))),
    ("resnet18.conv3_1", (64, 56, 56, 128, 3, 3, (2, 2), (1, 1))),
    ("resnet18.conv4_2b", (256, 14, 14, 256, 3, 3, (1, 1), (1, 1))),
    ("vgg16.conv4_1", (256, 28, 28, 512, 3, 3, (1, 1), (1, 1))),
    ("inception_v3.mixed_6b_branch7x7_2", (128, 17, 17, 128, 1, 7, (1, 1), (0, 3))),
    ("inception_v3.mixed_7b_branch3x3_2b", (384, 8, 8, 384, 3, 1, (1, 1), (1, 0))),
    ("inception_v3.mixed_7c_branch1x1", (2048, 8, 8, 320, 1, 1, (1, 1), (0, 0))),
    ("mobilenet.conv_pw_13", (1024, 7, 7, 1024, 1, 1, (1, 1), (0, 0))),
    ("mobilenet.conv_dw_13", (1024, 7, 7, 1024, 3, 3, (1, 1), (1, 1))),
    ("mobilenet.conv_dw_12", (512, 14, 14, 512, 3, 3, (2, 2), (1, 1))),
    ("resnext50.conv3_1", (256, 56, 56, 256, 3, 3, (2, 2), (1, 1))),
    ("resnext50.conv5_3c", (1024, 7, 7, 2048, 1, 1, (1, 1), (0, 0))),
    ("squeezenet.conv10", (512, 13, 13, 1000, 1, 1, (1, 1), (0, 0))),
])
def test_spot_shapes(spec, shape):
    """Known layer shapes from the papers (ResNet strides in the 3x3, v1.5)."""
    assert _shape(get_layer(spec)) == shape


def test_block_alias_names_the_first_3x3():
    """conv{s}_{b} without a letter is the block's 3x3 conv, carrying its real name."""
    assert get_layer("resnet50.conv3_1").name == "resnet50.conv3_1b"
    assert get_layer("ResNet18.Conv2_2").name == "resnet18.conv2_2a"
    with pytest.raises(UnknownPresetError):
        get_layer("vgg16.conv3_1a")


def test_inception_module_inputs_are_concatenations():
    """Each Inception module reads the channel concatenation the previous one wrote."""
    expect = {"mixed_5b": (192, 35), "mixed_5c": (256, 35), "mixed_5d": (288, 35),
              "mixed_6a": (288, 35), "mixed_6b": (768, 17), "mixed_6e": (768, 17),
              "mixed_7a": (768, 17), "mixed_7b": (1280, 8), "mixed_7c": (2048, 8)}
    entry = {"mixed_6a": "branch3x3", "mixed_7a": "branch3x3_1"}   # modules without a 1x1 branch
    for module, (c, hw) in expect.items():
        first = get_layer(f"inception_v3.{module}_{entry.get(module, 'branch1x1')}")
        assert (first.c_in, first.h_in) == (c, hw)
    assert get_layer("inception_v3.conv4a").h_out == 71          # max pool 3x3/2 -> 35


def test_squeezenet_fire_sizes_follow_table1():
    """SqueezeNet v1.0: conv1 gives 111x111; fires run at 55, 27 and 13; outputs concat."""
    assert get_layer("squeezenet.conv1").h_out == 111
    sizes = {2: 55, 4: 55, 5: 27, 8: 27, 9: 13}
    outs = {2: 128, 4: 256, 5: 256, 8: 512, 9: 512}
    for i, hw in sizes.items():
        sq = get_layer(f"squeezenet.fire{i}_squeeze1x1")
        e1, e3 = (get_layer(f"squeezenet.fire{i}_expand{k}") for k in ("1x1", "3x3"))
        assert sq.h_in == e1.h_out == e3.h_out == hw
        assert e1.c_in == e3.c_in == sq.c_out and e1.c_out + e3.c_out == outs[i]


def test_mobilenet_depthwise_pointwise_chain():
    """MobileNet convs chain exactly (dw then pw per block); the 13 dws are depthwise 3x3,
    pad 1, four of them stride 2 (112 -> 7); the pws are dense 1x1."""
    layers = network_layers("mobilenet")
    assert layers[0].h_out == 112
    for prev, cur in zip(layers, layers[1:]):
        assert (cur.c_in, cur.h_in) == (prev.c_out, prev.h_out)
    dws, pws = layers[1::2], layers[2::2]
    assert all(l.depthwise and l.groups == l.c_in == l.c_out and l.k_h == 3 for l in dws)
    assert [l.stride[0] for l in dws].count(2) == 4 and all(l.groups == 1 for l in pws)
    assert [l.name for l in dws] == [f"mobilenet.conv_dw_{i}" for i in range(1, 14)]
    assert layers[-1].h_out == 7


def _gmacs(net):
    return sum(l.macs for l in network_layers(net)) / 1e9


@pytest.mark.parametrize("net, fc_macs, published", [
    # torchvision weight tables give GFLOPS (multiply-adds of conv + linear), 2 decimals.
    ("vgg16", 25088 * 4096 + 4096 * 4096 + 4096 * 1000, 15.47),
    ("resnet18", 512 * 1000, 1.81),
    ("resnet50", 2048 * 1000, 4.09),
    ("inception_v3", 2048 * 1000, 5.71),
    ("resnext50", 2048 * 1000, 4.23),
])
def test_mac_totals_match_torchvision(net, fc_macs, published):
    """Conv MACs plus the classifier reproduce torchvision's published totals."""
    assert _gmacs(net) + fc_macs / 1e9 == pytest.approx(published, abs=0.005)


def test_mobilenet_macs_match_paper():
    """MobileNet v1 (Table 2): 1x1 convs are 94.86% of 569M mult-adds, depthwise 3.06%; with
    the fc, 569M."""
    layers = network_layers("mobilenet")
    pointwise = sum(l.macs for l in layers[2::2])
    depthwise = sum(l.macs for l in layers[1::2])
    assert pointwise / 569e6 == pytest.approx(0.9486, abs=0.002)
    assert depthwise / 569e6 == pytest.approx(0.0306, abs=0.002)
    total = sum(l.macs for l in layers) + 1024 * 1000
    assert total == pytest.approx(569e6, rel=0.005)


def test_resnext_3x3s_are_grouped_32x4d():
    """ResNeXt-50 32x4d: every 3x3 has 32 groups of width/32 = 4, 8, 16, 32 channels; 1x1s dense."""
    for layer in network_layers("resnext50")[1:]:
        stage = int(layer.name.split("conv")[1][0])
        if layer.k_h == 3:
            assert layer.groups == 32 and layer.c_in_per_group == 4 * 2 ** (stage - 2)
        else:
            assert layer.groups == 1
    assert get_layer("resnext50.conv4_2").name == "resnext50.conv4_2b"


def test_unknown_network_and_layer():
    """Unknown networks list the presets; unknown layers list (some of) the layers."""
    with pytest.raises(UnknownPresetError, match="resnet50"):
        network_layers("resnet51")
    with pytest.raises(UnknownPresetError, match=r"conv1a.*\(94 layers\)"):
        get_layer("inception_v3.conv9")
    with pytest.raises(UnknownPresetError, match="network.layer"):
        get_layer("resnet50")
