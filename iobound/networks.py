"""Network presets: the convolution layers of well-known CNNs.

A layer is addressed as ``"<network>.<layer>"``, e.g. ``"alexnet.conv1"``.
Shapes come from the original papers (cited per network). Batch size is 1;
use :meth:`ConvLayer.replace` for another.

Examples
--------
>>> get_layer("alexnet.conv2").short()
'n1 96x27x27 -> 256x27x27 k5x5 s1x1 p2x2'
>>> [l.name for l in network_layers("alexnet")][:2]
['alexnet.conv1', 'alexnet.conv2']
"""

from __future__ import annotations

from .errors import UnknownPresetError
from .layer import ConvLayer

__all__ = ["NETWORKS", "network_names", "network_layers", "get_layer"]


def _conv(name, c_in, hw, c_out, k, stride=1, pad=0) -> ConvLayer:
    h, w = (hw, hw) if isinstance(hw, int) else hw
    kh, kw = (k, k) if isinstance(k, int) else k
    ph, pw = (pad, pad) if isinstance(pad, int) else pad
    return ConvLayer(n=1, c_in=c_in, h_in=h, w_in=w, c_out=c_out, k_h=kh, k_w=kw,
                     stride=(stride, stride), padding=(ph, pw), name=name)


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


NETWORKS: dict[str, callable] = {
    "alexnet": _alexnet,
}


def network_names() -> list[str]:
    return sorted(NETWORKS)


def network_layers(network: str) -> list[ConvLayer]:
    """All convolution layers of a network preset, in order."""
    key = network.lower()
    if key not in NETWORKS:
        raise UnknownPresetError(
            f"unknown network {network!r}; choose one of {', '.join(network_names())}"
        )
    return NETWORKS[key]()


def get_layer(spec: str) -> ConvLayer:
    """The layer preset ``"<network>.<layer>"``."""
    network, sep, _ = spec.partition(".")
    if not sep:
        raise UnknownPresetError(
            f"layer preset {spec!r} must look like 'network.layer', e.g. 'alexnet.conv1'"
        )
    layers = {l.name: l for l in network_layers(network)}
    key = spec.lower()
    if key not in layers:
        raise UnknownPresetError(
            f"unknown layer {spec!r}; {network} has {', '.join(layers)}"
        )
    return layers[key]
