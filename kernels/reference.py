"""NumPy references for checking kernels: direct convolution in float64 and fp32 tolerances.

:func:`conv2d_reference` is the convolution (cross-correlation, NCHW, stride, padding,
dilation) computed in float64 with ``sliding_window_view`` + ``einsum``;
:func:`conv2d_naive` is the obvious 7-loop version it is tested against.

Tolerances (:func:`direct_tolerance`, :func:`winograd_tolerance`) are per-element
forward-error bounds of the fp32 computation, not fitted constants: a dot product of
length m computed in fp32 satisfies ``|fl(s) - s| <= gamma_m * sum |a_i b_i|`` with
``gamma_m ~ m u`` and ``u = 2**-24``. For Winograd every linear stage adds its length to
m and the absolute values flow through ``|AT|``, ``|G|``, ``|BT|`` (large entries make the
bound, and the real error, grow with e). Long sums (over hundreds of input channels) also
take the probabilistic bound ``~ lambda sqrt(m) u`` (Higham & Mary; Hoeffding), which holds
for random data such as :func:`random_problem`'s, the only data the checks use: the worst
case would let a result missing a whole input channel pass.

Examples
--------
>>> import numpy as np
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=1, h_in=3, w_in=3, c_out=1, k_h=2, k_w=2)
>>> x = np.arange(9.0).reshape(1, 1, 3, 3); w = np.ones((1, 1, 2, 2))
>>> conv2d_reference(x, w, layer)[0, 0].tolist()
[[8.0, 12.0], [20.0, 24.0]]
>>> np.array_equal(conv2d_naive(x, w, layer), conv2d_reference(x, w, layer))  # the definition
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer

__all__ = ["check_shapes", "conv2d_reference", "conv2d_naive", "random_problem", "direct_tolerance",
           "winograd_tolerance", "Comparison", "compare", "UNIT_ROUNDOFF", "PROBABILISTIC_LAMBDA"]

#: fp32 unit roundoff u = 2**-24.
UNIT_ROUNDOFF = 2.0 ** -24


def _check_layer(layer) -> None:
    check_layer(layer)


def check_shapes(x: np.ndarray, w: np.ndarray, layer: ConvLayer) -> None:
    """InvalidInputError (a ValueError) unless ``x`` is an (n, c_in, h_in, w_in) and ``w`` a
    (c_out, c_in / groups, k_h, k_w) array of real numbers.

    >>> import numpy as np
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=1, h_in=3, w_in=3, c_out=1, k_h=2, k_w=2)
    >>> check_shapes(np.zeros((1, 1, 3, 3)), np.ones((1, 1, 3, 3)), layer)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: weight shape must be (1, 1, 2, 2), got (1, 1, 3, 3)
    """
    _check_layer(layer)
    want_x = (layer.n, layer.c_in, layer.h_in, layer.w_in)
    want_w = (layer.c_out, layer.c_in_per_group, layer.k_h, layer.k_w)
    for what, a, want in (("input", x, want_x), ("weight", w, want_w)):
        try:
            shape, kind = np.shape(a), np.asarray(a).dtype.kind
        except ValueError:  # ragged nested lists
            shape, kind = None, "O"
        if shape != want:
            raise InvalidInputError(f"{what} shape must be {want}, got "
                                    f"{shape if shape is not None else 'a ragged list'}")
        _check_real(what, kind, a)


def _check_real(what: str, kind: str, a) -> None:
    """InvalidInputError unless ``kind``, the dtype kind of ``a``, is of real numbers."""
    if kind not in "biuf":  # complex, strings, objects would be cast or fail in numpy
        raise InvalidInputError(f"{what} must hold real numbers, got dtype "
                                f"{np.asarray(a).dtype}")


def conv2d_reference(x: np.ndarray, w: np.ndarray, layer: ConvLayer) -> np.ndarray:
    """Convolution of ``x`` (n, c_in, h, w) by ``w`` (c_out, c_in / groups, k_h, k_w) in float64.

    Grouped, output channel ``k`` of group ``g = k // (c_out / groups)`` reads input
    channels ``g * c_in / groups ...`` with its weights ``w[k]``.

    >>> import numpy as np
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=2, h_in=2, w_in=2, c_out=2, k_h=1, k_w=1, groups=2)
    >>> x = np.arange(8.0).reshape(1, 2, 2, 2); w = np.array([2.0, -1.0]).reshape(2, 1, 1, 1)
    >>> conv2d_reference(x, w, layer)[0].tolist()
    [[[0.0, 2.0], [4.0, 6.0]], [[-4.0, -5.0], [-6.0, -7.0]]]
    """
    check_shapes(x, w, layer)
    (mu_h, mu_w), (p_h, p_w), (d_h, d_w) = layer.stride, layer.padding, layer.dilation
    xp = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (p_h, p_h), (p_w, p_w)))
    win = sliding_window_view(xp, (layer.extent_h, layer.extent_w), axis=(2, 3))
    win = win[:, :, ::mu_h, ::mu_w, ::d_h, ::d_w][:, :, :layer.h_out, :layer.w_out]
    w64 = np.asarray(w, np.float64)
    if layer.groups == 1:
        return np.einsum("ncpqij,kcij->nkpq", win, w64, optimize=True)
    g = layer.groups
    win = win.reshape(layer.n, g, layer.c_in_per_group, *win.shape[2:])
    w64 = w64.reshape(g, layer.c_out_per_group, *w64.shape[1:])
    out = np.einsum("ngcpqij,gkcij->ngkpq", win, w64, optimize=True)
    return out.reshape(layer.n, layer.c_out, layer.h_out, layer.w_out)


def conv2d_naive(x: np.ndarray, w: np.ndarray, layer: ConvLayer) -> np.ndarray:
    """The definition as loops (slow; tiny shapes only, to test the reference; example: the
    module's).

    Strides, padding, dilation and groups too:

    >>> layer = ConvLayer(n=1, c_in=2, h_in=7, w_in=7, c_out=4, k_h=3, k_w=3, stride=2,
    ...                   padding=1, dilation=2, groups=2)
    >>> x, w = random_problem(layer, np.random.default_rng(0))
    >>> np.allclose(conv2d_naive(x, w, layer), conv2d_reference(x, w, layer))
    True
    """
    check_shapes(x, w, layer)
    out = np.zeros((layer.n, layer.c_out, layer.h_out, layer.w_out))
    for b in range(layer.n):
        for k in range(layer.c_out):
            c_base = k // layer.c_out_per_group * layer.c_in_per_group  # k's group's inputs
            for p in range(layer.h_out):
                for q in range(layer.w_out):
                    s = 0.0
                    for c in range(layer.c_in_per_group):
                        for i in range(layer.k_h):
                            for j in range(layer.k_w):
                                iy = p * layer.stride[0] + i * layer.dilation[0] - layer.padding[0]
                                ix = q * layer.stride[1] + j * layer.dilation[1] - layer.padding[1]
                                if 0 <= iy < layer.h_in and 0 <= ix < layer.w_in:
                                    s += float(x[b, c_base + c, iy, ix]) * float(w[k, c, i, j])
                    out[b, k, p, q] = s
    return out


def random_problem(layer: ConvLayer, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Input and weights drawn uniformly from [-1, 1), as float32.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> x, w = random_problem(layer, np.random.default_rng(0))
    >>> x.shape, w.shape, x.dtype
    ((1, 4, 6, 6), (4, 4, 3, 3), dtype('float32'))
    """
    _check_layer(layer)
    if not isinstance(rng, np.random.Generator):
        raise InvalidInputError(f"rng must be a numpy Generator (numpy.random.default_rng(seed)), "
                                f"got {type(rng).__name__}")
    x = rng.uniform(-1, 1, (layer.n, layer.c_in, layer.h_in, layer.w_in)).astype(np.float32)
    w = rng.uniform(-1, 1, (layer.c_out, layer.c_in_per_group, layer.k_h, layer.k_w)).astype(np.float32)
    return x, w


#: Confidence multiple of the probabilistic parts of :func:`direct_tolerance` and
#: :func:`winograd_tolerance`: a sum of
#: independent mean-zero terms ``X_i`` with ``|X_i| <= b_i`` exceeds ``LAMBDA * sqrt(sum b_i**2)``
#: with probability at most ``2 exp(-LAMBDA**2 / 2)`` (Hoeffding), 4e-22 per output element.
PROBABILISTIC_LAMBDA = 10.0


def direct_tolerance(x: np.ndarray, w: np.ndarray, layer: ConvLayer) -> np.ndarray:
    """Per-output bound on the fp32 error of a direct kernel: ``2 min(m, lambda sqrt(m)) u
    conv(|x|, |w|)``.

    ``m = (c_in / groups) k_h k_w`` products are summed in some order: the worst case is
    ``gamma_m <= m u / (1 - m u)`` times the sum of their magnitudes; with independent,
    mean-zero rounding errors (Higham & Mary, SISC 2019: random data such as
    :func:`random_problem`'s) it is ``lambda sqrt(m) u`` instead, except with probability
    at most ``2 m exp(-lambda**2 / 2)`` (``lambda`` = :data:`PROBABILISTIC_LAMBDA`). The
    worst case grows like ``m`` times a magnitude that also grows like ``m``: with hundreds
    of channels it accepted a result missing a whole input channel. The factor 2 leaves room
    for the higher-order terms.

    >>> import numpy as np
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=1024, h_in=5, w_in=5, c_out=2, k_h=5, k_w=5, padding=2)
    >>> x, w = random_problem(layer, np.random.default_rng(0))
    >>> ref = conv2d_reference(x, w, layer)
    >>> w[:, -1] = 0  # a kernel that forgets its last input channel
    >>> compare(conv2d_reference(x, w, layer), ref, direct_tolerance(x, w, layer)).ok
    False
    """
    check_shapes(x, w, layer)
    m = layer.c_in_per_group * layer.k_h * layer.k_w
    paths = min(m, PROBABILISTIC_LAMBDA * np.sqrt(m))
    return 2 * paths * UNIT_ROUNDOFF * conv2d_reference(np.abs(x), np.abs(w), layer)


#: Blocks of input channels :func:`winograd_tolerance` follows the running channel sum in.
BLOCKS = 16


def _input_tiles(x: np.ndarray, layer: ConvLayer, e: int, n: int):
    """The zero-padded input's n x n Winograd tiles, (image, channel, tile row, tile
    column, a, b) in float64, and the tile counts (rows, columns)."""
    r, p = layer.k_h, (layer.padding[0], layer.padding[1])
    tiles_h, tiles_w = layer.winograd_tiles(e)
    h_need, w_need = tiles_h * e + r - 1, tiles_w * e + r - 1
    xp = np.zeros((layer.n, layer.c_in, h_need, w_need))
    hh, ww = min(layer.h_in, h_need - p[0]), min(layer.w_in, w_need - p[1])
    xp[:, :, p[0]:p[0] + hh, p[1]:p[1] + ww] = np.asarray(x, np.float64)[:, :, :hh, :ww]
    d = sliding_window_view(xp, (n, n), axis=(2, 3))[:, :, ::e, ::e][:, :, :tiles_h, :tiles_w]
    return d, tiles_h, tiles_w


def _running_sums(U: np.ndarray, V: np.ndarray, squares: bool):
    """The exact channel sum ``S = sum_c U_c V_c`` and bounds on ``sum_k |S_k|`` and
    ``sum_k S_k**2`` over its partial sums in channel order (``np.inf`` for the second
    unless ``squares``), following the sum in at most :data:`BLOCKS` blocks: inside a block
    every partial sum is within the block's sum of |products| of the partial sums at its
    ends, which bounds the block's share."""
    c_in = V.shape[1]
    block = -(-c_in // BLOCKS)
    U_mag, V_mag = np.abs(U), np.abs(V)
    shape = (U.shape[0], U.shape[1], V.shape[2])
    S, S_abs = np.zeros(shape), np.zeros(shape)
    S_sq = np.zeros(shape) if squares else np.inf
    for c0 in range(0, c_in, block):
        c1 = min(c0 + block, c_in)
        S_end = S + np.matmul(U[:, :, c0:c1], V[:, c0:c1])
        inside = np.minimum(np.abs(S, out=S), np.abs(S_end))
        inside += np.matmul(U_mag[:, :, c0:c1], V_mag[:, c0:c1])
        if squares:
            S_sq += (c1 - c0) * inside * inside
        inside *= c1 - c0
        S_abs += inside
        S = S_end
    return S, S_abs, S_sq


def winograd_tolerance(x: np.ndarray, w: np.ndarray, layer: ConvLayer, e: int) -> np.ndarray:
    """Per-output bound on the fp32 error of Winograd F(e x e, r x r) with our transforms.

    The kernel computes ``Y = AT [sum_c (G g_c G^T) * (BT d_c B)] A`` in fp32, summing the
    channels' products in order. With ``n = e + r - 1`` and absolute values propagated:

    * each channel's product ``p_c = U_c * V_c`` (kernel transform, input transform, product,
      the four transform constants rounded once) is off by at most ``b_c = 2 m_t u
      (|G||g_c||G|^T) * (|BT||d_c||BT|^T)``, ``m_t = 2n + 2r + 1 + 4``;
    * the running sum over channels adds at most ``2 u sum_k |S_k|`` (``S_k`` the partial
      sums of the exact products, bounded block by block, :data:`BLOCKS`);
    * the output transform adds ``2 (2n + 2) u |AT||M||A|`` (``M`` the exact sum) and maps
      the errors of ``M`` through ``|AT| . |A|``.

    These are rigorous first-order bounds. Bounding the channel sum by ``gamma_{c_in}``
    times the sum of magnitudes instead grows like ``c_in**2`` while the real error grows
    like ``c_in`` at most: with hundreds of channels that accepted a result missing a whole
    input channel. The channels' rounding errors are independent, mean-zero and bounded (the
    model of Higham & Mary, SISC 2019, which random data such as :func:`random_problem`'s
    follows), so each of the two channel sums also obeys the Hoeffding bound
    ``PROBABILISTIC_LAMBDA * sqrt(sum of squared bounds)``; the smaller bound is used.
    Computed in float64 over the zero-padded input.

    >>> import numpy as np
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=1, h_in=4, w_in=4, c_out=1, k_h=3, k_w=3)
    >>> t = winograd_tolerance(np.ones((1, 1, 4, 4)), np.ones((1, 1, 3, 3)), layer, 2)
    >>> t.shape, bool((t > 0).all())
    ((1, 1, 2, 2), True)
    """
    from iobound.winograd_transforms import winograd_transforms

    check_shapes(x, w, layer)
    layer.check_winograd()  # also refuses grouped layers
    r = layer.k_h
    t = winograd_transforms(e, r)
    AT, G, BT = t.as_numpy()
    n = t.n
    d, tiles_h, tiles_w = _input_tiles(x, layer, e, n)
    w64 = np.asarray(w, np.float64)

    # Transform-entry-major operands (ij first) so that U (ij, k, c) @ V (ij, c, tiles) sums
    # the channels with BLAS; tiles are ordered (image, tile row, tile column).
    def input_transform(L, dx):  # (n, c, p, q, a, b) -> (ij, c, (n p q))
        return np.ascontiguousarray((L @ dx @ L.T).transpose(4, 5, 1, 0, 2, 3)).reshape(n * n, layer.c_in, -1)

    def kernel_transform(L, wx):  # (k, c, a, b) -> (ij, k, c)
        return np.ascontiguousarray((L @ wx @ L.T).transpose(2, 3, 0, 1)).reshape(n * n, layer.c_out, -1)

    V, V_abs = input_transform(BT, d), input_transform(np.abs(BT), np.abs(d))
    U, U_abs = kernel_transform(G, w64), kernel_transform(np.abs(G), np.abs(w64))
    u, lam = UNIT_ROUNDOFF, PROBABILISTIC_LAMBDA
    b = 2 * (2 * n + 2 * r + 1 + 4) * u  # times P_c = |U_c| |V_c|: channel c's product error
    transforms = b * np.matmul(U_abs, V_abs)
    if layer.c_in > lam ** 2:  # else sum_c P_c <= sqrt(c_in) |P|_2 <= lam |P|_2 anyway
        transforms = np.minimum(transforms, b * lam * np.sqrt(np.matmul(U_abs ** 2, V_abs ** 2)))
    S, S_abs, S_sq = _running_sums(U, V, squares=layer.c_in > lam ** 2)
    accumulation = 2 * u * np.minimum(S_abs, lam * np.sqrt(S_sq))

    def output(Mx):  # (ij, k, (n p q)) -> |AT| Mx |A| as (n, k, p, a, q, b)
        Mx = Mx.reshape(n, n, layer.c_out, layer.n, tiles_h, tiles_w).transpose(3, 2, 4, 5, 0, 1)
        return (np.abs(AT) @ Mx @ np.abs(AT).T).transpose(0, 1, 2, 4, 3, 5)

    Y = output(transforms + accumulation) + 2 * (2 * n + 2) * u * output(np.abs(S))
    return Y.reshape(layer.n, layer.c_out, tiles_h * e, tiles_w * e)[:, :, :layer.h_out, :layer.w_out]


@dataclass(frozen=True)
class Comparison:
    """An fp32 result against the float64 reference and a per-element tolerance.

    >>> c = compare(np.ones((1, 2)), np.ones((1, 2)), np.full((1, 2), 1e-6))
    >>> c.ok, c.nan_count, c.max_abs_err
    (True, 0, 0.0)
    """

    ok: bool
    max_abs_err: float
    max_rel_err: float  # max |y - ref| / max |ref|
    worst_ratio: float  # max |y - ref| / tol (<= 1 when ok)
    nan_count: int


def compare(y: np.ndarray, ref: np.ndarray, tol: np.ndarray) -> Comparison:
    """Compare elementwise; NaN outputs (never stored) fail; a NaN or negative tolerance
    is an InvalidInputError (it would fail every output, as if the kernel were wrong).

    >>> compare(np.array([1.0, 2.0]), np.array([1.0, 2.5]), np.array([0.1, 0.1])).ok
    False
    """
    try:
        arrays = [np.asarray(a) for a in (y, ref, tol)]
        for what, a in zip(("output", "reference", "tolerance"), arrays):
            # complex would lose its imaginary part (numpy only warns)
            _check_real(f"compare needs arrays of real numbers: the {what}", a.dtype.kind, a)
        y, ref, tol = (a.astype(np.float64) for a in arrays)
    except (TypeError, ValueError) as exc:  # text, None, ragged lists
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError("compare needs arrays of real numbers (output, reference, "
                                "tolerance)") from None
    bad = tol[~(tol >= 0)]  # a NaN or negative tolerance fails every output: refuse it
    if bad.size:
        raise InvalidInputError(f"compare needs a tolerance >= 0, got {float(bad.flat[0])} "
                                f"({bad.size} of {tol.size} values)")
    try:
        if y.shape != ref.shape:
            raise ValueError
        tol = np.broadcast_to(tol, y.shape)
    except ValueError:
        raise InvalidInputError(f"compare needs an output and a reference of one shape and a "
                                f"tolerance of that shape (or a scalar), got {y.shape}, "
                                f"{ref.shape}, {tol.shape}") from None
    nan_count = int(np.count_nonzero(~np.isfinite(y)))
    err = np.abs(np.where(np.isfinite(y), y, np.inf) - ref)
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    max_abs = float(err.max()) if err.size else 0.0
    tol = np.maximum(tol, np.finfo(np.float32).tiny)
    ratio = float(np.max(err / tol)) if err.size else 0.0
    return Comparison(ok=nan_count == 0 and ratio <= 1.0, max_abs_err=max_abs,
                      max_rel_err=max_abs / scale if scale > 0 else max_abs,
                      worst_ratio=ratio, nan_count=nan_count)
