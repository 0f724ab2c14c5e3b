"""Hostile input to the kernels package's public functions: each is an InvalidInputError
naming the argument (or a corrected value), never a wrong answer or a raw exception.

One test per finding of the probe (numbered as in its report)."""

import dataclasses
import os

import numpy as np
import pytest

from dataflow.winograd import WinogradTiling
from iobound.devices import get_device
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from kernels import analytic, build_folders, cache, compiler_process, emulator, emulator_build
from kernels import config, config_types, families, gpu, grouping, kernel_flops, limits, nvcc
from kernels import nvrtc, ptxas, reference, source, template, toolchains, verify
from kernels.codegen_direct import generate_direct

L = ConvLayer(1, 4, 8, 8, 8, 3, 3, groups=2)
V100 = get_device("v100")
NAN = float("nan")


def _refused(match, func, *args, **kwargs):
    with pytest.raises(InvalidInputError, match=match):
        func(*args, **kwargs)


# 1 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: analytic.io_words(L, "winograd", (2, 4, 4, 2)),
    lambda: analytic.flops(L, "winograd", (2, 4, 4, 2)),
    lambda: kernel_flops.tile_flops(L, "winograd", (2, 4, 4, 2)),
    lambda: kernel_flops.winograd_tile_flops(L, WinogradTiling(2, 4, 4, 2)),
    lambda: kernel_flops.kernel_flops(L, config.WinogradConfig(2, 4, 4, 2, 1, 1, 1)),
    lambda: grouping.kernel_io(L, "winograd", WinogradTiling(2, 4, 4, 2)),
])
def test_winograd_counts_refuse_a_grouped_layer(call):
    _refused("Winograd is implemented for dense layers only", call)


# 2 ---------------------------------------------------------------------------------------

def test_grouped_direct_tile_must_keep_a_block_in_one_group():
    for func in (analytic.io_words, analytic.flops, kernel_flops.tile_flops):
        _refused(r"z=3 must divide c_out/groups=4", func, L, "direct", (2, 2, 3, 2))
    assert analytic.io_words(L, "direct", (2, 2, 2, 2)) > 0  # a fitting tile still counts


# 3 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: limits.launch_bounds_registers(V100, 0), "threads"),
    (lambda: limits.launch_bounds_registers(V100, -32), "threads"),
    (lambda: limits.launch_bounds_registers(V100, NAN), "threads"),
    (lambda: limits.launch_bounds_registers("v100", 32), "device must be a Device"),
    (lambda: limits.compiled_registers(-100, "direct", V100, 32), "words_per_thread"),
    (lambda: limits.shared_allocation(V100, -1000), "shared_bytes"),
    (lambda: limits.shared_allocation("v100", 0), "device must be a Device"),
    (lambda: limits.fits_register_file(16, -5, "direct", 65536), "threads"),
    (lambda: limits.thread_registers(-3, "direct"), "words_per_thread"),
    (lambda: limits.resident_blocks_per_sm(V100, True, 0, 40), "threads"),
    (lambda: limits.resident_blocks_per_sm(V100, "32", 0, 40), "threads"),
    (lambda: limits.register_kind(None, "direct"), "layer must be a ConvLayer"),
    (lambda: limits.register_kind(L, "foo"), "unknown algorithm 'foo'"),
])
def test_register_rules_check_their_arguments(call, match):
    _refused(match, call)


def test_register_rules_keep_their_values():
    assert int(limits.launch_bounds_registers(V100, 1024)) == 64
    assert int(limits.launch_bounds_registers(V100, 1e9)) == 0  # launches nothing
    assert limits.register_kind(L, "direct") == "direct"


# 4 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dims, match", [
    ((-1, -1, -1), "x=-1 is below the minimum 1"), ((0, 1, 1), "x=0 is below the minimum 1"),
    (("a", 1, 1), "x must be an integer"), ((3.0, 3, 1), "x must be an integer"),
    ((1, 1), "triple"), ("abc", "triple"),
])
def test_grid_and_block_sizes_are_positive_integer_triples(dims, match):
    _refused("grid " + match if "triple" not in match else "grid must be a " + match,
             limits.grid_fits, dims)
    _refused("block " + match if "triple" not in match else "block must be a " + match,
             limits.block_fits, dims)


def test_block_fits_keeps_its_rows():
    assert limits.block_fits(np.array([[1, 1, 64], [1, 1, 65]])).tolist() == [True, False]
    _refused("block sizes must be integers >= 1", limits.block_fits, np.array([[1, 0, 1]]))


@pytest.mark.parametrize("change, match", [
    ({"block": (0, 0, 0)}, "block x=0"), ({"block": (-1, 1, 1)}, "block x=-1"),
    ({"block": (3.0, 3, 1)}, "block x must be an integer"), ({"grid": (0, 1, 1)}, "grid x=0"),
])
def test_the_emulator_refuses_an_empty_launch(change, match):
    src = generate_direct(ConvLayer(1, 2, 5, 5, 2, 3, 3), config.DirectConfig(3, 3, 2, 1, 3, 1, 1))
    emulator.check_launch(src)
    _refused(match, emulator.check_launch, dataclasses.replace(src, **change))


# 5 ---------------------------------------------------------------------------------------

def test_arch_specific_variants_match_their_base_arch():
    assert toolchains.arch_supported("sm_90a", ("sm_80", "sm_90"), "13.0")
    assert toolchains.arch_supported("sm_100f", ("sm_100",), "12.9")
    assert not toolchains.arch_supported("sm_100f", ("sm_100",), "12.8")
    assert not toolchains.arch_supported("sm_80a", ("sm_80",), "13.0")
    assert not toolchains.arch_supported("sm_90a", ("sm_80",), "13.0")
    tc = toolchains.Toolchain("nvcc", "", "13.0", ("sm_90",))
    assert tc.supports("sm_90a") and not tc.supports("sm_90f")


@pytest.mark.skipif(toolchains.find_nvcc("sm_90") is None, reason="no nvcc for sm_90")
def test_an_nvcc_for_sm_90_compiles_sm_90a(tmp_path):
    assert toolchains.find_nvcc("sm_90a") is not None
    res = nvcc.compile_cubin('extern "C" __global__ void k(float* p) { p[0] = 1; }', "sm_90a",
                             cache_root=tmp_path / "c")
    assert res.ok and res.arch == "sm_90a" and "sm_90a" in res.log


# 6 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("flags", [
    ["-arch=sm_75"], ["-arch", "sm_75"], ["--gpu-architecture=sm_75"],
    ["-gencode", "arch=compute_75,code=sm_75"], ["-o", "x"], ["-Xptxas", "-arch=sm_75"],
    ["-Xptxas=-v,-arch=sm_75"]])
def test_extra_flags_may_not_set_what_compile_cubin_sets(flags):
    _refused("which compile_cubin sets itself", nvcc.compile_cubin, "int k;", "sm_80",
             extra_flags=flags)


def test_extra_flags_none_is_no_flags():
    assert nvcc.check_extra_flags(None) == ()
    flags = ("-lineinfo", "-Xptxas", "-O2")
    assert nvcc.check_extra_flags(list(flags)) == flags
    _refused("extra_flags must be a sequence of strings", nvcc.check_extra_flags, 5)


# 7 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("code, name, match", [
    ("int a;\x00 junk", "k.cu", "source: .* NUL"), ("int a;", "k\x00.cu", "name: .* NUL"),
    (None, "k.cu", "source must be text"), ("\ud800", "k.cu", "lone surrogate"),
])
def test_nvrtc_ptx_refuses_text_no_compiler_takes(code, name, match):
    tc = nvrtc.NvrtcToolchain("/nonexistent/libnvrtc.so", "ptxas", "", "12.9", ("sm_70",))
    _refused(match, nvrtc.nvrtc_ptx, tc, code, "sm_70", name)


# 8 ---------------------------------------------------------------------------------------

def test_remove_orphans_needs_a_folder(tmp_path, monkeypatch):
    (tmp_path / ".build-zzz").mkdir()
    monkeypatch.chdir(tmp_path)
    _refused("folder must be a path", build_folders.remove_orphans, None)
    _refused("prefix must be one of", build_folders.remove_orphans, tmp_path, "")
    assert (tmp_path / ".build-zzz").is_dir()
    _refused("root must be a path", build_folders.remove_all_orphans, 5)


@pytest.mark.parametrize("kind", [[], "../x", "/tmp/x", "", None, 5])
def test_private_folder_and_cache_dir_take_only_cache_kinds(kind, tmp_path):
    _refused("kind must be one of cubin, emu, src", build_folders.private_folder, kind)
    _refused("kind must be one of cubin, emu, src", cache.cache_dir, kind, tmp_path / "root")
    assert not (tmp_path / "x").exists() and not os.path.exists(tmp_path / "root" / "x")


# 9 ---------------------------------------------------------------------------------------

def test_cache_keys_and_trust_check_their_arguments():
    _refused("content_key part must be a builtins.str", cache.content_key, 5)
    _refused("path must be a path", cache.is_trusted, None)
    _refused("path must name a file, got ''$", cache.is_trusted, "")
    assert cache.content_key("\ud800") != cache.content_key("a")


# 10 --------------------------------------------------------------------------------------

@pytest.mark.parametrize("e, r, match", [(0, 0, "e=0"), (-5, 3, "e=-5"),
                                         (2.5, 3, "e must be an integer"), (2, 0, "r=0")])
def test_transformed_row_words_checks_e_and_r(e, r, match):
    _refused(match, config_types.transformed_row_words, e, r)


# 11 --------------------------------------------------------------------------------------

def test_compare_refuses_complex_input():
    _refused("compare needs arrays of real numbers: the output must hold real numbers, got dtype "
             "complex", reference.compare, np.array([1 + 1j]), np.array([1.0]), np.array([0.1]))


# 12 --------------------------------------------------------------------------------------

@pytest.mark.parametrize("costs, match", [("123", "costs must be finite numbers"),
                                          ([NAN, 1, 2], "costs must be finite numbers"),
                                          ([-5.0], "costs must be finite numbers"),
                                          ([], "non-empty")])
def test_median_ms_takes_times(costs, match):
    _refused(match, gpu.median_ms, costs)


# 13 --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, timeout, match", [
    ((), None, "shape must be"), ((0,), None, "shape must be"), ((-1,), None, "shape must be"),
    ((1, 2, 3, 3), NAN, "timeout must be a finite number"),
    ((1, 2, 3, 2), None, r"shape must be the layer's output \(1, 2, 3, 3\)"),
])
def test_run_launch_refuses_a_shape_the_kernel_does_not_write(shape, timeout, match):
    from kernels.emulator_launch import run_launch

    layer = ConvLayer(1, 2, 5, 5, 2, 3, 3)
    x, w = np.ones((1, 2, 5, 5), np.float32), np.ones((2, 2, 3, 3), np.float32)
    _refused(match, run_launch, "/nonexistent/launcher", "/nonexistent/lib.so", x, w, shape,
             timeout, layer=layer)


# 14 --------------------------------------------------------------------------------------

DIRECT = dict(x=4, y=4, z=2, alpha=1, tx=1, ty=1, tz=1)


@pytest.mark.parametrize("algorithm_key, match", [
    ("winograd", "contradicts the algorithm 'direct'"), (None, "must name an algorithm"),
    (0, "must name an algorithm"), ("", "must name an algorithm"),
])
def test_config_from_dict_refuses_a_bad_algorithm_key(algorithm_key, match):
    _refused(match, config.config_from_dict, {"algorithm": algorithm_key, **DIRECT}, "direct")


def test_config_from_dict_and_from_dict_agree_on_keys():
    given = config.config_from_dict({"algorithm": "direct", **DIRECT})
    assert given == config.DirectConfig(**DIRECT)
    _refused("unknown direct config key", config.DirectConfig.from_dict, {**DIRECT, "q": 1})
    _refused("contradicts", config.DirectConfig.from_dict, {**DIRECT, "algorithm": "winograd"})


# 15 --------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: source.c_sum([1, 2, 3], ["a"]), "one coefficient per term"),
    (lambda: source.c_float(NAN), "value must be a finite number"),
    (lambda: source.c_float(float("inf")), "value must be a finite number"),
    (lambda: source.c_sum([NAN], ["a"]), "coefficient must be a finite number"),
    (lambda: source.c_sum([True], ["a"]), "coefficient must be a finite number"),
    (lambda: source.c_sum(["x"], ["a"]), "coefficient must be a finite number"),
    (lambda: source.layer_constants(None), "layer must be a ConvLayer"),
])
def test_source_helpers_check_their_arguments(call, match):
    _refused(match, call)


# 16 --------------------------------------------------------------------------------------

def test_a_winograd_e_past_the_limit_is_a_reason_not_an_error():
    big = ConvLayer(1, 4, 128, 128, 66, 3, 3)
    cfg = config.WinogradConfig(33, 33, 33, 1, 1, 1, 1)
    assert "is above the limit 32" in config.check_config(big, cfg, "v100")[0]
    check = verify.emulator_check(big, cfg)
    assert not check.checked and "is above the limit 32" in check.reason


# 17 --------------------------------------------------------------------------------------

def test_gpu_timeout_is_capped_like_the_others():
    _refused("timeout_s must be a finite number in", gpu.GpuOptions, timeout_s=1e300)
    _refused("timeout_s must be a finite number", gpu.GpuOptions, timeout_s=None)
    assert gpu.GpuOptions(timeout_s=5.0).timeout_s == 5.0


# 18 --------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: families.kernel_family("winograd").problem(None), "layer must be a ConvLayer"),
    (lambda: families.kernel_family("direct").tile_columns(("q",)), "knob name must be one of"),
    (lambda: template.template_text([]), "template name must be a str"),
    (lambda: toolchains.toolchain([]), "path must be the path of an nvcc"),
    (lambda: compiler_process.check_compiler_text("x", None), "x must be text"),
    (lambda: compiler_process.run_compiler([]), "cmd must be a non-empty sequence"),
    (lambda: compiler_process.run_compiler(["true"], timeout=NAN), "timeout must be a finite"),
    (lambda: toolchains.cuda_release(None), "version_text must be"),
    (lambda: emulator_build.emulated_source(None), "code must be CUDA source text"),
    (lambda: emulator.check_emulable("x"), "source must be a KernelSource"),
    (lambda: gpu.device_limits(None, None), "drv must be pycuda.driver"),
    (lambda: source.InvalidConfigError(None), "needs a list of reasons"),
])
def test_raw_exceptions_are_invalid_input(call, match):
    _refused(match, call)


def test_parse_ptxas_reads_a_huge_number_as_not_reported():
    log = ("ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
           f"ptxas info    : Used {'9' * 5000} registers, 432 bytes smem\n")
    assert ptxas.parse_ptxas(log)["k"].registers == 0
    assert ptxas.parse_ptxas(log.replace("9" * 5000, "72"))["k"].registers == 72
