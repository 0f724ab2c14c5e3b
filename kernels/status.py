"""The one status vocabulary of a compile or a measurement.

Every record of an outcome -- :class:`kernels.nvcc.CompileResult`,
:class:`kernels.gpu.MeasureResult`, :class:`search.measure.MeasureRecord` -- carries a
:class:`Status`. On disk (JSON logs, cache files, the history database) a status is its
string ``value``; :meth:`Status.parse` (or ``Status(value)``) reads it back and names
the allowed values when it is not one of them.

Examples
--------
>>> Status("timeout") is Status.TIMEOUT
True
>>> Status.WRONG_RESULT.value
'wrong_result'
>>> Status.parse("crashed")
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: unknown status 'crashed'; expected one of ok, compile_error, runtime_error, timeout, wrong_result, invalid
"""

from __future__ import annotations

import enum

from iobound.errors import InvalidInputError

__all__ = ["Status", "CONTEXT_FATAL"]


class Status(enum.Enum):
    """How a configuration fared (AutoTVM's ``MeasureErrorNo``, as named values).

    ``OK`` ran and (where checked) matched the reference; ``COMPILE_ERROR`` did not
    build; ``RUNTIME_ERROR`` failed on launch or while running; ``TIMEOUT`` exceeded its
    time (compiler or kernel); ``WRONG_RESULT`` ran but its output (or traffic)
    disagreed with the reference; ``INVALID`` is not a member of the space or cannot run
    on the device.

    >>> Status.parse("ok").is_ok, Status.parse(Status.INVALID).is_ok
    (True, False)
    """

    OK = "ok"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    WRONG_RESULT = "wrong_result"
    INVALID = "invalid"

    @classmethod
    def _missing_(cls, value: object) -> "Status":
        raise InvalidInputError(f"unknown status {value!r}; expected one of "
                                f"{', '.join(s.value for s in cls)}")

    @classmethod
    def parse(cls, value: "Status | str") -> "Status":
        """``value`` as a Status (a Status passes through; a string is looked up by value)."""
        return value if isinstance(value, cls) else cls(value)

    @property
    def is_ok(self) -> bool:
        """Whether this is ``OK``."""
        return self is Status.OK


#: Statuses after which a CUDA context cannot be trusted: a launch failure (illegal address,
#: misaligned access, ...) is sticky, and a kernel still running after our watchdog gave up
#: would distort the next timings.
CONTEXT_FATAL = frozenset({Status.RUNTIME_ERROR, Status.TIMEOUT})
