"""The compile cache must not load a library another user can swap in after the trust check.

``kernels.cache`` checks the cache root and kind folder (owned by us, writable by no one
else), then ``is_trusted`` checks the library and its digest, and only then the emulator's launcher
opens the library by its path. When the root is reached through a path another user can
change (a symlink they own, in a folder they may write, as a shared team folder or
``IOBOUND_CACHE=/tmp/...`` is), they can re-point it between the check and the load, and
their library runs inside this process. The check must hold for what is loaded: the
path the cache uses must be one only this user (or root) can change."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap

import numpy as np
import pytest

from kernels import emulator as emu
from kernels import emulator_build

pytestmark = [
    pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user"),
    pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc"),
]

ATTACKER = 4242

_STUB = ("int iobound_emulate(void *x, void *w, void *o, unsigned long long *c)"
         " {{ c[0] = {loads}; c[1] = 0; c[2] = 0; c[3] = 0; return 0; }}\n")

# A fake g++: answers --version; "precompiles" by writing a file; builds any kernel into
# the stub library whose launch reports 1 global load (and the emulator's launcher as g++).
_FAKE_CXX = textwrap.dedent("""\
    #!/bin/sh
    if [ "$1" = "--version" ]; then echo "g++ (fake) 13.0"; exit 0; fi
    case "$*" in *launcher.cpp*) exec g++ "$@";; esac
    out=""; prev=""
    for a; do [ "$prev" = "-o" ] && out=$a; prev=$a; done
    case "$out" in *.gch) echo pch > "$out"; exit 0;; esac
    exec gcc -shared -fPIC -x c "$(dirname "$0")/stub.c" -o "$out"
    """)


def _source():
    from iobound.layer import ConvLayer
    from kernels.codegen_direct import generate_direct
    from kernels.config import DirectConfig

    layer = ConvLayer(n=1, c_in=2, h_in=5, w_in=5, c_out=2, k_h=3, k_w=3)
    return generate_direct(layer, DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=1, tz=1))


def test_cache_root_re_pointed_after_the_trust_check_loads_no_foreign_library(
        tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "stub.c").write_text(_STUB.format(loads=1))
    cxx = bin_dir / "g++"
    cxx.write_text(_FAKE_CXX)
    cxx.chmod(0o755)
    monkeypatch.setenv("CXX", str(cxx))
    emulator_build._cxx_version.cache_clear()

    # the user's real cache, private; reached through a link in a folder others may write
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    link = shared / "iobound-cache"
    link.symlink_to(mine)
    os.lchown(link, ATTACKER, ATTACKER)

    src = _source()
    lib, _, _ = emu.build_emulator(src.code, cache_root=link)  # built by this user

    # the attacker's library, at the same name in a folder of theirs
    evil = tmp_path / "evil"
    (evil / "emu").mkdir(parents=True)
    (evil / "evil.c").write_text(_STUB.format(loads=666))
    subprocess.run(["gcc", "-shared", "-fPIC", "-x", "c", str(evil / "evil.c"), "-o",
                    str(evil / "emu" / lib.name)], check=True)
    for p in (evil, evil / "emu", evil / "emu" / lib.name):
        os.chown(p, ATTACKER, ATTACKER)

    real_is_trusted = emulator_build.is_trusted

    def attacker_wins_the_race(path):  # the link re-pointed right after the check
        ok = real_is_trusted(path)
        if ok and str(path).endswith(".so") and os.readlink(link) != str(evil):
            link.unlink()
            link.symlink_to(evil)
        return ok

    monkeypatch.setattr(emulator_build, "is_trusted", attacker_wins_the_race)
    x = np.ones((1, 2, 5, 5), np.float32)
    w = np.ones((2, 2, 3, 3), np.float32)
    try:
        run = emu.emulate(src, x, w, cache_root=link)
    finally:
        emulator_build._cxx_version.cache_clear()
    assert run.global_loads == 1, "the attacker's library was loaded"
