"""CUDA source for the direct dataflow: output tile x*y*z per block, channel chunks of alpha.

Each block stages, per chunk of ``alpha`` input channels, the input rectangle of its tile
(``alpha * in_rows * in_cols`` floats, halo included) and the chunk's weights of its ``z``
output channels (``z * alpha * k_h * k_w``) in shared memory, then every thread adds the
chunk's contribution to its ``(x/tx)*(y/ty)*(z/tz)`` register accumulators. A thread's
outputs are strided over the tile (column ``tix + a*tx``) so neighbouring threads touch
neighbouring addresses. Only input elements of the conventions' *used set* are loaded
(in bounds, and hit by some window of the tile's outputs); the rest of the rectangle is
zero-filled. Every weight is loaded once per block and every output stored once, so the
counted global traffic equals ``dataflow.direct.direct_io``.

Grouped layers (``groups > 1``): a block's ``z`` output channels lie in one group (``z``
divides ``c_out / groups``, :meth:`~kernels.config.DirectConfig.group_reasons`), so it
stages only that group's ``c_in / groups`` input channels and their weights; the traffic
is ``groups`` times one group's (:func:`kernels.grouping.kernel_io`). For ``groups == 1``
the source is the plain kernel's, character for character.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from kernels.config import DirectConfig
>>> layer = ConvLayer(n=1, c_in=3, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)
>>> src = generate_direct(layer, DirectConfig(x=4, y=4, z=2, alpha=2, tx=4, ty=2, tz=1))
>>> src.name, src.grid, src.block, src.shared_bytes
('iobound_direct', (2, 2, 2), (4, 2, 1), 432)
>>> "LDG(&input[" in src.code and "STG(&output[" in src.code
True
"""

from __future__ import annotations

from iobound.layer import ConvLayer

from .config import DirectConfig, check_config, grid_shape, input_tile_shape, shared_memory_bytes
from .source import BLOCK_PROLOGUE, PRELUDE, InvalidConfigError, KernelSource, emulator_entry, layer_constants
from .template import render_template

__all__ = ["generate_direct", "used_offsets_dense"]

KERNEL_NAME = "iobound_direct"


def used_offsets_dense(tile: int, stride: int, dilation: int, k: int) -> bool:
    """True when, for every clipped tile size, the used rows form a prefix of the rectangle.

    Then "row r is used" is simply ``r < (n_eff - 1) * stride + extent``; otherwise the
    kernel tests membership tap by tap (stride > dilation leaves gaps).

    >>> used_offsets_dense(4, 1, 1, 3), used_offsets_dense(2, 4, 1, 3)
    (True, False)
    """
    # Closed form of "for every n_eff in 1..tile, {o * stride + i * dilation : o < n_eff,
    # i < k} == range((n_eff - 1) * stride + extent)" (enumerating it is quadratic in the
    # tile: a 8192-wide tile took half a minute). One window is a prefix only when its taps
    # are adjacent (k == 1 or dilation == 1); then it is the interval [0, k), and the
    # windows of consecutive outputs leave no gap only when stride <= k (or one output).
    if k > 1 and dilation > 1:
        return False
    return tile == 1 or stride <= k


def _used_function(name: str, axis: str, dense: bool) -> str:
    k, mu, d = ("KH", "MU_H", "D_H") if axis == "h" else ("KW", "MU_W", "D_W")
    if dense:
        body = f"  return r < (n_eff - 1) * {mu} + ({k} - 1) * {d} + 1;"
    else:
        body = (f"  #pragma unroll\n  for (int i = 0; i < {k}; ++i) {{\n"
                f"    const int t = r - i * {d};\n"
                f"    if (t >= 0 && t % {mu} == 0 && t / {mu} < n_eff) return true;\n  }}\n"
                f"  return false;")
    return (f"// Is rectangle offset r hit by a window of the first n_eff outputs of the tile?\n"
            f"__device__ __forceinline__ bool {name}(int r, int n_eff) {{\n{body}\n}}")


def _group_constants(layer: ConvLayer) -> str:
    if layer.groups == 1:
        return ""
    return (f"\nconstexpr int GROUPS = {layer.groups}, C_IN_G = C_IN / GROUPS, "
            "C_OUT_G = C_OUT / GROUPS;  // channels of one group\n"
            "static_assert(C_OUT_G % Z == 0, \"a block's output channels lie in one group\");")


def _group_text(layer: ConvLayer) -> dict[str, str]:
    """The template's channel expressions: the whole layer, or the block's group.

    Grouped, a block's ``Z`` output channels lie in group ``oz0 / C_OUT_G``; it reads that
    group's ``C_IN_G`` input channels (from ``c_base``) and its weights ``(k, c)`` with
    ``c < C_IN_G``. Ungrouped, the text is the plain ``C_IN`` kernel's.
    """
    if layer.groups == 1:
        return {"group_setup": "", "cin": "C_IN", "in_c": "c0 + cc", "in_c_end": "C_IN"}
    setup = "\n  const int c_base = oz0 / C_OUT_G * C_IN_G;  // the block's group's first input channel"
    return {"group_setup": setup, "cin": "C_IN_G", "in_c": "c_base + c0 + cc",
            "in_c_end": "c_base + C_IN_G"}


def generate_direct(layer: ConvLayer, config: DirectConfig, device=None) -> KernelSource:
    """CUDA C source of the direct-convolution kernel for ``layer`` and ``config``.

    Parameters
    ----------
    layer : ConvLayer
        Any stride, padding and dilation; batch ``n``.
    config : DirectConfig
        Tile, channel chunk and threads.
    device : Device or str, optional
        Checked against its limits (shared memory, threads, registers) when given.

    Raises
    ------
    InvalidConfigError
        (a ValueError) with the reasons from :func:`kernels.config.check_config`.

    Examples
    --------
    A strided layer, then a config whose threads do not split the tile:

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=3, h_in=9, w_in=9, c_out=4, k_h=3, k_w=3, stride=2)
    >>> src = generate_direct(layer, DirectConfig(x=2, y=2, z=4, alpha=3, tx=2, ty=2, tz=1))
    >>> src.grid, src.shared_bytes, "constexpr int MU_H = 2;" in src.code
    ((2, 2, 1), 732, True)
    >>> generate_direct(layer, DirectConfig(x=2, y=2, z=4, alpha=3, tx=2, ty=2, tz=3))
    Traceback (most recent call last):
    ...
    kernels.source.InvalidConfigError: invalid kernel config: tz=3 must divide z=4
    """
    if not isinstance(config, DirectConfig):
        raise InvalidConfigError([f"generate_direct needs a DirectConfig, got {type(config).__name__}"])
    reasons = check_config(layer, config, device)
    if reasons:
        raise InvalidConfigError(reasons)
    rows, cols = input_tile_shape(layer, config)
    grid = grid_shape(layer, config)
    block = (config.tx, config.ty, config.tz)
    c = config
    consts = "\n".join([
        layer_constants(layer),
        f"constexpr int X = {c.x}, Y = {c.y}, Z = {c.z}, ALPHA = {c.alpha};",
        f"constexpr int TX = {c.tx}, TY = {c.ty}, TZ = {c.tz}, THREADS = TX * TY * TZ;",
        "constexpr int XT = X / TX, YT = Y / TY, ZT = Z / TZ;  // outputs per thread per axis",
        f"constexpr int IN_ROWS = {rows}, IN_COLS = {cols};  // staged rectangle of a full tile",
        "constexpr int X_BLOCKS = (W_OUT + X - 1) / X;  // tile columns of an image",
        "static_assert(N_IMG >= 1 && P_H >= 0 && P_W >= 0, \"layer sizes\");",
    ]) + _group_constants(layer)
    group = _group_text(layer)
    row_fn = _used_function("row_used", "h", used_offsets_dense(c.y, layer.stride[0], layer.dilation[0], layer.k_h))
    col_fn = _used_function("col_used", "w", used_offsets_dense(c.x, layer.stride[1], layer.dilation[1], layer.k_w))
    code = render_template("direct.cu", layer=layer.short(), config=c.to_dict(), prelude=PRELUDE,
                           consts=consts, row_fn=row_fn, col_fn=col_fn, kernel_name=KERNEL_NAME,
                           block_prologue=BLOCK_PROLOGUE,
                           emulator_entry=emulator_entry(KERNEL_NAME, grid, block, group["cin"]),
                           **group)
    return KernelSource(name=KERNEL_NAME, code=code, layer=layer, config=config, grid=grid,
                        block=block, shared_bytes=shared_memory_bytes(layer, config))
