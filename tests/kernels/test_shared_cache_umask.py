"""The build cache several processes share must be usable when iobound creates it itself,
whatever the umask: under 002 (Ubuntu's default for a user with a private group) a
cache root made as a mere parent folder is group-writable, fails the cache's own safety
check, and every process then builds everything again in a private folder of its own."""

from __future__ import annotations

import os

from kernels.cache import cache_dir


def test_a_cache_root_iobound_creates_under_umask_002_is_used(tmp_path):
    # made by cache_dir (a root given by a caller needs an existing parent: the cache makes
    # its root folder, not the folders above it; test_kernel_arguments_checked.py)
    root = tmp_path / "iobound"
    old = os.umask(0o002)
    try:
        folder = cache_dir("emu", root=root)
        again = cache_dir("cubin", root=root)
    finally:
        os.umask(old)
    assert folder == root / "emu" and again == root / "cubin"
