"""CUDA source for Winograd F(e x e, r x r), stride 1: the paper's dataflow with two temporaries.

A block computes an output tile x*y*z: ``(x/e)*(y/e)`` Winograd tiles for ``z`` output
channels. Input channels are processed one at a time (alpha = 1): the block stages the
channel's input rectangle ``(y+r-1) x (x+r-1)`` in shared memory (used, in-bounds
elements loaded once; padding and rows/columns no output of the tile needs are
zero-filled), and its threads share the transforms: each of the ``z`` kernels is loaded
(``r x r`` raw weights) and transformed once (``U = G g G^T``), each of the block's tiles
once (``V = B^T d B``), both into shared memory (rows of ``(e+r-1)**2`` words padded to an
odd stride, so a warp's accesses to one element of consecutive rows meet no bank
conflict). Each thread then, per tile and output
channel of its own, forms the new partial product in the second temporary array and adds
it to the first, which accumulates the summation matrix along the channel direction.
After the last channel the output transform ``Y = A^T M A`` produces the e x e outputs.

The transform code is straight-line C generated from the exact SymPy matrices of
:func:`iobound.winograd_transforms.winograd_transforms` (zero entries skipped).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from kernels.config import WinogradConfig
>>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
>>> src = generate_winograd(layer, WinogradConfig(e=2, x=4, y=4, z=2, tx=2, ty=2, tz=1))
>>> src.grid, src.block, src.shared_bytes
((2, 2, 1), (2, 2, 1), 552)
"""

from __future__ import annotations

from iobound.layer import ConvLayer
from iobound.winograd_transforms import winograd_transforms

from .config import WinogradConfig, check_config, grid_shape, input_tile_shape, shared_memory_bytes
from .source import BLOCK_PROLOGUE, PRELUDE, InvalidConfigError, KernelSource, c_sum, emulator_entry, layer_constants
from .template import render_template

__all__ = ["generate_winograd", "transform_functions"]

KERNEL_NAME = "iobound_winograd"


def _two_sided(L, src: str, src_rows: int, dst_elems: str) -> str:
    """The unrolled C statements computing ``dst = L * S * L^T`` (S given by ``src(a, b)`` names)."""
    p, q = L.shape
    lines = [f"  float t[{p}][{src_rows}];"]
    for i in range(p):
        for b in range(src_rows):
            lines.append(f"  t[{i}][{b}] = {c_sum(list(L.row(i)), [src.format(a=a, b=b) for a in range(q)])};")
    for i in range(p):
        for j in range(p):
            lines.append(f"  {dst_elems.format(i=i, j=j, p=p)} = "
                         f"{c_sum(list(L.row(j)), [f't[{i}][{b}]' for b in range(q)])};")
    return "\n".join(lines)


def transform_functions(e: int, r: int) -> str:
    """The three transform functions of F(e x e, r x r) as CUDA/C++ source.

    >>> code = transform_functions(2, 3)
    >>> "input_transform" in code and "kernel_transform" in code and "output_transform" in code
    True
    """
    t = winograd_transforms(e, r)
    n = t.n
    inp = _two_sided(t.BT, "d[{a} * IN_COLS + {b}]", n, "v[{i} * NT + {j}]")
    ker = _two_sided(t.G, "g[{a} * R + {b}]", r, "u[{i} * NT + {j}]")
    out = _two_sided(t.AT, "m[{a} * NT + {b}]", n, "y[{i} * E + {j}]")
    return f"""// V = B^T d B for one tile (d: rows of the staged input, stride IN_COLS).
__device__ __forceinline__ void input_transform(const float* d, float* v) {{
{inp}
}}

// U = G g G^T for one raw r x r kernel.
__device__ __forceinline__ void kernel_transform(const float* g, float* u) {{
{ker}
}}

// Y = A^T M A: the e x e outputs of one tile from its summation matrix.
__device__ __forceinline__ void output_transform(const float* m, float* y) {{
{out}
}}"""


def generate_winograd(layer: ConvLayer, config: WinogradConfig, device=None) -> KernelSource:
    """CUDA C source of the Winograd kernel for ``layer`` (stride 1, square kernel) and ``config``.

    Raises
    ------
    InvalidConfigError
        (a ValueError) with the reasons from :func:`kernels.config.check_config`,
        including "Winograd needs stride 1" for layers it does not apply to.

    Examples
    --------
    F(4x4, 3x3) over a batch of two (the images share the grid's x axis), then a strided
    layer:

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=2, c_in=2, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3)
    >>> src = generate_winograd(layer, WinogradConfig(e=4, x=4, y=4, z=4, tx=1, ty=1, tz=4))
    >>> src.name, src.grid, src.block
    ('iobound_winograd', (4, 2, 1), (1, 1, 4))
    >>> strided = layer.replace(stride=2)
    >>> generate_winograd(strided, WinogradConfig(2, 4, 4, 4, 2, 2, 1))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kernels.source.InvalidConfigError: invalid kernel config: Winograd needs stride 1, got ...
    """
    if not isinstance(config, WinogradConfig):
        raise InvalidConfigError([f"generate_winograd needs a WinogradConfig, got {type(config).__name__}"])
    reasons = check_config(layer, config, device)
    if reasons:
        raise InvalidConfigError(reasons)
    c = config
    r = layer.k_h
    rows, cols = input_tile_shape(layer, config)
    grid = grid_shape(layer, config)
    block = (c.tx, c.ty, c.tz)
    consts = "\n".join([
        layer_constants(layer),
        f"constexpr int E = {c.e}, R = {r}, NT = E + R - 1;  // F(E x E, R x R), tile edge NT",
        f"constexpr int X = {c.x}, Y = {c.y}, Z = {c.z};",
        f"constexpr int TX = {c.tx}, TY = {c.ty}, TZ = {c.tz}, THREADS = TX * TY * TZ;",
        "constexpr int TILES_X = X / E, TILES = TILES_X * (Y / E);  // Winograd tiles of a block",
        "constexpr int TSTRIDE = (NT * NT) | 1;  // a transformed tile's row in shared memory",
        "constexpr int XW = X / E / TX, YW = Y / E / TY, ZT = Z / TZ;  // tiles/channels per thread",
        f"constexpr int IN_ROWS = {rows}, IN_COLS = {cols};  // one channel's input rectangle",
        "constexpr int X_BLOCKS = (W_OUT + X - 1) / X;  // tile columns of an image",
        "static_assert(N_IMG >= 1 && P_H >= 0 && P_W >= 0, \"layer sizes\");",
    ])
    code = render_template("winograd.cu", layer=layer.short(), config=c.to_dict(), prelude=PRELUDE,
                           consts=consts, transforms=transform_functions(c.e, r),
                           kernel_name=KERNEL_NAME, block_prologue=BLOCK_PROLOGUE,
                           emulator_entry=emulator_entry(KERNEL_NAME, grid, block), e=c.e, r=r)
    return KernelSource(name=KERNEL_NAME, code=code, layer=layer, config=config, grid=grid,
                        block=block, shared_bytes=shared_memory_bytes(layer, config))
