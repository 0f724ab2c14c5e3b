"""Random convolution layers to label: Winograd candidates spanning the shapes of given ones.

Examples
--------
>>> from iobound.networks import network_layers
>>> [l.name for l in synthetic_layers(2, np.random.default_rng(0), network_layers("vgg16"))]
['synthetic.0', 'synthetic.1']
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from iobound import limits
from iobound.algorithms import winograd_offered
from iobound.arg_checks import check_type
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer

from ..option_checks import check_records

__all__ = ["synthetic_layers"]


def _log_uniform_int(rng: np.random.Generator, lo: int, hi: int, multiple: int = 1) -> int:
    v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    lo_m, hi_m = -(-lo // multiple) * multiple, hi // multiple * multiple  # multiples in range
    if lo_m > hi_m:  # none: any integer of the range
        lo_m, hi_m, multiple = lo, hi, 1
    return max(lo_m, min(hi_m, int(round(v / multiple)) * multiple))


#: How many layers :func:`synthetic_layers` draws at most (each is then labelled).
_SYNTHETIC_COUNT = limits.Limit(0, 1 << 20, "synthetic layers: each is then labelled over "
                                            "its whole pruned space")


def synthetic_layers(count: int, rng: np.random.Generator,
                     like: Iterable[ConvLayer]) -> list[ConvLayer]:
    """``count`` random Winograd-candidate layers spanning the ranges of the layers ``like``.

    Channels are drawn log-uniformly between the smallest and largest of ``like``
    (multiples of 8 above 8), the input size log-uniformly likewise, the kernel from
    the square sizes of ``like`` (stride 1, "same" padding ``k // 2`` or none, 3:1).

    Examples
    --------
    >>> from iobound.networks import network_layers
    >>> ls = synthetic_layers(3, np.random.default_rng(0), network_layers("vgg16"))
    >>> len(ls), all(l.winograd_applicable and l.k_h == 3 for l in ls)
    (3, True)
    """
    # checked before the first draw: 2.5 was a TypeError, True one layer, an int seed for
    # rng an AttributeError
    count = limits.check_int("count", count, _SYNTHETIC_COUNT)
    check_type("rng", rng, np.random.Generator)
    like = [l for l in check_records("like", like, ConvLayer) if winograd_offered(l)]
    if not like:
        raise InvalidInputError("synthetic_layers needs at least one layer with Winograd candidates")
    c_in = (min(l.c_in for l in like), max(l.c_in for l in like))
    c_out = (min(l.c_out for l in like), max(l.c_out for l in like))
    hw = (min(l.h_in for l in like), max(l.h_in for l in like))
    ks = sorted({l.k_h for l in like})
    out = []
    for i in range(count):
        k = int(rng.choice(ks))
        ci = _log_uniform_int(rng, *c_in, multiple=8 if c_in[0] >= 8 else 1)
        if c_in[0] < 8 and ci > 8:  # drawn as any integer: above 8, a multiple of 8
            ci -= ci % 8
        co = _log_uniform_int(rng, *c_out, multiple=8)
        size = _log_uniform_int(rng, max(hw[0], k), hw[1])
        pad = k // 2 if rng.random() < 0.75 else 0
        out.append(ConvLayer(n=1, c_in=ci, h_in=size, w_in=size, c_out=co, k_h=k, k_w=k,
                             padding=pad, name=f"synthetic.{i}"))
    return out
