"""A kernel that crashes the emulator ends its own launch, never the caller.

The emulator's bounds checks see faulty global accesses, not a wild pointer or an
abort; those killed the process that loaded the library: ``iobound kernel --emulate``
and the winner's check at the end of ``iobound tune`` died with exit 139. The launch
now runs in a child process (:mod:`kernels.emulator_child`) and its death by a signal is
an :class:`EmulatorRunError` naming the signal. Provoked with hand-written kernels, and
for the CLI with a $CXX that plants a NULL store in every kernel it builds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kernels.emulator import EmulatorRunError, emulate
from kernels.emulator_launch import COUNTERS, layout
from search.measure.base import Status
from tests.kernels.test_cache_leftovers import _script
from tests.kernels.test_compiler_hostile_env import KERNEL, ROOT, _alive, _cli, _python
from tests.kernels.test_emulator import _hand_kernel, _ones

_NULL_STORE = ('extern "C" void iobound_direct(const float* input, const float* weight, '
               'float* output) { *(volatile int*)nullptr = 1; }')
_ABORT = ('extern "C" void iobound_direct(const float* input, const float* weight, '
          'float* output) { if (threadIdx.x == 0) abort(); }')
_STORE_ALL = ('extern "C" void iobound_direct(const float* input, const float* weight, '
              'float* output) { STG(&output[threadIdx.x + TX * threadIdx.y], 2.0f); }')
# Builds every kernel.cu with a NULL store at the top of its emulator entry point.
_CRASHING_CXX = textwrap.dedent("""\
    #!/bin/sh
    for arg; do
      case "$arg" in *kernel.cu)
        sed -i 's/unsigned long long\\* counts) {/& *(volatile int*)0 = 1;/' "$arg";;
      esac
    done
    exec g++ "$@"
    """)
# Builds every kernel.cu with an endless loop at the top of its emulator entry point.
_LOOPING_CXX = _CRASHING_CXX.replace("*(volatile int*)0 = 1;", "for (volatile int i = 0;; ) (void)i;")
_LOOP = ('extern "C" void iobound_direct(const float* input, const float* weight, '
         'float* output) { for (volatile int i = 0;; ) (void)i; }')
CONFIG = dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)


def _with_crashing_cxx(code: str, tmp_path, cxx: str = _CRASHING_CXX) -> tuple[int, str]:
    """(exit code, stdout) of ``code`` run in a fresh interpreter whose kernels all crash
    (or, ``_LOOPING_CXX``, never end); it must end in time and without a traceback."""
    got = _python(code, tmp_path, CXX=str(_script(tmp_path / "bin", "g++", cxx)))
    assert got is not None, "it did not end"
    rc, out, err = got
    assert "Traceback" not in err, (rc, err[-800:])
    return rc, out


@pytest.mark.parametrize("body, signal_name", [(_NULL_STORE, "SIGSEGV"), (_ABORT, "SIGABRT")])
def test_a_crashing_kernel_is_a_run_error_naming_the_signal(body, signal_name):
    with pytest.raises(EmulatorRunError, match=signal_name):
        emulate(_hand_kernel(body), *_ones())
    run = emulate(_hand_kernel(_STORE_ALL), *_ones())  # and this process emulates on
    assert run.global_stores == 4 and (run.output.reshape(-1)[:4] == 2.0).all()


def test_the_measurer_records_a_crash_and_measures_the_next_config(tmp_path):
    """In the caller's own process (no executor worker to die instead): runtime_error."""
    code = textwrap.dedent(f"""\
        from iobound.layer import ConvLayer
        from search.measure.emulate import EmulateMeasurer
        layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
        for rec in EmulateMeasurer(layer).measure([{CONFIG!r}, {CONFIG | dict(z=1, tz=1)!r}]):
            print(rec.status.value, rec.error)
        """)
    rc, out = _with_crashing_cxx(code, tmp_path)
    assert rc == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == [Status.RUNTIME_ERROR.value] * 2
    assert all("SIGSEGV" in line for line in lines)


def test_kernel_emulate_of_a_crashing_kernel_is_exit_1_with_the_signal(tmp_path):
    code, out = _with_crashing_cxx(_cli(KERNEL), tmp_path)
    assert code == 1
    record = json.loads(out)["emulate"]
    assert record["ok"] is False and "SIGSEGV" in record["error"]


def test_tune_reports_a_winner_check_that_crashed_and_ends(tmp_path):
    argv = ["tune", "--layer", "cin=2,hin=6,cout=2,kh=3,pad=1", "--measure", "model",
            "--budget", "4", "--out-dir", str(tmp_path / "out"), "--json"]
    code, out = _with_crashing_cxx(_cli(argv), tmp_path)
    assert code == 0
    check = json.loads(out)["emulator_check"]
    assert check["checked"] is False and "SIGSEGV" in check["reason"]


@given(st.integers(0, 50), st.integers(0, 50), st.integers(0, 50))
def test_layout_keeps_every_region_apart_and_the_counters_aligned(nx, nw, nout):
    at = layout(nx, nw, nout)
    assert at.x + 4 * nx == at.w and at.w + 4 * nw == at.out
    assert at.out + 4 * nout <= at.counts and at.counts % 8 == 0
    assert at.counts + 8 * COUNTERS <= at.status < at.size


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31))
def test_the_child_hands_back_exactly_what_a_kernel_stores(seed):
    """Inputs go in and outputs come back bit for bit: a copy kernel returns its input."""
    body = ('extern "C" void iobound_direct(const float* input, const float* weight, '
            'float* output) { int i = threadIdx.x + TX * threadIdx.y; '
            'STG(&output[i], LDG(&input[i]) + LDG(&weight[i % 4])); }')
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    w = rng.standard_normal((2, 2, 1, 1)).astype(np.float32)
    run = emulate(_hand_kernel(body), x, w)
    assert np.array_equal(run.output.reshape(-1)[:4], x.reshape(-1)[:4] + w.reshape(-1)[:4])
    assert run.global_loads == 8 and run.global_stores == 4
    assert np.isnan(run.output.reshape(-1)[4:]).all()


def test_no_room_for_the_launch_file_is_a_run_error_not_a_bus_error(tmp_path):
    """The shared file is reserved before it is mapped: a sparse one on a full disk (here a
    file-size limit) killed the caller with SIGBUS at the first page it wrote."""
    code = textwrap.dedent("""\
        import resource, signal
        from kernels.emulator import EmulatorRunError, emulate
        from tests.kernels.test_emulator import CFG, LAYER, _ones
        from kernels.generate import generate
        src = generate(LAYER, CFG)
        emulate(src, *_ones())  # built while files may still grow
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
        try:
            emulate(src, *_ones())
        except EmulatorRunError as exc:
            print(exc)
        """)
    got = _python(code, tmp_path)
    assert got is not None
    rc, out, err = got
    assert rc == 0 and "Traceback" not in err, (rc, err[-800:])
    assert "cannot make the launch's" in out and "File too large" in out, out


def test_a_launcher_gone_from_the_cache_is_a_run_error(tmp_path, monkeypatch):
    """Removed (another process emptied the cache) between its build and its run."""
    import kernels.emulator as emu

    monkeypatch.setattr(emu, "build_launcher", lambda cache_root=None: tmp_path / "gone")
    with pytest.raises(EmulatorRunError, match="cannot run the launcher .*gone"):
        emulate(_hand_kernel(_STORE_ALL), *_ones())


def test_a_launch_past_its_timeout_is_stopped_and_a_timed_out_run_error():
    start = time.monotonic()
    with pytest.raises(EmulatorRunError, match="ran past 1 s") as info:
        emulate(_hand_kernel(_LOOP), *_ones(), timeout=1.0)
    assert info.value.timed_out and time.monotonic() - start < 20
    assert emulate(_hand_kernel(_STORE_ALL), *_ones(), timeout=30.0).global_stores == 4


def test_kernel_emulate_and_the_winner_check_stop_a_kernel_that_never_ends(tmp_path):
    """Both had no limit: an endless kernel hung ``kernel --emulate`` and the end of
    ``tune`` (the measurer's launches have the executor's --timeout instead)."""
    code, out = _with_crashing_cxx(_cli(KERNEL, LAUNCH_TIMEOUT_S=1.0), tmp_path, _LOOPING_CXX)
    assert code == 1 and "ran past 1 s" in json.loads(out)["emulate"]["error"]
    argv = ["tune", "--layer", "cin=2,hin=6,cout=2,kh=3,pad=1", "--measure", "model",
            "--budget", "4", "--out-dir", str(tmp_path / "out"), "--json"]
    code, out = _with_crashing_cxx(_cli(argv, LAUNCH_TIMEOUT_S=1.0), tmp_path, _LOOPING_CXX)
    check = json.loads(out)["emulator_check"]
    assert code == 0 and check["checked"] is False and "ran past 1 s" in check["reason"]


def test_the_launch_timeout_is_the_executors_default_run_time():
    from kernels.emulator import LAUNCH_TIMEOUT_S
    from search.executors.options import DEFAULT_TIMEOUT_S
    assert LAUNCH_TIMEOUT_S == DEFAULT_TIMEOUT_S


def _launchers_of(pid: int) -> list[int]:
    """The emulator launchers ``pid`` runs (its children whose program is a .launcher)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                program = fh.read().split(b"\0")[0]
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid and program.endswith(b".launcher"):
            found.append(int(entry))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_caller_killed_mid_launch_leaves_no_launcher_running(tmp_path):
    """A worker killed with SIGKILL alone (as Ray kills an actor past its timeout) took
    nothing with it: its launcher ran an endless kernel on, an orphan, for ever."""
    code = textwrap.dedent("""\
        from kernels.emulator import emulate
        from tests.kernels.test_emulator_crash import _LOOP, _hand_kernel, _ones
        emulate(_hand_kernel(_LOOP), *_ones())
        """)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        while not (launchers := _launchers_of(proc.pid)):
            assert proc.poll() is None and time.monotonic() < deadline, "no launch started"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in launchers) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in launchers if _alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "the launcher outlived its caller"
