"""ConvSpace and the Table 1 domain at their edges, against brute force and the documented rules.

- sizes and members at the exact limits: a device whose shared memory per block equals the
  bytes of one configuration (kernels.config.shared_memory_bytes), a block of exactly
  ``max_threads_per_block`` threads, an asymmetric stride, a non-square Winograd output:
  compared with the brute force of tests/search/test_conv_space.py (check_config);
- index order: configurations numbered in lexicographic order of their knob values;
- ``values(p)``: what a scan of the space finds (the Space default);
- neighbours: the module doc's rule (step one knob along its value list, Winograd ``x, y``
  to the closest tile of the new ``e``, threads shrunk to their largest divisor not above
  the old value, the first member along the direction) applied over the member set;
- ``reuse``: DESIGN.md's R_max = ceil(k_h/mu_h) * ceil(k_w/mu_w);
- an empty space and bad Winograd ``e`` are InvalidInputError.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from kernels.config import config_from_dict, shared_memory_bytes
from search.conv_space import ConvSpace
from search.space import Space
from search.table1 import count_full_model, divisors, domain_for
from tests.search.test_conv_space import TINY, V100, WINO, brute_force

ASYM = ConvLayer(n=1, c_in=2, h_in=9, w_in=7, c_out=4, k_h=3, k_w=2, stride=(2, 1))
WIDE = ConvLayer(n=1, c_in=2, h_in=6, w_in=12, c_out=4, k_h=3, k_w=3, padding=1)  # 6 x 12 out


def _at_shared_limit(layer, algorithm, **kw):
    """A device whose per-block (and S_sm/2) shared memory is exactly the bytes of the median
    configuration of ``layer``'s unpruned V100 space: that configuration sits on the limit."""
    space = ConvSpace(layer, V100, algorithm, pruned=False, **kw)
    sizes = sorted({shared_memory_bytes(layer, config_from_dict(space.get(i), algorithm))
                    for i in range(len(space))})
    limit = sizes[len(sizes) // 2]
    return dataclasses.replace(V100, shared_mem_per_block_bytes=limit,
                               shared_mem_per_sm_bytes=2 * limit)


@pytest.mark.parametrize("layer, algorithm, kw", [
    (ASYM, "direct", {}), (WIDE, "winograd", {"winograd_e": (2, 3)})], ids=["asym", "wide"])
def test_members_at_the_shared_memory_limit_equal_brute_force(layer, algorithm, kw):
    device = _at_shared_limit(layer, algorithm, **kw)
    unpruned, pruned = brute_force(layer, device, algorithm, **kw)
    for flag, want in ((False, unpruned), (True, pruned)):
        space = ConvSpace(layer, device, algorithm, pruned=flag, **kw)
        assert {tuple(space.get(i)[p] for p in space.params) for i in range(len(space))} == want


def test_blocks_at_the_thread_and_register_file_limits_are_members():
    """On the 64-thread, 2048-register device: 8 x 8 x 1 threads (exactly the limit), and an
    8 x 8 x 8 tile on 64 threads, (512 / 64 + 24) * 64 = 2048 registers (exactly the file):
    both allowed, as check_config says; the all-knob CP-SAT model counts the same."""
    layer = ConvLayer(n=1, c_in=1, h_in=8, w_in=8, c_out=8, k_h=1, k_w=1)
    unpruned, _ = brute_force(layer, TINY)
    space = ConvSpace(layer, TINY, pruned=False)
    assert space.unpruned_size == len(unpruned)
    assert count_full_model(domain_for(layer, TINY), pruned=False) == len(unpruned)
    assert space.is_valid({"x": 8, "y": 8, "z": 1, "alpha": 1, "tx": 8, "ty": 8, "tz": 1})
    assert space.is_valid({"x": 8, "y": 8, "z": 8, "alpha": 1, "tx": 8, "ty": 8, "tz": 1})


@pytest.mark.parametrize("algorithm, layer", [("direct", ASYM), ("winograd", WINO)])
@pytest.mark.parametrize("pruned", [True, False])
def test_indices_follow_the_lexicographic_order_of_the_knobs(algorithm, layer, pruned):
    space = ConvSpace(layer, TINY, algorithm, pruned=pruned)
    rows = [tuple(space.get(i)[p] for p in space.params) for i in range(len(space))]
    assert rows == sorted(rows)


@pytest.mark.parametrize("algorithm, layer, device", [
    ("direct", ASYM, TINY), ("winograd", WINO, TINY), ("direct", ASYM, V100)])
def test_values_are_what_a_scan_of_the_space_finds(algorithm, layer, device):
    space = ConvSpace(layer, device, algorithm)
    assert all(space.values(p) == Space.values(space, p) for p in space.params)


def _closest(options, old):
    return min(options, key=lambda v: (abs(v - old), v))


def _doc_neighbours(space, members, i):
    """The module doc's neighbour rule over the member set (``members``: knob tuple -> index)."""
    dom, params = space.domain, space.params
    cfg, out = space.get(i), set()
    for p in params:
        vals = dom.values[p]
        for step in (-1, 1):
            q = vals.index(cfg[p]) + step
            while 0 <= q < len(vals):
                cand = {**cfg, p: vals[q]}
                if p == "e":
                    xs, ys = dom.tile_pairs[cand["e"]]
                    cand["x"], cand["y"] = _closest(xs, cfg["x"]), _closest(ys, cfg["y"])
                e = cand.get("e", 1)
                for t, axis in (("tx", cand["x"] // e), ("ty", cand["y"] // e), ("tz", cand["z"])):
                    if axis % cand[t]:  # no longer divides its tile axis
                        cand[t] = max(d for d in divisors(axis) if d <= cand[t])
                j = members.get(tuple(cand[k] for k in params))
                if j is not None and j != i:
                    out.add(j)
                    break
                q += step
    return out


@pytest.mark.parametrize("algorithm, layer, kw", [
    ("direct", ASYM, {}), ("winograd", WIDE, {"winograd_e": (2, 3, 4)})], ids=["direct", "winograd"])
def test_neighbours_follow_the_documented_rule(algorithm, layer, kw):
    """40 indices (the first and last among them): the neighbour set of the rule, no repeats."""
    space = ConvSpace(layer, TINY, algorithm, **kw)
    members = {tuple(r): j for j, r in enumerate(space.knobs(range(len(space))).tolist())}
    picks = space.sample(38, np.random.default_rng(0)) + [0, len(space) - 1]
    for i in picks:
        got = space.neighbours(i)
        assert len(got) == len(set(got)) and set(got) == _doc_neighbours(space, members, i)


def test_winograd_e_step_moves_x_to_the_closest_smaller_on_a_tie():
    """12-wide output: x = 3 (e = 3) to e = 2, whose tiles are 2, 4, 6, 12: 2 and 4 are both 1
    away, the smaller one is taken."""
    space = ConvSpace(WIDE, V100, "winograd", winograd_e=(2, 3))
    i = space.index({"e": 3, "x": 3, "y": 3, "z": 1, "tx": 1, "ty": 1, "tz": 1})
    moved = [space.get(j) for j in space.neighbours(i) if space.get(j)["e"] == 2]
    assert moved and all(c["x"] == 2 and c["y"] == 2 for c in moved)


@pytest.mark.parametrize("layer", [ASYM, WINO, ConvLayer(1, 2, 11, 11, 2, 5, 3, stride=(2, 3))])
def test_reuse_is_the_maximum_reuse_of_design_md(layer):
    (mu_h, mu_w) = layer.stride
    want = math.ceil(layer.k_h / mu_h) * math.ceil(layer.k_w / mu_w)
    assert domain_for(layer, V100).reuse == want


def test_a_layer_with_no_configuration_is_bad_input():
    """A 15 x 15 kernel cannot stage even one output's inputs and weights in 1536 bytes."""
    layer = ConvLayer(n=1, c_in=1, h_in=15, w_in=15, c_out=1, k_h=15, k_w=15)
    with pytest.raises(InvalidInputError, match="no valid direct configuration"):
        ConvSpace(layer, TINY)


@pytest.mark.parametrize("es", [(1,), (1, 2), (0, 2)])
def test_winograd_e_below_two_is_refused(es):
    with pytest.raises(InvalidInputError, match="winograd e must be integers >= 2"):
        ConvSpace(WINO, V100, "winograd", winograd_e=es)


def test_index_refuses_bool_knob_values():
    """True equals 1 but is not a knob value: not a member."""
    space = ConvSpace(ASYM, V100)
    cfg = next(space.get(i) for i in range(len(space)) if space.get(i)["tz"] == 1)
    assert space.index(cfg) is not None and space.index({**cfg, "tz": True}) is None
    assert np.array_equal(space.knobs([space.index(cfg)])[0], [cfg[p] for p in space.params])


def test_winograd_tiles_are_e_times_a_divisor_of_their_own_axis_tile_count():
    """x = e * bx with bx | ceil(w_out / e), y likewise with h_out (a 6 x 12 output)."""
    dom = domain_for(WIDE, V100, "winograd", (2, 3, 4))
    for e, (xs, ys) in dom.tile_pairs.items():
        for tiles, out in ((xs, WIDE.w_out), (ys, WIDE.h_out)):
            count = -(-out // e)
            assert tiles == tuple(e * b for b in range(1, count + 1) if count % b == 0)


def test_grid_z_counts_channel_blocks_not_images():
    """Grid z is c_out / z blocks, at most 65535 (check_config); the images share grid x. A
    batch of 2 with 40000 channels keeps z = 1 (it did not when images were on grid z); 65,536
    channels need z >= 2 (grid y cannot reach the limit: h_in <= 8192)."""
    for c_out, least_z in ((40000, 1), (65536, 2)):
        layer = ConvLayer(n=2, c_in=1, h_in=1, w_in=1, c_out=c_out, k_h=1, k_w=1)
        unpruned, pruned = brute_force(layer, V100)
        space = ConvSpace(layer, V100)
        assert (space.unpruned_size, space.pruned_size) == (len(unpruned), len(pruned))
        assert min(space.values("z")) == least_z


def test_winograd_e_values_are_sorted_whatever_their_order():
    """{9, 2} iterates as 9, 2 in CPython: the value list (neighbour steps bisect it) is sorted."""
    assert domain_for(WINO, V100, "winograd", (9, 2)).values["e"] == (2, 9)


def test_an_empty_pruned_space_names_table_1_and_the_unpruned_size():
    """65,536 channels of a 56x56 kernel: grid z forces z >= 2, Table 1's z <= sqrt(S_b/R)
    (R = 3,136, S_b = 12,288 words) then leaves nothing of the 2 unpruned configurations."""
    layer = ConvLayer(n=1, c_in=1, h_in=56, w_in=56, c_out=65536, k_h=56, k_w=56)
    with pytest.raises(InvalidInputError, match="Table 1's pruning leaves none of its 2 "):
        ConvSpace(layer, V100)
    kept = ConvSpace(layer, V100, empty_ok=True)
    assert (len(kept), kept.unpruned_size, kept.pruned_size) == (0, 2, 0)
    assert all(kept.values(p) == [] for p in kept.params)


def test_an_empty_unpruned_space_names_the_limits_not_table_1():
    """A 100x100 kernel's weights and input rectangle exceed a block's shared memory."""
    layer = ConvLayer(n=1, c_in=1, h_in=200, w_in=200, c_out=1, k_h=100, k_w=100)
    with pytest.raises(InvalidInputError, match="shared memory and registers per block") as err:
        ConvSpace(layer, V100)
    assert "Table 1" not in str(err.value)


def test_an_algorithm_object_is_kept_by_its_name():
    """``Algorithm`` objects are accepted like their names; features need the name."""
    from iobound.algorithms import DIRECT
    space = ConvSpace(ASYM, V100, DIRECT)
    assert space.algorithm == "direct" and space.describe()["algorithm"] == "direct"
    assert np.array_equal(space.features([0]), ConvSpace(ASYM, V100).features([0]))
