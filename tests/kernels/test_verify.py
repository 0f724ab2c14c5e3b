"""Tests of the reduced-copy emulator check (kernels.verify.reduced_layer / emulator_check)."""

import numpy as np
from hypothesis import assume, given, strategies as st

from iobound.layer import ConvLayer
from kernels.config import DirectConfig, check_config, config_from_dict
from kernels.verify import emulator_check, reduced_layer
from search.conv_space import ConvSpace

SMALL = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=16, k_h=3, k_w=3, padding=1)


@given(st.integers(1, 16), st.sampled_from([7, 8, 12, 14]), st.sampled_from([8, 16, 32]),
       st.sampled_from([(1, 1, 0), (3, 1, 1), (3, 2, 1), (5, 1, 2)]), st.integers(0, 10**6))
def test_reduced_layer_still_fits_the_config(c_in, hw, c_out, ksp, seed):
    """The reduced copy keeps kernel/stride/padding and the config still passes check_config."""
    k, stride, pad = ksp
    layer = ConvLayer(n=1, c_in=c_in, h_in=hw, w_in=hw, c_out=c_out, k_h=k, k_w=k,
                      stride=stride, padding=pad)
    space = ConvSpace(layer, "v100", "direct")
    cfg = config_from_dict(space.get(space.sample(1, np.random.default_rng(seed))[0]), "direct")
    small = reduced_layer(layer, cfg)
    assert (small.k_h, small.stride, small.padding) == (layer.k_h, layer.stride, layer.padding)
    assert small.h_out <= layer.h_out and small.c_out <= layer.c_out and small.c_in <= layer.c_in
    assert check_config(small, cfg) == []


def test_emulator_check_passes_for_a_good_config():
    """A valid config's reduced copy matches numpy and the traffic formula."""
    chk = emulator_check(SMALL, DirectConfig(x=4, y=4, z=8, alpha=4, tx=4, ty=4, tz=2))
    assert chk.checked and chk.matches_numpy and chk.traffic_matches
    assert chk.traffic_words == chk.formula_words > 0
    assert chk.flops_matches and chk.flops == chk.model_flops > 0
    assert list(chk.to_dict()) == ["checked", "layer", "matches_numpy", "max_rel_err",
                                   "traffic_words", "formula_words", "traffic_matches",
                                   "flops", "model_flops", "flops_matches"]


def test_config_that_does_not_fit_is_reported_not_raised():
    """A config that cannot run on the reduced copy gives checked=False with the reason."""
    chk = emulator_check(SMALL, DirectConfig(x=4, y=4, z=8, alpha=4, tx=3, ty=4, tz=2))
    assert not chk.checked and "tx" in chk.reason and chk.matches_numpy is None
    assert chk.to_dict() == {"checked": False, "reason": chk.reason, "layer": chk.layer}


# -- bad input to the emulator entry points ----------------------------------------------

import pytest  # noqa: E402

from iobound.errors import InvalidInputError  # noqa: E402
from kernels.emulator import build_emulator, check_problem_size, emulate  # noqa: E402
from kernels.generate import generate  # noqa: E402
from kernels.reference import compare, random_problem  # noqa: E402
from kernels.verify import emulate_and_check  # noqa: E402

TINY = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3)
TINY_CFG = DirectConfig(2, 2, 2, 1, 2, 2, 1)


@pytest.mark.parametrize("seed", [-1, 1.5, "a", None, True, 2**70])
def test_bad_seed_is_an_input_error_before_anything_runs(seed):
    """The data seed is an integer in limits.SEED (-1 was numpy's ValueError, 1.5 and "a"
    TypeErrors, None silently unseeded data, True the seed 1)."""
    with pytest.raises(InvalidInputError, match="seed"):
        emulate_and_check(TINY, TINY_CFG, seed=seed, with_bound=False)


def test_numpy_seed_is_a_seed():
    """A numpy integer seed gives the same check as the int."""
    a = emulate_and_check(TINY, TINY_CFG, seed=np.int64(3), with_bound=False)
    b = emulate_and_check(TINY, TINY_CFG, seed=3, with_bound=False)
    assert a.ok and (a.max_abs_err, a.global_loads) == (b.max_abs_err, b.global_loads)


@pytest.mark.parametrize("call, match", [
    (lambda: emulate_and_check(None, TINY_CFG), "layer must be a ConvLayer"),
    (lambda: emulate_and_check(TINY, TINY_CFG, with_bound="no"), "with_bound"),
    (lambda: emulator_check(TINY, None), "config must be"),
    (lambda: reduced_layer(None, TINY_CFG), "layer must be"),
    (lambda: check_problem_size(None), "layer must be"),
    (lambda: build_emulator(None), "source text"),
    (lambda: build_emulator("int k;", timeout=float("nan")), "timeout"),
    (lambda: build_emulator("int k;", timeout=-1), "timeout"),
    (lambda: emulate(None, *random_problem(TINY, np.random.default_rng(0))), "KernelSource"),
    (lambda: random_problem(TINY, 5), "Generator"),
    (lambda: compare(np.zeros(3), np.zeros(4), np.zeros(3)), "one shape"),
])
def test_emulator_entry_points_refuse_bad_arguments(call, match):
    """Wrong types, NaN or negative build timeouts, mismatched arrays: InvalidInputError
    (were AttributeError, numpy ValueError, or an EmulatorBuildError 'timed out after -1 s')."""
    with pytest.raises(InvalidInputError, match=match):
        call()


@pytest.mark.parametrize("x, match", [(None, "input shape"), ("x", "input shape"),
                                      ("complex", "real numbers"), ("ragged", "ragged")])
def test_emulate_refuses_what_is_no_real_array(x, match):
    """None, a string, a ragged list: InvalidInputError (were AttributeError); complex data
    is refused, not cast to its real part with a warning."""
    src = generate(TINY, TINY_CFG)
    xs, w = random_problem(TINY, np.random.default_rng(0))
    x = {"complex": xs.astype(np.complex64), "ragged": [[1.0], [1.0, 2.0]]}.get(x, x)
    with pytest.raises(InvalidInputError, match=match):
        emulate(src, x, w)


def test_emulate_still_takes_nested_lists_and_float64():
    """Real data as nested lists or float64 is accepted (cast to fp32) as before."""
    src = generate(TINY, TINY_CFG)
    x, w = random_problem(TINY, np.random.default_rng(0))
    want = emulate(src, x, w).output
    assert np.array_equal(emulate(src, x.tolist(), w.astype(np.float64)).output, want)


@given(st.integers(1, 40), st.integers(1, 5), st.integers(1, 4), st.integers(0, 9),
       st.integers(1, 3), st.integers(1, 8))
def test_the_reduced_copy_keeps_the_edge_tile_whatever_the_padding(h_in, k, stride, pad,
                                                                    dilation, tile):
    """The copy's output ends in a tile that overhangs it as the layer's last tile
    overhangs the layer (same output modulo the tile), is no longer than the layer's, and
    has at most 2 tiles unless a 1-pixel input's output needs more, then the fewest
    whole tiles more (a padding of 5 around a 1x1 kernel made a 3-tile copy whose edge
    tile was full where the layer's held one row)."""
    assume((h_in + 2 * pad - dilation * (k - 1) - 1) >= 0)
    layer = ConvLayer(n=1, c_in=2, h_in=h_in, w_in=h_in, c_out=2, k_h=k, k_w=k, stride=stride,
                      padding=pad, dilation=dilation)
    small = reduced_layer(layer, DirectConfig(x=tile, y=tile, z=2, alpha=1, tx=1, ty=1, tz=1))
    for got, full, size in ((small.h_out, layer.h_out, small.h_in), (small.w_out, layer.w_out, small.w_in)):
        assert got % tile == full % tile and got <= full and 1 <= size
        shortest = max((1 + 2 * pad - layer.extent_h) // stride + 1, 1)
        assert got <= max(2 * tile, shortest + tile - 1) or got == full


@given(st.integers(1, 40), st.integers(1, 12))
def test_the_reduced_copy_keeps_a_short_last_channel_chunk(c_in, alpha):
    """alpha not dividing c_in: the copy's last chunk is as short as the layer's (it was
    min(c_in, 2 alpha), which alpha divides whenever c_in > 2 alpha), never longer."""
    assume(alpha <= c_in)
    layer = ConvLayer(n=1, c_in=c_in, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    got = reduced_layer(layer, DirectConfig(x=2, y=2, z=2, alpha=alpha, tx=1, ty=1, tz=1))
    assert got.c_in <= c_in and got.c_in % alpha == c_in % alpha


def test_a_batched_layers_copy_keeps_two_images_and_checks_them():
    """A batch of 5 is checked on 2 images (the images share grid x with the tile columns,
    an indexing a one-image copy never runs); the copy still matches numpy and the formula."""
    from kernels.verify import emulator_check, reduced_layer
    layer = ConvLayer(n=5, c_in=3, h_in=9, w_in=11, c_out=4, k_h=3, k_w=3, padding=1)
    cfg = DirectConfig(4, 4, 2, 2, 2, 2, 1)
    assert reduced_layer(layer, cfg).n == 2 and reduced_layer(layer.replace(n=1), cfg).n == 1
    chk = emulator_check(layer, cfg)
    assert chk.checked and chk.matches_numpy and chk.traffic_matches, chk
