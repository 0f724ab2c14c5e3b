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
    """Base class of the errors iobound raises on purpose."""


class InvalidInputError(IoboundError, ValueError):
    """Bad input from a caller or a user: a field, a size, an option or a file's contents."""


class UnknownPresetError(IoboundError, KeyError):
    """A network, layer or device preset name that does not exist."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ToolchainError(IoboundError):
    """A required external tool (nvcc, g++) is missing or unusable."""


class SolverError(IoboundError):
    """A solver (CP-SAT) stopped without an answer (time limit, model invalid)."""


class OutputWriteError(IoboundError):
    """A write the system could not complete (a full disk, a file-size limit); the message
    says what was not written and where the measurements are kept.

    Not bad input: the CLI exits with :attr:`exit_code` 1, not 2."""

    exit_code = 1


#: errno values of a write the system failed, not of a path the user gave wrongly.
SYSTEM_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EIO, errno.EDQUOT})
