"""Trusted caches: a cached library, precompiled header or cubin is used only when it is
what we built (sha256 recorded at build time) in a folder only this user can write."""

import os
import stat
import textwrap

import pytest

from kernels import cache as kc
from kernels import emulator as emu
from kernels import nvcc as nv

# A fake g++: --version answers, any other call writes "built <n>" to the path after -o.
_FAKE_CXX = textwrap.dedent("""\
    #!/bin/sh
    if [ "$1" = "--version" ]; then echo "g++ (fake) 13.0"; exit 0; fi
    echo run >> "$(dirname "$0")/runs"
    out=""; prev=""
    for a; do [ "$prev" = "-o" ] && out=$a; prev=$a; done
    echo "built $(wc -l < "$(dirname "$0")/runs")" > "$out"
    """)


@pytest.fixture
def fake_cxx(tmp_path, monkeypatch):
    """A fake compiler (fast, counts its runs in ``runs``); returns the runs file."""
    folder = tmp_path / "bin"
    folder.mkdir()
    cxx = folder / "g++"
    cxx.write_text(_FAKE_CXX)
    cxx.chmod(cxx.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("CXX", str(cxx))
    (folder / "runs").write_text("")
    return folder / "runs"


def _runs(runs_file) -> int:
    return runs_file.read_text().count("run")


def test_built_library_is_reused_then_rebuilt_when_changed(tmp_path, fake_cxx):
    """A library whose bytes no longer match the recorded sha256 is rebuilt, not loaded."""
    root = tmp_path / "cache"
    lib, _, cached = emu.build_emulator("int k;", cache_root=root)
    assert not cached and kc.is_trusted(lib)
    again, _, cached = emu.build_emulator("int k;", cache_root=root)
    assert cached and again == lib
    before = _runs(fake_cxx)
    lib.write_bytes(b"\x7fELF planted")
    rebuilt, _, cached = emu.build_emulator("int k;", cache_root=root)
    assert not cached and rebuilt == lib and kc.is_trusted(lib)
    assert _runs(fake_cxx) == before + 1


def test_library_without_a_recorded_digest_is_rebuilt(tmp_path, fake_cxx):
    """A file someone placed at the cache path (no digest of ours) is never loaded."""
    root = tmp_path / "cache"
    lib, _, _ = emu.build_emulator("int k;", cache_root=root)
    (lib.parent / (lib.name + kc.DIGEST_SUFFIX)).unlink()
    _, _, cached = emu.build_emulator("int k;", cache_root=root)
    assert not cached and kc.is_trusted(lib)


def test_changed_precompiled_header_is_rebuilt(tmp_path, fake_cxx):
    """A precompiled header that does not match its digest is built again."""
    root = tmp_path / "cache"
    emu.build_emulator("int k;", cache_root=root)
    (gch,) = (root / "emu").glob("pch-*/cuda_emu.h.gch")
    gch.write_bytes(b"planted")
    before = _runs(fake_cxx)
    emu.build_emulator("int k2;", cache_root=root)  # a new library: pch + library = 2 runs
    assert _runs(fake_cxx) == before + 2 and kc.is_trusted(gch)


def test_cache_writable_by_others_is_not_used(tmp_path, fake_cxx):
    """A cache root writable by others: artefacts go to a private folder instead."""
    root = tmp_path / "cache"
    root.mkdir()
    root.chmod(0o777)
    lib, _, _ = emu.build_emulator("int k;", cache_root=root)
    assert root not in lib.parents
    mode = lib.parent.stat().st_mode
    assert not mode & (stat.S_IWGRP | stat.S_IWOTH) and lib.parent.stat().st_uid == os.getuid()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give the folder to another user")
def test_cache_owned_by_another_user_is_not_used(tmp_path):
    """A cache folder owned by someone else is not used."""
    root = tmp_path / "cache"
    (root / "emu").mkdir(parents=True)
    os.chown(root / "emu", 4242, -1)
    assert kc.cache_dir("emu", root) != root / "emu"


def test_group_writable_artefact_is_not_trusted(tmp_path):
    """An artefact others may rewrite is not trusted even when its digest matches."""
    art = tmp_path / "a.so"
    art.write_bytes(b"x")
    kc.record_digest(art)
    assert kc.is_trusted(art)
    art.chmod(0o666)
    assert not kc.is_trusted(art)


_FAKE_NVCC = textwrap.dedent("""\
    #!/bin/sh
    case "$1" in
      --version) echo "Cuda compilation tools, release 12.4, V12.4.1"; exit 0;;
      --list-gpu-arch) echo compute_80; exit 0;;
    esac
    echo run >> "$(dirname "$0")/runs"; for a; do out=$a; done
    echo "ptxas info    : Compiling entry function 'k' for 'sm_80'" >&2
    echo "ptxas info    : Used 10 registers, 64 bytes smem, 0 bytes cmem[0]" >&2
    echo cubin > "$out"
    """)


@pytest.fixture
def fake_nvcc(tmp_path):
    folder = tmp_path / "nvbin"
    folder.mkdir()
    path = folder / "nvcc"
    path.write_text(_FAKE_NVCC)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    (folder / "runs").write_text("")
    nv.toolchain.cache_clear()
    return path


@pytest.mark.parametrize("damage", ["cubin", "record", "record-digest"])
def test_changed_cubin_or_record_is_recompiled(tmp_path, fake_nvcc, damage):
    """A cubin or compile record that is not what we wrote is compiled again."""
    root = tmp_path / "cache"
    first = nv.compile_cubin("int k;", "sm_80", nvcc=str(fake_nvcc), cache_root=root)
    assert first.ok and nv.compile_cubin("int k;", "sm_80", nvcc=str(fake_nvcc),
                                         cache_root=root).cached
    cubin = root / "cubin" / os.path.basename(first.cubin_path)
    record = cubin.with_suffix(".json")
    if damage == "cubin":
        cubin.write_bytes(b"planted")
    elif damage == "record":
        record.write_text('{"status": "ok", "cubin_path": "/tmp/elsewhere.cubin"}')
    else:
        (record.parent / (record.name + kc.DIGEST_SUFFIX)).write_text("0" * 64)
    again = nv.compile_cubin("int k;", "sm_80", nvcc=str(fake_nvcc), cache_root=root)
    assert again.ok and not again.cached and again.cubin_path == first.cubin_path
    assert (fake_nvcc.parent / "runs").read_text().count("run") == 2


def test_large_artefact_is_hashed_once_until_it_changes(tmp_path, monkeypatch):
    """A large artefact (the precompiled header) found trusted is not hashed again while
    its file is unchanged; rewritten (same size), it is hashed again and refused."""
    art = tmp_path / "big.gch"
    art.write_bytes(b"a" * kc._LARGE)
    kc.record_digest(art)
    hashed = []
    real = kc.file_digest
    monkeypatch.setattr(kc, "file_digest", lambda p: hashed.append(p) or real(p))
    assert kc.is_trusted(art) and kc.is_trusted(art)
    assert len(hashed) == 1
    with open(art, "r+b") as f:
        f.write(b"b")
    os.utime(art, ns=(2, 2))  # a new mtime, as the next clock tick would give the rewrite
    assert not kc.is_trusted(art)
    assert len(hashed) == 2


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_relative_cache_root_compiles(tmp_path, fake_nvcc, monkeypatch, how):
    """A relative cache root (IOBOUND_CACHE=cache) is the folder under the current one: the
    compiler, run in a scratch folder, still finds its output (it was a compile_error for
    every kernel, and cached as one)."""
    monkeypatch.chdir(tmp_path)
    if how == "environment":
        monkeypatch.setenv("IOBOUND_CACHE", "rel-cache")
    root = "rel-cache" if how == "argument" else None
    first = nv.compile_cubin("int k;", "sm_80", nvcc=str(fake_nvcc), cache_root=root)
    assert first.ok, first.log
    assert os.path.isabs(first.cubin_path)
    assert os.path.dirname(first.cubin_path) == str(tmp_path / "rel-cache" / "cubin")
    assert nv.compile_cubin("int k;", "sm_80", nvcc=str(fake_nvcc), cache_root=root).cached
    assert kc.cache_dir("emu", root).is_absolute()


def test_cache_that_cannot_be_written_falls_back_to_a_private_folder(tmp_path, monkeypatch):
    """A cache folder that exists but cannot be written (read-only) is not used: the build
    goes to a private folder instead of failing with PermissionError."""
    root = tmp_path / "cache"
    (root / "cubin").mkdir(parents=True, mode=0o500)
    real = os.access
    monkeypatch.setattr(kc.os, "access", lambda p, mode: False if str(p) == str(root / "cubin")
                        else real(p, mode))  # root may write anything: pretend we cannot
    folder = kc.cache_dir("cubin", root)
    assert folder != root / "cubin" and os.access(folder, os.W_OK)


def test_cache_root_that_is_a_file_falls_back_to_a_private_folder(tmp_path):
    """IOBOUND_CACHE naming a file: a private folder, no exception."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    folder = kc.cache_dir("emu", afile)
    assert folder.is_dir() and afile not in folder.parents


def test_cache_root_of_the_wrong_type_is_an_input_error():
    """A cache root that is no path is refused naming it (was a TypeError from pathlib)."""
    from iobound.errors import InvalidInputError
    with pytest.raises(InvalidInputError, match="cache root"):
        kc.cache_dir("emu", 5)
