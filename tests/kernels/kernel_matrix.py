"""The kernel test matrix shared by the emulator and nvcc tests: (id, layer, config)."""

from iobound.layer import ConvLayer
from kernels.config import DirectConfig, WinogradConfig


def L(**kw) -> ConvLayer:
    kw.setdefault("n", 1)
    return ConvLayer(**kw)


DIRECT = [
    ("s1p0_partial_tiles", L(c_in=3, h_in=9, w_in=10, c_out=5, k_h=3, k_w=3),
     DirectConfig(x=4, y=3, z=2, alpha=2, tx=2, ty=3, tz=2)),
    ("s1p1_batch2", L(n=2, c_in=4, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1),
     DirectConfig(x=4, y=4, z=4, alpha=2, tx=4, ty=2, tz=2)),
    ("s2p1", L(c_in=3, h_in=11, w_in=11, c_out=4, k_h=3, k_w=3, stride=2, padding=1),
     DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)),
    ("s4p2_gaps_nonsquare", L(c_in=2, h_in=13, w_in=18, c_out=3, k_h=2, k_w=2, stride=4, padding=2),
     DirectConfig(x=2, y=2, z=3, alpha=2, tx=2, ty=2, tz=1)),
    ("s3k3_alexnet_like", L(c_in=3, h_in=15, w_in=15, c_out=4, k_h=5, k_w=5, stride=3, padding=1),
     DirectConfig(x=2, y=2, z=2, alpha=3, tx=2, ty=1, tz=2)),
    ("dilation2_p2", L(c_in=2, h_in=9, w_in=9, c_out=3, k_h=3, k_w=3, padding=2, dilation=2),
     DirectConfig(x=3, y=3, z=3, alpha=1, tx=3, ty=3, tz=1)),
    ("mixed_axes", L(n=2, c_in=3, h_in=9, w_in=11, c_out=4, k_h=3, k_w=2, stride=(2, 1),
                     padding=(1, 0), dilation=(1, 2)),
     DirectConfig(x=4, y=2, z=4, alpha=2, tx=2, ty=2, tz=2)),
    ("pointwise_s2", L(c_in=5, h_in=8, w_in=7, c_out=6, k_h=1, k_w=1, stride=2),
     DirectConfig(x=2, y=4, z=3, alpha=4, tx=2, ty=2, tz=3)),
]

WINOGRAD = [
    (f"F{e}x{e}_3x3_p{p}", L(n=1 + (e == 3), c_in=3, h_in=9 + e, w_in=8 + e, c_out=3,
                             k_h=3, k_w=3, padding=p),
     WinogradConfig(e=e, x=2 * e, y=e, z=2, tx=2, ty=1, tz=2))
    for e in (2, 3, 4) for p in (0, 1)
] + [
    ("F2x2_5x5_p2", L(c_in=2, h_in=9, w_in=9, c_out=2, k_h=5, k_w=5, padding=2),
     WinogradConfig(e=2, x=4, y=4, z=2, tx=2, ty=2, tz=2)),
]

#: Grouped layers (direct only): depthwise with stride 2, a channel multiplier of 4 with z
#: splitting a group, and a ResNeXt-like block with alpha < c_in / groups.
GROUPED = [
    ("grouped_depthwise_s2", L(c_in=6, h_in=9, w_in=9, c_out=6, k_h=3, k_w=3, stride=2, padding=1,
                               groups=6),
     DirectConfig(x=5, y=5, z=1, alpha=1, tx=5, ty=1, tz=1)),
    ("grouped_multiplier4", L(n=2, c_in=3, h_in=7, w_in=7, c_out=12, k_h=3, k_w=3, padding=1,
                              groups=3),
     DirectConfig(x=7, y=7, z=2, alpha=1, tx=7, ty=1, tz=2)),
    ("grouped_resnext_like", L(c_in=16, h_in=6, w_in=6, c_out=16, k_h=3, k_w=3, padding=1,
                               groups=4),
     DirectConfig(x=3, y=6, z=4, alpha=2, tx=3, ty=2, tz=4)),
]

CASES = DIRECT + WINOGRAD + GROUPED
