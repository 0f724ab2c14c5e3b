"""Options and input handling shared by the ``iobound`` subcommands.

Each ``add_*`` function adds one option (or one pair) with the same name, meaning and help
text in every subcommand; the ``resolve_*`` functions turn the parsed strings into the
project's objects, raising :class:`~iobound.errors.InvalidInputError` (one stderr line and
exit 2 from ``main``) on bad input. :func:`int_option` is the argparse ``type`` of every
integer option (range-checked against :mod:`iobound.limits`); :func:`check_output_file`
and :func:`check_output_dir` check an output path before any work starts. Heavy modules
are imported inside the functions, so importing this module is cheap.

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_layer_argument(parser); add_memory_arguments(parser); add_json_argument(parser)
>>> args = parser.parse_args(["--layer", "cin=2,hin=6,cout=2,kh=3", "--fast-memory", "1KiB"])
>>> resolve_layer(args).h_out, resolve_fast_memory(args), args.json
(4, 256, False)
>>> format_rows([("layer", "conv1"), ("algorithm", "direct")]).splitlines()
['layer      conv1', 'algorithm  direct']
"""

from __future__ import annotations

import argparse
import json
import re
from typing import TYPE_CHECKING, Callable, Collection, Sequence

from iobound import limits
from iobound.algorithms import ALGORITHMS  # the families every subcommand knows
from iobound.errors import InvalidInputError
from search.outputs import check_distinct_files, check_output_dir, check_output_file, json_safe

if TYPE_CHECKING:  # pragma: no cover
    from iobound.layer import ConvLayer

__all__ = [
    "ALGORITHMS", "DEFAULT_DEVICE", "add_layer_argument", "add_memory_arguments", "add_device_argument",
    "add_algorithm_argument", "add_json_argument", "resolve_layer", "resolve_fast_memory",
    "add_winograd_e_argument", "check_winograd_e", "format_rows", "print_result", "int_option",
    "check_output_file", "check_output_dir", "check_distinct_files", "json_safe", "print_notice", "nonempty",
    "ESTIMATE_LEGEND", "ms_text",
]

#: The device preset of every command that names one when the user does not: the paper's
#: GPU (``iobound kernel`` excepted: :data:`search.cli.kernel_cmd.DEFAULT_KERNEL_DEVICE`).
DEFAULT_DEVICE = "v100"

LAYER_HELP = ("a preset name (alexnet.conv1, resnet50.conv3_1, ...) or key=value pairs "
              "'cin=64,hin=56,cout=64,kh=3,pad=1' (keys n, cin, hin, win, cout, kh, kw, "
              "stride, pad, dilation, groups; stride, pad and dilation as 'a' or 'axb' "
              "(height x width); groups=G divides cin "
              "and cout, groups=cin is depthwise)")


def add_layer_argument(parser: argparse.ArgumentParser) -> None:
    """Add the required ``--layer SPEC`` (read with :func:`resolve_layer`).

    >>> p = argparse.ArgumentParser()
    >>> add_layer_argument(p)
    >>> p.parse_args(["--layer", "alexnet.conv1"]).layer
    'alexnet.conv1'
    """
    parser.add_argument("--layer", required=True, metavar="SPEC", help=LAYER_HELP)


def add_memory_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the required ``--fast-memory S`` and ``--dtype`` (read with :func:`resolve_fast_memory`).

    >>> p = argparse.ArgumentParser()
    >>> add_memory_arguments(p)
    >>> args = p.parse_args(["--fast-memory", "48KiB", "--dtype", "fp16"])
    >>> resolve_fast_memory(args)
    24576
    """
    parser.add_argument(
        "--fast-memory", required=True, metavar="S",
        help="fast memory: words (12288) or bytes with a unit (48KiB, 96KB), converted "
             "to words with --dtype")
    parser.add_argument(
        "--dtype", default=None,
        help="element type used to convert a byte size to words: fp32 (default), fp16, "
             "bf16, fp64, tf32, int8 (only with a size in bytes)")


def add_device_argument(parser: argparse.ArgumentParser, default: str, purpose: str = "") -> None:
    """Add ``--device PRESET`` with ``default``; ``purpose`` says what the device is used for.

    >>> p = argparse.ArgumentParser(exit_on_error=False)
    >>> add_device_argument(p, "v100", "to tune on")
    >>> p.parse_args([]).device
    'v100'
    >>> p.parse_args(["--device", ""])
    Traceback (most recent call last):
    ...
    argparse.ArgumentError: argument --device: the device name is empty
    """
    what = f" {purpose}" if purpose else ""
    parser.add_argument("--device", default=default, metavar="PRESET", type=nonempty("device name"),
                        help=f"device preset{what} (default {default})")


def add_algorithm_argument(parser: argparse.ArgumentParser, default: str | None = "direct",
                           extra: Sequence[str] = (), help: str | None = None) -> None:
    """Add ``--algorithm`` over :data:`ALGORITHMS` plus ``extra`` choices (e.g. ``"all"``).

    >>> p = argparse.ArgumentParser()
    >>> add_algorithm_argument(p, extra=("all",))
    >>> p.parse_args([]).algorithm, p.parse_args(["--algorithm", "all"]).algorithm
    ('direct', 'all')
    """
    parser.add_argument(
        "--algorithm", choices=(*ALGORITHMS, *extra), default=default,
        help=help or f"direct convolution or Winograd F(e x e, r x r) (default {default})")


def add_json_argument(parser: argparse.ArgumentParser, document: str = "one JSON object") -> None:
    """Add ``--json``: print ``document`` (one JSON object, see :func:`print_result`, unless
    the subcommand prints another) instead of text.

    >>> p = argparse.ArgumentParser()
    >>> add_json_argument(p, "one JSON line per layer")
    >>> p.parse_args(["--json"]).json
    True
    """
    parser.add_argument("--json", action="store_true", help=f"print {document} instead of text")


def resolve_layer(args: argparse.Namespace) -> "ConvLayer":
    """The layer named by ``args.layer`` (preset or key=value spec).

    >>> layer = resolve_layer(argparse.Namespace(layer="alexnet.conv1"))
    >>> layer.name, layer.h_out
    ('alexnet.conv1', 55)
    """
    from iobound.layer_spec import parse_layer_spec
    return parse_layer_spec(args.layer)


def resolve_fast_memory(args: argparse.Namespace) -> int:
    """Fast memory in words from ``args.fast_memory`` and ``args.dtype`` (fp32 when not
    given); ``--dtype`` with a size in words, which it would not change, is refused.

    >>> resolve_fast_memory(argparse.Namespace(fast_memory="1024", dtype="fp16"))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --dtype fp16 converts a size in bytes to words; --fast-memory 1024 is in words already (give bytes with a unit, e.g. 48KiB, or leave --dtype out)
    """
    from iobound.units import dtype_bytes, fast_memory_words
    text = str(args.fast_memory).strip()
    if args.dtype is not None and text.isascii() and text.isdigit():
        dtype_bytes(args.dtype)   # an unknown dtype is named first
        raise InvalidInputError(f"--dtype {args.dtype} converts a size in bytes to words; "
                                f"--fast-memory {text[:40]} is in words already (give bytes "
                                "with a unit, e.g. 48KiB, or leave --dtype out)")
    args.dtype = "fp32" if args.dtype is None else args.dtype
    return fast_memory_words(args.fast_memory, dtype=args.dtype)


def add_winograd_e_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--winograd-e E``, one output tile edge (``None`` when not given).

    >>> p = argparse.ArgumentParser(exit_on_error=False)
    >>> add_winograd_e_argument(p)
    >>> p.parse_args([]).winograd_e, p.parse_args(["--winograd-e", "3"]).winograd_e
    (None, 3)
    >>> p.parse_args(["--winograd-e", "x"])
    Traceback (most recent call last):
    ...
    argparse.ArgumentError: argument --winograd-e: 'x' is not an integer
    """
    from iobound.algorithms import DEFAULT_WINOGRAD_E
    parser.add_argument(
        "--winograd-e", type=int_option("--winograd-e", limits.WINOGRAD_E), default=None,
        metavar="E", help=f"Winograd output tile edge e of F(e x e, r x r) (default "
                          f"{DEFAULT_WINOGRAD_E}; the input tile e + r - 1 must be at most "
                          f"{limits.WINOGRAD_E.high})")


def check_winograd_e(e: int | None) -> None:
    """Refuse a Winograd output tile ``e`` outside :data:`iobound.limits.WINOGRAD_E`
    (``None``, the default, is fine).

    >>> check_winograd_e(0)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --winograd-e=0 is below the minimum 1
    """
    if e is not None:
        limits.check_int("--winograd-e", e, limits.WINOGRAD_E)


_ASCII_INT = re.compile(r"\s*[+-]?[0-9]+\s*")


def ascii_int(text: str) -> int:
    """An argparse ``type`` like ``int`` taking ASCII digits only: ``int()`` also reads
    "４" (a full-width digit) and "1_0" (as 10), which layer specs and ``int_option``
    refuse; argparse names the flag ("argument --budget: invalid int value: '1_0'").

    >>> ascii_int(" 12 "), ascii_int("-3")
    (12, -3)
    """
    if not _ASCII_INT.fullmatch(text):
        raise ValueError(text)
    return int(text)


ascii_int.__name__ = "int"  # argparse's message names the type by it


def int_option(flag: str, limit: limits.Limit) -> Callable[[str], int]:
    """An argparse ``type`` reading an integer within ``limit`` (error names ``flag``).

    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--seed", type=int_option("--seed", limits.SEED))
    >>> p.parse_args(["--seed", "7"]).seed
    7
    """
    def parse(text: str) -> int:
        try:
            return limits.parse_int(flag, text, limit)
        except InvalidInputError as exc:  # argparse names the flag itself ("argument --seed:")
            text = str(exc).removeprefix(f"{flag}: ").removeprefix(f"{flag}=")
            raise argparse.ArgumentTypeError(text) from None
    parse.__name__ = "integer"
    return parse


def nonempty(what: str = "value") -> Callable[[str], str]:
    """An argparse ``type`` refusing an empty or blank string (``--device ""`` was taken
    as not given, so the default ran silently); ``what`` names it in the message.

    >>> p = argparse.ArgumentParser(exit_on_error=False)
    >>> _ = p.add_argument("--history", type=nonempty("path"))
    >>> p.parse_args(["--history", "h.db"]).history
    'h.db'
    >>> p.parse_args(["--history", " "])
    Traceback (most recent call last):
    ...
    argparse.ArgumentError: argument --history: the path is empty
    """
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"the {what} is empty")
        return text
    parse.__name__ = what
    return parse


#: The line under a table whose times carry :func:`ms_text`'s estimate mark.
ESTIMATE_LEGEND = "* analytic estimate, not a measurement"


def ms_text(ms: float, estimate: bool = False) -> str:
    """A time in milliseconds as every command prints it: four significant digits (a
    kernel's time spans microseconds to seconds), ``*`` marking an analytic estimate.

    >>> ms_text(0.008561358), ms_text(1.02125, estimate=True)
    ('0.008561', '1.021*')
    """
    return f"{ms:.4g}{'*' if estimate else ''}"


def format_rows(rows: Sequence[tuple[str, str]]) -> str:
    """Two aligned columns, ``label  value``, one row a line.

    >>> print(format_rows([("S", "256 words"), ("lower bound", "1,234 words")]))
    S            256 words
    lower bound  1,234 words
    """
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def aligned_table(rows: Sequence[Sequence[str]],
                  text_columns: int | Collection[int] = 1) -> str:
    """Rows of cells as aligned columns two spaces apart: the text columns left-aligned
    (names), the others right-aligned (numbers); no trailing blanks. ``text_columns`` is
    how many columns from the left are text, or the indices of the text columns.

    >>> print(aligned_table([("layer", "ms"), ("conv1", "0.25"), ("conv10", "12.5")]))
    layer     ms
    conv1   0.25
    conv10  12.5
    >>> print(aligned_table([("ms", "layer"), ("0.25", "conv1"), ("12.5", "conv10")], {1}))
      ms  layer
    0.25  conv1
    12.5  conv10
    """
    text = range(text_columns) if isinstance(text_columns, int) else text_columns
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join(v.ljust(w) if c in text else v.rjust(w)
                               for c, (v, w) in enumerate(zip(r, widths))).rstrip()
                     for r in rows)


def print_result(args: argparse.Namespace, data: dict, text: Callable[[], str]) -> None:
    """Print ``data`` as one JSON line with ``--json`` (non-finite floats as null), else
    the human text ``text()``.

    >>> data = {"layer": "conv1", "ratio": float("inf")}
    >>> print_result(argparse.Namespace(json=True), data, lambda: "not called")
    {"layer": "conv1", "ratio": null}
    >>> print_result(argparse.Namespace(json=False), data, lambda: f"ratio {data['ratio']}")
    ratio inf
    """
    print(json.dumps(json_safe(data), allow_nan=False) if args.json else text())


def print_notice(text: str, seen: set | None = None) -> None:
    """``notice: text`` as one stderr line, after what stdout holds; once per text in ``seen``.

    >>> import contextlib, io
    >>> err, seen = io.StringIO(), set()
    >>> with contextlib.redirect_stderr(err):
    ...     print_notice("gga runs as plain ga", seen); print_notice("gga runs as plain ga", seen)
    >>> err.getvalue().splitlines()
    ['notice: gga runs as plain ga']
    """
    import sys
    if seen is not None:
        if text in seen:
            return
        seen.add(text)
    sys.stdout.flush()
    print(f"notice: {text}", file=sys.stderr, flush=True)
