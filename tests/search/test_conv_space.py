"""ConvSpace and the Table 1 CP-SAT model against a plain-Python brute force."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy.stats import chisquare

from iobound.devices import get_device
from iobound.layer import ConvLayer
from kernels.config import check_config, config_from_dict, shared_memory_bytes
from search.conv_space import ConvSpace
from search.table1 import count_full_model, domain_for

V100 = get_device("v100")
# A small device so that both hardware limits and the Table 1 pruning bite on tiny layers.
TINY = dataclasses.replace(V100, shared_mem_per_sm_bytes=2048, shared_mem_per_block_bytes=1536,
                           max_threads_per_block=64, registers_per_sm=2048)

LAYERS = [
    ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=12, k_h=3, k_w=3),
    ConvLayer(n=1, c_in=3, h_in=11, w_in=11, c_out=8, k_h=3, k_w=3, stride=2, padding=1),
    ConvLayer(n=2, c_in=6, h_in=6, w_in=9, c_out=16, k_h=1, k_w=3),
]
WINO = ConvLayer(n=1, c_in=2, h_in=9, w_in=9, c_out=8, k_h=3, k_w=3, padding=1)


def table1_holds(layer, cfg, dom) -> bool:
    """The paper's Table 1 pruning constraints, in plain integers."""
    c = config_from_dict(cfg, dom.algorithm)
    xyz, xy = c.x * c.y * c.z, c.x * c.y
    return (shared_memory_bytes(layer, c) <= dom.prune_shared_bytes and xyz <= dom.s_b_words
            and c.z * c.z * dom.reuse <= dom.s_b_words and xy * xy <= dom.s_b_words * dom.reuse)


def template_holds(layer, cfg, dom) -> bool:
    """Tile divisibility of the template (Table 1's 'tiles are factors')."""
    if dom.algorithm == "winograd":
        xs, ys = dom.tile_pairs[cfg["e"]]
        return cfg["x"] in xs and cfg["y"] in ys and layer.c_out % cfg["z"] == 0
    return (layer.w_out % cfg["x"] == 0 and layer.h_out % cfg["y"] == 0
            and layer.c_out % cfg["z"] == 0 and layer.c_in % cfg["alpha"] == 0)


def brute_force(layer, device, algorithm="direct", **kw):
    """(unpruned set, pruned set) of configs by checking every knob combination."""
    dom = domain_for(layer, device, algorithm, **kw)
    unpruned, pruned = set(), set()
    for combo in itertools.product(*(dom.values[p] for p in dom.params)):
        cfg = dict(zip(dom.params, combo))
        if not template_holds(layer, cfg, dom):
            continue
        if check_config(layer, config_from_dict(cfg, algorithm), device):
            continue
        unpruned.add(combo)
        if table1_holds(layer, cfg, dom):
            pruned.add(combo)
    return unpruned, pruned


@pytest.mark.parametrize("device", [V100, TINY], ids=["v100", "tiny"])
@pytest.mark.parametrize("layer", LAYERS, ids=lambda l: l.short())
def test_sizes_match_brute_force(layer, device):
    """Unpruned and pruned sizes equal a brute-force count with check_config."""
    unpruned, pruned = brute_force(layer, device)
    space = ConvSpace(layer, device)
    assert (space.unpruned_size, space.pruned_size) == (len(unpruned), len(pruned))


@pytest.mark.parametrize("pruned", [True, False])
def test_members_equal_brute_force_set(pruned):
    """Every index maps to a distinct brute-force member, and all members are reached."""
    layer = LAYERS[0]
    unpruned, pruned_set = brute_force(layer, TINY)
    space = ConvSpace(layer, TINY, pruned=pruned)
    got = {tuple(space.get(i)[p] for p in space.params) for i in range(len(space))}
    assert got == (pruned_set if pruned else unpruned)


def test_tiny_device_prunes_something():
    """On the small device the Table 1 constraints remove configurations."""
    space = ConvSpace(LAYERS[0], TINY)
    assert 0 < space.pruned_size < space.unpruned_size
    assert space.ratio == pytest.approx(space.pruned_size / space.unpruned_size)


@pytest.mark.parametrize("device", [V100, TINY], ids=["v100", "tiny"])
def test_winograd_sizes_match_brute_force(device):
    """Winograd sizes equal the brute force over e, tiles and threads."""
    unpruned, pruned = brute_force(WINO, device, "winograd", winograd_e=(2, 3))
    space = ConvSpace(WINO, device, "winograd", winograd_e=(2, 3))
    assert (space.unpruned_size, space.pruned_size) == (len(unpruned), len(pruned))


@pytest.mark.parametrize("algorithm,layer", [("direct", LAYERS[1]), ("winograd", WINO)])
def test_full_cp_sat_model_counts_agree(algorithm, layer):
    """The all-knob CP-SAT model has as many solutions as the factorised count."""
    kw = {"winograd_e": (2, 3)} if algorithm == "winograd" else {}
    dom = domain_for(layer, TINY, algorithm, **kw)
    space = ConvSpace(layer, TINY, algorithm, **kw)
    assert count_full_model(dom, pruned=False) == space.unpruned_size
    assert count_full_model(dom, pruned=True) == space.pruned_size


def test_winograd_prime_output_has_tiles():
    """A 13-wide output still has Winograd tiles (x/e divides ceil(13/e))."""
    layer = ConvLayer(n=1, c_in=4, h_in=13, w_in=13, c_out=8, k_h=3, k_w=3, padding=1)
    space = ConvSpace(layer, V100, "winograd", winograd_e=(2,))
    assert space.values("x") == [2, 14]


def test_get_index_round_trip():
    """index(get(i)) == i over the whole space."""
    space = ConvSpace(LAYERS[1], V100)
    assert all(space.index(space.get(i)) == i for i in range(len(space)))


def test_index_rejects_non_members():
    """Configs outside the space (bad divisibility, missing keys, floats) map to None."""
    space = ConvSpace(LAYERS[0], V100)
    cfg = space.get(0)
    assert space.index({**cfg, "x": 5}) is None
    assert space.index({k: v for k, v in cfg.items() if k != "tz"}) is None
    assert space.index({**cfg, "x": float(cfg["x"])}) is None
    with pytest.raises(IndexError):
        space.get(len(space))


@given(c_in=st.integers(1, 6), hw=st.integers(3, 12), c_out=st.integers(1, 16),
       k=st.integers(1, 3), stride=st.integers(1, 2), seed=st.integers(0, 2**32 - 1),
       tiny=st.booleans())
def test_samples_satisfy_all_constraints(c_in, hw, c_out, k, stride, seed, tiny):
    """Every sampled config passes check_config, the template and Table 1."""
    layer = ConvLayer(n=1, c_in=c_in, h_in=hw, w_in=hw, c_out=c_out, k_h=k, k_w=k,
                      stride=stride)
    device = TINY if tiny else V100
    try:
        space = ConvSpace(layer, device)
    except ValueError:  # nothing fits the tiny device; the message says so
        return
    rng = np.random.default_rng(seed)
    for i in space.sample(20, rng):
        cfg = space.get(i)
        assert check_config(layer, config_from_dict(cfg), device) == []
        assert template_holds(layer, cfg, space.domain)
        assert table1_holds(layer, cfg, space.domain)


@given(c_in=st.integers(1, 4), hw=st.integers(4, 13), c_out=st.integers(1, 12),
       pad=st.integers(0, 1), seed=st.integers(0, 2**32 - 1), tiny=st.booleans())
def test_winograd_samples_satisfy_all_constraints(c_in, hw, c_out, pad, seed, tiny):
    """Every sampled Winograd config passes check_config, the template and Table 1."""
    layer = ConvLayer(n=1, c_in=c_in, h_in=hw, w_in=hw, c_out=c_out, k_h=3, k_w=3, padding=pad)
    device = TINY if tiny else V100
    try:
        space = ConvSpace(layer, device, "winograd", winograd_e=(2, 3))
    except ValueError:  # nothing fits the tiny device; the message says so
        return
    for i in space.sample(20, np.random.default_rng(seed)):
        cfg = space.get(i)
        assert check_config(layer, config_from_dict(cfg, "winograd"), device) == []
        assert template_holds(layer, cfg, space.domain)
        assert table1_holds(layer, cfg, space.domain)


def test_sample_is_uniform():
    """Single draws hit every config about equally often (chi-square, fixed seed)."""
    space = ConvSpace(LAYERS[0], TINY)
    n = len(space)
    assert 20 <= n <= 2000
    rng = np.random.default_rng(12345)
    draws = np.array([space.sample(1, rng)[0] for _ in range(40 * n)])
    counts = np.bincount(draws, minlength=n)
    assert chisquare(counts).pvalue > 1e-3


def test_sample_distinct_and_bounded():
    """sample(n) returns min(n, len) distinct indices."""
    space = ConvSpace(LAYERS[0], TINY)
    got = space.sample(len(space) + 5, np.random.default_rng(0))
    assert sorted(got) == list(range(len(space)))


def test_neighbours_are_valid_and_one_knob_apart_without_repair():
    """Neighbours are members; those differing in one knob are symmetric."""
    space = ConvSpace(LAYERS[0], V100)
    rng = np.random.default_rng(1)
    for i in space.sample(40, rng):
        cfg = space.get(i)
        nbs = space.neighbours(i)
        assert nbs and i not in nbs
        for j in nbs:
            other = space.get(j)
            changed = [p for p in space.params if other[p] != cfg[p]]
            assert changed
            if len(changed) == 1:
                assert i in space.neighbours(j)


def test_neighbours_step_to_adjacent_value():
    """Changing only x moves to the nearest valid x on each side."""
    space = ConvSpace(LAYERS[0], V100)
    i = space.index({"x": 2, "y": 2, "z": 4, "alpha": 2, "tx": 1, "ty": 1, "tz": 1})
    xs = sorted(space.get(j)["x"] for j in space.neighbours(i)
                if {p for p in space.params if space.get(j)[p] != space.get(i)[p]} == {"x"})
    assert xs == [1, 3]


def test_features_have_knob_columns_first():
    """features() starts with the knob values and names every column."""
    space = ConvSpace(LAYERS[0], V100)
    idx = [0, 5, 9]
    feats = space.features(idx)
    assert feats.shape == (3, len(space.feature_names()))
    assert feats[:, : len(space.params)].tolist() == [
        [float(space.get(i)[p]) for p in space.params] for i in idx]


def test_describe_is_json_ready():
    """describe() reports both sizes and the value lists."""
    import json
    d = json.loads(json.dumps(ConvSpace(LAYERS[0], TINY).describe()))
    assert d["pruned_size"] < d["unpruned_size"] and set(d["values"]) == set(d["params"])


def test_winograd_neighbours_valid_and_change_e():
    """Winograd neighbours are members, and changing e repairs x and y to valid tiles."""
    space = ConvSpace(WINO, V100, "winograd", winograd_e=(2, 3))
    changed_e = False
    for i in space.sample(30, np.random.default_rng(2)):
        cfg = space.get(i)
        for j in space.neighbours(i):
            other = space.get(j)
            assert space.is_valid(other) and j != i
            changed_e |= other["e"] != cfg["e"]
    assert changed_e


@pytest.mark.parametrize("algorithm,layer", [("direct", LAYERS[1]), ("winograd", WINO)])
def test_knobs_and_memoised_neighbours_agree_with_get(algorithm, layer):
    """knobs() rows equal get() (any order, repeats), neighbours() is stable and a fresh list."""
    space = ConvSpace(layer, V100, algorithm)
    idx = space.sample(60, np.random.default_rng(3))
    idx = idx + idx[:7][::-1]
    rows = space.knobs(idx)
    assert [dict(zip(space.params, r)) for r in rows.tolist()] == [space.get(i) for i in idx]
    assert np.array_equal(space.features(idx)[:, : len(space.params)], rows)
    with pytest.raises(IndexError):
        space.knobs([0, len(space)])
    for i in idx[:10]:
        first = space.neighbours(i)
        first.append(-1)  # callers may mutate what they get
        assert space.neighbours(i) == first[:-1] == ConvSpace(layer, V100, algorithm).neighbours(i)


@pytest.mark.parametrize("layer, device, needle", [
    (None, "v100", "layer must be a iobound.layer.ConvLayer"),
    ("alexnet.conv1", "v100", "layer must be a iobound.layer.ConvLayer"),
    (ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1), None, "device must be a iobound.device_spec.Device"),
    (ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1), 5, "device must be a iobound.device_spec.Device"),
])
def test_wrong_layer_or_device_object_is_named(layer, device, needle):
    """Was an AttributeError from deep inside the domain build."""
    from iobound.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match=needle):
        ConvSpace(layer, device)
