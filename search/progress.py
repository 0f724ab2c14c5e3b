"""A tiny progress bar on stderr (no dependency): ``[#####.....] 24/48 best 0.0312 ms``.

It redraws in place on a terminal and prints nothing otherwise (logs and pipes
stay clean) unless ``force=True``. Call it as the tuner's ``progress`` callback.

Examples
--------
>>> import io
>>> out = io.StringIO()
>>> bar = ProgressBar(4, label="tune", stream=out, force=True, width=8)
>>> for k in range(1, 5):
...     bar(k, 4, 1.0 / k)
>>> bar.close()
>>> out.getvalue().splitlines()[-1].strip()
'tune [########] 4/4 best 0.25 ms'
"""

from __future__ import annotations

import math
import sys
import time
from typing import TextIO

from iobound import limits
from iobound.arg_checks import check_type
from iobound.limits import check_flag, check_number

from .option_checks import check_count

__all__ = ["ProgressBar"]

#: A bar's width in characters.
_WIDTH = limits.Limit(1, 1000, "characters of a terminal line")


class ProgressBar:
    """Draws ``label [####....] done/total best X unit`` on ``stream`` (stderr).

    >>> ProgressBar(48, width=-5)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: width=-5 is below the minimum 1
    """

    def __init__(self, total: int, label: str = "", stream: TextIO | None = None,
                 force: bool = False, width: int = 30, unit: str = "ms", min_interval: float = 0.05):
        # a total of 0 (nothing to do) is drawn as one step: the bar is then full
        self.total = max(check_count("total", total), 1)
        self.label = check_type("label", label, str)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = check_flag("force", force) or \
            bool(getattr(self.stream, "isatty", lambda: False)())
        self.width = limits.check_int("width", width, _WIDTH)
        self.unit = check_type("unit", unit, str)
        self.min_interval = check_number("min_interval", min_interval, 0)
        self._last = 0.0
        self._drawn = False
        self._text = ""
        self._width_drawn = 0

    def __call__(self, done: int, total: int | None = None, best: float = math.inf) -> None:
        if total:
            self.total = max(int(total), 1)
        frac = min(max(done / self.total, 0.0), 1.0)
        fill = int(round(frac * self.width))
        best_txt = f" best {best:.4g} {self.unit}" if math.isfinite(best) else ""
        self._text = (f"{self.label} [{'#' * fill}{'.' * (self.width - fill)}] "
                      f"{done}/{self.total}{best_txt}").lstrip()
        now = time.monotonic()
        if self.enabled and (done >= self.total or now - self._last >= self.min_interval):
            self.stream.write("\r" + self._text.ljust(self._width_drawn))
            self._width_drawn = len(self._text)
            self.stream.flush()
            self._last = now
            self._drawn = True

    def close(self) -> None:
        """End the line (once)."""
        if self.enabled and self._drawn:
            self.stream.write("\r" + self._text + "\n")
            self.stream.flush()
            self._drawn = False
