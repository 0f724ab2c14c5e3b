"""Every network preset against an independent, layer-by-layer reference.

The reference below is written from the architecture definitions (Krizhevsky 2012 single
tower at 227; Simonyan-Zisserman config D; He et al. 2016 Table 1 with torchvision's v1.5
stride placement; Xie et al. 2017 ResNeXt-50 32x4d; Iandola et al. 2016 SqueezeNet v1.0
Table 1 at 227; torchvision's Inception-v3 module list at 299; Howard et al. 2017 MobileNet
v1 Table 1 with the last depthwise conv at stride 1, as in the reference implementation).
Tensors flow through a tiny graph builder that computes spatial sizes with its own formula
(convolutions and max pools, floor or ceil), so the chaining of sizes and channels, the
shortcut placement, the execution order and the names are checked in one comparison.
"""

import pytest

from iobound.networks import get_layer, network_layers


class _Net:
    def __init__(self, name):
        self.name, self.rows = name, []

    def conv(self, lname, t, c_out, k, s=1, p=0, g=1):
        c, h, w = t
        kh, kw = (k, k) if isinstance(k, int) else k
        ph, pw = (p, p) if isinstance(p, int) else p
        assert c % g == 0 and c_out % g == 0
        self.rows.append((f"{self.name}.{lname}", 1, c, h, w, c_out, kh, kw, (s, s),
                          (ph, pw), (1, 1), g))
        ho, wo = (h + 2 * ph - kh) // s + 1, (w + 2 * pw - kw) // s + 1
        assert ho > 0 and wo > 0
        return (c_out, ho, wo)


def _pool(t, k=3, s=2, ceil=False):
    c, h, w = t
    f = (lambda x: -(-(x - k) // s) + 1) if ceil else (lambda x: (x - k) // s + 1)
    return (c, f(h), f(w))


def _cat(*ts):
    assert len({t[1:] for t in ts}) == 1, ts
    return (sum(t[0] for t in ts),) + ts[0][1:]


def _alexnet():
    n = _Net("alexnet")
    t = n.conv("conv1", (3, 227, 227), 96, 11, s=4)
    t = n.conv("conv2", _pool(t), 256, 5, p=2)
    t = n.conv("conv3", _pool(t), 384, 3, p=1)
    t = n.conv("conv4", t, 384, 3, p=1)
    t = n.conv("conv5", t, 256, 3, p=1)
    assert _pool(t) == (256, 6, 6)                        # the classifier's 9216 inputs
    return n.rows


def _vgg16():
    n, t = _Net("vgg16"), (3, 224, 224)
    for stage, (c, reps) in enumerate([(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)], 1):
        for i in range(1, reps + 1):
            t = n.conv(f"conv{stage}_{i}", t, c, 3, p=1)
        t = _pool(t, 2, 2)
    assert t == (512, 7, 7)
    return n.rows


def _resnet(name, blocks, bottleneck, groups=1, base_width=64):
    n = _Net(name)
    t = _pool(n.conv("conv1", (3, 224, 224), 64, 7, s=2, p=3), 3, 2)
    # torchvision's max pool has padding 1: 112 -> 56 (the formula above has no padding).
    t = (t[0], 56, 56)
    for si, count in enumerate(blocks):
        stage, planes = si + 2, 64 * 2 ** si
        for b in range(1, count + 1):
            s = 2 if (b == 1 and si > 0) else 1
            p = f"conv{stage}_{b}"
            x = t
            if bottleneck:
                width = planes * base_width // 64 * groups
                y = n.conv(p + "a", x, width, 1)
                y = n.conv(p + "b", y, width, 3, s=s, p=1, g=groups)
                y = n.conv(p + "c", y, planes * 4, 1)
            else:
                y = n.conv(p + "a", x, planes, 3, s=s, p=1)
                y = n.conv(p + "b", y, planes, 3, p=1)
            if s != 1 or x[0] != y[0]:
                short = n.conv(p + "ds", x, y[0], 1, s=s)
            else:
                short = x
            assert short == y
            t = y
    assert t[1:] == (7, 7)
    return n.rows


def _squeezenet():
    n = _Net("squeezenet")
    t = _pool(n.conv("conv1", (3, 227, 227), 96, 7, s=2), ceil=True)
    assert t == (96, 55, 55)
    table1 = {2: (16, 64), 3: (16, 64), 4: (32, 128), 5: (32, 128), 6: (48, 192),
              7: (48, 192), 8: (64, 256), 9: (64, 256)}
    for i, (sq, ex) in table1.items():
        s = n.conv(f"fire{i}_squeeze1x1", t, sq, 1)
        t = _cat(n.conv(f"fire{i}_expand1x1", s, ex, 1), n.conv(f"fire{i}_expand3x3", s, ex, 3, p=1))
        if i in (4, 8):
            t = _pool(t, ceil=True)
    t = n.conv("conv10", t, 1000, 1)
    assert t == (1000, 13, 13)                             # Table 1: conv10 13x13x1000
    return n.rows


def _inception_v3():
    n = _Net("inception_v3")
    t = n.conv("conv1a", (3, 299, 299), 32, 3, s=2)
    t = n.conv("conv2a", t, 32, 3)
    t = _pool(n.conv("conv2b", t, 64, 3, p=1))
    t = _pool(n.conv("conv4a", n.conv("conv3b", t, 80, 1), 192, 3))
    for m, pf in (("5b", 32), ("5c", 64), ("5d", 64)):
        q = f"mixed_{m}_"
        b1 = n.conv(q + "branch1x1", t, 64, 1)
        b5 = n.conv(q + "branch5x5_2", n.conv(q + "branch5x5_1", t, 48, 1), 64, 5, p=2)
        d = n.conv(q + "branch3x3dbl_1", t, 64, 1)
        d = n.conv(q + "branch3x3dbl_3", n.conv(q + "branch3x3dbl_2", d, 96, 3, p=1), 96, 3, p=1)
        bp = n.conv(q + "branch_pool", t, pf, 1)             # after a 3x3/1 pad-1 avg pool
        t = _cat(b1, b5, d, bp)
    q = "mixed_6a_"
    b3 = n.conv(q + "branch3x3", t, 384, 3, s=2)
    d = n.conv(q + "branch3x3dbl_1", t, 64, 1)
    d = n.conv(q + "branch3x3dbl_3", n.conv(q + "branch3x3dbl_2", d, 96, 3, p=1), 96, 3, s=2)
    t = _cat(b3, d, _pool(t))
    for m, c7 in (("6b", 128), ("6c", 160), ("6d", 160), ("6e", 192)):
        q = f"mixed_{m}_"
        b1 = n.conv(q + "branch1x1", t, 192, 1)
        a = n.conv(q + "branch7x7_1", t, c7, 1)
        a = n.conv(q + "branch7x7_2", a, c7, (1, 7), p=(0, 3))
        a = n.conv(q + "branch7x7_3", a, 192, (7, 1), p=(3, 0))
        d = n.conv(q + "branch7x7dbl_1", t, c7, 1)
        d = n.conv(q + "branch7x7dbl_2", d, c7, (7, 1), p=(3, 0))
        d = n.conv(q + "branch7x7dbl_3", d, c7, (1, 7), p=(0, 3))
        d = n.conv(q + "branch7x7dbl_4", d, c7, (7, 1), p=(3, 0))
        d = n.conv(q + "branch7x7dbl_5", d, 192, (1, 7), p=(0, 3))
        bp = n.conv(q + "branch_pool", t, 192, 1)
        t = _cat(b1, a, d, bp)
    q = "mixed_7a_"
    a = n.conv(q + "branch3x3_2", n.conv(q + "branch3x3_1", t, 192, 1), 320, 3, s=2)
    d = n.conv(q + "branch7x7x3_1", t, 192, 1)
    d = n.conv(q + "branch7x7x3_2", d, 192, (1, 7), p=(0, 3))
    d = n.conv(q + "branch7x7x3_3", d, 192, (7, 1), p=(3, 0))
    d = n.conv(q + "branch7x7x3_4", d, 192, 3, s=2)
    t = _cat(a, d, _pool(t))
    for m in ("7b", "7c"):
        q = f"mixed_{m}_"
        b1 = n.conv(q + "branch1x1", t, 320, 1)
        a = n.conv(q + "branch3x3_1", t, 384, 1)
        a = _cat(n.conv(q + "branch3x3_2a", a, 384, (1, 3), p=(0, 1)),
                 n.conv(q + "branch3x3_2b", a, 384, (3, 1), p=(1, 0)))
        d = n.conv(q + "branch3x3dbl_1", t, 448, 1)
        d = n.conv(q + "branch3x3dbl_2", d, 384, 3, p=1)
        d = _cat(n.conv(q + "branch3x3dbl_3a", d, 384, (1, 3), p=(0, 1)),
                 n.conv(q + "branch3x3dbl_3b", d, 384, (3, 1), p=(1, 0)))
        bp = n.conv(q + "branch_pool", t, 192, 1)
        t = _cat(b1, a, d, bp)
    assert t == (2048, 8, 8)
    return n.rows


def _mobilenet():
    n = _Net("mobilenet")
    t = n.conv("conv1", (3, 224, 224), 32, 3, s=2, p=1)
    # Table 1 rows "Conv dw / s, Conv / s1": (dw stride, pw filters); the 13th dw is stride 1
    # (Table 1's "s2" there contradicts its own 7x7 input of the 7x7 average pool).
    rows = [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512)] + [(1, 512)] * 5 \
        + [(2, 1024), (1, 1024)]
    for i, (s, f) in enumerate(rows, 1):
        t = n.conv(f"conv_dw_{i}", t, t[0], 3, s=s, p=1, g=t[0])
        t = n.conv(f"conv_pw_{i}", t, f, 1)
    assert t == (1024, 7, 7)
    return n.rows


REFERENCE = {
    "alexnet": _alexnet,
    "vgg16": _vgg16,
    "resnet18": lambda: _resnet("resnet18", (2, 2, 2, 2), False),
    "resnet50": lambda: _resnet("resnet50", (3, 4, 6, 3), True),
    "resnext50": lambda: _resnet("resnext50", (3, 4, 6, 3), True, groups=32, base_width=4),
    "squeezenet": _squeezenet,
    "inception_v3": _inception_v3,
    "mobilenet": _mobilenet,
}

#: Convolutions per network (torchvision's conv modules, aux head excluded; MobileNet 1 + 2x13).
COUNTS = {"alexnet": 5, "vgg16": 13, "resnet18": 20, "resnet50": 53, "resnext50": 53,
          "squeezenet": 26, "inception_v3": 94, "mobilenet": 27}


def _row(l):
    return (l.name, l.n, l.c_in, l.h_in, l.w_in, l.c_out, l.k_h, l.k_w, tuple(l.stride),
            tuple(l.padding), tuple(l.dilation), l.groups)


@pytest.mark.parametrize("net", sorted(REFERENCE))
def test_preset_equals_the_independent_reference(net):
    ref = REFERENCE[net]()
    assert len(ref) == COUNTS[net]
    assert [_row(l) for l in network_layers(net)] == ref


@pytest.mark.parametrize("net", sorted(REFERENCE))
def test_every_reference_layer_resolves_by_name(net):
    for row in REFERENCE[net]():
        assert _row(get_layer(row[0])) == row
