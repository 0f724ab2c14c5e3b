"""Network presets: the convolution layers of well-known CNNs, batch 1.

A layer is addressed as ``"<network>.<layer>"``, e.g. ``"alexnet.conv1"``; use
:meth:`ConvLayer.replace` for another batch size. Shapes come from the original
papers; every convolution is listed once, in execution order, including layers
of equal shape. Pooling, fully connected layers and auxiliary heads are left out.

Networks and naming
-------------------
alexnet
    Krizhevsky et al. 2012, single tower, 227x227 input, the shapes of the
    PPoPP'21 I/O-bound paper's Table 2 (whose "conv4" row, 384->256, is AlexNet's
    conv5 shape; ours keeps the original conv4, 384->384).
vgg16
    Simonyan & Zisserman 2015, configuration D, 224x224: ``conv1_1`` ...
    ``conv5_3`` (13 convolutions, 3x3, stride 1, pad 1).
resnet18, resnet50
    He et al. 2016, 224x224, with the torchvision "v1.5" convention that a
    downsampling bottleneck strides in its 3x3 conv (the paper's v1 strides in the
    first 1x1). ``conv1`` is the 7x7/2 stem (followed by a 3x3/2 max pool to 56x56).
    Block ``b`` of stage ``s`` (stages 2..5 = the paper's conv2_x..conv5_x):

    * resnet18 (basic block): ``conv{s}_{b}a`` and ``conv{s}_{b}b``, the two 3x3s;
    * resnet50 (bottleneck): ``conv{s}_{b}a`` 1x1 reduce, ``conv{s}_{b}b`` 3x3,
      ``conv{s}_{b}c`` 1x1 expand;
    * ``conv{s}_1ds``: the 1x1 projection shortcut of a stage's first block
      (stride 2 except in stage 2; ResNet-18's stage 2 has none).

    ``conv{s}_{b}`` without a letter is an alias for the block's first 3x3 conv
    (``a`` in resnet18, ``b`` in resnet50): ``resnet50.conv3_1`` is the 3x3,
    stride-2, 128->128 conv on the 56x56 stage input. The returned layer carries
    its canonical name (``resnet50.conv3_1b``).
squeezenet
    v1.0 (Iandola et al. 2016, Table 1), 227x227 input so that conv1 gives the
    paper's 111x111: ``conv1``, ``fire{i}_squeeze1x1``, ``fire{i}_expand1x1``,
    ``fire{i}_expand3x3`` for i = 2..9, ``conv10``.
inception_v3
    Szegedy et al. 2016, 299x299, module layout of the reference implementation
    (torchvision names, lower case): ``conv1a`` ``conv2a`` ``conv2b`` ``conv3b``
    ``conv4a``, then ``mixed_5b_branch1x1`` ... ``mixed_7c_branch_pool``, including
    the asymmetric 1x7/7x1 and 1x3/3x1 convs. The auxiliary classifier is omitted.
resnext50
    ResNeXt-50 (32x4d) (Xie et al. 2017, Table 1; torchvision ``resnext50_32x4d``):
    ResNet-50's layout and names with bottleneck widths 128, 256, 512, 1024 and the
    3x3 ``conv{s}_{b}b`` grouped, 32 groups (4, 8, 16, 32 channels per group).
mobilenet
    MobileNet v1 (Howard et al. 2017, Table 1), width 1.0, 224x224: the full first
    conv ``conv1``, then per block the depthwise 3x3 ``conv_dw_{i}`` (groups = channels,
    pad 1, stride 2 in blocks 2, 4, 6, 12) and the pointwise 1x1 ``conv_pw_{i}``,
    i = 1..13, in execution order. Table 1 prints stride 2 for block 13 too, a misprint:
    block 13 runs at 7x7 as block 12's output, as the reference model and the paper's
    569 million multiply-adds have it.

Examples
--------
>>> get_layer("alexnet.conv2").short()
'n1 96x27x27 -> 256x27x27 k5x5 s1x1 p2x2'
>>> [l.name for l in network_layers("alexnet")][:2]
['alexnet.conv1', 'alexnet.conv2']
>>> get_layer("resnet50.conv3_1").short()
'n1 128x56x56 -> 128x28x28 k3x3 s2x2 p1x1'
>>> get_layer("mobilenet.conv_dw_2").short()
'n1 64x112x112 -> 64x56x56 k3x3 s2x2 p1x1 g64'
>>> get_layer("resnext50.conv2_1").short()
'n1 128x56x56 -> 128x56x56 k3x3 s1x1 p1x1 g32'
"""

from __future__ import annotations

import re
from typing import Callable

from .errors import InvalidInputError, UnknownPresetError
from .layer import ConvLayer

__all__ = ["NETWORKS", "network_names", "network_layers", "get_layer"]


def _conv(name, c_in, hw, c_out, k, stride=1, pad=0, groups=1) -> ConvLayer:
    h, w = (hw, hw) if isinstance(hw, int) else hw
    kh, kw = (k, k) if isinstance(k, int) else k
    ph, pw = (pad, pad) if isinstance(pad, int) else pad
    return ConvLayer(n=1, c_in=c_in, h_in=h, w_in=w, c_out=c_out, k_h=kh, k_w=kw,
                     stride=(stride, stride), padding=(ph, pw), groups=groups, name=name)


def _alexnet() -> list[ConvLayer]:
    # Krizhevsky et al., NIPS 2012, as a single tower (no groups); 227x227 input as in
    # the paper's Table 2 (the 224 in the AlexNet paper does not give 55x55 outputs).
    return [
        _conv("alexnet.conv1", 3, 227, 96, 11, stride=4),
        _conv("alexnet.conv2", 96, 27, 256, 5, pad=2),
        _conv("alexnet.conv3", 256, 13, 384, 3, pad=1),
        _conv("alexnet.conv4", 384, 13, 384, 3, pad=1),
        _conv("alexnet.conv5", 384, 13, 256, 3, pad=1),
    ]


def _vgg16() -> list[ConvLayer]:
    # Configuration D: (channels, convs) per stage; a 2x2/2 max pool halves hw after each.
    layers, c_in, hw = [], 3, 224
    for stage, (c_out, count) in enumerate(((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)), 1):
        for i in range(1, count + 1):
            layers.append(_conv(f"vgg16.conv{stage}_{i}", c_in, hw, c_out, 3, pad=1))
            c_in = c_out
        hw //= 2
    return layers


_RESNET_STAGES = {"resnet18": (2, 2, 2, 2), "resnet50": (3, 4, 6, 3), "resnext50": (3, 4, 6, 3)}
#: 3x3 groups and bottleneck width multiplier: ResNeXt-50 32x4d's width is 32 * 4 = 128 in stage 2.
_RESNEXT = {"resnext50": (32, 2)}


def _resnet(net: str) -> list[ConvLayer]:
    bottleneck = net != "resnet18"
    groups, widen = _RESNEXT.get(net, (1, 1))
    layers = [_conv(f"{net}.conv1", 3, 224, 64, 7, stride=2, pad=3)]
    c_in, hw = 64, 56                                     # after the 3x3/2 max pool
    for stage, blocks in enumerate(_RESNET_STAGES[net], 2):
        planes = 64 * 2 ** (stage - 2)
        width, c_out = (widen * planes, 4 * planes) if bottleneck else (planes, planes)
        for b in range(1, blocks + 1):
            s = 2 if (b == 1 and stage > 2) else 1
            p = f"{net}.conv{stage}_{b}"
            if bottleneck:
                layers += [_conv(p + "a", c_in, hw, width, 1),
                           _conv(p + "b", width, hw, width, 3, stride=s, pad=1, groups=groups),
                           _conv(p + "c", width, hw // s, c_out, 1)]
            else:
                layers += [_conv(p + "a", c_in, hw, width, 3, stride=s, pad=1),
                           _conv(p + "b", width, hw // s, width, 3, pad=1)]
            if b == 1 and (s == 2 or c_in != c_out):
                layers.append(_conv(p + "ds", c_in, hw, c_out, 1, stride=s))
            c_in, hw = c_out, hw // s
    return layers


def _squeezenet() -> list[ConvLayer]:
    # v1.0, Table 1: (squeeze, expand1x1 = expand3x3) per fire module; max pools
    # (3x3/2, ceil mode) after conv1, fire4 and fire8.
    layers = [_conv("squeezenet.conv1", 3, 227, 96, 7, stride=2)]
    c_in, hw = 96, 55
    fires = {2: (16, 64), 3: (16, 64), 4: (32, 128), 5: (32, 128),
             6: (48, 192), 7: (48, 192), 8: (64, 256), 9: (64, 256)}
    for i, (sq, ex) in fires.items():
        p = f"squeezenet.fire{i}_"
        layers += [_conv(p + "squeeze1x1", c_in, hw, sq, 1),
                   _conv(p + "expand1x1", sq, hw, ex, 1),
                   _conv(p + "expand3x3", sq, hw, ex, 3, pad=1)]
        c_in = 2 * ex
        if i in (4, 8):
            hw = (hw - 3 + 1) // 2 + 1                    # ceil((hw - 3) / 2) + 1
    layers.append(_conv("squeezenet.conv10", c_in, hw, 1000, 1))
    return layers


# Over 60 lines on purpose: a table of Inception-v3's convolutions, one line a layer.
def _inception_v3() -> list[ConvLayer]:
    net = "inception_v3"
    L: list[ConvLayer] = []

    def c(name, c_in, hw, c_out, k, stride=1, pad=0):
        L.append(_conv(f"{net}.{name}", c_in, hw, c_out, k, stride, pad))

    c("conv1a", 3, 299, 32, 3, stride=2)                  # -> 149
    c("conv2a", 32, 149, 32, 3)                           # -> 147
    c("conv2b", 32, 147, 64, 3, pad=1)                    # -> 147, max pool -> 73
    c("conv3b", 64, 73, 80, 1)
    c("conv4a", 80, 73, 192, 3)                           # -> 71, max pool -> 35
    cin = 192
    for m, pool in (("5b", 32), ("5c", 64), ("5d", 64)):  # InceptionA, 35x35
        p = f"mixed_{m}_"
        c(p + "branch1x1", cin, 35, 64, 1)
        c(p + "branch5x5_1", cin, 35, 48, 1)
        c(p + "branch5x5_2", 48, 35, 64, 5, pad=2)
        c(p + "branch3x3dbl_1", cin, 35, 64, 1)
        c(p + "branch3x3dbl_2", 64, 35, 96, 3, pad=1)
        c(p + "branch3x3dbl_3", 96, 35, 96, 3, pad=1)
        c(p + "branch_pool", cin, 35, pool, 1)
        cin = 64 + 64 + 96 + pool
    c("mixed_6a_branch3x3", cin, 35, 384, 3, stride=2)    # InceptionB, 35 -> 17
    c("mixed_6a_branch3x3dbl_1", cin, 35, 64, 1)
    c("mixed_6a_branch3x3dbl_2", 64, 35, 96, 3, pad=1)
    c("mixed_6a_branch3x3dbl_3", 96, 35, 96, 3, stride=2)
    cin = 384 + 96 + cin
    for m, c7 in (("6b", 128), ("6c", 160), ("6d", 160), ("6e", 192)):  # InceptionC, 17x17
        p = f"mixed_{m}_"
        c(p + "branch1x1", cin, 17, 192, 1)
        c(p + "branch7x7_1", cin, 17, c7, 1)
        c(p + "branch7x7_2", c7, 17, c7, (1, 7), pad=(0, 3))
        c(p + "branch7x7_3", c7, 17, 192, (7, 1), pad=(3, 0))
        c(p + "branch7x7dbl_1", cin, 17, c7, 1)
        c(p + "branch7x7dbl_2", c7, 17, c7, (7, 1), pad=(3, 0))
        c(p + "branch7x7dbl_3", c7, 17, c7, (1, 7), pad=(0, 3))
        c(p + "branch7x7dbl_4", c7, 17, c7, (7, 1), pad=(3, 0))
        c(p + "branch7x7dbl_5", c7, 17, 192, (1, 7), pad=(0, 3))
        c(p + "branch_pool", cin, 17, 192, 1)
        cin = 4 * 192
    c("mixed_7a_branch3x3_1", cin, 17, 192, 1)            # InceptionD, 17 -> 8
    c("mixed_7a_branch3x3_2", 192, 17, 320, 3, stride=2)
    c("mixed_7a_branch7x7x3_1", cin, 17, 192, 1)
    c("mixed_7a_branch7x7x3_2", 192, 17, 192, (1, 7), pad=(0, 3))
    c("mixed_7a_branch7x7x3_3", 192, 17, 192, (7, 1), pad=(3, 0))
    c("mixed_7a_branch7x7x3_4", 192, 17, 192, 3, stride=2)
    cin = 320 + 192 + cin
    for m in ("7b", "7c"):                                # InceptionE, 8x8
        p = f"mixed_{m}_"
        c(p + "branch1x1", cin, 8, 320, 1)
        c(p + "branch3x3_1", cin, 8, 384, 1)
        c(p + "branch3x3_2a", 384, 8, 384, (1, 3), pad=(0, 1))
        c(p + "branch3x3_2b", 384, 8, 384, (3, 1), pad=(1, 0))
        c(p + "branch3x3dbl_1", cin, 8, 448, 1)
        c(p + "branch3x3dbl_2", 448, 8, 384, 3, pad=1)
        c(p + "branch3x3dbl_3a", 384, 8, 384, (1, 3), pad=(0, 1))
        c(p + "branch3x3dbl_3b", 384, 8, 384, (3, 1), pad=(1, 0))
        c(p + "branch_pool", cin, 8, 192, 1)
        cin = 320 + 2 * 384 + 2 * 384 + 192
    return L


def _mobilenet() -> list[ConvLayer]:
    # v1, Table 1: (pointwise output channels, stride of the block's depthwise conv).
    layers = [_conv("mobilenet.conv1", 3, 224, 32, 3, stride=2, pad=1)]
    c_in, hw = 32, 112
    plan = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 \
        + [(1024, 2), (1024, 1)]
    for i, (c_out, s) in enumerate(plan, 1):
        layers.append(_conv(f"mobilenet.conv_dw_{i}", c_in, hw, c_in, 3, stride=s, pad=1,
                            groups=c_in))
        hw //= s
        layers.append(_conv(f"mobilenet.conv_pw_{i}", c_in, hw, c_out, 1))
        c_in = c_out
    return layers


NETWORKS: dict[str, Callable[[], list[ConvLayer]]] = {
    "alexnet": _alexnet,
    "vgg16": _vgg16,
    "resnet18": lambda: _resnet("resnet18"),
    "resnet50": lambda: _resnet("resnet50"),
    "resnext50": lambda: _resnet("resnext50"),
    "squeezenet": _squeezenet,
    "inception_v3": _inception_v3,
    "mobilenet": _mobilenet,
}

# "<net>.conv{s}_{b}" (no letter) names the block's first 3x3 conv.
_BLOCK_ALIAS = re.compile(r"conv[2-5]_\d+")
_ALIAS_LETTER = {"resnet18": "a", "resnet50": "b", "resnext50": "b"}


def network_names() -> list[str]:
    """Names of all network presets, sorted.

    Examples
    --------
    >>> "resnet50" in network_names()
    True
    """
    return sorted(NETWORKS)


def network_layers(network: str) -> list[ConvLayer]:
    """All convolution layers of a network preset, in order.

    >>> layers = network_layers("vgg16")
    >>> len(layers), layers[0].name
    (13, 'vgg16.conv1_1')
    """
    if not isinstance(network, str):
        raise InvalidInputError(f"a network preset name must be a string, got {network!r:.60}")
    key = network.lower()
    if key not in NETWORKS:
        raise UnknownPresetError(
            f"unknown network {network!r:.60}; choose one of {', '.join(network_names())}"
        )
    return NETWORKS[key]()


def get_layer(spec: str) -> ConvLayer:
    """The layer preset ``"<network>.<layer>"`` (ResNet block aliases included).

    >>> layer = get_layer("alexnet.conv1")
    >>> layer.c_in, layer.h_in, layer.c_out, layer.h_out, layer.stride
    (3, 227, 96, 55, (4, 4))
    >>> get_layer("resnet50.conv3_1").name  # a block's alias: its first 3x3 convolution
    'resnet50.conv3_1b'
    """
    if not isinstance(spec, str):
        raise InvalidInputError(f"a layer preset name must be a string, got {spec!r:.60}")
    network, sep, layer = spec.partition(".")
    if not sep:
        raise UnknownPresetError(
            f"layer preset {spec!r:.60} must look like 'network.layer', e.g. 'alexnet.conv1'"
        )
    layers = {l.name: l for l in network_layers(network)}
    net, key = network.lower(), spec.lower()
    if net in _ALIAS_LETTER and _BLOCK_ALIAS.fullmatch(layer.lower()):
        key += _ALIAS_LETTER[net]
    if key not in layers:
        names = [n.partition(".")[2] for n in layers]
        shown = ", ".join(names[:16]) + (f", ... ({len(names)} layers)" if len(names) > 16 else "")
        raise UnknownPresetError(f"unknown layer {spec!r:.60}; {net} has {shown}")
    return layers[key]
