"""The generated kernels index global memory in 64 bits (kernels/templates/*.cu).

Reference: the layer limits (iobound/limits.py) accept tensors of more than 2**31 - 1
elements (batch 1024 of a 64-channel 224x224 layer holds 3.29e9), and check_config accepts
configs for them; the kernels' flat indices were ``int`` arithmetic, which overflows there
(undefined behaviour: an illegal address or a wrong output on a GPU; the emulator refuses
tensors that large, so only a GPU would meet it). The test evaluates the kernel's own index
expressions, taken from the generated source, in a C++ constant expression with the
kernel's own constants and every coordinate at its largest: g++ refuses one whose signed
arithmetic overflows."""
import re
import shutil
import subprocess

import pytest

from iobound.layer import ConvLayer
from kernels.config import DirectConfig, WinogradConfig, check_config
from kernels.generate import generate

BIG = ConvLayer(n=1024, c_in=64, h_in=224, w_in=224, c_out=64, k_h=3, k_w=3, padding=1)
CASES = [
    ("direct", DirectConfig(x=8, y=8, z=16, alpha=4, tx=8, ty=8, tz=4)),
    ("winograd", WinogradConfig(e=2, x=8, y=8, z=4, tx=4, ty=4, tz=2)),
]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize("name,cfg", CASES, ids=[c[0] for c in CASES])
def test_flat_indices_do_not_overflow_int(tmp_path, name, cfg):
    assert BIG.input_size > 2**31 - 1 and BIG.output_size > 2**31 - 1
    if check_config(BIG, cfg, "a100"):
        return  # refused: fine
    src = generate(BIG, cfg, "a100").code
    consts = src[:src.index("struct SharedMem")].split("#endif", 1)[1]
    in_expr = re.search(r"LDG\(&input\[(.*?)\]\)", src).group(1)
    out_expr = re.search(r"STG\(&output\[(.*?)\],", src).group(1)
    cpp = consts + f"""
// the kernel's coordinates are `const int`; take each at its largest value
constexpr int img = N_IMG - 1, c = C_IN - 1, gy = H_IN - 1, gx = W_IN - 1;
constexpr int k = C_OUT - 1, oy = H_OUT - 1, ox = W_OUT - 1;
constexpr auto in_index = {in_expr};
constexpr auto out_index = {out_expr};
static_assert(in_index == 1LL * N_IMG * C_IN * H_IN * W_IN - 1, "input index wrapped");
static_assert(out_index == 1LL * N_IMG * C_OUT * H_OUT * W_OUT - 1, "output index wrapped");
int main() {{ return 0; }}
"""
    f = tmp_path / "idx.cpp"
    f.write_text(cpp)
    proc = subprocess.run(["g++", "-std=c++20", "-fsyntax-only", str(f)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-1500:]
