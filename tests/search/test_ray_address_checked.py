"""--ray-address is checked: a malformed address (a port out of 1-65535, no port) is one
line and exit 2 before any work, and one where nothing listens fails in one line at once;
both were passed to ray.init, which kept trying for over 300 s. Loopback only."""

from __future__ import annotations

import socket
import time

import pytest

from search.cli.main import main

TUNE = ["tune", "--layer", "cin=8,hin=8,cout=16,kh=3,pad=1", "--measure", "model",
        "--budget", "2", "--no-verify", "--executor", "ray"]


@pytest.mark.parametrize("address, says", [
    ("127.0.0.1:99999", "the port must be from 1 to 65535"),
    ("127.0.0.1:0", "the port must be from 1 to 65535"),
    ("127.0.0.1", "give HOST:PORT, ray://HOST:PORT or 'auto'"),
    ("local", "would start a new Ray here"),
])
def test_a_malformed_address_is_one_line_and_exit_2(address, says, capsys):
    assert main([*TUNE, "--ray-address", address]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--ray-address '{address}'" in err and says in err, err


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


def _keep_loopback(monkeypatch):
    """Ray as the private one runs it: a loopback host stays loopback (by default Ray dials
    this machine's address for it, and tests send nothing off loopback)."""
    pytest.importorskip("ray")
    from ray._private import ray_constants
    monkeypatch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_address_where_nothing_listens_fails_at_once(scheme, monkeypatch):
    pytest.importorskip("ray")
    from iobound.errors import ToolchainError
    from search.executors import ray_cluster
    from search.executors.options import ExecutorOptions

    def never(**kwargs):
        raise AssertionError("ray.init was called for an address where nothing listens")
    monkeypatch.setattr(ray_cluster.import_ray(), "init", never)
    _keep_loopback(monkeypatch)
    address = f"{scheme}127.0.0.1:{_closed_port()}"
    start = time.monotonic()
    with pytest.raises(ToolchainError, match="could not connect to the Ray cluster at"):
        ray_cluster.connect(ExecutorOptions(executor="ray", ray_address=address))
    assert time.monotonic() - start < 5


def test_a_cluster_that_does_not_answer_is_named_with_the_timeout(monkeypatch):
    """A host that drops the connection attempt (simulated: no traffic leaves the machine)."""
    from iobound.errors import ToolchainError
    from search.executors import ray_cluster

    def silent(target, timeout):
        raise TimeoutError("timed out")
    monkeypatch.setattr(socket, "create_connection", silent)
    with pytest.raises(ToolchainError, match=r"'10\.0\.0\.5:6379': no answer within 10 s"):
        ray_cluster._check_reachable("10.0.0.5:6379")


def test_a_loopback_address_ray_rewrites_is_named_with_the_way_to_keep_it(monkeypatch):
    """Ray rewrites a loopback host to this machine's address (simulated on loopback): the
    check dials that one (it dialled the one given, which answered, and ray.init then hung
    for minutes), and the line names both and why a cluster on 127.0.0.1 only fails."""
    pytest.importorskip("ray")
    from ray._private import services

    from iobound.errors import ToolchainError
    from search.executors import ray_cluster
    closed = _closed_port()
    monkeypatch.setattr(services, "canonicalize_bootstrap_address",
                        lambda address: address.replace("127.0.0.1", "127.0.0.2"))
    with pytest.raises(ToolchainError, match="listening on 127.0.0.1 only cannot be reached") as info:
        ray_cluster._check_reachable(f"127.0.0.1:{closed}")
    assert f"at '127.0.0.1:{closed}' (Ray dials it as '127.0.0.2:{closed}')" in str(info.value)


def test_auto_with_no_cluster_is_one_line(monkeypatch, capsys):
    pytest.importorskip("ray")
    from ray._private import services

    def none_found(address):
        raise ConnectionError("Could not find any running Ray instance.")
    monkeypatch.setattr(services, "canonicalize_bootstrap_address", none_found)
    assert main([*TUNE, "--ray-address", "auto"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'auto': Could not find any running Ray instance" in err


def test_ctrl_c_inside_ray_init_shuts_down_what_it_started(monkeypatch):
    """A KeyboardInterrupt while ray.init starts Ray's processes shuts them down before it
    goes on (they were left orphaned for a minute), and stays a KeyboardInterrupt."""
    pytest.importorskip("ray")
    from search.executors import ray_cluster
    ray = ray_cluster.import_ray()
    calls = []

    def interrupted(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ray, "init", interrupted)
    monkeypatch.setattr(ray, "shutdown", lambda: calls.append("shutdown"))
    with pytest.raises(KeyboardInterrupt):
        ray_cluster._init(ray, "could not start a local Ray")
    assert calls == ["shutdown"]
