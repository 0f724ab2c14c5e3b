"""The one exception hierarchy of iobound.

Bad arguments raise ``ValueError`` (with the offending field and value in the
message); everything else that the toolkit itself detects raises a subclass of
:class:`IoboundError`.

Examples
--------
>>> issubclass(UnknownPresetError, IoboundError) and issubclass(UnknownPresetError, KeyError)
True
"""

__all__ = ["IoboundError", "UnknownPresetError", "ToolchainError"]


class IoboundError(Exception):
    """Base class of the errors iobound raises on purpose."""


class UnknownPresetError(IoboundError, KeyError):
    """A network, layer or device preset name that does not exist."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ToolchainError(IoboundError):
    """A required external tool (nvcc, g++) is missing or unusable."""
