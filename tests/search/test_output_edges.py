"""Output paths and signals at their edges (search/outputs.py, search/cli/main.py), found
by a review.

References: README "Hostile input" and search/outputs' module doc: one file named by two
options is refused under any spelling (a trailing "/" or "/." wrote h.db as the exported
cache: the tuning database was lost); a path that cannot be written is refused at the start,
never found at the end (a file in a folder the user cannot write); outputs are written
through symbolic links (a link to a file not made yet was refused) and into devices and
pipes (a FIFO or a piped /dev/stdout was refused); SIGTERM exits 130 at any phase (before
the run started it killed the process).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from iobound.errors import InvalidInputError
from search.outputs import check_distinct_files, check_output_file, write_atomic

ROOT = str(Path(__file__).resolve().parents[2])


IOBOUND = os.path.join(os.path.dirname(sys.executable), "iobound")


@pytest.mark.parametrize("suffix", ["/", "/."])
def test_same_existing_file_with_trailing_slash_is_refused(tmp_path, suffix):
    f = tmp_path / "tuning.db"
    f.write_bytes(b"precious")
    spelled = str(f) + suffix
    # the spelled path is accepted as an output and is written as the very same file...
    assert check_output_file("--export-cache", spelled) == f
    # ... so naming it with another flag must be refused
    with pytest.raises(InvalidInputError, match="also given as"):
        check_distinct_files([("--history", str(f)), ("--export-cache", spelled)])


def test_cli_export_cache_does_not_overwrite_history_db(tmp_path):
    """End to end: --export-cache DB/ replaced the tuning database with a JSON cache."""
    db = tmp_path / "h.db"
    run = [IOBOUND, "tune", "--layer", "alexnet.conv2", "--measure", "model", "--budget", "4",
           "--no-verify", "--out-dir", str(tmp_path / "k"), "--history", str(db)]
    assert subprocess.run(run, capture_output=True, cwd=tmp_path).returncode == 0
    r = subprocess.run(run + ["--export-cache", str(db) + "/"], capture_output=True,
                       cwd=tmp_path, text=True)
    con = sqlite3.connect(db)
    try:
        con.execute("SELECT count(*) FROM measurements").fetchone()
        ok_db = True
    except sqlite3.DatabaseError:
        ok_db = False
    finally:
        con.close()
    assert r.returncode == 2 and ok_db, (r.returncode, r.stderr, db.read_bytes()[:60])


def test_link_to_a_file_still_to_be_created_is_accepted(tmp_path):
    (tmp_path / "t").mkdir()
    link = tmp_path / "link.json"
    os.symlink("t/new.json", link)
    write_atomic(link, b"x")                         # the write itself works through the link...
    assert (tmp_path / "t" / "new.json").read_bytes() == b"x"
    (tmp_path / "t" / "new.json").unlink()
    assert check_output_file("--export-cache", link) == link   # and the up-front check takes it
    assert not (tmp_path / "t" / "new.json").exists()           # leaving nothing behind


IOBOUND = os.path.join(os.path.dirname(sys.executable), "iobound")
TUNE = ["tune", "--layer", "alexnet.conv2", "--measure", "model", "--budget", "3", "--no-verify"]


def test_tune_export_cache_into_piped_stdout(tmp_path):
    r = subprocess.run([IOBOUND, *TUNE, "--out-dir", str(tmp_path), "--export-cache", "/dev/stdout"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert '"cache"' in r.stdout


def test_check_output_file_accepts_a_pipe(tmp_path):
    from search.outputs import check_output_file
    import threading
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # a reader, so that opening the pipe for writing cannot block the test forever
    t = threading.Thread(target=lambda: fifo.read_bytes(), daemon=True)
    t.start()
    try:
        check_output_file("--export-cache", fifo)
    finally:
        with open(fifo, "wb"):
            pass
        t.join(5)


CHILD = r"""
import os, sys
from iobound.errors import InvalidInputError
from search.outputs import check_output_file, write_atomic
path = sys.argv[1]
os.setgid(65534); os.setuid(65534)
try:
    check_output_file("--export-cache", path)
except InvalidInputError:
    print("refused at start"); sys.exit(0)
try:
    write_atomic(path, b"new")
except OSError as exc:
    print("accepted at start, failed at the end:", exc); sys.exit(1)
print("written"); sys.exit(0)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_existing_file_in_unwritable_folder_is_refused_up_front():
    import pathlib, shutil, tempfile
    top = pathlib.Path(tempfile.mkdtemp(dir="/tmp"))  # pytest's tmp_path is under a 0700 folder
    folder = top / "shared"
    folder.mkdir()
    os.chmod(top, 0o755)
    os.chmod(folder, 0o755)          # the folder: not writable by uid 65534
    f = folder / "cache.json"
    f.write_text("old")
    os.chmod(f, 0o666)               # the file itself: writable by everyone
    r = subprocess.run([sys.executable, "-c", CHILD, str(f)], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)
    shutil.rmtree(top)
    assert r.returncode == 0 and r.stdout.strip() == "refused at start", r.stdout + r.stderr


CODE = r"""
import os, signal, sys, time
import search.cli.main as m
orig = m.build_parser
def slow_build():
    os.kill(os.getpid(), signal.%s)   # a signal while the subcommands are imported
    time.sleep(0.5)
    return orig()
m.build_parser = slow_build
sys.exit(m.main(["bound", "--layer", "alexnet.conv1", "--fast-memory", "12288"]))
"""


def run(sig):
    return subprocess.run([sys.executable, "-c", CODE % sig], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def test_sigint_during_startup_is_130():  # passes: for contrast
    r = run("SIGINT")
    assert r.returncode == 130 and "interrupted" in r.stderr


def test_sigterm_during_startup_is_130():
    r = run("SIGTERM")
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert "interrupted" in r.stderr


@pytest.mark.skipif(not os.path.isfile("/proc/self/status"), reason="needs Linux's /proc")
def test_a_file_whose_folder_takes_no_new_file_is_said_of_the_folder(tmp_path):
    """write_atomic to /proc/self/status (a file in a folder where nothing can be created)
    said 'No such file or directory' of a file that exists; the error now names the folder
    and keeps the system's errno (a full disk stays an exit 1, a refused folder an exit 2)."""
    with pytest.raises(OSError) as info:
        write_atomic("/proc/self/status", b"x")
    assert info.value.errno is not None and "'/proc/self'" in info.value.strerror
    assert "no file can be created in its folder" in info.value.strerror
