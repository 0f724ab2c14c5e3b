"""``--executor ray --workers N`` without ``--ray-address`` starts a private Ray on this
machine whose every worker is a process here (one run actor per worker; README "Measuring
on many workers"): a huge N must be refused like the local executor's, one line and exit 2
before anything starts (README "Hostile input": "--workers past four local processes per
core is refused"). It was accepted, and the run went on to start a Ray with N CPUs and
create N actors (N processes) on this machine.
"""

from __future__ import annotations

import pytest

from search.cli.main import main


@pytest.mark.parametrize("workers", [10 ** 6, 10 ** 30])
def test_huge_workers_for_a_private_ray_are_refused_before_ray_starts(workers, capsys, tmp_path,
                                                                      monkeypatch):
    from search.executors import ray_cluster, ray_executor

    def no_ray(*args, **kwargs):
        raise AssertionError(f"--workers {workers} reached Ray: it would start {workers} "
                             "worker processes on this machine")

    monkeypatch.setattr(ray_executor, "connect", no_ray)
    monkeypatch.setattr(ray_cluster, "start_local_ray", no_ray)
    rc = main(["tune", "--layer", "resnet50.conv3_1", "--measure", "model", "--executor", "ray",
               "--workers", str(workers), "--budget", "2", "--strategy", "random", "--no-verify",
               "--out-dir", str(tmp_path / "k")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith("iobound tune: error: --workers"), err
