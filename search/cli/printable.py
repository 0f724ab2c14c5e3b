r"""stdout that prints any text: a name read from a file, printed under ``LANG=C`` or
``PYTHONIOENCODING=ascii``, is escaped rather than a UnicodeEncodeError traceback.

>>> import io, sys
>>> out, sys.stdout = sys.stdout, io.TextIOWrapper(io.BytesIO(), encoding="ascii")
>>> with printable_stdout():
...     print("Tesla \u00e9", end="")
>>> sys.stdout.flush(); written, sys.stdout = sys.stdout.buffer.getvalue(), out
>>> written
b'Tesla \\xe9'
"""

from __future__ import annotations

import codecs
import contextlib
import sys

__all__ = ["printable_stdout"]


def _lenient(exc: UnicodeError):
    """Encode what stdout's encoding cannot (a non-ASCII name read from a file, printed
    under ``LANG=C`` or ``PYTHONIOENCODING=ascii``): bytes ``surrogateescape`` carries
    (a file name given on the command line) as those bytes, anything else escaped."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    bad = exc.object[exc.start:exc.end]
    if all(0xDC80 <= ord(c) <= 0xDCFF for c in bad):
        return codecs.lookup_error("surrogateescape")(exc)
    return codecs.lookup_error("backslashreplace")(exc)


codecs.register_error("iobound-lenient", _lenient)


@contextlib.contextmanager
def printable_stdout():
    """stdout that prints every text (:func:`_lenient`) instead of a UnicodeEncodeError
    traceback, for the run; its error handler as it was afterwards.

    >>> import io
    >>> out, sys.stdout = sys.stdout, io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    >>> with printable_stdout():
    ...     inside = sys.stdout.errors
    >>> after, sys.stdout = sys.stdout.errors, out
    >>> inside, after
    ('iobound-lenient', 'strict')
    """
    out = sys.stdout
    before = getattr(out, "errors", None)
    if before not in ("strict", "surrogateescape") or not hasattr(out, "reconfigure"):
        yield
        return
    try:
        out.reconfigure(errors="iobound-lenient")
    except (AttributeError, ValueError, OSError):
        yield
        return
    try:
        yield
    finally:  # (reconfigure flushes: a full disk or a closed pipe is said as any write's)
        with contextlib.suppress(AttributeError, ValueError):
            out.reconfigure(errors=before)
