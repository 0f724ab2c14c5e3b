"""The progress bar (search.progress.ProgressBar) against its documented drawing.

Reference: the format of the module doc, ``label [####....] done/total best X unit``, with
the bar's fill recomputed here as the nearest whole number of ``width * done / total``
(exact fractions, no ties drawn), held within 0..width; a redraw pads over a longer
earlier line; nothing is written to a stream that is no terminal unless forced.
"""

from __future__ import annotations

import io
import math
from fractions import Fraction

from hypothesis import given, settings, strategies as st

from search.progress import ProgressBar


def _expected(label, done, total, width, best, unit="ms"):
    total = max(total, 1)
    frac = min(max(Fraction(done, total), Fraction(0)), Fraction(1))
    fill = math.floor(frac * width + Fraction(1, 2))
    best_txt = f" best {best:.4g} {unit}" if math.isfinite(best) else ""
    return f"{label} [{'#' * fill}{'.' * (width - fill)}] {done}/{total}{best_txt}".lstrip()


def _lines(out: io.StringIO) -> list[str]:
    return out.getvalue().split("\r")[1:]


@settings(max_examples=60, deadline=None)
@given(total=st.integers(0, 50), done=st.integers(0, 80), width=st.integers(1, 40),
       best=st.sampled_from([math.inf, 0.25, 3.0]))
def test_the_bar_is_the_documented_line(total, done, width, best):
    """One forced draw is ``label [fill] done/total best``: fill within 0..width (a done
    past the total is a full bar; a total of 0 counts as 1)."""
    if (2 * done * width) % (2 * max(total, 1)) == max(total, 1):
        return  # an exact half: no reference rounding to argue about
    out = io.StringIO()
    bar = ProgressBar(total, label="L", stream=out, force=True, width=width, min_interval=0.0)
    bar(done, None, best)
    assert _lines(out) == [_expected("L", done, total, width, best)]


def test_a_later_total_replaces_the_first():
    """``bar(done, total)`` with a total redraws against that total."""
    out = io.StringIO()
    bar = ProgressBar(4, stream=out, force=True, width=10, min_interval=0.0)
    bar(1, 10)
    assert _lines(out) == [_expected("", 1, 10, 10, math.inf)]


def test_the_last_step_is_drawn_even_within_the_interval():
    """Within ``min_interval`` only the step reaching the total is drawn."""
    out = io.StringIO()
    bar = ProgressBar(3, stream=out, force=True, width=6, min_interval=1e12)
    bar(1, 3)
    bar(2, 3)
    assert out.getvalue() == ""
    bar(3, 3)
    assert _lines(out) == [_expected("", 3, 3, 6, math.inf)]


def test_a_shorter_line_pads_over_the_longer_one():
    """A redraw that is shorter than the line before it is padded to that line's width."""
    out = io.StringIO()
    bar = ProgressBar(2, label="t", stream=out, force=True, width=4, min_interval=0.0)
    bar(1, 2, 0.125)
    bar(2, 2)
    first, second = _lines(out)
    assert len(second) == len(first) and second.rstrip() == _expected("t", 2, 2, 4, math.inf)


def test_close_ends_a_drawn_line_once_and_an_undrawn_one_never():
    """close() after a draw writes the line and a newline once; a bar never drawn, or on a
    stream that is no terminal (not forced), writes nothing."""
    out = io.StringIO()
    bar = ProgressBar(2, stream=out, force=True, width=4, min_interval=0.0)
    bar.close()
    assert out.getvalue() == ""
    bar(2, 2)
    bar.close()
    bar.close()
    assert out.getvalue().count("\n") == 1 and out.getvalue().endswith("\n")
    quiet = io.StringIO()
    plain = ProgressBar(2, stream=quiet, width=4, min_interval=0.0)
    plain(2, 2)
    plain.close()
    assert quiet.getvalue() == ""
