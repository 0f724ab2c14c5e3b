"""A Winograd kernel's block holds at most its ``onchip_words`` at any time, transforms included.

The multi-block argument (test_multi_block.py) needs its condition 1: every block holds at
most S_b words on chip. ``WinogradConfig.onchip_words`` counts the shared arrays, the
accumulators ``acc`` and per thread ``u``, ``v`` and ``partial`` ((ZT + 2) n^2 words,
n = e + r - 1), but not the temporaries of the three transforms. Claim: it need not, because
the kernel's per-thread register arrays live in four phases of each channel step, and the
product phase's are the largest:

=========  =========================================  ==============
phase      per-thread arrays besides ``acc``           words
=========  =========================================  ==============
kernel     ``g`` (r x r weights), ``t`` (n x r)        r^2 + n r
input      ``t`` (n x n; d and V are in shared)        n^2
product    ``u`` (ZT kernels), ``v``, ``partial``      (ZT + 2) n^2
output     ``t`` (e x n), ``yv`` (e x e)               e n + e^2
=========  =========================================  ==============

A phase's arrays are dead in the others (each is declared inside its phase), and r < n,
e < n give r^2 + n r < 2 n^2, e n + e^2 < 2 n^2 <= (ZT + 2) n^2 (SymPy below, for every
e, r >= 2). So the block's peak is shared + acc + threads (ZT + 2) n^2 = onchip_words,
and the bound at S_b + 2 holds for the kernel (the two: the multiply-add in flight).

The sizes are read from the kernel source the generator emits (every ``float name[...]``
it declares, evaluated with its own constants), so a template change that adds a register
array, or grows one, fails here until the count is revisited.
"""

import re

import sympy as sp
from hypothesis import assume, given, strategies as st

from iobound.layer import ConvLayer
from kernels.codegen_winograd import generate_winograd
from kernels.config import WinogradConfig, check_config

#: The kernel body's register arrays by phase (``acc`` lives through all of them).
BODY_PHASES = {"g": "kernel", "u": "product", "v": "product", "partial": "product",
               "yv": "output", "acc": "all"}
#: The transform each phase calls (its ``t`` array is that phase's too).
TRANSFORM_PHASES = {"kernel_transform": "kernel", "input_transform": "input",
                    "output_transform": "output"}
DECLARATION = re.compile(r"\bfloat\s+(\w+)((?:\[[^\]]+\])+)\s*;")


def _constants(code: str) -> dict:
    """The kernel's ``constexpr int`` values (C's integer ``/`` as ``//``)."""
    env: dict = {}
    for stmt in re.findall(r"constexpr int ([^;]+);", code):
        for part in re.split(r",\s*(?=\w+\s*=)", stmt):
            name, expr = part.split("=", 1)
            env[name.strip()] = eval(expr.replace("/", "//"), {}, dict(env))  # our own source
    return env


def _size(dims: str, env: dict) -> int:
    size = 1
    for d in re.findall(r"\[([^\]]+)\]", dims):
        size *= eval(d.replace("/", "//"), {}, dict(env))
    return size


def _section(code: str, start: str, end: str) -> str:
    i = code.index(start)
    return code[i:code.index(end, i)]


def declared_words(code: str) -> tuple[int, int, dict]:
    """(shared words, ``acc`` words a thread, other register words a thread per phase) of
    a generated Winograd kernel; an array of unknown phase is an AssertionError."""
    env = _constants(code)
    shared = sum(_size(dims, env) for _, dims in
                 DECLARATION.findall(_section(code, "struct SharedMem", "};")))
    phases = {"kernel": 0, "input": 0, "product": 0, "output": 0}
    for fn, phase in TRANSFORM_PHASES.items():
        body = _section(code, f"void {fn}(", "\n}")
        phases[phase] += sum(_size(dims, env) for _, dims in DECLARATION.findall(body))
    acc = 0
    kernel_body = code[code.index("__global__"):]
    for name, dims in DECLARATION.findall(kernel_body):
        assert name in BODY_PHASES, f"register array {name} is in no phase: revisit the count"
        if BODY_PHASES[name] == "all":
            acc += _size(dims, env)
        else:
            phases[BODY_PHASES[name]] += _size(dims, env)
    return shared, acc, phases


def test_the_product_phase_is_the_largest_for_every_transform():
    """r^2 + n r, n^2 and e n + e^2 are each below 3 n^2 <= (ZT + 2) n^2 for e, r >= 2:
    with e = 2 + a, r = 2 + b (a, b >= 0) every difference is a polynomial in a, b with
    positive coefficients only."""
    a, b = sp.symbols("a b", nonnegative=True, integer=True)
    e, r = 2 + a, 2 + b
    n = e + r - 1
    for temporaries in (r**2 + n * r, n**2, e * n + e**2):
        diff = sp.Poly(sp.expand(3 * n**2 - temporaries), a, b)
        assert all(c > 0 for c in diff.coeffs()), diff
        assert diff.eval((0, 0)) > 0


@st.composite
def winograd_kernels(draw):
    """A small stride-1 layer and a valid Winograd config of it."""
    e, r = draw(st.integers(2, 6)), draw(st.sampled_from([2, 3, 5]))
    tiles_x, tiles_y, z = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 6))
    tx = draw(st.sampled_from([d for d in range(1, tiles_x + 1) if tiles_x % d == 0]))
    ty = draw(st.sampled_from([d for d in range(1, tiles_y + 1) if tiles_y % d == 0]))
    tz = draw(st.sampled_from([d for d in range(1, z + 1) if z % d == 0]))
    size = max(tiles_x, tiles_y) * e + r - 1 + draw(st.integers(0, 3))
    layer = ConvLayer(n=1, c_in=draw(st.integers(1, 3)), h_in=size, w_in=size, c_out=z,
                      k_h=r, k_w=r)
    return layer, WinogradConfig(e=e, x=tiles_x * e, y=tiles_y * e, z=z, tx=tx, ty=ty, tz=tz)


@given(winograd_kernels())
def test_a_block_holds_at_most_its_onchip_words(case):
    """The emitted kernel's shared arrays are ``shared_words``, its ``acc`` the
    accumulator term, its product phase (ZT + 2) n^2 a thread, every other phase at most
    that, and so the block's peak is exactly ``onchip_words``."""
    layer, cfg = case
    assume(not check_config(layer, cfg))
    code = generate_winograd(layer, cfg).code
    shared, acc, phases = declared_words(code)
    n = cfg.e + layer.k_h - 1
    assert shared == cfg.shared_words(layer)
    assert acc * cfg.threads == (cfg.x // cfg.e) * (cfg.y // cfg.e) * cfg.z * n * n
    assert phases["product"] == (cfg.z // cfg.tz + 2) * n * n
    assert max(phases.values()) == phases["product"], phases
    peak = shared + cfg.threads * (acc + max(phases.values()))
    assert peak == cfg.onchip_words(layer)


def test_an_unaccounted_register_array_is_caught():
    """The parser sees a new array the template would declare: the claim is then revisited."""
    layer = ConvLayer(n=1, c_in=1, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3)
    code = generate_winograd(layer, WinogradConfig(e=2, x=4, y=4, z=2, tx=2, ty=2, tz=2)).code
    marker = "  float partial[NT * NT];"
    assert marker in code
    try:
        declared_words(code.replace(marker, "  float scratch[NT];\n" + marker))
    except AssertionError as err:
        assert "scratch" in str(err)
    else:
        raise AssertionError("an array of no phase went uncounted")
