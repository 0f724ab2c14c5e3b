"""Kernel configs: parsing, round trips, sizes that match the dataflow, and rejection reasons."""

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from dataflow.direct import DirectTiling, direct_footprint
from dataflow.winograd import WinogradTiling, winograd_footprint
from iobound.devices import get_device
from iobound.layer import ConvLayer
from kernels.config import (
    DirectConfig, WinogradConfig, accumulators_per_thread, check_config, config_from_dict,
    grid_shape, onchip_words, parse_config, register_words, shared_memory_bytes,
    shared_memory_words,
)
from kernels.limits import MAX_ACCUMULATORS_PER_THREAD

LAYER = ConvLayer(n=2, c_in=8, h_in=16, w_in=16, c_out=16, k_h=3, k_w=3, padding=1)


def test_parse_config_infers_winograd_from_e():
    """A config string with e parses to a WinogradConfig."""
    assert parse_config("e=2,x=4,y=4,z=4,tx=2,ty=2,tz=2") == WinogradConfig(2, 4, 4, 4, 2, 2, 2)


def test_parse_config_rejects_unknown_and_missing_keys():
    """Unknown keys and missing keys are ValueErrors naming them."""
    with pytest.raises(ValueError, match="unknown direct config key"):
        parse_config("x=4,y=4,z=4,alpha=1,tx=1,ty=1,tz=1,w=3")
    with pytest.raises(ValueError, match="missing alpha"):
        parse_config("x=4,y=4,z=4,tx=1,ty=1,tz=1", "direct")
    with pytest.raises(ValueError, match="integer"):
        parse_config("x=four")


@given(st.lists(st.sampled_from(["x", "y", "z", "alpha", "e", "tx", "ty", "tz"]), min_size=1,
                max_size=6, unique=True).flatmap(lambda keys: st.tuples(
                    st.just(keys), st.sampled_from(keys), st.integers(0, len(keys)))),
       st.integers(1, 9), st.integers(1, 9))
def test_a_key_given_twice_is_refused_naming_it(case, first, second):
    """"x=3,...,x=2": which was meant? Refused naming the key (it was the last one, silently),
    as the layer spec refuses a key given twice."""
    keys, twice, at = case
    items = [f"{k}={first}" for k in keys]
    items.insert(at, f" {twice} ={second}")
    with pytest.raises(ValueError, match=f"{twice} given twice"):
        parse_config(",".join(items))


def test_non_positive_knob_is_rejected():
    """Knobs must be positive integers."""
    with pytest.raises(ValueError, match="tz"):
        DirectConfig(4, 4, 4, 1, 1, 1, 0)


@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9), st.integers(1, 9))
def test_dict_round_trip(x, y, z, alpha):
    """to_dict / config_from_dict give back an equal config."""
    cfg = DirectConfig(x, y, z, alpha, 1, 1, 1)
    assert config_from_dict(cfg.to_dict()) == cfg
    assert config_from_dict(cfg.to_dict(), "direct").tiling == DirectTiling(x, y, z, alpha)


@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 8), st.integers(1, 4),
       st.integers(1, 3), st.integers(1, 2), st.integers(1, 2))
def test_direct_sizes_equal_dataflow_footprint(x, y, z, alpha, stride, k, dil):
    """Shared and register words equal dataflow.direct.direct_footprint."""
    layer = ConvLayer(n=1, c_in=4, h_in=20, w_in=20, c_out=8, k_h=k + 1, k_w=k,
                      stride=stride, dilation=dil)
    cfg = DirectConfig(x, y, z, alpha, 1, 1, 1)
    fp = direct_footprint(layer, cfg.tiling)
    assert (shared_memory_words(layer, cfg), register_words(layer, cfg)) == (fp.shared_words, fp.register_words)
    assert onchip_words(layer, cfg) == fp.total
    assert shared_memory_bytes(layer, cfg) == 4 * fp.shared_words


@given(st.sampled_from([2, 3, 4]), st.integers(1, 3), st.integers(1, 3), st.integers(1, 4))
def test_winograd_sizes_are_the_dataflow_footprint_with_transformed_operands(e, xt, yt, z):
    """Register words equal dataflow.winograd.winograd_footprint's; shared words are its
    input rectangle with the z kernels and xt * yt tiles transformed ((e + r - 1)^2 words
    each, padded to an odd stride) in place of the raw r x r kernels."""
    cfg = WinogradConfig(e, xt * e, yt * e, z, 1, 1, 1)
    fp = winograd_footprint(LAYER, WinogradTiling(e, xt * e, yt * e, z))
    r = LAYER.k_h
    n = e + r - 1
    assert register_words(LAYER, cfg) == fp.register_words
    stride = n * n + 1 if n % 2 == 0 else n * n
    assert shared_memory_words(LAYER, cfg) == fp.shared_words - z * r * r + (z + xt * yt) * stride


def test_grid_covers_every_output_with_partial_tiles():
    """The grid has n*ceil(w_out/x) x ceil(h_out/y) x ceil(c_out/z) blocks."""
    assert grid_shape(LAYER, DirectConfig(5, 3, 6, 1, 1, 1, 1)) == (2 * 4, 6, 3)


def test_valid_config_has_no_reasons():
    """A config within every limit passes."""
    assert check_config(LAYER, DirectConfig(8, 8, 8, 2, 8, 4, 2), "a100") == []


def test_thread_divisibility_reasons():
    """Every thread count that does not divide its tile is named."""
    reasons = check_config(LAYER, DirectConfig(8, 8, 8, 2, 3, 5, 2))
    assert reasons == ["tx=3 must divide x=8", "ty=5 must divide y=8"]


def test_winograd_divisibility_reasons():
    """Winograd tiles must be multiples of e and threads must divide the tile counts."""
    assert check_config(LAYER, WinogradConfig(2, 5, 4, 4, 1, 1, 1)) == ["x=5 must be a multiple of e=2"]
    assert check_config(LAYER, WinogradConfig(2, 4, 4, 4, 4, 1, 1)) == ["tx=4 must divide x/e=2"]


def test_winograd_not_applicable_reason():
    """Winograd on a strided layer is rejected with the layer's reason."""
    layer = LAYER.replace(stride=(2, 2))
    assert check_config(layer, WinogradConfig(2, 4, 4, 4, 1, 1, 1)) == [
        "Winograd needs stride 1, got stride=(2, 2)"]


def test_tile_larger_than_layer_is_rejected():
    """Tiles beyond the output (the dataflow's rule) are rejected."""
    assert "larger than" in check_config(LAYER, DirectConfig(32, 4, 4, 1, 1, 1, 1))[0]


def test_shared_memory_over_device_limit():
    """A tile whose staged input exceeds 48 KiB is rejected for that reason."""
    layer = ConvLayer(n=1, c_in=64, h_in=64, w_in=64, c_out=64, k_h=3, k_w=3, padding=1)
    cfg = DirectConfig(32, 32, 4, 16, 32, 8, 1)
    reasons = check_config(layer, cfg, "a100")
    assert any("shared memory" in r and "49152 B" in r for r in reasons)
    assert shared_memory_bytes(layer, cfg) > get_device("a100").shared_mem_per_block_bytes


def test_threads_over_device_limit():
    """More than 1024 threads per block is rejected."""
    layer = ConvLayer(n=1, c_in=4, h_in=64, w_in=64, c_out=8, k_h=1, k_w=1)
    reasons = check_config(layer, DirectConfig(64, 32, 1, 1, 64, 32, 1), "a100")
    assert any("2048 threads exceed 1024" in r for r in reasons)


def test_register_cap():
    """More accumulator words per thread than the cap is rejected, and the count is exact."""
    cfg = DirectConfig(16, 16, 16, 1, 4, 4, 1)
    assert accumulators_per_thread(LAYER, cfg) == 256 > MAX_ACCUMULATORS_PER_THREAD
    assert any("256 register words per thread" in r for r in check_config(LAYER, cfg))


def test_register_file_estimate():
    """Many threads with many accumulators exceed an SM's register file."""
    layer = ConvLayer(n=1, c_in=4, h_in=64, w_in=64, c_out=64, k_h=1, k_w=1)
    cfg = DirectConfig(32, 32, 64, 1, 32, 32, 1)  # 1024 threads x (64 acc + overhead)
    reasons = check_config(layer, cfg, "a100")
    assert reasons and all("registers of an SM" in r for r in reasons)


@given(st.sampled_from([2, 3, 4]), st.integers(1, 2), st.integers(1, 2), st.integers(1, 4),
       st.integers(1, 2))
def test_winograd_onchip_words_are_the_arrays_the_kernel_declares(e, xt, yt, z, tz):
    """S of a Winograd kernel = its shared arrays + per thread the arrays live in the channel
    loop (acc, u, v, partial), read off the generated source's declarations."""
    from kernels.codegen_winograd import generate_winograd

    assume(z % tz == 0)
    layer = ConvLayer(n=1, c_in=2, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)
    cfg = WinogradConfig(e, xt * e, yt * e, z, xt, yt, tz)
    assume(check_config(layer, cfg) == [])  # e.g. over the register cap
    code = generate_winograd(layer, cfg).code
    for decl in ("float acc[ZT][YW][XW][NT * NT];", "float u[ZT][NT * NT];",
                 "float v[NT * NT];", "float partial[NT * NT];",
                 "float in[IN_ROWS][IN_COLS];", "float u[Z][TSTRIDE];", "float v[TILES][TSTRIDE];",
                 "TSTRIDE = (NT * NT) | 1;"):
        assert decl in code, decl
    n, zt = e + 2, z // tz
    xw, yw = 1, 1  # one Winograd tile column/row per thread (tx = x/e, ty = y/e)
    per_thread = zt * yw * xw * n * n + zt * n * n + n * n + n * n
    shared = (yt * e + 2) * (xt * e + 2) + (z + xt * yt) * (n * n + (n * n + 1) % 2)
    assert shared_memory_words(layer, cfg) == shared
    assert onchip_words(layer, cfg) == shared + cfg.threads * per_thread


# -- bad input: project errors naming the problem, never a truncation --------------------

from iobound.errors import InvalidInputError  # noqa: E402

_DIRECT = {"x": 4, "y": 4, "z": 2, "alpha": 1, "tx": 2, "ty": 2, "tz": 1}


@given(st.sampled_from(sorted(_DIRECT)), st.floats(allow_nan=True, allow_infinity=True))
def test_a_float_knob_is_refused_not_truncated(key, value):
    """{"x": 2.7, ...} was the config x=2: measured and logged as another config. A float
    (NaN and inf included) is an InvalidInputError naming the knob, as in ConvLayer."""
    with pytest.raises(InvalidInputError, match=key):
        config_from_dict({**_DIRECT, key: value})


@pytest.mark.parametrize("value", [None, True, "a", [4], 2.0, float("nan")])
def test_a_knob_of_the_wrong_type_is_an_input_error(value):
    """None, a bool, a non-numeric string, a list, a float: InvalidInputError naming x
    (were TypeError, ValueError, or True silently taken as 1)."""
    with pytest.raises(InvalidInputError, match=r"^x( must be an integer|: )"):
        config_from_dict({**_DIRECT, "x": value})


@given(st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint16]),
       st.integers(1, 100))
def test_numpy_integer_knobs_are_integers(dtype, v):
    """A numpy integer is an integer (the project's rule): the config holds the same ints."""
    cfg = DirectConfig(dtype(v), 1, 1, 1, 1, 1, 1)
    assert cfg == DirectConfig(v, 1, 1, 1, 1, 1, 1) and type(cfg.x) is int
    assert config_from_dict({**_DIRECT, "x": dtype(v)}).x == v


def test_integer_strings_are_still_knobs():
    """Values given as integer strings keep working (as before)."""
    assert config_from_dict({k: str(v) for k, v in _DIRECT.items()}) == config_from_dict(_DIRECT)


def test_a_knob_past_the_tile_limit_is_refused():
    """10**30 is no tile edge: refused at construction, naming the knob and the limit."""
    with pytest.raises(InvalidInputError, match=r"x=1000000000000000000000000000000 is above the limit"):
        DirectConfig(10**30, 1, 1, 1, 1, 1, 1)


@pytest.mark.parametrize("d", [None, [("x", 4)], "x=4", 5])
def test_config_from_dict_needs_a_mapping(d):
    """Not a mapping: InvalidInputError (was AttributeError)."""
    with pytest.raises(InvalidInputError, match="mapping"):
        config_from_dict(d)


def test_unknown_non_string_key_is_named():
    """A key that is no string is an unknown key (was a TypeError while joining names)."""
    with pytest.raises(InvalidInputError, match="unknown direct config key"):
        config_from_dict({**_DIRECT, 1: 2})


@pytest.mark.parametrize("text", [None, 5, b"x=4"])
def test_parse_config_needs_a_string(text):
    """parse_config of no string: InvalidInputError (was AttributeError)."""
    with pytest.raises(InvalidInputError, match="string"):
        parse_config(text)


def test_default_thread_block_takes_numpy_tiles_and_refuses_bools():
    """numpy integer tiles are tiles; True is not one; no mapping is an input error."""
    from kernels.thread_block import default_thread_block
    assert default_thread_block({"x": np.int64(8), "y": np.int32(8), "z": np.int64(8)}) == \
        default_thread_block({"x": 8, "y": 8, "z": 8})
    with pytest.raises(InvalidInputError, match="missing or not positive: x$"):
        default_thread_block({"x": True, "y": 2, "z": 2})
    with pytest.raises(InvalidInputError, match="mapping"):
        default_thread_block(None)


@pytest.mark.parametrize("layer, config, device, match", [
    (None, DirectConfig(2, 2, 2, 1, 1, 1, 1), None, "layer must be a ConvLayer"),
    (LAYER, None, None, "config must be"),
    (LAYER, {"x": 2}, None, "config must be"),
    (LAYER, DirectConfig(2, 2, 2, 1, 1, 1, 1), 5, "device must be"),
])
def test_check_config_operands_of_the_wrong_type(layer, config, device, match):
    """check_config (and so the generators) refuse a non-layer, non-config or non-device
    with InvalidInputError (were AttributeErrors from deep inside)."""
    from kernels.generate import generate
    with pytest.raises(InvalidInputError, match=match):
        check_config(layer, config, device)
    if config is not None and not isinstance(config, dict):
        with pytest.raises(InvalidInputError, match=match):
            generate(layer, config, device)


def test_a_device_of_fewer_registers_a_thread_is_not_more_lenient():
    """The register-file rule is the domain's: a thread's need is not capped at the device's
    maximum (a 152-register need counted as 63 fitted a device of 63 a thread)."""
    import dataclasses

    from search.conv_space import ConvSpace

    layer = ConvLayer(1, 1, 64, 64, 64, 1, 1)
    cfg = DirectConfig(x=32, y=32, z=64, alpha=1, tx=16, ty=16, tz=2)
    small = dataclasses.replace(get_device("v100"), name="v100-63regs", registers_per_thread_max=63)
    for dev in (get_device("v100"), small):
        reasons = check_config(layer, cfg, dev)
        assert any("about 152 registers" in r for r in reasons), reasons
        assert ConvSpace(layer, dev, "direct", pruned=False).index(cfg) is None


@pytest.mark.parametrize("algorithm", [0, False, ""])
def test_a_falsy_algorithm_is_no_algorithm_not_a_guess(algorithm):
    """Only None means "guess from the tiles"; bound_report refuses the same values."""
    from kernels.thread_block import default_thread_block
    with pytest.raises(InvalidInputError, match="unknown algorithm"):
        default_thread_block({"x": 4, "y": 4, "z": 4}, algorithm=algorithm)


@pytest.mark.parametrize("flag", ["no", 0, None])
def test_default_threads_is_a_flag(flag):
    with pytest.raises(InvalidInputError, match="default_threads must be True or False"):
        parse_config("x=8,y=8,z=8,alpha=2", default_threads=flag)
