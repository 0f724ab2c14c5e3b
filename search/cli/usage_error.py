"""The usage error of the ``iobound`` parser (apart from search.cli.main, which imports
nothing heavy: this class's base is iobound's, and importing iobound imports SymPy)."""

from __future__ import annotations

from iobound.errors import InvalidInputError

__all__ = ["CliError"]


class CliError(InvalidInputError):
    """A usage problem found while parsing; printed as one line, exit 2.

    >>> from search.cli.main import build_parser
    >>> build_parser().parse_args(["bound", "--layer"])
    Traceback (most recent call last):
    ...
    search.cli.usage_error.CliError: iobound bound: error: argument --layer: expected one argument
    """
