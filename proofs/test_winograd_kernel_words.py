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

The check reads the kernel source the generator emits and follows scopes, not names: an
array of the kernel body is live from its declaration to the end of its enclosing block,
a ``__device__`` function's arrays while it is called (sizes evaluated with the kernel's
own constants; an array of another type than float is refused). The peak over those
points, times the threads, plus the shared arrays must be ``onchip_words``: a template
change that adds an array, grows one or keeps one live into another phase fails here.
Scalars (indices, the staged input value) are not counted: one or two words at a time,
within the two of S_b + 2.
"""

import re

import sympy as sp
from hypothesis import assume, given, strategies as st

from iobound.layer import ConvLayer
from kernels.codegen_winograd import generate_winograd
from kernels.config import WinogradConfig, check_config

#: A declaration of any C type: the type, then its declarators up to the ``;``.
DECLARATION = re.compile(r"\b(float|double|half|int|unsigned|long|short|char|bool)\s+"
                         r"(?!\w+\s*\()([^;()]*?);")
ARRAY = re.compile(r"^\s*\*?\s*(\w+)\s*((?:\[[^\]]+\])+)")


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


def _arrays(text: str, env: dict):
    """(position, name, words) of every array declared in ``text``; any other type than
    ``float`` is an AssertionError (the count knows 4-byte words only)."""
    for m in DECLARATION.finditer(text):
        for declarator in m.group(2).split(","):
            a = ARRAY.match(declarator.split("=")[0])
            if a:
                assert m.group(1) == "float", f"{m.group(1)} array {a.group(1)}: revisit the count"
                yield m.start(), a.group(1), _size(a.group(2), env)


def _block(code: str, open_brace: int) -> int:
    """The index of the ``}`` that closes the ``{`` at ``open_brace``."""
    depth = 0
    for i in range(open_brace, len(code)):
        depth += {"{": 1, "}": -1}.get(code[i], 0)
        if depth == 0:
            return i
    raise AssertionError("unbalanced braces")


def declared_words(code: str) -> tuple[int, int]:
    """(shared words, most register words a thread holds at once) of a generated Winograd
    kernel, by scope: an array of the kernel body is live from its declaration to the end
    of its enclosing block, a called ``__device__`` function's arrays at the call."""
    env = _constants(code)
    struct = code.index("struct SharedMem")
    shared = sum(w for _, _, w in _arrays(code[struct:_block(code, code.index("{", struct))], env))
    functions = {}
    for m in re.finditer(r"__device__[^{;]*?\b(\w+)\s*\([^)]*\)\s*\{", code):
        functions[m.group(1)] = sum(w for _, _, w in _arrays(code[m.end():_block(code, m.end() - 1)],
                                                                env))
    kernel_open = code.index("{", code.index("__global__"))
    body = code[kernel_open:_block(code, kernel_open) + 1]
    opens: list[int] = []
    ends = {}
    for i, ch in enumerate(body):  # each position's innermost enclosing block end
        if ch == "{":
            opens.append(i)
        elif ch == "}":
            ends[opens.pop()] = i

    def scope_end(pos: int) -> int:
        return min(end for start, end in ends.items() if start < pos <= end)

    live = [(pos, scope_end(pos), words) for pos, _, words in _arrays(body, env)]
    live += [(m.start(), m.start(), functions[m.group(1)])
             for m in re.finditer(r"\b(\w+)\s*\(", body) if functions.get(m.group(1))]
    points = [pos for pos, _, _ in live]
    peak = max(sum(w for start, stop, w in live if start <= p <= stop) for p in points)
    return shared, peak


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
    """The emitted kernel's shared arrays are ``shared_words``, and its shared words plus
    the threads times a thread's peak of live register words are exactly ``onchip_words``."""
    layer, cfg = case
    assume(not check_config(layer, cfg))
    shared, per_thread = declared_words(generate_winograd(layer, cfg).code)
    assert shared == cfg.shared_words(layer)
    assert shared + cfg.threads * per_thread == cfg.onchip_words(layer)


def _kernel(**changes):
    layer = ConvLayer(n=1, c_in=1, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3)
    cfg = WinogradConfig(e=2, x=4, y=4, z=2, tx=2, ty=2, tz=2)
    return layer, cfg, generate_winograd(layer, cfg).code


def test_an_array_kept_live_too_long_or_added_is_counted():
    """The count follows scopes, not names: ``yv`` declared beside ``acc`` (live through
    the product phase), a new array in a helper function, or two arrays in one
    declaration all raise the peak above ``onchip_words``; a double array is refused."""
    layer, cfg, code = _kernel()
    words = cfg.onchip_words(layer)
    assert sum(declared_words(code)[i] * (cfg.threads if i else 1) for i in (0, 1)) == words
    acc = "  float acc[ZT][YW][XW][NT * NT];"
    yv = "        float yv[E * E];"
    assert acc in code and yv in code and "  float partial[NT * NT];" in code
    mutants = [
        code.replace(yv, "").replace(acc, acc + "\n  float yv[E * E];"),
        code.replace("  float partial[NT * NT];", "  float partial[NT * NT], extra[NT];"),
        code.replace("__device__ __forceinline__ void input_transform(const float* d, float* v) {",
                     "__device__ __forceinline__ void input_transform(const float* d, float* v) {\n"
                     "  float big[4 * NT * NT] = {0};"),
    ]
    for mutant in mutants:
        shared, per_thread = declared_words(mutant)
        assert shared + cfg.threads * per_thread > words
    try:
        declared_words(code.replace("  float partial[NT * NT];", "  double partial[NT * NT];"))
    except AssertionError as err:
        assert "double array partial" in str(err)
    else:
        raise AssertionError("a double array went uncounted")
