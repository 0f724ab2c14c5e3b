"""Where compiled artefacts (cubins, emulator libraries) are cached, keyed by content hash.

The root is ``$IOBOUND_CACHE`` when set, else ``~/.cache/iobound``.

Examples
--------
>>> import tempfile
>>> cache_dir("cubin", root=tempfile.mkdtemp()).name
'cubin'
>>> len(content_key("a", "b")), content_key("a", "b") == content_key("ab")
(64, False)
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["cache_root", "cache_dir", "content_key"]


def cache_root() -> Path:
    """The cache root folder (not created)."""
    env = os.environ.get("IOBOUND_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "iobound"


def cache_dir(kind: str, root: Path | str | None = None) -> Path:
    """The cache folder for ``kind`` ("cubin", "emu"), created if missing."""
    path = (Path(root) if root is not None else cache_root()) / kind
    path.mkdir(parents=True, exist_ok=True)
    return path


def content_key(*parts: str) -> str:
    """sha256 over the parts, each length-prefixed so ("a", "b") != ("ab",)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()
