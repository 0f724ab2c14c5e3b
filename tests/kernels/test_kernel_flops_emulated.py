"""The flops model (kernels/kernel_flops.py, the cost model's ``flops`` feature) against the
arithmetic a generated kernel really executes: the emulator counts every binary float
operation of the kernel (its ``float`` is ``emu::real`` of ``kernels/cuda_emu.h``).

tests/kernels/test_kernel_flops.py checks the same model against walks of the templates'
loops; this checks it against the compiled kernels themselves, so a template change that
adds or drops arithmetic (and a walk not updated with it) fails here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings

from kernel_matrix import CASES
from kernels.config import check_config
from kernels.emulator import emulate
from kernels.emulator_build import emulated_source
from kernels.generate import generate
from kernels.kernel_flops import kernel_flops
from kernels.reference import conv2d_reference, random_problem
from tests.kernels.test_emulator import _hand_kernel, _ones
from tests.kernels.test_kernel_flops import clipped_cases, winograd_cases


def _assert_emulated_flops(layer, config) -> None:
    src = generate(layer, config)
    x, w = random_problem(layer, np.random.default_rng(0))
    run = emulate(src, x, w)
    assert run.flops == kernel_flops(layer, config)
    # a counted float computes what a float does (the numerics' bound is tested elsewhere)
    assert np.allclose(run.output, conv2d_reference(x, w, layer), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name,layer,config", CASES, ids=[name for name, _, _ in CASES])
def test_the_matrix_kernels_execute_the_modelled_flops(name, layer, config):
    """Strides, dilation, padding, batches, groups, F(2..4), clipped blocks."""
    _assert_emulated_flops(layer, config)


@settings(max_examples=4, deadline=None)
@given(clipped_cases())
def test_direct_kernels_execute_the_modelled_flops(case):
    _assert_emulated_flops(*case)


@settings(max_examples=4, deadline=None)
@given(winograd_cases())
def test_winograd_kernels_execute_the_modelled_flops(case):
    assume(check_config(*case) == [])  # the model counts configs past the register cap too
    _assert_emulated_flops(*case)


def _one_statement(statement: str):
    """A hand kernel whose threads (CFG's 2 x 2 x 1 block, one block) load ``a`` and ``b``,
    set ``c = 1``, run ``statement`` on them into ``r`` and store ``r``."""
    return _hand_kernel('extern "C" void iobound_direct(const float* input, const float* weight, '
                        'float* output) { int i = threadIdx.x + TX * threadIdx.y; '
                        'float a = LDG(&input[i]), b = LDG(&weight[i % 4]), c = 1.0f, r; '
                        f'{statement} STG(&output[i], r); }}')


THREADS = 4  # of _one_statement's kernel


@pytest.mark.parametrize("expression,flops", [
    ("a * b + c", 2), ("-a", 0), ("a / b - c * a", 3), ("0.5f * a", 1), ("a", 0)])
def test_the_counter_counts_binary_float_operations(expression, flops):
    """Per thread: an FMA two, a negation or a copy none, a literal operand one."""
    run = emulate(_one_statement(f"r = {expression}; r += 0.0f;"), *_ones())
    assert run.flops == THREADS * (flops + 1)  # + 1: the r += 0.0f


def test_only_the_type_float_is_renamed():
    code = ("#include <float.h>\nconst float* p; float4 q; float a = 0.5f * floatish(p[0]); "
            "// a float, 1.0f")
    assert emulated_source(code) == ("#include <float.h>\nconst emu::real* p; float4 q; "
                                     "emu::real a = 0.5f * floatish(p[0]); // a emu::real, 1.0f")


def test_the_counting_float_computes_bit_for_bit_what_float_does():
    """The same kernels built with plain floats (the header included, nothing renamed):
    identical outputs and traffic, on x86-64 where g++ contracts nothing into FMAs."""
    from kernels import emulator_build
    from kernels.emulator_launch import run_launch

    for _, layer, config in (CASES[1], CASES[-5], CASES[-1]):  # batch 2, Winograd F(4), grouped
        src = generate(layer, config)
        x, w = random_problem(layer, np.random.default_rng(1))
        plain, *_ = emulator_build._cached_build(emulator_build._cxx(), src.code,
                                                 emulator_build.KERNEL_BUILD, None, 120.0)
        shape = (layer.n, layer.c_out, layer.h_out, layer.w_out)
        out, counts, status, _ = run_launch(emulator_build.build_launcher(), plain, x, w, shape)
        run = emulate(src, x, w)
        assert status == 0 and counts[3] == 0  # plain floats count nothing
        assert np.array_equal(out, run.output) and tuple(counts[:2]) == (run.global_loads,
                                                                          run.global_stores)


def test_a_double_operand_is_refused():
    """nvcc computes ``a * 0.1`` in double; counted as float it would differ: no build."""
    from kernels.emulator import EmulatorBuildError

    with pytest.raises(EmulatorBuildError):
        emulate(_one_statement("r = a * 0.1;"), *_ones())


@pytest.mark.parametrize("statement,flops,first", [
    ("r = a * 0.1f;", 1, np.float32(2.0) * np.float32(0.1)),
    ("r = a * 3 + 0;", 2, 6.0),  # int operands are made float, as in CUDA
    ("r = a < b ? a : b;", 0, 1.0),  # comparisons compile (and count nothing)
    ("r = std::numeric_limits<float>::max();", 0, np.finfo(np.float32).max)])
def test_what_the_counting_float_takes(statement, flops, first):
    x, w = _ones()
    x[0, 0, 0, 0] = 2.0
    run = emulate(_one_statement(statement), x, w)
    assert run.flops == THREADS * flops
    assert run.output.reshape(-1)[0] == np.float32(first)
