"""The Winograd chain bound's cross routing: the floor found by a matching, values as the LPs give.

``evaluate_dataflow`` of an 8192x8192 Winograd layer spent minutes in ``bound_report``: six
cross-routing linear programs per axis (one per kernel routing tried), each over every tile of
the image. Their value is clamped at ``1 + eps`` from below, so once a routing reaches that
floor no other can win; and the floor is reached exactly when a unit routing (a bipartite
matching) exists.
"""


import numpy as np
import pytest

from iobound import winograd_routing as wr
from iobound.winograd_transforms import winograd_transforms


def _reference_cross(e, r, pad, size, tiles):
    """The cap as the LPs define it: least cross over every kernel routing tried."""
    t = winograd_transforms(e, r)
    sup_bt, sup_g = wr._supports(t.BT), wr._supports(t.G)
    demands = [((tt, i), [tt * e + k - pad for k in ks if 0 <= tt * e + k - pad < size])
               for tt in range(tiles) for i, ks in enumerate(sup_bt)]
    demands = [d for d in demands if d[1]]
    if not demands:
        return 1.0, None
    best = None
    for pick in wr._kernel_choices(sup_g, r):
        g = np.zeros((len(sup_g), r))
        g[np.arange(len(sup_g)), list(pick)] = 1.0
        cross, _ = wr._cross_lp(demands, size, g)
        if best is None or cross < best[0] - 1e-12:
            best = (cross, tuple({k: 1.0} for k in pick))
    return best


CASES = [(e, r, pad, size) for e, r in ((1, 3), (2, 2), (2, 3), (3, 3), (4, 3), (5, 2), (6, 2),
                                         (6, 3), (2, 5), (4, 5))
         for pad in range(r) for size in (r, r + e + 1, 3 * e + r + 2)]


@pytest.mark.parametrize("e,r,pad,size", CASES)
def test_cross_equals_the_lp_reference(e, r, pad, size):
    h_out = size + 2 * pad - r + 1
    tiles = -(-h_out // e)
    got = wr._cross_routing.__wrapped__(e, r, pad, size, tiles)
    cross, kernel = _reference_cross(e, r, pad, size, tiles)
    assert got.cross == cross
    assert kernel is None or got.kernel == kernel


def test_a_large_axis_reaches_the_floor_by_a_matching():
    """4096 positions (an image of 4096): the floor is reached, by the matching (the LPs
    took ~20 s here; the speed is benchmarks/bounds_speed.py's to measure)."""
    got = wr._cross_routing.__wrapped__(2, 3, 1, 4096, 2048)
    assert got.cross == 1.0 + wr._EPS


def test_unit_routing_is_a_valid_routing():
    """The routing behind the floor: every demand's share sums to 1 on its own positions, and
    no (position, kernel position) bin carries more than one unit."""
    e, r, pad, size, tiles = 2, 3, 1, 40, 20
    got = wr._cross_routing.__wrapped__(e, r, pad, size, tiles)
    t = winograd_transforms(e, r)
    sup_bt = wr._supports(t.BT)
    load = np.zeros((size, r))
    for tt in range(tiles):
        for i, ks in enumerate(sup_bt):
            allowed = {tt * e + k - pad for k in ks} & set(range(size))
            if not allowed:
                continue
            share = got.share[(tt, i)]
            assert set(share) <= allowed and abs(sum(share.values()) - 1) < 1e-12
            (k,) = got.kernel[i]
            for p, w in share.items():
                load[p, k] += w
    assert load.max() <= 1 + 1e-12
