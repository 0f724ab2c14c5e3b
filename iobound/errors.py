"""The one exception hierarchy of iobound.

Every error the toolkit raises on purpose derives from :class:`IoboundError`.
Bad input (a layer field, a size, an option, a file's contents) raises
:class:`InvalidInputError`, which is also a ``ValueError`` for callers that catch
that, with the offending field and value in the message. The CLI turns an
``IoboundError`` into one line and exit code 2; any other exception is a bug and
keeps its traceback.

Examples
--------
>>> issubclass(UnknownPresetError, IoboundError) and issubclass(UnknownPresetError, KeyError)
True
>>> issubclass(InvalidInputError, ValueError) and issubclass(InvalidInputError, IoboundError)
True
"""

import errno

__all__ = ["IoboundError", "InvalidInputError", "UnknownPresetError", "ToolchainError",
           "SolverError", "OutputWriteError", "SYSTEM_WRITE_ERRNOS"]


class IoboundError(Exception):
    """Base class of the errors iobound raises on purpose.

    Examples
    --------
    >>> all(issubclass(c, IoboundError) for c in (InvalidInputError, UnknownPresetError,
    ...                                          ToolchainError, SolverError, OutputWriteError))
    True
    >>> from iobound.devices import get_device
    >>> try:
    ...     get_device("RTX 9090")
    ... except IoboundError as exc:   # one except clause for every deliberate error
    ...     print(type(exc).__name__, isinstance(exc, IoboundError))
    UnknownPresetError True
    """


class InvalidInputError(IoboundError, ValueError):
    """Bad input from a caller or a user: a field, a size, an option or a file's contents.

    Examples
    --------
    >>> from iobound.units import dtype_bytes
    >>> dtype_bytes("fp8")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: unknown dtype 'fp8'; choose one of fp64, fp32, ...
    """


class UnknownPresetError(IoboundError, KeyError):
    """A network, layer or device preset name that does not exist.

    Examples
    --------
    >>> from iobound.devices import get_device
    >>> get_device("RTX 9090")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.UnknownPresetError: unknown device 'RTX 9090'; choose one of V100-SXM2, ...
    """

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ToolchainError(IoboundError):
    """A required external tool (nvcc, g++) is missing or unusable.

    Raised by the packages that run the tools (``kernels.toolchains``, whose
    ``nvcc_candidates`` example shows one); the CLI reports it in one line, exit code 2.

    Examples
    --------
    >>> issubclass(ToolchainError, IoboundError), issubclass(ToolchainError, ValueError)
    (True, False)
    """


class SolverError(IoboundError):
    """A solver (CP-SAT) stopped without an answer (time limit, model invalid).

    Raised by the search package's CP-SAT enumeration (``search.table1``); the CLI reports it
    in one line, exit code 2.

    Examples
    --------
    >>> issubclass(SolverError, IoboundError), issubclass(SolverError, ValueError)
    (True, False)
    """


class OutputWriteError(IoboundError):
    """A write the system could not complete (a full disk, a file-size limit); the message
    says what was not written and where the measurements are kept.

    Not bad input: the CLI exits with :attr:`exit_code` 1, not 2.

    Examples
    --------
    >>> err = OutputWriteError("could not write run.jsonl: no space left on device")
    >>> err.exit_code, isinstance(err, InvalidInputError)
    (1, False)
    """

    exit_code = 1


#: errno values of a write the system failed, not of a path the user gave wrongly.
SYSTEM_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EIO, errno.EDQUOT})
