"""What we report about a tuned kernel configuration (the winner): its I/O against the
bound, its CUDA source, and an emulator check on a reduced-size copy of the layer
(:func:`kernels.verify.emulator_check`).

Examples
--------
>>> import tempfile
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=16, k_h=3, k_w=3, padding=1, name="small")
>>> w = report_winner(layer, dict(x=4, y=4, z=8, alpha=4, tx=4, ty=4, tz=2), "direct",
...                   tempfile.mkdtemp(), verify=False)
>>> w.bound.method, w.bound.ratio_to_bound >= 1, w.kernel_path.endswith("small_direct_best.cu")
('compulsory', True, True)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from kernels.verify import ReducedCheck

from .file_names import layer_file_part

__all__ = ["BoundInfo", "WinnerReport", "bound_info", "kernel_file", "write_kernel", "report_winner"]


@dataclass(frozen=True)
class BoundInfo:
    """The dataflow's exact I/O of a configuration and the best lower bound at its on-chip words.

    >>> from iobound.layer import ConvLayer
    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)
    >>> info = bound_info(pw, dict(x=1, y=3, z=2, alpha=4, tx=1, ty=1, tz=1), "direct")
    >>> info.dataflow_io_words, info.lower_bound_words, info.method, round(info.ratio_to_bound, 3)
    (624, 304.0, 'compulsory', 2.053)
    >>> info.fast_memory_words, info.to_dict()["lower_bound_fast_memory_words"]  # S, S + 2
    (26, 28)
    """

    fast_memory_words: int
    lower_bound_words: float
    method: str
    dataflow_io_words: int
    ratio_to_bound: float | None

    @property
    def lower_bound_fast_memory_words(self) -> int:
        """The S the bound is taken at: the block's on-chip words + 2 (blocks share nothing
        on chip, :func:`iobound.multi_block.bound_fast_memory`)."""
        from iobound.multi_block import bound_fast_memory
        return bound_fast_memory(self.fast_memory_words)

    def to_dict(self) -> dict:
        """JSON-able, in field order, then the bound's S."""
        return {**asdict(self), "lower_bound_fast_memory_words": self.lower_bound_fast_memory_words}


@dataclass(frozen=True)
class WinnerReport:
    """The best configuration's bound info, kernel file and (optional) emulator check.

    >>> import tempfile
    >>> from iobound.layer import ConvLayer
    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="pw")
    >>> w = report_winner(pw, dict(x=1, y=3, z=2, alpha=4, tx=1, ty=1, tz=1), "direct",
    ...                   tempfile.mkdtemp(), verify=False)
    >>> w.config["alpha"], w.bound.dataflow_io_words, w.emulator_check  # verify=False: no check
    (4, 624, None)
    """

    config: dict
    bound: BoundInfo
    kernel_path: str
    emulator_check: ReducedCheck | None = None


def bound_info(layer, cfg: dict, algorithm: str) -> BoundInfo:
    """The dataflow's exact I/O for ``cfg`` and the best lower bound for its on-chip words
    (the single-processor bound at ``S_b + 2``, see :mod:`iobound.multi_block`: blocks
    share nothing on chip, proofs/test_multi_block.py). A config that is no kernel of
    ``layer`` (:func:`kernels.config.check_config`) has no I/O to report: InvalidInputError.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3)
    >>> bound_info(layer, {"x": 4, "y": 3, "z": 4, "alpha": 1, "tx": 3, "ty": 1, "tz": 1},
    ...            "direct")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: config {'x': 4, 'y': 3, 'z': 4, 'alpha': 1, 'tx': 3, 'ty': 1, 'tz': 1} is no kernel of n1 4x8x8 -> 8x6x6 k3x3 s1x1 p0x0: tx=3 must divide x=4
    """
    from iobound.errors import InvalidInputError
    from iobound.layer import check_layer
    from iobound.multi_block import bound_fast_memory
    from iobound.report import bound_report
    from kernels.config import check_config, config_from_dict, onchip_words
    from kernels.verify import expected_io

    check_layer(layer)
    kc = config_from_dict(dict(cfg), algorithm)
    reasons = check_config(layer, kc)
    if reasons:
        raise InvalidInputError(f"config {dict(cfg)!r:.80} is no kernel of "
                                f"{layer.name or layer.short()}: {'; '.join(reasons)}")
    s = onchip_words(layer, kc)
    rep = bound_report(layer, bound_fast_memory(s), algorithm, getattr(kc, "e", None))
    io = expected_io(layer, kc).total
    return BoundInfo(fast_memory_words=s, lower_bound_words=rep.best, method=rep.best_method,
                     dataflow_io_words=io, ratio_to_bound=io / rep.best if rep.best else None)


def kernel_file(layer, algorithm: str, out_dir: str) -> Path:
    """``out_dir/<layer>_<algorithm>_best.cu``: where :func:`write_kernel` writes.

    >>> from iobound.layer import ConvLayer
    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)
    >>> str(kernel_file(pw.replace(name="pw"), "winograd", "out"))
    'out/pw_winograd_best.cu'
    >>> kernel_file(pw, "direct", "out").name  # an unnamed layer
    'layer_direct_best.cu'
    """
    return Path(out_dir) / f"{layer_file_part(layer)}_{algorithm}_best.cu"


def write_kernel(layer, cfg: dict, algorithm: str, out_dir: str) -> str:
    """Write the CUDA source of ``cfg`` to ``out_dir/<layer>_<algorithm>_best.cu``; its path.

    >>> import os, tempfile
    >>> from iobound.layer import ConvLayer
    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="pw")
    >>> path = write_kernel(pw, dict(x=1, y=3, z=2, alpha=4, tx=1, ty=1, tz=1), "direct",
    ...                     tempfile.mkdtemp())
    >>> os.path.basename(path), "__global__" in open(path).read()
    ('pw_direct_best.cu', True)
    """
    from kernels.config import config_from_dict
    from kernels.generate import generate

    from .outputs import write_atomic

    src = generate(layer, config_from_dict(dict(cfg), algorithm))
    path = kernel_file(layer, algorithm, out_dir)
    # an OSError (no space left, the folder gone) propagates: --out-dir was checked before
    # the run, so a write that fails now is no bad input; the session says where the log is
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, src.code.encode())  # whole or not at all: a kill keeps the old file
    return str(path)


def report_winner(layer, cfg: dict, algorithm: str, out_dir: str, verify: bool = True) -> WinnerReport:
    """Bound info, the kernel written to ``out_dir`` and, if ``verify``, the emulator check
    (``verify`` True or False: ``"no"`` is no flag, and would have run the check).

    >>> from iobound.layer import ConvLayer
    >>> report_winner(ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1),
    ...               dict(x=1, y=3, z=2, alpha=4, tx=1, ty=1, tz=1), "direct", "out", verify="no")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: verify must be True or False, got 'no'
    """
    from kernels.config import config_from_dict
    from kernels.verify import emulator_check

    from .option_checks import check_flag
    check_flag("verify", verify)

    check = emulator_check(layer, config_from_dict(dict(cfg), algorithm)) if verify else None
    return WinnerReport(config=dict(cfg), bound=bound_info(layer, cfg, algorithm),
                        kernel_path=write_kernel(layer, cfg, algorithm, out_dir),
                        emulator_check=check)
