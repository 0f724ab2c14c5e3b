"""The extra flags a caller may give :func:`kernels.nvcc.compile_cubin`: none that sets
what it sets itself (the target arch, the kind and name of the output).

Examples
--------
>>> check_extra_flags(None), check_extra_flags(["-lineinfo"])
((), ('-lineinfo',))
"""

from __future__ import annotations

from iobound.errors import InvalidInputError

from .compiler_process import check_compiler_text

__all__ = ["MANAGED_FLAGS", "check_extra_flags"]


#: nvcc and ptxas options :func:`compile_cubin` sets itself (the target, the kind and name
#: of the output): an extra flag naming one would build something other than the result
#: records (``-arch=sm_75`` under ``arch="sm_80"``: ptxas compiled sm_75), or no cubin.
MANAGED_FLAGS = frozenset({
    "-arch", "--gpu-architecture", "-code", "--gpu-code", "-gencode", "--generate-code",
    "-o", "--output-file", "-odir", "--output-directory", "-cubin", "--cubin", "-ptx", "--ptx",
    "-fatbin", "--fatbin", "-c", "--compile", "-E", "--preprocess", "-cuda", "--cuda",
    "-dc", "--device-c", "-dw", "--device-w", "-dlink", "--device-link", "-lib", "--lib",
    "-link", "--link", "-run", "--run", "-ltoir", "-optix-ir", "--optix-ir", "-M",
    "--generate-dependencies", "-MM", "-dryrun", "--dryrun", "-keep", "--keep",
    "-keep-dir", "--keep-dir", "--gpu-name", "-lto", "-dlto", "--dlink-time-opt",
})
_PTXAS_OPTIONS = ("-Xptxas", "--ptxas-options")


def check_extra_flags(extra_flags) -> tuple[str, ...]:
    """``extra_flags`` (None: none) as a tuple of strings that a command line can carry and
    that name none of the :data:`MANAGED_FLAGS` (given to nvcc or, through ``-Xptxas``, to
    ptxas); else InvalidInputError naming the flag.

    >>> check_extra_flags(["-DN=1", "-lineinfo"])
    ('-DN=1', '-lineinfo')
    >>> check_extra_flags(["-arch=sm_75"])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: extra_flags: '-arch=sm_75' sets -arch, which compile_cubin sets itself (the target arch, the cubin output and its name)
    """
    if extra_flags is None:
        return ()
    if isinstance(extra_flags, (str, bytes)) or not hasattr(extra_flags, "__iter__"):
        raise InvalidInputError(f"extra_flags must be a sequence of strings, "
                                f"got {extra_flags!r:.80}")
    flags = tuple(extra_flags)
    if not all(isinstance(f, str) for f in flags):
        raise InvalidInputError(f"extra_flags must be a sequence of strings, "
                                f"got {extra_flags!r:.80}")
    after_x = False  # the flag after a bare -Xptxas is ptxas' own
    for flag in flags:
        check_compiler_text("extra_flags", flag)
        name, _, value = flag.strip().partition("=")
        names = [name.split()[0] if name.split() else name]
        if names[0] in _PTXAS_OPTIONS:
            names = [v.strip().partition("=")[0] for v in value.split(",")]
        elif after_x:
            names = [v.strip().partition("=")[0] for v in flag.split(",")]
        after_x = flag.strip() in _PTXAS_OPTIONS
        clash = next((n for n in names if n in MANAGED_FLAGS), None)
        if clash is not None:
            raise InvalidInputError(f"extra_flags: {flag!r:.80} sets {clash}, which compile_cubin "
                                    "sets itself (the target arch, the cubin output and its name)")
    return flags
