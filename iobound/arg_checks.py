"""Checks of an API argument's kind: its class, one of a few choices, a path.

One home for the whole project (the kernels and search packages alike): an argument of
the wrong class or an unknown choice is an :class:`~iobound.errors.InvalidInputError`
naming it, in one line, never an AttributeError deep inside.

Examples
--------
>>> check_choice("kind", "src", ("cubin", "emu", "src")), check_path("log", "run.jsonl")
('src', 'run.jsonl')
>>> check_type("layer", "junk", int)
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: layer must be a builtins.int, got 'junk'
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from .errors import InvalidInputError

__all__ = ["check_choice", "check_path", "check_type", "class_names", "shown"]


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` when it is one of the strings ``choices``; else InvalidInputError naming
    ``name`` and the choices (a list or None too, never a ``TypeError``).

    >>> check_choice("order", "best", ("auto", "model"))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: order must be one of auto, model; got 'best'
    """
    if not isinstance(value, str) or value not in choices:
        raise InvalidInputError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def shown(value: Any) -> str:
    """``repr(value)`` for an error message, at most 60 characters.

    >>> len(shown("x" * 100)), shown("x" * 100)[-4:]
    (60, 'x...')
    """
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def class_names(cls: type | tuple) -> str:
    """The dotted names of ``cls`` (a class or a tuple of them), joined by "or".

    >>> class_names(int), class_names((int, float))
    ('builtins.int', 'builtins.int or builtins.float')
    """
    classes = cls if isinstance(cls, tuple) else (cls,)
    return " or ".join(f"{c.__module__}.{c.__qualname__}" for c in classes)


def check_type(name: str, value: Any, cls: type | tuple) -> Any:
    """``value`` when it is an instance of ``cls`` (a class or a tuple of classes); else
    InvalidInputError naming ``name`` and the expected class (an API argument of the
    wrong class fails here, in one line, not as an AttributeError deep inside).

    >>> check_type("space", {"a": [1]}, int)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: space must be a builtins.int, got {'a': [1]}
    """
    if not isinstance(value, cls):
        raise InvalidInputError(f"{name} must be a {class_names(cls)}, got {shown(value)}")
    return value


def check_path(name: str, value: Any) -> Any:
    """``value`` as ``str`` (``os.fspath``) when it is a path (``str`` or ``os.PathLike``);
    else InvalidInputError.

    >>> from pathlib import Path
    >>> check_path("log", Path("run.jsonl"))
    'run.jsonl'
    >>> check_path("log", 5)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: log must be a path (str or os.PathLike), got 5
    """
    if not isinstance(value, (str, os.PathLike)):
        raise InvalidInputError(f"{name} must be a path (str or os.PathLike), got {shown(value)}")
    path = os.fspath(value)
    if not isinstance(path, str):  # a PathLike of bytes
        raise InvalidInputError(f"{name} must be a path of text, got {shown(value)}")
    if "\0" in path:  # no system takes it (os.stat's ValueError, deep inside)
        raise InvalidInputError(f"{name} {path[:40]!r}: not a valid path (a NUL character)")
    return path
