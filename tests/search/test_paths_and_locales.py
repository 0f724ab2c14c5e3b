"""Unusual paths and locales (review 17): non-ASCII text under an ASCII stdout, names near
NAME_MAX, shell-special characters in the compile cache path, a Ray that cannot start."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from search.cli.main import main

REPO = Path(__file__).resolve().parents[2]
LAYER = "cin=4,hin=6,cout=4,kh=3"


def _non_ascii_db(tmp_path) -> str:
    """A tuning database whose device and workload names are not ASCII (as a Kernel Tuner
    cache file may name them)."""
    from search.kt_cache import KtCache
    from search.kt_cache_write import write_cache

    cache = write_cache(tmp_path / "k.json", KtCache(
        tune_params={"x": [1, 2]}, entries=[{"x": 1, "time": 2.0}, {"x": 2, "time": 1.5}],
        device_name="Tesla é", kernel_name="conv中"))
    db = str(tmp_path / "t.db")
    assert main(["history", "import", str(cache), "--db", db, "--json"]) == 0
    return db


@pytest.mark.parametrize("action", ["list", "best"])
def test_non_ascii_names_print_under_an_ascii_stdout(tmp_path, monkeypatch, capsys, action):
    """LANG=C (or PYTHONIOENCODING=ascii) makes stdout ASCII: a device or workload name
    read from a file is still printed (escaped), exit 0, not a UnicodeEncodeError traceback."""
    db = _non_ascii_db(tmp_path)
    capsys.readouterr()
    raw = io.BytesIO()
    ascii_out = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", ascii_out)
    code = main(["history", action, "--db", db])
    ascii_out.flush()
    text = raw.getvalue().decode("ascii")
    assert code == 0
    assert "Tesla" in text and "conv" in text


def test_c_locale_history_list_is_no_traceback(tmp_path):
    """The same in a real C locale without UTF-8 mode (PEP 540 turned off)."""
    db = _non_ascii_db(tmp_path)
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0",
           "PYTHONPATH": str(REPO)}
    env.pop("PYTHONIOENCODING", None)
    proc = subprocess.run([sys.executable, "-m", "search.cli.main", "history", "list",
                           "--db", db], capture_output=True, env=env, timeout=120)
    assert "Traceback" not in proc.stderr.decode(errors="replace"), proc.stderr[-600:]
    assert proc.returncode == 0 and b"Tesla" in proc.stdout


def test_write_atomic_takes_a_long_multibyte_name(tmp_path):
    """83 CJK characters + ".cu" are 252 bytes, a name the file system takes: the file is
    written (the temporary beside it must fit NAME_MAX too, counted in bytes)."""
    from search.outputs import write_atomic

    path = tmp_path / ("中" * 83 + ".cu")
    assert len(os.fsencode(path.name)) <= 255
    path.write_bytes(b"")  # the system takes the name
    path.unlink()
    write_atomic(path, b"kernel")
    assert path.read_bytes() == b"kernel"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_kernel_emit_long_multibyte_name(tmp_path, capsys):
    """kernel --emit to such a name: written, exit 0 (was exit 1, 'File name too long')."""
    path = tmp_path / ("é" * 120 + ".cu")  # 243 bytes
    code = main(["kernel", "--layer", "cin=2,hin=6,cout=2,kh=3,pad=1",
                 "--config", "x=3,y=3,z=2,alpha=1", "--emit", str(path)])
    assert code == 0, capsys.readouterr().err
    assert "__global__" in path.read_text()


def test_history_name_without_room_for_the_journal_is_refused_at_start(tmp_path, capsys):
    """A --history name SQLite cannot put its -journal beside (250 + 3 bytes: fine for the
    file itself) is refused before tuning, one line, exit 2; not at the end with the
    measurements lost and an empty database left behind."""
    db = tmp_path / ("d" * 250 + ".db")
    code = main(["tune", "--layer", LAYER, "--measure", "model", "--budget", "4",
                 "--no-verify", "--out-dir", str(tmp_path / "k"), "--history", str(db)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "--history" in err
    assert not db.exists()


@pytest.mark.nvcc
def test_nvcc_builds_in_a_cache_path_with_shell_characters(tmp_path):
    """nvcc runs its stages through sh: a cache folder whose path holds $ or a double
    quote must not break every compile (it came back compile_error, 'sh: Syntax error')."""
    from kernels.nvcc import compile_cubin
    from kernels.status import Status

    root = tmp_path / 'a$HOME"b'
    code = "extern \"C\" __global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\n"
    res = compile_cubin(code, "sm_80", cache_root=root)
    assert res.status == Status.OK, res.log[-400:]


def test_ray_that_cannot_start_is_one_line(monkeypatch):
    """Ray's own failure to start (a TMPDIR with non-ASCII letters: UnicodeEncodeError in
    its core worker; or one too long for its sockets: 'AF_UNIX path length cannot exceed
    107 bytes') is an error of ours (one line from the CLI), not a traceback."""
    ray = pytest.importorskip("ray")
    from iobound.errors import IoboundError
    from search.executors.ray_cluster import start_local_ray

    def refuse(*args, **kwargs):
        raise UnicodeEncodeError("ascii", "/tmp/é/ray", 5, 6, "ordinal not in range(128)")

    monkeypatch.setattr(ray, "init", refuse)
    with pytest.raises(IoboundError, match="Ray"):
        start_local_ray(1)


def test_ray_cluster_address_that_cannot_be_used_is_one_line(monkeypatch):
    """--ray-address ray://HOST:PORT (documented) where Ray's client package is missing:
    Ray raises ValueError('Ray Client requires pip package `ray[client]`'); that is an
    error of ours naming the address (one line), not a traceback."""
    ray = pytest.importorskip("ray")
    from iobound.errors import IoboundError
    from search.executors.options import ExecutorOptions
    from search.executors.ray_cluster import connect

    def refuse(*args, **kwargs):
        raise ValueError("Ray Client requires pip package `ray[client]`.")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    with pytest.raises(IoboundError, match="ray://127.0.0.1:1"):
        connect(ExecutorOptions(executor="ray", ray_address="ray://127.0.0.1:1"))


def test_cache_root_with_a_tilde_of_no_user_is_no_traceback(tmp_path, monkeypatch, capsys, caplog):
    """IOBOUND_CACHE='~nosuchuser/c' (or no $HOME and no passwd entry): ~ cannot be
    expanded; the cache is unusable like one that cannot be created (a private folder,
    a warning), not a RuntimeError traceback (kernel) or every emulate measurement
    failing (tune)."""
    monkeypatch.setenv("IOBOUND_CACHE", "~iobound-no-such-user-r17/cache")
    warning = "cannot find the home folder of the cache root"
    code = main(["kernel", "--layer", "cin=2,hin=6,cout=2,kh=3,pad=1",
                 "--config", "x=3,y=3,z=2,alpha=1", "--json"])
    cap = capsys.readouterr()
    assert code == 0 and json.loads(cap.out)["config"], cap.err
    assert warning in caplog.text   # logged (the CLI's handler writes it to stderr)
    code = main(["tune", "--layer", "cin=2,hin=6,cout=2,kh=3,pad=1", "--measure", "emulate",
                 "--budget", "1", "--no-verify", "--out-dir", str(tmp_path), "--json"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    assert json.loads(cap.out)["best"] is not None   # the emulated measurement succeeded


def test_kernel_source_path_printed_exists_after_the_run(tmp_path):
    """Without --emit the source goes to the cache folder; when the cache cannot be used
    (IOBOUND_CACHE names a file) the path printed must still exist once iobound exits
    (it named a private folder removed at exit)."""
    import json

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    env = {**os.environ, "IOBOUND_CACHE": str(blocker), "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "search.cli.main", "kernel", "--layer",
                           "cin=2,hin=6,cout=2,kh=3,pad=1", "--config", "x=3,y=3,z=2,alpha=1",
                           "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-600:]
    source = Path(json.loads(proc.stdout)["source_path"])
    assert source.is_file() and "__global__" in source.read_text()


def test_import_a_file_whose_name_is_not_utf8(tmp_path, capsys):
    """A file name the file system encoding cannot decode (a Latin-1 'é' byte; under
    LANG=C any non-ASCII name) reaches Python with lone surrogates: importing it must store
    a name SQLite takes (was a UnicodeEncodeError traceback from the insert), and
    'remove --source' with the same name must find it."""
    from search.kt_cache import KtCache
    from search.kt_cache_write import write_cache

    path = Path(os.fsdecode(bytes(tmp_path) + b"/k\xe9.json"))
    write_cache(path, KtCache(tune_params={"x": [1, 2]}, entries=[{"x": 1, "time": 2.0}],
                              device_name="v100", kernel_name="k"))
    db = str(tmp_path / "t.db")
    assert main(["history", "import", str(path), "--db", db, "--json"]) == 0, \
        capsys.readouterr().err
    assert main(["history", "remove", "--db", db, "--source", str(path), "--json"]) == 0
    assert main(["history", "list", "--db", db]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith("empty")


def test_search_quality_benchmark_under_the_c_locale(tmp_path):
    """benchmarks/search_quality.py under LANG=C without UTF-8 mode: its markdown table
    (mean ±se) is written whole and printed, exit 0; it was a UnicodeEncodeError
    traceback after every run was done, leaving an empty search_quality.md."""
    from search.kt_cache import KtCache
    from search.kt_cache_write import write_cache

    space = write_cache(tmp_path / "sp.json", KtCache(
        tune_params={"x": [1, 2, 3, 4]}, entries=[{"x": x, "time": 1.0 + x} for x in (1, 2, 3, 4)],
        device_name="A100", kernel_name="k"))
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONPATH": str(REPO)}
    env.pop("PYTHONIOENCODING", None)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "search_quality.py"),
                           "--spaces", str(space), "--budgets", "2", "--seeds", "1",
                           "--strategies", "random", "--out", str(out), "--jobs", "1",
                           "--no-plot"], capture_output=True, env=env, timeout=300)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr[-600:]
    assert "±" in (out / "search_quality.md").read_text(encoding="utf-8")


def test_replay_of_a_file_whose_name_is_not_utf8_stores_its_history(tmp_path, capsys):
    """tune --measure replay:FILE --history DB with a file name the locale cannot decode
    (here a Latin-1 byte; under LANG=C any non-ASCII name): the run's measurements are
    stored (it was a UnicodeEncodeError traceback at the end, after the whole run:
    the replay toolchain names the file)."""
    from search.kt_cache import KtCache
    from search.kt_cache_write import write_cache

    space = Path(os.fsdecode(bytes(tmp_path) + b"/sp\xe9.json"))
    write_cache(space, KtCache(tune_params={"x": [1, 2, 3, 4]},
                               entries=[{"x": x, "time": 1.0 + x} for x in (1, 2, 3, 4)],
                               device_name="A100", kernel_name="k"))
    db = str(tmp_path / "h.db")
    code = main(["tune", "--measure", f"replay:{space}", "--budget", "4",
                 "--history", db, "--json"])
    assert code == 0, capsys.readouterr().err[-600:]
    capsys.readouterr()
    assert main(["history", "list", "--db", db, "--json"]) == 0
    assert '"measurements": 4' in capsys.readouterr().out


def test_a_full_stdout_is_no_bad_input(monkeypatch, capsys):
    """stdout on a full disk (`iobound bound ... > /dev/full`): one error line and exit 1
    (the README: 1 for a result that could not be written), not 2, which says bad input."""
    import errno

    class Full(io.TextIOBase):
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sys, "stdout", Full())
    code = main(["bound", "--layer", "alexnet.conv1", "--fast-memory", "48KiB"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert len(err.strip().splitlines()) == 1 and "No space left" in err
