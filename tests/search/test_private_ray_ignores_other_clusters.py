"""README "Distributed": without ``--ray-address``, ``--executor ray`` starts "a private Ray
on this machine, bound to 127.0.0.1" (:func:`search.executors.ray_cluster.start_local_ray`,
also the tests' ``ray_session``), and no test sends traffic anywhere but loopback.

``ray.init()`` without an address does not start a new Ray when ``RAY_ADDRESS`` is set (a
Ray cluster node has it) or when ``$RAY_TMPDIR/ray/ray_current_cluster`` names the cluster
of an earlier ``ray start`` (left behind when that Ray was killed): it connects there. The
private Ray must be started whatever the environment says, and then every socket its
processes hold (listening or connected, TCP or UDP) is on loopback.

Each case runs in a subprocess of its own (its own Ray, its own environment).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed (pip install 'iobound[distributed]')")

REPO = Path(__file__).resolve().parents[2]

# Start the private Ray, run a task and an actor, then list the TCP/UDP sockets of every
# process under this one (gcs_server, raylet, agents, workers) from /proc.
SCRIPT = r"""
import ipaddress, json, os
from pathlib import Path
from search.executors.ray_cluster import start_local_ray
import ray

def descendants(root):
    kids = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = set(), [root]
    while todo:
        for c in kids.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out

def address(field):
    h, port = field.split(":")
    raw = bytes.fromhex(h)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words)), int(port, 16)

def sockets(pids):
    inodes = {}
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                try:
                    target = os.readlink(fd)
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes[target[8:-1]] = pid
        except OSError:
            continue
    rows = []
    for table in ("tcp", "tcp6", "udp", "udp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            f = line.split()
            if f[9] in inodes:
                rows.append([table, f[3], *address(f[1]), *address(f[2])])
    return rows

start_local_ray(1)

@ray.remote
def task(x):
    return x + 1

@ray.remote
class Actor:
    def ping(self):
        return os.getpid()

assert ray.get(task.remote(1)) == 2
actor = Actor.remote()
ray.get(actor.ping.remote())
nodes = sorted({n["NodeManagerAddress"] for n in ray.nodes()})
rows = sockets(descendants(os.getpid()) | {os.getpid()})
ray.shutdown()
print("RESULT " + json.dumps({"nodes": nodes, "sockets": rows}))
"""


def _loopback_or_unset(ip: str) -> bool:
    import ipaddress

    a = ipaddress.ip_address(ip)
    if a.version == 6 and a.ipv4_mapped is not None:
        a = a.ipv4_mapped
    return a.is_loopback


def _run_private_ray(env_extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_TMPDIR")}
    env.update(env_extra, PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, (
        f"the private Ray did not start (rc {proc.returncode}): {proc.stderr[-1500:]}")
    return json.loads(lines[-1][len("RESULT "):])


def _check_loopback_only(result: dict) -> None:
    assert result["nodes"] == ["127.0.0.1"], result["nodes"]
    listening = [r for r in result["sockets"] if r[0].startswith("tcp") and r[1] == "0A"]
    assert listening, "found no listening socket of the private Ray's processes"
    bad = []
    for table, state, local_ip, local_port, remote_ip, remote_port in result["sockets"]:
        if not _loopback_or_unset(local_ip):  # bound to 0.0.0.0, ::, or an interface
            bad.append((table, state, local_ip, local_port, remote_ip, remote_port))
        elif state != "0A" and table.startswith("tcp") and not _loopback_or_unset(remote_ip):
            bad.append((table, state, local_ip, local_port, remote_ip, remote_port))
    assert not bad, f"sockets of the private Ray off loopback: {bad}"


def test_private_ray_ignores_ray_address_in_environment():
    """RAY_ADDRESS names another cluster (nothing listens there: no traffic leaves the
    machine either way); the private Ray is started all the same, loopback only."""
    _check_loopback_only(_run_private_ray({"RAY_ADDRESS": "127.0.0.1:1"}))


def test_private_ray_ignores_the_cluster_of_an_earlier_ray_start():
    """A ``ray_current_cluster`` file (as ``ray start --head`` writes, and leaves behind
    when that Ray is killed) in Ray's temp folder: still a private, loopback Ray. The temp
    folder is the test's own (short: Ray's socket paths must fit in 107 bytes)."""
    tmp = tempfile.mkdtemp(prefix="rvr", dir="/tmp")
    try:
        (Path(tmp) / "ray").mkdir()
        (Path(tmp) / "ray" / "ray_current_cluster").write_text("127.0.0.1:1")
        _check_loopback_only(_run_private_ray({"RAY_TMPDIR": tmp}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
