"""A hostile compiler environment: each failure is a result, never a crash, hang or orphan.

Provoked with fake compilers (shell scripts named by $CXX / given as nvcc):

* a compiler whose output is not UTF-8 (bytes 0xff 0xfe): the build or its --version
  raised UnicodeDecodeError (``subprocess.run(text=True)``), a traceback out of
  ``iobound kernel --emulate`` and out of every measurer;
* a $CXX that hangs on ``--version`` or while precompiling cuda_emu.h: neither had a
  timeout, so ``iobound kernel --emulate`` and the winner's emulator check at the end of
  ``iobound tune`` hung forever (only the kernel build itself had one);
* a compiler killed at its timeout: ``subprocess.run`` killed only the driver, and what
  it had started (g++'s cc1plus, nvcc's cicc/ptxas) went on running as an orphan.

Each case runs in a subprocess of its own, bounded by a timeout (a hang fails the test).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.kernels.test_cache_leftovers import _script

ROOT = Path(__file__).resolve().parents[2]

_BYTES_VERSION = textwrap.dedent("""\
    #!/bin/sh
    printf 'g++ \\377\\376 13.0\\n'
    """)
_BYTES_BUILD = textwrap.dedent("""\
    #!/bin/sh
    if [ "$1" = "--version" ]; then echo "g++ (bytes fake) 13.0"; exit 0; fi
    printf 'kernel.cu:1: error: \\377\\376 bad bytes\\n' >&2
    exit 1
    """)
_HANG_VERSION = textwrap.dedent("""\
    #!/bin/sh
    exec sleep 60
    """)
_HANG_PCH = textwrap.dedent("""\
    #!/bin/sh
    if [ "$1" = "--version" ]; then echo "g++ (hang fake) 13.0"; exit 0; fi
    case "$*" in *c++-header*) exec sleep 60;; esac
    exit 1
    """)
# A build that starts a child (as g++ starts cc1plus) and waits for it.
_KID_CXX = textwrap.dedent("""\
    #!/bin/sh
    if [ "$1" = "--version" ]; then echo "g++ (kid fake) 13.0"; exit 0; fi
    case "$*" in *c++-header*) exit 1;; esac
    sh -c 'echo $$ > "$0"; exec sleep 60' "$(dirname "$0")/kid.pid"
    echo done
    """)
# A fake nvcc answers --version and --list-gpu-arch, then does what its body says.
_NVCC_HEAD = textwrap.dedent("""\
    #!/bin/sh
    case "$1" in
      --version) echo "Cuda compilation tools, release 12.4, V12.4.1"; exit 0;;
      --list-gpu-arch) echo compute_80; exit 0;;
    esac
    """)
_KID_NVCC = _NVCC_HEAD + textwrap.dedent("""\
    sh -c 'echo $$ > "$0"; exec sleep 60' "$(dirname "$0")/kid.pid"
    echo done
    """)
_BYTES_NVCC = _NVCC_HEAD + textwrap.dedent("""\
    printf 'kernel.cu(1): error: \\377\\376\\n' >&2
    exit 2
    """)

KERNEL = ["kernel", "--layer", "cin=2,hin=6,cout=2,kh=3,pad=1",
          "--config", "x=3,y=3,z=2,alpha=1,tx=3,ty=3,tz=1", "--emulate", "--json"]


def _python(code: str, tmp_path: Path, timeout: float = 30, **env: str):
    """Run ``code`` in a fresh interpreter (own session); (returncode, stdout, stderr), or
    None when it did not end within ``timeout`` (it and its children are then killed)."""
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace",
                            env={**os.environ, "PYTHONPATH": str(ROOT),
                                 "IOBOUND_CACHE": str(tmp_path / "cache"), **env})
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None
    return proc.returncode, out, err


def _cli(argv, **fixups) -> str:
    lines = ["import sys", "import kernels.emulator as e", "import kernels.emulator_build as b"]
    lines += [f"setattr(b if hasattr(b, {k!r}) else e, {k!r}, {v!r})" for k, v in fixups.items()]
    lines += ["from search.cli.main import main", f"sys.exit(main({list(argv)!r}))"]
    return "\n".join(lines)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _kid_gone(pid_file: Path) -> bool:
    """Whether the child the fake compiler started is gone (killed if not, to clean up)."""
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 2
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    gone = not _alive(pid)
    if not gone:
        os.kill(pid, signal.SIGKILL)
    return gone


def test_cxx_version_not_utf8_is_no_traceback(tmp_path):
    cxx = _script(tmp_path / "bin", "g++", _BYTES_VERSION)
    got = _python(_cli(KERNEL), tmp_path, CXX=str(cxx))
    assert got is not None
    code, out, err = got
    assert "Traceback" not in err, err[-800:]
    assert code in (1, 2)


def test_build_output_not_utf8_is_a_compile_failure(tmp_path):
    cxx = _script(tmp_path / "bin", "g++", _BYTES_BUILD)
    got = _python(_cli(KERNEL), tmp_path, CXX=str(cxx))
    assert got is not None
    code, out, err = got
    assert "Traceback" not in err, err[-800:]
    assert code == 1
    emulate = json.loads(out)["emulate"]
    assert emulate["ok"] is False and "g++ failed" in emulate["error"]
    assert "bad bytes" in emulate["log"]


def test_emulate_measurer_records_a_compiler_that_prints_bytes(tmp_path):
    cxx = _script(tmp_path / "bin", "g++", _BYTES_BUILD)
    code = textwrap.dedent("""\
        from iobound.layer import ConvLayer
        from search.measure.emulate import EmulateMeasurer
        layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
        (rec,) = EmulateMeasurer(layer).measure([dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)])
        print(rec.status.value)
        """)
    got = _python(code, tmp_path, CXX=str(cxx))
    assert got is not None
    code, out, err = got
    assert "Traceback" not in err, err[-800:]
    assert out.split() == ["compile_error"]


def test_nvcc_output_not_utf8_is_a_compile_error(tmp_path):
    nvcc = _script(tmp_path / "nvbin", "nvcc", _BYTES_NVCC)
    code = textwrap.dedent(f"""\
        from kernels import nvcc as nv
        res = nv.compile_cubin("int k;", "sm_80", nvcc={str(nvcc)!r}, timeout=20)
        print(res.status.value)
        """)
    got = _python(code, tmp_path)
    assert got is not None
    code, out, err = got
    assert "Traceback" not in err, err[-800:]
    assert out.split() == ["compile_error"]


def test_cxx_hanging_on_version_does_not_hang_kernel_emulate(tmp_path):
    """One line naming the compiler, exit 2 (the toolchain is unusable), within seconds."""
    cxx = _script(tmp_path / "bin", "g++", _HANG_VERSION)
    got = _python(_cli(KERNEL, VERSION_TIMEOUT_S=1.0), tmp_path, timeout=20, CXX=str(cxx))
    assert got is not None, "iobound kernel --emulate hung on `$CXX --version`"
    code, out, err = got
    assert code == 2 and "Traceback" not in err and str(cxx) in err, err[-800:]


def test_cxx_hanging_while_precompiling_keeps_the_build_timeout(tmp_path):
    cxx = _script(tmp_path / "bin", "g++", _HANG_PCH)
    code = textwrap.dedent("""\
        import time
        import kernels.emulator as e
        start = time.monotonic()
        try:
            e.build_emulator("int k;", timeout=1.0)
        except e.EmulatorBuildError as exc:
            print("timeout" if "timed out" in str(exc) else "failed", time.monotonic() - start)
        """)
    got = _python(code, tmp_path, timeout=20, CXX=str(cxx))
    assert got is not None, "build_emulator(timeout=1) hung precompiling cuda_emu.h"
    rc, out, err = got
    assert "Traceback" not in err, err[-800:]
    what, seconds = out.split()
    assert what == "timeout" and float(seconds) < 10
    leftovers = [p.name for p in (tmp_path / "cache" / "emu").iterdir()
                 if p.name.startswith(".build-")]
    assert leftovers == []


def test_emulator_build_timeout_kills_what_the_compiler_started(tmp_path):
    """g++ killed at its timeout: its cc1plus (here: a child of the fake) goes too."""
    cxx = _script(tmp_path / "bin", "g++", _KID_CXX)
    code = textwrap.dedent("""\
        import kernels.emulator as e
        try:
            e.build_emulator("int k;", timeout=1.0)
        except e.EmulatorBuildError as exc:
            print(exc)
        """)
    got = _python(code, tmp_path, CXX=str(cxx))
    assert got is not None and "timed out" in got[1], got
    assert _kid_gone(tmp_path / "bin" / "kid.pid"), "the compiler's child outlived the timeout"


def test_nvcc_timeout_kills_what_the_compiler_started(tmp_path):
    nvcc = _script(tmp_path / "nvbin", "nvcc", _KID_NVCC)
    code = textwrap.dedent(f"""\
        from kernels import nvcc as nv
        print(nv.compile_cubin("int k;", "sm_80", nvcc={str(nvcc)!r}, timeout=1.0).status.value)
        """)
    got = _python(code, tmp_path)
    assert got is not None and got[1].split() == ["timeout"], got
    assert _kid_gone(tmp_path / "nvbin" / "kid.pid"), "nvcc's child outlived the timeout"


# A file-size limit stands in for a full cache disk (writes fail with EFBIG, as with ENOSPC).
_FSIZE = textwrap.dedent("""\
    import resource, signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
    """)


def test_emulate_measurer_records_a_build_it_cannot_write(tmp_path):
    """The build's files cannot be written: a recorded failure, not an OSError out of
    ``measure`` (the measurer's rule: every configuration gets a record)."""
    code = textwrap.dedent("""\
        from iobound.layer import ConvLayer
        from search.measure.emulate import EmulateMeasurer
        layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
        m = EmulateMeasurer(layer)
        """) + _FSIZE + textwrap.dedent("""\
        (rec,) = m.measure([dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)])
        print(rec.status.value)
        """)
    got = _python(code, tmp_path, PYTHONDONTWRITEBYTECODE="1")
    assert got is not None
    rc, out, err = got
    assert "Traceback" not in err, err[-800:]
    assert out.split() == ["compile_error"]


def test_kernel_emit_on_a_full_disk_is_exit_1_naming_the_file(tmp_path):
    """README: a result that cannot be written (a full disk) is exit 1, one line saying
    what and where; it was exit 2 (bad input) with only "File too large"."""
    emit = tmp_path / "k.cu"
    argv = [*KERNEL, "--emit", str(emit)]
    code = _FSIZE + f"import sys\nfrom search.cli.main import main\nsys.exit(main({argv!r}))\n"
    got = _python(code, tmp_path, PYTHONDONTWRITEBYTECODE="1")
    assert got is not None
    rc, out, err = got
    assert "Traceback" not in err, err[-800:]
    assert rc == 1 and len(err.strip().splitlines()) == 1 and str(emit) in err, (rc, err)


def test_sigterm_during_a_build_ends_what_the_compiler_started(tmp_path):
    """README: a build stopped by SIGTERM leaves nothing behind. Only the driver was
    killed; its child (cc1plus) ran on as an orphan."""
    cxx = _script(tmp_path / "bin", "g++", _KID_CXX)
    pid_file = tmp_path / "bin" / "kid.pid"
    proc = subprocess.Popen([sys.executable, "-c", _cli(KERNEL)], cwd=ROOT,
                            start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "CXX": str(cxx),
                                 "IOBOUND_CACHE": str(tmp_path / "cache")})
    try:
        deadline = time.monotonic() + 20
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline and proc.poll() is None, "the build never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)  # the CLI process alone, as `kill PID` does
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130 and "Traceback" not in err, (proc.returncode, err[-800:])
    assert _kid_gone(pid_file), "the compiler's child outlived the interrupted build"
    assert [p.name for p in (tmp_path / "cache" / "emu").iterdir()
            if p.name.startswith(".build-")] == []
