"""remove_all_orphans (run by the local executor after it kills a worker) sweeps the
cache's build folders, "in every kind of the cache" (kernels/build_folders.py): it must
not delete folders the toolkit never made. $IOBOUND_CACHE names a root that may hold
other tools' folders (a user pointing it at ~/.cache, say); a ``.build-*`` folder of
another tool there (``.build-release`` of a CMake project) is not an orphaned build of
ours. Reference: what iobound creates, the kinds of ``kernels.cache.cache_dir``.
"""

from __future__ import annotations

from kernels.build_folders import remove_all_orphans
from kernels.cache import cache_dir


def test_the_sweep_keeps_to_the_caches_own_folders(tmp_path):
    root = tmp_path / "cache-root"
    emu = cache_dir("emu", root)
    orphan = emu / ".build-orphan"  # an unlocked scratch folder of a killed build: ours
    orphan.mkdir()
    other = root / "cmake-project" / ".build-release"  # another tool's, beside our kinds
    other.mkdir(parents=True)
    (other / "keep.o").write_text("not ours")
    remove_all_orphans(root)
    assert not orphan.exists(), "the positive control: an orphan of ours is swept"
    assert (other / "keep.o").exists(), "a folder iobound never made was deleted"
