"""README "Hostile input": "A build stopped by --timeout, Ctrl-C or SIGTERM leaves nothing
behind: neither its scratch folder in the cache nor the compiler's temporary files."

The Ray executor cancels a build past its timeout, and its ``close`` sweeps the cache; but
inside :func:`search.executors.ray_cluster.ray_session` (a network's layers share one Ray)
the cancelled task's worker process is still alive at that sweep, holding its scratch
folder's lock, and is only gone once the session shuts Ray down. The session then has to
sweep again. Here Ray's shutdown is that of a stand-in whose one "worker" is a real
process holding a real ``.build-*`` folder's lock; reference: the cache's entries after.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from search.executors import ray_cluster
from search.executors.options import ExecutorOptions

HOLDER = ("import fcntl, os, sys, time\n"
          "fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)\n"
          "fcntl.flock(fd, fcntl.LOCK_EX)\n"
          "print('held', flush=True)\n"
          "time.sleep(600)\n")


class _Ray:
    """Ray as the session sees it: shutting it down kills its worker processes."""

    def __init__(self, workers):
        self.workers = workers

    def shutdown(self):
        for proc in self.workers:
            proc.kill()
            proc.wait()


def test_a_session_sweeps_the_scratch_folder_a_cancelled_build_held(tmp_path, monkeypatch):
    monkeypatch.setenv("IOBOUND_CACHE", str(tmp_path / "cache"))
    emu = tmp_path / "cache" / "emu"
    emu.mkdir(parents=True)
    scratch = tempfile.mkdtemp(prefix=".build-", dir=emu)
    worker = subprocess.Popen([sys.executable, "-c", HOLDER, scratch], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert worker.stdout.readline().strip() == "held"
        fake = _Ray([worker])
        monkeypatch.setattr(ray_cluster, "connect", lambda options: True)  # started here
        monkeypatch.setattr(ray_cluster, "import_ray", lambda: fake)
        with ray_cluster.ray_session(ExecutorOptions(executor="ray", workers=1)):
            # an executor inside timed the build out and closed: its sweep finds the
            # folder still held by the worker Ray keeps, and must leave it
            from search.executors.local import _remove_orphans
            _remove_orphans()
            assert sorted(p.name for p in emu.iterdir()) == [Path(scratch).name]
    finally:
        worker.kill()
        worker.wait()
        worker.stdout.close()
    assert sorted(p.name for p in emu.iterdir()) == []
