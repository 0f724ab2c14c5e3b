"""Names of the files the toolkit reads, as text it can store and print.

A file given on the command line may have a name the file system encoding cannot
decode (a non-ASCII name under ``LANG=C``): Python carries its bytes as lone
surrogates, which SQLite refuses and an ASCII stdout cannot print.

>>> file_stem("/x/convolution_A100.json.gz")
'convolution_A100'
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["file_name", "file_stem", "layer_file_part"]


def file_name(path: str | os.PathLike) -> str:
    """A file's name as text that can be stored (SQLite) and printed: the bytes of a name
    the file system encoding could not decode (a non-ASCII name under ``LANG=C``, a
    Latin-1 name under UTF-8) read as UTF-8, what is no UTF-8 escaped.

    >>> file_name("/x/run.json"), file_name(os.fsdecode(b"/x/k\\xe9.json"))
    ('run.json', 'k\\\\xe9.json')
    """
    name = Path(path).name
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (surrogateescape)
        return os.fsencode(name).decode("utf-8", "backslashreplace")
    return name


def file_stem(path: str | os.PathLike) -> str:
    """A tuning file's name without ``.gz``, ``.jsonl`` and ``.json`` (the name a file
    that names no device is stored under).

    >>> file_stem("/x/convolution_A100.json.gz"), file_stem("run.jsonl")
    ('convolution_A100', 'run')
    """
    name = file_name(path)
    for ext in (".gz", ".jsonl", ".json"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return name


def layer_file_part(layer) -> str:
    """The part of a file name that names ``layer``: its name with ``/`` and blanks as
    ``_`` (``"layer"`` when it has none), as per-layer logs and kernel files name it.

    >>> from iobound.networks import get_layer
    >>> conv = get_layer("resnet50.conv3_1")
    >>> layer_file_part(conv), layer_file_part(conv.replace(name="a b/c"))
    ('resnet50.conv3_1b', 'a_b_c')
    """
    return (layer.name or "layer").replace("/", "_").replace(" ", "_")
