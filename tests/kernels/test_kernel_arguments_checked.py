"""The kernels' public functions refuse bad arguments with an InvalidInputError naming
them: tiles of floats, strings or bools were truncated or converted (``(7.5, 7, 16, 4)``
counted as ``(7, 7, 16, 4)``), a list tile was an unhashable TypeError from the cache, a
None config an AttributeError, a NaN tolerance failed every output, and a mistyped cache
root became a new tree of folders."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound import ConvLayer
from iobound.errors import InvalidInputError
from iobound.networks import get_layer
from kernels import config as kc
from kernels.analytic import flops, io_words
from kernels.kernel_flops import kernel_flops, tile_flops
from kernels.perf_model import estimate_ms
from kernels.reference import compare

L4 = get_layer("resnet18.conv4_1b")
LAYER = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
CFG = kc.DirectConfig(x=4, y=4, z=4, alpha=2, tx=4, ty=2, tz=2)


@pytest.mark.parametrize("fn", [io_words, flops, tile_flops])
@pytest.mark.parametrize("tile, fragment", [
    ((7.5, 7, 16, 4), "tile x must be an integer, got 7.5"),
    ((7.0, 7, 16, 4), "tile x must be an integer, got 7.0"),
    (("7", 7, 16, 4), "tile x must be an integer, got '7'"),
    ((True, 7, 16, 4), "tile x must be an integer, got True"),
    ([7, 7, 16, 4], "a direct tile must be a tuple of 4 integers"),
    ((7, 7, 16), "a direct tile must be a tuple of 4 integers"),
    ((7, 7, 16, 4, 1), "a direct tile must be a tuple of 4 integers"),
    (None, "a direct tile must be a tuple of 4 integers"),
])
def test_tiles_must_be_tuples_of_integers(fn, tile, fragment):
    """Refused, never truncated or converted, and never a TypeError."""
    with pytest.raises(InvalidInputError, match=fragment):
        fn(L4, "direct", tile)


@given(st.tuples(*(st.integers(1, 32) for _ in range(4))))
def test_io_words_and_flops_refuse_the_same_tiles(tile):
    """A tile io_words refuses, flops refuses with the same message; one it counts, flops
    counts too (the 200x-too-large flops of a 100 x 100 x 1000 tile were returned)."""
    outcomes = []
    for fn in (io_words, flops):
        try:
            outcomes.append(("ok", fn(L4, "direct", tile) > 0))
        except InvalidInputError as exc:
            outcomes.append(("refused", str(exc)))
    assert outcomes[0] == outcomes[1]


def test_layer_is_named():
    for fn in (io_words, flops, tile_flops):
        with pytest.raises(InvalidInputError, match="layer must be a ConvLayer"):
            fn(None, "direct", (1, 1, 1, 1))
    with pytest.raises(InvalidInputError, match="layer must be a ConvLayer"):
        kernel_flops(None, CFG)
    with pytest.raises(InvalidInputError, match="config must be a DirectConfig"):
        kernel_flops(LAYER, {"x": 4})


SIZES = [kc.input_tile_shape, kc.shared_memory_words, kc.shared_memory_bytes, kc.register_words,
         kc.onchip_words, kc.accumulators_per_thread, kc.grid_shape]


@pytest.mark.parametrize("fn", SIZES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("bad", [None, {"x": 4, "y": 4, "z": 4, "alpha": 2}, CFG.tiling])
def test_sizes_name_a_config_that_is_none(fn, bad):
    """A None, a dict or a tiling where a config belongs was an AttributeError."""
    with pytest.raises(InvalidInputError, match="config must be a DirectConfig or WinogradConfig"):
        fn(LAYER, bad)
    with pytest.raises(InvalidInputError, match="layer must be a ConvLayer"):
        fn(None, CFG)


def test_sizes_of_configs_larger_than_the_layer_are_still_given():
    """A search ranks invalid points too: the sizes of a config whose tile exceeds the layer
    are the formula's (check_config names the problem, it does not raise)."""
    big = kc.DirectConfig(x=16, y=4, z=4, alpha=2, tx=4, ty=2, tz=2)
    assert kc.shared_memory_words(LAYER, big) == 2 * 6 * 18 + 4 * 2 * 9
    assert kc.grid_shape(LAYER, big) == (1, 2, 2)
    assert "tile x=16 is larger than w_out=8" in kc.check_config(LAYER, big)


@pytest.mark.parametrize("kwargs, fragment", [
    ({"io_bytes": "x"}, "io_bytes must be finite numbers >= 0"),
    ({"flops": None}, "flops must be finite numbers >= 0"),
    ({"ilp": float("nan")}, "ilp must be finite numbers >= 0"),
    ({"active_warps": -1}, "active_warps must be finite numbers >= 0"),
    ({"utilisation": [1.0, "a"]}, "utilisation must be finite numbers >= 0"),
])
def test_estimate_ms_names_a_bad_argument(kwargs, fragment):
    """estimate_ms('x', ...) was a ValueError from numpy."""
    args = {"io_bytes": 9e8, "flops": 0.0, "active_warps": 64, "ilp": 8, "utilisation": 1.0}
    args.update(kwargs)
    with pytest.raises(InvalidInputError, match=fragment):
        estimate_ms(device="v100", **args)


@pytest.mark.parametrize("tol", [float("nan"), -1.0, np.array([0.1, -0.1])])
def test_compare_refuses_a_nan_or_negative_tolerance(tol):
    """Such a tolerance failed every output (ok=False) as if the kernel were wrong."""
    with pytest.raises(InvalidInputError, match="tolerance >= 0"):
        compare(np.ones(2), np.ones(2), tol)
    assert compare(np.ones(2), np.ones(2), 0.0).ok


def test_a_cache_root_whose_parent_is_missing_is_refused(tmp_path):
    """emulate_and_check(cache_root='/nonexistent/x/y') created /nonexistent/x/y: the root's
    parent must exist (the cache makes its root folder, not the folders above it)."""
    from kernels.cache import cache_dir
    from kernels.verify import emulate_and_check
    root = tmp_path / "missing" / "x" / "y"
    with pytest.raises(InvalidInputError, match="does not exist"):
        emulate_and_check(LAYER, CFG, cache_root=root)
    with pytest.raises(InvalidInputError, match="does not exist"):
        cache_dir("emu", root)
    assert not (tmp_path / "missing").exists()
    assert cache_dir("emu", tmp_path / "cache") == (tmp_path / "cache" / "emu").resolve()


@pytest.mark.parametrize("config", [dict(x=4, y=4, z=4, alpha=2, tx=4, ty=2, tz=2), None, "x=4"])
def test_generate_and_emulate_take_a_kernel_config_not_a_dict(config):
    """A dict config was "unknown algorithm" (kernel_family read no algorithm from it):
    generate and emulate_and_check now name what they take, and for a dict how to make one."""
    from kernels.generate import generate
    from kernels.verify import emulate_and_check

    hint = "config_from_dict makes one" if isinstance(config, dict) else ""
    for call in (lambda: generate(LAYER, config), lambda: emulate_and_check(LAYER, config)):
        with pytest.raises(InvalidInputError, match=f"config must be a DirectConfig or "
                                                    f"WinogradConfig, got {type(config).__name__}.*{hint}"):
            call()
