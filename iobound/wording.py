"""How a message names a count: the noun's singular for one, its plural otherwise.

>>> counted(1, "measurement"), counted(0, "measurement"), counted(4362, "record", ",")
('1 measurement', '0 measurements', '4,362 records')
>>> counted(2, "index", plural="indices")
'2 indices'
"""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, noun: str, spec: str = "", plural: str | None = None) -> str:
    """``n`` formatted with ``spec`` (``","`` groups thousands) and the noun, singular
    for exactly one (``plural`` defaults to the noun with an ``s``).

    >>> counted(1, "layer"), counted(3, "layer")
    ('1 layer', '3 layers')
    """
    word = noun if n == 1 else (plural if plural is not None else noun + "s")
    return f"{n:{spec}} {word}"
