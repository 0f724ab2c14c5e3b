"""The one status vocabulary: values on disk, parsing, no str subclass."""

import pytest

from iobound.errors import InvalidInputError
from kernels.status import CONTEXT_FATAL, Status


def test_values_are_the_strings_logs_hold():
    """The on-disk strings are the ones logs have always held."""
    assert [s.value for s in Status] == ["ok", "compile_error", "runtime_error", "timeout",
                                         "wrong_result", "invalid"]


@pytest.mark.parametrize("status", list(Status))
def test_value_parses_back(status):
    """Status(value) and Status.parse(value) give the member back; parse passes members."""
    assert Status(status.value) is status is Status.parse(status.value) is Status.parse(status)


def test_not_a_string():
    """A Status is not a str: comparing with a bare string is never silently true."""
    assert not isinstance(Status.OK, str) and Status.OK != "ok"


def test_unknown_value_names_the_allowed_ones():
    """An unknown string is an InvalidInputError (a ValueError) listing the values."""
    with pytest.raises(InvalidInputError, match="'crashed'.*wrong_result"):
        Status("crashed")
    with pytest.raises(ValueError):
        Status.parse("OK")


def test_only_ok_is_ok_and_context_fatal_are_failures():
    """is_ok holds for OK alone; a runtime error or timeout needs a new CUDA context."""
    assert [s for s in Status if s.is_ok] == [Status.OK]
    assert CONTEXT_FATAL == {Status.RUNTIME_ERROR, Status.TIMEOUT}
