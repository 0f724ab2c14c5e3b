"""Whole networks in parallel: several layers tuned at once through one pool of workers.

With the deterministic stand-in measurer of :mod:`network_standin` (its builds sleep and
leave markers: layer, configuration, worker pid, start and end): the layers' results do
not depend on the concurrency, the layers really are measured at the same time on one
pool, an interrupted network run keeps every logged measurement and ``resume`` measures
only what is missing; and through the CLI, the network table JSON and its checks.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

import network_standin
from iobound.layer import ConvLayer
from network_standin import StandInMeasurer, markers, standin_time
from search.executors import ExecutorOptions
from search.interrupts import Interrupted
from search.records import read_log
from search.session import Builders, TuneSettings, tune_layers

LAYERS = [ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=c, k_h=3, k_w=3, padding=1,
                    name=f"net.l{c}") for c in (16, 32, 48)]
BUDGET = 8


#: Test helpers the Ray workers get by value (they cannot import tests/): see conftest.ray_session.
RAY_BY_VALUE = (network_standin,)


def _tune(folder: Path, tmp: Path, executor=None, delay=0.05, **settings):
    folder.mkdir(exist_ok=True)
    builders = Builders(measurer=lambda kind, layer, device, alg: StandInMeasurer(layer, folder, delay))
    settings = TuneSettings(**{"strategy": "explorer", "budget": BUDGET, "seed": 5,
                               "executor": executor, **settings})
    return tune_layers(LAYERS, "v100", settings, out_dir=str(tmp / "k"), verify=False,
                       builders=builders)


def _trials(reports):
    return {r.layer.name: [(t.index, t.config, t.record.status, t.record.time_ms)
                           for t in r.result.trials] for r in reports}


def _logged(log: Path) -> list[tuple[str, float]]:
    return sorted((json.dumps(e.record.config, sort_keys=True), e.record.time_ms)
                  for e in read_log(log).entries)


@pytest.mark.parametrize("kind", ["local", "ray"])
def test_layers_at_once_give_the_sequential_results_on_one_pool(kind, tmp_path, request):
    """Three layers, three at once over 2 workers, give each layer exactly the trials and
    log records of the layers tuned one after another in process; the layers' builds
    interleave in time, and every build ran on one of the pool's 2 processes."""
    if kind == "ray":
        request.getfixturevalue("ray_session")
    seq = _tune(tmp_path / "seq", tmp_path, log=str(tmp_path / "seq.jsonl"))
    par = _tune(tmp_path / "par", tmp_path, delay=0.3, log=str(tmp_path / "par.jsonl"),
                executor=ExecutorOptions(executor=kind, workers=2, parallel_layers=3))
    assert _trials(par) == _trials(seq)
    for layer in LAYERS:
        assert _logged(tmp_path / f"par.{layer.name}.jsonl") == _logged(tmp_path / f"seq.{layer.name}.jsonl")
        assert len(_logged(tmp_path / f"par.{layer.name}.jsonl")) == BUDGET
    builds = markers(tmp_path / "par")
    assert len(builds) == BUDGET * len(LAYERS)
    span = {}
    for layer, _, _, start, end in builds:
        lo, hi = span.get(layer, (start, end))
        span[layer] = (min(lo, start), max(hi, end))
    # the layers' build spans interleave (in turn, each would end before the next starts);
    # single builds of two layers need not overlap: 2 workers may take a layer's batch pairwise
    assert any(a != b and span[a][0] < span[b][1] and span[b][0] < span[a][1]
               for a in span for b in span)
    assert len({pid for _, _, pid, _, _ in builds}) <= 2


def test_one_layer_at_a_time_through_the_pool_is_in_turn(tmp_path):
    """parallel_layers=1: no two builds of different layers overlap, and the layers run in order."""
    _tune(tmp_path / "m", tmp_path, delay=0.1,
          executor=ExecutorOptions(workers=2, parallel_layers=1))
    builds = markers(tmp_path / "m")
    span = {}
    for layer, _, _, start, end in builds:
        lo, hi = span.get(layer, (start, end))
        span[layer] = (min(lo, start), max(hi, end))
    order = [span[l.name] for l in LAYERS]
    assert all(a[1] <= b[0] for a, b in zip(order, order[1:]))


def _interrupt_when(folder: Path, builds: int) -> threading.Thread:
    """A thread sending SIGINT once ``folder`` holds ``builds`` markers; its ``fired``
    list says when (seconds from its start) and how many markers it saw."""
    t0 = time.monotonic()

    def fire():
        while time.monotonic() < t0 + 120:
            if folder.exists() and (seen := len(list(folder.iterdir()))) >= builds:
                os.kill(os.getpid(), signal.SIGINT)
                t.fired.append((round(time.monotonic() - t0, 2), seen))
                return
            time.sleep(0.02)
    t = threading.Thread(target=fire, daemon=True)
    t.fired = []
    t.start()
    return t


@pytest.mark.parametrize("kind", ["local", "ray"])
def test_interrupted_network_resumes_measuring_only_what_is_missing(kind, tmp_path, request,
                                                                    python_sigint):
    """SIGINT mid-run: Interrupted names the per-layer logs; every logged configuration is
    there once. Resuming measures exactly the rest (counted by the stand-in's markers)
    and ends with the trials of an uninterrupted run."""
    if kind == "ray":
        request.getfixturevalue("ray_session")
    log = tmp_path / "run.jsonl"
    options = ExecutorOptions(executor=kind, workers=2, parallel_layers=2)
    fire = _interrupt_when(tmp_path / "first", 5)
    t0 = time.monotonic()
    with pytest.raises(Interrupted) as info:
        _tune(tmp_path / "first", tmp_path, delay=0.3, log=str(log), executor=options)
        # not interrupted: say what the signal thread saw, for a run that ever gets here
        pytest.fail(f"run ended after {time.monotonic() - t0:.2f} s with "
                    f"{len(markers(tmp_path / 'first'))} builds; SIGINT sent at "
                    f"(s, markers seen): {fire.fired}; SIGINT handler "
                    f"{signal.getsignal(signal.SIGINT)}, blocked here "
                    f"{sorted(signal.pthread_sigmask(signal.SIG_BLOCK, []))}")
    fire.join()
    assert f"resume with --resume {log}" in str(info.value)
    assert "run.<layer>.jsonl" in str(info.value)
    logged = {l.name: _logged(tmp_path / f"run.{l.name}.jsonl")
              for l in LAYERS if (tmp_path / f"run.{l.name}.jsonl").exists()}
    before = sum(len(v) for v in logged.values())
    assert 0 < before < BUDGET * len(LAYERS)
    assert info.value.measurements == before
    for records in logged.values():
        assert len({c for c, _ in records}) == len(records)

    resumed = _tune(tmp_path / "second", tmp_path, resume=str(log), executor=options)
    assert len(markers(tmp_path / "second")) == BUDGET * len(LAYERS) - before
    for layer in LAYERS:
        records = _logged(tmp_path / f"run.{layer.name}.jsonl")
        assert len(records) == BUDGET and len({c for c, _ in records}) == BUDGET
        assert all(t == standin_time(layer.name, json.loads(c)) for c, t in records)
    straight = _tune(tmp_path / "straight", tmp_path)
    assert {k: [x[:2] for x in v] for k, v in _trials(resumed).items()} == \
        {k: [x[:2] for x in v] for k, v in _trials(straight).items()}
