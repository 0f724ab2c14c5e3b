"""Where the recorded data the benchmarks (and the tests) default to lives.

``$IOBOUND_SHARED_DATA`` when set, else ``shared/data`` beside the checkout or beside any
folder above it (a worktree's checkout sits a level deeper), else the place beside the
checkout where it would be (a missing folder is the caller's to report). A user's clone
has none: every benchmark also takes its files as paths.

>>> SHARED_DATA.name, SPACES_DIR.name
('data', 'tuning-spaces')
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["shared_data_dir", "SHARED_DATA", "SPACES_DIR"]

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """The recorded data's folder (see the module doc)."""
    if os.environ.get("IOBOUND_SHARED_DATA"):
        return Path(os.environ["IOBOUND_SHARED_DATA"])
    return next((p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data").is_dir()),
                REPO.parent / "shared" / "data")


SHARED_DATA = shared_data_dir()
#: The recorded Kernel Tuner spaces (``tuning-spaces/*.json.gz``).
SPACES_DIR = SHARED_DATA / "tuning-spaces"
