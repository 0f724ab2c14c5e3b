"""Parse the layer specifications users type on the command line.

A spec is a preset name (``alexnet.conv1``) or ``key=value`` pairs separated by
commas or spaces (spaces around ``=`` are allowed): ``n, cin, hin, win, cout, kh, kw,
stride, pad, dilation, groups``.
``stride``, ``pad`` and ``dilation`` take ``a`` or ``axb`` (height x width);
``n`` defaults to 1, ``kw`` to ``kh``, ``win`` to ``hin``.

Examples
--------
>>> parse_layer_spec("cin=64,hin=56,cout=64,kh=3,pad=1").short()
'n1 64x56x56 -> 64x56x56 k3x3 s1x1 p1x1'
>>> parse_layer_spec("alexnet.conv1").name
'alexnet.conv1'
>>> parse_layer_spec("cin = 64, hin = 56, cout = 64, kh = 3").short()
'n1 64x56x56 -> 64x54x54 k3x3 s1x1 p0x0'
"""

from __future__ import annotations

import re

from . import limits
from .errors import InvalidInputError
from .layer import ConvLayer
from .networks import get_layer

__all__ = ["parse_layer_spec"]

_KEYS = {
    "n": "n", "cin": "c_in", "hin": "h_in", "win": "w_in", "cout": "c_out",
    "kh": "k_h", "kw": "k_w", "stride": "stride", "pad": "padding", "dilation": "dilation",
    "groups": "groups",
}
_PAIR_KEYS = {"stride", "pad", "dilation"}
_REQUIRED = ("cin", "hin", "cout", "kh")
_LIMITS = {"n": limits.BATCH, "cin": limits.CHANNELS, "cout": limits.CHANNELS,
           "hin": limits.SPATIAL, "win": limits.SPATIAL, "kh": limits.KERNEL,
           "kw": limits.KERNEL, "stride": limits.STRIDE, "pad": limits.PADDING,
           "dilation": limits.DILATION, "groups": limits.CHANNELS}


def _int(key: str, text: str) -> int:
    if not re.fullmatch(r"\d+", text, re.ASCII):
        raise InvalidInputError(f"layer spec: {key}={text[:40]!r} is not a non-negative integer")
    return limits.parse_int(f"layer spec: {key}", text, _LIMITS[key])


def parse_layer_spec(spec: str) -> ConvLayer:
    """A :class:`ConvLayer` from a preset name or ``key=value`` pairs.

    Raises
    ------
    InvalidInputError
        Naming the unknown key, the malformed value or the missing field.
    iobound.errors.UnknownPresetError
        For an unknown preset.

    Examples
    --------
    >>> parse_layer_spec("cin=64,hin=56,cout=64,kh=3,stride=1,pad=1").short()
    'n1 64x56x56 -> 64x56x56 k3x3 s1x1 p1x1'
    >>> parse_layer_spec("cin=32,hin=56,cout=32,kh=3,pad=1,groups=32").depthwise
    True
    >>> parse_layer_spec("alexnet.conv1").name
    'alexnet.conv1'
    """
    if not isinstance(spec, str):
        raise InvalidInputError(f"a layer spec must be a string, got {spec!r:.60}")
    text = spec.strip()
    if not text:
        raise InvalidInputError("layer spec is empty")
    if "=" not in text:
        return get_layer(text)
    values: dict[str, object] = {}
    text = re.sub(r"\s*=\s*", "=", text)  # "cin = 64" is one pair, not three parts
    for part in re.split(r"[,\s]+", text):
        if not part:
            continue
        key, sep, val = part.partition("=")
        key = key.strip().lower()
        if not sep:
            raise InvalidInputError(f"layer spec: {part[:40]!r} is not key=value")
        if key not in _KEYS:
            raise InvalidInputError(
                f"layer spec: unknown key {key[:40]!r}; known keys are {', '.join(_KEYS)}"
            )
        if key in values:
            raise InvalidInputError(f"layer spec: {key} given twice")
        if key in _PAIR_KEYS:
            pieces = val.lower().split("x")
            if len(pieces) not in (1, 2):
                raise InvalidInputError(f"layer spec: {key}={val[:40]!r} must be 'a' or 'axb'")
            ints = [_int(key, p) for p in pieces]
            values[key] = (ints[0], ints[-1])
        else:
            values[key] = _int(key, val)
    missing = [k for k in _REQUIRED if k not in values]
    if missing:
        raise InvalidInputError(f"layer spec: missing {', '.join(missing)} (have {', '.join(values)})")
    values.setdefault("n", 1)
    values.setdefault("kw", values["kh"])
    values.setdefault("win", values["hin"])
    kwargs = {_KEYS[k]: v for k, v in values.items()}
    return ConvLayer(**kwargs)
