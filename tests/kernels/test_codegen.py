"""Code generation: constants, rejection with reasons, and the SymPy-generated transforms."""

import ctypes
import subprocess

import numpy as np
import pytest

from iobound.layer import ConvLayer
from iobound.winograd_transforms import winograd_transforms
from kernels.codegen_direct import generate_direct, used_offsets_dense
from kernels.codegen_winograd import generate_winograd, transform_functions
from kernels.config import DirectConfig, WinogradConfig
from kernels.generate import generate
from kernels.source import InvalidConfigError, c_sum

LAYER = ConvLayer(n=2, c_in=3, h_in=9, w_in=10, c_out=4, k_h=3, k_w=3, stride=(2, 1), padding=1)


def test_sizes_are_compile_time_constants():
    """The layer and config appear as constexpr ints; the kernel takes only the three pointers."""
    src = generate_direct(LAYER, DirectConfig(x=4, y=2, z=2, alpha=2, tx=2, ty=2, tz=1))
    for line in ("constexpr int C_IN = 3;", "constexpr int MU_H = 2;", "constexpr int W_OUT = 10;",
                 "constexpr int X = 4, Y = 2, Z = 2, ALPHA = 2;", "constexpr int IN_ROWS = 5, IN_COLS = 6;"):
        assert line in src.code
    assert "iobound_direct(const float* __restrict__ input, const float* __restrict__ weight,\n" \
           "              float* __restrict__ output)" in src.code


def test_global_accesses_only_through_macros():
    """Every global load/store of the generated kernels goes through LDG/STG."""
    for src in (generate_direct(LAYER, DirectConfig(4, 2, 2, 2, 2, 2, 1)),
                generate_winograd(LAYER.replace(stride=(1, 1)), WinogradConfig(2, 4, 4, 2, 2, 2, 1))):
        kernel = src.code[src.code.index('extern "C" __global__'):src.code.index("#ifdef IOBOUND_EMULATOR\nextern")]
        assert kernel.count("LDG(&input[") == 1 and kernel.count("LDG(&weight[") == 1
        assert kernel.count("STG(&output[") == 1
        assert "input[" not in kernel.replace("LDG(&input[", "")


def test_invalid_config_is_rejected_before_generation_with_reasons():
    """generate raises InvalidConfigError (a ValueError) listing every reason."""
    with pytest.raises(InvalidConfigError) as info:
        generate(LAYER, DirectConfig(x=4, y=2, z=2, alpha=2, tx=3, ty=3, tz=1))
    assert info.value.reasons == ["tx=3 must divide x=4", "ty=3 must divide y=2"]
    with pytest.raises(ValueError, match="Winograd needs stride 1"):
        generate(LAYER, WinogradConfig(2, 4, 4, 2, 2, 2, 1))


def test_device_limits_are_checked_when_given():
    """A config over the device's shared memory is refused by the generator."""
    big = ConvLayer(n=1, c_in=64, h_in=64, w_in=64, c_out=64, k_h=3, k_w=3, padding=1)
    with pytest.raises(InvalidConfigError, match="shared memory"):
        generate(big, DirectConfig(32, 32, 4, 16, 32, 8, 1), "a100")


def test_wrong_config_type_is_a_value_error():
    """Each generator takes only its own config class."""
    with pytest.raises(ValueError, match="WinogradConfig"):
        generate_winograd(LAYER, DirectConfig(4, 2, 2, 2, 2, 2, 1))


@pytest.mark.parametrize("tile,stride,dil,k", [(t, s, d, k) for t in (1, 3) for s in (1, 2, 3)
                                                for d in (1, 2) for k in (1, 2, 3)])
def test_dense_used_offsets_agree_with_brute_force(tile, stride, dil, k):
    """used_offsets_dense is True exactly when every clipped tile's used rows form a prefix."""
    extent = (k - 1) * dil + 1
    brute = all({o * stride + i * dil for o in range(n) for i in range(k)} ==
                set(range((n - 1) * stride + extent)) for n in range(1, tile + 1))
    assert used_offsets_dense(tile, stride, dil, k) == brute


def test_c_sum_skips_zeros_and_unit_coefficients():
    """Linear combinations are emitted without zero terms or multiplications by one."""
    assert c_sum([0, -1, 2, 0.25], ["a", "b", "c", "d"]) == "-b + 2.0f * c + 0.25f * d"
    assert c_sum([0, 0], ["a", "b"]) == "0.0f"


@pytest.fixture(scope="module")
def transform_lib(tmp_path_factory):
    """The generated transform functions of F(e, 3), e = 2, 3, 4, built with g++ (no CUDA)."""
    libs = {}
    folder = tmp_path_factory.mktemp("transforms")
    for e in (2, 3, 4):
        n = e + 2
        code = (f"#define __device__\n#define __forceinline__ inline\n"
                f"constexpr int E = {e}, R = 3, NT = {n}, IN_COLS = {n};\n"
                f"{transform_functions(e, 3)}\n"
                "extern \"C\" void run(const float* d, const float* g, const float* m, float* v,"
                " float* u, float* y) { input_transform(d, v); kernel_transform(g, u);"
                " output_transform(m, y); }\n")
        src, lib = folder / f"t{e}.cpp", folder / f"t{e}.so"
        src.write_text(code)
        subprocess.run(["g++", "-O1", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
        libs[e] = ctypes.CDLL(str(lib)).run
    return libs


@pytest.mark.parametrize("e", [2, 3, 4])
def test_generated_transforms_equal_the_sympy_matrices(transform_lib, e):
    """C transforms compute B^T d B, G g G^T and A^T m A with SymPy's matrices (fp32 accuracy)."""
    AT, G, BT = winograd_transforms(e, 3).as_numpy()
    n = e + 2
    rng = np.random.default_rng(e)
    d, g, m = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((n, n), (3, 3), (n, n)))
    v, u, y = np.zeros((n, n), np.float32), np.zeros((n, n), np.float32), np.zeros((e, e), np.float32)
    ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    transform_lib[e](ptr(d), ptr(g), ptr(m), ptr(v), ptr(u), ptr(y))
    np.testing.assert_allclose(v, BT @ d @ BT.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(u, G @ g @ G.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y, AT @ m @ AT.T, rtol=1e-5, atol=1e-4)


def test_template_errors_name_the_template_or_the_placeholder():
    """An unknown template (was FileNotFoundError, or a path outside the package such as
    '../cache.py') or a missing placeholder value (KeyError) is an InvalidInputError."""
    from iobound.errors import InvalidInputError
    from kernels.template import render_template, template_text
    for name in ("nope.cu", "../cache.py", ""):
        with pytest.raises(InvalidInputError, match="unknown kernel template"):
            template_text(name)
    with pytest.raises(InvalidInputError, match=r"needs a value for \$\{"):
        render_template("direct.cu", layer="L")
