"""CPU emulator: properties over random small layers/configs, and its failure modes."""

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from iobound.errors import IoboundError
from iobound.layer import ConvLayer
from kernels.config import DirectConfig, WinogradConfig, check_config
from kernels.emulator import EmulatorBuildError, EmulatorRunError, build_emulator, emulate
from kernels.generate import generate
from kernels.source import KernelSource
from kernels.verify import emulate_and_check


def _divisor(draw, n):
    return draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))


@st.composite
def direct_cases(draw):
    k_h, k_w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dil = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    ext_h, ext_w = (k_h - 1) * dil[0] + 1, (k_w - 1) * dil[1] + 1
    layer = ConvLayer(n=draw(st.integers(1, 2)), c_in=draw(st.integers(1, 4)),
                      h_in=draw(st.integers(max(1, ext_h - 2 * pad[0]), 10)),
                      w_in=draw(st.integers(max(1, ext_w - 2 * pad[1]), 10)),
                      c_out=draw(st.integers(1, 4)), k_h=k_h, k_w=k_w,
                      stride=stride, padding=pad, dilation=dil)
    x = draw(st.integers(1, min(4, layer.w_out)))
    y = draw(st.integers(1, min(4, layer.h_out)))
    z = draw(st.integers(1, min(4, layer.c_out)))
    alpha = draw(st.integers(1, min(3, layer.c_in)))
    cfg = DirectConfig(x=x, y=y, z=z, alpha=alpha, tx=_divisor(draw, x),
                       ty=_divisor(draw, y), tz=_divisor(draw, z))
    return layer, cfg


@st.composite
def winograd_cases(draw):
    e = draw(st.sampled_from([2, 3, 4]))
    pad = draw(st.integers(0, 1))
    layer = ConvLayer(n=1, c_in=draw(st.integers(1, 3)), h_in=draw(st.integers(3, 10)),
                      w_in=draw(st.integers(3, 10)), c_out=draw(st.integers(1, 3)),
                      k_h=3, k_w=3, padding=pad)
    xt = draw(st.integers(1, min(2, -(-layer.w_out // e))))
    yt = draw(st.integers(1, min(2, -(-layer.h_out // e))))
    z = draw(st.integers(1, min(2, layer.c_out)))
    cfg = WinogradConfig(e=e, x=xt * e, y=yt * e, z=z, tx=_divisor(draw, xt),
                         ty=_divisor(draw, yt), tz=z)
    assume(check_config(layer, cfg) == [])  # e.g. too many register words per thread
    return layer, cfg


def _assert_exact(layer, cfg):
    assert check_config(layer, cfg) == []
    chk = emulate_and_check(layer, cfg)
    assert chk.numerics_ok, (chk.max_abs_err, chk.worst_ratio)
    assert (chk.global_loads, chk.global_stores) == (chk.expected_loads, chk.expected_stores)
    assert chk.above_lower_bound


@given(direct_cases())
def test_direct_kernel_is_exact_in_values_and_traffic(case):
    """Random direct layers/configs: numpy-exact output, formula-exact traffic, >= bound."""
    _assert_exact(*case)


@given(winograd_cases())
def test_winograd_kernel_is_exact_in_values_and_traffic(case):
    """Random Winograd layers/configs: within the fp32 Winograd bound, formula-exact traffic."""
    _assert_exact(*case)


def test_traffic_respects_a_bound_stronger_than_compulsory():
    """With a small on-chip footprint the X-partition bound exceeds the compulsory traffic;
    the counted traffic (equal to the formula) still respects it, at the words really used
    plus the two the multi-block argument needs (S_b + 2, proofs/test_multi_block.py)."""
    from iobound.multi_block import bound_fast_memory
    from iobound.report import bound_report
    from kernels.config import onchip_words, register_words, shared_memory_words

    layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    cfg = DirectConfig(x=2, y=2, z=1, alpha=1, tx=2, ty=2, tz=1)
    s_words = onchip_words(layer, cfg)
    assert s_words == shared_memory_words(layer, cfg) + register_words(layer, cfg) == 4 * 4 + 9 + 4
    rep = bound_report(layer, bound_fast_memory(s_words), "direct")
    assert rep.best_method != "compulsory" and rep.best > rep.bounds["compulsory"].value
    chk = emulate_and_check(layer, cfg)
    assert chk.ok and chk.onchip_words == s_words and chk.lower_bound == pytest.approx(rep.best)
    assert chk.global_loads + chk.global_stores >= chk.lower_bound


LAYER = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=1, k_w=1)
CFG = DirectConfig(x=4, y=4, z=2, alpha=2, tx=2, ty=2, tz=1)


def _hand_kernel(body: str) -> KernelSource:
    """A hand-written kernel in the generated-source format (prelude + constants + entry)."""
    src = generate(LAYER, CFG)
    start = src.code.index('extern "C" __global__')
    end = src.code.index("#ifdef IOBOUND_EMULATOR\nextern")
    code = src.code[:start] + body + "\n" + src.code[end:]
    return KernelSource(name="iobound_direct", code=code, layer=LAYER, config=CFG,
                        grid=src.grid, block=src.block, shared_bytes=src.shared_bytes)


def _ones():
    return np.ones((1, 2, 4, 4), np.float32), np.ones((2, 2, 1, 1), np.float32)


def test_out_of_bounds_load_is_a_run_error():
    """A load past the end of the input buffer is reported, not performed silently."""
    src = _hand_kernel('extern "C" void iobound_direct(const float* input, const float* weight, '
                       'float* output) { float v = LDG(&input[1000000]); (void)v; }')
    with pytest.raises(EmulatorRunError, match="out-of-bounds"):
        emulate(src, *_ones())


def test_store_to_input_is_a_run_error():
    """Global stores are only allowed into the output buffer."""
    src = _hand_kernel('extern "C" void iobound_direct(const float* input, const float* weight, '
                       'float* output) { STG(const_cast<float*>(input), 1.0f); }')
    with pytest.raises(EmulatorRunError):
        emulate(src, *_ones())


def test_unstored_outputs_stay_nan():
    """Outputs a kernel never writes come back as NaN (so comparisons fail)."""
    src = _hand_kernel('extern "C" void iobound_direct(const float* input, const float* weight, '
                       'float* output) { if (threadIdx.x == 0 && blockIdx.x == 0 && threadIdx.y == 0) '
                       'STG(&output[0], 1.0f); }')
    run = emulate(src, *_ones())
    assert run.global_stores == 1 and np.isnan(run.output).sum() == run.output.size - 1


def test_shared_memory_is_shared_within_a_block_and_fresh_per_block():
    """Thread 0's shared write is seen by all threads after __syncthreads, and reset between blocks."""
    body = ('extern "C" void iobound_direct(const float* input, const float* weight, float* output) {\n'
            '  SHARED_DECL(SharedMem, sm);\n'
            '  const int tid = threadIdx.x + TX * threadIdx.y;\n'
            '  if (tid == 0) sm->in[0][0][0] = 7.0f;\n'
            '  __syncthreads();\n'
            '  STG(&output[tid], sm->in[0][0][0] + sm->in[0][0][1]);\n}')
    run = emulate(_hand_kernel(body), *_ones())
    stored = run.output.reshape(-1)[:4]
    assert np.isnan(stored).all()  # in[0][0][1] was never written: NaN-filled, not 0
    body = body.replace("sm->in[0][0][0] + sm->in[0][0][1]", "sm->in[0][0][0]")
    assert emulate(_hand_kernel(body), *_ones()).output.reshape(-1)[:4].tolist() == [7.0] * 4


def test_build_error_carries_the_compiler_log(tmp_path):
    """A source g++ rejects raises EmulatorBuildError with g++'s messages."""
    with pytest.raises(EmulatorBuildError) as info:
        build_emulator("this is not C++;", cache_root=tmp_path)
    assert "error" in info.value.log
    assert isinstance(info.value, IoboundError)


def test_build_is_cached_by_source(tmp_path):
    """A second build of the same source is a cache hit with the same library."""
    code = generate(LAYER, CFG).code
    first = build_emulator(code, cache_root=tmp_path)
    second = build_emulator(code, cache_root=tmp_path)
    assert second[0] == first[0] and second[2] and not first[2]


def test_absurd_launch_is_refused():
    """Launches beyond the emulator's thread limits raise a ValueError before building."""
    big = ConvLayer(n=64, c_in=1, h_in=512, w_in=512, c_out=64, k_h=1, k_w=1)
    src = generate(big, DirectConfig(x=1, y=1, z=1, alpha=1, tx=1, ty=1, tz=1))
    x = np.zeros((64, 1, 512, 512), np.float32)
    with pytest.raises(ValueError, match="emulator refuses"):
        emulate(src, x, np.zeros((64, 1, 1, 1), np.float32))


def test_wrong_array_shape_is_rejected():
    """Inputs must have the layer's NCHW shape."""
    with pytest.raises(ValueError, match="input shape"):
        emulate(generate(LAYER, CFG), np.zeros((1, 2, 4, 5), np.float32), _ones()[1])
