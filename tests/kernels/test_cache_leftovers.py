"""What a build leaves behind, however it ends, and what the trusted cache never loads.

A build that is killed (an executor's --timeout kills the worker with SIGKILL) cannot
remove its scratch folder: it was left in the cache folder forever (kernel.cu, a partial
precompiled header), and the compiler's own temporary files (g++'s cc*.s, nvcc's
tmpxft_*) were left in $TMPDIR even after an ordinary compile timeout. The private
folder used when the cache cannot be used was never removed (a 44 MB precompiled header
each, one per worker process and run). Reference: the folders listed before and after.
"""

from __future__ import annotations

import os
import signal
import stat
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from kernels import cache as kc
from kernels import emulator as emu
from kernels import nvcc as nv

ROOT = Path(__file__).resolve().parents[2]

# --version answers; the precompiled header fails (so builds use none); a kernel build
# makes a temporary file of its own in $TMPDIR as compilers do, says it started, then hangs.
_SLOW_CXX = textwrap.dedent("""\
    #!/bin/sh
    if [ "$1" = "--version" ]; then echo "g++ (slow fake) 13.0"; exit 0; fi
    case "$*" in *c++-header*) exit 1;; esac
    mktemp > /dev/null
    touch "$(dirname "$0")/started"
    exec sleep 30
    """)

# A quick fake g++: writes "built" to the path after -o.
_QUICK_CXX = textwrap.dedent("""\
    #!/bin/sh
    if [ "$1" = "--version" ]; then echo "g++ (quick fake) 13.0"; exit 0; fi
    case "$*" in *c++-header*) exit 1;; esac
    out=""; prev=""
    for a; do [ "$prev" = "-o" ] && out=$a; prev=$a; done
    echo built > "$out"
    """)

_SLOW_NVCC = textwrap.dedent("""\
    #!/bin/sh
    case "$1" in
      --version) echo "Cuda compilation tools, release 12.4, V12.4.1"; exit 0;;
      --list-gpu-arch) echo compute_80; exit 0;;
    esac
    mktemp > /dev/null
    exec sleep 30
    """)

_QUICK_NVCC = textwrap.dedent("""\
    #!/bin/sh
    case "$1" in
      --version) echo "Cuda compilation tools, release 12.4, V12.4.1"; exit 0;;
      --list-gpu-arch) echo compute_80; exit 0;;
    esac
    for a; do out=$a; done
    echo "ptxas info    : Compiling entry function 'k' for 'sm_80'" >&2
    echo cubin > "$out"
    """)


def _script(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _leftovers(folder: Path) -> list[str]:
    """Entries of a cache folder that are neither artefacts nor digests nor pch folders."""
    if not folder.exists():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if not (p.name.startswith("pch-") or p.suffix in (".so", ".launcher", ".sha256", ".cubin", ".json")))


def _env(**extra: str) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def test_a_build_killed_outright_leaves_no_scratch_folder(tmp_path, monkeypatch):
    """A builder killed with SIGKILL mid-compile: its scratch folder (kernel.cu) is gone
    once the next build in that cache has run."""
    root = tmp_path / "cache"
    slow = _script(tmp_path / "slow", "g++", _SLOW_CXX)
    child = subprocess.Popen(
        [sys.executable, "-c", "import kernels.emulator as e; e.build_emulator('int slow;')"],
        env=_env(CXX=str(slow), IOBOUND_CACHE=str(root)), cwd=ROOT, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (slow.parent / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (slow.parent / "started").exists(), "the build never started"
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the worker and its compiler, as an executor does
        child.wait()
    assert _leftovers(root / "emu"), "the kill left nothing to clean up: the test proves nothing"
    monkeypatch.setenv("CXX", str(_script(tmp_path / "quick", "g++", _QUICK_CXX)))
    emu.build_emulator("int quick;", cache_root=root)
    assert _leftovers(root / "emu") == []


_EXECUTOR_RUN = textwrap.dedent("""\
    from iobound.layer import ConvLayer
    from search.executors.local import LocalExecutor
    from search.executors.options import ExecutorOptions
    from search.measure.emulate import EmulateMeasurer

    if __name__ == "__main__":
        layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
        options = ExecutorOptions(workers=1, timeout_s=1.0, retries=0)
        with LocalExecutor(EmulateMeasurer(layer), options) as ex:
            (_, record), = ex.submit([(0, dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1))])
        print(record.status.value)
    """)


def test_an_executor_timeout_leaves_nothing_behind(tmp_path, request):
    """`tune --timeout`: the worker is killed during the build; when the run ends, the
    cache folder holds no scratch folder and $TMPDIR none of the compiler's files; the
    configuration is recorded as a timeout."""
    # a short $TMPDIR: the worker pool's socket lives there, and a unix socket path is at
    # most 107 bytes (pytest-xdist's tmp_path can be longer)
    tmpdir = Path(tempfile.mkdtemp(prefix="iob-"))
    request.addfinalizer(lambda: shutil.rmtree(tmpdir, ignore_errors=True))
    root = tmp_path / "cache"
    slow = _script(tmp_path / "slow", "g++", _SLOW_CXX)
    script = tmp_path / "run.py"
    script.write_text(_EXECUTOR_RUN)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=ROOT, timeout=120,
                         env=_env(CXX=str(slow), IOBOUND_CACHE=str(root), TMPDIR=str(tmpdir)))
    assert out.stdout.split()[-1:] == ["timeout"], out.stdout + out.stderr
    assert (slow.parent / "started").exists()
    assert _leftovers(root / "emu") == []
    assert sorted(p.name for p in tmpdir.iterdir() if not p.name.startswith("pymp-")) == []


def test_a_compiler_timeout_leaves_no_temporary_files(tmp_path, monkeypatch):
    """g++ and nvcc killed at their timeout leave nothing in $TMPDIR (g++ left cc*.s,
    nvcc 1.4 MB of tmpxft_* per timed-out compile) nor in the cache folder."""
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setenv("CXX", str(_script(tmp_path / "slow", "g++", _SLOW_CXX)))
    root = tmp_path / "cache"
    with pytest.raises(emu.EmulatorBuildError, match="timed out"):
        emu.build_emulator("int slow;", cache_root=root, timeout=0.5)
    nvcc = _script(tmp_path / "nvbin", "nvcc", _SLOW_NVCC)
    nv.toolchain.cache_clear()
    res = nv.compile_cubin("int k;", "sm_80", nvcc=str(nvcc), cache_root=root, timeout=0.5)
    assert res.status.value == "timeout"
    assert sorted(p.name for p in tmpdir.iterdir()) == []
    assert _leftovers(root / "emu") == [] and _leftovers(root / "cubin") == []


_PRIVATE = textwrap.dedent("""\
    import multiprocessing as mp, os, signal, sys
    from kernels.cache import cache_dir

    def child(queue):
        queue.put(str(cache_dir("emu", sys.argv[1])))

    if __name__ == "__main__":
        print(cache_dir("emu", sys.argv[1]), flush=True)
        if sys.argv[2] == "worker":  # a multiprocessing worker, as the executor starts
            ctx = mp.get_context("forkserver")
            queue = ctx.Queue()
            p = ctx.Process(target=child, args=(queue,))
            p.start()
            print(queue.get(), flush=True)
            p.join()
        elif sys.argv[2] == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
    """)


def _private_folders(tmp_path, how: str) -> list[Path]:
    afile = tmp_path / "a-file"  # IOBOUND_CACHE naming a file: a private folder is used
    afile.write_text("x")
    script = tmp_path / "private.py"
    script.write_text(_PRIVATE)
    out = subprocess.run([sys.executable, str(script), str(afile), how], capture_output=True,
                         text=True, cwd=ROOT, timeout=120, env=_env())
    folders = [Path(line) for line in out.stdout.split()]
    assert folders and all(afile not in f.parents for f in folders), out.stdout + out.stderr
    return folders


def test_private_folders_are_removed_when_their_process_ends(tmp_path):
    """The private folder of a process (and of a multiprocessing worker) is gone when it
    ends; one whose process was killed is gone once another process makes one."""
    import shutil
    made = []
    try:
        made += _private_folders(tmp_path, "worker")
        assert [f for f in made if f.exists()] == []
        killed = _private_folders(tmp_path, "killed")
        made += killed
        assert all(f.exists() for f in killed)  # nothing could remove it yet
        made += _private_folders(tmp_path, "plain")
        assert [f for f in made if f.exists()] == []
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


def test_the_fallback_warning_is_one_line(tmp_path, caplog):
    """IOBOUND_CACHE naming a file: one warning per process, not one per build (a tune
    run printed it three times per measured configuration)."""
    afile = tmp_path / "a-file"
    afile.write_text("x")
    with caplog.at_level("WARNING", logger="kernels.cache"):
        for _ in range(3):
            kc.cache_dir("emu", afile)
    assert len([r for r in caplog.records if "private folder" in r.getMessage()]) == 1


_CALLABLE = ('#include "cuda_emu.h"\nextern "C" int iobound_emulate(const float*, const float*, '
             'float*, unsigned long long*) { return 0; }\n')


@pytest.mark.skipif(not __import__("shutil").which("g++"), reason="needs g++")
def test_a_truncated_library_is_rebuilt_even_when_its_digest_matches(tmp_path, monkeypatch):
    """A library cut short is never loaded (the loader dies of SIGBUS on the missing
    pages, taking the Python process with it), even when the digest beside it was
    recorded on the short file: it is built again."""
    wrapper = _script(tmp_path / "bin", "g++", '#!/bin/sh\ncase "$*" in *c++-header*) exit 1;; esac\n'
                                               'exec g++ "$@"\n')
    monkeypatch.setenv("CXX", str(wrapper))
    root = tmp_path / "cache"
    lib, _, cached = emu.build_emulator(_CALLABLE, cache_root=root)
    full = lib.stat().st_size
    assert not cached and lib.read_bytes()[:4] == b"\x7fELF"
    lib.write_bytes(lib.read_bytes()[: full // 2])
    kc.record_digest(lib)  # the digest vouches for the short file
    again, _, cached = emu.build_emulator(_CALLABLE, cache_root=root)
    assert again == lib and not cached
    assert lib.stat().st_size == full


def test_compile_many_of_one_source_twice(tmp_path):
    """compile_many with one source several times (threads compiling one cache key):
    every result, no FileNotFoundError from two threads recording one digest."""
    nvcc = _script(tmp_path / "nvbin", "nvcc", _QUICK_NVCC)
    nv.toolchain.cache_clear()
    for i in range(12):
        results = nv.compile_many(["int k;"] * 8, "sm_80", nvcc=str(nvcc),
                                  cache_root=tmp_path / f"cache{i}", workers=8)
        assert all(r.ok for r in results), [r.log for r in results if not r.ok]
    for i in range(12):
        assert _leftovers(tmp_path / f"cache{i}" / "cubin") == []


def test_tests_do_not_write_to_the_users_cache():
    """The test session builds into a cache of its own, not ~/.cache/iobound (thousands
    of libraries and cubins were left there by every run of the suite)."""
    root = kc.cache_root().expanduser().absolute()
    user = (Path.home() / ".cache").absolute()
    assert user != root and user not in root.parents
